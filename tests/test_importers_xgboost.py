"""XGBoost importer: every example reaches the leaf XGBoost's predictor sends it to, and
the raw margins and predictions equal XGBoost's to 1e-6 of their scale (XGBoost sums
in float32); refusals name what is supported; malformed JSON models are refused.

The JSON tests build documents by hand and need no XGBoost; the others skip when it
is not installed (``pip install prune-opt[xgboost]``).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.exceptions import NotFittedError

import prune_opt as po
from prune_opt.importers import from_xgboost
from tests.boosted_cases import preorder_ids


@pytest.fixture(scope="module")
def xgb():
    return pytest.importorskip("xgboost")


# ------------------------------------------------------------------ helpers
def model_doc(booster):
    return json.loads(booster.save_raw(raw_format="json"))


def tree_docs(booster):
    return model_doc(booster)["learner"]["gradient_booster"]["model"]["trees"]


def margin_scale(margin):
    return max(1.0, float(np.abs(margin).max()))


def assert_exact(forest, booster, X, *, report=None):
    """Same leaf in every tree, margins and predictions to 1e-6 of their scale (a range
    of rounds is checked on the booster sliced to it: XGBoost's pred_leaf starts at 0)."""
    import xgboost

    dm = xgboost.DMatrix(X)
    leaves = booster.predict(dm, pred_leaf=True).astype(np.int64).reshape(len(X), -1)
    trees = tree_docs(booster)
    expected = np.column_stack([preorder_ids(tr)[leaves[:, j]] for j, tr in enumerate(trees)])
    assert forest.n_trees == len(trees)
    assert np.array_equal(forest.apply(X), expected)
    margin = booster.predict(dm, output_margin=True)
    scale = margin_scale(margin)
    raw_gap = np.abs(forest.decision_function(X) - margin).max()
    assert raw_gap <= 1e-6 * scale
    pred = booster.predict(dm)
    link = forest.ensemble.link
    if link == "identity":
        gap = np.abs(forest.predict(X) - pred).max()
    elif link == "logistic" and model_doc(booster)["learner"]["objective"]["name"] == \
            "binary:logistic":
        gap = np.abs(forest.predict_proba(X)[:, 1] - pred).max()
    elif link == "softmax" and pred.ndim == 2:
        gap = np.abs(forest.predict_proba(X) - pred).max()
    else:  # logitraw predicts margins, softmax class indices
        gap = 0.0
    assert gap <= 1e-6 * (scale if link == "identity" else 1.0)
    if report is not None:
        report.append((link, raw_gap / scale, gap))


def probe_rows(booster, X, rng):
    """Rows that put each split's feature on its condition, on the float32 values
    either side of it, and on float64 values that round to it (and NaN)."""
    rows = []
    for tree in tree_docs(booster):
        ids = preorder_ids(tree)
        for h, (f, c) in enumerate(zip(tree["split_indices"], tree["split_conditions"])):
            if tree["left_children"][h] == -1 or ids[h] < 0:
                continue
            c32 = np.float32(c)
            for v in (c32, np.nextafter(c32, np.float32(-np.inf)),
                      np.nextafter(c32, np.float32(np.inf)),
                      float(c32) * (1 + 1e-12) + 1e-300, float(c32) * (1 - 1e-12) - 1e-300,
                      np.nan):
                row = X[rng.integers(len(X))].copy()
                row[f] = v
                rows.append(row)
    return np.vstack([X, *rows]) if rows else X


def synthetic(seed, task, with_nan):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 120)), int(rng.integers(1, 5))
    X = rng.normal(size=(n, d))
    X[:, 0] = np.round(X[:, 0], 1)  # ties and repeated values
    signal = np.nan_to_num(X[:, 0]) + 0.5 * rng.normal(size=n)
    if with_nan:
        X[rng.random(X.shape) < 0.2] = np.nan
    if task == "binary":
        y = (signal > 0).astype(int)
        y[:2] = [0, 1]
    elif task == "multi":
        y = np.digitize(signal, [-0.5, 0.5])
        y[:3] = [0, 1, 2]
    else:
        y = 3.0 * signal + 10.0
    return X, y, rng


