"""Forest IR: construction from sklearn and from arrays, and refusal of malformed trees."""

import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

from prune_opt import Forest


def _stump(**over):
    tree = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
                threshold=[0.5, 0.0, 0.0], value=[[2, 2], [2, 0], [0, 2]])
    tree.update(over)
    return tree


def _from_arrays(tree):
    return Forest.from_arrays([tree], classes=[0, 1], n_features=1)


@pytest.mark.parametrize("cls", [RandomForestClassifier, ExtraTreesClassifier])
def test_from_sklearn_matches_sklearn(cls):
    X, y = load_iris(return_X_y=True)
    est = cls(n_estimators=4, max_depth=4, random_state=0).fit(X, y)
    f = Forest.from_sklearn(est)
    assert f.n_trees == 4
    assert np.allclose(f.predict_proba(X), est.predict_proba(X), rtol=0, atol=1e-12)
    for t, tree in enumerate(est.estimators_):
        sl = f.tree_slice(t)
        assert np.array_equal(f.depth[sl] == 0, np.arange(sl.stop - sl.start) == 0)
        assert f.parent[sl.start] == -1
        assert np.array_equal(f.apply(X)[:, t], tree.apply(X.astype(np.float32)))
    assert f.max_depth <= 4


# ---------------------------------------------------------------- malformed arrays
@pytest.mark.parametrize("over, match", [
    (dict(left=[1, 0, -1], right=[2, 0, -1]), "has the root"),          # child is the root
    (dict(left=[1, 2, -1, -1, -1], right=[3, 4, -1, -1, -1]), None),    # fine: control
    (dict(left=[1, 2, -1, -1, -1], right=[3, 1, -1, -1, -1]), "2 parents"),  # back to ancestor
    (dict(left=[1, 3, 3, -1], right=[2, -1, -1, -1]), "exactly one child"),
    (dict(left=[1, -1, 3, -1], right=[2, -1, 3, -1]), "parents"),       # shared subtree
    (dict(left=[1, -1, -1, 4, 3, -1, -1], right=[2, -1, -1, 5, 6, -1, -1]), "unreachable"),
    (dict(left=[1, -1, -1, 4, 3], right=[2, -1, -1, 4, 3]), "parents"),
    (dict(left=[1, -1, -1, -1], right=[2, -1, -1, -1]), "unreachable"),
    (dict(left=[1, -1, -1], right=[7, -1, -1]), "out of range"),
    (dict(left=[1, -1], right=[2, -1, -1]), "left has 2 nodes but right has 3"),
    (dict(left=[], right=[]), "no nodes"),
])
def test_from_arrays_refuses_non_trees(over, match):
    n = len(over["left"])
    tree = dict(feature=[0] * n, threshold=[0.5] * n, value=[[1, 1]] * n, **over)
    if match is None:
        assert _from_arrays(tree).n_nodes == n
        return
    with pytest.raises(ValueError, match=match):
        _from_arrays(tree)


def test_from_arrays_refuses_a_large_cyclic_tree_quickly():
    # regression: a child pointing at the root made the preorder walk loop forever
    n = 200_001
    left = np.where(np.arange(n) < n // 2, 2 * np.arange(n) + 1, -1)
    right = np.where(np.arange(n) < n // 2, 2 * np.arange(n) + 2, -1)
    left[n // 2 - 1], right[n // 2 - 1] = 0, n - 1
    tree = dict(left=left, right=right, feature=np.zeros(n, int), threshold=np.zeros(n),
                value=np.ones((n, 2)))
    start = time.perf_counter()
    with pytest.raises(ValueError, match="has the root"):
        _from_arrays(tree)
    assert time.perf_counter() - start < 2.0


def test_from_arrays_checks_per_node_array_lengths():
    with pytest.raises(ValueError, match="threshold has 2 entries for 3 nodes"):
        _from_arrays(_stump(threshold=[0.5, 0.0]))


@st.composite
def random_trees(draw):
    """A random binary tree (preorder ids) and a random relabelling of its nodes."""
    n_internal = draw(st.integers(0, 12))
    left, right, feature = [-1], [-1], [-1]
    leaves = [0]
    for _ in range(n_internal):
        h = leaves.pop(draw(st.integers(0, len(leaves) - 1)))
        left[h], right[h] = len(left), len(left) + 1
        feature[h] = draw(st.integers(0, 2))
        left += [-1, -1]
        right += [-1, -1]
        feature += [-1, -1]
        leaves += [len(left) - 2, len(left) - 1]
    n = len(left)
    threshold = draw(st.lists(st.floats(-2, 2, width=32), min_size=n, max_size=n))
    value = draw(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 5)), min_size=n,
                          max_size=n))
    perm = np.asarray(draw(st.permutations(range(1, n)))) if n > 1 else np.zeros(0, int)
    return dict(left=left, right=right, feature=feature, threshold=threshold,
                value=value), np.concatenate([[0], perm]).astype(int)


