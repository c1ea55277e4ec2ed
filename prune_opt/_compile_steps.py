"""Steps of :func:`prune_opt.compile_problem` shared by the in-process and the Dask
paths: error routing, the description of a cost sample, the memory plan."""

from __future__ import annotations

import numpy as np

from ._memory import check_fits, estimate_compile_memory, estimate_solve_sizes, format_bytes
from ._routing import (
    chunk_records,
    in_bag_weights,
    new_units_table,
    paid_feature_units,
    route_errors,
)
from ._validation import check_features, check_labels


def error_routing(forest, Xc, yc, w, train, chunk_size):
    """Node errors on the cost data (default) or on the in-bag training samples."""
    if train is None:
        return route_errors(forest, Xc, yc, tree_weights=[w] * forest.n_trees,
                            chunk_size=chunk_size)
    if not isinstance(train, (tuple, list)) or len(train) != 2:
        raise TypeError("train must be a pair (X_train, y_train)")
    Xt = check_features(forest, train[0], name="train[0] (X_train)")
    yt = check_labels(forest, train[1], Xt.shape[0], name="train[1] (y_train)")
    bags = in_bag_weights(forest, Xt.shape[0])
    return route_errors(forest, Xt, yt, tree_weights=bags, chunk_size=chunk_size)


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


def plan_memory(forest, Xs, fc, *, merge, verbose, available=None):
    """Estimate compile and exact-solve memory from a probe of the rows; print it
    with ``verbose`` and refuse (MemoryError) a compile that cannot fit."""
    n = Xs.shape[0]
    if n * forest.n_trees < PROBE_THRESHOLD and not verbose:
        return None
    probe = Xs[:: max(1, n // PROBE_ROWS)][:PROBE_ROWS]
    fu = paid_feature_units(fc)
    node, _, prow, _, _ = chunk_records(forest, probe, np.ones(probe.shape[0]), fu,
                                        new_units_table(forest, fu))
    upr, ppr = node.size / probe.shape[0], prow.size / probe.shape[0]
    est = estimate_compile_memory(forest, n, fc, uses_per_row=upr, pairs_per_row=ppr,
                                  n_features=Xs.shape[1], merge=merge)
    solve = estimate_solve_sizes(int(upr * n), int(ppr * n), forest.n_nodes)
    if verbose:
        print(f"[prune-opt] memory estimate: compile {format_bytes(est['bytes'])} "
              f"(~{upr:.0f} first-use records per row), exact solve (mincut) "
              f"{format_bytes(solve['bytes'])}")
    check_fits(est, f"compiling {n:,} cost rows x {forest.n_trees} trees", available=available,
               options="pass cost_sample= (e.g. 'auto') to estimate the cost term on a "
                       "sample, use fewer rows, or grow shallower trees (max_depth)")
    return est
