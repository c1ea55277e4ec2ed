"""fit_budget: the best pruning whose average acquisition cost meets a budget."""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from .._compile import compile_problem
from .._pruned import PrunedForest
from .._sampling import cost_sample_report, local_rows
from .._validation import check_nonneg_scalar
from ..objectives import get_objective
from ._curve import LagrangianHull
from ._ensemble_budget import fit_budget_objective

__all__ = ["fit_budget", "solve_budget_mip", "MAX_MIP_VARIABLES", "DEFAULT_TIME_LIMIT"]

# solve_budget_mip (deprecated) is branch-and-bound on the full LP; beyond this
# many variables it is refused in favour of fit_budget's search
MAX_MIP_VARIABLES = 60_000
# seconds fit_budget's hard-budget search may take by default
DEFAULT_TIME_LIMIT = 30.0
# the search always gets at least this share of time_limit, however long the compile took
MIN_SEARCH_SHARE = 0.05
# the searches aim at this share of time_limit: CP-SAT and the ensemble search stop a few
# tenths of a second after their deadline, and the result is assembled after that
TARGET_SHARE = 0.95


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
               exact_budget=False, verbose=False, time_limit=DEFAULT_TIME_LIMIT, problem=None,
               max_mip_variables=MAX_MIP_VARIABLES, solver_options=None, method="search",
               objective="paper", cost_sample=None, client=None):
    """Prune a forest so its average acquisition cost on ``X`` is at most ``budget``.

    ``method="search"`` (default) solves ``min error term  s.t.  average cost <=
    budget`` with the ``"budget"`` backend: a certified Lagrangian lower bound
    from exact min-cuts, primal candidates (hull vertices, tree-wise mixing of
    the two vertices around the budget, greedy unit removal with min-cut
    re-optimisation, the baselines GreedyPrune / cost-complexity pruning /
    fewer trees / impurity thresholds, local search with exact one-tree
    moves), then CP-SAT warm-started from the best pruning for the time left.
    The result is the best pruning that fits; its objective is never worse
    than any baseline's that fits (they are among the candidates), and it is
    never the root-only forest when a fitting pruning with splits scores
    better.  See ``docs/math/budget.md``.

    ``method="hull"`` returns the Lagrangian hull vertex with the largest cost
    not above ``budget`` (the only prunings any ``lam`` can produce).

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
        ``method="search"``: ``"auto"`` or ``"budget"``.  ``method="hull"``:
        backend of the Lagrangian solves.
    tol : float
        Relative tolerance of the hull search (``method="hull"``).
    exact_budget : bool
        Deprecated: the search always solves the hard budget; pass
        ``time_limit=None`` to run its binary program to proven optimality.
    verbose : bool
    time_limit : float or None, default 30
        Seconds for the whole call, compiling the problem included (``None`` or
        ``inf``: no limit).  The searches aim at 95% of it (their last step
        and the result's assembly run past their deadline) and always get at
        least 5% of it.
    problem : PruningProblem, optional
        Reuse a compiled problem (``X``, ``y``, ``costs``, ``train`` ignored).
    max_mip_variables : int
        Deprecated, ignored (the closure binary program has no size cap).
    solver_options : dict, optional
        Backend options (``mip``, ``mip_workers`` for the search).
    method : {"search", "hull"}
    objective : str, default "paper"
        ``"paper"`` minimises BudgetPrune's error term (mean per-tree error) as
        above.  An ensemble objective (``"brier"``, ``"logloss"``, ``"margin"``,
        ``"accuracy"``; see :mod:`prune_opt.objectives`) minimises the forest's
        own loss on ``(X, y)`` under the budget (``"accuracy"``: the error of
        ``predict``).  Candidates: the paper search above (a third of the
        time), the best fitting member of every baseline (GreedyPrune on the
        error data of ``train``/``problem``, cost-complexity pruning, impurity
        thresholds, the first m trees -- also as a sub-forest of m trees),
        and :func:`prune_opt.objectives.fit_budget_ensemble` started from them
        (budget descent from the best: exact block moves, loss never rising).
        All are scored exactly on ``(X, y)`` and the lowest loss wins, so the
        result is never worse than any baseline that fits; there is no
        certified gap (see ``docs/math/ensemble_objective.md``).  ``problem=``
        must be compiled on the same ``X``, and ``X``, ``y`` are still needed.
    cost_sample, client : optional
        Passed to :func:`prune_opt.compile_problem` (the budget is then met by
        the sampled average cost; ``solve_info`` records the true average cost
        on all rows of ``X``, and a warning says when it is above the budget).

    Returns
    -------
    PrunedForest
        With an ensemble objective, ``solve_info`` holds ``objective``,
        ``budget``, ``achieved_cost``, ``ensemble_loss`` (the result's loss),
        ``candidates_loss`` (best loss of each candidate source), ``found_by``,
        ``paper_search`` and ``ensemble_search`` summaries; when the winner is
        the first m whole trees, the result is a pruning of that sub-forest
        (``n_trees_kept``).  With the paper objective, ``solve_info`` holds
        ``budget``, ``achieved_cost``, ``budget_slack``,
        ``bound`` (best of the Lagrangian and binary-program bounds on the
        error term at the budget), ``gap`` (certified, relative), ``status``
        (``"optimal"`` or ``"time_limit"``), ``found_by`` (the heuristic that
        found the result), ``phase_seconds``, ``lam`` (the multiplier of the
        budget at the hull bracket), ``hull_neighbours`` (hull vertices around
        the budget), ``hull_error_gap`` (error the hull vertex leaves on the
        table) and ``n_solves``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import fit_budget
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> pruned = fit_budget(rf, X, y, costs=[1, 1, 5, 5], budget=4.0, time_limit=10)
    >>> bool(pruned.average_cost(X) <= 4.0), pruned.solve_info["status"]
    (True, 'optimal')
    """
    budget = check_nonneg_scalar(budget, "budget")
    if isinstance(time_limit, (int, float)) and math.isinf(time_limit) and time_limit > 0:
        time_limit = None  # an infinite limit is no limit, as in solve()
    time_limit = check_nonneg_scalar(time_limit, "time_limit", allow_none=True)
    if method not in ("search", "hull") or (objective != "paper" and method != "search"):
        raise ValueError(f"method must be 'search' or 'hull' (an ensemble objective, here "
                         f"{objective!r}, runs its own search: 'search'), got {method!r}")
    target = None if time_limit is None else TARGET_SHARE * time_limit
    if objective != "paper":
        return _fit_objective(forest, X, y, costs=costs, budget=budget, train=train,
                              problem=problem, objective=objective, time_limit=target,
                              verbose=verbose, solver_options=solver_options,
                              cost_sample=cost_sample, client=client)
    if exact_budget:
        warnings.warn("fit_budget(exact_budget=True) is deprecated: the default search "
                      "always solves the hard budget and reports its certified gap; pass "
                      "time_limit=None to run it to proven optimality", FutureWarning,
                      stacklevel=2)
    if max_mip_variables != MAX_MIP_VARIABLES:
        warnings.warn("fit_budget(max_mip_variables=...) is deprecated and ignored: the "
                      "closure binary program of the budget search has no size cap",
                      FutureWarning, stacklevel=2)
    cost_rows = local_rows(X) if problem is None else None  # for the true cost
    t_start = time.perf_counter()
    if problem is None:
        problem = compile_problem(forest, X, y, costs=costs, lam=0.0, train=train,
                                  cost_sample=cost_sample, client=client)
    if time_limit is not None:  # the limit covers the compile too (the whole call)
        time_limit = max(target - (time.perf_counter() - t_start), MIN_SEARCH_SHARE * time_limit)
    if problem.depth_cost != 0:
        raise ValueError("fit_budget needs a problem compiled with depth_cost=0 (the budget "
                         "bounds acquisition cost only)")
    if method == "hull":
        pf = _fit_hull(problem, budget, solver, tol, verbose, solver_options)
    elif str(solver).lower() not in ("auto", "budget"):
        raise ValueError(
            f"solver={solver!r} cannot meet a hard budget: fit_budget's search runs on "
            "solver='budget' (leave solver='auto'); for the Lagrangian hull vertex computed "
            f"with {solver!r}, pass method='hull'")
    else:
        pf = _fit_search(problem, budget, time_limit, verbose, solver_options)
    return _report_sampled_cost(pf, problem, budget, cost_rows)


