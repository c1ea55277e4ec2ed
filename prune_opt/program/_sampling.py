"""Cost-data sampling: solve on a uniform sample of the cost rows, with a guarantee.

Only the cost term couples rows across trees; the error term needs per-node
counts, which stream over every row in O(nodes) memory.  With
``cost_sample=m`` the cost term is estimated on m rows drawn uniformly
without replacement, the error term still uses all rows, and after the solve
the pruning's true average cost is measured on all rows in one streaming
pass.  The argument (unbiasedness for a fixed pruning, optimism of the
optimum, the interval) is in ``docs/math/sampling.md``.
"""

from __future__ import annotations

import math

import numpy as np

from ..forest._router import route_leaves
from ..routing._records import feature_unit_bits, node_levels

__all__ = ["resolve_cost_sample", "auto_sample_rows", "draw_cost_sample",
           "sampled_cost_interval", "full_average_cost", "cost_sample_report",
           "AUTO_HALF_WIDTH"]

# cost_sample="auto": the rows needed for the 95% interval of the sampled average cost
# of *any* pruning to have a half-width of at most AUTO_HALF_WIDTH times the average
# cost of the unpruned forest (docs/math/sampling.md); without a probe, times the
# largest per-row cost
AUTO_HALF_WIDTH = 0.002
AUTO_CONFIDENCE = 0.95


def auto_sample_rows(n_rows, probe_costs=None, *, memory_rows=None, half_width=None,
                     confidence=AUTO_CONFIDENCE):
    """Cost rows ``cost_sample="auto"`` samples, or None for all rows.

    Every pruning P pays ``0 <= c_i(P) <= c_i`` where ``c_i`` is row i's cost
    under the unpruned forest, so the standard deviation of ``c_i(P)`` is at
    most ``s = min(max_i c_i / 2, sqrt(mean c_i^2))`` whatever P is.  A sample
    of ``m0 = (z s / (half_width * mean c))^2`` rows then gives an interval of
    half-width at most ``half_width`` times the unpruned forest's average cost;
    the finite-population correction lowers it to ``m0 / (1 + (m0 - 1) / n)``,
    and when that is more than half the rows all rows are used.
    ``probe_costs`` (per-row costs of the unpruned forest on a probe of the
    rows) supplies ``s`` and the mean; without it the bound is taken relative
    to the largest per-row cost (``s / mean c = 1/2``).  ``half_width``
    defaults to ``AUTO_HALF_WIDTH`` (0.002).  ``memory_rows`` caps
    the result (rows the available memory can compile and solve).

    Examples
    --------
    >>> auto_sample_rows(10**7)  # (1.96 / 0.004)^2 with the finite-population correction
    234462
    >>> auto_sample_rows(10**5) is None, auto_sample_rows(10**7, memory_rows=50_000)
    (True, 50000)
    """
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    half_width = AUTO_HALF_WIDTH if half_width is None else float(half_width)
    ratio = 0.5
    if probe_costs is not None and np.size(probe_costs) and np.mean(probe_costs) > 0:
        c = np.asarray(probe_costs, dtype=float)
        ratio = min(c.max() / 2, math.sqrt(np.mean(c**2))) / c.mean()
    m0 = (z * ratio / half_width) ** 2
    m = int(math.ceil(m0 / (1.0 + (m0 - 1.0) / n_rows)))
    if 2 * m > n_rows:  # a sample of more than half the rows saves too little: use all
        m = n_rows
    if memory_rows is not None:
        m = min(m, max(int(memory_rows), 2))
    return None if m >= n_rows else max(m, 2)


def resolve_cost_sample(cost_sample, n_rows, probe_costs=None, memory_rows=None):
    """Number of cost rows to sample, or None for all rows.

    ``"auto"`` applies :func:`auto_sample_rows` (with ``probe_costs`` and
    ``memory_rows`` when the caller has them).

    Examples
    --------
    >>> resolve_cost_sample("auto", 1000), resolve_cost_sample(10, 1000)
    (None, 10)
    """
    if cost_sample is None:
        return None
    if isinstance(cost_sample, str):
        if cost_sample != "auto":
            raise ValueError(f"cost_sample must be a positive int, 'auto' or None, got "
                             f"{cost_sample!r}")
        return auto_sample_rows(n_rows, probe_costs, memory_rows=memory_rows)
    if isinstance(cost_sample, bool) or not isinstance(cost_sample, (int, np.integer)):
        raise TypeError(f"cost_sample must be a positive int, 'auto' or None, got "
                        f"{cost_sample!r}")
    if cost_sample < 2:
        raise ValueError(f"cost_sample must be at least 2 rows (an interval needs a "
                         f"variance), got {cost_sample}")
    return None if cost_sample >= n_rows else int(cost_sample)


def draw_cost_sample(n_rows, m, random_state=0):
    """Sorted indices of ``m`` of ``n_rows`` rows, uniform without replacement."""
    seed_ok = (isinstance(random_state, (int, np.integer))
               and not isinstance(random_state, bool) and random_state >= 0)
    if not (seed_ok or random_state is None or isinstance(random_state, np.random.Generator)):
        raise TypeError(f"random_state must be a non-negative int, a numpy Generator or None, got "
                        f"{random_state!r}")
    rng = np.random.default_rng(random_state)
    return np.sort(rng.choice(n_rows, size=m, replace=False))


