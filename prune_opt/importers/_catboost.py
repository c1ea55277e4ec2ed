"""Read CatBoost models into the Forest IR, routing exactly as CatBoost does.

Every input goes through one parser of CatBoost's JSON model
(:mod:`._catboost_json`): a fitted ``CatBoostClassifier``,
``CatBoostRegressor`` or ``CatBoost`` is saved as JSON first
(``save_model(..., format="json")``, into a temporary file), a file path,
JSON text or bytes, or the parsed document are read directly.  Reading a file
needs no CatBoost and executes nothing; the binary ``.cbm`` format is refused
with the way to save JSON.

The forest is additive (see :class:`~prune_opt.forest._ensemble.Ensemble`): identity
link for RMSE, logistic for Logloss and CrossEntropy, softmax for MultiClass.
Splits compare float32 feature values (``split_dtype="float32"``) as CatBoost
does, and NaN goes where the feature's ``nan_mode`` sends it.  CatBoost's
``scale_and_bias`` is folded in: the leaf values are multiplied by the scale,
the bias is the initial score.

**Layout.** Tree ``r`` of a CatBoost model with ``K`` outputs (``K`` = 1, or
the classes of MultiClass) becomes the IR trees ``r*K .. r*K + K - 1``, in
round-major order: IR tree ``r*K + k`` is CatBoost tree ``r`` with class
``k``'s leaf values (``tree_class`` ``k``), the ``K`` copies node for node
alike.  A symmetric (oblivious) tree of depth ``d`` is the full binary tree
of ``2^(d+1) - 1`` nodes in preorder whose level ``j`` tests the tree's
``splits[j]``; :func:`oblivious_levels` recognises one from the arrays alone,
so the layout survives pruning, :func:`prune_opt.load` and sub-forests.

**What the CatBoost exporter needs.** The forest keeps, as ``source_info``
(saved and loaded with it), what the IR does not hold and a CatBoost model
written back from it should say: the loss (``CrossEntropy`` and ``Logloss``
share the logistic link), each feature's ``nan_value_treatment`` (also of the
features no split tests) and whether the trees are symmetric; see
:func:`catboost_source_info`.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from ..forest._ensemble import Ensemble
from ..forest._forest import Forest
from ._catboost_json import LOSSES, NAN_TO_LEFT, SUPPORTED, WHAT, load_document, parse_model
from ._guards import BOM, MAX_MODEL_BYTES, check_size, read_limited

__all__ = ["from_catboost", "is_catboost_model", "oblivious_levels", "catboost_source_info",
           "check_source_info", "CATBOOST", "MAX_MODEL_BYTES", "MODEL_SOURCE", "SOURCES"]

CATBOOST = ("catboost.CatBoostClassifier, CatBoostRegressor, CatBoost (losses RMSE, Logloss, "
            "CrossEntropy, MultiClass; float features)")
#: the source name of a forest read from a plain CatBoost model or a JSON model
MODEL_SOURCE = "catboost.CatBoost"
_WRAPPERS = ("CatBoostClassifier", "CatBoostRegressor")
#: the source names of a forest read from CatBoost
SOURCES = (*_WRAPPERS, MODEL_SOURCE)
#: the keys of a CatBoost forest's ``source_info``
SOURCE_INFO_KEYS = ("library", "loss", "symmetric", "nan_value_treatment")


def _catboost_classes(model):
    """Names of the CatBoost classes ``model`` is an instance of (catboost not imported)."""
    return {cls.__name__ for cls in type(model).__mro__
            if cls.__module__.split(".")[0] == "catboost"}


def is_catboost_model(model):
    """Whether ``model`` is a CatBoost model (``CatBoost`` or one of its subclasses).

    Examples
    --------
    >>> is_catboost_model(object())
    False
    """
    return "CatBoost" in _catboost_classes(model)


# ------------------------------------------------------------------ inputs
def _model_json(model, max_bytes):
    """The JSON text of a fitted in-memory CatBoost model, refusing early, by name, what
    the JSON cannot hold or prune-opt does not route."""
    name = type(model).__name__
    if not model.is_fitted():
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(f"forest: this {name} is not fitted yet; call fit(X, y) before "
                             "pruning it")
    if "CatBoostRanker" in _catboost_classes(model):
        raise ValueError(f"CatBoost model: a {name} ranks; prune-opt reads regressors and "
                         f"classifiers ({SUPPORTED})")
    for what, getter in (("categorical", "get_cat_feature_indices"),
                         ("text", "get_text_feature_indices"),
                         ("embedding", "get_embedding_feature_indices")):
        found = list(getattr(model, getter, lambda: [])())
        if found:
            names = model.feature_names_ or []
            shown = [names[i] if i < len(names) else i for i in found[:5]]
            raise ValueError(f"CatBoost model: features {shown} are {what} features, whose "
                             f"splits prune-opt does not route ({SUPPORTED}); encode them "
                             "as numbers and refit")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.json")
        model.save_model(path, format="json")
        return read_limited(path, max_bytes, WHAT)


def _document(model, max_bytes):
    """(parsed JSON document, source name)."""
    if isinstance(model, dict):
        return model, MODEL_SOURCE
    if isinstance(model, (str, os.PathLike)) and not (
            isinstance(model, str) and model.lstrip(BOM + " \t\r\n").startswith(("{", "CBM1"))):
        return load_document(read_limited(model, max_bytes, WHAT)), MODEL_SOURCE
    if isinstance(model, (str, bytes, bytearray)):
        return load_document(check_size(model, max_bytes, WHAT)), MODEL_SOURCE
    classes = _catboost_classes(model)
    if "CatBoost" in classes:
        source = next((c for c in _WRAPPERS if c in classes), MODEL_SOURCE)
        return load_document(_model_json(model, max_bytes)), source
    raise TypeError(f"from_catboost: expected a CatBoost model, a JSON model path, text or "
                    f"document, got {type(model).__name__}")


def _check_wrapper(source, link, model):
    if (source == "CatBoostRegressor") != (link == "identity"):
        raise ValueError(f"CatBoost model: a {source} trained for a "
                         f"{'regression' if link == 'identity' else 'classification'}")
    classes = getattr(model, "classes_", None) if source == "CatBoostClassifier" else None
    return None if classes is None else np.asarray(classes)


def from_catboost(model, *, max_bytes=MAX_MODEL_BYTES):
    """A CatBoost model as an additive :class:`~prune_opt.Forest`.

    Parameters
    ----------
    model : CatBoostClassifier, CatBoostRegressor, CatBoost, path, str, bytes or dict
        A fitted CatBoost model, or its JSON model
        (``model.save_model("model.json", format="json")``): a file path, the
        JSON text or bytes, or the parsed document.  Files are parsed, never
        executed, and need no CatBoost installed.
    max_bytes : int, default 512 MiB
        Largest model file or text read; a larger one is refused unread.

    Returns
    -------
    Forest
        ``split_dtype="float32"``; the model's classes (``class_names``, else
        ``0, 1`` for a binary model) or None for regression; the model's
        feature names when it has them.  Each CatBoost tree is ``K`` IR trees,
        one per output (see the module's notes on the layout).  ``node_stats``
        keeps the training weight CatBoost recorded in each leaf, summed up the
        tree (``weighted_n_node_samples``; ``n_node_samples`` its rounding,
        ``impurity`` 0: CatBoost records neither), which the export writes back
        as leaf weights.

    Raises
    ------
    ValueError
        For a truncated or inconsistent JSON model, naming the field, for the
        binary ``.cbm`` format (with the way to save JSON), and for models
        prune-opt does not read, naming what it reads: losses other than
        RMSE, Logloss, CrossEntropy and MultiClass, categorical, text and
        embedding features, rankers.

    Examples
    --------
    >>> doc = {"model_info": {"params": {"loss_function": {"type": "RMSE"}}},
    ...        "features_info": {"float_features": [
    ...            {"feature_index": 0, "flat_feature_index": 0, "feature_id": "",
    ...             "borders": [0.5], "has_nans": True, "nan_value_treatment": "AsFalse"}]},
    ...        "oblivious_trees": [{"leaf_values": [-1.0, 1.0], "leaf_weights": [3, 1],
    ...                             "splits": [{"split_index": 0}]}],   # borders[0]
    ...        "scale_and_bias": [2.0, [10.0]]}
    >>> f = from_catboost(doc)
    >>> f.predict([[0.5], [0.75], [float("nan")]])   # x > 0.5 goes right; NaN as Min
    array([ 8., 12.,  8.])
    >>> float(f.value[0, 0])   # the pruned root: scaled leaves weighted by leaf_weights
    -1.0
    """
    doc, source = _document(model, max_bytes)
    parsed = parse_model(doc)
    classes = None
    if source in _WRAPPERS:
        classes = _check_wrapper(source, parsed.link, model)
    K = parsed.n_outputs
    arrays = []
    for tree in parsed.trees:
        for k in range(K):  # one IR tree per output, round-major
            copy = dict(tree)
            if K > 1:
                value = np.zeros_like(tree["value"])
                value[:, k] = tree["value"][:, k]
                copy["value"] = value
            arrays.append(copy)
    if parsed.link == "identity":
        classes = None
    elif classes is None:
        classes = (np.asarray(parsed.classes) if parsed.classes is not None
                   else np.arange(max(K, 2)))
    ensemble = Ensemble("additive", parsed.link, init_score=parsed.bias,
                        tree_class=np.tile(np.arange(K), len(parsed.trees))
                        if parsed.link == "softmax" else None)
    forest = Forest(arrays, classes=classes, n_features=parsed.n_features,
                    feature_names=parsed.feature_names, ensemble=ensemble,
                    task="regression" if parsed.link == "identity" else "classification",
                    split_dtype="float32", source=source)
    forest.source_info = {"library": "catboost", "loss": parsed.loss,
                          "symmetric": bool(parsed.symmetric),
                          "nan_value_treatment": list(parsed.nan_treatment)}
    weight = np.concatenate([tree["weight"] for tree in arrays])
    # CatBoost records each leaf's training weight, no counts nor impurities
    forest.node_stats = {"n_node_samples": np.rint(weight).astype(np.int64),
                         "weighted_n_node_samples": weight, "impurity": np.zeros_like(weight)}
    return forest


def catboost_source_info(forest):
    """What a CatBoost model written from ``forest`` says beyond the trees: its
    ``source_info`` when it was read from CatBoost (kept through pruning, saving and
    loading), else what the arrays tell (:meth:`~prune_opt.Forest.select_trees`
    keeps no ``source_info``).

    Returns
    -------
    dict
        ``loss`` (``RMSE``, ``Logloss``, ``CrossEntropy`` or ``MultiClass``;
        from the link when unknown: CrossEntropy reads as Logloss),
        ``symmetric`` (whether every tree is symmetric, and the model was),
        ``nan_value_treatment`` per feature (from the splits when unknown:
        ``AsFalse`` or ``AsTrue`` for a feature some split tests, ``AsIs`` for
        the others, which no split reads).

    Examples
    --------
    >>> doc = {"model_info": {"params": {"loss_function": {"type": "CrossEntropy"}}},
    ...        "features_info": {"float_features": [
    ...            {"feature_index": 0, "flat_feature_index": 0, "feature_id": "",
    ...             "borders": [0.5], "has_nans": True, "nan_value_treatment": "AsTrue"}]},
    ...        "oblivious_trees": [{"leaf_values": [-1.0, 1.0], "splits": [{"split_index": 0}]}]}
    >>> info = catboost_source_info(from_catboost(doc))
    >>> info["loss"], info["symmetric"], info["nan_value_treatment"]
    ('CrossEntropy', True, ['AsTrue'])
    """
    info = getattr(forest, "source_info", None)
    symmetric = all(oblivious_levels(forest, t) is not None for t in range(forest.n_trees))
    if info is not None:
        return dict(check_source_info(info, forest), symmetric=symmetric and info["symmetric"])
    link = forest.ensemble.link
    loss = {"identity": "RMSE", "logistic": "Logloss", "softmax": "MultiClass"}[link]
    inner = forest.left >= 0
    treatment = ["AsIs"] * forest.n_features
    for f, left in zip(forest.feature[inner], forest.missing_go_to_left[inner]):
        treatment[f] = "AsFalse" if left else "AsTrue"
    return {"library": "catboost", "loss": loss, "symmetric": symmetric,
            "nan_value_treatment": treatment}


def check_source_info(info, forest):
    """A checked copy of a CatBoost forest's ``source_info`` (see
    :func:`catboost_source_info`): the loss of the forest's link, a known
    ``nan_value_treatment`` for each of its features that sends NaN where every
    split on the feature does.

    Raises
    ------
    ValueError
        Naming the field that breaks a rule or contradicts the trees.
    """
    if not isinstance(info, dict) or set(info) != set(SOURCE_INFO_KEYS):
        raise ValueError(f"source_info must be an object with the fields {SOURCE_INFO_KEYS}")
    if info["library"] != "catboost":
        raise ValueError(f"source_info.library must be 'catboost', got "
                         f"{info['library']!r:.40}")
    if forest.source not in SOURCES:
        raise ValueError(f"source_info describes a CatBoost model; this forest was read from "
                         f"{forest.source!r}")
    loss = info["loss"]
    if not isinstance(loss, str) or LOSSES.get(loss) != forest.ensemble.link:
        losses = [name for name, link in LOSSES.items() if link == forest.ensemble.link]
        raise ValueError(f"source_info.loss {loss!r:.40} is not a loss of link "
                         f"{forest.ensemble.link!r} ({', '.join(losses) or 'none'})")
    if type(info["symmetric"]) is not bool:
        raise ValueError("source_info.symmetric must be true or false")
    treatment = info["nan_value_treatment"]
    if not (isinstance(treatment, list) and len(treatment) == forest.n_features
            and all(isinstance(v, str) and v in NAN_TO_LEFT for v in treatment)):
        raise ValueError(f"source_info.nan_value_treatment must list one of "
                         f"{sorted(NAN_TO_LEFT)} for each of the {forest.n_features} features")
    inner = forest.left >= 0
    expected = np.array([NAN_TO_LEFT[v] for v in treatment])[forest.feature[inner]]
    wrong = np.flatnonzero(expected != forest.missing_go_to_left[inner].astype(bool))
    if wrong.size:
        f = int(forest.feature[inner][wrong[0]])
        raise ValueError(f"source_info.nan_value_treatment: feature {f} is "
                         f"{treatment[f]!r}, but a split on it sends NaN the other way")
    return {"library": "catboost", "loss": loss, "symmetric": info["symmetric"],
            "nan_value_treatment": list(treatment)}


def oblivious_levels(forest, t):
    """The splits of tree ``t`` level by level, if it is a symmetric (oblivious) tree as
    the CatBoost import lays one out, else None.

    A symmetric tree of depth ``d`` is the full binary tree of ``2^(d+1) - 1``
    nodes in preorder whose nodes at depth ``j`` all test the same feature and
    threshold with the same NaN direction; its ``j``-th split is CatBoost's
    ``splits[j]`` (bit ``j`` of CatBoost's leaf index).  Read from the arrays
    alone, so it holds after pruning (which keeps the arrays), saving and
    loading, and :meth:`~prune_opt.Forest.select_trees`.

    Returns
    -------
    list of (feature, threshold, missing_go_to_left) or None
        One entry per level (empty for a single leaf).

    Examples
    --------
    >>> doc = {"model_info": {"params": {"loss_function": {"type": "RMSE"}}},
    ...        "features_info": {"float_features": [
    ...            {"feature_index": 0, "flat_feature_index": 0, "feature_id": "",
    ...             "borders": [0.5], "has_nans": True, "nan_value_treatment": "AsTrue"}]},
    ...        "oblivious_trees": [{"leaf_values": [-1.0, 1.0], "splits": [{"split_index": 0}]}]}
    >>> oblivious_levels(from_catboost(doc), 0)
    [(0, 0.5, False)]
    """
    sl = forest.tree_slice(t)
    left, feature = forest.left[sl] - sl.start, forest.feature[sl]
    threshold, nan_left = forest.threshold[sl], forest.missing_go_to_left[sl]
    n = left.size
    d = n.bit_length() - 1
    if n != (1 << (d + 1)) - 1:
        return None
    out, frontier = [], np.zeros(1, dtype=np.int64)
    for j in range(d + 1):
        if j == d:
            return out if (forest.left[sl][frontier] < 0).all() else None
        if (forest.left[sl][frontier] < 0).any():
            return None
        f, thr, m = feature[frontier], threshold[frontier], nan_left[frontier]
        if (f != f[0]).any() or (thr != thr[0]).any() or (m != m[0]).any():
            return None
        out.append((int(f[0]), float(thr[0]), bool(m[0])))
        right = forest.right[sl][frontier] - sl.start
        frontier = np.column_stack([left[frontier], right]).ravel()
    return out
