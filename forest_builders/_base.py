"""Shared plumbing of the array-tree forest estimators.

* :func:`grow_tree` grows one tree as flat arrays, looping over nodes only;
  the split criterion is a callback that scores the candidate stumps returned
  by :func:`forest_builders._splits.candidate_splits`.
* :class:`ArrayForestClassifier` is the sklearn-compatible base: input
  validation, bootstrap, feature costs, optional budget-driven growth
  (add trees while the average acquisition cost on validation data stays
  within the budget), and prediction through :class:`prune_opt.Forest`, so
  ``to_forest()`` reproduces ``predict_proba`` exactly and
  ``prune_opt.prune(estimator, ...)`` works directly.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from prune_opt import (
    FeatureCosts,
    Forest,
    PrunedForest,
    acquisition_cost,
    as_feature_costs,
    training_node_stats,
)

from ._splits import candidates_from_sorted

__all__ = ["ArrayForestClassifier", "CostAwareClassifier", "grow_tree", "resolve_max_features"]

#: scikit-learn constraint of the ``max_features`` hyperparameter of every grower
MAX_FEATURES_CONSTRAINT = [StrOptions({"sqrt", "log2"}),
                           Interval(Integral, 1, None, closed="left"),
                           Interval(RealNotInt, 0, 1, closed="right"), None]


def resolve_max_features(max_features, n_features):
    """Number of features sampled at each node, for a ``max_features`` the growers'
    parameter validation accepted (``MAX_FEATURES_CONSTRAINT``).

    Examples
    --------
    >>> from forest_builders._base import resolve_max_features
    >>> resolve_max_features("sqrt", 50), resolve_max_features(None, 50)
    (7, 50)
    """
    if max_features is None:
        return n_features
    if max_features == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(np.log2(n_features)))
    if isinstance(max_features, Integral):
        return min(int(max_features), n_features)
    return max(1, int(max_features * n_features))


def grow_tree(X, y, w, n_classes, choose, *, rng, max_features, max_depth, min_samples_split,
              n_thresholds, feature_units, unit_costs, free_reuse, stop=None):
    """Grow one tree greedily; return its arrays (ids in creation order).

    Parameters
    ----------
    X : ndarray (n, F) float32
    y : ndarray (n,) int class indices
    w : ndarray (n,) float weights (rows with weight 0 are ignored)
    n_classes : int
    choose : callable
        ``choose(cand, cost, total) -> (j, threshold) or None``: picks a
        candidate column ``j`` of ``cand`` (a SplitCandidates) given the
        marginal acquisition ``cost`` of each candidate feature.
    rng : numpy.random.Generator
    max_features : int
    max_depth : int or None
    min_samples_split : float
        Minimum total weight of a node that may be split.
    n_thresholds : callable or None
        ``n_thresholds(weight) -> k`` random thresholds, None for exhaustive.
    feature_units : ndarray (F, U) bool
    unit_costs : ndarray (U,)
    free_reuse : bool
        When True a feature's cost is only that of its units not yet paid on
        the path from the root (0 for a feature already used).
    stop : callable, optional
        ``stop(total) -> bool``: make the node a leaf (e.g. impurity 0).

    Returns
    -------
    dict with ``left``, ``right``, ``feature``, ``threshold``, ``value``,
    ``missing_go_to_left``.
    """
    tree = _TreeArrays(n_classes)
    full_cost = feature_units.astype(float) @ unit_costs
    rows = np.flatnonzero(w > 0)
    # presort once per tree: column j of S lists the node's rows by increasing
    # X[:, j] (NaN last); children inherit stable partitions, so no node sorts
    S = rows[np.argsort(X[rows], axis=0, kind="stable")]
    go = np.zeros(X.shape[0], dtype=bool)
    stack = [(tree.new_node(), S, 0, np.zeros(unit_costs.size, dtype=bool))]
    while stack:  # one iteration per node of this tree
        node, S, depth, paid = stack.pop()
        idx = S[:, 0]
        total = np.bincount(y[idx], weights=w[idx], minlength=n_classes)
        tree.value[node] = total
        if ((max_depth is not None and depth >= max_depth) or total.sum() < min_samples_split
                or np.count_nonzero(total) <= 1 or (stop is not None and stop(total))):
            continue
        if free_reuse and paid.any():
            cost_all = feature_units[:, ~paid].astype(float) @ unit_costs[~paid]
        else:
            cost_all = full_cost
        k = None if n_thresholds is None else n_thresholds(total.sum())
        choice = _choose_split(X, y, w, S, n_classes, choose, cost_all, total, k, rng,
                               max_features)
        children = None if choice is None else _partition(X, S, go, *choice)
        if children is None:
            continue
        f, thr = choice
        tree.feature[node], tree.threshold[node] = f, thr
        child_paid = paid | feature_units[f]
        lnode, rnode = tree.new_node(), tree.new_node()
        tree.left[node], tree.right[node] = lnode, rnode
        stack.append((rnode, children[1], depth + 1, child_paid))
        stack.append((lnode, children[0], depth + 1, child_paid))
    return tree.arrays()


def bootstrap_weights(rng, n, bootstrap):
    """One tree's row multiplicities: a bootstrap draw of ``n`` rows, else 1 per row."""
    if not bootstrap:
        return np.ones(n)
    return np.bincount(rng.integers(0, n, n), minlength=n).astype(float)