def _report_sampled_cost(pf, problem, budget, X):
    """With ``cost_sample`` the budget is met on the sample: record the true average
    cost on every row of X and warn when it is above the budget."""
    if getattr(problem, "cost_sample", None) is None:
        return pf
    pf.solve_info.update(cost_sample_report(problem, pf.split_mask, X))
    true = pf.solve_info.get("true_average_cost")
    if true is not None and true > budget * (1 + 1e-12) + 1e-15:
        warnings.warn(f"the budget {budget:g} is met by the sampled average cost "
                      f"({pf.solve_info['sampled_average_cost']:g} on "
                      f"{pf.solve_info['n_sample']} rows) but the true average cost on all "
                      f"rows of X is {true:g}; pass a larger cost_sample (or none) to meet "
                      "it on every row", UserWarning, stacklevel=3)
    return pf


def _fit_search(problem, budget, time_limit, verbose, solver_options):
    from .._prune import solve

    p = problem.with_lam(0.0).with_budget(budget)
    pf = solve(p, solver="budget", time_limit=time_limit, verbose=verbose,
               solver_options=solver_options)
    info = pf.solve_info
    lag = info.get("lagrangian", {})
    verts = lag.get("hull_vertices") or {}
    bd = pf.breakdown
    hull = verts.get("cheaper")
    info.update({
        "method": "search", "budget": budget, "lam": lag.get("mu", 0.0),
        "achieved_cost": bd.average_cost, "budget_slack": budget - bd.average_cost,
        "hull_neighbours": {"chosen": hull, "costlier": verts.get("costlier")},
        "hull_error_gap": (hull["error_term"] - bd.error_term) if hull else 0.0,
        "n_solves": info.get("n_min_cuts", 0),
        "search_seconds": info.get("seconds"),
    })
    if bd.n_splits == 0 and budget > 0:
        info["note"] = ("no pruning with splits that fits the budget scores better than the "
                        "root-only forest (every tree cut to its root) among those found; "
                        f"gap to the bound {info['gap']:.3g}")
    return PrunedForest(problem.forest, pf.split_mask, costs=problem.costs,
                        objective=bd.error_term, breakdown=bd, solve_info=info, lam=0.0)


