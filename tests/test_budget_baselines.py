"""Baselines: valid masks, sklearn-identical CCP, GreedyPrune steps, sub-forests,
and cost accounting identical to BudgetPrune's."""

import numpy as np
import pytest
from hypothesis import given, settings
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import prune_opt as po
from prune_opt.budget import (
    BASELINES,
    baseline_curve,
    ccp_prunings,
    feature_prefix_prunings,
    fewer_trees_prunings,
    get_baseline,
    greedy_prunings,
    impurity_threshold_prunings,
    sub_forest,
)
from prune_opt.budget._baselines import ccp_alphas, ccp_masks, node_impurity, node_risk
from prune_opt.program._problem import close_under_parents
from tests.forest_cases import brute_force_cost, forest_cases, sklearn_tree_arrays


def _data(seed=0, n=200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 6)).round(2)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=2 * n) > 0).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


@pytest.mark.parametrize("seed", [0, 1])
def test_ccp_matches_sklearn_ccp_alpha(seed):
    Xt, yt, X, _ = _data(seed)
    tree = DecisionTreeClassifier(random_state=seed).fit(Xt, yt)
    path = tree.cost_complexity_pruning_path(Xt, yt)
    f = po.Forest.from_sklearn(tree)
    risk = node_risk(f)
    masks = ccp_masks(f, risk, path.ccp_alphas[:-1])
    for alpha, mask in zip(path.ccp_alphas[:-1], masks):
        ref = DecisionTreeClassifier(random_state=seed, ccp_alpha=alpha).fit(Xt, yt)
        pf = po.PrunedForest(f, mask)
        assert 2 * mask.sum() + 1 == ref.tree_.node_count
        np.testing.assert_array_equal(pf.predict_proba(X), ref.predict_proba(X))


@settings(max_examples=15)
@given(case=forest_cases(max_examples=40))
def test_baseline_masks_valid_and_costs_exact(case):
    est, X = case["est"], case["X_val"]
    costs = case["costs"]
    problem = po.compile_problem(est, X, case["y_val"], costs=costs)
    seqs = {
        "ccp": ccp_prunings(est, costs=costs),
        "greedy": greedy_prunings(est, X, case["y_val"], problem=problem),
        "impurity": impurity_threshold_prunings(est, costs=costs),
    }
    arrays = sklearn_tree_arrays(est)
    for name, seq in seqs.items():
        assert seq[-1][1].n_splits == 0, name  # every path ends at the roots
        prev = np.inf
        for _, pf in seq:
            problem.forest.check_split_mask(pf.split_mask)  # closed, no leaf splits
            cost = pf.acquisition_cost(X, costs)
            np.testing.assert_allclose(cost, brute_force_cost(arrays, pf.split_masks, X, costs))
            # the same accounting as BudgetPrune's objective
            assert cost.mean() == pytest.approx(problem.evaluate(pf.split_mask).average_cost,
                                                rel=1e-12, abs=1e-12)
            if name != "greedy":
                assert pf.n_splits <= prev  # nested: larger alpha / threshold, fewer splits
                prev = pf.n_splits
    for m, pf in fewer_trees_prunings(est, costs=costs):
        np.testing.assert_allclose(pf.acquisition_cost(X, costs),
                                   brute_force_cost(arrays[:m], pf.split_masks, X, costs))


def test_greedy_removes_one_feature_per_step():
    Xt, yt, X, y = _data(2)
    rf = RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0).fit(Xt, yt)
    costs = [1.0, 2.0, 3.0, 1.0, 5.0, 0.5]
    seq = greedy_prunings(rf, X, y, costs=costs)
    f = po.Forest.from_sklearn(rf)
    prev_used = set(np.unique(f.feature[f.full_split_mask()]).tolist())
    prev_cost = np.inf
    for k, pf in seq:
        used = set(np.unique(f.feature[pf.split_mask]).tolist())
        if k:
            gone = pf.solve_info["removed"][-1]
            assert gone not in used and used <= prev_used - {gone}
        c = pf.average_cost(X)
        assert c <= prev_cost + 1e-12
        prev_used, prev_cost = used, c
    # the first removal is the best ratio among all single-feature removals
    problem = po.compile_problem(rf, X, y, costs=costs)
    full = problem.evaluate(f.full_split_mask())
    ratios = {}
    for k in prev_used | set(np.unique(f.feature[f.full_split_mask()]).tolist()):
        bd = problem.evaluate(close_under_parents(f, f.full_split_mask() & (f.feature != k)))
        saved = full.average_cost - bd.average_cost
        if saved > 0:
            ratios[k] = (bd.error_term - full.error_term) / saved
    assert seq[1][1].solve_info["removed"][0] == min(ratios, key=ratios.get)


