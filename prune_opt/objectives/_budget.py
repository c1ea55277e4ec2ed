"""fit_budget_ensemble: the best ensemble-objective pruning within an average-cost budget."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_nonneg_scalar
from ._base import get_objective
from ._optimize import _check_max_iter, run_starts
from ._setup import Setup, now
from ._state import EnsembleState

__all__ = ["fit_budget_ensemble"]

# relative slack of the budget test (float round-off of the average cost)
BUDGET_RTOL = 1e-12


class _Search:
    """Lagrangian search state: every end point found, and the lam bracket."""

    def __init__(self, setup, state, budget, max_iter, deadline, verbose):
        self.setup, self.state, self.budget = setup, state, budget
        self.max_iter, self.deadline, self.verbose = max_iter, deadline, verbose
        self.points = []  # (lam, run)
        self.warm = None

    def fits(self, run):
        return run["breakdown"]["average_cost"] <= self.budget * (1 + BUDGET_RTOL) + 1e-300

    def solve_at(self, lam, init=None):
        """Block descent at lam from the warm start and the paper optimum; True if any fits."""
        st = self.state.with_lam(lam)
        starts = init if init is not None else [("warm", self.warm),
                                                 ("paper", self.setup.paper_mask(lam))]
        runs = run_starts(st, self.setup, starts, max_iter=self.max_iter,
                          deadline=self.deadline, verbose=self.verbose)
        self.points.extend((lam, r) for r in runs)
        self.warm = runs[0]["mask"]
        return any(self.fits(r) for r in runs)

    def out_of_time(self):
        return self.deadline is not None and now() > self.deadline

    def best(self):
        """Lowest-loss end point within the budget (ties: the cheaper one)."""
        ok = [(r["breakdown"]["loss"], r["breakdown"]["average_cost"], i)
              for i, (_, r) in enumerate(self.points) if self.fits(r)]
        return self.points[min(ok)[2]]


def _root_run(state):
    """The all-root pruning as a block-descent end point at lam = 0 (always feasible)."""
    st = state.with_lam(0.0)
    st.set_mask(np.zeros(state.forest.n_nodes, dtype=bool))
    b = st.breakdown()
    return {"mask": st.mask.copy(), "trace": [b["objective"]], "iterations": 0,
            "converged": False, "changes": [], "breakdown": b, "start": "root"}


def _lam_scale(search, full_run, root_run):
    """A first lam: loss gained by the full model per unit of its cost."""
    gain = root_run["breakdown"]["loss"] - full_run["breakdown"]["loss"]
    cost = max(full_run["breakdown"]["average_cost"], 1e-12)
    return max(gain, 1e-6) / cost


def _bracket_and_bisect(search, lam, max_lams):
    """Grow lam until a pruning fits, then bisect (geometric mean) the lam bracket."""
    lo, hi, n = 0.0, None, 0
    while hi is None and n < max_lams and not search.out_of_time():
        if search.solve_at(lam):
            hi = lam
        else:
            lo, lam = lam, lam * 4.0
        n += 1
    while hi is not None and n < max_lams and not search.out_of_time():
        mid = math.sqrt(lo * hi) if lo > 0 else hi / 4.0
        if hi / max(mid, 1e-300) < 1.0 + 1e-3:
            break
        if search.solve_at(mid):
            hi = mid
        else:
            lo = mid
        n += 1
    return n


def fit_budget_ensemble(forest, X, y, *, objective="brier", budget, costs=None,
                        time_limit=None, depth_cost=0.0, sample_weight=None, max_iter=50,
                        max_lams=14, solver="auto", verbose=False):
    """Best-loss pruning whose average acquisition cost on X is at most ``budget``.

    Searches ``lam`` (grow by 4 until a pruning fits, then bisect the bracket
    geometrically).  At each lam, block descent runs from the previous lam's
    pruning (warm start) and from the paper's exact optimum at that lam;
    every end point is kept, and the one with the lowest loss (the objective
    without the cost term) among those that fit is returned.  The all-root
    pruning always fits, so a result always exists.

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
        Backend of the paper starts.
    verbose : bool

    Returns
    -------
    PrunedForest
        ``solve_info`` adds ``budget``, ``n_lams`` and ``points`` (lam, start,
        loss and average cost of every end point).

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
    time_limit = check_nonneg_scalar(time_limit, "time_limit", allow_none=True)
    max_iter = _check_max_iter(max_iter)
    _check_max_iter(max_lams)
    setup = Setup(forest, X, y, costs=costs, depth_cost=check_nonneg_scalar(
        depth_cost, "depth_cost"), sample_weight=sample_weight, solver=solver)
    state = EnsembleState(setup.forest, setup.X, setup.y, setup.weight, setup.costs, obj,
                          lam=0.0, depth_cost=setup.depth_cost)
    search = _Search(setup, state, budget, max_iter,
                     None if time_limit is None else t0 + time_limit, verbose)
    root = _root_run(state)
    search.points.append((0.0, root))
    n = 0
    if not search.solve_at(0.0, init=setup.starts("best", 0.0)):
        full = min((r for _, r in search.points[1:]), key=lambda r: r["trace"][-1])
        n = _bracket_and_bisect(search, _lam_scale(search, full, root), max_lams)
    lam, run = search.best()
    points = [{"lam": lm, "start": r["start"], "loss": r["breakdown"]["loss"],
               "average_cost": r["breakdown"]["average_cost"]} for lm, r in search.points]
    info = {"budget": budget, "n_lams": n + 1, "points": points, "seconds": now() - t0}
    return setup.result(run, obj, lam, info)
