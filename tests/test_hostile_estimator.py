"""Hostile cases for the budget estimator and ``prune-opt fit``.

Each case is checked against an independent brute force: the cost by walking
every pruned tree example by example, predictions against the scikit-learn
export and the JSON round trip, the budget on the rows it is measured on, and
the candidates table against the models it describes.
"""

import json
import pickle
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone, is_classifier
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV

import prune_opt as po
from forest_builders import BudgetPrunedForestClassifier, BudgetPrunedForestRegressor
from forest_builders.estimator._input import normalised_costs as _normalised_costs
from prune_opt import as_feature_costs
from tests.estimator_walk import (
    export_agrees,
    features_met,
    selection_pool,
    walk_cost,
    walk_output,
)

TINY = dict(n_estimators=3, time_limit=1, max_subsets=1, random_state=0)
#: time enough for every candidate, for the checks that compare candidate sets (under a
#: tight time_limit the candidates the clock has no room for depend on the machine)
ROOMY = dict(TINY, time_limit=20)


def _walk_cost(pf, X, unit_cost):
    """Per-example cost by walking every pruned tree (a forest or a boosted winner)."""
    return walk_cost(pf, X, unit_cost)


def _walk_proba(pf, X):
    """Class probabilities (or regression values) by walking the pruned trees."""
    return walk_output(pf, X)


def _check_all(est, X, y, unit_cost, budget, tmp_path=None):
    """Every invariant of a fitted estimator, each against a brute force."""
    Xv = np.asarray(X.values if isinstance(X, pd.DataFrame) else X, dtype=float)
    pf = est.pruned_
    # cost: walked per example, equal to what the estimator reports, budget met
    walked = _walk_cost(pf, Xv, unit_cost)
    assert np.allclose(walked, est.acquisition_cost(X), rtol=1e-9, atol=0)
    if budget is not None:
        prune = est.split_["prune"]
        assert walked[prune].mean() <= budget * (1 + 1e-9)
    # predictions: walked trees, sklearn export, JSON round trip, pickle
    pred = est.predict(X)
    if est._task == "classification":
        proba = est.predict_proba(X)
        assert np.allclose(_walk_proba(pf, Xv), proba, atol=1e-9)
        assert np.array_equal(est.classes_[np.argmax(proba, axis=1)], pred)
    else:
        assert np.allclose(_walk_proba(pf, Xv).ravel(), pred, rtol=1e-9, atol=1e-9)
    export_agrees(est, X)
    back = pickle.loads(pickle.dumps(est))
    assert np.array_equal(back.predict(X), pred)
    if tmp_path is not None:
        path = tmp_path / "m.json"
        est.save(path)
        loaded = type(est).load(path)
        assert np.array_equal(loaded.predict(X), pred)
        assert np.array_equal(po.load(path).predict(Xv), pred)
        assert np.allclose(loaded.acquisition_cost(X), walked)
    # the candidates table describes what was tried and why the winner won
    table = est.candidates_
    assert int(table["chosen"].sum()) == 1
    assert table["reason"].str.len().gt(0).all()
    if budget is not None:
        win = table[table["chosen"]].iloc[0]
        assert bool(win["fits_budget"])
        sel = est.selected_
        prune, select = est.split_["prune"], est.split_["select"]
        assert win["average_cost"] == pytest.approx(_walk_cost(sel, Xv[prune], unit_cost).mean(),
                                                    rel=1e-9, abs=0)
        assert win["select_cost"] == pytest.approx(
            _walk_cost(sel, Xv[select], unit_cost).mean(), rel=1e-9, abs=0)
        assert win["score"] == pytest.approx(sel.score(Xv[select], np.asarray(y)[select]))
        fits = table[table["fits_budget"]]
        assert (fits["average_cost"] <= budget * (1 + 1e-9)).all()
        # the prior's rules set candidates aside before the selection rule, whatever the
        # load (fewer candidates under a short time_limit leave a model at the prior's
        # score, often of a low Brier loss, within one standard error of the best)
        yv = np.asarray(y)
        prior = _prior(yv[select], est)
        pool = selection_pool(table, prior)
        assert win.name in pool.index
        if (fits["score"] > prior + 1e-12).any():
            assert win["score"] > prior + 1e-12 and bool(win["above_prior"])
        top = fits["score"].max()
        assert pool["score"].max() == top  # the best is never set aside
        if is_classifier(est):  # one-standard-error rule: the lowest Brier loss in reach
            se = np.sqrt(top * (1 - top) / select.size)
            near = pool[pool["score"] >= top - se - 1e-12]
            assert win["score"] >= top - se - 1e-12
            assert win["brier"] <= near["brier"].min() + 1e-12
        else:
            assert win["score"] >= top - 1e-12
        bad = table[~table["fits_budget"] & table["average_cost"].notna()]
        # a candidate misses on the prune rows, or on every row given to fit with its
        # margin of standard errors (the cost a new row is expected to pay)
        over = np.maximum(bad["average_cost"], bad["fit_cost_bound"].fillna(-np.inf))
        assert (over > budget * (1 + 1e-9)).all()
        allrows = _walk_cost(sel, Xv, unit_cost)
        assert win["fit_cost"] == pytest.approx(allrows.mean(), rel=1e-9, abs=0)
        assert win["fit_cost_bound"] <= budget * (1 + 1e-9)
    return pred


