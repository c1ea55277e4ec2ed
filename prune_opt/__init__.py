"""prune-opt: exact cost-aware pruning of tree ensembles.

Compile a fitted forest into the BudgetPrune program (Nan, Wang, Saligrama,
NIPS 2016), solve it exactly, and get back a cheaper forest.
"""

from . import importers  # noqa: F401  (registers the model importers with as_forest)
from ._clock import Deadline
from ._prune import prune, solve
from .budget import fit_budget, tradeoff_curve
from .checks import is_totally_unimodular, vertex_integrality
from .forest._costs import FeatureCosts, as_feature_costs
from .forest._forest import Forest, as_forest
from .forest._node_stats import training_node_stats
from .model._lazy import LazyPrediction, LazyPredictor
from .model._pruned import PrunedForest, acquisition_cost, load
from .model._refit import refit_leaves
from .program._compile import compile_problem
from .program._problem import ObjectiveBreakdown, PruningProblem
from .routing._routed import route
from .solvers import SolverError, available_solvers, list_solvers

__version__ = "0.1.0"

__all__ = [
    "Deadline",
    "FeatureCosts",
    "Forest",
    "LazyPrediction",
    "LazyPredictor",
    "ObjectiveBreakdown",
    "PrunedForest",
    "PruningProblem",
    "SolverError",
    "acquisition_cost",
    "as_feature_costs",
    "as_forest",
    "available_solvers",
    "compile_problem",
    "fit_budget",
    "is_totally_unimodular",
    "list_solvers",
    "load",
    "prune",
    "refit_leaves",
    "route",
    "solve",
    "tradeoff_curve",
    "training_node_stats",
    "vertex_integrality",
]
