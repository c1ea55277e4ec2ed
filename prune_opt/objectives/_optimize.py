"""The ensemble optimiser at a fixed ``lam`` and its input handling.

* :func:`optimize_ensemble` -- block descent at a fixed ``lam`` from the
  paper's optimum and from the unpruned forest (what :func:`prune_opt.prune`
  runs for an ensemble objective);
* :class:`Setup` -- validated inputs (forest, data, costs, starts) and the
  result, re-evaluated from scratch.

The budgeted search over the same states is the budget stage's
(:func:`prune_opt.budget._own_loss.search_budget`).
"""

from __future__ import annotations

import time

import numpy as np

from .._clock import Deadline
from .._validation import (
    check_labels,
    check_nonneg_scalar,
    check_weights,
)
from ..forest._costs import as_feature_costs, estimator_costs
from ..model._pruned import PrunedForest
from ..program._compile import compile_problem
from ..program._prepare import prepare
from ..program._problem import PruningProblem
from ..solvers._tree_dp import best_tree_pruning
from ._base import check_objective_task, get_objective
from ._descent import check_max_iter, run_starts, tree_layouts
from ._raw_state import ensemble_state

__all__ = ["optimize_ensemble", "tree_optimum", "Setup"]

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
    deadline = Deadline.of(time_limit)
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
    runs = run_starts(state, setup.starts(init, lam), max_iter=max_iter,
                      deadline=deadline, verbose=verbose, unit_moves=unit_moves)
    info = {"starts": {r["start"]: r["trace"][-1] for r in runs},
            "seconds": time.perf_counter() - t0}
    return setup.result(runs[0], obj, lam, info, state)


