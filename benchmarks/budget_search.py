"""fit_budget's hard-budget search against the Lagrangian hull vertex and GreedyPrune.

Protocol: a 40-tree ``RandomForestClassifier(random_state=0)``; rows split
train 50% / validation 25% / test 25% (thyroid: its own test file; at most
4,000 rows); errors counted in-bag; budgets are fractions of the unpruned
forest's average acquisition cost on validation.  For each (dataset, budget):

* ``search``  -- ``fit_budget`` (objective, certified gap, seconds, accuracy);
* ``hull``    -- ``fit_budget(method="hull")``, the old answer;
* ``greedy``  -- GreedyPrune, the fitting pruning with the best validation
  accuracy (as in the frontier protocol) and the best fitting objective.

Usage::

    python benchmarks/budget_search.py [--datasets digits,thyroid,heart,pima]
        [--budgets 0.1,0.25,0.5] [--time-limit 30] [--max-rows 4000] [--json OUT]

``sec`` is the wall time of the whole ``fit_budget`` call (the problem is
compiled once beforehand and passed in).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np


def split(ds, seed=0, max_rows=4000):
    from sklearn.model_selection import train_test_split

    X, y = ds.X, ds.y
    if X.shape[0] > max_rows:  # a seeded random subsample: some files are sorted by class
        idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], max_rows, replace=False))
        X, y = X[idx], y[idx]
    strat = y if np.min(np.unique(y, return_counts=True)[1]) > 3 else None
    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=0.5, random_state=seed,
                                                  stratify=strat)
    if ds.X_test is not None:
        return X_tr, y_tr, X_rest, y_rest, ds.X_test, ds.y_test
    X_v, X_te, y_v, y_te = train_test_split(X_rest, y_rest, test_size=0.5, random_state=seed)
    return X_tr, y_tr, X_v, y_v, X_te, y_te


def run_dataset(name, fracs, time_limit, max_rows=4000):
    from sklearn.ensemble import RandomForestClassifier

    import prune_opt as po
    from prune_opt.budget import fit_budget, greedy_prunings
    from prune_opt.datasets import load_dataset

    ds = load_dataset(name)
    X_tr, y_tr, X_v, y_v, X_te, y_te = split(ds, max_rows=max_rows)
    rf = RandomForestClassifier(n_estimators=40, random_state=0).fit(X_tr, y_tr)
    costs = ds.costs_or_uniform()
    problem = po.compile_problem(rf, X_v, y_v, costs=costs, train=(X_tr, y_tr))
    full = problem.evaluate(problem.forest.full_split_mask()).average_cost
    greedy = [pf for _, pf in greedy_prunings(None, None, None, problem=problem)]
    rows = []
    for frac in fracs:
        budget = frac * full
        t0 = time.perf_counter()
        pf = fit_budget(problem, budget=budget, time_limit=time_limit)
        sec = time.perf_counter() - t0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            hull = fit_budget(problem, budget=budget, method="hull")
        fit = [g for g in greedy if g.breakdown.average_cost <= budget]
        g_acc = max(fit, key=lambda g: g.score(X_v, y_v))
        g_obj = min(g.breakdown.error_term for g in fit)
        info = pf.solve_info
        rows.append({
            "dataset": name, "frac": frac, "budget": budget, "rows": int(X_v.shape[0]),
            "search": {"objective": pf.breakdown.error_term, "bound": info["bound"],
                       "gap": info["gap"], "status": info["status"],
                       "found_by": info["found_by"], "seconds": sec,
                       "phase_seconds": info["phase_seconds"],
                       "val_acc": pf.score(X_v, y_v), "test_acc": pf.score(X_te, y_te),
                       "val_cost": pf.average_cost(X_v), "splits": pf.n_splits},
            "hull": {"objective": hull.breakdown.error_term, "val_acc": hull.score(X_v, y_v),
                     "test_acc": hull.score(X_te, y_te), "splits": hull.n_splits},
            "greedy": {"objective": g_obj, "val_acc": g_acc.score(X_v, y_v),
                       "test_acc": g_acc.score(X_te, y_te)},
        })
        print_row(rows[-1], flush=True)
    return rows


HEADER = (f"{'dataset':>8} {'B%':>4} | {'obj':>6} {'bound':>6} {'gap':>6} {'sec':>5} "
          f"{'val':>5} {'test':>5} {'found by':>26} | hull {'obj':>6} {'val':>5} {'test':>5} "
          f"| greedy {'obj':>6} {'val':>5} {'test':>5}")


def print_row(r, flush=False):
    s, h, g = r["search"], r["hull"], r["greedy"]
    print(f"{r['dataset']:>8} {100 * r['frac']:4.0f} | {s['objective']:6.4f} {s['bound']:6.4f} "
          f"{s['gap']:6.3f} {s['seconds']:5.1f} {s['val_acc']:5.3f} {s['test_acc']:5.3f} "
          f"{s['found_by'][:26]:>26} | {h['objective']:10.4f} {h['val_acc']:5.3f} "
          f"{h['test_acc']:5.3f} | {g['objective']:13.4f} {g['val_acc']:5.3f} "
          f"{g['test_acc']:5.3f}", flush=flush)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="digits,thyroid,heart,pima")
    ap.add_argument("--budgets", default="0.1,0.25,0.5")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--max-rows", type=int, default=4000,
                    help="rows used (train half, validation and test a quarter each); "
                         "8000 prunes on 2,000 validation rows")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    fracs = [float(v) for v in args.budgets.split(",")]
    print(HEADER)
    rows = []
    for name in args.datasets.split(","):
        rows += run_dataset(name, fracs, args.time_limit, args.max_rows)
    if args.json:
        from prune_opt._io import atomic_write

        with atomic_write(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
