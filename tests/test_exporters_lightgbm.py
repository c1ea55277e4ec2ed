"""LightGBM exporter: a pruned boosted forest written as a LightGBM Booster predicts
exactly as the pruned forest (raw scores, probabilities, leaves, NaN included), holds
only the splits the pruning kept and costs what the pruned forest costs; float32
forests (scikit-learn's boosting) convert their thresholds exactly."""

import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import prune_opt as po
from prune_opt import Forest, PrunedForest
from prune_opt.exporters import lightgbm_model_text
from prune_opt.exporters._lightgbm import float64_threshold
from prune_opt.forest._ensemble import Ensemble
from prune_opt.importers import from_lightgbm, lightgbm_acquisition_cost, lightgbm_trees

lgb = pytest.importorskip("lightgbm", reason="lightgbm not installed (pip install "
                                             "prune-opt[lightgbm])")

TOL = 1e-9


def _data(task, seed=0, n=600, p=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    signal = X @ rng.normal(size=p) + 0.5 * rng.normal(size=n)
    X[rng.random(X.shape) < 0.1] = np.nan
    if task == "regression":
        return X, signal
    K = 2 if task == "binary" else 3
    return X, np.digitize(signal, np.quantile(signal, np.arange(1, K) / K))


def _leaf_ranks(pruned, t):
    """Old local id -> LightGBM leaf index of the exported tree t."""
    arrays = pruned.pruned_tree_arrays(t)
    leaf = arrays["left"] < 0
    rank = np.full(pruned.forest.tree_slice(t).stop - pruned.forest.tree_slice(t).start, -1)
    rank[arrays["old_ids"][leaf]] = np.arange(int(leaf.sum()))
    return rank


def check_export(pruned, X, costs=None):
    """The exported Booster against the pruned forest on X; returns the max differences."""
    booster = pruned.to_lightgbm()
    f = pruned.forest
    raw = booster.predict(X, raw_score=True)
    diffs = {"raw": np.abs(raw - pruned.decision_function(X)).max()}
    if f.task == "regression":
        diffs["predict"] = np.abs(booster.predict(X) - pruned.predict(X)).max()
    else:
        proba = booster.predict(X)
        proba = np.column_stack([1 - proba, proba]) if proba.ndim == 1 else proba
        diffs["proba"] = np.abs(proba - pruned.predict_proba(X)).max()
        np.testing.assert_array_equal(f.classes_[proba.argmax(axis=1)], pruned.predict(X))
    assert max(diffs.values()) <= TOL, diffs
    if f.n_trees == booster.num_trees():  # one exported tree per tree: compare leaves
        leaves = booster.predict(X, pred_leaf=True).reshape(X.shape[0], -1)
        ours = np.column_stack([_leaf_ranks(pruned, t)[pruned._leaves(f.check_X(X), t)]
                                for t in range(f.n_trees)])
        np.testing.assert_array_equal(ours, leaves)
    kept = set(f.feature[pruned.split_mask].tolist())
    used = {int(v) for tree in lightgbm_trees(booster) for v in tree["feature"] if v >= 0}
    assert used == kept  # only the kept splits' features, every one of them
    np.testing.assert_allclose(lightgbm_acquisition_cost(booster, X, costs),
                               pruned.acquisition_cost(X, costs), rtol=0, atol=1e-12)
    return diffs


MODELS = {"binary": lgb.LGBMClassifier, "multiclass": lgb.LGBMClassifier,
          "regression": lgb.LGBMRegressor}


@pytest.fixture(scope="module", params=sorted(MODELS))
def fitted(request):
    task = request.param
    X, y = _data(task)
    model = MODELS[task](n_estimators=15, num_leaves=8, verbose=-1,
                         random_state=0).fit(X[:300], y[:300])
    costs = np.random.default_rng(1).uniform(1, 5, X.shape[1])
    return task, model, X, y, costs


def test_pruned_at_a_lambda_exports_exactly(fitted):
    task, model, X, y, costs = fitted
    lam = {"regression": 0.003}.get(task, 0.002)
    pruned = po.prune(model, X[300:450], y[300:450], costs=costs, lam=lam, objective="paper")
    assert 0 < pruned.n_splits < int((~pruned.forest.is_leaf).sum())  # really pruned
    check_export(pruned, X[450:], costs)
    again = from_lightgbm(pruned.to_lightgbm())  # and LightGBM's text reads back
    np.testing.assert_array_equal(again.decision_function(X[450:]),
                                  pruned.decision_function(X[450:]))


def test_pruned_to_a_budget_exports_exactly(fitted):
    task, model, X, y, costs = fitted
    full = po.acquisition_cost(model, X[300:450], costs).mean()
    pruned = po.fit_budget(model, X[300:450], y[300:450], budget=0.4 * full, costs=costs,
                           time_limit=20)
    assert pruned.average_cost(X[300:450]) <= 0.4 * full * (1 + 1e-9)
    check_export(pruned, X[450:], costs)


def test_sub_forest_of_a_multiclass_model_fills_rounds_with_constant_trees():
    X, y = _data("multiclass", seed=2)
    model = lgb.LGBMClassifier(n_estimators=4, num_leaves=6, verbose=-1).fit(X, y)
    sub = po.as_forest(model).select_trees([0, 2, 3, 5, 11])  # classes 0, 2, 0, 2, 2
    pruned = PrunedForest(sub, sub.full_split_mask())
    booster = pruned.to_lightgbm()
    assert booster.num_trees() == 3 * 3  # rounds (0, -, 2), (0, -, 2), (-, -, 2)
    check_export(pruned, X)


# ---------------------------------------------------------------- other sources
def _float32_probes(forest, X):
    """Rows of X with one split's feature at float32 midpoints of its threshold and
    their float64 neighbours (where float32 rounding decides the branch)."""
    rows = [X]
    for h in np.flatnonzero(~forest.is_leaf)[:200]:
        thr = forest.threshold[h]
        low = np.float32(thr)
        low = np.nextafter(low, np.float32(-np.inf)) if low > thr else low
        high = np.nextafter(low, np.float32(np.inf))
        middle = (np.float64(low) + np.float64(high)) / 2
        values = [low, high, middle, np.nextafter(middle, -np.inf), np.nextafter(middle, np.inf)]
        block = np.repeat(X[:1], len(values), axis=0)
        block[:, forest.feature[h]] = values
        rows.append(block)
    return np.vstack(rows)


def test_float32_forests_of_scikit_learn_export_exactly():
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingRegressor

    X, y = _data("multiclass", seed=3, n=400)
    Xf = np.nan_to_num(X)  # GradientBoosting refuses NaN
    gb = GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0).fit(Xf, y)
    forest = po.as_forest(gb)
    assert forest.split_dtype == "float32" and forest.ensemble.init_score.any()
    diffs = check_export(PrunedForest(forest, forest.full_split_mask()),
                         _float32_probes(forest, Xf))
    assert diffs["raw"] == 0.0
    Xr, yr = _data("regression", seed=3, n=400)
    hgb = HistGradientBoostingRegressor(max_iter=5, max_leaf_nodes=6).fit(Xr, yr)
    forest = po.as_forest(hgb)  # float64 with NaN routing and an initial score
    pruned = po.prune(hgb, Xr, yr, lam=0.01)
    check_export(pruned, Xr)