# ------------------------------------------------------------------ exactness
@given(seed=st.integers(0, 2**32 - 1), task=st.sampled_from(["binary", "multi", "reg"]),
       with_nan=st.booleans(), depth=st.integers(1, 4), rounds=st.integers(1, 4),
       method=st.sampled_from(["hist", "approx", "exact"]))
def test_routes_and_predicts_exactly_like_xgboost(xgb, seed, task, with_nan, depth, rounds,
                                                  method):
    X, y, rng = synthetic(seed, task, with_nan)
    cls = xgb.XGBRegressor if task == "reg" else xgb.XGBClassifier
    model = cls(n_estimators=rounds, max_depth=depth, tree_method=method, n_jobs=1,
                learning_rate=float(rng.uniform(0.1, 1.0)), min_child_weight=0.5,
                random_state=0).fit(X, y)
    forest = po.as_forest(model)
    booster = model.get_booster()
    Xp = probe_rows(booster, X, rng)
    assert_exact(forest, booster, Xp)
    if task != "reg":
        proba = forest.predict_proba(Xp)
        top2 = np.sort(proba, axis=1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] > 1e-5  # no float32 near-tie
        assert np.array_equal(forest.predict(Xp)[clear], model.predict(Xp)[clear])


@pytest.mark.parametrize("kind", ["binary", "multi", "softmax", "reg", "logitraw", "deep"])
@pytest.mark.parametrize("with_nan", [False, True])
def test_real_data_exactness(xgb, kind, with_nan):
    loader = {"binary": load_breast_cancer, "logitraw": load_breast_cancer,
              "multi": load_iris, "softmax": load_iris, "reg": load_diabetes,
              "deep": load_diabetes}[kind]
    X, y = loader(return_X_y=True)
    rng = np.random.default_rng(1)
    if with_nan:
        X = X.copy()
        X[rng.random(X.shape) < 0.15] = np.nan
    objective = {"softmax": "multi:softmax", "logitraw": "binary:logitraw"}.get(kind)
    cls = xgb.XGBRegressor if kind in ("reg", "deep") else xgb.XGBClassifier
    kw = {} if objective is None else {"objective": objective}
    if kind == "deep":  # deeper than the levels XGBoost's predictor unrolls into an array
        kw.update(max_depth=12, min_child_weight=0, n_estimators=4)
    kw.setdefault("max_depth", 4)
    kw.setdefault("n_estimators", 20)
    model = cls(n_jobs=1, random_state=0, **kw).fit(X, y)
    forest = po.as_forest(model)
    assert forest.split_dtype == "float32" and forest.source == type(model).__name__
    assert kind != "deep" or forest.max_depth > 6
    assert_exact(forest, model.get_booster(), probe_rows(model.get_booster(), X, rng))
    if kind in ("binary", "multi"):
        assert np.abs(forest.predict_proba(X) - model.predict_proba(X)).max() <= 1e-6
    if kind in ("binary", "multi", "softmax"):
        assert np.array_equal(forest.predict(X), model.predict(X))
    if kind in ("reg", "deep"):
        pred = model.predict(X)
        assert np.abs(forest.predict(X) - pred).max() <= 1e-6 * margin_scale(pred)


DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("name", ["binary", "multi", "regression"])
def test_models_written_by_the_oldest_supported_xgboost(name):
    # written by XGBoost 2.1.4 (scalar base_score, no categories container) with the
    # leaves and margins its predictor gave; read without XGBoost
    expected = json.loads((DATA / "xgboost-2.1.4-expected.json").read_text())[name]
    forest = from_xgboost(DATA / f"xgboost-2.1.4-{name}.json")
    X = np.array([[np.nan if v is None else v for v in row] for row in expected["X"]])
    assert np.isnan(X).any()
    trees = json.loads((DATA / f"xgboost-2.1.4-{name}.json").read_text())[
        "learner"]["gradient_booster"]["model"]["trees"]
    leaves = np.array(expected["leaf"])
    assert np.array_equal(forest.apply(X), np.column_stack(
        [preorder_ids(tr)[leaves[:, t]] for t, tr in enumerate(trees)]))
    margin = np.array(expected["margin"])
    assert np.abs(forest.decision_function(X) - margin).max() <= 1e-6 * margin_scale(margin)


def test_every_input_gives_the_same_forest(xgb, tmp_path):
    X, y = load_iris(return_X_y=True)
    model = xgb.XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1).fit(X, y)
    booster = model.get_booster()
    path = tmp_path / "model.json"
    booster.save_model(path)
    raw = booster.save_raw(raw_format="json")
    forests = [po.as_forest(model), po.as_forest(booster), from_xgboost(path),
               from_xgboost(str(path)), from_xgboost(raw), from_xgboost(bytes(raw).decode()),
               from_xgboost(json.loads(bytes(raw)))]
    for f in forests[1:]:
        for key in ("left", "right", "feature", "threshold", "value", "missing_go_to_left"):
            assert np.array_equal(getattr(f, key), getattr(forests[0], key))
        assert f.ensemble.same_as(forests[0].ensemble)
    assert forests[1].source == "xgboost.Booster"


@pytest.mark.parametrize("written", ["crlf", "bom", "bom+crlf"])
def test_a_json_model_written_on_windows_reads_as_the_original(xgb, tmp_path, written):
    # a byte-order mark (Notepad, PowerShell's Out-File) and CRLF line ends (an indented
    # document through a Windows editor) do not change the model
    X, y = load_iris(return_X_y=True)
    booster = xgb.XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1).fit(X, y).get_booster()
    raw = json.dumps(model_doc(booster), indent=2).encode()
    if "crlf" in written:
        raw = raw.replace(b"\n", b"\r\n")
    if "bom" in written:
        raw = b"\xef\xbb\xbf" + raw
    path = tmp_path / "model.json"
    path.write_bytes(raw)
    reference = po.as_forest(booster)
    for forest in (from_xgboost(path), from_xgboost(raw), from_xgboost(raw.decode("utf-8")),
                   po.importers.read_model_file(path)):
        for key in ("left", "right", "feature", "threshold", "value", "missing_go_to_left"):
            assert np.array_equal(getattr(forest, key), getattr(reference, key))
        assert forest.ensemble.same_as(reference.ensemble)
        np.testing.assert_array_equal(forest.predict_proba(X), reference.predict_proba(X))


def test_reading_a_file_needs_no_xgboost(xgb, tmp_path, monkeypatch):
    X, y = load_diabetes(return_X_y=True)
    booster = xgb.XGBRegressor(n_jobs=1, n_estimators=2, max_depth=2).fit(X, y).get_booster()
    booster.save_model(tmp_path / "m.json")
    expected = booster.predict(xgb.DMatrix(X))
    monkeypatch.setitem(sys.modules, "xgboost", None)  # import xgboost now fails
    f = from_xgboost(tmp_path / "m.json")
    assert np.abs(f.predict(X) - expected).max() <= 1e-6 * margin_scale(expected)


def test_importing_prune_opt_does_not_import_xgboost():
    code = "import sys, prune_opt, prune_opt.importers; print('xgboost' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_feature_names_come_from_the_model(xgb):
    pd = pytest.importorskip("pandas")
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = xgb.XGBClassifier(n_jobs=1, n_estimators=2, max_depth=2).fit(X, y)
    forest = po.as_forest(model)
    assert forest.feature_names == [str(c) for c in X.columns]
    assert np.abs(forest.predict_proba(X) - model.predict_proba(X)).max() <= 1e-6
    # a frame is read by column name, as scikit-learn does
    shuffled = pd.DataFrame(X.to_numpy()[:, ::-1], columns=X.columns[::-1])
    np.testing.assert_array_equal(forest.predict_proba(shuffled), forest.predict_proba(X))
    with pytest.raises(ValueError, match="column"):
        forest.predict(shuffled.iloc[:, 1:])


