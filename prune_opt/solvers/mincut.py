"""Exact solver: BudgetPrune as a maximum-weight closure, one s-t minimum cut.

With ``x_h = 1`` when internal node h stays a split and ``y_p = 1`` when the
(example row, unit) pair p is paid, the program is

    min  constant + sum_h s_h x_h + sum_p a_p y_p
    s.t. x_child <= x_parent,   x_node <= y_pair for every first-use record,

a minimum-weight closure (Picard 1976): vertices are internal nodes and pairs,
an infinite arc ``u -> v`` encodes "u chosen implies v chosen", a vertex of
negative weight gets an arc from the source, one of positive weight an arc to
the sink, and the source side of a minimum cut is an optimal closed set.  The
derivation, the exactness argument and the integer scaling are written out in
``docs/math/closure.md``.

The graph is built in bulk with numpy (int32 vertex ids, int64 capacities) and
handed to OR-Tools' push-relabel ``SimpleMaxFlow``.  Reductions keep it
small without changing the optimum:

* a pair with a single first-use record is folded into its node (``y_p = x_h``
  at any optimum since ``a_p >= 0``); pairs of zero weight are dropped;
* pairs with identical sets of use nodes are merged (their weights add); the
  grouping is found by hashing and then verified element by element, so a
  hash collision can only cost a missed merge, never a wrong answer;
* subtrees that cannot pay for themselves are left out, the splits and paid
  pairs every optimum shares are fixed (:mod:`._fixing`), and common prefixes
  of the pairs' node sets are shared through hubs (:mod:`._prefix_hubs`).

See ``docs/math/closure.md``, section 4.
"""

from __future__ import annotations

import time

import numpy as np

from ..routing._records import node_levels
from ._base import Solver, SolverError, SolveResult
from ._fixing import fixed_splits
from ._prefix_hubs import _factorize, kept_counts
from ._prefix_hubs import prefix_hubs as _prefix_hubs
from ._registry import register_solver

__all__ = ["MinCutSolver", "ClosureGraph", "build_closure_graph"]

SOURCE, SINK = 0, 1
# capacities are scaled so that the finite ones sum to at most 2**61; "infinite"
# arcs get 2**62, more than any flow can reach, and every sum stays below 2**63
FINITE_TOTAL = 2.0**61
INFINITE = 2**62
# optimistic solve rate: a time_limit below n_arcs / rate cannot be met by the max-flow
# (arcs per second), so the roots-only pruning is returned at once instead
ARCS_PER_SECOND = 2.0e7


class ClosureGraph:
    """The reduced closure graph of a problem (real weights, before integer scaling).

    Attributes
    ----------
    n_vertices : int
        Including source (0) and sink (1); internal node j is vertex ``2 + j``,
        kept pair k is vertex ``2 + n_internal + k``.
    internal_nodes : ndarray of int32
        Global node id of each node vertex.
    weight : ndarray of float (n_vertices - 2,)
        Natural-unit weight of each non-terminal vertex (objective change when
        it is in the closure).
    inf_tail, inf_head : ndarray of int32
        Infinite arcs (child -> parent, node -> pair).
    constant : float
    stats : dict
        Sizes before and after each reduction.
    fixed_nodes : ndarray of int or None
        Global ids of the nodes that split in every optimum (not vertices: their
        weights are in ``constant``); every mask read off a cut holds them.
    """

    def __init__(self, n_vertices, internal_nodes, weight, inf_tail, inf_head, constant,
                 stats, fixed_nodes=None):
        self.n_vertices = n_vertices
        self.internal_nodes = internal_nodes
        self.weight = weight
        self.inf_tail = inf_tail
        self.inf_head = inf_head
        self.constant = constant
        self.stats = stats
        self.fixed_nodes = fixed_nodes

    @property
    def n_arcs(self):
        return int(self.inf_tail.size + np.count_nonzero(self.weight))

    def mask_from_source_side(self, source_side, n_nodes):
        """Split mask of the closed set given as flow-graph vertex ids."""
        v = np.asarray(source_side, dtype=np.int64)
        v = v[(v >= 2) & (v < 2 + self.internal_nodes.size)] - 2
        mask = np.zeros(n_nodes, dtype=bool)
        mask[self.internal_nodes[v]] = True
        if self.fixed_nodes is not None:
            mask[self.fixed_nodes] = True
        return mask


