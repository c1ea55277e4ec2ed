"""A pruned boosted forest as an XGBoost model: its JSON document and a ``Booster``.

The export keeps the pruned trees node for node, so the booster asks for exactly
the features the pruned model asks for, and predicts what it predicts up to
XGBoost's float32 arithmetic:

* **splits** -- XGBoost sends ``x`` left iff ``float32(x) < split_condition``; the
  IR iff ``float32(x) <= threshold``.  For float32 ``x`` both tests agree when the
  condition is the smallest float32 above the threshold, for any float64
  threshold: so every float32 forest exports exactly (XGBoost's own, whose
  thresholds are the float32 below each condition, gets its conditions back;
  scikit-learn's ``GradientBoosting*`` too).  A float64 forest (LightGBM,
  ``HistGradientBoosting*``) is refused: XGBoost rounds every feature to float32
  first, so rows near a threshold would take the other branch.
* **missing values** -- each split's ``missing_go_to_left`` becomes ``default_left``.
* **node ids** -- level by level with each split's children a consecutive pair
  (:func:`xgboost_node_ids`): XGBoost's predictor takes the right child to be the
  left one + 1, whatever ``right_children`` says.
* **values** -- leaf values are stored in float32, as XGBoost sums them.  The
  initial score is added to the values of each output's first tree (XGBoost's
  ``base_score`` stays neutral: 0, or 0.5 for ``binary:logistic``), because
  XGBoost turns a logistic ``base_score`` into a margin with a float32 logit
  clipped at 1e-6, which loses the margin of a confident model.
* **objective** -- ``reg:squarederror``, ``binary:logistic`` or ``multi:softprob``
  for the identity, logistic and softmax links.

The node statistics XGBoost records for training (``sum_hessian``,
``loss_changes``) are not kept by prune-opt and are written as zeros: the
booster predicts, but its "cover" and "gain" importances are zero and
``pred_contribs`` (SHAP) returns NaN.
"""

from __future__ import annotations

import json

import numpy as np

__all__ = ["xgboost_model_json", "pruned_to_xgboost", "split_conditions",
           "xgboost_node_ids", "INSTALL_HINT"]

INSTALL_HINT = "pip install prune-opt[xgboost]"
#: the schema version written (the oldest XGBoost the importer reads)
WRITTEN_VERSION = [2, 1, 0]
_OBJECTIVES = {"identity": {"name": "reg:squarederror",
                            "reg_loss_param": {"scale_pos_weight": "1"}},
               "logistic": {"name": "binary:logistic",
                            "reg_loss_param": {"scale_pos_weight": "1"}}}
_ROOT_PARENT = 2147483647  # XGBoost's parent field of a root


def split_conditions(threshold):
    """The float32 ``c`` with ``x < c`` exactly when ``x <= threshold``, for every float32
    ``x``: the smallest float32 above ``threshold``.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.array([0.1, 0.1, 0.5, 0.5])
    >>> x = np.float32([0.1, 0.099999994, 0.5, 0.50000006])  # float32s either side
    >>> (x <= t).tolist(), (x < split_conditions(t)).tolist()
    ([False, True, True, False], [False, True, True, False])
    """
    with np.errstate(over="ignore"):
        t32 = np.asarray(threshold, dtype=float).astype(np.float32)
    above = t32.astype(float) > threshold
    return np.where(above, t32, np.nextafter(t32, np.float32(np.inf)))


def _check_exportable(forest):
    source = f" (read from {forest.source})" if forest.source else ""
    if not forest.is_additive:
        raise ValueError(f"to_xgboost: this pruned forest{source} averages its trees; an "
                         "XGBoost model sums boosted trees' raw scores, so only boosted "
                         "models export (XGBoost, scikit-learn's GradientBoosting*). Use "
                         "to_sklearn() for a forest")
    if forest.split_dtype != "float32":
        raise ValueError(f"to_xgboost: this forest{source} compares features in "
                         f"{forest.split_dtype}, but XGBoost rounds every feature to float32 "
                         "before it compares, so rows near a threshold would take the other "
                         "branch and the booster would not predict like the pruned model. "
                         "Only float32 forests (XGBoost, scikit-learn's GradientBoosting*) "
                         "export exactly")


def xgboost_node_ids(left, right):
    """XGBoost's id of each node of a tree (``left``, ``right``: children, -1 at leaves):
    level by level, each split's children a consecutive pair, as XGBoost allocates
    them; its predictor takes the right child to be the left one + 1.

    Examples
    --------
    >>> import numpy as np
    >>> xgboost_node_ids(np.array([1, 2, -1, -1, -1]), np.array([4, 3, -1, -1, -1]))
    array([0, 1, 3, 4, 2])
    """
    new = np.zeros(left.size, dtype=np.int64)
    frontier, next_id = np.zeros(1, dtype=np.int64), 1
    while frontier.size:  # one pass per level
        inner = frontier[left[frontier] >= 0]
        pair = next_id + 2 * np.arange(inner.size)
        new[left[inner]], new[right[inner]] = pair, pair + 1
        next_id += 2 * inner.size
        frontier = np.column_stack([left[inner], right[inner]]).ravel()
    return new


