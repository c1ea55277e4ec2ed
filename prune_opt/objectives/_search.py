"""The ensemble optimiser's two searches and their shared input handling.

* :func:`optimize_ensemble` -- block descent at a fixed ``lam`` from the
  paper's optimum and from the unpruned forest;
* :func:`search_budget` -- the best-loss pruning within an average-cost
  budget on a ready state (what :func:`prune_opt.fit_budget` runs for an
  ensemble objective): given candidates, budget descent from the best of
  them; a continuation in ``lam``, greedy repair and budget descent again;
* :class:`Setup` -- validated inputs (forest, data, costs, starts) and the
  result, re-evaluated from scratch.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .._validation import (
    check_labels,
    check_nonneg_scalar,
    check_time_limit,
    check_weights,
    fits_budget,
)
from ..forest._costs import as_feature_costs, estimator_costs
from ..model._pruned import PrunedForest
from ..program._compile import compile_problem
from ..program._prepare import prepare
from ..program._problem import PruningProblem
from ..solvers._tree_dp import best_tree_pruning
from ._base import check_objective_task, get_objective
from ._descent import (
    block_descent,
    budget_descent,
    check_max_iter,
    greedy_repair,
    run_starts,
    tree_layouts,
)
from ._raw_state import ensemble_state

__all__ = ["optimize_ensemble", "search_budget", "BudgetSearch", "tree_optimum", "Setup"]

# from-scratch objective of the result vs the optimiser's running value (relative)
RESULT_RTOL = 1e-9
INITS = ("best", "paper", "full")


def tree_optimum(problem):
    """Split mask of the paper objective's exact optimum at ``lam = 0``: no cost term
    couples the trees, so each tree's own optimum (one dynamic program per tree, on
    its error terms alone) is it (no solver, no records)."""
    p0 = problem.with_lam(0.0)
    leaf_error = p0.leaf_error_coef()
    split_term = np.zeros(problem.n_nodes)
    mask = np.zeros(problem.n_nodes, dtype=bool)
    for t, layout in enumerate(tree_layouts(problem.forest)):
        sl = problem.forest.tree_slice(t)
        mask[sl] = best_tree_pruning(layout, leaf_error[sl], split_term[sl])[1]
    return mask


class Setup:
    """Validated inputs of one optimisation: forest, data, costs and (lazily) the
    paper's compiled problem on the same data."""

    def __init__(self, problem_or_forest, X, y, *, costs, depth_cost, sample_weight, solver,
                 objective):
        if isinstance(problem_or_forest, PruningProblem):
            if costs is not None:
                raise ValueError("costs: a PruningProblem already carries its costs; pass "
                                 "costs=None (or pass the fitted forest instead)")
            self.problem = problem_or_forest
            self.forest, self.costs = self.problem.forest, self.problem.costs
            self.depth_cost = self.problem.depth_cost
        else:
            self.problem = None
            self.costs = estimator_costs(problem_or_forest, costs)
        # X is read and routed once (the node-value fit, the compile and the state share
        # it); a booster's pruned nodes get their values from the loss on (X, y)
        ready = prepare(self.problem.forest if self.problem is not None else problem_or_forest,
                        X, None if self.problem is not None else y,
                        sample_weight=sample_weight)
        self.routed = ready.routed
        if self.problem is None:
            self.forest = ready.forest
            self.costs = as_feature_costs(self.costs, self.forest.n_features,
                                          self.forest.feature_names)
            self.depth_cost = float(depth_cost)
        self.X_raw, self.y_raw, self.sample_weight = X, y, sample_weight
        check_objective_task(objective, self.forest)
        self.X = ready.X
        self.y = check_labels(self.forest, y, self.X.shape[0], name="y")
        self.weight = check_weights(sample_weight, self.X.shape[0])
        if self.weight.sum() <= 0:
            raise ValueError("sample_weight sums to zero; pass positive weights")
        self.solver = solver
        self.objective = objective.for_data(self.y, self.weight)

    def paper_problem(self):
        """The BudgetPrune program on the same data and costs (compiled once)."""
        if self.problem is None:
            self.problem = compile_problem(self.forest, self.X, self.y_raw,
                                           costs=self.costs, depth_cost=self.depth_cost,
                                           sample_weight=self.sample_weight,
                                           routed=self.routed)
        return self.problem

    def paper_mask(self, lam):
        """Split mask of the paper objective's exact optimum at ``lam``.

        At ``lam = 0`` no cost term couples the trees, so one sweep of exact
        tree moves from the root-only pruning reaches the optimum (no solver).
        """
        if lam == 0:
            return tree_optimum(self.paper_problem())
        from ..solvers._solve import solve

        return solve(self.paper_problem().with_lam(lam), solver=self.solver).split_mask

    def starts(self, init, lam):
        """``[(name, split_mask)]`` to start block descent from."""
        if isinstance(init, PrunedForest):
            if not self.forest.same_splits(init.forest):
                raise ValueError("init is a pruning of another forest; pass one of this forest")
            return [("given", init.split_mask)]
        if isinstance(init, np.ndarray):
            return [("given", self.forest.check_split_mask(init, name="init"))]
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, a split mask or a PrunedForest, "
                             f"got {init!r}")
        names = self.forest.ensemble.descent_starts if init == "best" else (init,)
        return [(n, self.paper_mask(lam) if n == "paper" else self.forest.full_split_mask())
                for n in names]

    def result(self, run, objective, lam, info, state):
        """Wrap the best run as a PrunedForest, re-evaluated from scratch on the
        routed rows (every per-row sum recomputed, nothing incremental kept)."""
        pf = PrunedForest(self.forest, run["mask"], costs=self.costs, lam=lam)
        fresh = state.with_lam(lam)
        fresh.depth_cost = self.depth_cost
        fresh.set_mask(run["mask"])
        ev = fresh.breakdown()
        claimed = run["trace"][-1]
        if abs(ev["objective"] - claimed) > RESULT_RTOL * max(1.0, abs(claimed)):
            raise RuntimeError(f"block descent tracked objective {claimed!r} but the pruning "
                               f"evaluates to {ev['objective']!r} (please report this)")
        paper = self.paper_problem().with_lam(lam).evaluate(pf.split_mask)
        pf.objective, pf.breakdown = ev["objective"], paper
        pf.solve_info = {"solver": "block-descent", "objective": objective.name,
                         "status": "converged" if run["converged"] else "stopped",
                         "lam": lam, "depth_cost": self.depth_cost,
                         "trace": run["trace"], "iterations": run["iterations"],
                         "trees_changed": run["changes"], "loss": ev["loss"],
                         "average_cost": ev["average_cost"],
                         "average_depth": ev["average_depth"],
                         "paper_objective": paper.objective, "start": run["start"], **info}
        return pf


