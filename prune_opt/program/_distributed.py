"""compile_problem on a Dask cluster: the routing blocks run as Dask tasks.

The data stays on the workers as blocks of rows (the partitions of a dask
array or dataframe, or a NumPy input scattered in ``chunk_size`` blocks).
Each block is validated where it lives; leaf signatures, per-block class
weights (regression: target moments, the targets' scale fixed first from
the gathered targets) at the leaves and the first-use records of each block of merged cost
rows are computed by tasks (the same functions as the single-process path),
and the driver only merges rows (from the leaf signatures), concatenates the
blocks in row order and sums node tables in block order.  The problem is
therefore identical to the single-process one (bit for bit when the blocks
are ``chunk_size`` rows, as for a scattered NumPy input).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_features, check_labels
from ..forest._ensemble import regression_scale
from ..routing._records import (
    CostRouting,
    assemble_records,
    chunk_records,
    leaf_matrix,
    merge_identical_rows,
    node_levels,
    paid_feature_units,
    record_chunk_rows,
    record_tables,
    sum_up,
)
from ._boosted import MOMENTS, boosting_scale, boosting_statistics, errors_from_moments
from ._compile_steps import node_errors, node_statistics
from ._problem import PruningProblem
from ._sampling import draw_cost_sample, resolve_cost_sample

__all__ = ["check_client", "compile_on_cluster", "scatter_blocks"]


def check_client(client):
    """Refuse what is not a usable ``dask.distributed.Client`` before any work."""
    if not all(callable(getattr(client, a, None)) for a in ("submit", "scatter", "gather")):
        raise TypeError(f"client must be a dask.distributed.Client (e.g. Client(LocalCluster())), "
                        f"got {type(client).__name__}")
    status = getattr(client, "status", "running")
    if status in ("closing", "closed"):
        raise ValueError(f"client is {status}; pass a running dask.distributed.Client, or "
                         "client=None to compile in this process")


def _submit(client, func, *args):
    # fresh keys on every call: two compiles of the same data must not share (and
    # cancel) each other's futures
    return client.submit(func, *args, pure=False)


def _is_dask(obj):
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr")


def scatter_blocks(client, X, chunk_size):
    """Futures of the row blocks of ``X`` on the cluster, in row order.

    A dask array or dataframe keeps its partitions (rechunked to whole rows);
    anything else is split into ``chunk_size`` row blocks and scattered.
    """
    if _is_dask(X):
        if hasattr(X, "to_dask_array"):  # dataframe or series: its partitions
            parts = X.to_delayed()
        else:
            X = X.rechunk({1: -1}) if X.ndim == 2 else X
            parts = list(X.to_delayed().ravel())
        return client.compute(parts)
    if not hasattr(X, "iloc") and not isinstance(X, np.ndarray):
        X = np.asarray(X)
    n = len(X)
    return client.scatter([X[s:s + chunk_size] for s in range(0, n, chunk_size)], hash=False)


def _check_block(forest, Xb, yb):
    Xc = check_features(forest, Xb, name="X")
    yc = check_labels(forest, np.asarray(yb).ravel() if yb is not None else yb, Xc.shape[0],
                      name="y")
    return Xc, yc


def _leaf_block(forest, block, local):
    return leaf_matrix(forest, block[0][local])


def _stats_block(forest, block, w, unit, centre, chunk_size):
    """:func:`node_statistics` at the leaves of one block (regression: of the targets
    ``y / unit - centre``), not yet summed up the trees."""
    Xc, yc = block
    w = np.ones(Xc.shape[0]) if w is None else w
    y = yc if forest.task == "classification" else np.asarray(yc, float) / unit - centre
    return node_statistics(forest, Xc, y, [w] * forest.n_trees, chunk_size=chunk_size,
                           at_leaves=True)


def _boosting_block(forest, block, w, unit):
    """:func:`~prune_opt.program._boosted.boosting_statistics` of one block (at the leaves)."""
    Xc, yc = block
    return boosting_statistics(forest, Xc, yc, w, unit=unit)


def _gather_targets(client, blocks):
    return np.concatenate(client.gather([_submit(client, lambda b: np.asarray(b[1], float), b)
                                         for b in blocks]))


def _boosted_error_routing(client, forest, forest_f, blocks, offsets, w, chunk_size=None):
    """A boosted model's node terms on the blocked error data (the moments of every block
    summed in block order), with the forest of its fitted node values, as
    :func:`~prune_opt.program._boosted.boosted_error_routing` computes them in one process."""
    n = int(offsets[-1])
    wt = np.ones(n) if w is None else w
    unit, scale = 1.0, 1.0
    if forest.ensemble.loss.scales_by_targets:  # the targets' unit and scale need all of them
        unit, scale = boosting_scale(forest, _gather_targets(client, blocks), wt)
    parts = [_submit(client, _boosting_block, forest_f, b, wt[offsets[i]:offsets[i + 1]], unit)
             for i, b in enumerate(blocks)]
    stats = np.zeros((forest.n_nodes, len(MOMENTS)))
    for f in parts:
        stats += f.result()
    return errors_from_moments(forest, stats, unit, scale, n)


def _tree_error_routing(client, forest, forest_f, blocks, offsets, w, chunk_size):
    """Per-tree node errors on the blocked error data: the leaf statistics summed over
    the blocks in block order (deterministic) and then up every tree; a regression
    forest's target scale first, from the gathered targets (one float a row)."""
    n = int(offsets[-1])
    wt = np.ones(n) if w is None else w
    unit, scale, centre = 1.0, 1.0, 0.0
    if forest.task == "regression":
        y = _gather_targets(client, blocks)
        pooled = np.zeros(n)
        for _ in range(forest.n_trees):  # as the single-process routing pools the tree weights
            pooled += wt
        unit, scale, centre = regression_scale(y, pooled)
    parts = [_submit(client, _stats_block, forest_f, b,
                     None if w is None else w[offsets[i]:offsets[i + 1]], unit, centre,
                     chunk_size) for i, b in enumerate(blocks)]
    stats = np.zeros((forest.n_nodes, 3 if forest.task == "regression" else forest.n_classes))
    for f in parts:
        stats += f.result()
    return node_errors(forest, sum_up(node_levels(forest), stats),
                       np.full(forest.n_trees, float(wt.sum())), unit, scale, centre)


