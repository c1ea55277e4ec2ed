"""NestedScorer: a sequence of masks scored from the previous one gives exactly the
arrays computed from scratch; baseline_curve scores sub-forests exactly."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import prune_opt as po
from prune_opt.budget import baseline_curve, sub_forest
from prune_opt.program._problem import close_under_parents
from prune_opt.routing._routed import NestedScorer, RoutedData
from tests.forest_cases import forest_cases


@settings(max_examples=25, deadline=None)
@given(case=forest_cases(), data=st.data())
def test_any_mask_sequence_scores_as_from_scratch(case, data):
    est, X = case["est"], case["X_val"]
    f = po.Forest.from_sklearn(est)
    r = RoutedData(f, f.check_X(X))
    s = NestedScorer(r)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1)))
    for _ in range(data.draw(st.integers(1, 8))):  # not nested: flips both ways
        raw = rng.random(f.n_nodes) < data.draw(st.sampled_from([0.0, 0.3, 0.8, 1.0]))
        mask = close_under_parents(f, raw & ~f.is_leaf)
        kind = data.draw(st.sampled_from(["all", "prefix", "list"]))
        if kind == "all":
            trees = None
        elif kind == "prefix":
            trees = range(data.draw(st.integers(1, f.n_trees)))
        else:
            trees = [int(t) for t in rng.permutation(f.n_trees)[:rng.integers(1, f.n_trees + 1)]]
        used, avg = s.score(mask, trees)
        np.testing.assert_array_equal(used, r.used(mask, trees))
        np.testing.assert_array_equal(avg, average_value(f, r, mask, trees))


def average_value(f, routed, mask, trees):
    """The pruned leaf values of ``trees`` averaged from scratch, in
    PrunedForest.predict_proba's order (summed in tree order, then one division)."""
    trees = range(f.n_trees) if trees is None else trees
    total = np.zeros((routed.n_rows, f.value.shape[1]))
    for t in trees:
        total += f.value[routed.leaves(mask, t)]
    return total / len(trees) if len(trees) > 1 else total


def test_baseline_curve_of_sub_forests_in_any_order_is_their_own_score():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 5)).round(2)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    from sklearn.ensemble import RandomForestClassifier

    rf = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X[:150], y[:150])
    f = po.Forest.from_sklearn(rf)
    costs = [1.0, 2.0, 0.5, 3.0, 1.5]
    prunings = []
    for keep in ([4, 1, 2], 3, [0], 5, [2, 3], 1):
        sub = sub_forest(f, keep)
        mask = sub.full_split_mask() & (rng.random(sub.n_nodes) < 0.7)
        prunings.append((keep, po.PrunedForest(sub, close_under_parents(sub, mask),
                                               costs=costs)))
    curve = baseline_curve(prunings, X[150:], y=y[150:], X_eval=X[:150], y_eval=y[:150])
    for (_, pf), (_, row) in zip(prunings, curve.iterrows()):
        assert row["average_cost"] == pf.average_cost(X[150:])
        assert row["accuracy"] == pf.score(X[150:], y[150:])
        assert row["accuracy_eval"] == pf.score(X[:150], y[:150])
        assert row["cost_eval"] == pf.average_cost(X[:150])
