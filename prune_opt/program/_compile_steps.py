"""Steps of :func:`prune_opt.compile_problem` shared by the in-process and the Dask
paths: error routing, the description of a cost sample, the memory plan."""

from __future__ import annotations

import numpy as np

from .. import _memory
from .._memory import (
    check_fits,
    estimate_compile_memory,
    estimate_solve_sizes,
    format_bytes,
)
from .._validation import check_features, check_labels, refuse_train_for_boosted
from ..forest._costs import as_feature_costs
from ..forest._ensemble import regression_scale
from ..forest._forest import as_forest
from ..forest._router import route_leaves
from ..routing._records import (
    DEFAULT_CHUNK,
    DENSE_TABLE_ENTRIES,
    chunk_records,
    node_levels,
    paid_feature_units,
    require_in_bag,
    sum_up,
    tree_leaves,
)
from ._boosted import boosted_error_routing, routed_loss_expansion
from ._problem import ErrorRouting
from ._sampling import resolve_cost_sample


def error_routing(forest, Xc, yc, w, train, chunk_size, leaves=None, routed=None):
    """Node errors on the cost data (default; ``leaves``: its leaf matrix when already
    routed) or on the in-bag training samples.  For a boosted forest, the expanded
    loss's node terms (:func:`~prune_opt.program._boosted.boosted_error_routing`; its
    ``forest`` carries the fitted node values)."""
    if train is None:
        rule = forest.ensemble.error_rule
        if routed is not None and rule in ROUTED_ERROR_RULES:  # the rows' routing's own
            return ROUTED_ERROR_RULES[rule](forest, routed, Xc, yc, w, leaves=leaves,
                                            chunk_size=chunk_size)
        return ERROR_RULES[rule](forest, Xc, yc, w, leaves=leaves, chunk_size=chunk_size)
    refuse_train_for_boosted(forest, train)  # a booster's errors: on the cost data
    if not isinstance(train, (tuple, list)) or len(train) != 2:
        raise TypeError("train must be a pair (X_train, y_train)")
    Xt = check_features(forest, train[0], name="train[0] (X_train)")
    yt = check_labels(forest, train[1], Xt.shape[0], name="train[1] (y_train)")
    bags = require_in_bag(forest, Xt.shape[0])
    return route_errors(forest, Xt, yt, tree_weights=bags, chunk_size=chunk_size)


def _tree_errors(forest, Xc, yc, w, *, leaves, chunk_size):
    """Every tree's errors on the (weighted) rows, each tree weighing them alike."""
    return route_errors(forest, Xc, yc, tree_weights=[w] * forest.n_trees,
                        chunk_size=chunk_size, leaves=leaves)


#: how each ensemble kind's node errors are counted on the cost rows (its error_rule)
ERROR_RULES = {"tree errors": _tree_errors, "loss expansion": boosted_error_routing}
#: the error rules with a faster way for rows already routed (the moments kept on the
#: routed rows, shared with the node-value fit)
ROUTED_ERROR_RULES = {"loss expansion": routed_loss_expansion}


class SampledLeafBlocks:
    """The leaves of the error rows, routed block by block when an error rule slices
    them (``blocks[a:b]``, each block once, in any order), keeping those of the
    sampled cost rows ``idx`` (sorted): every row goes through the trees once and no
    (rows x trees) matrix of all rows is held, only the sample's.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from prune_opt.forest._forest import as_forest
    >>> X, y = load_iris(return_X_y=True)
    >>> f = as_forest(GradientBoostingClassifier(n_estimators=2).fit(X, y))
    >>> blocks = SampledLeafBlocks(f, f.check_X(X), np.array([3, 70, 149]))
    >>> parts = [blocks[a:a + 64] for a in range(0, 150, 64)]
    >>> from prune_opt.routing._records import leaf_matrix
    >>> bool((blocks.sampled() == leaf_matrix(f, f.check_X(X))[[3, 70, 149]]).all())
    True
    """

    def __init__(self, forest, X, idx):
        self.forest, self.X, self.idx = forest, X, np.asarray(idx)
        self.shape = (X.shape[0], forest.n_trees)
        self._sample = None
        self._filled = 0

    def __getitem__(self, key):
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("SampledLeafBlocks are read by contiguous blocks of rows")
        a, b, _ = key.indices(self.shape[0])
        # routed tree-major (each tree's leaves written contiguously) and handed on as
        # its (rows x trees) view: the error rule reads it tree by tree without a copy
        block = route_leaves(self.forest, self.X[a:b], by_tree=True).T
        if self._sample is None:
            self._sample = np.empty((self.idx.size, self.shape[1]), dtype=block.dtype)
        lo, hi = np.searchsorted(self.idx, [a, b])
        self._sample[lo:hi] = block[self.idx[lo:hi] - a]
        self._filled += int(hi - lo)
        return block

    def sampled(self):
        """(m, T) leaves of the sampled rows, once every block has been read."""
        if self._filled != self.idx.size:
            raise RuntimeError("the error routing did not read every block of rows")
        return self._sample


