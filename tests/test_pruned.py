"""PrunedForest: owns its trees, declares its fields, one return type."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import prune_opt as po


def _data(seed, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    return X, y


@pytest.mark.parametrize("cls", [RandomForestClassifier, ExtraTreesClassifier,
                                 DecisionTreeClassifier])
def test_refitting_the_source_changes_nothing(cls):
    # issue 14.3: after refitting rf on other data, 159 of 300 labels changed
    X, y = _data(0)
    X2, y2 = _data(1)
    est = cls(random_state=0, max_depth=6).fit(X, y)
    forest = po.Forest.from_sklearn(est)
    pruned = po.prune(est, X, y, costs=[1, 2, 3, 4, 5], lam=1e-3)
    before = (pruned.predict_proba(X), pruned.acquisition_cost(X), forest.predict_proba(X))
    exported = pruned.to_sklearn()
    est.fit(X2, 1 - y2)  # other data, flipped labels
    if hasattr(est, "warm_start"):
        est.set_params(warm_start=True, n_estimators=est.n_estimators + 3).fit(X2, y2)
    assert np.array_equal(pruned.predict_proba(X), before[0])
    assert np.array_equal(pruned.acquisition_cost(X), before[1])
    assert np.array_equal(forest.predict_proba(X), before[2])
    assert np.array_equal(pruned.to_sklearn().predict_proba(X), before[0])
    assert np.array_equal(exported.predict_proba(X), before[0])


def test_to_sklearn_returns_an_independent_estimator():
    X, y = _data(2)
    rf = RandomForestClassifier(n_estimators=5, max_depth=5, random_state=0).fit(X, y)
    pruned = po.prune(rf, X, y, lam=1e-3)
    p0 = pruned.predict_proba(X)
    est = pruned.to_sklearn()
    assert est is not rf and all(a is not b for a, b in zip(est.estimators_, rf.estimators_))
    assert np.array_equal(est.predict_proba(X), p0)
    est.fit(*_data(3))  # refitting the export touches neither the pruned forest nor rf
    assert np.array_equal(pruned.predict_proba(X), p0)
    assert np.array_equal(pruned.to_sklearn().predict_proba(X), p0)


def test_every_attribute_is_declared_in_init():
    X, y = _data(4)
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    f = po.Forest.from_sklearn(rf)
    fields = {"forest", "split_mask", "costs", "objective", "breakdown", "solve_info", "lam",
              "problem", "estimator_class",
              "_feature_encoding"}  # kept by the checked property feature_encoding
    bare = po.PrunedForest(f, f.full_split_mask())
    assert set(vars(bare)) == fields
    assert bare.problem is None and bare.estimator_class == "RandomForestClassifier"
    pruned = po.prune(rf, X, y, lam=0.01)
    assert set(vars(pruned)) == fields
    assert isinstance(pruned.problem, po.PruningProblem) and pruned.lam == 0.01


def test_split_mask_is_an_owned_copy():
    X, y = _data(5)
    rf = RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(X, y)
    f = po.Forest.from_sklearn(rf)
    mask = f.full_split_mask()
    pf = po.PrunedForest(f, mask)
    p0 = pf.predict_proba(X)
    mask[:] = False
    assert np.array_equal(pf.predict_proba(X), p0)


def test_feature_usage_is_a_dataframe_summing_to_one():
    X, y = _data(6)
    rf = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    usage = po.prune(rf, X, y, lam=1e-3).feature_usage(X)
    assert isinstance(usage, pd.DataFrame)
    assert list(usage.columns) == ["feature", "never", "1-7", ">7"] and len(usage) == 5
    np.testing.assert_allclose(usage[["never", "1-7", ">7"]].sum(axis=1), 1.0)


def test_forest_refuses_a_pruned_forest_by_shape():
    X, y = _data(7)
    rf = RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="pass pruned.forest"):
        po.compile_problem(po.prune(rf, X, y, lam=0.01), X, y)


def test_forest_predict_proba_matches_the_unpruned_pruned_forest_bit_for_bit():
    X, y = _data(8)
    rf = RandomForestClassifier(n_estimators=7, random_state=0).fit(X, y)
    f = po.Forest.from_sklearn(rf)
    assert np.array_equal(f.predict_proba(X), po.PrunedForest(f, f.full_split_mask())
                          .predict_proba(X))
    assert np.array_equal(f.predict_proba(X), rf.predict_proba(X))
