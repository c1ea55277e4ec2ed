"""What pruning a boosted model means: node values and the expanded program.

A boosted model predicts ``link(F)`` with ``F = init + sum_t f_t(x)``.  Pruning
tree ``t`` at node ``h`` replaces, for every row reaching ``h``, its leaf value
``a_i = f_t(x_i)`` by one value ``v_h``.  With the other trees fixed at the
unpruned model, the change of the model's loss on those rows is, to second
order in the raw score,

    e_h(v) = sum_{i at h} w_i [ g_i (v - a_i) + h_i (v - a_i)^2 / 2 ]

(``g_i``, ``h_i``: first and second derivatives of the loss at ``F(x_i)`` in the
tree's raw-score column).  It depends on the node alone, so the expanded loss

    L(F) + sum_t sum_{leaves h of the pruned tree t} e_h(v_h)

is a sum of per-node terms with the paper's path and feature-usage
constraints unchanged: it compiles into the same :class:`PruningProblem`
(``node_error_h = e_h + the rows' share of L(F)``), which every backend
solves exactly, and the TU and integrality checks apply.

**The node-value rule.**  A pruned node predicts the Hessian-weighted mean of
the values its subtree gives the rows reaching it,

    v_h = argmin_v  sum_{i at h} w_i h_i (v - a_i)^2  =  A_h / S_h

(``S = sum w h``, ``A = sum w h a``): the value that moves the model's raw
scores least in the loss's own curvature, i.e. the minimiser of the
expansion taken around the unpruned model as a fitted (stationary) model, as
Optimal Brain Surgeon prunes a network.  It reads no labels (the Hessian of
the squared error is constant, that of the log-loss depends on the predicted
probabilities only), so it cannot overfit the error data, and it lies
between the subtree's leaf values, so prunings of many trees cannot push a
row's raw score far in one direction: the Newton step ``A/S - G/S``, which
also fits the labels, does exactly that when the error data's Hessians
vanish, since the expansion ignores that all trees shift together.  The
labels enter through the gradient term of ``e_h``, so a subtree that hurts
the loss on the error data is still seen to.  A node no row reaches (or
whose rows all have zero Hessian) keeps the plain mean of its rows' values,
else the value the source library recorded.  See ``docs/math/boosting.md``.

All statistics are sums over rows of per-leaf moments, computed block by
block (:func:`boosting_statistics`) and then summed up the trees
(:func:`boosting_errors`), like the forests' node statistics, so the Dask path
shares them.
"""

from __future__ import annotations

import copy

import numpy as np

from .._validation import check_features, check_labels, check_weights
from ..forest._router import route_leaves
from ..routing._records import DEFAULT_CHUNK, node_levels, sum_up
from ._problem import ErrorRouting

__all__ = ["boosting_statistics", "boosting_errors", "boosting_scale", "errors_from_moments",
           "routed_error_routing",
           "fit_node_values",
           "node_value_rule", "expansion_term", "boosting_unit", "boosted_error_routing",
           "fitted_forest", "MOMENTS"]

#: the per-node moments, in column order (``a`` a row's leaf value in the tree's column)
MOMENTS = ("w", "w a", "w h", "w g", "w h a", "w g a", "w h a^2", "w loss")
_W, _WA, _S, _G, _A, _B, _Q, _LOSS = range(len(MOMENTS))
#: where each tree's change is expanded: "stagewise" (the model as it stood once the
#: tree was added, the rule) or "final" (the unpruned model, for comparison only: its
#: separable terms ignore that every tree of a row shifts its score the same way)
EXPANSION = "stagewise"


def boosting_unit(forest, y):
    """Power of two the regression targets, scores and values are divided by (1 for
    a classifier): squares of targets near 1e160 stay finite."""
    ens = forest.ensemble
    return ens.loss.unit(np.concatenate([np.asarray(y, float), forest.value[:, 0]]),
                         ens.init_score)


