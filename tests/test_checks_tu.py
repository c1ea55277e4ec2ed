"""is_totally_unimodular on known TU / non-TU families; all methods agree with brute force."""

import json
from itertools import combinations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from prune_opt.checks import (
    METHODS,
    brute_force_tu,
    cmr_available,
    equitable_bicoloring,
    exact_determinant,
    find_2x2_violation,
    is_totally_unimodular,
    scale_rows_to_integers,
    verified_counterexample,
    verify_network_matrix,
)

HAS_CMR = cmr_available()[0]
DECIDING = ["network", "brute", "ghouila-houri"] + (["cmr"] if HAS_CMR else [])
TRIANGLE = np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]])


# ---------------------------------------------------------------- generators
def random_tree(rng, n_vertices):
    """Random rooted tree: parent pointers, parent index < child index."""
    parent = np.array([-1] + [int(rng.integers(0, v)) for v in range(1, n_vertices)])
    return parent


def network_matrix(rng, n_vertices, n_arcs):
    """Network matrix of a random directed tree (edges = rows) and random arcs."""
    parent = random_tree(rng, n_vertices)
    down = rng.choice([-1, 1], size=n_vertices - 1)
    edge = np.arange(-1, n_vertices - 1)  # vertex v joins its parent by edge v-1

    def root_path(v):
        out = set()
        while parent[v] >= 0:
            out.add(v - 1)
            v = parent[v]
        return out

    tail = rng.integers(0, n_vertices, size=n_arcs)
    head = rng.integers(0, n_vertices, size=n_arcs)
    N = np.zeros((n_vertices - 1, n_arcs), dtype=int)
    for a in range(n_arcs):  # independent slow construction, by walking paths
        up, dn = root_path(tail[a]), root_path(head[a])
        for e in up - dn:
            N[e, a] = -down[e]
        for e in dn - up:
            N[e, a] = down[e]
    return N, (parent, edge, down, tail, head)


def interval_matrix(rng, m, n):
    A = np.zeros((m, n), dtype=int)
    for j in range(n):
        a, b = sorted(rng.integers(0, m + 1, size=2))
        A[a:b, j] = rng.choice([-1, 1])
    return A


def bipartite_incidence(rng, left, right, n_edges):
    A = np.zeros((left + right, n_edges), dtype=int)
    for k in range(n_edges):
        A[rng.integers(left), k] = 1
        A[left + rng.integers(right), k] = 1
    return A


def odd_cycle_incidence(k):
    C = np.zeros((k, k), dtype=int)
    for i in range(k):
        C[i, i] = C[(i + 1) % k, i] = 1
    return C


def naive_is_tu(A):
    """All square subdeterminants, exactly (for tiny matrices)."""
    m, n = A.shape
    for k in range(1, min(m, n) + 1):
        for R in combinations(range(m), k):
            for C in combinations(range(n), k):
                if exact_determinant(A[np.ix_(R, C)]) not in (-1, 0, 1):
                    return False
    return True


def assert_valid_counterexample(A, rep):
    cex = rep.counterexample
    assert cex is not None
    sub = np.asarray(sp.csr_matrix(A)[cex["rows"]][:, cex["columns"]].toarray())
    assert sub.tolist() == cex["submatrix"]
    assert exact_determinant(sub) == cex["determinant"]
    assert abs(cex["determinant"]) >= 2


# ---------------------------------------------------------------- exact helpers
def test_exact_determinant_matches_numpy_on_random_integer_matrices():
    rng = np.random.default_rng(1)
    for k in range(1, 7):
        for _ in range(20):
            M = rng.integers(-3, 4, size=(k, k))
            assert exact_determinant(M) == int(round(np.linalg.det(M)))


def test_exact_determinant_is_exact_beyond_float_precision():
    M = np.diag([10**9, 10**9, 10**9]).astype(object)
    assert exact_determinant(M) == 10**27


def test_scale_rows_to_integers_is_exact_and_primitive():
    A = np.array([[1.0, 0.0, 0.0], [0.25, 0.5, 1.25], [22.78, 0.0, 11.39]])
    S, f = scale_rows_to_integers(A)
    assert S.toarray().tolist() == [[1, 0, 0], [1, 2, 5], [2, 0, 1]]
    assert set(f) == {1, 2}
    with pytest.raises(ValueError, match="rational"):
        scale_rows_to_integers(np.array([[1.2345678901e-7, 1.0]]))


def test_non_integer_input_is_rejected_with_a_fix():
    with pytest.raises(ValueError, match="scale_rows_to_integers"):
        is_totally_unimodular(np.array([[0.5, 1.0]]))
    with pytest.raises(ValueError, match="method must be one of"):
        is_totally_unimodular(TRIANGLE, method="magic")
    with pytest.raises(ValueError, match="time_limit"):
        is_totally_unimodular(TRIANGLE, time_limit=0)
    with pytest.raises(ValueError, match="2-D"):
        is_totally_unimodular(np.ones(3))


