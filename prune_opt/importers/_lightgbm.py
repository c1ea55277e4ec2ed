"""Read LightGBM models into the Forest IR, routing exactly as LightGBM does.

Every input -- an ``LGBMClassifier``/``LGBMRegressor``, a ``Booster``, the
model text or the path of a saved model -- goes through one parser of the
model text (:mod:`._lightgbm_text`; an in-memory model is first written with
``model_to_string()``), so an untrusted file is parsed, never executed.

**Routing.**  LightGBM's predictor reads every value with ``|x| <= 1e-35``
(its ``kZeroThreshold``, :data:`ZERO_BAND`) as 0.0 and then, at a numerical
split (``Tree::NumericalDecision``), compares float64 ``x <= threshold``.  The
split's ``decision_type`` holds bit 0 categorical, bit 1 ``default_left`` and
bits 2-3 the missing type:

* ``None`` -- NaN is read as 0.0;
* ``NaN`` -- NaN goes the ``default_left`` way;
* ``Zero`` (``zero_as_missing=True``) -- 0.0 (the whole band) and NaN go the
  ``default_left`` way.

The IR compares float64 ``x <= threshold`` and sends NaN by
``missing_go_to_left``.  Outside the band both agree; on it LightGBM sends
every value one way, which one threshold expresses exactly once it is moved
out of the band (to :data:`ZERO_BAND` or just below ``-ZERO_BAND``).  So every
``None`` and ``NaN`` split is read exactly, and a ``Zero`` split whenever its
default direction agrees with a threshold (else it is refused, naming
``zero_as_missing``).

**Values.**  A leaf's value is LightGBM's ``leaf_value`` (learning rate and
``boost_from_average`` already folded in, so the initial score is 0), an
internal node's its ``internal_value`` (what it predicts once pruned).  A
binary model's ``sigmoid`` parameter is folded into the values, so
``predict_proba`` matches LightGBM's and ``decision_function`` is
``sigmoid`` times LightGBM's raw score.  Multiclass models store one tree per
class per iteration, class by class.

Models that predict otherwise are refused with the reason: random forests
(``average_output``; see :func:`forest_from_lightgbm`), linear trees,
categorical splits, and objectives other than ``regression`` (L2),
``binary`` and ``multiclass``.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from .._costs import as_feature_costs
from .._ensemble import Ensemble
from .._forest import Forest
from ._lightgbm_text import MAX_MODEL_BYTES, parse_model_text

__all__ = ["from_lightgbm", "forest_from_lightgbm", "lightgbm_trees", "lightgbm_feature_usage",
           "lightgbm_acquisition_cost", "lightgbm_leaves", "is_lightgbm_model",
           "import_lightgbm", "read_lightgbm", "LIGHTGBM_HINT", "ZERO_BAND", "SUPPORTED"]

LIGHTGBM_HINT = "pip install prune-opt[lightgbm]"
SUPPORTED = ("lightgbm.LGBMClassifier, LGBMRegressor and Booster (gbdt, goss, dart; "
             "objectives regression, binary, multiclass)")
#: LightGBM's kZeroThreshold (1e-35 as a float32): its predictor reads |x| <= this as 0.0
ZERO_BAND = float(np.float32(1e-35))
#: the largest float64 below the band
BELOW_ZERO_BAND = float(np.nextafter(-ZERO_BAND, -np.inf))
#: LightGBM's missing types, by their code in decision_type bits 2-3
MISSING_NONE, MISSING_ZERO, MISSING_NAN = 0, 1, 2
#: objectives read, and the link their raw scores take
LINKS = {"regression": "identity", "binary": "logistic", "multiclass": "softmax"}
_ADVICE = {
    "multiclassova": "refit with objective='multiclass' (softmax)",
    "cross_entropy": "for 0/1 labels refit with objective='binary'",
    "cross_entropy_lambda": "for 0/1 labels refit with objective='binary'",
    "lambdarank": "ranking models are not supported",
    "rank_xendcg": "ranking models are not supported",
}


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


def _lightgbm_classes(model):
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
    return bool(_lightgbm_classes(model) & {"Booster", "LGBMModel"})


# ---------------------------------------------------------------- reading
def _fitted_booster(model):
    from sklearn.exceptions import NotFittedError

    try:
        return model.booster_
    except (AttributeError, ValueError) as exc:
        raise NotFittedError(f"model: this {type(model).__name__} is not fitted yet; call "
                             "fit(X, y) first") from exc


def _model_text(model, num_iteration, max_bytes):
    """(text, source name, estimator or None) of any accepted input."""
    if is_lightgbm_model(model):
        classes = _lightgbm_classes(model)
        estimator = model if "LGBMModel" in classes else None
        booster = model if estimator is None else _fitted_booster(model)
        # None: the trees predict() uses (the best iteration when early stopping set one)
        return (booster.model_to_string(num_iteration=num_iteration),
                "Booster" if estimator is None else type(model).__name__, estimator)
    if isinstance(model, (bytes, bytearray)):
        return model, "LightGBM model text", None
    if isinstance(model, str) and "\n" in model:  # a path has no line break
        return model, "LightGBM model text", None
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"model: {str(path)[:200]!r} is neither a LightGBM model "
                                    "text (lines starting with 'tree') nor a file")
        size = os.path.getsize(path)
        if max_bytes is not None and size > max_bytes:
            raise ValueError(f"LightGBM model text: the file has {size} bytes, more than the "
                             f"limit max_bytes={max_bytes}; pass a larger max_bytes if this "
                             "model is trusted and really that large")
        with open(path, "rb") as fh:
            return fh.read(), "LightGBM model text", None
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


def _feature_names(parsed):
    """The model's feature names, or None for LightGBM's automatic ``Column_<k>``."""
    auto = [f"Column_{k}" for k in range(parsed.n_features)]
    return None if parsed.feature_names == auto else list(parsed.feature_names)


def _refuse_unroutable(parsed):
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


def _preorder(raw, t):
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
    _refuse_unroutable(parsed)
    return [_preorder(raw, t) for t, raw in enumerate(parsed.trees)]


def _route(tree, X):
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
    X = _check_matrix(X, None)
    return np.column_stack([tree["leaf_index"][_route(tree, X)[2]] for tree in trees])


def _ir_splits(tree, t):
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


# ---------------------------------------------------------------- the boosted importer
def _link(parsed, estimator):
    """The IR link of the model's objective, its classes and its sigmoid, refusing
    objectives whose predictions the IR cannot reproduce."""
    if parsed.average_output or parsed.parameters.get("boosting") == "rf":
        raise ValueError("LightGBM model: this is a random forest (boosting='rf', "
                         "average_output): its trees' outputs are averaged, not boosted. "
                         "Import it with prune_opt.importers.forest_from_lightgbm(model, "
                         "X_train, y_train), which keeps the training rows' class "
                         "frequencies at every node")
    if parsed.objective is None:
        raise ValueError("LightGBM model: the model has no objective (trained with a custom "
                         "objective function), so its raw scores have no known link; "
                         "prune-opt reads objectives 'regression', 'binary' and "
                         "'multiclass'")
    name, *options = parsed.objective.split(" ")
    values = dict(opt.split(":", 1) for opt in options if ":" in opt)
    if name not in LINKS:
        advice = _ADVICE.get(name, "refit with objective='regression' (squared error)")
        raise ValueError(f"LightGBM model: objective {name!r} is not supported; prune-opt "
                         "reads LightGBM models trained with objective 'regression' (squared "
                         "error), 'binary' or 'multiclass' (softmax), the losses its boosted "
                         f"pruning expands: {advice}")
    if name == "regression" and "sqrt" in options:
        raise ValueError("LightGBM model: objective 'regression' with reg_sqrt=True predicts "
                         "the square of its raw score; refit with reg_sqrt=False")
    link, K = LINKS[name], parsed.num_tree_per_iteration
    kinds = _lightgbm_classes(estimator) if estimator is not None else set()
    if ("LGBMClassifier" in kinds and link == "identity") or (
            "LGBMRegressor" in kinds and link != "identity"):
        raise ValueError(f"LightGBM model: a {type(estimator).__name__} trained with objective "
                         f"{name!r}; use LGBMRegressor for 'regression' and LGBMClassifier for "
                         "'binary' or 'multiclass'")
    if link == "softmax":
        k = values.get("num_class", "")
        if not k.isdigit() or int(k) != parsed.num_class or K != parsed.num_class or K < 2:
            raise ValueError(f"LightGBM model text: objective {parsed.objective!r} disagrees "
                             f"with num_class={parsed.num_class}, num_tree_per_iteration={K}")
    elif parsed.num_class != 1 or K != 1:
        raise ValueError(f"LightGBM model text: objective {name!r} needs num_class=1 and "
                         f"num_tree_per_iteration=1, got {parsed.num_class} and {K}")
    sigmoid = 1.0
    if link == "logistic":
        try:
            sigmoid = float(values.get("sigmoid", ""))
        except ValueError:
            sigmoid = np.nan
        if not (np.isfinite(sigmoid) and sigmoid > 0):
            raise ValueError(f"LightGBM model text: objective {parsed.objective!r} needs a "
                             "positive sigmoid:<value>")
    if link == "identity":
        classes = None
    elif estimator is not None and getattr(estimator, "classes_", None) is not None:
        classes = np.asarray(estimator.classes_)
    else:
        classes = np.arange(max(2, K))
    return link, classes, sigmoid


def from_lightgbm(model, *, num_iteration=None, max_bytes=MAX_MODEL_BYTES):
    """A LightGBM model as an additive :class:`~prune_opt.Forest` that routes and
    predicts exactly as LightGBM.

    Parameters
    ----------
    model : LGBMClassifier, LGBMRegressor, Booster, str, bytes or path
        A fitted model (gbdt, goss or dart; also trained with ``cegb_*``
        penalties), its model text (``Booster.model_to_string()``) or the path
        of a file written by ``save_model``.  Text and files are parsed, never
        executed.
    num_iteration : int, optional
        None (default): the trees ``model.predict(X)`` uses, i.e. up to the
        best iteration when early stopping recorded one (a text or file holds
        no best iteration: all its trees).  ``k > 0``: the first ``k``
        iterations; ``<= 0``: all.
    max_bytes : int or None, default 512 MiB
        Refuse a longer model text (None: no limit).

    Returns
    -------
    Forest
        Additive, ``split_dtype="float64"``; link ``"identity"`` (objective
        ``regression``), ``"logistic"`` (``binary``; the ``sigmoid`` parameter
        folded into the values) or ``"softmax"`` (``multiclass``); classes an
        estimator's ``classes_``, else ``0 .. K-1``; ``feature_names`` None for
        LightGBM's automatic ``Column_<k>`` names.

    Raises
    ------
    ValueError
        For a model the IR cannot reproduce exactly (random forests,
        categorical splits, linear trees, a ``zero_as_missing`` split no
        threshold expresses, other objectives), each naming what is supported,
        and for a malformed, truncated or oversized model text.

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> from sklearn.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = lgb.LGBMClassifier(n_estimators=5, num_leaves=4, verbose=-1).fit(X, y)
    >>> forest = from_lightgbm(model)
    >>> forest.ensemble.link, forest.split_dtype
    ('logistic', 'float64')
    >>> bool(np.allclose(forest.predict_proba(X), model.predict_proba(X), rtol=0, atol=1e-12))
    True
    >>> same = from_lightgbm(model.booster_.model_to_string())   # the text reads the same
    >>> bool((same.decision_function(X) == forest.decision_function(X)).all())
    True
    """
    parsed, source, estimator = read_lightgbm(model, num_iteration=num_iteration,
                                              max_bytes=max_bytes)
    link, classes, sigmoid = _link(parsed, estimator)
    _refuse_unroutable(parsed)
    K = parsed.num_tree_per_iteration
    arrays = []
    for t, raw in enumerate(parsed.trees):  # one tree at a time
        tree = _preorder(raw, t)
        threshold, missing_left = _ir_splits(tree, t)
        value = np.zeros((tree["value"].size, K if link == "softmax" else 1))
        value[:, t % K if link == "softmax" else 0] = tree["value"] * sigmoid
        arrays.append(dict(left=tree["left"], right=tree["right"], feature=tree["feature"],
                           threshold=threshold, value=value, missing_go_to_left=missing_left))
    n_trees = len(arrays)
    ensemble = Ensemble("additive", link, tree_class=(
        np.arange(n_trees) % K if link == "softmax" else None))
    return Forest(arrays, classes=classes, n_features=parsed.n_features,
                  feature_names=_feature_names(parsed), ensemble=ensemble,
                  task="regression" if link == "identity" else "classification",
                  split_dtype="float64", source=source)


# ---------------------------------------------------------------- cost accounting
def _check_matrix(X, n_features, name="X"):
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


def lightgbm_feature_usage(model, X):
    """Which features each example reaches on its paths through all trees.

    Routed by LightGBM's own rule (any missing type, ``zero_as_missing``
    included), boosted or random-forest models alike.

    Parameters
    ----------
    model : LGBMClassifier, LGBMRegressor, Booster, model text or path
    X : array-like of shape (n_examples, n_features)

    Returns
    -------
    scipy.sparse.csr_matrix of bool, shape (n_examples, n_features)

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> X = np.c_[np.arange(40.0), np.zeros(40)]; y = (X[:, 0] > 19).astype(int)
    >>> m = lgb.LGBMClassifier(n_estimators=2, num_leaves=2, min_child_samples=5,
    ...                        verbose=-1).fit(X, y)
    >>> lightgbm_feature_usage(m, X[:2]).toarray()
    array([[ True, False],
           [ True, False]])
    """
    return _usage(read_lightgbm(model)[0], X)


def _usage(parsed, X):
    _refuse_unroutable(parsed)
    X = _check_matrix(X, parsed.n_features)
    rows_all, features_all = [], []
    for t, raw in enumerate(parsed.trees):  # loop over trees only
        tree = _preorder(raw, t)
        rows, nodes, _ = _route(tree, X)
        inner = tree["feature"][nodes] >= 0
        rows_all.append(rows[inner])
        features_all.append(tree["feature"][nodes[inner]])
    rows, features = np.concatenate(rows_all), np.concatenate(features_all)
    used = sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, features)),
                         shape=(X.shape[0], parsed.n_features))
    used.sum_duplicates()
    return used.astype(bool)


def lightgbm_acquisition_cost(model, X, costs=None):
    """Per-example acquisition cost of a LightGBM model's predictions.

    Every unit of :class:`prune_opt.FeatureCosts` is paid once per example,
    as for a pruned forest (:meth:`prune_opt.PrunedForest.acquisition_cost`).

    Parameters
    ----------
    model : LGBMClassifier, LGBMRegressor, Booster, model text or path
    X : array-like of shape (n_examples, n_features)
    costs : FeatureCosts, array-like or mapping, optional
        Uniform unit costs when omitted.

    Returns
    -------
    ndarray of shape (n_examples,)

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> X = np.c_[np.arange(40.0), np.zeros(40)]; y = (X[:, 0] > 19).astype(int)
    >>> m = lgb.LGBMClassifier(n_estimators=2, num_leaves=2, min_child_samples=5,
    ...                        verbose=-1).fit(X, y)
    >>> lightgbm_acquisition_cost(m, X[:2], costs=[3.0, 7.0])
    array([3., 3.])
    """
    parsed = read_lightgbm(model)[0]
    fc = as_feature_costs(costs, parsed.n_features, _feature_names(parsed))
    return fc.cost_of_usage(_usage(parsed, X))


# ---------------------------------------------------------------- random forests
def _classes_and_codes(model, y, classes):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y_train must be 1-D, got shape {y.shape}")
    if classes is None:
        classes = getattr(model, "classes_", None)
    classes = np.unique(y) if classes is None else np.asarray(classes)
    pos = np.clip(np.searchsorted(classes, y), 0, classes.size - 1)
    if not np.all(classes[pos] == y):
        raise ValueError(f"y_train has labels outside the model's classes {classes.tolist()}")
    return classes, pos


def _class_frequencies(tree, X, codes, C):
    """Per node, the class frequencies of the training rows reaching it; a node no row
    reaches copies its parent's (uniform at an unreached root)."""
    n = tree["left"].size
    rows, nodes, _ = _route(tree, X)
    value = np.bincount(nodes * C + codes[rows], minlength=n * C).reshape(n, C).astype(float)
    parent = np.full(n, -1, dtype=np.int64)
    inner = tree["left"] >= 0
    parent[tree["left"][inner]] = np.flatnonzero(inner)
    parent[tree["right"][inner]] = np.flatnonzero(inner)
    empty = value.sum(axis=1) == 0
    if empty[0]:
        value[0], empty[0] = 1.0, False
    while empty.any():  # one pass per level: copy the parent's distribution
        ready = empty & ~empty[np.maximum(parent, 0)]
        value[ready] = value[parent[ready]] / value[parent[ready]].sum(axis=1, keepdims=True)
        empty &= ~ready
    return value


