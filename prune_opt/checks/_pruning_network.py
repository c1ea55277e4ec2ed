"""The network certificate of a pruning program, built from its layout.

The transpose of a :class:`~prune_opt.PruningProblem`'s constraint matrix is
a network matrix of this tree (``docs/math/tu.md``):

* a hub vertex ``rho``;
* tree node ``h`` hangs below its parent (roots below ``rho``) by the edge of
  column ``z_h``, directed downwards;
* every (row, unit) pair ``p`` is a vertex ``X_p`` with an edge ``X_p -> rho``
  for column ``w_p``;
* every first-use record ``u`` is a vertex ``Y_u`` with an edge ``Y_u -> rho``
  for column ``wt_u``.

Rows are arcs: the leaf-path row of leaf ``l`` is ``rho -> l``, the use row
``z(path to h_u) + wt_u = 1`` is ``Y_u -> h_u``, and the coupling row
``wt_u - w_p <= 0`` is ``Y_u -> X_p``.  Row and column positions come from
:meth:`PruningProblem.row_slices` and :meth:`PruningProblem.variable_slices`,
so a change of layout in the problem cannot silently break the certificate:
it is re-verified entry by entry against the matrix anyway.
"""

from __future__ import annotations

import time

import numpy as np

from ._exact import as_integer_matrix, verified_counterexample
from ._network import (
    NetworkCertificate,
    _digraph,
    generic_network_tu,
    verify_network_matrix,
)
from ._result import MethodResult

__all__ = ["pruning_network_certificate", "budget_counterexample", "network_tu"]


def _vertices(problem):
    """First vertex of each block: hub 0, tree nodes, pairs X_p, uses Y_u."""
    n, P = problem.n_nodes, problem.n_pairs
    return {"hub": 0, "tree_nodes": 1, "pairs": 1 + n, "uses": 1 + n + P,
            "end": 1 + n + P + problem.n_uses}


def _tree_edges(problem, vs, cols):
    """(parent, edge, down): each vertex's parent and the column of its edge."""
    f = problem.forest
    n, U, P = problem.n_nodes, problem.n_uses, problem.n_pairs
    v = _vertices(problem)
    parent = np.empty(v["end"], dtype=np.int64)
    edge = np.empty(v["end"], dtype=np.int64)
    parent[0], edge[0] = -1, -1
    nodes = slice(v["tree_nodes"], v["tree_nodes"] + n)
    parent[nodes] = np.where(f.parent >= 0, f.parent + v["tree_nodes"], v["hub"])
    edge[nodes] = vs["z"].start + np.arange(n)
    pairs, uses = slice(v["pairs"], v["pairs"] + P), slice(v["uses"], v["uses"] + U)
    parent[pairs], edge[pairs] = v["hub"], vs["w"].start + np.arange(P)
    parent[uses], edge[uses] = v["hub"], vs["wt"].start + np.arange(U)
    down = np.empty(cols, dtype=np.int64)
    down[vs["z"]], down[vs["wt"]], down[vs["w"]] = 1, -1, -1
    return parent, edge, down


def _tree_arcs(problem, rs, n_rows):
    """(tail, head) of the arc of every budget-free row, placed by ``row_slices``."""
    v = _vertices(problem)
    y = v["uses"] + np.arange(problem.n_uses)
    leaves = np.flatnonzero(problem.forest.is_leaf)
    tail = np.full(n_rows, -1, dtype=np.int64)
    head = np.full(n_rows, -1, dtype=np.int64)
    tail[rs["path"]], head[rs["path"]] = v["hub"], v["tree_nodes"] + leaves
    tail[rs["use"]], head[rs["use"]] = y, v["tree_nodes"] + problem.use_node
    tail[rs["coupling"]], head[rs["coupling"]] = y, v["pairs"] + problem.use_pair
    return tail, head


def _layout_problem(problem, M):
    """Why ``M`` does not have the problem's row/column layout, or ''."""
    rs, vs = problem.row_slices(), problem.variable_slices()
    n_rows = max(s.stop for s in rs.values())
    n_cols = max(s.stop for s in vs.values())
    if M.shape[0] != n_rows:
        return (f"the constraint matrix has {M.shape[0]} rows, the problem's layout "
                f"(leaf paths, first uses, couplings{', budget' if 'budget' in rs else ''}) "
                f"has {n_rows}")
    if M.shape[1] != n_cols:
        return f"the constraint matrix has {M.shape[1]} columns, the layout has {n_cols}"
    return ""


