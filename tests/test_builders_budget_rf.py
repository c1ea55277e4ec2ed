"""BudgetRandomForestClassifier: GreedyTree rule, routing, budget growth, pruning."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import load_iris, make_classification
from sklearn.utils.estimator_checks import parametrize_with_checks

import prune_opt as po
from forest_builders._impurity import threshold_pairs
from forest_builders._splits import candidate_splits
from forest_builders.act import ACTForestClassifier
from forest_builders.budget_rf import BudgetRandomForestClassifier, minimax_chooser
from forest_builders.cost_sensitive_rf import CostSensitiveRandomForestClassifier
from prune_opt import FeatureCosts


@parametrize_with_checks([BudgetRandomForestClassifier(n_estimators=4, random_state=0),
                          BudgetRandomForestClassifier(n_estimators=3, impurity="gini",
                                                       max_features="sqrt", random_state=0)])
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def small():
    X, y = make_classification(400, 6, n_informative=4, n_classes=3, n_clusters_per_class=1,
                               random_state=1)
    X[:, 2] = np.round(X[:, 2], 1)  # ties
    return X, y


def _leaf_counts_from_routing(est, X, y):
    """Per tree: bootstrap-weighted class counts of training rows routed to each leaf."""
    f = est.to_forest()
    leaves = f.apply(X)
    yk = np.searchsorted(est.classes_, y)
    out = []
    for t in range(f.n_trees):
        sl = f.tree_slice(t)
        counts = np.zeros((sl.stop - sl.start, f.n_classes))
        np.add.at(counts, (leaves[:, t], yk), est.in_bag_[t])
        out.append(counts)
    return f, out


def test_training_rows_route_as_counted_and_round_trip(small):
    X, y = small
    est = BudgetRandomForestClassifier(n_estimators=5, alpha=1.0, random_state=0).fit(X, y)
    f, counts = _leaf_counts_from_routing(est, X, y)
    for t in range(f.n_trees):
        sl = f.tree_slice(t)
        leaf = f.is_leaf[sl]
        c = counts[t][leaf]
        dist = c / c.sum(axis=1, keepdims=True)
        # each leaf's distribution is exactly what float32 routing sends there
        assert np.allclose(dist, f.value[sl][leaf])
    assert np.array_equal(f.predict_proba(X), est.predict_proba(X))
    pruned_all = po.PrunedForest(f, f.full_split_mask())
    assert np.array_equal(pruned_all.predict(X), est.predict(X))
    assert [b.sum() for b in est.in_bag_] == [len(y)] * 5


def _brute_minimax(X, y, cost, alpha):
    """R(t) = min_g max_i c / (F(S) - F(S_g^i)) over every threshold, by loops."""
    F = lambda labels: threshold_pairs(np.bincount(labels, minlength=3), alpha)  # noqa: E731
    fs = F(y)
    best = []
    for j in range(X.shape[1]):
        vals = np.unique(X[:, j])
        r = np.inf
        for lo, hi in zip(vals[:-1], vals[1:]):
            t = (lo + hi) / 2
            worst = max(F(y[X[:, j] <= t]), F(y[X[:, j] > t]))
            if fs - worst > 1e-12:
                r = min(r, cost[j] / (fs - worst))
        best.append(r)
    return np.asarray(best)


@given(seed=st.integers(0, 5000), alpha=st.sampled_from([0.0, 1.0]))
def test_minimax_chooser_matches_brute_force(seed, alpha):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 8, size=(25, 4)).astype(np.float32)
    y = rng.integers(0, 3, 25)
    cost = rng.uniform(0.5, 5, 4)
    cand = candidate_splits(X, y, np.ones(25), 3)
    total = np.bincount(y, minlength=3).astype(float)
    pick = minimax_chooser(threshold_pairs, alpha)(cand, cost, total)
    brute = _brute_minimax(X, y, cost, alpha)
    if not np.isfinite(brute).any():
        assert pick is None
        return
    j, thr = pick
    assert brute[j] == pytest.approx(brute.min(), rel=1e-12)
    F = lambda m: threshold_pairs(np.bincount(y[m], minlength=3), alpha)  # noqa: E731
    worst = max(F(X[:, j] <= thr), F(X[:, j] > thr))
    assert cost[j] / (threshold_pairs(total, alpha) - worst) == pytest.approx(brute[j])


def test_cheap_feature_preferred_at_equal_information():
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    y = (x > 0).astype(int)
    X = np.column_stack([x, x])  # two copies, the second one cheaper
    est = BudgetRandomForestClassifier(n_estimators=3, costs=[10.0, 1.0],
                                       random_state=0).fit(X, y)
    f = est.to_forest()
    assert set(f.feature[~f.is_leaf].tolist()) == {1}
    assert np.allclose(est.acquisition_cost(X), 1.0)


def test_budget_growth_stops_before_the_breaking_tree(small):
    X, y = small
    Xv, yv = X[300:], y[300:]
    X, y = X[:300], y[:300]
    costs = np.arange(1.0, 7.0)
    kw = dict(costs=costs, max_features=2, alpha=2.0, random_state=3)
    ref = BudgetRandomForestClassifier(n_estimators=3, **kw).fit(X, y)
    budget = float(ref.acquisition_cost(Xv).mean()) * 1.3
    est = BudgetRandomForestClassifier(budget=budget, max_trees=60, **kw).fit(X, y, Xv, yv)
    n = est.n_estimators_
    assert 1 <= n < 60
    avg = est.acquisition_cost(Xv).mean()
    assert avg <= budget
    assert avg == pytest.approx(est.val_costs_[-1])
    assert np.all(np.diff(est.val_costs_) >= -1e-12)
    # the same seeds with one more tree break the budget
    more = BudgetRandomForestClassifier(n_estimators=n + 1, **kw).fit(X, y)
    assert more.acquisition_cost(Xv).mean() > budget
    # and its first n trees are the budget forest's trees (same per-tree seeds)
    fm, fe = more.to_forest(), est.to_forest()
    k = int(fm.node_offset[n])
    assert k == fe.n_nodes
    assert np.array_equal(fm.threshold[:k], fe.threshold)
    assert np.array_equal(fm.feature[:k], fe.feature)


def test_alpha_list_is_chosen_on_validation(small):
    X, y = small
    est = BudgetRandomForestClassifier(n_estimators=3, alpha=[0.0, 5.0, 50.0],
                                       random_state=0).fit(X[:300], y[:300], X[300:], y[300:])
    assert set(est.alpha_scores_) == {0.0, 5.0, 50.0}
    assert est.alpha_scores_[est.alpha_] == max(est.alpha_scores_.values())
    assert est.score(X[300:], y[300:]) == pytest.approx(est.alpha_scores_[est.alpha_])


def test_larger_alpha_grows_smaller_trees(small):
    X, y = small
    sizes = [BudgetRandomForestClassifier(n_estimators=3, alpha=a, random_state=0)
             .fit(X, y).to_forest().n_nodes for a in (0.0, 3.0, 30.0)]
    assert sizes[0] >= sizes[1] >= sizes[2]


def test_prune_agrees_across_solvers():
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))
    tr, va = idx[:100], idx[100:]
    costs = FeatureCosts([1.0, 2.0, 8.0, 8.0])
    est = BudgetRandomForestClassifier(n_estimators=6, costs=costs, max_features=2,
                                       random_state=0).fit(X[tr], y[tr])
    solvers = ["highs", "cbc-ip"] + [s for s in ("mincut",) if s in po.available_solvers()]
    for lam in (0.0, 0.02, 0.2):
        objs = [po.prune(est, X[va], y[va], costs=costs, lam=lam, train=(X[tr], y[tr]),
                         solver=s).objective for s in solvers]
        assert np.allclose(objs, objs[0], rtol=1e-9, atol=1e-12), (lam, objs)
    whole = po.prune(est, X[va], y[va], costs=costs, lam=0.0, train=(X[tr], y[tr]))
    assert whole.n_splits == int((~est.to_forest().is_leaf).sum())


def test_nan_inputs_route_right_and_pandas_names():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    X[::7, 0] = np.nan
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    est = BudgetRandomForestClassifier(n_estimators=3, random_state=0).fit(df, y)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    assert est.to_forest().feature_names == ["a", "b", "c"]
    proba = est.predict_proba(df)
    assert np.allclose(proba.sum(axis=1), 1.0)
    pruned = po.prune(est, df, y, lam=0.0, train=(df, y))
    assert np.array_equal(pruned.predict_proba(df), proba)


@pytest.mark.parametrize("kwargs, match", [
    (dict(impurity="mse"), "'impurity' parameter of BudgetRandomForestClassifier must be"),
    (dict(n_thresholds=(80, 40)), "n_thresholds"),
    (dict(alpha=-1.0), "alpha"),
    (dict(alpha=[]), "alpha"),
    (dict(max_features="all"), "max_features"),
    (dict(min_samples_split=1), "min_samples_split"),
    (dict(budget=-2.0), "budget"),
])
def test_bad_parameters_are_named(kwargs, match):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        BudgetRandomForestClassifier(n_estimators=2, **kwargs).fit(X, y)


def test_validation_data_requirements():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="budget needs validation data"):
        BudgetRandomForestClassifier(budget=3.0).fit(X, y)
    with pytest.raises(ValueError, match="alpha is a list"):
        BudgetRandomForestClassifier(n_estimators=2, alpha=[0.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match="costs cover 3 features"):
        BudgetRandomForestClassifier(n_estimators=2, costs=FeatureCosts([1, 1, 1])).fit(X, y)
    with pytest.raises(ValueError, match="both X_val and y_val"):
        BudgetRandomForestClassifier(n_estimators=2).fit(X, y, X_val=X)


@pytest.mark.slow
def test_thyroid_cost_is_well_below_random_forest():
    from sklearn.ensemble import RandomForestClassifier

    from prune_opt.datasets import load_dataset

    d = load_dataset("thyroid")
    rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(d.X, d.y)
    brf = BudgetRandomForestClassifier(n_estimators=10, costs=d.costs, alpha=2.0,
                                       random_state=0).fit(d.X, d.y)
    c_rf = po.acquisition_cost(rf, d.X_test, d.costs).mean()
    c_brf = brf.acquisition_cost(d.X_test).mean()
    assert c_brf <= 0.7 * c_rf
    assert brf.score(d.X_test, d.y_test) > 0.9


@pytest.mark.parametrize("make", [
    lambda rs: BudgetRandomForestClassifier(n_estimators=3, random_state=rs),
    lambda rs: CostSensitiveRandomForestClassifier(n_estimators=3, random_state=rs),
    lambda rs: ACTForestClassifier(n_estimators=2, r=0, max_depth=3, random_state=rs),
])
def test_random_state_instance_is_accepted_and_reproducible(make):
    # regression: np.random.RandomState(instance) raised in BudgetRF and the cost-sensitive RF
    X, y = load_iris(return_X_y=True)
    a = make(np.random.RandomState(0)).fit(X, y).to_forest()
    b = make(np.random.RandomState(0)).fit(X, y).to_forest()
    assert np.array_equal(a.threshold, b.threshold) and np.array_equal(a.feature, b.feature)
    rs = np.random.RandomState(0)
    est = make(rs)
    first = est.fit(X, y).to_forest()
    second = est.fit(X, y).to_forest()  # the shared instance advanced: a different forest
    assert not (first.n_nodes == second.n_nodes
                and np.array_equal(first.threshold, second.threshold))
    with pytest.raises(ValueError, match="'random_state' parameter"):
        make("seed").fit(X, y)


def test_int_random_state_is_used_as_the_seed():
    X, y = load_iris(return_X_y=True)
    a = BudgetRandomForestClassifier(n_estimators=2, random_state=7).fit(X, y)
    b = BudgetRandomForestClassifier(n_estimators=2, random_state=np.int64(7)).fit(X, y)
    assert np.array_equal(a.to_forest().threshold, b.to_forest().threshold)
    assert a._seed() == 7
