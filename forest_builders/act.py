"""ACT: anytime induction of low-cost, low-error trees (Esmeir & Markovitch, JAIR 2008).

ACT grows a tree top-down.  At each node every feature's best threshold is a
candidate split; a candidate is scored by the estimated *total cost* of the
subtree it would root: the tests' cost for the examples reaching it plus, for
each child, the cheapest of ``r`` sampled subtrees.  Samples are grown by
stochastic EG2 (SEG2): at each sampled node a split is drawn with probability
proportional to EG2's information cost function

    ICF = (2 ** gain - 1) / (cost + 1) ** w,

where ``gain`` is the information gain in bits and ``cost`` the *context*
cost: acquisition units an example already paid on its path (a repeated
feature, a shared group unit, a required feature) are free.  A subtree's
total cost is its examples' test cost plus its leaves' expected
misclassification cost, estimated pessimistically with C4.5's upper
confidence limit ``U_cf(E, N)`` and the misclassification cost matrix.  The
chosen split is the one with the lowest estimate; a subtree whose expected
error saving does not pay for its tests is pruned back to a leaf.  Larger
``r`` spends more time for (on average) cheaper trees — the anytime knob.
``r=0`` is plain EG2; with ``r >= 1`` the first sample is the greedy EG2
subtree and the other ``r - 1`` are stochastic.

Numeric features are split at the information-gain-best threshold of each
feature (C4.5's treatment), chosen as a float32 midpoint so that
``float32(x) <= threshold`` routes training data exactly as during growth;
prediction goes through :class:`prune_opt.Forest`, so :meth:`to_forest`
round-trips exactly.
"""

from __future__ import annotations

import numbers
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from prune_opt import Forest, training_node_stats

from ._act_core import ACTConfig, grow_tree
from ._base import MAX_FEATURES_CONSTRAINT, CostAwareClassifier, resolve_max_features

__all__ = ["ACTClassifier", "ACTForestClassifier"]


