"""CatBoost's JSON model, parsed and checked: the one reader behind every CatBoost input.

The document is what ``model.save_model("model.json", format="json")`` writes.
Nothing in it is executed or looked up by name: the text is parsed by
:mod:`json` and every field that routing or prediction reads is checked
(types, lengths, feature indices in range, finite numbers within float32's
range for borders); a document that breaks a rule raises a ``ValueError``
naming the field.

It is read by the rule of CatBoost's own loader (``ConvertJsonToCatboostModel``
and the evaluator): a split is its ``split_index``, a position in the list of
every float feature's ``borders`` one after the other, in the order
``float_features`` lists them; the split's ``border`` and
``float_feature_index`` are not read by CatBoost, so each, where present, must
name the border at ``split_index``.  A feature's value is the input column
``flat_feature_index``, which for a model of float features is the feature's
position, as is its ``feature_index``.  CatBoost counts the borders a value
exceeds and compares the count with the split's position, which is ``x >
border`` only when a feature's borders rise, so they must.  A node of a
non-symmetric tree is a leaf iff it has a ``value``.  Fields that must agree
and do not (an edited file) are refused, naming the field and the fix.

Routing follows CatBoost's predictor.  A float feature is read as float32
and a split sends ``x`` to its "1" side (``right``) iff ``x > border``, both
float32, else to its "0" side (``left``); so ``x <= border`` goes left, the
IR's rule with ``threshold = border`` and ``split_dtype="float32"``.  A NaN
does what the feature's ``nan_value_treatment`` says: ``AsFalse``
(``nan_mode="Min"``) and ``AsIs`` (``"Forbidden"``, and any feature that had
no NaN in training; ``NaN > border`` is false) send it to the 0 side,
``AsTrue`` (``"Max"``) to the 1 side.  CatBoost applies the treatment only
to a feature whose ``has_nans`` is true (absent reads as false); for any
other feature NaN is read as is (``AsIs``), and so it is here.

* **Symmetric (oblivious) trees** (``oblivious_trees``): ``splits[j]``
  decides bit ``j`` of the leaf index, ``leaf = sum_j (x > border_j) << j``.
  A tree of depth ``d`` becomes the full binary tree of ``2^(d+1) - 1`` nodes
  in preorder whose level ``j`` tests ``splits[j]`` (the root the first
  split); the leaf at left-to-right position ``p`` (the root's decision its
  highest bit) is CatBoost's leaf ``bit_reverse(p)``.  ``leaf_values`` holds
  ``K`` values per leaf, leaf by leaf (``K`` = 1, or the classes of
  MultiClass).
* **Non-symmetric trees** (``trees``; grow policies Depthwise and
  Lossguide): nested nodes, a split node holding ``split``, ``left`` (the 0
  side) and ``right``, a leaf ``value`` (a number, or ``K`` of them) and
  ``weight``; numbered in preorder, left first.

A node's value, what it predicts once pruned to a leaf, is the mean of its
subtree's leaf values weighted by the leaves' ``leaf_weights`` (the training
weight CatBoost recorded in each leaf), the plain mean where they sum to 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._model_json import json_field, json_object, load_json_document

__all__ = ["CatBoostModel", "load_document", "parse_model", "LOSSES", "MAX_DEPTH"]

#: the losses read, and the link of each (the IR's losses: squared error, log-loss)
LOSSES = {"RMSE": "identity", "Logloss": "logistic", "CrossEntropy": "logistic",
          "MultiClass": "softmax"}
#: the Python types of the labels of each of CatBoost's ``class_label_type``s
LABEL_TYPES = {"Boolean": {bool}, "Integer": {int}, "Float": {int, float}, "String": {str}}
#: NaN's side at a split, per ``nan_value_treatment``: True for the 0 side (left)
NAN_TO_LEFT = {"AsFalse": True, "AsIs": True, "AsTrue": False}
#: deepest tree read: CatBoost's own limit for symmetric trees is 16; a Lossguide
#: tree's depth is bounded by its leaves
MAX_DEPTH = 64
#: deepest symmetric tree read (its IR has 2^(d+1) - 1 nodes): CatBoost's own limit
MAX_SYMMETRIC_DEPTH = 16
_F32_MAX = float(np.finfo(np.float32).max)
SUPPORTED = ("supported: losses " + ", ".join(LOSSES) + " on numeric (float) features; "
             "symmetric, Depthwise and Lossguide trees")
HOW_TO_SAVE = "model.save_model('model.json', format='json')"


#: how every error names the document
WHAT = "CatBoost model JSON"


def _fail(where, what):
    raise ValueError(f"{WHAT}: {where} {what}")


def load_document(text):
    """The parsed JSON object of a model's text (str or bytes; see
    :func:`~._model_json.load_json_document`).

    A CatBoost binary model (``.cbm``), text that is not UTF-8, NaN and
    Infinity literals, a key given twice, invalid or truncated JSON, nesting
    too deep for the parser and a top level that is not an object raise
    ``ValueError``; a byte-order mark is dropped.

    Examples
    --------
    >>> load_document(b"CBM1...")
    Traceback (most recent call last):
    ...
    ValueError: CatBoost model: this is CatBoost's binary format (.cbm), which prune-opt does not parse; save the model as JSON: model.save_model('model.json', format='json')
    """
    if text[:4] in ("CBM1", b"CBM1"):
        raise ValueError("CatBoost model: this is CatBoost's binary format (.cbm), which "
                         f"prune-opt does not parse; save the model as JSON: {HOW_TO_SAVE}")
    return load_json_document(text, WHAT, f"a binary model must be saved as JSON first: "
                                          f"{HOW_TO_SAVE}")


# ------------------------------------------------------------------ field readers
def _object(value, where):
    return json_object(value, where, WHAT)


def _field(obj, key, where):
    return json_field(obj, key, where, WHAT)


def _int(value, where, low=None, high=None):
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(where, f"must be an integer, got {value!r:.60}")
    if (low is not None and value < low) or (high is not None and value >= high):
        _fail(where, f"must lie in [{low}, {high}), got {value}")
    return value


def _number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(where, f"must be a number, got {value!r:.60}")
    return float(value)


def _numbers(value, where, n=None):
    """A JSON array of ``n`` (any count when None) numbers as a float array."""
    if not isinstance(value, list):
        _fail(where, f"must be an array of numbers, got {type(value).__name__}")
    if n is not None and len(value) != n:
        _fail(where, f"has {len(value)} entries, expected {n}")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        _fail(where, "must hold numbers only")
    return np.asarray(value, dtype=float).reshape(len(value))


# ------------------------------------------------------------------ the model
@dataclass
class CatBoostModel:
    """A parsed CatBoost model: what the IR needs, every field checked.

    ``trees`` hold each CatBoost tree's IR arrays in preorder (``value`` of
    shape (n_nodes, n_outputs), the leaf values times ``scale``; an internal
    node the weighted mean of its leaves; ``weight`` the training weight that
    reached each node, its leaves' summed), ``symmetric`` whether each was an
    oblivious tree; ``bias`` the raw score added to the trees' sum;
    ``nan_treatment`` each feature's ``nan_value_treatment`` (in feature order).
    """

    loss: str
    link: str
    n_features: int
    feature_names: list | None
    classes: list | None
    n_outputs: int
    scale: float
    bias: np.ndarray
    trees: list
    symmetric: bool
    grow_policy: str | None
    nan_treatment: list


def _loss(info):
    params = info.get("params")
    where = "model_info.params.loss_function"
    if not isinstance(params, dict) or not isinstance(params.get("loss_function"), dict):
        raise ValueError(f"CatBoost model JSON: {where} is missing, so the model's raw "
                         "scores have no known link; save the model with a current CatBoost "
                         f"({HOW_TO_SAVE}); {SUPPORTED}")
    name = _field(params["loss_function"], "type", where)
    if not isinstance(name, str) or name not in LOSSES:
        raise ValueError(f"CatBoost model: loss {name!r:.60} is not supported: prune-opt "
                         "prices squared error (regression) and log-loss (classification); "
                         f"refit with loss_function='RMSE', 'Logloss' or 'MultiClass' "
                         f"({SUPPORTED})")
    other = info.get("loss_function")  # older CatBoost's place, read too
    if other is not None and (not isinstance(other, dict) or other.get("type") != name):
        _fail("model_info.loss_function", f"says {other!r:.60}, {where} {name!r}; CatBoost "
                                          "versions read one or the other: remove "
                                          "model_info.loss_function")
    threshold = info.get("binclass_probability_threshold")
    if LOSSES[name] == "logistic" and threshold is not None:
        try:
            threshold = float(threshold)
        except (TypeError, ValueError):
            pass
        if threshold != 0.5:
            raise ValueError(f"CatBoost model: model_info.binclass_probability_threshold is "
                             f"{threshold!r:.40}: CatBoost's predict() names the class 1 above "
                             "that probability, prune-opt's above 0.5. Call "
                             "model.set_probability_threshold(0.5) (or delete the field) and "
                             "save the model again")
    grow = params.get("tree_learner_options", {})
    grow = grow.get("grow_policy") if isinstance(grow, dict) else None
    return name, LOSSES[name], grow if isinstance(grow, str) else None


def _features(info):
    """(the (feature, float32 border, position in its borders) of each ``split_index``,
    NaN-to-left flag of each feature, n_features, feature names or None,
    ``nan_value_treatment`` of each feature)."""
    info = _object(info, "features_info")
    for key, what in (("categorical_features", "categorical"), ("text_features", "text"),
                      ("embedding_features", "embedding")):
        listed = info.get(key)
        if listed:
            names = [f.get("feature_id") or f.get("flat_feature_index")
                     for f in listed if isinstance(f, dict)]
            raise ValueError(f"CatBoost model: features {names[:5]} are {what} features, "
                             f"whose splits prune-opt does not route ({SUPPORTED}); encode "
                             "them as numbers and refit")
    if info.get("ctrs") or info.get("estimated_features"):
        raise ValueError("CatBoost model: it computes features from categorical or text "
                         f"columns (ctrs, estimated features), which prune-opt does not "
                         f"route; {SUPPORTED}")
    floats = _field(info, "float_features", "features_info")
    if not isinstance(floats, list) or not floats:
        _fail("features_info.float_features", "must be a non-empty array")
    n = len(floats)
    nan_left = np.ones(n, dtype=bool)
    names, treatments, bins = [], [], []
    for i, raw in enumerate(floats):
        where = f"features_info.float_features[{i}]"
        raw = _object(raw, where)
        for key in ("feature_index", "flat_feature_index"):
            if _int(_field(raw, key, where), f"{where}.{key}") != i:
                _fail(f"{where}.{key}", f"is {raw[key]}, not {i}: CatBoost lists a model's "
                                        "float features in order, each numbered by its "
                                        "position, and reads a feature's values at its "
                                        "flat_feature_index; the file was edited, save the "
                                        "model again with CatBoost")
        borders = _numbers(_field(raw, "borders", where), f"{where}.borders")
        if not np.isfinite(borders).all() or (np.abs(borders) > _F32_MAX).any():
            _fail(f"{where}.borders", "must hold finite float32 numbers")
        borders = borders.astype(np.float32)  # as CatBoost reads them
        if (np.diff(borders) < 0).any():
            _fail(f"{where}.borders", "must rise: CatBoost counts the borders a value "
                                      "exceeds, which says x > borders[j] only when they "
                                      "rise; the file was edited, save the model again "
                                      "with CatBoost")
        bins += [(i, float(b), j) for j, b in enumerate(borders)]
        has_nans = raw.get("has_nans", False)  # CatBoost reads an absent has_nans as false
        if not isinstance(has_nans, bool):
            _fail(f"{where}.has_nans", f"must be true or false, got {has_nans!r:.40}")
        treatment = raw.get("nan_value_treatment", "AsIs")
        if not isinstance(treatment, str) or treatment not in NAN_TO_LEFT:
            _fail(f"{where}.nan_value_treatment", f"must be one of {sorted(NAN_TO_LEFT)}, "
                                                  f"got {treatment!r:.40}")
        if not has_nans:  # CatBoost applies no treatment: NaN > border is false
            treatment = "AsIs"
        nan_left[i] = NAN_TO_LEFT[treatment]
        treatments.append(treatment)
        name = raw.get("feature_id", "")
        if not isinstance(name, str):
            _fail(f"{where}.feature_id", "must be a string")
        names.append(name)
    named = all(names) and len(set(names)) == n
    return bins, nan_left, n, (names if named else None), treatments


def _class_labels(info):
    """(labels, where) by CatBoost's rule (``GetModelClassLabels``): the first of
    ``class_params`` and ``multiclass_params`` present gives its ``class_names``, else
    ``0 .. classes_count - 1``, else its ``class_to_label``; else the training
    parameters' ``data_processing_options.class_names``; else None (``0 .. K - 1``)."""
    for key in ("class_params", "multiclass_params"):
        if key in info:
            params = _object(info[key], f"model_info.{key}")
            names, count = params.get("class_names"), params.get("classes_count")
            if names:
                return names, f"model_info.{key}.class_names"
            if count:
                count = _int(count, f"model_info.{key}.classes_count", 0)
                return list(range(count)), f"model_info.{key}.classes_count"
            if params.get("class_to_label"):
                labels = params["class_to_label"]
                if not isinstance(labels, list) or not all(
                        isinstance(v, (int, float)) and not isinstance(v, bool)
                        and np.isfinite(v) for v in labels):
                    _fail(f"model_info.{key}.class_to_label", "must be an array of numbers")
                return [int(v) for v in labels], f"model_info.{key}.class_to_label"
            break
    names = info.get("params", {}).get("data_processing_options", {})
    names = names.get("class_names") if isinstance(names, dict) else None
    if names:
        return names, "model_info.params.data_processing_options.class_names"
    return None, None


