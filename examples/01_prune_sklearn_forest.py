"""Prune a scikit-learn random forest on thyroid with its real test costs.

The UCI thyroid data ships with Turney's prices of each lab test; the derived
feature FTI is computed from TT4 and T4U, so using it pays for both.  This
script fits a 30-tree forest on half of the training file, prunes it on the
other half (the validation data of the paper) with the exact BudgetPrune
program for a few values of lam, and reports accuracy and average acquisition
cost on the official test file.  It then exports the pruning made with
``--lam`` back to scikit-learn and round-trips it through JSON.

On this forest the error/cost trade-off has very few reachable points: the
roots of the trees already pay for most of the lab tests, so the optimum
jumps from "keep (nearly) everything" to "cut every tree to its root" near
lam = 1e-3 (see docs/math/lagrangian.md for why only hull points are reachable).

Run::

    python examples/01_prune_sklearn_forest.py [--lam 0.001] [--out DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.datasets import load_dataset


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lam", type=float, default=1e-3,
                        help="weight of the average test cost against the error")
    parser.add_argument("--trees", type=int, default=30)
    parser.add_argument("--out", default=None,
                        help="folder for pruned.json (default: a temporary folder)")
    args = parser.parse_args(argv)

    data = load_dataset("thyroid")
    X_train, X_val, y_train, y_val = train_test_split(
        data.X, data.y, train_size=0.5, random_state=0, stratify=data.y)
    X_test, y_test = data.X_test, data.y_test

    rf = RandomForestClassifier(n_estimators=args.trees, random_state=0)
    rf.fit(X_train, y_train)
    before_acc = rf.score(X_test, y_test)
    before_cost = po.acquisition_cost(rf, X_test, data.costs).mean()

    n_internal = int(sum((e.tree_.children_left >= 0).sum() for e in rf.estimators_))
    print(f"thyroid: {len(y_train)} train / {len(y_val)} validation / {len(y_test)} test rows, "
          f"{data.costs.n_features} features with real costs")
    print(f"{'lam':>10} {'accuracy':>9} {'avg cost':>9} {'splits':>7} {'solver':>8}")
    print(f"{'unpruned':>10} {before_acc:9.4f} {before_cost:9.2f} {n_internal:7d}")
    pruned = None
    for lam in sorted({3e-4, args.lam, 2e-3}):
        # errors counted on each tree's in-bag sample (train=...), costs on X_val
        p = po.prune(rf, X_val, y_val, costs=data.costs, lam=lam, train=(X_train, y_train))
        print(f"{lam:10.4g} {p.score(X_test, y_test):9.4f} {p.average_cost(X_test):9.2f} "
              f"{p.n_splits:7d} {p.solve_info['solver']:>8}")
        if lam == args.lam:
            pruned = p

    b = pruned.breakdown
    print(f"lam={args.lam:g}: objective = error {b.error_term:.5f} + lam * average cost {b.average_cost:.3f} "
          "(on the validation rows)")

    usage = pruned.feature_usage(X_test)
    rows = usage.to_dict("records") if hasattr(usage, "to_dict") else usage
    # the forest was fitted on a bare array, so usage rows follow the column order
    print("features in use (share of test examples that use each in 1-7 / >7 trees):")
    for name, r in zip(data.feature_names, rows):
        if r["never"] < 1.0:
            print(f"  {name:>26}: {r['1-7']:.2f} / {r['>7']:.2f}")

    sk = pruned.to_sklearn()
    same = np.array_equal(sk.predict_proba(X_test), pruned.predict_proba(X_test))
    print(f"to_sklearn(): {type(sk).__name__}, predict_proba identical: {same}")

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out) if args.out else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "pruned.json"
        pruned.save(path)
        loaded = po.load(path)
        same_loaded = np.array_equal(loaded.predict(X_test), pruned.predict(X_test))
        print(f"saved {path.name} ({path.stat().st_size / 1024:.0f} KiB); reloaded predictions "
              f"identical: {same_loaded}")
    if not (same and same_loaded):
        raise SystemExit("export or reload changed the predictions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