def test_boosted_random_forest_rounds(xgb):
    X, y = load_iris(return_X_y=True)
    model = xgb.XGBClassifier(n_estimators=2, max_depth=2, num_parallel_tree=3,
                              subsample=0.8, colsample_bynode=0.8, n_jobs=1).fit(X, y)
    forest = po.as_forest(model)
    assert forest.n_trees == 18
    assert_exact(forest, model.get_booster(), X)
    rf = xgb.XGBRFRegressor(n_jobs=1, n_estimators=4, max_depth=3).fit(*load_diabetes(return_X_y=True))
    assert_exact(po.as_forest(rf), rf.get_booster(), load_diabetes(return_X_y=True)[0])


# ------------------------------------------------------------------ which trees
def early_stopped(xgb):
    X, y = load_breast_cancer(return_X_y=True)
    model = xgb.XGBClassifier(n_estimators=60, max_depth=3, learning_rate=0.9,
                              early_stopping_rounds=3, n_jobs=1, random_state=0)
    model.fit(X[:400], y[:400], eval_set=[(X[400:], y[400:])], verbose=False)
    assert model.best_iteration + 1 < model.get_booster().num_boosted_rounds()
    return model, X


def test_scikit_learn_model_keeps_its_best_iteration(xgb, tmp_path):
    model, X = early_stopped(xgb)
    forest = po.as_forest(model)
    assert forest.n_trees == model.best_iteration + 1
    assert np.abs(forest.predict_proba(X) - model.predict_proba(X)).max() <= 1e-6
    assert_exact(forest, model.get_booster()[: model.best_iteration + 1], X)
    # the file the scikit-learn model saves is read as that model predicts after load_model
    model.save_model(tmp_path / "clf.json")
    assert from_xgboost(tmp_path / "clf.json").n_trees == model.best_iteration + 1


def test_booster_keeps_every_round_as_its_predict(xgb, tmp_path):
    model, X = early_stopped(xgb)
    booster = model.get_booster()
    forest = po.as_forest(booster)
    assert forest.n_trees == booster.num_boosted_rounds()
    assert_exact(forest, booster, X)
    booster.save_model(tmp_path / "booster.json")
    assert from_xgboost(tmp_path / "booster.json").n_trees == booster.num_boosted_rounds()


def test_explicit_iteration_range(xgb):
    X, y = load_iris(return_X_y=True)
    booster = xgb.XGBClassifier(n_estimators=5, max_depth=2, n_jobs=1).fit(X, y).get_booster()
    for rng_ in [(1, 3), (0, 2), (4, 5)]:
        forest = from_xgboost(booster, iteration_range=rng_)
        assert forest.n_trees == 3 * (rng_[1] - rng_[0])
        assert_exact(forest, booster[rng_[0]:rng_[1]], X)
        margin = booster.predict(xgb.DMatrix(X), output_margin=True, iteration_range=rng_)
        assert np.abs(forest.decision_function(X) - margin).max() <= 1e-6 * margin_scale(margin)
    assert from_xgboost(booster, iteration_range=(0, 0)).n_trees == 15
    for bad in [(3, 3), (0, 6), (-1, 2)]:
        with pytest.raises(ValueError, match="iteration_range"):
            from_xgboost(booster, iteration_range=bad)
    for bad in [3, (0.5, 2), (0, 1, 2), (True, 2)]:
        with pytest.raises(TypeError, match="pair of integers"):
            from_xgboost(booster, iteration_range=bad)


