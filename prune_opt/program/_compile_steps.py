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
from ..forest._forest import as_forest
from ..forest._router import route_leaves
from ..routing._records import (
    DENSE_TABLE_ENTRIES,
    chunk_records,
    paid_feature_units,
    require_in_bag,
    route_errors,
)
from ._boosted import boosted_error_routing, routed_loss_expansion
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
#: the error rules that read the rows' leaves one block of rows at a time, in order
#: (``leaves[a:b]``), so that a sampled compile can route them as they are read
BLOCKWISE_ERROR_RULES = frozenset({"loss expansion"})


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