def _classes(info, link, n_outputs):
    if link == "identity":
        return None
    names, where = _class_labels(info)
    if names is None:
        return None
    # labels of one type: CatBoost's class_label_type Boolean, Integer, Float or String
    kinds = {bool if isinstance(v, bool) else int if isinstance(v, int) else float
             if isinstance(v, float) else str if isinstance(v, str) else None
             for v in names} if isinstance(names, list) else {None}
    if not any(kinds <= allowed for allowed in LABEL_TYPES.values()):
        _fail(where, "must be an array of labels of one type")
    params = info.get("class_params")
    label_type = params.get("class_label_type") if isinstance(params, dict) else None
    if label_type is not None and not kinds <= LABEL_TYPES.get(str(label_type), set()):
        _fail(where, f"holds labels of {sorted(k.__name__ for k in kinds)}, but class_params."
                     f"class_label_type is {label_type!r:.40}, which CatBoost reads them as; "
                     "the file was edited, save the model again with CatBoost")
    if len(set(names)) != len(names):
        _fail(where, "must name each class once")
    to_label = params.get("class_to_label") if isinstance(params, dict) else None
    want = n_outputs if link == "softmax" else 2
    if len(names) != want or (to_label not in (None, []) and to_label != list(range(want))):
        raise ValueError(f"CatBoost model: it predicts {n_outputs} output(s) for the classes "
                         f"{names[:10]} ({where}; class_to_label {to_label!r:.60}): a class "
                         "named in class_names had no training rows. prune-opt reads a model "
                         "whose outputs are its classes; refit without class_names (or with "
                         "only the classes present in y)")
    return names


