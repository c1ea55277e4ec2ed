"""LightGBM's trees and its routing rule, read from the model text.

Every input -- an ``LGBMClassifier``/``LGBMRegressor``, a ``Booster``, the
model text or the path of a saved model -- goes through one parser of the
model text (:mod:`._lightgbm_text`; an in-memory model is first written with
``model_to_string()``), so an untrusted file is parsed, never executed.  This
module turns the parsed trees into preorder node arrays (the IR's node order)
and routes rows through them by LightGBM's rule:

LightGBM's predictor reads every value with ``|x| <= 1e-35`` (its
``kZeroThreshold``, :data:`ZERO_BAND`) as 0.0 and then, at a numerical split
(``Tree::NumericalDecision``), compares float64 ``x <= threshold``.  The
split's ``decision_type`` holds bit 0 categorical, bit 1 ``default_left`` and
bits 2-3 the missing type:

* ``None`` -- NaN is read as 0.0;
* ``NaN`` -- NaN goes the ``default_left`` way;
* ``Zero`` (``zero_as_missing=True``) -- 0.0 (the whole band) and NaN go the
  ``default_left`` way.

:func:`ir_splits` gives the IR's threshold and NaN direction of each split
(float64 ``x <= T``, NaN by ``missing_go_to_left``): outside the band both
rules agree; on it LightGBM sends every value one way, which one threshold
expresses exactly once it is moved out of the band.
"""

from __future__ import annotations

import os

import numpy as np

from ._guards import read_limited
from ._lightgbm_text import MAX_MODEL_BYTES, WHAT, parse_model_text

__all__ = ["read_lightgbm", "lightgbm_trees", "lightgbm_leaves", "preorder_tree",
           "route_tree", "ir_splits", "refuse_unroutable", "is_lightgbm_model",
           "import_lightgbm", "check_matrix", "lightgbm_classes", "fitted_booster",
           "model_feature_names", "ZERO_BAND", "BELOW_ZERO_BAND", "LIGHTGBM_HINT"]

LIGHTGBM_HINT = "pip install prune-opt[lightgbm]"
#: LightGBM's kZeroThreshold (1e-35 as a float32): its predictor reads |x| <= this as 0.0
ZERO_BAND = float(np.float32(1e-35))
#: the largest float64 below the band
BELOW_ZERO_BAND = float(np.nextafter(-ZERO_BAND, -np.inf))
#: LightGBM's missing types, by their code in decision_type bits 2-3
MISSING_NONE, MISSING_ZERO, MISSING_NAN = 0, 1, 2


def import_lightgbm():
    """Import lightgbm lazily, with an install hint when it is missing.

    Returns
    -------
    module

    Examples
    --------
    >>> lgb = import_lightgbm()
    >>> hasattr(lgb, "Booster")
    True
    """
    try:
        import lightgbm
    except ImportError:
        raise ImportError(f"this needs the optional dependency lightgbm; install it with "
                          f"`{LIGHTGBM_HINT}`") from None
    return lightgbm


def lightgbm_classes(model):
    """Names of the lightgbm classes ``model`` is an instance of (no import needed)."""
    return {c.__name__ for c in type(model).__mro__
            if c.__module__.split(".")[0] == "lightgbm"}


def is_lightgbm_model(model):
    """Whether ``model`` is a LightGBM ``Booster`` or scikit-learn estimator
    (``LGBMClassifier``, ``LGBMRegressor``, ...), recognised without importing lightgbm.

    Examples
    --------
    >>> is_lightgbm_model("tree\\nversion=v4"), is_lightgbm_model(object())
    (False, False)
    """
    return bool(lightgbm_classes(model) & {"Booster", "LGBMModel"})


# ---------------------------------------------------------------- reading
def fitted_booster(model):
    """The Booster of a fitted LightGBM estimator (NotFittedError, saying so, if not)."""
    from sklearn.exceptions import NotFittedError

    try:
        return model.booster_
    except (AttributeError, ValueError) as exc:
        raise NotFittedError(f"model: this {type(model).__name__} is not fitted yet; call "
                             "fit(X, y) first") from exc


