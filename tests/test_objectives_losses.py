"""The registered per-example losses and the registry's errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from prune_opt.objectives import Objective, available_objectives, get_objective

FOREST_LOSSES = ["brier", "logloss", "margin", "accuracy"]


@st.composite
def probas(draw):
    n = draw(st.integers(1, 20))
    c = draw(st.integers(2, 5))
    raw = draw(hnp.arrays(float, (n, c), elements=st.floats(0, 1)))
    raw[:, 0] += 1e-3
    y = draw(hnp.arrays(np.int64, n, elements=st.integers(0, c - 1)))
    return raw / raw.sum(axis=1, keepdims=True), y


@given(probas())
def test_losses_match_their_definitions(data):
    P, y = data
    onehot = np.eye(P.shape[1])[y]
    assert np.allclose(get_objective("brier").loss(P, y), ((P - onehot) ** 2).sum(axis=1))
    assert np.allclose(get_objective("logloss").loss(P, y),
                       -np.log(np.maximum(P[np.arange(y.size), y], 1e-4)))
    other = np.where(onehot > 0, -np.inf, P).max(axis=1)
    margin = P[np.arange(y.size), y] - other
    assert np.allclose(get_objective("margin").loss(P, y), np.maximum(0, 0.2 - margin))
    assert np.array_equal(get_objective("accuracy").loss(P, y), (margin <= 1e-9) * 1.0)


@given(probas())
def test_perfect_prediction_is_the_minimum(data):
    P, y = data
    perfect = np.eye(P.shape[1])[y]
    for name in FOREST_LOSSES:
        obj = get_objective(name)
        assert np.all(obj.loss(perfect, y) <= obj.loss(P, y) + 1e-12)
        assert np.all(obj.loss(perfect, y) == 0.0)


def _combiner(T, ensemble=None):
    """The part of a Forest the objectives read: its trees and how they combine."""
    from types import SimpleNamespace

    from prune_opt.forest._ensemble import Ensemble

    ens = Ensemble() if ensemble is None else ensemble
    return SimpleNamespace(n_trees=T, ensemble=ens,
                           output=lambda total, out=None: ens.output(total, T, out=out))


def test_pair_loss_is_the_forest_loss_with_one_tree_swapped():
    rng = np.random.default_rng(0)
    T, n, C = 4, 7, 3
    leaves = rng.dirichlet(np.ones(C), size=(T, n))
    y = rng.integers(0, C, n)
    forest = _combiner(T)
    for name in FOREST_LOSSES:
        obj = get_objective(name)
        rest = leaves[1:].sum(axis=0)
        assert np.allclose(obj.pair_loss(rest, leaves[0], y, forest),
                           obj.loss(leaves.mean(0), y))
        assert obj.total(list(leaves), y, np.full(n, 1 / n), forest) == pytest.approx(
            obj.loss(leaves.sum(0) / T, y).mean())
    te = get_objective("tree_error")
    per_tree = [(np.argmax(v, axis=1) != y).mean() for v in leaves]
    assert te.total(list(leaves), y, np.full(n, 1 / n), forest) == pytest.approx(
        np.mean(per_tree))


def test_pair_loss_of_a_booster_links_the_summed_raw_scores():
    from scipy.special import softmax

    from prune_opt.forest._ensemble import Ensemble

    rng = np.random.default_rng(1)
    T, n, C = 3, 6, 3
    raw = rng.normal(size=(T, n, C))
    y = rng.integers(0, C, n)
    ens = Ensemble("additive", "softmax", init_score=[0.1, -0.2, 0.3]).bind(
        "classification", C, T)
    forest = _combiner(T, ens)
    proba = softmax(raw.sum(0) + ens.init_score, axis=1)
    for name in FOREST_LOSSES:
        obj = get_objective(name)
        assert np.allclose(obj.pair_loss(raw[1:].sum(0), raw[0], y, forest), obj.loss(proba, y))
        assert obj.total(list(raw), y, np.full(n, 1 / n), forest) == pytest.approx(
            obj.loss(proba, y).mean())


def test_registry_and_errors():
    assert set(FOREST_LOSSES) | {"tree_error", "squared_error"} == set(available_objectives())
    inst = get_objective("logloss")
    assert get_objective(inst) is inst
    with pytest.raises(ValueError, match="unknown objective 'hinge'.*brier"):
        get_objective("hinge")
    with pytest.raises(ValueError, match="min-cut"):
        get_objective("paper")
    with pytest.raises(ValueError, match="eps"):
        type(inst)(eps=0.0)
    with pytest.raises(ValueError, match="gamma"):
        type(get_objective("margin"))(gamma=-1)
    with pytest.raises(TypeError, match="separable"):
        get_objective("tree_error").loss(np.ones((1, 2)) / 2, np.array([0]))
    with pytest.raises(NotImplementedError):
        Objective().loss(np.ones((1, 2)), np.array([0]))
