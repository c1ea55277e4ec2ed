"""Prefix hubs: an exact compression of the closure graph's node -> pair arcs.

A paid pair p = (row, unit) carries one first-use record per tree that uses
the unit on the row's path, and its vertex must be in the closure as soon as
any of those nodes is: ``y_p >= max_{h in S_p} x_h``.  Rows that follow the
same branches share most of these node sets, so the arcs are compressed by
sharing *prefixes* of the sets across pairs.  Take the trees in a fixed order;
the prefix of p after k trees is the set of its nodes in those trees.  Each
distinct prefix that grows by a node h gets a hub vertex Z of weight 0 with
two arcs: from the shorter prefix's vertex and from h.  The pair then needs a
single arc from its last prefix vertex plus its records in the remaining
trees.  Since hub weights are 0, a minimal closure holds a hub iff it holds
some node of its prefix, so ``y_p >= Z`` is the same constraint as before and
every closed set keeps its weight: the optimum and the cut are unchanged.

Prefixes are built per unit (pairs of different units share no node set) with
the trees ordered by how many distinct first-use nodes they give the unit's
pairs (the root's unit first: one node for every row), level by level, and
kept up to the level where the number of arcs saved is largest.  See
``docs/math/closure.md`` (section 4).
"""

from __future__ import annotations

import numpy as np

__all__ = ["prefix_hubs"]

# a level is worth a hub layer while it has this many records per new hub: the
# arcs saved by a level are (records - 2 hubs), and every layer lengthens the paths
# the max-flow pushes along
MIN_SHARING = 8
# pairs handled at a time when gathering a unit's records into its dense matrix
BLOCK_PAIRS = 1 << 15
# records handled at a time by the passes over all records
BLOCK_RECORDS = 1 << 22


def _ragged(starts, pairs):
    """Record indices of ``pairs`` (concatenated) and the local pair of each."""
    counts = starts[pairs + 1] - starts[pairs]
    local = np.repeat(np.arange(pairs.size), counts)
    first = np.repeat(starts[pairs] - (np.cumsum(counts) - counts), counts)
    return first + np.arange(local.size), local


def kept_counts(use_node, starts, drop):
    """Records per pair whose node is not in ``drop``: one pass over the records, block
    by block, holding only a block's running count (never one number per record)."""
    n = use_node.size
    before = np.empty(starts.size, dtype=np.int64)  # kept records before each pair start
    base, lo = 0, 0
    for a in range(0, n, BLOCK_RECORDS):
        keep = ~drop[use_node[a:a + BLOCK_RECORDS]]
        run = np.cumsum(keep)  # kept records in [a, a + i]
        hi = int(np.searchsorted(starts, a + keep.size, side="left"))
        at = starts[lo:hi] - a  # the pair starts inside this block
        before[lo:hi] = base + np.where(at > 0, run[np.maximum(at - 1, 0)], 0)
        base += int(run[-1])
        lo = hi
    before[lo:] = base
    return np.diff(before)


def _unit_matrix(use_node, starts, pairs, tree_of_node, n_trees, drop=None):
    """Dense (trees x pairs) matrix of first-use nodes (-1: none; nodes in ``drop``
    are left out), or None when a pair has two records in one tree (hand-built
    data: left uncompressed).  Tree-major, so that the prefix levels read one
    contiguous row per tree; filled through row-major blocks (sequential writes)."""
    # node ids fit int32 whenever the node count does: half the memory of int64
    dtype = np.int32 if tree_of_node.size < 2**31 else np.int64
    M = np.empty((n_trees, pairs.size), dtype=dtype)
    for a in range(0, pairs.size, BLOCK_PAIRS):
        rec, local = _ragged(starts, pairs[a:a + BLOCK_PAIRS])
        nodes = use_node[rec]
        if drop is not None:
            keep = ~drop[nodes]
            nodes, local = nodes[keep], local[keep]
        trees = tree_of_node[nodes]
        # records come sorted by (pair, node), hence by (pair, tree): a repeat is adjacent
        if ((local[1:] == local[:-1]) & (trees[1:] == trees[:-1])).any():
            return None
        block = np.full((min(BLOCK_PAIRS, pairs.size - a), n_trees), -1, dtype=dtype)
        block.flat[local * n_trees + trees] = nodes
        M[:, a:a + block.shape[0]] = block.T
    return M


