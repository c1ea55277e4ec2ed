"""Read fitted LightGBM models into prune-opt: per-example feature usage and the Forest IR.

Two uses:

* **Acquisition-cost accounting** for any LightGBM model (boosted or random
  forest): :func:`lightgbm_feature_usage` routes examples through every dumped
  tree with LightGBM's own decision rule (float64 comparison, ``missing_type``
  and ``default_left`` honoured) and returns which features each example
  reaches; :func:`lightgbm_acquisition_cost` prices that usage with a
  :class:`prune_opt.FeatureCosts`, exactly like prune-opt prices a forest.
* **Pruning a LightGBM random forest** (``boosting_type="rf"``):
  :func:`forest_from_lightgbm` converts its trees into a :class:`prune_opt.Forest`.

LightGBM keeps no class distribution at internal nodes (and its leaves hold a
raw score, not a distribution), so :func:`forest_from_lightgbm` routes the
training data through every tree and stores, at every node, the class
frequencies of the training examples that reach it.  A node no training
example reaches inherits its parent's distribution.  LightGBM does not expose
which rows each bagged tree saw, so all training rows are used
(``Forest.in_bag`` is None); for the same reason ``prune_opt.prune(...,
train=...)`` refuses the imported forest (errors are then counted on the
``X, y`` given to it).

Float caveat: LightGBM compares ``x <= threshold`` in float64, the Forest IR
compares ``float32(x) <= threshold``.  Both agree on every value that is
exactly representable in float32 (thresholds are kept in float64), so feed the
model float32-representable data (``X.astype(np.float32)``) when exact leaf
agreement matters; :func:`forest_from_lightgbm` checks the agreement on the
training data and warns about any mismatching leaf.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from prune_opt import Forest, as_feature_costs, training_node_stats

from ._base import preorder

__all__ = [
    "LIGHTGBM_HINT",
    "forest_from_lightgbm",
    "import_lightgbm",
    "lightgbm_acquisition_cost",
    "lightgbm_feature_usage",
    "lightgbm_trees",
]

LIGHTGBM_HINT = "pip install prune-opt[lightgbm]"

# LightGBM's kZeroThreshold: |x| <= 1e-35 counts as zero for missing_type "Zero"
_ZERO = 1e-35
_MISSING = {"None": 0, "Zero": 1, "NaN": 2}


def import_lightgbm():
    """Import lightgbm lazily, with an install hint when it is missing.

    Returns
    -------
    module

    Examples
    --------
    >>> lgb = import_lightgbm()
    >>> hasattr(lgb, "LGBMClassifier")
    True
    """
    try:
        import lightgbm
    except ImportError:
        raise ImportError(
            f"this estimator needs the optional dependency lightgbm; install it with "
            f"`{LIGHTGBM_HINT}`"
        ) from None
    return lightgbm


def _dump(model):
    """The ``dump_model()`` dict of a Booster, an LGBM estimator or a dump itself."""
    if isinstance(model, dict):
        if "tree_info" not in model:
            raise ValueError("model: a dict must be a LightGBM dump_model() result "
                             "(it has no 'tree_info')")
        return model
    booster = getattr(model, "booster_", None)
    if booster is None and hasattr(model, "dump_model"):
        booster = model
    if booster is None:
        raise TypeError(
            f"model: expected a fitted lightgbm Booster, LGBMClassifier or a dump_model() "
            f"dict, got {type(model).__name__}"
        )
    return booster.dump_model()


def lightgbm_trees(model):
    """Flatten every tree of a LightGBM model into preorder node arrays.

    Parameters
    ----------
    model : lightgbm.Booster, lightgbm.LGBMModel or dict
        A fitted model or its ``dump_model()`` dict.

    Returns
    -------
    list of dict
        Per tree: ``left``, ``right`` (local ids, -1 at leaves), ``feature``
        (-1 at leaves), ``threshold`` (float64), ``default_left`` (bool),
        ``missing_type`` (0 None, 1 Zero, 2 NaN), ``leaf_index`` (LightGBM's
        leaf number, -1 at internal nodes) and ``leaf_value``.  Node ids are in
        preorder, so parents precede children.

    Raises
    ------
    ValueError
        On categorical splits or linear trees, which the IR cannot express.

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> X = np.arange(40, dtype=float).reshape(-1, 1); y = (X[:, 0] > 19).astype(int)
    >>> m = lgb.LGBMClassifier(n_estimators=1, num_leaves=2, min_child_samples=5,
    ...                        verbose=-1).fit(X, y)
    >>> t = lightgbm_trees(m)[0]
    >>> t["left"].tolist(), t["feature"].tolist()
    ([1, -1, -1], [0, -1, -1])
    """
    dump = _dump(model)
    trees = []
    for info in dump["tree_info"]:
        if info.get("num_cat", 0):
            raise ValueError(
                f"tree {info.get('tree_index')}: categorical splits are not supported; "
                "encode categorical columns as numbers and fit without categorical_feature"
            )
        if info.get("is_linear"):
            raise ValueError("linear trees (linear_tree=True) are not supported; refit without")

        def children(node, info=info):
            if "split_index" not in node:
                return None
            if node.get("decision_type", "<=") != "<=":
                raise ValueError(
                    f"tree {info.get('tree_index')}: decision type "
                    f"{node.get('decision_type')!r} (categorical split) is not supported; "
                    "encode categorical columns as numbers"
                )
            return node["left_child"], node["right_child"]

        nodes, left, right = preorder(info["tree_structure"], children)
        n = len(nodes)
        feature = np.full(n, -1, dtype=np.int64)
        threshold = np.zeros(n)
        default_left = np.zeros(n, dtype=bool)
        missing = np.zeros(n, dtype=np.int8)
        leaf_index = np.full(n, -1, dtype=np.int64)
        leaf_value = np.zeros(n)
        for h, node in enumerate(nodes):
            if "split_index" in node:
                feature[h] = node["split_feature"]
                threshold[h] = float(node["threshold"])
                default_left[h] = bool(node.get("default_left", True))
                missing[h] = _MISSING[str(node.get("missing_type", "None"))]
            else:
                leaf_index[h] = node.get("leaf_index", 0)
                leaf_value[h] = node.get("leaf_value", 0.0)
        trees.append(dict(left=left, right=right, feature=feature, threshold=threshold,
                          default_left=default_left, missing_type=missing,
                          leaf_index=leaf_index, leaf_value=leaf_value))
    return trees


def _route(tree, X):
    """Visited nodes of one tree: (rows, nodes) pairs and the final node per example.

    Implements LightGBM's ``NumericalDecision`` vectorised over examples, one
    numpy step per level.
    """
    n = X.shape[0]
    node = np.zeros(n, dtype=np.int64)
    rows, nodes = [np.arange(n)], [node.copy()]
    left, right, feat = tree["left"], tree["right"], tree["feature"]
    active = np.flatnonzero(left[node] >= 0)
    while active.size:
        h = node[active]
        xv = X[active, feat[h]]
        mt = tree["missing_type"][h]
        isnan = np.isnan(xv)
        xv = np.where(isnan & (mt != 2), 0.0, xv)
        default = ((mt == 1) & (np.abs(xv) <= _ZERO)) | ((mt == 2) & isnan)
        go_left = np.where(default, tree["default_left"][h], xv <= tree["threshold"][h])
        node[active] = np.where(go_left, left[h], right[h])
        rows.append(active)
        nodes.append(node[active])
        active = active[left[node[active]] >= 0]
    return np.concatenate(rows), np.concatenate(nodes), node


def _check_matrix(X, n_features, name="X"):
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric; encode categorical columns first") from None
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {X.shape}; reshape a single "
                         "example with X.reshape(1, -1)")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, the model was fitted on "
                         f"{n_features}; pass the same columns")
    return X


def _n_features(dump):
    return int(dump["max_feature_idx"]) + 1


def _feature_names(dump):
    """The model's feature names, or None for LightGBM's automatic ``Column_<k>``."""
    names = dump.get("feature_names")
    auto = [f"Column_{k}" for k in range(_n_features(dump))]
    return None if names is None or list(names) == auto else [str(n) for n in names]


def lightgbm_feature_usage(model, X):
    """Which features each example reaches on its paths through all trees.

    Parameters
    ----------
    model : lightgbm.Booster, lightgbm.LGBMModel or dict
    X : array-like of shape (n_examples, n_features)

    Returns
    -------
    scipy.sparse.csr_matrix of bool, shape (n_examples, n_features)

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> X = np.c_[np.arange(40.0), np.zeros(40)]; y = (X[:, 0] > 19).astype(int)
    >>> m = lgb.LGBMClassifier(n_estimators=2, num_leaves=2, min_child_samples=5,
    ...                        verbose=-1).fit(X, y)
    >>> lightgbm_feature_usage(m, X[:2]).toarray()
    array([[ True, False],
           [ True, False]])
    """
    dump = _dump(model)
    n_features = _n_features(dump)
    X = _check_matrix(X, n_features)
    used = sp.csr_matrix((X.shape[0], n_features), dtype=bool)
    for tree in lightgbm_trees(dump):  # loop over trees only
        rows, nodes, _ = _route(tree, X)
        keep = tree["feature"][nodes] >= 0
        used = used + sp.csr_matrix(
            (np.ones(int(keep.sum()), dtype=bool), (rows[keep], tree["feature"][nodes[keep]])),
            shape=used.shape)
    return used.astype(bool)


def lightgbm_acquisition_cost(model, X, costs=None):
    """Per-example acquisition cost of a LightGBM model's predictions.

    Every unit of :class:`prune_opt.FeatureCosts` is paid once per example,
    as for a pruned forest (:meth:`prune_opt.PrunedForest.acquisition_cost`).

    Parameters
    ----------
    model : lightgbm.Booster, lightgbm.LGBMModel or dict
    X : array-like of shape (n_examples, n_features)
    costs : FeatureCosts, array-like or mapping, optional
        Uniform unit costs when omitted.

    Returns
    -------
    ndarray of shape (n_examples,)

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> X = np.c_[np.arange(40.0), np.zeros(40)]; y = (X[:, 0] > 19).astype(int)
    >>> m = lgb.LGBMClassifier(n_estimators=2, num_leaves=2, min_child_samples=5,
    ...                        verbose=-1).fit(X, y)
    >>> lightgbm_acquisition_cost(m, X[:2], costs=[3.0, 7.0])
    array([3., 3.])
    """
    dump = _dump(model)
    fc = as_feature_costs(costs, _n_features(dump), _feature_names(dump))
    return fc.cost_of_usage(lightgbm_feature_usage(dump, X))


def _classes_and_codes(model, y, classes):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y_train must be 1-D, got shape {y.shape}")
    if classes is None:
        classes = getattr(model, "classes_", None)
    classes = np.unique(y) if classes is None else np.asarray(classes)
    pos = np.clip(np.searchsorted(classes, y), 0, classes.size - 1)
    if not np.all(classes[pos] == y):
        raise ValueError(f"y_train has labels outside the model's classes {classes.tolist()}")
    return classes, pos


def forest_from_lightgbm(model, X_train, y_train, *, classes=None, feature_names=None,
                         check=True):
    """Convert a fitted LightGBM random forest into a :class:`prune_opt.Forest`.

    Each LightGBM tree becomes one tree of the Forest with the same splits;
    the class distribution of every node is the class frequency of the
    training examples reaching it (LightGBM stores raw scores only).  A node
    reached by no training example copies its parent's distribution.

    Parameters
    ----------
    model : lightgbm.Booster, lightgbm.LGBMClassifier or dict
        Typically fitted with ``boosting_type="rf"`` (bagging); boosted models
        convert too, but their trees are not meant to be averaged.
    X_train, y_train : array-like
        Data used to fill node class distributions (the model's training data).
    classes : array-like, optional
        Class labels (default: the estimator's ``classes_``, else ``unique(y_train)``).
    feature_names : sequence of str, optional
        Default: the model's feature names when they are not LightGBM's
        automatic ``Column_<k>``.
    check : bool, default True
        Compare the Forest's leaf of every training example in every tree
        with LightGBM's ``predict(pred_leaf=True)`` and warn on mismatches
        (they come from float64 values not representable in float32).

    Returns
    -------
    Forest
        With attribute ``lightgbm_leaf_index`` (list of arrays: LightGBM leaf
        number of each local node, -1 at internal nodes).

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True); X = X.astype(np.float32)
    >>> rf = lgb.LGBMClassifier(boosting_type="rf", n_estimators=5, subsample=0.7,
    ...                         subsample_freq=1, num_leaves=8, verbose=-1).fit(X, y)
    >>> forest = forest_from_lightgbm(rf, X, y)
    >>> forest.n_trees   # one tree per class per iteration
    15
    """
    dump = _dump(model)
    n_features = _n_features(dump)
    X = _check_matrix(X_train, n_features, "X_train")
    classes, codes = _classes_and_codes(model, y_train, classes)
    if codes.size != X.shape[0]:
        raise ValueError(f"y_train has {codes.size} labels for {X.shape[0]} rows of X_train")
    if feature_names is None:
        feature_names = _feature_names(dump)
    C = classes.size
    out, leaf_maps = [], []
    for tree in lightgbm_trees(dump):  # loop over trees only
        n = tree["left"].size
        rows, nodes, _ = _route(tree, X)
        value = np.bincount(nodes * C + codes[rows], minlength=n * C).reshape(n, C).astype(float)
        parent = np.full(n, -1, dtype=np.int64)
        internal = tree["left"] >= 0
        parent[tree["left"][internal]] = np.flatnonzero(internal)
        parent[tree["right"][internal]] = np.flatnonzero(internal)
        empty = value.sum(axis=1) == 0
        if empty[0]:
            value[0] = 1.0  # no training data at all: uniform
            empty[0] = False
        while empty.any():  # one pass per level: copy the parent's distribution
            ready = empty & ~empty[np.maximum(parent, 0)]
            value[ready] = value[parent[ready]] / value[parent[ready]].sum(axis=1,
                                                                            keepdims=True)
            empty &= ~ready
        # missing values: LightGBM's rule where the IR can express it
        mt = tree["missing_type"]
        if (internal & (mt == 1)).any():
            raise ValueError(
                "model has splits with missing_type 'Zero' (zero_as_missing=True), which the "
                "Forest IR cannot route; refit with zero_as_missing=False"
            )
        # missing_type None: NaN is treated as 0.0; NaN: the default direction
        miss_left = np.where(mt == 2, tree["default_left"], 0.0 <= tree["threshold"])
        out.append(dict(left=tree["left"], right=tree["right"], feature=tree["feature"],
                        threshold=tree["threshold"], value=value,
                        missing_go_to_left=np.where(internal, miss_left, False)))
        leaf_maps.append(tree["leaf_index"])
    forest = Forest(out, classes=classes, n_features=n_features, feature_names=feature_names)
    forest.lightgbm_leaf_index = leaf_maps
    # what to_sklearn()'s feature_importances_ need (LightGBM keeps gains, not impurities)
    forest.node_stats = training_node_stats(forest, X, classes[codes])
    if check and hasattr(model, "predict") and not isinstance(model, dict):
        booster = getattr(model, "booster_", model)
        lgb_leaves = np.asarray(booster.predict(X, pred_leaf=True)).reshape(X.shape[0], -1)
        ours = np.column_stack([leaf_maps[t][forest.apply_tree(X, t)]
                                for t in range(forest.n_trees)])
        bad = int((ours != lgb_leaves).sum())
        if bad:
            warnings.warn(
                f"{bad} of {ours.size} (example, tree) leaf assignments differ from "
                "LightGBM's: the Forest routes float32(x) while LightGBM compares float64; "
                "fit and predict on float32-representable data (X.astype(np.float32))",
                RuntimeWarning, stacklevel=2)
    return forest
