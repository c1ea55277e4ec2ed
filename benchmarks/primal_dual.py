"""Primal-dual vs exact references on a real dataset: iterations and seconds to reach
a 1e-3 and 1e-4 certified gap, step-rule/initialisation variants, n_jobs, warm starts.

    python benchmarks/primal_dual.py --dataset magic --max-depth 8 --lam 0.002 0.01 \
        --references mincut highs --json primal_dual.json
"""
import argparse
import json
import time

import numpy as np
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.datasets import load_dataset

ap = argparse.ArgumentParser()
ap.add_argument("--dataset", default="magic")
ap.add_argument("--trees", type=int, default=40)
ap.add_argument("--rows", type=int, default=5000)
ap.add_argument("--max-depth", type=int, default=10)
ap.add_argument("--lam", type=float, nargs="+", default=[0.002, 0.01])
ap.add_argument("--configs", nargs="+", default=['{}'])
ap.add_argument("--n-jobs", type=int, nargs="+", default=[1])
ap.add_argument("--references", nargs="*", default=["highs"])
ap.add_argument("--json")
a = ap.parse_args()
d = load_dataset(a.dataset)
rng = np.random.default_rng(0)
idx = rng.permutation(len(d.y))
tr, va = idx[:a.rows], idx[a.rows:2 * a.rows]
rf = RandomForestClassifier(n_estimators=a.trees, max_depth=a.max_depth, random_state=0,
                            n_jobs=1).fit(d.X[tr], d.y[tr])
rows = []
prev = None
for lam in a.lam:
    t = time.perf_counter()
    P = po.compile_problem(rf, d.X[va], d.y[va], costs=d.costs_or_uniform(), lam=lam,
                           train=(d.X[tr], d.y[tr]))
    comp = time.perf_counter() - t
    print(P, "nnz", P.size()["nnz"], f"compile {comp:.2f}s", flush=True)
    exact = None
    for ref in a.references:
        t = time.perf_counter()
        h = po.solve(P, solver=ref)
        exact = h.objective
        rows.append(dict(lam=lam, solver=ref, seconds=time.perf_counter() - t, objective=exact))
        print(rows[-1], flush=True)
    for cfg in a.configs:
        for nj in a.n_jobs:
            opts = dict(max_iter=5000, gap_tol=1e-4, n_jobs=nj, **json.loads(cfg))
            t = time.perf_counter()
            r = po.solve(P, solver="primal-dual", solver_options=opts)
            s = time.perf_counter() - t
            hist = r.solve_info["history"]
            gaps = (hist["best_objective"] - hist["best_bound"]) / hist["best_objective"]
            row = dict(lam=lam, solver="primal-dual", config=cfg, n_jobs=nj, seconds=s,
                       iterations=r.solve_info["iterations"], status=r.solve_info["status"],
                       gap=r.solve_info["gap"], objective=r.objective,
                       rel_err_vs_reference=None if exact is None else (r.objective - exact) / exact)
            for tol in (1e-3, 1e-4):
                hit = np.flatnonzero(gaps <= tol)
                row[f"it@{tol:g}"] = int(hit[0]) + 1 if hit.size else None
                row[f"s@{tol:g}"] = float(hist["seconds"][hit[0]]) if hit.size else None
            rows.append(row)
            print(row, flush=True)
    # warm start from the previous lambda's duals
    if prev is not None:
        duals = prev[1] * (lam / prev[0])
        t = time.perf_counter()
        r = po.solve(P, solver="primal-dual", solver_options=dict(max_iter=5000, gap_tol=1e-4,
                                                                   warm_start=duals))
        row = dict(lam=lam, solver="primal-dual", config=f"warm from lam={prev[0]}",
                   seconds=time.perf_counter() - t, iterations=r.solve_info["iterations"],
                   status=r.solve_info["status"], gap=r.solve_info["gap"])
        rows.append(row)
        print(row, flush=True)
    prev = (lam, po.solve(P, solver="primal-dual", solver_options=dict(max_iter=5000, gap_tol=1e-4)).solve_info["duals"])
if a.json:
    with open(a.json, "w") as fh:
        json.dump(rows, fh, indent=1, default=float)

from prune_opt.cli._common import format_table  # noqa: E402

print(format_table(rows, ["lam", "solver", "config", "n_jobs", "seconds", "iterations",
                          "it@0.001", "s@0.001", "it@0.0001", "s@0.0001", "gap", "status"]))
