"""CatBoost importer: every example reaches the leaf CatBoost sends it to
(``calc_leaf_indexes``), raw scores and predictions equal CatBoost's to 1e-9;
refusals name what is supported; malformed JSON models are refused.

The JSON tests build documents by hand and need no CatBoost; the others skip when it
is not installed (``pip install prune-opt[catboost]``).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import numpy as np
import pytest
from boosted_cases import catboost_numbered
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.exceptions import NotFittedError

import prune_opt as po
from prune_opt.importers import from_catboost
from prune_opt.importers._catboost import oblivious_levels


@pytest.fixture(scope="module")
def cb():
    return pytest.importorskip("catboost")


def fit(cb, task, X, y, **params):
    """A small CatBoost model (single thread, no files written)."""
    params = dict(dict(iterations=3, depth=3, verbose=0, thread_count=1, random_seed=0,
                       allow_writing_files=False), **params)
    if task == "reg":
        return cb.CatBoostRegressor(**params).fit(X, y)
    if task == "multi":
        params.setdefault("loss_function", "MultiClass")
    return cb.CatBoostClassifier(**params).fit(X, y)


def model_doc(model, tmp_path):
    path = tmp_path / "model.json"
    model.save_model(str(path), format="json")
    return json.loads(path.read_text()), path


# ------------------------------------------------------------------ independent walks
def catboost_leaf_of_symmetric(forest, t, leaves):
    """CatBoost's leaf index of the IR leaves ``leaves`` of symmetric tree ``t``: the
    leaf at left-to-right position p of depth d took splits[j]'s decision as p's bit
    (d-1-j); CatBoost's index takes it as bit j."""
    local = np.flatnonzero(forest.is_leaf[forest.tree_slice(t)])
    d = int(np.log2(local.size))
    pos = np.searchsorted(local, leaves)
    index = np.zeros_like(pos)
    for j in range(d):
        index |= ((pos >> (d - 1 - j)) & 1) << j
    return index


def preorder_leaf_rank(forest, t, leaves):
    """Rank of each IR leaf among tree t's leaves in preorder (left first): the order in
    which CatBoost numbers the leaves of a non-symmetric tree it loaded from JSON."""
    local = np.flatnonzero(forest.is_leaf[forest.tree_slice(t)])
    return np.searchsorted(local, leaves)


def same_partition(a, b):
    """Whether the leaf labels ``a`` and ``b`` of the same rows split them alike."""
    pairs = np.unique(np.column_stack([a, b]), axis=0)
    return np.unique(pairs[:, 0]).size == pairs.shape[0] == np.unique(pairs[:, 1]).size


def probe_rows(doc, X, rng):
    """X, and rows that put each split's feature on its border, the float32 values
    either side, float64 values that round to it, and NaN."""
    splits = []
    if "oblivious_trees" in doc:
        for tree in doc["oblivious_trees"]:
            splits += tree["splits"]
    else:
        stack = list(doc["trees"])
        while stack:
            node = stack.pop()
            if "split" in node:
                splits.append(node["split"])
                stack += [node["left"], node["right"]]
    flat = {f["feature_index"]: f["flat_feature_index"]
            for f in doc["features_info"]["float_features"]}
    rows = []
    for s in splits:
        b = np.float32(s["border"])
        with np.errstate(over="ignore"):
            near = (b, np.nextafter(b, np.float32(-np.inf)), np.nextafter(b, np.float32(np.inf)),
                    float(b) * (1 + 1e-12) + 1e-300, float(b) * (1 - 1e-12) - 1e-300)
        for v in [v for v in near if np.isfinite(v)] + [np.nan]:  # X may not hold inf
            row = X[rng.integers(len(X))].copy()
            row[flat[s["float_feature_index"]]] = v
            rows.append(row)
    return np.vstack([X, *rows]) if rows else X


def assert_exact(cb, model, forest, X, tmp_path, *, report=None):
    """Same leaf in every tree, raw scores and predictions to 1e-9 of their scale."""
    doc, path = model_doc(model, tmp_path)
    K = forest.round_size
    n_rounds = model.tree_count_
    assert forest.n_trees == K * n_rounds
    ours = forest.apply(X)
    theirs = model.calc_leaf_indexes(cb.Pool(X))
    if "oblivious_trees" in doc:
        for r in range(n_rounds):
            for k in range(K):  # the K copies route alike
                assert np.array_equal(ours[:, r * K + k], ours[:, r * K])
            assert oblivious_levels(forest, r * K) is not None
            assert np.array_equal(catboost_leaf_of_symmetric(forest, r * K, ours[:, r * K]),
                                  theirs[:, r])
    else:
        # a model in memory numbers a non-symmetric tree's leaves in training order, the
        # same model loaded from its JSON in preorder
        loaded = cb.CatBoost()
        loaded.load_model(str(path), format="json")
        reloaded = loaded.calc_leaf_indexes(cb.Pool(X))
        for r in range(n_rounds):
            assert np.array_equal(preorder_leaf_rank(forest, r * K, ours[:, r * K]),
                                  reloaded[:, r])
            assert same_partition(ours[:, r * K], theirs[:, r])
    raw = model.predict(X, prediction_type="RawFormulaVal")
    scale = max(1.0, float(np.abs(raw).max()))
    raw_gap = float(np.abs(forest.decision_function(X) - raw).max())
    assert raw_gap <= 1e-9 * scale
    if forest.task == "regression":
        gap = float(np.abs(forest.predict(X) - model.predict(X)).max())
        assert gap <= 1e-9 * scale
    else:
        proba = forest.predict_proba(X)
        gap = float(np.abs(proba - model.predict_proba(X)).max())
        assert gap <= 1e-9
        top2 = np.sort(proba, axis=1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] > 1e-9
        assert np.array_equal(forest.predict(X)[clear], np.ravel(model.predict(X))[clear])
    if report is not None:
        report.append((raw_gap, gap))


