"""LightGBM models read back into prune-opt (a re-export of :mod:`prune_opt.importers`).

The reading itself -- one parser of LightGBM's model text, LightGBM's routing
reproduced exactly -- lives in :mod:`prune_opt.importers`; this module keeps
the names the growers, benchmarks and examples import:

* :func:`lightgbm_feature_usage` / :func:`lightgbm_acquisition_cost`: which
  features each example reaches in any LightGBM model (boosted or random
  forest, any missing type) and what that costs under a
  :class:`prune_opt.FeatureCosts`, exactly as prune-opt prices a forest;
* :func:`forest_from_lightgbm`: a LightGBM random forest
  (``boosting_type="rf"``) as an averaged :class:`prune_opt.Forest` whose
  nodes hold the training rows' class frequencies;
* :func:`lightgbm_trees` / :func:`lightgbm_leaves`: the trees as preorder
  arrays, and LightGBM's leaf of every row in every tree.

A boosted model (gbdt, dart) is read into an additive Forest by
:func:`prune_opt.as_forest` (or :func:`prune_opt.importers.from_lightgbm`,
which also reads model text and files).
"""

from __future__ import annotations

from prune_opt.importers import (
    LIGHTGBM_HINT,
    forest_from_lightgbm,
    import_lightgbm,
    lightgbm_acquisition_cost,
    lightgbm_feature_usage,
    lightgbm_leaves,
    lightgbm_trees,
)

__all__ = [
    "LIGHTGBM_HINT",
    "forest_from_lightgbm",
    "import_lightgbm",
    "lightgbm_acquisition_cost",
    "lightgbm_feature_usage",
    "lightgbm_leaves",
    "lightgbm_trees",
]