@given(st.floats(allow_nan=False, width=64))
def test_float64_threshold_is_where_float32_rounding_crosses_the_threshold(thr):
    def rounded(x):  # float32(x) as the float64 the comparison sees
        with np.errstate(over="ignore"):
            return np.float64(np.float32(x))

    T = float64_threshold([thr])[0]
    assert rounded(T) <= thr or (np.isinf(T) and T < 0)
    assert (np.isinf(T) and T > 0) or not rounded(np.nextafter(T, np.inf)) <= thr


def test_thresholds_in_the_zero_band_move_to_its_edge_with_a_warning():
    stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
                 threshold=[0.0, 0, 0], value=[[0.0], [-1.0], [1.0]],
                 missing_go_to_left=[True, False, False])
    forest = Forest([stump], classes=None, n_features=1, split_dtype="float64",
                    ensemble=Ensemble("additive", "identity", init_score=0.25))
    pruned = PrunedForest(forest, forest.full_split_mask())
    with pytest.warns(UserWarning, match="inside the band"):
        booster = pruned.to_lightgbm()
    X = np.array([[-1.0], [-1e-36], [0.0], [-0.0], [1e-30], [2.0], [np.nan]])
    np.testing.assert_array_equal(booster.predict(X), pruned.predict(X))
    # a nonzero value inside the band is read as 0.0 by LightGBM: the documented exception
    assert booster.predict(np.array([[1e-36]]))[0] != pruned.predict(np.array([[1e-36]]))[0]


def test_averaged_forests_are_refused():
    from sklearn.ensemble import RandomForestClassifier

    X, y = _data("binary", n=100)
    rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(np.nan_to_num(X), y)
    pruned = po.prune(rf, np.nan_to_num(X), y, lam=0.01)
    with pytest.raises(ValueError, match="averaged forest.*to_sklearn"):
        pruned.to_lightgbm()


def test_text_needs_no_lightgbm_and_the_booster_names_the_install(fitted, monkeypatch):
    task, model, X, y, costs = fitted
    forest = po.as_forest(model)
    pruned = PrunedForest(forest, forest.full_split_mask())
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    assert lightgbm_model_text(pruned).startswith("tree\nversion=v4\n")
    with pytest.raises(ImportError, match=r"pip install prune-opt\[lightgbm\]"):
        pruned.to_lightgbm()


def test_an_export_saves_and_loads_in_every_format_lightgbm_writes(fitted, tmp_path):
    """LightGBM's model format, the model text, as a file and as a string, loads back
    into a booster predicting what the export predicts and reads back into prune-opt as
    the pruned trees; its JSON dump (which LightGBM writes but does not load) holds
    every tree."""
    task, model, X, y, costs = fitted
    forest = po.as_forest(model)
    pruned = po.PrunedForest(forest, forest.full_split_mask() & (forest.depth < 2))
    booster = pruned.to_lightgbm()
    expected = booster.predict(X, raw_score=True)
    booster.save_model(tmp_path / "pruned.txt")
    for back in (lgb.Booster(model_file=tmp_path / "pruned.txt"),
                 lgb.Booster(model_str=booster.model_to_string())):
        np.testing.assert_array_equal(back.predict(X, raw_score=True), expected)
    for source in (tmp_path / "pruned.txt", booster):
        np.testing.assert_array_equal(from_lightgbm(source).decision_function(X),
                                      pruned.decision_function(X))
    dump = booster.dump_model()
    assert len(dump["tree_info"]) == booster.num_trees()