def test_fewer_trees_is_a_sub_forest():
    Xt, yt, X, _ = _data(3)
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(Xt, yt)
    seq = fewer_trees_prunings(rf, sizes=[2, 5])
    assert [m for m, _ in seq] == [5, 2]
    two = seq[1][1]
    ref = np.mean([t.predict_proba(X) for t in rf.estimators_[:2]], axis=0)
    np.testing.assert_allclose(two.predict_proba(X), ref, rtol=1e-12)
    assert two.average_cost(X) <= seq[0][1].average_cost(X)
    with pytest.raises(ValueError, match="m must be"):
        sub_forest(rf, 0)


def test_impurity_threshold_and_forest_without_estimator():
    Xt, yt, X, y = _data(4)
    rf = RandomForestClassifier(n_estimators=3, max_depth=5, random_state=0).fit(Xt, yt)
    f = po.Forest.from_sklearn(rf)
    imp = node_impurity(f)
    for thr, pf in impurity_threshold_prunings(rf, thresholds=[0.1, 0.3]):
        kept = pf.split_mask
        assert np.all(imp[kept] > thr)
    # a forest without sklearn impurities prunes on the problem's error data
    bare = sub_forest(rf, 3)
    with pytest.raises(ValueError, match="problem="):
        ccp_prunings(bare)
    problem = po.compile_problem(bare, X, y)
    seq = ccp_prunings(bare, problem=problem)
    assert seq[0][1].n_splits > 0 and seq[-1][1].n_splits == 0


def test_baseline_curve_rows():
    Xt, yt, X, y = _data(5)
    rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(Xt, yt)
    rows = baseline_curve(ccp_prunings(rf), X, y=y, X_eval=X, y_eval=y, method="ccp")
    assert {"method", "param", "average_cost", "accuracy", "accuracy_eval",
            "cost_eval"} <= set(rows.columns)
    np.testing.assert_allclose(rows["accuracy"], rows["accuracy_eval"])
    assert rows["average_cost"].iloc[-1] == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_baseline_pruning_lies_below_the_budgetprune_hull(seed):
    from prune_opt.budget import tradeoff_curve

    Xt, yt, X, y = _data(seed, n=150)
    rf = RandomForestClassifier(n_estimators=4, max_depth=4, random_state=seed).fit(Xt, yt)
    costs = po.FeatureCosts([1.0, 2.0, 4.0, 0.5, 3.0, 1.0], groups={"g": (2.0, [2, 4])})
    problem = po.compile_problem(rf, X, y, costs=costs, train=(Xt, yt))
    curve = tradeoff_curve(problem, solver="highs")
    hc, he = np.asarray(curve["average_cost"])[::-1], np.asarray(curve["error_term"])[::-1]
    fams = (ccp_prunings(rf, costs=costs) + greedy_prunings(rf, X, y, problem=problem)
            + impurity_threshold_prunings(rf, costs=costs))
    for _, pf in fams:
        bd = problem.evaluate(pf.split_mask)
        assert bd.error_term >= np.interp(bd.average_cost, hc, he) - 1e-12


