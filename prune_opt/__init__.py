"""prune-opt: exact cost-aware pruning of tree ensembles.

Compile a fitted forest into the BudgetPrune program (Nan, Wang, Saligrama,
NIPS 2016), solve it exactly, and get back a cheaper forest.

Importing the package is cheap: each public name is imported from its module
on first use (PEP 562), so ``import prune_opt`` (and the ``prune-opt`` command
line's start-up) does not load scikit-learn, SciPy or the solvers until a
name that needs them is used.  ``from prune_opt import X`` works for every
name of :data:`__all__`.  The model importers register themselves with
:func:`as_forest` the first time it reads a model that is not a Forest.
"""

import importlib
import importlib.util

__version__ = "0.1.0"

#: public name -> the module (relative to this package) that defines it
_EXPORTS = {
    "Deadline": "._clock",
    "FeatureCosts": ".forest._costs",
    "Forest": ".forest._forest",
    "LazyPrediction": ".model._lazy",
    "LazyPredictor": ".model._lazy",
    "ObjectiveBreakdown": ".program._problem",
    "PrunedForest": ".model._pruned",
    "PruningProblem": ".program._problem",
    "SolverError": ".solvers",
    "acquisition_cost": ".model._pruned",
    "as_feature_costs": ".forest._costs",
    "as_forest": ".forest._forest",
    "available_solvers": ".solvers",
    "compile_problem": ".program._compile",
    "fit_budget": ".budget",
    "is_totally_unimodular": ".checks",
    "list_solvers": ".solvers",
    "load": ".model._pruned",
    "prune": "._prune",
    "refit_leaves": ".model._refit",
    "route": ".routing._routed",
    "solve": "._prune",
    "tradeoff_curve": ".budget",
    "training_node_stats": ".forest._node_stats",
    "vertex_integrality": ".checks",
}

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


def __getattr__(name):
    """A public name, imported from its module on first use (then cached here); a
    sub-package or module (``prune_opt.budget``, ``prune_opt.importers``) is imported
    when first reached as an attribute, as an eager package would have bound it."""
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value
        return value
    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}"):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
