"""The budget-pruned estimator's record in its saved forest, written and read back.

:class:`~forest_builders.BudgetPrunedForestClassifier` (and the regressor)
save their winner as a :class:`prune_opt.PrunedForest` whose ``solve_info``
holds one more entry, the record: the estimator's class, its scalar
parameters, the column names it was fitted on and its candidates table.
:func:`read_record` checks every field of a record and every reference it
makes to the rest of the file (the task of the forest, its feature names),
and refuses anything else with a ``ValueError`` naming the field.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.utils._param_validation import InvalidParameterError

#: the key of the estimator's record in the winner's ``solve_info`` (saved with it)
RECORD_KEY = "budget_pruned_estimator"
#: the record's fields
RECORD_FIELDS = ("class", "params", "feature_names_in", "candidates")
#: the candidates table's columns and the JSON type of their cells
CANDIDATE_TYPES = {"name": "str", "model": "str", "family": "str", "objective": "str",
                   "refit": "bool", "n_splits": "int", "average_cost": "float",
                   "fit_cost": "float", "fit_cost_bound": "float", "heldout_cost": "float",
                   "select_cost": "float", "score": "float", "brier": "float",
                   "above_prior": "bool", "fits_budget": "bool", "chosen": "bool",
                   "reason": "str", "seconds": "float"}
CANDIDATE_COLUMNS = list(CANDIDATE_TYPES)
#: the columns earlier versions' records lack, newest last, and how they are read: those
#: added with the boosted families (unknown), then ``above_prior`` (False: not known to
#: be above the prior)
ADDED_COLUMNS = ({"family": "", "fit_cost": math.nan, "fit_cost_bound": math.nan,
                  "heldout_cost": math.nan}, {"above_prior": False})
#: parameters whose value is a list of strings (the others are scalars)
LIST_PARAMS = ("candidates",)
#: how the file stores a float that is not finite (prune_opt writes it as text)
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def make_record(est):
    """The record of a fitted estimator (JSON values only)."""
    params = {k: v for k, v in est.get_params().items()
              if v is None or isinstance(v, (bool, int, float, str))
              or (k in LIST_PARAMS and isinstance(v, (list, tuple))
                  and all(isinstance(x, str) for x in v))}
    params = {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}
    names = getattr(est, "feature_names_in_", None)
    return {"class": type(est).__name__, "params": params,
            "feature_names_in": None if names is None else [str(n) for n in names],
            "candidates": est.candidates_.to_dict(orient="list")}


def read_record(cls, pf, path):
    """``(params, feature_names_in, candidates DataFrame)`` of the record in ``pf``
    (loaded from ``path``), checked for an estimator of class ``cls``.

    Raises
    ------
    ValueError
        The record is missing, of another class or task, or one of its fields
        breaks the schema or contradicts the rest of the file; the message names
        the field.
    """
    record = pf.solve_info.get(RECORD_KEY)
    if not isinstance(record, dict) or record.get("class") != cls.__name__:
        raise ValueError(f"{path} was not written by {cls.__name__}.save (its forest "
                         f"lacks the estimator's record); load it with prune_opt.load")

    def fail(field, reason):
        raise ValueError(f"{path}: the estimator record's {field} {reason}; the file "
                         f"contradicts itself or was edited: save the estimator again")

    unknown = sorted(set(record) - set(RECORD_FIELDS))
    if unknown:
        fail("fields", f"include unknown ones {unknown} (expected {RECORD_FIELDS})")
    if pf.task != cls._task:
        fail("class", f"is {cls.__name__}, a {cls._task} estimator, but the file holds a "
                      f"{pf.task} forest")
    params = _read_params(cls, record.get("params"), fail)
    names = _read_names(record.get("feature_names_in"), pf.forest, fail)
    return params, names, _read_candidates(record.get("candidates"), fail)


def _read_params(cls, params, fail):
    """The recorded parameters this class knows (others, from a newer version, are
    ignored), each checked by the estimator's own parameter validation."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        fail("params", f"must be an object of parameter values, got {type(params).__name__}")
    known = set(cls().get_params())
    kept = {k: v for k, v in params.items() if k in known}
    bad = sorted(k for k, v in kept.items()
                 if not (v is None or isinstance(v, (bool, int, float, str))
                         or (k in LIST_PARAMS and isinstance(v, list)
                             and all(isinstance(x, str) for x in v))))
    if bad:
        fail("params", f"{bad} must be numbers, strings, booleans or null "
                       f"({', '.join(LIST_PARAMS)}: also a list of strings)")
    from ._registry import CANDIDATE_FAMILIES

    named = kept.get("candidates")
    unknown = [n for n in (named if isinstance(named, list) else [named] if named else [])
               if n not in CANDIDATE_FAMILIES]
    if unknown:
        fail("params", f"name candidate families {unknown} that do not exist (the families "
                       f"are {list(CANDIDATE_FAMILIES)})")
    try:
        cls(**kept)._validate_params()
    except InvalidParameterError as exc:
        fail("params", f"are invalid: {exc}")
    return kept