# prefix hubs pay for their grouping only on large problems (records)
HUB_MIN_RECORDS = 1 << 20
# records handled at a time by the graph build: bounds its temporaries to ~100 MB
BLOCK_RECORDS = 1 << 22


def _pair_blocks(starts, block=BLOCK_RECORDS):
    """Split pairs into runs ``(p0, p1)`` holding about ``block`` records each."""
    n_pairs = starts.size - 1
    cuts = np.searchsorted(starts, np.arange(0, int(starts[-1]), block), side="right") - 1
    cuts = np.unique(np.concatenate([cuts[cuts > 0], [0, n_pairs]]))
    return list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))


def _group_identical_sets(owner, use_node, starts, rng_seed=0, live=None):
    """Representative of each live pair among live pairs with identical node sets.

    ``use_node`` must be sorted by pair (``owner``, kept for the signature;
    ownership is read off ``starts``), then node, with ``starts`` the record
    offsets of each pair; ``live`` (default all) marks the pairs to group.  Sets are hashed with two random 64-bit keys per
    node plus their sizes, then verified element by element block by block;
    an unverified pair stays alone.  Dead pairs are their own representative.
    """
    n_pairs = starts.size - 1
    rng = np.random.default_rng(rng_seed)
    keys = rng.integers(1, 2**63 - 1, size=(2, int(use_node.max()) + 1), dtype=np.uint64)
    blocks = _pair_blocks(starts)
    table = np.empty((n_pairs, 3), dtype=np.uint64)
    for p0, p1 in blocks:  # per-pair sums as differences of a (wrapping) running sum
        nodes = use_node[starts[p0]:starts[p1]]
        local = starts[p0:p1 + 1] - starts[p0]
        for j in (0, 1):
            run = np.concatenate([[np.uint64(0)], np.cumsum(keys[j][nodes], dtype=np.uint64)])
            table[p0:p1, j] = run[local[1:]] - run[local[:-1]]
    table[:, 2] = np.diff(starts)
    lid = np.arange(n_pairs) if live is None else np.flatnonzero(live)
    # one 64-bit key per pair (both hashes and the size mixed, wrapping): grouped by a hash
    # table in linear time; a key collision is caught by the verification below
    with np.errstate(over="ignore"):
        key = (table[lid, 0] ^ (table[lid, 1] * np.uint64(0x9E3779B97F4A7C15))
               ^ (table[lid, 2] * np.uint64(0xC2B2AE3D27D4EB4F)))
    del table
    codes, _ = _factorize(key.view(np.int64))
    del key
    # codes number the groups by first appearance: a pair opens its group iff its code
    # exceeds every code before it
    opens = np.empty(codes.size, dtype=bool)
    opens[:1] = True
    if codes.size > 1:
        np.greater(codes[1:], np.maximum.accumulate(codes)[:-1], out=opens[1:])
    first = np.flatnonzero(opens)
    rep = np.arange(n_pairs)
    rep[lid] = lid[first[codes]]
    bad = np.zeros(n_pairs, dtype=bool)
    for p0, p1 in blocks:
        a, b = int(starts[p0]), int(starts[p1])
        owner = np.repeat(np.arange(p0, p1), np.diff(starts[p0:p1 + 1]))
        other = starts[rep[owner]] + (np.arange(a, b) - starts[owner])
        bad[owner[use_node[a:b] != use_node[other]]] = True
    rep[bad] = np.flatnonzero(bad)
    return rep


