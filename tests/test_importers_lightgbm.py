"""LightGBM importer: every row reaches LightGBM's leaf in every tree and the IR
predicts LightGBM's raw scores and probabilities (binary, multiclass, regression,
NaN seen in training or not, values at and beside every threshold and in the zero
band); what cannot be reproduced is refused by name; malformed model texts are
refused with a ValueError."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

import prune_opt as po
from prune_opt.importers import (
    from_lightgbm,
    lightgbm_acquisition_cost,
    lightgbm_leaves,
    lightgbm_trees,
)
from prune_opt.importers._lightgbm import BELOW_ZERO_BAND, ZERO_BAND
from prune_opt.importers._lightgbm_text import parse_model_text

lgb = pytest.importorskip("lightgbm", reason="lightgbm not installed (pip install "
                                             "prune-opt[lightgbm])")

TOL = 1e-9


def _data(seed, task, n, p, nan_share, coarse):
    """Random rows (coarse: few distinct values, zeros and ties) and targets."""
    rng = np.random.default_rng(seed)
    X = (rng.integers(-2, 3, size=(n, p)).astype(float) if coarse
         else rng.normal(size=(n, p)))
    signal = np.nan_to_num(X) @ rng.normal(size=p) + 0.3 * rng.normal(size=n)
    X[rng.random(X.shape) < nan_share] = np.nan
    if task == "regression":
        return X, signal
    K = 2 if task == "binary" else 3
    y = np.digitize(signal, np.quantile(signal, np.arange(1, K) / K))
    y[:K] = np.arange(K)  # every class present
    return X, y


def _probes(model, X):
    """Rows of X with one split's feature set to values LightGBM's routing must get
    right: the threshold and its float64 neighbours, 0, the zero band's edges and
    inside, NaN."""
    special = [0.0, -0.0, 1e-36, -1e-36, ZERO_BAND, -ZERO_BAND,
               np.nextafter(ZERO_BAND, 1), BELOW_ZERO_BAND, np.nan]
    rows = []
    for tree in lightgbm_trees(model):
        inner = tree["left"] >= 0
        for f, thr in zip(tree["feature"][inner], tree["threshold"][inner]):
            near = np.array([thr, np.nextafter(thr, -np.inf), np.nextafter(thr, np.inf)])
            # an infinite threshold (NaN against every number): its finite neighbour
            values = [*near[np.isfinite(near)], *special]
            block = np.repeat(X[:1], len(values), axis=0)
            block[:, f] = values
            rows.append(block)
    block = np.repeat(X[:1], len(special), axis=0)  # also for a model without splits
    block[:, 0] = special
    return np.vstack([X, *rows, block])


def _check_exact(model, X, *, sigmoid=1.0):
    """The imported forest against LightGBM on X: leaves, raw scores, outputs."""
    booster = getattr(model, "booster_", model)
    forest = po.as_forest(model)
    theirs = np.asarray(booster.predict(X, pred_leaf=True)).reshape(X.shape[0], -1)
    leaf_index = [tree["leaf_index"] for tree in lightgbm_trees(model)]
    ours = np.column_stack([leaf_index[t][forest.apply_tree(X, t)]
                            for t in range(forest.n_trees)])
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(lightgbm_leaves(model, X), theirs)
    raw = booster.predict(X, raw_score=True)
    diffs = {"raw": np.abs(forest.decision_function(X) - sigmoid * raw).max()}
    if forest.task == "regression":
        diffs["predict"] = np.abs(forest.predict(X) - booster.predict(X)).max()
    else:
        proba = booster.predict(X)
        proba = np.column_stack([1 - proba, proba]) if proba.ndim == 1 else proba
        diffs["proba"] = np.abs(forest.predict_proba(X) - proba).max()
        if hasattr(model, "predict_proba"):
            np.testing.assert_array_equal(forest.predict(X), model.predict(X))
    assert max(diffs.values()) <= TOL, diffs
    return forest


MODELS = {"binary": lgb.LGBMClassifier, "multiclass": lgb.LGBMClassifier,
          "regression": lgb.LGBMRegressor}


@pytest.mark.parametrize("task", sorted(MODELS))
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(30, 100), p=st.integers(1, 4),
       nan_share=st.sampled_from([0.0, 0.2]), coarse=st.booleans(),
       n_estimators=st.integers(1, 5), num_leaves=st.integers(2, 8),
       min_child_samples=st.integers(1, 6))
def test_import_routes_and_predicts_as_lightgbm(task, seed, n, p, nan_share, coarse,
                                                n_estimators, num_leaves, min_child_samples):
    X, y = _data(seed, task, n, p, nan_share, coarse)
    model = MODELS[task](n_estimators=n_estimators, num_leaves=num_leaves,
                         min_child_samples=min_child_samples, min_child_weight=0.0,
                         verbose=-1, random_state=0).fit(X, y)
    forest = _check_exact(model, _probes(model, X))  # NaN probed in every model
    assert forest.split_dtype == "float64" and forest.is_additive
    assert forest.n_trees == n_estimators * (3 if task == "multiclass" else 1)


@given(seed=st.integers(0, 2**32 - 1), coarse=st.booleans())
def test_zero_as_missing_is_read_exactly_or_refused_by_name(seed, coarse):
    X, y = _data(seed, "binary", 80, 3, 0.1, coarse)
    model = lgb.LGBMClassifier(n_estimators=3, num_leaves=6, min_child_samples=2,
                               zero_as_missing=True, verbose=-1).fit(X, y)
    try:
        po.as_forest(model)
    except ValueError as exc:
        assert "zero_as_missing" in str(exc)
        return
    _check_exact(model, _probes(model, X))


def _zero_split_model(default_left, threshold):
    """A one-split model whose split treats zero as missing, with the given default
    direction and threshold (LightGBM loads it from the text)."""
    X = np.random.default_rng(0).normal(size=(60, 1))
    model = lgb.LGBMRegressor(n_estimators=1, num_leaves=2, verbose=-1).fit(X, X[:, 0])
    text = _without_sizes(model.booster_.model_to_string())
    text = _replace_line(text, 0, "threshold", repr(threshold))
    text = _replace_line(text, 0, "decision_type", str(4 | (2 if default_left else 0)))
    return lgb.Booster(model_str=text)


@pytest.mark.parametrize("default_left, threshold", [(True, 0.5), (True, 1e-36),
                                                     (False, -0.5), (False, 1e-36),
                                                     (True, BELOW_ZERO_BAND)])
def test_zero_as_missing_split_one_threshold_expresses_is_exact(default_left, threshold):
    booster = _zero_split_model(default_left, threshold)
    X = np.array([[v] for v in (-1, -0.5, BELOW_ZERO_BAND, -ZERO_BAND, -1e-36, 0.0, 1e-36,
                                ZERO_BAND, np.nextafter(ZERO_BAND, 1), 0.5, 1, np.nan)])
    _check_exact(booster, X)


@pytest.mark.parametrize("default_left, threshold", [(True, -0.5), (False, 0.5)])
def test_zero_as_missing_split_no_threshold_expresses_is_refused(default_left, threshold):
    booster = _zero_split_model(default_left, threshold)
    with pytest.raises(ValueError, match="zero_as_missing.*zero_as_missing=False"):
        po.as_forest(booster)
    X = np.array([[-1.0], [0.0], [np.nan], [0.25], [1.0]])  # the accounting still routes it
    np.testing.assert_array_equal(lightgbm_leaves(booster, X),
                                  booster.predict(X, pred_leaf=True).reshape(-1, 1))


@pytest.fixture(scope="module")
def binary_data():
    X, y = _data(3, "binary", 300, 5, 0.1, False)
    return X, y


@pytest.mark.parametrize("params", [
    dict(boosting_type="dart", n_estimators=8),
    dict(data_sample_strategy="goss", n_estimators=8),
    dict(n_estimators=8, cegb_tradeoff=0.5, cegb_penalty_feature_lazy=[1, 2, 3, 4, 5]),
    dict(n_estimators=8, cegb_tradeoff=2.0, cegb_penalty_feature_coupled=[5, 1, 1, 1, 1],
         cegb_penalty_split=0.1),
], ids=["dart", "goss", "cegb-lazy", "cegb-coupled"])
def test_other_boosting_modes_and_cegb_import_exactly(binary_data, params):
    X, y = binary_data
    model = lgb.LGBMClassifier(num_leaves=8, verbose=-1, random_state=0, **params).fit(X, y)
    forest = _check_exact(model, _probes(model, X))
    costs = [1.0, 2.0, 3.0, 4.0, 5.0]
    np.testing.assert_array_equal(po.acquisition_cost(forest, X, costs),
                                  lightgbm_acquisition_cost(model, X, costs))


def test_sigmoid_is_folded_into_the_values(binary_data):
    X, y = binary_data
    model = lgb.LGBMClassifier(n_estimators=5, num_leaves=6, sigmoid=0.4, verbose=-1).fit(X, y)
    forest = _check_exact(model, X, sigmoid=0.4)
    plain = from_lightgbm(model.booster_.model_to_string().replace("sigmoid:0.4", "sigmoid:1"))
    np.testing.assert_allclose(forest.value, 0.4 * plain.value, rtol=1e-15)


def test_every_input_reads_the_same_forest(binary_data, tmp_path):
    import pandas as pd

    X, y = binary_data
    model = lgb.LGBMClassifier(n_estimators=4, num_leaves=6, verbose=-1).fit(X, y)
    text = model.booster_.model_to_string()
    path = tmp_path / "model.txt"
    model.booster_.save_model(path)
    reference = po.as_forest(model)
    for source in (model.booster_, text, text.encode(), path, str(path)):
        forest = from_lightgbm(source)
        assert forest.same_splits(reference) and np.array_equal(forest.value, reference.value)
    assert reference.source == "LGBMClassifier" and reference.feature_names is None
    assert from_lightgbm(text).source == "lightgbm.Booster"
    assert po.as_forest(model.booster_).source == "lightgbm.Booster"
    frame = pd.DataFrame(X, columns=[f"lab_{k}" for k in range(X.shape[1])])
    named = po.as_forest(lgb.LGBMClassifier(n_estimators=2, verbose=-1).fit(frame, y))
    assert named.feature_names == list(frame.columns)
    strings = lgb.LGBMClassifier(n_estimators=2, verbose=-1).fit(X, np.array(["a", "b"])[y])
    assert list(po.as_forest(strings).classes_) == ["a", "b"]


WINDOWS = {"crlf": lambda b: b.replace(b"\n", b"\r\n"),
           "bom": lambda b: b"\xef\xbb\xbf" + b,
           "bom+crlf": lambda b: b"\xef\xbb\xbf" + b.replace(b"\n", b"\r\n")}


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
@pytest.mark.parametrize("written", sorted(WINDOWS))
def test_a_model_text_written_on_windows_reads_as_the_original(task, written, tmp_path):
    # LightGBM writes "\n"; a file passed through a Windows editor or a git checkout with
    # autocrlf has CRLF line ends and perhaps a byte-order mark. tree_sizes counts the
    # original "\n" text, so the CRLF text reads as the text it was converted from
    X, y = _data(3, task, 120, 3, 0.1, False)
    model = MODELS[task](n_estimators=4, num_leaves=6, verbose=-1).fit(X, y)
    text = model.booster_.model_to_string()
    path = tmp_path / "model.txt"
    path.write_bytes(WINDOWS[written](text.encode()))
    reference = _check_exact(model, X)
    for source in (path, path.read_bytes(), path.read_bytes().decode("utf-8")):
        forest = from_lightgbm(source)
        assert forest.same_splits(reference)
        np.testing.assert_array_equal(forest.value, reference.value)
        np.testing.assert_array_equal(forest.decision_function(X),
                                      reference.decision_function(X))
    assert po.importers.read_model_file(path).same_splits(reference)


def test_the_trees_predict_uses_are_imported(binary_data):
    X, y = binary_data
    train, valid = lgb.Dataset(X[:200], y[:200]), lgb.Dataset(X[200:], y[200:])
    params = dict(objective="binary", learning_rate=0.3, num_leaves=16, verbose=-1)
    booster = lgb.train(params, train, num_boost_round=200, valid_sets=[valid],
                        callbacks=[lgb.early_stopping(3, verbose=False)],
                        keep_training_booster=True)  # keeps the trees after the best
    best, total = booster.best_iteration, booster.current_iteration()
    assert 0 < best < total
    forest = _check_exact(booster, X)  # predict() stops at the best iteration: so does the import
    assert forest.n_trees == best
    every = from_lightgbm(booster, num_iteration=-1)
    assert every.n_trees == total
    np.testing.assert_allclose(every.decision_function(X),
                               booster.predict(X, raw_score=True, num_iteration=-1), atol=TOL)
    assert from_lightgbm(booster, num_iteration=2).n_trees == 2
    text = booster.model_to_string(num_iteration=-1)  # a text has no best iteration
    assert from_lightgbm(text).n_trees == total
    assert from_lightgbm(text, num_iteration=best).same_splits(forest)
    with pytest.raises(TypeError, match="num_iteration"):
        from_lightgbm(booster, num_iteration=2.5)


def test_importing_lightgbm_models_needs_no_lightgbm_import():
    import subprocess
    import sys

    code = ("import sys, prune_opt, prune_opt.importers; "
            "print('lightgbm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- refusals
def test_random_forest_mode_points_to_forest_from_lightgbm(binary_data):
    X, y = binary_data
    rf = lgb.LGBMClassifier(boosting_type="rf", n_estimators=3, subsample=0.7,
                            subsample_freq=1, verbose=-1).fit(X, y)
    with pytest.raises(ValueError, match=r"random forest.*forest_from_lightgbm\(model, "):
        po.as_forest(rf)


@pytest.mark.parametrize("objective, match", [
    ("regression_l1", "objective 'regression_l1' is not supported"),
    ("huber", "objective 'huber'"), ("poisson", "objective 'poisson'"),
    ("quantile", "objective 'quantile'"), ("fair", "objective 'fair'"),
    ("cross_entropy", "objective 'cross_entropy'.*objective='binary'"),
])
def test_unsupported_regression_objectives_are_refused(objective, match):
    X, y = _data(1, "regression", 120, 3, 0.0, False)
    y = np.abs(y) / np.abs(y).max() if objective == "cross_entropy" else np.abs(y)
    model = lgb.LGBMRegressor(objective=objective, n_estimators=2, verbose=-1).fit(X, y)
    with pytest.raises(ValueError, match=match) as info:
        po.as_forest(model)
    assert "'regression' (squared error), 'binary' or 'multiclass'" in str(info.value)


def test_multiclassova_reg_sqrt_and_custom_objectives_are_refused():
    X, y = _data(2, "multiclass", 150, 3, 0.0, False)
    ova = lgb.LGBMClassifier(objective="multiclassova", n_estimators=2, verbose=-1).fit(X, y)
    with pytest.raises(ValueError, match="multiclassova.*objective='multiclass'"):
        po.as_forest(ova)
    Xr, yr = _data(2, "regression", 150, 3, 0.0, False)
    sqrt = lgb.LGBMRegressor(reg_sqrt=True, n_estimators=2, verbose=-1).fit(Xr, yr)
    with pytest.raises(ValueError, match="reg_sqrt=True"):
        po.as_forest(sqrt)

    def squared(y_true, y_pred):
        return y_pred - y_true, np.ones_like(y_pred)

    custom = lgb.LGBMRegressor(objective=squared, n_estimators=2, verbose=-1).fit(Xr, yr)
    with pytest.raises(ValueError, match="custom objective"):
        po.as_forest(custom)


def test_categorical_and_linear_trees_are_refused():
    rng = np.random.default_rng(0)
    X = np.c_[rng.integers(0, 6, 300), rng.normal(size=300)]
    y = (X[:, 0] % 2 == 0).astype(int)
    cat = lgb.LGBMClassifier(n_estimators=2, num_leaves=4, verbose=-1, min_child_samples=5,
                             min_data_per_group=5, cat_smooth=1).fit(
        X, y, categorical_feature=[0])
    with pytest.raises(ValueError, match="categorical splits.*Encode"):
        po.as_forest(cat)
    linear = lgb.LGBMRegressor(n_estimators=2, linear_tree=True, verbose=-1).fit(X, X[:, 1])
    with pytest.raises(ValueError, match="linear_tree=False"):
        po.as_forest(linear)


def test_unfitted_and_foreign_inputs():
    with pytest.raises(NotFittedError, match="not fitted"):
        po.as_forest(lgb.LGBMClassifier())
    with pytest.raises(TypeError, match="model text or the path"):
        from_lightgbm(3.5)
    with pytest.raises(FileNotFoundError, match="neither a LightGBM model text"):
        from_lightgbm("no/such/model.txt")


# ---------------------------------------------------------------- malformed texts
@pytest.fixture(scope="module")
def text():
    X, y = _data(4, "multiclass", 150, 3, 0.1, False)
    model = lgb.LGBMClassifier(n_estimators=3, num_leaves=5, verbose=-1).fit(X, y)
    return model.booster_.model_to_string()


def _tree_line(text, t, key):
    start = text.index(f"Tree={t}\n")
    line_start = text.index(f"\n{key}=", start) + 1
    return line_start, text.index("\n", line_start)


def _replace_line(text, t, key, value):
    a, b = _tree_line(text, t, key)
    return text[:a] + f"{key}={value}" + text[b:]


def _without_sizes(text):
    a = text.index("tree_sizes=")
    return text[:a] + text[text.index("\n", a) + 1:]


def test_the_unmodified_text_reads(text):
    assert from_lightgbm(text).n_trees == 9
    parsed = parse_model_text(text)
    assert (parsed.num_class, parsed.num_tree_per_iteration, parsed.n_features) == (3, 3, 3)
    assert parsed.parameters["boosting"] == "gbdt" and parsed.pandas_categorical == "null"
    assert [tree["num_leaves"] for tree in parsed.trees] == [5] * 9


@pytest.mark.parametrize("cut", [0.05, 0.3, 0.6, 0.9])
def test_truncated_text_is_refused(text, cut):
    end = text.index("end of trees")
    with pytest.raises(ValueError, match="LightGBM model text: .*(truncated|edited)"):
        from_lightgbm(text[:int(cut * end)])


@pytest.mark.parametrize("edit, match", [
    (lambda s: _replace_line(_without_sizes(s), 1, "left_child",
                             _tree_line_value(s, 1, "left_child").replace("1", "7", 1)),
     "left_child 7 is out of range"),
    (lambda s: _replace_line(_without_sizes(s), 0, "threshold",
                             "nan " + _tree_line_value(s, 0, "threshold").split(" ", 1)[1]),
     "'nan' is not a number"),
    (lambda s: _replace_line(_without_sizes(s), 2, "num_leaves", "1000000"),
     r"num_leaves=1000000 must be in \[1, 131072\]"),
    (lambda s: _replace_line(_without_sizes(s), 2, "num_leaves", "5000"),
     "leaf_value has 5 entries, expected 5000"),
    (lambda s: _replace_line(_without_sizes(s), 0, "split_feature",
                             "9 " + _tree_line_value(s, 0, "split_feature").split(" ", 1)[1]),
     r"split_feature 9 is out of range \[0, 3\)"),
    (lambda s: _replace_line(_without_sizes(s), 0, "leaf_value",
                             "1e999 " + _tree_line_value(s, 0, "leaf_value").split(" ", 1)[1]),
     "too large to be finite"),
    (lambda s: _replace_line(_without_sizes(s), 0, "decision_type",
                             "13 " + _tree_line_value(s, 0, "decision_type").split(" ", 1)[1]),
     "decision_type 13"),
    (lambda s: _replace_line(s, 0, "leaf_value",
                             _tree_line_value(s, 0, "leaf_value") + "1"),
     "tree_sizes says tree 0 takes"),
    (lambda s: s.replace("max_feature_idx=2", "max_feature_idx=5"),
     "feature_names has 3 entries but max_feature_idx=5"),
    (lambda s: s.replace("Tree=1\n", "Tree=7\n"), "expected the line 'Tree=1'"),
    (lambda s: s.replace("num_cat=0\n", "num_cat=0\nbogus=1\n", 1), "unknown field 'bogus'"),
    (lambda s: s.replace("version=v4\n", "num_class=3\nversion=v4\n"), "sets 'num_class' twice"),
    (lambda s: "not a model\n" + s, "must start with the line 'tree'"),
    (lambda s: s.replace("\nTree=0", "\nTree=0\nnum_leaves=2\n\n\nTree=0", 1).replace(
        "tree_sizes=", "tree_sizes_="), "expected the line 'Tree=1'"),
], ids=["child-out-of-range", "nan-threshold", "huge-num-leaves", "num-leaves-vs-arrays",
        "feature-out-of-range", "overflowing-value", "unknown-decision-type",
        "tree-sizes", "feature-count", "tree-index", "unknown-key", "duplicate-key",
        "not-a-model", "extra-tree"])
def test_malformed_text_is_refused(text, edit, match):
    with pytest.raises(ValueError, match=match):
        from_lightgbm(edit(text))


def _tree_line_value(text, t, key):
    a, b = _tree_line(text, t, key)
    return text[a + len(key) + 1:b]


def _handmade(left, right):
    """The text of a regression model of one tree with these child arrays."""
    m = len(left)
    lines = ["tree", "version=v4", "num_class=1", "num_tree_per_iteration=1", "label_index=0",
             "max_feature_idx=0", "objective=regression", "feature_names=x",
             "feature_infos=none", "", "Tree=0", f"num_leaves={m + 1}", "num_cat=0",
             "split_feature=" + " ".join(["0"] * m),
             "threshold=" + " ".join(str(0.5 + h) for h in range(m)),
             "decision_type=" + " ".join(["2"] * m),
             "left_child=" + " ".join(map(str, left)), "right_child=" + " ".join(map(str, right)),
             "leaf_value=" + " ".join(str(float(j)) for j in range(m + 1)),
             "internal_value=" + " ".join(["0"] * m), "", "", "end of trees", ""]
    return "\n".join(lines)


def test_child_arrays_that_are_not_a_tree_are_refused():
    assert from_lightgbm(_handmade([1, -1, -3], [2, -2, -4])).n_nodes == 7
    with pytest.raises(ValueError, match="internal node 1 is the child of 2 nodes"):
        from_lightgbm(_handmade([1, -1, 1], [2, -2, -4]))  # a shared subtree
    with pytest.raises(ValueError, match="leaf 1 is the child of 0 nodes"):
        from_lightgbm(_handmade([1, -1, -3], [2, -3, -4]))
    with pytest.raises(ValueError, match="contain a cycle"):
        from_lightgbm(_handmade([-1, 2, 1], [-2, -3, -4]))  # nodes 1 and 2 hang on each other
    with pytest.raises(ValueError, match="root 0 is no child"):
        from_lightgbm(_handmade([1, 0, -3], [2, -2, -4]))


def test_oversized_text_is_refused_before_parsing(text, tmp_path):
    with pytest.raises(ValueError, match="LightGBM model text: .* more than max_bytes=1,000"):
        from_lightgbm(text, max_bytes=1000)
    path = tmp_path / "big.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match="big.txt' has .* more than max_bytes=1,000"):
        from_lightgbm(path, max_bytes=1000)
    assert from_lightgbm(text, max_bytes=None).n_trees == 9


@given(data=st.data())
def test_any_edit_of_the_text_reads_or_raises_a_value_error(text, data):
    lines = text[:text.index("end of trees")].split("\n")
    k = data.draw(st.integers(0, len(lines) - 1), label="line")
    action = data.draw(st.sampled_from(["drop", "digit", "truncate", "swap"]), label="action")
    if action == "drop":
        lines.pop(k)
    elif action == "digit" and lines[k]:
        i = data.draw(st.integers(0, len(lines[k]) - 1), label="position")
        c = data.draw(st.sampled_from(list("0123456789-. e")), label="char")
        lines[k] = lines[k][:i] + c + lines[k][i + 1:]
    elif action == "truncate":
        lines[k] = lines[k][:len(lines[k]) // 2]
    else:
        j = data.draw(st.integers(0, len(lines) - 1), label="other")
        lines[k], lines[j] = lines[j], lines[k]
    edited = "\n".join(lines) + text[text.index("end of trees"):]
    for candidate in (edited, _without_sizes(edited) if "tree_sizes=" in edited else edited):
        try:
            forest = from_lightgbm(candidate)
        except ValueError as exc:
            assert str(exc).startswith(("LightGBM model", "tree ")), exc
        else:
            assert forest.n_trees >= 1


def test_a_model_text_is_parsed_once_and_never_read_stale(monkeypatch):
    """The parse of a model text is kept by the text's SHA-256: reading the same model
    again parses nothing, and any other text (a model trained further, one number
    edited) is parsed anew; a caller that truncates or writes into what it got cannot
    change what the next caller gets."""
    from prune_opt.importers import _lightgbm_text

    calls = []
    real = _lightgbm_text._parse
    monkeypatch.setattr(_lightgbm_text, "_parse", lambda text: calls.append(1) or real(text))
    monkeypatch.setattr(_lightgbm_text, "_CACHE", type(_lightgbm_text._CACHE)())
    X, y = _data(7, "binary", 200, 4, 0.1, False)
    model = lgb.LGBMClassifier(n_estimators=6, num_leaves=5, verbose=-1).fit(X, y)
    first = po.as_forest(model)
    again = from_lightgbm(model)
    lightgbm_acquisition_cost(model, X)
    assert len(calls) == 1
    assert again.same_splits(first) and np.array_equal(again.value, first.value)
    text = model.booster_.model_to_string()
    assert from_lightgbm(text, num_iteration=2).n_trees == 2  # truncates its own copy
    assert from_lightgbm(text).n_trees == 6 and len(calls) == 1
    parsed = parse_model_text(text)
    with pytest.raises(ValueError, match="read-only"):
        parsed.trees[0]["leaf_value"][0] = 99.0
    parsed.trees.clear()
    assert len(parse_model_text(text).trees) == 6 and len(calls) == 1
    # another text: trained further, or one leaf value edited
    booster = lgb.train(dict(objective="binary", num_leaves=5, verbose=-1),
                        lgb.Dataset(X, y), num_boost_round=3, init_model=model.booster_)
    value = text.split("leaf_value=")[1].split()[0]  # its last digit changed: same length,
    edited = text.replace("leaf_value=" + value,     # so that tree_sizes still holds
                          "leaf_value=" + value[:-1] + str((int(value[-1]) + 1) % 10), 1)
    assert edited != text
    for source, native in ((booster, booster), (edited, edited)):
        forest = from_lightgbm(source)
        native = lgb.Booster(model_str=native) if isinstance(native, str) else native
        np.testing.assert_array_equal(forest.decision_function(X),
                                      native.predict(X, raw_score=True))
    assert len(calls) == 3
