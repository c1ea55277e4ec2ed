"""Splits and paid pairs that every optimum of the closure program shares.

The closure program (``docs/math/closure.md``) is

    min  constant + sum_h s_h x_h + sum_p a_p y_p,   x_child <= x_parent,
         x_h <= y_p for every first-use record (h, p),   a_p >= 0.

Splitting a node h whose parent splits changes the objective by ``s_h`` plus the
weights of the pairs that h's records newly pay, at most ``ub_h = s_h + add_h``
with ``add_h`` the weights of all the pairs with a record at h that are not
already known to be paid.  Taking h together with the descendants that lower that
bound, ``best(h) = ub_h + sum over internal children c of min(0, best(c))``, gives
a closed set T (h and those descendants) that any closed set S holding h's parent
but not h can add, and ``w(S + T) - w(S) <= best(h)``: every pair T newly pays has
a record at a node of T, and a pair already known to be paid in every optimum is
paid in S when S is optimal.  So when ``best(h) < 0`` no optimum holds h's parent
without h: ``x_h = x_parent(h)`` in every optimum, and a root with ``best < 0``
splits in every optimum.  The nodes reached from a root through such links split
in every optimum (*fixed*), the pairs with a record at a fixed node are paid in
every optimum (*forced*), and their weights leave the ``add`` of the other nodes,
which can only lower ``best`` and fix more: the rounds repeat until nothing new
is fixed.  The fixed nodes and the forced pairs then leave the graph (their
weights go into the constant), with every record of a forced pair; the optimum is
unchanged (``docs/math/closure.md``, section 4).
"""

from __future__ import annotations

import numpy as np

from ..routing._records import node_levels

__all__ = ["fixed_splits", "record_weight_at_nodes", "cost_at_nodes"]

# the rounds stop when one fixes nothing new; every round fixes at least one node, so
# this only caps the work on adversarial chains
MAX_ROUNDS = 64
# a bound within this share of the largest weight from 0 is not trusted to be < 0
# (floating-point noise in the weights): such a node is simply not fixed
NOISE = 1e-12


