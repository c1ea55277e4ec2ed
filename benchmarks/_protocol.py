"""The protocol every accuracy-at-a-budget benchmark shares.

``benchmarks/frontier.py`` (classification) and ``benchmarks/regression.py``
run it the same way:

* **Splits.** Rows are subsampled to at most ``--max-rows`` and split train
  50% / validation 25% / test 25% (stratified for classification), one split
  per seed.
* **Budgets.** A ``--trees``-tree scikit-learn random forest is fitted on
  train; the budgets are shares (10 / 25 / 50% by default) of its average
  acquisition cost on validation.
* **Families and selection on validation.** Every method yields a family of
  models, each scored on validation (accuracy, or mean squared error) with its
  average validation cost.  At a budget a family keeps its best member among
  those whose validation cost fits; only that member is scored on test.  A
  family with nothing within a budget falls back to the free constant
  predictor (training majority class, or training mean).  A *one-call* member
  (``fit_budget`` with its defaults, the estimator) is built for one budget
  and reported as the call returned it, fitting or not (the report counts the
  cells where it does not fit on validation).
* **Scoring with the library.** Pruned forests are scored by their own
  ``predict`` and ``average_cost``; other models by their ``predict`` and the
  library's cost accounting of the features their trees read.
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np

#: relative slack of "fits the budget" (the library's own tolerance is tighter)
FIT_RTOL = 1e-9


def quiet(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with warnings silenced (convergence chatter of the runs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def fits(cost, budget):
    return cost <= budget * (1 + FIT_RTOL)


# ---------------------------------------------------------------- data
def load(name, *, csv=None, target=None, costs_json=None):
    """(X, y, FeatureCosts, cost kind) of a named dataset, or of ``csv`` when name is "csv"."""
    from prune_opt import FeatureCosts
    from prune_opt.datasets import load_dataset

    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        d = load_breast_cancer()
        names = [str(n) for n in d.feature_names]
        return d.data, d.target, FeatureCosts.uniform(len(names), feature_names=names), \
            "uniform"
    ds = load_dataset(csv if name == "csv" else name, target=target if name == "csv" else None)
    X, y = ds.X, ds.y
    if ds.X_test is not None:  # one pool; the protocol draws its own splits
        X, y = np.vstack([X, ds.X_test]), np.concatenate([y, ds.y_test])
    if name == "csv" and costs_json:
        spec = json.loads(Path(costs_json).read_text())
        return X, y, FeatureCosts(spec, feature_names=ds.feature_names), "from " + costs_json
    return X, y, ds.costs_or_uniform(), "real" if ds.costs is not None else "uniform"


def split(X, y, max_rows, seed, *, stratify=True):
    """Train 50% / validation 25% / test 25% of at most ``max_rows`` rows."""
    from sklearn.model_selection import train_test_split

    rng = np.random.default_rng(seed)
    if X.shape[0] > max_rows:
        idx = rng.choice(X.shape[0], size=max_rows, replace=False)
        X, y = X[idx], y[idx]

    def strat(labels, least):
        ok = stratify and np.min(np.unique(labels, return_counts=True)[1]) >= least
        return labels if ok else None

    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=0.5, random_state=seed,
                                                  stratify=strat(y, 4))
    X_v, X_te, y_v, y_te = train_test_split(X_rest, y_rest, test_size=0.5, random_state=seed,
                                            stratify=strat(y_rest, 2))
    return X_tr, y_tr, X_v, y_v, X_te, y_te


# ---------------------------------------------------------------- one run
class Context:
    """Splits, costs, budgets and task of one (dataset, seed) run."""

    def __init__(self, data, costs, budgets, *, task="classification", seed=0, trees=40,
                 time_limit=10.0):
        self.X_tr, self.y_tr, self.X_v, self.y_v, self.X_te, self.y_te = data
        self.costs, self.budgets, self.task = costs, list(budgets), task
        self.seed, self.trees, self.time_limit = seed, trees, time_limit
        self.metric = "acc" if task == "classification" else "mse"
        self.base_cost = None  # the reference forest's validation cost, once fitted

    @property
    def X_trval(self):
        return np.vstack([self.X_tr, self.X_v])

    @property
    def y_trval(self):
        return np.concatenate([self.y_tr, self.y_v])

    def measure(self, y_true, pred):
        """Accuracy, or mean squared error."""
        if self.task == "classification":
            return float(np.mean(np.asarray(pred) == y_true))
        return float(np.mean((np.asarray(pred, dtype=float) - y_true) ** 2))

    def key(self, point):
        """Selection key on validation: better score, then lower cost."""
        v = point["val_" + self.metric]
        return (v if self.metric == "acc" else -v, -point["val_cost"])

    def test_point(self, pred, cost):
        out = {"test_" + self.metric: self.measure(self.y_te, pred), "test_cost": float(cost)}
        if self.task == "regression":
            out["test_r2"] = 1.0 - out["test_mse"] / float(np.var(self.y_te))
        return out

    def fallback(self):
        """The free constant predictor: training majority class, or training mean."""
        if self.task == "classification":
            values, counts = np.unique(self.y_tr, return_counts=True)
            const = values[np.argmax(counts)]
        else:
            const = float(np.mean(self.y_tr))
        pv, pt = np.full(len(self.y_v), const), np.full(len(self.y_te), const)
        return Member(self, pv, 0.0, lambda: (pt, 0.0), fallback=True)


class Member:
    """One model of a family: scored on validation now, on test only if chosen.

    ``test`` is a callable returning (test predictions, test average cost);
    ``budget`` marks a one-call member built for that budget only.  ``eager`` scores
    test at once and drops ``test`` (and the model it holds): the selection still
    sees validation only.
    """

    def __init__(self, ctx, pred_v, cost_v, test, *, budget=None, eager=False, **info):
        self.ctx, self._test, self.budget = ctx, test, budget
        self.point = {"val_" + ctx.metric: ctx.measure(ctx.y_v, pred_v),
                      "val_cost": float(cost_v), **info}
        self._tested = None
        self.model = None
        if eager:
            self.tested()
            self._test = None

    def tested(self):
        if self._tested is None:
            self._tested = self.point | self.ctx.test_point(*self._test())
        return self._tested


class Unavailable:
    """What a family returns instead of members when it cannot run here (``why``: not
    installed, or the error its fit raised); the report prints the reason, no number."""

    def __init__(self, why):
        self.why = why


def pruned_member(pf, ctx, **info):
    """A ``PrunedForest`` scored by its own ``predict`` and ``average_cost`` (kept as
    ``member.model``)."""
    m = Member(ctx, pf.predict(ctx.X_v), pf.average_cost(ctx.X_v),
               lambda: (pf.predict(ctx.X_te), pf.average_cost(ctx.X_te)), **info)
    m.model = pf
    return m


def model_member(model, ctx, cost_fn, **info):
    """Any fitted model with ``predict``; ``cost_fn(X)`` gives its per-example costs.
    Scored eagerly, so the model is not kept (CEGB's grid holds many)."""
    return Member(ctx, model.predict(ctx.X_v), float(np.mean(cost_fn(ctx.X_v))),
                  lambda: (model.predict(ctx.X_te), float(np.mean(cost_fn(ctx.X_te)))),
                  eager=True, **info)


def pick(members, budget, ctx):
    """The family's member for ``budget``: the one-call member built for it, else the best
    on validation within it; None when nothing fits."""
    own = [m for m in members if m.budget is not None and m.budget == budget]
    if own:
        return own[0]
    ok = [m for m in members if m.budget is None and fits(m.point["val_cost"], budget)]
    return max(ok, key=lambda m: ctx.key(m.point)) if ok else None


def make_cells(families, ctx, fracs, *, pipelines):
    """Per budget: every family's chosen member (scored on test) and the best of the
    ``pipelines`` families by validation (the "best pipeline")."""
    fallback = ctx.fallback()
    cells = []
    for frac, b in zip(fracs, ctx.budgets):
        chosen = {}
        for name, members in families.items():
            if isinstance(members, Unavailable):
                continue
            m = pick(members, b, ctx)
            rec = dict((m or fallback).tested())
            rec["fallback"] = m is None
            rec["over_budget"] = not fits(rec["val_cost"], b)
            chosen[name] = rec
        cands = [n for n in pipelines if n in chosen]
        best = max(cands, key=lambda n: ctx.key(chosen[n]), default=None)
        cells.append({"frac": frac, "budget": b, "best_method": best, "chosen": chosen})
    return cells


class Timer:
    """Seconds per family, summed over calls."""

    def __init__(self):
        self.seconds = {}

    def __call__(self, name, fn, *args, **kwargs):
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0
        return out


def reference_forest(ctx):
    """The unpruned random forest the budgets are shares of (fitted on train)."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    cls = RandomForestClassifier if ctx.task == "classification" else RandomForestRegressor
    return cls(n_estimators=ctx.trees, random_state=ctx.seed, n_jobs=1).fit(ctx.X_tr, ctx.y_tr)


def run_seed(name, X, y, costs, seed, args, *, task, families, pipelines):
    """One (dataset, seed) run: split, reference forest, budgets, families, cells.

    ``families(rf, ctx, timer)`` returns {name: list of Member, or an ``Unavailable``};
    ``pipelines`` names the families the best pipeline picks from.
    """
    import prune_opt as po

    t0 = time.perf_counter()
    data = split(X, y, args.max_rows, seed, stratify=task == "classification")
    ctx = Context(data, costs, [], task=task, seed=seed, trees=args.trees,
                  time_limit=args.time_limit)
    rf = reference_forest(ctx)
    base_val = float(po.acquisition_cost(rf, ctx.X_v, costs).mean())
    ctx.base_cost, ctx.budgets = base_val, [f * base_val for f in args.budgets]
    # --candidates: the estimator family records every candidate it scores
    ctx.candidates = [] if getattr(args, "candidates", False) else None
    ctx.estimator_params = (json.loads(args.estimator_params)
                            if getattr(args, "estimator_params", None) else None)
    timer = Timer()
    fams = families(rf, ctx, timer)
    cells = make_cells(fams, ctx, args.budgets, pipelines=pipelines)
    unpruned = ctx.test_point(rf.predict(ctx.X_te),
                              po.acquisition_cost(rf, ctx.X_te, costs).mean())
    ran = {n: ms for n, ms in fams.items() if not isinstance(ms, Unavailable)}
    calls = {n: [m.point["seconds"] for m in ms if "seconds" in m.point]
             for n, ms in ran.items()}
    return {"dataset": name, "seed": seed, "task": task, "n_rows": int(sum(len(v) for v in data[1::2])),
            "n_features": int(X.shape[1]), "unpruned": unpruned | {"val_cost": base_val},
            "seconds": timer.seconds, "call_seconds": {n: v for n, v in calls.items() if v},
            "total_seconds": time.perf_counter() - t0, "cells": cells,
            "not_available": {n: ms.why for n, ms in fams.items() if n not in ran},
            "points": {n: [m.point for m in ms] for n, ms in ran.items()},
            **({} if ctx.candidates is None else {"candidates": ctx.candidates})}


# ---------------------------------------------------------------- command line
def add_common_args(ap, *, datasets, quick):
    """The options both benchmark scripts share."""
    ap.add_argument("--datasets", default=None,
                    help=f"comma-separated dataset names (default: {','.join(datasets)})")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    ap.add_argument("--budgets", default="0.1,0.25,0.5",
                    help="shares of the unpruned forest's validation cost")
    ap.add_argument("--trees", type=int, default=40)
    ap.add_argument("--time-limit", type=float, default=10.0,
                    help="seconds per fit_budget call of the families that set one (default 10; "
                         "'fit_budget default' and the estimator use their own defaults)")
    ap.add_argument("--max-rows", type=int, default=4000)
    ap.add_argument("--no-cegb", action="store_true")
    ap.add_argument("--cegb-refine", type=int, default=4,
                    help="bisection steps of the CEGB tradeoff (and of CatBoost's penalties "
                         "coefficient) per budget the grid misses")
    ap.add_argument("--no-catboost", action="store_true",
                    help="skip the CatBoost penalties anchor")
    ap.add_argument("--quick", action="store_true", help=quick)
    ap.add_argument("--merge", default=None, metavar="A.json,B.json",
                    help="print the report of earlier --json runs (e.g. datasets or seeds run "
                         "in parallel processes) instead of running")
    ap.add_argument("--estimator-params", default=None, metavar="JSON",
                    help="keyword arguments of the estimator row, e.g. '{\"regrow\": true}'; a "
                         "key 'module.NAME' sets the estimator's module constant NAME for "
                         "its fits (e.g. '{\"module.SPLIT\": {\"classification\": "
                         "[0.7, 0.15, 0.15]}}'); in a candidates list, 'default' stands for "
                         "the families the estimator grows by default (e.g. "
                         "'{\"candidates\": [\"default\", \"catboost\"]}')")
    ap.add_argument("--json", default=None, metavar="OUT")


def add_families_arg(ap, targets):
    ap.add_argument("--families", default=None, metavar="NAMES",
                    help="run only these families (comma-separated), or 'targets' for the "
                         f"rows the targets are counted on ({', '.join(targets)}); runs of "
                         "different families of the same datasets and seeds combine with "
                         "--merge")


def check_families(ap, args, targets):
    """``args.only``: the family names of ``--families`` (None: every family)."""
    args.only = None
    if not args.families:
        return
    names = [n.strip() for n in args.families.split(",") if n.strip()]
    if names == ["targets"]:
        names = list(targets)
    from prune_opt.budget import BASELINES

    known = set(targets) | set(BASELINES)
    bad = [n for n in names if n not in known]
    if bad:
        ap.error(f"--families: unknown or not separable {bad}; choose from {sorted(known)} "
                 "or 'targets' (the others need the full run)")
    args.only = names


def finish_args(ap, args, datasets):
    """Parse the shared options' text into values (after ``ap.parse_args``)."""
    args.seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    args.budgets = [float(b) for b in args.budgets.split(",") if b.strip()]
    if not args.budgets or any(b <= 0 for b in args.budgets):
        ap.error("--budgets must be positive shares, e.g. 0.1,0.25,0.5")
    args.names = list(datasets)
    if args.datasets:
        args.names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    if args.json:
        from prune_opt._io import check_output_path

        check_output_path(args.json, "--json")
    return args


def write_json(path, args, results, summary=None):
    from prune_opt._io import atomic_write

    keep = {k: v for k, v in vars(args).items() if k != "names"}
    with atomic_write(path, "w") as fh:
        json.dump({"args": keep, "results": results, "summary": summary}, fh, default=str)


def merged_results(paths):
    """The results of earlier ``--json`` runs in one list, and their budgets.

    Runs of the same (dataset, seed) are combined family by family (e.g. the
    anchors from one run and the one-call rows from another, ``--families``); a
    family present in both is taken from the later file.
    """
    results, budgets, by_key = [], None, {}
    for p in paths.split(","):
        spec = json.loads(Path(p.strip()).read_text())
        b = list(spec["args"]["budgets"])
        if budgets not in (None, b):
            raise SystemExit(f"--merge: {p} used budgets {b}, the others {budgets}")
        budgets = b
        for r in spec["results"]:
            key = (r["dataset"], r["seed"])
            if key not in by_key:
                by_key[key] = r
                results.append(r)
            else:
                _combine(by_key[key], r)
    return results, budgets


def _combine(into, r):
    """Add run ``r``'s families to ``into`` (the same dataset, seed and split)."""
    if into["unpruned"].get("val_cost") != r["unpruned"].get("val_cost"):
        raise SystemExit(f"--merge: {r['dataset']} seed {r['seed']} differs between files "
                         "(another split or reference forest); rerun with the same options")
    for mine, theirs in zip(into["cells"], r["cells"]):
        mine["chosen"].update(theirs["chosen"])
        if mine.get("best_method") is None:
            mine["best_method"] = theirs.get("best_method")
    for k in ("seconds", "call_seconds", "points"):
        into.setdefault(k, {}).update(r.get(k, {}))
    into["not_available"] = {n: w for n, w in {**into.get("not_available", {}),
                                                **r.get("not_available", {})}.items()
                             if n not in into["points"]}


def run_all(args, load_fn, run_fn, report_fn):
    """Every dataset and seed of ``args`` (or ``--merge``), then the report."""
    import sys

    if args.merge:
        results, args.budgets = merged_results(args.merge)
    else:
        results = []
        for name in args.names:
            try:
                X, y, costs, kind = load_fn(name)
            except (FileNotFoundError, ValueError) as exc:
                print(f"{name}: skipped ({exc})", file=sys.stderr)
                continue
            for seed in args.seeds:
                t0 = time.perf_counter()
                r = run_fn(name, X, y, costs, seed, args)
                r["costs"] = kind
                results.append(r)
                print(f"[{r['dataset']} seed {seed}: {time.perf_counter() - t0:.1f}s]",
                      file=sys.stderr, flush=True)
                if args.json:  # after every seed, so an interrupted run keeps what it did
                    write_json(args.json, args, results)
    summary = report_fn(results, args.budgets)
    if args.json and not args.merge:
        write_json(args.json, args, results, summary)
    return summary


def fit_budget_on(problem, X, y, **kwargs):
    """``prune_opt.fit_budget`` on an already compiled problem (the problem first)."""
    import prune_opt as po

    return po.fit_budget(problem, X, y, **kwargs)
