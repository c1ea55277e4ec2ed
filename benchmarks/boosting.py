"""Prune a trained boosted model to a feature budget, against what a user would try instead.

The protocol is ``benchmarks/_protocol.py``'s (train 50% / validation 25% / test
25%, members chosen on validation, scored on test), with one difference: the
reference is the user's boosted model, fitted on train with its library's
defaults (``--model hgb``: scikit-learn's HistGradientBoosting; ``lgbm``:
LightGBM; ``xgb``: XGBoost; ``gb``: scikit-learn's GradientBoosting; ``cb``:
CatBoost, 100 rounds of its symmetric depth-6 trees), and the budgets are shares
of *its* average acquisition cost on validation.  Families:

* ``fit_budget``        one ``po.fit_budget(model, X_val, y_val, costs=, budget=B)``
  call per budget, every other argument at its default (the model's own loss);
* ``fit_budget paper``  the same call with ``objective="paper"`` (the expanded
  program's budget search alone, ``--time-limit`` seconds);
* ``fewer-rounds``      the model truncated to its first r rounds (every r), the
  baseline any user tries first;
* ``greedy``, ``ccp``   the other registered baselines (``prune_opt.budget.BASELINES``)
  on the same model (a baseline that refuses a boosted model is reported with its
  reason);
* ``cheap-subset gbm``  the same library with its defaults on the prefixes of the
  features ranked by the model's split counts per unit of cost (the prefix chosen
  on validation within the budget);
* ``cegb``              LightGBM's CEGB grid (``benchmarks/_families.py``);
* ``catboost penalties`` CatBoost grown under its first-use and per-object feature
  penalties on a grid (``benchmarks/_families.py``; ``--no-catboost`` skips it).

``--expansion final`` compiles the boosted program around the final model
instead of stagewise (``prune_opt.program._boosted.EXPANSION``; see
``docs/math/boosting.md``), for the comparison the docs report.

Usage::

    python benchmarks/boosting.py --quick
    python benchmarks/boosting.py --model lgbm --json boosting-lgbm.json
    python benchmarks/boosting.py --model hgb --datasets magic --seeds 0 --expansion final
    python benchmarks/boosting.py --model cb --datasets pima,heart,spambase,magic --json cb.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import _families as fam  # noqa: E402
from benchmarks import _protocol as proto  # noqa: E402
from benchmarks import _report as report  # noqa: E402

DATASETS = ("pima", "spambase", "magic", "thyroid", "heart", "letter", "adult", "elec",
            "weather")
QUICK_DATASETS = ("pima", "heart")
MODELS = ("hgb", "lgbm", "xgb", "gb", "cb")
#: rounds of the CatBoost model (its own default is 1000)
CATBOOST_ROUNDS = 100
ORDER = ("fit_budget", "fit_budget paper", "fewer-rounds", "greedy", "ccp", "cheap-subset gbm",
         "cegb", "catboost penalties")
#: the prunings of the same model that fit_budget must never lose to on validation
PRUNING_BASELINES = ("fewer-rounds", "greedy", "ccp")


def boosted_model(kind, task, seed):
    """The unfitted boosted model of ``kind`` with its library's defaults."""
    if kind == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier as C
        from sklearn.ensemble import HistGradientBoostingRegressor as R

        cls = C if task == "classification" else R
        return cls(random_state=seed)
    if kind == "gb":
        from sklearn.ensemble import GradientBoostingClassifier as C
        from sklearn.ensemble import GradientBoostingRegressor as R

        return (C if task == "classification" else R)(random_state=seed)
    if kind == "lgbm":
        import lightgbm as lgb

        cls = lgb.LGBMClassifier if task == "classification" else lgb.LGBMRegressor
        return cls(random_state=seed, n_jobs=1, verbose=-1)
    if kind == "cb":
        import catboost as cb

        cls = cb.CatBoostClassifier if task == "classification" else cb.CatBoostRegressor
        return cls(iterations=CATBOOST_ROUNDS, random_seed=seed, thread_count=1,
                   allow_writing_files=False, verbose=0)
    import xgboost as xgb

    cls = xgb.XGBClassifier if task == "classification" else xgb.XGBRegressor
    return cls(random_state=seed, n_jobs=1)


def _fit(kind, task, seed, X, y):
    model = boosted_model(kind, task, seed)
    if kind == "xgb" and task == "classification":  # XGBoost wants labels 0..K-1
        from sklearn.preprocessing import LabelEncoder

        enc = LabelEncoder().fit(y)
        model.fit(X, enc.transform(y))
        return _Relabel(model, enc)
    return model.fit(X, y)


