"""Brute-force walks of a budget estimator's winner, forest or boosted model.

Each pruned tree is walked row by row, independently of prune_opt's routing:
NaN follows the node's missing-value side, a value goes left when
``split_dtype(value) <= threshold`` (float32 for scikit-learn's forests, float64
for LightGBM and HistGradientBoosting).  A forest averages its trees' class
distributions (or means); a boosted model adds its trees' raw scores to its
initial score and applies its link.
"""

import numpy as np
from scipy.special import expit, softmax


def _child(a, h, x, dtype):
    v = x[a["feature"][h]]
    if np.isnan(v):
        return a["left"][h] if a["missing_go_to_left"][h] else a["right"][h]
    return a["left"][h] if dtype(v) <= a["threshold"][h] else a["right"][h]


def leaves(pf, x):
    """(features met, leaf value) of every pruned tree for the row ``x``."""
    dtype = np.float64 if pf.forest.split_dtype == "float64" else np.float32
    for t in range(pf.n_trees):
        a = pf.pruned_tree_arrays(t)
        h, used = 0, set()
        while a["left"][h] >= 0:
            used.add(int(a["feature"][h]))
            h = _child(a, h, x, dtype)
        yield used, np.asarray(a["value"][h], dtype=float).ravel()


def features_met(pf, x):
    """The distinct features the row ``x`` meets on its paths through the pruned trees."""
    used = set()
    for u, _ in leaves(pf, x):
        used |= u
    return used


def walk_cost(pf, X, unit_cost):
    """Per-example cost: the costs of the distinct features an example meets."""
    X = np.asarray(X, dtype=float)
    return np.array([sum(unit_cost[j] for j in features_met(pf, x)) for x in X])


def walk_output(pf, X):
    """Class probabilities (n, K) or regression predictions (n,) by walking the trees."""
    X = np.asarray(X, dtype=float)
    f = pf.forest
    out = []
    for x in X:
        values = [v for _, v in leaves(pf, x)]
        if f.is_additive:
            raw = np.asarray(f.ensemble.init_score, dtype=float) + np.sum(values, axis=0)
            link = f.ensemble.link
            out.append(raw if link == "identity" else
                       np.array([1 - expit(raw[0]), expit(raw[0])]) if link == "logistic"
                       else softmax(raw))
        elif pf.task == "classification":
            out.append(np.mean([v / v.sum() if v.sum() > 0 else v for v in values], axis=0))
        else:
            out.append(np.mean(values, axis=0))
    out = np.asarray(out)
    return out.ravel() if pf.task == "regression" else out


def export_agrees(est, X):
    """The winner's export predicts as the estimator: ``to_sklearn()`` for a forest; for a
    boosted winner ``to_sklearn()`` refuses naming what to use, and a LightGBM winner's
    ``pruned_.to_lightgbm()`` predicts the same.  Returns the export's kind."""
    import pytest

    Xv = np.asarray(X, dtype=float)
    pf = est.pruned_
    if not pf.forest.is_additive:
        sk = est.to_sklearn()
        if est._task == "classification":
            assert np.array_equal(sk.predict(Xv), est.predict(X))
            assert np.allclose(sk.predict_proba(Xv), est.predict_proba(X), atol=1e-12)
        else:
            assert np.allclose(sk.predict(Xv), est.predict(X), rtol=1e-12)
        return "sklearn"
    with pytest.raises(TypeError, match="scikit-learn cannot rebuild"):
        est.to_sklearn()
    if not str(pf.estimator_class).startswith("LGBM"):
        return "none"
    raw = np.asarray(pf.to_lightgbm().predict(Xv))
    if est._task == "regression":
        assert np.allclose(raw, est.predict(X), rtol=1e-9, atol=1e-9 * np.abs(raw).max())
    else:
        proba = est.predict_proba(X)
        want = proba[:, 1] if raw.ndim == 1 else proba
        assert np.allclose(raw, want, atol=1e-9)
    return "lightgbm"


def selection_pool(table, prior):
    """The candidates the one-standard-error rule may choose among, by the prior's rules
    (docs/estimator.md, "Select"): those that fit the budget; of them only those whose
    select-row score is above ``prior`` when one is (a candidate no better than the
    prior never wins over one that is), and none that keeps no split while a candidate
    with splits scores better."""
    pool = table[table["fits_budget"]]
    above = pool["score"] > prior + 1e-12
    if above.any():
        pool = pool[above]
    splits = pool["n_splits"] > 0
    if splits.any():
        pool = pool[splits | (pool["score"] >= pool.loc[splits, "score"].max())]
    return pool
