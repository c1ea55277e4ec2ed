"""Which exporter writes a pruned forest back in the format of the library it was read
from: the name a refusal points to."""

from __future__ import annotations

__all__ = ["exporter_of"]

_PREFIXES = (
    (("lightgbm", "LGBM"), "to_lightgbm()"),
    (("xgboost", "XGB"), "to_xgboost()"),
    (("catboost", "CatBoost"), "to_catboost()"),
    # scikit-learn cannot rebuild a HistGradientBoosting model; LightGBM runs its trees
    (("HistGradientBoosting",), "to_lightgbm()"),
    (("GradientBoosting", "RandomForest", "ExtraTree", "DecisionTree"), "to_sklearn()"),
)


def exporter_of(forest):
    """The ``PrunedForest`` method that exports ``forest``'s source library's model
    (``"to_lightgbm()"``, ``"to_xgboost()"``, ``"to_catboost()"``, ``"to_sklearn()"``),
    or None for a forest built from arrays.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> exporter_of(SimpleNamespace(source="LGBMClassifier"))
    'to_lightgbm()'
    >>> exporter_of(SimpleNamespace(source="catboost.CatBoost"))
    'to_catboost()'
    >>> exporter_of(SimpleNamespace(source=None)) is None
    True
    """
    source = str(getattr(forest, "source", None) or "")
    for prefixes, method in _PREFIXES:
        if source.startswith(prefixes):
            return method
    return None