class _Relabel:
    """An XGBoost classifier predicting the original labels (prune-opt sees the model)."""

    def __init__(self, model, enc):
        self.model, self.enc = model, enc

    def predict(self, X):
        return self.enc.inverse_transform(self.model.predict(X))


def _ranking(forest, costs):
    """Features by the model's split count per unit of cost (free features first)."""
    internal = ~forest.is_leaf
    splits = np.bincount(forest.feature[internal], minlength=forest.n_features)
    cost = costs.feature_cost()
    value = np.divide(splits, cost, out=np.full(cost.size, np.inf), where=cost > 0)
    return np.argsort(-value, kind="stable")


def families(kind, model, forest, ctx, timer, args):
    import prune_opt as po
    from prune_opt.budget import fewer_trees_prunings

    fitted = model.model if isinstance(model, _Relabel) else model
    y_v = ctx.y_v if not isinstance(model, _Relabel) else model.enc.transform(ctx.y_v)
    relabel = (lambda p: p) if not isinstance(model, _Relabel) else model.enc.inverse_transform
    out = {}

    def member(pf, **info):
        m = proto.Member(ctx, relabel(pf.predict(ctx.X_v)), pf.average_cost(ctx.X_v),
                         lambda: (relabel(pf.predict(ctx.X_te)), pf.average_cost(ctx.X_te)),
                         **info)
        return m

    # the default call with every default; the paper search within --time-limit
    for name, extra in (("fit_budget", {}),
                        ("fit_budget paper", {"objective": "paper",
                                              "time_limit": args.time_limit})):
        rows = []
        for b in ctx.budgets:
            t0 = time.perf_counter()
            pf = timer(name, proto.quiet, po.fit_budget, fitted, ctx.X_v, y_v, costs=ctx.costs,
                       budget=b, **extra)
            rows.append(member(pf, budget=b, seconds=time.perf_counter() - t0))
        out[name] = rows
    out["fewer-rounds"] = [member(pf, rounds=m // forest.round_size)
                           for m, pf in fewer_trees_prunings(forest, costs=ctx.costs)]
    # every other registered baseline that takes a boosted model (GreedyPrune, ccp, ...)
    from prune_opt.budget import BASELINES

    for name, fn in BASELINES.items():
        if name in ("fewer-rounds", "fewer-trees"):
            continue
        try:
            got = timer(name, proto.quiet, fn, fitted, ctx.X_v, y_v, costs=ctx.costs)
        except (ValueError, TypeError) as exc:  # refused for a booster, with its reason
            out[name] = proto.Unavailable(f"refused: {str(exc).splitlines()[0][:80]}")
            continue
        out[name] = [member(pf) for _, pf in got]
    ranking = _ranking(forest, ctx.costs)
    subsets, over = [], 0
    for k in range(1, ranking.size + 1):
        cols = np.sort(ranking[:k])
        sub = timer("cheap-subset gbm", _fit, kind, ctx.task, ctx.seed, ctx.X_tr[:, cols],
                    ctx.y_tr)
        sf = po.as_forest(sub.model if isinstance(sub, _Relabel) else sub)
        full = _widened(sf, cols, forest.n_features)
        pf = po.PrunedForest(full, full.full_split_mask(), costs=ctx.costs)
        rel = sub.enc.inverse_transform if isinstance(sub, _Relabel) else (lambda p: p)
        m = proto.Member(ctx, rel(pf.predict(ctx.X_v)), pf.average_cost(ctx.X_v),
                         lambda pf=pf, rel=rel: (rel(pf.predict(ctx.X_te)),
                                                 pf.average_cost(ctx.X_te)),
                         eager=True, n_features=k)
        subsets.append(m)
        over += m.point["val_cost"] > max(ctx.budgets)
        if over == 2:
            break
    out["cheap-subset gbm"] = subsets
    if not args.no_cegb:
        out["cegb"] = timer("cegb", fam.cegb, ctx, refine=args.cegb_refine)
    if not args.no_catboost:
        out["catboost penalties"] = timer("catboost penalties", fam.catboost_penalties, ctx,
                                          refine=args.cegb_refine)
    return out


def _widened(forest, cols, n_features):
    """``forest`` (grown on the columns ``cols``) reading the full feature vector."""
    import copy

    out = copy.copy(forest)
    out.feature = np.where(forest.feature >= 0, np.asarray(cols)[forest.feature], -1)
    out.n_features, out.feature_names = n_features, None
    out.sklearn_trees = out.estimator = None  # route by the IR on the widened columns
    return out


def run_seed(name, X, y, costs, seed, args, *, task):
    import prune_opt as po
    from prune_opt.program import _boosted as _boosting

    _boosting.EXPANSION = args.expansion
    t0 = time.perf_counter()
    data = proto.split(X, y, args.max_rows, seed, stratify=task == "classification")
    ctx = proto.Context(data, costs, [], task=task, seed=seed, time_limit=args.time_limit)
    model = _fit(args.model, task, seed, ctx.X_tr, ctx.y_tr)
    forest = po.as_forest(model.model if isinstance(model, _Relabel) else model)
    base = float(po.PrunedForest(forest, forest.full_split_mask(), costs=costs)
                 .average_cost(ctx.X_v))
    ctx.base_cost, ctx.budgets = base, [f * base for f in args.budgets]
    timer = proto.Timer()
    fams = families(args.model, model, forest, ctx, timer, args)
    cells = proto.make_cells(fams, ctx, args.budgets, pipelines=())
    full = po.PrunedForest(forest, forest.full_split_mask(), costs=costs)
    # np.ravel: a CatBoost classifier predicts a column
    unpruned = ctx.test_point(np.ravel(model.predict(ctx.X_te)), full.average_cost(ctx.X_te))
    ran = {n: ms for n, ms in fams.items() if not isinstance(ms, proto.Unavailable)}
    calls = {n: [m.point["seconds"] for m in ms if "seconds" in m.point]
             for n, ms in ran.items()}
    return {"dataset": name, "seed": seed, "task": task, "model": f"{args.model} model",
            "expansion": args.expansion, "n_features": int(X.shape[1]),
            "unpruned": unpruned | {"val_cost": base}, "seconds": timer.seconds,
            "call_seconds": {n: v for n, v in calls.items() if v},
            "total_seconds": time.perf_counter() - t0, "cells": cells,
            "not_available": {n: ms.why for n, ms in fams.items() if n not in ran},
            "points": {n: [m.point for m in ms] for n, ms in ran.items()}}


def report_fn(results, budgets):
    table = report.summarise(results)
    report.print_table(results, table, budgets, order=ORDER)
    anchors = ("fewer-rounds", "cheap-subset gbm", "cegb", "catboost penalties")
    counts = {}
    for r in results:
        for cell in r["cells"]:
            ch = cell["chosen"]
            mine = ch["fit_budget"]
            metric = "test_acc" if r["task"] == "classification" else "test_mse"
            sign = 1 if metric == "test_acc" else -1
            # the target: never below a fitting pruning of the same model on validation
            val = "val_" + metric[len("test_"):]
            rivals = [ch[a][val] for a in PRUNING_BASELINES
                      if a in ch and not ch[a].get("over_budget")]
            if rivals:
                key = f"fit_budget >= {'/'.join(PRUNING_BASELINES)} (validation)"
                best = max(sign * v for v in rivals)
                counts.setdefault(key, [0, 0])
                counts[key][0] += sign * mine[val] >= best - 1e-12
                counts[key][1] += 1
            for a in anchors:
                if a in ch:
                    key = f"fit_budget >= {a} (test)"
                    won = sign * (mine[metric] - ch[a][metric]) >= -1e-12
                    counts.setdefault(key, [0, 0])
                    counts[key][0] += won
                    counts[key][1] += 1
            over = mine["test_cost"] > 1.02 * cell["budget"]
            counts.setdefault("fit_budget test cost > 1.02 B", [0, 0])
            counts["fit_budget test cost > 1.02 B"][0] += over
            counts["fit_budget test cost > 1.02 B"][1] += 1
    print("\nper (dataset, seed, budget) cell:")
    for k, (a, n) in counts.items():
        print(f"  {k:<36} {a}/{n}")
    secs = [s for r in results for s in r["call_seconds"].get("fit_budget", [])]
    if secs:
        print(f"  fit_budget median seconds: {np.median(secs):.2f} ({len(secs)} calls)")
    return {"counts": counts}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    proto.add_common_args(ap, datasets=DATASETS, quick="pima and heart, one seed")
    ap.add_argument("--model", choices=MODELS, default="hgb")
    ap.add_argument("--expansion", choices=("stagewise", "final"), default="stagewise")
    args = ap.parse_args(argv)
    if args.quick:
        args.datasets, args.seeds = args.datasets or ",".join(QUICK_DATASETS), "0"
    proto.finish_args(ap, args, DATASETS)

    def run(name, X, y, costs, seed, args):
        task = "classification" if name not in ("diabetes", "heart-severity") else "regression"
        return run_seed(name, X, y, costs, seed, args, task=task)

    proto.run_all(args, proto.load, run, report_fn)


if __name__ == "__main__":
    main()
