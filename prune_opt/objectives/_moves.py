"""Feature-removal moves: drop one acquisition unit from every tree at once.

Block steps over single trees cannot realise a cost saving that needs every
tree to give up a unit (a unit another tree still pays is free for this one),
so block descent can stop where dropping a unit everywhere would help.  A
unit move cuts, in every tree, each kept split whose feature needs unit
``u`` (with its subtree) and is taken only if the true objective decreases.
"""

from __future__ import annotations

import copy

import numpy as np

from .._problem import close_under_parents
from .._validation import fits_budget

__all__ = ["unit_round", "greedy_repair"]


def objective_of(state, mask):
    """True objective of ``mask`` on the state's data (the state is left unchanged)."""
    return state.breakdown_if(mask)["objective"]


def without_unit(state, u):
    """The running pruning with every split needing unit ``u`` cut (closed)."""
    nodes = state.unit_nodes.indices[state.unit_nodes.indptr[u]:state.unit_nodes.indptr[u + 1]]
    mask = state.mask.copy()
    mask[nodes] = False
    return close_under_parents(state.forest, mask)


def unit_round(state, J, tol):
    """Try every paid unit; apply the improving removals, best first (re-checked).

    Returns the new objective and the number of units dropped.
    """
    paid_units = np.flatnonzero((state.paid > 0).any(axis=0))
    trials = sorted((objective_of(state, without_unit(state, u)) - J, int(u))
                    for u in paid_units)
    dropped = 0
    for delta, u in trials:
        if delta >= -tol:
            break
        cand = without_unit(state, u)
        J_new = objective_of(state, cand) if dropped else J + delta
        if J_new < J - tol:
            state.set_mask(cand)
            J, dropped = J_new, dropped + 1
    return J, dropped


def greedy_repair(state, mask, budget, *, deadline=None):
    """Drop units until the average cost is at most ``budget`` (hard constraint).

    Each step removes, from every tree, the unit with the smallest loss
    increase per unit of average cost saved (GreedyPrune's rule applied to
    the ensemble loss), re-evaluated exactly.  Returns the feasible split mask.
    """
    import time

    state = copy.copy(state)
    state.set_mask(mask)
    b = state.breakdown()
    while not fits_budget(b["average_cost"], budget) and not (deadline and time.perf_counter() > deadline):
        best = None
        for u in np.flatnonzero((state.paid > 0).any(axis=0)):
            cand = without_unit(state, u)
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
    if not fits_budget(b["average_cost"], budget):  # out of time: fall back to cutting every tree to its root
        state.set_mask(np.zeros_like(mask))
    return state.mask.copy()
