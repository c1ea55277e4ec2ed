"""The ensemble optimiser's moves: tree blocks, budgeted tree blocks, unit moves.

* :func:`block_descent` -- exact block coordinate descent over trees at a
  fixed ``lam`` (the shared :func:`~prune_opt.objectives._ledger.descend`
  without a budget), with a round of unit moves at each fixed point;
* :func:`budget_descent` -- the same descent on the loss alone subject to
  average cost <= B (the move the paper's budget search makes, with the
  ensemble's node terms);
* :func:`unit_round` and :func:`greedy_repair` -- drop one acquisition unit
  from every tree at once.  Block steps over single trees cannot realise a
  saving that needs every tree to give up a unit (a unit another tree still
  pays is free for this one); a unit move cuts, in every tree, each kept
  split whose feature needs the unit (with its subtree).
"""

from __future__ import annotations

import time

import numpy as np

from .._validation import fits_budget
from ._ledger import IMPROVE_RTOL, descend, without_unit

__all__ = ["block_descent", "budget_descent", "unit_round", "greedy_repair", "run_starts",
           "check_max_iter"]


def check_max_iter(max_iter, name="max_iter"):
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"{name} must be a positive integer, got {max_iter!r}")
    return max_iter


def block_descent(state, init_mask, *, max_iter=50, deadline=None, unit_moves=True,
                  verbose=False):
    """Run block coordinate descent from ``init_mask`` on ``state``.

    One iteration is a sweep over the trees; tree t is replaced by the exact
    optimum of its block problem (the others fixed) when that is strictly
    better.  When a sweep changes no tree and ``unit_moves`` is set, a round
    of unit removals (every tree gives up one acquisition unit, kept only if
    the objective drops) follows.  Stops at a fixed point (no tree and no
    unit changes), after ``max_iter`` iterations or at ``deadline`` (a
    ``time.perf_counter`` value).

    Returns
    -------
    dict with ``mask``, ``trace`` (objective after each iteration, the
    start first), ``iterations``, ``converged``, ``changes`` (trees replaced per
    sweep), ``units_dropped`` (per unit round) and ``breakdown`` (loss and
    average cost of the end point).
    """
    run = descend(state, init_mask, max_sweeps=max_iter, deadline=deadline,
                  escape=unit_round if unit_moves else None, verbose=verbose)
    run["units_dropped"] = run.pop("escapes")
    run["breakdown"] = state.breakdown()
    return run


def budget_descent(state, mask, budget, *, max_iter=20, deadline=None):
    """Loss-decreasing block descent that keeps the average cost within ``budget``.

    ``mask`` must fit the budget.  Returns ``(mask, losses)`` with the loss
    after each sweep (non-increasing, the start first).
    """
    run = descend(state.with_lam(0.0, depth_cost=0.0), mask, budget, max_sweeps=max_iter,
                  deadline=deadline)
    return run["mask"], run["trace"]


def unit_round(state, J):
    """Try every paid unit; apply the improving removals, best first (re-checked).

    Returns the number of units dropped.
    """
    tol = IMPROVE_RTOL * max(1.0, abs(J))
    trials = []
    for u in state.paid_units():
        cand = without_unit(state.forest, state.mask, state.unit_nodes, u)
        trials.append((state.breakdown_if(cand)["objective"] - J, int(u)))
    dropped = 0
    for delta, u in sorted(trials):
        if delta >= -tol:
            break
        cand = without_unit(state.forest, state.mask, state.unit_nodes, u)
        J_new = state.breakdown_if(cand)["objective"] if dropped else J + delta
        if J_new < J - tol:
            state.set_mask(cand)
            J, dropped = J_new, dropped + 1
    return dropped


def greedy_repair(state, mask, budget, *, deadline=None):
    """Drop units until the average cost is at most ``budget`` (hard constraint).

    Each step removes, from every tree, the unit with the smallest loss
    increase per unit of average cost saved (GreedyPrune's rule applied to
    the ensemble loss), re-evaluated exactly.  Returns the feasible split mask.
    """
    state = state.with_lam(state.lam)
    state.set_mask(mask)
    b = state.breakdown()
    while not fits_budget(b["average_cost"], budget) and not (
            deadline and time.perf_counter() > deadline):
        best = None
        for u in state.paid_units():
            cand = without_unit(state.forest, state.mask, state.unit_nodes, u)
            c = state.breakdown_if(cand)
            saved = b["average_cost"] - c["average_cost"]
            if saved > 0:
                ratio = (c["loss"] - b["loss"]) / saved
                if best is None or ratio < best[0]:
                    best = (ratio, cand, c)
        if best is None:
            break
        state.set_mask(best[1])
        b = best[2]
    if not fits_budget(b["average_cost"], budget):  # out of time: every tree to its root
        state.set_mask(np.zeros_like(mask))
    return state.mask.copy()


def run_starts(state, starts, *, max_iter, deadline, verbose, unit_moves=True):
    """Block descent from every start; the runs, best (lowest objective) first."""
    runs = []
    for name, mask in starts:
        if verbose:
            print(f"[prune-opt] block descent from the {name} start (lam={state.lam:g})")
        run = block_descent(state, mask, max_iter=max_iter, deadline=deadline,
                            unit_moves=unit_moves, verbose=verbose)
        run["start"] = name
        runs.append(run)
    return sorted(runs, key=lambda r: r["trace"][-1])
