"""CatBoost exporter: a pruned CatBoost model exported with ``to_catboost()`` predicts
like the pruned model (raw scores bit for bit, probabilities and predictions), with and
without NaN, for every grow policy and loss; the features the pruned model does not ask
a row for cannot change the export's prediction of that row; the numbers of the JSON
model are written so that CatBoost's reader reads back the same doubles.

Tests that load a model into CatBoost skip when it is not installed
(``pip install prune-opt[catboost]``); every CatBoost model trained here writes no
files.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from boosted_cases import catboost_numbered
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)

import prune_opt as po
from prune_opt.exporters import catboost_model_json, catboost_model_text
from prune_opt.exporters._catboost_numbers import (
    catboost_json_text,
    catboost_number,
    read_like_catboost,
)
from prune_opt.importers import from_catboost


@pytest.fixture(scope="module")
def cb():
    return pytest.importorskip("catboost")


# ------------------------------------------------------------------ numbers
def catboost_reads(cb, texts, tmp_path):
    """The doubles CatBoost reads from the number texts: the leaf values of one
    symmetric tree (depth d, 2^d leaves), predicted on the rows reaching each leaf."""
    d = max(1, math.ceil(math.log2(len(texts))))
    leaves = list(texts) + ["0"] * ((1 << d) - len(texts))
    features = [{"borders": [0.5], "feature_id": "", "feature_index": k,
                 "flat_feature_index": k, "has_nans": False, "nan_value_treatment": "AsIs"}
                for k in range(d)]
    splits = [{"border": 0.5, "float_feature_index": j, "split_index": j,
               "split_type": "FloatFeature"} for j in range(d)]
    doc = json.dumps({"features_info": {"float_features": features},
                      "model_info": {"params": {"loss_function": {"type": "RMSE"},
                                                "flat_params": {"loss_function": "RMSE"}}},
                      "oblivious_trees": [{"leaf_values": "LEAVES", "splits": splits}],
                      "scale_and_bias": [1.0, [0.0]]})  # CatBoost reads the trees first
    path = tmp_path / "numbers.json"
    path.write_text(doc.replace('"LEAVES"', "[" + ",".join(leaves) + "]"))
    model = cb.CatBoostRegressor()
    model.load_model(str(path), format="json")
    X = np.array([[(i >> j) & 1 for j in range(d)] for i in range(len(texts))], dtype=float)
    return model.predict(X, prediction_type="RawFormulaVal")


def test_the_reader_is_read_like_catboost_reads_it(cb, tmp_path):
    """The emulated reader against CatBoost's on shortest, 17-digit, 25-digit and long
    integer-significand decimals: the same double every time, including the ones it
    reads one unit in the last place off."""
    rng = np.random.default_rng(0)
    values = (rng.normal(size=250) * 10.0 ** rng.integers(-12, 12, 250)).tolist()
    texts = [repr(v) for v in values] + [f"{v:.17g}" for v in values]
    texts += [f"{v:.25g}" for v in values[:100]] + [f"{int(abs(v) * 1e18)}e-18"
                                                    for v in values[:100]]
    texts += ["-0.0", "0.0", "12345678901234567890123.5e-3", "4294967296.25",
              "-9223372036854775809.5", "1e-320", "123456789012345678901234567890e-320"]
    got = catboost_reads(cb, texts, tmp_path)
    ours = np.array([read_like_catboost(t) for t in texts])
    assert np.array_equal(ours, got)
    assert (ours != np.array([float(t) for t in texts])).sum() > 50  # it does misread


def test_numbers_are_written_so_that_catboost_reads_them_back(cb, tmp_path):
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.normal(size=600) * 10.0 ** rng.integers(-8, 8, 600),
                             rng.uniform(-1, 1, 600), [0.1 + 0.02, -0.0, 5e-324, 1e300]])
    texts = [catboost_number(v) for v in values.tolist()]
    got = catboost_reads(cb, texts, tmp_path)
    assert np.array_equal(got, values)
    assert sum(t != repr(v) for t, v in zip(texts, values.tolist())) > 50  # repr would not


@given(st.floats(allow_nan=False, allow_infinity=False))
@example(-62.496570120477436)  # a double the reader cannot reach: written as repr
@example(0.12000000000000001)
@settings(max_examples=300)
def test_any_double_is_written_as_itself(v):
    text = catboost_number(v)
    assert float(text) == v  # a correctly rounding reader reads v as well
    assert read_like_catboost(text) == v or text == repr(v)


@given(D=st.integers(0, 2**64 - 1), k=st.integers(0, 340), minus=st.booleans())
def test_a_64_bit_significand_reads_in_closed_form(D, k, minus):
    """What the search assumes: D e-k with D in the reader's 64-bit integer is one
    conversion to double and one (or, below 1e-308, two) power of ten."""
    from prune_opt.exporters._catboost_numbers import _finish

    if minus and D > 2**63:
        D = 2**63
    text = f"{'-' if minus else ''}{D}e-{k}"
    assert abs(read_like_catboost(text)) == _finish(float(D), -k)


def test_doubles_no_decimal_reaches_are_rare():
    rng = np.random.default_rng(2)
    values = rng.uniform(-1, 1, 5000) * 10.0 ** rng.integers(-6, 6, 5000)
    misses = sum(read_like_catboost(catboost_number(v)) != v for v in values.tolist())
    assert misses <= 5  # about 1 in 40,000 measured
    assert read_like_catboost(catboost_number(-62.496570120477436)) != -62.496570120477436


def test_json_text_counts_what_is_read_otherwise():
    text, inexact = catboost_json_text({"v": [0.1 + 0.02, -62.496570120477436, 1, True],
                                        "name": 'a "b"', "none": None})
    assert "120000000000000009e-18" in text
    assert json.loads(text) == {"v": [0.1 + 0.02, -62.496570120477436, 1, True],
                                "name": 'a "b"', "none": None}
    assert inexact == 1
    with pytest.raises(ValueError, match="finite"):
        catboost_number(float("nan"))


# ------------------------------------------------------------------ models
def fit(cb, task, X, y, **params):
    """A small CatBoost model (single thread, no files written)."""
    params = dict(dict(iterations=4, depth=3, verbose=0, thread_count=1, random_seed=0,
                       allow_writing_files=False), **params)
    if task == "reg":
        return cb.CatBoostRegressor(**params).fit(X, y)
    if task == "multi":
        params.setdefault("loss_function", "MultiClass")
    return cb.CatBoostClassifier(**params).fit(X, y)


def synthetic(seed, task, with_nan, n=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 150)) if n is None else n
    d = int(rng.integers(2, 6))
    X = rng.normal(size=(n, d))
    X[:, 0] = np.round(X[:, 0], 1)  # ties and repeated values
    signal = X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=n)
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


def random_split_mask(forest, rng, p_cut):
    """A split mask closed under parents: each internal node is cut with probability
    p_cut, and everything below a cut node goes (the K copies of a multiclass tree are
    cut independently)."""
    keep = (forest.left >= 0) & (rng.random(forest.n_nodes) >= p_cut)
    for level in range(1, forest.max_depth + 1):  # a node stays only under kept splits
        at = np.flatnonzero(forest.depth == level)
        keep[at] &= keep[forest.parent[at]]
    return keep


def border_rows(forest, X, rng):
    """X, and rows that put a split's feature on its threshold, the float32 values
    either side of it, and NaN."""
    inner = np.flatnonzero(forest.left >= 0)
    rows = []
    for h in rng.choice(inner, size=min(40, inner.size), replace=False) if inner.size else []:
        t = np.float32(forest.threshold[h])
        with np.errstate(over="ignore"):  # a NaN split's border is float32's lowest
            near = [t, np.nextafter(t, np.float32(-np.inf)), np.nextafter(t, np.float32(np.inf))]
        for v in [v for v in near if np.isfinite(v)] + [np.nan]:  # X may not hold inf
            row = X[rng.integers(len(X))].copy()
            row[forest.feature[h]] = v
            rows.append(row)
    return np.vstack([X, *rows]) if rows else X


def unasked(pruned, X):
    """(n, n_features) bool: the features no pruned path of the row tests."""
    return ~(pruned.used_features(pruned.forest.check_X(X)).toarray() > 0)


def raw(model, X):
    out = np.asarray(model.predict(X, prediction_type="RawFormulaVal"), dtype=float)
    return out


def assert_exports_exactly(pruned, X, rng, report=None):
    """The export predicts as the pruned model (raw scores bit for bit when every number
    reads back, as here always), and replacing the features the pruned model does not
    ask a row for, by random values or NaN, changes none of its predictions."""

    model = pruned.to_catboost()
    _, inexact = catboost_json_text(catboost_model_json(pruned))
    f = pruned.forest
    ours = pruned.decision_function(X)
    theirs = raw(model, X)
    gap = float(np.abs(theirs - ours).max())
    if inexact == 0:
        assert np.array_equal(theirs, ours)
    assert gap <= 1e-9 * max(1.0, float(np.abs(ours).max()))
    if f.task == "regression":
        assert np.array_equal(np.asarray(model.predict(X)), pruned.predict(X))
        prob_gap = 0.0
    else:
        proba = pruned.predict_proba(X)
        prob_gap = float(np.abs(model.predict_proba(X) - proba).max())
        assert prob_gap <= 1e-12  # CatBoost's softmax differs in the last bits
        top2 = np.sort(proba, axis=1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] > 1e-12
        assert np.array_equal(np.ravel(model.predict(X))[clear], pruned.predict(X)[clear])
        assert np.array_equal(model.classes_, f.classes_)
    free = unasked(pruned, X)
    for fill in (rng.normal(scale=3.0, size=X.shape), np.full(X.shape, np.nan),
                 np.where(rng.random(X.shape) < 0.5, np.nan, np.round(rng.normal(size=X.shape),
                                                                      1))):
        changed = np.where(free, fill, X)
        assert np.array_equal(raw(model, changed), theirs)
        assert np.array_equal(pruned.decision_function(changed), ours)
    if report is not None:
        report.append((gap, prob_gap))
    return model


def reimported(pruned):
    """The exported JSON model read back by prune-opt, as a full (unpruned) forest."""

    f = from_catboost(catboost_model_json(pruned))
    return po.PrunedForest(f, f.full_split_mask())


# ------------------------------------------------------------------ exactness
@given(seed=st.integers(0, 2**32 - 1), task=st.sampled_from(["binary", "multi", "reg"]),
       with_nan=st.booleans(), depth=st.integers(1, 4), rounds=st.integers(1, 4),
       grow=st.sampled_from(["SymmetricTree", "Depthwise", "Lossguide"]),
       nan_mode=st.sampled_from(["Min", "Max", "Forbidden"]), p_cut=st.floats(0, 1))
@example(seed=0, task="multi", with_nan=True, depth=3, rounds=2, grow="SymmetricTree",
         nan_mode="Max", p_cut=0.3)
@example(seed=1, task="binary", with_nan=True, depth=4, rounds=3, grow="Lossguide",
         nan_mode="Min", p_cut=0.5)
@example(seed=2, task="multi", with_nan=False, depth=2, rounds=2, grow="Depthwise",
         nan_mode="Min", p_cut=1.0)
def test_any_pruning_of_any_model_exports_exactly(cb, seed, task, with_nan, depth, rounds,
                                                  grow, nan_mode, p_cut):

    X, y, rng = synthetic(seed, task, with_nan and nan_mode != "Forbidden")
    model = fit(cb, task, X, y, iterations=rounds, depth=depth, grow_policy=grow,
                nan_mode=nan_mode, learning_rate=float(rng.uniform(0.1, 1.0)),
                random_seed=seed % 1000)
    forest = po.as_forest(model)
    pruned = po.PrunedForest(forest, random_split_mask(forest, rng, p_cut))
    Xp = border_rows(forest, X, rng)
    Xp[rng.random(Xp.shape) < 0.1] = np.nan  # NaN also where training had none
    assert_exports_exactly(pruned, Xp, rng)
    back = reimported(pruned)
    assert np.array_equal(back.decision_function(Xp), pruned.decision_function(Xp))
    if grow != "SymmetricTree":  # the pruned trees themselves: the same features asked
        assert np.array_equal(~unasked(back, Xp), ~unasked(pruned, Xp))
    else:  # kept levels ask for more, never less
        assert not (~unasked(pruned, Xp) & unasked(back, Xp)).any()


@pytest.fixture(scope="module")
def report():
    rows = []
    yield rows
    if rows:
        print(f"\nto_catboost: {len(rows)} models, max |raw - pruned raw| "
              f"{max(r[0] for r in rows):.3g}, max |probability - pruned| "
              f"{max(r[1] for r in rows):.3g}")


@pytest.mark.parametrize("grow", ["SymmetricTree", "Depthwise", "Lossguide"])
@pytest.mark.parametrize("kind", ["binary", "multi", "reg", "crossentropy"])
@pytest.mark.parametrize("with_nan", [False, True])
def test_real_models_pruned_by_prune_export_exactly(cb, report, kind, grow, with_nan):

    loader = {"binary": load_breast_cancer, "crossentropy": load_breast_cancer,
              "multi": load_iris, "reg": load_diabetes}[kind]
    X, y = loader(return_X_y=True)
    rng = np.random.default_rng(3)
    if with_nan:
        X = X.copy()
        X[rng.random(X.shape) < 0.15] = np.nan
    task = {"binary": "binary", "crossentropy": "binary", "multi": "multi", "reg": "reg"}[kind]
    params = dict(iterations=15, depth=4, grow_policy=grow)
    if kind == "crossentropy":
        params["loss_function"] = "CrossEntropy"
    model = fit(cb, task, X[::2], y[::2], **params)
    costs = np.linspace(1.0, 3.0, X.shape[1])
    pruned = po.prune(model, X[1::2], y[1::2], costs=costs, lam=3e-3)
    assert 0 < pruned.n_splits < int((~pruned.forest.is_leaf).sum())  # really pruned
    export = assert_exports_exactly(pruned, border_rows(pruned.forest, X, rng), rng, report)
    expected_loss = {"binary": "Logloss", "crossentropy": "CrossEntropy",
                     "multi": "MultiClass", "reg": "RMSE"}[kind]
    assert export.get_params()["loss_function"] == expected_loss

    doc = catboost_model_json(pruned)
    assert ("oblivious_trees" in doc) == (grow == "SymmetricTree")
    # every CatBoost tree once, whatever its K copies became
    assert len(doc["oblivious_trees" if grow == "SymmetricTree" else "trees"]) == 15


def test_scale_and_bias_string_labels_and_feature_names(cb, tmp_path):
    pd = pytest.importorskip("pandas")

    X, y = load_iris(return_X_y=True, as_frame=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    model = fit(cb, "multi", X, labels, iterations=6)
    model.set_scale_and_bias(2.5, [0.25, -1.0, 3.0])
    pruned = po.prune(model, X, labels, costs=[1, 2, 3, 4], lam=1e-2)
    export = assert_exports_exactly(pruned, X.to_numpy(), np.random.default_rng(0))
    assert export.classes_.tolist() == ["setosa", "versicolor", "virginica"]
    assert export.feature_names_ == list(X.columns)
    assert export.get_scale_and_bias() == (1.0, [0.25, -1.0, 3.0])  # the scale is in the leaves
    frame = pd.DataFrame(X.to_numpy(), columns=X.columns)
    assert np.array_equal(np.ravel(export.predict(frame)), pruned.predict(X))


def test_an_export_of_a_loaded_pruned_model(cb, tmp_path):

    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :8].copy()
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    for grow in ("SymmetricTree", "Lossguide"):
        model = fit(cb, "binary", X[::2], y[::2], iterations=8, loss_function="CrossEntropy",
                    nan_mode="Max", grow_policy=grow)
        pruned = po.prune(model, X[1::2], y[1::2], costs=np.arange(1.0, 9.0), lam=3e-3)
        pruned.save(tmp_path / "p.json")
        back = po.load(tmp_path / "p.json")
        assert back.forest.source_info == pruned.forest.source_info
        export = assert_exports_exactly(back, X, np.random.default_rng(1))
        assert np.array_equal(raw(export, X), raw(pruned.to_catboost(), X))
        assert export.get_params()["loss_function"] == "CrossEntropy"
        # the NaN treatment of every feature, also of the ones no split tests any more
        written = [f["nan_value_treatment"] for f in
                   catboost_model_json(back)["features_info"]["float_features"]]
        assert written == pruned.forest.source_info["nan_value_treatment"]
        assert written.count("AsTrue") == 8  # every feature had NaN in training
        # the leaf weights come through the file too
        assert np.array_equal(export.get_leaf_weights(), pruned.to_catboost().get_leaf_weights())
        assert export.get_leaf_weights().sum() == 8 * (len(X) + 1) // 2


def test_a_sub_forest_exports_from_its_arrays(cb):

    X, y = load_iris(return_X_y=True)
    model = fit(cb, "multi", X, y, iterations=5)
    forest = po.as_forest(model)
    rng = np.random.default_rng(4)
    for keep in ([0, 1, 2, 3, 4, 5], [3, 4, 5, 0, 1, 2], [1, 2, 6, 10]):  # rounds, reordered,
        sub = forest.select_trees(keep)                                    # classes missing
        assert getattr(sub, "source_info", None) is None
        assert_exports_exactly(po.PrunedForest(sub, random_split_mask(sub, rng, 0.3)), X, rng)


# ------------------------------------------------------------------ every format
EXPORT_IN_EVERY_FORMAT = r"""
import json, sys
import numpy as np, catboost as cb, prune_opt as po
task, grow, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
rng = np.random.default_rng(1)
X = rng.normal(size=(300, 4))
X[rng.random(X.shape) < 0.1] = np.nan
signal = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1])
cls = cb.CatBoostRegressor if task == "reg" else cb.CatBoostClassifier
y = signal if task == "reg" else np.digitize(signal, [0.0] if task == "binary" else [-0.5, 0.5])
params = dict(iterations=4, depth=3, grow_policy=grow, verbose=0, thread_count=1,
              random_seed=0, allow_writing_files=False)
