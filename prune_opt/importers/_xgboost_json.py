"""XGBoost's JSON model, parsed and checked: the one reader behind every XGBoost input.

The document is XGBoost's JSON model (``Booster.save_model("model.json")``,
``Booster.save_raw("json")``) as written by XGBoost 2.1 and later.  Nothing in
it is executed or looked up by name: the text is parsed by :mod:`json` and
every field that routing or prediction reads is checked (types, arrays of the
length ``num_nodes`` says, children forming one tree, feature indices in range,
finite numbers within float32's range); a document that breaks a rule raises a
``ValueError`` naming the field.

Routing follows XGBoost's predictor (``GetNextNode`` in
``src/predictor/predict_fn.h``): a node is a leaf iff its left child is -1; at
a split a missing value goes to the default child (``default_left``) and any
other value ``x``, cast to float32, goes left iff ``x < split_condition``, else
to the node after the left child (XGBoost allocates a split's children as a
pair, so ``right_children`` must say left + 1: arrays that do not are refused,
since XGBoost's own prediction paths would disagree on them).  For
a float32 ``x`` that is ``x <= t`` with ``t`` the largest float32 below the
condition, which is the threshold the IR stores (``split_dtype="float32"``).
A leaf's ``split_conditions`` entry is its value (learning rate included).
Nodes the root does not reach (deleted by XGBoost's pruner but kept in the
arrays) are dropped.

An internal node's value, what it predicts once pruned, is the mean of its
children's values weighted by their ``sum_hessian`` (the training Hessians
XGBoost recorded), i.e. the Hessian-weighted mean of its subtree's leaf
values: the same rule :mod:`prune_opt.program._boosted` applies to the pruning data.
The file does not record the learning rate, which XGBoost's own pruner
multiplies into ``base_weights`` (stored unshrunk for internal nodes), so
``base_weights`` cannot give a pruned node's value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._model_json import json_field, json_object, load_json_document

__all__ = ["XGBoostModel", "load_document", "parse_model", "OBJECTIVES", "OLDEST_VERSION"]

#: the objectives read, and the link of each (the IR's losses: squared error, log-loss)
OBJECTIVES = {"reg:squarederror": "identity", "binary:logistic": "logistic",
              "binary:logitraw": "logistic", "multi:softprob": "softmax",
              "multi:softmax": "softmax"}
#: the oldest XGBoost whose JSON models are read (the first release of xgboost-cpu)
OLDEST_VERSION = (2, 1)
_F32_MAX = float(np.finfo(np.float32).max)
#: the arrays through which XGBoost reads a categorical split's sets (empty without one)
CATEGORY_FIELDS = ("categories", "categories_nodes", "categories_segments", "categories_sizes")
#: the parent XGBoost writes for a tree's root
_ROOT_PARENT = 2147483647
#: XGBoost's ``kRtEps``: a binary:logistic base_score is clipped to [eps, 1 - eps]
_RT_EPS = np.float32(1e-6)
_SUPPORTED = ("supported: booster 'gbtree' with objective "
              + ", ".join(repr(o) for o in OBJECTIVES) + ", numeric features")


#: how every error names the document
WHAT = "XGBoost model JSON"


def _fail(where, what):
    raise ValueError(f"{WHAT}: {where} {what}")


def load_document(text):
    """The parsed JSON object of a model's text (str or bytes; see
    :func:`~._model_json.load_json_document`).

    Text that is not UTF-8, NaN and Infinity literals, a key given twice,
    invalid or truncated JSON, nesting too deep for the parser and a top level
    that is not an object raise ``ValueError``; a byte-order mark (a file saved
    by a Windows editor) is dropped.
    """
    return load_json_document(text, WHAT, "a binary UBJSON model (.ubj) must be saved as "
                                          "JSON first: booster.save_model('model.json')")


# ------------------------------------------------------------------ field readers
def _object(value, where):
    return json_object(value, where, WHAT)


def _field(obj, key, where):
    return json_field(obj, key, where, WHAT)


def _int(value, where, *, low=None):
    """An integer written as a JSON number or, as XGBoost writes parameters, a string."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(where, f"must be an integer, got {value!r:.60}")
    if low is not None and value < low:
        _fail(where, f"must be >= {low}, got {value}")
    return value


