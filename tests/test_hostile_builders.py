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


# ------------------------------------------------------------ cost ranking (feature_subset)
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from forest_builders.feature_subset import (  # noqa: E402
    SubsetForestClassifier,
    rank_features_by_cost,
    subset_costs,
)


def _shared_unit_data(seed=0, n=400):
    """Columns 0, 1 (a shared unit of cost 10, free on their own), 2 (cost 1, informative),
    3 (cost 1, noise)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 2] + 0.8 * X[:, 0] + 0.8 * X[:, 1] > 0).astype(int)
    return X, y


SHARED = po.FeatureCosts([0.0, 0.0, 1.0, 1.0], groups={"panel": (10.0, [0, 1])})
REQUIRES = po.FeatureCosts([0.0, 10.0, 1.0, 1.0], requires={0: [1]})


def _brute_cheapest(fc):
    return min(fc.cost_of([j]) for j in range(fc.n_features))


@pytest.mark.parametrize("fc", [SHARED, REQUIRES], ids=["shared unit", "requires"])
def test_free_looking_member_does_not_crowd_out_a_cheap_feature(fc):
    X, y = _shared_unit_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = SubsetForestClassifier(10, max_cost=5.0, costs=fc, random_state=0).fit(X, y)
    # cheap informative column 2 fits within 5; so does 3 (the two together cost 2)
    assert set(clf.features_.tolist()) == {2, 3}
    assert clf.subset_cost_ == fc.cost_of(clf.features_) <= 5.0
    assert clf.acquisition_cost(X).max() <= 5.0
    # maximal: no other column fits beside the chosen ones
    for j in set(range(4)) - set(clf.features_.tolist()):
        assert fc.cost_of([*clf.features_, j]) > 5.0


@pytest.mark.parametrize("fc", [SHARED, REQUIRES], ids=["shared unit", "requires"])
def test_ranking_prefixes_do_not_start_with_the_expensive_unit(fc):
    X, y = _shared_unit_data()
    ranking = rank_features_by_cost(X, y, costs=fc, n_estimators=10, random_state=0)
    assert sorted(ranking.tolist()) == [0, 1, 2, 3]
    # column 2 is worth far more per unit of cost than the 10-cost unit's members
    assert ranking[0] == 2


def test_warning_names_the_true_cheapest_cost():
    X, y = _shared_unit_data()
    fc = po.FeatureCosts([0.0, 0.0, 3.0, 4.0], groups={"panel": (10.0, [0, 1])})
    with pytest.warns(UserWarning, match=r"cheapest 3\)") as record:
        clf = SubsetForestClassifier(5, max_cost=2.0, costs=fc, random_state=0).fit(X, y)
    assert _brute_cheapest(fc) == 3.0 and len(record) == 1
    assert clf.features_.size == 0


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), power=st.integers(-60, 60),
       costs=st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.0]), min_size=5, max_size=5),
       group=st.booleans())
def test_ranking_is_invariant_under_cost_scaling(seed, power, costs, group):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 5))
    y = (X[:, 0] + X[:, rng.integers(1, 5)] > 0).astype(int)
    groups = {"g": (3.0, [1, 2])} if group else None
    scale = 2.0 ** power
    fc = po.FeatureCosts(costs, groups=groups)
    fc_s = po.FeatureCosts([c * scale for c in costs],
                           groups=None if groups is None else {"g": (3.0 * scale, [1, 2])})
    a = rank_features_by_cost(X, y, costs=fc, n_estimators=5, random_state=seed)
    b = rank_features_by_cost(X, y, costs=fc_s, n_estimators=5, random_state=seed)
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("scale", [1e-13, 1e-200, 1e13, 1e200])
def test_ranking_is_invariant_under_decimal_scaling_of_uniform_costs(scale):
    X, y = _shared_unit_data(seed=3, n=200)
    a = rank_features_by_cost(X, y, costs=[1.0] * 4, n_estimators=5, random_state=0)
    b = rank_features_by_cost(X, y, costs=[scale] * 4, n_estimators=5, random_state=0)
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("ranking, match", [
    ([0, 4], "out of range"), ([-1, 0], "out of range"), ([0, 1.5], "integer"),
    ([[0, 1]], "1-D"), (["a"], "integer"), ([True, 0], "integer"),
])
def test_subset_costs_refuses_bad_rankings(ranking, match):
    with pytest.raises(ValueError, match=f"ranking.*{match}"):
        subset_costs(po.FeatureCosts([1.0, 2.0, 3.0, 4.0]), ranking)


def test_subset_costs_match_brute_force():
    fc = po.FeatureCosts([0.0, 0.0, 3.0, 4.0], groups={"panel": (10.0, [0, 1])},
                         requires={3: [2]})
    ranking = [3, 0, 2, 1]
    brute = [fc.cost_of(ranking[:k]) for k in range(1, 5)]
    assert subset_costs(fc, ranking).tolist() == brute
