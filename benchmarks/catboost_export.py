"""How exactly a pruned CatBoost model exported with ``to_catboost()`` predicts, on real
datasets.

For each dataset, grow policy and NaN setting a CatBoost model is fitted as in
``catboost_exactness.py`` (``--trees`` iterations of depth ``--depth`` on 60% of up
to ``--rows`` rows, NaN in 10% of the entries nowhere or in training and test
rows), pruned by a random split mask (each internal node cut with probability
``--cut``, everything below a cut node gone; the classes of a MultiClass tree cut
apart: the export does not depend on how a pruning was found), exported, and
loaded into CatBoost.  On the test rows it reports the largest differences
between CatBoost's raw scores and probabilities (regression: predictions) and the
pruned model's, the numbers CatBoost's JSON reader would read one unit in the last
place off (of all the numbers written), the rows whose export prediction changes when the features the pruned
model does not ask them for are replaced by NaN or by random values, the splits
kept, and the seconds to write the model.  Usage::

    python benchmarks/catboost_export.py [--datasets magic adult letter diabetes
        heart-severity] [--trees 100] [--depth 6] [--rows 12000] [--cut 0.1] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.datasets import load_dataset
from prune_opt.exporters import catboost_model_json
from prune_opt.exporters._catboost_numbers import catboost_json_text

DATASETS = ("magic", "adult", "letter", "diabetes", "heart-severity")
REGRESSION = ("diabetes", "heart-severity")
GROW_POLICIES = ("SymmetricTree", "Depthwise", "Lossguide")


def random_split_mask(forest, rng, p_cut):
    keep = (forest.left >= 0) & (rng.random(forest.n_nodes) >= p_cut)
    for level in range(1, forest.max_depth + 1):
        at = np.flatnonzero(forest.depth == level)
        keep[at] &= keep[forest.parent[at]]
    return keep


def _count_numbers(obj):
    if isinstance(obj, dict):
        return sum(_count_numbers(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(_count_numbers(v) for v in obj)
    return int(isinstance(obj, float))


def _outputs(model, X, regression):
    raw = np.asarray(model.predict(X, prediction_type="RawFormulaVal"), dtype=float)
    return raw, (np.asarray(model.predict(X)) if regression else model.predict_proba(X))


def measure(name, nan, grow, trees, depth, rows, cut):
    import catboost as cb

    d = load_dataset(name)
    X, y = np.asarray(d.X, dtype=float), np.asarray(d.y)
    if len(X) > rows:
        keep = np.random.default_rng(0).choice(len(X), rows, replace=False)
        X, y = X[keep], y[keep]
    regression = name in REGRESSION
    Xtr, Xte, ytr, _ = train_test_split(X, y, test_size=0.4, random_state=0)
    if nan == "train":
        for M, seed in ((Xtr, 1), (Xte, 2)):
            M[np.random.default_rng(seed).random(M.shape) < 0.1] = np.nan
    params = dict(iterations=trees, depth=depth, grow_policy=grow, verbose=0, random_seed=0,
                  allow_writing_files=False)
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
    rng = np.random.default_rng(3)
    pruned = po.PrunedForest(forest, random_split_mask(forest, rng, cut))
    t0 = time.perf_counter()
    doc = catboost_model_json(pruned)
    _, inexact = catboost_json_text(doc)
    seconds = time.perf_counter() - t0
    export = pruned.to_catboost()
    raw, out = _outputs(export, Xte, regression)
    ours = pruned.decision_function(Xte)
    want = pruned.predict(Xte) if regression else pruned.predict_proba(Xte)
    free = ~(pruned.used_features(forest.check_X(Xte)).toarray() > 0)
    changed = 0
    for fill in (np.full(Xte.shape, np.nan), rng.normal(scale=np.nanstd(Xte, axis=0) + 1,
                                                        size=Xte.shape)):
        raw2, _ = _outputs(export, np.where(free, fill, Xte), regression)
        moved = raw2 != raw
        changed += int(moved.any(axis=1).sum() if moved.ndim == 2 else moved.sum())
    return dict(dataset=name, nan=nan, grow_policy=grow, trees=forest.n_trees,
                splits_kept=pruned.n_splits, splits=int((~forest.is_leaf).sum()),
                raw_gap=float(np.abs(raw - ours).max()), raw_scale=float(np.abs(ours).max()),
                prediction_gap=float(np.abs(out - want).max()), inexact_numbers=int(inexact),
                numbers=_count_numbers(doc),
                rows_changed_by_unasked=changed, rows=int(len(Xte)), write_seconds=seconds)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--rows", type=int, default=12000)
    ap.add_argument("--cut", type=float, default=0.1,
                    help="probability of cutting each internal node (default 0.1)")
    ap.add_argument("--json", action="store_true", help="print one JSON object per run")
    args = ap.parse_args(argv)
    for name in args.datasets:
        for grow in GROW_POLICIES:
            for nan in ("none", "train"):
                row = measure(name, nan, grow, args.trees, args.depth, args.rows, args.cut)
                if args.json:
                    print(json.dumps(row))
                else:
                    print(f"{name:>15} {grow:>13} nan={nan:<5} trees={row['trees']:>5} "
                          f"splits {row['splits_kept']:,}/{row['splits']:,}; |raw - pruned| "
                          f"<= {row['raw_gap']:.2g} (scale {row['raw_scale']:.3g}); "
                          f"|prediction - pruned| <= {row['prediction_gap']:.2g}; "
                          f"{row['inexact_numbers']} of {row['numbers']:,} numbers read "
                          "off; "
                          f"{row['rows_changed_by_unasked']} of {2 * row['rows']} rows "
                          f"changed by unasked features; written in "
                          f"{row['write_seconds']:.2f} s", flush=True)


if __name__ == "__main__":
    main()
