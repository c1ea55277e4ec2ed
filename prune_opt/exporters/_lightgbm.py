"""Write a pruned boosted forest as a LightGBM model (model text, or a ``Booster``).

Reads a :class:`~prune_opt.PrunedForest`'s fields (``forest``,
``pruned_tree_arrays``) without importing its class.  Any additive forest
exports, whichever library it came from:

* the link gives the objective: ``regression`` (identity), ``binary
  sigmoid:1`` (logistic; a LightGBM model's ``sigmoid`` is already folded into
  the values) or ``multiclass`` (softmax, one tree per class per iteration:
  a round whose class has no tree gets a constant zero tree);
* a nonzero initial score becomes one last iteration of constant trees, so
  LightGBM adds it after the trees, in the IR's order;
* each split becomes a numerical split with missing type NaN and
  ``default_left`` = the node's ``missing_go_to_left``.

The thresholds are rewritten so that LightGBM's float64 ``x <= T`` routes as
the IR does.  A float64 forest's threshold is kept; a float32 forest's
(``float32(x) <= t``, scikit-learn's and XGBoost's rule) becomes the largest
float64 that float32 rounds to at most ``t`` (:func:`float64_threshold`).
LightGBM reads every ``|x| <= 1e-35`` as 0.0, so a threshold inside that band
(a float64 threshold of exactly 0.0, say) cannot send the band's values two
ways: it moves to the band's edge on the side where 0 goes, with a warning
that a row whose value is nonzero but within the band may route differently
(a LightGBM model's thresholds never lie in the band: its import moves them
out exactly).  Averaged forests (random forests) have no LightGBM equivalent
and are refused.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from ..importers._lightgbm_trees import BELOW_ZERO_BAND, ZERO_BAND, import_lightgbm

__all__ = ["lightgbm_model_text", "pruned_to_lightgbm", "float64_threshold"]

_OBJECTIVES = {"identity": "regression", "logistic": "binary sigmoid:1",
               "softmax": "multiclass num_class:{K}"}


def float64_threshold(threshold):
    """The float64 ``T`` with ``x <= T`` exactly when ``float32(x) <= threshold``, for
    every float64 ``x`` (float32 rounding to nearest, ties to even, overflow to inf).

    Parameters
    ----------
    threshold : array-like of float

    Returns
    -------
    ndarray of float64

    Examples
    --------
    >>> import numpy as np
    >>> T = float(float64_threshold([0.5])[0])
    >>> T > 0.5, float(np.float32(T)), float(np.float32(np.nextafter(T, 1)))
    (True, 0.5, 0.5000000596046448)
    """
    thr = np.asarray(threshold, dtype=np.float64)
    with np.errstate(over="ignore"):
        f = thr.astype(np.float32)  # nearest float32, then the largest one <= thr
    f = np.where(f.astype(np.float64) > thr, np.nextafter(f, np.float32(-np.inf)), f)
    up = np.nextafter(f, np.float32(np.inf)).astype(np.float64)
    big = 2.0 ** 128  # where float32 rounding overflows to infinity
    low = np.where(np.isneginf(f), -big, f.astype(np.float64))
    high = np.where(np.isposinf(up), big, up)
    middle = (low + high) / 2  # exact: a float32 midpoint needs 25 bits
    even = (f.view(np.uint32) & 1) == 0  # a tie rounds to the even neighbour
    out = np.where(even, middle, np.nextafter(middle, -np.inf))
    return np.where(np.isposinf(thr), np.inf, out)


def _numbers(values):
    return " ".join(repr(float(v)) for v in values)


def _integers(values):
    return " ".join(str(int(v)) for v in values)


def _thresholds(f, arrays, t):
    """LightGBM thresholds of one pruned tree's splits (checked against the band)."""
    inner = arrays["left"] >= 0
    thr = np.asarray(arrays["threshold"], dtype=np.float64)[inner]
    if np.isnan(thr).any():
        raise ValueError(f"to_lightgbm: tree {t} has a NaN split threshold")
    out = thr if f.split_dtype == "float64" else float64_threshold(thr)
    band = (out >= -ZERO_BAND) & (out < ZERO_BAND)
    if band.any():  # to the band's edge on the side where 0 goes: 0 still routes exactly
        k = int(np.flatnonzero(band)[0])
        warnings.warn(
            f"to_lightgbm: tree {t} splits feature "
            f"{int(np.asarray(arrays['feature'])[inner][k])} at {float(thr[k])!r}"
            f"{'' if band.sum() == 1 else f' (and {int(band.sum()) - 1} more)'}, inside the "
            f"band |x| <= {ZERO_BAND!r} that LightGBM reads as 0.0: a row whose value of "
            "that feature is nonzero but within the band may take another branch than in "
            "the pruned forest (every other value, 0 and NaN route exactly)",
            UserWarning, stacklevel=4)
        out = np.where(band, np.where(out >= 0, ZERO_BAND, BELOW_ZERO_BAND), out)
    return out