def synthetic(seed, task, with_nan, n=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 120)) if n is None else n
    d = int(rng.integers(1, 5))
    X = rng.normal(size=(n, d))
    X[:, 0] = np.round(X[:, 0], 1)  # ties and repeated values
    signal = X[:, 0] + 0.5 * rng.normal(size=n)
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
       grow=st.sampled_from(["SymmetricTree", "Depthwise", "Lossguide"]),
       nan_mode=st.sampled_from(["Min", "Max", "Forbidden"]))
@example(seed=0, task="multi", with_nan=True, depth=3, rounds=2, grow="SymmetricTree",
         nan_mode="Max")
@example(seed=1, task="binary", with_nan=True, depth=4, rounds=3, grow="Lossguide",
         nan_mode="Min")
def test_routes_and_predicts_exactly_like_catboost(cb, tmp_path_factory, seed, task, with_nan,
                                                   depth, rounds, grow, nan_mode):
    X, y, rng = synthetic(seed, task, with_nan and nan_mode != "Forbidden")
    model = fit(cb, task, X, y, iterations=rounds, depth=depth, grow_policy=grow,
                nan_mode=nan_mode, learning_rate=float(rng.uniform(0.1, 1.0)),
                random_seed=seed % 1000)
    forest = po.as_forest(model)
    assert forest.split_dtype == "float32" and forest.source == type(model).__name__
    tmp = tmp_path_factory.mktemp("cb")
    doc, _ = model_doc(model, tmp)
    Xp = probe_rows(doc, X, rng)
    Xp[rng.random(Xp.shape) < 0.1] = np.nan  # NaN also where training had none
    assert_exact(cb, model, forest, Xp, tmp)


@pytest.mark.parametrize("grow", ["SymmetricTree", "Depthwise", "Lossguide"])
@pytest.mark.parametrize("kind", ["binary", "multi", "reg", "crossentropy"])
@pytest.mark.parametrize("with_nan", [False, True])
def test_real_data_exactness(cb, tmp_path, kind, grow, with_nan):
    loader = {"binary": load_breast_cancer, "crossentropy": load_breast_cancer,
              "multi": load_iris, "reg": load_diabetes}[kind]
    X, y = loader(return_X_y=True)
    rng = np.random.default_rng(1)
    if with_nan:
        X = X.copy()
        X[rng.random(X.shape) < 0.15] = np.nan
    task = {"binary": "binary", "crossentropy": "binary", "multi": "multi", "reg": "reg"}[kind]
    params = dict(iterations=20, depth=5, grow_policy=grow)
    if kind == "crossentropy":
        params["loss_function"] = "CrossEntropy"
    model = fit(cb, task, X, y, **params)
    forest = po.as_forest(model)
    doc, _ = model_doc(model, tmp_path)
    assert_exact(cb, model, forest, probe_rows(doc, X, rng), tmp_path)
    link = {"binary": "logistic", "crossentropy": "logistic", "multi": "softmax",
            "reg": "identity"}[kind]
    assert forest.ensemble.link == link
    if task != "reg":
        assert np.array_equal(forest.classes_, model.classes_)


def test_scale_and_bias_are_folded_in(cb, tmp_path):
    X, y = load_iris(return_X_y=True)
    model = fit(cb, "multi", X, y)
    model.set_scale_and_bias(2.5, [0.25, -1.0, 3.0])
    forest = po.as_forest(model)
    assert forest.ensemble.init_score.tolist() == [0.25, -1.0, 3.0]
    assert_exact(cb, model, forest, X, tmp_path)
    reg = fit(cb, "reg", *load_diabetes(return_X_y=True))
    assert reg.get_scale_and_bias()[1] != 0  # boost_from_average: the mean is the bias
    reg.set_scale_and_bias(0.5, reg.get_scale_and_bias()[1])
    assert_exact(cb, reg, po.as_forest(reg), load_diabetes(return_X_y=True)[0], tmp_path)


def test_string_labels_and_feature_names(cb, tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    labels = np.where(y == 1, "benign", "malignant")
    model = fit(cb, "binary", X, labels)
    forest = po.as_forest(model)
    assert forest.feature_names == [str(c) for c in X.columns]
    assert forest.classes_.tolist() == ["benign", "malignant"]
    assert np.array_equal(forest.predict(X), model.predict(X))
    # the file keeps names and labels; a frame is read by column name
    _, path = model_doc(model, tmp_path)
    from_file = from_catboost(path)
    assert from_file.classes_.tolist() == ["benign", "malignant"]
    shuffled = pd.DataFrame(X.to_numpy()[:, ::-1], columns=X.columns[::-1])
    np.testing.assert_array_equal(from_file.predict_proba(shuffled), forest.predict_proba(X))


def test_every_input_gives_the_same_forest(cb, tmp_path):
    X, y = load_iris(return_X_y=True)
    model = fit(cb, "multi", X, y)
    _, path = model_doc(model, tmp_path)
    text = path.read_text()
    plain = cb.CatBoost()
    plain.load_model(str(path), format="json")
    forests = [po.as_forest(model), po.as_forest(plain), from_catboost(path),
               from_catboost(str(path)), from_catboost(text), from_catboost(text.encode()),
               from_catboost(json.loads(text))]
    for i, f in enumerate(forests[1:], 1):
        for key in ("left", "right", "feature", "threshold", "missing_go_to_left"):
            assert np.array_equal(getattr(f, key), getattr(forests[0], key))
        if i == 1:  # CatBoost's own JSON load and save may change a value's last bit
            np.testing.assert_allclose(f.value, forests[0].value, rtol=0, atol=1e-15)
        else:
            assert np.array_equal(f.value, forests[0].value)
        assert f.ensemble.same_as(forests[0].ensemble)
    assert forests[0].source == "CatBoostClassifier"
    assert forests[1].source == forests[2].source == "catboost.CatBoost"


def test_multiclass_is_one_tree_per_class_per_round(cb):
    X, y = load_iris(return_X_y=True)
    for grow in ("SymmetricTree", "Lossguide"):
        model = fit(cb, "multi", X, y, iterations=4, grow_policy=grow)
        forest = po.as_forest(model)
        assert forest.n_trees == 12
        assert forest.ensemble.tree_class.tolist() == [0, 1, 2] * 4
        for t in range(forest.n_trees):
            first = forest.local_arrays(t - t % 3)
            this = forest.local_arrays(t)
            for key in ("left", "right", "feature", "threshold", "missing_go_to_left"):
                assert np.array_equal(this[key], first[key])
            outside = np.delete(this["value"], t % 3, axis=1)
            assert not outside.any()


def test_internal_values_are_leaf_weighted_means(cb, tmp_path):
    X, y = load_breast_cancer(return_X_y=True)
    model = fit(cb, "binary", X, y, iterations=2, depth=4)
    doc, _ = model_doc(model, tmp_path)
    forest = po.as_forest(model)
    for t, tree in enumerate(doc["oblivious_trees"]):
        w = np.asarray(tree["leaf_weights"], float)
        v = np.asarray(tree["leaf_values"], float)
        root = forest.value[forest.node_offset[t], 0]
        assert root == pytest.approx((w * v).sum() / w.sum(), rel=1e-12)


def test_reading_a_file_needs_no_catboost(cb, tmp_path, monkeypatch):
    X, y = load_diabetes(return_X_y=True)
    model = fit(cb, "reg", X, y)
    _, path = model_doc(model, tmp_path)
    expected = model.predict(X)
    monkeypatch.setitem(sys.modules, "catboost", None)  # import catboost now fails
    f = from_catboost(path)
    assert np.abs(f.predict(X) - expected).max() <= 1e-9 * np.abs(expected).max()


def test_importing_prune_opt_does_not_import_catboost():
    code = "import sys, prune_opt, prune_opt.importers; print('catboost' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("loss", ["MAE", "Quantile:alpha=0.3", "Poisson", "MAPE",
                                  "RMSEWithUncertainty", "Lq:q=1.5"])
