"""Build real fitted sklearn estimators from (pruned) tree arrays.

Reads a :class:`~prune_opt.PrunedForest`'s fields without importing it; every
estimator returned is a new object (a deep copy of the source's parameters
with freshly built trees), independent of the source and of the pruned forest.
"""

from __future__ import annotations

import copy

import numpy as np

from ..forest._sources import source_classes
from ._library import exporter_of

__all__ = ["pruned_to_sklearn", "build_sklearn_tree"]


def build_sklearn_tree(arrays, n_features, n_classes, template=None, stats=None):
    """A ``sklearn.tree._tree.Tree`` holding the given nodes.

    ``arrays`` has ``left``, ``right``, ``feature``, ``threshold``, ``value``
    (normalised class distributions, or one mean per node for a regression
    tree, built with ``n_classes=1``) and ``missing_go_to_left``; when
    ``template`` (an original Tree) and ``arrays["old_ids"]`` are given, node
    statistics (impurity, sample counts) are carried over, else they are taken
    from ``stats`` (the tree's ``Forest.node_stats``, indexed by
    ``arrays["old_ids"]``) when given: ``feature_importances_`` need them.
    """
    from sklearn.tree._tree import NODE_DTYPE, Tree

    n = len(arrays["left"])
    nodes = np.zeros(n, dtype=NODE_DTYPE)
    nodes["left_child"] = arrays["left"]
    nodes["right_child"] = arrays["right"]
    nodes["feature"] = arrays["feature"]
    nodes["threshold"] = arrays["threshold"]
    if "missing_go_to_left" in NODE_DTYPE.names:
        nodes["missing_go_to_left"] = arrays["missing_go_to_left"]
    if template is not None and "old_ids" in arrays:
        state = template.__getstate__()["nodes"][arrays["old_ids"]]
        for key in ("impurity", "n_node_samples", "weighted_n_node_samples"):
            nodes[key] = state[key]
    elif stats is not None and "old_ids" in arrays:
        for key in ("impurity", "n_node_samples", "weighted_n_node_samples"):
            nodes[key] = np.asarray(stats[key])[arrays["old_ids"]]
    else:
        nodes["n_node_samples"] = 1
        nodes["weighted_n_node_samples"] = 1.0
    # depth of the kept nodes (parents precede children)
    depth = np.zeros(n, dtype=np.int64)
    for h in range(n):
        if arrays["left"][h] >= 0:
            depth[arrays["left"][h]] = depth[arrays["right"][h]] = depth[h] + 1
    tree = Tree(int(n_features), np.array([n_classes], dtype=np.intp), 1)
    values = np.ascontiguousarray(np.asarray(arrays["value"], dtype=np.float64)[:, None, :])
    tree.__setstate__({"max_depth": int(depth.max()), "node_count": n, "nodes": nodes,
                       "values": values})
    return tree


def _sklearn_class(name, task, single):
    """The sklearn estimator class called ``name`` (one of the supported eight), else the
    default of the task: a decision tree (``single``) or a random forest."""
    from sklearn import ensemble, tree

    supported = source_classes(library="sklearn", kind="averaged", task=task,
                               single_tree=single)
    if name not in supported:
        name = ("DecisionTree" if single else "RandomForest") + (
            "Regressor" if task == "regression" else "Classifier")
    return getattr(tree if single else ensemble, name)


def _fresh_tree_estimator(forest, tree, name=None):
    regression = forest.task == "regression"
    est = _sklearn_class(name, forest.task, single=True)()
    est.tree_ = tree
    est.n_features_in_ = forest.n_features
    est.n_outputs_ = 1
    if not regression:
        est.n_classes_ = forest.n_classes
        est.classes_ = np.arange(forest.n_classes)
    est.max_features_ = forest.n_features
    return est


#: single-tree estimator classes rebuilt as such (else a random forest of the task)
SINGLE_TREES = source_classes(library="sklearn", single_tree=True)
#: boosted models scikit-learn can rebuild from trees (HistGradientBoosting* cannot)
BOOSTING = source_classes(library="sklearn", kind="additive", exporter="to_sklearn()")


def pruned_to_sklearn(pruned):
    """See :meth:`prune_opt.PrunedForest.to_sklearn`."""
    f = pruned.forest
    if f.is_additive:
        return _boosting_to_sklearn(pruned)
    src = f.estimator
    width = 1 if f.task == "regression" else f.n_classes
    trees = []
    for t in range(f.n_trees):
        arrays = pruned.pruned_tree_arrays(t)
        template = stats = None
        if src is not None:
            template = (src.estimators_[t] if hasattr(src, "estimators_") else src).tree_
        elif f.node_stats is not None:
            stats = {k: v[f.tree_slice(t)] for k, v in f.node_stats.items()}
        trees.append(build_sklearn_tree(arrays, f.n_features, width, template, stats))
    if src is not None:
        est = copy.deepcopy(src)
        if hasattr(est, "estimators_"):
            for sub, tree in zip(est.estimators_, trees):
                sub.tree_ = tree
        else:
            est.tree_ = trees[0]
        return est
    if pruned.estimator_class in SINGLE_TREES and f.n_trees == 1:
        est = _fresh_tree_estimator(f, trees[0], pruned.estimator_class)
        if f.task == "classification":
            est.classes_ = f.classes_
    else:
        est = _fresh_forest(f, trees, pruned.estimator_class)
    if f.feature_names is not None:
        est.feature_names_in_ = np.asarray(f.feature_names, dtype=object)
    return est


