"""Competitors of BudgetPrune (the paper's Figure 2), with the same cost accounting.

* :func:`ccp_prunings` -- minimal cost-complexity pruning of every tree at a
  common ``alpha`` (sklearn's ``ccp_alpha`` rule applied to the fitted trees);
* :func:`greedy_prunings` -- GreedyPrune: repeatedly drop every node of the
  one feature whose removal trades the least error per unit of cost saved;
* :func:`fewer_trees_prunings` -- the first ``m`` trees (a sub-forest);
* :func:`impurity_threshold_prunings` -- BudgetRF-style early stopping: a
  node stays a split only while its impurity exceeds a threshold (Gini
  impurity; for a regression forest the node's target variance).

Each returns a list of ``(parameter, PrunedForest)`` pairs; the pruned
forests of the mask-based baselines live on the original forest (so
``average_cost`` is computed exactly as for BudgetPrune), the fewer-trees
ones on sub-forests of the first ``m`` trees.  :func:`baseline_curve` turns
any of them into curve rows comparable with :func:`tradeoff_curve`.

:data:`BASELINES` is the one registry of them (name -> function with the
common signature ``(forest, X, y, *, costs=None, problem=None)``); the CLI
and the benchmarks dispatch through it.  A grower-based competitor that is
not a pruning (LightGBM's CEGB) lives with its grower, in
``forest_builders.cegb.cegb_curve``.
"""

from __future__ import annotations

import numpy as np

from .._compile import compile_problem
from .._forest import Forest, as_forest
from .._frames import records_frame
from .._problem import close_under_parents
from .._pruned import PrunedForest
from .._routing import node_moments
from .._validation import check_labels

__all__ = ["ccp_prunings", "greedy_prunings", "fewer_trees_prunings",
           "impurity_threshold_prunings", "baseline_curve", "sub_forest", "BASELINES",
           "get_baseline"]


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


def _distinct_prunings(forest, params, mask_of, costs, info):
    """``(param, PrunedForest)`` for each parameter whose mask is new (in order)."""
    out, seen = [], set()
    for param in params:
        mask = mask_of(param)
        key = mask.tobytes()
        if key not in seen:
            seen.add(key)
            out.append((param, PrunedForest(forest, mask, costs=costs,
                                            solve_info=info(param))))
    return out


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
    return _distinct_prunings(
        f, [float(a) for a in np.sort(np.asarray(alphas, dtype=float))],
        lambda a: ccp_mask(f, risk, a), costs, lambda a: {"method": "ccp", "alpha": a})


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
                  feature_names=f.feature_names, in_bag=in_bag, task=f.task)


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
                                    solve_info={"method": "fewer-trees", "n_trees": m},
                                    estimator_class=None if f.estimator is None
                                    else type(f.estimator).__name__)))
    return out


def node_impurity(forest, X=None, y=None):
    """Impurity of every node: Gini impurity of its class distribution, or, for a
    regression forest, its target variance.

    A regression forest built from scikit-learn trees uses the training
    impurity its trees carry (the variance for the squared-error criteria, else
    the criterion's own impurity: absolute error, Poisson deviance); other
    regression forests need the data ``(X, y)`` to measure the variance on.
    """
    if forest.task == "regression":
        return _node_variance(forest, X, y)
    v = np.asarray(forest.value, dtype=float)
    s = v.sum(axis=1, keepdims=True)
    p = v / np.where(s > 0, s, 1.0)
    return 1.0 - (p ** 2).sum(axis=1)


def _node_variance(forest, X, y):
    est = forest.estimator
    if est is not None:
        trees = list(getattr(est, "estimators_", [est]))
        return np.concatenate([tr.tree_.impurity for tr in trees]).astype(float)
    if X is None or y is None:
        raise ValueError("impurity: this regression forest carries no node variances (it "
                         "was not built from scikit-learn trees); pass X and y to measure "
                         "them on data")
    Xc = forest.check_X(X)
    m = node_moments(forest, Xc, check_labels(forest, y, Xc.shape[0]))
    n = np.where(m[:, 0] > 0, m[:, 0], 1.0)
    return np.maximum(m[:, 2] / n - (m[:, 1] / n) ** 2, 0.0)