def test_unsupported_regression_losses_are_refused_by_name(cb, loss):
    X, y = load_diabetes(return_X_y=True)
    model = fit(cb, "reg", X, np.abs(y).round(), loss_function=loss)
    name = loss.split(":")[0]
    with pytest.raises(ValueError, match=f"loss '{name}' is not supported.*RMSE"):
        po.as_forest(model)


def test_other_unsupported_models_are_refused(cb, tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="'MultiClassOneVsAll' is not supported"):
        po.as_forest(fit(cb, "multi", X, y, loss_function="MultiClassOneVsAll"))
    with pytest.raises(ValueError, match="'MultiRMSE' is not supported"):
        po.as_forest(fit(cb, "reg", X, np.column_stack([y, 2 * y]), loss_function="MultiRMSE"))
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["colour"] = np.where(y == 1, "red", "blue")
    cat = fit(cb, "multi", frame, y, cat_features=["colour"])
    with pytest.raises(ValueError, match=r"\['colour'\] are categorical features"):
        po.as_forest(cat)
    doc, path = model_doc(cat, tmp_path)  # the file says so too
    with pytest.raises(ValueError, match=r"\['colour'\] are categorical features"):
        from_catboost(path)
    frame["note"] = np.where(y == 1, "a long note", "short")
    text = fit(cb, "multi", frame.drop(columns="colour"), y, text_features=["note"])
    with pytest.raises(ValueError, match=r"\['note'\] are text features"):
        po.as_forest(text)
    ranker = cb.CatBoostRanker(iterations=2, depth=2, verbose=0, thread_count=1,
                               allow_writing_files=False, bootstrap_type="No")
    ranker.fit(X, y, group_id=np.repeat(np.arange(15), 10))
    with pytest.raises(ValueError, match="ranks"):
        po.as_forest(ranker)
    with pytest.raises(NotFittedError, match="not fitted"):
        po.as_forest(cb.CatBoostClassifier())


def test_a_class_without_output_is_refused(cb):
    X, y = load_iris(return_X_y=True)
    y = np.where(y == 1, 2, y)  # class 1 named below, never seen
    model = fit(cb, "multi", X, y, class_names=[0, 1, 2])
    with pytest.raises(ValueError, match="had no training rows.*refit without class_names"):
        po.as_forest(model)


def test_the_binary_format_is_refused_with_the_way_to_save_json(cb, tmp_path):
    X, y = load_breast_cancer(return_X_y=True)
    model = fit(cb, "binary", X, y)
    model.save_model(str(tmp_path / "model.cbm"))
    with pytest.raises(ValueError, match=r"binary format \(\.cbm\).*format='json'"):
        from_catboost(tmp_path / "model.cbm")
    with pytest.raises(ValueError, match=r"\.cbm"):
        from_catboost((tmp_path / "model.cbm").read_bytes())


# ------------------------------------------------------------------ hand-built documents
def feature(k, treatment="AsFalse", name=""):
    return {"borders": [0.5], "feature_id": name, "feature_index": k,
            "flat_feature_index": k, "has_nans": treatment != "AsIs",
            "nan_value_treatment": treatment}


def split(k, border):
    return {"border": border, "float_feature_index": k, "split_type": "FloatFeature"}


LABEL_TYPE = {bool: "Boolean", int: "Integer", float: "Float", str: "String"}


def document(loss="Logloss", trees=None, treatments=("AsFalse", "AsTrue"),
             scale_and_bias=(1.0, [0.0]), class_names=(0, 1)):
    trees = [{"leaf_values": [-1.0, 0.5, 0.25, 2.0], "leaf_weights": [1, 2, 3, 4],
              "splits": [split(0, 0.5), split(1, -1.5)]}] if trees is None else trees
    return catboost_numbered({
        "features_info": {"float_features": [feature(k, t) for k, t in enumerate(treatments)]},
        "model_info": {"params": {"loss_function": {"params": {}, "type": loss}},
                       "class_params": {"class_label_type": LABEL_TYPE.get(
                                            type(next(iter(class_names), 0)), "Integer"),
                                        "class_names": list(class_names),
                                        "class_to_label": list(range(len(class_names)))}},
        "oblivious_trees": trees,
        "scale_and_bias": [scale_and_bias[0], list(scale_and_bias[1])]})


