"""Model importers: one module per source library, each reading a fitted model into
the :class:`~prune_opt.Forest` IR and routing exactly as the library does.

Importing this package registers them with :func:`prune_opt.as_forest`, which
reads whichever supported model it is given (:func:`supported_models` lists
them).  An importer of an optional library (LightGBM, XGBoost) never imports
it until a model of that library is seen.  :func:`from_xgboost` also reads an
XGBoost JSON model file without XGBoost.
"""

from .._forest import register_importer, supported_models
from . import _sklearn, _xgboost
from ._xgboost import from_xgboost

__all__ = ["supported_models", "from_xgboost"]

register_importer(_sklearn.FORESTS, _sklearn.is_sklearn_forest, _sklearn.from_sklearn_forest)
register_importer(_sklearn.BOOSTING, _sklearn.is_gradient_boosting,
                  _sklearn.from_gradient_boosting)
register_importer(_sklearn.HIST_BOOSTING, _sklearn.is_hist_gradient_boosting,
                  _sklearn.from_hist_gradient_boosting)
register_importer(_xgboost.XGBOOST, _xgboost.is_xgboost_model, _xgboost.from_xgboost)
