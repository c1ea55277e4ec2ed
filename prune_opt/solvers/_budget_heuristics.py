"""Primal heuristics of the budget search: every one returns closed split masks
whose average acquisition cost fits the budget (or nothing).

* :func:`tree_mixing` -- take the costlier hull vertex's masks for a subset of
  trees, chosen greedily by objective saved per cost added;
* :func:`greedy_unit_removal` -- forbid acquisition units (every node needing
  the unit becomes a leaf) by best objective increase per cost saved, and
  re-optimise exactly with a min-cut after each round;
* :func:`block_descent` -- local search with exact moves: one tree at a time
  is re-optimised by a dynamic programme given what the other trees already
  pay, at the multiplier that makes it fit the remaining budget;
* :func:`baseline_masks` -- the best fitting member of every registered
  baseline family (GreedyPrune, cost-complexity pruning, fewer trees,
  impurity thresholds, ...), as masks of the same forest.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from .._problem import close_under_parents
from .._validation import fits_budget
from ._baseline_masks import MaskEvaluator, mask_families
from ._budget_state import ProblemState, descend

__all__ = ["tree_mixing", "greedy_unit_removal", "block_descent", "baseline_masks"]


def tree_mixing(problem, cheap, costly, budget):
    """Start from ``cheap`` (fits) and copy whole trees of ``costly`` while the budget holds.

    Trees are taken in order of objective saved per cost added (each measured
    alone against ``cheap``); a tree is kept only when the result still fits
    and its objective drops.

    Returns
    -------
    ndarray of bool
        A closed split mask of cost <= ``budget``.
    """
    f = problem.forest
    state = ProblemState(problem, cheap)
    lam = problem.lam
    base_cost = state.cost()
    local = np.array([state.local_value(t) for t in range(f.n_trees)])
    gain = np.zeros(f.n_trees)
    for t in range(f.n_trees):
        sl = f.tree_slice(t)
        old = state.mask[sl].copy()
        state.set_tree(t, costly[sl])
        d_cost = state.cost() - base_cost
        d_obj = state.local_value(t) - local[t] + lam * d_cost
        state.set_tree(t, old)
        gain[t] = -d_obj / d_cost if d_cost > 0 else (np.inf if d_obj < 0 else -np.inf)
    value = local.sum() + lam * base_cost
    for t in np.argsort(-gain, kind="stable"):
        if gain[t] <= 0:
            break
        sl = f.tree_slice(t)
        old = state.mask[sl].copy()
        state.set_tree(t, costly[sl])
        new_local = state.local_value(t)
        new_value = value - local[t] + new_local + lam * (state.cost() - base_cost)
        if fits_budget(state.cost(), budget) and new_value < value:
            value, base_cost, local[t] = new_value, state.cost(), new_local
        else:
            state.set_tree(t, old)
    return state.mask.copy()


def _unit_users(problem):
    """Boolean (n_nodes, n_units) CSR: which units each internal node's test needs."""
    f = problem.forest
    fu = problem.costs.feature_units.tocsr()
    feat = np.where(f.is_leaf, 0, f.feature)
    users = fu[feat]
    users = sp.csr_matrix(users.multiply(~f.is_leaf[:, None]), dtype=bool)
    return users, users.tocsc()


def greedy_unit_removal(problem, closure, start, mu, budget, deadline):
    """Forbid units until the min-cut optimum at ``mu`` fits the budget.

    Each round ranks the units still paid by the objective increase per cost
    saved when every node needing the unit is cut (with its subtree), forbids
    the best units until their summed savings cover half the excess (at least
    one), and re-solves ``min J + mu * C`` exactly over the remaining nodes.

    Returns
    -------
    ndarray of bool or None
        A fitting mask, or None when the deadline came first.
    """
    users, by_unit = _unit_users(problem)
    forbidden = np.zeros(problem.n_nodes, dtype=bool)
    mask = start
    bd = problem.evaluate(mask)
    while not fits_budget(bd.average_cost, budget):
        if time.perf_counter() > deadline:
            return None
        ranked = []
        for u in np.unique(users[mask].indices):
            cand = close_under_parents(problem.forest, mask & ~_column(by_unit, u, problem.n_nodes))
            c = problem.evaluate(cand)
            saved = bd.average_cost - c.average_cost
            if saved > 0:
                ranked.append(((c.objective - bd.objective) / saved, saved, u))
        if not ranked:
            return None
        ranked.sort()
        excess, total = bd.average_cost - budget, 0.0
        for _, saved, u in ranked:
            forbidden |= _column(by_unit, u, problem.n_nodes)
            total += saved
            if total >= 0.5 * excess:
                break
        mask, _ = closure.solve(mu, forbidden)
        bd = problem.evaluate(mask)
    return mask


def _column(by_unit, u, n):
    col = np.zeros(n, dtype=bool)
    col[by_unit.indices[by_unit.indptr[u]:by_unit.indptr[u + 1]]] = True
    return col


def block_descent(problem, mask, budget, deadline, max_sweeps=20):
    """Local search: re-optimise one tree at a time, the others fixed, within the budget
    (:func:`~prune_opt.solvers._budget_state.descend` on the paper's objective).

    Returns
    -------
    (mask, n_moves)
    """
    run = descend(ProblemState(problem, mask), mask, budget, max_sweeps=max_sweeps,
                  deadline=deadline)
    return run["mask"], sum(run["changes"])


def baseline_masks(problem, budget, deadline, names=None):
    """The best fitting pruning of each registered baseline: ``{name: mask or None}``.

    Each baseline is a nested family of prunings (see
    :data:`~prune_opt.solvers._baseline_masks.MASK_FAMILIES`); the best one
    that fits is found by bisection on cost.  GreedyPrune is skipped once the
    deadline has passed.
    """
    ev = MaskEvaluator(problem)
    return {name: ev.best_in_nested(masks, budget)
            for name, masks in mask_families(problem, deadline, names).items()}
