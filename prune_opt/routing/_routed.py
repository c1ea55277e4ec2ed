"""Rows routed once through every tree: the data every scorer of prunings reads.

:class:`RoutedData` routes (checked) rows through every tree once and keeps the
leaf each row reaches; a pruning's leaves, the features it tests, the
*first-use records* ``(row, node, unit)`` for a unit incidence and, on demand,
the decision paths are read off those leaves.  The exact scorer of fit_budget's candidates
(:class:`prune_opt.objectives._scorer.VoteScorer`) and the ensemble objectives'
incremental state (:class:`prune_opt.objectives.EnsembleState`) share one
instance, so a call routes its rows once.  :class:`NestedScorer` scores a
sequence of masks on one routed data (the baseline curves of
:func:`prune_opt.budget.baseline_curve`).

What a pruning does to rows, as maps over nodes: where a row ends, what it paid.

A split mask is closed under parents, so along any root-to-leaf path the
splits come first and the first node that is not a split is where a row
following that path stops.  That node depends on the path's *original* leaf
only, so one map over the nodes answers it for every row:

    stop[h] = h            if h is a root or its parent is a split,
              stop[parent] otherwise,

and a row that reaches original leaf ``l`` stops at ``stop[l]``.  The splits
the row meets are then exactly the strict ancestors of ``stop[l]``, so what
it pays is the union of per-node bit sets over those ancestors
(:func:`ancestor_bits`), looked up at ``stop[l]``.  Routing rows is done once
(:func:`prune_opt.forest._router.route_leaves`); every pruning is then two gathers
per tree and row, whatever the depth of the trees.
"""

from __future__ import annotations

import weakref

import numpy as np
import scipy.sparse as sp

from ..forest._router import path_indicator, route_leaves
from ._records import (
    FirstUseTable,
    node_levels,
    paid_feature_units,
    record_tables,
    sum_up,
    tree_records,
)

__all__ = ["RoutedData", "NestedScorer", "route", "stop_map", "tree_stop_map", "ancestor_bits", "unit_bits_of_features", "bit_costs", "bits_to_bool"]


