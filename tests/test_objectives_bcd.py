"""Block coordinate descent: monotone, exact per block, honest about its objective."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt import Forest, PrunedForest
from prune_opt.objectives import (
    EnsembleState,
    best_tree_pruning,
    evaluate_objective,
    get_objective,
    optimize_ensemble,
    pruning_value,
)
from prune_opt.program._problem import close_under_parents
from tests.forest_cases import brute_force_cost, forest_cases, sklearn_tree_arrays

OBJECTIVES = ["brier", "logloss", "margin", "accuracy", "tree_error"]


@given(case=forest_cases(max_examples=40), objective=st.sampled_from(OBJECTIVES),
       init=st.sampled_from(["full", "paper"]))
def test_trace_monotone_and_result_matches_from_scratch(case, objective, init):
    est, X, y, costs = case["est"], case["X_val"], case["y_val"], case["costs"]
    lam = case["lam"]
    pf = optimize_ensemble(est, X, y, objective=objective, lam=lam, costs=costs, init=init,
                           depth_cost=case["depth_cost"])
    trace = np.array(pf.solve_info["trace"])
    assert np.all(np.diff(trace) <= 1e-9 * np.maximum(1.0, np.abs(trace[:-1])))
    assert pf.solve_info["iterations"] == trace.size - 1
    # from scratch: forest probabilities + lam * brute-force acquisition cost (+ depth)
    obj = get_objective(objective)
    forest = pf.forest
    cost = brute_force_cost(sklearn_tree_arrays(est), pf.split_masks, X, costs).mean()
    assert pf.solve_info["average_cost"] == pytest.approx(cost, rel=1e-9, abs=1e-12)
    if obj.separable:
        loss = pf.solve_info["loss"]
    else:
        loss = obj.loss(pf.predict_proba(X), np.searchsorted(forest.classes_, y)).mean()
    depth = pf.solve_info["average_depth"]
    expect = loss + lam * (cost + case["depth_cost"] * depth)
    assert pf.objective == pytest.approx(expect, rel=1e-9, abs=1e-12)
    assert pf.objective == pytest.approx(trace[-1], rel=1e-9, abs=1e-12)


@given(case=forest_cases(max_examples=40))
def test_paper_equivalent_losses_never_beat_min_cut(case):
    """tree_error + the same cost term is the paper's objective on (X, y): the exact
    min-cut optimum bounds every block-descent fixed point from below."""
    est, X, y, costs = case["est"], case["X_val"], case["y_val"], case["costs"]
    problem = po.compile_problem(est, X, y, costs=costs, lam=case["lam"],
                                 depth_cost=case["depth_cost"])
    exact = po.solve(problem, solver="mincut").objective
    pf = optimize_ensemble(problem, X, y, objective="tree_error", init="full")
    # the optimiser's own objective is the paper's objective, evaluated by the IR
    assert pf.objective == pytest.approx(problem.evaluate(pf.split_mask).objective,
                                         rel=1e-9, abs=1e-12)
    assert pf.solve_info["paper_objective"] >= exact - 1e-9 * max(1.0, abs(exact))


def tiny_forest(seed, n_trees=2, depth=2, n=30):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 3)).round(1)
    y = (X[:, 0] + X[:, 1] * rng.normal() + rng.normal(scale=0.7, size=2 * n) > 0).astype(int)
    y[rng.random(2 * n) < 0.1] = 2
    y[:3] = [0, 1, 2]
    rf = RandomForestClassifier(n_estimators=n_trees, max_depth=depth, random_state=seed,
                                max_features=2).fit(X[:n], y[:n])
    return rf, X[n:], y[n:]


def tree_prunings(forest, t):
    """Every local split mask of tree t."""
    sl = forest.tree_slice(t)
    internal = np.flatnonzero(~forest.is_leaf[sl])
    out = []
    for bits in itertools.product([False, True], repeat=internal.size):
        m = np.zeros(sl.stop - sl.start, dtype=bool)
        m[internal[list(bits)]] = True
        par = forest.parent[sl] - sl.start
        if all(not m[h] or par[h] < 0 or m[par[h]] for h in range(m.size)):
            out.append(m)
    return out


@settings(max_examples=10)  # brute force: every pruning of every tree, evaluated from scratch
@given(seed=st.integers(0, 2**31 - 1), objective=st.sampled_from(OBJECTIVES),
       lam=st.sampled_from([0.0, 0.01, 0.05, 0.2]), depth=st.integers(1, 2))
def test_each_block_step_is_optimal_given_the_others(seed, objective, lam, depth):
    rf, X, y = tiny_forest(seed, n_trees=3, depth=depth)
    f = Forest.from_sklearn(rf)
    costs = po.FeatureCosts([1.0, 2.0, 0.5])
    obj = get_objective(objective)
    rng = np.random.default_rng(seed)
    start = close_under_parents(f, rng.random(f.n_nodes) < 0.6) & ~f.is_leaf
    yi = np.searchsorted(f.classes_, y)
    state = EnsembleState(f, f.check_X(X), yi, np.ones(y.size), costs, obj, lam=lam)
    state.set_mask(start)
    J0 = state.breakdown()["objective"]
    for t in range(f.n_trees):
        L, k = state.block_terms(t)
        sl = f.tree_slice(t)
        value, tree_mask = best_tree_pruning(state.layouts[t], L, k)
        current = pruning_value(state.layouts[t], start[sl], L, k)
        brute = []
        for m in tree_prunings(f, t):
            full = start.copy()
            full[sl] = m
            pf = PrunedForest(f, full, costs=costs)
            brute.append(evaluate_objective(pf, X, y, objective=obj, lam=lam)["objective"])
        # the block problem is the true objective up to a constant, and the DP attains its min
        assert J0 - current + value == pytest.approx(min(brute), rel=1e-9, abs=1e-12)
        chosen = start.copy()
        chosen[sl] = tree_mask
        got = evaluate_objective(PrunedForest(f, chosen, costs=costs), X, y, objective=obj,
                                 lam=lam)["objective"]
        assert got == pytest.approx(min(brute), rel=1e-9, abs=1e-12)


def test_starts_and_fixed_point_bookkeeping():
    rf, X, y = tiny_forest(7, n_trees=4, depth=3, n=80)
    best = optimize_ensemble(rf, X, y, objective="brier", lam=0.02)
    assert set(best.solve_info["starts"]) == {"paper", "full"}
    assert best.objective == pytest.approx(min(best.solve_info["starts"].values()))
    assert best.solve_info["status"] == "converged"
    assert best.solve_info["trees_changed"][-1] == 0
    one = optimize_ensemble(rf, X, y, objective="brier", lam=0.02, max_iter=1, init="full")
    assert one.solve_info["iterations"] == 1
    again = optimize_ensemble(rf, X, y, objective="brier", lam=0.02, init=best)
    assert again.objective <= best.objective + 1e-12
    assert again.solve_info["iterations"] == 1  # a fixed point stays put


def test_optimize_ensemble_with_sample_weight_matches_duplication():
    rf, X, y = tiny_forest(11, n_trees=3, depth=3, n=50)
    w = np.arange(y.size) % 3
    a = optimize_ensemble(rf, X, y, objective="margin", lam=0.01, sample_weight=w,
                          init="full")
    keep = np.repeat(np.arange(y.size), w)
    b = optimize_ensemble(rf, X[keep], y[keep], objective="margin", lam=0.01, init="full")
    assert a.objective == pytest.approx(b.objective, rel=1e-9)
    assert np.array_equal(a.split_mask, b.split_mask)


@given(seed=st.integers(0, 2**31 - 1), objective=st.sampled_from(OBJECTIVES))
def test_breakdown_if_matches_installing_the_mask(seed, objective):
    rf, X, y = tiny_forest(seed, n_trees=3, depth=3, n=40)
    f = Forest.from_sklearn(rf)
    rng = np.random.default_rng(seed)
    close = close_under_parents
    a = close(f, rng.random(f.n_nodes) < 0.7) & ~f.is_leaf
    b = close(f, a & (rng.random(f.n_nodes) < 0.8))
    state = EnsembleState(f, f.check_X(X), np.searchsorted(f.classes_, y), np.ones(y.size),
                          po.FeatureCosts([1.0, 3.0, 0.5]), get_objective(objective),
                          lam=0.05, depth_cost=0.1)
    state.set_mask(a)
    guess = state.breakdown_if(b)
    state.set_mask(b)
    for key, value in state.breakdown().items():
        assert guess[key] == pytest.approx(value, rel=1e-12, abs=1e-12)


def test_unit_moves_escape_what_single_trees_cannot():
    """Two identical stumps on one feature: at a lam where dropping the feature pays,
    neither tree alone can save its cost, so only a unit move reaches the root."""
    stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
                 threshold=[0.0, 0, 0], value=[[3, 2], [3, 0], [0, 2]])
    f = Forest([stump, stump], classes=[0, 1], n_features=1)
    X = np.array([[-1.0], [-1.0], [-1.0], [1.0], [1.0]])
    y = np.array([0, 0, 0, 1, 1])
    kw = dict(objective="brier", lam=5.0, costs=[1.0], init="full")
    stuck = optimize_ensemble(f, X, y, **kw, unit_moves=False)
    assert stuck.n_splits == 2 and stuck.solve_info["iterations"] == 1
    assert stuck.solve_info["trees_changed"] == [0]
    moved = optimize_ensemble(f, X, y, **kw)
    assert moved.n_splits == 0
    assert moved.objective < stuck.objective



def test_init_from_another_forest_of_the_same_size_is_refused():
    """A pruning of a forest with the same nodes but other split features is not a start."""
    rf, X, y = tiny_forest(7, n_trees=2, depth=2, n=80)
    f = po.as_forest(rf)
    trees = []
    for t in range(f.n_trees):
        sl = f.tree_slice(t)
        left, right, feat = f.left[sl], f.right[sl], f.feature[sl]
        trees.append(dict(left=np.where(left >= 0, left - sl.start, -1),
                          right=np.where(right >= 0, right - sl.start, -1),
                          feature=np.where(feat >= 0, (feat + 1) % f.n_features, feat),
                          threshold=f.threshold[sl], value=f.value[sl]))
    other = Forest(trees, classes=f.classes_, n_features=f.n_features)
    assert other.n_nodes == f.n_nodes and not f.same_splits(other)
    with pytest.raises(ValueError, match="init is a pruning of another forest"):
        optimize_ensemble(rf, X, y, objective="brier", lam=0.02,
                          init=PrunedForest(other, other.full_split_mask()))
