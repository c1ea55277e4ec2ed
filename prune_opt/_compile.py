"""compile_problem: validate inputs, route data once, build a PruningProblem."""

from __future__ import annotations

import numpy as np

from ._costs import as_feature_costs
from ._forest import as_forest
from ._problem import PruningProblem
from ._routing import DEFAULT_CHUNK, in_bag_weights, route_costs, route_errors
from ._validation import check_features, check_labels, check_nonneg_scalar, check_weights

__all__ = ["compile_problem"]


def compile_problem(forest, X, y, *, costs=None, lam=0.0, train=None, depth_cost=0.0,
                    sample_weight=None, budget=None, merge=True, chunk_size=DEFAULT_CHUNK):
    """Compile the BudgetPrune program of a fitted forest.

    Parameters
    ----------
    forest : fitted estimator or Forest
        ``RandomForestClassifier``, ``ExtraTreesClassifier``,
        ``DecisionTreeClassifier``, a forest_builders estimator, or a Forest.
    X : array-like of shape (n_examples, n_features)
        Cost data (validation data in the paper): acquisition costs are
        averaged over these rows.  Also the error data unless ``train`` is given.
    y : array-like of shape (n_examples,)
        Labels of ``X``.
    costs : FeatureCosts, array-like or mapping, optional
        Feature acquisition costs; uniform 1.0 when omitted.
    lam : float
        Trade-off weight of the cost term (>= 0).
    train : tuple (X_train, y_train), optional
        The forest's training data.  Errors are then counted on each tree's
        in-bag bootstrap sample with multiplicity (the paper's choice).
    depth_cost : float
        Weight of the computation (depth) term inside the lam bracket.
    sample_weight : array-like, optional
        Weights of the cost-data rows.
    budget : float, optional
        Add the hard row "average acquisition cost <= budget" (breaks total
        unimodularity; for research, see :mod:`prune_opt.checks`).
    merge : bool
        Merge cost rows that reach the same leaf in every tree.
    chunk_size : int
        Rows routed at a time.

    Returns
    -------
    PruningProblem

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> problem = po.compile_problem(rf, X, y, lam=0.01)
    >>> problem.n_trees
    3
    """
    forest = as_forest(forest)
    lam = check_nonneg_scalar(lam, "lam")
    depth_cost = check_nonneg_scalar(depth_cost, "depth_cost")
    budget = check_nonneg_scalar(budget, "budget", allow_none=True)
    if not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    Xc = check_features(forest, X, name="X")
    yc = check_labels(forest, y, Xc.shape[0], name="y")
    fc = as_feature_costs(costs, forest.n_features, forest.feature_names)
    w = check_weights(sample_weight, Xc.shape[0])
    cost_routing = route_costs(forest, Xc, fc, sample_weight=w, merge=merge,
                               chunk_size=chunk_size)
    if train is None:
        err = route_errors(forest, Xc, yc, tree_weights=[w] * forest.n_trees,
                           chunk_size=chunk_size)
    else:
        if not isinstance(train, (tuple, list)) or len(train) != 2:
            raise TypeError("train must be a pair (X_train, y_train)")
        Xt = check_features(forest, train[0], name="train[0] (X_train)")
        yt = check_labels(forest, train[1], Xt.shape[0], name="train[1] (y_train)")
        bags = in_bag_weights(forest, Xt.shape[0])
        err = route_errors(forest, Xt, yt, tree_weights=bags, chunk_size=chunk_size)
    return PruningProblem(forest, fc, lam=lam, depth_cost=depth_cost,
                          node_error=err.node_error, tree_error_weight=err.tree_weight,
                          cost_routing=cost_routing, budget=budget)