# ---------------------------------------------------------------- known families
@pytest.mark.parametrize("seed", range(6))
def test_network_matrices_of_random_trees_are_tu(seed):
    rng = np.random.default_rng(seed)
    N, tree = network_matrix(rng, n_vertices=int(rng.integers(3, 7)),
                             n_arcs=int(rng.integers(2, 7)))
    ok, why = verify_network_matrix(sp.csr_matrix(N), *tree)
    assert ok, why
    for method in ("brute", "ghouila-houri") + (("cmr",) if HAS_CMR else ()):
        assert is_totally_unimodular(N, method=method).is_tu is True, method
        assert is_totally_unimodular(N.T, method=method).is_tu is True, method
    assert is_totally_unimodular(N).is_tu is True
    assert naive_is_tu(N)


def test_verify_network_matrix_rejects_a_wrong_entry():
    N, tree = network_matrix(np.random.default_rng(3), 6, 6)
    nz = np.argwhere(N != 0)[0]
    bad = N.copy()
    bad[tuple(nz)] *= -1
    ok, why = verify_network_matrix(sp.csr_matrix(bad), *tree)
    assert not ok and "differs" in why
    parent, edge, down, tail, head = tree
    cyc = parent.copy()
    cyc[0], cyc[1] = 1, -1  # re-root wrongly: vertex 1 is not reachable as a root of this
    assert not verify_network_matrix(sp.csr_matrix(N), cyc, edge, down, tail, head)[0]


@pytest.mark.parametrize("seed", range(5))
def test_interval_and_bipartite_matrices_are_certified_by_network(seed):
    rng = np.random.default_rng(seed)
    for A in (interval_matrix(rng, 7, 9), bipartite_incidence(rng, 3, 4, 8)):
        rep = is_totally_unimodular(A, method="network")
        assert rep.is_tu is True
        assert rep.certificate.graph.number_of_edges() in A.shape
        assert is_totally_unimodular(A, method="brute").is_tu is True
        if A.shape[0] <= 8:
            assert naive_is_tu(A)


@pytest.mark.parametrize("k", [3, 5, 7])
def test_odd_cycles_are_not_tu_and_even_cycles_are(k):
    C = odd_cycle_incidence(k)
    for method in ("auto", "brute", "ghouila-houri") + (("cmr",) if HAS_CMR else ()):
        rep = is_totally_unimodular(C, method=method)
        assert rep.is_tu is False, method
        assert_valid_counterexample(C, rep)
    assert is_totally_unimodular(odd_cycle_incidence(k + 1), method="brute").is_tu is True
    assert is_totally_unimodular(odd_cycle_incidence(k + 1), method="network").is_tu is True


def test_triangle_counterexample_and_report_formats():
    rep = is_totally_unimodular(TRIANGLE)
    assert rep.is_tu is False and rep.counterexample["determinant"] == 2
    assert rep.counterexample["rows"] == [0, 1, 2]
    text = str(rep)
    assert "NOT totally unimodular" in text and "determinant 2" in text
    d = json.loads(json.dumps(rep.to_dict()))
    assert d["is_tu"] is False and d["counterexample"]["submatrix"] == TRIANGLE.tolist()
    order = [t["method"] for t in d["tried"]]
    # cheapest decisive first: CMR (when installed) before the network patterns
    assert order[:3] == ["entries", "cmr", "network"] or order == ["entries", "cmr"]
    assert [t["method"] for t in d["timings"]] == order
    assert all(t["seconds"] >= 0 for t in d["timings"])
    assert "time per method" in text
    assert equitable_bicoloring(TRIANGLE) is None


def test_cheap_checks_find_entry_and_2x2_violations():
    A = np.array([[1, 0, 0], [0, 2, 1]])
    rep = is_totally_unimodular(A)
    assert rep.method == "entries" and rep.counterexample["submatrix"] == [[2]]
    B = np.zeros((6, 6), dtype=int)
    B[np.ix_([1, 4], [2, 5])] = [[1, 1], [1, -1]]
    hit = find_2x2_violation(B)
    assert hit.rows == [1, 4] and hit.columns == [2, 5] and abs(hit.determinant) == 2
    rep = is_totally_unimodular(B)
    assert rep.is_tu is False and rep.method == ("cmr" if HAS_CMR else "2x2")
    assert_valid_counterexample(B, rep)


def test_auto_runs_the_2x2_scan_only_when_nothing_cheaper_decided(monkeypatch):
    """With CMR installed it settles a plain matrix first and the quadratic 2x2 scan
    never runs; without CMR the scan finds the violation."""
    import prune_opt.checks._cmr as cmr_mod

    B = np.zeros((6, 6), dtype=int)
    B[np.ix_([1, 4], [2, 5])] = [[1, 1], [1, -1]]
    if HAS_CMR:
        rep = is_totally_unimodular(B)
        assert "2x2" not in [t["method"] for t in rep.tried]
        N, _ = network_matrix(np.random.default_rng(3), 25, 20)
        rep = is_totally_unimodular(N)
        assert rep.is_tu is True and rep.method in ("cmr", "network")
        assert [t["method"] for t in rep.tried] == ["entries", "cmr"]

    def missing():
        raise ImportError("No module named 'sage'")

    monkeypatch.setattr(cmr_mod, "_import_cmr", missing)
    rep = is_totally_unimodular(B)
    assert rep.is_tu is False and rep.method == "2x2"
    assert [t["method"] for t in rep.tried] == ["entries", "cmr", "network", "2x2"]
    assert rep.tried[1]["seconds"] == 0.0 and "not installed" in rep.tried[1]["note"]
    assert_valid_counterexample(B, rep)