def _prior(y_select, est):
    """The prior's select-row score: the majority class's share, or an R² of 0."""
    if not is_classifier(est):
        return 0.0
    return float(np.max(np.unique(y_select, return_counts=True)[1]) / y_select.size)


def _blobs(n=120, d=4, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    if n_classes == 3:
        y = y + (X[:, 1] > 0.8)
    return X, y


# ------------------------------------------------------------- tiny data
def test_two_rows_with_a_budget_is_a_clear_error():
    X, y = np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0, 1])
    with pytest.raises(ValueError, match="n_samples=2"):
        BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y)


def test_two_rows_without_a_budget_fit_and_agree():
    X, y = np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0, 1])
    est = BudgetPrunedForestClassifier(**TINY).fit(X, y)
    _check_all(est, X, y, [1.0, 1.0], None)


@pytest.mark.parametrize("per_class", [4, 5, 7])
def test_few_rows_per_class(per_class, tmp_path):
    X, y = _blobs(n=2 * per_class, seed=per_class)
    y = np.repeat([0, 1], per_class)
    est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(X, y)
    _check_all(est, X, y, np.ones(4), 1.5, tmp_path)


def test_three_rows_per_class_is_a_clear_error():
    X, _ = _blobs(n=6)
    y = np.repeat([0, 1], 3)
    with pytest.raises(ValueError, match="too few"):
        BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(X, y)


@pytest.mark.parametrize("budget", [None, 0.0, 2.0])
def test_a_single_class(budget, tmp_path):
    X, _ = _blobs(n=40)
    y = np.full(40, "only")
    est = BudgetPrunedForestClassifier(budget=budget, **TINY).fit(X, y)
    pred = _check_all(est, X, y, np.ones(4), budget, tmp_path)
    assert (pred == "only").all()
    assert np.allclose(est.predict_proba(X), 1.0)


def test_a_rare_class_with_one_row_per_part():
    X, y = _blobs(n=60)
    y[:] = 0
    y[:3] = 1  # one grow, one prune, one select row at most
    est = BudgetPrunedForestClassifier(budget=2.0, **TINY).fit(X, y)
    _check_all(est, X, y, np.ones(4), 2.0)
    assert list(est.classes_) == [0, 1]


# ------------------------------------------------------------- features and costs
def test_constant_features(tmp_path):
    X = np.ones((60, 3))
    y = np.arange(60) % 2
    est = BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y)
    _check_all(est, X, y, np.ones(3), 1.0, tmp_path)
    assert est.pruned_.n_splits == 0 and est.average_cost(X) == 0.0


def test_some_constant_features():
    X, y = _blobs(n=80)
    X[:, 1] = 3.0
    est = BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y)
    _check_all(est, X, y, np.ones(4), 1.0)
    assert est.feature_usage(X)["never"].iloc[1] == 1.0  # a constant column is never split on
    assert not (est.pruned_.forest.feature[est.pruned_.split_mask] == 1).any()


@pytest.mark.parametrize("budget", [0.0, 1.0])
def test_all_zero_costs(budget, tmp_path):
    X, y = _blobs(n=80)
    est = BudgetPrunedForestClassifier(budget=budget, costs=np.zeros(4), **TINY).fit(X, y)
    _check_all(est, X, y, np.zeros(4), budget, tmp_path)
    assert est.pruned_.n_splits > 0  # everything is free: nothing needs pruning
    assert est.average_cost(X) == 0.0


def test_one_feature(tmp_path):
    X, y = _blobs(n=80, d=1)
    est = BudgetPrunedForestClassifier(budget=0.5, costs=[1.0], **TINY).fit(X, y)
    _check_all(est, X, y, [1.0], 0.5, tmp_path)


@pytest.mark.parametrize("scale", [1e-13, 1e-6, 1.0, 1e6, 1e13])
def test_cost_scale_does_not_change_what_the_searches_see(scale):
    X, y = _blobs(n=120, d=4, seed=3)
    costs = np.array([1.0, 2.0, 0.5, 3.0])
    ref = BudgetPrunedForestClassifier(budget=1.2, costs=costs, **ROOMY).fit(X, y)
    est = BudgetPrunedForestClassifier(budget=1.2 * scale, costs=costs * scale,
                                       **ROOMY).fit(X, y)
    _check_all(est, X, y, costs * scale, 1.2 * scale)
    # the candidates are grown and ranked on the same normalised costs; the prunings
    # may differ only where a search was stopped by its time limit
    assert list(est.candidates_["name"]) == list(ref.candidates_["name"])
    grown = ref.candidates_["objective"] == "none"
    assert np.allclose(est.candidates_.loc[grown, "average_cost"],
                       ref.candidates_.loc[grown, "average_cost"] * scale, rtol=1e-9)
    s_ref, n_ref = _normalised_costs(as_feature_costs(costs, 4))
    s_est, n_est = _normalised_costs(as_feature_costs(costs * scale, 4))
    assert np.allclose(n_est.unit_costs, n_ref.unit_costs, rtol=1e-12)
    assert s_est == pytest.approx(s_ref * scale, rel=1e-12)


def test_budget_zero_gives_a_free_model(tmp_path):
    X, y = _blobs(n=100)
    est = BudgetPrunedForestClassifier(budget=0.0, costs=[1.0, 2.0, 3.0, 4.0],
                                       **TINY).fit(X, y)
    _check_all(est, X, y, [1.0, 2.0, 3.0, 4.0], 0.0, tmp_path)
    assert est.average_cost(X) == 0.0