def optimize_ensemble(problem_or_forest, X, y, *, objective="brier", lam=None, costs=None,
                      depth_cost=0.0, sample_weight=None, init="best",
                      max_iter=50, unit_moves=True, solver="auto", time_limit=None,
                      verbose=False):
    """Prune a forest to minimise its own loss on (X, y) plus lam times its average cost.

    The objective is ``mean_i loss(forest_proba(x_i), y_i) + lam * (average
    acquisition cost + depth_cost * average depth)`` on ``(X, y)``, with the
    same cost term as the paper's program.  It is minimised by exact block
    coordinate descent over trees: each step re-prunes one tree optimally
    given the others (a dynamic program), so the objective never increases;
    the result is a fixed point, not a certified global optimum.

    Parameters
    ----------
    problem_or_forest : PruningProblem, fitted estimator or Forest
        A compiled problem supplies the forest, costs and depth_cost (its
        cost data should be ``X``).
    X, y : array-like
        Evaluation (validation) data: the loss and the average cost are
        measured on it.
    objective : str or Objective, default "brier"
        ``"brier"``, ``"logloss"``, ``"margin"``, ``"accuracy"`` or
        ``"tree_error"`` (the paper's error term); see
        :func:`available_objectives`.
    lam : float
        Weight of the average cost (required unless the problem carries one).  For
        a hard budget on the average cost use :func:`prune_opt.fit_budget`.
    costs : FeatureCosts, array-like or mapping, optional
    depth_cost : float
    sample_weight : array-like, optional
    init : {"best", "paper", "full"}, split mask or PrunedForest
        Start(s): the paper's exact optimum at the same lam, the unpruned
        forest, or what the ensemble kind starts from ("best": both for an
        averaged forest, the better end point kept; the exact optimum of the
        expanded program for a boosted model, which is a second-order model of
        the same loss).
    max_iter : int
        Maximum iterations (sweeps over the trees) per start.
    unit_moves : bool, default True
        At a fixed point of the tree blocks, try dropping each acquisition
        unit from every tree at once (kept only if the objective drops).
    solver : str
        Backend of the paper start.
    time_limit : float, optional
        Seconds; sweeps stop once it is exceeded (the current pruning is valid).
    verbose : bool

    Returns
    -------
    PrunedForest
        ``objective`` is the ensemble objective (recomputed from scratch);
        ``solve_info`` holds the ``trace`` (objective after each sweep,
        non-increasing), ``iterations``, ``paper_objective``, ``loss``,
        ``average_cost`` and the end point of every start.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.objectives import optimize_ensemble
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> pf = optimize_ensemble(rf, X, y, objective="brier", lam=0.01)
    >>> trace = pf.solve_info["trace"]
    >>> all(b <= a for a, b in zip(trace, trace[1:]))
    True
    """
    t0 = time.perf_counter()
    obj = get_objective(objective)
    max_iter = check_max_iter(max_iter)
    time_limit = check_time_limit(time_limit)
    depth_cost = check_nonneg_scalar(depth_cost, "depth_cost")
    setup = Setup(problem_or_forest, X, y, costs=costs, depth_cost=depth_cost,
                  sample_weight=sample_weight, solver=solver, objective=obj)
    obj = setup.objective
    if lam is None:
        if setup.problem is None:
            raise ValueError("lam is required, e.g. lam=0.01 (for a budget on the average "
                             "cost, use prune_opt.fit_budget(..., budget=B, objective=...))")
        lam = setup.problem.lam
    lam = check_nonneg_scalar(lam, "lam")
    state = ensemble_state(setup.forest, setup.X, setup.y, setup.weight, setup.costs, obj,
                           lam=lam, depth_cost=setup.depth_cost, routed=setup.routed)
    deadline = None if time_limit is None else t0 + time_limit
    runs = run_starts(state, setup.starts(init, lam), max_iter=max_iter,
                      deadline=deadline, verbose=verbose, unit_moves=unit_moves)
    info = {"starts": {r["start"]: r["trace"][-1] for r in runs},
            "seconds": time.perf_counter() - t0}
    return setup.result(runs[0], obj, lam, info, state)


