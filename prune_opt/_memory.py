"""Memory available to this process, and the memory a compile or solve will need.

Both are read or estimated *before* anything large is allocated, so that a
problem that cannot fit is refused with the figures and the ways out instead
of being killed by the kernel half-way.

The estimates are documented functions of the problem sizes (bytes):

* compile: ``n_examples * (T * leaf_bytes + 40)`` for the leaf-signature
  matrix and merging, ``n_rows * d * 8`` for the merged rows,
  ``n_uses * 8`` for the records (int32 node and pair), ``n_pairs * 8`` for
  the pairs, ``n_nodes * (C + 4) * 8`` for node tables, plus one routing block;
* mincut solve: the loaded problem plus the larger of the graph build
  (``BUILD_BYTES_PER_RECORD`` per record) and OR-Tools' max-flow
  (``FLOW_BYTES_PER_ARC`` per arc, ``FLOW_BYTES_PER_VERTEX`` per vertex), with
  the typical ``ARCS_PER_RECORD`` arcs per record of the reduced graph; the
  solver checks the flow again once the graph, and so its exact size, is known.

``n_uses`` is measured by routing a small probe of the rows (``uses per
row``); the constants were calibrated on the ``benchmarks/solvers.py``
runs (elec, 100 trees) and rounded up.
"""

from __future__ import annotations

import os
import resource

import numpy as np

# bytes per LP nonzero / variable a matrix-based backend needs (CSR copies, solver
# internals): HiGHS peaked at about 2.4 GB for 4.6M nonzeros (benchmarks/solvers.py)
LP_BYTES_PER_NNZ = 520
LP_BYTES_PER_VARIABLE = 200

__all__ = ["available_memory", "estimate_compile_memory", "estimate_solve_memory",
           "estimate_solve_sizes", "estimate_flow_memory",
           "check_fits", "format_bytes"]

# bytes OR-Tools' SimpleMaxFlow holds per arc once solved: its own arc arrays (16),
# the flow per arc (8), the static graph with reverse arcs and the arc permutation
# (~22) and the residual capacities of both directions (16); measured 62 per arc on
# 16.8M random arcs, rounded up.  Per vertex: excess, potential, first admissible arc,
# the graph's start offsets and the active-node stacks
FLOW_BYTES_PER_ARC = 64
FLOW_BYTES_PER_VERTEX = 48
# arcs the reduced closure graph keeps per first-use record (unprofitable subtrees
# left out, pairs folded and merged, prefix hubs), measured with benchmarks/solvers.py
# on resampled elec, 100 fully grown trees: 0.15 at 100k rows, 0.075 at 500k, 0.05
# at 1M; taken with margin.  Without any reduction it is 1 (plus one per node and
# per pair).
ARCS_PER_RECORD = 0.2
# resident bytes per record the graph build itself needs above the problem (kept
# records, rewritten records, prefix matrices, pair grouping): measured 8.9 at 100k
# rows and 8.0 at 1M (where the build, not the max-flow, is the solve's peak)
BUILD_BYTES_PER_RECORD = 12
# the same when the problem keeps its records as leaves (LeafRecords): the build then
# holds one unit's (trees x pairs) int32 matrix and per-pair arrays, never the records;
# measured 4.6 bytes per record for the whole solve above the problem at 1M rows
COMPACT_BUILD_BYTES_PER_RECORD = 6
# resident bytes of one routing block's temporaries (2**22 records, int64 keys and
# the decision-path matrices of one tree), measured and rounded up
BLOCK_BYTES = 600 * 2**20
# interpreter, numpy, scikit-learn and OR-Tools once imported
BASE_BYTES = 300 * 2**20


def _read_int(path):
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    if not text or text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _meminfo_available():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _status_bytes(key):
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _cgroup_room(root="/sys/fs/cgroup"):
    """Room left under the cgroup memory limit (v2, else v1), or None."""
    limit = _read_int(os.path.join(root, "memory.max"))
    if limit is not None:
        used = _read_int(os.path.join(root, "memory.current")) or 0
        return max(limit - used, 0)
    limit = _read_int(os.path.join(root, "memory", "memory.limit_in_bytes"))
    if limit is not None and limit < 2**60:  # v1 reports "no limit" as a huge number
        used = _read_int(os.path.join(root, "memory", "memory.usage_in_bytes")) or 0
        return max(limit - used, 0)
    return None


