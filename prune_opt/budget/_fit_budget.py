"""fit_budget: the best pruning whose average acquisition cost meets a budget."""

from __future__ import annotations

import time
import warnings

from .._compile import compile_problem
from .._problem import PruningProblem
from .._pruned import PrunedForest
from .._sampling import cost_sample_report, local_rows
from .._validation import check_nonneg_scalar, check_time_limit, fits_budget
from ..objectives import get_objective
from ._curve import LagrangianHull, check_hull_solver
from ._ensemble_budget import fit_budget_objective

__all__ = ["fit_budget", "DEFAULT_TIME_LIMIT"]

# seconds fit_budget's hard-budget search may take by default
DEFAULT_TIME_LIMIT = 30.0
# the search always gets at least this share of time_limit, however long the compile took
MIN_SEARCH_SHARE = 0.05
# the searches aim at this share of time_limit: CP-SAT and the ensemble search stop a few
# tenths of a second after their deadline, and the result is assembled after that
TARGET_SHARE = 0.95


def split_problem_or_forest(problem_or_forest, *, costs=None, train=None, cost_sample=None,
                            client=None):
    """``(problem, None)`` for a compiled problem (refusing the arguments it already
    fixes), else ``(None, forest)``."""
    if not isinstance(problem_or_forest, PruningProblem):
        if problem_or_forest is None:
            raise ValueError("pass a fitted forest (with X and y) or a compiled "
                             "PruningProblem as the first argument")
        return None, problem_or_forest
    given = [n for n, v in (("costs", costs), ("train", train), ("cost_sample", cost_sample),
                            ("client", client)) if v is not None]
    if given:
        raise ValueError(f"got a compiled PruningProblem and {', '.join(given)}: the problem "
                         "already fixes its costs, error data and cost rows; pass a forest "
                         "instead, or drop " + ", ".join(given))
    return problem_or_forest, None


def _point_info(p):
    return {"lam_found": p.found_at, "error_term": p.error_term,
            "average_cost": p.average_cost, "n_splits": p.n_splits}


def _lagrangian(hull, budget, verbose):
    """Hull search narrowed to the budget: returns (chosen, costlier neighbour, lam)."""
    a, b = hull.endpoints()
    if fits_budget(a.average_cost, budget):
        return a, None, 0.0
    if not fits_budget(b.average_cost, budget):
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
            if fits_budget(p.average_cost, budget):
                b = p
            else:
                a = p
        else:  # a and b are adjacent on the hull; b is optimal from lam on
            return b, a, lam


def fit_budget(problem_or_forest, X=None, y=None, *, budget, costs=None, train=None,
               objective="paper", method="search", solver="auto", time_limit=DEFAULT_TIME_LIMIT,
               tol=1e-9, solver_options=None, cost_sample=None, client=None, verbose=False):
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
    problem_or_forest : PruningProblem, fitted estimator or Forest
        A compiled problem (compiled with ``depth_cost=0``) supplies the
        forest, costs and error data; ``costs``, ``train``, ``cost_sample``
        and ``client`` are then refused.
    X, y : array-like, optional
        Cost data (validation data) on which the budget is measured; also the
        error data unless ``train`` is given.  Needed with a forest; with a
        problem, the rows it was compiled on (optional for the paper
        objective, where they serve the true-cost check of a problem compiled
        with ``cost_sample``; required for an ensemble objective).
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
    verbose : bool
    time_limit : float or None, default 30
        Seconds for the whole call, compiling the problem included (``None`` or
        ``inf``: no limit).  The searches aim at 95% of it (their last step
        and the result's assembly run past their deadline) and always get at
        least 5% of it.
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
        certified gap (see ``docs/math/ensemble_objective.md``).  A problem
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
    time_limit = check_time_limit(time_limit)
    if method not in ("search", "hull") or (objective != "paper" and method != "search"):
        raise ValueError(f"method must be 'search' or 'hull' (an ensemble objective, here "
                         f"{objective!r}, runs its own search: 'search'), got {method!r}")
    if method == "hull":
        check_hull_solver(solver)
    problem, forest = split_problem_or_forest(problem_or_forest, costs=costs, train=train,
                                              cost_sample=cost_sample, client=client)
    target = None if time_limit is None else TARGET_SHARE * time_limit
    if objective != "paper":
        return _fit_objective(forest if problem is None else problem, X, y, costs=costs,
                              budget=budget, train=train, objective=objective,
                              time_limit=target, verbose=verbose,
                              solver_options=solver_options, cost_sample=cost_sample,
                              client=client)
    if problem is None and (X is None or y is None):
        raise ValueError("X and y are needed to prune a forest (pass the validation rows "
                         "and labels), or pass a compiled PruningProblem first")
    cost_rows = None if X is None else local_rows(X)  # for the true cost
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
    if X is None:
        warnings.warn(f"the problem was compiled with cost_sample: the budget {budget:g} is "
                      "met by the sampled average cost only; pass the rows it was compiled "
                      "on as X to check (and record) the true average cost", UserWarning,
                      stacklevel=3)
    pf.solve_info.update(cost_sample_report(problem, pf.split_mask, X))
    true = pf.solve_info.get("true_average_cost")
    if true is not None and not fits_budget(true, budget):
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


def _fit_objective(problem_or_forest, X, y, *, costs, budget, train, objective, time_limit,
                   verbose, solver_options, cost_sample, client):
    """``fit_budget`` with an ensemble objective: checks, then the candidate search."""
    if cost_sample is not None or client is not None:
        raise ValueError("cost_sample= and client= apply to objective='paper' (an ensemble "
                         "objective scores every row of X in process); compile the problem "
                         "with cost_sample and pass it first instead")
    get_objective(objective)  # a clear error listing the objectives for a wrong name
    if X is None or y is None:
        raise ValueError(f"objective={objective!r} scores the forest's vote on (X, y): pass "
                         "the pruning data X and y (with a problem, the data it was "
                         "compiled on)")
    problem = problem_or_forest if isinstance(problem_or_forest, PruningProblem) else None
    return fit_budget_objective(problem_or_forest if problem is None else None, X, y,
                                costs=costs, budget=budget, train=train, problem=problem,
                                objective=objective, time_limit=time_limit, verbose=verbose,
                                solver_options=solver_options)
