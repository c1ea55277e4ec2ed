"""Exact graph reductions of the min-cut backend for large problems: prefix hubs
and unprofitable-node dropping keep the optimum of the reference graph."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import prune_opt as po
from prune_opt.program._problem import close_under_parents
from prune_opt.solvers import mincut
from prune_opt.solvers._prefix_hubs import prefix_hubs
from prune_opt.solvers.mincut import build_closure_graph, unprofitable_nodes
from tests.forest_cases import forest_cases

LAMS = [1e-5, 1e-3, 0.03, 1.0, 50.0]
ALL_OFF = {"fold_single": False, "merge_pairs": False, "prefix_hubs": False,
           "drop_unprofitable": False}


def compile_case(case, lam):
    return po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                              lam=lam, depth_cost=case["depth_cost"],
                              train=(case["X_train"], case["y_train"]))


@given(case=forest_cases(), lam=st.sampled_from(LAMS), hubs=st.booleans(),
       drop=st.booleans())
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # constant patch
def test_reduced_graph_keeps_the_reference_optimum(case, lam, hubs, drop, monkeypatch_hubs):
    problem = compile_case(case, lam)
    ref = po.solve(problem, solver="mincut", solver_options=ALL_OFF)
    got = po.solve(problem, solver="mincut",
                   solver_options={"prefix_hubs": hubs, "drop_unprofitable": drop})
    assert abs(got.objective - ref.objective) <= 1e-12 * max(1.0, abs(ref.objective))
    mask = problem.forest.check_split_mask(got.split_mask)
    assert np.array_equal(mask, close_under_parents(problem.forest, mask))
    assert got.solve_info["bound"] <= ref.objective + 1e-12 * max(1.0, abs(ref.objective))
    if hubs and problem.n_uses:
        assert "n_hubs" in got.solve_info["graph"]


@pytest.fixture
def monkeypatch_hubs():
    """Apply prefix hubs to every problem, however small."""
    old = mincut.HUB_MIN_RECORDS
    mincut.HUB_MIN_RECORDS = 0
    yield
    mincut.HUB_MIN_RECORDS = old


def test_hubs_shrink_a_real_forest_and_agree_with_highs(monkeypatch_hubs):
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=15, random_state=0).fit(X[:900], y[:900])
    p = po.compile_problem(rf, X[900:], y[900:], lam=3e-3)
    full = build_closure_graph(p)
    red = build_closure_graph(p, prefix_hubs=True, drop_unprofitable=True)
    assert red.stats["n_hubs"] > 0 and red.n_arcs < full.n_arcs
    a = po.solve(p, solver="mincut")
    b = po.solve(p, solver="highs")
    assert abs(a.objective - b.objective) <= 1e-9 * abs(b.objective)


def brute_pair_sets(use, starts, tails, heads, n_nodes):
    """Set of original nodes each pair depends on, following the hub arcs."""
    into = {}
    for t, h in zip(tails.tolist(), heads.tolist()):
        into.setdefault(h, []).append(t)

    def expand(v):
        if v < n_nodes:
            return {v}
        return set().union(*(expand(t) for t in into[v]))

    return [set().union(*(expand(v) for v in use[starts[p]:starts[p + 1]].tolist()))
            if starts[p + 1] > starts[p] else set() for p in range(starts.size - 1)]


@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_prefix_hubs_keep_every_pairs_node_set(data):
    n_trees = data.draw(st.integers(1, 6))
    per_tree = data.draw(st.integers(1, 4))
    n_nodes = n_trees * per_tree
    tree_of_node = np.repeat(np.arange(n_trees), per_tree)
    n_pairs = data.draw(st.integers(1, 25))
    sets, units = [], []
    for _ in range(n_pairs):
        pick = [data.draw(st.sampled_from([None] + list(range(t * per_tree, (t + 1) * per_tree))))
                for t in range(n_trees)]
        sets.append(sorted(h for h in pick if h is not None) or [0])
        units.append(data.draw(st.integers(0, 2)))
    use = np.array([h for s in sets for h in s])
    starts = np.concatenate([[0], np.cumsum([len(s) for s in sets])])
    live = np.array(data.draw(st.lists(st.booleans(), min_size=n_pairs, max_size=n_pairs)))
    new_use, new_starts, tails, heads, n_hub = prefix_hubs(
        use, starts, np.array(units), live, tree_of_node, n_nodes)
    assert new_use.size + tails.size <= use.size + 2 * n_pairs  # never much larger
    assert (heads >= n_nodes).all() and np.unique(heads).size == n_hub
    got = brute_pair_sets(new_use, new_starts, tails, heads, n_nodes)
    for p in range(n_pairs):
        assert got[p] == (set(sets[p]) if live[p] else set())


@given(case=forest_cases(), lam=st.sampled_from(LAMS))
@settings(max_examples=20, deadline=None)
def test_unprofitable_nodes_are_cut_by_some_optimum(case, lam):
    problem = compile_case(case, lam)
    off = unprofitable_nodes(problem.forest, problem.closure_data()["split_weight"])
    assert not off[problem.forest.is_leaf].any()
    ref = po.solve(problem, solver="mincut", solver_options=ALL_OFF)
    restricted = problem.evaluate(ref.split_mask & ~off).objective
    assert restricted <= ref.objective + 1e-12 * max(1.0, abs(ref.objective))