def preorder(root, children):
    """The nodes of a nested tree in preorder (parents first), with the ``left`` and
    ``right`` child row of each (-1 at a leaf); ``children(node)`` is the pair
    ``(left, right)``, or None at a leaf."""
    nodes, left, right, stack = [], [], [], [(root, -1, False)]
    while stack:  # one tree
        node, parent, is_left = stack.pop()
        h = len(nodes)
        if parent >= 0:
            (left if is_left else right)[parent] = h
        nodes.append(node)
        left.append(-1)
        right.append(-1)
        pair = children(node)
        if pair is not None:
            stack += [(pair[1], h, False), (pair[0], h, True)]
    return nodes, np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)


class _TreeArrays:
    """Growable node arrays of one tree (ids in creation order)."""

    def __init__(self, n_classes):
        self.n_classes = n_classes
        self.left, self.right, self.feature, self.threshold, self.value = [], [], [], [], []

    def new_node(self):
        for arr, empty in ((self.left, -1), (self.right, -1), (self.feature, -1),
                           (self.threshold, -2.0), (self.value, None)):
            arr.append(empty)
        return len(self.left) - 1

    def arrays(self):
        n = len(self.left)
        return dict(left=np.asarray(self.left, dtype=np.int64),
                    right=np.asarray(self.right, dtype=np.int64),
                    feature=np.asarray(self.feature, dtype=np.int64),
                    threshold=np.asarray(self.threshold, dtype=float),
                    value=np.asarray(self.value, dtype=float).reshape(n, self.n_classes),
                    missing_go_to_left=np.zeros(n, dtype=np.uint8))


def _choose_split(X, y, w, S, n_classes, choose, cost_all, total, k, rng, max_features):
    """``(feature, threshold)`` of the node whose presorted rows are ``S``, or None.

    Draws ``max_features`` candidate features; like sklearn, falls back to
    the other features when none of the drawn ones can split the node.
    """
    perm = rng.permutation(X.shape[1])
    for feats in (perm[:max_features], perm[max_features:]):
        if feats.size == 0:
            return None
        Sf = S[:, feats]
        cand = candidates_from_sorted(X[Sf, feats], y[Sf], w[Sf], n_classes, k, rng)
        if cand is None:
            continue
        pick = choose(cand, cost_all[feats], total)
        return None if pick is None else (int(feats[pick[0]]), float(pick[1]))
    return None


def _partition(X, S, go, f, thr):
    """Presorted rows of the two children (stable), or None for a one-sided split."""
    idx = S[:, 0]
    go[idx] = X[idx, f] <= thr  # NaN goes right
    mask = go[S]
    n_left = int(mask[:, 0].sum())
    if n_left == 0 or n_left == idx.size:  # cannot happen with float32 midpoints
        return None
    St, n_features = S.T, S.shape[1]
    SL = St[mask.T].reshape(n_features, n_left).T
    SR = St[~mask.T].reshape(n_features, idx.size - n_left).T
    return SL, SR