def _tree_json(arrays, column, shift, n_features, tree_id):
    """One pruned tree (``pruned_tree_arrays``) as an XGBoost JSON tree, its nodes in
    XGBoost's order (:func:`xgboost_node_ids`); ``shift`` is added to every node value
    (the initial score, on an output's first tree)."""
    new = xgboost_node_ids(arrays["left"], arrays["right"])
    order = np.argsort(new)
    split = arrays["left"][order] >= 0
    left = np.where(split, new[arrays["left"][order]], -1)
    right = np.where(split, new[arrays["right"][order]], -1)
    n = int(left.size)
    with np.errstate(over="ignore"):
        value = (arrays["value"][order, column] + shift).astype(np.float32)
    threshold = np.where(split, arrays["threshold"][order], 0.0)
    cond = np.where(split, split_conditions(threshold), value)
    if not np.isfinite(cond).all():
        raise ValueError(f"to_xgboost: tree {tree_id} has a value or threshold beyond "
                         "float32's range, which an XGBoost model cannot hold")
    parents = np.full(n, _ROOT_PARENT, dtype=np.int64)
    parents[left[split]] = np.flatnonzero(split)
    parents[right[split]] = np.flatnonzero(split)
    zeros = [0.0] * n
    return {
        "base_weights": value.tolist(), "categories": [], "categories_nodes": [],
        "categories_segments": [], "categories_sizes": [],
        "default_left": np.where(split, arrays["missing_go_to_left"][order], 0).astype(
            int).tolist(),
        "id": tree_id, "left_children": left.tolist(), "loss_changes": zeros,
        "parents": parents.tolist(), "right_children": right.tolist(),
        "split_conditions": cond.tolist(),
        "split_indices": np.where(split, arrays["feature"][order], 0).tolist(),
        "split_type": [0] * n, "sum_hessian": zeros,
        "tree_param": {"num_deleted": "0", "num_feature": str(n_features),
                       "num_nodes": str(n), "size_leaf_vector": "1"},
    }


def _root_only(value, n_features, tree_id):
    """A one-leaf tree adding ``value`` (an output with no tree keeps its initial score)."""
    arrays = dict(left=np.array([-1]), right=np.array([-1]), feature=np.array([-1]),
                  threshold=np.array([-2.0]), value=np.array([[0.0]]),
                  missing_go_to_left=np.array([0]))
    return _tree_json(arrays, 0, value, n_features, tree_id)


def xgboost_model_json(pruned):
    """XGBoost's JSON model document (a dict) of a pruned boosted forest.

    Needs no XGBoost; :func:`pruned_to_xgboost` loads it into a ``Booster``, and
    ``json.dump`` writes a file any XGBoost >= 2.1 loads
    (``xgboost.Booster(model_file=...)``).  See the module docstring for what is
    kept and what is refused.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> import prune_opt as po
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> gb = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0)
    >>> pruned = po.prune(gb.fit(X, y), X, y, lam=1e-3)
    >>> doc = xgboost_model_json(pruned)
    >>> doc["learner"]["objective"]["name"], len(doc["learner"]["gradient_booster"]["model"]["trees"])
    ('binary:logistic', 3)
    """
    f = pruned.forest
    _check_exportable(f)
    link = f.ensemble.link
    width = f.value_width
    tree_class = (f.ensemble.tree_class if link == "softmax"
                  else np.zeros(f.n_trees, dtype=np.int64))
    init = f.ensemble.init_score
    first = {int(k): int(np.flatnonzero(tree_class == k)[0]) for k in np.unique(tree_class)}
    trees = []
    for t in range(f.n_trees):
        k = int(tree_class[t])
        shift = float(init[k]) if first[k] == t else 0.0
        trees.append(_tree_json(pruned.pruned_tree_arrays(t), k, shift, f.n_features, t))
    extra = [k for k in range(width) if k not in first]  # outputs without a tree
    for k in extra:
        trees.append(_root_only(float(init[k]), f.n_features, len(trees)))
    info = [int(k) for k in tree_class] + extra
    step = f.round_size
    indptr = list(range(0, f.n_trees, step)) + [f.n_trees] + ([len(trees)] if extra else [])
    objective = _OBJECTIVES.get(link) or {
        "name": "multi:softprob", "softmax_multiclass_param": {"num_class": str(width)}}
    return {
        "version": WRITTEN_VERSION,
        "learner": {
            "attributes": {},
            "feature_names": list(f.feature_names or []),
            "feature_types": [],
            "gradient_booster": {"name": "gbtree", "model": {
                "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(len(trees))},
                "iteration_indptr": indptr, "tree_info": info, "trees": trees}},
            "learner_model_param": {
                "base_score": "5E-1" if link == "logistic" else "0E0",
                "boost_from_average": "0",
                "num_class": str(width if link == "softmax" else 0),
                "num_feature": str(f.n_features), "num_target": "1"},
            "objective": objective,
        },
    }


def pruned_to_xgboost(pruned):
    """An ``xgboost.Booster`` loaded from :func:`xgboost_model_json` of ``pruned``.

    Raises
    ------
    ImportError
        When XGBoost is not installed (``pip install prune-opt[xgboost]``).
    ValueError
        For an averaged forest or one that compares features in float64.
    """
    try:
        import xgboost
    except ImportError as exc:
        raise ImportError(f"to_xgboost needs XGBoost, which is not installed: {INSTALL_HINT} "
                          "(or pip install xgboost-cpu)") from exc
    doc = xgboost_model_json(pruned)
    booster = xgboost.Booster()
    booster.load_model(bytearray(json.dumps(doc).encode()))
    return booster
