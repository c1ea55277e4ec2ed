"""The single-tree dynamic program against brute force over every pruning."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from prune_opt import Forest
from prune_opt.objectives import best_tree_pruning, pruning_value
from prune_opt.solvers._tree_dp import TreeLayout


def all_prunings(left, right, h=0):
    """Every split mask (as a set of split nodes) of the subtree under h."""
    if left[h] < 0:
        return [frozenset()]
    out = [frozenset()]
    for a, b in itertools.product(all_prunings(left, right, left[h]),
                                  all_prunings(left, right, right[h])):
        out.append(frozenset({h}) | a | b)
    return out


def small_tree(seed, depth):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + rng.normal(scale=0.8, size=60) > 0).astype(int)
    return Forest.from_sklearn(DecisionTreeClassifier(max_depth=depth, random_state=seed)
                               .fit(X, y))


@given(seed=st.integers(0, 2**31 - 1), depth=st.integers(1, 4),
       signed=st.booleans())
def test_dp_equals_brute_force(seed, depth, signed):
    f = small_tree(seed, depth)
    layout = TreeLayout(f)
    rng = np.random.default_rng(seed + 1)
    L = rng.uniform(0, 1, f.n_nodes)
    k = rng.uniform(-0.2 if signed else 0.0, 0.3, f.n_nodes)
    value, mask = best_tree_pruning(layout, L, k)
    f.check_split_mask(mask)
    assert pruning_value(layout, mask, L, k) == pytest.approx(value, rel=1e-12, abs=1e-12)
    brute = []
    for splits in all_prunings(f.left, f.right):
        m = np.zeros(f.n_nodes, dtype=bool)
        m[list(splits)] = True
        brute.append(pruning_value(layout, m, L, k))
    assert value == pytest.approx(min(brute), rel=1e-12, abs=1e-12)


def test_pruning_value_counts_leaves_and_splits():
    f = small_tree(3, 2)
    layout = TreeLayout(f)
    L, k = np.arange(f.n_nodes, dtype=float), np.full(f.n_nodes, 10.0)
    assert pruning_value(layout, np.zeros(f.n_nodes, bool), L, k) == 0.0  # root leaf
    full = f.full_split_mask()
    expect = L[f.is_leaf].sum() + 10.0 * full.sum()
    assert pruning_value(layout, full, L, k) == pytest.approx(expect)


def test_dp_refuses_a_multi_tree_layout():
    f = small_tree(0, 2)
    two = Forest.from_arrays([{"left": f.left, "right": f.right, "feature": f.feature,
                               "threshold": f.threshold, "value": f.value}] * 2,
                             classes=f.classes_, n_features=f.n_features)
    with pytest.raises(ValueError, match="one tree"):
        best_tree_pruning(TreeLayout(two), np.zeros(two.n_nodes), np.zeros(two.n_nodes))
