"""One-tree-at-a-time descent under a cost budget, shared by every budgeted search.

The acquisition cost is the one part of a pruning's value that is not a sum of
per-tree terms: a row pays a unit once, whatever the number of trees asking
for it.  :class:`CostLedger` keeps, for every *key* (a (row, unit) pair), how
many first-use records of split nodes pay it, so replacing one tree's mask
costs time linear in that tree's records, and the *marginal* ("alone") cost
of every node of a tree given the other trees (the keys nobody else pays) is
one masked sum.

Inside one tree each key has at most one first-use record (a row follows a
single path), so with the other trees fixed the tree's problem is
node-separable: ``sum_{leaves} L_h + sum_{splits} (k_h + lam * alone_h)``.
A subclass of the ledger supplies the node terms ``L`` and ``k`` of its
objective (:class:`ProblemState`: the paper's, from the compiled problem;
:class:`prune_opt.objectives.EnsembleState`: an ensemble loss on routed rows),
and :func:`descend` re-optimises one tree at a time with the exact tree move
:func:`~prune_opt.solvers._tree_dp.best_tree_within` (its price bisected to
fit the budget the other trees leave), moving only when strictly better, so
the value never increases and every iterate fits.

The ensemble optimiser's moves: tree blocks, budgeted tree blocks, unit moves.

* :func:`block_descent` -- exact block coordinate descent over trees at a
  fixed ``lam`` (the shared :func:`~prune_opt.objectives._descent.descend`
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

import math
import weakref

import numpy as np
import scipy.sparse as sp

from .._clock import UNLIMITED
from .._validation import fits_budget
from ..program._problem import close_under_parents
from ..solvers._tree_dp import TreeLayout, best_tree_within, pruning_value

__all__ = ["CostLedger", "ProblemState", "descend", "unit_nodes", "without_unit", "block_descent", "unit_round", "run_starts", "check_max_iter"]


# a sweep may not raise the value by more than this (relative): float round-off only
MONOTONE_RTOL = 1e-9


# a tree move is taken only when it lowers the value by more than this (relative)
IMPROVE_RTOL = 1e-12


_LAYOUTS = weakref.WeakKeyDictionary()


def tree_layouts(forest):
    """One single-tree :class:`TreeLayout` per tree (built once per forest)."""
    out = _LAYOUTS.get(forest)
    if out is None:
        out = _LAYOUTS[forest] = [TreeLayout(forest, range(t, t + 1))
                                  for t in range(forest.n_trees)]
    return out


def records_by_tree(forest, rec_node, rec_key):
    """``(rec_node, rec_key, rec_start)``: the records sorted by tree (stable) and the
    offsets of each tree's records."""
    tree = forest.tree_of_node[rec_node]
    order = np.argsort(tree, kind="stable")
    return (rec_node[order], rec_key[order],
            np.searchsorted(tree[order], np.arange(forest.n_trees + 1)))