def _rlimit_room():
    """Room left under RLIMIT_AS (virtual size) and RLIMIT_DATA, or None."""
    rooms = []
    for res, key in ((resource.RLIMIT_AS, "VmSize"), (resource.RLIMIT_DATA, "VmData")):
        soft, _ = resource.getrlimit(res)
        if soft != resource.RLIM_INFINITY:
            rooms.append(max(soft - (_status_bytes(key) or 0), 0))
    return min(rooms) if rooms else None


def available_memory(cgroup_root="/sys/fs/cgroup"):
    """Bytes this process can still allocate, or None when nothing is known.

    The minimum of the kernel's ``MemAvailable``, the room under the cgroup
    memory limit (v2 ``memory.max - memory.current``, else v1) and the room
    under ``RLIMIT_AS`` / ``RLIMIT_DATA`` (``ulimit -v`` / ``-d``).

    Examples
    --------
    >>> from prune_opt._memory import available_memory
    >>> avail = available_memory()
    >>> avail is None or avail >= 0
    True
    """
    found = [v for v in (_meminfo_available(), _cgroup_room(cgroup_root), _rlimit_room())
             if v is not None]
    return min(found) if found else None


def format_bytes(n):
    """Human-readable GiB / MiB figure."""
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def estimate_compile_memory(forest, n_rows, costs, *, uses_per_row=None, pairs_per_row=None,
                            n_features=None, merge=True, compact=False):
    """Peak bytes :func:`prune_opt.compile_problem` needs for ``n_rows`` cost rows.

    Parameters
    ----------
    forest : Forest
    n_rows : int
        Cost rows routed (after sampling).
    costs : FeatureCosts
    uses_per_row, pairs_per_row : float, optional
        First-use records and (row, unit) pairs per row, measured on a probe
        of the data; by default the upper bounds ``T * min(units, depth)``
        and ``units``.
    n_features : int, optional
        Columns of X (default ``forest.n_features``).
    merge : bool
        Whether rows are merged (adds the row hashes and groups; the leaf
        matrix itself is counted always: the records and, with errors on the
        cost data, the node errors are read from it).
    compact : bool
        The records are kept as the rows' leaves (a dense first-use table
        fits): ``records`` is then the leaves' tree-major copy, not 8 bytes
        per record.

    Returns
    -------
    dict with ``bytes`` (the estimate) and its parts.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> from prune_opt.forest._costs import as_feature_costs
    >>> from prune_opt._memory import estimate_compile_memory
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[2, 2], [2, 0], [0, 2]])
    >>> f = Forest([stump], classes=[0, 1], n_features=1)
    >>> est = estimate_compile_memory(f, 10**6, as_feature_costs(None, 1), uses_per_row=1)
    >>> est["records"]
    8000000
    """
    T, n_units = forest.n_trees, max(costs.n_units, 1)
    if uses_per_row is None:
        uses_per_row = T * min(n_units, forest.max_depth)
    if pairs_per_row is None:
        pairs_per_row = n_units
    d = forest.n_features if n_features is None else n_features
    leaf_bytes = 2 if int(np.diff(forest.node_offset).max()) <= 65535 else 4
    parts = {
        "merge": int(n_rows * (T * leaf_bytes + (40 if merge else 0))),
        "rows": int(n_rows * d * 8),
        "records": int(n_rows * (T * leaf_bytes if compact else uses_per_row * 8)),
        "pairs": int(n_rows * pairs_per_row * (16 if compact else 8)),
        # per-node statistics, and the (node x paid unit) int32 first-use table
        "nodes": int(forest.n_nodes * ((forest.value_width + 4) * 8 + 4 * costs.n_units)),
        "block": int(min(BLOCK_BYTES, n_rows * uses_per_row * 48)),
    }
    return {"bytes": BASE_BYTES + sum(parts.values()), "base": BASE_BYTES, **parts}


def estimate_solve_memory(problem, solver="mincut"):
    """Peak bytes a solve of ``problem`` needs (the problem itself included).

    For ``mincut`` (and ``auto``): the problem's arrays, then the larger of
    the graph build and OR-Tools' max-flow (:func:`estimate_solve_sizes`,
    typical reduced graph); for LP backends the matrix estimate their
    ``check_size`` uses.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> from prune_opt._memory import estimate_solve_memory
    >>> X, y = load_iris(return_X_y=True)
    >>> p = po.compile_problem(DecisionTreeClassifier(max_depth=2).fit(X, y), X, y)
    >>> estimate_solve_memory(p)["bytes"] > 0
    True
    """
    held = problem_bytes(problem)
    if solver in ("mincut", "auto", "primal-dual"):
        compact = solver != "primal-dual" and not problem.records_held
        est = estimate_solve_sizes(problem.n_uses, problem.n_pairs, problem.n_nodes,
                                   compact=compact)
        est["bytes"] += held - est.pop("problem")
        return {**est, "problem": held}
    else:
        size = problem.size()
        parts = {"problem": held, "matrix": size["nnz"] * LP_BYTES_PER_NNZ
                 + size["n_variables"] * LP_BYTES_PER_VARIABLE}
    return {"bytes": BASE_BYTES + sum(parts.values()), "base": BASE_BYTES, **parts}


