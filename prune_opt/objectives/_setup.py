"""Shared input handling of the ensemble optimisers: data, costs, starts, result."""

from __future__ import annotations

import time

import numpy as np

from .._compile import compile_problem
from .._costs import as_feature_costs, estimator_costs
from .._forest import as_forest
from .._problem import PruningProblem
from .._pruned import PrunedForest
from .._validation import check_features, check_labels, check_weights
from ._base import check_objective_task

__all__ = ["Setup", "RESULT_RTOL"]

# from-scratch objective of the result vs the optimiser's running value (relative)
RESULT_RTOL = 1e-9
INITS = ("best", "paper", "full")


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
            self.forest = as_forest(problem_or_forest)
            self.costs = as_feature_costs(estimator_costs(problem_or_forest, costs),
                                          self.forest.n_features,
                                          self.forest.feature_names)
            self.depth_cost = float(depth_cost)
        self.X_raw, self.y_raw, self.sample_weight = X, y, sample_weight
        check_objective_task(objective, self.forest)
        self.X = check_features(self.forest, X, name="X")
        self.y = check_labels(self.forest, y, self.X.shape[0], name="y")
        self.weight = check_weights(sample_weight, self.X.shape[0])
        if self.weight.sum() <= 0:
            raise ValueError("sample_weight sums to zero; pass positive weights")
        self.solver = solver
        self.objective = objective.for_data(self.y, self.weight)

    def paper_problem(self):
        """The BudgetPrune program on the same data and costs (compiled once)."""
        if self.problem is None:
            self.problem = compile_problem(self.forest, self.X_raw, self.y_raw,
                                           costs=self.costs, depth_cost=self.depth_cost,
                                           sample_weight=self.sample_weight)
        return self.problem

    def paper_mask(self, lam):
        """Split mask of the paper objective's exact optimum at ``lam``."""
        from .._solve import solve

        return solve(self.paper_problem().with_lam(lam), solver=self.solver).split_mask

    def starts(self, init, lam):
        """``[(name, split_mask)]`` to start block descent from."""
        if isinstance(init, PrunedForest):
            if init.forest is not self.forest and init.forest.n_nodes != self.forest.n_nodes:
                raise ValueError("init is a pruning of another forest; pass one of this forest")
            return [("given", init.split_mask)]
        if isinstance(init, np.ndarray):
            return [("given", self.forest.check_split_mask(init, name="init"))]
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, a split mask or a PrunedForest, "
                             f"got {init!r}")
        names = ("paper", "full") if init == "best" else (init,)
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


def now():
    return time.perf_counter()
