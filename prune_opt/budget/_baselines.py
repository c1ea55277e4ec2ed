"""Competitors of BudgetPrune (the paper's Figure 2), with the same cost accounting.

* :func:`ccp_prunings` -- minimal cost-complexity pruning of every tree at a
  common ``alpha`` (sklearn's ``ccp_alpha`` rule applied to the fitted trees);
* :func:`greedy_prunings` -- GreedyPrune: repeatedly drop every node of the
  one feature whose removal trades the least error per unit of cost saved;
* :func:`fewer_trees_prunings` -- the first ``m`` trees (a sub-forest);
* :func:`impurity_threshold_prunings` -- BudgetRF-style early stopping: a
  node stays a split only while its impurity exceeds a threshold.

Each returns a list of ``(parameter, PrunedForest)`` pairs; the pruned
forests of the mask-based baselines live on the original forest (so
``average_cost`` is computed exactly as for BudgetPrune), the fewer-trees
ones on sub-forests of the first ``m`` trees.  :func:`baseline_curve` turns
any of them into curve rows comparable with :func:`tradeoff_curve`.
"""

from __future__ import annotations

import numpy as np

from .._forest import Forest, as_forest
from .._problem import close_under_parents
from .._pruned import PrunedForest

__all__ = ["ccp_prunings", "greedy_prunings", "fewer_trees_prunings", "cegb_curve",
           "impurity_threshold_prunings", "baseline_curve", "sub_forest", "BASELINES"]


def _levels(forest):
    """Internal node ids grouped by depth, deepest first."""
    internal = np.flatnonzero(~forest.is_leaf)
    d = forest.depth[internal]
    return [internal[d == k] for k in range(forest.max_depth, -1, -1)]


def _node_risk(forest, problem=None):
    """R(h): the resubstitution risk of node h as a leaf, per tree normalised.

    sklearn forests: impurity times weighted sample share (sklearn's own
    cost-complexity measure).  Other forests: misclassification rate of the
    compiled problem's error data.
    """
    est = forest.estimator
    if est is not None:
        trees = list(getattr(est, "estimators_", [est]))
        risk = []
        for tr in trees:
            t = tr.tree_
            w = t.weighted_n_node_samples
            risk.append(t.impurity * w / w[0])
        return np.concatenate(risk)
    if problem is None:
        raise ValueError("ccp: this forest has no sklearn estimator (no node impurities); "
                         "pass problem= (a compiled PruningProblem) to prune on its error data")
    return problem.node_error / problem.tree_error_weight[forest.tree_of_node]


def _subtree_stats(forest, risk):
    """Risk and leaf count of the full subtree under every node (bottom-up by level)."""
    r_sub = risk.copy()
    n_leaves = forest.is_leaf.astype(float)
    for ids in _levels(forest):
        r_sub[ids] = r_sub[forest.left[ids]] + r_sub[forest.right[ids]]
        n_leaves[ids] = n_leaves[forest.left[ids]] + n_leaves[forest.right[ids]]
    return r_sub, n_leaves


def ccp_mask(forest, risk, alpha):
    """Split mask of the smallest minimiser of ``R + alpha * #leaves`` in every tree.

    Bottom-up dynamic programme over levels: node h keeps its split iff its
    best subtree's value is strictly below ``R(h) + alpha``; the result is the
    subtree sklearn's weakest-link pruning returns for ``ccp_alpha=alpha``.
    """
    best = risk + alpha
    keep = np.zeros(forest.n_nodes, dtype=bool)
    for ids in _levels(forest):
        below = best[forest.left[ids]] + best[forest.right[ids]]
        # the same round-off guard sklearn uses in its pruning loop
        keep[ids] = below < best[ids] - np.finfo(float).eps * 10
        best[ids] = np.minimum(best[ids], below)
    return close_under_parents(forest, keep)


def ccp_alphas(forest, risk, n_alphas=None):
    """A grid of ``alpha`` values spanning the pruning paths.

    The effective alpha ``(R(h) - R(subtree h)) / (#leaves - 1)`` of every
    internal node of the unpruned trees (the first weakest link of each tree is
    the smallest of them; later links fall between them), plus 0 and a value
    that prunes every tree to its root; subsampled by quantile to
    ``n_alphas``.  Every alpha gives a true CCP pruning; the grid only sets how
    densely the path is sampled.
    """
    r_sub, n_leaves = _subtree_stats(forest, risk)
    internal = ~forest.is_leaf
    g = (risk[internal] - r_sub[internal]) / np.maximum(n_leaves[internal] - 1, 1)
    vals = np.unique(np.concatenate([[0.0], np.maximum(g, 0.0), [risk.max() + 1.0]]))
    if n_alphas is not None and vals.size > n_alphas:
        vals = np.unique(np.quantile(vals, np.linspace(0, 1, n_alphas)))
    return vals


