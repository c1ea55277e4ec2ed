"""Accuracy-cost table of cost-aware forest growers, with and without BudgetPrune.

For every real dataset (real feature costs for thyroid, heart and pima,
uniform costs elsewhere) the script fits, at equal tree counts:

* ``RF``: sklearn's RandomForestClassifier;
* ``BudgetRF``: the Feature-Budgeted Random Forest (forest_builders.budget_rf);
* ``CSRF``: the cost-sensitive random forest (forest_builders.cost_sensitive_rf);
* ``ACT``: bagged ACT trees (forest_builders.act), when importable;
* ``CEGB``: LightGBM's cost-efficient gradient boosting (forest_builders.cegb),
  when importable (boosted trees: reported unpruned);

and prunes each forest with ``prune_opt.prune(solver="auto")`` at the
smallest ``lam`` (geometric bisection on validation data) that at least halves
the forest's average validation cost.  Test accuracy and average test
acquisition cost (each unit paid once per example) are reported, plus each
grower's cost relative to RF at the same number of trees.

``--speed`` also times BudgetRF with 40 trees on a 20,000 x 50 synthetic set.

Usage::

    python benchmarks/growers.py --quick
    python benchmarks/growers.py --datasets thyroid,pima --trees 40 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import prune_opt as po  # noqa: E402
from forest_builders.budget_rf import BudgetRandomForestClassifier  # noqa: E402
from forest_builders.cost_sensitive_rf import CostSensitiveRandomForestClassifier  # noqa: E402
from prune_opt.cli._common import format_table  # noqa: E402
from prune_opt.datasets import list_datasets, load_dataset  # noqa: E402

ALL_DATASETS = ("thyroid", "heart", "pima", "spambase", "magic", "letter", "adult", "elec",
                "weather")


def _optional(module, name):
    try:
        mod = __import__(f"forest_builders.{module}", fromlist=[name])
        return getattr(mod, name), None
    except (ImportError, AttributeError) as exc:
        return None, f"not available ({exc.__class__.__name__}: {exc})"


def split_data(d, max_rows, seed):
    """Train / validation / test split; the official test split when there is one."""
    rng = np.random.default_rng(seed)
    X, y = d.X, d.y
    if d.X_test is not None:
        idx = rng.permutation(len(y))[:max_rows]
        n_val = len(idx) // 4
        test = (d.X_test, d.y_test)
        return (X[idx[n_val:]], y[idx[n_val:]]), (X[idx[:n_val]], y[idx[:n_val]]), test
    idx = rng.permutation(len(y))[: int(max_rows * 1.6)]
    n = len(idx)
    a, b = int(0.6 * n), int(0.8 * n)
    return ((X[idx[:a]], y[idx[:a]]), (X[idx[a:b]], y[idx[a:b]]), (X[idx[b:]], y[idx[b:]]))


def halve_cost_prune(model, val, costs, *, steps):
    """Prune at (about) the smallest lam that at least halves the validation cost.

    Geometric bracketing from ``lam = 1 / cost`` (factor 8), then geometric
    bisection; ``steps`` prunes in all.  Returns ``(pruned, lam)`` for the
    smallest lam tried whose validation cost is at most half the forest's.
    """
    Xv, yv = val
    full = po.acquisition_cost(model, Xv, costs).mean()
    target = full / 2.0
    if full <= 0:
        return po.prune(model, Xv, yv, costs=costs, lam=0.0), 0.0
    tried = {}

    def run(lam):
        p = po.prune(model, Xv, yv, costs=costs, lam=lam)
        tried[lam] = (p, p.average_cost(Xv) <= target)
        return tried[lam][1]

    lam = 1.0 / full
    lo = hi = None
    for _ in range(steps):
        if run(lam):
            hi = lam
            if lo is not None:
                break
            lam /= 8.0
        else:
            lo = lam
            if hi is not None:
                break
            lam *= 8.0
    while len(tried) < steps and lo is not None and hi is not None:
        mid = float(np.sqrt(lo * hi))
        if run(mid):
            hi = mid
        else:
            lo = mid
    if hi is None:  # never halved within the steps: report the strongest pruning tried
        lam = max(tried)
        return tried[lam][0], lam
    return tried[hi][0], hi


def _fail(exc):
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"failed: {first[:70]}"


def row(dataset, model, n_trees, acc, cost, rf_cost, fit_s, prune_s=None, lam=None, note=""):
    return {"dataset": dataset, "model": model, "n_trees": n_trees,
            "accuracy": None if acc is None else round(float(acc), 4),
            "avg_cost": None if cost is None else round(float(cost), 4),
            "cost_vs_rf": None if cost is None or not rf_cost else round(float(cost / rf_cost),
                                                                         4),
            "fit_seconds": None if fit_s is None else round(fit_s, 2),
            "prune_seconds": None if prune_s is None else round(prune_s, 2),
            "lam": lam, "note": note}


def run_dataset(name, args):
    from sklearn.ensemble import RandomForestClassifier

    d = load_dataset(name)
    costs = d.costs_or_uniform()
    train, val, test = split_data(d, args.max_rows, args.seed)
    Xt, yt = train
    T = args.trees
    out = []
    growers = {
        "RF": lambda: RandomForestClassifier(n_estimators=T, random_state=args.seed,
                                             n_jobs=args.n_jobs),
        "BudgetRF": lambda: BudgetRandomForestClassifier(
            n_estimators=T, costs=costs, alpha=args.alpha, random_state=args.seed,
            n_jobs=args.n_jobs),
        "CSRF": lambda: CostSensitiveRandomForestClassifier(
            n_estimators=T, costs=costs, beta=args.beta, random_state=args.seed,
            n_jobs=args.n_jobs),
    }
    act_cls, act_note = _optional("act", "ACTForestClassifier")
    if act_cls is not None:
        growers["ACT"] = lambda: act_cls(n_estimators=T, r=args.act_r, costs=costs,
                                         random_state=args.seed, n_jobs=args.n_jobs)
    cegb_cls, cegb_note = _optional("cegb", "CEGBClassifier")
    rf_cost = None
    for label, make in growers.items():
        t0 = time.perf_counter()
        try:
            model = make()
            if label == "BudgetRF" and isinstance(args.alpha, list):
                model.fit(Xt, yt, X_val=val[0], y_val=val[1])
            else:
                model.fit(Xt, yt)
        except Exception as exc:  # report, keep benchmarking the others
            out.append(row(name, label, T, None, None, rf_cost, None, note=_fail(exc)))
            continue
        fit_s = time.perf_counter() - t0
        cost = po.acquisition_cost(model, test[0], costs).mean()
        if label == "RF":
            rf_cost = cost
        note = f"alpha={model.alpha_}" if label == "BudgetRF" else ""
        out.append(row(name, label, T, model.score(*test), cost, rf_cost, fit_s, note=note))
        t0 = time.perf_counter()
        pruned, lam = halve_cost_prune(model, val, costs, steps=args.lam_steps)
        prune_s = time.perf_counter() - t0
        out.append(row(name, f"{label}+BudgetPrune", T, pruned.score(*test),
                       pruned.average_cost(test[0]), rf_cost, fit_s, prune_s,
                       lam=float(lam), note=f"solver={pruned.solve_info.get('solver')}"))
    if act_cls is None:
        out.append(row(name, "ACT+BudgetPrune", T, None, None, rf_cost, None, note=act_note))
    if cegb_cls is None:
        out.append(row(name, "CEGB", T, None, None, rf_cost, None, note=cegb_note))
    else:
        t0 = time.perf_counter()
        try:
            m = cegb_cls(costs=costs, cegb_tradeoff=args.cegb_tradeoff, n_estimators=T,
                         random_state=args.seed).fit(Xt, yt)
            out.append(row(name, "CEGB", T, m.score(*test), m.average_cost(test[0]), rf_cost,
                           time.perf_counter() - t0))
        except Exception as exc:
            out.append(row(name, "CEGB", T, None, None, rf_cost, None, note=_fail(exc)))
    return out


def speed(args):
    from sklearn.datasets import make_classification

    X, y = make_classification(20_000, 50, n_informative=10, random_state=0)
    t0 = time.perf_counter()
    est = BudgetRandomForestClassifier(n_estimators=40, n_jobs=args.n_jobs,
                                       random_state=0).fit(X, y)
    s = time.perf_counter() - t0
    return {"task": "BudgetRF 40 trees, 20000 x 50 (make_classification)",
            "seconds": round(s, 2), "n_jobs": args.n_jobs, "n_nodes": est.to_forest().n_nodes}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default=",".join(ALL_DATASETS),
                   help="comma-separated dataset names (default: all real ones available)")
    p.add_argument("--trees", type=int, default=40, help="trees per forest (default 40)")
    p.add_argument("--max-rows", type=int, default=5000,
                   help="training rows kept per dataset (subsample for speed; default 5000)")
    p.add_argument("--alpha", default="0,2,8",
                   help="BudgetRF threshold-Pairs alpha; a comma list is chosen on validation "
                   "accuracy (default 0,2,8)")
    p.add_argument("--beta", type=float, default=1.0, help="CSRF cost exponent")
    p.add_argument("--act-r", type=int, default=0, help="ACT lookahead samples (default 0)")
    p.add_argument("--cegb-tradeoff", type=float, default=0.05)
    p.add_argument("--lam-steps", type=int, default=8, help="prunes spent searching lam")
    p.add_argument("--n-jobs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--speed", action="store_true", help="also time the 20,000 x 50 fit")
    p.add_argument("--quick", action="store_true",
                   help="10 trees, 1500 rows, thyroid/heart/pima/spambase, 6 lam steps")
    p.add_argument("--json", metavar="OUT", help="write the results as JSON")
    args = p.parse_args(argv)
    try:
        alphas = [float(a) for a in str(args.alpha).split(",") if a.strip()]
    except ValueError:
        p.error(f"--alpha must be a number or a comma-separated list, got {args.alpha!r}")
    args.alpha = alphas[0] if len(alphas) == 1 else alphas
    if args.quick:
        args.trees, args.max_rows, args.lam_steps = 10, 1500, 6
        if args.datasets == ",".join(ALL_DATASETS):
            args.datasets = "thyroid,heart,pima,spambase"
    have = set(list_datasets())
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    rows, skipped = [], []
    for name in names:
        if name not in have:
            skipped.append(name)
            continue
        t0 = time.perf_counter()
        rows += run_dataset(name, args)
        print(f"[growers] {name}: {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
    cols = ["dataset", "model", "n_trees", "accuracy", "avg_cost", "cost_vs_rf", "fit_seconds",
            "prune_seconds", "lam", "note"]
    for r in rows:
        if isinstance(r["lam"], float):
            r["lam"] = float(f"{r['lam']:.4g}")
    print(format_table(rows, cols, align="left"))
    result = {"rows": rows, "skipped_datasets": skipped, "config": vars(args)}
    if skipped:
        print(f"skipped (not available here): {', '.join(skipped)}")
    if args.speed:
        result["speed"] = speed(args)
        print(f"speed: {result['speed']}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
