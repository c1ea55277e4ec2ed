"""Ensemble-aware pruning objectives: prune for the forest's own loss.

The paper's objective scores trees one by one (mean per-tree error).  The
objectives here score the forest's averaged prediction on evaluation data
(Brier score, log-loss, a margin hinge or the 0/1 loss of the vote) plus
``lam`` times the same average acquisition cost, and
:func:`optimize_ensemble` minimises them by exact block coordinate descent
over trees (see ``docs/math/ensemble_objective.md``).

Modules: ``_base`` (the loss protocol and registry; one module per loss),
``_state`` (routed data and a running pruning, the from-scratch referee),
``_descent`` (tree blocks, budgeted tree blocks, unit moves) and ``_search``
(``optimize_ensemble``, ``search_budget``: the budgeted search that
:func:`prune_opt.fit_budget` runs for an ensemble objective, inputs and starts).
"""

from ..solvers._tree_dp import best_tree_pruning, pruning_value
from . import accuracy, brier, logloss, margin, squared_error, tree_error  # noqa: F401  (registration)
from ._base import (
                    Objective,
                    available_objectives,
                    check_objective_task,
                    get_objective,
                    register_objective,
)
from ._descent import block_descent
from ._optimize import optimize_ensemble
from ._state import EnsembleState, evaluate_objective

__all__ = ["Objective", "available_objectives", "check_objective_task", "get_objective", "register_objective",
           "optimize_ensemble", "evaluate_objective",
           "best_tree_pruning", "pruning_value", "block_descent", "EnsembleState"]