def test_pruning_problem_is_certified_by_its_network_before_cmr():
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    import prune_opt as po

    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    rep = is_totally_unimodular(po.compile_problem(rf, X, y, lam=0.01))
    assert rep.is_tu is True and rep.method == "network"
    assert [t["method"] for t in rep.timings] == ["entries", "network"]


def test_brute_force_limits_give_none_not_a_verdict():
    rng = np.random.default_rng(0)
    A = rng.integers(-1, 2, size=(30, 30))
    rep = is_totally_unimodular(A, method="brute")
    assert rep.is_tu is None and "max_submatrices" in rep.reason
    rep = is_totally_unimodular(A, method="ghouila-houri")
    assert rep.is_tu is None and "limit" in rep.reason
    # a TU matrix too big for brute force, with a tiny time limit
    T = np.triu(np.ones((12, 12), dtype=int))
    res = brute_force_tu(T, time_limit=1e-4, max_submatrices=10**9)
    assert res.verdict in (None, True)


def test_verified_counterexample_rejects_unimodular_submatrix():
    assert verified_counterexample(TRIANGLE, [0, 1], [0, 1]) is None


# ---------------------------------------------------------------- agreement with brute force
small_matrices = st.integers(1, 6).flatmap(
    lambda m: st.integers(1, 6).flatmap(
        lambda n: st.lists(st.sampled_from([-1, 0, 0, 1]), min_size=m * n, max_size=m * n)
        .map(lambda v: np.array(v, dtype=int).reshape(m, n))))


@given(A=small_matrices)
@settings(max_examples=60)
def test_every_method_agrees_with_brute_force(A):
    truth = naive_is_tu(A)
    ref = is_totally_unimodular(A, method="brute")
    assert ref.is_tu is truth
    for method in METHODS:
        rep = is_totally_unimodular(A, method=method)
        assert rep.is_tu in (None, truth), method  # undecided is allowed, wrong is not
        if rep.is_tu is False:
            assert_valid_counterexample(A, rep)
    for method in ("brute", "ghouila-houri", "auto"):
        assert is_totally_unimodular(A, method=method).is_tu is truth, method


@given(A=small_matrices)
@settings(max_examples=30)
def test_sparse_and_dense_inputs_agree(A):
    d = is_totally_unimodular(A)
    s = is_totally_unimodular(sp.csc_matrix(A))
    assert d.is_tu == s.is_tu and d.method == s.method


@pytest.mark.skipif(not HAS_CMR, reason="passagemath-cmr not installed")
def test_cmr_failure_is_reported_as_undecided():
    # an entry 3 is outside CMR's ternary input domain: it must not crash or lie
    rep = is_totally_unimodular(np.array([[3, 1], [0, 1]]), method="cmr")
    assert rep.is_tu in (None, False)
    if rep.is_tu is False:
        assert_valid_counterexample(np.array([[3, 1], [0, 1]]), rep)
    else:
        assert rep.reason


def test_auto_without_cmr_reports_undecided_with_reasons(monkeypatch):
    import prune_opt.checks._cmr as cmr_mod

    def missing():
        raise ImportError("No module named 'sage'")

    monkeypatch.setattr(cmr_mod, "_import_cmr", missing)
    assert cmr_available()[0] is False and "prune-opt[tu]" in cmr_available()[1]
    rep = is_totally_unimodular(TRIANGLE, method="cmr")
    assert rep.is_tu is None and "pip install prune-opt[tu]" in rep.reason
    N, _ = network_matrix(np.random.default_rng(7), 31, 30)  # TU, but too big for brute / GH
    rep = is_totally_unimodular(N, max_submatrices=10**5, max_lines=10)
    assert rep.is_tu in (None, True)
    if rep.is_tu is None:
        assert rep.method == "auto" and "brute" in rep.reason and "ghouila-houri" in rep.reason
        assert "reason:" in str(rep)
    cmr_note = [t for t in rep.tried if t["method"] == "cmr"]
    assert cmr_note and "not installed" in cmr_note[0]["note"]


@given(A=small_matrices)
@settings(max_examples=40)
def test_2x2_search_matches_naive_minors(A):
    naive = any(abs(exact_determinant(A[np.ix_(R, C)])) == 2
                for R in combinations(range(A.shape[0]), 2)
                for C in combinations(range(A.shape[1]), 2))
    hit = find_2x2_violation(A)
    assert (hit is not None) == naive
    if hit is not None:
        assert abs(exact_determinant(A[np.ix_(hit.rows, hit.columns)])) == 2
        assert hit.determinant == exact_determinant(np.array(hit.submatrix))
