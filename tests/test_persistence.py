"""JSON save/load: exact round trip, strict refusal of truncated/tampered/foreign files."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import prune_opt as po
from tests.forest_cases import forest_cases


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    rf = RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0).fit(X, labels)
    pruned = po.prune(rf, X, labels, costs=po.FeatureCosts([1, 1, 5, 5], groups={
        "petal": (2.0, [2, 3])}), lam=0.01)
    path = tmp_path_factory.mktemp("p") / "pruned.json"
    pruned.save(path)
    return X, pruned, path


def test_round_trip_is_exact(saved):
    X, pruned, path = saved
    loaded = po.load(path)
    assert np.array_equal(loaded.predict_proba(X), pruned.predict_proba(X))
    assert (loaded.predict(X) == pruned.predict(X)).all()
    assert np.array_equal(loaded.acquisition_cost(X), pruned.acquisition_cost(X))
    assert np.array_equal(loaded.split_mask, pruned.split_mask)
    assert loaded.objective == pruned.objective
    assert np.array_equal(loaded.to_sklearn().predict_proba(X), pruned.predict_proba(X))


@pytest.mark.parametrize("cls", [RandomForestClassifier, ExtraTreesClassifier,
                                 DecisionTreeClassifier])
def test_round_trip_estimator_kinds(cls, tmp_path):
    X, y = load_iris(return_X_y=True)
    est = cls(random_state=0, max_depth=5).fit(X, y)
    pruned = po.prune(est, X, y, lam=0.02)
    pruned.save(tmp_path / "m.json")
    loaded = po.load(tmp_path / "m.json")
    assert np.array_equal(loaded.predict_proba(X), pruned.predict_proba(X))
    if cls is DecisionTreeClassifier:
        assert isinstance(loaded.to_sklearn(), DecisionTreeClassifier)


def _mutate(path, tmp_path, fn):
    doc = json.loads(path.read_text())
    fn(doc)
    out = tmp_path / "bad.json"
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("mutation, match", [
    (lambda d: d.update(format="something-else"), "not a prune-opt"),
    (lambda d: d.update(schema_version=99), "schema_version"),
    (lambda d: d.pop("trees"), "missing field 'trees'"),
    (lambda d: d.update(estimator="os.system"), "unknown estimator"),
    (lambda d: d["trees"][0].update(left=d["trees"][0]["left"][:-1]), "differ in length"),
    (lambda d: d["trees"][0]["left"].__setitem__(0, 10**6), "out of range"),
    (lambda d: d["trees"][0]["value"][0].__setitem__(0, -1.0), "non-negative"),
    (lambda d: d["trees"][0]["split_mask"].__setitem__(0, 2), "zeros and ones"),
    (lambda d: d["trees"][0].update(feature="0"), "list of integers"),
    (lambda d: d.update(n_features=-2), "n_features"),
    (lambda d: d.update(classes=[]), "classes"),
    (lambda d: d["costs"].update(costs=[1, -1, 1, 1]), "non-negative"),
])
def test_tampered_files_are_refused(saved, tmp_path, mutation, match):
    _, _, path = saved
    with pytest.raises(ValueError, match=match):
        po.load(_mutate(path, tmp_path, mutation))


def test_split_mask_below_a_cut_node_is_refused(saved, tmp_path):
    _, pruned, path = saved

    def cut_root(d):
        d["trees"][0]["split_mask"][0] = 0

    if pruned.split_masks[0][1:].any():
        with pytest.raises(ValueError, match="closed under parents"):
            po.load(_mutate(path, tmp_path, cut_root))


def test_truncated_and_foreign_files(saved, tmp_path):
    _, _, path = saved
    text = path.read_text()
    for cut in (0, 1, len(text) // 2, len(text) - 1):
        p = tmp_path / f"t{cut}.json"
        p.write_text(text[:cut])
        with pytest.raises(ValueError, match="cannot load"):
            po.load(p)
    p = tmp_path / "bin.json"
    p.write_bytes(b"\x80\x04\x95pickle\x00")
    with pytest.raises(ValueError, match="cannot load"):
        po.load(p)
    p.write_text("[1, 2, 3]")
    with pytest.raises(ValueError, match="not a prune-opt"):
        po.load(p)


@given(data=st.data())
@settings(max_examples=60)
def test_loader_fuzz_never_crashes_unexpectedly(saved, tmp_path_factory, data):
    """Random byte edits either load to a valid forest or raise ValueError."""
    _, _, path = saved
    raw = bytearray(path.read_bytes())
    for _ in range(data.draw(st.integers(1, 5))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] = data.draw(st.sampled_from(list(b'0123456789-.,:[]{}"e ')))
    p = tmp_path_factory.mktemp("fz") / "f.json"
    p.write_bytes(bytes(raw))
    try:
        loaded = po.load(p)
    except ValueError:
        return
    loaded.forest.check_split_mask(loaded.split_mask)


@given(case=forest_cases(with_groups=True))
@settings(max_examples=10)
def test_round_trip_random_forests(case, tmp_path_factory):
    pruned = po.prune(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                      lam=case["lam"], solver="highs")
    p = tmp_path_factory.mktemp("rt") / "m.json"
    pruned.save(p)
    loaded = po.load(p)
    X = case["X_train"]
    assert np.array_equal(loaded.predict_proba(X), pruned.predict_proba(X))
    assert np.array_equal(loaded.acquisition_cost(X), pruned.acquisition_cost(X))


# ------------------------------------------------------------ schema, field by field
def _doc(path):
    return json.loads(path.read_text())


def _write(tmp_path, text, name="bad.json"):
    out = tmp_path / name
    out.write_text(text)
    return out


@pytest.mark.parametrize("mutation, match", [
    # issue: a NaN threshold loaded and routed everything right
    (lambda d: d["trees"][0]["threshold"].__setitem__(0, "NaN-literal"), "finite"),
    (lambda d: d["trees"][0]["threshold"].__setitem__(0, "1e400"), "finite"),
    # issue: classes_kind "int" with [0.5, 1.5] silently became [0, 1]
    (lambda d: d.update(classes_kind="int", classes=[0.5, 1.5, 2.5]), "integers"),
    (lambda d: d.update(classes_kind="int", classes=[0, True, 2]), "integers"),
    # issue: duplicated classes loaded and predicted
    (lambda d: d.update(classes=["a", "a", "b"]), "distinct"),
    (lambda d: d.update(classes_kind="float", classes=[1.0, 2.0, "NaN-literal"]), "finite"),
    (lambda d: d.update(objective="not a number"), "objective"),
    (lambda d: d.update(lam=-1.0), "lam"),
    (lambda d: d.update(objective=10**400), "objective"),
    (lambda d: d["trees"][0]["threshold"].__setitem__(0, 10**400), "finite"),
    (lambda d: d["trees"][0]["value"][0].__setitem__(0, 10**400), "finite"),
    (lambda d: d["trees"][0]["value"][0].__setitem__(0, True), "rows of 3"),
    (lambda d: d.update(classes_kind="float", classes=[1.0, 2.0, 10**400]), "float"),
    (lambda d: d.update(solve_info=[1, 2]), "solve_info"),
    (lambda d: d.update(allow_nan="yes"), "allow_nan"),
    (lambda d: d.update(extra_field=1), "unknown field"),
    (lambda d: d["trees"][0].update(extra=1), "unknown field"),
    (lambda d: d["trees"][0]["value"].__setitem__(0, [1.0]), "rows of 3"),
    (lambda d: d["trees"][0]["value"].__setitem__(0, [0.0, 0.0, 0.0]), "positive sum"),
    (lambda d: d["trees"][0]["left"].__setitem__(1, 0), "tree 0"),  # child -> root
    (lambda d: d["trees"][0]["feature"].__setitem__(0, 99), "feature index out of range"),
    (lambda d: d["trees"][0]["missing_go_to_left"].__setitem__(0, 7), "zeros and ones"),
    (lambda d: d["trees"][0]["left"].__setitem__(0, 10**30), "64 bits"),
    (lambda d: d.update(feature_names=["a", "a", "b", "c"]), "distinct"),
    (lambda d: d["costs"].update(costs=[1, 1]), "costs"),
    (lambda d: d["costs"].update(groups={"g": 5}), "costs"),
    (lambda d: d.update(schema_version=True), "schema_version"),
])
def test_schema_violations_are_refused(saved, tmp_path, mutation, match):
    _, _, path = saved
    doc = _doc(path)
    mutation(doc)
    text = json.dumps(doc).replace('"NaN-literal"', "NaN").replace('"1e400"', "1e400")
    with pytest.raises(ValueError, match=match):
        po.load(_write(tmp_path, text))


def test_cycle_in_children_is_refused_in_linear_time(saved, tmp_path):
    _, _, path = saved
    doc = _doc(path)
    tree = doc["trees"][0]
    internal = [h for h, c in enumerate(tree["left"]) if c >= 0]
    deepest = internal[-1]
    tree["left"][deepest] = 0  # a node points back at the root
    with pytest.raises(ValueError, match="not larger than its parent"):
        po.load(_write(tmp_path, json.dumps(doc)))


@pytest.mark.parametrize("where", ["solve_info", "value", "top"])
def test_deep_nesting_is_a_clear_error_not_a_recursion_error(saved, tmp_path, where):
    _, _, path = saved
    deep = "[" * 100_000 + "]" * 100_000
    text = path.read_text()
    if where == "solve_info":
        text = text.replace('"solve_info": {', f'"solve_info": {{"deep": {deep}, ', 1)
    elif where == "value":
        text = text.replace('"value": [', f'"value": [{deep}, ', 1)
    else:
        text = deep
    with pytest.raises(ValueError, match="cannot load"):
        po.load(_write(tmp_path, text))
    doc = _doc(path)
    nested = {}
    for _ in range(20):
        nested = {"x": nested}
    doc["solve_info"] = nested  # parses, but deeper than the schema allows
    with pytest.raises(ValueError, match="nested deeper"):
        po.load(_write(tmp_path, json.dumps(doc), "deep2.json"))


def test_huge_integer_literal_is_a_clear_error(saved, tmp_path):
    _, _, path = saved
    text = path.read_text().replace('"n_features": 4', '"n_features": ' + "9" * 5000, 1)
    with pytest.raises(ValueError, match="cannot load"):
        po.load(_write(tmp_path, text))


def test_loading_never_executes_code(saved, monkeypatch):
    import builtins
    import pickle

    X, pruned, path = saved

    def forbidden(*a, **k):
        raise AssertionError("load must not execute or unpickle anything")

    for mod, name in ((builtins, "eval"), (builtins, "exec"), (pickle, "loads"),
                      (pickle, "load")):
        monkeypatch.setattr(mod, name, forbidden)
    assert np.array_equal(po.load(path).predict_proba(X), pruned.predict_proba(X))


def test_save_is_atomic(saved, tmp_path, monkeypatch):
    import errno
    import os

    X, pruned, _ = saved
    target = tmp_path / "kept.json"
    pruned.save(target)
    before = target.read_bytes()

    def full_disk(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        pruned.save(target)
    assert target.read_bytes() == before  # the old file is whole
    assert [p.name for p in tmp_path.iterdir()] == ["kept.json"]  # no temporary left
    monkeypatch.undo()
    assert np.array_equal(po.load(target).predict_proba(X), pruned.predict_proba(X))


# ------------------------------------------------------------ mutations of a valid file
_METADATA = ("objective", "lam", "solve_info", "allow_nan")
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10**20) | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=8)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


def _apply(doc, path, op, value):
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if op == "replace":
        parent[key] = value
    elif op == "delete":
        del parent[key]
    elif op == "duplicate" and isinstance(parent, list):
        parent.insert(key, parent[key])
    elif op == "insert":
        if isinstance(parent, dict):
            parent[f"{key}_extra"] = value
        else:
            parent.insert(key, value)


@given(data=st.data())
@settings(max_examples=80)
def test_every_mutation_loads_identically_or_raises_a_clear_error(saved, tmp_path_factory,
                                                                  data):
    """A mutated file either raises ValueError naming the problem, or loads into a valid
    forest: identical predictions when only metadata changed, valid probabilities always."""
    X, pruned, path = saved
    doc = _doc(path)
    paths = [p for p in _paths(doc) if p]
    target = data.draw(st.sampled_from(paths))
    op = data.draw(st.sampled_from(["replace", "delete", "duplicate", "insert"]))
    _apply(doc, target, op, data.draw(json_values))
    out = tmp_path_factory.mktemp("mut") / "m.json"
    out.write_text(json.dumps(doc))
    try:
        loaded = po.load(out)
    except ValueError as exc:
        assert str(exc).startswith("cannot load pruned forest")
        return
    repr(loaded)
    loaded.forest.check_split_mask(loaded.split_mask)
    proba = loaded.predict_proba(X)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-9)
    assert set(loaded.predict(X)) <= set(loaded.classes_)
    if target[0] in _METADATA:
        assert np.array_equal(proba, pruned.predict_proba(X))
        assert np.array_equal(loaded.acquisition_cost(X), pruned.acquisition_cost(X))


def test_save_refuses_what_load_would_refuse(tmp_path):
    stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
                 threshold=[0.5, 0.0, 0.0], value=[[2, 2], [2, 0], [0, 2]])
    f = po.Forest([stump], classes=[0, 1], n_features=1)
    f.threshold[1:] = np.nan  # as some array-built forests mark leaves
    pf = po.PrunedForest(f, f.full_split_mask())
    pf.save(tmp_path / "ok.json")  # NaN leaf thresholds are never read: stored as -2
    X = np.array([[0.2], [0.9]])
    assert np.array_equal(po.load(tmp_path / "ok.json").predict_proba(X), pf.predict_proba(X))
    fz = po.Forest([stump], classes=[0, 1], n_features=1)
    fz.value[1] = 0.0
    with pytest.raises(ValueError, match="empty class distribution"):
        po.PrunedForest(fz, fz.full_split_mask()).save(tmp_path / "z.json")
    assert not (tmp_path / "z.json").exists()


# ------------------------------------------------- every file kind, load then save
def _cli(*argv):
    from prune_opt.cli import main

    assert main([*argv]) == 0


def _heart_table(tmp_path):
    from tests._heart_csv import write_heart_csv

    write_heart_csv(tmp_path / "heart.csv", rows=150)
    return tmp_path / "heart.csv"


def _file_of_kind(kind, tmp_path):
    """A file of each kind the project writes, and the estimator class that reads it
    (None: prune_opt.load only)."""
    from sklearn.ensemble import RandomForestRegressor

    from forest_builders import BudgetPrunedForestClassifier, BudgetPrunedForestRegressor

    path = tmp_path / f"{kind}.json"
    X, y = load_iris(return_X_y=True)
    tiny = dict(n_estimators=3, time_limit=1, max_subsets=1, random_state=0)
    if kind == "prune":
        rf = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
        po.prune(rf, X, y, costs=[1, 1, 5, 5], lam=0.01).save(path)
    elif kind == "fit_budget-regression":
        rf = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, X[:, 0])
        po.fit_budget(rf, X, X[:, 0], costs=[1, 1, 5, 5], budget=3.0).save(path)
    elif kind.startswith("estimator"):
        cls = BudgetPrunedForestRegressor if kind.endswith("regressor") else \
            BudgetPrunedForestClassifier
        cls(budget=3.0, costs=[1, 1, 5, 5], **tiny).fit(X, X[:, 0] if kind.endswith(
            "regressor") else y).save(path)
        return path, cls
    else:  # the command line from a CSV with text columns
        table = _heart_table(tmp_path)
        _cli(kind.split("-")[1], "--dataset", str(table), "--target", "disease", "--trees",
             "3", "--budget", "30", "--out", str(path), *(
                 ["--time-limit", "1", "--quiet"] if kind == "cli-fit" else []))
        return path, BudgetPrunedForestClassifier if kind == "cli-fit" else None
    return path, None


@pytest.mark.parametrize("kind", ["prune", "fit_budget-regression", "estimator",
                                  "estimator-regressor", "cli-prune", "cli-fit"])
def test_load_then_save_keeps_every_field(kind, tmp_path):
    """po.load(m).save(copy), and the estimator's load/save, write the file they read
    field for field (the command line's feature_encoding included), so prune-opt
    predict reads the table the copy was trained on."""
    path, cls = _file_of_kind(kind, tmp_path)
    original = _doc(path)
    po.load(path).save(tmp_path / "copy.json")
    assert _doc(tmp_path / "copy.json") == original
    if cls is not None:
        cls.load(path).save(tmp_path / "copy2.json")
        assert _doc(tmp_path / "copy2.json") == original
    if kind.startswith("cli"):
        assert "feature_encoding" in original
        _cli("predict", "--model", str(tmp_path / "copy.json"), "--dataset",
             str(tmp_path / "heart.csv"), "--out", str(tmp_path / "p.csv"))


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    """A model named by its columns with its table's encoding, as the command line saves."""
    pd = pytest.importorskip("pandas")
    X, y = load_iris(return_X_y=True)
    frame = pd.DataFrame(X, columns=["sl", "sw", "pl", "pw"])
    rf = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(frame, y)
    pruned = po.prune(rf, frame, y, costs=po.FeatureCosts([1, 2, 3, 4], feature_names=list(
        frame.columns)), lam=0.01)
    pruned.feature_encoding = {"kind": "ordinal", "target": "species",
                               "columns": list(frame.columns), "categories": {}}
    path = tmp_path_factory.mktemp("named") / "m.json"
    pruned.save(path)
    return frame, pruned, path


def _permuted(names):
    return [names[1], names[0], *names[2:]]


@pytest.mark.parametrize("mutation, match", [
    # the command line's columns against the costs' names (prune-opt predict read
    # the table in the wrong order: 50 % agreement with the true model)
    (lambda d: d["feature_encoding"].update(columns=_permuted(d["feature_names"])),
     r"feature_encoding.columns \['sw', 'sl'.* name the features differently"),
    (lambda d: d.update(feature_names=None) or d["costs"].update(
        feature_names=_permuted(d["costs"]["feature_names"])),
     r"costs.feature_names \['sw', 'sl'.*feature_encoding.columns \['sl', 'sw'"),
    (lambda d: d.update(feature_names=_permuted(d["feature_names"])), "differently"),
    (lambda d: d["feature_encoding"].update(columns=["sl", "sw", "pl", "x"]), "differently"),
    (lambda d: d["feature_encoding"].update(target="pl"), "feature_encoding.target"),
    (lambda d: d["feature_encoding"].update(kind="one-hot"), "feature_encoding.kind"),
    (lambda d: d["feature_encoding"].update(categories={"nope": ["a"]}), "categories"),
    (lambda d: d["feature_encoding"].update(categories={"sl": ["a", "a"]}), "distinct"),
    (lambda d: d["feature_encoding"].update(columns=["sl", "sl", "pl", "pw"]), "distinct"),
    (lambda d: d["feature_encoding"].update(extra=1), "only the fields"),
    (lambda d: d.update(estimator="RandomForestRegressor"), "does not match task"),
    (lambda d: d.update(task="regression"), "task|regression"),
])
def test_fields_that_contradict_each_other_are_refused(named, tmp_path, mutation, match):
    """Every cross-reference of a file is checked at load (names, task, class fields),
    naming the fields that disagree."""
    _, _, path = named
    doc = _doc(path)
    mutation(doc)
    with pytest.raises(ValueError, match=r"^cannot load pruned forest: .*" + match):
        po.load(_write(tmp_path, json.dumps(doc)))


def test_a_loaded_model_reads_a_frame_by_column_name(named, tmp_path):
    """Named by feature_names, or, in a file written before the command line recorded
    them, by its table's columns: a DataFrame in another column order is read by name,
    one with other columns is refused."""
    frame, pruned, path = named
    doc = _doc(path)
    doc["feature_names"] = None  # as prune-opt prune wrote its models before
    for p in (path, _write(tmp_path, json.dumps(doc), "old.json")):
        loaded = po.load(p)
        assert loaded.forest.feature_names == list(frame.columns)
        shuffled = frame[["pw", "sl", "pl", "sw"]]
        np.testing.assert_array_equal(loaded.predict_proba(shuffled),
                                      pruned.predict_proba(frame.to_numpy()))
        with pytest.raises(ValueError, match=r"lacks \['pw'\]"):
            loaded.predict(frame.rename(columns={"pw": "petal width"}))


def test_a_field_given_twice_is_refused(saved, tmp_path):
    """JSON keeps the last of two equal keys without a word: a file naming a field twice
    contradicts itself and is refused."""
    _, _, path = saved
    text = path.read_text()
    twice = text.replace('"lam": ', '"lam": 0.5, "lam": ', 1)
    assert twice != text
    with pytest.raises(ValueError, match="the key 'lam' appears twice"):
        po.load(_write(tmp_path, twice))
    tree_twice = text.replace('"split_mask": [', '"split_mask": [0], "split_mask": [', 1)
    with pytest.raises(ValueError, match="'split_mask' appears twice"):
        po.load(_write(tmp_path, tree_twice))


def test_a_byte_order_mark_is_dropped(saved, tmp_path):
    """Some editors save UTF-8 with a byte-order mark; the file is the same JSON."""
    X, pruned, path = saved
    out = tmp_path / "bom.json"
    out.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert np.array_equal(po.load(out).predict_proba(X), pruned.predict_proba(X))
