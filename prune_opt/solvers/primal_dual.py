"""Primal-dual Lagrangian decomposition (Algorithm 1 of the BudgetPrune paper).

The coupling constraints ``wt_r <= w_p`` (first-use record r of tree t may
only be active when its (row, unit) pair p is paid) are dualised with
multipliers ``beta_r >= 0``.  The Lagrangian then separates:

* one subproblem per tree: the best pruning under node weights
  ``a_h = split_weight_h + sum_{r at h} beta_r``, solved exactly by a
  vectorised bottom-up dynamic program or (reference) by networkx shortest
  paths on the paper's network (:mod:`prune_opt.solvers._tree_dp`);
* a closed form for the pairs: ``w_p = 1`` iff its reduced cost
  ``pair_weight_p - sum_{r -> p} beta_r`` is negative.

``L(beta)`` is a certified lower bound; each subproblem solution is a valid
pruning (primal recovery), optionally improved by exact per-tree best
responses.  The duals follow projected subgradient steps.  The trees (in
blocks) go through ``joblib.Parallel`` so a ``joblib.parallel_backend("dask")``
context runs them on a Dask cluster.  See ``docs/math/primal_dual.md``.
"""

from __future__ import annotations

import time

import numpy as np

from ._base import Solver, SolverError, SolveResult, register_solver
from ._tree_dp import SUBPROBLEMS, TreeLayout, solve_block, tree_dp

__all__ = ["PrimalDualSolver", "initial_duals", "lagrangian"]

STEP_RULES = ("polyak", "diminishing", "constant")
INIT_RULES = ("even", "zero", "full")
OPTIMAL_GAP = 1e-9


def relative_gap(objective, bound):
    """``max(objective - bound, 0) / max(|objective|, 1e-12)`` (as SolveResult.gap)."""
    return max(objective - bound, 0.0) / max(abs(objective), 1e-12)


def initial_duals(problem, init="even"):
    """Starting multipliers, one per first-use record (natural units).

    Parameters
    ----------
    problem : PruningProblem
    init : {"even", "zero", "full"}
        ``"even"`` spreads each pair's cost evenly over its records (every
        pair's reduced cost starts at 0), ``"zero"`` ignores costs at first,
        ``"full"`` charges each record the whole pair cost.

    Returns
    -------
    ndarray (problem.n_uses,)

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import numpy as np
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> problem = po.compile_problem(rf, X, y, lam=0.01)
    >>> beta = initial_duals(problem)
    >>> pw = problem.closure_data()["pair_weight"]
    >>> bool(np.allclose(np.bincount(problem.use_pair, beta, problem.n_pairs), pw))
    True
    """
    if init not in INIT_RULES:
        raise ValueError(f"init must be one of {INIT_RULES}, got {init!r}")
    pw = problem.lam * problem.pair_cost()
    if init == "zero":
        return np.zeros(problem.n_uses)
    if init == "full":
        return pw[problem.use_pair].copy()
    count = np.bincount(problem.use_pair, minlength=problem.n_pairs)
    return (pw / np.maximum(count, 1))[problem.use_pair]


def lagrangian(problem, beta, *, subproblem="dp"):
    """Evaluate the Lagrangian dual function at ``beta`` (serial reference).

    Parameters
    ----------
    problem : PruningProblem
    beta : ndarray (problem.n_uses,), non-negative
    subproblem : {"dp", "networkx"}

    Returns
    -------
    dict with ``bound`` (L(beta), a lower bound on the optimum, natural units),
    ``split_mask`` (the subproblems' pruning), ``pairs`` (closed-form w) and
    ``tree_values`` (each tree's subproblem optimum).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> problem = po.compile_problem(rf, X, y, lam=0.01)
    >>> out = lagrangian(problem, initial_duals(problem))
    >>> out["bound"] <= problem.evaluate(out["split_mask"]).objective + 1e-12
    True
    """
    if subproblem not in SUBPROBLEMS:
        raise ValueError(f"subproblem must be one of {sorted(SUBPROBLEMS)}, got {subproblem!r}")
    beta = _check_duals(problem, beta, "beta")
    cd = problem.closure_data()
    weight = cd["split_weight"] + np.bincount(problem.use_node, beta, problem.n_nodes)
    values, mask = solve_block(TreeLayout(problem.forest), weight, subproblem)
    rc = cd["pair_weight"] - np.bincount(problem.use_pair, beta, problem.n_pairs)
    w = rc < 0.0
    bound = cd["constant"] + float(values.sum()) + float(rc[w].sum())
    return {"bound": bound, "split_mask": mask, "pairs": w, "tree_values": values}


