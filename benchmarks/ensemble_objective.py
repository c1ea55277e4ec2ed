"""Ensemble objectives against the paper's objective and GreedyPrune at matched budgets.

Protocol: a 40-tree random forest grown on 50% of the rows (at most 4,000
rows in all), pruned on 25% (validation), scored on the rest (test); uniform
feature costs.  Budgets are 10/25/50% of the unpruned forest's average
acquisition cost on validation.  Per method and budget:

* ``paper``: :func:`prune_opt.fit_budget` with ``objective="paper"`` (the
  hard-budget search on the paper's error term);
* ``greedy``: GreedyPrune, the pruning with the best validation accuracy
  among those within the budget;
* ``brier`` / ``logloss`` / ``margin`` / ``accuracy``:
  :func:`prune_opt.fit_budget` with that ``objective``.

Prints validation and test accuracy, validation cost and seconds, then times
:func:`optimize_ensemble` on 40 trees x 2,000 validation rows.

Usage::

    PRUNE_OPT_DATA=... python benchmarks/ensemble_objective.py [--datasets digits,spambase]
        [--objectives brier,logloss,margin,accuracy] [--seed 0] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import time

from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.budget import greedy_prunings
from prune_opt.datasets import load_dataset
from prune_opt.objectives import optimize_ensemble


def split(ds, seed, max_rows=4000):
    X, y = ds.X, ds.y
    if X.shape[0] > max_rows:
        X, _, y, _ = train_test_split(X, y, train_size=max_rows, random_state=seed, stratify=y)
    Xtr, Xr, ytr, yr = train_test_split(X, y, train_size=0.5, random_state=seed, stratify=y)
    Xv, Xte, yv, yte = train_test_split(Xr, yr, train_size=0.5, random_state=seed, stratify=yr)
    return Xtr, ytr, Xv, yv, Xte, yte


def row(method, budget_share, pf, Xv, yv, Xte, yte, seconds):
    return {"method": method, "budget": budget_share, "val_acc": pf.score(Xv, yv),
            "test_acc": pf.score(Xte, yte), "val_cost": pf.average_cost(Xv),
            "seconds": seconds}


def run_dataset(name, objectives, seed):
    ds = load_dataset(name)
    Xtr, ytr, Xv, yv, Xte, yte = split(ds, seed)
    rf = RandomForestClassifier(n_estimators=40, random_state=seed, n_jobs=1).fit(Xtr, ytr)
    costs = po.FeatureCosts.uniform(Xtr.shape[1])
    full = po.acquisition_cost(rf, Xv, costs).mean()
    t = time.perf_counter()
    greedy = [pf for _, pf in greedy_prunings(rf, Xv, yv, costs=costs)]
    greedy_s = time.perf_counter() - t
    rows = []
    for share in (0.10, 0.25, 0.50):
        B = share * full
        t = time.perf_counter()
        pf = po.fit_budget(rf, Xv, yv, costs=costs, budget=B, objective="paper")
        rows.append(row("paper", share, pf, Xv, yv, Xte, yte, time.perf_counter() - t))
        fit = [g for g in greedy if g.average_cost(Xv) <= B * (1 + 1e-12)]
        best = max(fit, key=lambda g: g.score(Xv, yv))
        rows.append(row("greedy", share, best, Xv, yv, Xte, yte, greedy_s))
        for obj in objectives:
            t = time.perf_counter()
            pf = po.fit_budget(rf, Xv, yv, costs=costs, budget=B, objective=obj)
            rows.append(row(obj, share, pf, Xv, yv, Xte, yte, time.perf_counter() - t))
    return {"dataset": name, "full_val_cost": full, "full_test_acc": rf.score(Xte, yte),
            "rows": rows}


def time_fixed_lam(seed, objective="brier"):
    """optimize_ensemble on 40 trees x 2,000 validation rows of spambase."""
    ds = load_dataset("spambase")
    X, y = ds.X[:4000], ds.y[:4000]
    Xtr, Xv, ytr, yv = train_test_split(X, y, train_size=0.5, random_state=seed, stratify=y)
    rf = RandomForestClassifier(n_estimators=40, random_state=seed, n_jobs=1).fit(Xtr, ytr)
    costs = po.FeatureCosts.uniform(X.shape[1])
    full = po.acquisition_cost(rf, Xv, costs).mean()
    out = []
    for lam in (0.001, 0.01, 0.03):
        t = time.perf_counter()
        pf = optimize_ensemble(rf, Xv, yv, objective=objective, lam=lam, costs=costs)
        out.append({"lam": lam, "seconds": time.perf_counter() - t,
                    "iterations": pf.solve_info["iterations"],
                    "cost_share": pf.average_cost(Xv) / full, "start": pf.solve_info["start"]})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="digits,spambase")
    ap.add_argument("--objectives", default="brier,logloss,margin,accuracy")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    objectives = [o for o in args.objectives.split(",") if o]
    results = []
    for name in args.datasets.split(","):
        res = run_dataset(name, objectives, args.seed)
        results.append(res)
        print(f"\n{name}: unpruned val cost {res['full_val_cost']:.2f}, "
              f"test acc {res['full_test_acc']:.3f}")
        print(f"{'budget':>6} {'method':>9} {'val acc':>8} {'test acc':>8} {'val cost':>8} "
              f"{'sec':>6}")
        for r in res["rows"]:
            print(f"{r['budget']:>6.0%} {r['method']:>9} {r['val_acc']:>8.3f} "
                  f"{r['test_acc']:>8.3f} {r['val_cost']:>8.2f} {r['seconds']:>6.1f}")
    timing = time_fixed_lam(args.seed)
    print("\noptimize_ensemble(brier), spambase, 40 trees x 2,000 validation rows:")
    for r in timing:
        print(f"  lam={r['lam']:g}: {r['seconds']:.1f}s, {r['iterations']} sweeps, "
              f"cost {r['cost_share']:.0%} of unpruned, best start {r['start']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"datasets": results, "timing": timing}, fh, indent=1)


if __name__ == "__main__":
    main()
