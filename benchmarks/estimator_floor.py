"""The budget estimator's floor on multiclass tables: never the prior when a model on the
cheapest features that fit beats it, and every fit within 1.25 x its time limit.

Protocol (``benchmarks/_protocol.py``'s split): rows subsampled to at most
``--max-rows`` and split train 50% / validation 25% / test 25%; a 40-tree random
forest fitted on train sets the scale, and the budgets are 10, 25 and 50% of its
average acquisition cost on validation.  At each budget and time limit
(``--limits``; ``default`` is the estimator's own), one fit of
``BudgetPrunedForestClassifier(budget=B, costs=..., random_state=seed)`` on train +
validation, and beside it the two constant-time references a user would write:

* ``prior``: the training majority class (test accuracy);
* ``prefix gbm``: LightGBM with its defaults (HistGradientBoosting without it) on
  the longest prefix of the features ranked by a default model's gain per unit of
  cost whose features together cost at most B (so it fits on any row), trained on
  train + validation.

A cell is **floor ok** when the prefix model does not beat the prior on test, or
the estimator's winner keeps splits, is above the prior on its own held-out rows
(``candidates_["above_prior"]``) and beats the prior on test; **time ok** when
the fit took at most 1.25 x the time limit (wall clock; the CPU seconds of the
process are shown beside it, since a loaded machine stretches the wall clock).

The tables: ``letter10`` (letter's first 10 classes), ``digits`` (10 classes),
``thyroid`` (3), ``heart5`` (heart-severity's 5 severities as classes), and for the
time bound ``letter9``: letter's first 9 classes and first 13 features with varied
costs (:data:`LETTER9_COSTS`), the estimator fitted on 6,000 rows (train 4,000,
validation 2,000; the other 901 rows test), where the lazy-penalty forests take 40 x
the random forest's time.

``--loads 0,1`` runs every cell on an idle machine and again beside that many busy
processes (a CPU-bound loop each, started here and stopped after the cells), and
prints each fit's time over its limit per seed and budget, idle and loaded.

Usage::

    python benchmarks/estimator_floor.py                       # 4 tables, 3 budgets, 4 s and default
    python benchmarks/estimator_floor.py --datasets digits --limits 4 --json floor.json
    python benchmarks/estimator_floor.py --datasets letter9 --limits default --seeds 0,1,2 \
        --loads 0,1 --json time.json                           # the time bound, idle and loaded
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import prune_opt as po  # noqa: E402
from benchmarks import _protocol as proto  # noqa: E402
from forest_builders import BudgetPrunedForestClassifier, subset_costs  # noqa: E402
from prune_opt.budget import fits_budget  # noqa: E402

DATASETS = ("letter10", "digits", "thyroid", "heart5")
#: letter9's feature costs, spread 1 to 20 over its 13 features (a fixed shuffle)
LETTER9_COSTS = np.array([1, 1, 2, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20],
                         dtype=float)[np.random.default_rng(12345).permutation(13)]
#: the rows the estimator is fitted on, per table (train 2/3, validation 1/3; the rest
#: test); other tables: the protocol's split of at most --max-rows rows
FIT_ROWS = {"letter9": 6000}


def load(name):
    """(X, y, FeatureCosts) of one of the floor's tables."""
    if name == "letter10":
        X, y, fc, _ = proto.load("letter")
        keep = np.isin(y, np.unique(y)[:10])
        return X[keep], y[keep], fc
    if name == "letter9":
        X, y, fc, _ = proto.load("letter")
        keep = np.isin(y, np.unique(y)[:9])
        names = None if fc.feature_names is None else list(fc.feature_names)[:13]
        return X[keep][:, :13], y[keep], po.FeatureCosts(LETTER9_COSTS, feature_names=names)
    if name == "heart5":
        X, y, fc, _ = proto.load("heart-severity")
        return X, y.astype(int), fc
    X, y, fc, _ = proto.load(name)
    return X, y, fc


