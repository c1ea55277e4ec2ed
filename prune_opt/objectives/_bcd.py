"""Exact block coordinate descent over trees for an ensemble objective."""

from __future__ import annotations

import time

from ._block import best_tree_pruning, pruning_value
from ._moves import unit_round

__all__ = ["block_descent"]

# a sweep may not raise the objective by more than this (relative): float round-off only
MONOTONE_RTOL = 1e-9
# a block step is taken only when it lowers the objective by more than this (relative)
IMPROVE_RTOL = 1e-12


def _sweep(state, J):
    """One pass over the trees; each replaced by its block optimum if strictly better."""
    f, changed = state.forest, 0
    for t in range(f.n_trees):
        L, k = state.block_terms(t)
        sl = f.tree_slice(t)
        layout = state.layouts[t]
        best, tree_mask = best_tree_pruning(layout, L, k)
        current = pruning_value(layout, state.mask[sl], L, k)
        if best < current - IMPROVE_RTOL * max(1.0, abs(J)):
            state.replace_tree(t, tree_mask)
            changed += 1
    state.refresh_total()
    return changed


def _check_monotone(J, J_new):
    if J_new > J + MONOTONE_RTOL * max(1.0, abs(J)):
        raise RuntimeError(f"block descent raised the objective from {J!r} to {J_new!r}; "
                           "a step was not exact (please report this)")


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
    state.set_mask(init_mask)
    J = state.breakdown()["objective"]
    trace, changes, drops, converged = [J], [], [], False
    tol = IMPROVE_RTOL * max(1.0, abs(J))
    for it in range(max_iter):
        changed = _sweep(state, J)
        J_new = state.breakdown()["objective"]
        _check_monotone(J, J_new)
        trace.append(J_new)
        changes.append(changed)
        J = J_new
        if changed == 0 and unit_moves:
            J_new, dropped = unit_round(state, J, tol)
            drops.append(dropped)
            if dropped:
                J_new = state.breakdown()["objective"]
                _check_monotone(J, J_new)
                trace[-1] = J = J_new
                changed = -dropped
        if verbose:
            print(f"[prune-opt] iteration {it + 1}: objective {J:.6g}, {changes[-1]} trees "
                  f"changed, {max(-changed, 0)} units dropped")
        if changed == 0:
            converged = True
            break
        if deadline is not None and time.perf_counter() > deadline:
            break
    return {"mask": state.mask.copy(), "trace": trace, "iterations": len(changes),
            "converged": converged, "changes": changes, "units_dropped": drops,
            "breakdown": state.breakdown()}