def _check_duals(problem, beta, name):
    try:
        beta = np.asarray(beta, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a numeric array of duals") from None
    if beta.shape != (problem.n_uses,):
        raise ValueError(
            f"{name} must have one dual per first-use record, shape ({problem.n_uses},), got "
            f"{beta.shape}; pass info['duals'] of a solve on the same forest and data"
        )
    if not np.isfinite(beta).all() or (beta < 0).any():
        raise ValueError(f"{name} must be finite and non-negative")
    return beta


def _dot(a, b):
    """Dot product without BLAS threads (their start-up dominates at this size)."""
    return float(np.einsum("i,i->", a, b))


def _blocks(forest, n_blocks):
    """Split the trees into ``n_blocks`` contiguous ranges of similar node counts."""
    T = forest.n_trees
    n_blocks = max(1, min(int(n_blocks), T))
    sizes = np.diff(forest.node_offset)
    cum = np.cumsum(sizes)
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, n_blocks) / n_blocks, side="left") + 1
    edges = np.unique(np.concatenate([[0], np.clip(cuts, 1, T - 1) if T > 1 else [], [T]]))
    return [range(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


class _TreePolisher:
    """Exact per-tree best responses (Gauss-Seidel over trees) of a pruning.

    With the other trees fixed, tree t pays ``pair_weight_p`` for an active
    record r only when no other tree pays p; each tree has at most one record
    per pair, so the best response is one DP with those record costs.  Every
    pass can only lower the objective.
    """

    def __init__(self, problem, split_weight, pair_weight):
        f = problem.forest
        self.layouts = [TreeLayout(f, range(t, t + 1)) for t in range(f.n_trees)]
        tree_of_use = f.tree_of_node[problem.use_node]
        self.order = np.argsort(tree_of_use, kind="stable")
        self.bounds = np.searchsorted(tree_of_use[self.order], np.arange(f.n_trees + 1))
        self.use_node = problem.use_node
        self.use_pair = problem.use_pair
        self.sw = split_weight
        self.pw = pair_weight
        self.n_pairs = problem.n_pairs

    def __call__(self, mask, tree_order):
        mask = mask.copy()
        active = mask[self.use_node]
        count = np.bincount(self.use_pair[active], minlength=self.n_pairs)
        for t in tree_order:  # Python loop over trees only
            lay = self.layouts[t]
            rec = self.order[self.bounds[t]:self.bounds[t + 1]]
            pairs, nodes = self.use_pair[rec], self.use_node[rec] - lay.start
            np.subtract.at(count, pairs[active[rec]], 1)
            cost = np.where(count[pairs] == 0, self.pw[pairs], 0.0)
            weight = self.sw[lay.start:lay.stop] + np.bincount(nodes, cost, lay.n_nodes)
            _, m = tree_dp(lay, weight)
            mask[lay.start:lay.stop] = m
            active[rec] = m[nodes]
            np.add.at(count, pairs[active[rec]], 1)
        return mask


@register_solver
class PrimalDualSolver(Solver):
    """Lagrangian primal-dual method: per-tree subproblems, certified gap.

    Registered as ``"primal-dual"``; pass the parameters below as
    ``solver_options`` of :func:`prune_opt.solve` or :func:`prune_opt.prune`.
    The result carries ``bound`` (the best Lagrangian value, a certified lower
    bound), ``gap``, the final ``duals`` and the iteration ``history`` in
    ``solve_info``.

    Parameters
    ----------
    step : {"polyak", "diminishing", "constant"}
        Subgradient step rule.  Polyak uses the best primal objective as
        target, ``theta (UB - L) / ||d||^2``, halving ``theta`` when the bound
        stalls for ``patience`` iterations; the other two scale
        ``t0 = (UB_1 - L_1) / ||d_1||^2`` by ``step_size`` (and by
        ``1/sqrt(k)`` for "diminishing").
    step_size : float, default 1.0
        ``theta`` of the Polyak rule (0 < theta <= 2) or the multiplier of
        ``t0``.
    max_iter : int, default 1000
    gap_tol : float, default 1e-4
        Stop once ``(objective - bound) / |objective| <= gap_tol``.
    n_jobs : int, default 1
        joblib workers over blocks of trees (1: in process, no joblib).  Under
        ``joblib.parallel_backend("dask")`` the blocks run on a Dask cluster.
    warm_start : array-like, optional
        Duals from a previous solve's ``solve_info["duals"]`` on the same
        compiled forest and data (e.g. at another lambda, rescaled by the
        ratio of the lambdas).
    subproblem : {"dp", "networkx"}
        Per-tree solver: the vectorised DP, or networkx shortest paths on the
        paper's network (the reference; slow).
    init : {"even", "zero", "full"}
        Starting duals when there is no warm start (see :func:`initial_duals`).
    polish : int, default 10
        Every ``polish`` iterations, and whenever the recovered pruning is the
        best so far, improve it by one pass of exact per-tree best responses
        (0 disables).
    seed : int, default 0
        Seeds the tree order of the polishing passes.
    history : bool, default True
        Record objective and bound per iteration.
    deflection : bool, default True
        Deflect the subgradient by the previous direction
        (Camerini-Fratta-Maffioli), which damps zig-zagging.
    patience : int, default 20
        Iterations without a better bound before the Polyak ``theta`` halves.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> problem = po.compile_problem(rf, X, y, lam=0.01)
    >>> pd = po.solve(problem, solver="primal-dual", solver_options={"gap_tol": 1e-6})
    >>> exact = po.solve(problem, solver="highs").objective
    >>> pd.solve_info["bound"] <= exact + 1e-12 <= pd.objective + 2e-12
    True
    >>> pd.solve_info["gap"] <= 1e-6
    True
    """

    name = "primal-dual"
    kind = "decomposition"
    exact = False
    requires = ("joblib",)
    install_hint = "pip install joblib (networkx for subproblem='networkx')"
    options = {"step": "polyak", "step_size": 1.0, "max_iter": 1000, "gap_tol": 1e-4,
               "n_jobs": 1, "warm_start": None, "subproblem": "dp", "init": "even",
               "polish": 10, "seed": 0, "history": True, "deflection": True,
               "patience": 20}

    def _check_options(self):
        p = self.params
        if p["step"] not in STEP_RULES:
            raise ValueError(f"solver_options['step'] must be one of {STEP_RULES}, "
                             f"got {p['step']!r}")
        if p["subproblem"] not in SUBPROBLEMS:
            raise ValueError(f"solver_options['subproblem'] must be one of "
                             f"{sorted(SUBPROBLEMS)}, got {p['subproblem']!r}")
        if p["init"] not in INIT_RULES:
            raise ValueError(f"solver_options['init'] must be one of {INIT_RULES}, "
                             f"got {p['init']!r}")
        size = float(p["step_size"])
        if not np.isfinite(size) or size <= 0 or (p["step"] == "polyak" and size > 2):
            raise ValueError("solver_options['step_size'] must be positive (and <= 2 for "
                             f"the Polyak rule), got {p['step_size']!r}")
        for key in ("max_iter",):
            if not isinstance(p[key], (int, np.integer)) or p[key] < 1:
                raise ValueError(f"solver_options[{key!r}] must be a positive integer, "
                                 f"got {p[key]!r}")
        if not isinstance(p["polish"], (int, np.integer)) or p["polish"] < 0:
            raise ValueError(f"solver_options['polish'] must be a non-negative integer, "
                             f"got {p['polish']!r}")
        gap_tol = float(p["gap_tol"])
        if not np.isfinite(gap_tol) or gap_tol < 0:
            raise ValueError(f"solver_options['gap_tol'] must be >= 0, got {p['gap_tol']!r}")
        if not isinstance(p["n_jobs"], (int, np.integer)) or p["n_jobs"] == 0:
            raise ValueError("solver_options['n_jobs'] must be a non-zero integer (joblib "
                             f"convention, -1 = all workers), got {p['n_jobs']!r}")
        if p["subproblem"] == "networkx":
            try:
                import networkx  # noqa: F401
            except ImportError:
                raise SolverError("subproblem='networkx' needs networkx; pip install "
                                  "networkx") from None

    def _solve(self, problem, *, time_limit, verbose):
        self._check_options()
        if problem.budget is not None:
            raise ValueError("solver='primal-dual' does not handle a hard budget row; "
                             "compile without budget= or use solver='highs' / 'cbc-ip'")
        p = self.params
        start = time.perf_counter()
        cd = problem.closure_data()
        sw, pw, const = cd["split_weight"], cd["pair_weight"], cd["constant"]
        un, up = problem.use_node, problem.use_pair
        n_nodes, n_pairs = problem.n_nodes, problem.n_pairs
        if p["warm_start"] is not None:
            beta = _check_duals(problem, p["warm_start"], "solver_options['warm_start']")
            beta = beta.copy()
        else:
            beta = initial_duals(problem, p["init"])
        method = p["subproblem"]
        polisher = _TreePolisher(problem, sw, pw) if p["polish"] else None
        rng = np.random.default_rng(p["seed"])
        gap_tol, max_iter = float(p["gap_tol"]), int(p["max_iter"])
        theta = float(p["step_size"])
        hist = {"objective": [], "bound": [], "best_objective": [], "best_bound": [],
                "seconds": []}
        best_obj, best_mask, best_bound = np.inf, None, -np.inf
        t0, d_prev = None, None
        deflect, patience = bool(p["deflection"]), int(p["patience"])
        stall, status, k = 0, "iteration_limit", 0

        parallel = None
        if p["n_jobs"] != 1:
            import joblib

            n_blocks = joblib.effective_n_jobs(p["n_jobs"])
            layouts = [TreeLayout(problem.forest, r) for r in _blocks(problem.forest, n_blocks)]
            parallel = joblib.Parallel(n_jobs=p["n_jobs"])
            parallel.__enter__()
        else:
            layouts = [TreeLayout(problem.forest)]

        def subproblems(weight):
            if parallel is None:
                return solve_block(layouts[0], weight, method)
            from joblib import delayed

            parts = parallel(delayed(solve_block)(lay, weight[lay.start:lay.stop], method)
                             for lay in layouts)
            return (np.concatenate([v for v, _ in parts]),
                    np.concatenate([m for _, m in parts]))

        try:
            for k in range(1, max_iter + 1):
                weight = sw + np.bincount(un, beta, n_nodes)
                values, mask = subproblems(weight)
                rc = pw - np.bincount(up, beta, n_pairs)
                w = rc < 0.0
                bound = const + float(values.sum()) + float(rc[w].sum())
                active = mask[un]
                used = np.zeros(n_pairs, dtype=bool)
                used[up[active]] = True
                obj = const + float(sw[mask].sum()) + float(pw[used].sum())
                if polisher is not None and (obj < best_obj or k % p["polish"] == 0):
                    mask = polisher(mask, rng.permutation(problem.n_trees))
                    used[:] = False
                    used[up[mask[un]]] = True
                    obj = const + float(sw[mask].sum()) + float(pw[used].sum())
                if obj < best_obj:
                    best_obj, best_mask = obj, mask
                if bound > best_bound + 1e-12 * abs(best_bound):
                    best_bound, stall = bound, 0
                elif bound > best_bound:
                    best_bound, stall = bound, stall + 1
                else:
                    stall += 1
                if p["history"]:
                    hist["objective"].append(obj)
                    hist["bound"].append(bound)
                    hist["best_objective"].append(best_obj)
                    hist["best_bound"].append(best_bound)
                    hist["seconds"].append(time.perf_counter() - start)
                gap = relative_gap(best_obj, best_bound)
                if verbose and (k == 1 or k % 50 == 0):
                    print(f"[primal-dual] it {k:5d}  objective {best_obj:.8g}  "
                          f"bound {best_bound:.8g}  gap {gap:.2e}")
                g = active.astype(float) - w[up]
                if deflect and d_prev is not None:  # Camerini-Fratta-Maffioli deflection
                    gamma = max(0.0, -1.5 * _dot(g, d_prev) / max(_dot(d_prev, d_prev), 1e-300))
                    g = g + gamma * d_prev
                g[(beta <= 0.0) & (g < 0.0)] = 0.0  # projected direction: beta stays >= 0
                gg = _dot(g, g)
                d_prev = g
                if gap <= OPTIMAL_GAP or gg == 0.0:
                    status = "optimal" if gap <= OPTIMAL_GAP else "gap_limit"
                    break
                if gap <= gap_tol:
                    status = "gap_limit"
                    break
                if time_limit is not None and time.perf_counter() - start >= time_limit:
                    status = "time_limit"
                    break
                if k == max_iter:
                    break
                if p["step"] == "polyak":
                    if stall >= patience:
                        theta, stall = max(theta / 2, 1e-6), 0
                    step = theta * (best_obj - bound) / gg
                else:
                    if t0 is None:
                        t0 = max(best_obj - bound, 0.0) / gg
                    step = float(p["step_size"]) * t0
                    if p["step"] == "diminishing":
                        step /= np.sqrt(k)
                beta = np.maximum(beta + step * g, 0.0)
        finally:
            if parallel is not None:
                parallel.__exit__(None, None, None)

        objective = problem.evaluate(best_mask).objective
        bound = min(best_bound, objective)
        gap = relative_gap(objective, bound)
        if status == "gap_limit" and gap <= OPTIMAL_GAP:
            status = "optimal"
        info = {"gap": gap, "duals": beta, "step": p["step"], "subproblem": method,
                "n_blocks": len(layouts), "final_theta": theta}
        if p["history"]:
            info["history"] = {key: np.asarray(v) for key, v in hist.items()}
        return SolveResult(split_mask=best_mask, objective=float(objective), bound=float(bound),
                           status=status, seconds=0.0, iterations=k, max_fractionality=0.0,
                           info=info)
