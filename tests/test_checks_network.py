"""Pruning LPs are certified TU by every applicable method; budget rows break TU."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import prune_opt as po
from prune_opt.checks import (
    budget_counterexample,
    cmr_available,
    exact_determinant,
    is_totally_unimodular,
    pruning_network_certificate,
)
from prune_opt.checks._exact import as_integer_matrix
from tests.forest_cases import forest_cases

HAS_CMR = cmr_available()[0]


def small_forest(seed=0, trees=2, depth=3, n=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 4))
    y = (X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=2 * n) > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed)
    return rf.fit(X[:n], y[:n]), X[n:], y[n:]


def check_counterexample(M, cex):
    sub = M[cex["rows"]][:, cex["columns"]].toarray()
    assert sub.tolist() == cex["submatrix"]
    det = exact_determinant(sub)
    assert det == cex["determinant"] and abs(det) >= 2


@given(case=forest_cases(max_examples=40))
@settings(max_examples=15)
def test_random_pruning_problems_are_certified_tu(case):
    problem = po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                                 lam=case["lam"], depth_cost=case["depth_cost"])
    rep = is_totally_unimodular(problem, method="network")
    assert rep.is_tu is True, rep.reason
    g = rep.certificate.graph
    M = problem.constraint_matrix()
    assert g.number_of_nodes() == M.shape[1] + 1 and nx.is_tree(g.to_undirected())
    assert len(g.graph["arcs"][0]) == M.shape[0]
    assert is_totally_unimodular(problem).method == "network"
    if HAS_CMR:
        assert is_totally_unimodular(problem, method="cmr", time_limit=60).is_tu is True
    assert is_totally_unimodular(problem, method="brute", time_limit=5).is_tu in (True, None)


def test_tiny_pruning_problem_is_tu_by_brute_force_and_ghouila_houri():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 1, 0, 1])
    tree = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y)
    problem = po.compile_problem(tree, X[:2], y[:2], lam=0.1)
    for method in ("network", "brute", "ghouila-houri", "auto"):
        assert is_totally_unimodular(problem, method=method).is_tu is True, method


def test_network_certificate_rejects_a_tampered_matrix():
    rf, X, y = small_forest()
    problem = po.compile_problem(rf, X, y, lam=0.01)
    M, _, _ = as_integer_matrix(problem)
    assert pruning_network_certificate(problem, M)[0] is not None
    bad = M.tolil()
    r, c = M[0].indices[0], M.shape[1] - 1
    bad[r, c] = 1  # an extra nonzero breaks the path of arc r
    cert, why = pruning_network_certificate(problem, bad.tocsr())
    assert cert is None and "did not match" in why


@pytest.mark.parametrize("costs", ["uniform", "real"])
def test_budget_row_gives_a_verified_structural_counterexample(costs):
    rf, X, y = small_forest(seed=1)
    c = None if costs == "uniform" else np.array([1.0, 2.5, 7.3, 0.4])
    problem = po.compile_problem(rf, X, y, costs=c, lam=0.0, budget=1.0, merge=costs == "uniform")
    M, _, notes = as_integer_matrix(problem)
    assert notes and "budget row" in notes[0]
    assert (M.data == np.round(M.data)).all()
    rep = is_totally_unimodular(problem)
    assert rep.is_tu is False and rep.method == "network"
    check_counterexample(M, rep.counterexample)
    assert len(rep.counterexample["rows"]) >= 2  # structural, not a 1x1 entry
    assert M.shape[0] - 1 in rep.counterexample["rows"]  # it goes through the budget row
    # without the budget row the same matrix is certified
    base = po.compile_problem(rf, X, y, costs=c, lam=0.0, merge=costs == "uniform")
    assert is_totally_unimodular(base).is_tu is True


def test_budget_counterexample_is_unimodular_entries_when_costs_are_equal():
    rf, X, y = small_forest(seed=2)
    problem = po.compile_problem(rf, X, y, lam=0.0, budget=2.0, merge=False)
    M, _, _ = as_integer_matrix(problem)
    assert set(np.unique(M.data)) <= {-1, 1}  # rows weigh 1: budget row of ones
    cex = budget_counterexample(problem, M)
    check_counterexample(M, cex)
    assert abs(cex["determinant"]) == 2
    rep = is_totally_unimodular(problem)
    assert rep.method == "network" and rep.tried[0]["verdict"] is None  # entries were fine


@pytest.mark.skipif(not HAS_CMR, reason="passagemath-cmr not installed")
def test_cmr_on_budget_problem_is_never_wrong():
    rf, X, y = small_forest(seed=3, n=30)
    problem = po.compile_problem(rf, X, y, lam=0.0, budget=1.5)
    M, _, _ = as_integer_matrix(problem)
    rep = is_totally_unimodular(problem, method="cmr", time_limit=30)
    assert rep.is_tu in (False, None)
    if rep.is_tu is False:
        check_counterexample(M, rep.counterexample)
    else:
        assert rep.reason


def test_network_certificate_on_a_ten_tree_full_depth_forest():
    rf, X, y = small_forest(seed=4, trees=10, depth=None, n=400)
    problem = po.compile_problem(rf, X, y, lam=0.01)
    rep = is_totally_unimodular(problem)
    assert rep.is_tu is True and rep.method == "network"
    assert rep.certificate.sizes["rows"] == problem.size()["n_rows"]
    assert sp.issparse(problem.constraint_matrix())


@given(case=forest_cases(max_examples=40))
@settings(max_examples=15)
def test_budget_rows_of_random_problems(case):
    """With a budget row the network method finds a verified cycle exactly when some
    tree has first uses of two different pairs with positive budget coefficient."""
    problem = po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                                 lam=0.0, budget=1.0)
    M, _, _ = as_integer_matrix(problem)
    b = M[M.shape[0] - 1].toarray().ravel()[problem.n_nodes + problem.n_uses:]
    tree = problem.forest.tree_of_node[problem.use_node]
    positive = b[problem.use_pair] > 0
    expect = any(np.unique(problem.use_pair[positive & (tree == t)]).size >= 2
                 for t in range(problem.n_trees))
    rep = is_totally_unimodular(problem, method="network")
    if expect:
        assert rep.is_tu is False
        check_counterexample(M, rep.counterexample)
        assert M.shape[0] - 1 in rep.counterexample["rows"]
    else:
        assert rep.is_tu is None and "budget row are TU" in rep.reason


@pytest.mark.skipif(not HAS_CMR, reason="passagemath-cmr not installed")
def test_known_cmr_input_error_falls_back_to_network():
    """passagemath-cmr 10.8.13 raises "User input error" on this budgeted matrix."""
    rf, X, y = small_forest(seed=1, trees=2, depth=3, n=30)
    problem = po.compile_problem(rf, X, y, lam=0.0, budget=1.5, merge=False)
    M, _, _ = as_integer_matrix(problem)
    rep = is_totally_unimodular(problem, method="cmr")
    assert rep.is_tu in (None, False)
    if rep.is_tu is None:
        assert rep.reason.startswith("CMR failed")
    else:
        check_counterexample(M, rep.counterexample)
    auto = is_totally_unimodular(problem)
    assert auto.is_tu is False
    check_counterexample(M, auto.counterexample)
