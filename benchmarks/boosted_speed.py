"""Seconds to prune a large boosted model, against the seconds LightGBM takes to train it.

A binary LightGBM model (``--rounds`` rounds of ``--leaves`` leaves, LightGBM's
other defaults, all cores) is trained on ``--train-rows`` rows of a shared
dataset, timed; then, on ``--val-rows`` other rows (the dataset's costs):

* ``fit_budget``   one ``po.fit_budget(model, X_val, y_val, costs=, budget=B)`` call per
  budget share (``--shares`` of the model's cost on those rows), every other
  argument at its default (the model's own loss, its default time limit);
* ``prune (paper)``  one ``po.prune(model, X_val, y_val, costs=, lam=, objective="paper")``
  per ``--lams``: the program of the stagewise second-order expansion solved exactly
  (min cut), compile included;
* ``prune``        the same call with the default objective (the model's own loss): the
  exact program's solution refined by exact block coordinate descent over the trees.

The targets (issue: boosted ensembles): ``fit_budget`` within 10 s, and an exact
``prune`` within 2 x the training time, on 2 cores.  Each row reports the call's
seconds, the ratio to the training time, the pruning's validation cost and accuracy.
Usage::

    python benchmarks/boosted_speed.py                       # magic, 200 rounds, 10,000 rows
    python benchmarks/boosted_speed.py --dataset adult --json speed.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import prune_opt as po  # noqa: E402
from prune_opt.datasets import load_dataset  # noqa: E402


def run(args):
    import lightgbm as lgb

    ds = load_dataset(args.dataset)
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y)
    classes = np.unique(y)
    if classes.size != 2:
        raise SystemExit(f"--dataset {args.dataset}: a binary dataset is needed "
                         f"({classes.size} classes)")
    y = np.searchsorted(classes, y)
    need = args.train_rows + args.val_rows
    if len(y) < need:
        raise SystemExit(f"--dataset {args.dataset} has {len(y)} rows, fewer than "
                         f"--train-rows + --val-rows = {need}")
    idx = np.random.default_rng(args.seed).permutation(len(y))
    tr, va = idx[:args.train_rows], idx[args.train_rows:need]
    model = lgb.LGBMClassifier(n_estimators=args.rounds, num_leaves=args.leaves,
                               random_state=args.seed, verbose=-1)
    t0 = time.perf_counter()
    model.fit(X[tr], y[tr])
    train_s = time.perf_counter() - t0
    costs = po.as_feature_costs(ds.costs, X.shape[1], ds.feature_names)
    forest = po.as_forest(model)
    full = po.PrunedForest(forest, forest.full_split_mask(), costs=costs)
    base = full.average_cost(X[va])
    rows = [{"method": "LightGBM training", "param": f"{args.rounds} rounds",
             "seconds": train_s, "x_training": 1.0, "val_cost": base,
             "val_accuracy": float(np.mean(model.predict(X[va]) == y[va]))}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for share in args.shares:
            t0 = time.perf_counter()
            pf = po.fit_budget(model, X[va], y[va], costs=costs, budget=share * base)
            s = time.perf_counter() - t0
            rows.append({"method": "fit_budget", "param": f"budget {share:g} x cost",
                         "seconds": s, "x_training": s / train_s,
                         "val_cost": pf.average_cost(X[va]),
                         "val_accuracy": pf.score(X[va], y[va])})
        for lam in args.lams:
            for method, objective in (("prune (paper)", "paper"), ("prune", None)):
                t0 = time.perf_counter()
                pf = po.prune(model, X[va], y[va], costs=costs, lam=lam, objective=objective)
                s = time.perf_counter() - t0
                rows.append({"method": method, "param": f"lam {lam:g}", "seconds": s,
                             "x_training": s / train_s, "val_cost": pf.average_cost(X[va]),
                             "val_accuracy": pf.score(X[va], y[va])})
    return {"dataset": args.dataset, "rounds": args.rounds, "leaves": args.leaves,
            "train_rows": args.train_rows, "val_rows": args.val_rows,
            "n_trees": forest.n_trees, "n_nodes": int(forest.n_nodes), "rows": rows}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="magic")
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--train-rows", type=int, default=8000)
    ap.add_argument("--val-rows", type=int, default=10000)
    ap.add_argument("--shares", default="0.1,0.25,0.5",
                    type=lambda s: [float(v) for v in s.split(",")])
    ap.add_argument("--lams", default="0.001,0.01",
                    type=lambda s: [float(v) for v in s.split(",")])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)
    out = run(args)
    print(f"{out['dataset']}: binary LightGBM, {out['rounds']} rounds x {out['leaves']} "
          f"leaves ({out['n_trees']} trees, {out['n_nodes']} nodes), trained on "
          f"{out['train_rows']} rows, pruned on {out['val_rows']}")
    print(f"{'method':<18} {'param':<18} {'seconds':>8} {'x training':>11} {'val cost':>9} "
          f"{'val acc':>8}")
    for r in out["rows"]:
        print(f"{r['method']:<18} {r['param']:<18} {r['seconds']:>8.2f} {r['x_training']:>11.2f} "
              f"{r['val_cost']:>9.3f} {r['val_accuracy']:>8.4f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
