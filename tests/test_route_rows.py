"""Rows routed once (po.route) give what the feature matrix gives, for every pruning of
the model's splits, and are refused by a model of other splits."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import (
    GradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)

import prune_opt as po


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), boosted=st.booleans())
def test_routed_rows_predict_score_and_cost_like_the_matrix(seed, boosted):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 5))
    y = (X[:, 0] + rng.normal(scale=0.5, size=120) > 0).astype(int)
    model = (GradientBoostingClassifier(n_estimators=6, max_depth=3, random_state=seed)
             if boosted else RandomForestClassifier(6, max_depth=4, random_state=seed))
    forest = po.as_forest(model.fit(X, y))
    costs = po.FeatureCosts(rng.uniform(0.5, 3.0, size=5))
    rows = po.route(forest, X)
    for _ in range(3):  # random prunings of the same splits
        mask = forest.full_split_mask() & (rng.random(forest.n_nodes) < 0.7)
        for h in np.argsort(forest.depth, kind="stable"):  # closed under parents
            mask[h] &= forest.parent[h] < 0 or mask[forest.parent[h]]
        pf = po.PrunedForest(forest, mask, costs=costs)
        np.testing.assert_array_equal(pf.predict_proba(rows), pf.predict_proba(X))
        np.testing.assert_array_equal(pf.predict(rows), pf.predict(X))
        assert pf.score(rows, y) == pf.score(X, y)
        np.testing.assert_array_equal(pf.acquisition_cost(rows), pf.acquisition_cost(X))


def test_routed_rows_of_a_regression_forest_score_like_the_matrix():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] * 1e3 + rng.normal(size=80)
    pf = po.prune(RandomForestRegressor(4, max_depth=3, random_state=0).fit(X, y), X, y,
                  lam=0.01)
    rows = po.route(pf.forest, X)
    assert pf.score(rows, y) == pf.score(X, y)
    assert pf.average_cost(rows) == pf.average_cost(X)


def test_rows_routed_through_another_model_are_refused():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4))
    y = (X[:, 1] > 0).astype(int)
    a = po.as_forest(RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y))
    b = po.as_forest(RandomForestClassifier(3, max_depth=3, random_state=1).fit(X, y))
    pf = po.PrunedForest(a, a.full_split_mask(), costs=po.FeatureCosts(np.ones(4)))
    with pytest.raises(ValueError, match="routed through another model"):
        pf.predict(po.route(b, X))