def _reduce_pairs(use_node, starts, pair_w, node_w, vid, fold_single, merge_pairs, stats):
    """Fold single-record pairs into nodes (in place on ``node_w``), drop dead
    pairs and merge identical ones.  Returns (group of each pair or -1, group weights)."""
    n_records = np.diff(starts)
    dead = (pair_w <= 0) | (n_records == 0)
    stats["n_pairs_folded"] = 0
    if fold_single:
        single = (n_records == 1) & ~dead
        sp_ = np.flatnonzero(single)
        node_w += np.bincount(vid[use_node[starts[sp_]]], weights=pair_w[sp_],
                              minlength=node_w.size)
        dead |= single
        stats["n_pairs_folded"] = int(sp_.size)
    live = ~dead
    if merge_pairs and live.any():
        rep = _group_identical_sets(None, use_node, starts, live=live)
    else:
        rep = np.arange(pair_w.size)
    is_rep = live & (rep == np.arange(pair_w.size))
    stats["n_pairs_merged"] = int(np.count_nonzero(live) - np.count_nonzero(is_rep))
    group = np.cumsum(is_rep) - 1
    group = np.where(live, group[rep], -1)
    pw = np.bincount(group[live], weights=pair_w[live], minlength=int(is_rep.sum()))
    return np.where(is_rep, group, -1), pw


def _fix(problem, cd, off, pair_w, constant, stats):
    """Apply :func:`~prune_opt.solvers._fixing.fixed_splits`: the nodes that split and
    the pairs that are paid in every optimum leave the graph, their weights moved into
    the constant.  Returns ``(fixed or None, off, pair_w, constant)``."""
    fixed, forced, rounds = fixed_splits(problem, off, weights=cd)
    stats.update(n_fixed_splits=int(np.count_nonzero(fixed)),
                 n_pairs_forced=int(np.count_nonzero(forced)), fixing_rounds=int(rounds))
    if not fixed.any():
        return None, off, pair_w, constant
    constant += float(cd["split_weight"][fixed].sum()) + float(pair_w[forced].sum())
    pair_w = np.where(forced, 0.0, pair_w)
    return fixed, fixed if off is None else off | fixed, pair_w, constant


