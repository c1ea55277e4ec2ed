"""A pruned CatBoost model as CatBoost's JSON model: its document and a CatBoost model.

Only a forest read from CatBoost exports (:func:`catboost_model_json` says why
others do not, and names their own exporter).  The document is the one
``model.save_model(path, format="json")`` writes and
``load_model(path, format="json")`` reads, built without CatBoost:

* **splits** -- CatBoost sends ``x`` to a split's 1 side iff
  ``float32(x) > border``; the import's thresholds are those float32 borders,
  written back as they are.  Each feature lists the borders its splits use
  (``features_info``), and a split names its border by ``split_index``, its
  position among all features' borders, which is what CatBoost's loader reads.
* **NaN** -- each feature keeps its ``nan_value_treatment`` (``AsFalse``,
  ``AsTrue`` or ``AsIs``), which is where every split on it sends NaN.
* **symmetric trees** -- a pruned symmetric tree is not symmetric in general,
  so it keeps its levels and every leaf takes the value of the pruned node it
  lies under: a row lands in a leaf whose value is the one the pruned tree
  gives it, whatever the features the pruned tree does not test for that row
  hold.  Levels below the deepest split any class keeps are dropped (they
  change nothing), so a tree pruned to its root is a tree of depth 0.
* **non-symmetric trees** (Depthwise, Lossguide) -- written as the pruned tree:
  cut subtrees are gone.
* **multiclass** -- the ``K`` IR trees of one CatBoost tree (one per class,
  pruned separately) become that tree again: a symmetric tree keeps its levels,
  a non-symmetric one the splits some class keeps, and class ``k``'s column
  of every leaf holds class ``k``'s pruned value.  A row is then asked only
  for the features some class's pruned path tests.
* **values** -- leaves hold the IR's values, which already carry CatBoost's
  scale, so ``scale_and_bias`` is ``[1, bias]``: CatBoost adds the trees' sum
  to the bias as the IR does.  CatBoost's JSON reader is not correctly
  rounded, so :func:`catboost_model_text` writes each number as a decimal it
  reads back exactly (:mod:`._catboost_numbers`), and the raw scores agree bit
  for bit (save for the about one double in 40,000 no decimal reaches, read
  one unit in the last place off).

* **leaf weights** -- each leaf's training weight: the weights CatBoost
  recorded in the original leaves under it, summed (the import keeps them as
  ``node_stats``; 0 for a forest that has none).  CatBoost needs them: without,
  its ``save_model(format="json")`` of a non-symmetric tree crashes the process
  and ``get_leaf_weights()`` reads uninitialised memory; with them
  ``get_feature_importance()`` and SHAP values need no training data.

The document keeps the loss, the class names and the feature names, but
none of CatBoost's training parameters (prune-opt does not keep them): the
model predicts and saves in every format CatBoost writes, while
``get_all_params()`` fails.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from ..importers._catboost import SOURCES, catboost_source_info, oblivious_levels
from ._catboost_numbers import catboost_json_text
from ._library import exporter_of

__all__ = ["catboost_model_json", "catboost_model_text", "pruned_to_catboost", "INSTALL_HINT"]

INSTALL_HINT = "pip install prune-opt[catboost]"


def _check_exportable(forest):
    if forest.source in SOURCES and forest.is_additive:
        return
    source = f"comes from {forest.source!r}" if forest.source else "was not read from a model"
    own = exporter_of(forest)
    hint = f"; use {own} instead" if own and own != "to_catboost()" else ""
    raise ValueError(
        f"to_catboost: this pruned forest {source}, not from CatBoost. to_catboost writes "
        "back a model read from CatBoost; another library's splits do not map onto "
        "CatBoost's exactly (CatBoost compares float32 values and sends NaN one way per "
        f"feature, not per split){hint}")


def _groups(forest):
    """The IR trees of each CatBoost tree: lists of ``K`` tree indices (None for a class
    without one), consecutive trees of increasing class and identical splits."""
    K = forest.value_width
    softmax = forest.ensemble.link == "softmax"
    tree_class = forest.ensemble.tree_class if softmax else np.zeros(forest.n_trees, int)
    keys = ("left", "right", "feature", "threshold", "missing_go_to_left")
    groups, current, last, first = [], None, -1, None
    for t, k in enumerate(tree_class):
        arrays = forest.local_arrays(t)
        same = first is not None and all(np.array_equal(arrays[key], first[key])
                                         for key in keys)
        if current is None or k <= last or not same:
            current, first = [None] * K, arrays
            groups.append(current)
        current[int(k)], last = t, int(k)
    return groups


def _representatives(left, right, mask):
    """For each node ``h`` of a tree: the node whose value a row reaching ``h`` takes in
    the pruned tree (``mask``: the nodes that stay splits): ``h`` itself while all its
    ancestors stay splits, else its highest ancestor that does not."""
    rep = np.arange(left.size)
    frontier = np.zeros(1, dtype=np.int64)
    while frontier.size:
        inner = frontier[left[frontier] >= 0]
        whole = mask[inner] & (rep[inner] == inner)  # a kept split on a kept path
        for child in (left[inner], right[inner]):
            rep[child] = np.where(whole, child, rep[inner])
        frontier = np.concatenate([left[inner], right[inner]])
    return rep


def _members(pruned, group):
    """``(t0, arrays, members, kept)`` of a group: its first IR tree and that tree's
    local arrays (every member has the same splits), ``(class, tree, representatives)``
    of each member (:func:`_representatives` of its split mask), and the nodes some
    member keeps as splits."""
    f = pruned.forest
    t0 = next(t for t in group if t is not None)
    arrays = f.local_arrays(t0)
    left, right = arrays["left"], arrays["right"]
    kept = np.zeros(left.size, dtype=bool)
    members = []
    for k, t in enumerate(group):
        if t is None:
            continue
        mask = pruned.split_mask[f.tree_slice(t)]
        kept |= mask
        members.append((k, t, _representatives(left, right, mask)))
    return t0, arrays, members, kept


def _leaf_weights(forest, t, nodes):
    """The training weight of the nodes of IR tree ``t`` that become the export's leaves:
    CatBoost's leaf weights summed, as the import keeps them (``node_stats``), else 0
    (a forest built otherwise)."""
    stats = forest.node_stats
    if stats is None:
        return np.zeros(len(nodes))
    return np.asarray(stats["weighted_n_node_samples"], dtype=float)[forest.node_offset[t]
                                                                     + np.asarray(nodes)]


def _leaf_values(pruned, members, nodes, K):
    """(len(nodes), K): class k's pruned value of each node (0 for a class without tree)."""
    f = pruned.forest
    out = np.zeros((len(nodes), K))
    for k, t, rep in members:
        out[:, k] = f.value[f.node_offset[t] + rep[nodes], k]
    return out


