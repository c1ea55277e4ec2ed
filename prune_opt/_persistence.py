"""JSON persistence of pruned forests: no pickle, schema-versioned, strictly checked."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

__all__ = ["save_pruned", "load", "FORMAT", "SCHEMA_VERSION"]

FORMAT = "prune-opt/pruned-forest"
SCHEMA_VERSION = 1
_BULKY_SOLVE_INFO = ("duals", "history")
_ESTIMATORS = ("RandomForestClassifier", "ExtraTreesClassifier", "DecisionTreeClassifier",
               "ExtraTreeClassifier")


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


def save_pruned(pruned, path):
    f = pruned.forest
    classes = f.classes_
    if classes.dtype.kind in "iub":
        classes_out, kind = [int(c) for c in classes], "int"
    elif classes.dtype.kind == "f":
        classes_out, kind = [float(c) for c in classes], "float"
    else:
        classes_out, kind = [str(c) for c in classes], "str"
    trees = []
    for t in range(f.n_trees):
        sl = f.tree_slice(t)
        off = sl.start
        trees.append({
            "left": np.where(f.left[sl] >= 0, f.left[sl] - off, -1).tolist(),
            "right": np.where(f.right[sl] >= 0, f.right[sl] - off, -1).tolist(),
            "feature": f.feature[sl].tolist(),
            "threshold": f.threshold[sl].tolist(),
            "value": f.value[sl].tolist(),
            "missing_go_to_left": f.missing_go_to_left[sl].astype(int).tolist(),
            "split_mask": pruned.split_mask[sl].astype(int).tolist(),
        })
    est = f.estimator
    doc = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "estimator": type(est).__name__ if est is not None else "RandomForestClassifier",
        "classes": classes_out,
        "classes_kind": kind,
        "n_features": f.n_features,
        "feature_names": f.feature_names,
        "allow_nan": bool(f.allow_nan),
        "costs": pruned.costs.to_dict(),
        "objective": pruned.objective,
        "lam": pruned.lam,
        # per-record duals and iteration histories can be millions of numbers: not kept
        "solve_info": _jsonable({k: v for k, v in pruned.solve_info.items()
                                 if k not in _BULKY_SOLVE_INFO}),
        "trees": trees,
    }
    Path(path).write_text(json.dumps(doc))


def _fail(reason):
    raise ValueError(f"cannot load pruned forest: {reason}")


def _int_list(x, what):
    if not isinstance(x, list) or not all(isinstance(v, int) and not isinstance(v, bool)
                                          for v in x):
        _fail(f"{what} must be a list of integers")
    return np.asarray(x, dtype=np.int64)


def _float_list(x, what):
    if not isinstance(x, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                          for v in x):
        _fail(f"{what} must be a list of numbers")
    return np.asarray(x, dtype=float)


def load(path):
    """Load a pruned forest written by :meth:`PrunedForest.save`.

    Parsing is plain JSON: nothing in the file is executed.  A truncated,
    tampered or foreign file raises ``ValueError`` with the reason.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    PrunedForest

    Examples
    --------
    >>> import tempfile, os
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> pruned = po.prune(rf, X, y, lam=0.01)
    >>> path = os.path.join(tempfile.mkdtemp(), "pruned.json")
    >>> pruned.save(path)
    >>> bool((po.load(path).predict_proba(X) == pruned.predict_proba(X)).all())
    True
    """
    from ._costs import FeatureCosts
    from ._forest import Forest
    from ._pruned import PrunedForest

    try:
        text = Path(path).read_text()
    except UnicodeDecodeError:
        _fail("file is not UTF-8 text (not a prune-opt JSON file)")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        _fail(f"not valid JSON (truncated or corrupted?): {exc}")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        _fail(f"not a prune-opt pruned forest (missing format {FORMAT!r})")
    if doc.get("schema_version") != SCHEMA_VERSION:
        _fail(f"schema_version {doc.get('schema_version')!r} is not supported "
              f"(this prune-opt reads {SCHEMA_VERSION})")
    for key in ("classes", "classes_kind", "n_features", "trees", "costs", "estimator"):
        if key not in doc:
            _fail(f"missing field {key!r}")
    if doc["estimator"] not in _ESTIMATORS:
        _fail(f"unknown estimator {doc['estimator']!r}")
    kind = doc["classes_kind"]
    if kind not in ("int", "float", "str") or not isinstance(doc["classes"], list) or \
            not doc["classes"]:
        _fail("classes must be a non-empty list with classes_kind int, float or str")
    classes = np.asarray(doc["classes"], dtype={"int": np.int64, "float": float,
                                                "str": str}[kind])
    n_features = doc["n_features"]
    if not isinstance(n_features, int) or n_features < 1:
        _fail("n_features must be a positive integer")
    names = doc.get("feature_names")
    if names is not None and (not isinstance(names, list) or len(names) != n_features
                              or not all(isinstance(s, str) for s in names)):
        _fail("feature_names must be a list of n_features strings")
    if not isinstance(doc["trees"], list) or not doc["trees"]:
        _fail("trees must be a non-empty list")
    trees, masks = [], []
    for t, tr in enumerate(doc["trees"]):
        if not isinstance(tr, dict):
            _fail(f"tree {t} is not an object")
        for key in ("left", "right", "feature", "threshold", "value", "split_mask"):
            if key not in tr:
                _fail(f"tree {t} lacks {key!r}")
        value = tr["value"]
        if not isinstance(value, list) or not all(isinstance(r, list) for r in value):
            _fail(f"tree {t}: value must be a list of rows")
        try:
            value = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            _fail(f"tree {t}: value rows must be numbers of equal length")
        if value.ndim != 2 or not np.isfinite(value).all() or (value < 0).any():
            _fail(f"tree {t}: value must be a finite non-negative matrix")
        arrays = {
            "left": _int_list(tr["left"], f"tree {t} left"),
            "right": _int_list(tr["right"], f"tree {t} right"),
            "feature": _int_list(tr["feature"], f"tree {t} feature"),
            "threshold": _float_list(tr["threshold"], f"tree {t} threshold"),
            "value": value,
            "missing_go_to_left": _int_list(tr.get("missing_go_to_left",
                                                   [0] * len(tr["left"])),
                                            f"tree {t} missing_go_to_left"),
        }
        n = arrays["left"].size
        if any(a.shape[0] != n for a in arrays.values()):
            _fail(f"tree {t}: node arrays differ in length")
        if (arrays["left"] >= n).any() or (arrays["right"] >= n).any():
            _fail(f"tree {t}: child index out of range")
        masks.append(_int_list(tr["split_mask"], f"tree {t} split_mask"))
        if masks[-1].shape[0] != n or not np.isin(masks[-1], (0, 1)).all():
            _fail(f"tree {t}: split_mask must be n_nodes zeros and ones")
        trees.append(arrays)
    try:
        forest = Forest(trees, classes=classes, n_features=n_features, feature_names=names)
        forest.allow_nan = bool(doc.get("allow_nan", False))
        costs = FeatureCosts.from_dict(doc["costs"])
        mask = np.concatenate(masks).astype(bool)
        pruned = PrunedForest(forest, mask, costs=costs, objective=doc.get("objective"),
                              solve_info=doc.get("solve_info") or {}, lam=doc.get("lam"))
    except (ValueError, TypeError) as exc:
        _fail(str(exc))
    pruned.estimator_class = doc["estimator"]
    return pruned
