"""Leaf refit: new class distributions for the leaves of a pruned structure.

A cut node predicts the class distribution it had in the unpruned tree.
Once the structure is fixed, those distributions can be re-estimated:

* ``method="counts"``: every node's distribution becomes the (weighted)
  class frequencies of the refit data reaching it, shrunk towards the
  original distribution by ``smoothing`` pseudo-examples
  (``(counts + s * p0) / (n + s)``; a node no row reaches keeps ``p0``);
* ``method="global"``: the leaf distributions of all trees are fitted
  jointly, minimising the forest's own (weighted) Brier loss on the refit
  data plus a ridge term ``(smoothing / T) * sum ||v - p0||^2``, every leaf
  kept a probability distribution (accelerated projected gradient; the
  result's loss is never above the original leaves').  With one tree its
  optimum is the ``"counts"`` refit.

For a regression forest the same two methods refit node means: ``"counts"``
gives each node the (weighted) mean target of the refit rows reaching it,
shrunk the same way (``(sum y + s * v0) / (n + s)``); ``"global"`` fits all
leaf means jointly to the forest's squared error (no simplex constraint).

A boosted model's leaves hold raw scores, refit by ``method="newton"``: block
coordinate descent over trees on the model's own loss (log-loss or squared
error), every leaf of a tree taking the Newton step ``-G / (H + s)`` of the
refit rows reaching it with the other trees fixed; a sweep is kept only when
it lowers the loss (else its steps are halved), so the result's loss on the
refit data is never above the original leaves'.

The structure (split mask, features, thresholds) never changes, so the
acquisition cost of every example is exactly the pruned forest's.
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp

from .._validation import check_features, check_labels, check_nonneg_scalar
from ..forest._ensemble import target_unit
from ..forest._router import route_leaves
from ..routing._records import node_levels, require_in_bag, sum_up
from ._pruned import PrunedForest

__all__ = ["refit_leaves"]

#: sweeps over the trees of the Newton refit of a boosted model
NEWTON_SWEEPS = 20


def _refit_data(pruned, X, y, in_bag, train):
    """Checked rows, class indices and per-tree weights of the refit data."""
    forest = pruned.forest
    if train is None:
        Xc = check_features(forest, X, name="X")
        return Xc, check_labels(forest, y, Xc.shape[0], name="y"), None
    if not isinstance(train, (tuple, list)) or len(train) != 2:
        raise TypeError("train must be a pair (X_train, y_train)")
    Xt = check_features(forest, train[0], name="train[0] (X_train)")
    yt = check_labels(forest, train[1], Xt.shape[0], name="train[1] (y_train)")
    if not in_bag:
        return Xt, yt, None
    bags = require_in_bag(forest, Xt.shape[0], alternative="pass in_bag=False to refit on "
                          "every row of train, or drop train= to refit on (X, y)")
    return Xt, yt, bags


def _targets(forest, y):
    """What a node's value estimates, per row: one-hot classes, or the target column."""
    if forest.task == "regression":
        return np.asarray(y, dtype=float)[:, None]
    onehot = np.zeros((y.shape[0], forest.n_classes))
    onehot[np.arange(y.shape[0]), y] = 1.0
    return onehot


def _node_counts(pruned, X, y, weights):
    """Weighted target sums (class counts, or sums of y) of the refit rows at every
    node, (n_nodes, value_width), and the weight reaching every node, (n_nodes, 1)."""
    f = pruned.forest
    target = np.column_stack([_targets(f, y), np.ones(X.shape[0])])
    sums = np.zeros((f.n_nodes, target.shape[1]))
    leaves = route_leaves(f, X)  # each node's sums: its leaves' sums, summed up the trees
    for t in range(f.n_trees):
        sl = f.tree_slice(t)
        w = target if weights is None else target * weights[t][:, None]
        leaf = leaves[:, t].astype(np.int64)
        sums[sl] = np.column_stack([np.bincount(leaf, weights=w[:, j],
                                                minlength=sl.stop - sl.start)
                                    for j in range(w.shape[1])])
    sum_up(node_levels(f), sums)
    return sums[:, :-1], sums[:, -1:]


def _project_rows_to_simplex(V):
    """Euclidean projection of every row of ``V`` onto the probability simplex."""
    u = -np.sort(-V, axis=1)
    css = np.cumsum(u, axis=1) - 1.0
    k = np.arange(1, V.shape[1] + 1)
    rho = np.count_nonzero(u - css / k > 0, axis=1)  # >= 1 for every row
    theta = css[np.arange(V.shape[0]), rho - 1] / rho
    return np.maximum(V - theta[:, None], 0.0)


