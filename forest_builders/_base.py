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

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from prune_opt import FeatureCosts, Forest, PrunedForest, as_feature_costs

from ._splits import candidates_from_sorted

__all__ = ["ArrayForestClassifier", "grow_tree", "resolve_max_features"]


def resolve_max_features(max_features, n_features):
    """Number of features sampled at each node.

    Examples
    --------
    >>> from forest_builders._base import resolve_max_features
    >>> resolve_max_features("sqrt", 50), resolve_max_features(None, 50)
    (7, 50)
    """
    if max_features is None:
        return n_features
    if isinstance(max_features, str):
        if max_features == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        if max_features == "log2":
            return max(1, int(np.log2(n_features)))
        raise ValueError(f"max_features must be 'sqrt', 'log2', None, an int or a float in "
                         f"(0, 1], got {max_features!r}")
    if isinstance(max_features, bool):
        raise TypeError("max_features must be 'sqrt', 'log2', None, an int or a float")
    if isinstance(max_features, numbers.Integral):
        if max_features < 1:
            raise ValueError(f"max_features must be >= 1, got {max_features}")
        return min(int(max_features), n_features)
    if isinstance(max_features, numbers.Real):
        if not 0 < max_features <= 1:
            raise ValueError(f"max_features as a float must be in (0, 1], got {max_features}")
        return max(1, int(max_features * n_features))
    raise TypeError("max_features must be 'sqrt', 'log2', None, an int or a float")


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
    n_features = X.shape[1]
    rows = np.flatnonzero(w > 0)
    left, right, feature, threshold, value = [], [], [], [], []

    def new_node():
        left.append(-1)
        right.append(-1)
        feature.append(-1)
        threshold.append(-2.0)
        value.append(None)
        return len(left) - 1

    full_cost = feature_units.astype(float) @ unit_costs
    # presort once per tree: column j of S lists the node's rows by increasing
    # X[:, j] (NaN last); children inherit stable partitions, so no node sorts
    S = rows[np.argsort(X[rows], axis=0, kind="stable")]
    go = np.zeros(X.shape[0], dtype=bool)
    stack = [(new_node(), S, 0, np.zeros(unit_costs.size, dtype=bool))]
    while stack:
        node, S, depth, paid = stack.pop()
        idx = S[:, 0]
        total = np.bincount(y[idx], weights=w[idx], minlength=n_classes)
        value[node] = total
        if ((max_depth is not None and depth >= max_depth) or total.sum() < min_samples_split
                or np.count_nonzero(total) <= 1 or (stop is not None and stop(total))):
            continue
        if free_reuse and paid.any():
            cost_all = feature_units[:, ~paid].astype(float) @ unit_costs[~paid]
        else:
            cost_all = full_cost
        k = None if n_thresholds is None else n_thresholds(total.sum())
        perm = rng.permutation(n_features)
        choice = None
        for feats in (perm[:max_features], perm[max_features:]):
            # sklearn-like: fall back to the other features when the drawn ones
            # cannot split the node at all
            if feats.size == 0:
                break
            Sf = S[:, feats]
            cand = candidates_from_sorted(X[Sf, feats], y[Sf], w[Sf], n_classes, k, rng)
            if cand is None:
                continue
            pick = choose(cand, cost_all[feats], total)
            if pick is not None:
                choice = (int(feats[pick[0]]), float(pick[1]))
            break
        if choice is None:
            continue
        f, thr = choice
        go[idx] = X[idx, f] <= thr  # NaN goes right
        mask = go[S]
        n_left = int(mask[:, 0].sum())
        if n_left == 0 or n_left == idx.size:  # cannot happen with float32 midpoints
            continue
        St = S.T
        SL = St[mask.T].reshape(n_features, n_left).T
        SR = St[~mask.T].reshape(n_features, idx.size - n_left).T
        feature[node], threshold[node] = f, thr
        child_paid = paid | feature_units[f]
        lnode, rnode = new_node(), new_node()
        left[node], right[node] = lnode, rnode
        stack.append((rnode, SR, depth + 1, child_paid))
        stack.append((lnode, SL, depth + 1, child_paid))
    n = len(left)
    return dict(left=np.asarray(left, dtype=np.int64), right=np.asarray(right, dtype=np.int64),
                feature=np.asarray(feature, dtype=np.int64),
                threshold=np.asarray(threshold, dtype=float),
                value=np.asarray(value, dtype=float).reshape(n, n_classes),
                missing_go_to_left=np.zeros(n, dtype=np.uint8))


