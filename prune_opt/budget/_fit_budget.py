"""fit_budget: the best pruning whose average acquisition cost meets a budget."""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from .._compile import compile_problem
from .._pruned import PrunedForest
from .._validation import check_nonneg_scalar
from ._curve import LagrangianHull

__all__ = ["fit_budget", "solve_budget_mip", "MAX_MIP_VARIABLES"]

# the hard-budget MIP is branch-and-bound on the full LP; beyond this many
# variables it is refused in favour of the Lagrangian path
MAX_MIP_VARIABLES = 60_000


def _point_info(p):
    return {"lam_found": p.found_at, "error_term": p.error_term,
            "average_cost": p.average_cost, "n_splits": p.n_splits}


def _lagrangian(hull, budget, verbose):
    """Hull search narrowed to the budget: returns (chosen, costlier neighbour, lam)."""
    a, b = hull.endpoints()
    if a.average_cost <= budget * (1 + 1e-12):
        return a, None, 0.0
    if b.average_cost > budget * (1 + 1e-12) + 1e-15:
        raise ValueError(
            f"budget={budget:g} is below the cost of the cheapest pruning "
            f"({b.average_cost:g}); some root split uses a free feature group that cannot be "
            "cut cheaper")
    while True:
        lam = hull.intersection(a, b)
        p = hull.solve(lam)
        if verbose:
            print(f"[fit_budget] lam={lam:.6g}: cost {p.average_cost:.6g}, "
                  f"error {p.error_term:.6g}")
        if (hull.below(p, a, lam) and not hull.same(p, a) and not hull.same(p, b)
                and b.cost_term < p.cost_term < a.cost_term):
            if p.average_cost <= budget * (1 + 1e-12):
                b = p
            else:
                a = p
        else:  # a and b are adjacent on the hull; b is optimal from lam on
            return b, a, lam