def test_hand_built_symmetric_tree_routes_by_its_bits():
    f = from_catboost(document())
    assert f.n_nodes == 7 and oblivious_levels(f, 0) == [(0, 0.5, True), (1, -1.5, False)]
    # leaf index = (x0 > 0.5) + 2 (x1 > -1.5); NaN: feature 0 as Min (0 side), 1 as Max
    X = np.array([[0.5, -1.5], [0.6, -1.5], [0.5, -1.4], [0.6, -1.4], [np.nan, np.nan]])
    assert f.decision_function(X).tolist() == [-1.0, 0.5, 0.25, 2.0, 0.25]
    c = np.float32(0.5)
    assert f.decision_function(np.array([[np.nextafter(c, np.float32(1)), -2]]))[0] == 0.5
    # the pruned root: leaf values weighted by leaf_weights
    assert f.value[0, 0] == pytest.approx((-1 + 1 + 0.75 + 8) / 10)


def test_a_tree_without_splits_as_catboost_writes_it(cb, tmp_path):
    trees = [{"leaf_values": [0.0, 1.0], "splits": [split(0, 0.1)]},
             {"leaf_values": [2.5], "splits": []}]
    f = from_catboost(document(loss="RMSE", trees=trees, class_names=()))
    model = cb.CatBoostRegressor()
    (tmp_path / "m.json").write_text(json.dumps(document(loss="RMSE", trees=trees,
                                                         class_names=())))
    model.load_model(str(tmp_path / "m.json"), format="json")
    doc, _ = model_doc(model, tmp_path)
    assert doc["oblivious_trees"][1]["splits"] is None  # CatBoost's depth-0 tree
    again = from_catboost(doc)
    X = np.array([[0.0, 0.0], [1.0, 0.0]])
    assert again.decision_function(X).tolist() == f.decision_function(X).tolist() == [2.5, 3.5]
    assert again.n_nodes == f.n_nodes == 4


def test_borders_are_float32_like_catboost():
    f = from_catboost(document(trees=[{"leaf_values": [0.0, 1.0],
                                        "splits": [split(0, 0.1)]}]))
    b = np.float32(0.1)
    assert f.threshold[0] == float(b)
    # 0.1 (float64) rounds to the border itself: not above it
    X = np.array([[0.1, 0], [float(np.nextafter(b, np.float32(1))), 0]])
    assert f.decision_function(X).tolist() == [0.0, 1.0]


def test_class_names_of_each_type_catboost_writes(cb):
    X, y = load_breast_cancer(return_X_y=True)
    for labels in ([False, True], [0.5, 2.5], ["no", "yes"]):
        model = fit(cb, "binary", X, np.array(labels)[y])
        forest = po.as_forest(model)
        assert forest.classes_.tolist() == labels
        assert from_catboost(document(class_names=labels)).classes_.tolist() == labels
    for bad in ([True, 1], [0, "1"], [1, 1], [None, 1]):
        with pytest.raises(ValueError, match="class_names must"):
            from_catboost(document(class_names=bad))


def test_scale_bias_multiclass_and_regression_documents():
    reg = from_catboost(document(loss="RMSE", scale_and_bias=(2.0, [10.0]), class_names=()))
    assert reg.task == "regression" and reg.ensemble.init_score.tolist() == [10.0]
    assert reg.decision_function(np.array([[0.6, -1.4]]))[0] == 14.0
    three = [{"leaf_values": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "leaf_weights": [1, 1],
              "splits": [split(1, 0.0)]}]
    multi = from_catboost(document(loss="MultiClass", trees=three, class_names=("a", "b", "c"),
                                   scale_and_bias=(0.5, [0.0, 1.0, 2.0])))
    assert multi.n_trees == 3 and multi.ensemble.tree_class.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(multi.decision_function(np.array([[0, 1.0]])),
                                  [[2.0, 3.5, 5.0]])
    assert multi.classes_.tolist() == ["a", "b", "c"]
    ce = from_catboost(document(loss="CrossEntropy", class_names=()))
    assert ce.classes_.tolist() == [0, 1]


def test_non_symmetric_document_in_preorder():
    leaf = lambda v, w=1: {"value": v, "weight": w}  # noqa: E731
    tree = {"split": split(0, 0.0),
            "left": leaf(-1.0, 3),
            "right": {"split": split(1, 2.0), "left": leaf(1.0, 0), "right": leaf(3.0, 0)}}
    doc = document(loss="RMSE", class_names=())
    del doc["oblivious_trees"]
    doc["trees"] = [tree]
    f = from_catboost(catboost_numbered(doc))
    assert f.left.tolist() == [1, -1, 3, -1, -1] and f.feature.tolist() == [0, -1, 1, -1, -1]
    assert f.value[:, 0].tolist() == [-1.0, -1.0, 2.0, 1.0, 3.0]  # weight 0: plain mean
    assert oblivious_levels(f, 0) is None
    X = np.array([[0.0, 5], [0.5, 2.0], [0.5, np.nan], [np.nan, 9]])
    assert f.predict(X).tolist() == [-1.0, 1.0, 3.0, -1.0]


def mutate(doc, path, value):
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


TREE = ("oblivious_trees", 0)
FEATURE = ("features_info", "float_features", 0)