FREE_FIRST = np.array([0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0])


def _free_first_data(task, n=300):
    """make_classification / make_regression rows whose first two features are free (the
    seed where prunings at budget 0 left paid splits that only rows outside the prune
    rows reach)."""
    from sklearn.datasets import make_classification, make_regression

    if task == "classification":
        return make_classification(n_samples=n, n_features=8, n_informative=5,
                                   random_state=3)
    return make_regression(n_samples=n, n_features=8, n_informative=5, noise=1.0,
                           random_state=3)


@pytest.mark.parametrize("cls, family", [
    *[(BudgetPrunedForestClassifier, f) for f in ("rf", "shallow", "subset", "gbm", "cegb",
                                                  "lazy")],
    *[(BudgetPrunedForestRegressor, f) for f in ("rf", "shallow", "subset", "gbm", "cegb")]])
def test_budget_zero_with_free_features_gives_the_zero_cost_model(cls, family, tmp_path):
    # at budget 0 a pruning that costs nothing on the prune rows could keep paid splits
    # that other rows reach; the retry then divided by the budget (ZeroDivisionError)
    # whenever the clock left room for it. The answer is the model on the free features
    if family == "cegb":
        pytest.importorskip("lightgbm")
    task = "classification" if cls is BudgetPrunedForestClassifier else "regression"
    X, y = _free_first_data(task)
    est = cls(budget=0, costs=FREE_FIRST, candidates=[family], time_limit=10,
              random_state=0).fit(X, y)
    _check_all(est, X, y, FREE_FIRST, 0.0, tmp_path)
    pf = est.pruned_
    # the zero-cost model: every kept split tests a free feature, so no row pays, not
    # even one far from the rows given to fit
    assert np.all(FREE_FIRST[pf.forest.feature[pf.split_mask]] == 0)
    anywhere = np.random.default_rng(0).uniform(X.min(0) - 1, X.max(0) + 1, size=(2000, 8))
    assert np.all(_walk_cost(pf, anywhere, FREE_FIRST) == 0)
    fitting = est.candidates_[est.candidates_["fits_budget"]]
    assert len(fitting) and (fitting["fit_cost"] == 0).all()


def test_budget_above_the_full_cost_keeps_a_whole_forest():
    X, y = _blobs(n=100)
    est = BudgetPrunedForestClassifier(budget=1e6, **ROOMY).fit(X, y)
    _check_all(est, X, y, np.ones(4), 1e6)
    table = est.candidates_
    assert (table["objective"] == "none").all() and table["fits_budget"].all()


def test_budget_below_the_cheapest_feature():
    X, y = _blobs(n=100)
    costs = [2.0, 3.0, 4.0, 5.0]
    est = BudgetPrunedForestClassifier(budget=1.0, costs=costs, **TINY).fit(X, y)
    _check_all(est, X, y, costs, 1.0)
    # every split sends all rows of its tree through a feature of cost >= 2 at the root
    assert est.pruned_.n_splits == 0


def test_duplicate_columns(tmp_path):
    X, y = _blobs(n=100)
    X = np.hstack([X, X[:, :2]])
    est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(X, y)
    _check_all(est, X, y, np.ones(6), 1.5, tmp_path)


@pytest.mark.parametrize("names", [
    ["a b", "é", "x,y", "{}"],
    ["1", "2", "3", "4"],
    ["", " ", "\t", "\n"],
    ["f\"q", "back\\slash", "日本", "None"],
])
def test_dataframe_with_odd_column_names(names, tmp_path):
    X, y = _blobs(n=100)
    frame = pd.DataFrame(X, columns=names)
    costs = dict(zip(names, [1.0, 2.0, 1.0, 3.0]))
    est = BudgetPrunedForestClassifier(budget=1.5, costs=costs, **TINY).fit(frame, y)
    _check_all(est, frame, y, [1.0, 2.0, 1.0, 3.0], 1.5, tmp_path)
    assert list(est.feature_names_in_) == names
    loaded = BudgetPrunedForestClassifier.load(tmp_path / "m.json")
    assert list(loaded.feature_names_in_) == names
    with pytest.raises(ValueError):
        est.predict(frame[names[::-1]])  # columns reordered


def test_dataframe_with_non_string_column_names_is_refused_or_kept():
    X, y = _blobs(n=100)
    frame = pd.DataFrame(X, columns=[0, 1, 2, 3])  # integer names: sklearn ignores them
    est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(frame, y)
    _check_all(est, frame, y, np.ones(4), 1.5)


# ------------------------------------------------------------- labels
@pytest.mark.parametrize("labels", [
    np.array(["no", "yes"]),
    np.array([False, True]),
    np.array(["no", "yes"], dtype=object),
    np.array([-3, 10**12]),
    np.array([1, 2], dtype=np.uint8),
    np.array([1.0, 2.0]),
])
def test_label_kinds(labels, tmp_path):
    X, y01 = _blobs(n=100)
    y = labels[y01]
    est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(X, y)
    pred = _check_all(est, X, y, np.ones(4), 1.5, tmp_path)
    assert set(pred.tolist()) <= set(labels.tolist())
    assert est.score(X, y) == np.mean(pred == y)
    loaded = BudgetPrunedForestClassifier.load(tmp_path / "m.json")
    assert loaded.score(X, y) == est.score(X, y)