def _tree_block(index, arrays, thresholds, column):
    """One ``Tree=<index>`` block as LightGBM writes it (see ``Tree::ToString``)."""
    left, right = np.asarray(arrays["left"]), np.asarray(arrays["right"])
    value = np.asarray(arrays["value"], dtype=np.float64)[:, column]
    inner = left >= 0
    m, L = int(inner.sum()), int((~inner).sum())
    # LightGBM's child code of each node: its internal number, or ~(its leaf number)
    code = np.where(inner, np.cumsum(inner) - 1, ~(np.cumsum(~inner) - 1))
    missing = np.where(np.asarray(arrays["missing_go_to_left"], bool)[inner], 2, 0) | (2 << 2)
    lines = [f"Tree={index}", f"num_leaves={L}", "num_cat=0",
             "split_feature=" + _integers(np.asarray(arrays["feature"])[inner]),
             "split_gain=" + _integers(np.zeros(m)), "threshold=" + _numbers(thresholds),
             "decision_type=" + _integers(missing),
             "left_child=" + _integers(code[left[inner]]),
             "right_child=" + _integers(code[right[inner]]),
             "leaf_value=" + _numbers(value[~inner]), "leaf_weight=" + _integers(np.zeros(L)),
             "leaf_count=" + _integers(np.zeros(L)),
             "internal_value=" + _numbers(value[inner]),
             "internal_weight=" + _integers(np.zeros(m)),
             "internal_count=" + _integers(np.zeros(m)), "is_linear=0", "shrinkage=1"]
    return "\n".join([*lines, "", "", ""])


def _constant_tree(index, value):
    leaf = dict(left=[-1], right=[-1], feature=[-1], value=[[value]],
                missing_go_to_left=[False])
    return _tree_block(index, leaf, np.zeros(0), 0)


def _rounds(tree_class, K):
    """Trees per iteration in LightGBM's layout (slot k adds to class k): the IR's
    trees in order, a new iteration whenever a tree's class slot is taken or already
    passed, None for a slot no tree fills."""
    rounds, current = [], [None] * K
    last = -1
    for t, k in enumerate(tree_class):
        if k <= last:
            rounds.append(current)
            current = [None] * K
        current[k], last = t, k
    rounds.append(current)
    return rounds


def _feature_names(f):
    names = f.feature_names or [f"Column_{k}" for k in range(f.n_features)]
    # as LightGBM stores names: no whitespace (it splits the line on spaces)
    names = [re.sub(r"\s+", "_", str(name)) for name in names]
    return [name or f"Column_{k}" for k, name in enumerate(names)]