def _array(obj, key, where, n, kind):
    """``obj[key]`` as a 1-D numpy array of ``n`` integers (``kind="int"``), flags
    (``"flag"``: 0/1 or booleans) or real numbers (``"real"``)."""
    where = f"{where}.{key}"
    values = _field(obj, key, where.rsplit(".", 1)[0])
    if not isinstance(values, list):
        _fail(where, f"must be an array, got {type(values).__name__}")
    if len(values) != n:
        _fail(where, f"has {len(values)} entries, but num_nodes is {n}")
    try:
        arr = np.asarray(values)
    except (OverflowError, ValueError, TypeError):
        arr = np.asarray([None])
    if n == 0:
        return arr.astype(float if kind == "real" else np.int64)
    if arr.ndim != 1:
        _fail(where, "must be a flat array of numbers")
    if kind == "real":
        if arr.dtype.kind not in "iuf":
            _fail(where, "must hold numbers only")
        return arr.astype(float)
    if kind == "flag":
        if arr.dtype.kind == "b":
            return arr.astype(np.int64)
        if arr.dtype.kind not in "iu" or not np.isin(arr, (0, 1)).all():
            _fail(where, "must hold 0 or 1 only")
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or np.abs(arr).max() >= 2**31:
        _fail(where, "must hold 32-bit integers only")
    return arr.astype(np.int64)


def _int_list(obj, key, where):
    values = _field(obj, key, where)
    if not isinstance(values, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in values):
        _fail(f"{where}.{key}", "must be an array of integers")
    return np.asarray(values, dtype=np.int64)


# ------------------------------------------------------------------ one tree
def _reachable_levels(left, right, leaf, where):
    """The nodes the root reaches, level by level (original ids); refuses children out of
    range and nodes reached twice (a cycle or a shared subtree)."""
    n = left.size
    seen = np.zeros(n, dtype=bool)
    seen[0] = True
    levels, frontier = [], np.zeros(1, dtype=np.int64)
    while frontier.size:  # one pass per level; each level holds nodes not seen before
        levels.append(frontier)
        inner = frontier[~leaf[frontier]]
        kids = np.concatenate([left[inner], right[inner]])
        out = (kids < 0) | (kids >= n)
        if out.any():
            h = int(np.concatenate([inner, inner])[np.argmax(out)])
            _fail(where, f"node {h} has the child {int(kids[np.argmax(out)])}, outside "
                         f"[0, {n}) (num_nodes is {n})")
        if seen[kids].any() or np.unique(kids).size != kids.size:
            _fail(where, "children do not form a tree: a node is the child of two nodes "
                         "or of its own descendant")
        apart = right[inner] != left[inner] + 1
        if apart.any():  # XGBoost's predictor goes to left + 1 for "right"
            h = int(inner[np.argmax(apart)])
            _fail(where, f"node {h} has the children {int(left[h])} and {int(right[h])}; "
                         "XGBoost's predictor takes the right child to be the left one + 1, "
                         "so these arrays do not say where it routes")
        seen[kids] = True
        frontier = kids
    return levels


def _check_parents(parents, left, right, keep, inner, where):
    """Refuse a reached node whose ``parents`` entry is not its parent by the children
    arrays (XGBoost walks them, for a tree's depth, and crashed on such a file)."""
    expected = np.full(parents.size, _ROOT_PARENT, dtype=np.int64)
    expected[left[inner]] = expected[right[inner]] = inner
    wrong = keep[parents[keep] != expected[keep]]
    if wrong.size:
        h = int(wrong[0])
        _fail(f"{where}.parents", f"names {int(parents[h])} as the parent of node {h}, whose "
                                  f"parent by the children arrays is {int(expected[h])} "
                                  f"({_ROOT_PARENT} for the root); the file was edited, save "
                                  "the model again with XGBoost")


