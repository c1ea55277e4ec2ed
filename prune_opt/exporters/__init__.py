"""Model exporters: one module per target library, each writing a
:class:`~prune_opt.PrunedForest` as that library's model, predicting exactly as
the pruned forest does.  They read a pruned forest's fields and never import its
class; an optional library is imported only when a model is built.
"""

from ._catboost import catboost_model_json, catboost_model_text, pruned_to_catboost
from ._library import exporter_of
from ._lightgbm import lightgbm_model_text, pruned_to_lightgbm
from ._sklearn import pruned_to_sklearn
from ._xgboost import pruned_to_xgboost, xgboost_model_json

__all__ = ["catboost_model_json", "catboost_model_text", "exporter_of", "lightgbm_model_text", "pruned_to_catboost",
           "pruned_to_lightgbm", "pruned_to_sklearn", "pruned_to_xgboost", "xgboost_model_json"]