def lightgbm_model_text(pruned):
    """The LightGBM model text of a pruned boosted forest (no LightGBM needed).

    ``lightgbm.Booster(model_str=text)`` predicts exactly as ``pruned`` does
    (see :func:`pruned_to_lightgbm`); the text can also be written to a file
    for LightGBM's command line or any other binding.

    Parameters
    ----------
    pruned : PrunedForest
        Of an additive forest (any source: LightGBM, XGBoost, scikit-learn's
        boosting).

    Returns
    -------
    str

    Raises
    ------
    ValueError
        For an averaged forest or a NaN split threshold.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import HistGradientBoostingRegressor
    >>> import prune_opt as po
    >>> X, y = load_diabetes(return_X_y=True)
    >>> hgb = HistGradientBoostingRegressor(max_iter=3, max_leaf_nodes=4).fit(X, y)
    >>> f = po.as_forest(hgb)
    >>> text = lightgbm_model_text(po.PrunedForest(f, f.full_split_mask()))
    >>> text.splitlines()[:3], text.count("Tree=")   # 3 trees and the initial score
    (['tree', 'version=v4', 'num_class=1'], 4)
    """
    f = pruned.forest
    if not f.is_additive:
        raise ValueError("to_lightgbm: this is an averaged forest (a random forest): LightGBM "
                         "sums its trees' raw scores and cannot average class distributions; "
                         "use to_sklearn() instead. to_lightgbm exports boosted models")
    link = f.ensemble.link
    K = f.value_width
    tree_class = (f.ensemble.tree_class if link == "softmax"
                  else np.zeros(f.n_trees, dtype=np.int64))
    blocks = []
    for slots in _rounds(tree_class, K):
        for k, t in enumerate(slots):
            if t is None:
                blocks.append(_constant_tree(len(blocks), 0.0))
                continue
            arrays = pruned.pruned_tree_arrays(t)
            blocks.append(_tree_block(len(blocks), arrays, _thresholds(f, arrays, t), k))
    init = np.asarray(f.ensemble.init_score, dtype=np.float64)
    if init.any():  # added after the trees, as the IR adds it
        blocks += [_constant_tree(len(blocks) + k, init[k]) for k in range(K)]
    header = ["tree", "version=v4", f"num_class={K}", f"num_tree_per_iteration={K}",
              "label_index=0", f"max_feature_idx={f.n_features - 1}",
              "objective=" + _OBJECTIVES[link].format(K=K),
              "feature_names=" + " ".join(_feature_names(f)),
              "feature_infos=" + " ".join(["none"] * f.n_features),
              "tree_sizes=" + " ".join(str(len(block)) for block in blocks), "", ""]
    return "\n".join(header) + "".join(blocks) + "end of trees\n"


def pruned_to_lightgbm(pruned):
    """A ``lightgbm.Booster`` holding the pruned trees of a boosted forest.

    It predicts exactly as ``pruned``: the same leaf in every tree for every
    row (NaN included), the same raw scores (``predict(X, raw_score=True)``
    equals ``pruned.decision_function(X)``) and probabilities; its trees hold
    only the splits the pruning kept, so it asks for the same features and
    pays the same acquisition cost.  Multiclass forests may gain constant
    trees (a round without a tree of some class) and a nonzero initial score
    one last iteration of constant trees; the trees carry no training counts,
    so ``pred_contrib`` is not meaningful.

    Parameters
    ----------
    pruned : PrunedForest
        Of an additive forest (see :func:`lightgbm_model_text`).

    Returns
    -------
    lightgbm.Booster

    Examples
    --------
    >>> import numpy as np, lightgbm as lgb
    >>> from sklearn.datasets import load_breast_cancer
    >>> import prune_opt as po
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = lgb.LGBMClassifier(n_estimators=10, num_leaves=8, verbose=-1).fit(X, y)
    >>> pruned = po.prune(model, X, y, costs=np.ones(30), lam=0.01)
    >>> booster = pruned.to_lightgbm()
    >>> bool(np.allclose(booster.predict(X), pruned.predict_proba(X)[:, 1], rtol=0, atol=1e-12))
    True
    """
    lgb = import_lightgbm()
    return lgb.Booster(model_str=lightgbm_model_text(pruned))
