"""Random forest whose trees coordinate features through CEGB's lazy per-example penalty.

An example pays for a feature once, however many trees test it.  A random
forest's trees are grown independently, so they spread over many features
and every example ends up paying for most of them; pruning cannot undo that.
:class:`LazyCostRandomForestClassifier` grows the trees one after another
(bootstrap and per-node feature sampling as in a random forest) and carries
the lazy feature penalty of cost-efficient gradient boosting (Peter, Diego,
Hamprecht and Nadler, NIPS 2017; LightGBM's ``cegb_penalty_feature_lazy``)
across them: every training example keeps the acquisition units it has
already paid -- in earlier trees (all training rows are routed through every
finished tree) and higher up its path in the current tree -- and a split on
feature ``f`` scores

    impurity decrease - tradeoff * sum over the node's examples of the cost
    of the units of f that example has not paid yet.

A split whose impurity decrease does not cover its penalty is not made.  Later
trees therefore prefer what each example already pays for.  Costs are
:class:`prune_opt.FeatureCosts` units, so shared groups (a blood draw) and
derived features (``requires``) are charged exactly once per example.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import (
    MAX_FEATURES_CONSTRAINT,
    ArrayForestClassifier,
    CostAwareClassifier,
    bootstrap_weights,
    resolve_max_features,
)
from ._impurity import get_impurity
from ._lazy_tree import LazyTreeSpec, grow_lazy_tree, mark_paid

__all__ = ["LazyCostRandomForestClassifier"]


class LazyCostRandomForestClassifier(ArrayForestClassifier):
    """Random forest grown tree by tree under a per-example lazy feature penalty.

    Parameters
    ----------
    n_estimators : int, default 100
    tradeoff : float, default 0.1
        Weight of the penalty against the count-weighted impurity decrease.
        Both are sums over the node's (bootstrap-weighted) examples and costs
        are divided by the mean cost of a feature used alone, so ``tradeoff``
        is the impurity decrease per example that buys a feature of average
        cost, whatever the cost scale.  0 grows a plain random forest
        (exhaustive thresholds).
    costs : FeatureCosts, array-like, mapping or None
        Acquisition costs (uniform 1.0 when None).
    criterion : {"gini", "entropy"}, default "gini"
    carry_across_trees : bool, default True
        Carry the units each example paid in earlier trees (the coordination).
        False penalises only units not yet paid on the path (an ablation).
    stop_on_penalty : bool, default False
        CEGB's rule: a node whose best split does not pay for its penalty
        becomes a leaf.  False always splits (on the best penalised
        candidate), so the penalty only steers which features the trees use
        and the depth is left to pruning.
    max_features : {"sqrt", "log2"}, int, float or None, default "sqrt"
    max_depth : int or None
    min_samples_split : float, default 2
    bootstrap : bool, default True
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_ : ndarray
    n_classes_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray, only when X has string column names
    forest_ : prune_opt.Forest
    n_estimators_ : int
    in_bag_ : list of ndarray
        Bootstrap multiplicities of every tree.
    costs_ : prune_opt.FeatureCosts
    train_paid_cost_ : ndarray (n_estimators,)
        Average cost the training examples have paid after each tree.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> import prune_opt as po
    >>> from forest_builders import LazyCostRandomForestClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> rf = LazyCostRandomForestClassifier(n_estimators=10, tradeoff=0.0,
    ...                                     random_state=0).fit(X, y)
    >>> lazy = LazyCostRandomForestClassifier(n_estimators=10, tradeoff=0.05,
    ...                                       random_state=0).fit(X, y)
    >>> bool(lazy.acquisition_cost(X).mean() < rf.acquisition_cost(X).mean())
    True
    >>> pruned = po.prune(lazy, X, y, lam=0.01, train=(X, y))
    >>> pruned.to_sklearn().predict(X[:2]).tolist() == pruned.predict(X[:2]).tolist()
    True
    """

    _parameter_constraints: dict = {
        **CostAwareClassifier._parameter_constraints,
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "tradeoff": [Interval(Real, 0, np.inf, closed="left")],
        "criterion": [StrOptions({"gini", "entropy"})],
        "carry_across_trees": ["boolean"],
        "stop_on_penalty": ["boolean"],
        "max_features": MAX_FEATURES_CONSTRAINT,
        "min_samples_split": [Interval(Real, 2, None, closed="left")],
        "bootstrap": ["boolean"],
    }

    def __init__(self, n_estimators=100, *, tradeoff=0.1, costs=None, criterion="gini",
                 carry_across_trees=True, stop_on_penalty=False, max_features="sqrt", max_depth=None,
                 min_samples_split=2, bootstrap=True, random_state=None):
        self.n_estimators = n_estimators
        self.tradeoff = tradeoff
        self.costs = costs
        self.criterion = criterion
        self.carry_across_trees = carry_across_trees
        self.stop_on_penalty = stop_on_penalty
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.bootstrap = bootstrap
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Grow the trees one after another, carrying each example's paid units.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; NaN is allowed (routed to the right child).
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y_enc, _ = self._fit_data(X, y)
        fu = self.costs_.feature_units.toarray().astype(bool)
        scale = float(self.costs_.feature_cost().mean())
        spec = LazyTreeSpec(get_impurity(self.criterion), fu,
                            self.costs_.unit_costs / (scale if scale > 0 else 1.0), self.tradeoff,
                            max_features=resolve_max_features(self.max_features, X.shape[1]),
                            max_depth=self.max_depth, min_samples_split=self.min_samples_split,
                            stop_on_penalty=self.stop_on_penalty)
        seeds = check_random_state(self.random_state).randint(0, 2**31 - 1, self.n_estimators)
        trees, bags, paid_cost = self._grow(spec, X, y_enc, seeds)
        self.train_paid_cost_ = np.asarray(paid_cost)
        return self._finish(trees, bags, X, y_enc)

    def _grow(self, spec, X, y, seeds):
        n = X.shape[0]
        paid = np.zeros((n, spec.unit_costs.size), dtype=bool)
        no_history = np.zeros_like(paid)
        trees, bags, paid_cost = [], [], []
        for seed in seeds:  # sequential: each tree sees what the earlier ones made paid
            rng = np.random.default_rng(int(seed))
            w = bootstrap_weights(rng, n, self.bootstrap)
            history = paid if self.carry_across_trees else no_history
            tree = grow_lazy_tree(spec, X, y, w, self.n_classes_, history, rng)
            mark_paid(tree, X, spec.feature_units, paid)
            trees.append(tree)
            bags.append(w.astype(np.int64))
            paid_cost.append(float((paid @ self.costs_.unit_costs).mean()))
        return trees, bags, paid_cost