@pytest.mark.parametrize("path, value, match", [
    (TREE + ("leaf_values",), [1.0, 2.0], "has 2 entries, expected 4"),
    (TREE + ("leaf_values",), [1.0, "2", 3.0, 4.0], "numbers only"),
    (TREE + ("leaf_weights",), [1, -2, 3, 4], "non-negative"),
    (TREE + ("splits", 0, "float_feature_index"), 2, r"must lie in \[0, 2\)"),
    (TREE + ("splits", 0, "float_feature_index"), 0.5, "must be an integer"),
    (TREE + ("splits", 0, "border"), 1e39, "finite float32"),
    (TREE + ("splits", 0, "border"), "0.5", "must be a number"),
    (TREE + ("splits", 0, "split_type"), "OneHotFeature", "one-hot categorical"),
    (TREE + ("splits", 0, "split_type"), "OnlineCtr", "categorical feature's statistics"),
    (TREE + ("splits", 1, "split_type"), {}, "a split of type {}"),
    (TREE + ("splits",), [split(0, 0.5)] * 17, "more than CatBoost's 16"),
    (TREE + ("splits",), KeyError, "lacks the field 'splits'"),
    (("oblivious_trees",), [], "no trees"),
    (("oblivious_trees",), {}, "must be an array"),
    (("scale_and_bias",), [1.0], r"pair \[scale, \[bias, \.\.\.\]\]"),
    (("scale_and_bias",), [1.0, [0.0, 1.0]], "2 outputs for loss Logloss"),
    (FEATURE + ("nan_value_treatment",), "Sometimes", "must be one of"),
    (FEATURE + ("nan_value_treatment",), [], "must be one of"),
    (FEATURE + ("feature_index",), 1, r"float_features\[0\]\.feature_index is 1, not 0"),
    (FEATURE + ("flat_feature_index",), 1, r"flat_feature_index is 1, not 0: .* save the"),
    (("features_info", "float_features"), [], "non-empty array"),
    (("features_info", "categorical_features"), [{"feature_id": "c"}], "categorical features"),
    (("ctr_data",), {"x": 1}, "ctr_data"),
    (("model_info", "params"), KeyError, "loss_function is missing"),
    (("model_info", "params", "loss_function", "type"), "YetiRank", "'YetiRank' is not "
                                                                    "supported"),
    (("model_info", "params", "loss_function", "type"), ["RMSE"], "is not supported"),
    (("model_info", "class_params", "class_to_label"), [0, 2], "had no training rows"),
    (("model_info",), KeyError, "lacks the field 'model_info'"),
])
def test_inconsistent_documents_are_refused(path, value, match):
    with pytest.raises(ValueError, match=match):
        from_catboost(mutate(document(), path, value))


def test_both_or_neither_tree_kind_is_refused():
    doc = document()
    doc["trees"] = []
    with pytest.raises(ValueError, match="exactly one of 'oblivious_trees'"):
        from_catboost(doc)
    del doc["trees"], doc["oblivious_trees"]
    with pytest.raises(ValueError, match="exactly one of 'oblivious_trees'"):
        from_catboost(doc)