def test_three_classes(tmp_path):
    X, y = _blobs(n=150, n_classes=3)
    est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(X, y)
    _check_all(est, X, y, np.ones(4), 1.5, tmp_path)
    assert est.predict_proba(X).shape == (150, 3)


@pytest.mark.parametrize("y", [np.linspace(0, 1, 50),
                               np.array(["b", 7] * 25, dtype=object),
                               np.array([3, 7] * 25, dtype=object),
                               np.array([0.5, 2.5] * 25)])
def test_continuous_or_mixed_labels_are_refused_by_the_classifier(y):
    X, _ = _blobs(n=50)
    with pytest.raises(ValueError, match="[Uu]nknown label type|continuous|mix"):
        BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y)


# ------------------------------------------------------------- determinism
def test_same_seed_same_model():
    X, y = _blobs(n=120)
    a = BudgetPrunedForestClassifier(budget=1.5, **ROOMY).fit(X, y)
    b = BudgetPrunedForestClassifier(budget=1.5, **ROOMY).fit(X, y)
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    assert all(np.array_equal(a.split_[k], b.split_[k]) for k in a.split_)
    assert list(a.candidates_["name"]) == list(b.candidates_["name"])


@pytest.mark.parametrize("perm_seed", [1, 2])
def test_permuted_rows_keep_every_guarantee(perm_seed):
    X, y = _blobs(n=120)
    p = np.random.default_rng(perm_seed).permutation(120)
    est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(X[p], y[p])
    _check_all(est, X[p], y[p], np.ones(4), 1.5)


def test_a_random_state_instance_is_not_consumed_differently_each_fit():
    X, y = _blobs(n=120)
    est = BudgetPrunedForestClassifier(budget=1.5, **{**TINY, "random_state": None})
    est.set_params(random_state=np.random.RandomState(5))
    est.fit(X, y)
    _check_all(est, X, y, np.ones(4), 1.5)


# ------------------------------------------------------------- regression
def test_regression_constant_target(tmp_path):
    X, _ = _blobs(n=80)
    y = np.full(80, 3.25)
    est = BudgetPrunedForestRegressor(budget=1.0, **TINY).fit(X, y)
    pred = _check_all(est, X, y, np.ones(4), 1.0, tmp_path)
    assert np.allclose(pred, 3.25)


@pytest.mark.parametrize("scale", [1e-150, 1e150])
def test_regression_huge_or_tiny_targets(scale):
    X, _ = _blobs(n=100)
    y = (X[:, 0] + 0.1 * X[:, 1]) * scale
    est = BudgetPrunedForestRegressor(budget=1.0, **TINY).fit(X, y)
    pred = _check_all(est, X, y, np.ones(4), 1.0)
    assert np.all(np.isfinite(pred))
    assert est.pruned_.n_splits > 0  # the target is not constant


def test_regression_with_a_dataframe_and_save(tmp_path):
    X, _ = _blobs(n=100)
    y = X[:, 0] * 2 + X[:, 2]
    frame = pd.DataFrame(X, columns=list("abcd"))
    est = BudgetPrunedForestRegressor(budget=1.0, costs={"a": 1, "b": 1, "c": 0.5, "d": 2},
                                      **TINY).fit(frame, y)
    _check_all(est, frame, y, [1.0, 1.0, 0.5, 2.0], 1.0, tmp_path)


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize("where", ["fit", "predict"])
@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_inf_is_refused_naming_x(where, value):
    X, y = _blobs(n=80)
    bad = X.copy()
    bad[5, 2] = value
    est = BudgetPrunedForestClassifier(budget=1.0, **TINY)
    if where == "fit":
        with pytest.raises(ValueError, match="X contains infinity"):
            est.fit(bad, y)
    else:
        est.fit(X, y)
        with pytest.raises(ValueError, match="X contains infinity"):
            est.predict(bad)


@pytest.mark.parametrize("cls", [BudgetPrunedForestClassifier, BudgetPrunedForestRegressor])
def test_nan_is_a_missing_value_at_fit_and_predict(cls, tmp_path):
    """NaN in X is accepted: the walk that follows each node's missing-value side,
    the sklearn export and the JSON round trip agree on rows with NaN, and the
    budget holds on the prune rows."""
    X, y = _blobs(n=160, seed=3)
    rng = np.random.default_rng(3)
    X[rng.random(X.shape) < 0.2] = np.nan
    rows = np.isnan(X).any(axis=1)
    assert np.isnan(X[:, 0]).any() and rows.sum() > 40
    target = y if cls is BudgetPrunedForestClassifier else y + np.nan_to_num(X[:, 1])
    est = cls(budget=1.5, **TINY).fit(X, target)
    assert est.pruned_.n_splits > 0
    pred = _check_all(est, X, target, np.ones(4), 1.5, tmp_path)
    assert np.array_equal(est.predict(X[rows]), pred[rows])
    kept = [est.pruned_.pruned_tree_arrays(t) for t in range(est.pruned_.n_trees)]
    # the walk's NaN branch is exercised: some kept split meets a NaN on its feature
    assert any(np.isnan(X[:, a["feature"][a["left"] >= 0]]).any() for a in kept)


@pytest.mark.parametrize("method", ["predict", "predict_proba", "acquisition_cost",
                                    "score"])
def test_wrong_feature_count_at_predict(method):
    X, y = _blobs(n=80)
    est = BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y)
    args = (X[:, :3], y) if method == "score" else (X[:, :3],)
    with pytest.raises(ValueError, match="features"):
        getattr(est, method)(*args)