def _read_names(names, forest, fail):
    """The column names the estimator was fitted on: null, or the forest's own
    feature names (the estimator names its forest by them)."""
    if names is None:
        return None
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)
            and len(set(names)) == len(names) and len(names) == forest.n_features):
        fail("feature_names_in", f"must be null or a list of n_features={forest.n_features} "
                                 f"distinct strings, got {str(names)[:60]}")
    if names != forest.feature_names:
        fail("feature_names_in", f"{names[:6]} differs from the file's feature_names "
                                 f"{(forest.feature_names or [])[:6]} (another order or other "
                                 "names would read a DataFrame's columns in the wrong order)")
    return np.asarray(names, dtype=object)


def _read_candidates(table, fail):
    """The candidates table: one list per column, of equal lengths and of the column's
    type (a float may be null or the text 'nan'/'inf'/'-inf'), one row chosen."""
    if table is None:
        return pd.DataFrame(columns=CANDIDATE_COLUMNS)
    # a record of this version, or of an earlier one (lacking the columns added since)
    versions, added = [set(CANDIDATE_COLUMNS)], {}
    for columns in reversed(ADDED_COLUMNS):
        added.update(columns)
        versions.append(set(CANDIDATE_COLUMNS) - set(added))
    if not isinstance(table, dict) or set(table) not in versions:
        fail("candidates", f"must be an object with exactly the columns {CANDIDATE_COLUMNS}")
    lengths = {len(v) if isinstance(v, list) else -1 for v in table.values()}
    if len(lengths) != 1 or -1 in lengths:
        fail("candidates", "must hold one list per column, all of the same length")
    n = lengths.pop()
    table = {**{c: [v] * n for c, v in added.items()}, **table}
    columns = {c: _cells(c, table[c], fail) for c in CANDIDATE_COLUMNS}
    if n and sum(columns["chosen"]) != 1:
        fail("candidates", f"must mark exactly one row chosen, got {sum(columns['chosen'])}")
    return pd.DataFrame(columns, columns=CANDIDATE_COLUMNS)


def _cells(column, cells, fail):
    """One column's cells, checked and converted (non-finite floats back to floats)."""
    kind = CANDIDATE_TYPES[column]
    if kind == "float":
        out = [_NON_FINITE.get(v, v) if isinstance(v, str) else (math.nan if v is None else v)
               for v in cells]
        ok = all(type(v) in (int, float) for v in out)
        return [float(v) for v in out] if ok else fail(
            f"candidates.{column}", "must hold numbers (or null, 'nan', 'inf', '-inf')")
    python = {"str": str, "bool": bool, "int": int}[kind]
    if not all(type(v) is python for v in cells):
        fail(f"candidates.{column}", f"must hold {kind} values")
    return list(cells)