def _booster(seed):
    try:
        import lightgbm as lgb
    except ImportError:
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(random_state=seed)
    return lgb.LGBMClassifier(random_state=seed, n_jobs=1, verbose=-1, importance_type="gain")


def prefix_gbm(X, y, X_te, y_te, costs, budget, seed):
    """Test accuracy and number of features of the default booster on the longest prefix of
    the gain-per-cost ranking whose features fit ``budget`` (None when none does)."""
    from sklearn.base import clone

    base = _booster(seed)
    model = proto.quiet(clone(base).fit, X, y)
    gain = getattr(model, "feature_importances_", None)
    if gain is None:  # HistGradientBoosting has no importances: the cheapest first
        gain = np.ones(X.shape[1])
    cost = np.asarray(costs.feature_cost(), dtype=float)
    value = np.divide(gain, cost, out=np.full(cost.size, np.inf), where=cost > 0)
    ranking = np.argsort(-value, kind="stable")
    k = int(np.sum(fits_budget(subset_costs(costs, ranking), budget)))
    if k == 0:
        return None, 0
    cols = np.sort(ranking[:k])
    m = proto.quiet(clone(base).fit, X[:, cols], y)
    return float(np.mean(m.predict(X_te[:, cols]) == y_te)), k


def split(X, y, max_rows, seed, fit_rows=None):
    """The protocol's split, or with ``fit_rows``: that many rows for train (2/3) and
    validation (1/3), stratified, and every other row for test."""
    if fit_rows is None:
        return proto.split(X, y, max_rows, seed)
    from sklearn.model_selection import train_test_split

    X_fit, X_te, y_fit, y_te = train_test_split(X, y, train_size=fit_rows, stratify=y,
                                                random_state=seed)
    X_tr, X_v, y_tr, y_v = train_test_split(X_fit, y_fit, train_size=2 / 3, stratify=y_fit,
                                            random_state=seed)
    return X_tr, y_tr, X_v, y_v, X_te, y_te


