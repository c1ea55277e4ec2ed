"""fit_budget: the best pruning whose average acquisition cost meets a budget."""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from .._clock import Deadline
from .._frames import records_frame
from .._validation import (
    check_labels,
    check_nonneg_scalar,
    fits_budget,
    refuse_train_for_boosted,
)
from ..model._pruned import PrunedForest
from ..objectives.accuracy import PredictError
from ..program._compile import compile_problem
from ..program._problem import PruningProblem
from ..program._sampling import cost_sample_report, local_rows
from ._baselines import LATE_FAMILIES, MASK_FAMILIES, sub_forest
from ._curve import LagrangianHull, check_hull_solver
from ._own_loss import fit_budget_objective

__all__ = ["fit_budget", "DEFAULT_TIME_LIMIT", "budget_curve"]

# seconds a fit_budget call may take by default, for the whole call: objective="auto"
# (the default) runs heuristics and descent, which reach their quality within a few
# seconds (5 s: a 200-round binary LightGBM model on 10,000 rows, or 1,000 trees of a
# 10-class one on 2,500, see docs/boosted.md); an explicit objective keeps the longer
# limit that lets CP-SAT close the gap
DEFAULT_TIME_LIMIT = 30.0
AUTO_TIME_LIMIT = 5.0
# budget_curve with objective="auto": seconds for the whole grid of budgets (each gets an
# equal share of what is left; the prunings remembered from the smaller budgets start the
# larger ones; `prune-opt curve`'s defaults answer within 15 s with it)
CURVE_TIME_LIMIT = 6.0
# objective="auto": share of the time for each objective's run on the fitting half
AUTO_SELECT_SHARE = 0.22
# objective="auto": fewer rows than this (or a class with fewer than 2 rows) leave no
# honest hold-out; the forest's own loss is then run on all rows (fit_budget's docstring
# says so, and tests/test_budget_auto.py checks it)
AUTO_MIN_ROWS = 40
# the search always gets at least this share of time_limit, however long the compile took
MIN_SEARCH_SHARE = 0.05
# objective="auto": the run on all rows always gets at least this share of time_limit,
# however long the selection on the halves took (it is the run whose result is returned)
AUTO_FINAL_SHARE = 0.3
# objective="auto": the loss that ranks the final run's fitting candidates (and the
# remembered prunings) before the forest's own loss, for a classifier
AUTO_RANK = PredictError()
# objective="auto": at most this many remembered prunings that fit the budget join the
# final own-loss run as candidates (the lowest-loss ones)
AUTO_INCUMBENT_STARTS = 4
# the searches aim at this share of time_limit: CP-SAT and the ensemble search stop a few
# tenths of a second after their deadline, and the result is assembled (its candidates
# ranked, the result scored) after that
TARGET_SHARE = 0.9