def fit_budget(forest, X, y, *, costs=None, budget, train=None, solver="auto", tol=1e-9,
               exact_budget=False, verbose=False, time_limit=None, problem=None,
               max_mip_variables=MAX_MIP_VARIABLES, solver_options=None, cost_sample=None,
               client=None):
    """Prune a forest so its average acquisition cost on ``X`` is at most ``budget``.

    The Lagrangian path (default) searches ``lam`` exactly: the optimal cost is
    a non-increasing step function of ``lam``, so the result is the hull
    vertex with the largest cost not above ``budget``, and the ``lam`` at
    which it becomes optimal.  Budgets between two hull vertices cannot be met
    more closely by any ``lam``; ``exact_budget=True`` solves the hard
    constraint as a binary program instead (small problems only).

    Parameters
    ----------
    forest : fitted estimator or Forest
    X, y : array-like
        Cost data (validation data) on which the budget is measured; also the
        error data unless ``train`` is given.
    costs : FeatureCosts, array-like or mapping, optional
    budget : float
        Largest allowed average acquisition cost per example (>= 0).
    train : tuple (X_train, y_train), optional
        Count errors on each tree's in-bag sample.
    solver : str
        Backend of the Lagrangian solves (``"auto"``).
    tol : float
        Relative tolerance of the hull search.
    exact_budget : bool
        Solve ``min error s.t. average cost <= budget`` as a binary program
        (OR-Tools SCIP, else CBC) and report how much error the Lagrangian
        hull leaves on the table.
    verbose : bool
    time_limit : float, optional
        Seconds for the binary program (``exact_budget=True``).
    problem : PruningProblem, optional
        Reuse a compiled problem (``X``, ``y``, ``costs``, ``train`` ignored).
    max_mip_variables : int
        Refuse ``exact_budget`` above this many program variables.
    solver_options : dict, optional
    cost_sample, client : optional
        Passed to :func:`prune_opt.compile_problem` (the budget is then met by
        the sampled average cost).

    Returns
    -------
    PrunedForest
        ``solve_info`` holds ``budget``, ``lam`` (smallest ``lam`` at which the
        pruning is optimal), ``achieved_cost``, ``hull_neighbours`` (the
        chosen vertex and the next costlier one, which exceeds the budget),
        ``n_solves`` and, with ``exact_budget``, ``mip`` details and
        ``hull_error_gap``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import fit_budget
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> pruned = fit_budget(rf, X, y, costs=[1, 1, 5, 5], budget=4.0)
    >>> bool(pruned.average_cost(X) <= 4.0)
    True
    """
    budget = check_nonneg_scalar(budget, "budget")
    if problem is None:
        problem = compile_problem(forest, X, y, costs=costs, lam=0.0, train=train,
                                  cost_sample=cost_sample, client=client)
    if problem.depth_cost != 0:
        raise ValueError("fit_budget needs a problem compiled with depth_cost=0 (the budget "
                         "bounds acquisition cost only)")
    t0 = time.perf_counter()
    hull = LagrangianHull(problem, solver=solver, tol=tol, solver_options=solver_options)
    chosen, above, lam = _lagrangian(hull, budget, verbose)
    info = dict(chosen.pruned.solve_info)
    info.update({
        "method": "lagrangian",
        "budget": budget,
        "lam": lam,
        "achieved_cost": chosen.average_cost,
        "budget_slack": budget - chosen.average_cost,
        "hull_neighbours": {"chosen": _point_info(chosen),
                            "costlier": None if above is None else _point_info(above)},
        "n_solves": hull.n_solves,
        "search_seconds": time.perf_counter() - t0,
    })
    if chosen.n_splits == 0 and above is not None:
        note = (f"budget={budget:g} is below the cost of every Lagrangian-optimal pruning "
                f"that keeps a split (the cheapest costs {above.average_cost:g}); returning "
                "the root-only forest (every tree cut to its root, constant prediction). "
                "Cheaper prunings with splits are optimal for no lam; exact_budget=True "
                "solves the hard budget on small problems")
        if not exact_budget:
            warnings.warn(note, UserWarning, stacklevel=2)
        info["note"] = note
    result = PrunedForest(problem.forest, chosen.pruned.split_mask, costs=problem.costs,
                          objective=chosen.pruned.breakdown.error_term + lam * chosen.cost_term,
                          breakdown=chosen.pruned.breakdown, solve_info=info, lam=lam)
    if not exact_budget:
        return result
    mip = solve_budget_mip(problem, budget, time_limit=time_limit, verbose=verbose,
                           max_variables=max_mip_variables)
    mip.solve_info["lagrangian"] = {"lam": lam, "error_term": chosen.error_term,
                                    "average_cost": chosen.average_cost,
                                    "note": info.get("note")}
    mip.solve_info["hull_error_gap"] = chosen.error_term - mip.breakdown.error_term
    mip.solve_info["hull_neighbours"] = info["hull_neighbours"]
    return mip