class CostLedger:
    """A running split mask with per-key payment counts over first-use records;
    the base of every state a tree descent runs on.

    A subclass supplies its objective's node terms: :meth:`local_terms` (tree
    t's leaf values ``L`` and split values ``k`` without the cost term) and
    :meth:`value` (the objective of the running pruning, ``lam`` times
    :meth:`cost` included), and sets ``forest``, ``layouts`` (one single-tree
    ``TreeLayout`` per tree) and ``lam``.

    Parameters
    ----------
    forest : Forest
    rec_node, rec_key : ndarray of int
        One entry per first-use record: the node whose split pays, the key paid.
    key_cost : ndarray (n_keys,)
        Cost (natural units, averaged over rows) of each key.
    mask : ndarray of bool
        The initial split mask.
    """

    def __init__(self, forest, rec_node, rec_key, key_cost, mask, by_tree=None):
        self.forest = forest
        if by_tree is None:
            by_tree = records_by_tree(forest, rec_node, rec_key)
        self.rec_node, self.rec_key, self.rec_start = by_tree
        self.key_cost = key_cost
        self.rec_cost = key_cost[self.rec_key]
        self.layouts = tree_layouts(forest)
        CostLedger.set_mask(self, mask)

    def set_mask(self, mask):
        """Replace the whole pruning (a closed split mask; copied)."""
        self.mask = np.array(mask, dtype=bool)
        self.count = np.bincount(self.rec_key[self.mask[self.rec_node]],
                                 minlength=self.key_cost.size).astype(np.int32)
        # the running cost, kept up to date by set_tree (an array: shared by copies
        # until either sets a new mask, like the counts)
        self._cost = np.array([self.cost(self.count)])

    def _records(self, t):
        rs = slice(self.rec_start[t], self.rec_start[t + 1])
        return rs, self.rec_node[rs], self.rec_key[rs]

    def set_tree(self, t, tree_mask):
        """Replace tree t's split mask (values on tree t's node slice); the running cost
        changes by the keys whose payment starts or stops (a tree holds at most one
        record per key, so the update is linear in its records)."""
        _, nodes, keys = self._records(t)
        paid = self.count[keys] > 0
        self.count[keys] -= self.mask[nodes]
        self.mask[self.forest.tree_slice(t)] = tree_mask
        self.count[keys] += self.mask[nodes]
        flip = paid != (self.count[keys] > 0)
        if flip.any():
            self._cost[0] += float(self.key_cost[keys[flip]] @ np.where(paid[flip], -1.0, 1.0))

    def cost(self, count=None):
        """Average acquisition cost of the running pruning (or of ``count``)."""
        if count is None:
            return float(self._cost[0])
        return float(self.key_cost[count > 0].sum())

    def changed_trees(self, new_mask):
        """Sorted ids of the trees whose split mask differs in ``new_mask``."""
        return np.unique(self.forest.tree_of_node[new_mask != self.mask])

    def count_if(self, new_mask, trees=None):
        """The counts ``new_mask`` would have (the running pruning is kept);
        ``trees``: :meth:`changed_trees`, when known."""
        count = self.count.copy()
        for t in self.changed_trees(new_mask) if trees is None else trees:
            _, nodes, keys = self._records(t)
            old, new = self.mask[nodes], new_mask[nodes]
            count[keys[old & ~new]] -= 1
            count[keys[new & ~old]] += 1
        return count

    def alone(self, t):
        """Cost each node of tree t adds as a split, the other trees fixed."""
        rs, nodes, keys = self._records(t)
        sl = self.forest.tree_slice(t)
        unpaid = (self.count[keys] - self.mask[nodes]) == 0
        return np.bincount(nodes - sl.start, weights=self.rec_cost[rs] * unpaid,
                           minlength=sl.stop - sl.start)

    def accept(self, t, tree_mask, room):
        """Take tree t's block move to ``tree_mask`` (its cost within ``room``); a state
        whose node terms are exact takes it, one whose terms are a model checks it
        first.  Returns whether tree t changed."""
        self.set_tree(t, tree_mask)
        return True

    def refresh(self):
        """Recompute any running sum that may drift (after a sweep)."""
        self._cost[0] = self.cost(self.count)

    def block_terms(self, t):
        """Exact node terms of tree t's block, the others fixed: ``L`` and
        ``k + lam * alone`` (a pruning of t is worth ``sum_leaves L + sum_splits k``
        plus a constant)."""
        L, k = self.local_terms(t)
        return L, k + self.lam * self.alone(t)


class ProblemState(CostLedger):
    """The paper's objective ``J = E + lam (C + depth_cost D)`` of a compiled problem.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> p = po.compile_problem(rf, X, y, costs=[1, 1, 5, 5], lam=0.01)
    >>> s = ProblemState(p, p.forest.full_split_mask())
    >>> bool(abs(s.value() - p.evaluate(s.mask).objective) < 1e-12)
    True
    """

    def __init__(self, problem, mask):
        self.problem = p = problem
        self.lam = p.lam
        self.leaf_error = p.leaf_error_coef()
        self.split_local = p.lam * p.depth_cost * p.node_cost_weight / p.total_weight
        shared = p._records  # shared by the problem's variants (with_lam, ...)
        if "by_tree" not in shared:
            src = p.leaf_records
            shared["by_tree"] = (records_by_tree(p.forest, p.use_node, p.use_pair)
                                 if src is None else src.by_tree(p.pair_row, p.pair_unit))
        super().__init__(p.forest, None, None, p.pair_cost(), mask, by_tree=shared["by_tree"])

    def local_terms(self, t):
        sl = self.forest.tree_slice(t)
        return self.leaf_error[sl], self.split_local[sl]

    def local_value(self, t, mask=None):
        """Tree t's separable part of J: its error share plus its depth term."""
        sl = self.forest.tree_slice(t)
        m = (self.mask if mask is None else mask)[sl]
        return pruning_value(self.layouts[t], m, *self.local_terms(t))

    def value(self):
        """J of the running pruning (equals ``problem.evaluate(mask).objective``)."""
        local = 0.0
        for t in range(self.forest.n_trees):
            local += self.local_value(t)
        return local + self.lam * self.cost()


def _sweep(state, budget, tol, deadline):
    """One pass over the trees; each moved to its best fitting block pruning if
    strictly better.  Returns the number of trees changed."""
    changed = 0
    for t in range(state.forest.n_trees):
        if deadline.expired():
            break
        L, k = state.local_terms(t)
        alone = state.alone(t)
        k = k + state.lam * alone
        layout, cur = state.layouts[t], state.mask[state.forest.tree_slice(t)]
        current = pruning_value(layout, cur, L, k)
        room = math.inf
        if math.isfinite(budget):
            room = budget - (state.cost() - float(alone[cur].sum()))
        found = best_tree_within(layout, L, k, alone, room)
        if found is not None and found[0] < current - tol and state.accept(t, found[1], room):
            changed += 1
    state.refresh()
    return changed