class _Borders:
    """Each feature's borders, and the ``split_index`` of a (feature, border)."""

    def __init__(self, n_features):
        self.used = [set() for _ in range(n_features)]
        self.index = None

    def add(self, feature, threshold):
        self.used[feature].add(threshold)

    def freeze(self):
        self.lists = [sorted(b) for b in self.used]
        offsets = np.cumsum([0] + [len(b) for b in self.lists])
        self.index = {(f, b): int(offsets[f]) + i
                      for f, borders in enumerate(self.lists) for i, b in enumerate(borders)}

    def split(self, feature, threshold):
        return {"border": threshold, "float_feature_index": int(feature),
                "split_index": self.index[(feature, threshold)], "split_type": "FloatFeature"}


def _border(threshold, t):
    """The float32 border of a threshold: CatBoost's ``float32(x) > border`` is the IR's
    ``not float32(x) <= threshold`` when the border is the largest float32 at most the
    threshold (the threshold itself for a model read from CatBoost)."""
    if not np.isfinite(threshold):
        raise ValueError(f"to_catboost: tree {t} has a split at {threshold!r}; a CatBoost "
                         "border is a finite float32")
    with np.errstate(over="ignore"):
        b = np.float32(threshold)
    if float(b) > threshold:
        b = np.nextafter(b, np.float32(-np.inf))
    if not np.isfinite(b):
        raise ValueError(f"to_catboost: tree {t} has a split at {threshold!r}, beyond "
                         "float32's range")
    return float(b)


