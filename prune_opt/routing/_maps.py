"""What a pruning does to rows, as maps over nodes: where a row ends, what it paid.

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

__all__ = ["stop_map", "tree_stop_map", "ancestor_bits", "unit_bits_of_features",
           "bit_costs", "bits_to_bool"]

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
    from ._leaf_records import node_levels

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