def _tree_columns(forest):
    """The raw-score column every tree adds to."""
    tc = forest.ensemble.tree_class
    return np.zeros(forest.n_trees, dtype=np.int64) if tc is None else tc


def boosting_statistics(forest, X, y, weight=None, *, leaves=None, unit=1.0):
    """Per-leaf moments of the rows of ``(X, y)``: (n_nodes, 8), not summed up the trees.

    Columns: :data:`MOMENTS` of the rows ending at each leaf (``a`` the leaf's
    value in its tree's column, ``g``/``h`` the loss derivatives at the unpruned
    model's raw score, ``loss`` its per-row loss); zeros at internal nodes.  Blocks of rows
    add up.  ``X`` is checked, ``y`` class indices or real targets; regression
    quantities are in units of ``unit`` (:func:`boosting_unit`).
    """
    f, ens = forest, forest.ensemble
    n = X.shape[0]
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float)
    # one row per tree: every pass below reads a tree's leaves contiguously (free for
    # leaves routed tree-major and handed on as their transposed view)
    by_tree = (route_leaves(f, X, by_tree=True) if leaves is None
               else np.ascontiguousarray(np.asarray(leaves).T))
    total = np.zeros((n, f.value_width))
    for t in range(f.n_trees):  # the model's raw score, in tree order
        total += f.value[f.tree_slice(t)][by_tree[t]]
    raw = ens.raw(total, f.n_trees)
    yy = ens.loss.targets(y, unit)
    raw_u = raw / unit
    g, h = ens.gradients(raw_u, yy)
    loss = ens.pointwise_loss(raw_u, yy)
    stats = np.zeros((f.n_nodes, len(MOMENTS)))
    cols = _tree_columns(f)
    prefix = ens.raw(np.zeros_like(total), f.n_trees) / unit
    K = f.round_size
    wloss = w * loss
    for t in range(f.n_trees):
        sl = f.tree_slice(t)
        leaf = by_tree[t]  # small unsigned ids: bincount and gathers take them as they are
        k = cols[t]
        if EXPANSION == "stagewise" and t % K == 0:
            # the model once round t // K was added (its K trees of a multiclass round
            # together, as they were grown on the same gradients): one gradient per round
            for u in range(t, min(t + K, f.n_trees)):
                prefix += f.value[f.tree_slice(u)][by_tree[u]] / unit
            g, h = ens.gradients(prefix, yy)
        size = sl.stop - sl.start
        # a row's value a is its leaf's: the moments in a are the leaf's value times
        # the sums of w, w h and w g (four sums over the rows, not eight)
        a = f.value[sl, k] / unit
        sw, sh, sg, sl_ = (np.bincount(leaf, weights=p, minlength=size)
                           for p in (w, w * h[:, k], w * g[:, k], wloss))
        stats[sl] += np.column_stack([sw, a * sw, sh, sg, a * sh, a * sg, a * a * sh, sl_])
    return stats


def node_value_rule(moments, source_value):
    """The value of every node once pruned: ``A / S``, the Hessian-weighted mean of the
    values the node's subtree gives its rows; the plain mean where their Hessians
    vanish, ``source_value`` where no row reaches the node.

    Parameters
    ----------
    moments : ndarray (n_nodes, 8)
        :func:`boosting_statistics` summed up the trees.
    source_value : ndarray (n_nodes,)
        Each node's value in its tree's column (the library's).

    Examples
    --------
    >>> import numpy as np
    >>> # two rows at the node: leaf values 0.1 and 0.4, Hessians 0.25 and 0.05
    >>> m = np.array([[2, 0.5, 0.3, 0.0, 0.045, 0.0, 0.0, 0.0]])
    >>> node_value_rule(m, np.array([0.0]))
    array([0.15])
    """
    W, WA, S, A = moments[:, _W], moments[:, _WA], moments[:, _S], moments[:, _A]
    tiny = np.finfo(float).tiny
    curved = S > 1e-12 * np.maximum(W, tiny)
    plain = np.where(W > 0, WA / np.where(W > 0, W, 1.0), source_value)
    return np.where(curved, A / np.where(curved, S, 1.0), plain)