def _global_values(pruned, X, y, weights, smoothing, n_iter=300):
    """Jointly refit leaf distributions: ridge Brier loss over the simplex, by FISTA.

    Minimises ``sum_i w_i ||A_i V - e_{y_i}||^2 + (s / T) ||V - V0||^2`` over
    leaf distributions ``V`` (rows on the simplex), ``A_i`` averaging row i's
    leaves.  Step ``1 / L`` with ``L`` a Gershgorin bound; the best iterate,
    never worse than ``V0``, is kept.
    """
    f = pruned.forest
    n, T = X.shape[0], f.n_trees
    leaves = pruned._stops(X).T  # (n, T) global ids of the pruned leaves
    cols, inv = np.unique(leaves, return_inverse=True)
    w = np.ones(n) if weights is None else np.column_stack(weights).mean(axis=1)
    A = sp.csr_matrix((np.full(n * T, 1.0 / T), (np.repeat(np.arange(n), T), inv.ravel())),
                      shape=(n, cols.size))
    target = _targets(f, y)
    project = (_project_rows_to_simplex if f.task == "classification"
               else (lambda V: V))  # leaf means are unconstrained
    # regression: work in units of a power of two near the targets (exact), so the
    # squared residuals of targets near 1e160 neither overflow nor underflow
    unit = target_unit(target) if f.task == "regression" else 1.0
    target = target / unit
    v0 = f.value[cols] / unit
    ridge = smoothing / T

    def loss(V):
        r = A @ V - target
        return float(w @ np.sum(r * r, axis=1) + ridge * np.sum((V - v0) ** 2))

    # Gershgorin: a row of A^T W A sums to (A^T w)_k (the rows of A sum to 1)
    step = 1.0 / (2.0 * (np.max(A.T @ w) + ridge) + 1e-300)
    best, best_loss = v0, loss(v0)
    V, Z, m = v0, v0, 1.0
    for _ in range(n_iter):
        grad = 2.0 * (A.T @ (w[:, None] * (A @ Z - target))) + 2.0 * ridge * (Z - v0)
        V_next = project(Z - step * grad)
        m_next = (1.0 + np.sqrt(1.0 + 4.0 * m * m)) / 2.0
        Z = V_next + ((m - 1.0) / m_next) * (V_next - V)
        V, m = V_next, m_next
        cur = loss(V)
        if cur < best_loss:
            best, best_loss = V, cur
    values = f.value.copy()
    values[cols] = best * unit
    return values


def _newton_values(pruned, X, y, weights, smoothing, n_sweeps=NEWTON_SWEEPS):
    """Refit a boosted model's pruned leaves on its own loss (see the module docstring):
    the node values, the loss before and after."""
    f, ens = pruned.forest, pruned.forest.ensemble
    n, T = X.shape[0], f.n_trees
    w = np.ones(n) if weights is None else np.column_stack(weights).mean(axis=1)
    w = w / w.sum()
    leaves = pruned._stops(X).T  # (n, T) global ids of the pruned leaves
    unit = ens.loss.unit(y, ens.init_score)
    yy = ens.loss.targets(y, unit)
    values = f.value / unit
    cols = np.zeros(T, dtype=np.int64) if ens.tree_class is None else ens.tree_class
    total = np.zeros((n, f.value_width))
    for t in range(T):
        total += values[leaves[:, t]]
    init = ens.init_score / unit

    def loss(tot):
        return float(w @ ens.pointwise_loss(tot + init, yy))

    start = best = loss(total)
    step_scale = 1.0
    for _ in range(n_sweeps):
        trial_values, trial_total = values.copy(), total.copy()
        for t in range(T):
            k, leaf = cols[t], leaves[:, t]
            g, h = ens.gradients(trial_total + init, yy)
            nodes, inv = np.unique(leaf, return_inverse=True)
            G = np.bincount(inv, weights=w * g[:, k])
            H = np.bincount(inv, weights=w * h[:, k])
            step = step_scale * -G / (H + smoothing / n + 1e-12)
            trial_values[nodes, k] += step
            trial_total[:, k] += step[inv]
        cur = loss(trial_total)
        if cur < best - 1e-12 * max(1.0, abs(best)):
            values, total, best = trial_values, trial_total, cur
            step_scale = min(1.0, 2.0 * step_scale)
        else:
            step_scale /= 2.0
            if step_scale < 1e-4:
                break
    return values * unit, {"loss_before": start, "loss_after": best}