# ------------------------------------------------------------------ missing values
def test_absent_sparse_entries_are_missing_as_in_xgboost(xgb):
    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 0.0, 1.0, np.nan], size=(400, 3))
    y = ((X[:, 0] > 0) | np.isnan(X[:, 0])).astype(int)  # missing joins the positives
    model = xgb.XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1).fit(X, y)
    forest = po.as_forest(model)
    dense = np.nan_to_num(X, nan=0.0)
    absent = sp.csr_matrix(dense)  # zeros not stored: missing to XGBoost
    rows, cols = np.nonzero(np.ones_like(dense))
    stored = sp.csr_matrix((dense[rows, cols], (rows, cols)), shape=dense.shape)
    zero = dense[:, 0] == 0
    for M in (absent, stored, dense):
        assert np.abs(forest.predict_proba(M) - model.predict_proba(M)).max() <= 1e-6
    # the two readings of a zero really differ here, so the test can fail
    assert not np.allclose(forest.predict_proba(absent)[zero], forest.predict_proba(dense)[zero])
    sub = forest.select_trees([0, 1])
    assert sub.absent_is_missing
    assert np.array_equal(sub.apply(absent), forest.apply(absent)[:, :2])


def test_scikit_learn_missing_sentinel_is_refused(xgb):
    X, y = load_breast_cancer(return_X_y=True)
    model = xgb.XGBClassifier(n_jobs=1, n_estimators=2, max_depth=2, missing=0.0).fit(X, y)
    with pytest.raises(ValueError, match=r"missing=0\.0.*NaN"):
        po.as_forest(model)


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("params, match", [
    (dict(booster="dart"), "'dart'"),
    (dict(booster="gblinear"), "'gblinear'"),
    (dict(objective="reg:absoluteerror"), "'reg:absoluteerror' is not supported"),
    (dict(objective="reg:pseudohubererror"), "'reg:pseudohubererror' is not supported"),
    (dict(objective="count:poisson"), "'count:poisson' is not supported"),
    (dict(objective="reg:gamma"), "'reg:gamma' is not supported"),
    (dict(objective="reg:tweedie"), "'reg:tweedie' is not supported"),
    (dict(objective="reg:quantileerror", quantile_alpha=0.5), "'reg:quantileerror'"),
    (dict(objective="survival:cox"), "'survival:cox' is not supported"),
])
def test_unsupported_regressors_are_refused_naming_what_is(xgb, params, match):
    X, y = load_diabetes(return_X_y=True)
    model = xgb.XGBRegressor(n_jobs=1, n_estimators=2, max_depth=2, **params).fit(X, np.abs(y))
    with pytest.raises(ValueError, match=match) as info:
        po.as_forest(model)
    assert "reg:squarederror" in str(info.value) or "gbtree" in str(info.value)


def test_other_unsupported_models_are_refused(xgb):
    pd = pytest.importorskip("pandas")
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.raises(ValueError, match="'binary:hinge' is not supported"):
        po.as_forest(xgb.XGBClassifier(n_jobs=1, n_estimators=2, objective="binary:hinge").fit(X, y))
    ranker = xgb.XGBRanker(n_jobs=1, n_estimators=2).fit(X, y, qid=np.repeat(np.arange(19), 30)[:569])
    with pytest.raises(ValueError, match="'rank:ndcg' is not supported"):
        po.as_forest(ranker)
    two = xgb.XGBRegressor(n_jobs=1, n_estimators=2).fit(X, np.column_stack([y, 1 - y]))
    with pytest.raises(ValueError, match="multi-target"):
        po.as_forest(two)
    vector = xgb.XGBRegressor(n_jobs=1, n_estimators=2, multi_strategy="multi_output_tree",
                              tree_method="hist").fit(X, np.column_stack([y, 1 - y]))
    with pytest.raises(ValueError, match="multi-target|vector-leaf"):
        po.as_forest(vector)
    frame = pd.DataFrame({"a": pd.Categorical(np.where(y == 1, "u", "v")), "b": X[:, 0]})
    cat = xgb.XGBClassifier(n_jobs=1, n_estimators=2, enable_categorical=True,
                            tree_method="hist").fit(frame, y)
    with pytest.raises(ValueError, match="categorical"):
        po.as_forest(cat)
    with pytest.raises(NotFittedError, match="not fitted"):
        po.as_forest(xgb.XGBClassifier())