def expansion_term(moments, v):
    """``e_h(v)``: the second-order change of the loss when every row reaching each
    node gets the value ``v`` in place of its leaf's, from the node's moments."""
    S, G, A, B, Q = (moments[:, j] for j in (_S, _G, _A, _B, _Q))
    return v * G - B + 0.5 * (v * v * S - 2.0 * v * A + Q)


def boosting_errors(forest, leaf_stats, *, unit=1.0, scale=1.0, refit=True):
    """Node errors of the expanded program and the node values they assume.

    Parameters
    ----------
    forest : Forest
        Additive.
    leaf_stats : ndarray (n_nodes, 8)
        :func:`boosting_statistics` of the error data (summed over blocks).
    unit : float
        The regression unit the statistics are in.
    scale : float
        What the node errors are divided by: the variance of the regression
        targets (in units of ``unit``, see
        :func:`~prune_opt.routing._records.regression_scale`) so that the error term is a
        normalised squared error as the ``squared_error`` objective's; 1 for a
        classifier.
    refit : bool
        Set every internal node's value by :func:`node_value_rule`; otherwise
        keep the forest's values.

    Returns
    -------
    (ErrorRouting, ndarray)
        ``node_error_h = e_h(v_h) + (the rows' loss at h) / T``, ``N_t = N / T``
        for every tree, so the paper's error term ``(1/T) sum_t err_t / N_t`` is
        the expanded mean loss (divided by the targets' variance for regression,
        ``error_scale``); and the (n_nodes, value_width) node values.
    """
    f = forest
    m = sum_up(node_levels(f), leaf_stats.copy())
    cols = _tree_columns(f)[f.tree_of_node]
    rows = np.arange(f.n_nodes)
    current = f.value[rows, cols] / unit
    internal = ~f.is_leaf
    v = node_value_rule(m, current) if refit else current
    v = np.where(internal, v, current)
    e = np.where(internal, expansion_term(m, v), 0.0)
    T = f.n_trees
    N = float(m[f.node_offset[:-1], _W].sum() / T)  # every row reaches each tree's root
    node_error = (e + m[:, _LOSS] / T) / scale
    values = f.value.copy()
    values[rows[internal], cols[internal]] = v[internal] * unit
    return (ErrorRouting(node_error=node_error, node_weight=m[:, _W],
                         tree_weight=np.full(T, N / T), error_scale=scale * unit * unit),
            values)


def fit_node_values(forest, values, n_rows):
    """A copy of ``forest`` (sharing its structure) whose node values are ``values``,
    marked as fitted on ``n_rows`` rows (see :attr:`Forest.node_value_fit`)."""
    out = copy.copy(forest)
    out.value = values
    out.node_value_fit = {"rule": "hessian-mean", "n_rows": int(n_rows)}
    return out


def boosted_error_routing(forest, X, y, weight=None, *, leaves=None, chunk_size=DEFAULT_CHUNK):
    """:class:`~prune_opt.routing._records.ErrorRouting` of a boosted forest on checked error
    data, with ``forest`` the forest whose node values the errors assume: a copy
    with values fitted by the node-value rule when ``forest``'s are still the source
    library's (:meth:`~prune_opt.forest._ensemble.Ensemble.values_to_fit`), else ``forest``
    itself.

    ``y``: class indices or real targets; ``leaves``: the rows' leaf matrix when
    already routed.  The moments are summed over blocks of ``chunk_size`` rows in
    order (as the Dask path sums its blocks: the same problem, bit for bit).
    """
    w = np.ones(X.shape[0]) if weight is None else np.asarray(weight, dtype=float)
    unit, scale = boosting_scale(forest, y, w)
    stats = np.zeros((forest.n_nodes, len(MOMENTS)))
    for a in range(0, X.shape[0], chunk_size):
        b = a + chunk_size
        stats += boosting_statistics(forest, X[a:b], y[a:b], w[a:b], unit=unit,
                                     leaves=None if leaves is None else leaves[a:b])
    return errors_from_moments(forest, stats, unit, scale, X.shape[0])


