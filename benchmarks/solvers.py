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

Usage::

    python benchmarks/solvers.py --quick
    python benchmarks/solvers.py --sizes 10x2k,10x20k,40x20k,100x100k --json out.json
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
# resident bytes per LP nonzero needed by each matrix backend (measured on this
# benchmark's LPs at 10x20k, rounded up), used to skip solves that cannot fit
BYTES_PER_NNZ = {"highs": 400, "glop": 450, "pdlp": 350, "cbc": 600, "cbc-ip": 600}
# backends that build their model element by element in Python
MAX_NNZ = {"cbc": 2_000_000, "cbc-ip": 300_000, "mincut-networkx": 400_000}


def parse_size(text):
    """'40x20k' -> (40, 20000)."""
    t, _, n = text.lower().partition("x")
    mult = {"k": 1_000, "m": 1_000_000}
    n = n.strip()
    if n and n[-1] in mult:
        return int(t), int(float(n[:-1]) * mult[n[-1]])
    return int(t), int(n)


def _rss_kb(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


# ----------------------------------------------------------------- child jobs

def make_problem(dataset, trees, n_val, lam, train_rows, seed, max_depth, path):
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
    rf = RandomForestClassifier(n_estimators=trees, max_depth=max_depth, random_state=seed,
                                n_jobs=1).fit(X[tr], y[tr])
    t0 = time.perf_counter()
    # errors are counted on the validation rows too (compile_problem's default): with
    # in-bag errors fully grown trees have none, and the optimum is trivially "keep all"
    problem = po.compile_problem(rf, X_val, y_val, costs=ds.costs_or_uniform(), lam=lam)
    seconds = time.perf_counter() - t0
    with open(path, "wb") as fh:
        pickle.dump(problem, fh, protocol=5)
    return {"compile_seconds": seconds, "compile_peak_mb": _rss_kb("VmHWM") / 1024,
            "resampled": bool(resampled), "n_train": int(n_train), **problem.size()}


def solve_problem(path, solver, time_limit):
    """Load a pickled problem, solve it, report seconds and memory."""
    import prune_opt as po

    with open(path, "rb") as fh:
        problem = pickle.load(fh)
    rss0 = _rss_kb("VmRSS")
    reset = _reset_peak()
    pruned = po.solve(problem, solver=solver, time_limit=time_limit)
    info = pruned.solve_info
    hwm = _rss_kb("VmHWM")
    return {"objective": float(pruned.objective), "bound": float(info["bound"]),
            "seconds": float(info["seconds"]), "status": info["status"],
            "max_frac": float(info["max_fractionality"]), "n_splits": int(pruned.n_splits),
            "peak_rss_mb": hwm / 1024, "solve_mb": (hwm - rss0) / 1024 if reset else None,
            **{k: info[k] for k in ("build_seconds", "flow_seconds") if k in info},
            **({"graph_arcs": info["graph"]["n_arcs"]} if "graph" in info else {})}


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
    p.add_argument("--json", default=None, metavar="OUT")
    args = p.parse_args(argv)

    import prune_opt as po
    from prune_opt.solvers._base import available_memory

    sizes = [parse_size(s) for s in (args.sizes or (QUICK_SIZES if args.quick
                                                    else DEFAULT_SIZES)).split(",")]
    installed = po.available_solvers()
    solvers = [s.strip() for s in args.solvers.split(",")] if args.solvers else installed
    bad = [s for s in solvers if s not in installed]
    if bad:
        p.error(f"--solvers: not installed: {bad}; installed: {installed}")
    rows, summaries = [], []
    tmp = Path(tempfile.mkdtemp(prefix="prune-opt-bench-"))
    try:
        for trees, n_val in sizes:
            label = f"{trees}x{n_val:,}"
            path = str(tmp / f"problem_{trees}_{n_val}.pkl")
            ok, size = run_isolated(make_problem, (args.dataset, trees, n_val, args.lam,
                                                   args.train_rows, args.seed,
                                                   args.max_depth, path), args.timeout)
            if not ok:
                print(f"{label}: compile failed: {size}", flush=True)
                rows.append({"size": label, "solver": "(compile)", "status": size})
                continue
            print(f"{label}{' (resampled)' if size['resampled'] else ''}: compiled in "
                  f"{size['compile_seconds']:.1f}s (peak {size['compile_peak_mb']:.0f} MB): "
                  f"{size['n_uses']:,} uses, {size['n_pairs']:,} pairs, "
                  f"{size['nnz']:,} LP nnz", flush=True)
            size_rows = []
            for s in solvers:
                base = {"size": label, "trees": trees, "examples": n_val,
                        "resampled": size["resampled"], "solver": s,
                        "n_uses": size["n_uses"], "n_pairs": size["n_pairs"],
                        "nnz": size["nnz"], "compile_seconds": size["compile_seconds"]}
                why = skip_reason(s, size, available_memory())
                if why is None:
                    ok, res = run_isolated(solve_problem, (path, s, None), args.timeout)
                    row = {**base, **res} if ok else {**base, "status": res}
                else:
                    row = {**base, "status": why}
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
    finally:
        for f in tmp.glob("*"):
            f.unlink()
        tmp.rmdir()
    _print_table(rows)
    for s in summaries:
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


def _print_table(rows):
    cols = ["size", "resampled", "solver", "seconds", "peak_rss_mb", "solve_mb", "objective",
            "gap_to_best", "n_splits", "n_uses", "n_pairs", "status"]

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