def _check_int(value, name, low, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


class ArrayForestClassifier(ClassifierMixin, BaseEstimator):
    """Base class: bootstrap forests of array trees predicted through a prune_opt Forest.

    Subclasses implement ``_make_chooser(self)`` returning the ``choose``
    callback of :func:`grow_tree` (and may override ``_n_thresholds``).  They
    must define the hyperparameters used here: ``n_estimators``, ``budget``,
    ``costs``, ``max_features``, ``max_depth``, ``min_samples_split``,
    ``max_trees``, ``bootstrap``, ``free_reuse``, ``n_jobs``, ``random_state``.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # ------------------------------------------------------------ validation
    def _validate_params(self):
        _check_int(self.n_estimators, "n_estimators", 1)
        _check_int(self.max_trees, "max_trees", 1)
        _check_int(self.max_depth, "max_depth", 1, allow_none=True)
        mss = self.min_samples_split
        if isinstance(mss, bool) or not isinstance(mss, numbers.Real) or mss < 2:
            raise ValueError(f"min_samples_split must be a number >= 2, got {mss!r}")
        if self.budget is not None:
            if isinstance(self.budget, bool) or not isinstance(self.budget, numbers.Real) \
                    or not np.isfinite(self.budget) or self.budget < 0:
                raise ValueError(f"budget must be None or a finite non-negative average cost, "
                                 f"got {self.budget!r}")
        if self.n_jobs is not None:
            _check_int(self.n_jobs, "n_jobs", -1)

    def _feature_costs(self, n_features, names):
        costs = self.costs
        if isinstance(costs, FeatureCosts):
            if costs.n_features != n_features:
                raise ValueError(f"costs cover {costs.n_features} features but X has "
                                 f"{n_features}; pass one cost per column")
            return costs
        return as_feature_costs(costs, n_features, names)

    def _fit_validate(self, X, y, X_val, y_val):
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float32, ensure_all_finite="allow-nan")
        check_classification_targets(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        self.n_classes_ = int(self.classes_.size)
        names = getattr(self, "feature_names_in_", None)
        self.costs_ = self._feature_costs(X.shape[1], None if names is None else list(names))
        if (X_val is None) != (y_val is None):
            raise ValueError("pass both X_val and y_val, or neither")
        if X_val is not None:
            X_val = validate_data(self, X_val, reset=False, dtype=np.float32,
                                  ensure_all_finite="allow-nan")
            y_val = np.asarray(y_val)
            if y_val.ndim != 1 or y_val.shape[0] != X_val.shape[0]:
                raise ValueError(f"y_val must be 1-D with one label per row of X_val "
                                 f"({X_val.shape[0]}), got shape {y_val.shape}")
        if self.budget is not None and X_val is None:
            raise ValueError("budget needs validation data: pass fit(X, y, X_val=..., "
                             "y_val=...) to measure the average acquisition cost")
        return X, y_enc.astype(np.int64), X_val, y_val

    # ------------------------------------------------------------ growth
    def _grow_forest(self, X, y, X_val, chooser, seed):
        """Grow trees (fixed count, or within the budget on X_val)."""
        from joblib import Parallel, delayed

        n, n_features = X.shape
        m = resolve_max_features(self.max_features, n_features)
        fu = self.costs_.feature_units.toarray().astype(bool)
        uc = self.costs_.unit_costs
        ss = np.random.SeedSequence(seed)
        limit = self.max_trees if self.budget is not None else self.n_estimators
        seeds = ss.spawn(limit)
        n_thr = self._n_thresholds()
        stop = self._stop_rule()

        def one(s):
            rng = np.random.default_rng(s)
            if self.bootstrap:
                w = np.bincount(rng.integers(0, n, n), minlength=n).astype(float)
            else:
                w = np.ones(n)
            tree = grow_tree(X, y, w, self.n_classes_, chooser, rng=rng, max_features=m,
                             max_depth=self.max_depth, min_samples_split=self.min_samples_split,
                             n_thresholds=n_thr, feature_units=fu, unit_costs=uc,
                             free_reuse=self.free_reuse, stop=stop)
            return tree, w.astype(np.int64)

        n_jobs = self.n_jobs or 1
        par = Parallel(n_jobs=n_jobs, prefer="processes") if n_jobs != 1 else None

        def batch(chunk):
            if par is None:
                return [one(s) for s in chunk]
            return par(delayed(one)(s) for s in chunk)

        if self.budget is None:
            out = batch(seeds)
            self.val_costs_ = None
            return [t for t, _ in out], [b for _, b in out]
        trees, bags, costs = [], [], []
        used = np.zeros((X_val.shape[0], n_features), dtype=bool)
        step = max(1, abs(n_jobs) * 2 if n_jobs != 1 else 1)
        done = False
        for start in range(0, limit, step):
            for tree, bag in batch(seeds[start:start + step]):
                f1 = Forest.from_arrays([tree], classes=self.classes_, n_features=n_features)
                used_t = PrunedForest(f1, f1.full_split_mask()).used_features(
                    X_val.astype(float)) > 0
                new_used = used | used_t.toarray()
                avg = float(self.costs_.cost_of_usage(new_used).mean())
                if avg > self.budget:
                    done = True
                    if not trees:
                        warnings.warn(f"a single tree already costs {avg:.4g} on X_val, above "
                                      f"budget={self.budget}; keeping that one tree",
                                      UserWarning, stacklevel=3)
                        trees, bags, costs = [tree], [bag], [avg]
                    break
                used = new_used
                trees.append(tree)
                bags.append(bag)
                costs.append(avg)
            if done:
                break
        self.val_costs_ = np.asarray(costs)
        return trees, bags

    def _finish(self, trees, bags):
        names = getattr(self, "feature_names_in_", None)
        self.forest_ = Forest.from_arrays(trees, classes=self.classes_,
                                          n_features=self.n_features_in_,
                                          feature_names=None if names is None else list(names),
                                          in_bag=bags)
        self.n_estimators_ = len(trees)
        self.in_bag_ = bags
        return self

    def _n_thresholds(self):
        return None

    def _stop_rule(self):
        return None

    # ------------------------------------------------------------ prediction
    def to_forest(self):
        """The fitted trees as a :class:`prune_opt.Forest` (with in-bag counts).

        ``prune_opt.prune(self, X_val, y_val, train=(X, y), ...)`` uses it.
        """
        check_is_fitted(self, "forest_")
        return self.forest_

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
        pf = PrunedForest(self.forest_, self.forest_.full_split_mask(),
                          costs=self.costs_ if costs is None else costs)
        return pf.acquisition_cost(X.astype(float))
