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

__all__ = ["resolve_cost_sample", "draw_cost_sample", "sampled_cost_interval",
           "full_average_cost", "cost_sample_report", "AUTO_ROWS"]

# rows used by cost_sample="auto": the sampled average cost of a pruning then has a
# standard error below 0.2% of the largest per-row cost (sd <= max / 2)
AUTO_ROWS = 250_000


def resolve_cost_sample(cost_sample, n_rows):
    """Number of cost rows to sample, or None for all rows.

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
        return None if n_rows <= AUTO_ROWS else AUTO_ROWS
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
    mask = np.asarray(split_mask, dtype=bool)
    used = np.zeros(problem.n_pairs, dtype=bool)
    used[problem.use_pair[mask[problem.use_node]]] = True
    unit = problem.pair_unit[used]
    return np.bincount(problem.pair_row[used], weights=problem.costs.unit_costs[unit],
                       minlength=problem.n_rows)


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

    One streaming pass (prediction-like), ``chunk_size`` rows at a time.
    """
    from ._pruned import PrunedForest

    pf = PrunedForest(forest, split_mask, costs=costs)
    total, weight = 0.0, 0.0
    for start in range(0, X.shape[0], chunk_size):
        cost = pf.acquisition_cost(X[start:start + chunk_size])
        w = (np.ones(cost.size) if sample_weight is None
             else np.asarray(sample_weight[start:start + chunk_size], dtype=float))
        total += float(w @ cost)
        weight += float(w.sum())
    return total / weight


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
