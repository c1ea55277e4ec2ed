"""The one table of source model classes: every model prune-opt reads, what it is, and
which exporter writes a pruning of it back.

The importers register how to read each library (``prune_opt.importers``); this
table says what a model read from a class *is*: its library, its ensemble kind,
the tasks it predicts, whether it is a single tree, and the ``PrunedForest``
method that exports it.  The file codec (which source classes a saved file may
name), the scikit-learn exporter (which classes it rebuilds) and the refusals
that point to an exporter all read it, so a new source is one row here.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Source", "SOURCES", "source_classes", "exporter_of_source"]

CLS, REG = ("classification",), ("regression",)
BOTH = CLS + REG


class Source(NamedTuple):
    """One source model class."""

    library: str
    kind: str  # "averaged" or "additive"
    tasks: tuple
    exporter: str | None  # the PrunedForest method that writes it back, None: none
    single_tree: bool = False


SOURCES = {
    "RandomForestClassifier": Source("sklearn", "averaged", CLS, "to_sklearn()"),
    "ExtraTreesClassifier": Source("sklearn", "averaged", CLS, "to_sklearn()"),
    "DecisionTreeClassifier": Source("sklearn", "averaged", CLS, "to_sklearn()", True),
    "ExtraTreeClassifier": Source("sklearn", "averaged", CLS, "to_sklearn()", True),
    "RandomForestRegressor": Source("sklearn", "averaged", REG, "to_sklearn()"),
    "ExtraTreesRegressor": Source("sklearn", "averaged", REG, "to_sklearn()"),
    "DecisionTreeRegressor": Source("sklearn", "averaged", REG, "to_sklearn()", True),
    "ExtraTreeRegressor": Source("sklearn", "averaged", REG, "to_sklearn()", True),
    "GradientBoostingClassifier": Source("sklearn", "additive", CLS, "to_sklearn()"),
    "GradientBoostingRegressor": Source("sklearn", "additive", REG, "to_sklearn()"),
    # scikit-learn offers no public way to rebuild a HistGradientBoosting model from
    # trees; LightGBM runs its trees exactly (float64 splits)
    "HistGradientBoostingClassifier": Source("sklearn", "additive", CLS, "to_lightgbm()"),
    "HistGradientBoostingRegressor": Source("sklearn", "additive", REG, "to_lightgbm()"),
    "LGBMClassifier": Source("lightgbm", "additive", CLS, "to_lightgbm()"),
    "LGBMRegressor": Source("lightgbm", "additive", REG, "to_lightgbm()"),
    "lightgbm.Booster": Source("lightgbm", "additive", BOTH, "to_lightgbm()"),
    "XGBClassifier": Source("xgboost", "additive", CLS, "to_xgboost()"),
    "XGBRegressor": Source("xgboost", "additive", REG, "to_xgboost()"),
    "XGBRFClassifier": Source("xgboost", "additive", CLS, "to_xgboost()"),
    "XGBRFRegressor": Source("xgboost", "additive", REG, "to_xgboost()"),
    "xgboost.Booster": Source("xgboost", "additive", BOTH, "to_xgboost()"),
    "CatBoostClassifier": Source("catboost", "additive", CLS, "to_catboost()"),
    "CatBoostRegressor": Source("catboost", "additive", REG, "to_catboost()"),
    "catboost.CatBoost": Source("catboost", "additive", BOTH, "to_catboost()"),
}


def source_classes(*, task=None, **fields):
    """The source class names whose :class:`Source` has every field given (``library``,
    ``kind``, ``exporter``, ``single_tree``) and, when given, serves ``task``, in table
    order.

    Examples
    --------
    >>> source_classes(library="sklearn", kind="averaged", task="regression",
    ...                single_tree=True)
    ('DecisionTreeRegressor', 'ExtraTreeRegressor')
    """
    unknown = sorted(set(fields) - set(Source._fields))
    if unknown:
        raise TypeError(f"source_classes: no Source field {unknown}; choose among "
                        f"{list(Source._fields)}")
    want = tuple(fields.items())
    return tuple(name for name, s in SOURCES.items()
                 if (task is None or task in s.tasks)
                 and all(getattr(s, field) == value for field, value in want))


def exporter_of_source(name):
    """The exporter of the source class ``name`` (``"to_lightgbm()"``, ...), or None for a
    forest built from arrays or an unknown name.

    Examples
    --------
    >>> exporter_of_source("LGBMClassifier"), exporter_of_source(None)
    ('to_lightgbm()', None)
    """
    source = SOURCES.get(str(name)) if name is not None else None
    return None if source is None else source.exporter
