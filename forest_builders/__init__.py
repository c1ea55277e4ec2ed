"""Cost-aware forest growers that feed the pruner.

Every grower is a scikit-learn classifier with ``to_forest()``, so
``prune_opt.prune`` accepts it directly.

- :class:`BudgetRandomForestClassifier` - BudgetRF (Nan, Wang, Saligrama, ICML 2015):
  minimax cost-weighted splits on the threshold-Pairs impurity, trees added until a
  validation budget is met.
- :class:`CostSensitiveRandomForestClassifier` - random forest whose split score trades
  impurity decrease against feature cost (with free reuse along a path).
- :class:`ACTClassifier`, :class:`ACTForestClassifier` - ACT (Esmeir & Markovitch,
  JAIR 2008): anytime cost-sensitive trees by sampled low-cost subtrees.
- :class:`CEGBClassifier` - LightGBM's cost-efficient gradient boosting (Peter et al.,
  NIPS 2017) with FeatureCosts penalties (optional extra ``lightgbm``);
  :func:`forest_from_lightgbm` imports a LightGBM random forest into the Forest IR;
  :func:`cegb_curve` traces its accuracy-cost curve beside prune-opt's.
- :class:`LazyCostRandomForestClassifier` - random forest grown tree by tree with
  CEGB's lazy per-example feature penalty carried across trees.
- :class:`BudgetPrunedForestClassifier`, :class:`BudgetPrunedForestRegressor` - the
  best forest under a cost budget in one call: random, cost-ranked subset and
  lazy-penalty forests pruned by ``fit_budget``, the winner chosen on held-out rows.
- :class:`SubsetForestClassifier`, :func:`rank_features_by_cost` - random forest on a
  cost-aware subset of the features (recursive elimination by importance per unit
  of cost saved); ``max_cost`` caps every example's cost.

This package depends on ``prune_opt``'s public API only; ``prune_opt`` never
imports it.
"""

from .act import ACTClassifier, ACTForestClassifier
from .budget_rf import BudgetRandomForestClassifier
from .cegb import CEGBClassifier, cegb_curve
from .cost_sensitive_rf import CostSensitiveRandomForestClassifier
from .estimator._estimator import BudgetPrunedForestClassifier, BudgetPrunedForestRegressor
from .estimator._registry import CANDIDATE_FAMILIES, register_family
from .feature_subset import SubsetForestClassifier, rank_features_by_cost, subset_costs
from .lazy_cost_rf import LazyCostRandomForestClassifier
from .lightgbm_import import (
    forest_from_lightgbm,
    lightgbm_acquisition_cost,
    lightgbm_feature_usage,
    lightgbm_trees,
)

__all__ = [
    "ACTClassifier",
    "ACTForestClassifier",
    "BudgetPrunedForestClassifier",
    "BudgetPrunedForestRegressor",
    "BudgetRandomForestClassifier",
    "CANDIDATE_FAMILIES",
    "CEGBClassifier",
    "CostSensitiveRandomForestClassifier",
    "LazyCostRandomForestClassifier",
    "SubsetForestClassifier",
    "cegb_curve",
    "forest_from_lightgbm",
    "lightgbm_acquisition_cost",
    "lightgbm_feature_usage",
    "lightgbm_trees",
    "rank_features_by_cost",
    "register_family",
    "subset_costs",
]