def build_closure_graph(problem, *, fold_single=True, merge_pairs=True, prefix_hubs=False,
                        drop_unprofitable=False, fix_splits=False, drop=None):
    """Reduced maximum-weight-closure graph of a :class:`PruningProblem`.

    Works through the first-use records in blocks of pairs, so its
    temporaries stay bounded whatever the number of records; only the kept
    arcs (int32 tail and head) are allocated in full.

    Parameters
    ----------
    problem : PruningProblem
    fold_single : bool
        Fold pairs with one first-use record into their node.
    merge_pairs : bool
        Merge pairs whose sets of use nodes are identical.
    prefix_hubs : bool
        Share common prefixes of the pairs' node sets through zero-weight hub
        vertices (:func:`prune_opt.solvers._prefix_hubs.prefix_hubs`); applied
        only from ``HUB_MIN_RECORDS`` records on.
    drop_unprofitable : bool
        Leave out the nodes :func:`unprofitable_nodes` proves some optimum cuts
        (with their records).
    fix_splits : bool
        Leave out the nodes that split and the pairs that are paid in every optimum
        (:func:`prune_opt.solvers._fixing.fixed_splits`), their weights moved into
        the constant, with every record of those pairs; the graph's
        ``fixed_nodes`` are added to the mask read off a cut.
    drop : ndarray of bool (n_nodes,), optional
        Nodes to leave out as :func:`unprofitable_nodes` does (closed under
        descendants), known by the caller to be cut by some optimum: e.g. the
        unprofitable nodes of a program whose graph is built for other weights
        (:class:`~prune_opt.budget._search.MultiplierClosure`).

    Returns
    -------
    ClosureGraph

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> g = build_closure_graph(po.compile_problem(rf, X, y, lam=0.01))
    >>> g.n_vertices >= 2
    True
    """
    f = problem.forest
    cd = problem.closure_weights()
    pair_w = np.asarray(cd["pair_weight"], dtype=float)
    constant = float(cd["constant"])
    starts = problem.pair_start
    stats = {"n_internal": int(np.count_nonzero(~f.is_leaf)), "n_pairs": int(pair_w.size),
             "n_uses": problem.n_uses}
    if problem.leaf_records is None and any(  # gathered records hold internal nodes only
            f.is_leaf[problem.use_node[a:a + BLOCK_RECORDS]].any()
            for a in range(0, problem.n_uses, BLOCK_RECORDS)):
        raise SolverError("a first-use record points at a leaf; the problem is inconsistent")
    off = unprofitable_nodes(f, cd["split_weight"]) if drop_unprofitable else None
    if drop is not None:
        off = drop if off is None else off | drop
    off = off if off is not None and off.any() else None
    fixed = None
    if fix_splits:
        fixed, off, pair_w, constant = _fix(problem, cd, off, pair_w, constant, stats)
    # the problem holds its records sorted by (pair, node) with the offsets of each pair;
    # with their leaf source (and prefix hubs, or a few pairs left by the fixing),
    # per-unit matrices of the live pairs read off the leaves replace every pass over the
    # records, which are then never materialised
    leaf_source = problem.leaf_records is not None and (
        (prefix_hubs and problem.n_uses >= HUB_MIN_RECORDS) or fixed is not None)
    source = problem.leaf_records if leaf_source else None
    use_node = problem.use_node if source is None else None
    live = pair_w > 0
    counts = (_leaf_counts(source, problem, off, live) if source is not None
              else np.diff(starts) if off is None else kept_counts(use_node, starts, off))
    n_kept = int(counts[live].sum())
    internal = np.flatnonzero(~f.is_leaf if off is None else ~f.is_leaf & ~off).astype(np.int32)
    stats.update(n_node_vertices=int(internal.size), n_uses_kept=n_kept)
    vid = np.full(f.n_nodes, -1, dtype=np.int32)
    vid[internal] = np.arange(internal.size, dtype=np.int32)
    node_w = cd["split_weight"][internal].astype(float)
    hub_tail = hub_head = np.empty(0, np.int32)
    hubs = prefix_hubs and n_kept >= HUB_MIN_RECORDS
    if hubs or source is not None:
        # the hubs read the records in place, leaving out the dropped nodes: no copy
        use_node, starts, hub_tail, hub_head, vid, node_w = _with_hubs(
            use_node, starts, counts, off, problem, pair_w, vid, node_w, stats, source,
            grow=hubs)
    elif off is not None:
        use_node, starts = _drop_records_at(use_node, counts, off)
    group, pw = _reduce_pairs(use_node, starts, pair_w, node_w, vid, fold_single,
                              merge_pairs, stats)
    tail, head = _node_pair_arcs(use_node, starts, group, vid, node_w.size)
    del use_node, starts
    par = f.parent[internal]
    has_par = par >= 0
    has_par[has_par] = vid[par[has_par]] >= 0  # a fixed parent always splits: no arc
    child_tail = (np.flatnonzero(has_par) + 2).astype(np.int32)
    child_head = (vid[par[has_par]] + 2).astype(np.int32)
    inf_tail = np.concatenate([child_tail, hub_tail, tail])
    del tail
    inf_head = np.concatenate([child_head, hub_head, head])
    del head
    stats.update(n_pair_vertices=int(pw.size), n_node_pair_arcs=int(
        inf_tail.size - child_tail.size - hub_tail.size), n_infinite_arcs=int(inf_tail.size))
    return ClosureGraph(2 + node_w.size + pw.size, internal, np.concatenate([node_w, pw]),
                        inf_tail, inf_head, constant, stats,
                        fixed_nodes=None if fixed is None else np.flatnonzero(fixed))


def _with_hubs(use_node, starts, counts, off, problem, pair_w, vid, node_w, stats,
               source=None, grow=True):
    """Records rewritten through prefix hubs (leaving out those at ``off`` nodes), with
    the hubs appended to the vertices; ``source``: the records' :class:`LeafRecords`;
    ``grow=False``: no hubs, the live pairs' records only (read off ``source``)."""
    f = problem.forest
    live = (pair_w > 0) & (counts > 0)
    matrix = None if source is None else (
        lambda u, pairs: source.unit_matrix(u, problem.pair_row[pairs], off))
    use_node, starts, tails, heads, n_hub = _prefix_hubs(
        use_node, starts, problem.pair_unit, live, f.tree_of_node, f.n_nodes, drop=off,
        counts=counts, unit_matrix=matrix, grow=grow)
    n_int = int(node_w.size)
    vid = np.concatenate([vid, np.arange(n_int, n_int + n_hub, dtype=np.int32)])
    node_w = np.concatenate([node_w, np.zeros(n_hub)])
    stats.update(n_hubs=int(n_hub), n_hub_arcs=int(tails.size))
    return use_node, starts, vid[tails] + 2, vid[heads] + 2, vid, node_w