# lam grows by this factor along the continuation path; the first lam is this
# fraction of the full forest's loss gain per unit of cost
LAM_GROWTH = 1.6
LAM_START = 0.1
# over-budget end points (the cheapest) made feasible by greedy unit removal
REPAIR_POINTS = 3
# feasible end points (lowest loss first) improved by budget descent
POLISH_POINTS = 4


class BudgetSearch:
    """The lowest-loss pruning within an average-cost budget, searched in phases on a
    ready state (at lam 0, the rows routed), each stopping at ``deadline``:

    * :meth:`add` -- a candidate pruning joins the end points (scored exactly);
    * :meth:`polish` -- budget descent (exact block moves, loss never rising, every
      iterate within the budget) from the lowest-loss fitting end points;
    * :meth:`explore` -- a continuation in ``lam`` from the starts' optimum at lam 0,
      greedy repair of the cheapest points over the budget, and polish again.

    The root-only pruning is an end point from the start, so a fitting one always
    exists; :meth:`best` is the lowest-loss fitting end point.
    """

    def __init__(self, state, budget, max_iter=50, deadline=None, verbose=False):
        self.state, self.budget = state, budget
        self.max_iter, self.deadline, self.verbose = max_iter, deadline, verbose
        self.points = []  # (lam, run)
        self.n_lams = 0
        self._polished = set()
        self.add("root", np.zeros(state.forest.n_nodes, dtype=bool))

    def fits(self, run):
        return fits_budget(run["breakdown"]["average_cost"], self.budget)

    def add(self, name, mask):
        """A candidate pruning (closed mask) as an end point at lam 0; the run."""
        run = _mask_run(self.state.with_lam(0.0), mask, name)
        self.points.append((0.0, run))
        return run

    def solve_at(self, lam, warm):
        """Block descent at lam warm-started from ``warm``; the run."""
        run = block_descent(self.state.with_lam(lam), warm, unit_moves=False,
                            max_iter=self.max_iter, deadline=self.deadline,
                            verbose=self.verbose)
        run["start"] = "warm"
        self.points.append((lam, run))
        return run

    def out_of_time(self):
        return self.deadline is not None and time.perf_counter() > self.deadline

    def _distinct(self, field, digits, n_points, fitting):
        """Indices of the first ``n_points`` end points by ``breakdown[field]``, one per
        value rounded to ``digits``, among those that fit (``fitting``) or not; the
        root-only start is never one."""
        chosen = {}
        for value, i in sorted([(r["breakdown"][field], i)
                                for i, (_, r) in enumerate(self.points)
                                if self.fits(r) == fitting and r["start"] != "root"]):
            if len(chosen) < n_points:
                chosen.setdefault(round(value, digits), i)
        return list(chosen.values())

    def repair(self, n_points=REPAIR_POINTS):
        """Make the cheapest over-budget end points fit by greedy unit removal."""
        for i in self._distinct("average_cost", 9, n_points, fitting=False):
            if self.out_of_time():
                break
            lam, run = self.points[i]
            st = self.state.with_lam(lam)
            mask = greedy_repair(st, run["mask"], self.budget, deadline=self.deadline)
            self.points.append((lam, _mask_run(st, mask, "repair")))

    def polish(self, n_points=POLISH_POINTS):
        """Budget descent from the lowest-loss feasible end points (distinct losses) not
        polished yet."""
        for i in self._distinct("loss", 6, n_points, fitting=True):
            key = self.points[i][1]["mask"].tobytes()
            if self.out_of_time() or key in self._polished:
                continue
            self._polished.add(key)
            mask, losses = budget_descent(self.state, self.points[i][1]["mask"], self.budget,
                                          deadline=self.deadline)
            run = _mask_run(self.state.with_lam(0.0), mask, "budget-descent")
            run.update(iterations=len(losses) - 1, losses=losses)
            self._polished.add(mask.tobytes())
            self.points.append((0.0, run))

    def explore(self, starts, max_lams=24):
        """Block descent at lam 0 from ``starts`` (tree moves only: at lam 0 a unit move
        trades loss for nothing), then, when that optimum is over the budget, the
        continuation in lam, greedy repair and polish."""
        if self.out_of_time():
            return
        state = self.state
        runs = run_starts(state, starts, max_iter=self.max_iter, deadline=self.deadline,
                          verbose=self.verbose, unit_moves=state.lam > 0)
        self.points.extend((0.0, r) for r in runs)
        n = 0
        root = self.points[0][1]
        if not self.fits(runs[0]):
            n = _continuation(self, LAM_START * _lam_scale(runs[0], root), runs[0]["mask"],
                              max_lams)
            self.repair()
        self.polish()
        self.n_lams += n + 1

    def best(self):
        """Lowest-loss end point within the budget (ties: the cheaper one)."""
        ok = [(r["breakdown"]["loss"], r["breakdown"]["average_cost"], i)
              for i, (_, r) in enumerate(self.points) if self.fits(r)]
        return self.points[min(ok)[2]]


