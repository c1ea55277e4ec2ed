"""JSON codec of pruned forests: no pickle, schema-versioned, every field checked.

This module sits beside :class:`~prune_opt.PrunedForest` (it never imports
it): :func:`encode` reads a pruned forest's fields, :func:`decode` turns a
document back into the keyword arguments of ``PrunedForest``.  Loading only
parses JSON (no object is ever constructed from a name in the file) and
refuses, with a ``ValueError`` naming the field, anything the schema does
not allow: missing or unknown fields, wrong types or shapes, non-finite
numbers, duplicated classes, children out of range or not forming a tree,
a split mask not closed under parents, nesting deeper than the schema, and
fields that contradict each other (the task and the estimator, the class
fields and the node values, the feature names, the costs' names and the
command line's table columns).  A model is named by ``feature_names``, else
(files the command line wrote before it recorded them) by its table's
columns, so a DataFrame is read by column name.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Mapping

import numpy as np

from .._io import atomic_write, unique_keys
from ..forest._costs import FeatureCosts
from ..forest._ensemble import Ensemble
from ..forest._forest import NODE_STATS, SPLIT_DTYPES, Forest
from ..forest._sources import SOURCES, source_classes

__all__ = ["save_pruned", "read_pruned", "encode", "decode", "FORMAT", "SCHEMA_VERSION",
           "check_feature_encoding", "check_names_agree"]

FORMAT = "prune-opt/pruned-forest"
#: version 2 adds boosted models (ensemble, split_dtype, node_value_fit); version 1
#: files (averaged forests) are still read
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)
#: the source classes a file may name, per task and ensemble kind (the table of
#: prune_opt.forest._sources); a file without "task" (older files) is a classification, one
#: without "ensemble" an averaged forest
TASK_ESTIMATORS = {task: source_classes(kind="averaged", task=task)
                   for task in ("classification", "regression")}
BOOSTED_ESTIMATORS = {task: source_classes(kind="additive", task=task)
                      for task in ("classification", "regression")}
ESTIMATORS = tuple(SOURCES)
_REQUIRED = ("format", "schema_version", "estimator", "n_features", "costs", "trees")
#: "classes" and "classes_kind" are required for classification, absent for regression
_OPTIONAL = ("task", "classes", "classes_kind", "feature_names", "allow_nan", "objective",
             "lam", "solve_info", "feature_encoding")
#: the numpy dtype of the classes when not their kind's default (uint8, bool, object ...)
_OPTIONAL += ("classes_dtype",)
#: boosted models (schema version 2): how trees combine, the comparison dtype and the
#: node-value fit (absent: an averaged forest compared in float32)
_OPTIONAL += ("ensemble", "split_dtype", "node_value_fit", "absent_is_missing")
#: what a model read from CatBoost keeps for its exporter (loss, NaN treatment per
#: feature, symmetric trees: see prune_opt.importers._catboost.catboost_source_info)
_OPTIONAL += ("source_info",)
_TREE_REQUIRED = ("left", "right", "feature", "threshold", "value", "split_mask")
_TREE_OPTIONAL = ("missing_go_to_left", *NODE_STATS)
_COST_KEYS = ("costs", "groups", "requires", "feature_names")
_BULKY_SOLVE_INFO = ("duals", "history")
_FLOAT_MAX = float(np.finfo(np.float64).max)
#: deepest nesting solve_info may have (the schema itself nests at most 5 levels)
MAX_SOLVE_INFO_DEPTH = 8


# ------------------------------------------------------------------ writing
def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else str(v)
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if obj is None or isinstance(obj, (str, int, bool)):
        return obj
    return str(obj)


#: numpy dtypes a file may restore its classes to, per classes_kind ("object": an object
#: array of the kind's Python values, as scikit-learn keeps labels given as objects)
CLASS_DTYPES = {"int": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                        "uint64", "object"),
                "float": ("float16", "float32", "float64", "object"),
                "bool": ("bool", "object"), "str": ("str", "object"),
                "bytes": ("bytes", "object")}
_KIND_OF_DTYPE = {"i": "int", "u": "int", "f": "float", "b": "bool", "U": "str", "S": "bytes"}


def _kind_of_object_classes(classes):
    """The classes_kind of an object array whose labels all have one storable type."""
    kinds = set()
    for c in classes:
        if isinstance(c, (bool, np.bool_)):
            kinds.add("bool")
        elif isinstance(c, (int, np.integer)):
            kinds.add("int")
        elif isinstance(c, (float, np.floating)):
            kinds.add("float")
        elif isinstance(c, str):
            kinds.add("str")
        elif isinstance(c, bytes):
            kinds.add("bytes")
        else:
            kinds.add(type(c).__name__)
    if len(kinds) != 1 or not kinds <= set(CLASS_DTYPES):
        raise ValueError(f"cannot save: the classes have type(s) {sorted(kinds)}; the file "
                         "stores labels of one kind only (integers, floats, booleans, strings "
                         "or bytes): encode the labels as one of these before fitting")
    return kinds.pop()


def _encode_classes(classes):
    """(values, classes_kind, classes_dtype or None): labels as JSON values, with the
    numpy dtype to restore when it is not the kind's default."""
    dtype = classes.dtype
    if dtype.kind == "O":
        kind, dtype_name = _kind_of_object_classes(classes), "object"
    elif dtype.kind in _KIND_OF_DTYPE:
        kind = _KIND_OF_DTYPE[dtype.kind]
        dtype_name = {"U": "str", "S": "bytes"}.get(dtype.kind, dtype.name)
    else:
        raise ValueError(f"cannot save: classes of dtype {dtype} cannot be stored (the file "
                         "stores integer, float, boolean, string or bytes labels); encode "
                         "the labels as one of these before fitting")
    default = {"int": "int64", "float": "float64", "bool": "bool", "str": "str",
               "bytes": "bytes"}[kind]
    convert = {"int": int, "float": float, "bool": bool, "str": str,
               "bytes": lambda b: bytes(b).decode("latin-1")}[kind]
    values = [convert(c) for c in classes]
    if kind == "float" and not all(math.isfinite(v) for v in values):
        raise ValueError("cannot save: a class label is NaN or infinite")
    return values, kind, (None if dtype_name == default else dtype_name)


