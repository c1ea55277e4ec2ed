"""Read XGBoost models into the Forest IR, routing exactly as XGBoost does.

Every input goes through one parser of XGBoost's JSON model
(:mod:`._xgboost_json`): a fitted ``XGBClassifier`` or ``XGBRegressor`` (and the
``XGBRF*`` variants) and a ``Booster`` through ``booster.save_raw("json")``, a
file path, JSON text or bytes, or the parsed document directly.  Reading a file
needs no XGBoost and executes nothing.

The forest is additive (see :class:`~prune_opt.forest._ensemble.Ensemble`): identity
link for ``reg:squarederror``, logistic for ``binary:logistic`` and
``binary:logitraw``, softmax for ``multi:softprob`` and ``multi:softmax`` (tree
``t`` adds to class ``tree_info[t]``); the initial score is XGBoost's
``base_score`` as a margin.  Splits compare float32 feature values
(``split_dtype="float32"``), NaN goes where XGBoost sends a missing value, and
an entry absent from a scipy sparse ``X`` is missing too, as in XGBoost's
``DMatrix`` (:attr:`Forest.absent_is_missing <prune_opt.Forest.absent_is_missing>`).
"""

from __future__ import annotations

import os

import numpy as np

from ..forest._ensemble import Ensemble
from ..forest._forest import Forest
from ._guards import MAX_MODEL_BYTES, check_size, read_limited
from ._xgboost_json import WHAT, load_document, parse_model

__all__ = ["from_xgboost", "is_xgboost_model", "XGBOOST", "MAX_MODEL_BYTES"]

XGBOOST = ("xgboost.XGBClassifier, XGBRegressor, Booster (booster 'gbtree'; objectives "
           "reg:squarederror, binary:logistic, binary:logitraw, multi:softprob, "
           "multi:softmax)")
#: the source name of a forest read from a Booster or a JSON model
BOOSTER_SOURCE = "xgboost.Booster"


def _xgboost_classes(model):
    """Names of the XGBoost classes ``model`` is an instance of (xgboost not imported)."""
    return {cls.__name__ for cls in type(model).__mro__
            if cls.__module__.split(".")[0] == "xgboost"}


def is_xgboost_model(model):
    """Whether ``model`` is an XGBoost scikit-learn model or ``Booster``.

    Examples
    --------
    >>> is_xgboost_model(object())
    False
    """
    return bool(_xgboost_classes(model) & {"XGBModel", "Booster"})


# ------------------------------------------------------------------ inputs
def _wrapper_booster(model):
    """The Booster of a fitted XGBoost scikit-learn model, refusing what would route
    differently from its ``predict``."""
    try:
        booster = model.get_booster()
    except Exception as exc:  # xgboost raises sklearn's NotFittedError
        if type(exc).__name__ != "NotFittedError":
            raise
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(f"forest: this {type(model).__name__} is not fitted yet; call "
                             "fit(X, y) before pruning it") from exc
    missing = getattr(model, "missing", np.nan)
    if missing is not None and not (isinstance(missing, float) and np.isnan(missing)):
        raise ValueError(f"forest: this {type(model).__name__} treats the value "
                         f"missing={missing!r} as missing; prune-opt marks missing values "
                         "with NaN. Replace that value by NaN in X and call "
                         "model.set_params(missing=np.nan) (the trees route it the same)")
    return booster


def _document(model, max_bytes):
    """(parsed JSON document, source name, whether the input is a scikit-learn model)."""
    if isinstance(model, dict):
        return model, BOOSTER_SOURCE, False
    if isinstance(model, (str, os.PathLike)) and not (
            isinstance(model, str) and model.lstrip("\ufeff \t\r\n").startswith("{")):
        if str(model).endswith(".ubj"):
            raise ValueError(f"XGBoost model: {os.fspath(model)!r} is binary UBJSON, which "
                             "prune-opt does not parse; save the model as JSON: "
                             "booster.save_model('model.json')")
        return load_document(read_limited(model, max_bytes, WHAT)), BOOSTER_SOURCE, False
    if isinstance(model, (str, bytes, bytearray)):
        return load_document(check_size(model, max_bytes, WHAT)), BOOSTER_SOURCE, False
    classes = _xgboost_classes(model)
    if "XGBModel" in classes:
        raw = _wrapper_booster(model).save_raw(raw_format="json")
        return load_document(check_size(raw, max_bytes, WHAT)), type(model).__name__, True
    if "Booster" in classes:
        raw = model.save_raw(raw_format="json")
        return load_document(check_size(raw, max_bytes, WHAT)), BOOSTER_SOURCE, False
    raise TypeError(f"from_xgboost: expected an XGBoost model, a Booster, a JSON model path, "
                    f"text or document, got {type(model).__name__}")


