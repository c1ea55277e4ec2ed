"""Network-matrix certificates of total unimodularity (generic matrices).

A matrix ``N`` is a *network matrix* when there is a directed tree whose
edges index the rows of ``N`` and a list of arcs (pairs of tree vertices)
indexing its columns such that ``N[e, a]`` is +1 when tree edge ``e`` lies on
the tree path of arc ``a`` in its own direction, -1 in the opposite
direction, 0 off the path.  Network matrices are totally unimodular, and so
are their transposes.  A certificate is therefore checkable without trusting
how it was found: recompute every path from the tree and compare with the
matrix, entry by entry (:func:`verify_network_matrix`).

This module recognises three cheap patterns, on a matrix and on its
transpose: incidence matrices of directed graphs, incidence matrices after
negating some rows (Heller-Tompkins 2-colouring) and signed intervals of
consecutive rows (a directed path).  The tree of a pruning program is built
from the program's layout in :mod:`prune_opt.checks._pruning_network`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ._result import MethodResult

__all__ = ["NetworkCertificate", "verify_network_matrix", "generic_network_certificate",
           "generic_network_tu"]


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
    return _compare_paths(paths, N, "the tree path of its arc")


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
    return _compare_paths(P, N, "the path of its arc")


def _compare_paths(paths, N, what):
    """``(True, "")`` when the arcs' signed paths are ``N``, else the first entry that differs."""
    diff = (paths - N).tocoo()
    diff.eliminate_zeros()
    if diff.nnz:
        return False, f"entry ({int(diff.row[0])}, {int(diff.col[0])}) differs from {what}"
    return True, ""


def generic_network_certificate(M):
    """A verified network certificate of ``M`` from the cheap patterns, or None.

    Returns
    -------
    (NetworkCertificate or None, list of str) : the certificate and, per
    pattern tried, why it did not fit.

    Examples
    --------
    >>> import numpy as np
    >>> cert, _ = generic_network_certificate(np.array([[1, -1, 0], [0, 1, -1]]))
    >>> cert.kind, cert.transposed
    ('incidence', False)
    """
    M = sp.csr_matrix(M, dtype=np.int64)
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


def generic_network_tu(M):
    """The "network" method on a matrix that is not a pruning program.

    Returns
    -------
    MethodResult
        True with a verified certificate, or None (undecided) naming the
        patterns tried.
    """
    cert, attempts = generic_network_certificate(M)
    if cert is None:
        return MethodResult(None, reason="no network pattern found (" + "; ".join(attempts)
                            + "); general network-matrix recognition needs cmr")
    return MethodResult(True, certificate=cert, summary=cert.summary())
