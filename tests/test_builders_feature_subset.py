"""SubsetForestClassifier and rank_features_by_cost: cost-aware feature subsets."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.utils.estimator_checks import parametrize_with_checks

import prune_opt as po
from forest_builders import SubsetForestClassifier, rank_features_by_cost, subset_costs
from forest_builders.feature_subset import _drop_order, _rounds_left, _savings, _timed_drop
from prune_opt import FeatureCosts


@parametrize_with_checks([SubsetForestClassifier(n_estimators=3, random_state=0),
                          SubsetForestClassifier(n_estimators=3, max_cost=1.5,
                                                 ranking_estimators=3, random_state=0)],
                         expected_failed_checks=lambda est: {
                             "check_sample_weight_equivalence_on_dense_data":
                             "bootstrap draws rows, not weights, as in RandomForestClassifier"})
def test_sklearn_estimator_contract(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # max_cost below one feature's cost
        check(estimator)


def _group_costs():
    # 6 features: 0-1 share a "blood draw" unit, 5 is derived from 2 and 3, 5 is free
    return FeatureCosts([1.0, 2.0, 3.0, 4.0, 0.5, 0.0], groups={"draw": (2.5, [0, 1])},
                        requires={5: [2, 3]})


def _data(seed, n=120, d=6):
    X, y = make_classification(n, d, n_informative=3, n_redundant=1, random_state=seed)
    return X, y


@given(seed=st.integers(0, 10_000), size=st.integers(1, 5))
def test_savings_match_brute_force(seed, size):
    rng = np.random.default_rng(seed)
    fc = _group_costs()
    survivors = np.sort(rng.choice(6, size, replace=False))
    got = _savings(fc, survivors)

    def cost(cols):
        used = np.zeros((1, 6), dtype=bool)
        used[0, list(cols)] = True
        return float(fc.cost_of_usage(used)[0])

    want = [cost(survivors) - cost(set(survivors) - {j}) for j in survivors]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_drop_order_keeps_what_saves_nothing_and_drops_low_value_per_cost():
    importance = np.array([0.5, 0.1, 0.3, 0.0])
    saving = np.array([1.0, 0.0, 3.0, 2.0])
    # scores 0.5, inf (free to keep), 0.1, 0.0
    np.testing.assert_array_equal(_drop_order(importance, saving, 4), [3, 2, 0, 1])


@given(seed=st.integers(0, 10_000), step=st.sampled_from([1, 2, 0.3]))
def test_ranking_is_a_permutation_and_free_features_come_first(seed, step):
    X, y = _data(seed)
    fc = _group_costs()
    ranking = rank_features_by_cost(X, y, costs=fc, n_estimators=5, step=step,
                                    random_state=seed)
    assert sorted(ranking.tolist()) == list(range(6))
    prefix = subset_costs(fc, ranking)
    assert np.all(np.diff(prefix) >= -1e-12)  # nested subsets cost more as they grow
    # feature 4 costs 0.5 and feature 5 is free only once 2 and 3 are paid: a prefix never
    # gets cheaper, and the cheapest feature to drop last is one that saves nothing
    free = [j for j in range(6) if fc.cost_of_usage(np.eye(6, dtype=bool)[[j]])[0] == 0]
    assert all(ranking.tolist().index(j) < 6 for j in free)


def test_a_timed_round_drops_more_when_the_rounds_left_do_not_fit():
    """Each round is expected to take as long as the last: with room for the rounds at
    ``step`` it drops as ``step`` says; with room for m more rounds the survivors shrink
    geometrically to one in m rounds; with none, the round ranks every survivor."""
    assert _rounds_left(1, 10) == 9 and _rounds_left(0.2, 20) == _rounds_left(0.2, 16) + 1
    assert _timed_drop(1, 10, seconds=1.0, left=100.0) == 1
    assert _timed_drop(0.2, 20, seconds=1.0, left=100.0) == 4
    assert _timed_drop(1, 10, seconds=1.0, left=0.5) == 9  # no room: all but one
    assert _timed_drop(1, 10, seconds=1.0, left=-3.0) == 9
    assert _timed_drop(1, 16, seconds=1.0, left=1.5) == 12  # one more round: 16 -> 4 -> 1
    assert _timed_drop(1, 64, seconds=1.0, left=2.0) == 48  # two more: 64 -> 16 -> ...
    assert _timed_drop(1, 10, seconds=0.0, left=0.0) == 1  # an instant round: as at step


def test_a_ranking_out_of_time_is_the_first_round_s_order():
    """time_limit=0 leaves one round: its importances per cost rank every feature (still
    a permutation, free features first); no limit is the usual elimination."""
    X, y = make_classification(n_samples=300, n_features=12, n_informative=4, random_state=0)
    costs = np.linspace(1.0, 3.0, 12)
    quick = rank_features_by_cost(X, y, costs=costs, n_estimators=10, random_state=0,
                                  time_limit=0)
    assert sorted(quick.tolist()) == list(range(12))
    from sklearn.ensemble import RandomForestClassifier

    rf = RandomForestClassifier(10, random_state=0, n_jobs=1).fit(X.astype(np.float32), y)
    saving = _savings(po.as_feature_costs(costs, 12), np.arange(12))
    order = _drop_order(rf.feature_importances_, saving, 11)
    assert quick[1:].tolist() == order[::-1].tolist()
    full = rank_features_by_cost(X, y, costs=costs, n_estimators=10, random_state=0)
    roomy = rank_features_by_cost(X, y, costs=costs, n_estimators=10, random_state=0,
                                  time_limit=1e9)
    assert full.tolist() == roomy.tolist()
    with pytest.raises(ValueError, match="time_limit must be None or seconds"):
        rank_features_by_cost(X, y, time_limit=-1)


def test_ranking_prefers_the_cheap_copy_of_the_signal():
    rng = np.random.default_rng(0)
    signal = rng.normal(size=600)
    y = (signal > 0).astype(int)
    X = np.column_stack([signal + 0.01 * rng.normal(size=600),   # cheap copy
                         signal + 0.01 * rng.normal(size=600),   # expensive copy
                         rng.normal(size=(600, 3))])             # noise
    ranking = rank_features_by_cost(X, y, costs=[1.0, 1000.0, 1.0, 1.0, 1.0], n_estimators=20,
                                    random_state=0)
    assert ranking[0] == 0  # the cheap copy survives the elimination
    # with the same costs, either copy may win; the expensive one never beats the cheap one
    # once its cost outweighs its share of the importance
    same = rank_features_by_cost(X, y, costs=[1.0] * 5, n_estimators=20, random_state=0)
    assert set(same[:1].tolist()) <= {0, 1}


@given(seed=st.integers(0, 10_000), max_cost=st.floats(0.0, 12.0))
def test_max_cost_caps_every_example_and_the_forest_is_the_sklearn_one(seed, max_cost):
    X, y = _data(seed)
    fc = _group_costs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        clf = SubsetForestClassifier(4, max_cost=max_cost, costs=fc, ranking_estimators=4,
                                     random_state=seed).fit(X, y)
    cost = clf.acquisition_cost(X)
    assert cost.max() <= max_cost + 1e-9
    assert clf.subset_cost_ <= max_cost + 1e-9
    # the forest asks only for the chosen columns
    internal = ~clf.forest_.is_leaf
    assert set(clf.forest_.feature[internal].tolist()) <= set(clf.features_.tolist())
    # brute force: the features each row's paths reach, costed by FeatureCosts
    used = np.zeros(X.shape, dtype=bool)
    for t in range(clf.forest_.n_trees):
        ind = clf.forest_.decision_paths(X, t).tocoo()
        f = clf.forest_.feature[ind.col + clf.forest_.node_offset[t]]
        used[ind.row[f >= 0], f[f >= 0]] = True
    np.testing.assert_allclose(cost, fc.cost_of_usage(used), rtol=1e-12)
    if clf.estimator_ is not None:
        np.testing.assert_allclose(clf.predict_proba(X),
                                   clf.estimator_.predict_proba(X[:, clf.features_]),
                                   rtol=1e-12, atol=1e-12)
        # the longest prefix: one more ranked feature would break the cap
        k = clf.features_.size
        assert k == 6 or subset_costs(fc, clf.ranking_)[k] > max_cost


def test_cap_below_every_feature_is_a_constant_forest_with_a_warning():
    X, y = _data(1)
    with pytest.warns(UserWarning, match="below the cost of every feature"):
        clf = SubsetForestClassifier(3, max_cost=0.5, costs=[1.0] * 6,
                                     ranking_estimators=3, random_state=0).fit(X, y)
    assert clf.features_.size == 0 and clf.estimator_ is None
    assert np.all(clf.acquisition_cost(X) == 0)
    majority = np.bincount(y).argmax()
    assert np.all(clf.predict(X) == majority)


def test_prune_fit_budget_and_to_sklearn_take_it_unchanged():
    X, y = load_breast_cancer(return_X_y=True)
    X_tr, y_tr, X_v, y_v = X[::2], y[::2], X[1::2], y[1::2]
    clf = SubsetForestClassifier(15, max_cost=8.0, ranking_step=0.2,
                                 random_state=0).fit(X_tr, y_tr)
    pruned = po.prune(clf, X_v, y_v, lam=0.01, train=(X_tr, y_tr))  # in-bag errors
    assert pruned.average_cost(X_v) <= clf.acquisition_cost(X_v).mean() + 1e-12
    np.testing.assert_array_equal(pruned.to_sklearn().predict(X_v), pruned.predict(X_v))
    fit = po.fit_budget(clf, X_v, y_v, budget=3.0, time_limit=5)
    assert fit.average_cost(X_v) <= 3.0 + 1e-9
    full = po.PrunedForest(clf.forest_, clf.forest_.full_split_mask())
    np.testing.assert_array_equal(full.predict(X_v), clf.predict(X_v))


def test_named_columns_and_errors_name_the_argument():
    X, y = _data(2)
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(6)])
    clf = SubsetForestClassifier(3, features=["c4", "c1"], random_state=0).fit(df, y)
    np.testing.assert_array_equal(clf.features_, [4, 1])
    assert clf.forest_.feature_names == list(df.columns)
    for bad, match in ((["nope"], "'nope' is not a column"), ([7], "index 7 is out of range"),
                       ([1, 1], "listed twice"), ([], "features is empty")):
        with pytest.raises(ValueError, match=match):
            SubsetForestClassifier(3, features=bad).fit(df, y)
    by_name = rank_features_by_cost(df, y, costs={f"c{i}": 1.0 + i for i in range(6)},
                                    n_estimators=3, random_state=0)
    assert sorted(by_name.tolist()) == list(range(6))
    with pytest.raises(ValueError, match="features or max_cost, not both"):
        SubsetForestClassifier(3, features=[0], max_cost=2.0).fit(X, y)
    with pytest.raises(ValueError, match="step"):
        rank_features_by_cost(X, y, step=1.5)
    with pytest.raises(ValueError, match="costs"):
        SubsetForestClassifier(3, costs=[1.0, -1.0] + [1.0] * 4).fit(X, y)


def test_all_features_without_a_cap_is_a_plain_random_forest():
    from sklearn.ensemble import RandomForestClassifier

    X, y = _data(3)
    clf = SubsetForestClassifier(5, random_state=4).fit(X, y)
    rf = RandomForestClassifier(5, random_state=4).fit(X.astype(np.float32), y)
    np.testing.assert_allclose(clf.predict_proba(X), rf.predict_proba(X), rtol=1e-12)
    assert clf.ranking_ is None
    assert list(itertools.chain(clf.features_)) == list(range(6))


@given(seed=st.integers(0, 10_000), size=st.integers(1, 6))
def test_drop_savings_credit_a_member_with_its_partners(seed, size):
    """Brute force: a survivor that saves nothing alone is credited with dropping it
    together with every other such survivor sharing one of its paid units."""
    from forest_builders.feature_subset import _drop_savings

    rng = np.random.default_rng(seed)
    fc = _group_costs()
    survivors = np.sort(rng.choice(6, size, replace=False))
    got, tol = _drop_savings(fc, survivors)
    S = set(survivors.tolist())

    def paid_units(j):
        return {u for u in fc.feature_units[j].indices if fc.unit_costs[u] > 0}

    alone = {j for j in S if fc.cost_of(S) - fc.cost_of(S - {j}) <= tol}
    for k, j in enumerate(survivors):
        if j in alone:
            group = {i for i in alone if paid_units(i) & paid_units(j)} | {j}
        else:
            group = {j}
        assert got[k] == pytest.approx(fc.cost_of(S) - fc.cost_of(S - group), abs=1e-12)
    assert tol == pytest.approx(1e-12 * fc.cost_of(S))


def test_a_time_limited_ranking_does_not_depend_on_the_machine_s_load(monkeypatch):
    """The rounds are timed in CPU seconds: a busy machine (here every forest fit waits
    0.4 s of wall clock, with no CPU: 4.4 s over the 11 rounds) gives the same ranking as
    an idle one and as no limit, where a wall clock would have run out of its 3 s."""
    import time as _time

    from sklearn.ensemble import RandomForestClassifier

    X, y = make_classification(n_samples=300, n_features=12, n_informative=4, random_state=1)
    costs = np.linspace(1.0, 3.0, 12)
    kw = dict(costs=costs, n_estimators=10, random_state=0, time_limit=3.0)
    idle = rank_features_by_cost(X, y, **kw)
    fit = RandomForestClassifier.fit

    def busy_fit(self, *args, **kwargs):
        _time.sleep(0.4)  # waits for the CPU: wall time passes, CPU time does not
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(RandomForestClassifier, "fit", busy_fit)
    assert rank_features_by_cost(X, y, **kw).tolist() == idle.tolist()
    assert idle.tolist() == rank_features_by_cost(X, y, **{**kw, "time_limit": None}).tolist()