def split_problem_or_forest(problem_or_forest, *, costs=None, train=None, cost_sample=None,
                            client=None):
    """``(problem, None)`` for a compiled problem (refusing the arguments it already
    fixes), else ``(None, forest)`` (refusing ``train=`` for a boosted model)."""
    if not isinstance(problem_or_forest, PruningProblem):
        if problem_or_forest is None:
            raise ValueError("pass a fitted forest (with X and y) or a compiled "
                             "PruningProblem as the first argument")
        if train is not None:  # for every objective alike (see prune)
            from ..forest._forest import as_forest

            refuse_train_for_boosted(as_forest(problem_or_forest), train)
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
               objective="auto", method="search", solver="auto", time_limit="default",
               tol=1e-9, solver_options=None, cost_sample=None, client=None, verbose=False,
               random_state=0, warm_start=None):
    """Prune a forest so its average acquisition cost on ``X`` is at most ``budget``.

    By default (``objective="auto"``) the rows of ``X`` are split in two
    halves (stratified by class, seeded by ``random_state``); the paper's
    error term and the forest's own loss (Brier score; for a regression
    forest the squared error of its average, see
    :mod:`prune_opt.objectives`) are each optimised under the budget on one
    half and scored in the forest's own loss on the other, and the better
    objective is then run on all rows (a tie goes to the forest's own loss).
    The pick is made on rows the compared prunings were not fitted on (a
    boosted model skips the pick: its paper program is the second-order
    expansion of its own loss, so its own loss runs on all rows at once, the
    program's budget descent among the candidates).  The
    run on all rows gets at least 30% of the time; with the forest's own
    loss it also starts from the two halves' prunings and from the prunings
    remembered for the same forest, rows and costs, and for a classifier it
    ranks its fitting candidates by the error of ``predict`` on ``X`` first
    (then the own loss), each baseline family offering its best member by
    both; a paper result cut to the root is handed to that run.  The
    remembered prunings make a larger budget never return a worse
    ``(error, own loss)`` than a smaller one did (``solve_info["auto"]``,
    ``solve_info["auto_rank_loss"]``, ``solve_info["auto_loss"]``).  Where only the
    paper objective applies (``method="hull"``, ``cost_sample``/``client``, a
    problem passed without its rows), it is used.  With fewer than 40 rows, or a
    class with fewer than 2, there is no honest held-out half: the forest's own
    loss is run on all rows (its candidates include the paper objective's budget
    descent) and ``solve_info["auto"]["holdout_loss"]`` is empty.

    With ``objective="paper"``, ``method="search"`` solves ``min error term  s.t.  average cost <=
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
        Count errors on each tree's in-bag sample.  A boosted model refuses it,
        as in :func:`~prune_opt.prune`: its errors are always counted on
        ``(X, y)`` (each of its trees fits every training row, so there is no
        in-bag sample).
    solver : str
        ``method="search"``: ``"auto"`` or ``"budget"``.  ``method="hull"``:
        backend of the Lagrangian solves.
    tol : float
        Relative tolerance of the hull search (``method="hull"``).
    verbose : bool
    time_limit : float or None, default "default"
        Seconds for the whole call: reading the model, routing the rows, fitting a
        booster's node values, compiling, the baselines and the searches
        (``None`` or ``inf``: no limit).  The default is 5 s with
        ``objective="auto"`` and 30 s with an explicit objective (room for CP-SAT to
        close the paper search's gap).  The searches aim at 90% of it (the result
        is ranked and assembled after them) and always get at least 5% of it.  When
        the time runs out the best fitting pruning found so far is returned, never
        worse than the prior and the first rounds (trees) that fit, which are scored
        first, and ``solve_info`` says ``"time_limit"`` (``ensemble_search``'s
        ``status``) and which slow baseline families were skipped
        (``baselines_skipped``).  The anchors always run, the clock
        notwithstanding: reading the model, routing the rows once and scoring the
        prior, the truncations and the feature-prefix prunings (about 2 s of CPU
        for a 1,000-tree LightGBM model on 2,500 rows, 1 s for 200 trees on
        10,000), so a shorter limit is exceeded by that much.  With ``cost_sample`` the default is the paper
        search's 30 s, counted from the end of the compile (routing every row for
        the error term is fixed work on large data); an explicit limit still
        covers the whole call.
    solver_options : dict, optional
        Backend options (``mip``, ``mip_workers`` for the search).
    method : {"search", "hull"}
    objective : str, default "auto"
        ``"auto"``: see above.  ``"paper"`` minimises BudgetPrune's error term
        (mean per-tree error) as above.  An ensemble objective (``"brier"``, ``"logloss"``, ``"margin"``,
        ``"accuracy"``; see :mod:`prune_opt.objectives`) minimises the forest's
        own loss on ``(X, y)`` under the budget (``"accuracy"``: the error of
        ``predict``).  Candidates: budget descent on the paper's error term
        from the baseline with the lowest one (at most a third of the
        time), the best fitting member of every baseline (GreedyPrune on the
        error data of ``train``/``problem``, cost-complexity pruning, impurity
        thresholds, the first m trees -- also as a sub-forest of m trees),
        and :func:`prune_opt.objectives._optimize.search_budget` started from them
        (budget descent from the best: exact block moves, loss never rising).
        All are scored exactly on ``(X, y)`` and the lowest loss wins, so the
        result is never worse than any baseline that fits; there is no
        certified gap (see ``docs/math/ensemble_objective.md``).  A problem
        must be compiled on the same ``X``, and ``X``, ``y`` are still needed.
    random_state : int, default 0
        Seed of ``objective="auto"``'s split of the rows.
    warm_start : PrunedForest, split mask, or a list of them, optional
        Prunings of the same forest (e.g. an earlier result, or the paper
        objective's result before an ensemble objective's call) that join the
        candidates and the searches' starts: the paper search offers them
        before its heuristics (``found_by`` ``"warm_start[i]"``), an ensemble
        objective scores them and starts its search from them too, and
        ``"auto"`` hands them to its run on all rows.  The result is never
        worse in the objective than a warm start that fits the budget.
        Refused with ``method="hull"`` (the hull's vertices are what they are).
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
        ``paper`` (the paper-objective candidate) and ``ensemble_search``
        summaries; when the winner is the first m whole trees, the result is a pruning of that sub-forest
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
    >>> pruned = fit_budget(rf, X, y, costs=[1, 1, 5, 5], budget=4.0)
    >>> bool(pruned.average_cost(X) <= 4.0), pruned.solve_info["auto"]["chosen"] in (
    ...     "paper", "brier")
    (True, True)
    >>> paper = fit_budget(rf, X, y, costs=[1, 1, 5, 5], budget=4.0, objective="paper")
    >>> paper.solve_info["status"]
    'optimal'
    """
    budget = check_nonneg_scalar(budget, "budget")
    auto = isinstance(objective, str) and objective == "auto"
    default_limit = isinstance(time_limit, str) and time_limit == "default"
    if default_limit:
        time_limit = AUTO_TIME_LIMIT if auto else DEFAULT_TIME_LIMIT
    deadline = Deadline.of(time_limit)  # the one clock of this call
    if method not in ("search", "hull") or (objective not in ("paper", "auto")
                                             and method != "search"):
        raise ValueError(f"method must be 'search' or 'hull' (an ensemble objective, here "
                         f"{objective!r}, runs its own search: 'search'), got {method!r}")
    if method == "hull":
        check_hull_solver(solver)
    elif str(solver).lower() not in ("auto", "budget"):
        raise ValueError(
            f"solver={solver!r} cannot meet a hard budget: fit_budget's search runs on "
            "solver='budget' (leave solver='auto'); for the Lagrangian hull vertex computed "
            f"with {solver!r}, pass method='hull'")
    problem, forest = split_problem_or_forest(problem_or_forest, costs=costs, train=train,
                                              cost_sample=cost_sample, client=client)
    if warm_start is not None and method == "hull":
        raise ValueError("warm_start= applies to method='search' (the hull's vertices do not "
                         "depend on a start): drop warm_start or use method='search'")
    if auto:
        objective = _auto_objective(problem_or_forest, X, y, method, cost_sample, client)
    request = _Request(
        given=problem_or_forest, problem=problem, forest=forest, X=X, y=y, budget=budget,
        costs=costs, train=train, objective=objective, solver=solver, tol=tol,
        solver_options=solver_options, cost_sample=cost_sample, client=client,
        verbose=verbose, random_state=random_state,
        warm=warm_starts(problem.forest if problem is not None else forest, warm_start),
        sampled_default=default_limit and cost_sample is not None)
    return STRATEGIES[_strategy(method, objective)](request, deadline)


