"""Budgets, exact trade-off curves and baseline pruning methods.

* :func:`fit_budget` -- the best pruning meeting an average-cost budget
  (hard-budget search with a certified gap, the ``"budget"`` backend; or
  the Lagrangian hull vertex with ``method="hull"``);
* :func:`tradeoff_curve` -- every breakpoint of the error-cost curve;
* baselines of the paper's Figure 2: :func:`ccp_prunings`,
  :func:`greedy_prunings`, :func:`fewer_trees_prunings`,
  :func:`impurity_threshold_prunings`, and :func:`baseline_curve`.
"""

from ._baselines import (
    BASELINES,
    baseline_curve,
    ccp_prunings,
    cegb_curve,
    fewer_trees_prunings,
    greedy_prunings,
    impurity_threshold_prunings,
    sub_forest,
)
from ._curve import HullPoint, LagrangianHull, lam_upper_bound, problem_at_lam, tradeoff_curve
from ._fit_budget import fit_budget, solve_budget_mip

__all__ = [
    "BASELINES",
    "HullPoint",
    "LagrangianHull",
    "baseline_curve",
    "ccp_prunings",
    "cegb_curve",
    "fewer_trees_prunings",
    "fit_budget",
    "greedy_prunings",
    "impurity_threshold_prunings",
    "lam_upper_bound",
    "problem_at_lam",
    "solve_budget_mip",
    "sub_forest",
    "tradeoff_curve",
]