def _fit_hull(problem, budget, solver, tol, verbose, solver_options):
    """The Lagrangian hull vertex with the largest cost not above ``budget``."""
    t0 = time.perf_counter()
    hull = LagrangianHull(problem, solver=solver, tol=tol, solver_options=solver_options)
    chosen, above, lam = _lagrangian(hull, budget, verbose)
    info = dict(chosen.pruned.solve_info)
    info.update({
        "method": "hull", "budget": budget, "lam": lam,
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
                "Cheaper prunings with splits are optimal for no lam; method='search' "
                "solves the hard budget")
        warnings.warn(note, UserWarning, stacklevel=3)
        info["note"] = note
    return PrunedForest(problem.forest, chosen.pruned.split_mask, costs=problem.costs,
                        objective=chosen.pruned.breakdown.error_term + lam * chosen.cost_term,
                        breakdown=chosen.pruned.breakdown, solve_info=info, lam=lam)


def solve_budget_mip(problem, budget, *, time_limit=None, verbose=False,
                     max_variables=MAX_MIP_VARIABLES):
    """``min error  s.t.  average acquisition cost <= budget`` as a binary program.

    Kept for compatibility: :func:`fit_budget` (the ``"budget"`` backend)
    solves the same program faster, on a much smaller closure formulation,
    warm-started and without a size cap.  Built with OR-Tools model_builder
    from the standard form plus the budget row and solved by SCIP (CBC through
    PuLP when this OR-Tools build lacks SCIP).  The budget row breaks total
    unimodularity, hence branch-and-bound.

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
            f"max_mip_variables={max_variables:,}; use fit_budget (the Lagrangian-bounded "
            "budget search), which has no size cap")
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


def _fit_objective(forest, X, y, *, costs, budget, train, problem, objective, time_limit,
                   verbose, solver_options, cost_sample, client):
    """``fit_budget`` with an ensemble objective: checks, then the candidate search."""
    if cost_sample is not None or client is not None:
        raise ValueError("cost_sample= and client= apply to objective='paper'")
    get_objective(objective)  # a clear error listing the objectives for a wrong name
    if X is None or y is None:
        raise ValueError(f"objective={objective!r} scores the forest's vote on (X, y): pass "
                         "the pruning data X and y (with problem=, the data it was "
                         "compiled on)")

    def paper_search(p, b, limit):
        return _fit_search(p, b, limit, verbose, solver_options)

    return fit_budget_objective(forest, X, y, costs=costs, budget=budget, train=train,
                                problem=problem, objective=objective, time_limit=time_limit,
                                verbose=verbose, solver_options=solver_options,
                                paper_search=paper_search)