@dataclass
class _Request:
    """One fit_budget call's checked arguments, as every strategy reads them."""

    given: object
    problem: object
    forest: object
    X: object
    y: object
    budget: float
    costs: object
    train: object
    objective: object
    solver: str
    tol: float
    solver_options: object
    cost_sample: object
    client: object
    verbose: bool
    random_state: object
    warm: list
    sampled_default: bool


def _strategy(method, objective):
    """The name of the strategy a call runs (a key of :data:`STRATEGIES`)."""
    if method == "hull":
        return "hull"
    if isinstance(objective, str) and objective in ("paper", "auto"):
        return objective
    return "own loss"


def _paper_problem(r):
    """The paper program of a request: the given problem, or the forest compiled on its
    rows at ``lam = 0``."""
    if r.problem is None and (r.X is None or r.y is None):
        raise ValueError("X and y are needed to prune a forest (pass the validation rows "
                         "and labels), or pass a compiled PruningProblem first")
    problem = r.problem
    if problem is None:
        problem = compile_problem(r.forest, r.X, r.y, costs=r.costs, lam=0.0, train=r.train,
                                  cost_sample=r.cost_sample, client=r.client)
    if problem.depth_cost != 0:
        raise ValueError("fit_budget needs a problem compiled with depth_cost=0 (the budget "
                         "bounds acquisition cost only)")
    return problem