class ForestPredictions:
    """``predict_proba`` / ``predict`` / ``acquisition_cost`` of a fitted ``forest_``.

    Shared by every grower whose fitted trees live in a :class:`prune_opt.Forest`
    (``forest_``), with the checked costs in ``costs_``.  Rows are cast to
    float32 first, as the trees were grown on (and scikit-learn compares); NaN is
    allowed (the trees route it).
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def predict_proba(self, X):
        """Average of the trees' leaf class distributions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "forest_")
        X = validate_data(self, X, reset=False, dtype=np.float32, ensure_all_finite="allow-nan")
        return self.forest_.predict_proba(X.astype(float))

    def predict(self, X):
        """Class with the highest averaged probability."""
        proba = self.predict_proba(X)
        return self.classes_.take(np.argmax(proba, axis=1), axis=0)

    def acquisition_cost(self, X, costs=None):
        """Per-example acquisition cost of the whole forest (units paid once).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        costs : FeatureCosts or array-like, optional
            Defaults to the costs used for fitting.
        """
        check_is_fitted(self, "forest_")
        X = validate_data(self, X, reset=False, dtype=np.float32, ensure_all_finite="allow-nan")
        return acquisition_cost(self.forest_, X.astype(float),
                                self.costs_ if costs is None else costs)