def ccp_prunings(forest, *, alphas=None, n_alphas=200, costs=None, problem=None):
    """Cost-complexity pruning of every tree at a common ``alpha``.

    Parameters
    ----------
    forest : fitted estimator or Forest
    alphas : sequence of float, optional
        ``ccp_alpha`` values; default: the trees' effective weakest-link alphas
        (at most ``n_alphas``, quantile-spaced), which traces the nested
        subtrees from the whole forest down to the roots.
    n_alphas : int
    costs : FeatureCosts, array-like or mapping, optional
    problem : PruningProblem, optional
        Needed for forests without an sklearn estimator (risk = error rate on
        the problem's error data).

    Returns
    -------
    list of (alpha, PrunedForest), distinct prunings only, costliest first.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import ccp_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> path = ccp_prunings(rf)
    >>> path[0][1].n_splits > path[-1][1].n_splits == 0
    True
    """
    f = as_forest(forest)
    risk = _node_risk(f, problem)
    if alphas is None:
        alphas = ccp_alphas(f, risk, n_alphas)
    out, seen = [], set()
    for a in np.sort(np.asarray(alphas, dtype=float)):
        mask = ccp_mask(f, risk, float(a))
        key = mask.tobytes()
        if key not in seen:
            seen.add(key)
            out.append((float(a), PrunedForest(f, mask, costs=costs,
                                               solve_info={"method": "ccp", "alpha": float(a)})))
    return out


def greedy_prunings(forest, X, y, *, costs=None, train=None, problem=None):
    """GreedyPrune: remove features one at a time, every node of the feature at once.

    At each step every feature still tested is tried: all its nodes are cut
    (with their subtrees), and the feature whose removal increases the error
    term least per unit of average cost saved is removed (error and cost are
    BudgetPrune's, from the compiled problem).  The sequence ends with every
    tree cut to its root.

    Parameters
    ----------
    forest : fitted estimator or Forest
    X, y : array-like
        Cost data (and error data unless ``train`` is given).
    costs : FeatureCosts, array-like or mapping, optional
    train : tuple (X_train, y_train), optional
    problem : PruningProblem, optional
        Reuse a compiled problem.

    Returns
    -------
    list of (n_removed_features, PrunedForest), costliest first.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import greedy_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> seq = greedy_prunings(rf, X, y, costs=[1, 1, 5, 5])
    >>> [k for k, _ in seq][:2], seq[-1][1].n_splits
    ([0, 1], 0)
    """
    from .._compile import compile_problem

    if problem is None:
        problem = compile_problem(forest, X, y, costs=costs, lam=0.0, train=train)
    f = problem.forest
    mask = f.full_split_mask()
    cur = problem.evaluate(mask)
    out = [(0, PrunedForest(f, mask, costs=problem.costs, breakdown=cur,
                            solve_info={"method": "greedy", "removed": []}))]
    removed = []
    while mask.any():  # one step per feature
        feats = np.unique(f.feature[mask])
        best = None
        for k in feats:
            cand = close_under_parents(f, mask & (f.feature != k))
            bd = problem.evaluate(cand)
            saved = cur.average_cost - bd.average_cost
            d_err = bd.error_term - cur.error_term
            # ratio for cost-saving removals; free removals ranked by error alone
            score = (0, d_err / saved) if saved > 1e-15 else (1, d_err)
            if best is None or score < best[0]:
                best = (score, k, cand, bd)
        _, k, mask, cur = best
        removed.append(int(k))
        out.append((len(removed), PrunedForest(
            f, mask, costs=problem.costs, breakdown=cur,
            solve_info={"method": "greedy", "removed": list(removed)})))
    return out


def sub_forest(forest, m):
    """A Forest of the first ``m`` trees (a new forest, not a mask: the later
    trees no longer vote)."""
    f = as_forest(forest)
    if not 1 <= m <= f.n_trees:
        raise ValueError(f"m must be in [1, {f.n_trees}], got {m}")
    trees = []
    for t in range(m):
        sl = f.tree_slice(t)
        off = sl.start
        left, right = f.left[sl], f.right[sl]
        trees.append(dict(left=np.where(left >= 0, left - off, -1),
                          right=np.where(right >= 0, right - off, -1),
                          feature=f.feature[sl], threshold=f.threshold[sl], value=f.value[sl],
                          missing_go_to_left=f.missing_go_to_left[sl]))
    in_bag = None if f.in_bag is None else list(f.in_bag)[:m]
    return Forest(trees, classes=f.classes_, n_features=f.n_features,
                  feature_names=f.feature_names, in_bag=in_bag)


def fewer_trees_prunings(forest, *, sizes=None, costs=None):
    """The first ``m`` trees of the forest, for every ``m`` in ``sizes``.

    Each PrunedForest is over a sub-forest of ``m`` whole trees (see
    :func:`sub_forest`), so predictions average ``m`` trees and the
    acquisition cost counts only their features.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import fewer_trees_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    >>> [(m, p.n_trees) for m, p in fewer_trees_prunings(rf)]
    [(4, 4), (3, 3), (2, 2), (1, 1)]
    """
    f = as_forest(forest)
    sizes = range(f.n_trees, 0, -1) if sizes is None else sorted(
        {int(m) for m in sizes}, reverse=True)
    out = []
    for m in sizes:
        sub = f if m == f.n_trees else sub_forest(f, m)
        out.append((m, PrunedForest(sub, sub.full_split_mask(), costs=costs,
                                    solve_info={"method": "fewer-trees", "n_trees": m})))
    return out