def test_malformed_files_are_refused(tmp_path):
    text = json.dumps(document())
    path = tmp_path / "m.json"
    for bad, match in [(text[: len(text) // 2], "not valid JSON.*truncated"),
                       (text.replace("0.25", "NaN"), "non-finite number NaN"),
                       (text.replace("0.25", "Infinity"), "non-finite number Infinity"),
                       ("[" * 100_000 + "]" * 100_000, "nested too deeply|must be a JSON object"),
                       ("[1, 2]", "must be a JSON object")]:
        path.write_text(bad)
        with pytest.raises(ValueError, match=match):
            from_catboost(path)
    path.write_text(text)
    assert from_catboost(path).n_trees == 1
    with pytest.raises(ValueError, match="max_bytes"):
        from_catboost(path, max_bytes=100)
    with pytest.raises(ValueError, match="max_bytes"):
        from_catboost(text, max_bytes=100)
    with pytest.raises(TypeError, match="expected a CatBoost model"):
        from_catboost(3.5)


@given(st.data())
def test_any_edit_of_a_document_reads_or_raises_a_value_error(data):
    """A random value put anywhere in a valid document never crashes the parser with
    anything but a ValueError naming the fault."""
    doc = document()
    paths = []
    stack = [((), doc)]
    while stack:
        path, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            paths.append(path + (key,))
            if isinstance(child, (dict, list)):
                stack.append((path + (key,), child))
    path = data.draw(st.sampled_from(sorted(paths, key=str)))
    value = data.draw(st.one_of(st.none(), st.booleans(), st.integers(-3, 70),
                                st.floats(allow_nan=False, allow_infinity=False),
                                st.text(max_size=5), st.lists(st.integers(-1, 3), max_size=3),
                                st.just({}), st.just(KeyError)))
    try:
        forest = from_catboost(mutate(doc, path, value))
    except ValueError:
        return
    assert np.isfinite(forest.value).all()


# ------------------------------------------------------------------ read by CatBoost's rule
NATIVE = """
import sys, json, numpy as np, catboost as cb
X = np.load(sys.argv[1])
out = {}
for i, path in enumerate(sys.argv[3:]):
    try:
        m = cb.CatBoost().load_model(path, format="json")
        out[f"raw{i}"] = m.predict(X, prediction_type="RawFormulaVal")
        if m.get_param("loss_function") != "RMSE" and "RMSE" not in json.dumps(
                m.get_all_params().get("loss_function", "")):
            out[f"class{i}"] = np.ravel(m.predict(X, prediction_type="Class")).astype(str)
    except Exception as exc:
        out[f"error{i}"] = np.array(str(exc)[:200])
np.savez(sys.argv[2], **out)
"""


def native_predictions(docs, X, tmp_path):
    """CatBoost's own ``load_model`` of each document, in a child process (a file CatBoost
    cannot read may crash it): per document its raw scores and class labels, or its
    error."""
    paths = []
    for i, doc in enumerate(docs):
        paths.append(str(tmp_path / f"doc{i}.json"))
        (tmp_path / f"doc{i}.json").write_text(doc if isinstance(doc, str) else json.dumps(doc))
    np.save(tmp_path / "X.npy", X)
    run = subprocess.run([sys.executable, "-c", NATIVE, str(tmp_path / "X.npy"),
                          str(tmp_path / "out.npz"), *paths], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, f"CatBoost died reading a file prune-opt read: {run.stderr}"
    out = np.load(tmp_path / "out.npz")
    return [(out.get(f"raw{i}"), out.get(f"class{i}"), out.get(f"error{i}"))
            for i in range(len(docs))]


def assert_reads_like_catboost(forest, native, X, *, catboost_may_refuse=False):
    raw, labels, error = native
    if catboost_may_refuse and error is not None:
        return  # no answer of CatBoost's to disagree with
    assert error is None, f"prune-opt read a file CatBoost refuses: {error}"
    ours = forest.decision_function(X)
    assert np.abs(ours - raw).max() <= 1e-9 * max(1.0, float(np.abs(raw).max()))
    if labels is not None:
        assert np.array_equal(np.asarray(forest.predict(X)).astype(str), labels)


@pytest.fixture(scope="module")
def saved(cb, tmp_path_factory):
    """Real JSON documents (a symmetric binary model with NaN sent right, a Depthwise
    multiclass one) and rows with NaN."""
    X, y, _ = synthetic(5, "multi", True, n=150)
    X = np.c_[X, np.round(-X[:, :1], 1)] if X.shape[1] < 3 else X
    tmp = tmp_path_factory.mktemp("saved")
    binary = fit(cb, "binary", X, (y > 0).astype(int), iterations=4, depth=3, nan_mode="Max")
    multi = fit(cb, "multi", X, y, iterations=3, depth=3, grow_policy="Depthwise")
    return {"binary": model_doc(binary, tmp)[0], "multi": model_doc(multi, tmp)[0]}, X


def splits_of(doc):
    """Every split object of a document, in a fixed order."""
    out = [s for t in doc.get("oblivious_trees", []) for s in t["splits"] or []]
    stack = list(reversed(doc.get("trees", [])))
    while stack:
        node = stack.pop()
        if "split" in node:
            out.append(node["split"])
            stack += [node["right"], node["left"]]
    return out


@pytest.mark.parametrize("kind", ["binary", "multi"])
def test_a_split_is_its_split_index_as_catboost_reads_it(cb, saved, kind, tmp_path):
    """A split's border and feature are the ones its split_index names: an edit that
    moves split_index (with border and float_feature_index kept in step) is read as
    CatBoost reads it; one of border or float_feature_index alone edited is refused, as
    the hostile set's edited border was read as another model (32 of 200 rows)."""
    docs, X = saved
    doc = docs[kind]
    features = doc["features_info"]["float_features"]
    bins = [(k, b) for k, f in enumerate(features) for b in f["borders"]]
    rng = np.random.default_rng(0)
    moved = copy.deepcopy(doc)
    for s in splits_of(moved)[::2]:
        s["split_index"] = int(rng.integers(len(bins)))
        s["float_feature_index"], s["border"] = bins[s["split_index"]]
    without = copy.deepcopy(moved)  # CatBoost does not read border nor float_feature_index
    for s in splits_of(without):
        del s["border"], s["float_feature_index"]
    native = native_predictions([moved, without], X, tmp_path)
    for edited, theirs in zip((moved, without), native):
        assert_reads_like_catboost(from_catboost(edited), theirs, X)
    for field, value, match in [
            ("border", lambda s: s["border"] + 0.25, r"\.border is .*, but split_index \d+ "
                                                     r"names features_info\.float_features"),
            ("border", lambda s: float(np.nextafter(np.float32(s["border"]), np.float32(9))),
             "the file was edited: restore the border"),
            ("float_feature_index", lambda s: (s["float_feature_index"] + 1) % len(features),
             r"\.float_feature_index is \d, but split_index"),
            ("split_index", lambda s: len(bins), r"split_index must lie in \[0, \d+\)"),
            ("split_index", KeyError, "lacks the field 'split_index'")]:
        bad = copy.deepcopy(doc)
        s = splits_of(bad)[-1]
        if value is KeyError:
            del s[field]
        else:
            s[field] = value(s)
        with pytest.raises(ValueError, match=match):
            from_catboost(bad)


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["features_info"]["float_features"][0]["borders"].reverse(),
     r"float_features\[0\]\.borders must rise"),
    (lambda d: d["features_info"]["float_features"][0].update(flat_feature_index=1),
     r"flat_feature_index is 1, not 0"),
    (lambda d: d.update(scale_and_bias=[1.0, d["scale_and_bias"][1][0] + 5]),
     r"scale_and_bias\[1\] must be an array of biases.*CatBoost reads anything else as no"),
    (lambda d: d["model_info"].update(binclass_probability_threshold="0.8"),
     r"binclass_probability_threshold is 0\.8: CatBoost's predict\(\)"),
    (lambda d: d["model_info"].update(loss_function={"type": "CrossEntropy"}),
     r"model_info\.loss_function says .*CrossEntropy"),
])
def test_fields_that_disagree_are_refused_naming_the_field_and_the_fix(cb, saved, edit, match,
                                                                      tmp_path):
    """Each edit makes CatBoost read the file otherwise than its other fields say; the
    native library's predictions on the edited file differ from the original's, so
    reading either way would be silently wrong for someone."""
    docs, X = saved
    doc = copy.deepcopy(docs["binary"])
    assert doc["features_info"]["float_features"][0]["nan_value_treatment"] == "AsTrue"
    edit(doc)
    with pytest.raises(ValueError, match=match):
        from_catboost(doc)


@pytest.mark.parametrize("edit", [lambda f: f.update(has_nans=False),
                                  lambda f: f.pop("has_nans")])
def test_a_treatment_without_has_nans_reads_nan_as_is_as_catboost_does(cb, saved, edit,
                                                                     tmp_path):
    """CatBoost applies a feature's nan_value_treatment only when its has_nans is true
    (absent reads as false): AsTrue without it sends NaN to the 0 side, and the
    forest records the treatment that routes (AsIs)."""
    docs, X = saved
    doc = copy.deepcopy(docs["binary"])
    edit(doc["features_info"]["float_features"][0])
    forest = from_catboost(doc)
    assert forest.source_info["nan_value_treatment"][0] == "AsIs"
    assert_reads_like_catboost(forest, native_predictions([doc], X, tmp_path)[0], X)
    assert not np.array_equal(forest.decision_function(X),
                              from_catboost(docs["binary"]).decision_function(X))


