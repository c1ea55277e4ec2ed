"""Shared plumbing of the LP backends: from an LP point to a SolveResult.

Without a budget row the program is totally unimodular, so an optimal vertex
is integral and its rounding is the optimum.  With a budget row the LP
optimum may be fractional: it is then a *bound*, not a pruning.  The pruning
returned is the best budget-feasible threshold rounding of the LP point, and
the status says ``"feasible"`` unless that pruning reaches the bound.
"""

from __future__ import annotations

import numpy as np

from .._validation import fits_budget
from ._base import SolveResult

# an LP point this close to integral counts as integral
INTEGRAL_TOL = 1e-6
# budget-feasible roundings evaluated when the 1/2-rounding breaks the budget
N_ROUNDINGS = 16


def within_budget(problem, mask):
    """True when ``mask`` respects ``problem.budget`` (always, without a budget)."""
    if problem.budget is None:
        return True
    cost = problem.evaluate(mask).average_cost
    return fits_budget(cost, problem.budget)


def fallback_mask(problem):
    """Best of the trivial prunings that are valid (whole forest, roots only) and
    within the budget: a valid answer when a backend stops without a point.
    The roots-only pruning costs nothing, so it always qualifies."""
    roots = np.zeros(problem.n_nodes, dtype=bool)
    full = problem.forest.full_split_mask()
    cands = [roots] + ([full] if within_budget(problem, full) else [])
    return min(cands, key=lambda m: problem.evaluate(m).objective)


def budget_rounding(problem, x):
    """Best budget-feasible threshold rounding of the LP point ``x``.

    Node h stays a split when the pruned-leaf mass on its root path
    (``ancestors @ z``) is at most a threshold v; every v gives a valid
    pruning, and cost grows with v.  The largest feasible v is found by
    bisection, then up to :data:`N_ROUNDINGS` feasible thresholds are
    evaluated and the best kept.
    """
    covered = problem.ancestors() @ np.asarray(x, dtype=float)[: problem.n_nodes]
    internal = ~problem.forest.is_leaf
    levels = np.unique(covered[internal])

    def mask_at(i):
        return internal & (covered <= levels[i]) if i >= 0 else np.zeros_like(internal)

    lo, hi = -1, levels.size - 1  # mask_at(lo) feasible (roots only costs 0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if within_budget(problem, mask_at(mid)) else (lo, mid - 1)
    picks = np.unique(np.linspace(-1, lo, num=min(N_ROUNDINGS, lo + 2)).round().astype(int))
    return min((mask_at(i) for i in picks), key=lambda m: problem.evaluate(m).objective)


def lp_result(problem, x, *, status, objective=None, iterations=None, message=None):
    """Build a SolveResult from an LP/IP point (or its absence).

    ``status`` is the mapped status of the solve; ``objective`` (scaled, read
    only at ``"optimal"``, where it is the bound) the solver's value of ``x``;
    ``message`` the solver's words, kept in ``info`` unless optimal.  A
    non-optimal point is rounded and compared with :func:`fallback_mask`;
    under a budget row a fractional or over-budget point goes through
    :func:`budget_rounding` and the LP value becomes the bound.
    """
    optimal = status == "optimal"
    info = {"message": message} if message is not None and not optimal else {}
    bound = None if not optimal or objective is None or not np.isfinite(objective) else (
        objective / problem.scale)
    if x is None:
        mask, frac = fallback_mask(problem), float("nan")
        info["note"] = "no primal point returned; fell back to the better trivial pruning"
    else:
        mask, frac = problem.split_mask_from_lp(x)
        if problem.budget is not None and not within_budget(problem, mask):
            mask = budget_rounding(problem, x)
            info["note"] = "LP point over budget after rounding; best feasible rounding kept"
        if not optimal:
            mask = min((mask, fallback_mask(problem)), key=lambda m: problem.evaluate(m).objective)
    value = problem.evaluate(mask).objective
    if optimal and x is not None:
        if problem.budget is None or (frac <= INTEGRAL_TOL and "note" not in info):
            value = objective / problem.scale
        elif value > bound + 1e-9 * max(1.0, abs(bound)):
            status = "feasible"  # a fractional LP optimum under a budget row: a bound
            info["lp_objective"] = bound
    return SolveResult(split_mask=mask, objective=float(value),
                       bound=float(0.0 if bound is None else min(bound, value)),
                       status=status, seconds=0.0, iterations=iterations,
                       max_fractionality=frac, info=info)