def _parse_tree(raw, where, n_features):
    """One tree's IR arrays (value a 1-D raw score per node) from its JSON object."""
    raw = _object(raw, where)
    param = _object(_field(raw, "tree_param", where), f"{where}.tree_param")
    n = _int(_field(param, "num_nodes", f"{where}.tree_param"),
             f"{where}.tree_param.num_nodes", low=1)
    leaf_size = _int(param.get("size_leaf_vector", "1"),
                     f"{where}.tree_param.size_leaf_vector", low=0)
    if leaf_size > 1:
        raise ValueError(f"XGBoost model: {where} is a vector-leaf tree ({leaf_size} outputs "
                         "per leaf, multi_strategy='multi_output_tree'), which prune-opt does "
                         f"not read; {_SUPPORTED}")
    left = _array(raw, "left_children", where, n, "int")
    right = _array(raw, "right_children", where, n, "int")
    parents = _array(raw, "parents", where, n, "int")
    feature = _array(raw, "split_indices", where, n, "int")
    cond = _array(raw, "split_conditions", where, n, "real")
    default_left = _array(raw, "default_left", where, n, "flag")
    hess = _array(raw, "sum_hessian", where, n, "real")
    for key in ("base_weights", "loss_changes"):
        _array(raw, key, where, n, "real")
    leaf = left == -1
    levels = _reachable_levels(left, right, leaf, where)
    keep = np.concatenate(levels)
    inner = keep[~leaf[keep]]
    _check_parents(parents, left, right, keep, inner, where)
    categorical = [k for k in CATEGORY_FIELDS if raw.get(k) not in (None, [])]
    if categorical or ("split_type" in raw and (
            _array(raw, "split_type", where, n, "int")[inner] != 0).any()):
        # XGBoost reads a categorical split's sets through these arrays (node ids, then
        # segments of the categories); non-empty ones that disagree crash its loader
        raise ValueError(f"XGBoost model: {where} has categorical splits (they test sets "
                         "of categories, which prune-opt does not route); encode the "
                         "categories as numbers and refit without enable_categorical")
    bad = (feature[inner] < 0) | (feature[inner] >= n_features)
    if bad.any():
        _fail(f"{where}.split_indices", f"holds the feature {int(feature[inner][bad][0])} "
                                         f"outside [0, {n_features}) (num_feature)")
    if not np.isfinite(cond[keep]).all() or (np.abs(cond[keep]) > _F32_MAX).any():
        _fail(f"{where}.split_conditions", "must hold finite float32 numbers")
    if not np.isfinite(hess[keep]).all() or (hess[keep] < 0).any():
        _fail(f"{where}.sum_hessian", "must hold finite non-negative numbers")
    cond32 = cond.astype(np.float32)
    value = np.where(leaf, cond32.astype(float), 0.0)
    for level in reversed(levels):  # children before parents
        h = level[~leaf[level]]
        hl, hr = hess[left[h]], hess[right[h]]
        total = hl + hr
        mean = 0.5 * (value[left[h]] + value[right[h]])
        weighted = (hl * value[left[h]] + hr * value[right[h]]) / np.where(total > 0, total, 1)
        value[h] = np.where(total > 0, weighted, mean)
    new_id = np.full(n, -1, dtype=np.int64)
    new_id[keep] = np.arange(keep.size)
    is_leaf = leaf[keep]
    below = np.nextafter(cond32, np.float32(-np.inf)).astype(float)  # x < c  <=>  x <= below
    return dict(left=np.where(is_leaf, -1, new_id[np.maximum(left[keep], 0)]),
                right=np.where(is_leaf, -1, new_id[np.maximum(right[keep], 0)]),
                feature=np.where(is_leaf, -1, feature[keep]),
                threshold=np.where(is_leaf, -2.0, below[keep]),
                value=value[keep],
                missing_go_to_left=np.where(is_leaf, 0, default_left[keep]).astype(np.uint8))


# ------------------------------------------------------------------ the model
@dataclass
class XGBoostModel:
    """A parsed XGBoost model: what the IR needs, every field checked.

    ``trees`` hold the IR's arrays of each tree in XGBoost's tree order (``value``
    one raw score per node), ``tree_class[t]`` the output group tree ``t`` adds to
    (``tree_info``), ``iteration_indptr`` the first tree of each boosting round.
    """

    version: tuple
    objective: str
    link: str
    n_features: int
    n_classes: int
    feature_names: list | None
    init_score: np.ndarray
    trees: list
    tree_class: np.ndarray
    iteration_indptr: np.ndarray
    attributes: dict


def _version(doc):
    version = _field(doc, "version", "the document")
    if not (isinstance(version, list) and len(version) == 3 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in version)):
        _fail("version", "must be an array of three integers")
    if tuple(version[:2]) < OLDEST_VERSION:
        raise ValueError(f"XGBoost model: written by XGBoost {'.'.join(map(str, version))}; "
                         f"prune-opt reads models of XGBoost {OLDEST_VERSION[0]}."
                         f"{OLDEST_VERSION[1]} or later: load it with a current XGBoost and "
                         "save it again (booster.save_model('model.json'))")
    return tuple(version)