def _mask_run(state, mask, start):
    """A given pruning as an end point at the state's lam (no descent from it)."""
    state.set_mask(mask)
    b = state.breakdown()
    return {"mask": state.mask.copy(), "trace": [b["objective"]], "iterations": 0,
            "converged": False, "changes": [], "breakdown": b, "start": start}


def _lam_scale(full_run, root_run):
    """A first lam: loss gained by the full model per unit of its cost."""
    gain = root_run["breakdown"]["loss"] - full_run["breakdown"]["loss"]
    cost = max(full_run["breakdown"]["average_cost"], 1e-12)
    return max(gain, 1e-6) / cost


def _continuation(search, lam, mask, max_lams):
    """Raise lam geometrically, each block descent warm-started from the previous
    (costlier) end point, until the chain fits the budget; then bisect the last
    lam step, again warm-starting from the costlier side.  Returns lams tried."""
    lo, lo_mask, hi, n, stuck = 0.0, mask, None, 0, 0
    while hi is None and n < max_lams and stuck < 2 and not search.out_of_time():
        run = search.solve_at(lam, lo_mask)
        n += 1
        if search.fits(run):
            hi = lam
        else:
            stuck = stuck + 1 if np.array_equal(run["mask"], lo_mask) else 0
            lo, lo_mask, lam = lam, run["mask"], lam * LAM_GROWTH
    while hi is not None and n < max_lams and not search.out_of_time():
        mid = math.sqrt(lo * hi) if lo > 0 else hi / LAM_GROWTH
        if hi / mid < 1.0 + 1e-3:
            break
        run = search.solve_at(mid, lo_mask)
        n += 1
        if search.fits(run):
            hi = mid
        else:
            lo, lo_mask = mid, run["mask"]
    return n


