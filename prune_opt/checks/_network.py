"""Network-matrix certificates of total unimodularity.

A matrix ``N`` is a *network matrix* when there is a directed tree whose
edges index the rows of ``N`` and a list of arcs (pairs of tree vertices)
indexing its columns such that ``N[e, a]`` is +1 when tree edge ``e`` lies on
the tree path of arc ``a`` in its own direction, -1 in the opposite
direction, 0 off the path.  Network matrices are totally unimodular, and so
are their transposes.  A certificate is therefore checkable without trusting
how it was found: recompute every path from the tree and compare with the
matrix, entry by entry.

For a :class:`~prune_opt.PruningProblem` the transpose of the constraint
matrix is a network matrix of the tree described in ``docs/math/tu.md``:

* a hub vertex ``rho``;
* tree node ``h`` hangs below its parent (roots below ``rho``) by the edge of
  column ``z_h``, directed downwards;
* every (row, unit) pair ``p`` is a vertex ``X_p`` with an edge ``X_p -> rho``
  for column ``w_p``;
* every first-use record ``u`` is a vertex ``Y_u`` with an edge ``Y_u -> rho``
  for column ``wt_u``.

Rows are arcs: the leaf-path row of leaf ``l`` is ``rho -> l``, the use row
``z(path to h_u) + wt_u = 1`` is ``Y_u -> h_u``, and the coupling row
``wt_u - w_p <= 0`` is ``Y_u -> X_p``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ._brute import MethodResult
from ._exact import as_integer_matrix, verified_counterexample

__all__ = ["NetworkCertificate", "verify_network_matrix", "network_tu",
           "pruning_network_certificate", "budget_counterexample"]


@dataclass
class NetworkCertificate:
    """A verified network representation (the matrix or its transpose).

    Attributes
    ----------
    kind : str
        "pruning-tree", "incidence" or "interval".
    transposed : bool
        True when the network matrix is the transpose of the checked matrix
        (tree edges = its columns, arcs = its rows).
    graph : networkx.DiGraph
        The directed tree; edges carry ``line`` (index of the matrix line the
        edge stands for); ``graph.graph["arcs"]`` is the (tail, head) array of
        the arcs, one per line of the other side.
    description : str
    """

    kind: str
    transposed: bool
    graph: object
    description: str
    sizes: dict = field(default_factory=dict)

    def summary(self):
        g = self.graph
        return (f"{self.description}; directed tree with {g.number_of_nodes()} vertices and "
                f"{g.number_of_edges()} edges, {len(g.graph['arcs'][0])} arcs checked")


def _root_paths(parent, edge, n_edges):
    """CSR (n_vertices, n_edges): row v marks the tree edges on the root path of v.

    One vectorized step per tree level; raises ValueError on a cycle.
    """
    nv = parent.size
    rows, cols = [], []
    alive = np.flatnonzero(parent >= 0)
    cur_alive = alive.copy()
    steps = 0
    while alive.size:
        rows.append(alive)
        cols.append(edge[cur_alive])
        nxt = parent[cur_alive]
        keep = parent[nxt] >= 0
        alive, cur_alive = alive[keep], nxt[keep]
        steps += 1
        if steps > nv:
            raise ValueError("parent pointers contain a cycle")
    r = np.concatenate(rows) if rows else np.zeros(0, int)
    c = np.concatenate(cols) if cols else np.zeros(0, int)
    return sp.csr_matrix((np.ones(r.size, dtype=np.int64), (r, c)), shape=(nv, n_edges))


def verify_network_matrix(N, parent, edge, down, tail, head):
    """Check that ``N`` is the network matrix of the given tree and arcs.

    Parameters
    ----------
    N : sparse (n_edges, n_arcs) integer matrix
    parent : int array (n_edges + 1,)
        Parent vertex of each vertex, -1 for the single root.
    edge : int array (n_edges + 1,)
        Row of ``N`` (tree edge) joining each non-root vertex to its parent;
        every row must be used exactly once.
    down : array of +-1 (n_edges,)
        +1 when edge ``e`` is directed parent -> child.
    tail, head : int arrays (n_arcs,)
        Arc endpoints.

    Returns
    -------
    (bool, str) : verdict and, when False, the first discrepancy.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> N = sp.csr_matrix(np.array([[1, -1], [1, 0]]))   # path 0 -> 1 -> 2
    >>> verify_network_matrix(N, np.array([-1, 0, 1]), np.array([-1, 0, 1]),
    ...                       np.array([1, 1]), np.array([0, 1]), np.array([2, 0]))
    (True, '')
    """
    N = sp.csr_matrix(N, dtype=np.int64)
    n_edges, n_arcs = N.shape
    parent, edge = np.asarray(parent, dtype=np.int64), np.asarray(edge, dtype=np.int64)
    down, tail, head = (np.asarray(a, dtype=np.int64) for a in (down, tail, head))
    if parent.size != n_edges + 1 or edge.size != n_edges + 1:
        return False, f"a tree on {n_edges} edges needs {n_edges + 1} vertices"
    if int((parent < 0).sum()) != 1:
        return False, "the tree must have exactly one root"
    nonroot = parent >= 0
    if not np.array_equal(np.sort(edge[nonroot]), np.arange(n_edges)):
        return False, "every matrix line must be exactly one tree edge"
    if tail.size != n_arcs or head.size != n_arcs:
        return False, f"need {n_arcs} arcs"
    if np.abs(down).max(initial=1) != 1 or (down == 0).any():
        return False, "edge orientations must be +-1"
    try:
        R = _root_paths(parent, edge, n_edges)
    except ValueError as exc:
        return False, str(exc)
    paths = (R[head] - R[tail]).T.tocsr()  # (n_edges, n_arcs)
    paths = sp.csr_matrix(paths.multiply(down[:, None]), dtype=np.int64)
    diff = (paths - N).tocoo()
    diff.eliminate_zeros()
    if diff.nnz:
        return False, (f"entry ({int(diff.row[0])}, {int(diff.col[0])}) differs from the tree "
                       "path of its arc")
    return True, ""


def _digraph(parent, edge, down, tail, head, labels=None):
    import networkx as nx

    g = nx.DiGraph()
    nv = parent.size
    g.add_nodes_from(range(nv))
    child = np.flatnonzero(parent >= 0)
    par = parent[child]
    e = edge[child]
    fwd = down[e] > 0
    src = np.where(fwd, par, child)
    dst = np.where(fwd, child, par)
    g.add_edges_from((int(a), int(b), {"line": int(k)}) for a, b, k in zip(src, dst, e))
    if labels is not None:
        nx.set_node_attributes(g, labels, "kind")
    g.graph["arcs"] = (np.asarray(tail), np.asarray(head))
    return g


# ------------------------------------------------------------------ generic matrices
def _star(N):
    """Arcs when every column of N has at most one +1 and one -1 (an incidence matrix)."""
    N = sp.csc_matrix(N, dtype=np.int64)
    if N.nnz and np.abs(N.data).max() > 1:
        return None
    n_edges, n_arcs = N.shape
    col = np.repeat(np.arange(n_arcs), np.diff(N.indptr))
    pos, neg = N.data > 0, N.data < 0
    if (np.bincount(col[pos], minlength=n_arcs) > 1).any() or \
            (np.bincount(col[neg], minlength=n_arcs) > 1).any():
        return None
    head = np.zeros(n_arcs, dtype=np.int64)
    tail = np.zeros(n_arcs, dtype=np.int64)
    head[col[pos]] = N.indices[pos] + 1
    tail[col[neg]] = N.indices[neg] + 1
    parent = np.concatenate([[-1], np.zeros(n_edges, dtype=np.int64)])
    edge = np.concatenate([[-1], np.arange(n_edges)])
    return parent, edge, np.ones(n_edges, dtype=np.int64), tail, head


def _row_signs(N):
    """Row signs s making ``diag(s) N`` an incidence matrix, for <= 2 nonzeros per column.

    Two nonzeros of a column in rows i, j force ``s_i = -s_j`` when they
    have the same sign and ``s_i = s_j`` otherwise (Heller-Tompkins).  The
    constraints are propagated along a breadth-first forest of the row
    graph (pointer jumping, O(log depth) vectorized rounds) and then all
    checked.  Returns None when some column has more nonzeros or the
    constraints conflict.
    """
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    C = sp.csc_matrix(N, dtype=np.int64)
    m = C.shape[0]
    cnt = np.diff(C.indptr)
    if (cnt > 2).any() or (C.nnz and np.abs(C.data).max() > 1):
        return None
    two = np.flatnonzero(cnt == 2)
    i, j = C.indices[C.indptr[two]], C.indices[C.indptr[two] + 1]
    same = C.data[C.indptr[two]] == C.data[C.indptr[two] + 1]
    par = np.where(same, -1, 1)  # required s_i * s_j
    # super-root m joined to one row of every component gives one BFS forest
    G = sp.coo_matrix((np.ones(i.size), (i, j)), shape=(m, m))
    _, comp = connected_components(G, directed=False)
    firsts = np.unique(comp, return_index=True)[1]
    H = sp.coo_matrix((np.ones(i.size + firsts.size),
                       (np.concatenate([i, np.full(firsts.size, m)]),
                        np.concatenate([j, firsts]))), shape=(m + 1, m + 1))
    H = (H + H.T).tocsr()
    _, pred = breadth_first_order(H, m, directed=False, return_predecessors=True)
    # parity of each BFS tree edge (v, pred[v]); edges to the super-root are free (+1)
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    edge_par = sp.csr_matrix((par.astype(float), (lo, hi)), shape=(m + 1, m + 1))
    # parity of each vertex's BFS tree edge; pointer jumping multiplies them up to the
    # super-root in O(log depth) vectorized rounds
    p = pred.astype(np.int64)
    p[m] = m
    if (p[:m] < 0).any():
        return None
    v = np.arange(m)
    a, b = np.minimum(v, p[:m]), np.maximum(v, p[:m])
    e = np.sign(np.asarray(edge_par[a, b]).ravel()).astype(np.int64)
    acc = np.ones(m + 1, dtype=np.int64)
    acc[:m] = np.where(p[:m] == m, 1, e)
    anc = p.copy()
    while (anc != m).any():
        acc = acc * acc[anc]
        anc = anc[anc]
    s = acc[:m]
    if (s[i] * s[j] != par).any():
        return None
    return s


def _signed_star(N):
    s = _row_signs(N)
    if s is None:
        return None
    built = _star(sp.diags(s.astype(float)) @ sp.csr_matrix(N, dtype=float))
    return None if built is None else (*built, s)


def _interval(N):
    """Arcs when the consecutive row differences of N form an incidence matrix.

    Then ``N = L (D N)`` with ``L`` the all-ones lower triangle: a network
    matrix of the directed path ``0 -> 1 -> ... -> m`` (columns are signed
    intervals of consecutive rows).
    """
    N = sp.csr_matrix(N, dtype=np.int64)
    m = N.shape[0]
    D = sp.eye(m, dtype=np.int64, format="csr") - sp.eye(m, k=-1, dtype=np.int64, format="csr")
    DN = sp.csc_matrix(D @ N)
    DN.eliminate_zeros()
    if DN.nnz and np.abs(DN.data).max() > 1:
        return None
    n_arcs = N.shape[1]
    col = np.repeat(np.arange(n_arcs), np.diff(DN.indptr))
    pos, neg = DN.data > 0, DN.data < 0
    if (np.bincount(col[pos], minlength=n_arcs) > 1).any() or \
            (np.bincount(col[neg], minlength=n_arcs) > 1).any():
        return None
    tail = np.full(n_arcs, m, dtype=np.int64)
    head = np.full(n_arcs, m, dtype=np.int64)
    tail[col[pos]] = DN.indices[pos]
    head[col[neg]] = DN.indices[neg]
    parent = np.arange(-1, m, dtype=np.int64)
    edge = np.arange(-1, m, dtype=np.int64)
    return parent, edge, np.ones(m, dtype=np.int64), tail, head


_PATTERNS = {
    "incidence": "each column has at most one +1 and one -1 (incidence matrix of a directed "
                 "graph)",
    "signed-incidence": "after negating some rows, each column has at most one +1 and one -1 "
                        "(rows 2-colored, Heller-Tompkins)",
    "interval": "consecutive row differences leave at most one +1 and one -1 per column "
                "(signed intervals: a directed path)",
}


def _verify_path_network(N, tail, head):
    """Exact check that N is the network matrix of the directed path 0 -> 1 -> ... -> m.

    Arc (t, h) covers path edges min(t, h) .. max(t, h) - 1 with sign +1 when
    t < h.  Built in one vectorized pass (the generic root-path check would
    need O(m^2) memory on a path).
    """
    N = sp.csr_matrix(N, dtype=np.int64)
    m, n_arcs = N.shape
    lo, hi = np.minimum(tail, head), np.maximum(tail, head)
    length = hi - lo
    cols = np.repeat(np.arange(n_arcs), length)
    starts = np.repeat(lo - np.concatenate([[0], np.cumsum(length)[:-1]]), length)
    rows = starts + np.arange(int(length.sum()))
    vals = np.repeat(np.where(tail < head, 1, -1), length)
    P = sp.csr_matrix((vals, (rows, cols)), shape=(m, n_arcs), dtype=np.int64)
    diff = (P - N).tocoo()
    diff.eliminate_zeros()
    if diff.nnz:
        return False, (f"entry ({int(diff.row[0])}, {int(diff.col[0])}) differs from the path "
                       "of its arc")
    return True, ""


def _generic_certificate(M):
    attempts = []
    for kind, builder in (("incidence", _star), ("signed-incidence", _signed_star),
                          ("interval", _interval)):
        for transposed in (False, True):
            N = M.T.tocsr() if transposed else M  # N: tree edges are its rows
            side = "transpose" if transposed else "matrix"
            built = builder(N)
            if built is None:
                attempts.append(f"{kind} ({side}): pattern does not fit")
                continue
            extra = {}
            if kind == "signed-incidence":
                *built, signs = built
                N = sp.csr_matrix(sp.diags(signs.astype(float)) @ N, dtype=np.int64)
                extra["negated_lines"] = np.flatnonzero(signs < 0).tolist()
            if kind == "interval":
                ok, why = _verify_path_network(N, built[3], built[4])
            else:
                ok, why = verify_network_matrix(N, *built)
            if not ok:  # the builders' pattern tests are exact; keep the check honest
                attempts.append(f"{kind} ({side}): {why}")
                continue
            desc = f"the {side} is a network matrix: {_PATTERNS[kind]}"
            g = _digraph(*built)
            g.graph.update(extra)
            return NetworkCertificate(kind=kind, transposed=transposed, graph=g,
                                      description=desc), attempts
    return None, attempts


# ------------------------------------------------------------------ pruning problems
def _pruning_tree(problem, n_rows_checked):
    f = problem.forest
    n, U, P = problem.n_nodes, problem.n_uses, problem.n_pairs
    n_cols = n + U + P
    x0, y0 = 1 + n, 1 + n + P  # first X_p and Y_u vertex
    parent = np.empty(n_cols + 1, dtype=np.int64)
    edge = np.empty(n_cols + 1, dtype=np.int64)
    parent[0], edge[0] = -1, -1
    parent[1:1 + n] = np.where(f.parent >= 0, f.parent + 1, 0)
    edge[1:1 + n] = np.arange(n)
    parent[x0:x0 + P] = 0
    edge[x0:x0 + P] = n + U + np.arange(P)
    parent[y0:y0 + U] = 0
    edge[y0:y0 + U] = n + np.arange(U)
    down = np.concatenate([np.ones(n, dtype=np.int64), -np.ones(U + P, dtype=np.int64)])
    leaves = np.flatnonzero(f.is_leaf)
    y = y0 + np.arange(U)
    tail = np.concatenate([np.zeros(leaves.size, dtype=np.int64), y, y])
    head = np.concatenate([1 + leaves, 1 + problem.use_node, x0 + problem.use_pair])
    if tail.size != n_rows_checked:
        return None
    labels = {0: "hub"}
    return parent, edge, down, tail, head, labels


def pruning_network_certificate(problem, M=None):
    """Network certificate of the (budget-free) constraint matrix of a pruning problem.

    Parameters
    ----------
    problem : PruningProblem
    M : sparse integer matrix, optional
        The matrix to certify (default ``problem.constraint_matrix()``); a
        budget row, if present as the last row, is excluded.

    Returns
    -------
    (NetworkCertificate or None, str) : the certificate, or None and why.
    """
    if M is None:
        M, _, _ = as_integer_matrix(problem)
    rows = M.shape[0] - (1 if problem.budget is not None else 0)
    core = M[:rows]
    built = _pruning_tree(problem, rows)
    if built is None:
        return None, ("the constraint matrix does not have the expected row layout "
                      "(leaf paths, first uses, couplings)")
    parent, edge, down, tail, head, labels = built
    if core.shape[1] + 1 != parent.size:
        return None, "the constraint matrix does not have the expected column layout"
    ok, why = verify_network_matrix(core.T.tocsr(), parent, edge, down, tail, head)
    if not ok:
        return None, f"tree construction did not match the matrix: {why}"
    g = _digraph(parent, edge, down, tail, head)
    n, P = problem.n_nodes, problem.n_pairs
    g.graph["vertex_blocks"] = {"hub": (0, 1), "tree_nodes": (1, 1 + n),
                                "pairs": (1 + n, 1 + n + P),
                                "uses": (1 + n + P, parent.size)}
    desc = (f"transpose of the {rows}x{core.shape[1]} constraint matrix"
            f"{' without the budget row' if problem.budget is not None else ''} "
            "is a network matrix (hub + forest nodes + one vertex per (row, unit) pair and "
            "per first-use record)")
    return NetworkCertificate(kind="pruning-tree", transposed=True, graph=g, description=desc,
                              sizes={"rows": rows, "columns": int(core.shape[1])}), ""


def budget_counterexample(problem, M, max_candidates=50):
    """A structural violating submatrix through the budget row (>= 2x2).

    Two first-use records ``u, v`` of one tree with distinct (row, unit) pairs
    ``p, q`` of positive budget coefficient close the cycle
    budget - w_p - coupling_u - wt_u - use_u - z_root - use_v - wt_v -
    coupling_v - w_q - budget, a 5x5 submatrix with determinant
    ``+-(b_p + b_q)`` (at least 2).  Candidates are verified exactly.

    Returns
    -------
    counterexample dict or None
    """
    if problem.budget is None:
        return None
    f = problem.forest
    n, U = problem.n_nodes, problem.n_uses
    L = int(f.is_leaf.sum())
    brow = M.shape[0] - 1
    b = M[brow].toarray().ravel()
    w0 = n + U
    pos = b[w0 + problem.use_pair] != 0
    tree = f.tree_of_node[problem.use_node]
    coef = np.abs(b[w0 + problem.use_pair])
    # smallest coefficients first: the submatrix is then {-1, 0, 1} when possible
    order = np.lexsort((problem.use_pair, coef, tree))
    order = order[pos[order]]
    tried = 0
    for t in np.unique(tree[order]):  # one pass per tree
        recs = order[tree[order] == t]
        pairs = problem.use_pair[recs]
        first = recs[0]
        others = recs[pairs != pairs[0]]
        for v in others[:max_candidates]:
            u = first
            root = int(f.node_offset[t])
            rows = [brow, L + U + u, L + U + v, L + u, L + v]
            cols = [w0 + problem.use_pair[u], w0 + problem.use_pair[v], n + u, n + v, root]
            cex = verified_counterexample(M, rows, cols)
            tried += 1
            if cex is not None:
                return cex
            if tried >= max_candidates:
                return None
    return None


def network_tu(M, problem=None):
    """The "network" method: a verified network certificate, else undecided.

    For a pruning problem the pruning tree is tried; with a budget row the
    budget-free rows are certified and a structural violating submatrix
    through the budget row is searched.  Other matrices are tested for the
    incidence, signed-incidence (rows 2-colored) and interval
    (consecutive-ones) patterns, on the matrix and its transpose.

    Returns
    -------
    MethodResult
    """
    t0 = time.perf_counter()
    if problem is not None:
        cert, why = pruning_network_certificate(problem, M)
        if cert is None:
            return MethodResult(None, reason=why)
        if problem.budget is None:
            return MethodResult(True, certificate=cert, summary=cert.summary(),
                                seconds_certificate=time.perf_counter() - t0)
        cex = budget_counterexample(problem, M)
        if cex is not None:
            k = len(cex["rows"])
            return MethodResult(False, certificate=cert, counterexample=cex,
                                summary=f"rows without the budget row are TU ({cert.summary()})"
                                f"; the budget row closes an unbalanced cycle: {k}x{k} submatrix "
                                f"with determinant {cex['determinant']}")
        return MethodResult(None, certificate=cert,
                            reason="rows without the budget row are TU (network certificate) "
                            "but no violating cycle through the budget row was found")
    cert, attempts = _generic_certificate(M)
    if cert is None:
        return MethodResult(None, reason="no network pattern found (" + "; ".join(attempts)
                            + "); general network-matrix recognition needs cmr")
    return MethodResult(True, certificate=cert, summary=cert.summary())