def estimate_solve_sizes(n_uses, n_pairs, n_nodes, *, reduced=True, compact=False):
    """Peak bytes of an exact (mincut) solve from the problem sizes alone.

    The problem (8 bytes per record, 8 per pair, ~64 per node) stays loaded;
    on top of it the solve peaks either while the graph is built
    (``BUILD_BYTES_PER_RECORD`` per record) or inside OR-Tools' max-flow
    (``FLOW_BYTES_PER_ARC`` per arc plus ``FLOW_BYTES_PER_VERTEX`` per
    vertex), whichever is larger.  With ``reduced`` the arcs are the typical
    ``ARCS_PER_RECORD`` per record the graph reductions keep; without, the
    unreduced graph (one arc per record, per node and per pair), an upper bound.
    With ``compact`` the records are kept as leaves (no 8 bytes per record in
    the problem) and the build needs ``COMPACT_BUILD_BYTES_PER_RECORD``.

    Examples
    --------
    >>> est = estimate_solve_sizes(10**6, 10**4, 10**3, reduced=False)
    >>> est["max_flow"] == 64 * (10**6 + 2 * 10**3 + 10**4) + 48 * (10**3 + 10**4)
    True
    """
    if reduced:
        arcs = int(ARCS_PER_RECORD * n_uses) + 2 * n_nodes + n_pairs
    else:
        arcs = n_uses + 2 * n_nodes + n_pairs
    flow = FLOW_BYTES_PER_ARC * arcs + FLOW_BYTES_PER_VERTEX * (n_nodes + n_pairs)
    build = (COMPACT_BUILD_BYTES_PER_RECORD if compact else BUILD_BYTES_PER_RECORD) * n_uses
    parts = {"problem": (0 if compact else 8 * n_uses) + 16 * n_pairs + 64 * n_nodes,
             "max_flow": flow, "graph_build": build}
    return {"bytes": BASE_BYTES + parts["problem"] + max(flow, build), "base": BASE_BYTES,
            **parts}


def estimate_flow_memory(n_arcs, n_vertices):
    """Bytes OR-Tools' max-flow needs for a built graph of known size.

    Examples
    --------
    >>> estimate_flow_memory(10**6, 10**3)["bytes"] == 64 * 10**6 + 48 * 10**3
    True
    """
    flow = FLOW_BYTES_PER_ARC * int(n_arcs) + FLOW_BYTES_PER_VERTEX * int(n_vertices)
    return {"bytes": flow, "max_flow": flow}


def problem_bytes(problem):
    """Bytes held by a compiled problem's arrays (the records only when materialised:
    a problem that keeps them as leaves is not made to derive them here)."""
    names = ("pair_start", "pair_row", "pair_unit", "row_weight", "row_of_example",
             "node_error", "node_cost_weight")
    held = sum(getattr(problem, n).nbytes for n in names)
    if problem.records_held:
        held += problem.use_node.nbytes
    src = problem.leaf_records
    if src is not None:
        held += src.leaves_by_tree.nbytes + src.first.nbytes + src.first_by_unit.nbytes
    return int(held)


def check_fits(estimate, what, *, available=None, options=""):
    """Raise MemoryError, with the figures and the ways out, when ``estimate``
    (a dict from the estimators above) exceeds the available memory."""
    avail = available_memory() if available is None else available
    # the interpreter and libraries ("base") are already resident: not counted again
    if avail is None or estimate["bytes"] - estimate.get("base", 0) <= avail:
        return
    big = sorted(((v, k) for k, v in estimate.items() if k not in ("bytes", "base")),
                 reverse=True)[:3]
    detail = ", ".join(f"{k} {format_bytes(v)}" for v, k in big)
    raise MemoryError(
        f"{what} needs about {format_bytes(estimate['bytes'])} ({detail}) but only "
        f"{format_bytes(avail)} is available (RAM, cgroup and ulimit considered); "
        f"{options or 'use fewer rows or shallower trees (max_depth)'}"
    )