#: the error rules of :data:`~prune_opt.program._compile_steps.ERROR_RULES`, computed on
#: blocks of rows that stay on the workers (the kind names its rule)
CLUSTER_ERROR_RULES = {
    "tree errors": _tree_error_routing,
    "loss expansion": _boosted_error_routing,
}


def _record_block(forest, fu, tables, blocks, picks, wc):
    Xr = np.concatenate([b[0][p] for b, p in zip(blocks, picks)])
    return chunk_records(forest, Xr, wc, fu, tables)


def _cost_routing(client, forest, forest_f, fc, blocks, offsets, sel, w, merge, chunk_size):
    """CostRouting of rows ``sel`` (global, increasing) of the blocked data."""
    where = np.searchsorted(offsets, sel, side="right") - 1
    if merge and sel.size > 1:
        futs = [_submit(client, _leaf_block, forest_f, blocks[b], sel[where == b] - offsets[b])
                for b in np.unique(where)]
        group, first = merge_identical_rows(np.concatenate(client.gather(futs)), chunk_size)
        del futs
    else:
        group, first = np.arange(sel.size), np.arange(sel.size)
    ws = np.ones(sel.size) if w is None else w[sel]
    weight = np.bincount(group, weights=ws, minlength=first.size)
    rows, src = sel[first], where[first]
    fu = paid_feature_units(fc)
    tables = record_tables(forest, fu)
    fu_f, tab_f = client.scatter([fu, tables], broadcast=True, hash=False)
    step = record_chunk_rows(forest, fc, chunk_size)
    futs = []
    for s in range(0, rows.size, step):
        bs = np.unique(src[s:s + step])
        picks = [rows[s:s + step][src[s:s + step] == b] - offsets[b] for b in bs]
        futs.append((s, _submit(client, _record_block, forest_f, fu_f, tab_f,
                                      [blocks[b] for b in bs], picks, weight[s:s + step])))
    node, pair_start, prow, punit, node_weight = assemble_records(_in_order(futs),
                                                                  forest.n_nodes)
    return CostRouting(example_weight=weight, row_of_example=group, node_weight=node_weight,
                       use_node=node, pair_start=pair_start, pair_row=prow, pair_unit=punit,
                       total_weight=float(weight.sum())), ws


def _in_order(futs):
    """Results of ``(start, future)`` pairs in order, each future released once read."""
    futs.reverse()
    while futs:
        s, f = futs.pop()
        yield s, f.result()
        del f


def compile_on_cluster(client, forest, X, y, fc, *, lam, depth_cost, budget, merge,
                       chunk_size, sample_weight, train, cost_sample, random_state, verbose):
    """The body of ``compile_problem(..., client=client)`` (arguments already checked)."""
    from ._compile_steps import error_routing, plan_memory, sample_info

    check_client(client)  # a closed or wrong client: one clear error before any work
    forest_f = client.scatter(forest, broadcast=True, hash=False)
    xb, yb = scatter_blocks(client, X, chunk_size), scatter_blocks(client, y, chunk_size)
    if len(xb) != len(yb):
        raise ValueError(f"X and y have different partitions ({len(xb)} and {len(yb)}); "
                         "partition them alike")
    blocks = [_submit(client, _check_block, forest_f, a, b) for a, b in zip(xb, yb)]
    sizes = np.array(client.gather([_submit(client, lambda b: b[0].shape[0], b)
                                    for b in blocks]), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n = int(offsets[-1])
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if w is not None and w.shape != (n,):
        raise ValueError(f"sample_weight has shape {w.shape}, X has {n} rows")
    m = resolve_cost_sample(cost_sample, n)
    sel = np.arange(n) if m is None else draw_cost_sample(n, m, random_state)
    if verbose:
        probe = _submit(client, lambda b: b[0][:2048], blocks[0]).result()
        plan_memory(forest, probe, fc, merge=merge, verbose=True, n_rows=sel.size)
    routing, ws = _cost_routing(client, forest, forest_f, fc, blocks, offsets, sel, w, merge,
                                chunk_size)
    if train is None:
        err = CLUSTER_ERROR_RULES[forest.ensemble.error_rule](client, forest, forest_f, blocks,
                                                              offsets, w, chunk_size)
    else:
        err = error_routing(forest, None, None, None, train, chunk_size)
    problem = PruningProblem(err.forest or forest, fc, lam=lam, depth_cost=depth_cost,
                             node_error=err.node_error, tree_error_weight=err.tree_weight,
                             cost_routing=routing, budget=budget, error_scale=err.error_scale)
    if m is not None:
        problem.cost_sample = sample_info(routing, sel, None if w is None else ws, n, w)
    return problem
