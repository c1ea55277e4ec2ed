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

from numbers import Integral

import numpy as np

from .._validation import (
    FINITE_NONNEG,
    FINITE_POSITIVE,
    NONNEG_INT,
    POSITIVE_INT,
    StrOptions,
)
from ._base import Solver, SolverError, SolveResult
from ._dual_ascent import OPTIMAL_GAP, STEP_RULES, DualAscent, relative_gap
from ._registry import register_solver
from ._tree_dp import SUBPROBLEMS, TreeLayout, solve_block, tree_dp

__all__ = ["PrimalDualSolver", "initial_duals", "lagrangian"]

INIT_RULES = ("even", "zero", "full")


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
    use_pair = problem.use_pair  # derived from pair_start: read once
    if init == "full":
        return pw[use_pair]
    count = np.bincount(use_pair, minlength=problem.n_pairs)
    return (pw / np.maximum(count, 1))[use_pair]


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
    cd = problem.closure_weights()
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
    mip = False
    matrix_based = False
    reference_only = False
    supports_budget_row = False
    auto_rank = None
    STATUS_MAP = {s: s for s in ("optimal", "gap_limit", "iteration_limit", "time_limit")}
    requires = ("joblib",)
    install_hint = "pip install joblib (networkx for subproblem='networkx')"
    options = {"step": "polyak", "step_size": 1.0, "max_iter": 1000, "gap_tol": 1e-4,
               "n_jobs": 1, "warm_start": None, "subproblem": "dp", "init": "even",
               "polish": 10, "seed": 0, "history": True, "deflection": True,
               "patience": 20}

    OPTION_CONSTRAINTS = {
        "step": [StrOptions(set(STEP_RULES))],
        "subproblem": [StrOptions(set(SUBPROBLEMS))],
        "init": [StrOptions(set(INIT_RULES))],
        "step_size": [FINITE_POSITIVE],
        "max_iter": [POSITIVE_INT],
        "polish": [NONNEG_INT],
        "gap_tol": [FINITE_NONNEG],
        "n_jobs": [Integral],
        "patience": [POSITIVE_INT],
    }

    def _check_options(self):
        """Cross-option rules the declarative constraints cannot say."""
        p = self.params
        if p["step"] == "polyak" and float(p["step_size"]) > 2:
            raise ValueError("solver_options['step_size'] must be <= 2 for the Polyak rule, "
                             f"got {p['step_size']!r}")
        if p["n_jobs"] == 0:
            raise ValueError("solver_options['n_jobs'] must be a non-zero integer (joblib "
                             f"convention, -1 = all workers), got {p['n_jobs']!r}")
        if p["subproblem"] == "networkx":
            try:
                import networkx  # noqa: F401
            except ImportError:
                raise SolverError("subproblem='networkx' needs networkx; pip install "
                                  "networkx") from None

    def _solve(self, problem, *, deadline, verbose):
        self._check_options()
        p = self.params
        run = DualAscent(problem, self._initial_duals(problem), p)
        polisher = _TreePolisher(problem, run.sw, run.pw) if p["polish"] else None
        rng = np.random.default_rng(p["seed"])
        status, k = "iteration_limit", 0
        with _Subproblems(problem, p["n_jobs"], p["subproblem"]) as subproblems:
            for k in range(1, int(p["max_iter"]) + 1):
                bound, mask, w = run.evaluate_duals(subproblems)
                obj, best = run.primal_objective(mask), mask
                if polisher is not None and (obj < run.best_obj or k % p["polish"] == 0):
                    best = polisher(mask, rng.permutation(problem.n_trees))
                    obj = run.primal_objective(best)
                gap = run.record(obj, best, bound)
                if verbose and (k == 1 or k % 50 == 0):
                    print(f"[primal-dual] it {k:5d}  objective {run.best_obj:.8g}  "
                          f"bound {run.best_bound:.8g}  gap {gap:.2e}")
                g, gg = run.direction(mask, w)
                status = run.stop_reason(gap, gg, gap_tol=float(p["gap_tol"]),
                                         deadline=deadline, k=k,
                                         max_iter=int(p["max_iter"])) or status
                if status != "iteration_limit" or k == int(p["max_iter"]):
                    break
                run.step(k, bound, g, gg)
        return self._result(problem, run, status, k, subproblems.n_blocks)

    def _initial_duals(self, problem):
        if self.params["warm_start"] is None:
            return initial_duals(problem, self.params["init"])
        return _check_duals(problem, self.params["warm_start"],
                            "solver_options['warm_start']").copy()

    def _result(self, problem, run, status, k, n_blocks):
        objective = problem.evaluate(run.best_mask).objective
        bound = min(run.best_bound, objective)
        gap = relative_gap(objective, bound)
        if status == "gap_limit" and gap <= OPTIMAL_GAP:
            status = "optimal"
        info = {"gap": gap, "duals": run.beta, "step": self.params["step"],
                "subproblem": self.params["subproblem"], "n_blocks": n_blocks,
                "final_theta": run.theta}
        if run.history is not None:
            info["history"] = {key: np.asarray(v) for key, v in run.history.items()}
        return SolveResult(split_mask=run.best_mask, objective=float(objective),
                           bound=float(bound), status=status, seconds=0.0, iterations=k,
                           max_fractionality=0.0, info=info)


class _Subproblems:
    """Context manager: the per-tree subproblem solver, in process or over joblib
    workers (blocks of trees; a ``joblib.parallel_backend("dask")`` context runs
    them on a Dask cluster)."""

    def __init__(self, problem, n_jobs, method):
        self.problem, self.n_jobs, self.method = problem, n_jobs, method
        self.parallel = None

    def __enter__(self):
        forest = self.problem.forest
        if self.n_jobs == 1:
            self.layouts = [TreeLayout(forest)]
            return self
        import joblib

        n_blocks = joblib.effective_n_jobs(self.n_jobs)
        self.layouts = [TreeLayout(forest, r) for r in _blocks(forest, n_blocks)]
        self.parallel = joblib.Parallel(n_jobs=self.n_jobs)
        self.parallel.__enter__()
        return self

    def __exit__(self, *exc):
        if self.parallel is not None:
            self.parallel.__exit__(*exc)

    @property
    def n_blocks(self):
        return len(self.layouts)

    def __call__(self, weight):
        if self.parallel is None:
            return solve_block(self.layouts[0], weight, self.method)
        from joblib import delayed

        parts = self.parallel(delayed(solve_block)(lay, weight[lay.start:lay.stop], self.method)
                              for lay in self.layouts)
        return (np.concatenate([v for v, _ in parts]), np.concatenate([m for _, m in parts]))