@contextlib.contextmanager
def busy(n):
    """``n`` CPU-bound processes running beside the block (a loaded machine)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in hogs:
            p.terminate()
        for p in hogs:
            p.wait()


def run_cell(name, ctx, budget, share, limit, seed):
    kw = {} if limit == "default" else {"time_limit": float(limit)}
    est = BudgetPrunedForestClassifier(budget=budget, costs=ctx.costs, random_state=seed, **kw)
    X, y = ctx.X_trval, ctx.y_trval
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        est.fit(X, y)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    values, counts = np.unique(ctx.y_tr, return_counts=True)
    prior = float(np.mean(ctx.y_te == values[np.argmax(counts)]))
    prefix, k = prefix_gbm(X, y, ctx.X_te, ctx.y_te, ctx.costs, budget, seed)
    c = est.candidates_
    win = c[c["chosen"]].iloc[0]
    acc = float(est.score(ctx.X_te, ctx.y_te))
    limit_s = est.time_limit
    warned = [str(w.message) for w in said if issubclass(w.category, UserWarning)
              and "no better than" in str(w.message)]
    beats = prefix is not None and prefix > prior
    floor_ok = (not beats) or (int(win["n_splits"]) > 0 and bool(win["above_prior"])
                               and acc > prior)
    return {"dataset": name, "seed": seed, "share": share, "limit": limit,
            "time_limit": limit_s, "budget": budget, "prior": prior, "prefix_gbm": prefix,
            "prefix_k": k, "estimator": acc, "test_cost": float(est.average_cost(ctx.X_te)),
            "winner": str(win["name"]), "family": str(win["family"]),
            "n_splits": int(win["n_splits"]), "above_prior": bool(win["above_prior"]),
            "warned": bool(warned), "seconds": wall, "cpu_seconds": cpu,
            "n_grown": int(c["fits_budget"].sum()),
            "n_skipped": int(c["reason"].str.startswith("not ").sum()),
            "floor_ok": bool(floor_ok), "time_ok": bool(wall <= 1.25 * limit_s)}


def print_rows(rows):
    head = (f"{'dataset':<9} {'share':>5} {'limit':>7} {'prior':>6} {'prefix':>6} "
            f"{'estim.':>6} {'cost/B':>6} {'fit s':>6} {'cpu s':>6}  {'floor':<5} {'time':<5}"
            "  winner")
    print(head)
    print("-" * len(head))
    for r in rows:
        prefix = "-" if r["prefix_gbm"] is None else f"{r['prefix_gbm']:.3f}"
        print(f"{r['dataset']:<9} {r['share']:>5.0%} {r['limit']:>7} {r['prior']:>6.3f} "
              f"{prefix:>6} {r['estimator']:>6.3f} {r['test_cost'] / r['budget']:>6.2f} "
              f"{r['seconds']:>6.1f} {r['cpu_seconds']:>6.1f}  "
              f"{'ok' if r['floor_ok'] else 'MISS':<5} {'ok' if r['time_ok'] else 'OVER':<5}"
              f"  {r['winner']}{' (warned)' if r['warned'] else ''}")
    n = len(rows)
    print(f"\nfloor ok in {sum(r['floor_ok'] for r in rows)} of {n} cells, time ok in "
          f"{sum(r['time_ok'] for r in rows)} of {n}; slowest fit "
          f"{max(r['seconds'] / r['time_limit'] for r in rows):.2f} x its time limit")


def print_time_table(rows):
    """Each fit's time over its limit per table, budget and seed, one column per load."""
    loads = sorted({r["load"] for r in rows})
    cells = sorted({(r["dataset"], r["limit"], r["share"], r["seed"]) for r in rows},
                   key=lambda c: (c[0], str(c[1]), c[2], c[3]))
    ratio = {(r["dataset"], r["limit"], r["share"], r["seed"], r["load"]):
             r["seconds"] / r["time_limit"] for r in rows}
    head = (f"{'dataset':<9} {'limit':>7} {'share':>5} {'seed':>4}  "
            + "  ".join(f"{'idle' if n == 0 else f'beside {n}':>9}" for n in loads))
    print("\nfit time / time_limit")
    print(head)
    print("-" * len(head))
    for c in cells:
        print(f"{c[0]:<9} {c[1]:>7} {c[2]:>5.0%} {c[3]:>4}  " + "  ".join(
            f"{ratio[(*c, n)]:>9.3f}" if (*c, n) in ratio else f"{'-':>9}" for n in loads))
    for n in loads:
        at = [v for k, v in ratio.items() if k[-1] == n]
        print(f"max {'idle' if n == 0 else f'beside {n} busy processes'}: {max(at):.3f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--shares", default="0.1,0.25,0.5")
    ap.add_argument("--limits", default="4,default",
                    help="time limits of the estimator, seconds or 'default'")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--max-rows", type=int, default=4000)
    ap.add_argument("--loads", default="0",
                    help="busy processes beside the fits, one run of every cell per value")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args(argv)
    shares = [float(s) for s in args.shares.split(",")]
    limits = [s.strip() for s in args.limits.split(",")]
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}",
          flush=True)
    loads = [int(n) for n in args.loads.split(",")]
    rows = []
    for load_n in loads:
        with busy(load_n):
            for name in args.datasets.split(","):
                X, y, costs = load(name)
                for seed in (int(s) for s in args.seeds.split(",")):
                    data = split(X, y, args.max_rows, seed, FIT_ROWS.get(name))
                    ctx = proto.Context(data, costs, [], seed=seed)
                    rf = proto.reference_forest(ctx)
                    base = float(po.acquisition_cost(rf, ctx.X_v, costs).mean())
                    for share in shares:
                        for limit in limits:
                            r = run_cell(name, ctx, share * base, share, limit, seed)
                            r["load"] = load_n
                            rows.append(r)
                            print(json.dumps(r), flush=True)
    print()
    print_rows(rows)
    print_time_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
        print(f"wrote {args.json}")
    return 0 if all(r["floor_ok"] and r["time_ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
