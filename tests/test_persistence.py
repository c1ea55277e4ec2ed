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