def _model_text(model, num_iteration, max_bytes):
    """(text, source name, estimator or None) of any accepted input."""
    if is_lightgbm_model(model):
        classes = lightgbm_classes(model)
        estimator = model if "LGBMModel" in classes else None
        booster = model if estimator is None else fitted_booster(model)
        # None: the trees predict() uses (the best iteration when early stopping set one)
        return (booster.model_to_string(num_iteration=num_iteration),
                "lightgbm.Booster" if estimator is None else type(model).__name__, estimator)
    if isinstance(model, (bytes, bytearray)):
        return model, "lightgbm.Booster", None
    if isinstance(model, str) and "\n" in model:  # a path has no line break
        return model, "lightgbm.Booster", None
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"model: {str(path)[:200]!r} is neither a LightGBM model "
                                    "text (lines starting with 'tree') nor a file")
        return read_limited(path, max_bytes, WHAT), "lightgbm.Booster", None
    raise TypeError(f"model: expected a fitted lightgbm LGBMClassifier, LGBMRegressor or "
                    f"Booster, a model text or the path of a saved model, got "
                    f"{type(model).__name__}")


def read_lightgbm(model, *, num_iteration=None, max_bytes=MAX_MODEL_BYTES):
    """Parse any accepted LightGBM input: ``(ModelText, source name, estimator or None)``.

    ``num_iteration``: None reads the trees the model predicts with (for an
    in-memory model its ``best_iteration`` when early stopping recorded one;
    a text holds no best iteration, so all its trees); ``k > 0`` the first
    ``k`` iterations; ``<= 0`` all.
    """
    if num_iteration is not None and (isinstance(num_iteration, bool) or not isinstance(
            num_iteration, (int, np.integer))):
        raise TypeError(f"num_iteration must be None or an int, got {num_iteration!r}")
    text, source, estimator = _model_text(model, num_iteration, max_bytes)
    parsed = parse_model_text(text, max_bytes=max_bytes)
    if num_iteration is not None and num_iteration > 0:
        parsed.trees = parsed.trees[:int(num_iteration) * parsed.num_tree_per_iteration]
    return parsed, source, estimator


def model_feature_names(parsed):
    """The model's feature names, or None for LightGBM's automatic ``Column_<k>``."""
    auto = [f"Column_{k}" for k in range(parsed.n_features)]
    return None if parsed.feature_names == auto else list(parsed.feature_names)


def refuse_unroutable(parsed):
    """Refuse trees the IR cannot route: categorical splits and linear leaves."""
    for t, raw in enumerate(parsed.trees):
        if raw["num_cat"] or (raw["num_leaves"] > 1 and not raw["is_linear"]
                              and (raw["decision_type"] & 1).any()):
            raise ValueError(f"LightGBM model: tree {t} has categorical splits "
                             "(categorical_feature=, or pandas category columns); they test "
                             "sets of categories, which prune-opt does not route. Encode "
                             "those columns as numbers (one-hot or ordinal) and refit without "
                             "categorical_feature")
        if raw["is_linear"]:
            raise ValueError("LightGBM model: linear trees (linear_tree=True) predict a "
                             "linear function of the features at each leaf, which a "
                             "pruned tree's constant leaves cannot hold; refit with "
                             "linear_tree=False")


# ---------------------------------------------------------------- trees
def _levels(left, right, m, t):
    """The nodes of one tree level by level from the root (internal ids < m), checking
    that the child arrays form one tree."""
    n = left.size
    n_parents = np.bincount(np.concatenate([left[:m], right[:m]]), minlength=n)
    bad = np.flatnonzero(n_parents[1:] != 1)
    if bad.size:
        h = int(bad[0]) + 1
        kind = f"internal node {h}" if h < m else f"leaf {h - m}"
        raise ValueError(f"LightGBM model text: tree {t}: {kind} is the child of "
                         f"{int(n_parents[h])} nodes; left_child/right_child must form one "
                         "tree (each node the child of exactly one)")
    levels, frontier = [], np.zeros(1, dtype=np.int64)
    while frontier.size:  # one step per level; unique parents: each node at most once
        levels.append(frontier)
        inner = frontier[frontier < m]
        frontier = np.concatenate([left[inner], right[inner]])
    if sum(level.size for level in levels) != n:
        raise ValueError(f"LightGBM model text: tree {t}: left_child/right_child contain a "
                         "cycle (some nodes are not reachable from the root)")
    return levels