def solve_budget_mip(problem, budget, *, time_limit=None, verbose=False,
                     max_variables=MAX_MIP_VARIABLES):
    """``min error  s.t.  average acquisition cost <= budget`` as a binary program.

    Built with OR-Tools model_builder from the standard form plus the budget
    row and solved by SCIP (CBC through PuLP when this OR-Tools build lacks
    SCIP).  The budget row breaks total unimodularity, hence branch-and-bound.

    Parameters
    ----------
    problem : PruningProblem
        Compiled with ``depth_cost=0``; its ``lam`` is ignored.
    budget : float
    time_limit : float, optional
    verbose : bool
    max_variables : int
        Refuse larger programs (use :func:`fit_budget` without ``exact_budget``).

    Returns
    -------
    PrunedForest
        ``solve_info["status"]`` is ``"optimal"`` or ``"time_limit"``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> from prune_opt.budget import solve_budget_mip
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    >>> problem = po.compile_problem(tree, X, y, costs=[1, 1, 5, 5])
    >>> bool(solve_budget_mip(problem, 5.0).average_cost(X) <= 5.0)
    True
    """
    from .._problem import PruningProblem

    if not isinstance(problem, PruningProblem):
        raise TypeError("problem must be a compiled PruningProblem")
    budget = check_nonneg_scalar(budget, "budget")
    time_limit = check_nonneg_scalar(time_limit, "time_limit", allow_none=True)
    size = problem.size()
    if size["n_variables"] > max_variables:
        raise ValueError(
            f"exact_budget: the binary program has {size['n_variables']:,} variables, above "
            f"max_mip_variables={max_variables:,}; use the Lagrangian path "
            "(fit_budget(..., exact_budget=False)), which meets the budget with a hull vertex")
    p = problem.with_lam(0.0).with_depth_cost(0.0).with_budget(budget)
    t0 = time.perf_counter()
    x, status, bound, backend = _mip_point(p, time_limit, verbose)
    if x is None:
        mask = np.zeros(problem.n_nodes, dtype=bool)  # the root-only pruning is feasible
        status = "time_limit"
    else:
        mask, _ = p.split_mask_from_lp(x)
    bd = p.evaluate(mask)
    if bd.average_cost > budget * (1 + 1e-9) + 1e-12:
        raise RuntimeError(f"{backend} returned a pruning of cost {bd.average_cost:g} above "
                           f"the budget {budget:g}")
    info = {"method": "mip", "solver": backend, "status": status, "budget": budget,
            "achieved_cost": bd.average_cost, "budget_slack": budget - bd.average_cost,
            "bound": bound, "seconds": time.perf_counter() - t0, "problem_size": size}
    return PrunedForest(problem.forest, mask, costs=problem.costs, objective=bd.error_term,
                        breakdown=bd, solve_info=info, lam=0.0)


def _mip_point(p, time_limit, verbose):
    """Solve the budgeted binary program; returns (x, status, bound, backend)."""
    import scipy.sparse as sp
    from ortools.linear_solver.python import model_builder as mb

    solver = mb.Solver("scip")
    if not solver.solver_is_supported():
        return _mip_point_cbc(p, time_limit, verbose)
    sf = p.to_standard_form()
    A = sp.vstack([sf["A_eq"], sf["A_ub"]], format="csr").astype(np.float64)
    lo = np.concatenate([sf["b_eq"], np.full(sf["A_ub"].shape[0], -np.inf)])
    hi = np.concatenate([sf["b_eq"], sf["b_ub"]])
    n = A.shape[1]
    model = mb.Model()
    model.helper.fill_model_from_sparse_data(np.zeros(n), np.ones(n), sf["c"], lo, hi, A)
    for j in range(n):  # small programs only (max_variables)
        model.helper.set_var_integrality(j, True)
    if time_limit is not None:
        solver.set_time_limit_in_seconds(float(time_limit))
    solver.enable_output(bool(verbose))
    st = solver.solve(model)
    if st in (mb.SolveStatus.OPTIMAL, mb.SolveStatus.FEASIBLE):
        x = solver.values(model.get_variables()).to_numpy()
        bound = solver.best_objective_bound / p.scale
        return x, "optimal" if st == mb.SolveStatus.OPTIMAL else "time_limit", bound, "scip"
    if st == mb.SolveStatus.NOT_SOLVED and time_limit is not None:
        return None, "time_limit", 0.0, "scip"
    raise RuntimeError(f"SCIP returned {st}: {solver.status_string}")


def _mip_point_cbc(p, time_limit, verbose):
    from .._prune import solve

    pf = solve(p, solver="cbc-ip", time_limit=time_limit, verbose=verbose)
    x = p.lp_point(pf.split_mask)
    bound = pf.solve_info.get("bound", math.nan)
    return x, pf.solve_info["status"], bound, "cbc-ip"