def search_budget(state, budget, starts, candidates=(), *, max_iter=50, max_lams=24,
                  deadline=None, verbose=False):
    """The lowest-loss pruning within an average-cost budget, searched on a ready
    state (at lam 0, the rows routed): the ensemble search of
    :func:`prune_opt.fit_budget` with an ensemble objective.

    A continuation in ``lam``: starting from the best pruning at ``lam = 0``
    (block descent from each of ``starts``), lam grows geometrically and block
    descent at each lam is warm-started from the previous (costlier) end
    point, so the chain prunes step by step instead of jumping between
    "everything" and "root only".  Once the chain fits, the last lam step is
    bisected; it also stops when two lam steps change nothing.  The cheapest
    end points over the budget are then made to fit by greedy unit removal
    (drop, from every tree, the unit with the least loss increase per cost
    saved until the budget holds), because no lam may give a pruning near the
    budget, and budget descent runs from the lowest-loss fitting end points.

    ``candidates`` (closed ``[(name, mask)]``, e.g. the baselines') join the end
    points before anything else runs, and budget descent starts first from
    the lowest-loss one that fits, so the result's loss is never above any
    fitting candidate's.  The root-only pruning is always an end point, so a
    fitting one always exists.

    Returns
    -------
    The search: ``points`` holds every end point ``(lam, run)`` (``run["start"]``
    is ``"root"``, a start's or a candidate's name, ``"warm"``, ``"repair"`` or
    ``"budget-descent"``; ``run["breakdown"]`` its loss and average cost),
    ``best()`` the lowest-loss one that fits (ties: the cheaper), ``n_lams`` the
    lams tried.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> from prune_opt.objectives import EnsembleState, get_objective
    >>> X, y = load_iris(return_X_y=True)
    >>> f = po.Forest.from_sklearn(RandomForestClassifier(5, random_state=0).fit(X, y))
    >>> state = EnsembleState(f, X, y, np.ones(len(y)), po.FeatureCosts.uniform(4),
    ...                       get_objective("brier"), lam=0.0)
    >>> search = search_budget(state, 1.0, [("full", f.full_split_mask())])
    >>> lam, run = search.best()
    >>> po.budget.fits_budget(run["breakdown"]["average_cost"], 1.0)  # the one tolerance
    True
    """
    search = BudgetSearch(state, budget, max_iter, deadline, verbose)
    fitting = 0
    for name, m in candidates:
        fitting += search.fits(search.add(name, m))
    if fitting:
        search.polish(n_points=1)
    search.explore(starts, max_lams=max_lams)
    return search
