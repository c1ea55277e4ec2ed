"""The pruning-program certificate follows the problem's own row/column layout."""

import ast
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import prune_opt as po
import prune_opt.checks as checks
from prune_opt.checks import budget_counterexample, pruning_network_certificate
from prune_opt.checks._exact import as_integer_matrix
from tests.test_checks_network import small_forest
from tests.test_cli_registry import long_functions


def _problem(budget=None):
    rf, X, y = small_forest(seed=3, trees=2, depth=3)
    return po.compile_problem(rf, X, y, costs=[1.0, 2.0, 3.0, 4.0], lam=0.01, budget=budget)


def test_certificate_edges_and_arcs_follow_the_slices():
    problem = _problem()
    cert, why = pruning_network_certificate(problem)
    assert why == ""
    g = cert.graph
    vs, rs = problem.variable_slices(), problem.row_slices()
    lines = sorted(d["line"] for _, _, d in g.edges(data=True))
    assert lines == list(range(vs["w"].stop))  # one tree edge per column
    tail, head = g.graph["arcs"]
    assert tail.size == rs["coupling"].stop  # one arc per row
    assert (tail[rs["path"]] == 0).all()  # leaf-path rows start at the hub


def test_a_matrix_with_another_layout_is_refused_with_the_reason():
    problem = _problem()
    M, _, _ = as_integer_matrix(problem)
    extra = sp.vstack([M, M[:1]], format="csr")
    cert, why = pruning_network_certificate(problem, extra)
    assert cert is None and "rows" in why and "layout" in why
    cert, why = pruning_network_certificate(problem, M[:, :-1])
    assert cert is None and "columns" in why


def test_budget_cycle_rows_are_the_named_blocks():
    problem = _problem(budget=1.0)
    M, _, _ = as_integer_matrix(problem)
    cex = budget_counterexample(problem, M)
    assert cex is not None and abs(cex["determinant"]) >= 2
    rs, vs = problem.row_slices(), problem.variable_slices()

    def count(indices, block):
        return sum(i in range(block.start, block.stop) for i in indices)

    rows, cols = cex["rows"], cex["columns"]
    assert [count(rows, rs[b]) for b in ("budget", "coupling", "use", "path")] == [1, 2, 2, 0]
    assert [count(cols, vs[b]) for b in ("w", "wt", "z")] == [2, 2, 1]
    root = next(c for c in cols if c in range(vs["z"].start, vs["z"].stop))
    assert problem.forest.parent[root - vs["z"].start] == -1  # the root of a tree
    sub = M[cex["rows"]][:, cex["columns"]].toarray()
    assert np.array_equal(sub, np.array(cex["submatrix"]))


def test_no_hard_coded_offsets_in_the_pruning_module():
    source = Path(checks.__file__).with_name("_pruning_network.py").read_text()
    tree = ast.parse(source)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "row_slices" in source and "variable_slices" in source
    assert "w0" not in names and "brow" not in names


def test_no_checks_function_over_60_code_lines():
    assert long_functions(Path(checks.__file__).parent) == []