def _booster(learner):
    gb = _object(_field(learner, "gradient_booster", "learner"), "learner.gradient_booster")
    name = _field(gb, "name", "learner.gradient_booster")
    if name == "dart":
        raise ValueError("XGBoost model: booster 'dart' scales each tree by a dropout weight; "
                         f"prune-opt does not read DART models ({_SUPPORTED})")
    if name != "gbtree":
        raise ValueError(f"XGBoost model: booster {name!r:.40} has no trees prune-opt can "
                         f"prune; {_SUPPORTED}")
    model = _object(_field(gb, "model", "learner.gradient_booster"),
                    "learner.gradient_booster.model")
    drop = model.get("weight_drop", gb.get("weight_drop"))
    if drop and any(w != 1 for w in drop):
        raise ValueError("XGBoost model: its trees carry dropout weights (weight_drop), "
                         f"which prune-opt does not read; {_SUPPORTED}")
    return model


def _link(learner, where="learner.objective"):
    objective = _object(_field(learner, "objective", "learner"), where)
    name = _field(objective, "name", where)
    if not isinstance(name, str) or name not in OBJECTIVES:
        raise ValueError(f"XGBoost model: objective {name!r:.60} is not supported: prune-opt "
                         "prices squared error (regression) and log-loss (classification); "
                         f"{_SUPPORTED}")
    return name, OBJECTIVES[name]


def _base_score(text, name, link, n_out):
    """The raw initial score of each output, from ``learner_model_param.base_score``.

    XGBoost stores it as a string, one number ("5E-1", before 3.1) or a vector
    ("[5E-1]"); binary:logistic keeps a probability, turned into a margin in
    float32 as XGBoost does (clipped to [1e-6, 1 - 1e-6], then ``-log(1/p - 1)``).
    """
    where = "learner.learner_model_param.base_score"
    if not isinstance(text, str):
        _fail(where, "must be a string")
    body = text.strip()
    body = body[1:-1] if body.startswith("[") and body.endswith("]") else body
    try:
        values = np.array([float(v) for v in body.split(",")], dtype=float)
    except ValueError:
        _fail(where, f"must be a number or a list of numbers, got {text!r:.60}")
    if not np.isfinite(values).all() or (np.abs(values) > _F32_MAX).any():
        _fail(where, "must be finite float32 numbers")
    if values.size not in (1, n_out):
        _fail(where, f"has {values.size} values; the model has {n_out} outputs")
    score = values.astype(np.float32)
    if name == "binary:logistic":
        if ((score < 0) | (score > 1)).any():
            _fail(where, f"is a probability for {name} and must lie in [0, 1]")
        p = np.clip(score, _RT_EPS, np.float32(1) - _RT_EPS)
        score = -np.log(np.float32(1) / p - np.float32(1))
    return np.broadcast_to(score.astype(float), (n_out,)).copy()


def _features(learner, n_features):
    names = learner.get("feature_names") or []
    types = learner.get("feature_types") or []
    if not isinstance(names, list) or not all(isinstance(v, str) for v in names) or (
            names and len(names) != n_features):
        _fail("learner.feature_names", f"must list {n_features} names (num_feature) or none")
    if not isinstance(types, list) or not all(isinstance(v, str) for v in types):
        _fail("learner.feature_types", "must be an array of strings")
    categorical = [names[k] if names else k for k, v in enumerate(types) if v == "c"]
    if categorical:
        raise ValueError(f"XGBoost model: features {categorical[:5]} are categorical "
                         "(enable_categorical): their splits test sets of categories, which "
                         "prune-opt does not route; encode them as numbers and refit")
    return names or None


def _iteration_indptr(model, n_trees, layer):
    where = "learner.gradient_booster.model.iteration_indptr"
    if "iteration_indptr" not in model:  # as XGBoost rebuilds it for older models
        if layer == 0 or n_trees % layer:
            _fail("learner.gradient_booster.model", f"has {n_trees} trees, not a whole "
                                                    f"number of rounds of {layer}")
        return np.arange(0, n_trees + 1, layer, dtype=np.int64)
    indptr = _int_list(model, "iteration_indptr", "learner.gradient_booster.model")
    if indptr.size == 0 or indptr[0] != 0 or indptr[-1] != n_trees or (
            np.diff(indptr) <= 0).any():
        _fail(where, f"must rise from 0 to the number of trees ({n_trees})")
    return indptr