def _scale_and_bias(doc, n_outputs):
    where = "scale_and_bias"
    sb = doc.get(where)
    if sb is None:  # written before CatBoost stored it: no scale, no bias
        return 1.0, np.zeros(n_outputs)
    if not isinstance(sb, list) or len(sb) != 2:
        _fail(where, "must be the pair [scale, [bias, ...]]")
    scale = _number(sb[0], f"{where}[0]")
    if not isinstance(sb[1], list):
        _fail(f"{where}[1]", f"must be an array of biases, got {sb[1]!r:.40}: CatBoost reads "
                             "anything else as no bias; write [bias, ...]")
    bias = _numbers(sb[1], f"{where}[1]")
    if bias.size != n_outputs:
        _fail(f"{where}[1]", f"has {bias.size} values; the trees have {n_outputs} outputs")
    if not (np.isfinite(scale) and np.isfinite(bias).all()):
        _fail(where, "must hold finite numbers")
    return scale, bias


def _split(raw, where, bins, nan_left):
    """(feature, threshold, NaN to the left) of a split object: the border its
    ``split_index`` names (see the module), ``border`` and ``float_feature_index``
    checked against it."""
    raw = _object(raw, where)
    kind = raw.get("split_type", "FloatFeature")
    if kind != "FloatFeature":
        what = {"OneHotFeature": "a one-hot categorical split", "OnlineCtr":
                "a split on a categorical feature's statistics (CTR)"}.get(
                    kind if isinstance(kind, str) else "", f"a split of type {kind!r:.40}")
        raise ValueError(f"CatBoost model: {where} is {what}, which prune-opt does not "
                         f"route; {SUPPORTED}")
    s = _int(_field(raw, "split_index", where), f"{where}.split_index", 0, len(bins))
    f, b, j = bins[s]
    named = f"split_index {s} names features_info.float_features[{f}].borders[{j}] = {b!r}"
    if "float_feature_index" in raw:
        k = _int(raw["float_feature_index"], f"{where}.float_feature_index", 0, nan_left.size)
        if k != f:
            _fail(f"{where}.float_feature_index", f"is {k}, but {named}, which CatBoost "
                                                  "reads; the file was edited, save the "
                                                  "model again with CatBoost")
    if "border" in raw:
        border = _number(raw["border"], f"{where}.border")
        if not np.isfinite(border) or abs(border) > _F32_MAX:
            _fail(f"{where}.border", "must be a finite float32 number")
        if float(np.float32(border)) != b:  # CatBoost keeps borders as float32
            _fail(f"{where}.border", f"is {border!r}, but {named}, which CatBoost reads; "
                                     "the file was edited: restore the border or save the "
                                     "model again with CatBoost")
    # CatBoost compares float32(x) > border
    return f, b, bool(nan_left[f])


