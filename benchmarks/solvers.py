"""Benchmark every pruning backend side by side, from small problems to the largest that fit.

For each size ``TxN`` (T trees, N validation/cost examples) a random forest
is grown on a fixed training split of a real dataset (``prune_opt.datasets``),
the BudgetPrune program is compiled once in a fresh process and pickled, and
each backend then solves it in its own fresh process (multiprocessing
"spawn"), so every peak-RSS figure is clean:

* ``peak_rss_mb``: the solving process's resident high-water mark (Python,
  libraries, the loaded problem and the solve);
* ``solve_mb``: the part due to the solve alone (the high-water mark is reset
  through ``/proc/self/clear_refs`` after loading, Linux only).

When N exceeds the rows left after the training split, validation rows are
drawn with replacement and continuous columns (more than 20 distinct values)
get Gaussian noise of 1% of their standard deviation, so that they do not
collapse onto the original rows; the table says ``resampled`` then.

LP backends are skipped, with the reason printed, when the LP's estimated
memory exceeds what is available or a backend's size limit; every solve is
also killed after ``--timeout`` seconds.

A size may carry a suffix: ``100x5M@250k`` compiles with ``cost_sample=250000``
(``100x5M@auto`` with ``cost_sample="auto"``)
(the cost term on a uniform sample; the solve row then also reports the
pruning's true objective on all rows, and its gap to an exact row of the same
size when one ran), and ``100x1M:dask`` compiles on a Dask ``LocalCluster``
(``--dask-workers`` processes, one thread each), reporting the peak RSS of
the driver and of every worker.

Usage::

    python benchmarks/solvers.py --quick
    python benchmarks/solvers.py --sizes 10x2k,10x20k,40x20k,100x100k --json out.json
    python benchmarks/solvers.py --solvers mincut --sizes 100x500k,100x1M,100x1M@250k
    python benchmarks/solvers.py --solvers mincut --sizes 100x5M@250k,100x1M:dask
    python benchmarks/solvers.py --scale              # mincut at 250k, 1M and 2M rows

Rows measured with ``--solvers mincut`` (elec resampled, 100 fully grown trees,
lam 1e-2), before -> after the leaf-gather routing and the faster graph build.
CPU seconds, since the machine was shared (wall times were 2-4x longer; on an
idle machine they match the CPU times within 3%); peaks are resident memory:

    size       compile CPU       compile peak      solve CPU         solve peak
    100x250k   26.3 s -> 7.8 s   2.17 -> 2.05 GB   35.1 s -> 28.7 s  2.36 -> 2.37 GB
    100x1M     129 s -> 25.0 s   5.1 -> 5.2 GB     162 s -> 94.9 s   8.2 -> 8.3 GB

The objective, the splits and the reduced graph are unchanged at both sizes.
Then with the records kept as the rows' leaves (``--sizes 100x1M,100x2M``, load
about 3.5 on 2 cores, one run; ``total_cpu_seconds`` is compile plus solve and
``cpu_over_fit`` divides it by growing the benchmark's forest in the same run):

    size       compile CPU  compile peak  solve CPU  solve peak  total CPU  x fit
    100x1M     15.6 s       0.99 GB       58.0 s     2.78 GB     73.6 s     83x
    100x2M     31.2 s       1.68 GB       104.6 s    4.10 GB     135.8 s    157x

(1M: the same objective, splits and arcs as above; 119.9 s and 8.3 GB before.)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import pickle
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

DEFAULT_SIZES = "10x2k,10x20k,40x20k,100x100k,100x500k"
QUICK_SIZES = "10x2k,10x20k"
# the exact solve at scale (mincut only: no LP fits); see docs/math/closure.md for the
# measured rows
SCALE_SIZES = "100x250k,100x1M,100x2M"
# resident bytes per LP nonzero needed by each matrix backend (measured on this
# benchmark's LPs at 10x20k, rounded up), used to skip solves that cannot fit
BYTES_PER_NNZ = {"highs": 400, "glop": 450, "pdlp": 350, "cbc": 600, "cbc-ip": 600}
# backends that build their model element by element in Python
MAX_NNZ = {"cbc": 2_000_000, "cbc-ip": 300_000, "mincut-networkx": 400_000}


def _count(n):
    mult = {"k": 1_000, "m": 1_000_000}
    n = n.strip()
    if n and n[-1] in mult:
        return int(float(n[:-1]) * mult[n[-1]])
    return int(n)


def parse_size(text):
    """'40x20k' -> (40, 20000); '100x5M@250k' -> (100, 5000000, 250000, False);
    '100x5M@auto' -> (100, 5000000, 'auto', False); '100x1M:dask' -> (100, 1000000,
    None, True)."""
    text = text.lower().strip()
    dask = text.endswith(":dask")
    text = text.removesuffix(":dask")
    text, _, sample = text.partition("@")
    t, _, n = text.partition("x")
    if not sample and not dask:
        return int(t), _count(n)
    sample = sample if sample == "auto" else (_count(sample) if sample else None)
    return int(t), _count(n), sample, dask


def _rss_kb(key):
    from prune_opt.cli._memory import proc_status_kb

    return proc_status_kb(key) or 0


# ----------------------------------------------------------------- child jobs

def _worker_peak_mb():
    return _rss_kb("VmHWM") / 1024


def make_problem(dataset, trees, n_val, lam, train_rows, seed, max_depth, path,
                 cost_sample=None, dask_workers=0):
    """Grow the forest, build the validation rows, compile, pickle to ``path``."""
    from sklearn.ensemble import RandomForestClassifier

    import prune_opt as po
    from prune_opt.datasets import load_dataset

    ds = load_dataset(dataset)
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    n_train = min(train_rows, len(y) // 2)
    tr, rest = perm[:n_train], perm[n_train:]
    resampled = n_val > rest.size
    if resampled:
        pick = rng.choice(rest, size=n_val, replace=True)
        X_val, y_val = X[pick].copy(), y[pick]
        cont = [j for j in range(X.shape[1]) if np.unique(X[:, j]).size > 20]
        std = np.nanstd(X[:, cont], axis=0)
        X_val[:, cont] += rng.normal(size=(n_val, len(cont))) * (0.01 * std)
    else:
        X_val, y_val = X[rest[:n_val]], y[rest[:n_val]]
    f0, fc0 = time.perf_counter(), time.process_time()
    rf = RandomForestClassifier(n_estimators=trees, max_depth=max_depth, random_state=seed,
                                n_jobs=1).fit(X[tr], y[tr])
    fit_seconds, fit_cpu = time.perf_counter() - f0, time.process_time() - fc0
    client = cluster = None
    if dask_workers:
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=dask_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    setup_mb = _rss_kb("VmRSS") / 1024
    t0, c0 = time.perf_counter(), time.process_time()
    # errors are counted on the validation rows too (compile_problem's default): with
    # in-bag errors fully grown trees have none, and the optimum is trivially "keep all"
    problem = po.compile_problem(rf, X_val, y_val, costs=ds.costs_or_uniform(), lam=lam,
                                 cost_sample=cost_sample, client=client)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    workers_mb = None
    if client is not None:
        workers_mb = sorted(client.run(_worker_peak_mb).values())
        client.close()
        cluster.close()
    with open(path, "wb") as fh:
        pickle.dump(problem, fh, protocol=5)
    if cost_sample is not None:  # the solver process measures the true cost on all rows
        np.save(path + ".X.npy", X_val)
    return {"compile_seconds": seconds, "compile_cpu_seconds": cpu,
            "fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu,
            "compile_peak_mb": _rss_kb("VmHWM") / 1024, "setup_mb": setup_mb, "workers_peak_mb": workers_mb,
            "resampled": bool(resampled), "n_train": int(n_train), **problem.size()}


def solve_problem(path, solver, time_limit):
    """Load a pickled problem, solve it, report seconds and memory."""
    import prune_opt as po

    with open(path, "rb") as fh:
        problem = pickle.load(fh)
    rss0 = _rss_kb("VmRSS")
    from prune_opt._memory import estimate_solve_memory, estimate_solve_sizes
    from prune_opt.cli._memory import reset_peak_rss

    est = estimate_solve_memory(problem, solver)
    upper = estimate_solve_sizes(problem.n_uses, problem.n_pairs, problem.n_nodes,
                                 reduced=False)

    reset = reset_peak_rss()
    c0 = time.process_time()
    pruned = po.solve(problem, solver=solver, time_limit=time_limit)
    cpu = time.process_time() - c0
    info = pruned.solve_info
    hwm = _rss_kb("VmHWM")
    sampled = {}
    if problem.cost_sample is not None:
        from prune_opt.program._sampling import cost_sample_report

        t_true = time.process_time()
        rep = cost_sample_report(problem, pruned.split_mask, np.load(path + ".X.npy"))
        sampled["true_cost_cpu_seconds"] = time.process_time() - t_true
        sampled.update(true_objective=rep["true_objective"], true_in_ci=rep["true_in_ci"],
                       cost_ci=list(rep["cost_ci"]), true_cost=rep["true_average_cost"],
                       n_sample=rep["n_sample"])
    return {**sampled, "cpu_seconds": cpu, "objective": float(pruned.objective),
            "bound": float(info["bound"]),
            "seconds": float(info["seconds"]), "status": info["status"],
            "max_frac": float(info["max_fractionality"]), "n_splits": int(pruned.n_splits),
            "peak_rss_mb": hwm / 1024, "solve_mb": (hwm - rss0) / 1024 if reset else None,
            **{k: info[k] for k in ("build_seconds", "flow_seconds") if k in info},
            "solve_estimate_mb": est["bytes"] / 2**20,
            "solve_upper_estimate_mb": upper["bytes"] / 2**20,
            **({"graph_arcs": info["graph"]["n_arcs"],
                "graph_hubs": info["graph"].get("n_hubs", 0)} if "graph" in info else {})}


def _child(conn, func, args):
    try:
        conn.send(("ok", func(*args)))
    except BaseException as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}".splitlines()[0],
                   traceback.format_exc()))
    finally:
        conn.close()


def run_isolated(func, args, timeout):
    """Run ``func(*args)`` in a fresh spawned process; returns (ok, payload)."""
    ctx = mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, func, args))
    proc.start()
    send.close()
    msg = None
    if recv.poll(timeout):
        try:
            msg = recv.recv()
        except EOFError:
            msg = None
        proc.join()
    else:
        proc.kill()
        proc.join()
        return False, f"timeout: killed after {timeout:g}s"
    if msg is None:
        code = proc.exitcode
        return False, ("killed by the kernel (out of memory)" if code == -9
                       else f"process died (exit code {code})")
    if msg[0] == "error":
        return False, msg[1]
    return True, msg[1]


# ----------------------------------------------------------------- driver

def skip_reason(solver, size, available):
    nnz = size["nnz"]
    if solver in MAX_NNZ:
        measure = nnz if solver != "mincut-networkx" else size["n_uses"] + size["n_nodes"]
        if measure > MAX_NNZ[solver]:
            return f"skipped: {measure:,} > {MAX_NNZ[solver]:,} (Python-built model)"
    if solver in BYTES_PER_NNZ and available is not None:
        need = nnz * BYTES_PER_NNZ[solver]
        if need > 0.9 * available:
            return (f"skipped: LP with {nnz:,} nnz needs ~{need / 2**30:.0f} GiB, "
                    f"{available / 2**30:.0f} GiB available")
    return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default=None,
                   help=f"comma-separated TREESxEXAMPLES (default {DEFAULT_SIZES})")
    p.add_argument("--solvers", default=None,
                   help="comma-separated backends (default: every installed one)")
    p.add_argument("--dataset", default="elec", help="real dataset (default elec)")
    p.add_argument("--lam", type=float, default=1e-2, help="cost weight (default 1e-2)")
    p.add_argument("--train-rows", type=int, default=10_000,
                   help="rows used to grow the forest (default 10000)")
    p.add_argument("--max-depth", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=1800.0,
                   help="seconds after which a solve is killed (default 1800)")
    p.add_argument("--quick", action="store_true", help=f"only {QUICK_SIZES}")
    p.add_argument("--scale", action="store_true",
                   help=f"the exact solve at scale: mincut on {SCALE_SIZES}")
    p.add_argument("--dask-workers", type=int, default=2,
                   help="workers of the LocalCluster for ':dask' sizes (default 2)")
    p.add_argument("--json", default=None, metavar="OUT")
    args = p.parse_args(argv)

    import prune_opt as po
    from prune_opt.solvers._base import available_memory

    default = SCALE_SIZES if args.scale else QUICK_SIZES if args.quick else DEFAULT_SIZES
    sizes = [parse_size(s) for s in (args.sizes or default).split(",")]
    installed = po.available_solvers()
    solvers = ([s.strip() for s in args.solvers.split(",")] if args.solvers
               else ["mincut"] if args.scale else installed)
    bad = [s for s in solvers if s not in installed]
    if bad:
        p.error(f"--solvers: not installed: {bad}; installed: {installed}")
    rows, summaries = [], []
    tmp = Path(tempfile.mkdtemp(prefix="prune-opt-bench-"))
    try:
        for spec in sizes:
            trees, n_val, sample, dask = (*spec, None, False)[:4]
            label = (f"{trees}x{n_val:,}" + (f"@{sample:,}" if isinstance(sample, int)
                                             else f"@{sample}" if sample else "")
                     + (":dask" if dask else ""))
            path = str(tmp / f"problem_{trees}_{n_val}.pkl")
            ok, size = run_isolated(make_problem, (args.dataset, trees, n_val, args.lam,
                                                   args.train_rows, args.seed,
                                                   args.max_depth, path, sample,
                                                   args.dask_workers if dask else 0),
                                    args.timeout)
            if not ok:
                print(f"{label}: compile failed: {size}", flush=True)
                rows.append({"size": label, "solver": "(compile)", "status": size})
                continue
            print(f"{label}{' (resampled)' if size['resampled'] else ''}: compiled in "
                  f"{size['compile_seconds']:.1f}s (peak {size['compile_peak_mb']:.0f} MB): "
                  f"{size['n_uses']:,} uses, {size['n_pairs']:,} pairs, "
                  f"{size['nnz']:,} LP nnz"
                  + (f"; workers' peak {size['workers_peak_mb']} MB"
                     if size["workers_peak_mb"] else ""), flush=True)
            size_rows = []
            for s in solvers:
                base = {"size": label, "trees": trees, "examples": n_val,
                        "cost_sample": sample, "dask": dask,
                        "compile_peak_mb": size["compile_peak_mb"],
                        "compile_cpu_seconds": size.get("compile_cpu_seconds"),
                        "fit_cpu_seconds": size.get("fit_cpu_seconds"),
                        "workers_peak_mb": size["workers_peak_mb"],
                        "resampled": size["resampled"], "solver": s,
                        "n_uses": size["n_uses"], "n_pairs": size["n_pairs"],
                        "nnz": size["nnz"], "compile_seconds": size["compile_seconds"]}
                why = skip_reason(s, size, available_memory())
                if why is None:
                    ok, res = run_isolated(solve_problem, (path, s, None), args.timeout)
                    row = {**base, **res} if ok else {**base, "status": res}
                else:
                    row = {**base, "status": why}
                if "cpu_seconds" in row and row.get("compile_cpu_seconds") is not None:
                    # compile plus solve CPU, and as a multiple of growing the forest
                    row["total_cpu_seconds"] = row["compile_cpu_seconds"] + row["cpu_seconds"]
                    row["cpu_over_fit"] = row["total_cpu_seconds"] / max(
                        size["fit_cpu_seconds"], 1e-9)
                print(f"  {s:16s} " + (f"{row['seconds']:9.2f}s  peak "
                                       f"{row['peak_rss_mb']:8.0f} MB  obj "
                                       f"{row['objective']:.12g}" if "objective" in row
                                       else row["status"]), flush=True)
                size_rows.append(row)
            objs = [r["objective"] for r in size_rows if "objective" in r]
            best = min(objs) if objs else None
            for r in size_rows:
                if "objective" in r:
                    r["gap_to_best"] = (r["objective"] - best) / max(abs(best), 1e-12)
            by = {r["solver"]: r for r in size_rows if "seconds" in r}
            if "mincut" in by:
                others = {k: v["seconds"] / by["mincut"]["seconds"] for k, v in by.items()
                          if k != "mincut"}
                summaries.append({"size": label, "speedup_of_mincut": others,
                                  "max_gap": max(r["gap_to_best"] for r in by.values())})
            rows.extend(size_rows)
            os.unlink(path)
            if os.path.exists(path + ".X.npy"):
                os.unlink(path + ".X.npy")
    finally:
        for f in tmp.glob("*"):
            f.unlink()
        tmp.rmdir()
    _sampled_gaps(rows, summaries)
    _print_table(rows)
    for s in summaries:
        if "gap_sampled_vs_exact" in s:
            print(f"{s['size']}: sampled objective (true cost) vs exact: "
                  f"{s['gap_sampled_vs_exact']:+.2e}")
            continue
        sp = ", ".join(f"{k} {v:.0f}x" for k, v in s["speedup_of_mincut"].items())
        print(f"{s['size']}: largest gap to best {s['max_gap']:.1e}; mincut faster than: "
              f"{sp or '-'}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"dataset": args.dataset, "lam": args.lam,
                                               "train_rows": args.train_rows,
                                               "max_depth": args.max_depth, "rows": rows,
                                               "summary": summaries}, indent=2))
        print(f"wrote {args.json}")
    return 0


def _sampled_gaps(rows, summaries):
    """Gap of each sampled row's true objective to the exact row of the same size."""
    exact = {(r["trees"], r["examples"], r["solver"]): r["objective"] for r in rows
             if "objective" in r and not r.get("cost_sample")}
    for r in rows:
        key = (r.get("trees"), r.get("examples"), r.get("solver"))
        if r.get("cost_sample") and "true_objective" in r and key in exact:
            r["gap_sampled_vs_exact"] = (r["true_objective"] - exact[key]) / exact[key]
            summaries.append({"size": r["size"], "gap_sampled_vs_exact":
                              r["gap_sampled_vs_exact"]})


def _print_table(rows):
    cols = ["size", "resampled", "solver", "compile_seconds", "compile_cpu_seconds",
            "compile_peak_mb", "seconds", "cpu_seconds", "total_cpu_seconds",
            "fit_cpu_seconds", "cpu_over_fit", "peak_rss_mb", "solve_mb",
            "solve_estimate_mb", "graph_arcs", "objective", "true_objective", "gap_to_best",
            "gap_sampled_vs_exact", "n_splits", "n_uses", "n_pairs", "status"]

    def fmt(v):
        if isinstance(v, float):
            return f"{v:.4g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.1e}"
        return "" if v is None else str(v)

    cells = [[fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    print("  ".join(c.rjust(w) for c, w in zip(cols, widths)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(v.rjust(w) for v, w in zip(row, widths)))


if __name__ == "__main__":
    sys.exit(main())