def _symmetric(pruned, groups, borders, K):
    """(splits as (feature, border) per level, leaf values, leaf weights) of each
    symmetric tree."""
    out = []
    for group in groups:
        t0, arrays, members, kept = _members(pruned, group)
        levels = oblivious_levels(pruned.forest, t0)
        depth = pruned.forest.depth[pruned.forest.tree_slice(t0)]
        d = int(depth[kept].max()) + 1 if kept.any() else 0  # the levels some class needs
        # the node at depth d of CatBoost's leaf i: splits[j] decides bit j of i
        node = np.zeros(1 << d, dtype=np.int64)
        leaf = np.arange(1 << d)
        for j in range(d):
            node = np.where((leaf >> j) & 1, arrays["right"][node], arrays["left"][node])
        splits = [(f, _border(thr, t0)) for f, thr, _ in levels[:d]]
        for f, b in splits:
            borders.add(f, b)
        out.append((splits, _leaf_values(pruned, members, node, K),
                    _leaf_weights(pruned.forest, t0, node)))
    return out


def _non_symmetric(pruned, groups, borders, K):
    """``(arrays, splits, leaves)`` of each non-symmetric tree, nested by
    :func:`_nested` once the borders are numbered: the splits some class keeps
    (node -> (feature, border)), and each leaf's (class values, weight)."""
    out = []
    for group in groups:
        t0, arrays, members, kept = _members(pruned, group)
        inner = np.flatnonzero(kept)
        split_of = {}
        for h in inner:
            b = _border(arrays["threshold"][h], t0)
            borders.add(int(arrays["feature"][h]), b)
            split_of[int(h)] = (int(arrays["feature"][h]), b)
        leaves = np.flatnonzero(~kept & _reached(arrays, kept))
        values = dict(zip(leaves.tolist(), zip(_leaf_values(pruned, members, leaves, K),
                                               _leaf_weights(pruned.forest, t0, leaves))))
        out.append((arrays, split_of, values))
    return out


def _reached(arrays, kept):
    """The nodes of the pruned tree: the root and the children of the kept splits."""
    reached = np.zeros(kept.size, dtype=bool)
    reached[0] = True  # the kept splits are closed under parents: their children
    reached[arrays["left"][kept]] = reached[arrays["right"][kept]] = True
    return reached


def _nested(arrays, split_of, values, borders, K):
    """One non-symmetric tree as CatBoost's nested JSON objects (built without recursion)."""
    root = {}
    stack = [(0, root)]
    while stack:
        h, obj = stack.pop()
        if h in split_of:
            obj["split"] = borders.split(*split_of[h])
            obj["left"], obj["right"] = {}, {}
            stack += [(int(arrays["left"][h]), obj["left"]),
                      (int(arrays["right"][h]), obj["right"])]
        else:
            v, w = values[h]
            obj["value"] = float(v[0]) if K == 1 else [float(x) for x in v]
            obj["weight"] = float(w)
    return root


def _class_params(forest, n_outputs):
    """CatBoost's ``class_params`` of the forest's classes, typed as CatBoost types them."""
    names = forest.classes_.tolist()  # numpy scalars become Python values
    if all(isinstance(c, bool) for c in names):
        kind = "Boolean"
    elif all(isinstance(c, int) and not isinstance(c, bool) for c in names):
        kind = "Integer"
    elif all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in names):
        kind, names = "Float", [float(c) for c in names]
    else:
        kind, names = "String", [str(c) for c in names]
    return {"class_label_type": kind, "class_names": names,
            "class_to_label": list(range(n_outputs)), "classes_count": 0}