def _factorize(keys):
    """``(codes, uniques)`` of an int64 array (``uniques[codes] == keys``), by a hash
    table (pandas) in linear time; uniques in order of first appearance."""
    import pandas as pd

    codes, uniques = pd.factorize(keys, sort=False)
    return codes, np.asarray(uniques, dtype=np.int64)


def _tree_order(M, tree_of_node, n_nodes, n_trees):
    """Trees that hold records, fewest distinct first-use nodes first."""
    hit = np.zeros(n_nodes + 1, dtype=bool)  # the last slot takes the -1 entries
    for row in M:
        hit[row] = True  # a scatter without compressing the row first
    distinct = np.bincount(tree_of_node[np.flatnonzero(hit[:-1])], minlength=n_trees)
    order = np.argsort(distinct, kind="stable")
    return order[distinct[order] > 0]


def _grow_prefixes(M, order, n_nodes, next_hub):
    """Level by level, the prefix vertex of every pair and the hub arcs; returns
    the best cut-off level's ``(k, cur, tails, heads, next_hub)``."""
    cur = np.full(M.shape[1], -1, dtype=np.int64)
    tails, heads = [], []
    consumed = arcs = 0
    best = (0, cur.copy(), 0, next_hub)
    best_saving, losing = 0, 0
    for k, t in enumerate(order, start=1):
        sym = M[t]
        has = sym >= 0
        first = has & (cur < 0)
        cur[first] = sym[first]  # a one-node prefix is the node itself
        more = np.flatnonzero(has & ~first)
        level_hubs = 0
        if more.size:
            # distinct (prefix, node) keys by hashing: linear, where a sort is n log n
            inv, uq = _factorize(cur[more] * n_nodes + sym[more])
            ids = next_hub + np.arange(uq.size, dtype=np.int64)
            tails += [uq // n_nodes, uq % n_nodes]
            heads += [ids, ids]
            cur[more] = ids[inv]
            next_hub += uq.size
            level_hubs = uq.size
        consumed += int(has.sum())
        arcs += 2 * level_hubs
        saving = consumed - arcs - int(np.count_nonzero(cur >= 0))
        if saving > best_saving:
            best_saving, best = saving, (k, cur.copy(), len(tails), next_hub)
        losing = losing + 1 if int(has.sum()) < MIN_SHARING * level_hubs else 0
        if losing >= 2:  # prefixes have become (nearly) unique: no more sharing
            break
    k, cur, n_lists, next_hub = best
    return k, cur, tails[:n_lists], heads[:n_lists], next_hub


def _remaining_records(M, order, k, cur):
    """Sorted new records of each pair: its prefix vertex plus its nodes in the
    trees after the cut-off; returns (flat values, counts)."""
    rest = np.sort(order[k:])
    if M.dtype == np.int32 and cur.max(initial=0) < np.iinfo(np.int32).max:
        cur = cur.astype(np.int32)  # hub ids still fit: keep R in int32 too
    R = np.concatenate([M[rest].T, cur[:, None]], axis=1)
    big = np.iinfo(R.dtype).max
    R[R < 0] = big
    R.sort(axis=1)
    valid = R < big
    return R[valid], valid.sum(axis=1)


def prefix_hubs(use_node, starts, pair_unit, live, tree_of_node, n_nodes, drop=None,
                counts=None, unit_matrix=None, grow=True):
    """Compress the records of live pairs through shared-prefix hubs (exact).

    Parameters
    ----------
    use_node : ndarray of int
        First-use node of each record, sorted by pair, then node.
    starts : ndarray of int (n_pairs + 1,)
        Record offsets of each pair.
    pair_unit : ndarray of int (n_pairs,)
    live : ndarray of bool (n_pairs,)
        Pairs to keep; the records of the others are dropped.
    tree_of_node : ndarray of int (n_nodes,)
    n_nodes : int
    drop : ndarray of bool (n_nodes,), optional
        Nodes whose records are left out (read in place: the records are not
        copied first).
    counts : ndarray of int (n_pairs,), optional
        Records per pair not in ``drop`` (:func:`kept_counts`), when known.
    unit_matrix : callable, optional
        ``unit_matrix(u, pairs)``: the (trees x pairs) matrix of first-use nodes of
        the given pairs of unit ``u`` (without the ``drop`` nodes), when it can be
        had without reading the records (see :class:`prune_opt.routing._records.LeafRecords`).
    grow : bool
        Build the hubs; ``False`` only gathers the live pairs' records (without the
        ``drop`` nodes), e.g. off ``unit_matrix``.

    Returns
    -------
    new_use : ndarray of int32 (int64 if the ids need it)
        Records of the live pairs over node ids (< n_nodes) and hub ids
        (``n_nodes + j``), sorted within each pair.
    new_starts : ndarray of int64 (n_pairs + 1,)
    hub_tail, hub_head : ndarray of int64
        Arcs "tail in the closure implies head in the closure" into the hubs.
    n_hubs : int

    Examples
    --------
    >>> import numpy as np
    >>> # two trees (nodes 0-1 and 2-3); four pairs of one unit all use nodes 0 and 2
    >>> use = np.array([0, 2] * 4)
    >>> starts = np.arange(0, 9, 2)
    >>> new_use, new_starts, tails, heads, n_hubs = prefix_hubs(
    ...     use, starts, np.zeros(4, int), np.ones(4, bool), np.array([0, 0, 1, 1]), 4)
    >>> n_hubs, tails.tolist(), heads.tolist(), new_use.tolist()  # 8 arcs become 6
    (1, [0, 2], [4, 4], [4, 4, 4, 4])
    """
    n_trees = int(tree_of_node.max()) + 1 if tree_of_node.size else 0
    if counts is None:
        counts = np.diff(starts) if drop is None else kept_counts(use_node, starts, drop)
    live = live & (counts > 0)
    new_counts = np.where(live, counts, 0)
    pieces, tails, heads, next_hub = [], [], [], n_nodes
    for u in np.unique(pair_unit[live & (counts >= 2)]) if grow else ():
        pairs = np.flatnonzero(live & (pair_unit == u) & (counts >= 2))
        M = (_unit_matrix(use_node, starts, pairs, tree_of_node, n_trees, drop)
             if unit_matrix is None else unit_matrix(u, pairs))
        if M is None:
            continue
        order = _tree_order(M, tree_of_node, n_nodes, n_trees)
        k, cur, t_, h_, next_hub = _grow_prefixes(M, order, n_nodes, next_hub)
        if k == 0:
            continue
        values, cnt = _remaining_records(M, order, k, cur)
        del M
        pieces.append((pairs, values, cnt))
        new_counts[pairs] = cnt
        tails += t_
        heads += h_
    new_starts = np.concatenate([[0], np.cumsum(new_counts)]).astype(np.int64)
    dtype = np.int32 if next_hub < 2**31 else np.int64
    new_use = _assemble(use_node, starts, new_starts, live, pieces, dtype, drop,
                        None if unit_matrix is None else (unit_matrix, pair_unit))
    tails = np.concatenate(tails) if tails else np.empty(0, np.int64)
    heads = np.concatenate(heads) if heads else np.empty(0, np.int64)
    return new_use, new_starts, tails, heads, int(next_hub - n_nodes)


def _assemble(use_node, starts, new_starts, live, pieces, dtype, drop=None, source=None):
    """New record array: compressed pairs from ``pieces``, other live pairs copied
    (without their records at nodes in ``drop``); ``source``: ``(unit_matrix,
    pair_unit)`` to read them from instead of ``use_node``."""
    new_use = np.empty(int(new_starts[-1]), dtype=dtype)
    done = np.zeros(live.size, dtype=bool)
    for pairs, values, _ in pieces:
        rec, _ = _ragged(new_starts, pairs)
        new_use[rec] = values
        done[pairs] = True
    copy = np.flatnonzero(live & ~done)
    if source is not None:
        unit_matrix, pair_unit = source
        for u in np.unique(pair_unit[copy]):
            of_u = copy[pair_unit[copy] == u]
            for a in range(0, of_u.size, BLOCK_PAIRS):
                block = of_u[a:a + BLOCK_PAIRS]
                M = np.ascontiguousarray(unit_matrix(u, block).T)  # pair-major: sorted nodes
                dst, _ = _ragged(new_starts, block)
                new_use[dst] = M[M >= 0]
        return new_use
    for a in range(0, copy.size, BLOCK_PAIRS):
        block = copy[a:a + BLOCK_PAIRS]
        src, _ = _ragged(starts, block)
        dst, _ = _ragged(new_starts, block)
        nodes = use_node[src]
        new_use[dst] = nodes if drop is None else nodes[~drop[nodes]]
    return new_use