@pytest.mark.parametrize("kwargs, match", [
    (dict(budget=np.nan), "budget"),
    (dict(budget=-0.5), "budget"),
    (dict(budget=1.0, costs=[1.0, -1.0, 1.0, 1.0]), "cost"),
    (dict(budget=1.0, costs=[1.0, np.nan, 1.0, 1.0]), "cost"),
    (dict(budget=1.0, costs={"nope": 1.0}), "nope|name|cost"),
    (dict(budget=1.0, time_limit=0), "time_limit"),
    (dict(budget=1.0, n_estimators=0), "n_estimators"),
])
def test_bad_parameters_are_refused_naming_the_argument(kwargs, match):
    X, y = _blobs(n=80)
    with pytest.raises(ValueError, match=match):
        BudgetPrunedForestClassifier(**{**TINY, **kwargs}).fit(X, y)


def test_predict_before_fit_is_a_not_fitted_error():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        BudgetPrunedForestClassifier(budget=1.0).predict(np.zeros((2, 4)))


def test_y_with_wrong_length_is_refused():
    X, y = _blobs(n=80)
    with pytest.raises(ValueError, match="inconsistent|samples"):
        BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y[:-1])


# ------------------------------------------------------------- scikit-learn tools
def test_grid_search_with_two_jobs():
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:200], y[:200]
    grid = GridSearchCV(BudgetPrunedForestClassifier(**TINY),
                        {"budget": [0.5, 3.0]}, cv=2, n_jobs=2).fit(X, y)
    best = grid.best_estimator_
    _check_all(best, X, y, np.ones(X.shape[1]), best.budget)


def test_clone_after_fit_is_unfitted_with_the_same_params():
    from sklearn.exceptions import NotFittedError

    X, y = _blobs(n=80)
    est = BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y)
    twin = clone(est)
    assert twin.get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        twin.predict(X)
    assert np.array_equal(twin.fit(X, y).predict(X), est.predict(X))


def test_pickle_and_json_agree(tmp_path):
    X, y = _blobs(n=120, n_classes=3)
    est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(X, y)
    back = pickle.loads(pickle.dumps(est))
    est.save(tmp_path / "m.json")
    loaded = BudgetPrunedForestClassifier.load(tmp_path / "m.json")
    for other in (back, loaded):
        assert np.array_equal(other.predict(X), est.predict(X))
        assert np.allclose(other.predict_proba(X), est.predict_proba(X), atol=1e-12)
        assert np.allclose(other.acquisition_cost(X), est.acquisition_cost(X))
    assert back.candidates_.equals(est.candidates_)


def test_load_with_the_wrong_class_is_refused(tmp_path):
    X, y = _blobs(n=80)
    BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y).save(tmp_path / "m.json")
    with pytest.raises(ValueError, match="BudgetPrunedForestRegressor"):
        BudgetPrunedForestRegressor.load(tmp_path / "m.json")


def test_refit_with_fewer_features_resets_the_width():
    X, y = _blobs(n=80)
    est = BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y)
    est.fit(X[:, :3], y)
    assert est.n_features_in_ == 3
    _check_all(est, X[:, :3], y, np.ones(3), 1.0)


# ------------------------------------------------------------- prune-opt fit
def _csv(tmp_path, frame, costs):
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    (tmp_path / "costs.json").write_text(json.dumps(costs))
    return path


def _cli_fit(tmp_path, path, *extra, target="y"):
    from prune_opt.cli import main

    out, summary = tmp_path / "m.json", tmp_path / "s.json"
    code = main(["fit", "--dataset", str(path), "--target", target, "--costs",
                 str(tmp_path / "costs.json"), "--trees", "3", "--time-limit", "2", "--quiet",
                 "--out", str(out), "--json", str(summary), *extra])
    assert code == 0
    return po.load(out), json.loads(summary.read_text())


def _odd_frame(n=160, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    names = ["blood pressure", "a,b", "naïve", "x\"q"]
    frame = pd.DataFrame(X, columns=names)
    frame["y"] = np.where(X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, 0)
    return frame, names


@pytest.mark.parametrize("order", [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2]])
def test_cli_fit_cost_file_is_read_by_name(order, tmp_path):
    frame, names = _odd_frame()
    unit = {n: c for n, c in zip(names, [5.0, 1.0, 3.0, 2.0])}
    costs = {names[i]: unit[names[i]] for i in order}  # the file lists them in any order
    pf, s = _cli_fit(tmp_path, _csv(tmp_path, frame, costs), "--budget", "1.5")
    X = frame[names].to_numpy()
    walked = _walk_cost(pf, X, [unit[n] for n in names])
    assert np.allclose(walked, pf.acquisition_cost(X))
    assert s["prune_rows_average_cost"] <= 1.5 * (1 + 1e-9)
    assert list(pf.forest.feature_names) == names


@pytest.mark.parametrize("budget", ["0", "1e9"])
def test_cli_fit_extreme_budgets(budget, tmp_path):
    frame, names = _odd_frame()
    pf, s = _cli_fit(tmp_path, _csv(tmp_path, frame, {n: 1.0 for n in names}),
                     "--budget", budget)
    assert s["prune_rows_average_cost"] <= float(budget) * (1 + 1e-9)
    X = frame[names].to_numpy()
    assert np.allclose(_walk_cost(pf, X, np.ones(4)), pf.acquisition_cost(X))
    if budget == "0":
        assert pf.n_splits == 0 and s["test_average_cost"] == 0.0