def test_vector_leaf_trees_are_refused(xgb):
    doc = model_doc(xgb.XGBRegressor(n_jobs=1, n_estimators=1, max_depth=1).fit(
        *load_diabetes(return_X_y=True)).get_booster())
    tree = doc["learner"]["gradient_booster"]["model"]["trees"][0]
    tree["tree_param"]["size_leaf_vector"] = "2"
    with pytest.raises(ValueError, match="vector-leaf"):
        from_xgboost(doc)


def test_ubjson_is_refused(tmp_path, xgb):
    booster = xgb.XGBRegressor(n_jobs=1, n_estimators=1).fit(*load_diabetes(return_X_y=True))
    booster.save_model(tmp_path / "m.ubj")
    with pytest.raises(ValueError, match="UBJSON.*save_model"):
        from_xgboost(tmp_path / "m.ubj")
    (tmp_path / "m.json").write_bytes((tmp_path / "m.ubj").read_bytes())
    with pytest.raises(ValueError, match="not UTF-8|not valid JSON"):
        from_xgboost(tmp_path / "m.json")


# ------------------------------------------------------------------ hand-built documents
def stump(**over):
    tree = {"tree_param": {"num_deleted": "0", "num_feature": "2", "num_nodes": "3",
                           "size_leaf_vector": "1"},
            "id": 0, "left_children": [1, -1, -1], "right_children": [2, -1, -1],
            "parents": [2147483647, 0, 0], "split_indices": [1, 0, 0],
            "split_conditions": [0.5, -0.25, 0.75], "default_left": [1, 0, 0],
            "sum_hessian": [4.0, 3.0, 1.0], "base_weights": [0.0, 0.0, 0.0],
            "loss_changes": [1.0, 0.0, 0.0], "split_type": [0, 0, 0],
            "categories": [], "categories_nodes": [], "categories_segments": [],
            "categories_sizes": []}
    tree.update(over)
    return tree


def document(trees=None, objective="binary:logistic", base_score="[5E-1]", num_class="0",
             version=(3, 2, 0), tree_info=None):
    trees = [stump()] if trees is None else trees
    return {"version": list(version), "learner": {
        "attributes": {}, "feature_names": [], "feature_types": [],
        "objective": {"name": objective},
        "learner_model_param": {"base_score": base_score, "num_class": num_class,
                                "num_feature": "2", "num_target": "1"},
        "gradient_booster": {"name": "gbtree", "model": {
            "gbtree_model_param": {"num_trees": str(len(trees)), "num_parallel_tree": "1"},
            "iteration_indptr": list(range(len(trees) + 1)),
            "tree_info": [0] * len(trees) if tree_info is None else tree_info,
            "trees": trees}}}}


def test_hand_built_document_routes_by_strict_less_than():
    f = from_xgboost(document())
    c = np.float32(0.5)
    X = np.array([[0, c], [0, np.nextafter(c, np.float32(0))], [0, 0.5 + 1e-12],
                  [0, np.nan]])
    assert f.apply(X)[:, 0].tolist() == [2, 1, 2, 1]  # c goes right; NaN default_left
    assert f.threshold[0] == float(np.nextafter(c, np.float32(-np.inf)))
    # the pruned-root value: the children's values weighted by their sum_hessian
    assert f.value[0, 0] == pytest.approx((3 * -0.25 + 1 * 0.75) / 4)
    assert f.ensemble.init_score[0] == 0.0 and f.classes_.tolist() == [0, 1]