def pruning_network_certificate(problem, M=None):
    """Network certificate of the (budget-free) constraint matrix of a pruning problem.

    Parameters
    ----------
    problem : PruningProblem
    M : sparse integer matrix, optional
        The matrix to certify (default ``problem.constraint_matrix()``); the
        budget row, if the problem has one, is excluded.

    Returns
    -------
    (NetworkCertificate or None, str) : the certificate, or None and why.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> from prune_opt.checks import pruning_network_certificate
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    >>> cert, why = pruning_network_certificate(po.compile_problem(tree, X, y))
    >>> cert.kind, cert.transposed, why
    ('pruning-tree', True, '')
    """
    if M is None:
        M, _, _ = as_integer_matrix(problem)
    why = _layout_problem(problem, M)
    if why:
        return None, why
    rs, vs = problem.row_slices(), problem.variable_slices()
    rows = rs["coupling"].stop  # every row but the budget row
    core = M[:rows]
    parent, edge, down = _tree_edges(problem, vs, core.shape[1])
    tail, head = _tree_arcs(problem, rs, rows)
    ok, why = verify_network_matrix(core.T.tocsr(), parent, edge, down, tail, head)
    if not ok:
        return None, f"tree construction did not match the matrix: {why}"
    g = _digraph(parent, edge, down, tail, head)
    v = _vertices(problem)
    g.graph["vertex_blocks"] = {"hub": (0, 1), "tree_nodes": (v["tree_nodes"], v["pairs"]),
                                "pairs": (v["pairs"], v["uses"]), "uses": (v["uses"], v["end"])}
    desc = (f"transpose of the {rows}x{core.shape[1]} constraint matrix"
            f"{' without the budget row' if problem.budget is not None else ''} "
            "is a network matrix (hub + forest nodes + one vertex per (row, unit) pair and "
            "per first-use record)")
    return NetworkCertificate(kind="pruning-tree", transposed=True, graph=g, description=desc,
                              sizes={"rows": rows, "columns": int(core.shape[1])}), ""


def _budget_candidates(problem, M):
    """Per tree, its first-use records through a paid pair, cheapest coefficients first."""
    rs, vs = problem.row_slices(), problem.variable_slices()
    b = M[rs["budget"].start].toarray().ravel()
    coef = np.abs(b[vs["w"].start + problem.use_pair])
    tree = problem.forest.tree_of_node[problem.use_node]
    # smallest coefficients first: the submatrix is then {-1, 0, 1} when possible
    order = np.lexsort((problem.use_pair, coef, tree))
    order = order[coef[order] != 0]
    for t in np.unique(tree[order]):
        yield int(t), order[tree[order] == t]


def _budget_cycle(problem, t, u, v):
    """Rows and columns of the 5x5 submatrix closed by records u, v of tree t."""
    rs, vs = problem.row_slices(), problem.variable_slices()
    root = int(problem.forest.node_offset[t])
    rows = [rs["budget"].start, rs["coupling"].start + u, rs["coupling"].start + v,
            rs["use"].start + u, rs["use"].start + v]
    cols = [vs["w"].start + int(problem.use_pair[u]), vs["w"].start + int(problem.use_pair[v]),
            vs["wt"].start + u, vs["wt"].start + v, vs["z"].start + root]
    return rows, cols


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
    if problem.budget is None or _layout_problem(problem, M):
        return None
    tried = 0
    for t, recs in _budget_candidates(problem, M):
        pairs = problem.use_pair[recs]
        u = int(recs[0])
        for v in recs[pairs != pairs[0]][:max_candidates]:
            cex = verified_counterexample(M, *_budget_cycle(problem, t, u, int(v)))
            tried += 1
            if cex is not None:
                return cex
            if tried >= max_candidates:
                return None
    return None


def pruning_network_tu(problem, M):
    """The "network" method on a pruning program (see :func:`network_tu`)."""
    t0 = time.perf_counter()
    cert, why = pruning_network_certificate(problem, M)
    if cert is None:
        return MethodResult(None, reason=why)
    if problem.budget is None:
        return MethodResult(True, certificate=cert, summary=cert.summary(),
                            seconds_certificate=time.perf_counter() - t0)
    cex = budget_counterexample(problem, M)
    if cex is None:
        return MethodResult(None, certificate=cert,
                            reason="rows without the budget row are TU (network certificate) "
                            "but no violating cycle through the budget row was found")
    k = len(cex["rows"])
    return MethodResult(False, certificate=cert, counterexample=cex,
                        summary=f"rows without the budget row are TU ({cert.summary()}); the "
                        f"budget row closes an unbalanced cycle: {k}x{k} submatrix with "
                        f"determinant {cex['determinant']}")


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
    if problem is not None:
        return pruning_network_tu(problem, M)
    return generic_network_tu(M)
