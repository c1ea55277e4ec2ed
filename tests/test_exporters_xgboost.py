"""XGBoost exporter: a pruned boosted model exported with ``to_xgboost()`` predicts like
the pruned model (1e-6 of the raw scores' scale), every row reaches the matching
leaf, and the booster asks for exactly the features the pruned model asks for (the
acquisition cost read off the booster's own paths equals ``acquisition_cost``)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.exporters._xgboost import xgboost_model_json
from prune_opt.importers import from_xgboost
from tests.boosted_cases import preorder_ids


@pytest.fixture(scope="module")
def xgb():
    return pytest.importorskip("xgboost")


def booster_trees(booster):
    return json.loads(booster.save_raw(raw_format="json"))[
        "learner"]["gradient_booster"]["model"]["trees"]


def booster_usage(booster, X, n_features):
    """(n_rows, n_features) bool: the features on each row's root-to-leaf path in any
    tree of the booster, read from XGBoost's leaves and the trees' parent arrays."""
    import xgboost

    leaves = booster.predict(xgboost.DMatrix(X), pred_leaf=True).astype(int)
    leaves = leaves.reshape(len(X), -1)
    used = np.zeros((len(X), n_features), dtype=bool)
    rows = np.arange(len(X))
    for t, tree in enumerate(booster_trees(booster)):
        parents, feature = np.array(tree["parents"]), np.array(tree["split_indices"])
        node = leaves[:, t]
        while (node != 0).any():
            up = node != 0
            parent = parents[node[up]]
            used[rows[up], feature[parent]] = True
            node = np.where(up, parents[np.where(up, node, 0)], 0)
    return used


def assert_exports_exactly(pruned, X, costs=None):
    import xgboost

    booster = pruned.to_xgboost()
    dm = xgboost.DMatrix(X)
    f = pruned.forest
    margin = booster.predict(dm, output_margin=True)
    scale = max(1.0, float(np.abs(margin).max()))
    assert np.abs(pruned.decision_function(X) - margin).max() <= 1e-6 * scale
    pred = booster.predict(dm)
    if f.task == "regression":
        assert np.abs(pruned.predict(X) - pred).max() <= 1e-6 * scale
    else:
        proba = pruned.predict_proba(X)
        got = pred if pred.ndim == 2 else np.column_stack([1 - pred, pred])
        assert np.abs(proba - got).max() <= 1e-6
    # the matching leaf: pruned_tree_arrays numbers the pruned tree in preorder
    leaves = booster.predict(dm, pred_leaf=True).astype(int).reshape(len(X), -1)
    Xc = f.check_X(X)
    for t, tree in enumerate(booster_trees(booster)[:f.n_trees]):
        old = pruned.pruned_tree_arrays(t)["old_ids"]
        local = preorder_ids(tree)[leaves[:, t]]
        assert np.array_equal(old[local], pruned._leaves(Xc, t))
        left, right = np.array(tree["left_children"]), np.array(tree["right_children"])
        assert np.array_equal(right[left >= 0], left[left >= 0] + 1)  # as XGBoost allocates
    # the same features, and the same cost on every row
    used = booster_usage(booster, X, f.n_features)
    assert np.array_equal(used, pruned.used_features(Xc).toarray() > 0)
    cost = used @ np.asarray(pruned.costs.unit_costs)
    assert np.allclose(cost, pruned.acquisition_cost(X), rtol=1e-12, atol=0)
    return booster


def data(kind, with_nan=False):
    loader = {"binary": load_breast_cancer, "multi": load_iris, "reg": load_diabetes}[kind]
    X, y = loader(return_X_y=True)
    if with_nan:
        X = X.copy()
        X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    return train_test_split(X, y, test_size=0.3, random_state=0)


@pytest.mark.parametrize("kind, lam", [("binary", 3e-3), ("multi", 1e-2), ("reg", 1e-2)])
@pytest.mark.parametrize("with_nan", [False, True])
def test_pruned_xgboost_model_exports_exactly(xgb, kind, lam, with_nan):
    Xtr, Xte, ytr, yte = data(kind, with_nan)
    cls = xgb.XGBRegressor if kind == "reg" else xgb.XGBClassifier
    model = cls(n_estimators=10, max_depth=3, n_jobs=1, random_state=0).fit(Xtr, ytr)
    costs = np.linspace(1.0, 5.0, Xtr.shape[1])
    pruned = po.prune(model, Xtr, ytr, costs=costs, lam=lam, objective="paper")
    assert 0 < pruned.n_splits < int((~pruned.forest.is_leaf).sum())  # really pruned
    assert_exports_exactly(pruned, Xte)


def test_deep_trees_export_exactly(xgb):
    # XGBoost unrolls the first levels of a tree into an array and walks the rest by
    # node ids (right child = left + 1): trees deeper than those levels test both
    Xtr, Xte, ytr, _ = data("reg", with_nan=True)
    model = xgb.XGBRegressor(n_estimators=3, max_depth=10, min_child_weight=0, n_jobs=1,
                             random_state=0).fit(Xtr, ytr)
    pruned = po.prune(model, Xtr, ytr, costs=np.arange(1.0, 11.0), lam=1e-2)
    assert 0 < pruned.n_splits < int((~pruned.forest.is_leaf).sum())
    assert pruned.forest.depth[pruned.split_mask].max() >= 7  # splits below level 6 kept
    assert_exports_exactly(pruned, np.vstack([Xtr, Xte]))


def test_fit_budget_result_exports_exactly(xgb):
    Xtr, Xte, ytr, yte = data("binary", with_nan=True)
    model = xgb.XGBClassifier(n_estimators=8, max_depth=3, n_jobs=1, random_state=0)
    model.fit(Xtr, ytr)
    costs = np.linspace(1.0, 5.0, Xtr.shape[1])
    full = po.acquisition_cost(model, Xtr, costs).mean()
    small = po.fit_budget(model, Xtr, ytr, budget=0.3 * full, costs=costs, time_limit=20)
    assert small.average_cost(Xtr) <= 0.3 * full * (1 + 1e-10)
    booster = assert_exports_exactly(small, Xte)
    assert booster.num_boosted_rounds() == small.forest.n_trees


def test_unpruned_export_is_the_original_model(xgb):
    Xtr, Xte, ytr, _ = data("multi", with_nan=True)
    model = xgb.XGBClassifier(n_estimators=5, max_depth=3, n_jobs=1).fit(Xtr, ytr)
    forest = po.as_forest(model)
    whole = po.PrunedForest(forest, forest.full_split_mask())
    booster = assert_exports_exactly(whole, Xte)
    original = model.get_booster()
    for mine, theirs in zip(booster_trees(booster), booster_trees(original)):
        internal = np.array(theirs["left_children"]) != -1
        assert np.array_equal(np.array(mine["split_conditions"], np.float32)[internal],
                              np.array(theirs["split_conditions"], np.float32)[internal])
    dm = xgb.DMatrix(Xte)
    assert np.abs(booster.predict(dm) - original.predict(dm)).max() <= 1e-6
    # and read back, the export is the same forest
    again = from_xgboost(booster)
    assert np.array_equal(again.threshold, forest.threshold)
    assert np.abs(again.decision_function(Xte) - forest.decision_function(Xte)).max() <= 1e-6


@pytest.mark.parametrize("cls, kind", [(GradientBoostingClassifier, "binary"),
                                       (GradientBoostingClassifier, "multi"),
                                       (GradientBoostingRegressor, "reg")])
def test_scikit_learn_gradient_boosting_exports_exactly(xgb, cls, kind):
    Xtr, Xte, ytr, _ = data(kind)
    gb = cls(n_estimators=6, max_depth=3, random_state=0).fit(Xtr, ytr)
    pruned = po.prune(gb, Xtr, ytr, lam=1e-3 if kind == "reg" else 1e-2)
    # rows on each float64 threshold and the float32 values around it
    f = pruned.forest
    inner = np.flatnonzero(pruned.split_mask)
    probes = np.repeat(Xte[:1], 3 * inner.size, axis=0)
    t = f.threshold[inner]
    t32 = t.astype(np.float32)
    values = np.concatenate([t, np.nextafter(t32, np.float32(-np.inf)),
                             np.nextafter(t32, np.float32(np.inf))])
    probes[np.arange(values.size), np.tile(f.feature[inner], 3)] = values
    assert_exports_exactly(pruned, np.vstack([Xte, probes]))


def test_an_output_without_trees_keeps_its_initial_score(xgb):
    Xtr, Xte, ytr, _ = data("multi")
    model = xgb.XGBClassifier(n_estimators=2, max_depth=2, n_jobs=1).fit(Xtr, ytr)
    sub = po.as_forest(model).select_trees([1, 4])  # classes 1 and 1: 0 and 2 have none
    booster = assert_exports_exactly(po.PrunedForest(sub, sub.full_split_mask()), Xte)
    assert booster.num_boosted_rounds() == 2


def test_written_file_loads_in_xgboost(xgb, tmp_path):
    Xtr, Xte, ytr, _ = data("reg")
    model = xgb.XGBRegressor(n_estimators=4, max_depth=3, n_jobs=1).fit(Xtr, ytr)
    pruned = po.prune(model, Xtr, ytr, lam=1e-3)
    path = tmp_path / "pruned.json"
    path.write_text(json.dumps(xgboost_model_json(pruned)))
    booster = xgb.Booster(model_file=str(path))
    pred = booster.predict(xgb.DMatrix(Xte))
    assert np.abs(pred - pruned.predict(Xte)).max() <= 1e-6 * np.abs(pred).max()


def test_feature_names_are_kept(xgb):
    pytest.importorskip("pandas")
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = xgb.XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1).fit(X, y)
    pruned = po.prune(model, X, y, lam=1e-2)
    booster = pruned.to_xgboost()
    assert booster.feature_names == list(X.columns)
    assert np.abs(booster.predict(xgb.DMatrix(X)) - pruned.predict_proba(X)[:, 1]).max() <= 1e-6


# ------------------------------------------------------------------ refusals
def test_averaged_forests_are_refused():
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="averages its trees.*to_sklearn"):
        xgboost_model_json(po.prune(rf, X, y, lam=1e-2))


def test_float64_forests_are_refused():
    X, y = load_breast_cancer(return_X_y=True)
    hgb = HistGradientBoostingClassifier(max_iter=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="float64.*rounds every feature to float32"):
        xgboost_model_json(po.prune(hgb, X, y, lam=1e-2))


def test_missing_xgboost_says_how_to_install(monkeypatch):
    X, y = load_breast_cancer(return_X_y=True)
    gb = GradientBoostingClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y)
    pruned = po.prune(gb, X, y, lam=1e-2)
    monkeypatch.setitem(sys.modules, "xgboost", None)
    with pytest.raises(ImportError, match=r"pip install prune-opt\[xgboost\]"):
        pruned.to_xgboost()


@pytest.mark.parametrize("kind", ["binary", "multi", "reg"])
def test_an_export_saves_and_loads_in_every_format_xgboost_writes(xgb, kind, tmp_path):
    """XGBoost's two model formats, JSON and UBJSON, as files and as raw bytes: each
    loads back into a booster predicting what the export predicts, and the JSON ones
    read back into prune-opt as the pruned trees."""
    Xtr, Xte, ytr, _ = data(kind, with_nan=True)
    cls = xgb.XGBRegressor if kind == "reg" else xgb.XGBClassifier
    model = cls(n_estimators=6, max_depth=3, n_jobs=1, random_state=0).fit(Xtr, ytr)
    forest = po.as_forest(model)
    pruned = po.PrunedForest(forest, forest.full_split_mask() & (forest.depth < 2))
    booster = pruned.to_xgboost()
    expected = booster.predict(xgb.DMatrix(Xte), output_margin=True)
    assert np.abs(expected - pruned.decision_function(Xte)).max() <= 1e-6 * max(
        1.0, float(np.abs(expected).max()))  # XGBoost sums in float32
    loaded = []
    for fmt in ("json", "ubj"):
        booster.save_model(tmp_path / f"pruned.{fmt}")
        loaded.append(xgb.Booster(model_file=str(tmp_path / f"pruned.{fmt}")))
        loaded.append(xgb.Booster(model_file=bytearray(booster.save_raw(raw_format=fmt))))
    for back in loaded:
        np.testing.assert_array_equal(back.predict(xgb.DMatrix(Xte), output_margin=True),
                                      expected)
    for source in (tmp_path / "pruned.json", booster, booster.save_raw(raw_format="json")):
        again = po.importers.from_xgboost(source)
        np.testing.assert_array_equal(again.decision_function(Xte),
                                      po.importers.from_xgboost(booster).decision_function(Xte))
        assert int((again.left >= 0).sum()) == pruned.n_splits
