"""Budgets, exact trade-off curves and baseline pruning methods.

* :func:`fit_budget` -- the best pruning meeting an average-cost budget
  (hard-budget search with a certified gap, the ``"budget"`` backend; or
  the Lagrangian hull vertex with ``method="hull"``);
* :func:`tradeoff_curve` -- every breakpoint of the error-cost curve;
* :func:`budget_curve` -- :func:`fit_budget` on a grid of budgets, as curve rows;
* :func:`fits_budget` -- whether an average cost meets a budget, the one
  round-off tolerance every budget test of the package uses;
* :func:`within_one_standard_error` -- the candidates the one-standard-error
  rule chooses from (held-out error rates);
* baselines of the paper's Figure 2: :func:`ccp_prunings`,
  :func:`greedy_prunings`, :func:`feature_prefix_prunings`, :func:`fewer_trees_prunings`,
  :func:`impurity_threshold_prunings`, registered by name in
  :data:`BASELINES` (:func:`get_baseline`), and :func:`baseline_curve`.
"""

from .._validation import fits_budget
from ..objectives._scorer import within_one_standard_error
from ._baselines import (
    BASELINES,
    baseline_curve,
    ccp_prunings,
    feature_prefix_prunings,
    fewer_trees_prunings,
    get_baseline,
    greedy_prunings,
    impurity_threshold_prunings,
    register_baseline,
    sub_forest,
)
from ._curve import HullPoint, LagrangianHull, lam_upper_bound, problem_at_lam, tradeoff_curve
from ._fit_budget import budget_curve, fit_budget

__all__ = [
    "BASELINES",
    "HullPoint",
    "LagrangianHull",
    "baseline_curve",
    "budget_curve",
    "ccp_prunings",
    "fewer_trees_prunings",
    "fit_budget",
    "fits_budget",
    "get_baseline",
    "greedy_prunings",
    "feature_prefix_prunings",
    "impurity_threshold_prunings",
    "lam_upper_bound",
    "problem_at_lam",
    "register_baseline",
    "sub_forest",
    "tradeoff_curve",
    "within_one_standard_error",
]


def __getattr__(name):
    # names that moved out of this package: say where, instead of a bare AttributeError
    if name == "cegb_curve":
        raise AttributeError(
            "prune_opt.budget.cegb_curve moved to forest_builders.cegb.cegb_curve (CEGB is a "
            "grower, and prune_opt never imports forest_builders)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