@given(random_trees(), st.lists(st.lists(st.floats(-3, 3), min_size=3, max_size=3),
                                min_size=1, max_size=20))
def test_from_arrays_relabelling_does_not_change_routing(tree_perm, rows):
    tree, perm = tree_perm  # perm[h]: new id of node h (root stays 0)
    n = perm.size
    inv = np.argsort(perm)
    relabel = lambda c: np.where(np.asarray(c)[inv] >= 0, perm[np.maximum(c, 0)][inv], -1)  # noqa: E731
    shuffled = dict(left=relabel(tree["left"]), right=relabel(tree["right"]),
                    feature=np.asarray(tree["feature"])[inv],
                    threshold=np.asarray(tree["threshold"])[inv],
                    value=np.asarray(tree["value"])[inv])
    a = Forest.from_arrays([tree], classes=[0, 1], n_features=3)
    b = Forest.from_arrays([shuffled], classes=[0, 1], n_features=3)
    X = np.asarray(rows)
    assert a.n_nodes == b.n_nodes == n
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    assert np.array_equal(np.sort(a.depth), np.sort(b.depth))


def test_constructor_requires_parent_before_child():
    with pytest.raises(ValueError, match="larger ids than parents"):
        Forest([dict(left=[3, -1, -1, 1, -1], right=[4, -1, -1, 2, -1], feature=[0] * 5,
                     threshold=[0.5] * 5, value=[[1, 1]] * 5)], classes=[0, 1], n_features=1)


def test_value_rows_are_normalised():
    f = Forest([_stump()], classes=[0, 1], n_features=1)
    assert np.allclose(f.value.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="finite and non-negative"):
        Forest([_stump(value=[[1, -1], [1, 0], [0, 1]])], classes=[0, 1], n_features=1)


@pytest.mark.parametrize("build", [Forest, Forest.from_arrays])
def test_tree_dicts_need_every_array(build):
    with pytest.raises(ValueError, match=r"trees\[0\] lacks the node arrays \['threshold'\]"):
        build([{k: v for k, v in _stump().items() if k != "threshold"}], classes=[0, 1],
              n_features=1)
    with pytest.raises(TypeError, match=r"trees\[0\] must be a dict"):
        build([[1, 2, 3]], classes=[0, 1], n_features=1)


def test_ir_built_in_place_equals_a_per_tree_reference():
    """The preallocated build gives exactly the arrays of concatenating tree by tree."""
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    f = Forest.from_sklearn(rf)
    trees = [e.tree_ for e in rf.estimators_]
    off = np.concatenate([[0], np.cumsum([t.node_count for t in trees])])
    left = np.concatenate([np.where(t.children_left >= 0, t.children_left + o, -1)
                           for t, o in zip(trees, off)])
    right = np.concatenate([np.where(t.children_right >= 0, t.children_right + o, -1)
                            for t, o in zip(trees, off)])
    assert np.array_equal(f.left, left) and np.array_equal(f.right, right)
    assert np.array_equal(f.threshold, np.concatenate([t.threshold for t in trees]))
    assert np.array_equal(f.feature, np.concatenate(
        [np.where(t.children_left >= 0, t.feature, -1) for t in trees]))
    assert np.allclose(f.value, np.concatenate([t.value[:, 0, :] for t in trees]))
    assert np.array_equal(f.tree_of_node, np.repeat(np.arange(4), np.diff(off)))
    assert f.tree_of_node.dtype == np.int32 and f.depth.dtype == np.int32