def sample_info(cost_routing, idx, ws, n_population, w):
    """What a sampled problem records about its sample (for the interval)."""
    wsq = np.ones(idx.size) if ws is None else np.asarray(ws, dtype=float) ** 2
    return {"n_sample": int(idx.size), "n_population": int(n_population), "rows": idx,
            "population_weight": float(n_population if w is None else np.sum(w)),
            "row_weight_sq": np.bincount(cost_routing.row_of_example, weights=wsq,
                                         minlength=cost_routing.example_weight.size)}


# below this many (row x tree) visits a compile is small: no probe, no estimate
PROBE_THRESHOLD = 2_000_000
PROBE_ROWS = 2048


def plan_memory(forest, Xs, fc, *, merge, verbose, available=None, n_rows=None):
    """Estimate compile and exact-solve memory from a probe of the rows; print it
    with ``verbose`` and refuse (MemoryError) a compile that cannot fit.
    ``n_rows`` (default ``len(Xs)``): rows to compile when ``Xs`` is only a probe."""
    n = Xs.shape[0] if n_rows is None else int(n_rows)
    if n * forest.n_trees < PROBE_THRESHOLD and not verbose:
        return None
    if not verbose:  # the upper bound (no probe) fits with room to spare: nothing to check
        avail = _memory.available_memory() if available is None else available
        bound = estimate_compile_memory(forest, n, fc, n_features=Xs.shape[1], merge=merge)
        if avail is not None and bound["bytes"] - bound.get("base", 0) <= avail // 4:
            return None
    plan = estimate_memory_plan(forest, Xs, fc, merge=merge, available=available, n_rows=n)
    if verbose:
        print(format_memory_plan(plan))
    check_fits(plan["compile"], f"compiling {n:,} cost rows x {forest.n_trees} trees",
               available=plan["available"],
               options="pass cost_sample= (e.g. 'auto') to estimate the cost term on a "
                       "sample, use fewer rows, or grow shallower trees (max_depth)")
    return plan["compile"]


