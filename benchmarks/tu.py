"""Time to certify total unimodularity of growing BudgetPrune constraint matrices.

For each (trees, examples, depth) setting a random forest is grown on one
sample of the dataset and the program is compiled on another; the full
constraint matrix is then checked with every method:

* network - the pruning-tree network certificate (verified path by path);
* cmr     - CMR's Seymour decomposition (passagemath-cmr, if installed);
* brute   - exhaustive subdeterminants (only tiny matrices fit its limit);
* auto_bare - ``method="auto"`` on the bare integer matrix (the problem's
  structure dropped, as ``tu-check --matrix`` sees an exported file), with the
  seconds of every method it ran.

Usage::

    python benchmarks/tu.py                      # default grid on digits
    python benchmarks/tu.py --json tu.json --cmr-time-limit 120
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prune_opt import compile_problem  # noqa: E402
from prune_opt.checks import cmr_available, is_totally_unimodular  # noqa: E402
from prune_opt.checks._exact import as_integer_matrix  # noqa: E402
from prune_opt.cli._common import format_table, write_json  # noqa: E402
from prune_opt.datasets import load_dataset  # noqa: E402

DEFAULT_GRID = "1:4:1,1:6:2,2:30:3,3:100:4,5:300:6,10:300:8,10:1000:none,20:1000:none"


def parse_grid(text):
    out = []
    for item in text.split(","):
        t, n, d = item.split(":")
        out.append((int(t), int(n), None if d.lower() == "none" else int(d)))
    return out


def build(ds, trees, examples, depth, seed):
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(seed)
    n_fit = min(examples, ds.X.shape[0] - examples)
    idx = rng.permutation(ds.X.shape[0])
    fit = idx[:n_fit]
    rf = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed,
                                n_jobs=1).fit(ds.X[fit], ds.y[fit])
    rest = idx[n_fit:]
    comp = rest[np.isin(ds.y[rest], rf.classes_)][:examples]  # labels the forest knows
    return compile_problem(rf, ds.X[comp], ds.y[comp], costs=ds.costs_or_uniform(), lam=0.01)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="digits")
    ap.add_argument("--grid", default=DEFAULT_GRID,
                    help="comma-separated trees:examples:depth settings (depth 'none' = full)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cmr-time-limit", type=float, default=60.0)
    ap.add_argument("--brute-time-limit", type=float, default=30.0)
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)

    import networkx  # noqa: F401  (import once, outside the timings)

    ds = load_dataset(args.dataset)
    has_cmr, detail = cmr_available()
    if not has_cmr:
        print(f"cmr: {detail}")
    rows = []
    for trees, examples, depth in parse_grid(args.grid):
        problem = build(ds, trees, examples, depth, args.seed)
        s = problem.size()
        row = {"trees": trees, "examples": examples, "depth": depth or "full",
               "rows": s["n_rows"], "cols": s["n_variables"], "nnz": s["nnz"]}
        for method, limit in (("network", None), ("cmr", args.cmr_time_limit),
                              ("brute", args.brute_time_limit)):
            if method == "cmr" and not has_cmr:
                row["cmr"], row["cmr_s"] = "n/a", float("nan")
                continue
            t = time.perf_counter()
            rep = is_totally_unimodular(problem, method=method, time_limit=limit)
            row[f"{method}_s"] = time.perf_counter() - t
            row[method] = {True: "TU", False: "not TU", None: "undecided"}[rep.is_tu]
            if rep.is_tu is None:
                row[f"{method}_why"] = rep.reason[:80]
        # "auto" on the bare matrix, as tu-check sees an exported file: every method's time
        bare = as_integer_matrix(problem)[0]
        t = time.perf_counter()
        rep = is_totally_unimodular(bare, time_limit=args.cmr_time_limit)
        row["auto_bare_s"] = time.perf_counter() - t
        row["auto_bare"] = {True: "TU", False: "not TU", None: "undecided"}[rep.is_tu]
        row["auto_bare_methods"] = " ".join(f"{m['method']}:{m['seconds']:.2f}"
                                            for m in rep.timings)
        decided = {row[m] for m in ("network", "cmr", "brute", "auto_bare")
                   if row.get(m) in ("TU", "not TU")}
        row["agree"] = "yes" if len(decided) <= 1 else "NO"
        rows.append(row)
        print(format_table([row], ["trees", "examples", "depth", "rows", "cols", "nnz",
                                   "network", "network_s", "cmr", "cmr_s", "brute",
                                   "brute_s", "auto_bare", "auto_bare_s", "agree"]).splitlines()[-1],
              flush=True)
    print()
    print(format_table(rows, ["trees", "examples", "depth", "rows", "cols", "nnz", "network",
                              "network_s", "cmr", "cmr_s", "brute", "brute_s", "auto_bare",
                              "auto_bare_s", "agree"]))
    print("auto on the bare matrix (as tu-check reads an exported file), seconds per method:")
    for r in rows:
        print(f"  {r['trees']} trees / {r['examples']} ex: {r['auto_bare_methods']}")
    for r in rows:
        for m in ("network", "cmr", "brute"):
            if f"{m}_why" in r:
                print(f"  {r['trees']} trees / {r['examples']} ex: {m} undecided: "
                      f"{r[f'{m}_why']}")
    if args.json:
        write_json(args.json, {"dataset": args.dataset, "seed": args.seed, "rows": rows})
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