def test_cli_fit_budget_share_above_one_keeps_the_whole_forest(tmp_path):
    frame, names = _odd_frame()
    pf, s = _cli_fit(tmp_path, _csv(tmp_path, frame, {n: 1.0 for n in names}),
                     "--budget-share", "3")
    assert s["prune_rows_average_cost"] <= s["budget"] * (1 + 1e-9)
    assert s["candidates"][0]["objective"] == "none"


def test_cli_fit_regression_with_huge_targets(tmp_path):
    frame, names = _odd_frame()
    frame["y"] = frame[names[0]] * 1e150
    pf, s = _cli_fit(tmp_path, _csv(tmp_path, frame, {n: 1.0 for n in names}),
                     "--budget", "1")
    X = frame[names].to_numpy()
    assert pf.task == "regression" and pf.n_splits > 0
    assert np.all(np.isfinite(pf.predict(X)))
    assert s["test_r2"] > 0.5


# ------------------------------------------------------------- input containers
@pytest.mark.parametrize("kind", ["list", "int", "float32", "fortran"])
def test_input_containers(kind, tmp_path):
    X, y = _blobs(n=100)
    Xi = {"list": lambda: (X.tolist()), "int": lambda: np.round(X * 10).astype(np.int64),
          "float32": lambda: X.astype(np.float32), "fortran": lambda: np.asfortranarray(X)}[kind]()
    est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(Xi, y)
    _check_all(est, np.asarray(Xi, dtype=float), y, np.ones(4), 1.5, tmp_path)


def test_sparse_input_is_refused():
    from scipy import sparse

    X, y = _blobs(n=60)
    with pytest.raises((TypeError, ValueError), match="[Ss]parse"):
        BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(sparse.csr_matrix(X), y)


def test_categorical_series_labels():
    X, y = _blobs(n=100)
    labels = pd.Series(pd.Categorical(np.where(y == 1, "hi", "lo")))
    est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(X, labels)
    _check_all(est, X, labels.astype(str).to_numpy(), np.ones(4), 1.5)
    assert set(est.predict(X)) <= {"hi", "lo"}


def test_column_vector_y_is_accepted_with_sklearn_s_warning():
    from sklearn.exceptions import DataConversionWarning

    X, y = _blobs(n=100)
    with pytest.warns(DataConversionWarning):
        est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(X, y[:, None])
    _check_all(est, X, y, np.ones(4), 1.5)


def test_regressor_in_grid_search_with_two_jobs():
    X, _ = _blobs(n=120)
    y = X[:, 0] * 3 + X[:, 1]
    grid = GridSearchCV(BudgetPrunedForestRegressor(**TINY), {"budget": [0.5, 2.0]}, cv=2,
                        n_jobs=2).fit(X, y)
    _check_all(grid.best_estimator_, X, y, np.ones(4), grid.best_estimator_.budget)


@pytest.mark.parametrize("junk", [lambda n: [None] * n, lambda n: ["1.5"] * n,
                                  lambda n: np.array(["x"] * n, dtype=object)])
def test_lazy_predictor_refuses_a_callback_that_returns_junk(junk):
    X, y = _blobs(n=100)
    est = BudgetPrunedForestClassifier(budget=2.0, **TINY).fit(X, y)
    assert est.pruned_.n_splits > 0
    lazy = est.lazy_predictor(lambda rows, unit: junk(len(rows)))
    with pytest.raises(ValueError, match="unit"):
        lazy.predict_proba(np.full((5, 4), np.nan))


def test_lazy_predictor_pays_what_the_walk_pays():
    X, y = _blobs(n=100)
    costs = [1.0, 2.0, 0.5, 3.0]
    est = BudgetPrunedForestClassifier(budget=2.0, costs=costs, **TINY).fit(X, y)

    def fetch(rows, unit):
        return X[rows][:, unit.features[0]]

    out = est.lazy_predictor(fetch).predict_proba(np.full_like(X, np.nan))
    assert np.array_equal(out.labels, est.predict(X))
    assert np.allclose(out.cost_paid, _walk_cost(est.pruned_, X, costs))


# ------------------------------------------------------------- shared units, options
def _walk_unit_cost(pf, X, own, groups, requires=None):
    """Per-example cost with shared units: a used feature pays its own unit, every group
    it belongs to, and the own units of the features it requires (once each)."""
    X = np.asarray(X, dtype=float)
    out = np.zeros(X.shape[0])
    for i, x in enumerate(X):
        used = features_met(pf, x)
        for f in list(used):
            used |= set((requires or {}).get(f, []))
        units = {("own", f) for f in used}
        units |= {("group", g) for g, (_, members) in groups.items() if used & set(members)}
        out[i] = sum(own[f] for _, f in [u for u in units if u[0] == "own"]) + sum(
            groups[g][0] for _, g in [u for u in units if u[0] == "group"])
    return out


@pytest.mark.parametrize("budget", [0.5, 2.0, 4.0])
def test_shared_units_are_paid_once(budget, tmp_path):
    X, y = _blobs(n=120)
    own, groups = [1.0, 0.0, 2.0, 0.5], {"panel": (3.0, [0, 1])}
    fc = po.FeatureCosts(own, groups=groups)
    est = BudgetPrunedForestClassifier(budget=budget, costs=fc, **TINY).fit(X, y)
    walked = _walk_unit_cost(est.pruned_, X, own, groups)
    assert np.allclose(walked, est.acquisition_cost(X))
    assert walked[est.split_["prune"]].mean() <= budget * (1 + 1e-9)
    est.save(tmp_path / "m.json")
    back = BudgetPrunedForestClassifier.load(tmp_path / "m.json")
    assert np.allclose(back.acquisition_cost(X), walked)