def parse_model(doc):
    """An :class:`XGBoostModel` from a parsed JSON model document.

    Raises
    ------
    ValueError
        For a document that breaks the schema (naming the field), and for
        models prune-opt does not read (naming what it reads): DART and linear
        boosters, dropout-weighted trees, objectives other than
        reg:squarederror, binary:logistic, binary:logitraw, multi:softprob and
        multi:softmax, multi-target models, vector-leaf trees and categorical
        splits.
    """
    version = _version(doc)
    learner = _object(_field(doc, "learner", "the document"), "learner")
    name, link = _link(learner)
    model = _booster(learner)
    params = _object(_field(learner, "learner_model_param", "learner"),
                     "learner.learner_model_param")
    where = "learner.learner_model_param"
    n_features = _int(_field(params, "num_feature", where), f"{where}.num_feature", low=1)
    n_targets = _int(params.get("num_target", "1"), f"{where}.num_target", low=0)
    if n_targets > 1:
        raise ValueError(f"XGBoost model: a multi-target model ({n_targets} targets) is not "
                         "supported; fit one model per target and prune each")
    n_class = _int(params.get("num_class", "0"), f"{where}.num_class", low=0)
    if link == "softmax" and n_class < 2:
        _fail(f"{where}.num_class", f"must be at least 2 for {name}, got {n_class}")
    n_out = n_class if link == "softmax" else 1
    init = _base_score(_field(params, "base_score", where), name, link, n_out)
    feature_names = _features(learner, n_features)
    cats = model.get("cats")
    if isinstance(cats, dict) and cats.get("enc"):
        raise ValueError("XGBoost model: it re-codes categorical features (cats), which "
                         f"prune-opt does not route; {_SUPPORTED}")

    mwhere = "learner.gradient_booster.model"
    gparam = _object(_field(model, "gbtree_model_param", mwhere), f"{mwhere}.gbtree_model_param")
    n_trees = _int(_field(gparam, "num_trees", f"{mwhere}.gbtree_model_param"),
                   f"{mwhere}.gbtree_model_param.num_trees", low=0)
    n_parallel = _int(gparam.get("num_parallel_tree", "1"),
                      f"{mwhere}.gbtree_model_param.num_parallel_tree", low=1)
    raw_trees = _field(model, "trees", mwhere)
    if not isinstance(raw_trees, list) or len(raw_trees) != n_trees:
        _fail(f"{mwhere}.trees", f"must be an array of num_trees = {n_trees} trees")
    if n_trees == 0:
        raise ValueError("XGBoost model: it has no trees (an unfitted booster?); fit it first")
    tree_class = _int_list(model, "tree_info", mwhere)
    if tree_class.size != n_trees or (tree_class < 0).any() or (tree_class >= n_out).any():
        _fail(f"{mwhere}.tree_info", f"must give each of the {n_trees} trees an output "
                                     f"group in [0, {n_out})")
    ids = [_int(_field(_object(t, f"{mwhere}.trees[{i}]"), "id", f"{mwhere}.trees[{i}]"),
                f"{mwhere}.trees[{i}].id") for i, t in enumerate(raw_trees)]
    if sorted(ids) != list(range(n_trees)):
        _fail(f"{mwhere}.trees", f"ids must number the trees 0 to {n_trees - 1}, each once")
    trees = [None] * n_trees
    for i, raw in enumerate(raw_trees):  # XGBoost places each tree at its id
        trees[ids[i]] = _parse_tree(raw, f"{mwhere}.trees[{i}]", n_features)
    indptr = _iteration_indptr(model, n_trees, n_parallel * n_out)
    attributes = learner.get("attributes") or {}
    if not isinstance(attributes, dict):
        _fail("learner.attributes", "must be an object")
    return XGBoostModel(version=version, objective=name, link=link, n_features=n_features,
                        n_classes=n_class if link == "softmax" else (2 if link == "logistic"
                                                                     else 0),
                        feature_names=feature_names, init_score=init, trees=trees,
                        tree_class=tree_class, iteration_indptr=indptr, attributes=attributes)