def row_costs(problem, split_mask):
    """Acquisition cost of each merged cost row under a pruning (n_rows,)."""
    used = problem.pairs_used(split_mask)
    return np.bincount(problem.pair_row[used], weights=problem.costs.unit_costs[
        problem.pair_unit[used]], minlength=problem.n_rows)


def sampled_cost_interval(problem, split_mask, confidence=0.95):
    """Sampled average cost of a pruning and its confidence interval.

    The ratio estimator ``sum_i w_i c_i / sum_i w_i`` over the sampled rows,
    its standard error with the finite-population correction ``1 - m/n``,
    and the normal interval at ``confidence``.

    Returns
    -------
    dict with ``sampled_average_cost``, ``cost_stderr``, ``cost_ci`` (low, high),
    ``confidence``, ``n_sample``, ``n_population``.
    """
    from statistics import NormalDist

    info = problem.cost_sample
    c = row_costs(problem, split_mask)
    V = problem.total_weight
    mean = float(problem.row_weight @ c / V)
    m, n = info["n_sample"], info["n_population"]
    ss = float(info["row_weight_sq"] @ (c - mean) ** 2)
    var = ss / V**2 * m / max(m - 1, 1) * (1.0 - m / n)
    se = math.sqrt(max(var, 0.0))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return {"sampled_average_cost": mean, "cost_stderr": se,
            "cost_ci": (mean - z * se, mean + z * se), "confidence": confidence,
            "n_sample": m, "n_population": n}


def full_average_cost(forest, split_mask, costs, X, sample_weight=None, chunk_size=65536):
    """True weighted average acquisition cost of a pruning on every row of X.

    One streaming pass, ``chunk_size`` rows at a time: the chunk is routed through
    the trees (all of them at once, so a router's rank transform is made once per
    chunk) and each row ORs in the bitmask of units paid on the pruned path to the
    leaf it reaches, so the pass costs at most one prediction and
    ``O(chunk_size * (trees + units / 64))`` memory.  The units a split at a root
    pays are paid by every row; a tree whose pruned splits pay no other unit adds
    nothing and is not routed at all (a tree cut to its root, or one whose splits
    only use features every row already pays for, as under a tight budget).
    """
    bits = _pruned_path_units(forest, np.asarray(split_mask, dtype=bool), costs)
    unit_costs = np.asarray(costs.unit_costs, dtype=float)
    always = np.bitwise_or.reduce(bits[forest.node_offset[:-1]], axis=0)
    extra = (bits & ~always).any(axis=1)
    trees = np.flatnonzero(np.logical_or.reduceat(extra, forest.node_offset[:-1]))
    total, weight = 0.0, 0.0
    for start in range(0, X.shape[0], chunk_size):
        Xc = X[start:start + chunk_size]
        paid = np.broadcast_to(always, (Xc.shape[0], bits.shape[1])).copy()
        if trees.size:
            leaves = route_leaves(forest, Xc, trees=trees.tolist())
            for j, t in enumerate(trees):
                paid |= bits[forest.node_offset[t] + leaves[:, j].astype(np.intp)]
        flags = np.unpackbits(paid.view(np.uint8), axis=1, bitorder="little")
        cost = flags[:, :unit_costs.size] @ unit_costs
        w = (np.ones(cost.size) if sample_weight is None
             else np.asarray(sample_weight[start:start + chunk_size], dtype=float))
        total += float(w @ cost)
        weight += float(w.sum())
    return total / weight


def _pruned_path_units(forest, mask, costs):
    """(n_nodes, words) bitmask of the units paid on the pruned path down to each node
    (splits only pay; the mask is closed under parents, so below a cut nothing adds)."""
    bits = feature_unit_bits(costs.feature_units)[
        np.where(mask & (forest.feature >= 0), forest.feature, -1)]
    for at, par in node_levels(forest):  # shallowest first
        bits[at] |= bits[par]
    return bits


def cost_sample_report(problem, split_mask, X=None, sample_weight=None, confidence=0.95):
    """What ``solve_info`` records for a problem compiled with ``cost_sample``.

    The sampled average cost and its interval; with ``X`` (all cost rows)
    also the true average cost of the pruning, whether it lies in the
    interval, and the objective with the true cost term.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> p = po.compile_problem(rf, X, y, lam=0.1, cost_sample=60)
    >>> r = po.solve(p, solver="mincut")
    >>> rep = cost_sample_report(p, r.split_mask, X)
    >>> rep["n_sample"], rep["n_population"]
    (60, 150)
    """
    if getattr(problem, "cost_sample", None) is None:
        return {}
    out = sampled_cost_interval(problem, split_mask, confidence)
    if X is not None:
        true = full_average_cost(problem.forest, split_mask, problem.costs,
                                 problem.forest.check_X(X), sample_weight)
        b = problem.evaluate(split_mask)
        out.update(true_average_cost=true,
                   true_in_ci=bool(out["cost_ci"][0] <= true <= out["cost_ci"][1]),
                   true_objective=b.error_term + problem.lam * (
                       true + problem.depth_cost * b.average_depth))
    return out


def local_rows(X):
    """``X`` when its rows are in this process (for the true-cost pass), None for a dask
    collection (its rows stay on the cluster).

    Examples
    --------
    >>> local_rows([[0.0]])
    [[0.0]]
    """
    return None if type(X).__module__.split(".")[0] in ("dask", "dask_expr") else X