def test_required_features_are_paid():
    X, y = _blobs(n=120)
    own, requires = [1.0, 0.0, 2.0, 0.5], {1: [2]}  # feature 1 is free but needs feature 2
    fc = po.FeatureCosts(own, requires=requires)
    est = BudgetPrunedForestClassifier(budget=1.0, costs=fc, **TINY).fit(X, y)
    walked = _walk_unit_cost(est.pruned_, X, own, {}, requires)
    assert np.allclose(walked, est.acquisition_cost(X))
    assert walked[est.split_["prune"]].mean() <= 1.0 * (1 + 1e-9)


@pytest.mark.parametrize("kwargs", [
    dict(n_estimators=1), dict(max_subsets=0), dict(refit=False), dict(time_limit=0.01),
    dict(final_refit=True), dict(regrow=True), dict(regrow=True, final_refit=True),
])
def test_option_corners(kwargs, tmp_path):
    X, y = _blobs(n=150, n_classes=3)
    est = BudgetPrunedForestClassifier(budget=1.5, **{**TINY, **kwargs}).fit(X, y)
    _check_all(est, X, y, np.ones(4), 1.5, tmp_path)


@pytest.mark.parametrize("kwargs", [dict(regrow=True), dict(final_refit=True)])
def test_regressor_option_corners(kwargs):
    X, _ = _blobs(n=150)
    y = 1e6 + 1e3 * (X[:, 0] - X[:, 2])
    est = BudgetPrunedForestRegressor(budget=1.5, **{**TINY, **kwargs}).fit(X, y)
    _check_all(est, X, y, np.ones(4), 1.5)
    assert est.score(X, y) > 0.1  # a constant (collapsed) regressor scores <= 0; the fit is time-limited


def test_refit_with_a_new_budget_replaces_everything():
    X, y = _blobs(n=120)
    est = BudgetPrunedForestClassifier(budget=3.0, **TINY).fit(X, y)
    est.set_params(budget=0.5).fit(X, y)
    _check_all(est, X, y, np.ones(4), 0.5)
    assert (est.candidates_["fits_budget"] == (est.candidates_["average_cost"]
                                               <= 0.5 * (1 + 1e-9))).all()


def test_budget_exactly_at_a_whole_forest_s_cost_keeps_it():
    X, y = _blobs(n=120)
    probe = BudgetPrunedForestClassifier(budget=1e9, **TINY).fit(X, y)
    rf = probe.candidates_[probe.candidates_["name"] == "rf"].iloc[0]
    # a candidate fits on the prune rows and, with its margin, on every row given to fit
    whole = float(max(rf["average_cost"], rf["fit_cost_bound"]))
    est = BudgetPrunedForestClassifier(budget=whole, **TINY).fit(X, y)
    _check_all(est, X, y, np.ones(4), whole)
    row = est.candidates_[est.candidates_["name"] == "rf"]
    assert len(row) == 1 and bool(row["fits_budget"].iloc[0])  # not pruned at equality


def test_dataframe_fit_array_predict_and_back():
    X, y = _blobs(n=100)
    frame = pd.DataFrame(X, columns=list("abcd"))
    est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(frame, y)
    with pytest.warns(UserWarning, match="feature names"):
        pred = est.predict(X)
    assert np.array_equal(pred, est.predict(frame))
    plain = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(X, y)
    with pytest.warns(UserWarning, match="feature names"):
        assert np.array_equal(plain.predict(frame), plain.predict(X))


# ------------------------------------------------------------- odd shapes and values
def test_wide_table_few_rows():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 120))
    y = (X[:, 7] > 0).astype(int)
    costs = rng.uniform(0.5, 2.0, size=120)
    est = BudgetPrunedForestClassifier(budget=1.0, costs=costs, **TINY).fit(X, y)
    _check_all(est, X, y, costs, 1.0)


@pytest.mark.parametrize("time_limit", [1.0, 0.05])  # 0.05: a machine too busy for most
def test_ten_classes_few_rows_each(time_limit):
    """Ten classes of 8 rows: 16 select rows, a prior of 0.125.  Which candidates grow in
    a second depends on the machine's load; whichever did, the winner follows the rule
    (a candidate at the prior's score within one standard error of the best, with a
    lower Brier loss, is set aside by the prior's rule, not chosen)."""
    rng = np.random.default_rng(2)
    y = np.repeat(np.arange(10), 8)
    X = rng.normal(size=(80, 3)) + y[:, None] * 0.5
    est = BudgetPrunedForestClassifier(budget=1.0, **dict(TINY, time_limit=time_limit)).fit(X, y)
    _check_all(est, X, y, np.ones(3), 1.0)
    assert est.predict_proba(X).shape == (80, 10)


def test_a_class_with_two_rows():
    X, y = _blobs(n=80)
    y[:] = 0
    y[[5, 50]] = 2
    est = BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y)
    _check_all(est, X, y, np.ones(4), 1.0)
    assert list(est.classes_) == [0, 2]


def test_identical_rows_with_conflicting_labels():
    X = np.tile(np.array([[1.0, 2.0], [3.0, 4.0]]), (30, 1))
    y = np.arange(60) % 3 % 2
    est = BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y)
    _check_all(est, X, y, np.ones(2), 1.0)