def test_a_node_with_both_a_value_and_a_split_is_refused(saved):
    doc = copy.deepcopy(saved[0]["multi"])
    node = doc["trees"][0]
    node["value"] = [0.0, 0.0, 0.0]  # CatBoost reads a leaf, dropping the split
    with pytest.raises(ValueError, match=r"trees\[0\] has both a value .* and a split"):
        from_catboost(doc)


@pytest.mark.parametrize("labels", [
    {"class_params": {"class_names": [], "classes_count": 0, "class_to_label": [0, 1]}},
    {"class_params": {"class_names": [], "classes_count": 2, "class_to_label": [0, 1]}},
    {"multiclass_params": {"class_names": ["no", "yes"], "class_to_label": [0, 1]}},
    {"params_names": ["lo", "hi"]},
    {},
])
def test_class_labels_follow_catboost_s_rule(cb, saved, labels, tmp_path):
    """The class names come from the first of class_params and multiclass_params, else
    the training parameters' class_names, else 0 .. K-1, as CatBoost reads them."""
    docs, X = saved
    doc = copy.deepcopy(docs["binary"])
    info = doc["model_info"]
    del info["class_params"]
    info["params"]["data_processing_options"].pop("class_names", None)
    if "params_names" in labels:
        info["params"]["data_processing_options"]["class_names"] = labels["params_names"]
    else:
        info.update(labels)
    forest = from_catboost(doc)
    assert_reads_like_catboost(forest, native_predictions([doc], X, tmp_path)[0], X)


#: the fields of model_info that prediction reads
READ_INFO = [("model_info", "class_params"), ("model_info", "params", "loss_function"),
             ("model_info", "params", "data_processing_options", "class_names")]
#: what an edit puts in a field (KeyError: the field removed)
MUTATIONS = [None, True, False, 0, 1, 2, 3, 7, 40, -1, 0.5, -0.25, 1e-3, 2.5, "", "AsTrue",
             "AsIs", "0.8", "RMSE", "Logloss", "MultiClass", [], [0, 1], [1, 0], {}, KeyError]


def edited_documents(doc, rng, n):
    """``n`` copies of ``doc``, each with one field (not CatBoost's free text) replaced by
    a value of :data:`MUTATIONS`, a nearby number or another field's value, or removed."""
    paths, values, stack = [], [], [((), doc)]
    while stack:
        path, node = stack.pop()
        for key, child in (node.items() if isinstance(node, dict) else enumerate(node)):
            here = path + (key,)
            if here[:1] == ("model_info",) and not any(
                    here[:len(p)] == p[:len(here)] for p in READ_INFO):
                continue  # training options and free text (version, guid, log options)
            paths.append(here)
            values.append(child)
            if isinstance(child, (dict, list)):
                stack.append((path + (key,), child))
    out = []
    for _ in range(n):
        path = paths[rng.integers(len(paths))]
        old = values[paths.index(path)]
        pick = rng.integers(3)
        if pick == 0:
            value = MUTATIONS[rng.integers(len(MUTATIONS))]
        elif pick == 1 and isinstance(old, (int, float)) and not isinstance(old, bool):
            value = old + int(rng.choice([-1, 1])) * (1 if isinstance(old, int) else 0.1)
        else:
            value = copy.deepcopy(values[rng.integers(len(values))])
        out.append(mutate(doc, path, value))
    return out


@settings(max_examples=5, deadline=None)
@given(kind=st.sampled_from(["binary", "multi"]), seed=st.integers(0, 2**32 - 1))
@example(kind="binary", seed=0)
@example(kind="multi", seed=0)
def test_an_edited_file_reads_as_catboost_reads_it_or_is_refused(saved, tmp_path_factory, kind,
                                                                seed):
    """The hostile pass: one field of a real JSON model replaced (a random value, a
    nearby number, another field's value) or removed, 60 files an example; each file
    prune-opt reads predicts what CatBoost's own load_model of that file predicts (raw
    scores and class labels), else it is refused with a ValueError."""
    docs, X = saved
    read = []
    for edited in edited_documents(docs[kind], np.random.default_rng(seed), 60):
        try:
            read.append((from_catboost(edited), edited))
        except ValueError:
            continue
    tmp = tmp_path_factory.mktemp("edited")
    for (forest, _), theirs in zip(read, native_predictions([d for _, d in read], X, tmp)):
        assert_reads_like_catboost(forest, theirs, X, catboost_may_refuse=True)


# ------------------------------------------------------------------ the calls that use it
@pytest.fixture(scope="module")
def small(cb):
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    X = X[:, :6].copy()
    X[rng.random(X.shape) < 0.05] = np.nan
    model = fit(cb, "binary", X[:300], y[:300], iterations=5, depth=3)
    return model, X[300:420], y[300:420], X[420:], np.arange(1.0, 7.0)


def test_prune_fit_budget_curve_save_and_lazy(small, tmp_path):
    model, X_val, y_val, X_test, costs = small
    full_cost = po.acquisition_cost(model, X_val, costs).mean()
    pruned = po.prune(model, X_val, y_val, costs=costs, lam=1e-2)
    assert pruned.forest.source == "CatBoostClassifier"
    assert pruned.average_cost(X_val) <= full_cost
    budget = 0.5 * full_cost
    small_model = po.fit_budget(model, X_val, y_val, costs=costs, budget=budget)
    assert small_model.average_cost(X_val) <= budget * (1 + 1e-9)
    curve = po.tradeoff_curve(model, X_val, y_val, costs=costs)
    assert len(curve) >= 2
    pruned.save(tmp_path / "p.json")
    back = po.load(tmp_path / "p.json")
    assert back.forest.source == "CatBoostClassifier"
    np.testing.assert_array_equal(back.predict_proba(X_test), pruned.predict_proba(X_test))
    assert oblivious_levels(back.forest, 0) == oblivious_levels(pruned.forest, 0)

    def acquire(rows, unit):
        return X_test[rows][:, unit.features[0]] if unit.features else None

    lazy = po.LazyPredictor(pruned, acquire)
    out = lazy.predict_proba(np.full_like(X_test, np.nan))
    np.testing.assert_array_equal(out.labels, pruned.predict(X_test))
    np.testing.assert_allclose(out.cost_paid, pruned.acquisition_cost(X_test))


