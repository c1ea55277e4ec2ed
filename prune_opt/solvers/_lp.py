"""Shared plumbing of the LP backends: from an LP point to a SolveResult."""

from __future__ import annotations

import numpy as np

from ._base import SolveResult


def fallback_mask(problem):
    """Best of the two trivial prunings (whole forest, roots only): a valid answer
    when a backend stops before it has a primal point."""
    full = problem.forest.full_split_mask()
    roots = np.zeros_like(full)
    return min((full, roots), key=lambda m: problem.evaluate(m).objective)


def lp_result(problem, x, *, scaled_objective, scaled_bound, status, iterations=None,
              info=None):
    """Build a SolveResult from an LP/IP point (or its absence)."""
    info = dict(info or {})
    if x is None:
        mask = fallback_mask(problem)
        frac = float("nan")
        objective = problem.evaluate(mask).objective
        info["note"] = "no primal point returned; fell back to the better trivial pruning"
    else:
        mask, frac = problem.split_mask_from_lp(x)
        objective = scaled_objective / problem.scale
    bound = 0.0 if scaled_bound is None or not np.isfinite(scaled_bound) else (
        scaled_bound / problem.scale)
    return SolveResult(split_mask=mask, objective=float(objective), bound=float(bound),
                       status=status, seconds=0.0, iterations=iterations,
                       max_fractionality=frac, info=info)
