"""Read fitted scikit-learn tree ensembles into the Forest IR.

* Forests and single trees (``RandomForest*``, ``ExtraTrees*``, ``DecisionTree*``,
  ``ExtraTree*``): averaged; routing goes through the trees' own
  ``decision_path`` (float32 comparison, missing values as scikit-learn).
* ``GradientBoostingClassifier``/``Regressor``: additive; each stage's trees hold
  ``learning_rate`` times their values, the initial score is the ``init_``
  estimator's constant raw prediction.  Routing goes through the stage trees
  (scikit-learn refuses NaN for these models, and so does the IR).
* ``HistGradientBoostingClassifier``/``Regressor``: additive, routed by the IR in
  float64 with each node's ``missing_go_to_left``, as the library's predictor;
  categorical splits are refused.

An internal node's value is what it predicts once pruned to a leaf: for a
forest its class distribution (or mean), for a booster the value the library
recorded at that node (learning rate included) until pruning replaces it by the
rule of :mod:`prune_opt.program._boosted`.
"""

from __future__ import annotations

import numpy as np

from ..forest._ensemble import Ensemble
from ..forest._forest import NODE_STATS, Forest, detached_estimator

__all__ = ["from_sklearn_forest", "from_gradient_boosting", "from_hist_gradient_boosting",
           "is_sklearn_forest", "is_gradient_boosting", "is_hist_gradient_boosting"]

FORESTS = ("sklearn.ensemble.RandomForestClassifier, ExtraTreesClassifier, "
           "sklearn.tree.DecisionTreeClassifier, ExtraTreeClassifier and their single-output "
           "regressors")
BOOSTING = "sklearn.ensemble.GradientBoostingClassifier, GradientBoostingRegressor"
HIST_BOOSTING = ("sklearn.ensemble.HistGradientBoostingClassifier, "
                 "HistGradientBoostingRegressor (numeric features)")


def _check_fitted(estimator):
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(estimator)
    except NotFittedError as exc:
        raise NotFittedError(f"forest: this {type(estimator).__name__} is not fitted yet; "
                             "call fit(X, y) before pruning it") from exc


def _names(estimator):
    return getattr(estimator, "feature_names_in_", None)


# ---------------------------------------------------------------- forests and trees
def _forest_classes():
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        ExtraTreesRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    return ((RandomForestClassifier, ExtraTreesClassifier, RandomForestRegressor,
             ExtraTreesRegressor), (DecisionTreeClassifier, DecisionTreeRegressor))


def is_sklearn_forest(model):
    ensembles, trees = _forest_classes()
    return isinstance(model, (*ensembles, *trees))


def from_sklearn_forest(estimator):
    """A fitted scikit-learn forest or tree as an averaged :class:`~prune_opt.Forest`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import ExtraTreesClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> f = from_sklearn_forest(ExtraTreesClassifier(3, random_state=0).fit(X, y))
    >>> f.n_trees, f.ensemble.kind
    (3, 'averaged')
    """
    from sklearn.base import is_regressor

    ensembles, _ = _forest_classes()
    task = "regression" if is_regressor(estimator) else "classification"
    _check_fitted(estimator)
    if getattr(estimator, "n_outputs_", 1) != 1:
        kind_name = "classifier" if task == "classification" else "regressor"
        raise ValueError(f"forest: multi-output forests are not supported (this "
                         f"{type(estimator).__name__} has {estimator.n_outputs_} outputs); "
                         f"fit one {kind_name} per output (y[:, k]) and prune each")
    trees = estimator.estimators_ if isinstance(estimator, ensembles) else [estimator]
    arrays = []
    for tree in trees:
        tr = tree.tree_
        left = np.asarray(tr.children_left, dtype=np.int64)  # a view, not a copy
        arrays.append(dict(left=left, right=tr.children_right, feature=tr.feature,
                           threshold=tr.threshold, value=tr.value[:, 0, :],
                           missing_go_to_left=getattr(tr, "missing_go_to_left", None)))
    classes = estimator.classes_ if task == "classification" else None
    forest = Forest(arrays, classes=classes, n_features=estimator.n_features_in_,
                    feature_names=_names(estimator), estimator=detached_estimator(estimator),
                    task=task)
    forest.node_stats = _node_stats(trees)
    return forest


def _node_stats(trees):
    """scikit-learn's per-node training statistics of the trees, concatenated (what
    ``feature_importances_`` of an export is computed from)."""
    return {k: np.concatenate([np.asarray(getattr(t.tree_, k)) for t in trees])
            for k in NODE_STATS}


# ---------------------------------------------------------------- GradientBoosting
def is_gradient_boosting(model):
    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

    return isinstance(model, (GradientBoostingClassifier, GradientBoostingRegressor))


def _boosting_link(estimator):
    """The link of a fitted GradientBoosting or HistGradientBoosting model, refusing the
    losses whose expansion the IR does not price (only the squared error and the
    log-loss)."""
    from sklearn.base import is_regressor

    loss, name = estimator.loss, type(estimator).__name__
    if loss != ("squared_error" if is_regressor(estimator) else "log_loss"):
        raise ValueError(f"forest: {name}(loss={loss!r}) is not supported; prune-opt prunes "
                         "boosted models trained on loss='squared_error' (regression) or "
                         "'log_loss' (classification)")
    if is_regressor(estimator):
        return "identity"
    return "logistic" if estimator.n_trees_per_iteration_ == 1 else "softmax"


