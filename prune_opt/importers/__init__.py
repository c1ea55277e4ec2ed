"""Model importers: one module per source library, each reading a fitted model into
the :class:`~prune_opt.Forest` IR and routing exactly as the library does.

Importing this package registers them with :func:`prune_opt.as_forest`, which
reads whichever supported model it is given (:func:`supported_models` lists
them).  An importer of an optional library (LightGBM, XGBoost, CatBoost) never
imports it until a model of that library is seen.

LightGBM, XGBoost and CatBoost models are also read from their model files
(:func:`from_lightgbm`, :func:`from_xgboost`, :func:`from_catboost`, all
without the library installed), and a LightGBM random forest into an averaged forest
(:func:`forest_from_lightgbm`).
"""

from ..forest._forest import register_importer, supported_models
from . import _catboost, _lightgbm, _sklearn, _xgboost
from ._catboost import from_catboost
from ._files import model_file_kind, read_model_file
from ._lightgbm import (
    forest_from_lightgbm,
    from_lightgbm,
    lightgbm_acquisition_cost,
    lightgbm_feature_usage,
    lightgbm_leaves,
    lightgbm_trees,
)
from ._lightgbm_trees import LIGHTGBM_HINT, import_lightgbm
from ._xgboost import from_xgboost

__all__ = ["supported_models", "read_model_file", "model_file_kind", "from_lightgbm", "from_xgboost",
           "from_catboost", "import_lightgbm", "LIGHTGBM_HINT",
           "forest_from_lightgbm",
           "lightgbm_trees", "lightgbm_leaves", "lightgbm_feature_usage",
           "lightgbm_acquisition_cost"]

register_importer(_sklearn.FORESTS, _sklearn.is_sklearn_forest, _sklearn.from_sklearn_forest)
register_importer(_sklearn.BOOSTING, _sklearn.is_gradient_boosting,
                  _sklearn.from_gradient_boosting)
register_importer(_sklearn.HIST_BOOSTING, _sklearn.is_hist_gradient_boosting,
                  _sklearn.from_hist_gradient_boosting)
register_importer(_xgboost.XGBOOST, _xgboost.is_xgboost_model, _xgboost.from_xgboost)
register_importer(_lightgbm.SUPPORTED, _lightgbm.is_lightgbm_model, _lightgbm.from_lightgbm)
register_importer(_catboost.CATBOOST, _catboost.is_catboost_model, _catboost.from_catboost)
