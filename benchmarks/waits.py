"""Where users wait: every slow step as a ratio to the work it is built on.

Each row times one thing a user runs and divides it by its *basis*, the
work it cannot avoid, measured in the same run (so the ratios hold on a busy
machine even when the seconds do not):

* ``baseline <name>`` -- one baseline curve (every entry of
  ``prune_opt.budget.BASELINES``: its prunings plus ``baseline_curve``), as a
  multiple of one ``po.prune`` on the same forest and rows (target <= 10x);
* ``cli curve`` / ``cli compare`` -- ``prune-opt curve`` and ``prune-opt
  compare`` with their defaults, run through the installed entry point, as a
  multiple of one ``po.prune`` on the same split (targets: 15 s and 30 s at
  20 trees on spambase);
* ``exact prune`` -- ``compile_problem`` plus the min-cut solve on
  ``--exact-size`` rows, as a multiple of growing that forest on as many rows
  (target <= 0.5x at 100 trees x 100k rows); ``graph build`` divides the
  closure-graph build by its max-flow (one min-cut);
* ``cli tu-check`` -- ``prune-opt tu-check --matrix`` on a matrix written by
  ``prune-opt export``, as a multiple of that export, with the seconds of
  every method the check ran.

Only public APIs and the installed commands are called, so the script
measures whatever the code does today.

Usage::

    python benchmarks/waits.py --quick                 # CI-sized, about a minute
    python benchmarks/waits.py --json waits.json       # the sizes of the issue
    python benchmarks/waits.py --exact-size 100x1M     # the exact solve at scale
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FULL = {"baseline_dataset": "spambase", "baseline_trees": 50, "baseline_rows": 3500,
        "cli_dataset": "spambase", "cli_trees": 20, "exact_dataset": "elec",
        "exact_size": "100x100k", "tu_dataset": "digits", "tu_trees": 5, "tu_depth": 6}
QUICK = {"baseline_dataset": "spambase", "baseline_trees": 10, "baseline_rows": 600,
         "cli_dataset": "pima", "cli_trees": 5, "exact_dataset": "elec",
         "exact_size": "20x5k", "tu_dataset": "digits", "tu_trees": 2, "tu_depth": 4}
LAM = 1e-2


def _count(text):
    text = text.strip().lower()
    for suffix, mult in (("k", 1_000), ("m", 1_000_000)):
        if text.endswith(suffix):
            return int(float(text[:-1]) * mult)
    return int(text)


def parse_size(text):
    """``"100x1M"`` -> (100, 1_000_000)."""
    trees, _, rows = text.lower().partition("x")
    if not rows:
        raise ValueError(f"--exact-size must look like 100x1M, got {text!r}")
    return int(trees), _count(rows)


def _timed(func, *args, **kwargs):
    t0 = time.perf_counter()
    out = func(*args, **kwargs)
    return out, time.perf_counter() - t0


def _row(wait, seconds, basis, basis_seconds, target=None, note=""):
    return {"wait": wait, "seconds": seconds, "basis": basis, "basis_seconds": basis_seconds,
            "ratio": seconds / basis_seconds if basis_seconds else float("nan"),
            "target": target, "note": note}


def _entry_point():
    """The installed ``prune-opt`` command (next to this interpreter first)."""
    here = Path(sys.executable).parent / "prune-opt"
    found = str(here) if here.exists() else shutil.which("prune-opt")
    if found is None:
        raise SystemExit("the prune-opt command is not installed: pip install -e . first")
    return found


def _run_cli(args, timeout):
    """Wall time of one ``prune-opt`` command; raises with its stderr when it fails."""
    t0 = time.perf_counter()
    proc = subprocess.run([_entry_point(), *args], capture_output=True, text=True,
                          timeout=timeout, env=os.environ.copy())
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"prune-opt {' '.join(args)} exited {proc.returncode}: "
                           f"{proc.stderr.strip()[-500:]}")
    return seconds, proc.stdout


def _split(X, y, rows, seed):
    """Half of (up to ``2 * rows``) shuffled rows to grow on, the other half to prune on."""
    idx = np.random.default_rng(seed).permutation(len(y))[:2 * rows]
    half = idx.size // 2
    return X[idx[:half]], y[idx[:half]], X[idx[half:]], y[idx[half:]]


def _warm_up():
    """One tiny prune, so that no basis pays for the first import of a backend."""
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    import prune_opt as po

    X, y = load_iris(return_X_y=True)
    po.prune(RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y), X, y, lam=LAM)


def baseline_waits(dataset, trees, rows, seed, fit_jobs):
    """Every registered baseline's curve against one exact ``po.prune``."""
    from sklearn.ensemble import RandomForestClassifier

    import prune_opt as po
    from prune_opt.budget import BASELINES, baseline_curve, get_baseline
    from prune_opt.datasets import load_dataset

    ds = load_dataset(dataset)
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y)
    X_fit, y_fit, X_p, y_p = _split(X, y, rows, seed)
    costs = ds.costs_or_uniform()
    rf, fit_s = _timed(RandomForestClassifier(n_estimators=trees, random_state=seed,
                                              n_jobs=fit_jobs).fit, X_fit, y_fit)
    _, prune_s = _timed(po.prune, rf, X_p, y_p, costs=costs, lam=LAM)
    label = f"{dataset}, {trees} trees, {X_p.shape[0]:,} rows"
    out = [_row(f"fit forest ({label})", fit_s, "po.prune", prune_s)]
    for name in BASELINES:
        def curve(name=name):
            prunings = get_baseline(name)(rf, X_p, y_p, costs=costs)
            return prunings, baseline_curve(prunings, X_p, y=y_p, method=name)

        (prunings, _), s = _timed(curve)
        out.append(_row(f"baseline {name} ({label})", s, "po.prune", prune_s, target="<= 10x",
                        note=f"{len(prunings)} prunings"))
    return out, prune_s


