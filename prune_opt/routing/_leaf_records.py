"""First-use records kept in their compact source form: the merged rows' leaves.

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

import numpy as np

__all__ = ["FirstUseTable", "LeafRecords", "node_levels", "sum_up"]

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