def test_registry_dispatch_matches_the_functions():
    Xt, yt, X, y = _data(6, n=120)
    rf = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(Xt, yt)
    costs = po.FeatureCosts([1.0, 2.0, 4.0, 0.5, 3.0, 1.0])
    problem = po.compile_problem(rf, X, y, costs=costs)
    direct = {"ccp": ccp_prunings(rf, costs=costs),
              "greedy": greedy_prunings(rf, X, y, problem=problem),
              "fewer-trees": fewer_trees_prunings(rf, costs=costs),
              "impurity": impurity_threshold_prunings(rf, costs=costs),
              "feature-prefix": feature_prefix_prunings(rf, X, y, problem=problem)}
    assert set(BASELINES) == set(direct)
    for name, ref in direct.items():
        got = get_baseline(name)(rf, X, y, costs=costs, problem=problem)
        assert [p for p, _ in got] == [p for p, _ in ref], name
        for (_, a), (_, b) in zip(got, ref):
            assert a.n_trees == b.n_trees and np.array_equal(a.split_mask, b.split_mask)
            assert np.array_equal(a.costs.unit_costs, costs.unit_costs)


def test_unknown_baseline_lists_the_known_ones():
    with pytest.raises(ValueError, match="known baselines: ccp, greedy, fewer-trees, impurity, feature-prefix"):
        get_baseline("cegb")


def test_cegb_curve_moved_with_a_pointer():
    import prune_opt.budget as budget

    with pytest.raises(AttributeError, match="forest_builders.cegb.cegb_curve"):
        budget.cegb_curve  # noqa: B018


def test_distinct_prunings_only():
    Xt, yt, _, _ = _data(7)
    rf = RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(Xt, yt)
    for seq in (ccp_prunings(rf, alphas=[0.0, 0.0, 1e-9, 0.5, 10.0]),
                impurity_threshold_prunings(rf, thresholds=[-1.0, -1.0, 0.0, 0.9, 2.0])):
        keys = [pf.split_mask.tobytes() for _, pf in seq]
        assert len(keys) == len(set(keys)) and seq[-1][1].n_splits == 0
        params = [p for p, _ in seq]
        assert params == sorted(params)


def test_baseline_curve_is_always_a_dataframe():
    import pandas as pd

    Xt, yt, X, y = _data(8)
    rf = RandomForestClassifier(n_estimators=2, random_state=0).fit(Xt, yt)
    empty = baseline_curve([], X, y=y, X_eval=X, y_eval=y, method="none")
    assert isinstance(empty, pd.DataFrame) and len(empty) == 0
    assert {"average_cost", "accuracy", "accuracy_eval", "cost_eval"} <= set(empty.columns)
    with pytest.raises(ValueError, match="together"):
        baseline_curve(fewer_trees_prunings(rf), X, X_eval=X)


def test_a_registered_baseline_is_a_candidate_everywhere():
    """One registry: a family registered once is seeded into the budget search,
    scored as a candidate of every fit_budget objective, and listed in BASELINES
    (the CLI's and the benchmarks' list)."""
    from prune_opt.budget import BASELINES, register_baseline
    from prune_opt.budget._baselines import MASK_FAMILIES

    Xt, yt, X, y = _data(3)
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(Xt, yt)
    costs = [1.0, 2.0, 3.0, 1.0, 5.0, 0.5]
    calls = []

    @register_baseline("dummy-first-tree")
    def first_tree_only(problem):
        """Keep the first tree whole, cut the others to their root."""
        calls.append(problem)
        f = problem.forest
        mask = f.full_split_mask()
        mask[f.node_offset[1]:] = False
        return [mask, np.zeros(f.n_nodes, dtype=bool)]

    try:
        assert "dummy-first-tree" in BASELINES
        seq = BASELINES["dummy-first-tree"](rf, X, y, costs=costs)
        assert len(seq) == 2 and seq[1][1].n_splits == 0
        one_tree = seq[0][1].average_cost(X)
        paper = po.fit_budget(rf, X, y, costs=costs, budget=one_tree, objective="paper",
                              time_limit=5)
        assert "baseline:dummy-first-tree" in paper.solve_info["candidates"]
        brier = po.fit_budget(rf, X, y, costs=costs, budget=one_tree, objective="brier",
                              time_limit=5)
        losses = brier.solve_info["candidates_loss"]
        assert "baseline:dummy-first-tree" in losses
        assert brier.solve_info["ensemble_loss"] <= losses["baseline:dummy-first-tree"]
        assert calls
    finally:
        MASK_FAMILIES.pop("dummy-first-tree", None)
    assert "dummy-first-tree" not in BASELINES


