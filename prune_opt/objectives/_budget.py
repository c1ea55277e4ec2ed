"""fit_budget_ensemble: the best ensemble-objective pruning within an average-cost budget."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_nonneg_scalar, check_time_limit, fits_budget
from ._base import get_objective
from ._budget_descent import budget_descent
from ._moves import greedy_repair
from ._setup import Setup, now
from ._starts import _check_max_iter, run_starts
from ._state import EnsembleState

__all__ = ["fit_budget_ensemble"]

# lam grows by this factor along the continuation path; the first lam is this
# fraction of the full forest's loss gain per unit of cost
LAM_GROWTH = 1.6
LAM_START = 0.1
# over-budget end points (the cheapest) made feasible by greedy unit removal
REPAIR_POINTS = 3
# feasible end points (lowest loss first) improved by budget descent
POLISH_POINTS = 2


class _Search:
    """Lagrangian search state: every end point found so far."""

    def __init__(self, setup, state, budget, max_iter, deadline, verbose):
        self.setup, self.state, self.budget = setup, state, budget
        self.max_iter, self.deadline, self.verbose = max_iter, deadline, verbose
        self.points = []  # (lam, run)

    def fits(self, run):
        return fits_budget(run["breakdown"]["average_cost"], self.budget)

    def solve_at(self, lam, warm):
        """Block descent at lam warm-started from ``warm``; the run."""
        starts = [("warm", warm)]
        runs = run_starts(self.state.with_lam(lam), self.setup, starts, unit_moves=False,
                          max_iter=self.max_iter, deadline=self.deadline, verbose=self.verbose)
        self.points.extend((lam, r) for r in runs)
        return next(r for r in runs if r["start"] == "warm")

    def out_of_time(self):
        return self.deadline is not None and now() > self.deadline

    def repair(self, n_points=REPAIR_POINTS):
        """Make the cheapest over-budget end points fit by greedy unit removal."""
        over = sorted((r["breakdown"]["average_cost"], i) for i, (_, r) in
                      enumerate(self.points) if not self.fits(r))
        distinct = {}
        for cost, i in over:  # one point per distinct cost, cheapest first
            if len(distinct) < n_points:
                distinct.setdefault(round(cost, 9), i)
        for i in distinct.values():
            lam, run = self.points[i]
            st = self.state.with_lam(lam)
            st.set_mask(greedy_repair(st, run["mask"], self.budget, deadline=self.deadline))
            b = st.breakdown()
            self.points.append((lam, {"mask": st.mask.copy(), "trace": [b["objective"]],
                                      "iterations": 0, "converged": False, "changes": [],
                                      "breakdown": b, "start": "repair"}))

    def polish(self, n_points=POLISH_POINTS):
        """Budget descent from the lowest-loss feasible end points (distinct losses)."""
        ok = sorted((r["breakdown"]["loss"], i) for i, (_, r) in enumerate(self.points)
                    if self.fits(r) and r["start"] != "root")
        chosen = {}
        for loss, i in ok:
            if len(chosen) < n_points:
                chosen.setdefault(round(loss, 12), i)
        for i in chosen.values():
            if self.out_of_time():
                break
            mask, losses = budget_descent(self.state, self.points[i][1]["mask"], self.budget,
                                          deadline=self.deadline)
            st = self.state.with_lam(0.0)
            st.set_mask(mask)
            b = st.breakdown()
            self.points.append((0.0, {"mask": mask, "trace": [b["objective"]],
                                      "iterations": len(losses) - 1, "converged": False,
                                      "changes": [], "breakdown": b,
                                      "start": "budget-descent", "losses": losses}))

    def best(self):
        """Lowest-loss end point within the budget (ties: the cheaper one)."""
        ok = [(r["breakdown"]["loss"], r["breakdown"]["average_cost"], i)
              for i, (_, r) in enumerate(self.points) if self.fits(r)]
        return self.points[min(ok)[2]]


def _mask_run(state, mask, start):
    """A given pruning as an end point at lam = 0 (no descent from it yet)."""
    st = state.with_lam(0.0)
    st.set_mask(mask)
    b = st.breakdown()
    return {"mask": st.mask.copy(), "trace": [b["objective"]], "iterations": 0,
            "converged": False, "changes": [], "breakdown": b, "start": start}


def _root_run(state):
    """The all-root pruning as an end point at lam = 0 (always feasible)."""
    return _mask_run(state, np.zeros(state.forest.n_nodes, dtype=bool), "root")


def _check_candidates(forest, candidates):
    """``[(name, closed split mask)]`` from the ``candidates`` argument."""
    out = []
    for item in candidates or ():
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            raise ValueError("candidates must be a list of (name, split_mask) pairs, got "
                             f"an item {item!r:.60}")
        out.append((item[0], forest.check_split_mask(item[1], name=f"candidates[{item[0]!r}]")))
    return out


def _lam_scale(full_run, root_run):
    """A first lam: loss gained by the full model per unit of its cost."""
    gain = root_run["breakdown"]["loss"] - full_run["breakdown"]["loss"]
    cost = max(full_run["breakdown"]["average_cost"], 1e-12)
    return max(gain, 1e-6) / cost


def _continuation(search, lam, mask, max_lams):
    """Raise lam geometrically, each block descent warm-started from the previous
    (costlier) end point, until the chain fits the budget; then bisect the last
    lam step, again warm-starting from the costlier side.  Returns lams tried."""
    lo, lo_mask, hi, n, stuck = 0.0, mask, None, 0, 0
    while hi is None and n < max_lams and stuck < 2 and not search.out_of_time():
        run = search.solve_at(lam, lo_mask)
        n += 1
        if search.fits(run):
            hi = lam
        else:
            stuck = stuck + 1 if np.array_equal(run["mask"], lo_mask) else 0
            lo, lo_mask, lam = lam, run["mask"], lam * LAM_GROWTH
    while hi is not None and n < max_lams and not search.out_of_time():
        mid = math.sqrt(lo * hi) if lo > 0 else hi / LAM_GROWTH
        if hi / mid < 1.0 + 1e-3:
            break
        run = search.solve_at(mid, lo_mask)
        n += 1
        if search.fits(run):
            hi = mid
        else:
            lo, lo_mask = mid, run["mask"]
    return n


def fit_budget_ensemble(forest, X, y, *, objective="brier", budget, costs=None,
                        time_limit=None, depth_cost=0.0, sample_weight=None, max_iter=50,
                        max_lams=24, solver="auto", verbose=False, candidates=None,
                        routed=None):
    """Best-loss pruning whose average acquisition cost on X is at most ``budget``.

    A continuation in ``lam``: starting from the best pruning at ``lam = 0``
    (block descent from the paper's optimum and from the unpruned forest),
    lam grows geometrically and block descent at each lam is warm-started
    from the previous (costlier) end point, so the chain prunes step by step
    instead of jumping between "everything" and "root only".  Once the chain
    fits, the last lam step is bisected; it also stops when two lam steps
    change nothing.  The cheapest end points over the budget are then made to
    fit by greedy unit removal (drop, from every tree, the unit with the least
    loss increase per cost saved until the budget holds), because no lam may
    give a pruning near the budget.  Of every end point, the one with the
    lowest loss (the objective without the cost term) that fits is returned;
    the all-root pruning always fits, so a result always exists.

    ``candidates`` (other prunings, e.g. the baselines' or the paper search's)
    join the end points before anything else runs, and budget descent starts
    first from the lowest-loss one that fits, so the result's loss is never
    above any fitting candidate's.

    Parameters
    ----------
    forest : PruningProblem, fitted estimator or Forest
    X, y : array-like
        Validation data: loss and budget are measured on it.
    objective : str or Objective, default "brier"
    budget : float
        Maximum average acquisition cost per example on X.
    costs : FeatureCosts, array-like or mapping, optional
    time_limit : float, optional
        Seconds; the search stops after the lam being solved when exceeded.
    depth_cost : float
    sample_weight : array-like, optional
    max_iter : int
        Sweeps per block descent.
    max_lams : int
        Maximum number of lam values tried after lam = 0.
    solver : str
        Backend of the paper start at lam = 0.
    verbose : bool
    candidates : list of (str, ndarray of bool), optional
        Named split masks of the same forest to consider and start from.
    routed : RoutedData, optional
        ``X`` already routed through the forest (it is then not routed again).

    Returns
    -------
    PrunedForest
        ``solve_info`` adds ``budget``, ``n_lams`` and ``points`` (lam, start,
        loss and average cost of every end point); ``status`` is
        ``"within_budget"`` and ``lam``/``start`` are those of the returned point
        (``start`` is ``"warm"``, ``"paper"``, ``"full"``, ``"repair"``,
        ``"budget-descent"``, ``"root"`` or a candidate's name).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.objectives import fit_budget_ensemble
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> pf = fit_budget_ensemble(rf, X, y, objective="brier", budget=1.0)
    >>> bool(pf.average_cost(X) <= 1.0)
    True
    """
    t0 = now()
    obj = get_objective(objective)
    budget = check_nonneg_scalar(budget, "budget")
    time_limit = check_time_limit(time_limit)
    max_iter = _check_max_iter(max_iter)
    _check_max_iter(max_lams)
    setup = Setup(forest, X, y, costs=costs, depth_cost=check_nonneg_scalar(
        depth_cost, "depth_cost"), sample_weight=sample_weight, solver=solver, objective=obj)
    obj = setup.objective
    state = EnsembleState(setup.forest, setup.X, setup.y, setup.weight, setup.costs, obj,
                          lam=0.0, depth_cost=setup.depth_cost, routed=routed)
    search = _Search(setup, state, budget, max_iter,
                     None if time_limit is None else t0 + time_limit, verbose)
    root = _root_run(state)
    search.points.append((0.0, root))
    extra = [(0.0, _mask_run(state, m, name)) for name, m in
             _check_candidates(setup.forest, candidates)]
    search.points.extend(extra)
    if any(search.fits(r) for _, r in extra):
        search.polish(n_points=1)
    runs = run_starts(state, setup, setup.starts("best", 0.0), max_iter=max_iter,
                      deadline=search.deadline, verbose=verbose)
    search.points.extend((0.0, r) for r in runs)
    n = 0
    if not search.fits(runs[0]):
        n = _continuation(search, LAM_START * _lam_scale(runs[0], root), runs[0]["mask"],
                          max_lams)
        search.repair()
    search.polish()
    lam, run = search.best()
    points = [{"lam": lm, "start": r["start"], "loss": r["breakdown"]["loss"],
               "average_cost": r["breakdown"]["average_cost"]} for lm, r in search.points]
    info = {"budget": budget, "n_lams": n + 1, "points": points, "seconds": now() - t0,
            "status": "within_budget"}
    return setup.result(run, obj, lam, info, state)