def _count_values(pruned, X, y, weights, smoothing):
    """Every node's (weighted) class frequencies or mean target of the refit rows
    reaching it, shrunk towards its original value by ``smoothing`` pseudo-rows."""
    f = pruned.forest
    # regression: sums of targets near 1e308 overflow; work in units of a power of two
    unit = target_unit(y) if f.task == "regression" else 1.0
    counts, n = _node_counts(pruned, X, y / unit if unit != 1.0 else y, weights)
    v0 = f.value / unit
    shrunk = (counts + smoothing * v0) / np.where(n + smoothing > 0, n + smoothing, 1.0)
    return np.where(n > 0, shrunk * unit, f.value), {}


#: the refit methods: (pruned, X, y, weights, smoothing) -> (node values, info); the
#: ensemble kind says which apply to its node values (``refit_methods()``)
METHODS = {"counts": _count_values,
           "global": lambda *a: (_global_values(*a), {}),
           "newton": _newton_values}


def refit_leaves(pruned, X, y, *, in_bag=True, train=None, smoothing=0.0, method=None):
    """A new PrunedForest whose leaves are re-estimated on data; same structure and cost.

    Parameters
    ----------
    pruned : PrunedForest
    X, y : array-like
        Refit data when ``train`` is not given.
    in_bag : bool, default True
        With ``train``: weight each tree's rows by their in-bag multiplicity
        (each tree refits on its own bootstrap sample).  False uses every row
        of ``train`` for every tree.
    train : tuple (X_train, y_train), optional
        The forest's training data; refit on it instead of ``(X, y)``.
    smoothing : float, default 0.0
        Pseudo-examples pulling each distribution towards the original one
        (``method="counts"``), the ridge weight (``method="global"``), or the
        Hessian added to every Newton step's denominator, in rows
        (``method="newton"``).
    method : {"counts", "global", "newton"}, optional
        Per-node class frequencies, a joint least-squares fit of all leaf
        distributions to the forest's Brier loss, or (boosted models, their
        default and only method) Newton block descent on the model's own loss (see
        the module docstring).  Default: "counts" for a forest, "newton" for a
        boosted model.

    Returns
    -------
    PrunedForest
        Same split mask, costs and ``feature_encoding``; ``forest.value`` holds the refit
        distributions, so ``predict_proba`` and ``to_sklearn()`` use them.
        ``solve_info["refit"]`` records the method; ``objective`` is None
        (the paper's error term changes with the leaves).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import numpy as np
    >>> import prune_opt as po
    >>> from prune_opt.model._refit import refit_leaves
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> pruned = po.prune(rf, X, y, costs=[1, 1, 5, 5], lam=0.02, train=(X, y))
    >>> same = refit_leaves(pruned, None, None, train=(X, y))   # the leaves' own data
    >>> bool(np.allclose(same.predict_proba(X), pruned.predict_proba(X)))
    True
    >>> refit = refit_leaves(pruned, X, y, smoothing=1.0)
    >>> bool(np.array_equal(refit.acquisition_cost(X), pruned.acquisition_cost(X)))
    True
    """
    if not isinstance(pruned, PrunedForest):
        raise TypeError(f"pruned must be a PrunedForest (from prune_opt.prune or fit_budget), "
                        f"got {type(pruned).__name__}")
    f = pruned.forest
    applies = f.ensemble.refit_methods()
    if method is None:
        method = applies[0]
    if method not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}, got {method!r}")
    if method not in applies:
        raise ValueError(f"method={method!r} does not refit this model's node values (they "
                         f"hold {'raw scores' if f.ensemble.has_raw_score else 'predictions'}"
                         f"): use one of {applies}")
    smoothing = check_nonneg_scalar(smoothing, "smoothing")
    Xr, yr, weights = _refit_data(pruned, X, y, in_bag, train)
    values, info = METHODS[method](pruned, Xr, yr, weights, smoothing)
    forest = copy.copy(f)  # shares every structure array; only the leaf values differ
    forest.value = values
    out = PrunedForest(forest, pruned.split_mask, costs=pruned.costs, lam=pruned.lam,
                       feature_encoding=pruned.feature_encoding,  # same table, same coding
                       solve_info={**pruned.solve_info,
                                   "refit": {"method": method, "smoothing": smoothing,
                                             "in_bag": bool(in_bag and train is not None),
                                             "n_rows": int(Xr.shape[0]), **info}})
    out.estimator_class = pruned.estimator_class  # the recorded one, even when None
    return out