def catboost_model_json(pruned):
    """CatBoost's JSON model document (a dict) of a pruned CatBoost model.

    Needs no CatBoost: ``json.dump`` writes a file that
    ``CatBoost().load_model(path, format="json")`` (or ``CatBoostClassifier``,
    ``CatBoostRegressor``) reads, and :func:`pruned_to_catboost` loads it.  See
    the module docstring for how pruned trees are written.

    Parameters
    ----------
    pruned : PrunedForest
        Of a model read from CatBoost (:func:`prune_opt.importers.from_catboost`,
        or one loaded with :func:`prune_opt.load`).

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        For a forest that was not read from CatBoost (naming its own exporter).

    Examples
    --------
    >>> import numpy as np
    >>> import prune_opt as po
    >>> from prune_opt.importers import from_catboost
    >>> doc = {"model_info": {"params": {"loss_function": {"type": "RMSE"}}},
    ...        "features_info": {"float_features": [
    ...            {"feature_index": k, "flat_feature_index": k, "feature_id": "",
    ...             "borders": [0.5], "nan_value_treatment": "AsFalse"} for k in (0, 1)]},
    ...        "oblivious_trees": [{"leaf_values": [1.0, 2.0, 3.0, 4.0], "leaf_weights": [1] * 4,
    ...                             "splits": [{"split_index": 0}, {"split_index": 1}]}]}
    >>> f = from_catboost(doc)
    >>> pruned = po.PrunedForest(f, f.depth == 0)    # the second level cut
    >>> tree = catboost_model_json(pruned)["oblivious_trees"][0]
    >>> len(tree["splits"]), tree["leaf_values"]     # leaf i: bit 0 is x0 > 0.5
    (1, [2.0, 3.0])
    """
    f = pruned.forest
    _check_exportable(f)
    info = catboost_source_info(f)
    K = f.value_width
    groups = _groups(f)
    borders = _Borders(f.n_features)
    if info["symmetric"]:
        built = _symmetric(pruned, groups, borders, K)
    else:
        built = _non_symmetric(pruned, groups, borders, K)
    borders.freeze()
    if info["symmetric"]:
        trees = [{"leaf_values": [float(v) for v in values.ravel()],
                  "leaf_weights": [float(w) for w in weights],
                  "splits": [borders.split(feat, b) for feat, b in splits]}
                 for splits, values, weights in built]
    else:
        trees = [_nested(*tree, borders, K) for tree in built]
    names = f.feature_names or [""] * f.n_features
    features = [{"borders": borders.lists[k], "feature_id": names[k], "feature_index": k,
                 "flat_feature_index": k, "has_nans": treatment != "AsIs",
                 "nan_value_treatment": treatment}
                for k, treatment in enumerate(info["nan_value_treatment"])]
    loss = info["loss"]
    model_info = {"params": {"loss_function": {"params": {}, "type": loss},
                             "flat_params": {"loss_function": loss}}}
    if f.task == "classification":
        model_info["class_params"] = _class_params(f, max(K, 2))
    return {"features_info": {"float_features": features},
            "model_info": model_info,
            "oblivious_trees" if info["symmetric"] else "trees": trees,
            "scale_and_bias": [1.0, [float(v) for v in f.ensemble.init_score]]}


def catboost_model_text(pruned):
    """The text of :func:`catboost_model_json`, every number written so that CatBoost's
    JSON reader reads back the double the pruned model holds (see
    :mod:`._catboost_numbers`); what ``prune-opt prune --model-out`` writes."""
    return catboost_json_text(catboost_model_json(pruned))[0]


def pruned_to_catboost(pruned):
    """A CatBoost model loaded from :func:`catboost_model_json` of ``pruned``:
    ``CatBoostClassifier`` for a classifier, ``CatBoostRegressor`` for a regressor.

    Its raw scores (``predict(X, prediction_type="RawFormulaVal")``) equal
    ``pruned.decision_function(X)``, its ``predict_proba`` and ``predict`` the
    pruned model's, NaN included; it asks for no feature the pruned model does not
    need (a symmetric tree keeps its levels, but a feature the pruned model does not
    test for a row cannot change that row's prediction).

    Raises
    ------
    ImportError
        When CatBoost is not installed (``pip install prune-opt[catboost]``).
    ValueError
        For a forest that was not read from CatBoost.
    """
    text = catboost_model_text(pruned)
    try:
        import catboost
    except ImportError as exc:
        raise ImportError(f"to_catboost needs CatBoost, which is not installed: "
                          f"{INSTALL_HINT}") from exc
    cls = (catboost.CatBoostClassifier if pruned.forest.task == "classification"
           else catboost.CatBoostRegressor)
    model = cls()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.json")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        model.load_model(path, format="json")
    return model