def boosting_scale(forest, y, w):
    """``(unit, scale)`` of the error data's targets: the power of two they are divided
    by (:func:`boosting_unit`) and what the node errors are divided by (the targets'
    variance for a regression loss, 1 otherwise).  In-process and Dask compiles both
    call this on all the targets."""
    unit = boosting_unit(forest, y)
    return unit, forest.ensemble.loss.error_scale(np.asarray(y, dtype=float) / unit, w)


def errors_from_moments(forest, stats, unit, scale, n_rows):
    """The :class:`ErrorRouting` of the per-leaf moments ``stats`` summed over every block
    of the error data, with the forest of its fitted node values (when ``forest``'s are
    still the source library's)."""
    refit = forest.ensemble.values_to_fit(forest)
    err, values = boosting_errors(forest, stats, unit=unit, scale=scale, refit=refit)
    err.forest = fit_node_values(forest, values, n_rows) if refit else forest
    return err


def fitted_forest(forest, X, y, *, sample_weight=None, train=None, routed=None):
    """``forest`` ready to be pruned: a boosted forest whose node values are still the
    source library's gets them fitted by the node-value rule on the error data
    (``train`` when given, else ``X``, ``y`` with ``sample_weight``); any other forest
    is returned as it is.  ``routed``: ``X`` already routed
    (:class:`~prune_opt.routing._routed.RoutedData`), read instead of routing again.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> import prune_opt as po
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> gb = GradientBoostingClassifier(n_estimators=3, max_depth=2).fit(X, y)
    >>> f = fitted_forest(po.as_forest(gb), X, y)
    >>> f.node_value_fit["n_rows"], fitted_forest(f, X, y) is f
    (569, True)
    """
    if not forest.ensemble.values_to_fit(forest):
        return forest
    if train is not None:
        if not isinstance(train, (tuple, list)) or len(train) != 2:
            raise TypeError("train must be a pair (X_train, y_train)")
        X, y, sample_weight, routed = train[0], train[1], None, None
        names = ("train[0] (X_train)", "train[1] (y_train)")
    else:
        names = ("X", "y")
    Xc = check_features(forest, X, name=names[0])
    yc = check_labels(forest, y, Xc.shape[0], name=names[1])
    w = check_weights(sample_weight, Xc.shape[0])
    if routed is None:
        return boosted_error_routing(forest, Xc, yc, w).forest
    return routed_error_routing(forest, routed, yc, w).forest


def routed_error_routing(forest, routed, y, weight):
    """:func:`boosted_error_routing` of the rows of ``routed`` (a
    :class:`~prune_opt.routing._routed.RoutedData` of the same trees), computed once per labels
    and weights and kept on it: the node-value fit and the compile read the same
    moments.  ``forest`` may be the source model or its copy with fitted node values
    (both give the same node errors)."""
    import hashlib

    key = ("loss expansion", hashlib.blake2b(np.ascontiguousarray(y).tobytes()).hexdigest(),
           None if weight is None else hashlib.blake2b(
               np.ascontiguousarray(weight, dtype=float).tobytes()).hexdigest())
    return routed.memo(key, lambda: boosted_error_routing(
        forest, routed.X, y, weight, leaves=routed.local_leaves()))


def routed_loss_expansion(forest, routed, X, y, weight, *, leaves=None,
                          chunk_size=DEFAULT_CHUNK):
    """The "loss expansion" error rule on rows already routed (``routed``): the moments
    the node-value fit summed (:func:`routed_error_routing`), unless ``forest`` already
    carries node values fitted elsewhere, whose errors those moments do not give."""
    err = routed_error_routing(forest, routed, y, weight)
    if err.forest is forest or forest.ensemble.values_to_fit(forest):
        return err
    return boosted_error_routing(forest, X, y, weight, leaves=leaves, chunk_size=chunk_size)
