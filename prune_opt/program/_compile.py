"""compile_problem: validate inputs, route data once, build a PruningProblem."""

from __future__ import annotations

import weakref

import numpy as np

from .._validation import (
    check_features,
    check_labels,
    check_nonneg_scalar,
    check_weights,
    scale_weights,
)
from ..forest._costs import as_feature_costs, estimator_costs
from ..forest._forest import as_forest
from ..routing._records import (
    DEFAULT_CHUNK,
    leaf_matrix,
    route_costs,
)
from ._compile_steps import (
    SampledLeafBlocks,
    error_routing,
    plan_memory,
    resolve_sample,
    sample_info,
)
from ._problem import PruningProblem
from ._sampling import draw_cost_sample

__all__ = ["compile_problem"]


def compile_problem(forest, X, y, *, costs=None, lam=0.0, train=None, depth_cost=0.0,
                    sample_weight=None, budget=None, merge=True, chunk_size=DEFAULT_CHUNK,
                    cost_sample=None, random_state=0, client=None, verbose=False,
                    routed=None):
    """Compile the BudgetPrune program of a fitted forest.

    Parameters
    ----------
    forest : fitted estimator or Forest
        ``RandomForestClassifier``, ``ExtraTreesClassifier``,
        ``DecisionTreeClassifier``, their single-output regressor counterparts,
        a forest_builders estimator, or a Forest.
    X : array-like of shape (n_examples, n_features)
        Cost data (validation data in the paper): acquisition costs are
        averaged over these rows.  Also the error data unless ``train`` is given.
    y : array-like of shape (n_examples,)
        Labels of ``X`` (for a regression forest: real targets; the node
        error is then the squared error divided by the target variance, see
        ``docs/regression.md``).
    costs : FeatureCosts, array-like or mapping, optional
        Feature acquisition costs; when omitted, the costs a cost-aware grower
        (``forest_builders``) was fitted with, else uniform 1.0.
    lam : float
        Trade-off weight of the cost term (>= 0).
    train : tuple (X_train, y_train), optional
        The forest's training data.  Errors are then counted on each tree's
        in-bag bootstrap sample with multiplicity (the paper's choice).  A
        boosted model refuses it: its errors are always counted on ``(X, y)``.
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
    cost_sample : int, "auto" or None
        Estimate the cost term on this many cost rows drawn uniformly without
        replacement (``"auto"``: the rows for which the 95% interval of any
        pruning's sampled average cost is within 0.2% of the unpruned forest's
        average cost, about 240,000 at most for uniform costs, fewer when the
        available memory cannot hold them; all rows when there are fewer); the error term
        still uses every row.  ``problem.cost_sample`` then records the
        sample, and :func:`prune_opt.program._sampling.cost_sample_report` gives the
        sampled cost's confidence interval and the true cost on all rows
        (``prune`` puts both in ``solve_info``).  See ``docs/math/sampling.md``.
    random_state : int
        Seed of the cost sample.
    client : dask.distributed.Client, optional
        Route on a Dask cluster: one task per block of rows; ``X`` and ``y``
        may then be dask arrays or dataframes.  The problem is identical to
        the single-process one.
    verbose : bool
        Print the memory estimate (compile and exact solve) before routing.
    routed : prune_opt.routing._routed.RoutedData, optional
        ``X`` already routed through ``forest`` (a caller that holds one need not
        route again): the leaves are read off its paths.  It must be of the same
        forest and rows; the problem is identical to the one compiled without it.

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
    costs = estimator_costs(forest, costs)  # a grower's own costs when none are given
    sample_weight = scale_weights(sample_weight)  # scale-free: 1e18-sized weights broke LPs
    forest = as_forest(forest)
    lam = check_nonneg_scalar(lam, "lam")
    depth_cost = check_nonneg_scalar(depth_cost, "depth_cost")
    budget = check_nonneg_scalar(budget, "budget", allow_none=True)
    if not isinstance(chunk_size, (int, np.integer)) or isinstance(chunk_size, bool) or \
            chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    fc = as_feature_costs(costs, forest.n_features, forest.feature_names)
    if client is not None:
        if routed is not None:
            raise ValueError("routed= and client= cannot be combined: a cluster routes its "
                             "own blocks of rows")
        from ._distributed import compile_on_cluster

        return compile_on_cluster(client, forest, X, y, fc, lam=lam, depth_cost=depth_cost,
                                  budget=budget, merge=merge, chunk_size=chunk_size,
                                  sample_weight=sample_weight, train=train,
                                  cost_sample=cost_sample, random_state=random_state,
                                  verbose=verbose)
    Xc = check_features(forest, X, name="X")
    yc = check_labels(forest, y, Xc.shape[0], name="y")
    w = check_weights(sample_weight, Xc.shape[0])
    m = resolve_sample(cost_sample, forest, Xc, fc, merge=merge)
    idx = None if m is None else draw_cost_sample(Xc.shape[0], m, random_state)
    Xs = Xc if idx is None else Xc[idx]
    ws = w if idx is None or w is None else w[idx]
    plan_memory(forest, Xs, fc, merge=merge, verbose=verbose)
    # with errors on the cost data, both routings read one leaf matrix: every row is
    # routed through the trees once; with a cost sample and an error rule that reads the
    # rows block by block, the blocks are routed as it reads them and only the sampled
    # rows' leaves are kept (no matrix of every row's leaves)
    if routed is not None:
        leaves = routed_leaves(routed, forest, Xc)
    elif train is not None:
        leaves = None
    elif idx is not None and forest.ensemble.blockwise_errors:
        leaves = SampledLeafBlocks(forest, Xc, idx)
    else:
        leaves = leaf_matrix(forest, Xc, chunk_size)
    err = error_routing(forest, Xc, yc, w, train, chunk_size,
                        leaves=leaves if train is None else None, routed=routed)
    if isinstance(leaves, SampledLeafBlocks):
        leaves = leaves.sampled()
    elif leaves is not None and idx is not None:
        leaves = leaves[idx]
    cost_routing = route_costs(forest, Xs, fc, sample_weight=ws, merge=merge,
                               chunk_size=chunk_size, leaves=leaves)
    del leaves
    forest = err.forest or forest  # a booster's node values fitted on the error data
    problem = PruningProblem(forest, fc, lam=lam, depth_cost=depth_cost,
                             node_error=err.node_error, tree_error_weight=err.tree_weight,
                             cost_routing=cost_routing, budget=budget,
                             error_scale=err.error_scale)
    if idx is not None:
        problem.cost_sample = sample_info(cost_routing, idx, ws, Xc.shape[0], w)
    if routed is not None:  # the rows it was compiled on, for the callers that hold them
        problem.routed_from = weakref.ref(routed)
    return problem


def routed_leaves(routed, forest, Xc):
    """(n, T) local leaf ids of the rows of a :class:`~prune_opt.routing._routed.RoutedData`, checked to be of ``forest`` and of as many rows as ``Xc``."""
    from ..routing._routed import RoutedData

    if not isinstance(routed, RoutedData):
        raise TypeError(f"routed must be a RoutedData, got {type(routed).__name__}")
    if not forest.same_splits(routed.forest):
        raise ValueError("routed= was routed through another forest")
    if routed.n_rows != Xc.shape[0]:
        raise ValueError(f"routed= holds {routed.n_rows} rows but X has {Xc.shape[0]}")
    return routed.local_leaves()