def _encode_tree(forest, split_mask, t):
    sl = forest.tree_slice(t)
    off = sl.start
    internal = forest.left[sl] >= 0
    threshold = forest.threshold[sl]
    if np.isnan(threshold[internal]).any():
        raise ValueError(f"cannot save: tree {t} has a NaN split threshold (the file "
                         "format stores finite numbers only)")
    # an infinite threshold (scikit-learn's "missing values vs the rest" split) routes
    # every finite input as the largest finite float does: store that
    threshold = np.where(internal, np.clip(threshold, -_FLOAT_MAX, _FLOAT_MAX), threshold)
    if (forest.task == "classification" and forest.ensemble.holds_distributions
            and not (forest.value[sl].sum(axis=1) > 0).all()):
        raise ValueError(f"cannot save: tree {t} has a node with an empty class distribution "
                         "(all zeros), which the file format refuses")
    # a leaf's threshold is never read: store a finite placeholder
    threshold = np.where(internal | np.isfinite(threshold), threshold, -2.0)
    out = {
        "left": np.where(forest.left[sl] >= 0, forest.left[sl] - off, -1).tolist(),
        "right": np.where(forest.right[sl] >= 0, forest.right[sl] - off, -1).tolist(),
        "feature": forest.feature[sl].tolist(),
        "threshold": threshold.tolist(),
        "value": forest.value[sl].tolist(),
        "missing_go_to_left": forest.missing_go_to_left[sl].astype(int).tolist(),
        "split_mask": split_mask[sl].astype(int).tolist(),
    }
    if forest.node_stats is not None:  # what to_sklearn's feature_importances_ need
        stats = {k: np.asarray(forest.node_stats[k])[sl] for k in NODE_STATS}
        if not all(np.isfinite(v).all() for v in stats.values()):
            raise ValueError(f"cannot save: tree {t} has non-finite node statistics "
                             "(forest.node_stats); set forest.node_stats = None to drop them")
        out["n_node_samples"] = stats["n_node_samples"].astype(np.int64).tolist()
        out.update({k: stats[k].astype(float).tolist() for k in NODE_STATS[1:]})
    return out