class RoutedData:
    """The leaf every row of ``X`` reaches in every tree of ``forest``, and what any
    pruning makes of it.

    Rows are routed once (:func:`~prune_opt.forest._router.route_leaves`); a pruning's
    leaves, the features a row's pruned paths test, first-use records and node
    weights are all read off the leaves (:mod:`prune_opt.routing._routed`), and the
    decision paths of a tree are built from them only when asked for.

    Parameters
    ----------
    forest : Forest
    X : ndarray
        Rows already checked by ``forest.check_X``.
    leaves : ndarray (n_rows, n_trees), optional
        Their local leaf ids when already routed.

    Attributes
    ----------
    leaf : ndarray (n_trees, n_rows)
        Global id of the (unpruned) leaf of every row in every tree.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> f = po.Forest.from_sklearn(RandomForestClassifier(2, random_state=0).fit(X, y))
    >>> r = RoutedData(f, f.check_X(X))
    >>> leaves = r.leaves(f.full_split_mask(), 0)
    >>> bool((leaves == f.node_offset[0] + f.apply_tree(f.check_X(X), 0)).all())
    True
    """

    def __init__(self, forest, X, leaves=None):
        self.forest, self.X = forest, X
        self.n_rows = X.shape[0]
        local = route_leaves(forest, X) if leaves is None else leaves
        dtype = np.int32 if forest.n_nodes < 2**31 else np.int64
        self.leaf = np.ascontiguousarray(local.T, dtype=dtype)
        self.leaf += forest.node_offset[:-1, None].astype(dtype)
        self._paths = {}
        self._memo = {}

    def memo(self, key, compute):
        """``compute()``, computed once per key for these rows (e.g. a booster's error
        moments, which the node-value fit and the compile both need)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def local_leaves(self):
        """(n_rows, n_trees) local leaf ids in the smallest unsigned dtype (as
        :func:`~prune_opt.routing._records.leaf_matrix` returns them)."""
        f = self.forest
        sizes = np.diff(f.node_offset)
        dtype = np.uint16 if sizes.max() <= np.iinfo(np.uint16).max else np.uint32
        return np.ascontiguousarray((self.leaf - f.node_offset[:-1, None]).T, dtype=dtype)

    def subset(self, rows):
        """The routed data of ``X[rows]`` (no routing: the leaves of those rows).

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> import prune_opt as po
        >>> X, y = load_iris(return_X_y=True)
        >>> f = po.Forest.from_sklearn(RandomForestClassifier(2, random_state=0).fit(X, y))
        >>> r = RoutedData(f, f.check_X(X)).subset([3, 140])
        >>> m = f.full_split_mask()
        >>> bool((r.leaves(m, 1) == RoutedData(f, f.check_X(X[[3, 140]])).leaves(m, 1)).all())
        True
        """
        rows = np.asarray(rows, dtype=np.int64)
        return RoutedData(self.forest, self.X[rows], self.local_leaves()[rows])

    # ------------------------------------------------------------ a pruning
    def all_leaves(self, mask):
        """(n_trees, n_rows) global ids of the pruned leaves of every row in every tree."""
        return stop_map(self.forest, mask)[self.leaf]

    def leaves(self, mask, t):
        """Global id of the pruned leaf each row reaches in tree ``t`` under ``mask``."""
        stop = tree_stop_map(self.forest, mask, t)
        return stop[self.leaf[t] - self.forest.node_offset[t]]

    def used(self, mask, trees=None):
        """Boolean (n, n_features): which features each row's pruned paths test."""
        f = self.forest
        return bits_to_bool(self._met(mask, self._feature_bits(), trees), f.n_features)

    def used_prefixes(self, mask):
        """For m = 1 .. n_trees, :meth:`used` of ``mask`` over the first m trees (a
        generator; each step ORs one tree in)."""
        for acc in self._met_prefixes(mask, self._feature_bits()):
            yield bits_to_bool(acc, self.forest.n_features)

    def row_costs(self, mask, costs, trees=None):
        """What each row pays under ``mask`` (over ``trees``, default all): every unit
        its pruned paths need, once (the one cost rule of :meth:`PrunedForest.acquisition_cost`
        and the scorers)."""
        return bit_costs(self._met(mask, self.unit_bits(costs), trees), costs.unit_costs)

    def row_cost_prefixes(self, mask, costs):
        """For m = 1 .. n_trees, :meth:`row_costs` over the first m trees (a generator)."""
        for acc in self._met_prefixes(mask, self.unit_bits(costs)):
            yield bit_costs(acc, costs.unit_costs)

    def _feature_bits(self):
        f = self.forest
        words = max(1, -(-f.n_features // 64))
        return ancestor_bits(f, _feature_bits(f, words), key=("features", words))

    def unit_bits(self, costs):
        """Per node, the paid units its strict ancestors' tests need, as bit sets (cached
        per costs): what a row stopping at the node pays."""
        fu = paid_feature_units(costs)
        key = ("units", fu.shape, fu.indptr.tobytes(), fu.indices.tobytes())
        return ancestor_bits(self.forest, unit_bits_of_features(self.forest, fu), key=key)

    def _met(self, mask, bits, trees=None):
        """(n, words) uint64: the OR of ``bits`` at every row's pruned leaf over ``trees``."""
        f = self.forest
        stop = stop_map(f, mask)
        if trees is None and bits.shape[1] == 1:  # one gather and one reduction
            return np.bitwise_or.reduce(bits[stop[self.leaf], 0], axis=0)[:, None]
        acc = np.zeros((self.n_rows, bits.shape[1]), dtype=np.uint64)
        for t in range(f.n_trees) if trees is None else trees:
            acc |= bits[stop[self.leaf[t]]]
        return acc

    def _met_prefixes(self, mask, bits):
        stop = stop_map(self.forest, mask)
        acc = np.zeros((self.n_rows, bits.shape[1]), dtype=np.uint64)
        for t in range(self.forest.n_trees):
            acc |= bits[stop[self.leaf[t]]]
            yield acc

    def node_weight(self, weight):
        """Weight of the rows reaching each node: per-leaf sums, summed up the trees."""
        f = self.forest
        out = np.zeros(f.n_nodes)
        for t in range(f.n_trees):
            sl = f.tree_slice(t)
            out[sl] += np.bincount(self.leaf[t] - sl.start, weights=weight,
                                   minlength=sl.stop - sl.start)
        return sum_up(node_levels(f), out)

    # ------------------------------------------------------------ paths and records
    def path(self, t):
        """Tree ``t``'s decision paths: ``indptr`` (row starts), ``nodes`` (global ids,
        root to leaf per row), ``rows`` and ``ind`` (the CSR node indicator); built
        from the leaves on first use and kept."""
        hit = self._paths.get(t)
        if hit is None:
            f = self.forest
            ind = path_indicator(f, t, self.leaf[t] - f.node_offset[t])
            indptr = ind.indptr.astype(np.int64)
            hit = {"indptr": indptr, "nodes": ind.indices.astype(np.int64) + f.node_offset[t],
                   "rows": np.repeat(np.arange(self.n_rows), np.diff(indptr)), "ind": ind}
            self._paths[t] = hit
        return hit

    @property
    def paths(self):
        """Per tree, :meth:`path` (a lazy sequence)."""
        return _Paths(self)

    def records(self, t, feature_units):
        """First-use records ``(rows, nodes, units)`` of tree ``t`` for the unit
        incidence ``feature_units`` (sorted CSR, e.g.
        :func:`~prune_opt.routing._records.paid_feature_units`), sorted by row, then unit;
        ``nodes`` are global ids."""
        f = self.forest
        tables = record_tables(f, feature_units)
        if isinstance(tables, FirstUseTable):  # the table's rows of the leaves
            G = tables.first[self.leaf[t]].ravel()
            flat = np.flatnonzero(G >= 0)
            U = tables.n_units
            return flat // U, G[flat].astype(np.int64), flat % U
        ind = self.path(t)["ind"]
        rows, nodes, units = tree_records(ind, tables[t], f.node_offset[t])
        order = np.argsort(rows * feature_units.shape[1] + units, kind="stable")
        return rows[order], nodes[order], units[order]


class _Paths:
    """``routed.paths[t]``: tree t's paths, built on demand."""

    def __init__(self, routed):
        self.routed = routed

    def __len__(self):
        return self.routed.forest.n_trees

    def __getitem__(self, t):
        return self.routed.path(int(t))

    def __iter__(self):
        return (self.routed.path(t) for t in range(len(self)))


def route(model, X):
    """Route the rows of ``X`` through ``model``'s trees once, for many prunings.

    What a :class:`~prune_opt.PrunedForest` of the same splits predicts, scores
    and costs on these rows reads the leaves routed here instead of routing
    ``X`` again: pass the result where ``X`` goes
    (``predict_proba``, ``predict``, ``score``, ``acquisition_cost``,
    ``average_cost``).  Worth it when many prunings, leaf refits or masks of one
    model are compared on the same rows (a budget search's candidates, the
    estimator's selection).

    Parameters
    ----------
    model : Forest or a fitted model :func:`~prune_opt.as_forest` reads
    X : array-like (n_examples, n_features)

    Returns
    -------
    RoutedData
        The rows' leaf in every tree; ``n_rows`` of them.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(5, random_state=0).fit(X, y)
    >>> pruned = po.prune(rf, X, y, lam=0.01)
    >>> rows = po.route(pruned.forest, X)
    >>> bool((pruned.predict(rows) == pruned.predict(X)).all())
    True
    >>> pruned.average_cost(rows) == pruned.average_cost(X)
    True
    """
    from ..forest._forest import as_forest

    forest = as_forest(model)
    return RoutedData(forest, forest.check_X(X))


def _feature_bits(forest, words):
    """(n_nodes, words) uint64: each split's feature as one bit (leaves: none)."""
    bits = np.zeros((forest.n_nodes, words), dtype=np.uint64)
    at = np.flatnonzero(forest.feature >= 0)
    k = forest.feature[at].astype(np.int64)
    bits[at, k // 64] = np.left_shift(np.uint64(1), (k % 64).astype(np.uint64))
    return bits


class NestedScorer:
    """Usage and combined leaf values of a sequence of masks on one :class:`RoutedData`
    (the baseline curves of :func:`prune_opt.budget.baseline_curve`).

    The results equal :meth:`RoutedData.used` and the pruned leaf values combined
    in :meth:`PrunedForest.predict_proba`'s order (summed in tree order, then the
    forest's output) exactly; each mask costs two gathers per tree and row.

    Parameters
    ----------
    routed : RoutedData

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> f = po.Forest.from_sklearn(RandomForestClassifier(3, random_state=0).fit(X, y))
    >>> r = RoutedData(f, f.check_X(X))
    >>> s = NestedScorer(r)
    >>> m = f.full_split_mask()
    >>> used, avg = s.score(m, trees=range(2))
    >>> bool((used == r.used(m, trees=range(2))).all())
    True
    >>> bool((avg == (f.value[r.leaves(m, 0)] + f.value[r.leaves(m, 1)]) / 2).all())
    True
    """

    def __init__(self, routed):
        self.routed = routed

    def score(self, mask, trees=None):
        """``(used, output)`` of ``mask`` over ``trees`` (default all): the same
        arrays as ``routed.used(mask, trees)`` and the pruned leaf values of ``trees``
        summed in tree order, then combined by the forest's ensemble (divided by
        their number, or a booster's initial score and link)."""
        r, f = self.routed, self.routed.forest
        trees = range(f.n_trees) if trees is None else trees
        mask = np.asarray(mask, dtype=bool)
        leaves = r.all_leaves(mask)
        total = np.zeros((r.n_rows, f.value.shape[1]))
        for t in trees:
            total += f.value[leaves[t]]
        return r.used(mask, trees), f.ensemble.output(total, len(trees), out=total)


_ANCESTORS = weakref.WeakKeyDictionary()


def _jump(stop):
    """Pointer jumping: follow ``stop`` until every entry is a fixed point
    (log2(depth) passes)."""
    while True:
        nxt = stop[stop]
        if np.array_equal(nxt, stop):
            return stop
        stop = nxt


def stop_map(forest, mask):
    """(n_nodes,) global ids: the node a row through each node stops at under the
    closed split mask ``mask`` (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> t = dict(left=[1, 3, -1, -1, -1], right=[2, 4, -1, -1, -1], feature=[0, 0, -1, -1, -1],
    ...          threshold=[0.5, 0.2, 0, 0, 0], value=[[1, 1]] * 5)
    >>> f = Forest([t], classes=[0, 1], n_features=1)
    >>> stop_map(f, np.array([True, False, False, False, False])).tolist()
    [0, 1, 2, 1, 1]
    """
    parent = forest.parent
    nodes = np.arange(forest.n_nodes)
    keep = (parent < 0) | np.asarray(mask, dtype=bool)[np.maximum(parent, 0)]
    return _jump(np.where(keep, nodes, parent))


def tree_stop_map(forest, mask, t):
    """:func:`stop_map` of tree ``t`` alone: global ids, indexed by local node id."""
    sl = forest.tree_slice(t)
    parent = forest.parent[sl]
    m = np.asarray(mask, dtype=bool)
    keep = (parent < 0) | m[np.maximum(parent, 0)]
    local = np.where(keep, np.arange(sl.stop - sl.start), parent - sl.start)
    return _jump(local) + sl.start


def ancestor_bits(forest, node_bits, key=None):
    """(n_nodes, words) uint64: the OR of ``node_bits`` over every *strict* ancestor of
    each node (what a row stopping at the node has met on its way).

    ``node_bits`` is (n_nodes, words) uint64, e.g. the units or the feature of each
    split; ``key`` (hashable) caches the result on the forest.
    """
    cache = _ANCESTORS.setdefault(forest, {})
    if key is not None and key in cache:
        return cache[key]
    from ._records import node_levels

    out = np.zeros_like(node_bits)
    for at, par in node_levels(forest):  # shallowest first: parents are final
        out[at] = out[par] | node_bits[par]
    if key is not None:
        cache[key] = out
    return out


def unit_bits_of_features(forest, feature_units):
    """(n_nodes, words) uint64: the units each node's split needs (leaves: none), 64
    units per word, from a (n_features, n_units) incidence."""
    from ._records import feature_unit_bits

    fbits = feature_unit_bits(sp.csr_matrix(feature_units))
    feat = forest.feature
    return fbits[np.where(feat >= 0, feat, -1)]


def bits_to_bool(bits, width):
    """(n, width) bool from (n, words) uint64 bit sets (bit j of word w is column
    64 w + j)."""
    return np.unpackbits(np.ascontiguousarray(bits).view(np.uint8), axis=1,
                         bitorder="little")[:, :width].astype(bool)


def bit_costs(bits, unit_costs):
    """Per row, the sum of ``unit_costs`` over the set bits of (n, words) uint64 rows,
    by byte tables (8 lookups per word, no unpacking)."""
    unit_costs = np.asarray(unit_costs, dtype=float)
    n, words = bits.shape
    total = np.zeros(n)
    as_bytes = np.ascontiguousarray(bits).view(np.uint8).reshape(n, words * 8)
    pattern = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1,
                            bitorder="little").astype(float)  # (256, 8)
    for b in range(words * 8):
        c = unit_costs[8 * b:8 * b + 8]
        if c.size == 0 or not c.any():
            continue
        table = pattern[:, :c.size] @ c
        total += table[as_bytes[:, b]]
    return total

