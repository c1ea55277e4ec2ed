"""Read LightGBM models into the Forest IR, routing exactly as LightGBM does.

The trees come from one parser of the model text and are routed by
LightGBM's own rule (:mod:`._lightgbm_trees`, which also says how each split's
threshold and missing type become the IR's float64 ``x <= T`` and NaN
direction: every ``None`` and ``NaN`` split exactly, a ``Zero`` split whenever
one threshold expresses it, else it is refused naming ``zero_as_missing``).

* :func:`from_lightgbm` reads a boosted model (gbdt, goss, dart) as an
  additive forest.  A leaf's value is LightGBM's ``leaf_value`` (learning rate
  and ``boost_from_average`` already folded in, so the initial score is 0), an
  internal node's its ``internal_value`` (what it predicts once pruned).  A
  binary model's ``sigmoid`` parameter is folded into the values, so
  ``predict_proba`` matches LightGBM's and ``decision_function`` is
  ``sigmoid`` times LightGBM's raw score.  Multiclass models store one tree
  per class per iteration, class by class.  Models that predict otherwise are
  refused with the reason: random forests (``average_output``), linear trees,
  categorical splits, and objectives other than ``regression`` (L2),
  ``binary`` and ``multiclass``.
* :func:`forest_from_lightgbm` reads a random forest (``boosting_type="rf"``)
  as an averaged forest whose nodes hold the training rows' class frequencies.
* :func:`lightgbm_feature_usage` / :func:`lightgbm_acquisition_cost` price any
  LightGBM model's predictions (any missing type) as prune-opt prices a forest.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..forest._costs import as_feature_costs
from ..forest._ensemble import Ensemble
from ..forest._forest import Forest
from ..forest._node_stats import training_node_stats
from ._lightgbm_text import MAX_MODEL_BYTES
from ._lightgbm_trees import (
    BELOW_ZERO_BAND,
    ZERO_BAND,
    check_matrix,
    fitted_booster,
    ir_splits,
    is_lightgbm_model,
    lightgbm_classes,
    lightgbm_leaves,
    lightgbm_trees,
    model_feature_names,
    preorder_tree,
    read_lightgbm,
    refuse_unroutable,
    route_tree,
)

__all__ = ["from_lightgbm", "forest_from_lightgbm", "lightgbm_trees", "lightgbm_feature_usage",
           "lightgbm_acquisition_cost", "lightgbm_leaves", "is_lightgbm_model", "SUPPORTED",
           "ZERO_BAND", "BELOW_ZERO_BAND"]

SUPPORTED = ("lightgbm.LGBMClassifier, LGBMRegressor and Booster (gbdt, goss, dart; "
             "objectives regression, binary, multiclass)")
#: objectives read, and the link their raw scores take
LINKS = {"regression": "identity", "binary": "logistic", "multiclass": "softmax"}
_ADVICE = {
    "multiclassova": "refit with objective='multiclass' (softmax)",
    "cross_entropy": "for 0/1 labels refit with objective='binary'",
    "cross_entropy_lambda": "for 0/1 labels refit with objective='binary'",
    "lambdarank": "ranking models are not supported",
    "rank_xendcg": "ranking models are not supported",
}


# ---------------------------------------------------------------- the boosted importer
def _link(parsed, estimator):
    """The IR link of the model's objective, its classes and its sigmoid, refusing
    objectives whose predictions the IR cannot reproduce."""
    if parsed.average_output or parsed.parameters.get("boosting") == "rf":
        raise ValueError("LightGBM model: this is a random forest (boosting='rf', "
                         "average_output): its trees' outputs are averaged, not boosted. "
                         "Import it with prune_opt.importers.forest_from_lightgbm(model, "
                         "X_train, y_train), which keeps the training rows' class "
                         "frequencies at every node")
    if parsed.objective is None:
        raise ValueError("LightGBM model: the model has no objective (trained with a custom "
                         "objective function), so its raw scores have no known link; "
                         "prune-opt reads objectives 'regression', 'binary' and "
                         "'multiclass'")
    name, *options = parsed.objective.split(" ")
    values = dict(opt.split(":", 1) for opt in options if ":" in opt)
    if name not in LINKS:
        advice = _ADVICE.get(name, "refit with objective='regression' (squared error)")
        raise ValueError(f"LightGBM model: objective {name!r} is not supported; prune-opt "
                         "reads LightGBM models trained with objective 'regression' (squared "
                         "error), 'binary' or 'multiclass' (softmax), the losses its boosted "
                         f"pruning expands: {advice}")
    if name == "regression" and "sqrt" in options:
        raise ValueError("LightGBM model: objective 'regression' with reg_sqrt=True predicts "
                         "the square of its raw score; refit with reg_sqrt=False")
    link, K = LINKS[name], parsed.num_tree_per_iteration
    kinds = lightgbm_classes(estimator) if estimator is not None else set()
    if ("LGBMClassifier" in kinds and link == "identity") or (
            "LGBMRegressor" in kinds and link != "identity"):
        raise ValueError(f"LightGBM model: a {type(estimator).__name__} trained with objective "
                         f"{name!r}; use LGBMRegressor for 'regression' and LGBMClassifier for "
                         "'binary' or 'multiclass'")
    if link == "softmax":
        k = values.get("num_class", "")
        if not k.isdigit() or int(k) != parsed.num_class or K != parsed.num_class or K < 2:
            raise ValueError(f"LightGBM model text: objective {parsed.objective!r} disagrees "
                             f"with num_class={parsed.num_class}, num_tree_per_iteration={K}")
    elif parsed.num_class != 1 or K != 1:
        raise ValueError(f"LightGBM model text: objective {name!r} needs num_class=1 and "
                         f"num_tree_per_iteration=1, got {parsed.num_class} and {K}")
    sigmoid = 1.0
    if link == "logistic":
        try:
            sigmoid = float(values.get("sigmoid", ""))
        except ValueError:
            sigmoid = np.nan
        if not (np.isfinite(sigmoid) and sigmoid > 0):
            raise ValueError(f"LightGBM model text: objective {parsed.objective!r} needs a "
                             "positive sigmoid:<value>")
    if link == "identity":
        classes = None
    elif estimator is not None and getattr(estimator, "classes_", None) is not None:
        classes = np.asarray(estimator.classes_)
    else:
        classes = np.arange(max(2, K))
    return link, classes, sigmoid


def from_lightgbm(model, *, num_iteration=None, max_bytes=MAX_MODEL_BYTES):
    """A LightGBM model as an additive :class:`~prune_opt.Forest` that routes and
    predicts exactly as LightGBM.

    Parameters
    ----------
    model : LGBMClassifier, LGBMRegressor, Booster, str, bytes or path
        A fitted model (gbdt, goss or dart; also trained with ``cegb_*``
        penalties), its model text (``Booster.model_to_string()``) or the path
        of a file written by ``save_model``.  Text and files are parsed, never
        executed.
    num_iteration : int, optional
        None (default): the trees ``model.predict(X)`` uses, i.e. up to the
        best iteration when early stopping recorded one (a text or file holds
        no best iteration: all its trees).  ``k > 0``: the first ``k``
        iterations; ``<= 0``: all.
    max_bytes : int or None, default 512 MiB
        Refuse a longer model text (None: no limit).

    Returns
    -------
    Forest
        Additive, ``split_dtype="float64"``; link ``"identity"`` (objective
        ``regression``), ``"logistic"`` (``binary``; the ``sigmoid`` parameter
        folded into the values) or ``"softmax"`` (``multiclass``); classes an
        estimator's ``classes_``, else ``0 .. K-1``; ``feature_names`` None for
        LightGBM's automatic ``Column_<k>`` names.

    Raises
    ------
    ValueError
        For a model the IR cannot reproduce exactly (random forests,
        categorical splits, linear trees, a ``zero_as_missing`` split no
        threshold expresses, other objectives), each naming what is supported,
        and for a malformed, truncated or oversized model text.

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> from sklearn.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = lgb.LGBMClassifier(n_estimators=5, num_leaves=4, verbose=-1).fit(X, y)
    >>> forest = from_lightgbm(model)
    >>> forest.ensemble.link, forest.split_dtype
    ('logistic', 'float64')
    >>> bool(np.allclose(forest.predict_proba(X), model.predict_proba(X), rtol=0, atol=1e-12))
    True
    >>> same = from_lightgbm(model.booster_.model_to_string())   # the text reads the same
    >>> bool((same.decision_function(X) == forest.decision_function(X)).all())
    True
    """
    parsed, source, estimator = read_lightgbm(model, num_iteration=num_iteration,
                                              max_bytes=max_bytes)
    link, classes, sigmoid = _link(parsed, estimator)
    refuse_unroutable(parsed)
    K = parsed.num_tree_per_iteration
    arrays = []
    for t, raw in enumerate(parsed.trees):  # one tree at a time
        tree = preorder_tree(raw, t)
        threshold, missing_left = ir_splits(tree, t)
        value = np.zeros((tree["value"].size, K if link == "softmax" else 1))
        value[:, t % K if link == "softmax" else 0] = tree["value"] * sigmoid
        arrays.append(dict(left=tree["left"], right=tree["right"], feature=tree["feature"],
                           threshold=threshold, value=value, missing_go_to_left=missing_left))
    n_trees = len(arrays)
    ensemble = Ensemble("additive", link, tree_class=(
        np.arange(n_trees) % K if link == "softmax" else None))
    return Forest(arrays, classes=classes, n_features=parsed.n_features,
                  feature_names=model_feature_names(parsed), ensemble=ensemble,
                  task="regression" if link == "identity" else "classification",
                  split_dtype="float64", source=source)


# ---------------------------------------------------------------- cost accounting
def lightgbm_feature_usage(model, X):
    """Which features each example reaches on its paths through all trees.

    Routed by LightGBM's own rule (any missing type, ``zero_as_missing``
    included), boosted or random-forest models alike.

    Parameters
    ----------
    model : LGBMClassifier, LGBMRegressor, Booster, model text or path
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
    return _usage(read_lightgbm(model)[0], X)