def cli_waits(dataset, trees, seed, timeout):
    """``prune-opt curve`` and ``compare`` against one ``po.prune`` on the same split."""
    from sklearn.ensemble import RandomForestClassifier

    import prune_opt as po
    from prune_opt.datasets import load_dataset

    ds = load_dataset(dataset)
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y)
    X_fit, y_fit, X_p, y_p = _split(X, y, len(y) // 2, seed)
    n_val = X_p.shape[0] // 2  # the commands prune on a quarter, test on a quarter
    rf = RandomForestClassifier(n_estimators=trees, random_state=seed).fit(X_fit, y_fit)
    _, prune_s = _timed(po.prune, rf, X_p[:n_val], y_p[:n_val], costs=ds.costs_or_uniform(),
                        lam=LAM)
    out = []
    full = dataset == "spambase" and trees == 20
    for cmd, target in (("curve", "<= 15 s"), ("compare", "<= 30 s")):
        args = [cmd, "--dataset", dataset, "--trees", str(trees), "--seed", str(seed),
                "--no-progress"]
        try:
            s, _ = _run_cli(args, timeout)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            out.append(_row(f"cli {cmd} ({dataset}, {trees} trees)", float("nan"), "po.prune",
                            prune_s, note=f"failed: {exc}"[:200]))
            continue
        out.append(_row(f"cli {cmd} ({dataset}, {trees} trees)", s, "po.prune", prune_s,
                        target=target if full else None, note="prune-opt " + " ".join(args)))
    return out


def exact_waits(dataset, size, seed, fit_jobs):
    """Compile plus min-cut on ``size`` rows against growing that forest on as many."""
    from sklearn.ensemble import RandomForestClassifier

    import prune_opt as po
    from prune_opt.datasets import load_dataset

    trees, n = parse_size(size)
    ds = load_dataset(dataset)
    X, y = np.asarray(ds.X, dtype=float), np.asarray(ds.y)
    rng = np.random.default_rng(seed)
    # rows drawn with replacement, continuous columns jittered by 1% of their spread so
    # that they do not collapse onto the original rows (as benchmarks/solvers.py does)
    cont = [j for j in range(X.shape[1]) if np.unique(X[:, j]).size > 20]
    std = np.nanstd(X[:, cont], axis=0)

    def draw(m):
        pick = rng.choice(len(y), size=m, replace=True)
        Xd = X[pick].copy()
        Xd[:, cont] += rng.normal(size=(m, len(cont))) * (0.01 * std)
        return Xd, y[pick]

    X_fit, y_fit = draw(n)
    X_p, y_p = draw(n)
    rf, fit_s = _timed(RandomForestClassifier(n_estimators=trees, random_state=seed,
                                              n_jobs=fit_jobs).fit, X_fit, y_fit)
    del X_fit, y_fit
    problem, compile_s = _timed(po.compile_problem, rf, X_p, y_p,
                                costs=ds.costs_or_uniform(), lam=LAM)
    result, solve_s = _timed(po.solve, problem, solver="mincut")
    info = result.solve_info
    label = f"{dataset}, {trees} trees x {n:,} rows"
    graph = info.get("graph", {})
    note = (f"compile {compile_s:.1f} s + solve {solve_s:.1f} s; "
            f"{graph.get('n_uses', 0):,} first-use records -> {graph.get('n_arcs', 0):,} arcs")
    out = [_row(f"exact prune ({label})", compile_s + solve_s,
                f"fit forest (n_jobs={fit_jobs})", fit_s, target="<= 0.5x", note=note)]
    if "build_seconds" in info and info.get("flow_seconds"):
        out.append(_row(f"graph build ({label})", info["build_seconds"], "one max-flow",
                        info["flow_seconds"]))
    return out


def tu_waits(dataset, trees, depth, seed, timeout):
    """``tu-check`` on an exported matrix against writing that matrix."""
    with tempfile.TemporaryDirectory() as tmp:
        path, report = str(Path(tmp) / "A.mps"), str(Path(tmp) / "tu.json")
        export_s, _ = _run_cli(["export", "--dataset", dataset, "--trees", str(trees),
                                "--max-depth", str(depth), "--lam", str(LAM), "--seed",
                                str(seed), "--out", path], timeout)
        s, _ = _run_cli(["tu-check", "--matrix", path, "--json", report], timeout)
        rep = json.loads(Path(report).read_text()).get("report", {})
    methods = rep.get("timings") or rep.get("tried") or []
    note = (f"{rep.get('verdict', '?')} by {rep.get('method', '?')}, matrix "
            f"{' x '.join(map(str, rep.get('shape', [])))}; " +
            ", ".join(f"{m['method']} {m['seconds']:.2f} s" for m in methods))
    return [_row(f"cli tu-check ({dataset}, {trees} trees, depth {depth})", s,
                 "prune-opt export", export_s, note=note)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="small sizes (CI): " + ", ".join(f"{k}={v}" for k, v in QUICK.items()))
    p.add_argument("--exact-size", default=None,
                   help=f"trees x rows of the exact solve (default {FULL['exact_size']}; "
                        f"--quick {QUICK['exact_size']})")
    p.add_argument("--fit-jobs", type=int, default=2,
                   help="n_jobs of the forests grown as bases (default 2)")
    p.add_argument("--skip", default="",
                   help="comma-separated parts to leave out: baselines, cli, exact, tu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=900.0,
                   help="seconds allowed to each command run as a subprocess")
    p.add_argument("--json", default=None, metavar="OUT")
    args = p.parse_args(argv)
    cfg = dict(QUICK if args.quick else FULL)
    if args.exact_size:
        cfg["exact_size"] = args.exact_size
    parse_size(cfg["exact_size"])  # a malformed size stops before any work
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    unknown = skip - {"baselines", "cli", "exact", "tu"}
    if unknown:
        p.error(f"--skip: unknown part(s) {', '.join(sorted(unknown))}; "
                "choose from baselines, cli, exact, tu")
    rows = []
    _warm_up()
    parts = [("baselines", lambda: baseline_waits(cfg["baseline_dataset"],
                                                  cfg["baseline_trees"], cfg["baseline_rows"],
                                                  args.seed, args.fit_jobs)[0]),
             ("cli", lambda: cli_waits(cfg["cli_dataset"], cfg["cli_trees"], args.seed,
                                       args.timeout)),
             ("exact", lambda: exact_waits(cfg["exact_dataset"], cfg["exact_size"],
                                           args.seed, args.fit_jobs)),
             ("tu", lambda: tu_waits(cfg["tu_dataset"], cfg["tu_trees"], cfg["tu_depth"],
                                     args.seed, args.timeout))]
    for name, run in parts:
        if name in skip:
            continue
        got = run()
        for r in got:
            print(_format_row(r), flush=True)
        rows += got
    print()
    print(_format_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"config": cfg, "fit_jobs": args.fit_jobs,
                                               "rows": rows}, indent=2))
        print(f"wrote {args.json}")
    return 0


def _format_row(r):
    return (f"{r['wait']}: {r['seconds']:.2f} s = {r['ratio']:.2f} x {r['basis']} "
            f"({r['basis_seconds']:.2f} s)" + (f"  [target {r['target']}]" if r['target']
                                               else "") + (f"  {r['note']}" if r['note'] else ""))


def _format_table(rows):
    head = ["wait", "seconds", "basis", "basis s", "ratio", "target"]
    body = [[r["wait"], f"{r['seconds']:.2f}", r["basis"], f"{r['basis_seconds']:.2f}",
             f"{r['ratio']:.2f}x", r["target"] or ""] for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)) for line in [head] + body]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