def estimate_memory_plan(forest, Xs, fc, *, merge=True, available=None, n_rows=None):
    """Compile and exact-solve memory estimates for routing the rows ``Xs`` (or
    ``n_rows`` rows like them), from a routed probe of at most ``PROBE_ROWS`` of
    them, and the memory available.

    Returns
    -------
    dict with ``compile`` and ``solve`` (estimate dicts, ``bytes`` the total),
    ``solve_upper`` (the solve if the graph reductions gain nothing),
    ``available`` (bytes or None), ``uses_per_row``, ``n_rows`` and
    ``probe_costs`` (each probe row's cost under the unpruned forest).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.forest._costs import as_feature_costs
    >>> from prune_opt.forest._forest import as_forest
    >>> X, y = load_iris(return_X_y=True)
    >>> f = as_forest(RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y))
    >>> plan = estimate_memory_plan(f, X, as_feature_costs(None, 4))
    >>> plan["solve"]["bytes"] <= plan["solve_upper"]["bytes"]
    True
    """
    n = Xs.shape[0] if n_rows is None else int(n_rows)
    probe = Xs[:: max(1, Xs.shape[0] // PROBE_ROWS)][:PROBE_ROWS]
    fu = paid_feature_units(fc)
    node, _, prow, punit, _ = chunk_records(forest, probe, np.ones(probe.shape[0]), fu)
    upr, ppr = node.size / max(probe.shape[0], 1), prow.size / max(probe.shape[0], 1)
    sizes = (int(upr * n), int(ppr * n), forest.n_nodes)
    probe_costs = np.bincount(prow, weights=fc.unit_costs[punit], minlength=probe.shape[0])
    compact = forest.n_nodes * max(fu.shape[1], 1) <= DENSE_TABLE_ENTRIES  # LeafRecords
    return {"compile": estimate_compile_memory(forest, n, fc, uses_per_row=upr,
                                               pairs_per_row=ppr, n_features=Xs.shape[1],
                                               merge=merge, compact=compact),
            "solve": estimate_solve_sizes(*sizes, compact=compact),
            "solve_upper": estimate_solve_sizes(*sizes, reduced=False, compact=compact),
            "available": _memory.available_memory() if available is None else available,
            "uses_per_row": upr, "n_rows": n, "probe_costs": probe_costs}


def resolve_sample(cost_sample, forest, Xc, fc, *, merge):
    """Rows to sample for ``cost_sample`` (None: all).  ``"auto"`` routes a probe for
    the unpruned forest's per-row costs and caps the sample by the rows the
    available memory can compile and solve (:func:`prune_opt.program._sampling.auto_sample_rows`).
    """
    n = Xc.shape[0]
    if not (isinstance(cost_sample, str) and cost_sample == "auto"):
        return resolve_cost_sample(cost_sample, n)
    plan = estimate_memory_plan(forest, Xc, fc, merge=merge)
    per_row = max(plan["compile"]["bytes"] - plan["compile"]["base"],
                  plan["solve"]["bytes"] - plan["solve"]["base"]) / max(n, 1)
    avail = plan["available"]
    memory_rows = None if avail is None else int(0.8 * avail / max(per_row, 1.0))
    return resolve_cost_sample("auto", n, plan["probe_costs"], memory_rows)


def format_memory_plan(plan):
    """One line: the compile and exact-solve estimates and the available memory."""
    avail = plan["available"]
    return (f"[prune-opt] memory estimate for {plan['n_rows']:,} cost rows "
            f"(~{plan['uses_per_row']:.0f} first-use records per row): compile "
            f"{format_bytes(plan['compile']['bytes'])}, exact solve (mincut) "
            f"{format_bytes(plan['solve']['bytes'])} (at most "
            f"{format_bytes(plan['solve_upper']['bytes'])} without graph reductions); "
            f"available {'unknown' if avail is None else format_bytes(avail)}")


def memory_report(forest, X, costs=None, *, merge=True):
    """The memory-plan line for compiling ``forest`` on the cost rows ``X`` (for the
    CLI, printed before anything large is allocated).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> memory_report(rf, X).startswith("[prune-opt] memory estimate for 150 cost rows")
    True
    """
    forest = as_forest(forest)
    fc = as_feature_costs(costs, forest.n_features, forest.feature_names)
    Xc = check_features(forest, X, name="X")
    return format_memory_plan(estimate_memory_plan(forest, Xc, fc, merge=merge))


def route_errors(forest, X, y_index, tree_weights, *, chunk_size=DEFAULT_CHUNK, leaves=None):
    """Node errors e_h from error data.

    Parameters
    ----------
    forest : Forest
    X : ndarray, validated
    y_index : ndarray
        Labels encoded as class indices of the forest; for a regression
        forest, the real targets (float).
    tree_weights : list of ndarray
        Per tree, the weight of each example (e.g. its in-bag multiplicity).
    leaves : ndarray (n_examples, n_trees), optional
        Local leaf ids of the rows when already routed (:func:`leaf_matrix`).

    Returns
    -------
    ErrorRouting
        Classification: e_h is the weight of the examples reaching h whose
        label is not h's majority class.  Regression: e_h is h's squared error
        ``sum_i w_i (y_i - v_h)^2`` divided by ``error_scale``, the weighted
        variance of the targets (each row weighted by its total weight over
        the trees; 1 when the targets are constant, with a warning).
    """
    tree_weight = np.array([w.sum() for w in tree_weights])
    unit, scale, centre, y = 1.0, 1.0, 0.0, y_index
    if forest.task == "regression":
        pooled = np.zeros(X.shape[0])
        for w in tree_weights:
            pooled += w
        unit, scale, centre = regression_scale(y_index, pooled)
        y = y_index / unit - centre
    stats = node_statistics(forest, X, y, tree_weights, chunk_size=chunk_size, leaves=leaves)
    return node_errors(forest, stats, tree_weight, unit, scale, centre)


def node_errors(forest, stats, tree_weight, unit=1.0, scale=1.0, centre=0.0):
    """:class:`ErrorRouting` from the :func:`node_statistics` of the error data (for a
    regression forest, of the targets ``y / unit - centre``, see :func:`regression_scale`)."""
    if forest.task == "regression":
        node_error = squared_error(forest.value[:, 0] / unit - centre, stats) / scale
        return ErrorRouting(node_error=node_error, node_weight=stats[:, 0],
                            tree_weight=tree_weight, error_scale=scale * unit * unit)
    node_weight = stats.sum(axis=1)
    majority = np.argmax(forest.value, axis=1)
    node_error = np.maximum(node_weight - stats[np.arange(forest.n_nodes), majority], 0.0)
    return ErrorRouting(node_error=node_error, node_weight=node_weight, tree_weight=tree_weight)


def node_statistics(forest, X, y, tree_weights=None, *, chunk_size=DEFAULT_CHUNK, leaves=None,
                    at_leaves=False):
    """Weighted statistics of the rows reaching every node.

    Classification (``y`` class indices): the class weights, (n_nodes, n_classes).
    Regression (``y`` real): the weighted (count, sum y, sum y^2), (n_nodes, 3), from
    which node variances (``sum y^2 / n - (sum y / n)^2``) follow where a forest does
    not carry them.  ``X`` is checked; ``tree_weights[t]``: the rows' weights in tree
    t (default 1); ``leaves``: the rows' local leaf ids when already routed;
    ``at_leaves``: the statistics of the rows ending at each leaf only (not yet summed
    up the trees: blocks of rows are added first).
    """
    n = X.shape[0]
    regression = forest.task == "regression"
    width = 3 if regression else forest.n_classes
    stats = np.zeros((forest.n_nodes, width))
    for t in range(forest.n_trees):
        wt, sl = np.ones(n) if tree_weights is None else tree_weights[t], forest.tree_slice(t)
        size = sl.stop - sl.start
        sel = np.flatnonzero(wt > 0)
        for start in range(0, sel.size, chunk_size):  # statistics at the leaves ...
            idx = sel[start:start + chunk_size]
            leaf = (tree_leaves(forest, X[idx], t) if leaves is None
                    else leaves[idx, t]).astype(np.int64)
            if regression:
                yi, wi = y[idx], wt[idx]
                stats[sl] += np.column_stack([np.bincount(leaf, weights=wi * p, minlength=size)
                                              for p in (np.ones_like(yi), yi, yi * yi)])
            else:
                stats[sl] += np.bincount(leaf * width + y[idx], weights=wt[idx],
                                         minlength=size * width).reshape(size, width)
    return stats if at_leaves else sum_up(node_levels(forest), stats)  # ... then up the trees


def squared_error(value, moments):
    """Squared error of predicting ``value`` at nodes with (weight, sum y, sum y^2) moments.

    ``n v^2 - 2 v sum(y) + sum(y^2)``, clipped at 0 (it is a sum of squares);
    a result below the expression's round-off (a few ulps of its terms) is 0,
    so a node whose value is its examples' mean gets exactly no error.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt.program._compile_steps import squared_error
    >>> y = np.array([1.0, 2.0, 6.0])
    >>> float(squared_error(np.array([3.0]), np.array([[3, y.sum(), (y * y).sum()]]))[0])
    14.0
    """
    n, s1, s2 = moments[:, 0], moments[:, 1], moments[:, 2]
    sse = n * value * value - 2.0 * value * s1 + s2
    roundoff = 8 * np.finfo(float).eps * (n * value * value + 2.0 * np.abs(value * s1) + s2)
    return np.where(sse > roundoff, sse, 0.0)
