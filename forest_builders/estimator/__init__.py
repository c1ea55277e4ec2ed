"""The one call: :class:`BudgetPrunedForestClassifier` and
:class:`BudgetPrunedForestRegressor`, the best model that costs at most a budget.

``fit`` checks the rows (``_input``), grows the registered candidate families
(``_registry``; the families in ``_forests``, ``_boosted`` and ``_catboost``) on one
clock (``_clock``), prunes each to the budget (``_pruning``), chooses by the
one-standard-error rule (``_selection``) and records what it tried (``_record``).
"""

# the candidate families register themselves with the registry when imported
from . import _boosted, _catboost, _forests  # noqa: F401
from ._estimator import BudgetPrunedForestClassifier, BudgetPrunedForestRegressor

__all__ = ["BudgetPrunedForestClassifier", "BudgetPrunedForestRegressor"]
