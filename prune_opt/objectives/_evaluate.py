"""From-scratch evaluation of an ensemble objective (the optimiser's referee)."""

from __future__ import annotations

import numpy as np

from .._pruned import PrunedForest
from .._validation import check_labels, check_nonneg_scalar, check_weights
from ._base import check_objective_task, get_objective

__all__ = ["evaluate_objective"]


def evaluate_objective(pruned, X, y, *, objective, lam, depth_cost=0.0, sample_weight=None):
    """Objective of a pruned forest computed from its predictions, nothing cached.

    ``loss + lam * (average acquisition cost + depth_cost * average depth)``,
    where the loss is the (weighted) mean of the objective's per-example loss
    of ``pruned.predict_proba(X)`` and the cost is what
    :meth:`PrunedForest.acquisition_cost` charges (every unit once per row).

    Parameters
    ----------
    pruned : PrunedForest
    X, y : array-like
    objective : str or Objective
    lam, depth_cost : float
    sample_weight : array-like, optional

    Returns
    -------
    dict with ``objective``, ``loss``, ``average_cost``, ``average_depth``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> f = po.Forest.from_sklearn(rf)
    >>> root_only = po.PrunedForest(f, f.full_split_mask() & False)
    >>> evaluate_objective(root_only, X, y, objective="brier", lam=1.0)["average_cost"]
    0.0
    """
    if not isinstance(pruned, PrunedForest):
        raise TypeError(f"pruned must be a PrunedForest, got {type(pruned).__name__}")
    obj = get_objective(objective)
    lam = check_nonneg_scalar(lam, "lam")
    depth_cost = check_nonneg_scalar(depth_cost, "depth_cost")
    f = pruned.forest
    check_objective_task(obj, f)
    Xc = f.check_X(X)
    yc = check_labels(f, y, Xc.shape[0])
    w = check_weights(sample_weight, Xc.shape[0])
    if w.sum() <= 0:
        raise ValueError("sample_weight sums to zero; pass positive weights")
    w = w / w.sum()
    obj = obj.for_data(yc, w)
    leaf_values, depth = [], np.zeros(Xc.shape[0])
    for t in range(f.n_trees):
        leaves, ind, split = pruned._pruned_leaves(Xc, t)
        leaf_values.append(f.value[leaves + f.node_offset[t]])
        depth += np.add.reduceat(split.astype(float), ind.indptr[:-1])
    if obj.separable:
        loss = obj.total(leaf_values, yc, w)
    else:
        pred = (pruned.predict(Xc)[:, None] if f.task == "regression"
                else pruned.predict_proba(Xc))
        loss = float(w @ obj.loss(pred, yc))
    cost = float(w @ pruned.acquisition_cost(Xc))
    avg_depth = float(w @ depth)
    return {"objective": loss + lam * (cost + depth_cost * avg_depth), "loss": loss,
            "average_cost": cost, "average_depth": avg_depth}
