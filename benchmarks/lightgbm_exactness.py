"""How exactly the LightGBM import and export reproduce LightGBM, on real datasets.

For each dataset a LightGBM model (``--trees`` iterations of ``--leaves``
leaves) is fitted on 60% of up to ``--rows`` rows, with NaN in 10% of the
entries nowhere, in training and test rows, or in the test rows only.  On the
test rows it reports the (row, tree) leaves that differ from LightGBM's
``pred_leaf`` and the largest differences of the raw scores and of the
probabilities (regression: predictions); then prunes the model on half the
test rows (``lam``, random costs 1-10) and reports the same differences
between ``pruned.to_lightgbm()`` and the pruned model on the other half, and
of their acquisition costs.  Usage::

    python benchmarks/lightgbm_exactness.py [--datasets magic adult letter diabetes
        heart-severity weather] [--trees 100] [--leaves 31] [--rows 12000] [--json]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.datasets import load_dataset
from prune_opt.importers import lightgbm_acquisition_cost, lightgbm_leaves

DATASETS = ("magic", "adult", "letter", "diabetes", "heart-severity", "weather")
REGRESSION = ("diabetes", "heart-severity")


def _output(model, X, regression):
    if regression:
        return np.asarray(model.predict(X))
    p = np.asarray(model.predict(X))
    return np.column_stack([1 - p, p]) if p.ndim == 1 else p


def _split(X, y, nan, seed=1):
    missing = np.random.default_rng(seed).random(X.shape) < 0.1
    Xtr, Xte, ytr, yte, mtr, mte = train_test_split(X, y, missing, test_size=0.4,
                                                    random_state=0)
    Xtr, Xte = Xtr.copy(), Xte.copy()
    if nan in ("train", "test-only"):
        Xte[mte] = np.nan
    if nan == "train":
        Xtr[mtr] = np.nan
    return Xtr, Xte, ytr, yte


def measure(name, nan, trees, leaves, rows, lam=1e-3):
    import lightgbm as lgb

    d = load_dataset(name)
    X, y = np.asarray(d.X, dtype=float), np.asarray(d.y)
    if len(X) > rows:
        keep = np.random.default_rng(0).choice(len(X), rows, replace=False)
        X, y = X[keep], y[keep]
    regression = name in REGRESSION
    Xtr, Xte, ytr, yte = _split(X, y, nan)
    kind = lgb.LGBMRegressor if regression else lgb.LGBMClassifier
    model = kind(n_estimators=trees, num_leaves=leaves, verbose=-1, random_state=0)
    booster = model.fit(Xtr, ytr).booster_
    forest = po.as_forest(model)
    ours = forest.predict(Xte) if regression else forest.predict_proba(Xte)
    row = {"dataset": name, "nan": nan, "trees": forest.n_trees,
           "leaves_differ": int((lightgbm_leaves(model, Xte)
                                 != booster.predict(Xte, pred_leaf=True)).sum()),
           "leaves_compared": int(Xte.shape[0] * forest.n_trees),
           "import_raw": float(np.abs(forest.decision_function(Xte)
                                      - booster.predict(Xte, raw_score=True)).max()),
           "import_output": float(np.abs(ours - _output(booster, Xte, regression)).max())}
    leaf_index = [t["leaf_index"] for t in po.importers.lightgbm_trees(model)]
    ir_leaves = np.column_stack([leaf_index[t][forest.apply_tree(Xte, t)]
                                 for t in range(forest.n_trees)])
    row["ir_leaves_differ"] = int((ir_leaves != booster.predict(Xte, pred_leaf=True)).sum())
    Xv, Xh, yv, _ = train_test_split(Xte, yte, test_size=0.5, random_state=0)
    costs = np.random.default_rng(2).uniform(1, 10, X.shape[1])
    pruned = po.prune(model, Xv, yv, costs=costs, lam=lam)
    exported = pruned.to_lightgbm()
    mine = pruned.predict(Xh) if regression else pruned.predict_proba(Xh)
    row.update(splits_kept=pruned.n_splits, splits=int((~forest.is_leaf).sum()),
               export_raw=float(np.abs(exported.predict(Xh, raw_score=True)
                                       - pruned.decision_function(Xh)).max()),
               export_output=float(np.abs(_output(exported, Xh, regression) - mine).max()),
               export_cost=float(np.abs(lightgbm_acquisition_cost(exported, Xh, costs)
                                        - pruned.acquisition_cost(Xh)).max()))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--rows", type=int, default=12000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    rows = []
    for name in a.datasets:
        for nan in ("none", "train", "test-only"):
            r = measure(name, nan, a.trees, a.leaves, a.rows)
            rows.append(r)
            if not a.json:
                print(f"{r['dataset']:15s} NaN {r['nan']:9s} {r['trees']:5d} trees | leaves "
                      f"differ {r['leaves_differ'] + r['ir_leaves_differ']}/"
                      f"{2 * r['leaves_compared']}, raw {r['import_raw']:.1e}, output "
                      f"{r['import_output']:.1e} | pruned {r['splits_kept']}/{r['splits']}: "
                      f"raw {r['export_raw']:.1e}, output {r['export_output']:.1e}, cost "
                      f"{r['export_cost']:.1e}", flush=True)
    if a.json:
        print(json.dumps(rows))
    return rows


if __name__ == "__main__":
    main()