class CostAwareClassifier(ClassifierMixin, BaseEstimator):
    """Shared base of the cost-aware tree estimators of this package.

    Hyperparameters are checked by scikit-learn's ``_parameter_constraints``
    (through ``_fit_context`` on ``fit``); subclasses extend
    :attr:`_parameter_constraints`.  The base resolves ``costs`` against the
    training columns (:meth:`_fit_costs`), turns ``random_state`` into a seed
    with :func:`sklearn.utils.check_random_state` (:meth:`_seed`) and exposes
    the fitted trees as a :class:`prune_opt.Forest` (:meth:`to_forest`).
    """

    _parameter_constraints: dict = {
        "costs": [None, "array-like", Mapping, FeatureCosts],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def _fit_costs(self, n_features):
        """``costs_``: the ``costs`` hyperparameter checked against the training columns."""
        names = getattr(self, "feature_names_in_", None)
        names = None if names is None else [str(n) for n in names]
        self.costs_ = as_feature_costs(self.costs, n_features, names)
        return names

    def _fit_data(self, X, y):
        """Checked training data: ``(X as float32, y as class indices, column names)``;
        sets ``classes_``, ``n_classes_`` and ``costs_``."""
        X, y = validate_data(self, X, y, dtype=np.float32, ensure_all_finite="allow-nan")
        check_classification_targets(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        self.n_classes_ = int(self.classes_.size)
        names = self._fit_costs(X.shape[1])
        return X, y_enc.astype(np.int64), names

    def _seed(self):
        """An int seed from ``random_state`` (int, RandomState instance or None).

        An int is used as is, so a given ``random_state`` grows the same forest
        as before; an instance is drawn from (advancing it, as in sklearn).
        """
        rs = self.random_state
        if isinstance(rs, Integral) and not isinstance(rs, bool):
            return int(rs)
        return int(check_random_state(rs).randint(0, 2**31 - 1))

    def to_forest(self):
        """The fitted trees as a :class:`prune_opt.Forest` (with in-bag counts).

        ``prune_opt.prune(self, X_val, y_val, train=(X, y), ...)`` uses it.
        """
        check_is_fitted(self, "forest_")
        return self.forest_


class ArrayForestClassifier(ForestPredictions, CostAwareClassifier):
    """Base class: bootstrap forests of array trees predicted through a prune_opt Forest.

    Subclasses implement ``fit`` with a ``choose`` callback for
    :func:`grow_tree` (and may override ``_n_thresholds`` / ``_stop_rule``).
    They must define the hyperparameters used here: ``n_estimators``,
    ``budget``, ``costs``, ``max_features``, ``max_depth``,
    ``min_samples_split``, ``max_trees``, ``bootstrap``, ``free_reuse``,
    ``n_jobs``, ``random_state``.
    """

    _parameter_constraints: dict = {
        **CostAwareClassifier._parameter_constraints,
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "budget": [Interval(Real, 0, np.inf, closed="left"), None],
        "free_reuse": ["boolean"],
        "max_features": MAX_FEATURES_CONSTRAINT,
        "min_samples_split": [Interval(Real, 2, None, closed="left")],
        "max_trees": [Interval(Integral, 1, None, closed="left")],
        "bootstrap": ["boolean"],
        "n_jobs": [Integral, None],
    }

    # ------------------------------------------------------------ validation
    def _fit_validate(self, X, y, X_val, y_val):
        X, y_enc, _ = self._fit_data(X, y)
        if (X_val is None) != (y_val is None):
            raise ValueError("pass both X_val and y_val, or neither")
        if X_val is not None:
            X_val = validate_data(self, X_val, reset=False, dtype=np.float32,
                                  ensure_all_finite="allow-nan")
            y_val = np.asarray(y_val)
            if y_val.ndim == 2 and y_val.shape[1] == 1:
                y_val = column_or_1d(y_val, warn=True)
            if y_val.ndim != 1 or y_val.shape[0] != X_val.shape[0]:
                raise ValueError(f"y_val must be 1-D with one label per row of X_val "
                                 f"({X_val.shape[0]}), got shape {y_val.shape}")
        if self.budget is not None and X_val is None:
            raise ValueError("budget needs validation data: pass fit(X, y, X_val=..., "
                             "y_val=...) to measure the average acquisition cost")
        return X, y_enc, X_val, y_val

    # ------------------------------------------------------------ growth
    def _tree_grower(self, X, y, chooser):
        """``grow(seed) -> (tree arrays, in-bag counts)`` for one bootstrap tree."""
        n, n_features = X.shape
        kw = dict(max_features=resolve_max_features(self.max_features, n_features),
                  max_depth=self.max_depth, min_samples_split=self.min_samples_split,
                  n_thresholds=self._n_thresholds(),
                  feature_units=self.costs_.feature_units.toarray().astype(bool),
                  unit_costs=self.costs_.unit_costs, free_reuse=self.free_reuse,
                  stop=self._stop_rule())

        def grow(seed):
            rng = np.random.default_rng(seed)
            w = bootstrap_weights(rng, n, self.bootstrap)
            return grow_tree(X, y, w, self.n_classes_, chooser, rng=rng, **kw), w.astype(np.int64)

        return grow

    def _grow_forest(self, X, y, X_val, chooser, seed):
        """Grow trees (fixed count, or within the budget on X_val)."""
        from joblib import Parallel, delayed

        limit = self.max_trees if self.budget is not None else self.n_estimators
        seeds = np.random.SeedSequence(seed).spawn(limit)
        grow = self._tree_grower(X, y, chooser)
        n_jobs = self.n_jobs or 1
        par = Parallel(n_jobs=n_jobs, prefer="processes") if n_jobs != 1 else None

        def batch(chunk):
            if par is None:
                return [grow(s) for s in chunk]
            return par(delayed(grow)(s) for s in chunk)

        if self.budget is None:
            out = batch(seeds)
            self.val_costs_ = None
            return [t for t, _ in out], [b for _, b in out]
        step = max(1, abs(n_jobs) * 2 if n_jobs != 1 else 1)
        batches = (batch(seeds[start:start + step]) for start in range(0, limit, step))
        return self._grow_within_budget(batches, X_val, X.shape[1])

    def _grow_within_budget(self, batches, X_val, n_features):
        """Keep trees while the average acquisition cost on ``X_val`` stays within budget."""
        trees, bags, costs = [], [], []
        used = np.zeros((X_val.shape[0], n_features), dtype=bool)
        for tree, bag in (pair for chunk in batches for pair in chunk):
            f1 = Forest.from_arrays([tree], classes=self.classes_, n_features=n_features)
            used_t = PrunedForest(f1, f1.full_split_mask()).used_features(
                X_val.astype(float)) > 0
            new_used = used | used_t.toarray()
            avg = float(self.costs_.cost_of_usage(new_used).mean())
            if avg > self.budget:
                if not trees:
                    warnings.warn(f"a single tree already costs {avg:.4g} on X_val, above "
                                  f"budget={self.budget}; keeping that one tree",
                                  UserWarning, stacklevel=5)
                    trees, bags, costs = [tree], [bag], [avg]
                break
            used = new_used
            trees.append(tree)
            bags.append(bag)
            costs.append(avg)
        self.val_costs_ = np.asarray(costs)
        return trees, bags

    def _finish(self, trees, bags, X, y_enc):
        """``forest_`` of the grown trees, with the node statistics of the rows they were
        grown on (``X``, ``y_enc``: each tree's in-bag rows), which ``to_sklearn()``'s
        ``feature_importances_`` need."""
        names = getattr(self, "feature_names_in_", None)
        self.forest_ = Forest.from_arrays(trees, classes=self.classes_,
                                          n_features=self.n_features_in_,
                                          feature_names=None if names is None else list(names),
                                          in_bag=bags)
        self.forest_.node_stats = training_node_stats(self.forest_, X, self.classes_[y_enc])
        self.n_estimators_ = len(trees)
        self.in_bag_ = bags
        return self

    def _n_thresholds(self):
        return None

    def _stop_rule(self):
        return None
