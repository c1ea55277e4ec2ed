"""Accuracy at matched cost: BudgetPrune against its competitors on real datasets.

For every dataset of :mod:`prune_opt.datasets` (real costs where published,
uniform otherwise; large sets subsampled), a random forest is grown on half
of the rows, pruned on a quarter (validation) and scored on the rest (test).
Each method yields a family of prunings:

* ``budgetprune``: the exact BudgetPrune trade-off curve (hull vertices);
* ``ccp``: per-tree cost-complexity pruning at a common alpha;
* ``greedy``: GreedyPrune (remove the feature with the best error/cost ratio);
* ``fewer-trees``: the first m trees;
* ``impurity``: BudgetRF-style impurity-threshold early stopping.

At budgets of 25/50/75% of the unpruned forest's validation cost, each method
picks, among its prunings whose *validation* cost is within the budget, the
one with the best validation accuracy; the table prints its *test* accuracy
(and its test cost).  A second table runs :func:`prune_opt.budget.fit_budget`
at the same budgets and reports how far the test cost lands from the budget.

Usage::

    python benchmarks/curves.py [--datasets a,b] [--trees 20] [--max-rows 2000]
                                [--cost-resolution 0.01] [--json OUT]
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

FRACS = (0.25, 0.5, 0.75)
METHODS = ("budgetprune", "ccp", "greedy", "fewer-trees", "impurity")


def split(ds, max_rows, seed):
    from sklearn.model_selection import train_test_split

    rng = np.random.default_rng(seed)
    X, y = ds.X, ds.y
    if X.shape[0] > max_rows:
        idx = rng.choice(X.shape[0], size=max_rows, replace=False)
        X, y = X[idx], y[idx]
    strat = y if np.min(np.unique(y, return_counts=True)[1]) >= 4 else None
    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=0.5, random_state=seed,
                                                  stratify=strat)
    X_v, X_te, y_v, y_te = train_test_split(X_rest, y_rest, test_size=0.5, random_state=seed)
    return X_tr, y_tr, X_v, y_v, X_te, y_te


def family(method, rf, problem, X_v, y_v, costs, cost_resolution):
    """List of PrunedForest of one method."""
    from prune_opt.budget import get_baseline, tradeoff_curve

    if method == "budgetprune":
        _, pts = tradeoff_curve(problem, cost_resolution=cost_resolution, return_points=True)
        return [q.pruned for q in pts]
    return [p for _, p in get_baseline(method)(rf, X_v, y_v, costs=costs, problem=problem)]


def pick(points, budget):
    """Best validation accuracy among points with validation cost <= budget."""
    ok = [p for p in points if p["val_cost"] <= budget * (1 + 1e-12)]
    if not ok:
        return None
    return max(ok, key=lambda p: (p["val_acc"], -p["val_cost"]))


def run_dataset(name, args):
    from sklearn.ensemble import RandomForestClassifier

    import prune_opt as po
    from prune_opt.budget import fit_budget
    from prune_opt.datasets import load_dataset

    ds = load_dataset(name)
    costs = ds.costs_or_uniform()
    X_tr, y_tr, X_v, y_v, X_te, y_te = split(ds, args.max_rows, args.seed)
    rf = RandomForestClassifier(n_estimators=args.trees, max_depth=args.max_depth,
                                random_state=args.seed, n_jobs=1).fit(X_tr, y_tr)
    train = (X_tr, y_tr) if args.error_data == "train" else None
    problem = po.compile_problem(rf, X_v, y_v, costs=costs, train=train)
    base_val = float(po.acquisition_cost(rf, X_v, costs).mean())
    base_te = float(po.acquisition_cost(rf, X_te, costs).mean())
    base_acc = float(np.mean(rf.predict(X_te) == y_te))
    out = {"dataset": name, "n_rows": int(len(y_tr) + len(y_v) + len(y_te)),
           "n_features": int(X_tr.shape[1]), "costs": "real" if ds.costs else "uniform",
           "trees": args.trees, "unpruned": {"test_accuracy": base_acc, "test_cost": base_te,
                                             "val_cost": base_val},
           "methods": {}, "fit_budget": []}
    hull = None
    for m in args.methods:
        t0 = time.perf_counter()
        fam = family(m, rf, problem, X_v, y_v, costs, args.cost_resolution * base_val)
        secs = time.perf_counter() - t0
        if m == "budgetprune":
            bds = sorted((problem.evaluate(p.split_mask) for p in fam),
                         key=lambda b: b.average_cost)
            hull = (np.array([b.average_cost for b in bds]), np.array([b.error_term for b in bds]))
        pts = [{"val_cost": p.average_cost(X_v), "val_acc": p.score(X_v, y_v),
                "test_cost": p.average_cost(X_te), "test_acc": p.score(X_te, y_te),
                "n_splits": p.n_splits} for p in fam]
        res = {"points": len(pts), "seconds": secs, "at": {}, "below_hull": None}
        if hull is not None and m in ("ccp", "greedy", "impurity"):
            # how many baseline prunings lie strictly below BudgetPrune's exact lower hull
            # in its own (cost, error) objective: 0 when the solves are exact
            bds = [problem.evaluate(p.split_mask) for p in fam]
            env = np.interp([b.average_cost for b in bds], *hull)
            margin = np.array([b.error_term for b in bds]) - env
            res["below_hull"] = int(np.sum(margin < -1e-12 * np.maximum(1.0, env)))
        for frac in FRACS:
            p = pick(pts, frac * base_val)
            res["at"][str(frac)] = None if p is None else {k: p[k] for k in (
                "test_acc", "test_cost", "val_cost", "val_acc")}
        out["methods"][m] = res
    for frac in FRACS:
        budget = frac * base_val
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            pf = fit_budget(problem, budget=budget)
        te = pf.average_cost(X_te)
        out["fit_budget"].append({
            "frac": frac, "budget": budget, "val_cost": pf.average_cost(X_v),
            "test_cost": te, "test_vs_budget": (te - budget) / budget,
            "test_acc": pf.score(X_te, y_te), "lam": pf.solve_info["lam"],
            "n_solves": pf.solve_info["n_solves"]})
    return out


def fmt(x, spec=".3f"):
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, spec)


def print_tables(results, methods):
    head = f"{'dataset':<9} {'method':<12} {'pts':>4} {'sec':>6} " + " ".join(
        f"{'acc@' + str(int(f * 100)) + '%':>8} {'cost':>7}" for f in FRACS) + (
        f" {'below hull':>10}")
    print(head)
    print("-" * len(head))
    for r in results:
        print(f"{r['dataset']:<9} {'unpruned':<12} {'':>4} {'':>6} {r['unpruned']['test_accuracy']:>8.3f}"
              f" {r['unpruned']['test_cost']:>7.3g}   ({r['costs']} costs, {r['n_rows']} rows)")
        for m in methods:
            res = r["methods"][m]
            cells = []
            for f in FRACS:
                a = res["at"][str(f)]
                cells.append(f"{fmt(a and a['test_acc']):>8} "
                             f"{fmt(a and a['test_cost'], '.3g'):>7}")
            print(f"{'':<9} {m:<12} {res['points']:>4} {res['seconds']:>6.1f} " + " ".join(cells)
                  + f" {fmt(res['below_hull'], 'd'):>10}")
    print()
    head = (f"{'dataset':<9} {'budget%':>7} {'budget':>8} {'val cost':>9} {'test cost':>9} "
            f"{'test-budget':>11} {'test acc':>8} {'lam':>9} {'solves':>6}")
    print(head)
    print("-" * len(head))
    for r in results:
        for b in r["fit_budget"]:
            print(f"{r['dataset']:<9} {int(b['frac'] * 100):>6}% {b['budget']:>8.3g} "
                  f"{b['val_cost']:>9.3g} {b['test_cost']:>9.3g} {b['test_vs_budget']:>+10.1%} "
                  f"{b['test_acc']:>8.3f} {b['lam']:>9.3g} {b['n_solves']:>6}")


def main(argv=None):
    from prune_opt.datasets import list_datasets

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=None, help="comma-separated (default: all)")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--trees", type=int, default=20)
    ap.add_argument("--max-depth", type=int, default=None)
    ap.add_argument("--max-rows", type=int, default=2000, help="subsample larger datasets")
    ap.add_argument("--cost-resolution", type=float, default=0.01,
                    help="BudgetPrune hull refinement, as a share of the unpruned cost "
                         "(0: every breakpoint)")
    ap.add_argument("--error-data", choices=("validation", "train"), default="validation",
                    help="count errors on the validation rows (default) or in-bag rows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    bad = [m for m in args.methods if m not in METHODS]
    if bad:
        ap.error(f"unknown methods {bad}; choose from {METHODS}")
    names = args.datasets.split(",") if args.datasets else list_datasets()
    results = []
    for name in names:
        t0 = time.perf_counter()
        try:
            results.append(run_dataset(name, args))
        except FileNotFoundError as exc:
            print(f"{name}: skipped ({exc})", file=sys.stderr)
            continue
        print(f"[{name}: {time.perf_counter() - t0:.1f}s]", file=sys.stderr, flush=True)
    print_tables(results, args.methods)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": {k: v for k, v in vars(args).items()},
                                               "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