def _weighted_up(value, weight, left, right, levels):
    """Fill internal nodes' values and weights bottom-up: the weighted mean of the two
    children (their plain mean where both weigh 0)."""
    for level in reversed(levels):
        h = level[left[level] >= 0]
        wl, wr = weight[left[h]], weight[right[h]]
        total = wl + wr
        safe = np.where(total > 0, total, 1.0)[:, None]
        weighted = (wl[:, None] * value[left[h]] + wr[:, None] * value[right[h]]) / safe
        mean = 0.5 * (value[left[h]] + value[right[h]])
        value[h] = np.where((total > 0)[:, None], weighted, mean)
        weight[h] = total


def _symmetric_tree(raw, where, bins, nan_left, n_outputs, scale):
    raw = _object(raw, where)
    splits = _field(raw, "splits", where)
    if splits is None:  # how CatBoost writes a tree of depth 0 (one leaf)
        splits = []
    if not isinstance(splits, list):
        _fail(f"{where}.splits", "must be an array")
    d = len(splits)
    if d > MAX_SYMMETRIC_DEPTH:
        _fail(f"{where}.splits", f"has {d} levels, more than CatBoost's "
                                 f"{MAX_SYMMETRIC_DEPTH}")
    parsed = [_split(s, f"{where}.splits[{j}]", bins, nan_left) for j, s in enumerate(splits)]
    n_leaves = 1 << d
    leaf_values = _numbers(_field(raw, "leaf_values", where), f"{where}.leaf_values",
                           n_leaves * n_outputs)
    if not np.isfinite(leaf_values).all():
        _fail(f"{where}.leaf_values", "must hold finite numbers")
    weights = raw.get("leaf_weights")
    weights = (np.zeros(n_leaves) if weights is None
               else _numbers(weights, f"{where}.leaf_weights", n_leaves))
    if not np.isfinite(weights).all() or (weights < 0).any():
        _fail(f"{where}.leaf_weights", "must hold finite non-negative numbers")
    # preorder ids of the full tree, level by level (left to right within a level)
    n = 2 * n_leaves - 1
    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    feature = np.full(n, -1, dtype=np.int64)
    threshold = np.full(n, -2.0)
    missing_left = np.zeros(n, dtype=np.uint8)
    levels = [np.zeros(1, dtype=np.int64)]
    for j, (f, t, nl) in enumerate(parsed):
        nodes = levels[-1]
        below = (1 << (d - j)) - 1  # nodes in a child's subtree
        left[nodes], right[nodes] = nodes + 1, nodes + 1 + below
        feature[nodes], threshold[nodes], missing_left[nodes] = f, t, nl
        levels.append(np.column_stack([left[nodes], right[nodes]]).ravel())
    # the leaf at position p took the root's decision as p's highest bit; CatBoost's
    # index takes splits[j]'s as bit j
    p = np.arange(n_leaves)
    index = np.zeros(n_leaves, dtype=np.int64)
    for j in range(d):
        index |= ((p >> (d - 1 - j)) & 1) << j
    value = np.zeros((n, n_outputs))
    weight = np.zeros(n)
    value[levels[-1]] = leaf_values.reshape(n_leaves, n_outputs)[index] * scale
    weight[levels[-1]] = weights[index]
    _weighted_up(value, weight, left, right, levels[:-1])
    return dict(left=left, right=right, feature=feature, threshold=threshold, value=value,
                missing_go_to_left=missing_left, weight=weight)