def _fit_paper(r, deadline):
    """``objective="paper"``, ``method="search"``: the hard-budget search on the paper
    program with what is left of the call's target share once it is compiled (at least
    :data:`MIN_SEARCH_SHARE` of the call, however long the compile took)."""
    cost_rows = None if r.X is None else local_rows(r.X)  # for the true cost
    problem = _paper_problem(r)
    if r.sampled_default:  # a sampled compile of many rows is fixed work, like routing:
        deadline = Deadline(DEFAULT_TIME_LIMIT)  # the default search counts from here
    search = deadline.until(TARGET_SHARE, at_least=MIN_SEARCH_SHARE * (deadline.limit or 0.0))
    options = r.solver_options if not r.warm else dict(r.solver_options or {}, starts=r.warm)
    pf = _fit_search(problem, r.budget, search, r.verbose, options)
    return _report_sampled_cost(pf, problem, r.budget, cost_rows)


def _fit_own_loss(r, deadline):
    """An ensemble objective: the lowest-loss fitting candidate in that loss."""
    return fit_budget_objective(r.given, r.X, r.y, costs=r.costs, budget=r.budget,
                                train=r.train, objective=r.objective,
                                time_limit=deadline.until(TARGET_SHARE), verbose=r.verbose,
                                solver_options=r.solver_options, cost_sample=r.cost_sample,
                                client=r.client, extra=r.warm)


def _fit_auto_request(r, deadline):
    """``objective="auto"``: see :func:`_fit_auto`."""
    return _fit_auto(r.given, r.X, r.y, budget=r.budget, costs=r.costs, train=r.train,
                     deadline=deadline, verbose=r.verbose, solver_options=r.solver_options,
                     random_state=r.random_state, warm=r.warm)


def _report_sampled_cost(pf, problem, budget, X):
    """With ``cost_sample`` the budget is met on the sample: record the true average
    cost on every row of X and warn when it is above the budget."""
    if getattr(problem, "cost_sample", None) is None:
        return pf
    if X is None:
        warnings.warn(f"the problem was compiled with cost_sample: the budget {budget:g} is "
                      "met by the sampled average cost only; pass the rows it was compiled "
                      "on as X to check (and record) the true average cost", UserWarning,
                      stacklevel=4)
    pf.solve_info.update(cost_sample_report(problem, pf.split_mask, X))
    true = pf.solve_info.get("true_average_cost")
    if true is not None and not fits_budget(true, budget):
        warnings.warn(f"the budget {budget:g} is met by the sampled average cost "
                      f"({pf.solve_info['sampled_average_cost']:g} on "
                      f"{pf.solve_info['n_sample']} rows) but the true average cost on all "
                      f"rows of X is {true:g}; pass a larger cost_sample (or none) to meet "
                      "it on every row", UserWarning, stacklevel=4)
    return pf


