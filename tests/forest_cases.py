"""Random small forests, data and costs for property tests (hypothesis strategies)."""

import numpy as np
from hypothesis import strategies as st
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from prune_opt import FeatureCosts


@st.composite
def forest_cases(draw, max_examples=60, with_groups=True):
    """A fitted sklearn forest, train/validation data and FeatureCosts."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n_features = draw(st.integers(2, 6))
    n_classes = draw(st.integers(2, 3))
    n = draw(st.integers(12, max_examples))
    X = rng.normal(size=(2 * n, n_features)).round(draw(st.sampled_from([0, 1, 3])))
    w = rng.normal(size=(n_features, n_classes))
    y = np.argmax(X @ w + rng.normal(scale=0.7, size=(2 * n, n_classes)), axis=1)
    y[: n_classes] = np.arange(n_classes)  # every class present in training data
    kind = draw(st.sampled_from(["rf", "et", "dt"]))
    depth = draw(st.integers(1, 5))
    trees = draw(st.integers(1, 5))
    if kind == "rf":
        est = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed,
                                     max_features=draw(st.sampled_from([None, "sqrt"])))
    elif kind == "et":
        est = ExtraTreesClassifier(n_estimators=trees, max_depth=depth, random_state=seed)
    else:
        est = DecisionTreeClassifier(max_depth=depth, random_state=seed)
    est.fit(X[:n], y[:n])
    own = rng.choice([0.0, 0.5, 1.0, 2.0, 7.3, 13.0], size=n_features)
    groups, requires = None, None
    if with_groups and n_features >= 3 and draw(st.booleans()):
        groups = {"g": (float(rng.choice([0.5, 3.0])), [0, 1])}
    if with_groups and n_features >= 3 and draw(st.booleans()):
        requires = {n_features - 1: [n_features - 2]}
    costs = FeatureCosts(own, groups=groups, requires=requires)
    lam = draw(st.sampled_from([0.0, 1e-4, 1e-3, 1e-2, 0.05, 0.3, 2.0]))
    depth_cost = draw(st.sampled_from([0.0, 0.0, 0.1, 1.0]))
    return dict(est=est, X_train=X[:n], y_train=y[:n], X_val=X[n:], y_val=y[n:],
                costs=costs, lam=lam, depth_cost=depth_cost, seed=seed)


def brute_force_cost(est_trees, split_masks, X, costs):
    """Per-example cost by walking every tree with Python loops (independent check).

    est_trees: list of (left, right, feature, threshold) local arrays.
    """
    X = np.asarray(X, dtype=np.float32)
    out = np.zeros(X.shape[0])
    units_of = [set(costs.feature_units[k].indices.tolist()) for k in range(costs.n_features)]
    for i in range(X.shape[0]):
        units = set()
        for (left, right, feature, threshold), mask in zip(est_trees, split_masks):
            h = 0
            while left[h] >= 0 and mask[h]:
                units |= units_of[feature[h]]
                h = left[h] if X[i, feature[h]] <= threshold[h] else right[h]
        out[i] = sum(costs.unit_costs[u] for u in units)
    return out


def sklearn_tree_arrays(est):
    trees = est.estimators_ if hasattr(est, "estimators_") else [est]
    return [(t.tree_.children_left, t.tree_.children_right, t.tree_.feature,
             t.tree_.threshold) for t in trees]


def ensemble_search(est, X, y, *, budget, objective="brier", costs=None, candidates=()):
    """The budgeted ensemble search (what fit_budget runs for an ensemble objective) on
    its own: ``(forest, search, best run)``."""
    from prune_opt.budget._own_loss import search_budget
    from prune_opt.objectives import EnsembleState, get_objective
    from prune_opt.objectives._optimize import Setup

    setup = Setup(est, X, y, costs=costs, depth_cost=0.0, sample_weight=None, solver="auto",
                  objective=get_objective(objective))
    state = EnsembleState(setup.forest, setup.X, setup.y, setup.weight, setup.costs,
                          setup.objective, lam=0.0)
    search = search_budget(state, budget, setup.starts("best", 0.0), candidates)
    return setup.forest, search, search.best()[1]