def _non_symmetric_tree(raw, where, bins, nan_left, n_outputs, scale):
    """A nested tree in preorder (left first), walked without recursion; a node is a
    leaf iff it has a ``value``, as CatBoost reads it."""
    nodes, depth_of, parent_slot = [], [], []
    stack = [(raw, where, 0, -1, 0)]  # (object, path, depth, parent id, 0 left / 1 right)
    while stack:
        obj, path, depth, parent, side = stack.pop()
        obj = _object(obj, path)
        if depth > MAX_DEPTH:
            _fail(path, f"lies deeper than {MAX_DEPTH} levels")
        h = len(nodes)
        nodes.append((obj, path))
        depth_of.append(depth)
        parent_slot.append((parent, side))
        if "value" in obj and "split" in obj:
            _fail(path, "has both a value (a leaf) and a split; CatBoost reads it as a leaf "
                        "and drops the split: remove one")
        if "value" not in obj:
            stack.append((_field(obj, "right", path), f"{path}.right", depth + 1, h, 1))
            stack.append((_field(obj, "left", path), f"{path}.left", depth + 1, h, 0))
    n = len(nodes)
    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    feature = np.full(n, -1, dtype=np.int64)
    threshold = np.full(n, -2.0)
    missing_left = np.zeros(n, dtype=np.uint8)
    value = np.zeros((n, n_outputs))
    weight = np.zeros(n)
    for h, (parent, side) in enumerate(parent_slot):
        if parent >= 0:
            (right if side else left)[parent] = h
    for h, (obj, path) in enumerate(nodes):
        if "value" not in obj:
            feature[h], threshold[h], missing_left[h] = _split(
                _field(obj, "split", path), f"{path}.split", bins, nan_left)
            continue
        v = _field(obj, "value", path)
        v = _numbers(v if isinstance(v, list) else [v], f"{path}.value", n_outputs)
        w = _number(obj.get("weight", 0.0), f"{path}.weight")
        if not np.isfinite(v).all():
            _fail(f"{path}.value", "must be finite")
        if not np.isfinite(w) or w < 0:
            _fail(f"{path}.weight", "must be a finite non-negative number")
        value[h], weight[h] = v * scale, w
    depth_of = np.asarray(depth_of)
    levels = [np.flatnonzero(depth_of == k) for k in range(int(depth_of.max()) + 1)]
    _weighted_up(value, weight, left, right, levels)
    return dict(left=left, right=right, feature=feature, threshold=threshold, value=value,
                missing_go_to_left=missing_left, weight=weight)


