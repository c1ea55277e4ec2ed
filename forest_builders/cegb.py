"""CEGB (Peter, Diego, Hamprecht, Nadler, NIPS 2017) through LightGBM's own implementation.

LightGBM implements cost-efficient gradient boosting: its split gain is
reduced by ``cegb_tradeoff`` times

* ``cegb_penalty_feature_lazy[k]`` for every training example that has not yet
  used feature ``k`` in the model (a per-example acquisition cost),
* ``cegb_penalty_feature_coupled[k]`` the first time feature ``k`` is used
  anywhere in the model (a per-model cost),
* ``cegb_penalty_split`` per split.

:class:`CEGBClassifier` maps a :class:`prune_opt.FeatureCosts` onto those
penalties and prices the fitted model's predictions with prune-opt's own
per-example accounting (:func:`forest_builders.lightgbm_import.lightgbm_acquisition_cost`).

Groups and ``requires`` are approximated: LightGBM charges per feature, so each
feature is charged :meth:`FeatureCosts.feature_cost` (its own unit plus every
shared unit it needs, as if it were used alone).  A shared unit (a blood draw)
is therefore charged once per member feature during training, which
over-penalises using several members; the reported acquisition cost is exact.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from prune_opt import FeatureCosts

from ._base import CostAwareClassifier
from .lightgbm_import import (
    forest_from_lightgbm,
    import_lightgbm,
    lightgbm_feature_usage,
    lightgbm_trees,
)

__all__ = ["CEGBClassifier", "cegb_curve", "DEFAULT_TRADEOFFS"]

#: ``cegb_tradeoff`` values of :func:`cegb_curve` when none are given
DEFAULT_TRADEOFFS = (0.0, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 10.0)

PENALTIES = ("lazy", "coupled", "both")


class CEGBClassifier(CostAwareClassifier):
    """Cost-efficient gradient boosting (LightGBM's CEGB) with prune-opt cost accounting.

    Parameters
    ----------
    costs : FeatureCosts, array-like or mapping, optional
        Acquisition costs (uniform 1.0 when omitted).  Each feature is
        penalised with its :meth:`FeatureCosts.feature_cost`.
    cegb_tradeoff : float, default 1.0
        Multiplier of all penalties (0 turns CEGB off).
    penalty : {"lazy", "coupled", "both"}, default "lazy"
        Charge costs per example (``lazy``: the prediction-time cost this
        project measures), per model (``coupled``), or both.
    cegb_penalty_split : float, default 0.0
        Penalty per split.
    boosting_type : {"gbdt", "rf", "dart"}, default "gbdt"
        ``"rf"`` gives a bagged random forest that :meth:`to_forest` converts
        for exact pruning (then set ``subsample < 1`` and ``subsample_freq=1``).
    n_estimators, learning_rate, num_leaves, max_depth, min_child_samples, subsample,
    subsample_freq, colsample_bytree, reg_lambda : LightGBM hyperparameters
    random_state : int, optional
    n_jobs : int, default 1
    lgbm_params : dict, optional
        Further keyword arguments for ``lightgbm.LGBMClassifier``.

    Attributes
    ----------
    model_ : lightgbm.LGBMClassifier
    booster_ : lightgbm.Booster
    classes_ : ndarray
    n_features_in_ : int
    costs_ : FeatureCosts
    feature_penalty_ : ndarray
        Per-feature penalty passed to LightGBM.
    forest_ : prune_opt.Forest or None
        Set when ``boosting_type="rf"``: node distributions from the training data.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> costs = [1.0] * 10 + [5.0] * 20
    >>> cheap = CEGBClassifier(costs=costs, cegb_tradeoff=0.05, n_estimators=20).fit(X, y)
    >>> free = CEGBClassifier(costs=costs, cegb_tradeoff=0.0, n_estimators=20).fit(X, y)
    >>> bool(cheap.average_cost(X) < free.average_cost(X))
    True
    """

    def __init__(self, costs=None, cegb_tradeoff=1.0, penalty="lazy", cegb_penalty_split=0.0,
                 boosting_type="gbdt", n_estimators=100, learning_rate=0.1, num_leaves=31,
                 max_depth=-1, min_child_samples=20, subsample=1.0, subsample_freq=0,
                 colsample_bytree=1.0, reg_lambda=0.0, random_state=None, n_jobs=1,
                 lgbm_params=None):
        self.costs = costs
        self.cegb_tradeoff = cegb_tradeoff
        self.penalty = penalty
        self.cegb_penalty_split = cegb_penalty_split
        self.boosting_type = boosting_type
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.subsample_freq = subsample_freq
        self.colsample_bytree = colsample_bytree
        self.reg_lambda = reg_lambda
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.lgbm_params = lgbm_params

    # ---------------------------------------------------------------- fitting
    _parameter_constraints: dict = {
        "costs": [None, "array-like", Mapping, FeatureCosts],
        "cegb_tradeoff": [Interval(Real, 0, np.inf, closed="left")],
        "cegb_penalty_split": [Interval(Real, 0, np.inf, closed="left")],
        "penalty": [StrOptions(set(PENALTIES))],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "lgbm_params": [dict, None],
    }

    def _check_params(self):
        """The rule the declarative constraints cannot say (checked after them)."""
        clash = {"cegb_tradeoff", "cegb_penalty_feature_lazy", "cegb_penalty_feature_coupled",
                 "cegb_penalty_split"} & set(self.lgbm_params or {})
        if clash:
            raise ValueError(f"lgbm_params must not set {sorted(clash)}; use costs, penalty, "
                             "cegb_tradeoff and cegb_penalty_split")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit LightGBM with CEGB penalties derived from ``costs``.

        Parameters
        ----------
        X : array-like of shape (n_examples, n_features)
        y : array-like of shape (n_examples,)

        Returns
        -------
        self
        """
        self._check_params()
        lgb = import_lightgbm()
        X, y = validate_data(self, X, y, ensure_all_finite="allow-nan", dtype=np.float64)
        check_classification_targets(y)
        names = self._fit_costs(X.shape[1])
        penalty = self.feature_penalty_ = self.costs_.feature_cost()
        params = dict(
            boosting_type=self.boosting_type, n_estimators=self.n_estimators,
            learning_rate=self.learning_rate, num_leaves=self.num_leaves,
            max_depth=self.max_depth, min_child_samples=self.min_child_samples,
            subsample=self.subsample, subsample_freq=self.subsample_freq,
            colsample_bytree=self.colsample_bytree, reg_lambda=self.reg_lambda,
            random_state=self.random_state, n_jobs=self.n_jobs, verbose=-1,
            cegb_tradeoff=float(self.cegb_tradeoff),
            cegb_penalty_split=float(self.cegb_penalty_split),
        )
        if self.penalty in ("lazy", "both"):
            params["cegb_penalty_feature_lazy"] = penalty.tolist()
        if self.penalty in ("coupled", "both"):
            params["cegb_penalty_feature_coupled"] = penalty.tolist()
        params.update(self.lgbm_params or {})
        model = lgb.LGBMClassifier(**params).fit(X, y)
        _warn_if_no_split(model.booster_)
        self.model_ = model
        self.booster_ = model.booster_
        self.classes_ = model.classes_
        self.forest_ = (forest_from_lightgbm(model, X, y, feature_names=names, check=False)
                        if self.boosting_type == "rf" else None)
        return self

    # ------------------------------------------------------------- predicting
    def _X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, ensure_all_finite="allow-nan",
                             dtype=np.float64)

    def predict_proba(self, X):
        """LightGBM's class probabilities."""
        X = self._X(X)
        return self.model_.predict_proba(X)

    def predict(self, X):
        """LightGBM's predicted classes."""
        X = self._X(X)
        return self.model_.predict(X)

    def feature_usage(self, X):
        """Boolean (n_examples, n_features) CSR: features on each example's paths."""
        X = self._X(X)
        return lightgbm_feature_usage(self.booster_, X)

    def acquisition_cost(self, X):
        """Per-example cost of the features the model reads (each unit paid once)."""
        return self.costs_.cost_of_usage(self.feature_usage(X))

    def average_cost(self, X):
        """Mean of :meth:`acquisition_cost` over the rows of ``X``."""
        return float(self.acquisition_cost(X).mean())

    def trees(self):
        """The fitted trees as flat arrays (see :func:`lightgbm_trees`)."""
        check_is_fitted(self)
        return lightgbm_trees(self.booster_)

    def to_forest(self):
        """The random forest as a :class:`prune_opt.Forest` (``boosting_type="rf"`` only).

        Boosted trees add up raw scores and are not an averaging forest, so
        they are refused.
        """
        check_is_fitted(self)
        if self.forest_ is None:
            raise ValueError(
                f"to_forest() needs boosting_type='rf' (got {self.boosting_type!r}): boosted "
                "trees are summed, not averaged, and cannot be pruned as a forest"
            )
        return self.forest_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def cegb_curve(X_train, y_train, *, costs=None, tradeoffs=None, X_eval=None, y_eval=None,
               n_estimators=40, random_state=0, lgbm_params=None):
    """Accuracy-cost rows of LightGBM's CEGB, comparable with prune-opt's curves.

    Not a pruning: one :class:`CEGBClassifier` is trained per
    ``cegb_tradeoff`` and its acquisition cost on ``X_eval`` is counted with
    the same :class:`prune_opt.FeatureCosts` rules as every pruned forest, so
    the rows sit beside :func:`prune_opt.budget.tradeoff_curve` and
    :func:`prune_opt.budget.baseline_curve` on one plot.

    Parameters
    ----------
    X_train, y_train : array-like
        Training data of each CEGB model.
    costs : FeatureCosts, array-like or mapping, optional
    tradeoffs : sequence of float, optional
        ``cegb_tradeoff`` values (default :data:`DEFAULT_TRADEOFFS`).
    X_eval, y_eval : array-like
        Held-out data the rows are measured on (required).
    n_estimators, random_state, lgbm_params :
        Passed to :class:`CEGBClassifier`.

    Returns
    -------
    pandas.DataFrame
        Columns ``method`` ("cegb"), ``param`` (the tradeoff),
        ``average_cost``, ``accuracy_eval``, ``cost_eval``.

    Raises
    ------
    ImportError
        When lightgbm is not installed (``pip install prune-opt[lightgbm]``).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from forest_builders.cegb import cegb_curve
    >>> X, y = load_iris(return_X_y=True)
    >>> rows = cegb_curve(X, y, costs=[1, 1, 5, 5], tradeoffs=[0.0, 1.0], X_eval=X,
    ...                   y_eval=y, n_estimators=5)
    >>> list(rows["param"])
    [0.0, 1.0]
    """
    import pandas as pd

    if X_eval is None or y_eval is None:
        raise ValueError("cegb_curve needs X_eval and y_eval (the rows are measured on them)")
    y_eval = np.asarray(y_eval)
    rows = []
    for tr in DEFAULT_TRADEOFFS if tradeoffs is None else tradeoffs:
        model = CEGBClassifier(costs=costs, cegb_tradeoff=float(tr), n_estimators=n_estimators,
                               random_state=random_state, lgbm_params=lgbm_params)
        with warnings.catch_warnings():  # a constant model is the curve's cheapest end
            warnings.filterwarnings("ignore", "no tree split", UserWarning)
            model.fit(X_train, y_train)
        cost = model.average_cost(X_eval)
        rows.append({"method": "cegb", "param": float(tr), "average_cost": cost,
                     "accuracy_eval": float((model.predict(X_eval) == y_eval).mean()),
                     "cost_eval": cost})
    return pd.DataFrame.from_records(rows, columns=["method", "param", "average_cost",
                                                    "accuracy_eval", "cost_eval"])


def _warn_if_no_split(booster):
    """A model none of whose trees splits predicts the class prior for every example:
    say so instead of returning a silently constant classifier."""
    trees = booster.dump_model().get("tree_info", [])
    if trees and all(t.get("num_leaves", 1) <= 1 for t in trees):
        warnings.warn("no tree split: every split's gain was below its CEGB penalty, so the "
                      "model predicts the class prior for every example; lower cegb_tradeoff "
                      "or the costs (the penalty is charged per example per feature)",
                      UserWarning, stacklevel=4)
