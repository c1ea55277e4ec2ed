"""Route examples through a forest once and keep what the program needs.

* Cost data (X): weighted count of examples reaching each node, and the
  *first-use* records: for tree t, example i and acquisition unit u, the first
  node on i's path in t whose split feature needs u.  Examples whose leaves
  agree in every tree have identical records, so they are merged into one
  row carrying the sum of their weights.
* Error data: per tree, weighted class counts at every node and the node error
  e_h (examples reaching h whose label differs from h's majority class).  For
  a regression forest the per-node statistics are the weighted count, sum and
  sum of squares of the (centred) targets, and e_h is the node's squared error
  ``n v^2 - 2 v sum(y) + sum(y^2)`` for its value ``v``, divided by the target
  variance of the error data so that the error term is a normalised MSE.

First-use records kept in their compact source form: the merged rows' leaves.

Routing cost rows through a forest whose first-use table fits
(:class:`FirstUseTable`: for every node and paid unit, the
node on the root path where the unit is first used) makes the records a
function of the rows' leaves: row r pays unit u in tree t at
``first[node_offset[t] + leaf[t, r], u]`` when that is >= 0.  The leaves take
2 bytes per tree and row (for trees below 65,536 nodes), the records 4 bytes
each, about five per tree and row on real forests: the problem therefore keeps
the leaves and derives the records only for the code that reads them one by
one (:attr:`PruningProblem.use_node`).  The exact solver reads each unit's
(trees x pairs) matrix of first-use nodes straight off the leaves, and the
evaluation of a pruning reads the same matrices, so neither materialises the
records.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..forest._router import route_leaves

__all__ = ["CostRouting", "pair_ids", "route_costs", "chunk_records", "merge_identical_rows", "require_in_bag", "FirstUseTable", "LeafRecords", "node_levels", "sum_up"]


DEFAULT_CHUNK = 65536


# the last first-use tables built for each live forest (see record_tables)
_TABLES = weakref.WeakKeyDictionary()


@dataclass
class CostRouting:
    """Cost-data routing of a forest.

    Attributes
    ----------
    example_weight : ndarray (n_rows,)
        Weight of each merged row (number of original examples it stands for,
        times their sample weights).
    row_of_example : ndarray (n_examples,)
        Merged row of each original example.
    node_weight : ndarray (n_nodes,)
        Weighted number of cost examples reaching each node.
    use_node : ndarray of int32 (n_uses,) or None
        First-use records: the global node id of each, sorted by pair, then node;
        None when ``leaf_records`` (:class:`prune_opt.routing._records.LeafRecords`)
        holds them in compact form.
    pair_start : ndarray of int64 (n_pairs + 1,)
        Record offsets of each pair: pair p's records are
        ``use_node[pair_start[p]:pair_start[p + 1]]`` (4 bytes per record in all,
        where a pair id per record would double that).
    use_pair : ndarray (n_uses,), optional
        The pair of each record instead of ``pair_start`` (as the distributed
        compile assembles them).
    pair_row, pair_unit : ndarray of int32 (n_pairs,)
        Distinct (merged row, unit) pairs, sorted by row, then unit.
    total_weight : float
        N, the (weighted) number of cost examples.
    """

    example_weight: np.ndarray
    row_of_example: np.ndarray
    node_weight: np.ndarray
    use_node: np.ndarray
    pair_row: np.ndarray
    pair_unit: np.ndarray
    total_weight: float
    use_pair: np.ndarray | None = None
    pair_start: np.ndarray | None = None
    leaf_records: object = None  # the records' LeafRecords source (use_node then None)


def pair_ids(pair_start):
    """Pair id of every record from the record offsets of each pair (int32 when it fits).

    Examples
    --------
    >>> import numpy as np
    >>> pair_ids(np.array([0, 2, 3, 3, 5])).tolist()
    [0, 0, 1, 3, 3]
    """
    n_pairs = pair_start.size - 1
    dtype = np.int32 if n_pairs < 2**31 else np.int64
    return np.repeat(np.arange(n_pairs, dtype=dtype), np.diff(pair_start))


def tree_leaves(forest, X, t):
    """Local leaf id reached in tree ``t`` by every row of (checked) ``X``."""
    return route_leaves(forest, X, trees=[t])[:, 0]


def leaf_matrix(forest, X, chunk_size=DEFAULT_CHUNK):
    """(n, T) leaf ids in the smallest unsigned dtype that holds them
    (:func:`~prune_opt.forest._router.route_leaves`)."""
    del chunk_size  # the router bounds its own blocks
    return route_leaves(forest, X)


def merge_identical_rows(leaves, chunk_size=DEFAULT_CHUNK, seed=0):
    """Group rows with identical leaf signatures, groups in first-appearance order.

    A random 64-bit key per (tree, leaf) is summed along each row (wrapping),
    rows are grouped by that hash, and every row is then compared with its
    group's first row; rows that differ (a hash collision) are regrouped
    exactly among themselves.  No sort of the (n, T) matrix is ever made.

    Returns
    -------
    group : ndarray of int64 (n,)
        Group of each row, numbered by first appearance.
    first : ndarray of int64 (n_groups,)
        First row of each group (increasing).
    """
    n, T = leaves.shape
    rng = np.random.default_rng(seed)
    h = np.zeros(n, dtype=np.uint64)
    for t in range(T):
        col = leaves[:, t]
        keys = rng.integers(0, np.iinfo(np.uint64).max, size=int(col.max()) + 1,
                            dtype=np.uint64, endpoint=True)
        h += keys[col]  # wraps modulo 2**64
    _, first, group = np.unique(h, return_index=True, return_inverse=True)
    group = group.ravel().astype(np.int64)
    del h
    bad = np.zeros(n, dtype=bool)
    for start in range(0, n, chunk_size):
        sl = slice(start, min(start + chunk_size, n))
        bad[sl] = (leaves[sl] != leaves[first[group[sl]]]).any(axis=1)
    if bad.any():  # hash collision: regroup the offending rows exactly
        idx = np.flatnonzero(bad)
        _, sub = np.unique(leaves[idx], axis=0, return_inverse=True)
        group[idx] = first.size + sub.ravel()
    _, first = np.unique(group, return_index=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[group], first[order]


def paid_feature_units(costs):
    """Feature x unit incidence restricted to units that cost something (sorted CSR)."""
    fu = sp.csr_matrix(costs.feature_units.multiply((costs.unit_costs > 0)[None, :]).astype(bool))
    fu.eliminate_zeros()
    fu.sort_indices()
    return fu


def feature_unit_bits(feature_units):
    """(n_features + 1, words) uint64: the units each feature needs as a bitmask (64
    units per word); the last row, for leaves (feature -1), is empty."""
    fu = sp.csr_matrix(feature_units)
    words = max(1, -(-fu.shape[1] // 64))
    bits = np.zeros((fu.shape[0] + 1, words), dtype=np.uint64)
    f_of = np.repeat(np.arange(fu.shape[0]), np.diff(fu.indptr))
    u = fu.indices.astype(np.int64)
    np.bitwise_or.at(bits, (f_of, u // 64), np.left_shift(np.uint64(1), (u % 64).astype(
        np.uint64)))
    return bits


def new_units_table(forest, feature_units):
    """Per tree, the paid units each node uses *first* on any path through it.

    A unit is first used at node h iff h's split feature needs it and no
    ancestor's does; this depends on the tree only, so the records of a row
    are just the new units of the nodes on its path.  Computed with one
    bitmask per node (64 units per word), level by level.

    Returns
    -------
    list of (indptr, units) per tree: CSR over the tree's local node ids.
    """
    n_units = feature_units.shape[1]
    fbits = feature_unit_bits(feature_units)
    out = []
    for t in range(forest.n_trees):
        sl = forest.tree_slice(t)
        feat = forest.feature[sl]
        own = fbits[np.where(feat >= 0, feat, -1)]
        seen = own.copy()  # units used on the path down to (and at) each node
        par = forest.parent[sl] - sl.start
        depth = forest.depth[sl]
        for d in range(1, int(depth.max()) + 1):  # one pass per level
            at = np.flatnonzero(depth == d)
            seen[at] |= seen[par[at]]
        new = own.copy()
        has_par = par >= 0
        new[has_par] &= ~seen[par[has_par]]
        bits = np.unpackbits(new.view(np.uint8), axis=1, bitorder="little")[:, :n_units]
        r, c = np.nonzero(bits)
        out.append((np.concatenate([[0], np.cumsum(np.bincount(r, minlength=bits.shape[0]))]),
                    c.astype(np.int64)))
    return out


def tree_records(ind, table, offset):
    """First-use records (row, global node, unit) of one tree from its paths."""
    indptr, units = table
    rows = np.repeat(np.arange(ind.shape[0], dtype=np.int64), np.diff(ind.indptr))
    nodes = ind.indices.astype(np.int64)
    cnt = np.diff(indptr)[nodes]
    if cnt.max(initial=0) <= 1:  # the usual case: one unit per feature
        sel = cnt == 1
        nodes = nodes[sel]
        return rows[sel], nodes + offset, units[indptr[nodes]]
    rows, nodes = np.repeat(rows, cnt), np.repeat(nodes, cnt)
    within = np.arange(rows.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return rows, nodes + offset, units[indptr[nodes] + within]


# a dense first-use table (nodes x paid units, int32) is used up to this many entries;
# larger ones (many units) fall back to the per-tree CSR tables and path matrices
DENSE_TABLE_ENTRIES = 1 << 26


def record_tables(forest, feature_units):
    """What :func:`chunk_records` routes with: a :class:`FirstUseTable` when it is
    small enough (nodes x paid units), else the per-tree CSR tables.

    The memory probe, the routing of a compile and the scorers of the same rows ask
    for the same tables: the last ones built are kept on the forest (a function of
    the trees and the units).
    """
    dense = forest.n_nodes * max(feature_units.shape[1], 1) <= DENSE_TABLE_ENTRIES
    key = (dense, feature_units.shape, feature_units.indptr.tobytes(),
           feature_units.indices.tobytes())
    hit = _TABLES.get(forest)
    if hit is not None and hit[0] == key:
        return hit[1]
    tables = FirstUseTable(forest, feature_units) if dense else new_units_table(
        forest, feature_units)
    _TABLES[forest] = (key, tables)
    return tables


def chunk_records(forest, Xc, wc, feature_units, tables=None):
    """Records of one block of cost rows, in every tree (the unit of parallel work).

    Returns ``(node, count, pair_row, pair_unit, node_weight)`` with rows numbered
    locally from 0: records sorted by (row, unit, node) and the number of records
    of each (row, unit) pair.  With a :class:`FirstUseTable` (``tables``, see
    :func:`record_tables`) the records are gathered from the rows' leaves; with
    per-tree CSR tables they come from the path matrices and one sort of an int64
    key per record of this block.
    """
    tables = record_tables(forest, feature_units) if tables is None else tables
    if isinstance(tables, FirstUseTable):
        source = LeafRecords(leaf_matrix(forest, Xc), tables, forest.node_offset)
        prow, punit, pair_start, node_weight = source.pairs(wc, forest.n_nodes)
        return source.use_node(), np.diff(pair_start), prow, punit, node_weight
    n_units, n_nodes = feature_units.shape[1], forest.n_nodes
    node_weight = np.zeros(n_nodes)
    keys = []
    for t in range(forest.n_trees):
        ind = forest.decision_paths(Xc, t)
        node_weight[forest.tree_slice(t)] += ind.T.astype(float) @ wc
        r, h, u = tree_records(ind, tables[t], forest.node_offset[t])
        keys.append((r * n_units + u) * n_nodes + h)  # < rows * units * nodes < 2**63
        del ind, r, h, u
    key = np.concatenate(keys) if keys else np.empty(0, np.int64)
    del keys
    key.sort()
    node = (key % n_nodes).astype(np.int32)
    key //= n_nodes  # (row, unit) of each record
    new = np.empty(key.size, dtype=bool)
    new[:1] = True
    np.not_equal(key[1:], key[:-1], out=new[1:])
    start = np.flatnonzero(new)
    pk = key[start]
    del key, new
    return (node, np.diff(np.append(start, node.size)), (pk // n_units).astype(np.int32),
            (pk % n_units).astype(np.int32), node_weight)


class _Grow:
    """An append-only int array grown in place (realloc: no second copy for large blocks)."""

    def __init__(self, dtype):
        self.a = np.empty(1 << 16, dtype=dtype)
        self.n = 0

    def extend(self, values):
        need = self.n + values.size
        if need > self.a.size:
            self.a.resize(max(need, int(self.a.size * 1.5)), refcheck=False)
        self.a[self.n:need] = values
        self.n = need

    def array(self):
        self.a.resize(self.n, refcheck=False)
        return self.a


def record_chunk_rows(forest, costs, chunk_size):
    """Rows per record block: bounded so that one block holds O(2**22) records
    and its int64 sort key cannot overflow."""
    n_units = max(costs.n_units, 1)
    cap = (2**62) // (n_units * max(forest.n_nodes, 1) + 1)
    return int(max(1, min(chunk_size, max(256, 2**22 // max(forest.n_trees, 1)), cap)))


def assemble_records(blocks, n_nodes):
    """Concatenate per-block records (in row order) into global arrays.

    ``blocks`` yields ``(row_start, chunk_records(...) output)``.  Returns
    ``(use_node, pair_start, pair_row, pair_unit, node_weight)``: ``pair_start``
    the record offsets of each pair (n_pairs + 1).
    """
    use_node, count = _Grow(np.int32), _Grow(np.int64)
    pair_row, pair_unit = _Grow(np.int32), _Grow(np.int32)
    node_weight = np.zeros(n_nodes)
    for start, (node, cnt, prow, punit, nw) in blocks:
        use_node.extend(node)
        count.extend(cnt)
        pair_row.extend(prow + start)
        pair_unit.extend(punit)
        node_weight += nw
    pair_start = np.concatenate([[0], np.cumsum(count.array())]).astype(np.int64)
    return use_node.array(), pair_start, pair_row.array(), pair_unit.array(), node_weight


def route_costs(forest, X, costs, *, sample_weight=None, merge=True, chunk_size=DEFAULT_CHUNK,
                leaves=None):
    """Route cost data once: node weights and first-use records, in bounded memory.

    Parameters
    ----------
    forest : Forest
    X : ndarray (n_examples, n_features), already validated
    costs : FeatureCosts
    sample_weight : ndarray, optional
    merge : bool
        Merge examples that reach the same leaf in every tree.
    chunk_size : int
        Examples routed at a time (bounds memory).
    leaves : ndarray (n_examples, n_trees), optional
        Local leaf ids of the rows when already routed (:func:`leaf_matrix`).

    Returns
    -------
    CostRouting
    """
    fu = paid_feature_units(costs)
    tables = record_tables(forest, fu)
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if merge and n > 1:
        # the merge's leaf matrix is also all the records need: rows are routed once
        leaves = leaf_matrix(forest, X, chunk_size) if leaves is None else leaves
        inverse, first = merge_identical_rows(leaves, chunk_size)
        weight = np.bincount(inverse, weights=w, minlength=first.size)
        Xr, leaves = X[first], leaves[first]
    else:
        weight, inverse, Xr = w.copy(), np.arange(n), X
    if isinstance(tables, FirstUseTable):
        # the records are a function of the leaves: keep those (2 bytes per tree and
        # row), count the pairs and their records, and derive the records on demand
        leaves = leaf_matrix(forest, Xr, chunk_size) if leaves is None else leaves
        source = LeafRecords(leaves, tables, forest.node_offset)
        del leaves
        prow, punit, pair_start, node_weight = source.pairs(weight, forest.n_nodes)
        return CostRouting(example_weight=weight, row_of_example=inverse,
                           node_weight=node_weight, use_node=None, pair_start=pair_start,
                           pair_row=prow, pair_unit=punit, total_weight=float(weight.sum()),
                           leaf_records=source)
    step = record_chunk_rows(forest, costs, chunk_size)
    node, pair_start, prow, punit, node_weight = assemble_records(
        ((s, chunk_records(forest, Xr[s:s + step], weight[s:s + step], fu, tables))
         for s in range(0, Xr.shape[0], step)), forest.n_nodes)
    return CostRouting(example_weight=weight, row_of_example=inverse, node_weight=node_weight,
                       use_node=node, pair_start=pair_start, pair_row=prow, pair_unit=punit,
                       total_weight=float(weight.sum()))


def require_in_bag(forest, n_train, alternative="drop train= to count errors on (X, y)"):
    """Per-tree in-bag multiplicities of the training examples.

    For sklearn forests this is ``estimators_samples_`` counted with
    multiplicity (all ones when ``bootstrap=False``), for a single sklearn
    tree all ones; for array-built forests the ``in_bag`` they carry.  A forest
    with no such record (loaded from a file, a sub-forest, a LightGBM import, the
    ``to_sklearn()`` export of one) is refused with the fix (``alternative``):
    counting every training row instead would silently charge each tree for the
    rows it learned from.
    """
    est = forest.estimator
    if not forest.ensemble.in_bag_errors:  # boosting: every tree fits every row
        return [np.ones(n_train) for _ in range(forest.n_trees)]
    if est is not None and hasattr(est, "estimators_"):
        n_fit = getattr(est, "_n_samples", None)
        if n_fit is not None and n_fit != n_train:
            raise ValueError(
                f"train has {n_train} rows but the forest was fitted on {n_fit}; pass the exact "
                "training data (X_train, y_train) used in fit"
            )
        if n_fit is not None:  # None: rebuilt from arrays, how it was grown is unknown
            if not getattr(est, "bootstrap", False):
                return [np.ones(n_train) for _ in range(forest.n_trees)]
            return [np.bincount(s, minlength=n_train).astype(float)
                    for s in est.estimators_samples_]
    elif forest.in_bag is not None:
        bags = [np.asarray(b, dtype=float) for b in forest.in_bag]
        if any(b.shape != (n_train,) for b in bags):
            raise ValueError(
                f"train has {n_train} rows but the forest's in-bag record covers "
                f"{bags[0].shape[0]}; pass the exact training data used in fit"
            )
        return bags
    elif est is not None:  # one sklearn tree: grown on every training row
        return [np.ones(n_train)]
    raise ValueError(
        "train=: this forest records no in-bag (bootstrap) samples (it was loaded from "
        "a file, is a sub-forest, a LightGBM import or the to_sklearn() export of one), "
        "so errors cannot be counted on each tree's in-bag rows; pass the estimator as "
        f"fitted, or {alternative}")


# (rows x trees) entries handled at a time: bounds every temporary to ~100 MB
BLOCK_ENTRIES = 1 << 22


# the depth levels of each live forest (see node_levels)
_LEVELS = weakref.WeakKeyDictionary()


class FirstUseTable:
    """For every node h and paid unit u, the node on the root-to-h path (h included)
    where u is first used, as a global id (-1: none).

    A row's records in tree t are the non-negative entries of the row of its leaf,
    so routing a block of rows is one ``apply`` per tree and one gather: no path
    matrix and no sort (:class:`LeafRecords`).
    """

    def __init__(self, forest, feature_units):
        self.n_units = feature_units.shape[1]
        first = np.full((forest.n_nodes, self.n_units), -1, dtype=np.int32)
        internal = np.flatnonzero(forest.feature >= 0)
        need = feature_units[forest.feature[internal]].tocoo()  # units of each split's test
        first[internal[need.row], need.col] = internal[need.row]
        self.levels = node_levels(forest)
        for at, par in self.levels:  # shallowest first: an ancestor's use comes first
            inherited = first[par]
            first[at] = np.where(inherited >= 0, inherited, first[at])
        self.first = first


def node_levels(forest):
    """The non-root nodes of each depth with their parents, shallowest level first
    (computed once per forest)."""
    levels = _LEVELS.get(forest)
    if levels is None:
        levels = _LEVELS[forest] = []
        for d in range(1, forest.max_depth + 1):
            at = np.flatnonzero(forest.depth == d)
            levels.append((at, forest.parent[at]))
    return levels


def sum_up(levels, values):
    """Add every node's row of ``values`` into its parent's, deepest of the ``levels``
    (:func:`node_levels`) first, so that each node ends with the sum over its subtree
    (in place; returned)."""
    for at, par in reversed(levels):  # children are final before their parents are read
        np.add.at(values, par, values[at])
    return values


class LeafRecords:
    """The first-use records of the merged cost rows as leaves plus a first-use table.

    Parameters
    ----------
    leaves : ndarray (n_rows, n_trees)
        Local leaf id of each merged row in each tree.
    table : FirstUseTable
    node_offset : ndarray (n_trees + 1,)

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> p = po.compile_problem(rf, X, y, lam=0.01)
    >>> src = p.leaf_records
    >>> bool((src.use_node() == p.use_node).all())
    True
    """

    def __init__(self, leaves, table, node_offset):
        self.leaves_by_tree = np.ascontiguousarray(np.asarray(leaves).T)
        self.n_trees, self.n_rows = self.leaves_by_tree.shape
        self.first = table.first  # (n_nodes, n_units) int32
        self.first_by_unit = np.ascontiguousarray(table.first.T)  # one row per unit
        self.levels = table.levels
        self.node_offset = np.asarray(node_offset[:-1], dtype=np.int64)
        self.n_units = int(table.n_units)

    def _row_blocks(self):
        """``(a, b)`` bounds of the blocks of rows handled at a time (at least one)."""
        step = max(1, BLOCK_ENTRIES // max(self.n_trees * max(self.n_units, 1), 1))
        for a in range(0, max(self.n_rows, 1), step):
            yield a, min(a + step, self.n_rows)

    def pairs(self, row_weight, n_nodes):
        """``(pair_row, pair_unit, pair_start, node_weight)`` without the records: the
        (row, unit) pairs paid in some tree (sorted by row, then unit), the record
        offsets of each pair, and the weight of the rows reaching each node."""
        U = self.n_units
        has = (self.first >= 0).astype(np.uint8)  # (n_nodes, U): the unit is on the path
        rows, units, counts = [], [], []
        for a, b in self._row_blocks():
            cnt = np.zeros((b - a, U), dtype=np.int32)
            for t in range(self.n_trees):  # records of each (row, unit): trees that pay it
                cnt += has[self.leaves_by_tree[t, a:b].astype(np.int64) + self.node_offset[t]]
            flat = cnt.ravel()
            k = np.flatnonzero(flat)
            rows.append((k // U + a).astype(np.int32))
            units.append((k % U).astype(np.int32))
            counts.append(flat[k])
        counts = np.concatenate(counts)
        start = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts, out=start[1:])
        return np.concatenate(rows), np.concatenate(units), start, self.node_weight(
            row_weight, n_nodes)

    def node_weight(self, row_weight, n_nodes):
        """Weight of the rows reaching each node (leaves, then summed up the trees)."""
        w = np.zeros(n_nodes)
        ends = np.append(self.node_offset[1:], n_nodes)
        for t, col in enumerate(self.leaves_by_tree):
            lo, hi = int(self.node_offset[t]), int(ends[t])
            w[lo:hi] += np.bincount(col, weights=row_weight, minlength=hi - lo)
        return sum_up(self.levels, w)

    def by_tree(self, pair_row, pair_unit):
        """``(rec_node, rec_pair, rec_start)``: the records tree by tree (a tree's
        records are the first-use entries of its rows' leaves), with each record's
        (row, unit) pair and the offsets of each tree's records; no sort of the records."""
        U = max(self.n_units, 1)
        dense = self.n_rows * U <= BLOCK_ENTRIES * 4
        if dense:  # each (row, unit)'s pair id in a table
            pair_of = np.full(self.n_rows * U, -1, dtype=np.int64)
            pair_of[pair_row.astype(np.int64) * U + pair_unit] = np.arange(pair_row.size)
        else:
            pair_key = pair_row.astype(np.int64) * U + pair_unit  # sorted (row, then unit)
        nodes, pairs, start = [], [], [0]
        for t in range(self.n_trees):
            G = self.first[self.node_offset[t]:][self.leaves_by_tree[t]]  # first-use nodes
            flat = np.flatnonzero(G.ravel() >= 0)  # (row, unit) keys, row-major
            nodes.append(G.ravel()[flat].astype(np.int64))
            pairs.append(pair_of[flat] if dense else np.searchsorted(pair_key, flat))
            start.append(start[-1] + flat.size)
        return (np.concatenate(nodes), np.concatenate(pairs),
                np.asarray(start, dtype=np.int64))

    def use_node(self):
        """Every record's node, in (row, unit, node) order: the records materialised."""
        parts = []
        for a, b in self._row_blocks():  # (rows, units, trees): C order is (row, unit, node)
            G = self.first[self.leaves_by_tree[:, a:b].T.astype(np.int64) + self.node_offset]
            G = np.ascontiguousarray(G.transpose(0, 2, 1))
            parts.append(G[G >= 0])
        return np.concatenate(parts)

    def _per_tree(self, values, rows, dtype, reduce=None):
        """Per tree t, ``values[offset_t + leaf_t(rows)]``: stacked (n_trees, rows.size)
        or, with ``reduce`` (a ufunc), folded into one row."""
        ends = np.append(self.node_offset[1:], values.size)
        out = None if reduce is None else np.zeros(rows.size, dtype=dtype)
        M = None if reduce is not None else np.empty((self.n_trees, rows.size), dtype=dtype)
        for t, col in enumerate(self.leaves_by_tree):
            # the tree's slice is indexed with the local leaf ids as they are: no offset
            # array and no int64 copy of the ids
            got = values[int(self.node_offset[t]):int(ends[t])][col[rows]]
            if reduce is None:
                M[t] = got
            else:
                reduce(out, got, out=out)
        return M if reduce is None else out

    def _unit_values(self, unit, drop=None):
        first = self.first_by_unit[unit]
        if drop is not None:
            first = np.where((first >= 0) & ~drop[np.maximum(first, 0)], first, -1)
        return first

    def unit_matrix(self, unit, rows, drop=None):
        """(n_trees, rows.size) int32: the first-use node of unit ``unit`` for each row
        in each tree, -1 where there is none or (``drop``) it is a dropped node."""
        first = self._unit_values(unit, drop)
        return self._per_tree(first, rows, first.dtype)

    def unit_counts(self, unit, rows, drop=None):
        """Records of unit ``unit`` of each row (trees whose first-use node is not
        dropped): one byte gathered per tree, not the matrix."""
        kept = (self._unit_values(unit, drop) >= 0).astype(np.int32)
        return self._per_tree(kept, rows, np.int32, reduce=np.add)

    def pairs_used(self, mask, pair_row, pair_unit):
        """Boolean (n_pairs,): pairs whose first-use node in some tree stays a split."""
        used = np.zeros(pair_row.size, dtype=bool)
        ext = np.append(np.asarray(mask, dtype=bool), False)  # index -1: no record
        if 0 < self.n_units <= 64:
            # per node, the units whose first use on the path to it is a split, as one
            # word: a row's paid units are the OR over trees of its leaves' words (one
            # gather per tree and row instead of one per tree, row and unit)
            width = 8 * (1 << max(0, (self.n_units - 1).bit_length() - 3))  # 8..64 bits
            dtype = np.dtype(f"uint{width}")
            paid = np.packbits(ext[self.first], axis=1, bitorder="little")
            words = np.zeros((paid.shape[0], width // 8), dtype=np.uint8)
            words[:, :paid.shape[1]] = paid
            # bytes in little-endian order: bit u of the word is unit u
            words = words.view(f"<u{width // 8}").ravel().astype(dtype)
            rows = np.arange(self.n_rows)
            if pair_row.size < self.n_rows // 2:  # a few pairs: only their rows
                rows, pair_row = np.unique(pair_row, return_inverse=True)
            bits = self._per_tree(words, rows, dtype, reduce=np.bitwise_or)
            shift = pair_unit.astype(dtype)
            return ((bits[pair_row] >> shift) & dtype.type(1)).astype(bool)
        for u in np.unique(pair_unit):
            pairs = np.flatnonzero(pair_unit == u)
            # per node: is the unit's first-use node on the path to it a split?
            paid = ext[self.first_by_unit[u]]
            used[pairs] = self._per_tree(paid, pair_row[pairs], bool, reduce=np.logical_or)
        return used

    def uses_per_node(self, n_nodes):
        """Records at each node: the rows reaching it times the units first used there
        (every row through a node pays there each unit first used at it)."""
        reach = self.node_weight(np.ones(self.n_rows), n_nodes)
        own = np.count_nonzero(self.first == np.arange(n_nodes)[:, None], axis=1)
        return np.rint(reach).astype(np.int64) * own