def forest_from_lightgbm(model, X_train, y_train, *, classes=None, feature_names=None,
                         check=True):
    """A LightGBM random forest as an averaged :class:`prune_opt.Forest`.

    Each LightGBM tree becomes one tree of the Forest with the same splits,
    routed exactly as LightGBM routes (float64, its missing types; see
    :mod:`prune_opt.importers`).  LightGBM keeps no class distribution at
    internal nodes (its leaves hold raw scores), so the class distribution of
    every node is the class frequency of the training rows reaching it; a
    node reached by no training row copies its parent's.  LightGBM does not
    expose which rows each bagged tree saw, so all training rows are used
    (``Forest.in_bag`` is None).

    Parameters
    ----------
    model : LGBMClassifier, Booster, model text or path
        Typically fitted with ``boosting_type="rf"`` (bagging); boosted models
        convert too, but their trees are not meant to be averaged (read those
        with :func:`from_lightgbm`).
    X_train, y_train : array-like
        The rows that fill the node class distributions (the training data).
    classes : array-like, optional
        Class labels (default: the estimator's ``classes_``, else ``unique(y_train)``).
    feature_names : sequence of str, optional
        Default: the model's, unless they are LightGBM's automatic ``Column_<k>``.
    check : bool, default True
        For an in-memory model, compare every training row's leaf in every tree
        with LightGBM's ``predict(pred_leaf=True)`` and raise on any difference.

    Returns
    -------
    Forest
        With attribute ``lightgbm_leaf_index`` (per tree, LightGBM's leaf
        number of each local node, -1 at internal nodes).

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = lgb.LGBMClassifier(boosting_type="rf", n_estimators=5, subsample=0.7,
    ...                         subsample_freq=1, num_leaves=8, verbose=-1).fit(X, y)
    >>> forest = forest_from_lightgbm(rf, X, y)
    >>> forest.n_trees, forest.split_dtype   # one tree per class per iteration
    (15, 'float64')
    """
    parsed, _, estimator = read_lightgbm(model)
    _refuse_unroutable(parsed)
    X = _check_matrix(X_train, parsed.n_features, "X_train")
    classes, codes = _classes_and_codes(estimator, y_train, classes)
    if codes.size != X.shape[0]:
        raise ValueError(f"y_train has {codes.size} labels for {X.shape[0]} rows of X_train")
    if feature_names is None:
        feature_names = _feature_names(parsed)
    out, leaf_maps = [], []
    for t, raw in enumerate(parsed.trees):  # loop over trees only
        tree = _preorder(raw, t)
        threshold, missing_left = _ir_splits(tree, t)
        out.append(dict(left=tree["left"], right=tree["right"], feature=tree["feature"],
                        threshold=threshold, missing_go_to_left=missing_left,
                        value=_class_frequencies(tree, X, codes, classes.size)))
        leaf_maps.append(tree["leaf_index"])
    forest = Forest(out, classes=classes, n_features=parsed.n_features,
                    feature_names=feature_names, split_dtype="float64")
    forest.lightgbm_leaf_index = leaf_maps
    if check and is_lightgbm_model(model):
        booster = model if estimator is None else _fitted_booster(model)
        theirs = np.asarray(booster.predict(X, pred_leaf=True)).reshape(X.shape[0], -1)
        ours = np.column_stack([leaf_maps[t][forest.apply_tree(X, t)]
                                for t in range(forest.n_trees)])
        bad = int((ours != theirs).sum())
        if bad:
            raise RuntimeError(f"{bad} of {ours.size} (row, tree) leaves differ from "
                               "LightGBM's predict(pred_leaf=True); the import does not route "
                               "as this LightGBM version does (please report it)")
    return forest
