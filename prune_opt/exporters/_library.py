"""Which exporter writes a pruned forest back in the format of the library it was read
from: the name a refusal points to."""

from __future__ import annotations

from ..forest._sources import exporter_of_source

__all__ = ["exporter_of"]

def exporter_of(forest):
    """The ``PrunedForest`` method that exports ``forest``'s source library's model
    (``"to_lightgbm()"``, ``"to_xgboost()"``, ``"to_catboost()"``, ``"to_sklearn()"``),
    or None for a forest built from arrays (the table of :mod:`prune_opt.forest._sources`).

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
    return exporter_of_source(getattr(forest, "source", None))