def _constant_init(estimator, link):
    """The raw score the ``init_`` estimator adds, which must not depend on X."""
    init = estimator.init_
    probe = np.zeros((2, estimator.n_features_in_), dtype=np.float32)
    probe[1] = 1.0
    if isinstance(init, str) and init == "zero":
        raw = np.zeros((1, estimator.n_trees_per_iteration_))
    else:
        from sklearn.dummy import DummyClassifier, DummyRegressor

        if not isinstance(init, (DummyClassifier, DummyRegressor)):
            raise ValueError(f"forest: {type(estimator).__name__} with init="
                             f"{type(init).__name__} is not supported: its initial score "
                             "depends on X; refit with the default init (or init='zero')")
        raw = np.asarray(estimator._raw_predict_init(probe), dtype=float)
        if not np.array_equal(raw[0], raw[1]):  # pragma: no cover - a Dummy is constant
            raise ValueError("forest: the initial score of this model depends on X")
    return raw[0]


def from_gradient_boosting(estimator):
    """A fitted ``GradientBoostingClassifier``/``Regressor`` as an additive Forest.

    Binary classifiers and regressors have one tree per stage (logistic or
    identity link), a K-class classifier K trees per stage (softmax), in the
    order ``estimators_[stage, k]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> gb = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    >>> f = from_gradient_boosting(gb)
    >>> f.ensemble.link, bool(np.allclose(f.predict_proba(X), gb.predict_proba(X), atol=1e-12))
    ('logistic', True)
    """
    _check_fitted(estimator)
    link = _boosting_link(estimator)
    K = estimator.n_trees_per_iteration_
    lr = float(estimator.learning_rate)
    arrays, tree_class = [], []
    for stage in estimator.estimators_:
        for k, tree in enumerate(stage):
            tr = tree.tree_
            value = np.zeros((tr.node_count, K if link == "softmax" else 1))
            value[:, k if link == "softmax" else 0] = lr * tr.value[:, 0, 0]
            arrays.append(dict(left=np.asarray(tr.children_left, dtype=np.int64),
                               right=tr.children_right, feature=tr.feature,
                               threshold=tr.threshold, value=value))
            tree_class.append(k)
    ensemble = Ensemble("additive", link, init_score=_constant_init(estimator, link),
                        tree_class=tree_class if link == "softmax" else None)
    classes = None if link == "identity" else estimator.classes_
    forest = Forest(arrays, classes=classes, n_features=estimator.n_features_in_,
                    feature_names=_names(estimator),
                    estimator=detached_estimator(estimator), ensemble=ensemble)
    forest.allow_nan = False  # scikit-learn refuses NaN for these models
    forest.node_stats = _node_stats([tree for stage in estimator.estimators_ for tree in stage])
    return forest


# ---------------------------------------------------------------- HistGradientBoosting
def is_hist_gradient_boosting(model):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    return isinstance(model, (HistGradientBoostingClassifier, HistGradientBoostingRegressor))


def from_hist_gradient_boosting(estimator):
    """A fitted ``HistGradientBoostingClassifier``/``Regressor`` as an additive Forest.

    The IR compares float64 feature values with each node's threshold and
    sends NaN where the node's ``missing_go_to_left`` says, as the library's
    predictor.  Categorical splits (``categorical_features``, or pandas
    categorical columns) are refused.  The trees' internal nodes carry the
    library's node values times the learning rate (leaves are stored shrunk).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> hgb = HistGradientBoostingRegressor(max_iter=5, random_state=0).fit(X, y)
    >>> f = from_hist_gradient_boosting(hgb)
    >>> f.split_dtype, bool(np.allclose(f.predict(X), hgb.predict(X), rtol=1e-12))
    ('float64', True)
    """
    _check_fitted(estimator)
    link = _boosting_link(estimator)
    if getattr(estimator, "_preprocessor", None) is not None or (
            getattr(estimator, "is_categorical_", None) is not None
            and np.any(estimator.is_categorical_)):
        raise ValueError(f"forest: this {type(estimator).__name__} has categorical features "
                         "(categorical_features, or pandas categorical columns); their "
                         "splits test sets of categories, which prune-opt does not route. "
                         "One-hot or ordinal-encode them as numbers and refit without "
                         "categorical_features")
    K = estimator.n_trees_per_iteration_
    lr = float(estimator.learning_rate)
    arrays, tree_class = [], []
    for predictors in estimator._predictors:
        for k, predictor in enumerate(predictors):
            nodes = predictor.nodes
            if nodes["is_categorical"].any():  # pragma: no cover - refused above
                raise ValueError("forest: categorical splits are not supported")
            leaf = nodes["is_leaf"].astype(bool)
            value = np.zeros((nodes.size, K if link == "softmax" else 1))
            # leaves are stored shrunk; internal nodes hold the unshrunk Newton value
            value[:, k if link == "softmax" else 0] = np.where(
                leaf, nodes["value"], lr * nodes["value"])
            arrays.append(dict(
                left=np.where(leaf, -1, nodes["left"].astype(np.int64)),
                right=np.where(leaf, -1, nodes["right"].astype(np.int64)),
                feature=np.where(leaf, -1, nodes["feature_idx"].astype(np.int64)),
                threshold=np.where(leaf, -2.0, nodes["num_threshold"]),
                value=value, missing_go_to_left=nodes["missing_go_to_left"]))
            tree_class.append(k)
    baseline = np.asarray(estimator._baseline_prediction, dtype=float).ravel()
    ensemble = Ensemble("additive", link, init_score=baseline,
                        tree_class=tree_class if link == "softmax" else None)
    classes = None if link == "identity" else estimator.classes_
    return Forest.from_arrays(arrays, classes=classes, n_features=estimator.n_features_in_,
                              feature_names=_names(estimator), ensemble=ensemble,
                              split_dtype="float64", source=type(estimator).__name__)