def impurity_threshold_prunings(forest, *, thresholds=None, n_thresholds=100, costs=None,
                                X=None, y=None):
    """BudgetRF-style early stopping: a node stays a split only if its impurity
    (Gini; the target variance for a regression forest, see
    :func:`node_impurity`) exceeds the threshold (and its parent is a split).

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
    imp = node_impurity(f, X, y)
    internal = ~f.is_leaf
    if thresholds is None:
        vals = np.unique(np.concatenate([[-1.0], imp[internal]]))
        if vals.size > n_thresholds:
            vals = np.unique(np.quantile(vals, np.linspace(0, 1, n_thresholds)))
        thresholds = vals
    return _distinct_prunings(
        f, [float(t) for t in np.sort(np.asarray(thresholds, dtype=float))],
        lambda thr: close_under_parents(f, internal & (imp > thr)), costs,
        lambda thr: {"method": "impurity", "threshold": thr})


def _ccp(forest, X, y, *, costs=None, problem=None):
    """Cost-complexity pruning of every tree at a common alpha."""
    return ccp_prunings(forest, costs=costs, problem=problem)


def _greedy(forest, X, y, *, costs=None, problem=None):
    """GreedyPrune: drop the feature with the least error per cost saved."""
    return greedy_prunings(forest, X, y, costs=costs, problem=problem)


def _fewer_trees(forest, X, y, *, costs=None, problem=None):
    """The first m trees."""
    return fewer_trees_prunings(forest, costs=costs)


def _impurity(forest, X, y, *, costs=None, problem=None):
    """Impurity-threshold early stopping (BudgetRF style)."""
    return impurity_threshold_prunings(forest, costs=costs, X=X, y=y)


#: The baseline registry: name -> function ``(forest, X, y, *, costs=None,
#: problem=None)`` returning ``(parameter, PrunedForest)`` pairs, costliest
#: first.  Adding a baseline is one function and one line here.
BASELINES = {"ccp": _ccp, "greedy": _greedy, "fewer-trees": _fewer_trees,
             "impurity": _impurity}


def get_baseline(name):
    """The registered baseline function called ``name``.

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import get_baseline
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    >>> [m for m, _ in get_baseline("fewer-trees")(rf, X, y)]
    [2, 1]
    """
    try:
        return BASELINES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown baseline {name!r}; known baselines: "
                         f"{', '.join(BASELINES)}") from None


def baseline_curve(prunings, X, *, y=None, X_eval=None, y_eval=None, method=""):
    """Curve rows of a baseline: average cost on ``X`` (and accuracy on ``X``
    when ``y`` is given), accuracy and cost on ``(X_eval, y_eval)``.

    For regression forests the score columns hold R^2 and are named ``r2``
    and ``r2_eval`` instead of ``accuracy`` and ``accuracy_eval``.

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``param``, ``average_cost``, ``n_splits``,
        ``n_trees``, plus ``accuracy`` when ``y`` is given and
        ``accuracy_eval``, ``cost_eval`` when ``X_eval`` is given.

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
    if (X_eval is None) != (y_eval is None):
        raise ValueError("X_eval and y_eval must be given together")
    regression = bool(prunings) and prunings[0][1].forest.task == "regression"
    score = "r2" if regression else "accuracy"
    rows = []
    for param, pf in prunings:
        r = {"method": method, "param": param, "average_cost": pf.average_cost(X),
             "n_splits": pf.n_splits, "n_trees": pf.n_trees}
        if y is not None:
            r[score] = pf.score(X, y)
        if X_eval is not None:
            r[f"{score}_eval"] = pf.score(X_eval, y_eval)
            r["cost_eval"] = pf.average_cost(X_eval)
        rows.append(r)
    columns = ["method", "param", "average_cost", "n_splits", "n_trees"]
    columns += ([score] if y is not None else []) + (
        [f"{score}_eval", "cost_eval"] if X_eval is not None else [])
    return records_frame(rows, columns=columns)
