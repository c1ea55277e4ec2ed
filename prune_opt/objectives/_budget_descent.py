"""Block descent on the hard budget: minimise the loss subject to average cost <= B.

With the other trees fixed, tree t's loss and added cost are both sums of
node terms (``L_h`` over its pruned leaves, ``k_h`` over its splits; see
:meth:`EnsembleState.block_terms`), so its block problem is a tree knapsack:
``min sum L  s.t.  sum k <= slack``.  It is solved approximately by the
Lagrangian of that one constraint by the tree move shared with the paper
search (:func:`prune_opt.solvers._tree_dp.best_tree_within`).  A tree is
replaced only when that lowers the loss and the forest stays within budget,
so the loss never increases and every iterate fits.
"""

from __future__ import annotations

import copy

import numpy as np

from .._validation import fits_budget
from ..solvers._tree_dp import best_tree_within
from ._block import pruning_value

__all__ = ["budget_descent"]

def budget_descent(state, mask, budget, *, max_iter=20, deadline=None):
    """Loss-decreasing block descent that keeps the average cost within ``budget``.

    ``mask`` must fit the budget.  Returns ``(mask, losses)`` with the loss
    after each sweep (non-increasing, the start first).
    """
    import time

    st = copy.copy(state)
    st.lam, st.depth_cost = 1.0, 0.0  # block_terms' k is then the bare cost
    st.set_mask(mask)
    b = st.breakdown()
    cost, losses = b["average_cost"], [b["loss"]]
    if not fits_budget(cost, budget):
        raise ValueError("budget_descent needs a start within the budget")
    for _ in range(max_iter):
        changed = 0
        for t in range(st.forest.n_trees):
            L, k = st.block_terms(t)
            sl, layout = st.forest.tree_slice(t), st.layouts[t]
            cur = st.mask[sl]
            zero = np.zeros_like(L)
            cur_loss, cur_cost = pruning_value(layout, cur, L, zero), pruning_value(
                layout, cur, zero, k)
            found = best_tree_within(layout, L, zero, k, budget - (cost - cur_cost))
            if found is not None and found[0] < cur_loss - 1e-12 * max(1.0, losses[-1]):
                st.replace_tree(t, found[1])
                cost += pruning_value(layout, found[1], zero, k) - cur_cost
                changed += 1
        st.refresh_total()
        b = st.breakdown()
        if b["loss"] > losses[-1] + 1e-9 * max(1.0, losses[-1]) or \
                not fits_budget(b["average_cost"], budget):
            raise RuntimeError("budget descent broke monotonicity or the budget "
                               "(please report this)")
        cost = b["average_cost"]
        losses.append(b["loss"])
        if changed == 0 or (deadline is not None and time.perf_counter() > deadline):
            break
    return st.mask.copy(), losses
