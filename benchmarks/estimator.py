"""The budget estimator in one call, against what a user would otherwise build.

Protocol.  Rows are subsampled to at most ``--max-rows`` (2,667, so the
estimator fits on 2,000) and split train 50% / validation 25% / test 25%
(stratified).  A 40-tree random forest fitted on train sets the scale: the
budgets are 10, 25 and 50% of its average acquisition cost on validation.  At
each budget:

* ``estimator``   ``BudgetPrunedForestClassifier(budget=B, costs=...)`` with its
  defaults, fitted on train + validation (it splits them again itself);
* ``fit_budget``  ``prune_opt.fit_budget`` with its defaults (``--fit-budget-time``
  seconds) on the random forest, pruned on validation, errors on train;
* ``cheap-subset``  a random forest (40 trees) on the prefix of the cost-aware
  feature ranking (``rank_features_by_cost`` on train) with the best validation
  accuracy among the prefixes whose validation cost fits B;
* ``cegb``        LightGBM CEGB (lazy penalty = feature costs) over a grid: tradeoff
  0 and 16 values from 1e-3 to 100, 50 and 200 rounds, 7 and 31 leaves; the model
  with the best validation accuracy among those whose validation cost fits B
  (when lightgbm is installed).

Every method falls back to the majority class when nothing fits.  The table
prints test accuracy, test cost and fit seconds.

Usage::

    python benchmarks/estimator.py                       # pima, spambase, magic; seed 0
    python benchmarks/estimator.py --datasets pima --shares 0.25 --json out.json
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
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import prune_opt as po  # noqa: E402
from benchmarks import _families as fam  # noqa: E402
from forest_builders import (
    BudgetPrunedForestClassifier,
    SubsetForestClassifier,
    rank_features_by_cost,
)
from prune_opt.datasets import load_dataset  # noqa: E402

ESTIMATOR_PARAMS = {}  # --final-refit sets final_refit=True
CANDIDATES = []  # --candidates-json: every candidate's select and test scores


def split(X, y, max_rows, seed):
    if len(y) > max_rows:
        keep = np.random.default_rng(seed).permutation(len(y))[:max_rows]
        X, y = X[keep], y[keep]
    X_tr, X_r, y_tr, y_r = train_test_split(X, y, train_size=0.5, random_state=seed, stratify=y)
    X_v, X_te, y_v, y_te = train_test_split(X_r, y_r, test_size=0.5, random_state=seed,
                                            stratify=y_r)
    return X_tr, y_tr, X_v, y_v, X_te, y_te


def majority(y_tr, X_te, y_te):
    vals, counts = np.unique(y_tr, return_counts=True)
    return float(np.mean(y_te == vals[np.argmax(counts)])), 0.0


def run_estimator(d, costs, budget, seed, where=None, params=None):
    X_tr, y_tr, X_v, y_v, X_te, y_te = d
    params = dict(params or {})
    # e.g. {"module.DEFAULT_TIME_LIMIT": 20}: a constant of the estimator's modules
    patch = {k[7:]: v for k, v in params.items() if k.startswith("module.")}
    params = {k: v for k, v in params.items() if not k.startswith("module.")}
    est = BudgetPrunedForestClassifier(budget=budget, costs=costs, random_state=seed,
                                       **{**ESTIMATOR_PARAMS, **params})
    if where is not None:
        fam.record_candidates(est, X_te, y_te, where, CANDIDATES)
    with fam._patched(patch):
        est.fit(np.concatenate([X_tr, X_v]), np.concatenate([y_tr, y_v]))
    chosen = est.candidates_[est.candidates_["chosen"]].iloc[0]["name"]
    return est.score(X_te, y_te), est.average_cost(X_te), chosen


def run_fit_budget(d, costs, budget, rf, limit):
    X_tr, y_tr, X_v, y_v, X_te, y_te = d
    try:
        pf = po.fit_budget(rf, X_v, y_v, costs=costs, budget=budget, train=(X_tr, y_tr),
                           time_limit=limit)
    except ValueError:
        return (*majority(y_tr, X_te, y_te), "majority")
    return pf.score(X_te, y_te), pf.average_cost(X_te), ""


def subset_models(d, costs, seed, max_budget):
    X_tr, y_tr, X_v = d[0], d[1], d[2]
    ranking = rank_features_by_cost(X_tr, y_tr, costs=costs, n_estimators=20,
                                    step=1 if X_tr.shape[1] <= 10 else 0.2, random_state=seed)
    out = []
    for k in range(1, ranking.size + 1):
        m = SubsetForestClassifier(40, features=ranking[:k], costs=costs,
                                   random_state=seed).fit(X_tr, y_tr)
        cost = float(m.acquisition_cost(X_v).mean())
        out.append((m, cost))
        if cost > max_budget:
            break
    return out


def run_subset(d, models, budget):
    X_tr, y_tr, X_v, y_v, X_te, y_te = d
    fits = [(float(np.mean(m.predict(X_v) == y_v)), m) for m, c in models if c <= budget]
    if not fits:
        return (*majority(y_tr, X_te, y_te), "majority")
    m = max(fits, key=lambda t: t[0])[1]
    return float(np.mean(m.predict(X_te) == y_te)), float(m.acquisition_cost(X_te).mean()), \
        f"k={m.features_.size}"


def cegb_models(d, costs, seed):
    from forest_builders import CEGBClassifier

    X_tr, y_tr, X_v = d[0], d[1], d[2]
    out = []
    for rounds in (50, 200):
        for leaves in (7, 31):
            for t in [0.0] + [float(v) for v in np.logspace(-3, 2, 16)]:
                m = CEGBClassifier(costs=costs, cegb_tradeoff=t, n_estimators=rounds,
                                   num_leaves=leaves, random_state=seed).fit(X_tr, y_tr)
                out.append((m, float(m.average_cost(X_v))))
    return out


def run_cegb(d, models, budget):
    X_tr, y_tr, X_v, y_v, X_te, y_te = d
    fits = [(float(np.mean(m.predict(X_v) == y_v)), m) for m, c in models if c <= budget]
    if not fits:
        return (*majority(y_tr, X_te, y_te), "majority")
    m = max(fits, key=lambda t: t[0])[1]
    return float(np.mean(m.predict(X_te) == y_te)), float(m.average_cost(X_te)), ""


def timed(fn, *a):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(*a)
    return (*out, time.perf_counter() - t0)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="pima,spambase,magic")
    p.add_argument("--shares", default="0.1,0.25,0.5")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-rows", type=int, default=2667)
    p.add_argument("--fit-budget-time", type=float, default=10.0,
                   help="time_limit of the fit_budget row (default 10 s)")
    p.add_argument("--no-cegb", action="store_true")
    p.add_argument("--methods", default="estimator,fit_budget,cheap-subset,cegb",
                   help="comma-separated subset of the methods to run")
    p.add_argument("--final-refit", action="store_true",
                   help="the estimator with final_refit=True")
    p.add_argument("--variants", default=None,
                   help="estimator variants as name=json;... (e.g. 'base={};regrow="
                        "{\"regrow\": true}'), each a column 'estimator:name'; a key "
                        "'module.NAME' sets forest_builders.estimator._estimator.NAME for the fit")
    p.add_argument("--json", default=None)
    p.add_argument("--candidates-json", default=None,
                   help="write every estimator candidate's select and test scores here")
    args = p.parse_args(argv)
    if args.final_refit:
        ESTIMATOR_PARAMS["final_refit"] = True
    shares = [float(s) for s in args.shares.split(",")]
    wanted = set(args.methods.split(","))
    variants = {}
    for part in (args.variants or "").split(";"):
        if part.strip():
            key, _, spec = part.partition("=")
            variants[key.strip()] = json.loads(spec)
    use_cegb = ("cegb" in wanted and not args.no_cegb
                and importlib.util.find_spec("lightgbm") is not None)
    rows = []
    for name in args.datasets.split(","):
        ds = load_dataset(name)
        costs = ds.costs_or_uniform()
        d = split(ds.X, ds.y, args.max_rows, args.seed)
        rf = RandomForestClassifier(40, random_state=args.seed).fit(d[0], d[1])
        full = float(po.acquisition_cost(rf, d[2], costs).mean())
        subsets = subset_models(d, costs, args.seed, max(shares) * full)
        cegb = cegb_models(d, costs, args.seed) if use_cegb else []
        for share in shares:
            b = share * full
            row = {"dataset": name, "share": share, "budget": b}
            where = {"dataset": name, "share": share, "seed": args.seed}
            jobs = [(f"estimator:{k}", run_estimator,
                     (costs, b, args.seed, {**where, "variant": k}, v))
                    for k, v in variants.items()]
            for method, fn, extra in (*jobs, ("estimator", run_estimator,
                                       (costs, b, args.seed, where)),
                                      ("fit_budget", run_fit_budget,
                                       (costs, b, rf, args.fit_budget_time)),
                                      ("cheap-subset", run_subset, (subsets, b)),
                                      ("cegb", run_cegb, (cegb, b))):
                if (method not in wanted and not method.startswith("estimator:")) or (
                        method == "cegb" and not use_cegb):
                    continue
                acc, cost, note, secs = timed(fn, d, *extra)
                row.update({f"{method}_acc": acc, f"{method}_cost": cost,
                            f"{method}_note": note, f"{method}_seconds": secs})
            rows.append(row)
            print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in row.items()), flush=True)
    methods = [f"estimator:{k}" for k in variants] + [
        m for m in ("estimator", "fit_budget", "cheap-subset", "cegb")
        if m in wanted and (m != "cegb" or use_cegb)]
    print()
    print(f"{'dataset':<10} {'share':>5} " + " ".join(f"{m:>14}" for m in methods)
          + "   estimator fit s  chosen")
    for r in rows:
        print(f"{r['dataset']:<10} {r['share']:>5.0%} "
              + " ".join(f"{r[m + '_acc']:>14.4f}" for m in methods)
              + f"   {r.get('estimator_seconds', float('nan')):>15.1f}  "
              + r.get("estimator_note", ""))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)
    if args.candidates_json:
        with open(args.candidates_json, "w") as fh:
            json.dump(CANDIDATES, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