def test_base_score_forms():
    legacy = from_xgboost(document(base_score="7.5E-1", version=(2, 1, 4)))
    vector = from_xgboost(document(base_score="[7.5E-1]"))
    assert legacy.ensemble.init_score[0] == vector.ensemble.init_score[0]
    assert vector.ensemble.init_score[0] == pytest.approx(np.log(3), rel=1e-6)
    raw = from_xgboost(document(objective="binary:logitraw", base_score="[7.5E-1]"))
    assert raw.ensemble.init_score[0] == 0.75
    reg = from_xgboost(document(objective="reg:squarederror", base_score="[1.5E2]"))
    assert reg.task == "regression" and reg.ensemble.init_score[0] == 150.0
    multi = document(objective="multi:softprob", base_score="[1E0,2E0,3E0]", num_class="3",
                     trees=[stump(id=i) for i in range(3)], tree_info=[0, 1, 2])
    multi["learner"]["gradient_booster"]["model"]["iteration_indptr"] = [0, 3]
    f = from_xgboost(multi)
    assert f.ensemble.init_score.tolist() == [1.0, 2.0, 3.0]
    assert f.ensemble.tree_class.tolist() == [0, 1, 2]
    multi["learner"]["learner_model_param"]["base_score"] = "5E-1"  # before 3.1: one value
    assert from_xgboost(multi).ensemble.init_score.tolist() == [0.5] * 3


def test_deleted_nodes_are_dropped():
    # node 3 and 4 were deleted by the pruner (unreachable), leaf 1 kept their parent
    tree = stump(left_children=[1, -1, -1, -1, -1], right_children=[2, -1, -1, -1, -1],
                 parents=[2147483647, 0, 0, 1, 1], split_indices=[1, 0, 0, 2147483647, 0],
                 split_conditions=[0.5, -0.25, 0.75, 9.0, 9.0], default_left=[1, 0, 0, 1, 1],
                 sum_hessian=[4.0, 3.0, 1.0, 0.0, 0.0], base_weights=[0.0] * 5,
                 loss_changes=[0.0] * 5, split_type=[0] * 5,
                 tree_param={"num_deleted": "2", "num_nodes": "5", "size_leaf_vector": "1"})
    assert from_xgboost(document([tree])).n_nodes == 3


def mutate(doc, path, value):
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


TREE = ("learner", "gradient_booster", "model", "trees", 0)