def preorder_tree(raw, t):
    """One parsed tree in preorder (parents first, left subtrees before right), the
    IR's node order: child ids, split feature, threshold, default_left, missing type,
    node value and LightGBM's leaf index (-1 at internal nodes)."""
    L = raw["num_leaves"]
    if L == 1:
        return dict(left=np.array([-1]), right=np.array([-1]), feature=np.array([-1]),
                    threshold=np.zeros(1), default_left=np.zeros(1, dtype=bool),
                    missing_type=np.zeros(1, dtype=np.int64),
                    value=raw["leaf_value"].copy(), leaf_index=np.zeros(1, dtype=np.int64))
    m, n = L - 1, 2 * L - 1  # internal nodes 0..m-1, then leaf j as node m + j
    left, right = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    for out, child in ((left, raw["left_child"]), (right, raw["right_child"])):
        out[:m] = np.where(child >= 0, child, m + ~child)
    levels = _levels(left, right, m, t)
    size = np.ones(n, dtype=np.int64)
    for level in reversed(levels):  # subtree sizes, bottom-up
        inner = level[level < m]
        size[inner] += size[left[inner]] + size[right[inner]]
    pre = np.zeros(n, dtype=np.int64)
    for level in levels:  # preorder positions, top-down
        inner = level[level < m]
        pre[left[inner]] = pre[inner] + 1
        pre[right[inner]] = pre[inner] + 1 + size[left[inner]]
    old = np.empty(n, dtype=np.int64)
    old[pre] = np.arange(n)
    inner = old < m
    at = np.where(inner, old, 0)  # internal-node arrays, read where inner
    dt = raw["decision_type"][at]
    return dict(
        left=np.where(inner, pre[left[old]], -1), right=np.where(inner, pre[right[old]], -1),
        feature=np.where(inner, raw["split_feature"][at], -1),
        threshold=np.where(inner, raw["threshold"][at], 0.0),
        default_left=inner & ((dt & 2) > 0),
        missing_type=np.where(inner, (dt >> 2) & 3, MISSING_NONE),
        value=np.where(inner, raw["internal_value"][at],
                       raw["leaf_value"][np.where(inner, 0, old - m)]),
        leaf_index=np.where(inner, -1, old - m))


def lightgbm_trees(model, *, num_iteration=None, max_bytes=MAX_MODEL_BYTES):
    """Every tree of a LightGBM model as preorder node arrays (the IR's node order).

    Parameters
    ----------
    model : LGBMClassifier, LGBMRegressor, Booster, model text or path
        Boosted or random-forest mode.
    num_iteration, max_bytes
        See :func:`read_lightgbm`.

    Returns
    -------
    list of dict
        Per tree: ``left``, ``right`` (local ids, -1 at leaves), ``feature``
        (-1 at leaves), ``threshold`` (float64, as LightGBM stores it),
        ``default_left`` (bool), ``missing_type`` (0 None, 1 Zero, 2 NaN),
        ``value`` (leaf values; internal values at internal nodes) and
        ``leaf_index`` (LightGBM's leaf number, -1 at internal nodes: what
        ``predict(X, pred_leaf=True)`` reports).

    Raises
    ------
    ValueError
        On categorical splits or linear trees, which the IR cannot route.

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> X = np.arange(40, dtype=float).reshape(-1, 1); y = (X[:, 0] > 19).astype(int)
    >>> m = lgb.LGBMClassifier(n_estimators=1, num_leaves=2, min_child_samples=5,
    ...                        verbose=-1).fit(X, y)
    >>> t = lightgbm_trees(m)[0]
    >>> t["left"].tolist(), t["feature"].tolist(), t["leaf_index"].tolist()
    ([1, -1, -1], [0, -1, -1], [-1, 0, 1])
    """
    parsed, _, _ = read_lightgbm(model, num_iteration=num_iteration, max_bytes=max_bytes)
    refuse_unroutable(parsed)
    return [preorder_tree(raw, t) for t, raw in enumerate(parsed.trees)]