def _usage(parsed, X):
    refuse_unroutable(parsed)
    X = check_matrix(X, parsed.n_features)
    rows_all, features_all = [], []
    for t, raw in enumerate(parsed.trees):  # loop over trees only
        tree = preorder_tree(raw, t)
        rows, nodes, _ = route_tree(tree, X)
        inner = tree["feature"][nodes] >= 0
        rows_all.append(rows[inner])
        features_all.append(tree["feature"][nodes[inner]])
    rows, features = np.concatenate(rows_all), np.concatenate(features_all)
    used = sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, features)),
                         shape=(X.shape[0], parsed.n_features))
    used.sum_duplicates()
    return used.astype(bool)


def lightgbm_acquisition_cost(model, X, costs=None):
    """Per-example acquisition cost of a LightGBM model's predictions.

    Every unit of :class:`prune_opt.FeatureCosts` is paid once per example,
    as for a pruned forest (:meth:`prune_opt.PrunedForest.acquisition_cost`).

    Parameters
    ----------
    model : LGBMClassifier, LGBMRegressor, Booster, model text or path
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
    parsed = read_lightgbm(model)[0]
    fc = as_feature_costs(costs, parsed.n_features, model_feature_names(parsed))
    return fc.cost_of_usage(_usage(parsed, X))


# ---------------------------------------------------------------- random forests
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


def _class_frequencies(tree, X, codes, C):
    """Per node, the class frequencies of the training rows reaching it; a node no row
    reaches copies its parent's (uniform at an unreached root)."""
    n = tree["left"].size
    rows, nodes, _ = route_tree(tree, X)
    value = np.bincount(nodes * C + codes[rows], minlength=n * C).reshape(n, C).astype(float)
    parent = np.full(n, -1, dtype=np.int64)
    inner = tree["left"] >= 0
    parent[tree["left"][inner]] = np.flatnonzero(inner)
    parent[tree["right"][inner]] = np.flatnonzero(inner)
    empty = value.sum(axis=1) == 0
    if empty[0]:
        value[0], empty[0] = 1.0, False
    while empty.any():  # one pass per level: copy the parent's distribution
        ready = empty & ~empty[np.maximum(parent, 0)]
        value[ready] = value[parent[ready]] / value[parent[ready]].sum(axis=1, keepdims=True)
        empty &= ~ready
    return value


