"""Wall time and quality of ``fit_budget`` at its defaults on a real table.

A random forest of ``--trees`` trees is grown on one half of ``--rows`` rows
of spambase (or magic), and ``fit_budget`` prunes it on the other half to 10,
25 and 50% of the full forest's cost; each call is repeated ``--repeats``
times and the median wall time printed with the held-out accuracy (test rows
neither grew nor pruned the forest).  Usage::

    python benchmarks/fit_budget_default.py [--dataset spambase] [--trees 40]
        [--rows 2000] [--repeats 5] [--objective auto] [--time-limit default] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.datasets import load_dataset


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="spambase")
    ap.add_argument("--trees", type=int, default=40)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--objective", default=None, help="default: fit_budget's own default")
    ap.add_argument("--time-limit", default="default")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    ds = load_dataset(a.dataset)
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))
    tr, va, te = idx[:a.rows // 2], idx[a.rows // 2:a.rows], idx[a.rows:a.rows + 2000]
    rf = RandomForestClassifier(a.trees, random_state=0, n_jobs=1).fit(X[tr], y[tr])
    costs = ds.costs if getattr(ds, "costs", None) is not None else None
    full = float(po.acquisition_cost(rf, X[va], costs).mean())
    kw = {} if a.objective is None else {"objective": a.objective}
    if a.time_limit != "default":
        kw["time_limit"] = None if a.time_limit == "none" else float(a.time_limit)
    rows = []
    for share in (0.10, 0.25, 0.50):
        secs, accs = [], []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            pf = po.fit_budget(rf, X[va], y[va], costs=costs, budget=share * full, **kw)
            secs.append(time.perf_counter() - t0)
            accs.append(pf.score(X[te], y[te]))
        rows.append({"share": share, "median_seconds": statistics.median(secs),
                     "max_seconds": max(secs), "test_accuracy": statistics.median(accs),
                     "objective": pf.solve_info.get("objective", "paper"),
                     "chosen": pf.solve_info.get("auto", {}).get("chosen")})
    if a.json:
        print(json.dumps(rows))
    else:
        print(f"{a.dataset}: {a.trees} trees, {a.rows} rows, kwargs={kw}")
        for r in rows:
            print(f"  {r['share']:>4.0%}  median {r['median_seconds']:6.2f}s  "
                  f"max {r['max_seconds']:6.2f}s  test acc {r['test_accuracy']:.4f}  "
                  f"{r['objective']} {r['chosen'] or ''}")
    return rows


if __name__ == "__main__":
    main()