@pytest.mark.parametrize("path, value, match", [
    (TREE + ("right_children",), [7, -1, -1], r"child 7, outside \[0, 3\)"),
    (TREE + ("right_children",), [-1, -1, -1], "child -1"),
    (TREE + ("split_conditions",), [0.5, -0.25], "has 2 entries, but num_nodes is 3"),
    (TREE + ("split_conditions",), [1e39, -0.25, 0.75], "finite float32"),
    (TREE + ("split_conditions",), ["0.5", -0.25, 0.75], "numbers only"),
    (TREE + ("split_indices",), [2, 0, 0], r"feature 2 outside \[0, 2\)"),
    (TREE + ("split_indices",), [-1, 0, 0], "feature -1"),
    (TREE + ("split_indices",), [0.5, 0, 0], "32-bit integers"),
    (TREE + ("default_left",), [2, 0, 0], "0 or 1"),
    (TREE + ("sum_hessian",), [4.0, -3.0, 1.0], "non-negative"),
    (TREE + ("split_type",), [1, 0, 0], "categorical splits"),
    (TREE + ("tree_param", "num_nodes"), "three", "must be an integer"),
    (TREE + ("tree_param", "num_nodes"), "0", "must be >= 1"),
    (TREE + ("id",), 3, "ids must number the trees"),
    (TREE[:-1], [], "num_trees = 1"),
    (("learner", "gradient_booster", "model", "tree_info"), [0, 0], "output group"),
    (("learner", "gradient_booster", "model", "iteration_indptr"), [0, 2], "rise from 0"),
    (("learner", "learner_model_param", "base_score"), "[2E0]", "probability"),
    (("learner", "learner_model_param", "base_score"), "[5E-1,5E-1]", "2 values"),
    (("learner", "learner_model_param", "base_score"), "NaN", "finite"),
    (("learner", "learner_model_param", "base_score"), "half", "number"),
    (("learner", "learner_model_param", "num_feature"), "1", "feature 1 outside"),
    (("learner", "learner_model_param", "num_target"), "2", "multi-target"),
    (("learner", "feature_names"), ["a"], "must list 2 names"),
    (("learner", "feature_types"), ["float", "c"], "categorical"),
    (("learner", "objective", "name"), "rank:pairwise", "'rank:pairwise' is not supported"),
    (("learner", "gradient_booster", "name"), "gblinear", "'gblinear' has no trees"),
    (("learner", "gradient_booster", "name"), "dart", "'dart'"),
    (("learner", "gradient_booster", "model", "weight_drop"), [0.5], "dropout"),
    (("learner", "gradient_booster", "model", "cats"), {"enc": [{}]}, "categorical"),
    (("learner", "learner_model_param"), [], "must be an object"),
    (("version",), [1, 7, 6], "2.1 or later"),
    (("version",), "3.2.0", "three integers"),
])
def test_inconsistent_documents_are_refused(path, value, match):
    with pytest.raises(ValueError, match=match):
        from_xgboost(mutate(document(), path, value))


@pytest.mark.parametrize("left, right", [
    ([1, 0, -1], [2, 2, -1]),      # a child pointing back at the root
    ([1, 2, -1], [2, 1, -1]),      # node 2 the child of nodes 0 and 1
    ([1, 1, -1], [2, 1, -1]),      # node 1 its own child
])
def test_children_that_are_not_a_tree_are_refused(left, right):
    doc = document([stump(left_children=left, right_children=right)])
    with pytest.raises(ValueError, match="do not form a tree"):
        from_xgboost(doc)


def test_children_must_be_a_consecutive_pair():
    # XGBoost's predictor takes the right child to be left + 1 (and the default child
    # from right_children): swapped children would be routed two ways
    doc = document([stump(left_children=[2, -1, -1], right_children=[1, -1, -1])])
    with pytest.raises(ValueError, match="right child to be the left one \\+ 1"):
        from_xgboost(doc)


def test_missing_fields_are_named():
    for key in ("left_children", "split_conditions", "sum_hessian", "tree_param"):
        doc = document()
        del doc["learner"]["gradient_booster"]["model"]["trees"][0][key]
        with pytest.raises(ValueError, match=f"lacks the field '{key}'"):
            from_xgboost(doc)


def test_malformed_files_are_refused(tmp_path):
    text = json.dumps(document())
    path = tmp_path / "m.json"
    for bad, match in [(text[: len(text) // 2], "not valid JSON.*truncated"),
                       (text.replace("0.75", "NaN"), "non-finite number NaN"),
                       (text.replace("0.75", "Infinity"), "non-finite number Infinity"),
                       ("[" * 100_000 + "]" * 100_000, "nested too deeply|must be a JSON object"),
                       ("[1, 2]", "must be a JSON object")]:
        path.write_text(bad)
        with pytest.raises(ValueError, match=match):
            from_xgboost(path)
    path.write_text(text)
    assert from_xgboost(path).n_trees == 1
    with pytest.raises(ValueError, match="max_bytes"):
        from_xgboost(path, max_bytes=100)
    with pytest.raises(ValueError, match="max_bytes"):
        from_xgboost(text, max_bytes=100)
    with pytest.raises(TypeError, match="expected an XGBoost model"):
        from_xgboost(3.5)