def test_baselines_take_the_problems_costs_when_costs_is_left_out():
    """With problem= and no costs=, every baseline's prunings are costed with the
    problem's costs (they used one per feature)."""
    from prune_opt.budget import BASELINES

    Xt, yt, X, y = _data(4)
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(Xt, yt)
    costs = po.FeatureCosts([1.0, 20.0, 3.0, 1.0, 50.0, 0.5])
    problem = po.compile_problem(rf, X, y, costs=costs)
    for name in BASELINES:
        for _, pf in BASELINES[name](rf, X, y, problem=problem):
            expected = pf.average_cost(X, costs)
            assert pf.average_cost(X) == pytest.approx(expected, rel=1e-12, abs=1e-12), name


def _ccp_mask(forest, risk, alpha):
    """Reference: the smallest minimiser of ``R + alpha * #leaves`` at one alpha, by a
    bottom-up dynamic programme over the internal nodes, deepest first."""
    internal = np.flatnonzero(~forest.is_leaf)
    best = risk + alpha
    keep = np.zeros(forest.n_nodes, dtype=bool)
    for d in range(forest.max_depth, -1, -1):
        ids = internal[forest.depth[internal] == d]
        below = best[forest.left[ids]] + best[forest.right[ids]]
        keep[ids] = below < best[ids] - np.finfo(float).eps * 10
        best[ids] = np.minimum(best[ids], below)
    return close_under_parents(forest, keep)


def test_ccp_family_on_a_very_deep_tree_is_the_per_alpha_mask(monkeypatch):
    """The vectorised cost-complexity path equals the per-alpha dynamic programme at
    every alpha, also on a tree thousands of levels deep (one pass over the levels
    per block of alphas) and with several blocks."""
    import prune_opt.budget._baselines as bm

    n = 1500
    X = np.arange(n, dtype=float)[:, None]
    y = np.arange(n) % 2
    tree = DecisionTreeClassifier(random_state=0, splitter="best").fit(X, y)
    f = po.Forest.from_sklearn(tree)
    assert f.max_depth > 500
    risk = node_risk(f)
    alphas = ccp_alphas(f, risk, 40)
    monkeypatch.setattr(bm, "CCP_BLOCK_CELLS", 7 * f.n_nodes)  # blocks of 7 alphas
    for a, m in zip(alphas, ccp_masks(f, risk, alphas)):
        np.testing.assert_array_equal(m, _ccp_mask(f, risk, float(a)))


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_baseline_curve_scores_on_routed_rows_exactly_as_the_pruned_forest(task):
    """baseline_curve routes the rows once and scores every pruning on them; each row
    equals the PrunedForest's own score and average cost."""
    from sklearn.ensemble import RandomForestRegressor

    from prune_opt.budget import BASELINES, baseline_curve

    Xt, yt, X, y = _data(5)
    if task == "regression":
        yt, y = Xt[:, 0] + Xt[:, 1], X[:, 0] + X[:, 1]
        rf = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(Xt, yt)
    else:
        rf = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(Xt, yt)
    costs = [1.0, 2.0, 3.0, 1.0, 5.0, 0.5]
    for name in BASELINES:
        seq = BASELINES[name](rf, X, y, costs=costs)
        curve = baseline_curve(seq, X, y=y, X_eval=Xt, y_eval=yt, method=name)
        score = "r2" if task == "regression" else "accuracy"
        for (_, pf), (_, row) in zip(seq, curve.iterrows()):
            assert row["average_cost"] == pf.average_cost(X)
            assert row[score] == pf.score(X, y)
            assert row[f"{score}_eval"] == pf.score(Xt, yt)
            assert row["cost_eval"] == pf.average_cost(Xt)
