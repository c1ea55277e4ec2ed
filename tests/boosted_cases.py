"""Random small boosted models (scikit-learn), data and costs for property tests."""

import copy

import numpy as np
from hypothesis import strategies as st
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)

from prune_opt import FeatureCosts

TASKS = ("binary", "multiclass", "regression")


def boosting_data(rng, task, n, n_features, nan_share=0.0, decimals=2):
    """Features, labels (or targets) of a task; ``nan_share`` of the entries NaN."""
    X = rng.normal(size=(n, n_features)).round(decimals)
    if task == "regression":
        y = X @ rng.normal(size=n_features) + rng.normal(scale=0.5, size=n)
    else:
        k = 2 if task == "binary" else 3
        y = np.argmax(X @ rng.normal(size=(n_features, k)) + rng.normal(scale=0.7, size=(n, k)),
                      axis=1)
        y[:k] = np.arange(k)  # every class present
    if nan_share:
        X[rng.random(X.shape) < nan_share] = np.nan
    return X, y


def fit_boosted(kind, task, X, y, seed, n_rounds=5, depth=3):
    """A fitted GradientBoosting* (``kind="gb"``) or HistGradientBoosting* (``"hgb"``)."""
    if kind == "gb":
        cls = GradientBoostingRegressor if task == "regression" else GradientBoostingClassifier
        return cls(n_estimators=n_rounds, max_depth=depth, random_state=seed).fit(X, y)
    cls = (HistGradientBoostingRegressor if task == "regression"
           else HistGradientBoostingClassifier)
    return cls(max_iter=n_rounds, max_depth=depth, min_samples_leaf=3, early_stopping=False,
               random_state=seed).fit(X, y)


@st.composite
def boosted_cases(draw, kinds=("gb", "hgb"), tasks=TASKS, max_rows=80, nan=True):
    """``(model, X_train, y_train, X_val, y_val, costs, task)``: a small fitted boosted
    model and fresh rows of the same distribution (HistGradientBoosting with NaN)."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(kinds))
    task = draw(st.sampled_from(tasks))
    n = draw(st.integers(20, max_rows))
    n_features = draw(st.integers(2, 5))
    share = draw(st.sampled_from([0.0, 0.15])) if nan and kind == "hgb" else 0.0
    X, y = boosting_data(rng, task, 2 * n, n_features, share,
                         decimals=draw(st.sampled_from([0, 1, 3])))
    if task != "regression":  # every class in both halves
        k = int(y.max()) + 1
        y[n:n + k] = np.arange(k)
    model = fit_boosted(kind, task, X[:n], y[:n], seed, n_rounds=draw(st.integers(1, 6)),
                        depth=draw(st.integers(1, 4)))
    costs = FeatureCosts(rng.choice([0.0, 1.0, 2.0, 5.5], size=n_features))
    return model, X[:n], y[:n], X[n:], y[n:], costs, task


def preorder_ids(tree):
    """XGBoost node id -> the IR's local id (preorder from the root, left child first);
    -1 for nodes the root does not reach.  Written independently of the importer."""
    left, right = tree["left_children"], tree["right_children"]
    order, stack = [], [0]
    while stack:
        h = stack.pop()
        order.append(h)
        if left[h] != -1:
            stack += [right[h], left[h]]
    ids = np.full(len(left), -1)
    ids[order] = np.arange(len(order))
    return ids


def catboost_numbered(doc):
    """A copy of a hand-built CatBoost JSON document numbered as CatBoost writes one:
    each float feature lists the float32 borders its splits use, ascending, and each
    split names its border by ``split_index`` (its position among all features'
    borders), which is what CatBoost's loader reads."""
    doc = copy.deepcopy(doc)
    splits = [s for tree in doc.get("oblivious_trees", []) for s in tree["splits"] or []]
    stack = list(doc.get("trees", []))
    while stack:
        node = stack.pop()
        if "split" in node:
            splits.append(node["split"])
            stack += [node["left"], node["right"]]
    features = doc["features_info"]["float_features"]
    for k, f in enumerate(features):
        f["borders"] = sorted({float(np.float32(s["border"])) for s in splits
                               if s["float_feature_index"] == k})
    offsets = np.cumsum([0] + [len(f["borders"]) for f in features])
    for s in splits:
        k = s["float_feature_index"]
        s["split_index"] = int(offsets[k]) + features[k]["borders"].index(
            float(np.float32(s["border"])))
    return doc
