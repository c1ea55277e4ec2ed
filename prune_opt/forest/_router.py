"""Route rows through every tree of a forest in compiled code, exactly.

A split sends a row left when ``x <= threshold`` with ``x`` cast to the
forest's ``split_dtype`` (float32 or float64) and compared with the float64
threshold.  Sorting the distinct thresholds of each feature, ``t_0 < ... <
t_{m-1}``, turns every comparison into one of integers:

    x <= t_j   <=>   rank(x) <= j,   rank(x) = #{i : t_i < x}

(``rank`` is ``searchsorted(t, x, side="left")``).  So each feature column is
replaced once by its rank among the forest's thresholds (NaN stays NaN), the
trees' thresholds by ``j + 0.5``, and the trees are handed to scikit-learn's
compiled :class:`~sklearn.tree._tree.Tree`, whose ``apply`` compares float32
features with float64 thresholds and sends NaN to the side
``missing_go_to_left`` names.  Ranks below 2**24 are exact in float32, so the
leaves are those of the IR's own comparison for every dtype and every NaN
rule, at the speed of scikit-learn's prediction (ten times the numpy walk of
:meth:`prune_opt.Forest.decision_paths` it replaces).

:func:`route_leaves` is the one routing primitive: the leaf every row reaches
in every tree.  Paths, first-use records and node weights are all functions of
the leaves (a path is the root-to-leaf chain of ancestors, see
:func:`tree_paths`), so nothing else walks rows through trees.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["ROUTING_FIELDS", "Router", "router_of", "route_leaves", "same_routing",
           "tree_paths"]

#: every array of a forest that decides which leaf a row reaches (beside ``n_features``
#: and ``split_dtype``): the trees' shapes, split features and thresholds, and the side
#: NaN goes to.  Two forests equal in all of them route every row alike, so routed rows
#: and prunings of one apply to the other (:func:`same_routing`); the router is rebuilt
#: when any of them is replaced.
ROUTING_FIELDS = ("node_offset", "left", "right", "feature", "threshold", "missing_go_to_left")

# features per rank table beyond which a float32 rank would not be exact
_MAX_EXACT_RANK = 1 << 24
# rows ranked and routed at a time (bounds the float32 rank copy of X)
ROUTE_CHUNK = 1 << 16


class Router:
    """A forest's trees compiled for routing: per-feature threshold tables and one
    scikit-learn ``Tree`` per tree over the ranks.

    Built once per forest (:func:`router_of` keeps it on the forest, shared by
    copies that keep its splits).

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[1, 1], [1, 0], [0, 1]])
    >>> f = Forest([stump], classes=[0, 1], n_features=1)
    >>> Router(f).leaves(np.array([[0.2], [0.5], [0.9]]))
    array([[1],
           [1],
           [2]], dtype=uint16)
    """

    def __init__(self, forest):
        from sklearn.tree._tree import NODE_DTYPE, Tree

        f = forest
        self.n_trees, self.n_features = f.n_trees, f.n_features
        self.split_dtype = f.split_dtype
        self.fields = tuple(getattr(f, name) for name in ROUTING_FIELDS)
        internal = f.left >= 0
        rank_threshold = np.full(f.n_nodes, -2.0)
        self.tables = []
        for k in range(f.n_features):
            at = np.flatnonzero(internal & (f.feature == k))
            table, inverse = np.unique(f.threshold[at], return_inverse=True)
            if table.size >= _MAX_EXACT_RANK:
                raise ValueError(f"feature {k} has {table.size} distinct thresholds; routing "
                                 f"is exact below {_MAX_EXACT_RANK}")
            self.tables.append(table)
            rank_threshold[at] = inverse + 0.5
        sizes = np.diff(f.node_offset)
        self.leaf_dtype = np.uint16 if sizes.max() <= np.iinfo(np.uint16).max else np.uint32
        self.trees = []
        for t in range(f.n_trees):
            sl = f.tree_slice(t)
            off, n = sl.start, sl.stop - sl.start
            left, right = f.left[sl], f.right[sl]
            nodes = np.zeros(n, dtype=NODE_DTYPE)
            nodes["left_child"] = np.where(left >= 0, left - off, -1)
            nodes["right_child"] = np.where(right >= 0, right - off, -1)
            nodes["feature"] = np.where(left >= 0, f.feature[sl], -2)
            nodes["threshold"] = rank_threshold[sl]
            if "missing_go_to_left" in NODE_DTYPE.names:
                nodes["missing_go_to_left"] = f.missing_go_to_left[sl]
            nodes["n_node_samples"] = 1
            nodes["weighted_n_node_samples"] = 1.0
            tree = Tree(f.n_features, np.array([1], dtype=np.intp), 1)
            tree.__setstate__({"max_depth": int(f.depth[sl].max()), "node_count": n,
                               "nodes": nodes, "values": np.zeros((n, 1, 1))})
            self.trees.append(tree)
        self._paths = {}

    def ranks(self, X):
        """``X`` (checked) as float32 ranks among each feature's thresholds (NaN kept)."""
        Xs = np.asarray(X, dtype=self.split_dtype)
        R = np.empty(Xs.shape, dtype=np.float32)
        for k, table in enumerate(self.tables):
            col = Xs[:, k].astype(np.float64)
            R[:, k] = np.searchsorted(table, col, side="left")
            nan = np.isnan(col)
            if nan.any():
                R[nan, k] = np.nan
        return R

    def leaves(self, X, trees=None, chunk_size=ROUTE_CHUNK, by_tree=False):
        """(n, len(trees)) local leaf ids of the rows of checked ``X`` (default all trees),
        in the smallest unsigned dtype that holds them; ``by_tree``: (len(trees), n),
        each tree's leaves contiguous (written as the trees return them)."""
        trees = range(self.n_trees) if trees is None else trees
        shape = (len(trees), X.shape[0]) if by_tree else (X.shape[0], len(trees))
        out = np.empty(shape, dtype=self.leaf_dtype)
        for a in range(0, X.shape[0], chunk_size):
            R = self.ranks(X[a:a + chunk_size])
            for j, t in enumerate(trees):
                if by_tree:
                    out[j, a:a + R.shape[0]] = self.trees[t].apply(R)
                else:
                    out[a:a + R.shape[0], j] = self.trees[t].apply(R)
        return out