def parse_model(doc):
    """A :class:`CatBoostModel` from a parsed JSON model document.

    Raises
    ------
    ValueError
        For a document that breaks the schema (naming the field), and for
        models prune-opt does not read (naming what it reads): losses other
        than RMSE, Logloss, CrossEntropy and MultiClass, categorical, text and
        embedding features, and a classifier some of whose classes have no
        output.
    """
    info = _object(_field(doc, "model_info", "the document"), "model_info")
    loss, link, grow_policy = _loss(info)
    if doc.get("ctr_data"):
        raise ValueError("CatBoost model: it holds statistics of categorical features "
                         f"(ctr_data), whose splits prune-opt does not route; {SUPPORTED}")
    bins, nan_left, n_features, names, treatments = _features(
        _field(doc, "features_info", "the document"))
    has_sym, has_other = "oblivious_trees" in doc, "trees" in doc
    if has_sym == has_other:
        _fail("the document", "must hold exactly one of 'oblivious_trees' (symmetric) and "
                              "'trees' (Depthwise, Lossguide)")
    key = "oblivious_trees" if has_sym else "trees"
    raw_trees = doc[key]
    if not isinstance(raw_trees, list):
        _fail(key, "must be an array of trees")
    if not raw_trees:
        raise ValueError("CatBoost model: it has no trees (an unfitted model?); fit it first")
    sb = doc.get("scale_and_bias")
    n_outputs = (len(sb[1]) if isinstance(sb, list) and len(sb) == 2
                 and isinstance(sb[1], list) and sb[1] else 1)
    if link == "softmax" and n_outputs < 2:
        _fail("scale_and_bias", f"gives {n_outputs} output for loss {loss}, which needs one "
                                "per class")
    if link != "softmax" and n_outputs != 1:
        _fail("scale_and_bias", f"gives {n_outputs} outputs for loss {loss}, which has one")
    scale, bias = _scale_and_bias(doc, n_outputs)
    classes = _classes(info, link, n_outputs)
    build = _symmetric_tree if has_sym else _non_symmetric_tree
    trees = [build(raw, f"{key}[{i}]", bins, nan_left, n_outputs, scale)
             for i, raw in enumerate(raw_trees)]
    return CatBoostModel(loss=loss, link=link, n_features=n_features, feature_names=names,
                         classes=classes, n_outputs=n_outputs, scale=scale, bias=bias,
                         trees=trees, symmetric=has_sym, grow_policy=grow_policy,
                         nan_treatment=treatments)