def _finite_or_none(v):
    return None if v is None or not math.isfinite(float(v)) else float(v)


def _encode_solve_info(info):
    """``solve_info`` without its bulky entries, as JSON values; refused when nested
    deeper than :func:`read_pruned` accepts (a file save writes is a file load reads)."""
    out = _jsonable({k: v for k, v in info.items() if k not in _BULKY_SOLVE_INFO})
    if _depth(out, MAX_SOLVE_INFO_DEPTH) > MAX_SOLVE_INFO_DEPTH:
        raise ValueError(f"cannot save: solve_info is nested deeper than "
                         f"{MAX_SOLVE_INFO_DEPTH} levels, which the file format refuses; "
                         "drop or flatten the deep entries of pruned.solve_info")
    return out


def encode(pruned):
    """The JSON document (a dict) of a pruned forest."""
    f = pruned.forest
    supported = (BOOSTED_ESTIMATORS if f.is_additive else TASK_ESTIMATORS)[f.task]
    doc = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "task": f.task,
        # a subclass of a supported estimator is rebuilt as the closest supported one
        "estimator": (pruned.estimator_class if pruned.estimator_class in supported
                      else supported[0]),
        "n_features": f.n_features,
        "feature_names": f.feature_names,
        "allow_nan": bool(f.allow_nan),
        "costs": pruned.costs.to_dict(),
        "objective": _finite_or_none(pruned.objective),
        "lam": _finite_or_none(pruned.lam),
        # per-record duals and iteration histories can be millions of numbers: not kept
        "solve_info": _encode_solve_info(pruned.solve_info),
        "trees": [_encode_tree(f, pruned.split_mask, t) for t in range(f.n_trees)],
    }
    if f.is_additive or f.split_dtype != "float32" or f.absent_is_missing:
        doc.update(ensemble=f.ensemble.to_dict(), split_dtype=f.split_dtype,
                   node_value_fit=_jsonable(f.node_value_fit),
                   absent_is_missing=bool(f.absent_is_missing))
    if f.task == "classification":
        doc["classes"], doc["classes_kind"], dtype = _encode_classes(f.classes_)
        if dtype is not None:  # e.g. uint8, bool or object labels come back as such
            doc["classes_dtype"] = dtype
    if pruned.feature_encoding is not None:
        doc["feature_encoding"] = _jsonable(pruned.feature_encoding)
    if getattr(f, "source_info", None) is not None:
        doc["source_info"] = _jsonable(f.source_info)
    return doc


def save_pruned(pruned, path):
    """Write ``pruned`` as JSON, atomically (a partial file never replaces ``path``)."""
    text = json.dumps(encode(pruned), allow_nan=False)
    with atomic_write(path, "w", encoding="utf-8") as fh:
        fh.write(text)


# ------------------------------------------------------------------ reading
def _fail(reason):
    raise ValueError(f"cannot load pruned forest: {reason}")


def _reject_constant(name):
    _fail(f"{name} is not allowed (every number must be finite)")


def _read_document(path):
    """Parse the file as strict JSON (no NaN/Infinity, bounded nesting, no key given
    twice); a UTF-8 byte-order mark (some editors write one) is dropped."""
    try:
        with open(os.fspath(path), encoding="utf-8-sig") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        _fail("file is not UTF-8 text (not a prune-opt JSON file)")
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=unique_keys)
    except RecursionError:
        _fail("JSON nested too deeply (not a prune-opt file)")
    except json.JSONDecodeError as exc:
        _fail(f"not valid JSON (truncated or corrupted?): {exc}")
    except ValueError as exc:  # e.g. an integer too long to convert
        if str(exc).startswith("cannot load"):
            raise
        _fail(f"not valid JSON: {exc}")