def route_tree(tree, X):
    """LightGBM's routing of the rows of X through one tree (``Tree::NumericalDecision``
    after the predictor's zero band), vectorised over rows, one step per level:
    the (row, node) pairs visited and each row's final node."""
    n = X.shape[0]
    node = np.zeros(n, dtype=np.int64)
    rows, nodes = [np.arange(n)], [node.copy()]
    left, right, feature = tree["left"], tree["right"], tree["feature"]
    active = np.flatnonzero(left[node] >= 0)
    while active.size:
        h = node[active]
        x = X[active, feature[h]]
        nan = np.isnan(x)
        kind = tree["missing_type"][h]
        x = np.where(nan & (kind != MISSING_NAN), 0.0, x)
        x = np.where(np.abs(x) <= ZERO_BAND, 0.0, x)
        default = ((kind == MISSING_ZERO) & (x == 0.0)) | ((kind == MISSING_NAN) & nan)
        go_left = np.where(default, tree["default_left"][h], x <= tree["threshold"][h])
        node[active] = np.where(go_left, left[h], right[h])
        rows.append(active)
        nodes.append(node[active])
        active = active[left[node[active]] >= 0]
    return np.concatenate(rows), np.concatenate(nodes), node


def lightgbm_leaves(model, X, *, num_iteration=None):
    """LightGBM's leaf index of every row in every tree, as ``predict(X,
    pred_leaf=True)`` reports it, computed from the model text.

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> X = np.arange(40, dtype=float).reshape(-1, 1); y = X[:, 0] ** 2
    >>> m = lgb.LGBMRegressor(n_estimators=3, num_leaves=4, verbose=-1).fit(X, y)
    >>> bool((lightgbm_leaves(m, X) == m.predict(X, pred_leaf=True)).all())
    True
    """
    trees = lightgbm_trees(model, num_iteration=num_iteration)
    X = check_matrix(X, None)
    return np.column_stack([tree["leaf_index"][route_tree(tree, X)[2]] for tree in trees])


def ir_splits(tree, t):
    """The IR's threshold and NaN direction of every split of one preorder tree.

    A value of the band ``|x| <= ZERO_BAND`` goes where LightGBM sends 0.0: left
    iff ``0.0 <= threshold``, or ``default_left`` for a ``Zero`` split.  The IR's
    ``x <= T`` agrees for every non-NaN ``x`` with ``T = max(threshold, ZERO_BAND)``
    when the band goes left (needs ``threshold >= BELOW_ZERO_BAND``: nothing
    below the band may go right) and ``T = min(threshold, BELOW_ZERO_BAND)`` when
    it goes right (needs ``threshold <= ZERO_BAND``).  ``None`` splits always
    qualify; a ``Zero`` split whose default direction breaks the condition is
    refused.
    """
    inner = tree["left"] >= 0
    thr, kind, default_left = tree["threshold"], tree["missing_type"], tree["default_left"]
    band_left = np.where(kind == MISSING_ZERO, default_left, 0.0 <= thr)
    fits = np.where(band_left, thr >= BELOW_ZERO_BAND, thr <= ZERO_BAND)
    bad = np.flatnonzero(inner & ~fits)
    if bad.size:
        h = int(bad[0])
        side = "left" if band_left[h] else "right"
        raise ValueError(
            f"LightGBM model: tree {t} has a zero_as_missing split (missing type 'Zero') on "
            f"feature {int(tree['feature'][h])} at {float(thr[h])!r} that sends 0 and NaN "
            f"{side} but values just below and just above 0 the other way, which no threshold "
            "expresses; prune-opt reads zero_as_missing splits only when one threshold "
            "routes them. Refit with zero_as_missing=False (NaN as missing)")
    threshold = np.where(band_left, np.maximum(thr, ZERO_BAND), np.minimum(thr, BELOW_ZERO_BAND))
    missing_left = np.where(kind == MISSING_NONE, 0.0 <= thr, default_left)
    return np.where(inner, threshold, 0.0), inner & missing_left


def check_matrix(X, n_features, name="X"):
    """``X`` as a 2-D float64 array of ``n_features`` columns (NaN allowed)."""
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric; encode categorical columns first") from None
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {X.shape}; reshape a single "
                         "example with X.reshape(1, -1)")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, the model was fitted on "
                         f"{n_features}; pass the same columns")
    return X
