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
common signature ``(forest, X, y, *, costs=None, problem=None)``), a view of
the mask families the budget search and ``fit_budget`` seed from; the CLI
and the benchmarks dispatch through it, and :func:`register_baseline` adds
a family to all of them.  A grower-based competitor that is
not a pruning (LightGBM's CEGB) lives with its grower, in
``forest_builders.cegb.cegb_curve``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._frames import records_frame
from .._validation import check_labels
from ..forest._forest import as_forest
from ..model._pruned import PrunedForest
from ..program._compile import compile_problem
from ..routing._routed import NestedScorer, RoutedData
from ._mask_families import (
    CCP_ALPHAS,
    IMPURITY_THRESHOLDS,
    MASK_FAMILIES,
    ccp_path,
    feature_prefix_path,
    greedy_path,
    impurity_path,
    node_impurity,
    node_risk,
    register_baseline,
    sklearn_risk,
)

__all__ = ["ccp_prunings", "greedy_prunings", "fewer_trees_prunings", "feature_prefix_prunings",
           "impurity_threshold_prunings", "baseline_curve", "sub_forest", "BASELINES",
           "get_baseline", "register_baseline"]


def _prunings(forest, path, costs, method, param):
    """``(param, PrunedForest)`` of each member of a baseline's ``(params, masks)``."""
    return [(v, PrunedForest(forest, mask, costs=costs, solve_info={"method": method, param: v}))
            for v, mask in zip(*path)]


def ccp_prunings(forest, *, alphas=None, n_alphas=CCP_ALPHAS, costs=None, problem=None):
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
    f = as_forest(forest) if problem is None else problem.forest  # (a booster's: fitted)
    return _prunings(f, ccp_path(f, node_risk(f, problem), alphas, n_alphas),
                     _costs_of(costs, problem), "ccp", "alpha")


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
    problem = _compiled(problem, forest, X, y, costs, train)
    masks, removed = greedy_path(problem)
    return _feature_prunings(problem, "greedy", range(len(masks)), masks,
                             [{"removed": removed[:i]} for i in range(len(masks))])


def _compiled(problem, forest, X, y, costs, train):
    """``problem``, or the program of ``forest`` compiled on ``(X, y)`` at lam 0."""
    if problem is None:
        problem = compile_problem(forest, X, y, costs=costs, lam=0.0, train=train)
    return problem


def _feature_prunings(problem, method, params, masks, infos):
    """``[(param, PrunedForest)]`` of a family of masks that removes features, each
    with its breakdown and what it removed or kept."""
    return [(p, PrunedForest(problem.forest, mask, costs=problem.costs,
                             breakdown=problem.evaluate(mask),
                             solve_info={"method": method, **info}))
            for p, mask, info in zip(params, masks, infos)]


def sub_forest(forest, m):
    """A Forest of the first ``m`` trees, or of the trees listed in ``m`` (in order):
    a new forest, not a mask, so the other trees no longer vote (for a booster: the
    model truncated to those trees, initial score and link kept; see
    :meth:`~prune_opt.Forest.select_trees`)."""
    f = as_forest(forest)
    if np.ndim(m) == 0 and not 1 <= m <= f.n_trees:
        raise ValueError(f"m must be in [1, {f.n_trees}], got {m}")
    keep = list(range(m)) if np.ndim(m) == 0 else [int(t) for t in m]
    sub = f.select_trees(keep)
    sub._sub_forest_of = (f, tuple(keep))  # baseline_curve scores it on f's routing
    return sub


def fewer_trees_prunings(forest, *, sizes=None, costs=None):
    """The first ``m`` trees of the forest, for every ``m`` in ``sizes``.

    Each PrunedForest is over a sub-forest of ``m`` whole trees (see
    :func:`sub_forest`), so predictions average ``m`` trees and the
    acquisition cost counts only their features.  For a booster these are its
    first rounds ("fewer rounds": the model truncated as the libraries'
    ``num_iteration`` does); ``m`` counts trees, a multiple of the trees per
    round (the classes of a multiclass booster), default every round.

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
    step = f.round_size
    sizes = range(f.n_trees, 0, -step) if sizes is None else sorted(
        {int(m) for m in sizes}, reverse=True)
    if any(m % step for m in sizes):
        raise ValueError(f"sizes: this booster grows {step} trees per round (one per class); "
                         f"keep whole rounds (multiples of {step})")
    out = []
    for m in sizes:
        sub = f if m == f.n_trees else sub_forest(f, m)
        out.append((m, PrunedForest(sub, sub.full_split_mask(), costs=costs,
                                    solve_info={"method": "fewer-trees", "n_trees": m},
                                    estimator_class=f.source)))
    return out


def impurity_threshold_prunings(forest, *, thresholds=None, n_thresholds=IMPURITY_THRESHOLDS,
                                costs=None, X=None, y=None):
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
    path = impurity_path(f, node_impurity(f, X, y), thresholds, n_thresholds)
    return _prunings(f, path, costs, "impurity", "threshold")


def _costs_of(costs, problem):
    """The costs a baseline's prunings are measured with: ``costs``, else the
    problem's (not one per feature when a problem is given)."""
    return problem.costs if costs is None and problem is not None else costs


def _ccp(forest, X, y, *, costs=None, problem=None):
    """Cost-complexity pruning of every tree at a common alpha (on the error data of
    ``X, y`` for a forest without scikit-learn's impurities, a booster's included)."""
    if problem is None and not sklearn_risk(as_forest(forest)):
        problem = compile_problem(forest, X, y, costs=costs, lam=0.0)
    return ccp_prunings(forest, costs=costs, problem=problem)


def feature_prefix_prunings(forest, X, y, *, costs=None, train=None, problem=None):
    """Keep only the splits on the first j features of one ranking, for every j.

    The features are ranked once by the error term their removal adds per unit
    of their cost (GreedyPrune's first step, without its later re-ranking), and
    the j-th member keeps the splits whose root path tests only the first j
    features (the costliest member keeps them all, the last none): a quick
    family that is strong when the budget leaves room for a few features only.

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
    list of (n_features_kept, PrunedForest), costliest first.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import feature_prefix_prunings
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> seq = feature_prefix_prunings(rf, X, y, costs=[1, 1, 5, 5])
    >>> [k for k, _ in seq], seq[-1][1].n_splits
    ([4, 3, 2, 1, 0], 0)
    """
    problem = _compiled(problem, forest, X, y, costs, train)
    masks, kept, order = feature_prefix_path(problem)
    return _feature_prunings(problem, "feature-prefix", kept, masks,
                             [{"kept": order[:j]} for j in kept])


def _feature_prefix(forest, X, y, *, costs=None, problem=None):
    """Keep only the splits on the first features of a ranking by error per cost."""
    return feature_prefix_prunings(forest, X, y, costs=costs, problem=problem)


def _greedy(forest, X, y, *, costs=None, problem=None):
    """GreedyPrune: drop the feature with the least error per cost saved."""
    return greedy_prunings(forest, X, y, costs=costs, problem=problem)


def _fewer_trees(forest, X, y, *, costs=None, problem=None):
    """The first m trees."""
    return fewer_trees_prunings(forest, costs=_costs_of(costs, problem))


def _impurity(forest, X, y, *, costs=None, problem=None):
    """Impurity-threshold early stopping (BudgetRF style)."""
    return impurity_threshold_prunings(forest, costs=_costs_of(costs, problem), X=X, y=y)


# the registered families with a parameter-rich PrunedForest sequence of their own
# (fewer-trees: sub-forests of m trees); any other family is wrapped by _from_family
_SEQUENCES = {"ccp": _ccp, "greedy": _greedy, "fewer-trees": _fewer_trees,
              "impurity": _impurity, "feature-prefix": _feature_prefix}


def _from_family(name):
    def prunings(forest, X, y, *, costs=None, problem=None):
        if problem is None:
            problem = compile_problem(forest, X, y, costs=costs, lam=0.0)
        masks = MASK_FAMILIES[name](problem) or []
        return [(i, PrunedForest(problem.forest, m, costs=_costs_of(costs, problem),
                                 solve_info={"method": name})) for i, m in enumerate(masks)]

    prunings.__doc__ = MASK_FAMILIES[name].__doc__ or f"The {name!r} baseline family."
    return prunings


class _Baselines(Mapping):
    """Name -> ``(forest, X, y, *, costs=None, problem=None)`` returning
    ``(parameter, PrunedForest)`` pairs, costliest first, for every family of
    the one baseline registry (``"fewer-rounds"`` also names ``"fewer-trees"``: a
    booster truncated to its first rounds)
    (:data:`prune_opt.budget._mask_families.MASK_FAMILIES`): a family
    registered with :func:`register_baseline` appears here too."""

    def __getitem__(self, name):
        if name == "fewer-rounds":  # a booster's name for its first trees: its first rounds
            return _fewer_trees
        if name not in MASK_FAMILIES:
            raise KeyError(name)
        return _SEQUENCES[name] if name in _SEQUENCES else _from_family(name)

    def __iter__(self):
        return iter(list(MASK_FAMILIES))

    def __len__(self):
        return len(MASK_FAMILIES)

    def __repr__(self):
        return f"BASELINES({list(self)})"


#: The baseline registry as ``PrunedForest`` sequences (a view of the mask
#: families: ``register_baseline`` adds to both).
BASELINES = _Baselines()


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


def _on_root(pf):
    """``(forest, mask, trees)``: ``pf`` as a mask over trees of the forest it was cut
    from (a :func:`sub_forest`'s trees are those of its parent, in order)."""
    f, mask = pf.forest, pf.split_mask
    origin = getattr(f, "_sub_forest_of", None)
    if origin is None:
        return f, mask, None
    root, keep = origin
    full = np.zeros(root.n_nodes, dtype=bool)
    for i, t in enumerate(keep):
        full[root.tree_slice(t)] = mask[f.tree_slice(i)]
    prefix = list(keep) == list(range(len(keep)))
    return root, full, range(len(keep)) if prefix else list(keep)


def _routed_cost(pf, used):
    """``pf.average_cost`` from the rows' usage matrix (the same arithmetic)."""
    return float(pf.costs.cost_of_usage(used).mean())


def _routed_score(pf, avg, y):
    """``pf.score`` from the rows' average leaf values (the same arithmetic)."""
    yc = check_labels(pf.forest, y, avg.shape[0])
    if pf.forest.task == "regression":
        from sklearn.metrics import r2_score

        return float(r2_score(yc, avg[:, 0]))
    return float(np.mean(np.argmax(avg, axis=1) == yc))


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
    scorers = {}  # each (forest, rows) routed once; each member scored from the last one

    def on(pf, rows):
        forest, mask, trees = _on_root(pf)
        key = (id(forest), id(rows))
        if key not in scorers:
            scorers[key] = NestedScorer(RoutedData(forest, forest.check_X(rows)))
        return scorers[key].score(mask, trees)

    rows = []
    for param, pf in prunings:
        used, avg = on(pf, X)
        r = {"method": method, "param": param, "average_cost": _routed_cost(pf, used),
             "n_splits": pf.n_splits, "n_trees": pf.n_trees}
        if y is not None:
            r[score] = _routed_score(pf, avg, y)
        if X_eval is not None:
            used, avg = on(pf, X_eval)
            r[f"{score}_eval"] = _routed_score(pf, avg, y_eval)
            r["cost_eval"] = _routed_cost(pf, used)
        rows.append(r)
    columns = ["method", "param", "average_cost", "n_splits", "n_trees"]
    columns += ([score] if y is not None else []) + (
        [f"{score}_eval", "cost_eval"] if X_eval is not None else [])
    return records_frame(rows, columns=columns)
