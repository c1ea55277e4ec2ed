"""How exactly the CatBoost import reproduces CatBoost, on real datasets.

For each dataset and grow policy a CatBoost model (``--trees`` iterations of
depth ``--depth``; Lossguide with up to ``2^depth`` leaves) is fitted on 60% of
up to ``--rows`` rows, with NaN in 10% of the entries nowhere, or in training
and test rows (``nan_mode`` Min, or Max with ``--nan-mode Max``).  On the test
rows it reports the (row, tree) leaves that differ from CatBoost's
``calc_leaf_indexes`` (a non-symmetric tree's leaves as CatBoost numbers them
once the model is loaded from its JSON), and the largest differences of the raw
scores and of the probabilities (regression: predictions).  Usage::

    python benchmarks/catboost_exactness.py [--datasets magic adult letter diabetes
        heart-severity] [--trees 100] [--depth 6] [--rows 12000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

import numpy as np
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.datasets import load_dataset

DATASETS = ("magic", "adult", "letter", "diabetes", "heart-severity")
REGRESSION = ("diabetes", "heart-severity")
GROW_POLICIES = ("SymmetricTree", "Depthwise", "Lossguide")


def _catboost_leaves(model, forest, X):
    """CatBoost's leaf of every (row, tree), and the IR's in CatBoost's numbering."""
    import catboost as cb

    K = forest.round_size
    ours = forest.apply(X)[:, ::K]
    with tempfile.TemporaryDirectory() as tmp:  # JSON-loaded: preorder leaf numbering
        path = os.path.join(tmp, "model.json")
        model.save_model(path, format="json")
        loaded = cb.CatBoost()
        loaded.load_model(path, format="json")
    theirs = loaded.calc_leaf_indexes(cb.Pool(X))
    mapped = np.empty_like(ours)
    for r in range(ours.shape[1]):
        t = r * K
        leaves = np.flatnonzero(forest.is_leaf[forest.tree_slice(t)])
        pos = np.searchsorted(leaves, ours[:, r])
        if model.get_all_params()["grow_policy"] == "SymmetricTree":
            d = int(np.log2(leaves.size))
            pos = sum(((pos >> (d - 1 - j)) & 1) << j for j in range(d))
        mapped[:, r] = pos
    return mapped, theirs


def measure(name, nan, grow, trees, depth, rows, nan_mode="Min"):
    import catboost as cb

    d = load_dataset(name)
    X, y = np.asarray(d.X, dtype=float), np.asarray(d.y)
    if len(X) > rows:
        keep = np.random.default_rng(0).choice(len(X), rows, replace=False)
        X, y = X[keep], y[keep]
    regression = name in REGRESSION
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.4, random_state=0)
    if nan == "train":
        for M, seed in ((Xtr, 1), (Xte, 2)):
            M[np.random.default_rng(seed).random(M.shape) < 0.1] = np.nan
    params = dict(iterations=trees, depth=depth, grow_policy=grow, verbose=0, random_seed=0,
                  allow_writing_files=False, nan_mode=nan_mode)
    if grow == "Lossguide":
        params["max_leaves"] = 2 ** depth
    if regression:
        model = cb.CatBoostRegressor(**params)
    else:
        n_classes = np.unique(ytr).size
        model = cb.CatBoostClassifier(
            loss_function="MultiClass" if n_classes > 2 else "Logloss", **params)
    model.fit(Xtr, ytr)
    forest = po.as_forest(model)
    mapped, theirs = _catboost_leaves(model, forest, Xte)
    raw = model.predict(Xte, prediction_type="RawFormulaVal")
    out = dict(dataset=name, nan=nan, grow_policy=grow, trees=forest.n_trees,
               leaves_differing=int((mapped != theirs).sum()), leaves_compared=int(mapped.size),
               raw_gap=float(np.abs(forest.decision_function(Xte) - raw).max()),
               raw_scale=float(np.abs(raw).max()))
    if regression:
        out["prediction_gap"] = float(np.abs(forest.predict(Xte) - model.predict(Xte)).max())
    else:
        out["prediction_gap"] = float(np.abs(forest.predict_proba(Xte)
                                             - model.predict_proba(Xte)).max())
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--rows", type=int, default=12000)
    ap.add_argument("--nan-mode", default="Min", choices=("Min", "Max"))
    ap.add_argument("--json", action="store_true", help="print one JSON object per run")
    args = ap.parse_args(argv)
    for name in args.datasets:
        for grow in GROW_POLICIES:
            for nan in ("none", "train"):
                row = measure(name, nan, grow, args.trees, args.depth, args.rows,
                              args.nan_mode)
                if args.json:
                    print(json.dumps(row))
                else:
                    print(f"{name:>15} {grow:>13} nan={nan:<5} trees={row['trees']:>5} "
                          f"leaves differing {row['leaves_differing']} of "
                          f"{row['leaves_compared']:,}; |raw - CatBoost| <= "
                          f"{row['raw_gap']:.2g} (scale {row['raw_scale']:.3g}); "
                          f"|prediction - CatBoost| <= {row['prediction_gap']:.2g}",
                          flush=True)


if __name__ == "__main__":
    main()