def node_impurity(forest):
    """Gini impurity of every node from its class distribution."""
    v = np.asarray(forest.value, dtype=float)
    s = v.sum(axis=1, keepdims=True)
    p = v / np.where(s > 0, s, 1.0)
    return 1.0 - (p ** 2).sum(axis=1)


def impurity_threshold_prunings(forest, *, thresholds=None, n_thresholds=100, costs=None):
    """BudgetRF-style early stopping: a node stays a split only if its Gini
    impurity exceeds the threshold (and its parent is a split).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import impurity_threshold_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> seq = impurity_threshold_prunings(rf)
    >>> seq[-1][1].n_splits
    0
    """
    f = as_forest(forest)
    imp = node_impurity(f)
    internal = ~f.is_leaf
    if thresholds is None:
        vals = np.unique(np.concatenate([[-1.0], imp[internal]]))
        if vals.size > n_thresholds:
            vals = np.unique(np.quantile(vals, np.linspace(0, 1, n_thresholds)))
        thresholds = vals
    out, seen = [], set()
    for thr in np.sort(np.asarray(thresholds, dtype=float)):
        mask = close_under_parents(f, internal & (imp > thr))
        key = mask.tobytes()
        if key not in seen:
            seen.add(key)
            out.append((float(thr), PrunedForest(
                f, mask, costs=costs, solve_info={"method": "impurity", "threshold": float(thr)})))
    return out


BASELINES = {"ccp": "cost-complexity pruning", "greedy": "GreedyPrune",
             "fewer-trees": "first m trees", "impurity": "impurity-threshold early stopping"}


def baseline_curve(prunings, X, *, y=None, X_eval=None, y_eval=None, method=""):
    """Curve rows of a baseline: average cost on ``X`` (and accuracy on ``X``
    when ``y`` is given), accuracy and cost on ``(X_eval, y_eval)``.

    Returns
    -------
    pandas.DataFrame or list of dict (columns ``method``, ``param``,
    ``average_cost``, ``n_splits``, ``n_trees`` and the evaluation columns).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import baseline_curve, fewer_trees_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    >>> len(baseline_curve(fewer_trees_prunings(rf), X, method="fewer-trees"))
    2
    """
    from ._curve import to_frame

    rows = []
    for param, pf in prunings:
        r = {"method": method, "param": param, "average_cost": pf.average_cost(X),
             "n_splits": pf.n_splits, "n_trees": pf.n_trees}
        if y is not None:
            r["accuracy"] = pf.score(X, y)
        if X_eval is not None:
            r["accuracy_eval"] = pf.score(X_eval, y_eval)
            r["cost_eval"] = pf.average_cost(X_eval)
        rows.append(r)
    return to_frame(rows)


def cegb_curve(X_train, y_train, *, costs=None, tradeoffs=None, X_eval=None, y_eval=None,
               n_estimators=40, random_state=0, lgbm_params=None):
    """Accuracy-cost rows of LightGBM's cost-efficient gradient boosting (CEGB).

    Not a pruning: one CEGB model is trained per ``cegb_tradeoff`` (via
    :class:`forest_builders.cegb.CEGBClassifier`) and its acquisition cost is
    counted with the same :class:`~prune_opt.FeatureCosts` rules.

    Raises
    ------
    ImportError
        When lightgbm (or forest_builders) is not installed.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from prune_opt.budget._baselines import cegb_curve
    >>> X, y = load_iris(return_X_y=True)
    >>> rows = cegb_curve(X, y, costs=[1, 1, 5, 5], tradeoffs=[0.0, 1.0], X_eval=X,
    ...                   y_eval=y, n_estimators=5)
    >>> len(rows)
    2
    """
    from ._curve import to_frame

    try:
        from forest_builders.cegb import CEGBClassifier
    except ImportError as exc:
        raise ImportError(f"cegb needs lightgbm and forest_builders.cegb ({exc}); "
                          "pip install 'prune-opt[lightgbm]'") from exc
    if X_eval is None or y_eval is None:
        raise ValueError("cegb_curve needs X_eval and y_eval")
    if tradeoffs is None:
        tradeoffs = [0.0, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 10.0]
    rows = []
    for tr in tradeoffs:
        try:
            model = CEGBClassifier(costs=costs, cegb_tradeoff=float(tr),
                                   n_estimators=n_estimators, random_state=random_state,
                                   lgbm_params=lgbm_params).fit(X_train, y_train)
        except ImportError as exc:
            raise ImportError(f"cegb needs lightgbm ({exc}); pip install "
                              "'prune-opt[lightgbm]'") from exc
        rows.append({"method": "cegb", "param": float(tr),
                     "average_cost": model.average_cost(X_eval),
                     "accuracy_eval": float((model.predict(X_eval) == y_eval).mean()),
                     "cost_eval": model.average_cost(X_eval)})
    return to_frame(rows)
