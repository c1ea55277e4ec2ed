"""The min-cut (maximum-weight closure) backends: exact agreement with the LP/IP
backends, valid prunings, certified bounds, exact graph reductions."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.program._problem import close_under_parents
from prune_opt.solvers._prefix_hubs import kept_counts, prefix_hubs
from prune_opt.solvers.mincut import (
    FINITE_TOTAL,
    _group_identical_sets,
    build_closure_graph,
    integer_capacities,
)
from tests.forest_cases import forest_cases
from tests.test_solvers_prefix_hubs import brute_pair_sets

LAMS = [0.0, 1e-7, 1e-5, 1e-3, 0.03, 1.0, 50.0, 1e6]


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


def compile_case(case, lam):
    return po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                              lam=lam, depth_cost=case["depth_cost"],
                              train=(case["X_train"], case["y_train"]))


@given(case=forest_cases(), lam=st.sampled_from(LAMS))
@settings(max_examples=25)
def test_mincut_agrees_with_lp_ip_and_networkx(case, lam):
    problem = compile_case(case, lam)
    ref = po.solve(problem, solver="cbc-ip").objective
    for name in ("mincut", "mincut-networkx", "highs"):
        got = po.solve(problem, solver=name)
        assert rel(got.objective, ref) <= 1e-9, (name, got.objective, ref)
        mask = problem.forest.check_split_mask(got.split_mask)
        assert np.array_equal(mask, close_under_parents(problem.forest, mask))  # valid
        assert got.objective == problem.evaluate(mask).objective
    cut = po.solve(problem, solver="mincut")
    bound = cut.solve_info["bound"]
    assert bound <= ref + 1e-12 * max(1.0, abs(ref))  # a lower bound on the true optimum
    assert rel(bound, cut.objective) <= 1e-9  # and a tight one
    assert cut.solve_info["max_fractionality"] == 0.0


@given(case=forest_cases(), lam=st.sampled_from(LAMS[1:]))
@settings(max_examples=15)
def test_reductions_keep_the_optimum(case, lam):
    problem = compile_case(case, lam)
    objs = []
    for fold in (False, True):
        for merge in (False, True):
            r = po.solve(problem, solver="mincut",
                         solver_options={"fold_single": fold, "merge_pairs": merge})
            objs.append(r.objective)
    assert max(objs) - min(objs) <= 1e-12 * max(1.0, abs(min(objs)))
    full = build_closure_graph(problem, fold_single=False, merge_pairs=False)
    red = build_closure_graph(problem)
    assert red.n_arcs <= full.n_arcs
    assert red.n_vertices <= full.n_vertices


@given(data=st.data())
@settings(max_examples=40)
def test_group_identical_sets_matches_brute_force(data):
    n_owner = data.draw(st.integers(1, 30))
    sets = [sorted(data.draw(st.sets(st.integers(0, 5), min_size=1, max_size=4)))
            for _ in range(n_owner)]
    owner = np.repeat(np.arange(n_owner), [len(s) for s in sets])
    member = np.array([m for s in sets for m in s])
    starts = np.concatenate([[0], np.cumsum([len(s) for s in sets])])
    rep = _group_identical_sets(owner, member, starts, rng_seed=data.draw(st.integers(0, 9)))
    first = {}
    for i, s in enumerate(sets):
        first.setdefault(tuple(s), i)
        assert sets[rep[i]] == s  # never merges different sets
        assert rep[i] == first[tuple(s)]  # always merges equal ones (no collision here)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=50),
       st.data())
@example([1.1125e-308], None)  # subnormal total: 2.0**log2(.) overflowed (fresh-clone CI)
@example([5e-324, -5e-324, 1.0], None)
@example([1.7e308, -1.7e308], None)
def test_integer_capacities_rounding_is_bounded(weights, data):
    w = np.array(weights)
    W, K, slack = integer_capacities(w)
    assert np.abs(W).sum() <= FINITE_TOTAL
    assert slack <= 0.5 * w.size / K
    assert np.isfinite(K) and K > 0
    if data is None:
        subset = np.ones(w.size, dtype=bool)
    else:
        subset = np.array(data.draw(st.lists(st.booleans(), min_size=w.size,
                                             max_size=w.size)))
    # exact rational arithmetic: the rounding error of any subset is within the slack
    exact = sum(Fraction(float(a)) - Fraction(int(b)) / Fraction(K)
                for a, b in zip(w[subset], W[subset]))
    assert abs(exact) <= Fraction(slack) * (1 + Fraction(1, 10**12))


@pytest.fixture(scope="module")
def iris_problem():
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=8, random_state=0).fit(X, y)
    return rf, X, y, po.compile_problem(rf, X, y, lam=0.02, costs=[1.0, 2.0, 3.0, 4.0])


def test_auto_uses_mincut(iris_problem):
    rf, X, y, _ = iris_problem
    pruned = po.prune(rf, X, y, lam=0.02, costs=[1.0, 2.0, 3.0, 4.0], solver="auto")
    assert pruned.solve_info["solver"] == "mincut"
    assert pruned.solve_info["status"] == "optimal"


def test_mincut_reports_graph_and_scale(iris_problem):
    problem = iris_problem[3]
    r = po.solve(problem, solver="mincut")
    g = r.solve_info["graph"]
    assert g["n_uses"] == problem.n_uses and g["n_pairs"] == problem.n_pairs
    K = r.solve_info["scale_factor"]
    assert np.log2(K) == int(np.log2(K))  # a power of two
    assert 0.0 <= r.solve_info["rounding_slack"] <= 0.5 * g["n_vertices"] / K


def test_too_short_time_limit_returns_the_roots_only_pruning_at_once(iris_problem):
    p = iris_problem[3]
    short = po.solve(p, solver="mincut", time_limit=1e-12)
    best = po.solve(p, solver="mincut", time_limit=60)
    assert short.n_splits == 0 and short.solve_info["status"] == "time_limit"
    assert short.solve_info["bound"] <= best.objective + 1e-12 <= short.objective + 1e-12
    assert "time_limit" in short.solve_info["note"]
    assert best.solve_info["status"] == "optimal"


def test_networkx_refuses_large_problems_naming_mincut(iris_problem):
    with pytest.raises(ValueError, match="'mincut'"):
        po.solve(iris_problem[3], solver="mincut-networkx", solver_options={"max_arcs": 10})
    with pytest.raises(ValueError, match="flow_func"):
        po.solve(iris_problem[3], solver="mincut-networkx",
                 solver_options={"flow_func": "nope"})


@pytest.mark.parametrize("flow_func", ["edmonds_karp", "dinitz", "boykov_kolmogorov"])
def test_networkx_flow_funcs_agree(iris_problem, flow_func):
    problem = iris_problem[3]
    ref = po.solve(problem, solver="mincut").objective
    got = po.solve(problem, solver="mincut-networkx", solver_options={"flow_func": flow_func})
    assert rel(got.objective, ref) <= 1e-9


def test_lam_zero_keeps_everything_with_in_bag_errors():
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, random_state=1).fit(X, y)
    pruned = po.prune(rf, X, y, lam=0.0, solver="mincut", train=(X, y))
    full = po.prune(rf, X, y, lam=0.0, solver="highs", train=(X, y))
    assert rel(pruned.objective, full.objective) <= 1e-9


@pytest.mark.slow
def test_real_costs_with_prerequisites_thyroid():
    from prune_opt.datasets import load_dataset

    ds = load_dataset("thyroid")
    rf = RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0)
    rf.fit(ds.X[:1500], ds.y[:1500])
    for lam in (1e-4, 3e-3):
        problem = po.compile_problem(rf, ds.X[1500:2500], ds.y[1500:2500], costs=ds.costs,
                                     lam=lam, train=(ds.X[:1500], ds.y[:1500]))
        a = po.solve(problem, solver="mincut")
        b = po.solve(problem, solver="highs")
        assert rel(a.objective, b.objective) <= 1e-9
        assert a.solve_info["gap"] <= 1e-9


@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_prefix_hubs_leave_out_dropped_nodes_without_a_copy(data):
    """Hubs built with ``drop`` (reading the records in place) give every live pair
    exactly its node set minus the dropped nodes."""
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
    drop = np.array(data.draw(st.lists(st.booleans(), min_size=n_nodes, max_size=n_nodes)))
    import prune_opt.solvers._prefix_hubs as hubs

    expected = [sum(not drop[h] for h in s) for s in sets]
    assert kept_counts(use, starts, drop).tolist() == expected
    block = data.draw(st.integers(1, 5))  # records counted across many small blocks
    old, hubs.BLOCK_RECORDS = hubs.BLOCK_RECORDS, block
    try:
        assert kept_counts(use, starts, drop).tolist() == expected
    finally:
        hubs.BLOCK_RECORDS = old
    new_use, new_starts, tails, heads, n_hub = prefix_hubs(
        use, starts, np.array(units), live, tree_of_node, n_nodes, drop=drop)
    got = brute_pair_sets(new_use, new_starts, tails, heads, n_nodes)
    for p in range(n_pairs):
        assert got[p] == ({h for h in sets[p] if not drop[h]} if live[p] else set())


@given(case=forest_cases(), lam=st.sampled_from(LAMS))
@settings(max_examples=15, deadline=None)
def test_hubs_over_dropped_records_keep_the_optimum(case, lam):
    """With hubs forced on small problems, dropping unprofitable nodes inside the hub
    build gives the same optimum as the plain graph (1e-9 relative)."""
    import prune_opt.solvers.mincut as mincut

    problem = compile_case(case, lam)
    plain = po.solve(problem, solver="mincut", solver_options={
        "fold_single": False, "merge_pairs": False, "prefix_hubs": False,
        "drop_unprofitable": False})
    old = mincut.HUB_MIN_RECORDS
    mincut.HUB_MIN_RECORDS = 0
    try:
        hubbed = po.solve(problem, solver="mincut")
    finally:
        mincut.HUB_MIN_RECORDS = old
    assert rel(hubbed.objective, plain.objective) <= 1e-9