def test_multiclass_and_regression_prune(cb):
    X, y = load_iris(return_X_y=True)
    model = fit(cb, "multi", X[::2], y[::2], iterations=3, grow_policy="Depthwise")
    pruned = po.prune(model, X[1::2], y[1::2], costs=[1, 2, 3, 4], lam=1e-2)
    assert pruned.predict_proba(X).shape == (150, 3)
    Xr, yr = load_diabetes(return_X_y=True)
    reg = fit(cb, "reg", Xr[:300], yr[:300], iterations=3)
    pruned = po.fit_budget(reg, Xr[300:], yr[300:], costs=np.ones(10), budget=2.0)
    assert pruned.average_cost(Xr[300:]) <= 2.0 + 1e-9


def test_the_exactness_benchmark_runs_at_small_size(cb, capsys):
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks import catboost_exactness

    catboost_exactness.main(["--datasets", "heart-severity", "--trees", "3", "--depth", "3",
                             "--rows", "200", "--json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 6
    for row in rows:
        assert row["leaves_differing"] == 0 and row["leaves_compared"] > 0
        assert row["raw_gap"] <= 1e-9 * max(1.0, row["raw_scale"])


def test_a_pruned_catboost_model_exports_to_lightgbm_exactly(small):
    lgb = pytest.importorskip("lightgbm")
    model, X_val, y_val, X_test, costs = small
    pruned = po.prune(model, X_val, y_val, costs=costs, lam=1e-3)
    booster = pruned.to_lightgbm()
    assert isinstance(booster, lgb.Booster)
    # float32 comparisons become float64 thresholds exactly; rows on the borders too
    inner = ~pruned.forest.is_leaf
    Xb = np.repeat(X_test[:1], int(inner.sum()), axis=0)
    Xb[np.arange(len(Xb)), pruned.forest.feature[inner]] = pruned.forest.threshold[inner]
    for X in (X_test, Xb):
        np.testing.assert_array_equal(booster.predict(X), pruned.predict_proba(X)[:, 1])


# ------------------------------------------------------------------ what the exporter needs
def test_the_forest_keeps_loss_nan_treatment_and_tree_kind(cb, tmp_path):
    from prune_opt.importers._catboost import catboost_source_info

    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :4].copy()
    X[::5, 1] = np.nan  # only feature 1 has NaN in training
    model = fit(cb, "binary", X, y, loss_function="CrossEntropy", nan_mode="Max",
                grow_policy="Depthwise")
    forest = po.as_forest(model)
    assert forest.source_info == {"library": "catboost", "loss": "CrossEntropy",
                                  "symmetric": False,
                                  "nan_value_treatment": ["AsIs", "AsTrue", "AsIs", "AsIs"]}
    # pruning, saving and loading keep it
    pruned = po.prune(model, X, y, lam=1e-2)
    assert pruned.forest.source_info == forest.source_info
    pruned.save(tmp_path / "p.json")
    assert po.load(tmp_path / "p.json").forest.source_info == forest.source_info
    # a sub-forest has none: read off the arrays (the loss from the link)
    sub = forest.select_trees([0, 1])
    assert getattr(sub, "source_info", None) is None
    derived = catboost_source_info(sub)
    assert derived["loss"] == "Logloss" and derived["symmetric"] is False
    used = np.unique(sub.feature[sub.left >= 0])
    assert all(derived["nan_value_treatment"][k] == ("AsTrue" if k == 1 else "AsFalse")
               for k in used)


@pytest.mark.parametrize("edit, match", [
    (lambda i: i.update(loss="RMSE"), "source_info.loss 'RMSE' is not a loss of link"),
    (lambda i: i.update(loss=3), "source_info.loss 3"),
    (lambda i: i.update(symmetric="yes"), "source_info.symmetric must be true or false"),
    (lambda i: i.update(library="xgboost"), "source_info.library must be .catboost."),
    (lambda i: i.pop("loss"), "must be an object with the fields"),
    (lambda i: i.update(extra=1), "must be an object with the fields"),
    (lambda i: i["nan_value_treatment"].pop(), "for each of the 2 features"),
    (lambda i: i["nan_value_treatment"].__setitem__(0, "Sometimes"), "for each of the 2"),
    (lambda i: i["nan_value_treatment"].__setitem__(0, "AsTrue"),
     "feature 0 is 'AsTrue', but a split on it sends NaN the other way"),
])
def test_a_tampered_source_info_is_refused_on_load(tmp_path, edit, match):
    forest = from_catboost(document())
    po.PrunedForest(forest, forest.full_split_mask()).save(tmp_path / "p.json")
    doc = json.loads((tmp_path / "p.json").read_text())
    edit(doc["source_info"])
    (tmp_path / "p.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"^cannot load pruned forest: .*" + match):
        po.load(tmp_path / "p.json")


def test_source_info_on_a_model_of_another_library_is_refused(tmp_path):
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = load_breast_cancer(return_X_y=True)
    gb = GradientBoostingClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y)
    po.prune(gb, X, y, lam=1e-2).save(tmp_path / "p.json")
    doc = json.loads((tmp_path / "p.json").read_text())
    doc["source_info"] = {"library": "catboost", "loss": "Logloss", "symmetric": True,
                          "nan_value_treatment": ["AsIs"] * 30}
    (tmp_path / "p.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="read from 'GradientBoostingClassifier'"):
        po.load(tmp_path / "p.json")