def _fit_search(problem, budget, deadline, verbose, solver_options):
    from ..solvers._solve import solve

    p = problem.with_lam(0.0).with_budget(budget)
    pf = solve(p, solver="budget", time_limit=deadline, verbose=verbose,
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


def _fit_hull(r, deadline):
    """``method="hull"``: the Lagrangian hull vertex with the largest cost not above the
    budget (exact solves; not time-limited)."""
    cost_rows = None if r.X is None else local_rows(r.X)
    problem, budget = _paper_problem(r), r.budget
    t0 = time.perf_counter()
    hull = LagrangianHull(problem, solver=r.solver, tol=r.tol, solver_options=r.solver_options)
    chosen, above, lam = _lagrangian(hull, budget, r.verbose)
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
    pf = PrunedForest(problem.forest, chosen.pruned.split_mask, costs=problem.costs,
                      objective=chosen.pruned.breakdown.error_term + lam * chosen.cost_term,
                      breakdown=chosen.pruned.breakdown, solve_info=info, lam=lam)
    return _report_sampled_cost(pf, problem, budget, cost_rows)


def _auto_objective(problem_or_forest, X, y, method, cost_sample, client):
    """What ``objective="auto"`` runs: the paper objective where only it applies (the
    hull, a sampled or distributed compile, a problem without its rows), else "auto"."""
    if method == "hull" or cost_sample is not None or client is not None or X is None \
            or y is None or getattr(problem_or_forest, "cost_sample", None) is not None:
        return "paper"
    return "auto"


def _own_loss(forest):
    """The forest's own loss (its kind's: a booster's training loss, a forest's Brier
    score or squared error)."""
    return forest.ensemble.own_loss(forest.task)


def _rank_by(forest):
    """What ranks the final run's candidates first under objective="auto" (then the
    forest's own loss): the error of ``predict`` for a classifier, as a pruning is
    judged by its accuracy; nothing for a regression forest."""
    return None if forest.ensemble.is_regression(forest.task) else AUTO_RANK


def _halves(y, forest, rng):
    """A fitting and a selecting half of the rows (stratified by class), or None when
    there are too few rows for an honest hold-out."""
    n = len(y)
    if n < AUTO_MIN_ROWS:
        return None
    if forest.task == "regression":
        perm = rng.permutation(n)
        return np.sort(perm[: n // 2]), np.sort(perm[n // 2:])
    labels = np.asarray(y)
    a, b = [], []
    for c in np.unique(labels):
        rows = rng.permutation(np.flatnonzero(labels == c))
        if rows.size < 2:
            return None
        a.append(rows[: rows.size // 2])
        b.append(rows[rows.size // 2:])
    return np.sort(np.concatenate(a)), np.sort(np.concatenate(b))


def _fit_auto(problem_or_forest, X, y, *, budget, costs, train, deadline, verbose,
              solver_options, random_state, warm=()):
    """``objective="auto"``: pick the paper error term or the forest's own loss on
    held-out rows, then run the pick on all rows (see :func:`fit_budget`).

    X is routed once: the problems of the fitting half and of all rows are
    compiled from those paths, the held-out half and the final loss are scored
    on subsets of them, and the own-loss runs reuse them."""
    from ..forest._costs import as_feature_costs, estimator_costs
    from ..objectives._scorer import VoteScorer
    from ..program._prepare import prepare

    t0 = time.perf_counter()
    problem = problem_or_forest if isinstance(problem_or_forest, PruningProblem) else None
    # X is read and routed once; a booster's pruned nodes get their values from its loss
    # on the error data, from the same leaves
    ready = prepare(problem.forest if problem is not None else problem_or_forest, X,
                    None if problem is not None else y, train=train)
    forest, X, routed = ready.forest, ready.X, ready.routed
    if problem is not None:
        costs = problem.costs
    else:  # a grower fitted with costs keeps them (costs_) when costs= is left out
        costs = as_feature_costs(estimator_costs(problem_or_forest, costs), forest.n_features,
                                 forest.feature_names)
    own, rank = _own_loss(forest), _rank_by(forest)
    # a kind that does not select on held-out rows runs its own loss, the paper's among
    # its candidates
    holdout, starts = ({"_n_rows": 0}, []) if not (
        forest.ensemble.selects_objective_on_holdout and deadline.limit != 0.0) \
        else _select_objective(forest, X, np.asarray(y), costs, train, routed, own, budget,
                               deadline, solver_options, random_state)
    halves = holdout.pop("_n_rows", 0)
    # ties (e.g. both cut to the root) go to the own loss: its run on all rows also
    # holds the paper search and every baseline, scored in the loss the pick uses
    chosen = min(holdout, key=lambda k: (holdout[k], k == "paper")) if holdout else own
    if problem is None:  # all rows, compiled from the paths routed above
        problem = compile_problem(forest, X, y, costs=costs, lam=0.0, train=train,
                                  routed=routed)
    # the run on all rows: the time left, at least its share of the call
    final = deadline.until(1.0, at_least=AUTO_FINAL_SHARE * (deadline.limit or 0.0))
    key = _fingerprint(forest, X, y, problem.costs)
    starts += [(f"incumbent-{i}", _full_mask(forest, pf)[0])
               for i, pf in enumerate(_incumbents(key, budget)[:AUTO_INCUMBENT_STARTS])]
    starts += list(warm)
    t_final = time.perf_counter()
    own_run = dict(costs=None, train=None, budget=budget, objective=own,
                   time_limit=final.until(TARGET_SHARE),
                   solver_options=solver_options, verbose=verbose, routed=routed,
                   extra=starts, select=rank)
    if chosen == "paper":
        out = fit_budget(problem, X, y, budget=budget, objective=chosen, time_limit=final,
                         solver_options=solver_options, verbose=verbose,
                         warm_start=[m for _, m in warm] or None)
        if out.breakdown is not None and out.breakdown.n_splits == 0 and budget > 0:
            # the paper search kept no split: the own-loss run (every baseline, the
            # paper result among its candidates) finds a fitting pruning that scores
            # better whenever one is among them
            chosen = own
            out = fit_budget_objective(problem, X, y, paper=out, **own_run)
    else:  # the forest's own loss, on the paths routed above
        out = fit_budget_objective(problem, X, y, **own_run)
    final_seconds = time.perf_counter() - t_final
    # the result in the ranking loss and the own loss, from one routing of its pruning
    scored = VoteScorer(forest, X, y, out.costs, own, routed=routed).score(
        *_full_mask(forest, out),
        also=None if rank is None else VoteScorer(forest, X, y, out.costs, rank, routed=routed))
    loss = (0.0 if rank is None else scored[2], scored[0])
    out = _keep_incumbent(out, loss, key, budget)
    out.solve_info["auto"] = {"chosen": chosen, "holdout_loss": holdout, "loss": own,
                              "n_holdout_rows": halves, "seconds": time.perf_counter() - t0,
                              "final_seconds": final_seconds,
                              **out.solve_info.get("auto", {})}
    out.solve_info["objective"] = out.solve_info.get("objective", chosen)
    return out


#: fit_budget's strategies by name (see :func:`_strategy`): each takes the checked
#: request and the call's one deadline and returns the PrunedForest
STRATEGIES = {"paper": _fit_paper, "hull": _fit_hull, "own loss": _fit_own_loss,
              "auto": _fit_auto_request}


def _select_objective(forest, X, yv, costs, train, routed, own, budget, deadline,
                      solver_options, random_state):
    """Both objectives run on one half of the rows, scored in the own loss on the other:
    ``({objective: held-out loss, "_n_rows": held-out rows}, [(name, mask)] of both
    runs)``; ``({}, [])`` when the rows leave no honest hold-out.  The two runs share one
    problem compiled on the fitting half from the routed paths (and its cached
    baseline families)."""
    from ..objectives._scorer import VoteScorer

    halves = _halves(yv, forest, np.random.default_rng(random_state))
    if halves is None:
        return {}, []
    fit, sel = halves
    # the selection runs compare objectives, not baselines: GreedyPrune (the slowest
    # family) is left to the final run
    quick = dict(solver_options or {},
                 baselines=[n for n in MASK_FAMILIES if n not in LATE_FAMILIES])
    fit_routed = routed.subset(fit)
    half = compile_problem(forest, X[fit], yv[fit], costs=costs, lam=0.0, train=train,
                           routed=fit_routed)
    scorer = VoteScorer(forest, X[sel], yv[sel], half.costs, own,
                        routed=routed.subset(sel))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        paper = fit_budget(half, X[fit], yv[fit], budget=budget, objective="paper",
                           time_limit=deadline.share(AUTO_SELECT_SHARE), solver_options=quick)
        # the own-loss run takes the paper search just run as its paper candidate
        mine = fit_budget_objective(half, X[fit], yv[fit], costs=None,
                                    budget=budget, train=None, objective=own, verbose=False,
                                    time_limit=deadline.share(AUTO_SELECT_SHARE).until(
                                        TARGET_SHARE),
                                    solver_options=quick, paper=paper,
                                    routed=fit_routed)
    holdout, starts = {}, []
    for obj, pf in (("paper", paper), (own, mine)):
        mask = _full_mask(forest, pf)
        holdout[obj] = scorer.score(*mask)[0]
        starts.append((f"half-{obj}", mask[0]))
    holdout["_n_rows"] = int(sel.size)
    return holdout, starts


def warm_starts(forest, warm_start):
    """``[(name, split mask over forest)]`` of ``fit_budget``'s ``warm_start``: a
    PrunedForest of ``forest`` (or of a sub-forest of its trees, ``trees_kept``), a
    split mask, or a list of them; a clear error names the one that is not a pruning
    of ``forest``."""
    if warm_start is None:
        return []
    from ..forest._forest import as_forest

    forest = as_forest(forest)
    items = (list(warm_start) if isinstance(warm_start, (list, tuple)) else [warm_start])
    out = []
    for i, w in enumerate(items):
        name = f"warm_start[{i}]"
        if isinstance(w, PrunedForest):
            if not _prunes(forest, w):
                raise ValueError(f"{name} is a pruning of another forest: pass prunings of "
                                 "the forest being pruned (e.g. an earlier fit_budget result "
                                 "on it)")
            w = _full_mask(forest, w)[0]
        out.append((name, forest.check_split_mask(w, name=name)))
    return out


def _prunes(forest, pf):
    """Whether ``pf`` is a pruning of ``forest`` (or of the sub-forest of its
    ``trees_kept``): the same trees, node for node."""
    trees = pf.solve_info.get("trees_kept")
    if trees is None:
        return forest.same_splits(pf.forest)
    return (max(trees, default=-1) < forest.n_trees
            and sub_forest(forest, trees).same_splits(pf.forest))


def _full_mask(forest, pf):
    """``(mask over forest, trees)`` of a result that may be a pruning of a sub-forest
    of ``forest`` (``solve_info["trees_kept"]``; ``trees`` is None otherwise)."""
    trees = pf.solve_info.get("trees_kept")
    if trees is None:
        return pf.split_mask, None
    mask = np.zeros(forest.n_nodes, dtype=bool)
    sub = pf.forest
    for i, t in enumerate(trees):
        mask[forest.tree_slice(t)] = pf.split_mask[sub.tree_slice(i)]
    return mask, list(trees)


# objective="auto": the best prunings found on the last few (forest, data, costs), so
# that a larger budget never returns a worse loss than a smaller one did
_INCUMBENTS = {}
_INCUMBENT_KEYS = 8
_INCUMBENTS_PER_KEY = 32


def _fingerprint(forest, X, y, costs):
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    for arr in (forest.threshold, forest.feature, forest.value, forest.left,
                np.asarray(forest.check_X(X)), np.asarray(y).astype(str), costs.unit_costs,
                costs.feature_units.toarray()):
        a = np.ascontiguousarray(arr)
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _incumbents(key, budget):
    """The prunings remembered for ``key`` that fit ``budget``, lowest loss first."""
    seen = [(lo, c, pf) for lo, c, pf in _INCUMBENTS.get(key, ()) if fits_budget(c, budget)]
    return [pf for _, _, pf in sorted(seen, key=lambda e: (e[0], e[1]))]


def _keep_incumbent(out, loss, key, budget):
    """Return the lowest-loss pruning among ``out`` and those remembered for the same
    forest, rows and costs that fit ``budget``; remember ``out``.

    ``loss`` is ``(ranking loss, own loss)``, compared in that order (the order
    the final run ranks its candidates in)."""
    cost = out.solve_info.get("achieved_cost")
    if cost is None:
        cost = out.breakdown.average_cost if out.breakdown is not None else math.inf
    seen = _INCUMBENTS.setdefault(key, [])
    best = min(((lo, c, pf) for lo, c, pf in seen if fits_budget(c, budget)),
               key=lambda e: (e[0], e[1]), default=None)
    seen.append((loss, cost, out))
    del seen[:-_INCUMBENTS_PER_KEY]
    while len(_INCUMBENTS) > _INCUMBENT_KEYS:
        _INCUMBENTS.pop(next(iter(_INCUMBENTS)))
    if best is not None and best[0] < loss:
        import copy

        kept = copy.copy(best[2])
        kept.solve_info = dict(best[2].solve_info, budget=budget, budget_slack=budget - best[1])
        kept.solve_info["auto"] = {"incumbent": True, "this_call_loss": loss[1],
                                   "this_call_rank_loss": loss[0]}
        kept.solve_info["auto_rank_loss"], kept.solve_info["auto_loss"] = best[0]
        return kept
    out.solve_info["auto_rank_loss"], out.solve_info["auto_loss"] = loss
    return out


def budget_curve(problem_or_forest, X=None, y=None, *, budgets, costs=None, train=None,
                 objective="auto", time_limit="default", X_eval=None, y_eval=None,
                 progress=False, **fit_kwargs):
    """:func:`fit_budget` at every budget of a grid, as rows comparable with
    :func:`tradeoff_curve`'s.

    The budgets are run from the smallest up, so with ``objective="auto"`` a
    larger budget never gets a worse loss than a smaller one (fit_budget keeps
    its best prunings of the same forest, rows and costs).  One deadline covers
    the whole grid: each budget gets an equal share of the time still left.

    Parameters
    ----------
    problem_or_forest, X, y, costs, train, objective, time_limit
        As for :func:`fit_budget`, but ``time_limit`` covers every budget of the grid
        (default: :data:`CURVE_TIME_LIMIT` seconds with ``objective="auto"``, else
        fit_budget's default per budget).
    budgets : sequence of float
        Average acquisition costs per example (>= 0).
    X_eval, y_eval : array-like, optional
        Held-out data: adds ``accuracy_eval`` (``r2_eval`` for a regression
        forest) and ``cost_eval`` columns.
    progress : bool
        Show a tqdm progress bar (one tick per budget).
    **fit_kwargs
        Other keywords of :func:`fit_budget` (``method``, ``solver_options``, ...).

    Returns
    -------
    pandas.DataFrame
        One row per budget, costliest first as ``tradeoff_curve``'s: ``method``
        (``"fit_budget"``), ``budget``, ``error_term`` (the paper's error term
        of the pruning on the problem's error data, when known), ``average_cost``,
        ``n_splits``, ``n_trees``, ``objective`` (what was optimised), ``seconds``,
        plus the evaluation columns.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import budget_curve
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> curve = budget_curve(rf, X, y, budgets=[1.0, 2.0], costs=[1, 1, 5, 5])
    >>> list(curve["budget"]), bool((curve["average_cost"] <= curve["budget"]).all())
    ([2.0, 1.0], True)
    """
    try:
        grid = np.asarray(budgets, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"budgets must be a sequence of numbers, got {budgets!r}") from None
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or (grid < 0).any():
        raise ValueError(f"budgets must be a non-empty 1-D sequence of finite numbers >= 0, "
                         f"got {budgets!r}")
    if (X_eval is None) != (y_eval is None):
        raise ValueError("X_eval and y_eval must be given together")
    is_problem = isinstance(problem_or_forest, PruningProblem)
    extra = {} if is_problem else {"costs": costs, "train": train}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=grid.size, desc="budgets", unit="fit")
    if isinstance(time_limit, str) and time_limit == "default":
        time_limit = (CURVE_TIME_LIMIT if isinstance(objective, str) and objective == "auto"
                      else DEFAULT_TIME_LIMIT * grid.size)
    deadline = Deadline.of(time_limit)  # one clock for the whole grid
    rows = []
    try:
        for i, b in enumerate(np.sort(grid)):
            t0 = time.perf_counter()
            pf = fit_budget(problem_or_forest, X, y, budget=float(b), objective=objective,
                            time_limit=deadline.share(1.0 / (grid.size - i)), **extra,
                            **fit_kwargs)
            info = pf.solve_info
            bd = pf.breakdown
            r = {"method": "fit_budget", "budget": float(b),
                 "error_term": np.nan if bd is None else bd.error_term,
                 "average_cost": info.get("achieved_cost", np.nan if bd is None
                                          else bd.average_cost),
                 "n_splits": pf.n_splits, "n_trees": pf.n_trees,
                 "objective": info.get("auto", {}).get("chosen", info.get("objective",
                                                                          "paper")),
                 "seconds": time.perf_counter() - t0}
            if X_eval is not None:
                f = pf.forest
                n_eval = len(f.check_X(X_eval, "X_eval"))
                check_labels(f, y_eval, n_eval, name="y_eval")
                score = "r2_eval" if f.task == "regression" else "accuracy_eval"
                r[score] = pf.score(X_eval, y_eval)
                r["cost_eval"] = pf.average_cost(X_eval)
            rows.append(r)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return records_frame(rows[::-1])
