"""A running pruning of a boosted model kept as per-row raw scores.

A booster's prediction is ``link(F)`` with ``F = init + sum_t f_t``.  The
state keeps ``F`` of every evaluation row and each row's loss, so

* a change of one tree is applied as a difference: only the rows whose pruned
  leaf in that tree moves are touched, and the loss and cost change of the
  move are exact and cost O(rows of the move);
* the block move of tree ``t`` is proposed on the loss's second-order
  expansion around the running model: with ``g_i``, ``h_i`` the derivatives
  of row i's loss in the tree's raw-score column and ``a_i`` the value the
  tree gives the row now, the rows stopping at node h with value ``v_h``
  change the loss by about

      v_h G_h - B_h + (v_h^2 S_h - 2 v_h A_h + Q_h) / 2

  (``G = sum w g``, ``S = sum w h``, ``A = sum w h a``, ``B = sum w g a``,
  ``Q = sum w h a^2`` over the rows reaching h).  These are sums of per-leaf
  moments up the tree, so a tree's node terms cost O(rows) instead of
  O(rows x depth) (:class:`~prune_opt.objectives._state.EnsembleState` computes
  the exact loss at every node of every path);
* every proposed move is then checked on the exact objective (loss and cost)
  and taken only when that decreases, so the descent stays monotone in the
  model's own loss.  When a tree's proposal is refused, its exact node terms
  (from its paths) are computed and the exact move is tried.

The objective must offer its raw-score derivatives
(:meth:`~prune_opt.objectives.Objective.raw_derivatives`: the log-loss and the
squared error of a booster do); :func:`ensemble_state` builds this state then
and the exact one otherwise.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..forest._router import tree_paths
from ..routing._routed import tree_stop_map
from ..solvers._tree_dp import best_tree_within, pruning_value
from ._descent import IMPROVE_RTOL, CostLedger
from ._state import EnsembleState

__all__ = ["RawScoreState", "ensemble_state", "SWEEP_RTOL"]

#: a sweep of block moves that lowers the objective by at most this share counts as a
#: fixed point (far below the sampling noise of any loss measured on rows)
SWEEP_RTOL = 1e-5


def ensemble_state(forest, X, y, weight, costs, objective, *, lam, depth_cost=0.0,
                   routed=None):
    """The running-pruning state of ``objective`` on ``forest``: raw scores with
    second-order proposals (:class:`RawScoreState`) when the objective offers
    raw-score derivatives for this forest, else exact path terms
    (:class:`~prune_opt.objectives._state.EnsembleState`)."""
    cls = RawScoreState if len(y) and objective.has_raw_derivatives(forest) else EnsembleState
    return cls(forest, X, y, weight, costs, objective, lam=lam, depth_cost=depth_cost,
               routed=routed)


def _subtree_leaf_matrix(forest, t):
    """CSR (tree t's nodes x its nodes): ``M[h, l] = 1`` when leaf l lies below (or is) h,
    so ``M @ per-leaf sums`` gives every node's sum over the rows reaching it."""
    indptr, indices = tree_paths(forest, t)
    sl = forest.tree_slice(t)
    n = sl.stop - sl.start
    leaves = np.flatnonzero(forest.left[sl] < 0)
    lens = indptr[leaves + 1] - indptr[leaves]
    idx = np.repeat(indptr[leaves] - np.concatenate([[0], np.cumsum(lens)[:-1]]),
                    lens) + np.arange(lens.sum())
    rows = indices[idx]
    cols = np.repeat(leaves, lens)
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))