def _fresh_forest(f, trees, name=None):
    """A fitted forest of the trees: of the class ``name`` when it is a supported
    ensemble (ExtraTrees* keep their class), else ``RandomForestClassifier``
    (``RandomForestRegressor``); its trees are of the matching single-tree class."""
    cls = _sklearn_class(name, f.task, single=False)
    est = cls(n_estimators=f.n_trees)
    tree_name = ("ExtraTree" if cls.__name__.startswith("ExtraTrees") else "DecisionTree") + (
        "Regressor" if f.task == "regression" else "Classifier")
    est.estimators_ = [_fresh_tree_estimator(f, tree, tree_name) for tree in trees]
    est.estimator_ = est.estimators_[0]
    if f.task == "classification":
        est.classes_ = f.classes_
        est.n_classes_ = f.n_classes
    est.n_outputs_ = 1
    est.n_features_in_ = f.n_features
    return est


def _boosting_to_sklearn(pruned):
    """A fitted ``GradientBoosting*`` holding the pruned trees of a boosted forest.

    Its stage trees hold the pruned values divided by the learning rate (scikit-learn
    multiplies them back); the source estimator's ``init_`` is kept.  Without a source
    estimator (a model loaded from a file, or read from another library) the model is
    rebuilt with ``init="zero"``, ``learning_rate=1`` and the initial score added to
    the first round's trees.
    """
    f = pruned.forest
    name = pruned.estimator_class
    if name not in BOOSTING:
        own = exporter_of(f)
        hint = ("use the pruned model's own predict/predict_proba and save() (JSON), or "
                f"{own}: scikit-learn offers no public way to rebuild a HistGradientBoosting "
                "model from trees" if name and name.startswith("HistGradientBoosting") else
                "use the pruned model's own predict/predict_proba and save()"
                + (f", or the exporter of its library, {own}" if own else ""))
        raise TypeError(f"to_sklearn: this pruned boosted model comes from {name!r}, which "
                        f"scikit-learn cannot rebuild; {hint}")
    if f.split_dtype != "float32":
        raise TypeError("to_sklearn: scikit-learn trees compare float32 feature values; this "
                        "model compares float64 ones, so its routing cannot be kept")
    src = f.estimator
    lr = 1.0 if src is None else float(src.learning_rate)
    K = f.value_width
    cols = f.ensemble.tree_class
    stage_trees = []
    for t in range(f.n_trees):
        arrays = dict(pruned.pruned_tree_arrays(t))
        k = 0 if cols is None else int(cols[t])
        value = arrays["value"][:, k] / lr
        if src is None and t < f.round_size:  # init="zero": the first round adds init
            value = value + f.ensemble.init_score[k]
        arrays["value"] = value[:, None]
        template = None if src is None else f.sklearn_tree(t).tree_
        stage_trees.append(build_sklearn_tree(arrays, f.n_features, 1, template))
    est = copy.deepcopy(src) if src is not None else _fresh_boosting(f, name)
    estimators = np.asarray(est.estimators_, dtype=object).reshape(-1, K)
    for i, tree in enumerate(stage_trees):
        estimators[i // K, i % K].tree_ = tree
    est.estimators_ = estimators
    if f.feature_names is not None:
        est.feature_names_in_ = np.asarray(f.feature_names, dtype=object)
    return est


def _fresh_boosting(f, name):
    """An unfitted-then-filled ``GradientBoosting*`` of ``f``'s shape: ``init="zero"``,
    ``learning_rate=1``, fresh stage trees (replaced by the caller)."""
    from sklearn import ensemble
    from sklearn.tree import DecisionTreeRegressor

    K, rounds = f.value_width, f.n_trees // f.value_width
    est = getattr(ensemble, name)(n_estimators=rounds, learning_rate=1.0, init="zero")
    est.n_features_in_ = f.n_features
    est.max_features_ = f.n_features
    est.n_estimators_ = rounds
    est.init_ = "zero"
    if f.task == "classification":
        est.classes_ = f.classes_
        est.n_classes_ = f.n_classes
    est.n_trees_per_iteration_ = K
    est._loss = est._get_loss(sample_weight=None)
    est.train_score_ = np.zeros(rounds)
    stages = np.empty((rounds, K), dtype=object)
    for idx in np.ndindex(stages.shape):
        tree = DecisionTreeRegressor()
        tree.n_features_in_ = f.n_features
        tree.n_outputs_ = 1
        tree.max_features_ = f.n_features
        stages[idx] = tree
    est.estimators_ = stages
    return est
