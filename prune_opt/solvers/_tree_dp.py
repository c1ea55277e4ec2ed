"""Per-tree subproblem of the Lagrangian decomposition.

For a block of trees and a weight ``a_h`` on every internal node, find for
every tree the valid pruning minimising ``sum_{h stays a split} a_h`` (a split
needs its parent split; the root may be cut to a single leaf).  Two
implementations:

* :func:`tree_dp` - bottom-up dynamic program
  ``best(h) = min(0, a_h + best(left) + best(right))``, vectorised over all
  nodes of a depth level (Python loops over levels only);
* :func:`tree_networkx` - the reference: a shortest path on the network of the
  BudgetPrune paper.  Order a tree's leaves left to right; node h covers a
  contiguous run ``[lo_h, lo_h + n_leaves_h)`` of them, and a pruning is a
  partition of the leaf sequence into such runs, i.e. a path from vertex 0 to
  vertex ``n_leaves`` using arcs ``lo_h -> lo_h + n_leaves_h``.  With
  ``S_h`` the sum of ``a`` over the internal nodes of h's subtree, the
  pruning's value is ``S_root - sum_{pruned leaves h} S_h``, so arc h weighs
  ``-S_h`` (negative weights, acyclic graph: Bellman-Ford).

Both return the per-tree optimum values and a split mask; the values agree
(up to rounding), the masks may differ only between tied optima.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TreeLayout", "tree_dp", "best_tree_pruning", "pruning_value", "best_tree_within",
           "tree_networkx", "solve_block"]

# bisection steps on the price of best_tree_within (after the bracket is found)
PRICE_STEPS = 30


class TreeLayout:
    """Static structure of a contiguous block of trees (light, picklable).

    Parameters
    ----------
    forest : Forest
    trees : range or slice of tree indices, optional
        Contiguous trees of the block (all trees when omitted).

    Attributes
    ----------
    start, stop : int
        Global node id range of the block.
    left, right, parent : ndarray
        Local ids (relative to ``start``), -1 where absent.
    roots : ndarray
        Local root id of each tree of the block.
    levels : list of ndarray
        Local ids of the internal nodes of each depth, deepest level first.

    Examples
    --------
    >>> from prune_opt import Forest
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[2, 2], [2, 0], [0, 2]])
    >>> layout = TreeLayout(Forest([stump, stump], classes=[0, 1], n_features=1))
    >>> layout.roots
    array([0, 3])
    """

    def __init__(self, forest, trees=None):
        if trees is None:
            trees = range(forest.n_trees)
        if isinstance(trees, slice):
            trees = range(*trees.indices(forest.n_trees))
        trees = range(trees.start, trees.stop) if isinstance(trees, range) else trees
        if not isinstance(trees, range) or len(trees) == 0 or trees.step != 1:
            raise ValueError("trees must be a non-empty contiguous range of tree indices")
        self.first_tree = int(trees.start)
        self.n_trees = len(trees)
        self.start = int(forest.node_offset[trees.start])
        self.stop = int(forest.node_offset[trees.stop])
        sl = slice(self.start, self.stop)
        off = self.start

        def local(ids):
            return np.where(ids >= 0, ids - off, -1)

        self.left = local(forest.left[sl])
        self.right = local(forest.right[sl])
        self.parent = local(forest.parent[sl])
        self.roots = forest.node_offset[trees.start:trees.stop] - off
        self.tree_of_node = forest.tree_of_node[sl] - trees.start
        depth = forest.depth[sl]
        internal = np.flatnonzero(self.left >= 0)
        order = internal[np.argsort(depth[internal], kind="stable")]
        bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
        # per level with internal nodes, deepest first: the nodes with their children's
        # ids; and (for close, shallowest first) the nodes that have a parent with the
        # parents' ids
        self.levels, self.level_children, self.level_parents = [], [], []
        for d in range(bounds.size - 2, -1, -1):
            lv = order[bounds[d]:bounds[d + 1]]
            if lv.size:
                self.levels.append(lv)
                self.level_children.append((lv, self.left[lv], self.right[lv]))
                up = self.parent[lv] >= 0
                self.level_parents.insert(0, (lv[up], self.parent[lv][up]))

    @property
    def n_nodes(self):
        return self.stop - self.start

    @property
    def subtrees(self):
        """``(order, rank, size)``: the nodes in preorder, each node's place in it and its
        subtree's size, so node h's subtree is ``order[rank[h]:rank[h] + size[h]]``
        (whatever the ids' own order); computed once."""
        if getattr(self, "_subtrees", None) is None:
            size = np.ones(self.n_nodes, dtype=np.int64)
            for nodes, left, right in self.level_children:  # deepest first
                size[nodes] = 1 + size[left] + size[right]
            order, stack = [], [int(r) for r in self.roots[::-1]]
            left, right = self.left.tolist(), self.right.tolist()
            while stack:
                h = stack.pop()
                order.append(h)
                if left[h] >= 0:
                    stack.append(right[h])
                    stack.append(left[h])
            order = np.asarray(order, dtype=np.int64)
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            self._subtrees = (order, rank, size)
        return self._subtrees

    def close(self, choose):
        """Keep a chosen split only if its parent is kept too (top-down, per level)."""
        mask = np.asarray(choose, dtype=bool).copy()
        for nodes, parent in self.level_parents:  # shallowest first
            mask[nodes] &= mask[parent]
        return mask


def tree_dp(layout, weight):
    """Best pruning of every tree of a block by the bottom-up dynamic program.

    Parameters
    ----------
    layout : TreeLayout
    weight : ndarray (layout.n_nodes,)
        ``a_h``: cost of node h staying a split (ignored on leaves).

    Returns
    -------
    values : ndarray (layout.n_trees,)
        ``min sum_{h split} a_h`` of each tree (<= 0: cutting to the root is free).
    mask : ndarray of bool (layout.n_nodes,)
        An optimal split mask (a node splits only when that strictly helps).

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[2, 2], [2, 0], [0, 2]])
    >>> layout = TreeLayout(Forest([stump, stump], classes=[0, 1], n_features=1))
    >>> values, mask = tree_dp(layout, np.array([-1.0, 0, 0, 2.0, 0, 0]))
    >>> values.tolist(), mask.tolist()
    ([-1.0, 0.0], [True, False, False, False, False, False])
    """
    weight = np.asarray(weight, dtype=float)
    if weight.shape != (layout.n_nodes,):
        raise ValueError(f"weight must have shape ({layout.n_nodes},), got {weight.shape}")
    best = np.zeros(layout.n_nodes)
    choose = np.zeros(layout.n_nodes, dtype=bool)
    left, right = layout.left, layout.right
    for nodes in layout.levels:  # deepest level first
        val = weight[nodes] + best[left[nodes]] + best[right[nodes]]
        neg = val < 0.0
        best[nodes] = np.where(neg, val, 0.0)
        choose[nodes] = neg
    return best[layout.roots], layout.close(choose)


def best_tree_pruning(layout, leaf_loss, split_cost):
    """Minimise ``sum_{pruned leaves h} L_h + sum_{kept splits h} k_h`` over one tree.

    Bottom-up dynamic program ``best(h) = min(L_h, k_h + best(left) + best(right))``,
    vectorised over the nodes of a depth level.  Every pruning's value is a sum
    of these node terms, and the subtrees of the two children are independent,
    so ``best(root)`` is the exact minimum.

    Parameters
    ----------
    layout : TreeLayout
        Layout of a single tree (local node ids, root 0).
    leaf_loss : ndarray (n_nodes,)
        ``L_h``, the value of node h being a leaf of the pruned tree.
    split_cost : ndarray (n_nodes,)
        ``k_h``, the value of node h staying a split (ignored on leaves).

    Returns
    -------
    value : float
        The minimum.
    mask : ndarray of bool (n_nodes,)
        A minimising split mask; a node splits only when that is strictly better.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> from prune_opt.solvers._tree_dp import TreeLayout, best_tree_pruning
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[2, 2], [2, 0], [0, 2]])
    >>> layout = TreeLayout(Forest([stump], classes=[0, 1], n_features=1))
    >>> value, mask = best_tree_pruning(layout, np.array([0.5, 0.1, 0.1]), np.zeros(3))
    >>> round(value, 6), mask.tolist()
    (0.2, [True, False, False])
    """
    if layout.n_trees != 1:
        raise ValueError("best_tree_pruning optimises one tree; pass a single-tree layout")
    best = np.array(leaf_loss, dtype=float)
    keep = np.zeros(layout.n_nodes, dtype=bool)
    for nodes, left, right in layout.level_children:  # deepest first: children are final
        val = split_cost[nodes] + best[left] + best[right]
        here = best[nodes]
        keep[nodes] = val < here
        best[nodes] = np.minimum(here, val)
    return float(best[0]), layout.close(keep)


def pruning_value(layout, mask, leaf_loss, split_cost):
    """``sum_{pruned leaves} L_h + sum_{splits} k_h`` of a given split mask of one tree.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[2, 2], [2, 0], [0, 2]])
    >>> layout = TreeLayout(Forest([stump], classes=[0, 1], n_features=1))
    >>> pruning_value(layout, np.array([False] * 3), np.array([0.5, 0.1, 0.1]), np.zeros(3))
    0.5
    """
    mask = np.asarray(mask, dtype=bool)
    parent = layout.parent
    reached = np.ones(layout.n_nodes, dtype=bool)
    has = parent >= 0
    reached[has] = mask[parent[has]]
    leaf = reached & ~mask
    return float(leaf_loss[leaf].sum() + split_cost[mask].sum())


def best_tree_within(layout, leaf_loss, split_cost, node_cost, room):
    """The tree move of every budgeted descent: ``min sum L + sum k`` over one tree's
    prunings subject to ``sum_{kept splits} node_cost <= room``.

    The constrained problem is a tree knapsack; it is solved on its Lagrangian
    path.  The optimum of ``L`` and ``k + price * node_cost`` shrinks as the price
    grows (the prunings form a nested family, as in cost-complexity pruning), and
    the *weakest-link* collapses walk that family exactly: from the price-0 optimum
    (:func:`best_tree_pruning`), repeatedly cut the split whose subtree costs the
    least value per unit of ``node_cost`` saved,
    ``(L_h - value of h's subtree) / (node_cost of h's subtree)``, until the tree
    fits, then keep cutting while that lowers the value.  Every hull vertex of the
    Lagrangian is on this walk, and the first member that fits is at least as good
    as the best vertex that fits.  ``node_cost`` must be non-negative.

    Returns
    -------
    (value, mask, used) or None
        The pruning found (``value`` is its ``sum L + sum k``, ``used`` its ``sum
        node_cost``), or None when no pruning fits (``room < 0``).

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[2, 2], [2, 0], [0, 2]])
    >>> layout = TreeLayout(Forest([stump], classes=[0, 1], n_features=1))
    >>> L, k, c = np.array([0.5, 0.1, 0.1]), np.zeros(3), np.array([1.0, 0, 0])
    >>> best_tree_within(layout, L, k, c, 1.0)[0], best_tree_within(layout, L, k, c, 0.5)[0]
    (0.2, 0.5)
    """
    value, mask = best_tree_pruning(layout, leaf_loss, split_cost)
    used = float(node_cost[mask].sum())
    if used <= room:
        return value, mask, used
    if room < 0:  # even the root, with no split, uses 0
        return None
    L = np.asarray(leaf_loss, dtype=float)
    # value and node_cost of every node's subtree under the pruning, bottom-up
    sub_value, sub_cost = L.copy(), np.zeros(layout.n_nodes)
    for nodes, left, right in layout.level_children:  # deepest level first
        kept = mask[nodes]
        h, lc, rc = nodes[kept], left[kept], right[kept]
        sub_value[h] = split_cost[h] + sub_value[lc] + sub_value[rc]
        sub_cost[h] = node_cost[h] + sub_cost[lc] + sub_cost[rc]
    splits = mask.copy()
    order, rank, size = layout.subtrees
    parent = layout.parent
    tiny = 1e-300
    while True:
        cand = np.flatnonzero(splits)
        if cand.size == 0:
            break
        saved = sub_cost[cand]
        gain = L[cand] - sub_value[cand]  # the value a cut adds
        price = np.where(saved > tiny, gain / np.maximum(saved, tiny),
                         np.where(gain < 0, -np.inf, np.inf))
        i = int(np.argmin(price))
        if used <= room and price[i] >= 0:  # fits, and no cut lowers the value
            break
        if not np.isfinite(price[i]) and price[i] > 0:  # nothing left to save
            break
        h = int(cand[i])
        d_value, d_cost = float(gain[i]), float(saved[i])
        splits[order[rank[h]:rank[h] + size[h]]] = False  # h and its subtree
        value += d_value
        used -= d_cost
        sub_value[h], sub_cost[h] = L[h], 0.0
        a = parent[h]
        while a >= 0:
            sub_value[a] += d_value
            sub_cost[a] -= d_cost
            a = parent[a]
    if used > room * (1.0 + 1e-12) + 1e-300:
        return None
    return float(value), splits, float(node_cost[splits].sum())


def _leaf_intervals(layout):
    """First leaf rank ``lo`` and leaf count of every node (left-to-right order)."""
    n = layout.n_nodes
    n_leaves = np.ones(n, dtype=np.int64)
    internal = layout.left >= 0
    n_leaves[internal] = 0
    for nodes in layout.levels:  # deepest first
        n_leaves[nodes] = n_leaves[layout.left[nodes]] + n_leaves[layout.right[nodes]]
    lo = np.zeros(n, dtype=np.int64)
    for nodes in layout.levels[::-1]:  # shallowest first
        lo[layout.left[nodes]] = lo[nodes]
        lo[layout.right[nodes]] = lo[nodes] + n_leaves[layout.left[nodes]]
    return lo, n_leaves


def _subtree_sums(layout, weight):
    """``S_h``: sum of ``weight`` over the internal nodes of h's subtree."""
    s = np.where(layout.left >= 0, weight, 0.0)
    for nodes in layout.levels:  # deepest first: children are final
        s[nodes] += s[layout.left[nodes]] + s[layout.right[nodes]]
    return s


def tree_networkx(layout, weight):
    """Reference subproblem: networkx shortest paths on the paper's network.

    Same contract as :func:`tree_dp`; one directed acyclic graph per tree with
    vertices the leaf boundaries ``0..n_leaves`` and one arc per node.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[2, 2], [2, 0], [0, 2]])
    >>> layout = TreeLayout(Forest([stump], classes=[0, 1], n_features=1))
    >>> values, mask = tree_networkx(layout, np.array([-1.0, 0, 0]))
    >>> values.tolist(), mask.tolist()
    ([-1.0], [True, False, False])
    """
    import networkx as nx

    weight = np.asarray(weight, dtype=float)
    if weight.shape != (layout.n_nodes,):
        raise ValueError(f"weight must have shape ({layout.n_nodes},), got {weight.shape}")
    lo, n_leaves = _leaf_intervals(layout)
    hi = lo + n_leaves
    s = _subtree_sums(layout, weight)
    values = np.zeros(layout.n_trees)
    pruned_leaf = np.zeros(layout.n_nodes, dtype=bool)
    bounds = np.append(layout.roots, layout.n_nodes)
    for k in range(layout.n_trees):  # one graph per tree
        nodes = np.arange(bounds[k], bounds[k + 1])
        graph = nx.DiGraph()
        graph.add_weighted_edges_from(zip(lo[nodes].tolist(), hi[nodes].tolist(),
                                          (-s[nodes]).tolist()))
        arc_node = dict(zip(zip(lo[nodes].tolist(), hi[nodes].tolist()), nodes.tolist()))
        root = bounds[k]
        length, path = nx.single_source_bellman_ford(graph, 0, target=int(n_leaves[root]),
                                                     weight="weight")
        values[k] = s[root] + length
        for u, v in zip(path[:-1], path[1:]):
            pruned_leaf[arc_node[(u, v)]] = True
    # a node splits iff no pruned leaf sits on its root path (inclusive)
    covered = pruned_leaf.copy()
    for nodes in layout.levels[::-1]:  # shallowest first
        covered[layout.left[nodes]] |= covered[nodes]
        covered[layout.right[nodes]] |= covered[nodes]
    return values, (layout.left >= 0) & ~covered


SUBPROBLEMS = {"dp": tree_dp, "networkx": tree_networkx}


def solve_block(layout, weight, method="dp"):
    """Solve the subproblem of one block (the unit of work handed to joblib)."""
    return SUBPROBLEMS[method](layout, weight)