def _leaf_counts(source, problem, off, live):
    """Records per ``live`` pair not at ``off`` nodes (0 for the other pairs), from the
    records' leaf source (per unit) instead of a pass over the records."""
    counts = np.zeros(problem.n_pairs, dtype=np.int64)
    for u in np.unique(problem.pair_unit[live]):
        p = np.flatnonzero(live & (problem.pair_unit == u))
        counts[p] = source.unit_counts(u, problem.pair_row[p], off)
    return counts


def unprofitable_nodes(forest, split_weight):
    """Internal nodes that some optimal pruning cuts, whatever the costs.

    ``best(h) = s_h + sum over internal children c of min(0, best(c))`` is the
    lowest weight a closed set can give h's subtree when h splits, counting the
    split weights only; pair weights are >= 0, so when ``best(h) >= 0``
    removing h's subtree from any closed set does not increase its weight.
    Such nodes and all their descendants are returned (they stay cut).
    """
    internal = ~forest.is_leaf
    best = np.where(internal, split_weight, 0.0)  # a leaf adds min(0, 0) = 0
    levels = node_levels(forest)
    for at, par in reversed(levels):  # deepest first: children are final
        np.add.at(best, par, np.minimum(best[at], 0.0))
    off = internal & (best >= 0)
    for at, par in levels:  # an off node's subtree is off
        off[at] |= off[par]
    return off & internal


def _drop_records_at(use_node, counts, drop):
    """Records whose node is not in ``drop`` (``counts``: how many each pair keeps, see
    :func:`prune_opt.solvers._prefix_hubs.kept_counts`) and their record offsets."""
    kept = np.empty(int(counts.sum()), dtype=use_node.dtype)
    k = 0
    for a in range(0, use_node.size, BLOCK_RECORDS):
        block = use_node[a:a + BLOCK_RECORDS]
        block = block[~drop[block]]
        kept[k:k + block.size] = block
        k += block.size
    starts = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return kept, starts


def _node_pair_arcs(use_node, starts, group, vid, n_int):
    """Infinite arcs node (or hub) -> pair vertex for the records of kept pairs, in
    record order; ``n_int`` counts the node and hub vertices before the pairs."""
    n_records = np.diff(starts)
    n_arcs = int(n_records[group >= 0].sum())
    tail = np.empty(n_arcs, dtype=np.int32)
    head = np.empty(n_arcs, dtype=np.int32)
    k = 0
    for p0, p1 in _pair_blocks(starts):
        a, b = int(starts[p0]), int(starts[p1])
        g = np.repeat(group[p0:p1], n_records[p0:p1])
        keep = g >= 0
        m = int(np.count_nonzero(keep))
        tail[k:k + m] = vid[use_node[a:b][keep]] + 2
        head[k:k + m] = g[keep] + (2 + n_int)
        k += m
    return tail, head


def integer_capacities(weight):
    """Scale real vertex weights to int64 with a power-of-two factor.

    Returns ``(W, K, slack)``: integer weights, the factor K, and the total
    rounding error ``sum |K w - W| / K`` (natural units), so that for every
    closed set S, ``|sum_S w - sum_S W / K| <= slack``.
    """
    weight = np.asarray(weight, dtype=float)
    if not np.isfinite(weight).all():
        raise ValueError("closure weights must be finite (a cost or error is inf or NaN)")
    magnitude = np.abs(weight)
    if not magnitude.any():
        return np.zeros(weight.size, dtype=np.int64), 1.0, 0.0
    # K = 2**k with total * K <= 2**61 - n / 2 (rounding adds at most 1/2 per vertex).
    # The total is taken as s * 2**e_max with s <= n, so it cannot overflow, and k is
    # read off binary exponents (frexp), so a subnormal total cannot overflow 2.0**k.
    # k is capped so that K itself stays a finite double: weights that small lose
    # precision only far below any tolerance, and the slack below accounts for it.
    e_max = int(np.frexp(magnitude.max())[1])
    s_total = float(np.ldexp(magnitude, -e_max).sum())  # in (0.5, n]
    e_room = int(np.frexp((FINITE_TOTAL - weight.size) / s_total)[1])
    k = min(e_room - 1 - e_max, 1023)  # floor(log2(room / s_total)) - e_max
    K = float(np.ldexp(1.0, k))
    scaled = np.ldexp(weight, k)  # exact: multiplying by a power of two
    W = np.rint(scaled)
    slack = float(np.abs(scaled - W).sum() / K)
    return W.astype(np.int64), K, slack