def _rounds(parsed, iteration_range, follow_best):
    """The [first, last) boosting rounds kept: ``iteration_range`` when given, else what
    the model's own ``predict`` uses by default."""
    n_rounds = parsed.iteration_indptr.size - 1
    if iteration_range is None:
        best = parsed.attributes.get("best_iteration")
        if follow_best and best is not None:
            try:
                return 0, min(int(best) + 1, n_rounds)
            except (TypeError, ValueError):
                raise ValueError(f"XGBoost model JSON: learner.attributes.best_iteration "
                                 f"must be an integer, got {best!r:.40}") from None
        return 0, n_rounds
    pair = tuple(iteration_range) if isinstance(iteration_range, (tuple, list)) else ()
    if len(pair) != 2 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                 for v in pair):
        raise TypeError(f"iteration_range must be a pair of integers (begin, end), as "
                        f"XGBoost's predict takes, got {iteration_range!r:.60}")
    first, last = (int(v) for v in pair)
    last = n_rounds if last == 0 else last
    if not 0 <= first < last <= n_rounds:
        raise ValueError(f"iteration_range {tuple(iteration_range)} must satisfy 0 <= begin < "
                         f"end <= {n_rounds} (the model's rounds; end 0 means all)")
    return first, last


def from_xgboost(model, *, iteration_range=None, max_bytes=MAX_MODEL_BYTES):
    """An XGBoost model as an additive :class:`~prune_opt.Forest`.

    Parameters
    ----------
    model : XGBClassifier, XGBRegressor, xgboost.Booster, path, str, bytes or dict
        A fitted XGBoost model (booster ``"gbtree"``), or its JSON model
        (``booster.save_model("model.json")``): a file path, the JSON text or
        bytes, or the parsed document.  Files are parsed, never executed, and
        need no XGBoost installed.
    iteration_range : (int, int), optional
        The boosting rounds ``[begin, end)`` to keep, as ``predict(...,
        iteration_range=)`` (``end`` 0: all).  Default: as the model's own
        ``predict`` by default: a scikit-learn model trained with early
        stopping, or a JSON file it saved, keeps its first ``best_iteration +
        1`` rounds; a ``Booster`` (and any other JSON) keeps them all.
    max_bytes : int, default 512 MiB
        Largest model file or text read; a larger one is refused unread.

    Returns
    -------
    Forest
        ``split_dtype="float32"``; classes ``0 .. K-1`` for a classifier (as
        ``XGBClassifier``), None for regression; the model's feature names.

    Raises
    ------
    ValueError
        For a truncated or inconsistent JSON model, naming the field, and for
        models prune-opt does not read, naming what it reads: DART and linear
        boosters, objectives other than ``reg:squarederror``,
        ``binary:logistic``, ``binary:logitraw``, ``multi:softprob`` and
        ``multi:softmax``, multi-target models, vector-leaf trees, categorical
        features, and a scikit-learn model whose ``missing`` is not NaN.

    Examples
    --------
    >>> import json
    >>> stump = {"tree_param": {"num_nodes": "3", "size_leaf_vector": "1"}, "id": 0,
    ...          "left_children": [1, -1, -1], "right_children": [2, -1, -1],
    ...          "parents": [2147483647, 0, 0], "split_indices": [0, 0, 0],
    ...          "split_conditions": [0.5, -0.25, 0.25], "default_left": [1, 0, 0],
    ...          "sum_hessian": [4.0, 2.0, 2.0], "base_weights": [0, 0, 0],
    ...          "loss_changes": [1.0, 0, 0]}
    >>> doc = {"version": [3, 2, 0], "learner": {
    ...     "objective": {"name": "reg:squarederror"},
    ...     "learner_model_param": {"base_score": "[1E0]", "num_feature": "1"},
    ...     "gradient_booster": {"name": "gbtree", "model": {
    ...         "gbtree_model_param": {"num_trees": "1"}, "tree_info": [0],
    ...         "trees": [stump]}}}}
    >>> f = from_xgboost(json.dumps(doc))
    >>> f.predict([[0.4999], [0.5], [float("nan")]])  # x < 0.5 goes left; NaN: default_left
    array([0.75, 1.25, 0.75])
    """
    doc, source, is_wrapper = _document(model, max_bytes)
    parsed = parse_model(doc)
    follow_best = is_wrapper or "scikit_learn" in parsed.attributes
    first, last = _rounds(parsed, iteration_range, follow_best)
    keep = range(int(parsed.iteration_indptr[first]), int(parsed.iteration_indptr[last]))
    softmax = parsed.link == "softmax"
    width = parsed.n_classes if softmax else 1
    arrays = []
    for t in keep:
        tree = dict(parsed.trees[t])
        value = np.zeros((tree["value"].size, width))
        value[:, parsed.tree_class[t] if softmax else 0] = tree["value"]
        tree["value"] = value
        arrays.append(tree)
    ensemble = Ensemble("additive", parsed.link, init_score=parsed.init_score,
                        tree_class=parsed.tree_class[list(keep)] if softmax else None)
    classes = None if parsed.link == "identity" else np.arange(parsed.n_classes)
    forest = Forest.from_arrays(arrays, classes=classes, n_features=parsed.n_features,
                                feature_names=parsed.feature_names, ensemble=ensemble,
                                split_dtype="float32", source=source)
    forest.absent_is_missing = True  # XGBoost's DMatrix: absent sparse entries are missing
    return forest