class _ACTBase(CostAwareClassifier):
    """Shared cost setup, misclassification costs and prediction through the Forest IR."""

    _parameter_constraints: dict = {
        **CostAwareClassifier._parameter_constraints,
        "r": [Interval(Integral, 0, None, closed="left")],
        "w": [Interval(Real, 0, np.inf, closed="left")],
        "cf": [Interval(Real, 0, 1, closed="right")],
        "misclassification_cost": [None, Interval(Real, 0, np.inf, closed="left"), "array-like"],
        "min_samples_split": [Interval(Integral, 2, None, closed="left")],
    }

    def _setup(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        self._names = self._fit_costs(X.shape[1])
        self.misclassification_cost_ = self._cost_matrix(self.costs_)
        return X.astype(np.float32), codes

    def _cost_matrix(self, fc):
        C = self.classes_.size
        mc = self.misclassification_cost
        off = 1.0 - np.eye(C)
        if mc is None:
            return off * max(float(fc.unit_costs.sum()), 1.0)
        if isinstance(mc, numbers.Real) and not isinstance(mc, bool):
            return off * float(mc)
        M = np.asarray(mc, dtype=float)
        if M.shape != (C, C):
            raise ValueError(f"misclassification_cost must be a scalar or a ({C}, {C}) matrix "
                             f"(rows: true class, columns: predicted, in classes_ order), got "
                             f"shape {M.shape}")
        if not np.isfinite(M).all() or (M < 0).any():
            raise ValueError("misclassification_cost must be finite and non-negative")
        return M

    def _config(self, X32, codes, max_features=None):
        return ACTConfig(X32, codes, self.classes_.size, self.costs_.unit_costs,
                         self.costs_.feature_units.toarray(), self.misclassification_cost_,
                         r=self.r, w=self.w, cf=self.cf, max_depth=self.max_depth,
                         min_samples_split=self.min_samples_split, max_features=max_features)

    def _X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def predict_proba(self, X):
        """Class distribution of the reached leaves, averaged over trees."""
        X = self._X(X)
        return self.forest_.predict_proba(X)

    def predict(self, X):
        """Class with the lowest expected misclassification cost under :meth:`predict_proba`.

        With 0/1-type costs this is the most probable class.
        """
        p = self.predict_proba(X)
        return self.classes_[np.argmin(p @ self.misclassification_cost_, axis=1)]

    def acquisition_cost(self, X):
        """Per-example test cost: every acquisition unit on the example's paths, paid once."""
        from prune_opt import acquisition_cost

        X = self._X(X)
        return acquisition_cost(self.forest_, X, self.costs_)

    def total_cost(self, X, y):
        """Average test cost plus average misclassification cost on ``(X, y)``.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> X, y = load_iris(return_X_y=True)
        >>> act = ACTClassifier(r=1, costs=[1, 1, 10, 10], max_depth=3).fit(X, y)
        >>> bool(act.total_cost(X, y) >= act.acquisition_cost(X).mean())
        True
        """
        pred = self.predict(X)
        y = column_or_1d(y, warn=True)
        check_consistent_length(pred, y)
        truth = np.clip(np.searchsorted(self.classes_, y), 0, self.classes_.size - 1)
        if not np.all(self.classes_[truth] == y):
            raise ValueError("y contains labels unknown to the estimator")
        guess = np.searchsorted(self.classes_, pred)
        mis = self.misclassification_cost_[truth, guess]
        return float(self.acquisition_cost(X).mean() + mis.mean())


class ACTClassifier(_ACTBase):
    """Anytime cost-sensitive decision tree (ACT).

    Parameters
    ----------
    r : int, default 3
        Lookahead samples per child of each candidate split.  0 is greedy EG2;
        more samples take longer and usually give cheaper trees.
    w : float, default 1.0
        EG2's cost exponent (0 ignores test costs when sampling).
    cf : float in (0, 1], default 0.25
        C4.5 confidence for pessimistic error estimates (smaller = more pessimistic).
    misclassification_cost : None, float or array (n_classes, n_classes), default None
        ``M[j, k]`` is the cost of predicting class ``k`` for an example of class
        ``j`` (``classes_`` order).  A float ``s`` means ``s`` for every error;
        None means every error costs the sum of all acquisition units (as much
        as measuring everything).
    costs : FeatureCosts, array-like or mapping, optional
        Test costs (uniform 1.0 when omitted).  Groups and requires are honoured
        exactly: units already paid on the path are free.
    max_depth : int, optional
    min_samples_split : int, default 2
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    costs_ : FeatureCosts
    misclassification_cost_ : ndarray (n_classes, n_classes)
    tree_ : dict of arrays (left, right, feature, threshold, value)
    forest_ : prune_opt.Forest

    Examples
    --------
    >>> from prune_opt.datasets import load_dataset
    >>> d = load_dataset("pima")
    >>> act = ACTClassifier(r=1, costs=d.costs, max_depth=4, random_state=0).fit(d.X, d.y)
    >>> bool(act.acquisition_cost(d.X).mean() < d.costs.unit_costs.sum())
    True
    """

    def __init__(self, r=3, w=1.0, cf=0.25, misclassification_cost=None, costs=None,
                 max_depth=None, min_samples_split=2, random_state=None):
        self.r = r
        self.w = w
        self.cf = cf
        self.misclassification_cost = misclassification_cost
        self.costs = costs
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow the ACT tree.

        Parameters
        ----------
        X : array-like of shape (n_examples, n_features), finite
        y : array-like of shape (n_examples,)

        Returns
        -------
        self
        """
        X32, codes = self._setup(X, y)
        rs = check_random_state(self.random_state)
        rng = np.random.default_rng(rs.randint(np.iinfo(np.int32).max))
        self.tree_ = grow_tree(self._config(X32, codes), np.arange(X32.shape[0]), rng)
        self.forest_ = Forest.from_arrays([self.tree_], self.classes_, X32.shape[1],
                                          feature_names=self._names)
        self.forest_.node_stats = training_node_stats(self.forest_, X32, self.classes_[codes])
        return self


class ACTForestClassifier(_ACTBase):
    """Bagged ACT trees (bootstrap rows, random candidate features per node), for pruning.

    Parameters
    ----------
    n_estimators : int, default 10
    r, w, cf, misclassification_cost, costs, max_depth, min_samples_split
        As in :class:`ACTClassifier` (default ``r=1`` to keep forests quick).
    max_features : {"sqrt", "log2"}, int, float or None, default "sqrt"
        Candidate features drawn per ACT node; lookahead samples see all features.
    bootstrap : bool, default True
    n_jobs : int, optional
        Trees grown in parallel with joblib.
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_, n_features_in_, costs_, misclassification_cost_
    trees_ : list of dict
    in_bag_ : list of ndarray
        Bootstrap multiplicity of every training row, per tree.
    forest_ : prune_opt.Forest
        With ``in_bag`` set, so ``prune(..., train=(X, y))`` counts in-bag errors.

    Examples
    --------
    >>> import prune_opt as po
    >>> from prune_opt.datasets import load_dataset
    >>> d = load_dataset("pima")
    >>> f = ACTForestClassifier(n_estimators=3, r=0, costs=d.costs, max_depth=4,
    ...                         random_state=0).fit(d.X, d.y)
    >>> pruned = po.prune(f, d.X, d.y, costs=d.costs, lam=0.01, solver="highs")
    >>> bool(pruned.n_splits <= f.to_forest().full_split_mask().sum())
    True
    """

    _parameter_constraints: dict = {
        **_ACTBase._parameter_constraints,
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_features": MAX_FEATURES_CONSTRAINT,
        "bootstrap": ["boolean"],
        "n_jobs": [Integral, None],
    }

    def __init__(self, n_estimators=10, r=1, w=1.0, cf=0.25, misclassification_cost=None,
                 costs=None, max_depth=None, min_samples_split=2, max_features="sqrt",
                 bootstrap=True, n_jobs=None, random_state=None):
        self.n_estimators = n_estimators
        self.r = r
        self.w = w
        self.cf = cf
        self.misclassification_cost = misclassification_cost
        self.costs = costs
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _n_candidates(self, n_features):
        """Features drawn per node (None: all); unlike the array forests, an int above
        the number of features is refused rather than clipped."""
        mf = self.max_features
        if isinstance(mf, numbers.Integral) and not isinstance(mf, bool) and mf > n_features:
            raise ValueError(f"max_features={mf} must be in [1, {n_features}]")
        return None if mf is None else resolve_max_features(mf, n_features)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow ``n_estimators`` ACT trees on bootstrap samples.

        Returns
        -------
        self
        """
        from joblib import Parallel, delayed

        X32, codes = self._setup(X, y)
        n, F = X32.shape
        cfg = self._config(X32, codes, self._n_candidates(F))
        rs = check_random_state(self.random_state)
        seeds = rs.randint(np.iinfo(np.int32).max, size=(self.n_estimators, 2))
        samples = [np.sort(np.random.default_rng(s[0]).integers(0, n, n)) if self.bootstrap
                   else np.arange(n) for s in seeds]  # one bootstrap per tree
        self.trees_ = Parallel(n_jobs=self.n_jobs)(
            delayed(grow_tree)(cfg, idx, np.random.default_rng(s[1]))
            for idx, s in zip(samples, seeds))
        self.in_bag_ = [np.bincount(idx, minlength=n) for idx in samples]
        self.forest_ = Forest.from_arrays(self.trees_, self.classes_, F,
                                          feature_names=self._names, in_bag=self.in_bag_)
        self.forest_.node_stats = training_node_stats(self.forest_, X32, self.classes_[codes])
        return self