def forest_from_lightgbm(model, X_train, y_train, *, classes=None, feature_names=None,
                         check=True):
    """A LightGBM random forest as an averaged :class:`prune_opt.Forest`.

    Each LightGBM tree becomes one tree of the Forest with the same splits,
    routed exactly as LightGBM routes (float64, its missing types; see
    :mod:`prune_opt.importers`).  LightGBM keeps no class distribution at
    internal nodes (its leaves hold raw scores), so the class distribution of
    every node is the class frequency of the training rows reaching it; a
    node reached by no training row copies its parent's.  LightGBM does not
    expose which rows each bagged tree saw, so all training rows are used
    (``Forest.in_bag`` is None).

    Parameters
    ----------
    model : LGBMClassifier, Booster, model text or path
        Typically fitted with ``boosting_type="rf"`` (bagging); boosted models
        convert too, but their trees are not meant to be averaged (read those
        with :func:`from_lightgbm`).
    X_train, y_train : array-like
        The rows that fill the node class distributions (the training data).
    classes : array-like, optional
        Class labels (default: the estimator's ``classes_``, else ``unique(y_train)``).
    feature_names : sequence of str, optional
        Default: the model's, unless they are LightGBM's automatic ``Column_<k>``.
    check : bool, default True
        For an in-memory model, compare every training row's leaf in every tree
        with LightGBM's ``predict(pred_leaf=True)`` and raise on any difference.

    Returns
    -------
    Forest
        With attribute ``lightgbm_leaf_index`` (per tree, LightGBM's leaf
        number of each local node, -1 at internal nodes).

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = lgb.LGBMClassifier(boosting_type="rf", n_estimators=5, subsample=0.7,
    ...                         subsample_freq=1, num_leaves=8, verbose=-1).fit(X, y)
    >>> forest = forest_from_lightgbm(rf, X, y)
    >>> forest.n_trees, forest.split_dtype   # one tree per class per iteration
    (15, 'float64')
    """
    parsed, _, estimator = read_lightgbm(model)
    refuse_unroutable(parsed)
    X = check_matrix(X_train, parsed.n_features, "X_train")
    classes, codes = _classes_and_codes(estimator, y_train, classes)
    if codes.size != X.shape[0]:
        raise ValueError(f"y_train has {codes.size} labels for {X.shape[0]} rows of X_train")
    if feature_names is None:
        feature_names = model_feature_names(parsed)
    out, leaf_maps = [], []
    for t, raw in enumerate(parsed.trees):  # loop over trees only
        tree = preorder_tree(raw, t)
        threshold, missing_left = ir_splits(tree, t)
        out.append(dict(left=tree["left"], right=tree["right"], feature=tree["feature"],
                        threshold=threshold, missing_go_to_left=missing_left,
                        value=_class_frequencies(tree, X, codes, classes.size)))
        leaf_maps.append(tree["leaf_index"])
    forest = Forest(out, classes=classes, n_features=parsed.n_features,
                    feature_names=feature_names, split_dtype="float64")
    forest.lightgbm_leaf_index = leaf_maps
    # what to_sklearn()'s feature_importances_ need (LightGBM keeps gains, not impurities)
    forest.node_stats = training_node_stats(forest, X, classes[codes])
    if check and is_lightgbm_model(model):
        booster = model if estimator is None else fitted_booster(model)
        theirs = np.asarray(booster.predict(X, pred_leaf=True)).reshape(X.shape[0], -1)
        ours = np.column_stack([leaf_maps[t][forest.apply_tree(X, t)]
                                for t in range(forest.n_trees)])
        bad = int((ours != theirs).sum())
        if bad:
            raise RuntimeError(f"{bad} of {ours.size} (row, tree) leaves differ from "
                               "LightGBM's predict(pred_leaf=True); the import does not route "
                               "as this LightGBM version does (please report it)")
    return forest