def _flow_network(flow, g, W):
    """Add the arcs of ``g`` (integer weights ``W``) to an OR-Tools max-flow,
    terminal arcs first, then the infinite arcs block by block (no full copy)."""
    v = np.arange(2, g.n_vertices, dtype=np.int32)
    neg, pos = W < 0, W > 0
    tails = np.concatenate([np.full(int(neg.sum()), SOURCE, np.int32), v[pos]])
    heads = np.concatenate([v[neg], np.full(int(pos.sum()), SINK, np.int32)])
    if tails.size:
        flow.add_arcs_with_capacity(tails, heads, np.concatenate([-W[neg], W[pos]]))
    for a in range(0, g.inf_tail.size, BLOCK_RECORDS):
        b = min(a + BLOCK_RECORDS, g.inf_tail.size)
        flow.add_arcs_with_capacity(g.inf_tail[a:b], g.inf_head[a:b],
                                    np.full(b - a, INFINITE, dtype=np.int64))
    return flow


@register_solver
class MinCutSolver(Solver):
    """Exact min-cut (maximum-weight closure) solver on OR-Tools' max-flow.

    Solves the BudgetPrune program exactly without building the LP: one
    push-relabel maximum flow on a graph with one vertex per internal node
    and per (merged) paid pair.  The reported ``bound`` is certified: the
    integer cut value divided by the scale factor minus the total rounding
    slack (see ``docs/math/closure.md``); the objective is recomputed from
    the recovered pruning.

    OR-Tools' max-flow cannot be interrupted.  ``time_limit`` is honoured by
    refusing the problem up front when an (optimistic) estimate of the solve
    time already exceeds it; otherwise the solve runs to optimality.

    Options: ``fold_single`` (fold single-record pairs into nodes, default
    True), ``merge_pairs`` (merge pairs with identical use-node sets, default
    True), ``prefix_hubs`` (share common prefixes of those sets through
    zero-weight hub vertices on large problems, default True),
    ``drop_unprofitable`` (leave out nodes whose subtree cannot pay for itself
    even at zero cost, default True), ``fix_splits`` (leave out the nodes that split
    and the pairs that are paid in every optimum, default True).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> problem = po.compile_problem(rf, X, y, lam=0.01)
    >>> a = po.solve(problem, solver="mincut")
    >>> b = po.solve(problem, solver="highs")
    >>> abs(a.objective - b.objective) <= 1e-9 * abs(b.objective)
    True
    """

    name = "mincut"
    kind = "closure"
    requires = ("ortools.graph.python.max_flow",)
    install_hint = "pip install ortools>=9.8"
    options = {"fold_single": True, "merge_pairs": True, "prefix_hubs": True,
               "drop_unprofitable": True, "fix_splits": True}
    exact = True
    mip = False
    matrix_based = False
    reference_only = False
    supports_budget_row = False
    auto_rank = 0
    STATUS_MAP = {"OPTIMAL": "optimal", "POSSIBLE_OVERFLOW": "error", "BAD_INPUT": "error",
                  "BAD_RESULT": "error"}

    def _solve(self, problem, *, deadline, verbose):
        from ortools.graph.python import max_flow

        from .._memory import check_fits, estimate_flow_memory, estimate_solve_memory

        # the problem is already allocated (available memory excludes it): check the
        # graph build now and the max-flow once the reduced graph's size is known
        build = estimate_solve_memory(problem, "mincut")["graph_build"]
        check_fits({"bytes": build, "graph_build": build},
                   f"solver='mincut' ({problem.n_uses:,} first-use records)",
                   options="compile with cost_sample= (e.g. 'auto'), fewer rows or "
                           "shallower trees (max_depth)")
        t0 = time.perf_counter()
        g = build_closure_graph(problem, fold_single=bool(self.params["fold_single"]),
                                merge_pairs=bool(self.params["merge_pairs"]),
                                prefix_hubs=bool(self.params["prefix_hubs"]),
                                drop_unprofitable=bool(self.params["drop_unprofitable"]),
                                fix_splits=bool(self.params["fix_splits"]))
        build_seconds = time.perf_counter() - t0
        if not deadline.fits(g.n_arcs / ARCS_PER_SECOND):
            return _roots_only_at_limit(problem, g, deadline)
        check_fits(estimate_flow_memory(g.n_arcs, g.n_vertices),
                   f"the max-flow of solver='mincut' ({g.n_arcs:,} arcs after reductions)",
                   options="compile with cost_sample= (e.g. 'auto'), fewer rows or "
                           "shallower trees (max_depth)")
        W, K, slack = integer_capacities(g.weight)
        neg = W < 0
        n_arcs = g.n_arcs
        flow = _flow_network(max_flow.SimpleMaxFlow(), g, W)
        g.inf_tail = g.inf_head = None  # OR-Tools holds its own copy: free ours first
        t1 = time.perf_counter()
        status = flow.solve(SOURCE, SINK) if g.n_vertices > 2 else flow.OPTIMAL
        flow_seconds = time.perf_counter() - t1
        if status != flow.OPTIMAL:
            raise SolverError(f"OR-Tools max-flow returned status {status}")
        cut = int(flow.optimal_flow()) if g.n_vertices > 2 else 0
        source_side = flow.get_source_side_min_cut() if g.n_vertices > 2 else [SOURCE]
        del flow
        mask = g.mask_from_source_side(source_side, problem.n_nodes)
        breakdown = problem.evaluate(mask)  # solve() reuses it: the records are read once
        objective = breakdown.objective
        # min over closures of sum_S W = cut - sum of |negative W|; back to natural units
        closure_int = cut + int(W[neg].sum())
        bound = g.constant + closure_int / K - slack
        if verbose:
            print(f"[mincut] {g.n_vertices:,} vertices, {n_arcs:,} arcs; build "
                  f"{build_seconds:.2f}s, max-flow {flow_seconds:.2f}s; scale 2^"
                  f"{int(np.log2(K))}, rounding slack {slack:.3g}")
        info = {"graph": dict(g.stats, n_vertices=int(g.n_vertices), n_arcs=n_arcs),
                "scale_factor": K, "rounding_slack": slack, "build_seconds": build_seconds,
                "flow_seconds": flow_seconds, "_breakdown": breakdown}
        return SolveResult(split_mask=mask, objective=float(objective),
                           bound=float(min(bound, objective)), status="optimal", seconds=0.0,
                           iterations=None, max_fractionality=0.0, info=info)


def _roots_only_at_limit(problem, g, deadline):
    """The valid pruning mincut can return when its (uninterruptible) max-flow would
    outlast ``deadline``: every tree cut to its root, with the closure's trivial
    bound (the constant plus every negative vertex weight)."""
    mask = np.zeros(problem.n_nodes, dtype=bool)
    objective = problem.evaluate(mask).objective
    bound = g.constant + float(np.minimum(g.weight, 0.0).sum())
    estimate = g.n_arcs / ARCS_PER_SECOND
    info = {"note": f"the {deadline.left():.3g}s left of time_limit are shorter than the "
                    "max-flow needs "
                    f"(~{estimate:.2g}s for {g.n_arcs:,} arcs, and it cannot be interrupted): "
                    "returned every tree cut to its root; raise time_limit for the optimum",
            "n_arcs": g.n_arcs}
    return SolveResult(split_mask=mask, objective=float(objective),
                       bound=float(min(bound, objective)), status="time_limit", seconds=0.0,
                       iterations=None, max_fractionality=0.0, info=info)