class RawScoreState(EnsembleState):
    """:class:`~prune_opt.objectives._state.EnsembleState` of a booster's own loss kept as
    per-row raw scores, with second-order block proposals checked exactly (see the
    module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> import prune_opt as po
    >>> from prune_opt.objectives import get_objective
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> f = po.as_forest(GradientBoostingClassifier(n_estimators=5, max_depth=2).fit(X, y))
    >>> s = RawScoreState(f, f.check_X(X), y, np.ones(len(y)), po.FeatureCosts.uniform(30),
    ...                   get_objective("logloss"), lam=0.0)
    >>> s.set_mask(f.full_split_mask())
    >>> raw = po.PrunedForest(f, f.full_split_mask()).decision_function(X)
    >>> bool(np.allclose(s.raw[:, 0], raw))
    True
    """

    def __init__(self, forest, X, y, weight, costs, objective, *, lam, depth_cost=0.0,
                 routed=None):
        super().__init__(forest, X, y, weight, costs, objective, lam=lam,
                         depth_cost=depth_cost, routed=routed)
        tc = forest.ensemble.tree_class
        self.column = np.zeros(forest.n_trees, dtype=np.int64) if tc is None else tc
        # the raw score each node adds in its tree's column
        self.node_score = forest.value[np.arange(forest.n_nodes),
                                       self.column[forest.tree_of_node]]
        self._subtree = {}  # tree -> subtree-leaf matrix (shared by copies)
        self.sweep_rtol = SWEEP_RTOL
        self.n_refused = [0]  # second-order proposals the exact check refused
        self._derivatives = (-1, None, None)

    # ------------------------------------------------------------ a pruning
    def refresh(self):
        """Recompute the per-row sums and every row's loss from the leaves (no drift)."""
        super().refresh()
        self.row_loss = self._loss(self.total, slice(None))

    def _loss(self, total, rows):
        """Per-row loss of the rows ``rows`` whose trees sum to ``total``."""
        return self.objective.loss(self.forest.output(total), self.y[rows])

    @property
    def raw(self):
        """(n, value_width) raw scores of the running pruning (initial score included)."""
        return self.total + self.forest.ensemble.init_score

    def set_tree(self, t, tree_mask):
        """Install a new pruning of tree t: only the rows whose leaf moves are touched."""
        f = self.forest
        CostLedger.set_tree(self, t, tree_mask)
        new_leaf = self.routed.leaves(self.mask, t)
        moved = np.flatnonzero(new_leaf != self.leaf[t])
        if moved.size:
            self.total[moved] += f.value[new_leaf[moved]] - f.value[self.leaf[t][moved]]
            self.row_loss[moved] = self._loss(self.total[moved], moved)
        self.leaf[t][...] = new_leaf  # a row of leaf_matrix

    # ------------------------------------------------------------ evaluation
    def breakdown(self):
        """Objective of the running pruning from the kept row losses."""
        return self._assemble(self.row_loss, self.cost(), self.mask)

    def _assemble(self, row_loss, cost, mask):
        loss = float(self.weight @ row_loss)
        depth = float(self.node_weight[mask].sum())
        return {"objective": loss + self.lam * (cost + self.depth_cost * depth),
                "loss": loss, "average_cost": cost, "average_depth": depth}

    def breakdown_if(self, new_mask):
        """:meth:`breakdown` of ``new_mask`` without installing it: the sums of the rows
        whose leaf moves in a changed tree, updated by differences."""
        f = self.forest
        trees = self.changed_trees(new_mask)
        if 2 * trees.size > f.n_trees:  # e.g. a unit move: every tree at once
            new = self.routed.all_leaves(new_mask)
            # each tree adds to one raw-score column: its nodes' values as scalars
            delta = self.node_score[new] - self.node_score[self.leaf_matrix]
            total = self.total.copy()
            if total.shape[1] == 1:
                total[:, 0] += delta.sum(axis=0)
            else:
                for k in range(total.shape[1]):
                    total[:, k] += delta[self.column == k].sum(axis=0)
            rows = np.flatnonzero(delta.any(axis=0))
        else:
            total = self.total.copy()
            touched = np.zeros(self.y.size, dtype=bool)
            for t in trees:
                new = self.routed.leaves(new_mask, t)
                moved = new != self.leaf[t]
                total[moved] += f.value[new[moved]] - f.value[self.leaf[t][moved]]
                touched |= moved
            rows = np.flatnonzero(touched)
        row_loss = self.row_loss.copy()
        if rows.size:
            row_loss[rows] = self._loss(total[rows], rows)
        return self._assemble(row_loss, self.cost_if(new_mask, trees), new_mask)

    # ------------------------------------------------------------ block data
    def local_terms(self, t):
        """Second-order node leaf-losses of tree t around the running model, and the
        depth split-terms (see the module docstring)."""
        f = self.forest
        sl = f.tree_slice(t)
        n_local = sl.stop - sl.start
        k = self.column[t]
        K = f.round_size
        if t % K == 0 or self._derivatives[0] != t // K or self._derivatives[2] is not self.mask:
            # once per round: its K trees (one per class) were grown on the same
            # gradients, and their proposals share them (every move is checked exactly)
            self._derivatives = (t // K, self.objective.raw_derivatives(self.raw, self.y, f),
                                 self.mask)
        g, h = self._derivatives[1]
        wg, wh = self.weight * g[:, k], self.weight * h[:, k]
        leaf = self.routed.leaf[t] - sl.start  # each row's original leaf
        a_leaf = f.value[tree_stop_map(f, self.mask, t), k]  # the value a leaf's rows get now
        G = np.bincount(leaf, weights=wg, minlength=n_local)
        S = np.bincount(leaf, weights=wh, minlength=n_local)
        R = np.bincount(leaf, weights=self.weight * self.row_loss, minlength=n_local)
        M = self._subtree.get(t)
        if M is None:
            M = self._subtree[t] = _subtree_leaf_matrix(f, t)
        G, S, A, B, Q, R = (M @ np.column_stack(
            [G, S, a_leaf * S, a_leaf * G, a_leaf * a_leaf * S, R])).T
        v = f.value[sl, k]
        L = R + v * G - B + 0.5 * (v * v * S - 2.0 * v * A + Q)
        return L, self.lam * self.depth_cost * self.node_weight[sl]

    def accept(self, t, tree_mask, room):
        """Install the proposed pruning ``tree_mask`` of tree t when it lowers the exact
        objective; else try tree t's exact block move (its node terms from its paths,
        within ``room`` of cost).  Returns whether tree t changed."""
        if self._install_if_better(t, tree_mask):
            return True
        self.n_refused[0] += 1
        L, k = EnsembleState.local_terms(self, t)
        alone = self.alone(t)
        k = k + self.lam * alone
        cur = self.mask[self.forest.tree_slice(t)]
        current = pruning_value(self.layouts[t], cur, L, k)
        found = best_tree_within(self.layouts[t], L, k, alone, room)
        if found is not None and found[0] < current - IMPROVE_RTOL * max(1.0, abs(current)):
            return self._install_if_better(t, found[1])
        return False

    def _install_if_better(self, t, tree_mask):
        """Install ``tree_mask`` on tree t when the exact objective drops; otherwise
        leave the state as it was."""
        old = self.mask[self.forest.tree_slice(t)].copy()
        if np.array_equal(old, tree_mask):
            return False
        before = self._objective()
        self.set_tree(t, tree_mask)
        if self._objective() < before - IMPROVE_RTOL * max(1.0, abs(before)):
            return True
        self.set_tree(t, old)
        return False

    def _objective(self):
        """:meth:`breakdown`'s objective alone (the depth term only when it counts)."""
        depth = (float(self.node_weight[self.mask].sum()) if self.depth_cost else 0.0)
        return float(self.weight @ self.row_loss) + self.lam * (
            self.cost() + self.depth_cost * depth)