if task == "multi":
    params["loss_function"] = "MultiClass"
model = cls(**params).fit(X, y)
model.save_model(f"{tmp}/model.json", format="json")
preorder = cb.CatBoost().load_model(f"{tmp}/model.json", format="json")  # leaves in preorder
forest = po.as_forest(model)


def leaf_weights(model, path):
    # the leaf weights CatBoost holds, from its own JSON (get_leaf_weights() fails for
    # every MultiClass model, CatBoost's own included)
    model.save_model(path, format="json")
    doc, out = json.load(open(path)), []
    for tree in doc.get("oblivious_trees", []):
        out += tree["leaf_weights"]
    stack = list(reversed(doc.get("trees", [])))
    while stack:
        node = stack.pop()
        if "value" in node:
            out.append(node["weight"])
        else:
            stack += [node["right"], node["left"]]
    if task != "multi":  # read uninitialised memory when the export wrote none
        assert np.array_equal(model.get_leaf_weights(), out)
    return np.array(out)


original = leaf_weights(preorder, f"{tmp}/original.json")
for mask, name in [(forest.full_split_mask(), "whole"),
                   (forest.full_split_mask() & (forest.depth < 2), "cut")]:
    pruned = po.PrunedForest(forest, mask)
    export = pruned.to_catboost()
    weights = leaf_weights(export, f"{tmp}/{name}-weights.json")
    assert np.isfinite(weights).all() and (weights >= 0).all(), weights
    if name == "whole":
        assert np.array_equal(weights, original)
    else:  # every tree's training weight stays, spread over fewer leaves
        assert weights.size < original.size and abs(weights.sum() - original.sum()) <= 1e-9
    raw = pruned.decision_function(X)
    for fmt in ("cbm", "json", "onnx", "python", "cpp", "coreml", "pmml"):
        path = f"{tmp}/{name}.{fmt}"
        try:
            export.save_model(path, format=fmt)
        except cb.CatBoostError as exc:  # CatBoost's own limits, never a crash
            assert (grow != "SymmetricTree" and "non symmetric trees only" in str(exc)) or (
                task == "multi" and "supports only single-dimensional" in str(exc)), exc
            print(name, fmt, "refused by CatBoost")
            continue
        if fmt in ("cbm", "json"):  # CatBoost's JSON writer and reader drift one ulp
            back = cb.CatBoost().load_model(path, format=fmt)
            gap = np.abs(back.predict(X, prediction_type="RawFormulaVal") - raw).max()
            assert gap <= (0 if fmt == "cbm" else 1e-12 * np.abs(raw).max()), gap
            assert np.array_equal(leaf_weights(back, f"{tmp}/back.json"), weights)
        elif fmt == "onnx":  # CatBoost loads ONNX back (float32; binary as two classes)
            back = cb.CatBoost().load_model(path, format=fmt).predict(
                X, prediction_type="RawFormulaVal")
            back = back[:, 1] if task == "binary" else back
            assert np.allclose(back, raw, rtol=1e-5, atol=1e-5), np.abs(back - raw).max()
        elif fmt == "python":  # the module CatBoost writes applies the model
            module = {}
            with open(path) as fh:
                exec(fh.read(), module)
            rows = np.nan_to_num(X[:50]) if task != "multi" else None
            if rows is not None:
                got = np.array([module["apply_catboost_model"](list(r)) for r in rows])
                assert np.allclose(got, pruned.decision_function(rows), rtol=1e-9, atol=1e-9)
        print(name, fmt, "saved")