def router_of(forest):
    """The :class:`Router` of ``forest``, built on first use and kept on it (a copy of
    the forest made with ``copy.copy`` shares it: the same splits)."""
    r = getattr(forest, "_router", None)
    if r is None or r.split_dtype != forest.split_dtype or any(
            a is not getattr(forest, name) for a, name in zip(r.fields, ROUTING_FIELDS)):
        r = Router(forest)
        forest._router = r
    return r


def same_routing(a, b):
    """Whether forests ``a`` and ``b`` send every row to the same leaves: equal in
    every field the router reads (:data:`ROUTING_FIELDS`, ``n_features`` and
    ``split_dtype``), the missing-value side included.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[1, 1], [1, 0], [0, 1]])
    >>> a = Forest([stump], classes=[0, 1], n_features=1)
    >>> b = Forest([dict(stump, missing_go_to_left=[1, 1, 1])], classes=[0, 1], n_features=1)
    >>> same_routing(a, a), same_routing(a, b)
    (True, False)
    """
    return a is b or (
        a.n_features == b.n_features and a.split_dtype == b.split_dtype
        and all(np.array_equal(getattr(a, name), getattr(b, name)) for name in ROUTING_FIELDS))


def route_leaves(forest, X, trees=None, by_tree=False):
    """(n, T) local leaf ids of checked ``X`` in every tree (or in ``trees``); with
    ``by_tree``, (T, n): one contiguous row per tree, for the passes that read the
    leaves tree by tree (no transposed copy).

    scikit-learn sources route through their own trees (as their ``apply``
    does); every other forest through its :class:`Router`.  Both give the leaves
    of the IR's rule (``x`` cast to ``split_dtype``, ``x <= threshold`` goes
    left, NaN by ``missing_go_to_left``).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> gb = GradientBoostingClassifier(n_estimators=2, max_depth=2).fit(X, y)
    >>> f = po.as_forest(gb)
    >>> leaves = route_leaves(f, f.check_X(X))
    >>> leaves.shape, bool((leaves[:, 0] == gb.estimators_[0, 0].apply(X)).all())
    ((150, 6), True)
    """
    trees = range(forest.n_trees) if trees is None else trees
    if forest.sklearn_trees is None:
        return router_of(forest).leaves(X, trees, by_tree=by_tree)
    sizes = np.diff(forest.node_offset)
    dtype = np.uint16 if sizes.max() <= np.iinfo(np.uint16).max else np.uint32
    X32 = np.asarray(X, dtype=np.float32)
    if by_tree:
        out = np.empty((len(trees), X.shape[0]), dtype=dtype)
        for j, t in enumerate(trees):
            out[j] = forest.sklearn_trees[t].tree_.apply(X32)
        return out
    out = np.empty((X.shape[0], len(trees)), dtype=dtype)
    for j, t in enumerate(trees):
        out[:, j] = forest.sklearn_trees[t].tree_.apply(X32)
    return out


def tree_paths(forest, t):
    """Root-to-node paths of every node of tree ``t``: CSR ``(indptr, local ids)`` with
    node h's path (root first, h last) at ``indices[indptr[h]:indptr[h + 1]]``.

    Kept on the forest's router; a row's decision path in tree t is the path of
    its leaf.
    """
    r = router_of(forest)
    hit = r._paths.get(t)
    if hit is not None:
        return hit
    sl = forest.tree_slice(t)
    n = sl.stop - sl.start
    depth = forest.depth[sl].astype(np.int64)
    parent = forest.parent[sl] - sl.start
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(depth + 1, out=indptr[1:])
    indices = np.empty(indptr[-1], dtype=np.int64)
    cur = np.arange(n)
    for k in range(int(depth.max()) + 1):  # the k-th ancestor sits k places before the end
        live = np.flatnonzero(depth >= k)
        indices[indptr[live] + depth[live] - k] = cur[live]
        cur[live] = np.maximum(parent[cur[live]], 0)
    hit = r._paths[t] = (indptr, indices)
    return hit


def path_indicator(forest, t, leaves):
    """CSR node indicator (rows x tree t's nodes, int8, sorted indices) of rows whose
    local leaves in tree ``t`` are ``leaves``: the decision paths."""
    indptr, indices = tree_paths(forest, t)
    leaves = np.asarray(leaves, dtype=np.int64)
    starts, lens = indptr[leaves], indptr[leaves + 1] - indptr[leaves]
    row_ptr = np.zeros(leaves.size + 1, dtype=np.int64)
    np.cumsum(lens, out=row_ptr[1:])
    idx = np.repeat(starts - row_ptr[:-1], lens) + np.arange(row_ptr[-1])
    sl = forest.tree_slice(t)
    return sp.csr_matrix((np.ones(row_ptr[-1], dtype=np.int8), indices[idx], row_ptr),
                         shape=(leaves.size, sl.stop - sl.start))
