"""LazyCostRandomForestClassifier: lazy per-example penalty carried across trees."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.utils.estimator_checks import parametrize_with_checks

import prune_opt as po
from forest_builders import LazyCostRandomForestClassifier
from forest_builders._impurity import gini
from forest_builders._lazy_tree import LazyTreeSpec, _penalty, mark_paid
from prune_opt import FeatureCosts


@parametrize_with_checks([LazyCostRandomForestClassifier(n_estimators=3, random_state=0),
                          LazyCostRandomForestClassifier(n_estimators=3, tradeoff=0.01,
                                                         stop_on_penalty=True,
                                                         random_state=0)])
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)


def _group_costs():
    # 6 features: 0-1 share a "blood draw" unit, 5 is derived from 2 and 3
    return FeatureCosts([1.0, 2.0, 3.0, 4.0, 0.5, 0.0], groups={"draw": (2.5, [0, 1])},
                        requires={5: [2, 3]})


@given(seed=st.integers(0, 10_000), tradeoff=st.floats(0.01, 5.0))
def test_penalty_matches_per_example_count(seed, tradeoff):
    rng = np.random.default_rng(seed)
    fc = _group_costs()
    fu = fc.feature_units.toarray().astype(bool)
    spec = LazyTreeSpec(gini, fu, fc.unit_costs, tradeoff, max_features=6, max_depth=None,
                        min_samples_split=2)
    n = 25
    paid = rng.random((n, fc.n_units)) < 0.4
    idx = np.sort(rng.choice(n, 12, replace=False))
    w = rng.integers(1, 4, 12).astype(float)
    path_paid = rng.random(fc.n_units) < 0.3
    feats = rng.permutation(6)[:4]
    got = _penalty(spec, paid, idx, w, path_paid, feats)
    want = np.zeros(feats.size)
    for j, f in enumerate(feats):  # brute force: each example's unpaid units of f
        for i, wi in zip(idx, w):
            units = fu[f] & ~paid[i] & ~path_paid
            want[j] += tradeoff * wi * fc.unit_costs[units].sum()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_paid_history_is_the_forests_acquisition_cost():
    X, y = make_classification(300, 8, n_informative=4, random_state=1)
    fc = _group_costs().__class__([1.0] * 6 + [3.0, 2.0], groups={"g": (4.0, [6, 7])})
    est = LazyCostRandomForestClassifier(6, tradeoff=0.02, costs=fc, random_state=0).fit(X, y)
    # after the last tree every training row has paid exactly what the forest makes it pay
    np.testing.assert_allclose(est.train_paid_cost_[-1], est.acquisition_cost(X).mean(),
                               rtol=1e-12)
    assert np.all(np.diff(est.train_paid_cost_) >= -1e-12)


def test_mark_paid_matches_forest_routing():
    X, y = make_classification(200, 5, random_state=3)
    est = LazyCostRandomForestClassifier(1, tradeoff=0.0, random_state=0).fit(X, y)
    tree = est.forest_
    arrays = dict(left=tree.left, right=tree.right, feature=tree.feature,
                  threshold=tree.threshold)
    paid = np.zeros((200, 5), dtype=bool)
    mark_paid(arrays, X.astype(np.float32), np.eye(5, dtype=bool), paid)
    used = po.PrunedForest(tree, tree.full_split_mask()).used_features(X).toarray() > 0
    np.testing.assert_array_equal(paid, used)


def test_penalty_lowers_cost_and_free_features_win():
    X, y = load_breast_cancer(return_X_y=True)
    base = LazyCostRandomForestClassifier(10, tradeoff=0.0, random_state=0).fit(X, y)
    lazy = clone(base).set_params(tradeoff=0.3).fit(X, y)
    assert lazy.acquisition_cost(X).mean() < 0.8 * base.acquisition_cost(X).mean()
    assert lazy.score(X, y) > 0.9
    # three free features, the rest very expensive: CEGB's rule never pays for them
    costs = np.full(X.shape[1], 100.0)
    costs[[0, 7, 20]] = 0.0
    est = LazyCostRandomForestClassifier(5, tradeoff=1.0, costs=costs, max_features=None,
                                         stop_on_penalty=True, random_state=0).fit(X, y)
    used = set(est.forest_.feature[est.forest_.feature >= 0].tolist())
    assert used <= {0, 7, 20} and used
    assert est.acquisition_cost(X).max() == 0.0


def test_carry_across_trees_coordinates_features():
    X, y = load_breast_cancer(return_X_y=True)
    kw = dict(tradeoff=0.5, random_state=0)
    carry = LazyCostRandomForestClassifier(15, **kw).fit(X, y)
    path_only = LazyCostRandomForestClassifier(15, carry_across_trees=False, **kw).fit(X, y)
    assert carry.acquisition_cost(X).mean() < path_only.acquisition_cost(X).mean()


def test_goes_through_prune_fit_budget_and_to_sklearn():
    X, y = load_breast_cancer(return_X_y=True)
    est = LazyCostRandomForestClassifier(8, tradeoff=0.1, random_state=0).fit(X[:300], y[:300])
    full = est.acquisition_cost(X[300:]).mean()
    pruned = po.fit_budget(est, X[300:], y[300:], budget=0.5 * full, train=(X[:300], y[:300]))
    assert pruned.average_cost(X[300:]) <= 0.5 * full + 1e-9
    sk = pruned.to_sklearn()
    np.testing.assert_array_equal(sk.predict_proba(X), pruned.predict_proba(X))
    p2 = po.prune(est, X[300:], y[300:], lam=0.01, train=(X[:300], y[:300]))
    np.testing.assert_array_equal(p2.to_sklearn().predict_proba(X), p2.predict_proba(X))


def test_deterministic_and_clear_errors():
    X, y = make_classification(120, 6, random_state=0)
    a = LazyCostRandomForestClassifier(4, tradeoff=0.05, random_state=7).fit(X, y)
    b = LazyCostRandomForestClassifier(4, tradeoff=0.05, random_state=7).fit(X, y)
    np.testing.assert_array_equal(a.forest_.threshold, b.forest_.threshold)
    with pytest.raises(ValueError, match="tradeoff"):
        LazyCostRandomForestClassifier(tradeoff=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="criterion"):
        LazyCostRandomForestClassifier(criterion="mse").fit(X, y)
    with pytest.raises(ValueError, match="costs cover 3 features"):
        LazyCostRandomForestClassifier(costs=FeatureCosts([1, 1, 1])).fit(X, y)