def record_weight_at_nodes(problem, pair_weight, pairs=None):
    """For every node, the summed ``pair_weight`` of the pairs with a record there
    (one term per record), over ``pairs`` (default: every pair): one gather of the
    pairs' first-use nodes per unit and tree when the records are kept as leaves,
    else one pass over their records."""
    n = problem.n_nodes
    lr = problem.leaf_records
    pair_weight = np.asarray(pair_weight, dtype=float)
    pairs = np.arange(problem.n_pairs) if pairs is None else np.asarray(pairs)
    out = np.zeros(n)
    if lr is not None:
        step = max(1, (1 << 22) // max(lr.n_trees, 1))
        for u in np.unique(problem.pair_unit[pairs]):
            of_u = pairs[problem.pair_unit[pairs] == u]
            for a in range(0, of_u.size, step):
                block = of_u[a:a + step]
                M = lr.unit_matrix(int(u), problem.pair_row[block])
                has = M >= 0
                out += np.bincount(M[has], weights=np.broadcast_to(
                    pair_weight[block], M.shape)[has], minlength=n)
        return out
    from ._prefix_hubs import _ragged

    starts = problem.pair_start
    use_node = problem.use_node
    step = 1 << 15
    for a in range(0, pairs.size, step):
        block = pairs[a:a + step]
        rec, local = _ragged(starts, block)
        out += np.bincount(use_node[rec], weights=pair_weight[block][local], minlength=n)
    return out


def cost_at_nodes(problem):
    """:func:`record_weight_at_nodes` of the closure's pair weights over every pair.

    With the records kept as leaves it is read off the first-use table: every row
    reaching h pays there each unit first used at h, so the sum is
    ``lam * (weight of the rows at h) / N * sum of the costs of the units first used
    at h``; no pass over the rows.
    """
    lr = problem.leaf_records
    if lr is None:
        return record_weight_at_nodes(problem, problem.lam * problem.pair_cost())
    own = lr.first == np.arange(problem.n_nodes, dtype=lr.first.dtype)[:, None]
    unit_costs = np.asarray(problem.costs.unit_costs, dtype=float)[:lr.n_units]
    return (problem.lam * problem.node_cost_weight / problem.total_weight) * (own @ unit_costs)


def fixed_splits(problem, off=None, *, weights=None, max_rounds=MAX_ROUNDS):
    """Internal nodes that split and pairs that are paid in every optimum of the
    closure program of ``problem``.

    Parameters
    ----------
    problem : PruningProblem
        Supplies the weights (:meth:`~prune_opt.PruningProblem.closure_weights`) and
        the records (kept as leaves or held).
    off : ndarray of bool (n_nodes,), optional
        Nodes already cut (closed under descendants; e.g.
        :func:`prune_opt.solvers.mincut.unprofitable_nodes`): never fixed.
    weights : dict, optional
        ``problem.closure_weights()`` when the caller already has it.

    Returns
    -------
    fixed : ndarray of bool (n_nodes,)
        Closed under parents.
    forced : ndarray of bool (n_pairs,)
        The pairs with a record at a fixed node.
    rounds : int

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> p = po.compile_problem(rf, X, y, lam=1e-4)
    >>> fixed, forced, _ = fixed_splits(p)
    >>> best = po.solve(p, solver="mincut", solver_options={"fix_splits": False})
    >>> bool((best.split_mask[fixed]).all())  # every optimum splits them
    True
    """
    f = problem.forest
    cd = problem.closure_weights() if weights is None else weights
    pair_weight = np.asarray(cd["pair_weight"], dtype=float)
    split_weight = np.asarray(cd["split_weight"], dtype=float)
    live = ~f.is_leaf if off is None else ~f.is_leaf & ~off
    fixed = np.zeros(f.n_nodes, dtype=bool)
    forced = np.zeros(pair_weight.size, dtype=bool)
    if not live.any():
        return fixed, forced, 0
    levels = node_levels(f)
    is_root = np.zeros(f.n_nodes, dtype=bool)
    is_root[f.node_offset[:-1]] = True
    scale = max(float(np.abs(split_weight[live]).max(initial=0.0)),
                float(pair_weight.max(initial=0.0)))
    tol = NOISE * scale
    add = cost_at_nodes(problem) if pair_weight.any() else None
    open_pairs = np.flatnonzero(pair_weight > 0)
    rounds = 0
    while rounds < max_rounds:
        rounds += 1
        now = _fixed_nodes(split_weight if add is None else split_weight + add, live,
                           levels, is_root, tol) | fixed
        new = now & ~fixed
        if not new.any():
            break
        fixed = now
        if add is None:  # no pair weighs anything: nothing more to learn
            break
        hit = _pairs_touching(problem, new, open_pairs)
        newly, open_pairs = open_pairs[hit], open_pairs[~hit]
        forced[newly] = True
        # the open pairs' weight at every node: recounted over the pairs still open or
        # the newly forced ones taken off, whichever reads fewer pairs
        if open_pairs.size <= newly.size:
            add = record_weight_at_nodes(problem, pair_weight, open_pairs)
        elif newly.size:
            add = add - record_weight_at_nodes(problem, pair_weight, newly)
    return fixed, forced, rounds


def _pairs_touching(problem, mask, pairs):
    """Boolean over ``pairs``: those with a record at a node of ``mask``."""
    lr = problem.leaf_records
    if lr is not None:
        return lr.pairs_used(mask, problem.pair_row[pairs], problem.pair_unit[pairs])
    return problem.pairs_used(mask)[pairs]


def _fixed_nodes(upper, live, levels, is_root, tol):
    """Nodes linked to a root by ``best < -tol`` links (see the module docstring)."""
    best = np.where(live, upper, 0.0)
    for at, par in reversed(levels):  # deepest first: children are final
        gain = np.where(live[at], np.minimum(best[at], 0.0), 0.0)
        np.add.at(best, par, gain)
    link = live & (best < -tol)
    fixed = link & is_root
    for at, par in levels:  # shallowest first
        fixed[at] = link[at] & fixed[par]
    return fixed
