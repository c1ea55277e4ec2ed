"""Hostile inputs to the growers of forest_builders, and pruning what they grow.

A grower fitted with costs is pruned, budgeted, traced and costed with those
costs unless others are given; it survives clone/get_params/set_params, one
row, constant features, NaN and odd labels, and its pruned forest saves and
loads exactly.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler

import forest_builders as fb
import prune_opt as po

NAMES = ["a", "b", "c", "d"]
GROWN_COSTS = [1.0, 2.0, 3.0, 40.0]

GROWERS = {
    "lazy-cost": lambda **k: fb.LazyCostRandomForestClassifier(
        n_estimators=3, max_depth=4, random_state=0, **k),
    "budget-rf": lambda **k: fb.BudgetRandomForestClassifier(
        n_estimators=3, max_depth=4, random_state=0, **k),
    "cost-sensitive": lambda **k: fb.CostSensitiveRandomForestClassifier(
        n_estimators=3, max_depth=4, random_state=0, **k),
    "act": lambda **k: fb.ACTClassifier(max_depth=3, misclassification_cost=100.0,
                                        random_state=0, **k),
    "act-forest": lambda **k: fb.ACTForestClassifier(
        n_estimators=3, r=0, max_depth=3, misclassification_cost=100.0, random_state=0, **k),
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] + 0.5 * X[:, 3] > 0).astype(int)
    return pd.DataFrame(X, columns=NAMES), y


@pytest.fixture(scope="module", params=list(GROWERS))
def grown(request, data):
    df, y = data
    return request.param, GROWERS[request.param](costs=GROWN_COSTS).fit(df, y)


def test_pruning_a_grower_without_costs_uses_its_fitted_costs(grown, data):
    """po.prune(grower, X, y) priced every feature at 1.0 although the grower was
    fitted with other costs; every entry now defaults to the grower's costs."""
    _, est = grown
    df, y = data
    mine = po.FeatureCosts(GROWN_COSTS, feature_names=NAMES)
    pruned = po.prune(est, df, y, lam=0.01)
    np.testing.assert_array_equal(pruned.costs.unit_costs, GROWN_COSTS)
    explicit = po.prune(est, df, y, costs=mine, lam=0.01)
    np.testing.assert_array_equal(pruned.split_mask, explicit.split_mask)
    np.testing.assert_allclose(po.acquisition_cost(est, df), est.acquisition_cost(df))
    budgeted = po.fit_budget(est, df, y, budget=5.0, time_limit=5)
    assert budgeted.average_cost(df) <= 5.0 + 1e-12
    np.testing.assert_array_equal(budgeted.costs.unit_costs, GROWN_COSTS)
    curve = po.tradeoff_curve(est, df, y)
    assert curve["average_cost"].max() == pytest.approx(
        po.prune(est, df, y, costs=mine, lam=0.0).average_cost(df))
    brier = po.prune(est, df, y, lam=0.01, objective="brier")
    np.testing.assert_array_equal(brier.costs.unit_costs, GROWN_COSTS)
    # explicit costs still win
    np.testing.assert_array_equal(po.prune(est, df, y, costs=[5] * 4, lam=0.01).costs.unit_costs,
                                  [5.0] * 4)


def test_pruned_grower_round_trips_through_json_and_sklearn(grown, data, tmp_path):
    name, est = grown
    df, y = data
    pruned = po.prune(est, df, y, lam=0.01)
    path = tmp_path / f"{name}.json"
    pruned.save(path)
    back = po.load(path)
    np.testing.assert_array_equal(back.predict_proba(df), pruned.predict_proba(df))
    np.testing.assert_array_equal(back.acquisition_cost(df), pruned.acquisition_cost(df))
    np.testing.assert_array_equal(back.costs.unit_costs, GROWN_COSTS)
    np.testing.assert_allclose(pruned.to_sklearn().predict_proba(df), pruned.predict_proba(df))
    refit = po.refit_leaves(pruned, df, y, method="global")
    refit.save(path)
    np.testing.assert_array_equal(po.load(path).predict_proba(df), refit.predict_proba(df))


def test_unpruned_grower_forest_predicts_like_the_grower(grown, data):
    _, est = grown
    df, _ = data
    f = est.to_forest()
    whole = po.PrunedForest(f, f.full_split_mask())
    np.testing.assert_allclose(whole.predict_proba(df), est.predict_proba(df), atol=1e-12)


@pytest.mark.parametrize("name", list(GROWERS))
def test_clone_params_and_bad_costs(name, data):
    df, y = data
    est = GROWERS[name](costs=GROWN_COSTS)
    assert clone(est).get_params()["costs"] == GROWN_COSTS
    with pytest.raises(ValueError, match="nope"):
        est.set_params(nope=1)
    for costs, words in (([1, np.nan, 1, 1], "NaN"), ([1, -1, 1, 1], "non-negative"),
                         ([1, 1], "4"), ({"zz": 1.0}, "unknown")):
        with pytest.raises(ValueError, match=words):
            GROWERS[name](costs=costs).fit(df, y)
    with pytest.raises(Exception, match="costs"):
        GROWERS[name](costs="uniform").fit(df, y)
    with pytest.raises(Exception, match="not fitted"):
        GROWERS[name]().to_forest()


@pytest.mark.parametrize("name", list(GROWERS))
def test_series_costs_are_matched_by_name(name, data):
    df, y = data
    ordered = pd.Series(GROWN_COSTS, index=NAMES)
    shuffled = ordered[["d", "b", "a", "c"]]
    a = GROWERS[name](costs=ordered).fit(df, y)
    b = GROWERS[name](costs=shuffled).fit(df, y)
    np.testing.assert_array_equal(a.predict_proba(df), b.predict_proba(df))
    np.testing.assert_array_equal(b.costs_.unit_costs, GROWN_COSTS)


@pytest.mark.parametrize("name", list(GROWERS))
def test_degenerate_training_data(name, data):
    df, y = data
    X = df.to_numpy()
    one = GROWERS[name]().fit(X[:1], y[:1])
    assert (one.predict(X[:5]) == y[0]).all()
    const = GROWERS[name]().fit(np.ones((20, 4)), np.r_[np.zeros(10), np.ones(10)].astype(int))
    np.testing.assert_allclose(const.predict_proba(np.ones((2, 4))), 0.5, atol=0.2)
    single = GROWERS[name]().fit(X, np.zeros(len(X), dtype=int))
    assert (single.predict(X) == 0).all()
    labels = np.array(["no", "yes"])[y]
    assert set(GROWERS[name]().fit(X, labels).predict(X)) <= {"no", "yes"}
    with pytest.raises(ValueError, match="infinity"):
        GROWERS[name]().fit(np.where(X > 1.5, np.inf, X), y)
    with pytest.raises(ValueError, match="features"):
        GROWERS[name]().fit(X, y).predict(X[:, :3])


def test_cegb_that_never_splits_says_so():
    """CEGBClassifier() with default costs on a few hundred rows kept no split and
    predicted the class prior for everything, without a word."""
    pytest.importorskip("lightgbm")
    X, y = make_blobs(n_samples=300, random_state=0)
    X = StandardScaler().fit_transform(X)
    with pytest.warns(UserWarning, match="no tree split"):
        flat = fb.CEGBClassifier(n_estimators=10).fit(X, y)
    assert np.ptp(flat.predict_proba(X)[:, 1]) < 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        fitted = fb.CEGBClassifier(n_estimators=10, cegb_tradeoff=0.0).fit(X, y)
    assert np.mean(fitted.predict(X) == y) > 0.9