@pytest.mark.parametrize("value", [1e39, -1e39])
def test_values_beyond_float32_are_refused_naming_x(value):
    X, y = _blobs(n=60)
    X[3, 1] = value
    with pytest.raises(ValueError, match="X|float32|large"):
        BudgetPrunedForestClassifier(budget=1.0, **TINY).fit(X, y)


def test_subnormal_and_signed_zero_features():
    X, y = _blobs(n=100)
    X[:, 2] = np.where(X[:, 2] > 0, 5e-324, -0.0)
    X[:, 3] = X[:, 3] * 1e-30
    est = BudgetPrunedForestClassifier(budget=2.0, **TINY).fit(X, y)
    _check_all(est, X, y, np.ones(4), 2.0)


def test_load_ignores_unknown_recorded_params(tmp_path):
    X, y = _blobs(n=100)
    est = BudgetPrunedForestClassifier(budget=1.5, **TINY).fit(X, y)
    path = tmp_path / "m.json"
    est.save(path)
    doc = json.loads(path.read_text())
    text = json.dumps(doc).replace('"max_subsets": 1', '"max_subsets": 1, "bogus": 3')
    assert "bogus" in text
    path.write_text(text)
    back = BudgetPrunedForestClassifier.load(path)
    assert np.array_equal(back.predict(X), est.predict(X))
    assert "bogus" not in back.get_params()


@pytest.mark.parametrize("costs, needle", [
    ({"blood pressure": 1.0, "a,b": 1.0, "naïve": 1.0, "nope": 1.0}, "nope"),
    ({"blood pressure": 1.0, "a,b": -1.0, "naïve": 1.0, "x\"q": 1.0}, "a,b|negative|cost"),
])
def test_cli_fit_bad_cost_files_are_one_line_errors(costs, needle, tmp_path, capsys):
    from prune_opt.cli import main

    frame, names = _odd_frame()
    path = _csv(tmp_path, frame, costs)
    code = main(["fit", "--dataset", str(path), "--target", "y", "--costs",
                 str(tmp_path / "costs.json"), "--budget", "1", "--trees", "3", "--quiet",
                 "--out", str(tmp_path / "m.json")])
    err = capsys.readouterr().err
    assert code != 0 and not (tmp_path / "m.json").exists()
    assert re.search(needle, err) and "Traceback" not in err


def test_cli_fit_unknown_target_is_a_one_line_error(tmp_path, capsys):
    from prune_opt.cli import main

    frame, names = _odd_frame()
    path = _csv(tmp_path, frame, {n: 1.0 for n in names})
    code = main(["fit", "--dataset", str(path), "--target", "nope", "--budget", "1",
                 "--trees", "3", "--quiet", "--out", str(tmp_path / "m.json")])
    err = capsys.readouterr().err
    assert code != 0 and "nope" in err and "Traceback" not in err


def test_cli_fit_regression_budget_share(tmp_path):
    frame, names = _odd_frame()
    frame["y"] = frame[names[0]] * 2.5 + 0.1 * frame[names[2]] + 0.123
    pf, s = _cli_fit(tmp_path, _csv(tmp_path, frame, {n: 1.0 for n in names}),
                     "--budget-share", "0.3")
    X = frame[names].to_numpy()
    assert pf.task == "regression"
    assert s["prune_rows_average_cost"] <= s["budget"] * (1 + 1e-9)
    assert np.allclose(_walk_cost(pf, X, np.ones(4)), pf.acquisition_cost(X))
    assert np.allclose(_walk_proba(pf, X).ravel(), pf.predict(X))


# ------------------------------------------------------------- costs by name
def test_costs_as_a_series_in_another_order_are_matched_by_name():
    X, y = _blobs(n=120)
    frame = pd.DataFrame(X, columns=list("abcd"))
    unit = {"a": 3.0, "b": 1.0, "c": 0.5, "d": 2.0}
    series = pd.Series({k: unit[k] for k in "dcba"})
    est = BudgetPrunedForestClassifier(budget=1.5, costs=series, **TINY).fit(frame, y)
    _check_all(est, frame, y, [unit[k] for k in "abcd"], 1.5)


def test_costs_by_name_without_column_names_are_refused():
    X, y = _blobs(n=80)
    with pytest.raises(ValueError, match="name"):
        BudgetPrunedForestClassifier(budget=1.0, costs={"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0},
                                     **TINY).fit(X, y)


def test_feature_costs_naming_other_columns_are_refused():
    X, y = _blobs(n=80)
    frame = pd.DataFrame(X, columns=list("abcd"))
    fc = po.FeatureCosts([1.0, 2.0, 3.0, 4.0], feature_names=list("dcba"))
    with pytest.raises(ValueError, match="name|column"):
        BudgetPrunedForestClassifier(budget=1.0, costs=fc, **TINY).fit(frame, y)


def test_cli_fit_budget_share_when_the_forest_costs_nothing(tmp_path):
    frame, names = _odd_frame()
    for n in names:
        frame[n] = 1.0  # constant columns: the forest never splits, its cost is 0
    pf, s = _cli_fit(tmp_path, _csv(tmp_path, frame, {n: 1.0 for n in names}),
                     "--budget-share", "0.5")
    assert s["budget"] == 0.0 and pf.n_splits == 0 and s["test_average_cost"] == 0.0