def _check_header(doc):
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        _fail(f"not a prune-opt pruned forest (missing format {FORMAT!r})")
    version = doc.get("schema_version")
    if type(version) is not int or version not in READABLE_VERSIONS:
        _fail(f"schema_version {version!r} is not supported (this prune-opt reads "
              f"{READABLE_VERSIONS})")
    new = ("ensemble", "split_dtype", "node_value_fit", "absent_is_missing")
    if version < 2 and any(k in doc for k in new):
        _fail(f"{', '.join(new)} need schema_version 2")
    for key in _REQUIRED:
        if key not in doc:
            _fail(f"missing field {key!r}")
    unknown = sorted(set(doc) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        _fail(f"unknown field(s) {unknown}")
    if doc["estimator"] not in ESTIMATORS:
        _fail(f"unknown estimator {str(doc['estimator'])[:80]!r}; expected one of {ESTIMATORS}")


def _decode_ensemble(doc):
    """``(ensemble, split_dtype, node_value_fit)`` of the file (averaged, float32 and
    None when absent)."""
    spec = doc.get("ensemble")
    try:
        ensemble = Ensemble() if spec is None else Ensemble.from_dict(spec)
    except (ValueError, TypeError) as exc:
        _fail(f"ensemble: {exc}")
    split_dtype = doc.get("split_dtype", "float32")
    if not isinstance(split_dtype, str) or split_dtype not in SPLIT_DTYPES:
        _fail(f"split_dtype must be one of {SPLIT_DTYPES}, got {str(split_dtype)[:40]!r}")
    fit = doc.get("node_value_fit")
    if fit is not None and not (isinstance(fit, dict) and set(fit) <= {"rule", "n_rows"}
                                and isinstance(fit.get("rule"), str)
                                and _is_int(fit.get("n_rows", 0))):
        _fail("node_value_fit must be null or an object with a rule name and n_rows")
    if fit is not None and not ensemble.fits_node_values:
        _fail("node_value_fit applies to a boosted (additive) model only")
    absent = doc.get("absent_is_missing", False)
    if type(absent) is not bool:
        _fail("absent_is_missing must be true or false")
    return ensemble, split_dtype, fit, absent


def _decode_task(doc, additive=False):
    """The file's task (older files have none: classification), checked against the
    estimator and the class fields."""
    task = doc.get("task", "classification")
    if not isinstance(task, str) or task not in TASK_ESTIMATORS:
        _fail(f"task must be 'classification' or 'regression', got {str(task)[:40]!r}")
    expected = (BOOSTED_ESTIMATORS if additive else TASK_ESTIMATORS)[task]
    if doc["estimator"] not in expected:
        kind = " (a boosted model)" if additive else ""
        _fail(f"estimator {doc['estimator']!r} does not match task {task!r}{kind}; expected "
              f"one of {expected}")
    present = [k for k in ("classes", "classes_kind", "classes_dtype") if k in doc]
    if task == "regression" and present:
        _fail(f"a regression forest has no classes, but the file has {present}")
    if task == "classification" and len(present) < 2:
        _fail(f"missing field {'classes' if 'classes' not in doc else 'classes_kind'!r}")
    return task


def _is_int(v):
    return type(v) is int


def _is_number(v):
    try:
        return type(v) in (int, float) and math.isfinite(v)
    except OverflowError:  # an integer too large for a float
        return False


def _decode_classes(doc):
    kind, classes = doc["classes_kind"], doc["classes"]
    if not isinstance(kind, str) or kind not in CLASS_DTYPES:
        _fail(f"classes_kind must be one of {sorted(CLASS_DTYPES)}, got {str(kind)[:40]!r}")
    if not isinstance(classes, list) or not classes:
        _fail("classes must be a non-empty list")
    check = {"int": _is_int, "float": _is_number, "bool": lambda v: type(v) is bool,
             "str": lambda v: isinstance(v, str),
             "bytes": lambda v: isinstance(v, str) and all(ord(ch) < 256 for ch in v)}[kind]
    if not all(check(c) for c in classes):
        what = {"int": "integers", "bytes": "strings of code points below 256 (latin-1 "
                "bytes)"}.get(kind, kind + " values")
        _fail(f"classes must all be {what} (classes_kind {kind!r}), got {str(classes)[:80]}")
    if len(set(classes)) != len(classes):
        _fail("classes must be distinct, got duplicates")
    dtype = doc.get("classes_dtype")
    if dtype is not None and (not isinstance(dtype, str) or dtype not in CLASS_DTYPES[kind]):
        _fail(f"classes_dtype must be one of {CLASS_DTYPES[kind]} for classes_kind {kind!r}, "
              f"got {str(dtype)[:40]!r}")
    values = [c.encode("latin-1") for c in classes] if kind == "bytes" else classes
    out = _class_array(values, kind, dtype)
    if np.unique(out).size != out.size:  # e.g. b"a" and b"a\x00" are one numpy bytes value
        _fail(f"classes are no longer distinct as {dtype or kind!r} values")
    return out


def _class_array(values, kind, dtype):
    """The checked class values as an array of ``dtype`` (the kind's default when None)."""
    if dtype == "object":
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    if dtype in (None, "str", "bytes", "bool", "float64"):
        try:
            return np.asarray(values, dtype={"int": np.int64, "float": float, "bool": bool,
                                             "str": str, "bytes": bytes}[kind])
        except OverflowError:
            _fail("an integer class does not fit in 64 bits")
    if kind == "int":
        info = np.iinfo(dtype)
        if not all(info.min <= c <= info.max for c in values):
            _fail(f"an integer class does not fit classes_dtype {dtype!r}")
    try:
        with np.errstate(over="ignore"):  # a float beyond float16's range: refused below
            out = np.asarray(values, dtype=dtype)
    except OverflowError:
        _fail(f"an integer class does not fit classes_dtype {dtype or 'int64'!r}")
    if kind == "float" and not np.isfinite(out).all():
        _fail(f"a float class does not fit classes_dtype {dtype!r}")
    return out


def _decode_features(doc):
    n_features = doc["n_features"]
    if not _is_int(n_features) or n_features < 1:
        _fail("n_features must be a positive integer")
    names = doc.get("feature_names")
    if names is not None and (not isinstance(names, list) or len(names) != n_features
                              or not all(isinstance(s, str) for s in names)):
        _fail("feature_names must be null or a list of n_features strings")
    if names is not None and len(set(names)) != len(names):
        _fail("feature_names must be distinct")
    return n_features, names


def _only(x, types):
    """True when ``x`` is a list whose elements all have exactly one of ``types``
    (``bool`` is not an ``int`` here); one C-level pass over the list."""
    return isinstance(x, list) and set(map(type, x)) <= set(types)


def _int_array(x, what):
    if not _only(x, (int,)):
        _fail(f"{what} must be a list of integers")
    try:
        return np.asarray(x, dtype=np.int64).reshape(len(x))
    except OverflowError:
        _fail(f"{what}: an integer does not fit in 64 bits")


def _finite_array(x, what):
    try:
        arr = np.asarray(x, dtype=float)
    except OverflowError:
        arr = np.array([np.inf])
    if not np.isfinite(arr).all():
        _fail(f"{what} must be a list of finite numbers")
    return arr


def _float_array(x, what):
    if not _only(x, (int, float)):
        _fail(f"{what} must be a list of finite numbers")
    return _finite_array(x, what).reshape(len(x))


def _value_matrix(value, n_classes, what, width=None):
    """Node values: rows of class distributions, or (n_classes None: regression)
    rows of one finite number, the node mean; with ``width``, rows of that many
    finite numbers (a boosted model's raw scores)."""
    raw = width is not None
    width = width if raw else (1 if n_classes is None else n_classes)
    if not _only(value, (list,)) or set(map(len, value)) - {width} or not _only(
            list(itertools.chain.from_iterable(value)), (int, float)):
        _fail(f"{what} must be a list of rows of {width} finite numbers")
    v = _finite_array(value, what).reshape(len(value), width)
    if n_classes is None or raw:
        return v
    if (v < 0).any():
        _fail(f"{what} must be non-negative")
    if not (v.sum(axis=1) > 0).all():
        _fail(f"{what}: every row must be a class distribution with a positive sum")
    return v


def _check_structure(left, right, t):
    """Children in range, larger than their parent, each node reached exactly once.

    Parent < child ids make cycles impossible; the count check makes it one
    tree rooted at node 0.  Linear time, vectorised.
    """
    n = left.size
    if n == 0:
        _fail(f"tree {t}: no nodes")
    internal = left >= 0
    if (internal != (right >= 0)).any() or ((left < -1) | (right < -1)).any():
        _fail(f"tree {t}: every node needs two children (ids >= 0) or none (-1)")
    ids = np.flatnonzero(internal)
    if (left[ids] >= n).any() or (right[ids] >= n).any():
        _fail(f"tree {t}: child index out of range")
    if (left[ids] <= ids).any() or (right[ids] <= ids).any():
        _fail(f"tree {t}: a child id is not larger than its parent's (cycle or bad order)")
    children = np.concatenate([left[ids], right[ids]])
    if not np.array_equal(np.sort(children), np.arange(1, n)):
        _fail(f"tree {t}: nodes do not form one tree rooted at 0 (a node has two parents "
              "or none)")


def _decode_tree(tr, t, n_features, n_classes, width=None):
    """(node arrays for Forest, split mask, node statistics or {}) of one tree."""
    if not isinstance(tr, dict):
        _fail(f"tree {t} is not an object")
    missing = [k for k in _TREE_REQUIRED if k not in tr]
    unknown = sorted(set(tr) - set(_TREE_REQUIRED) - set(_TREE_OPTIONAL))
    if missing or unknown:
        _fail(f"tree {t}: missing field(s) {missing}, unknown field(s) {unknown}")
    left = _int_array(tr["left"], f"tree {t} left")
    right = _int_array(tr["right"], f"tree {t} right")
    arrays = {"left": left, "right": right,
              "feature": _int_array(tr["feature"], f"tree {t} feature"),
              "threshold": _float_array(tr["threshold"], f"tree {t} threshold"),
              "value": _value_matrix(tr["value"], n_classes, f"tree {t} value", width),
              "missing_go_to_left": _int_array(tr.get("missing_go_to_left", [0] * left.size),
                                               f"tree {t} missing_go_to_left")}
    mask = _int_array(tr["split_mask"], f"tree {t} split_mask")
    stats = _decode_node_stats(tr, t)
    if any(a.shape[0] != left.size for a in (*arrays.values(), mask, *stats.values())):
        _fail(f"tree {t}: node arrays differ in length")
    _check_structure(left, right, t)
    feat = arrays["feature"][left >= 0]
    if (feat < 0).any() or (feat >= n_features).any():
        _fail(f"tree {t}: split feature index out of range [0, {n_features})")
    if not np.isin(arrays["missing_go_to_left"], (0, 1)).all():
        _fail(f"tree {t}: missing_go_to_left must be zeros and ones")
    if not np.isin(mask, (0, 1)).all():
        _fail(f"tree {t}: split_mask must be n_nodes zeros and ones")
    return arrays, mask.astype(bool), stats


def _decode_node_stats(tr, t):
    """The tree's node statistics (all three, or none: ``{}``): sample counts that are
    non-negative integers, weights that are non-negative finite numbers, finite
    impurities."""
    present = [k for k in NODE_STATS if k in tr]
    if not present:
        return {}
    if len(present) != len(NODE_STATS):
        _fail(f"tree {t}: node statistics come as {list(NODE_STATS)} together, got only "
              f"{present}")
    out = {"n_node_samples": _int_array(tr["n_node_samples"], f"tree {t} n_node_samples")}
    out.update({k: _float_array(tr[k], f"tree {t} {k}") for k in NODE_STATS[1:]})
    if (out["n_node_samples"] < 0).any() or (out["weighted_n_node_samples"] < 0).any():
        _fail(f"tree {t}: n_node_samples and weighted_n_node_samples must be >= 0")
    return out


def _decode_costs(spec, n_features):
    if not isinstance(spec, dict) or "costs" not in spec or not set(spec) <= set(_COST_KEYS):
        _fail(f"costs must be an object with 'costs' and only {_COST_KEYS}")
    try:
        fc = FeatureCosts.from_dict(spec)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        _fail(f"costs: {exc}")
    if fc.n_features != n_features:
        _fail(f"costs describe {fc.n_features} features, the forest has {n_features}")
    return fc


def _depth(obj, limit):
    """Nesting depth of a parsed JSON value, iteratively, stopping past ``limit``."""
    stack, deepest = [(obj, 1)], 0
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        children = node.values() if isinstance(node, dict) else node if isinstance(
            node, list) else ()
        stack.extend((c, d + 1) for c in children)
    return deepest


def _decode_meta(doc):
    out = {}
    for key in ("objective", "lam"):
        v = doc.get(key)
        if v is not None and not _is_number(v):
            _fail(f"{key} must be null or a finite number")
        out[key] = None if v is None else float(v)
    if out["lam"] is not None and out["lam"] < 0:
        _fail("lam must be >= 0")
    info = doc.get("solve_info")
    if info is not None and not isinstance(info, dict):
        _fail("solve_info must be an object")
    if info is not None and _depth(info, MAX_SOLVE_INFO_DEPTH) > MAX_SOLVE_INFO_DEPTH:
        _fail(f"solve_info nested deeper than {MAX_SOLVE_INFO_DEPTH} levels")
    out["solve_info"] = info or {}
    allow_nan = doc.get("allow_nan", False)
    if type(allow_nan) is not bool:
        _fail("allow_nan must be true or false")
    return out, allow_nan


#: fields of feature_encoding, the command line's record of how a table became X
ENCODING_KEYS = ("kind", "target", "columns", "categories")


def check_feature_encoding(enc, n_features):
    """A checked copy of ``feature_encoding`` (None stays None): ``columns`` names the
    ``n_features`` table columns in the order of X, ``target`` is the label column (not
    a feature), and ``categories`` maps text columns to their distinct categories.

    Raises
    ------
    ValueError
        Naming the field at fault.
    """
    if enc is None:
        return None
    if not isinstance(enc, Mapping) or "columns" not in enc or not set(enc) <= set(
            ENCODING_KEYS):
        raise ValueError(f"feature_encoding must be an object with 'columns' and only the "
                         f"fields {ENCODING_KEYS}")
    cols = enc["columns"]
    if not (isinstance(cols, list) and len(cols) == n_features
            and all(isinstance(c, str) for c in cols) and len(set(cols)) == len(cols)):
        raise ValueError(f"feature_encoding.columns must list n_features={n_features} "
                         "distinct column names")
    if enc.get("kind", "ordinal") != "ordinal":
        raise ValueError(f"feature_encoding.kind must be 'ordinal', got "
                         f"{str(enc.get('kind'))[:40]!r}")
    target = enc.get("target")
    if target is not None and (not isinstance(target, str) or target in cols):
        raise ValueError("feature_encoding.target must be null or the name of a column that "
                         "is not a feature column")
    cats = enc.get("categories") or {}
    if not (isinstance(cats, Mapping) and all(
            k in cols and isinstance(v, list) and all(isinstance(c, str) for c in v)
            and len(set(v)) == len(v) for k, v in cats.items())):
        raise ValueError("feature_encoding.categories must map feature columns to lists of "
                         "distinct strings")
    return {"kind": "ordinal", "target": target, "columns": list(cols),
            "categories": {k: list(v) for k, v in cats.items()}}


def check_names_agree(named, fix="build both from the same columns"):
    """Raise when two of the ``(field, names)`` pairs (None: not given) name the
    features differently (the message ends with ``fix``); return the first names
    given (None when none is)."""
    given = [(field, list(names)) for field, names in named if names is not None]
    for field, names in given[1:]:
        if names != given[0][1]:
            first, theirs = given[0]
            raise ValueError(f"{field} {names[:6]} and {first} {theirs[:6]} name the features "
                             "differently (another order or other names), so the columns "
                             f"would be read in the wrong order; {fix}")
    return given[0][1] if given else None


def _decode_names(doc, names, costs, n_features):
    """The feature names every field of the file agrees on (``feature_names``, the
    costs' and the command line's table columns) and the checked feature_encoding.
    The forest is named by ``feature_names``, else by the table's columns (files
    written before the command line recorded feature_names)."""
    try:
        enc = check_feature_encoding(doc.get("feature_encoding"), n_features)
        check_names_agree([("feature_names", names),
                           ("feature_encoding.columns", enc and enc["columns"]),
                           ("costs.feature_names", costs.feature_names)],
                          fix="the file contradicts itself (was it edited?): save the model "
                              "again from its source")
    except ValueError as exc:
        _fail(str(exc))
    return (names if names is not None else enc and enc["columns"]), enc


def decode(doc):
    """Keyword arguments of :class:`~prune_opt.PrunedForest` from a parsed document.

    Raises
    ------
    ValueError
        Naming the first field that breaks the schema.
    """
    _check_header(doc)
    ensemble, split_dtype, value_fit, absent = _decode_ensemble(doc)
    task = _decode_task(doc, ensemble.is_additive)
    classes = _decode_classes(doc) if task == "classification" else None
    n_features, names = _decode_features(doc)
    if not isinstance(doc["trees"], list) or not doc["trees"]:
        _fail("trees must be a non-empty list")
    n_classes = None if classes is None else classes.size
    width = (ensemble.width(task, n_classes) if ensemble.is_additive else None)
    decoded = [_decode_tree(tr, t, n_features, n_classes, width)
               for t, tr in enumerate(doc["trees"])]
    if len({bool(st) for *_, st in decoded}) > 1:
        _fail("node statistics (n_node_samples, ...) must be given for every tree or none")
    costs = _decode_costs(doc["costs"], n_features)
    meta, allow_nan = _decode_meta(doc)
    names, encoding = _decode_names(doc, names, costs, n_features)
    try:
        forest = Forest([a for a, _, _ in decoded], classes=classes, n_features=n_features,
                        feature_names=names, task=task, ensemble=ensemble,
                        split_dtype=split_dtype, source=doc["estimator"])
    except (ValueError, TypeError) as exc:
        _fail(str(exc))
    forest.allow_nan = allow_nan
    forest.node_value_fit = value_fit
    forest.absent_is_missing = absent
    if "source_info" in doc:
        from ..importers._catboost import check_source_info

        try:
            forest.source_info = check_source_info(doc["source_info"], forest)
        except ValueError as exc:
            _fail(str(exc))
    if decoded[0][2]:
        forest.node_stats = {k: np.concatenate([st[k] for *_, st in decoded])
                             for k in NODE_STATS}
    mask = np.concatenate([m for _, m, _ in decoded])
    try:
        forest.check_split_mask(mask)
    except ValueError as exc:
        _fail(str(exc))
    return dict(forest=forest, split_mask=mask, costs=costs,
                estimator_class=doc["estimator"], feature_encoding=encoding, **meta)


def read_pruned(path):
    """Read and check a file written by :func:`save_pruned`.

    Returns
    -------
    dict
        Keyword arguments of :class:`~prune_opt.PrunedForest`.
    """
    doc = _read_document(path)
    if not isinstance(doc, Mapping):
        _fail(f"not a prune-opt pruned forest (missing format {FORMAT!r})")
    return decode(doc)