def descend(state, mask, budget=math.inf, *, max_sweeps=20, deadline=UNLIMITED, escape=None,
            verbose=False):
    """Re-optimise one tree at a time, the others fixed, within ``budget``.

    Tree t's move minimises ``value`` over t's prunings whose cost fits the
    budget the other trees leave (exact at its Lagrangian price); it is taken
    only when strictly better, so the value never increases and every iterate
    fits.  When a sweep changes no tree, ``escape(state, value)`` (if given)
    may change the pruning and returns how many changes it made.  Stops at a
    fixed point, after ``max_sweeps`` sweeps or at ``deadline`` (a
    :class:`~prune_opt.Deadline`).  A state with a ``sweep_rtol`` (the raw-score
    state of a booster) also counts a sweep that lowers the value by at most
    that share as a fixed point.

    Returns
    -------
    dict with ``mask``, ``trace`` (value after each sweep, the start first),
    ``iterations``, ``converged``, ``changes`` (trees moved per sweep) and
    ``escapes`` (changes per escape).
    """
    state.set_mask(mask)
    if not fits_budget(state.cost(), budget):
        raise ValueError("a budgeted descent needs a start within the budget")
    J = state.value()
    trace, changes, escapes, converged = [J], [], [], False
    settle = getattr(state, "sweep_rtol", 0.0)
    for it in range(max_sweeps):
        before = J
        changed = _sweep(state, budget, IMPROVE_RTOL * max(1.0, abs(J)), deadline)
        J = _checked(state, J, budget)
        trace.append(J)
        changes.append(changed)
        if changed and before - J <= settle * max(1.0, abs(J)):
            changed = 0  # the state's own tolerance: the sweep gained next to nothing
        if changed == 0 and escape is not None:
            n = escape(state, J)
            escapes.append(n)
            if n:
                trace[-1] = J = _checked(state, J, budget)
                changed = -n
        if verbose:
            print(f"[prune-opt] sweep {it + 1}: value {J:.6g}, {changes[-1]} trees "
                  f"changed, {max(-changed, 0)} escapes")
        if changed == 0:
            converged = True
            break
        if deadline.expired():
            break
    return {"mask": state.mask.copy(), "trace": trace, "iterations": len(changes),
            "converged": converged, "changes": changes, "escapes": escapes}


def _checked(state, J, budget):
    J_new = state.value()
    if J_new > J + MONOTONE_RTOL * max(1.0, abs(J)) or not fits_budget(state.cost(), budget):
        raise RuntimeError(f"tree descent went from {J!r} to {J_new!r} (cost "
                           f"{state.cost()!r}, budget {budget!r}); a move was not exact "
                           "(please report this)")
    return J_new


def unit_nodes(forest, feature_units):
    """CSC ``(n_nodes, n_units)`` incidence: which units each internal node's test
    needs (a unit move cuts the nodes of one column, with their subtrees)."""
    fu = sp.csr_matrix(feature_units, dtype=bool)
    fu.eliminate_zeros()
    internal = np.flatnonzero(~forest.is_leaf)
    need = fu[forest.feature[internal]].tocoo()
    out = sp.csc_matrix((np.ones(need.nnz, dtype=bool), (internal[need.row], need.col)),
                        shape=(forest.n_nodes, fu.shape[1]))
    out.sort_indices()
    return out


def without_unit(forest, mask, users, u):
    """``mask`` with every split whose test needs unit ``u`` cut (closed under parents);
    ``users`` from :func:`unit_nodes`."""
    out = mask.copy()
    out[users.indices[users.indptr[u]:users.indptr[u + 1]]] = False
    return close_under_parents(forest, out)


def check_max_iter(max_iter, name="max_iter"):
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"{name} must be a positive integer, got {max_iter!r}")
    return max_iter


def block_descent(state, init_mask, *, max_iter=50, deadline=UNLIMITED, unit_moves=True,
                  verbose=False):
    """Run block coordinate descent from ``init_mask`` on ``state``.

    One iteration is a sweep over the trees; tree t is replaced by the exact
    optimum of its block problem (the others fixed) when that is strictly
    better.  When a sweep changes no tree and ``unit_moves`` is set, a round
    of unit removals (every tree gives up one acquisition unit, kept only if
    the objective drops) follows.  Stops at a fixed point (no tree and no
    unit changes), after ``max_iter`` iterations or at ``deadline`` (a
    :class:`~prune_opt.Deadline`).

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