"""


@pytest.mark.parametrize("grow", ["SymmetricTree", "Depthwise", "Lossguide"])
@pytest.mark.parametrize("task", ["binary", "multi", "reg"])
def test_an_export_saves_and_loads_in_every_format_catboost_writes(cb, tmp_path, task, grow):
    """The export writes every leaf's training weight (the original leaves' weights
    under it, summed): without them CatBoost's save_model(format="json") of a Depthwise
    or Lossguide export killed the process (signal 11) and get_leaf_weights() read
    uninitialised memory. Each format CatBoost saves is saved, and the ones it loads
    back (cbm, json, onnx; the Python module it writes) predict as the pruned model;
    CatBoost refuses the others for non-symmetric trees with its own message. Run in
    a child process, so that a crash fails the test."""
    run = subprocess.run([sys.executable, "-c", EXPORT_IN_EVERY_FORMAT, task, grow,
                          str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (f"exit status {run.returncode} (negative: killed by that "
                                 f"signal)\n{run.stderr[-3000:]}")
    saved = {line.split()[1] for line in run.stdout.splitlines() if line.endswith("saved")}
    assert saved >= {"cbm", "json"} | ({"pmml"} if task != "multi" else set()) | (
        {"onnx", "python", "cpp", "coreml"} if grow == "SymmetricTree" else set())


# ------------------------------------------------------------------ the written trees
def feature(k, treatment="AsFalse"):
    return {"borders": [0.5], "feature_id": "", "feature_index": k, "flat_feature_index": k,
            "has_nans": treatment != "AsIs", "nan_value_treatment": treatment}


def split(k, border):
    return {"border": border, "float_feature_index": k, "split_type": "FloatFeature"}


def document(loss="RMSE", trees=None, n_features=3, scale_and_bias=(1.0, [0.0])):
    trees = [{"leaf_values": [float(v) for v in range(1, 9)], "leaf_weights": [1] * 8,
              "splits": [split(0, 0.5), split(1, -1.5), split(2, 0.25)]}] if trees is None else trees
    doc = {"features_info": {"float_features": [feature(k, "AsTrue" if k == 1 else "AsFalse")
                                                for k in range(n_features)]},
           "model_info": {"params": {"loss_function": {"params": {}, "type": loss}}},
           "oblivious_trees": trees,
           "scale_and_bias": [scale_and_bias[0], list(scale_and_bias[1])]}
    if loss == "MultiClass":
        doc["model_info"]["class_params"] = {"class_names": [0, 1, 2],
                                             "class_to_label": [0, 1, 2]}
    return catboost_numbered(doc)


def test_a_pruned_symmetric_tree_keeps_its_levels_down_to_the_deepest_kept_split():

    f = from_catboost(document())
    # the root and its right child stay splits: levels 0 and 1 stay, level 2 goes
    mask = np.zeros(f.n_nodes, dtype=bool)
    mask[[0, f.right[0]]] = True
    tree = catboost_model_json(po.PrunedForest(f, mask))["oblivious_trees"][0]
    assert [s["float_feature_index"] for s in tree["splits"]] == [0, 1]
    # leaf i: bit 0 is x0 > 0.5, bit 1 x1 > -1.5; x0 <= 0.5 is one pruned leaf (the mean
    # of CatBoost's leaves 0, 2, 4, 6: 1, 3, 5, 7), x0 > 0.5 keeps the x1 split (leaves
    # 1, 5 and 3, 7 pooled)
    assert tree["leaf_values"] == [4.0, 4.0, 4.0, 6.0]
    assert [f["borders"] for f in
            catboost_model_json(po.PrunedForest(f, mask))["features_info"]["float_features"]] \
        == [[0.5], [-1.5], []]
    root_only = catboost_model_json(po.PrunedForest(f, np.zeros(f.n_nodes, dtype=bool)))
    # the leaf weights of the original leaves under each written leaf, summed
    assert root_only["oblivious_trees"] == [{"leaf_values": [4.5], "leaf_weights": [8.0],
                                             "splits": []}]
    assert catboost_model_json(po.PrunedForest(f, mask))["oblivious_trees"][0][
        "leaf_weights"] == [2.0] * 4


def test_multiclass_copies_pruned_apart_fill_their_own_columns():

    values = [float(v) for v in range(12)]  # 4 leaves x 3 classes, leaf by leaf
    doc = document("MultiClass", trees=[{"leaf_values": values, "leaf_weights": [1] * 4,
                                         "splits": [split(0, 0.5), split(1, -1.5)]}],
                   scale_and_bias=(1.0, [0.0, 0.5, 1.0]))
    f = from_catboost(doc)
    assert f.n_trees == 3
    mask = np.zeros(f.n_nodes, dtype=bool)
    mask[f.node_offset[0]] = True  # class 0: the root split only
    sl = f.tree_slice(1)  # class 1: the whole tree; class 2: cut to its root
    mask[sl] = f.left[sl] >= 0
    out = catboost_model_json(po.PrunedForest(f, mask))
    tree = out["oblivious_trees"][0]
    assert len(tree["splits"]) == 2
    leaf = np.array(tree["leaf_values"]).reshape(4, 3)
    table = np.array(values).reshape(4, 3)
    # class 0: leaf i pools CatBoost's leaves with the same bit 0
    assert leaf[:, 0].tolist() == [(table[0, 0] + table[2, 0]) / 2,
                                   (table[1, 0] + table[3, 0]) / 2] * 2
    assert leaf[:, 1].tolist() == table[:, 1].tolist()
    assert leaf[:, 2].tolist() == [table[:, 2].mean()] * 4
    assert out["scale_and_bias"] == [1.0, [0.0, 0.5, 1.0]]
    assert out["model_info"]["class_params"]["class_names"] == [0, 1, 2]


def test_a_pruned_non_symmetric_tree_loses_its_cut_subtrees():

    leaf = lambda v: {"value": v, "weight": 1}  # noqa: E731
    doc = document()
    del doc["oblivious_trees"]
    doc["trees"] = [{"split": split(0, 0.0), "left": leaf(-1.0),
                     "right": {"split": split(1, 2.0), "left": leaf(1.0), "right": leaf(3.0)}}]
    f = from_catboost(catboost_numbered(doc))
    mask = np.array([True, False, False, False, False])  # the right split cut
    out = catboost_model_json(po.PrunedForest(f, mask))
    assert out["trees"] == [{"split": {"border": 0.0, "float_feature_index": 0,
                                       "split_index": 0, "split_type": "FloatFeature"},
                             "left": {"value": -1.0, "weight": 1.0},
                             "right": {"value": 2.0, "weight": 2.0}}]
    assert [f["borders"] for f in out["features_info"]["float_features"]] == [[0.0], [], []]


def test_split_index_counts_every_features_borders():

    trees = [{"leaf_values": [1.0, 2.0, 3.0, 4.0], "splits": [split(2, 0.25), split(0, 0.5)]},
             {"leaf_values": [1.0, 2.0, 3.0, 4.0], "splits": [split(0, -0.5), split(2, 0.25)]}]
    f = from_catboost(document(trees=trees))
    out = catboost_model_json(po.PrunedForest(f, f.full_split_mask()))
    assert [x["borders"] for x in out["features_info"]["float_features"]] == [[-0.5, 0.5], [],
                                                                              [0.25]]
    assert [[s["split_index"] for s in t["splits"]] for t in out["oblivious_trees"]] == [
        [2, 1], [0, 2]]


# ------------------------------------------------------------------ refusals, no CatBoost
def test_models_of_other_libraries_are_refused_naming_their_exporter():

    X, y = load_breast_cancer(return_X_y=True)
    for est, own in [(GradientBoostingClassifier(n_estimators=2, max_depth=2), "to_sklearn()"),
                     (RandomForestClassifier(n_estimators=2, max_depth=2), "to_sklearn()"),
                     (HistGradientBoostingClassifier(max_iter=2), "to_lightgbm()")]:
        pruned = po.prune(est.fit(X, y), X, y, lam=1e-2)
        with pytest.raises(ValueError, match=rf"not from CatBoost.*use {own[:-2]}\(\) instead"):
            pruned.to_catboost()
    lgb = pytest.importorskip("lightgbm")
    pruned = po.prune(lgb.LGBMClassifier(n_estimators=2, verbose=-1).fit(X, y), X, y, lam=1e-2)
    with pytest.raises(ValueError, match=r"comes from 'LGBMClassifier'.*use to_lightgbm\(\)"):
        pruned.to_catboost()
    f = pruned.forest
    built = po.Forest([f.local_arrays(t) for t in range(f.n_trees)], classes=f.classes_,
                      n_features=f.n_features, ensemble=f.ensemble)
    with pytest.raises(ValueError, match="was not read from a model, not from CatBoost"):
        po.PrunedForest(built, built.full_split_mask()).to_catboost()


def test_to_sklearn_of_a_catboost_model_names_to_catboost(cb):

    X, y = load_breast_cancer(return_X_y=True)
    pruned = po.prune(fit(cb, "binary", X, y), X, y, lam=1e-2)
    with pytest.raises(TypeError, match=r"cannot rebuild.*its library, to_catboost\(\)"):
        pruned.to_sklearn()


def test_the_json_needs_no_catboost_and_the_model_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "catboost", None)  # import catboost now fails
    f = from_catboost(document())
    pruned = po.PrunedForest(f, f.full_split_mask())
    assert json.loads(catboost_model_text(pruned)) == catboost_model_json(pruned)
    with pytest.raises(ImportError, match=r"pip install prune-opt\[catboost\]"):
        pruned.to_catboost()


@pytest.mark.parametrize("labels", [np.array([False, True]), np.array([0.5, 2.5]),
                                    np.array([3, 7], dtype=np.uint8), np.array(["no", "yes"]),
                                    np.array([-1, 1], dtype=object)])
def test_class_labels_keep_their_type(cb, labels):
    X, y = load_breast_cancer(return_X_y=True)
    model = fit(cb, "binary", X, labels[y])
    pruned = po.prune(model, X, labels[y], lam=1e-2)
    export = pruned.to_catboost()
    assert export.classes_.tolist() == model.classes_.tolist()
    assert np.array_equal(np.ravel(export.predict(X)), pruned.predict(X))
    assert np.array_equal(reimported(pruned).forest.classes_, pruned.forest.classes_)


def test_the_export_benchmark_runs_at_small_size(cb, capsys):
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks import catboost_export

    catboost_export.main(["--datasets", "heart-severity", "--trees", "3", "--depth", "3",
                          "--rows", "200", "--cut", "0.3", "--json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 6
    for row in rows:
        assert row["raw_gap"] == 0 and row["rows_changed_by_unasked"] == 0
        assert row["splits_kept"] < row["splits"]
