"""FeatureCosts: parsing, groups, the requires closure, and cost containers matched by name."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt import FeatureCosts
from prune_opt.forest._costs import as_feature_costs

NAMES = ["f0", "f1", "f2", "f3", "f4", "f5"]


# ---------------------------------------------------------------- groups
@pytest.mark.parametrize("member", [np.int64(0), 0, "a", ["a"], (np.int32(0),), np.array([0])])
def test_group_member_forms(member):
    # regression: a numpy integer member raised "'numpy.int64' object is not iterable"
    fc = FeatureCosts([1, 2, 3], groups={"g": (1.0, member)}, feature_names="abc")
    assert fc.feature_cost().tolist() == [2.0, 2.0, 3.0]
    assert fc.to_dict()["groups"] == {"g": [1.0, [0]]}
    assert FeatureCosts.from_dict(fc.to_dict()).feature_cost().tolist() == [2.0, 2.0, 3.0]


def test_group_unit_paid_once():
    fc = FeatureCosts([1, 2, 3], groups={"blood": (10.0, [0, 2])})
    assert fc.cost_of([0, 2]) == 1 + 3 + 10
    assert fc.unit_names[-1] == "group:blood"


# ---------------------------------------------------------------- requires
def test_long_requires_chain_has_no_recursion_limit():
    # regression: 3,000 features each requiring the next raised RecursionError
    n = 3000
    fc = FeatureCosts(np.ones(n), requires={k: [k + 1] for k in range(n - 1)})
    assert np.array_equal(fc.feature_cost(), np.arange(n, 0, -1, dtype=float))


@pytest.mark.parametrize("requires, path", [
    ({0: [1], 1: [0]}, r"a -> b -> a|b -> a -> b"),
    ({"a": ["b"], "b": ["c"], "c": ["a"]}, r"a -> b -> c -> a|b -> c -> a -> b|c -> a -> b -> c"),
])
def test_requires_cycle_is_reported_as_a_path(requires, path):
    with pytest.raises(ValueError, match=f"requires has a cycle: ({path})"):
        FeatureCosts([1, 1, 1], requires=requires, feature_names="abc")


def test_self_requirement_is_ignored():
    fc = FeatureCosts([1, 2], requires={0: [0, 1]})
    assert fc.feature_cost().tolist() == [3.0, 2.0]


def _brute_units(own, groups, requires):
    """Units each feature needs, by explicit recursion over the (small) DAG."""
    n = len(own)

    def units(k, seen=()):
        acc = {k} | {n + g for g, members in enumerate(groups) if k in members}
        for d in requires.get(k, []):
            acc |= units(d, seen + (k,))
        return acc

    return [units(k) for k in range(n)]


@st.composite
def cost_structures(draw):
    n = draw(st.integers(1, 7))
    own = draw(st.lists(st.floats(0, 50, allow_nan=False), min_size=n, max_size=n))
    # edges only from k to a larger index: a DAG by construction
    requires = {k: sorted(draw(st.sets(st.integers(k + 1, n - 1), max_size=3)))
                for k in range(n - 1) if draw(st.booleans())}
    members = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    cut = draw(st.integers(0, len(members)))
    groups = [g for g in (members[:cut], members[cut:]) if g]
    gcosts = draw(st.lists(st.floats(0, 20), min_size=len(groups), max_size=len(groups)))
    return own, groups, gcosts, requires


@given(cost_structures(), st.data())
def test_costs_match_brute_force(structure, data):
    own, groups, gcosts, requires = structure
    fc = FeatureCosts(own, groups={f"g{i}": (c, m) for i, (c, m) in
                                   enumerate(zip(gcosts, groups))}, requires=requires)
    units = _brute_units(own, groups, requires)
    unit_costs = list(own) + list(gcosts)
    expected = [sum(unit_costs[u] for u in us) for us in units]
    assert np.allclose(fc.feature_cost(), expected, rtol=1e-12, atol=0)
    used = data.draw(st.lists(st.integers(0, len(own) - 1), max_size=5))
    paid = set().union(*(units[k] for k in used)) if used else set()
    assert fc.cost_of(used) == pytest.approx(sum(unit_costs[u] for u in paid), rel=1e-12)
    again = FeatureCosts.from_dict(fc.to_dict())
    assert np.array_equal(again.feature_cost(), fc.feature_cost())


# ---------------------------------------------------------------- containers
def test_series_by_name_in_any_order():
    costs = pd.Series({"c": 3.0, "a": 1.0, "b": 2.0})
    fc = FeatureCosts(costs, feature_names=["a", "b", "c"])
    assert fc.feature_cost().tolist() == [1.0, 2.0, 3.0]


def test_series_with_default_index_is_positional():
    fc = FeatureCosts(pd.Series([5.0, 6.0, 7.0]), feature_names=["a", "b", "c"])
    assert fc.feature_cost().tolist() == [5.0, 6.0, 7.0]
    shuffled = pd.Series([7.0, 5.0, 6.0], index=[2, 0, 1])  # positions as labels
    assert FeatureCosts(shuffled).feature_cost().tolist() == [5.0, 6.0, 7.0]
    with pytest.raises(ValueError, match="not the feature positions"):
        FeatureCosts(pd.Series([5.0, 6.0, 7.0], index=[1, 2, 3]))


@pytest.mark.parametrize("series, match", [
    (pd.Series({"a": 1.0, "zz": 2.0, "c": 3.0}), r"unknown features \['zz'\]"),
    (pd.Series({"a": 1.0, "c": 3.0}), r"no cost given for features \['b'\]"),
    (pd.Series([1.0, 2.0, 3.0], index=["a", "a", "c"]), "duplicated index"),
])
def test_series_names_must_match(series, match):
    with pytest.raises(ValueError, match=match):
        FeatureCosts(series, feature_names=["a", "b", "c"])


def test_series_by_name_needs_forest_names():
    with pytest.raises(ValueError, match="feature_names is required"):
        as_feature_costs(pd.Series({"b": 1.0, "a": 2.0}), 2, None)


@pytest.fixture(scope="module")
def frame_forest():
    X, y = make_classification(300, 6, n_informative=4, random_state=0)
    X = pd.DataFrame(X, columns=NAMES)
    rf = RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0).fit(X, y)
    return X, y, rf


def test_prune_matches_series_costs_by_name(frame_forest):
    # regression: a Series indexed by name, in another order, was applied by position
    X, y, rf = frame_forest
    costs = pd.Series({"f5": 100.0, "f4": 5.0, "f3": 4.0, "f2": 3.0, "f1": 2.0, "f0": 1.0})
    problem = po.compile_problem(rf, X, y, costs=costs, lam=0.1)
    assert problem.costs.feature_cost().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 100.0]
    same = po.compile_problem(rf, X, y, costs=costs.to_dict(), lam=0.1)
    assert np.array_equal(same.costs.feature_cost(), problem.costs.feature_cost())


def _containers(values, order):
    """The same per-feature costs in every container prune() accepts."""
    shuffled = [NAMES[k] for k in order]
    return {
        "list": list(values),
        "ndarray": np.asarray(values),
        "dict": {name: values[NAMES.index(name)] for name in shuffled},
        "series": pd.Series({name: values[NAMES.index(name)] for name in shuffled}),
        "range-series": pd.Series(values),
        "shuffled-position-series": pd.Series(values).iloc[list(order)],
        "FeatureCosts": FeatureCosts(values, feature_names=NAMES),
    }


@given(st.lists(st.floats(0, 1e6), min_size=6, max_size=6), st.permutations(range(6)))
def test_every_container_gives_the_same_costs(values, order):
    for kind, container in _containers(values, order).items():
        fc = as_feature_costs(container, 6, NAMES)
        assert fc.feature_cost().tolist() == [float(v) for v in values], kind


@pytest.mark.parametrize("costs, exc, match", [
    ([1, 2, "x"], TypeError, "numeric"),
    ({"f0": -1.0}, ValueError, "non-negative"),
    ({"f0": "cheap"}, TypeError, r"costs\['f0'\] must be a finite non-negative real number"),
    (None, TypeError, "array-like"),
])
def test_bad_cost_values_named(costs, exc, match):
    with pytest.raises(exc, match=match):
        FeatureCosts(costs, feature_names=NAMES[:3])


def test_group_spec_must_be_a_pair():
    with pytest.raises(TypeError, match=r"groups\['g'\] must be a pair"):
        FeatureCosts([1, 2], groups={"g": 3.0})
