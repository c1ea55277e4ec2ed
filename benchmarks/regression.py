"""Regression at a budget: pruned random-forest regressors against LightGBM's CEGB.

Protocol (the same for every method, as ``benchmarks/frontier.py``).  Rows are
split train 50% / validation 25% / test 25%.  A 40-tree
``RandomForestRegressor`` is fitted on train; the budgets are 10, 25 and 50% of
its average acquisition cost on validation.  Every method yields a family of
models; at a budget it keeps the one with the lowest *validation* mean squared
error among those whose *validation* cost fits, and the table shows that
model's *test* MSE (and R^2), averaged over the seeds.  A method with nothing
within a budget falls back to the free constant predictor (the training mean).

Project methods (node errors: squared error on each tree's in-bag sample,
normalised by the target variance; see ``docs/regression.md``):

* ``hull``         BudgetPrune exact hull (``tradeoff_curve``) of the RF;
* ``fit_budget``   ``prune_opt.fit_budget`` at each budget;
* ``greedy``, ``ccp``, ``fewer-trees``, ``impurity``   baselines on the RF
  (``impurity``: a node stays a split while its training variance exceeds a
  threshold);
* ``refit``        at each budget, the three best prunings (validation MSE) of
  ``hull``, ``fit_budget`` and ``greedy`` within it after
  ``refit_leaves(method="global", smoothing=s)`` on the training rows,
  ``s`` in {1, 10}: all leaf means fitted jointly to the forest's squared
  error (structure and cost unchanged).

"best pipeline" picks, per seed and budget, the project method with the lowest
validation MSE within the budget.  CEGB is ``lightgbm.LGBMRegressor``
(``objective="regression"``) with ``cegb_penalty_feature_lazy`` = each
feature's cost and a ``cegb_tradeoff`` grid from 0 to 1000, at 50 and 200
rounds, with geometric bisection of the tradeoff for budgets the grid misses;
its cost is the average per-example cost of the units its trees reach
(``forest_builders.lightgbm_import.lightgbm_acquisition_cost``).

Datasets: ``heart-severity`` (UCI Cleveland, severity 0-4, Turney's real test
costs) and ``diabetes`` (scikit-learn's bundled set, an illustrative cost
model stated in ``prune_opt.datasets``).

Usage::

    python benchmarks/regression.py --json regression.json
    python benchmarks/regression.py --quick
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import frontier  # noqa: E402  (the CEGB tradeoff refinement is shared)

DATASETS = ("heart-severity", "diabetes")
BUDGETS = (0.10, 0.25, 0.50)
CEGB_TRADEOFFS = (0.0,) + tuple(float(v) for v in np.logspace(-4, 3, 8))
CEGB_ROUNDS = (50, 200)
BASELINE_NAMES = ("greedy", "ccp", "fewer-trees", "impurity")


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def split(X, y, seed):
    """Train 50% / validation 25% / test 25%."""
    from sklearn.model_selection import train_test_split

    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=0.5, random_state=seed)
    X_v, X_te, y_v, y_te = train_test_split(X_rest, y_rest, test_size=0.5, random_state=seed)
    return X_tr, y_tr, X_v, y_v, X_te, y_te


class Context:
    """Splits, costs and budgets of one (dataset, seed) run."""

    def __init__(self, data, costs, budgets, time_limit):
        self.X_tr, self.y_tr, self.X_v, self.y_v, self.X_te, self.y_te = data
        self.costs, self.budgets, self.time_limit = costs, budgets, time_limit

    def point(self, predict_v, predict_te, val_cost, test_cost, **extra):
        """Validation/test MSE, test R^2 and costs of one model."""
        mse_v = float(np.mean((predict_v - self.y_v) ** 2))
        mse_te = float(np.mean((predict_te - self.y_te) ** 2))
        r2 = 1.0 - mse_te / float(np.var(self.y_te))
        return {"val_mse": mse_v, "test_mse": mse_te, "test_r2": r2,
                "val_cost": float(val_cost), "test_cost": float(test_cost), **extra}


def score(prunings, ctx):
    return [ctx.point(p.predict(ctx.X_v), p.predict(ctx.X_te), p.average_cost(ctx.X_v),
                      p.average_cost(ctx.X_te)) for p in prunings]


def project_points(rf, ctx):
    """{method: points} of BudgetPrune (hull, fit_budget) and the baselines, and seconds."""
    import prune_opt as po
    from prune_opt.budget import BASELINES, tradeoff_curve

    secs, fams = {}, {}
    t0 = time.perf_counter()
    problem = po.compile_problem(rf, ctx.X_v, ctx.y_v, costs=ctx.costs,
                                 train=(ctx.X_tr, ctx.y_tr))
    _, pts = _quiet(tradeoff_curve, problem, return_points=True)
    fams["hull"], secs["hull"] = [q.pruned for q in pts], time.perf_counter() - t0
    t0 = time.perf_counter()
    fams["fit_budget"] = [_quiet(po.fit_budget, problem, budget=b,
                                 time_limit=ctx.time_limit) for b in ctx.budgets]
    secs["fit_budget"] = time.perf_counter() - t0
    for name in BASELINE_NAMES:
        t0 = time.perf_counter()
        fams[name] = [pf for _, pf in BASELINES[name](rf, ctx.X_v, ctx.y_v, costs=ctx.costs,
                                                      problem=problem)]
        secs[name] = time.perf_counter() - t0
    points = {}
    for name, fam in fams.items():
        t0 = time.perf_counter()
        points[name] = score(fam, ctx)
        secs[name] += time.perf_counter() - t0
    t0 = time.perf_counter()
    points["refit"] = refit_points(fams, points, ctx)
    secs["refit"] = time.perf_counter() - t0
    return points, secs, problem


REFIT_FROM = ("hull", "fit_budget", "greedy")
REFIT_SMOOTHING = (1.0, 10.0)


def refit_points(fams, points, ctx, top=3):
    """Global leaf refits of the best prunings within each budget (see the docstring)."""
    import prune_opt as po

    out, done = [], set()
    for b in ctx.budgets:
        cands = [(pt["val_mse"], id(pf), pf) for m in REFIT_FROM
                 for pf, pt in zip(fams[m], points[m]) if pt["val_cost"] <= b * (1 + 1e-9)]
        for _, key, pf in sorted(cands, key=lambda c: c[:2])[:top]:
            if key in done:
                continue
            done.add(key)
            for s in REFIT_SMOOTHING:
                out += score([po.refit_leaves(pf, None, None, train=(ctx.X_tr, ctx.y_tr),
                                              in_bag=False, method="global", smoothing=s)],
                             ctx)
    return out


def cegb_fit(ctx, seed, rounds, tradeoff):
    import lightgbm as lgb

    from forest_builders.lightgbm_import import lightgbm_acquisition_cost

    penalty = [float(c) for c in ctx.costs.feature_cost()]
    m = lgb.LGBMRegressor(objective="regression", n_estimators=rounds, cegb_tradeoff=tradeoff,
                          cegb_penalty_feature_lazy=penalty, random_state=seed, n_jobs=1,
                          verbose=-1)
    _quiet(m.fit, ctx.X_tr, ctx.y_tr)
    return ctx.point(m.predict(ctx.X_v), m.predict(ctx.X_te),
                     lightgbm_acquisition_cost(m, ctx.X_v, ctx.costs).mean(),
                     lightgbm_acquisition_cost(m, ctx.X_te, ctx.costs).mean(),
                     rounds=rounds, tradeoff=tradeoff)


def pick(points, budget, fallback):
    """Lowest validation MSE within the budget; ``fallback`` when none fits."""
    ok = [p for p in points if p["val_cost"] <= budget * (1 + 1e-9)]
    return min(ok, key=lambda p: (p["val_mse"], p["val_cost"])) if ok else fallback


def run_seed(name, ds, seed, args):
    from sklearn.ensemble import RandomForestRegressor

    import prune_opt as po

    data = split(ds.X, ds.y, seed)
    X_tr, y_tr, X_v, y_v, X_te, y_te = data
    t0 = time.perf_counter()
    rf = RandomForestRegressor(n_estimators=args.trees, random_state=seed, n_jobs=1)
    rf.fit(X_tr, y_tr)
    base_val = float(po.acquisition_cost(rf, X_v, ds.costs).mean())
    ctx = Context(data, ds.costs, [f * base_val for f in args.budgets], args.time_limit)
    points, secs, problem = project_points(rf, ctx)
    if not args.no_cegb:
        t1 = time.perf_counter()
        points["cegb"] = frontier.cegb_points(ctx, seed, args, fit=cegb_fit)
        secs["cegb"] = time.perf_counter() - t1
    mean = float(np.mean(y_tr))
    fallback = ctx.point(np.full(len(y_v), mean), np.full(len(y_te), mean), 0.0, 0.0,
                         fallback=True)
    cells = []
    for frac, b in zip(args.budgets, ctx.budgets):
        chosen = {m: pick(pts, b, fallback) for m, pts in points.items()}
        project = [m for m in points if m != "cegb"]
        best = min(project, key=lambda m: (chosen[m]["val_mse"], chosen[m]["val_cost"]))
        cells.append({"frac": frac, "budget": b, "best_method": best, "chosen": chosen})
    return {"dataset": name, "seed": seed, "n_rows": int(len(ds.y)),
            "n_features": int(ds.X.shape[1]), "target_variance_prune": problem.error_scale,
            "unpruned": ctx.point(rf.predict(X_v), rf.predict(X_te), base_val,
                                  po.acquisition_cost(rf, X_te, ds.costs).mean()),
            "seconds": secs, "total_seconds": time.perf_counter() - t0, "cells": cells}


def summarise(results, budgets):
    """Per dataset: mean test MSE / R^2 over seeds of every method at every budget."""
    table = {}
    for r in results:
        d = table.setdefault(r["dataset"], {"methods": {}, "best": {}, "best_of": {}})
        for cell in r["cells"]:
            f = cell["frac"]
            for m, c in cell["chosen"].items():
                d["methods"].setdefault(m, {}).setdefault(f, []).append(
                    (c["test_mse"], c["test_r2"]))
            c = cell["chosen"][cell["best_method"]]
            d["best"].setdefault(f, []).append((c["test_mse"], c["test_r2"]))
            d["best_of"].setdefault(f, []).append(cell["best_method"])
    for d in table.values():
        for m in d["methods"].values():
            for f in list(m):
                m[f] = tuple(float(v) for v in np.mean(m[f], axis=0))
        d["best"] = {f: tuple(float(v) for v in np.mean(v, axis=0)) for f, v in
                     d["best"].items()}
    return table


def print_report(results, table, budgets):
    cols = " ".join(f"{'@' + format(100 * f, 'g') + '%':>18}" for f in budgets)
    print(f"{'dataset':<15} {'method':<16} {cols}   seconds/seed")
    print(f"{'':<15} {'':<16} " + " ".join(f"{'MSE':>10} {'R^2':>7}" for _ in budgets))
    for name, d in table.items():
        runs = [r for r in results if r["dataset"] == name]
        rows = [(m, v) for m, v in d["methods"].items() if m != "cegb"]
        rows += [("BEST PIPELINE", d["best"])]
        rows += [("LightGBM CEGB", d["methods"]["cegb"])] if "cegb" in d["methods"] else []
        for m, v in rows:
            secs = np.mean([r["seconds"].get({"LightGBM CEGB": "cegb"}.get(m, m), np.nan)
                            for r in runs])
            vals = " ".join(f"{v[f][0]:>10.4g} {v[f][1]:>7.3f}" for f in budgets)
            print(f"{name:<15} {m:<16} {vals}   {'' if np.isnan(secs) else f'{secs:.1f}'}")
        u = np.mean([[r["unpruned"]["test_mse"], r["unpruned"]["test_r2"]] for r in runs], 0)
        print(f"{name:<15} (unpruned RF: test MSE {u[0]:.4g}, R^2 {u[1]:.3f}, cost "
              f"{np.mean([r['unpruned']['test_cost'] for r in runs]):.4g})\n")
    wins = n = 0
    for name, d in table.items():
        for f in budgets:
            if "cegb" in d["methods"]:
                n += 1
                wins += d["best"][f][0] <= d["methods"]["cegb"][f][0]
                print(f"{name:<15} {format(100 * f, 'g') + '%':>4}  best pipeline MSE "
                      f"{d['best'][f][0]:.4g} vs CEGB {d['methods']['cegb'][f][0]:.4g}  "
                      f"(chosen: {', '.join(d['best_of'][f])})")
    return wins, n


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--budgets", default="0.1,0.25,0.5",
                    help="shares of the unpruned forest's validation cost")
    ap.add_argument("--trees", type=int, default=40)
    ap.add_argument("--time-limit", type=float, default=10.0,
                    help="seconds per fit_budget call (default 10)")
    ap.add_argument("--no-cegb", action="store_true")
    ap.add_argument("--cegb-refine", type=int, default=4)
    ap.add_argument("--quick", action="store_true", help="one seed, 20 trees")
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args(argv)
    args.names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    args.seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    args.budgets = [float(b) for b in args.budgets.split(",") if b.strip()]
    if not args.budgets or any(b <= 0 for b in args.budgets):
        ap.error("--budgets must be positive shares, e.g. 0.1,0.25,0.5")
    args.cegb_tradeoffs, args.cegb_rounds = CEGB_TRADEOFFS, CEGB_ROUNDS
    if args.quick:
        args.seeds, args.trees = args.seeds[:1], 20
    if args.json:
        from prune_opt._io import check_output_path

        check_output_path(args.json, "--json")
    return args


def write_json(args, results):
    from prune_opt._io import atomic_write

    keep = dict(vars(args))
    with atomic_write(args.json, "w") as fh:
        json.dump({"args": keep, "results": results}, fh, default=str)


def main(argv=None):
    from prune_opt.datasets import load_dataset

    args = parse(argv)
    if not args.no_cegb and importlib.util.find_spec("lightgbm") is None:
        print("lightgbm is not installed: CEGB skipped", file=sys.stderr)
        args.no_cegb = True
    results = []
    for name in args.names:
        ds = load_dataset(name)
        for seed in args.seeds:
            t0 = time.perf_counter()
            results.append(run_seed(name, ds, seed, args))
            print(f"[{name} seed {seed}: {time.perf_counter() - t0:.1f}s]", file=sys.stderr,
                  flush=True)
            if args.json:
                write_json(args, results)
    wins, n = print_report(results, summarise(results, args.budgets), args.budgets)
    print(f"cells where the best pipeline's test MSE is at most CEGB's: {wins}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
