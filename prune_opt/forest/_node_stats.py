"""The training statistics scikit-learn keeps per node, for forests that do not have them.

A fitted scikit-learn tree records, for every node, how many training rows
reached it (``n_node_samples``), their total weight
(``weighted_n_node_samples``) and their impurity (``impurity``); its
``feature_importances_`` are computed from them.  :meth:`Forest.from_sklearn`
copies them into ``Forest.node_stats``; a forest grown by other code (the
growers of ``forest_builders``, a LightGBM import) gets them here, from the
rows it was grown on, when it is built.  ``PrunedForest.save`` keeps them
and ``to_sklearn()`` hands them on, so the exported importances mean the
same thing wherever the forest came from.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_labels
from ._forest import NODE_STATS

__all__ = ["training_node_stats"]


def training_node_stats(forest, X, y, sample_weight=None):
    """``{name: ndarray (n_nodes,)}`` of :data:`NODE_STATS` from the training rows.

    Each tree counts its in-bag rows with their multiplicity when the forest
    records them (``forest.in_bag``), else every row once, times
    ``sample_weight``.  The impurity is the Gini impurity of the weighted class
    counts (classification) or the weighted variance of the targets
    (regression), scikit-learn's default criteria.

    Parameters
    ----------
    forest : Forest
    X : array-like of shape (n_rows, n_features)
        The rows the forest was grown on.
    y : array-like of shape (n_rows,)
        Their labels (one of ``forest.classes_``) or targets.
    sample_weight : array-like of shape (n_rows,), optional

    Returns
    -------
    dict

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> from prune_opt.forest._node_stats import training_node_stats
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[1, 1], [1, 0], [0, 1]])
    >>> f = Forest([stump], classes=[0, 1], n_features=1)
    >>> stats = training_node_stats(f, [[0.0], [1.0], [1.0], [0.2]], [0, 1, 1, 1])
    >>> stats["weighted_n_node_samples"].tolist(), stats["impurity"].tolist()
    ([4.0, 2.0, 2.0], [0.375, 0.5, 0.0])
    """
    Xc = forest.check_X(X)
    n = Xc.shape[0]
    codes = check_labels(forest, y, n)
    base = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    out = {k: np.zeros(forest.n_nodes) for k in NODE_STATS}
    for t in range(forest.n_trees):
        w = base if forest.in_bag is None else base * np.asarray(forest.in_bag[t], float)
        paths = forest.decision_paths(Xc, t).astype(float).T.tocsr()  # nodes x rows
        sl = forest.tree_slice(t)
        out["n_node_samples"][sl] = paths @ (w > 0).astype(float)
        total = paths @ w
        out["weighted_n_node_samples"][sl] = total
        out["impurity"][sl] = _impurity(forest, paths, w, codes, total)
    out["n_node_samples"] = out["n_node_samples"].round().astype(np.int64)
    return out


def _impurity(forest, paths, w, codes, total):
    """Gini impurity of the weighted class counts, or the weighted target variance
    (targets in units of a power of two near their magnitude: squares of 1e160
    would overflow), of every node of one tree."""
    safe = np.where(total > 0, total, 1.0)
    if forest.task == "regression":
        top = float(np.max(np.abs(codes), initial=0.0))
        unit = 2.0 ** np.floor(np.log2(top)) if 0.0 < top < np.inf else 1.0
        z = codes / unit
        mean = (paths @ (w * z)) / safe
        var = np.maximum((paths @ (w * z * z)) / safe - mean ** 2, 0.0)
        with np.errstate(over="ignore"):  # beyond float64 only for targets near 1e308
            return var * unit * unit
    onehot = np.zeros((codes.size, forest.n_classes))
    onehot[np.arange(codes.size), codes] = w
    counts = np.asarray(paths @ onehot) / safe[:, None]
    return 1.0 - np.sum(counts ** 2, axis=1)
