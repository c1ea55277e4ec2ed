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


@pytest.mark.parametrize("field", ["missing_go_to_left", "threshold", "feature"])
def test_every_field_routing_reads_decides_compatibility(field):
    """Two forests that differ only in one field the router reads (the NaN side
    included) do not share routed rows: reading one's rows for the other would send
    rows to leaves the other never sends them to."""
    stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
                 threshold=[0.5, 0, 0], value=[[1, 1], [1, 0], [0, 1]],
                 missing_go_to_left=[0, 0, 0])
    changed = {"missing_go_to_left": [1, 0, 0], "threshold": [0.25, 0, 0],
               "feature": [1, -1, -1]}[field]
    a = po.Forest([stump], classes=[0, 1], n_features=2)
    b = po.Forest([dict(stump, **{field: changed})], classes=[0, 1], n_features=2)
    assert a.same_splits(a) and not a.same_splits(b) and not b.same_splits(a)
    X = np.array([[np.nan, 0.3], [0.4, 0.9], [0.9, 0.1]])
    pf = po.PrunedForest(b, b.full_split_mask(), costs=po.FeatureCosts(np.ones(2)))
    with pytest.raises(ValueError, match="routed through another model"):
        pf.predict(po.route(a, X))


def test_catboost_models_that_send_nan_to_other_sides_share_no_routing(tmp_path):
    """Rows routed through a CatBoost model are refused by a pruning of the same model
    whose file sends NaN the other way (``nan_value_treatment`` AsTrue against AsFalse;
    CatBoost loads both), and each predicts as CatBoost's own load of its file."""
    catboost = pytest.importorskip("catboost")
    import json

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    X[::2, 0] = np.nan
    model = catboost.CatBoostClassifier(iterations=5, depth=2, verbose=False, random_seed=0,
                                        thread_count=1).fit(X, y)
    model.save_model(str(tmp_path / "a.json"), format="json")
    doc = json.loads((tmp_path / "a.json").read_text())
    loaded = []
    for side in ("AsFalse", "AsTrue"):
        for feat in doc["features_info"]["float_features"]:
            feat["nan_value_treatment"] = side
        path = tmp_path / f"{side}.json"
        path.write_text(json.dumps(doc))
        m = catboost.CatBoost()
        m.load_model(str(path), format="json")
        loaded.append((m, po.as_forest(m)))
    (ma, a), (mb, b) = loaded
    assert not np.allclose(ma.predict(X, prediction_type="RawFormulaVal"),
                           mb.predict(X, prediction_type="RawFormulaVal"))
    for m, f in loaded:  # each routes NaN as CatBoost does
        np.testing.assert_allclose(f.decision_function(X),
                                   m.predict(X, prediction_type="RawFormulaVal"), atol=1e-9)
    assert not a.same_splits(b)
    pf = po.PrunedForest(b, b.full_split_mask())
    with pytest.raises(ValueError, match="routed through another model"):
        pf.predict(po.route(a, X))
