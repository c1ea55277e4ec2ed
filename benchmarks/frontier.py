"""Accuracy at a budget: every project pipeline against LightGBM's CEGB.

Protocol (the same for every method).  Rows are subsampled to at most
``--max-rows`` (4,000) and split train 50% / validation 25% / test 25%.  A
40-tree ``RandomForestClassifier`` is fitted on train; the budgets are 10, 25
and 50% of its average acquisition cost on validation.  Every method yields a
family of models; at a budget it keeps the one with the best *validation*
accuracy among those whose *validation* cost fits, and the table shows that
model's *test* accuracy, averaged over the seeds.  A method with nothing
within a budget falls back to the free constant predictor (the training
majority class), for CEGB as for the project.

Project methods (errors counted on each tree's in-bag sample):

* ``hull``          BudgetPrune exact hull (``tradeoff_curve``) of the RF;
* ``fit_budget``    ``prune_opt.fit_budget`` at each budget with each objective
  (paper / brier / accuracy), the objective chosen on validation like any
  other family member;
* ``greedy``, ``ccp``, ``fewer-trees``   baselines on the RF (the report checks,
  cell by cell and seed by seed, that fit_budget's validation accuracy is at
  least the best of theirs);
* ``budgetrf+hull`` BudgetRF (40 trees) and its exact hull;
* ``lazy+hull``, ``lazy+fit_budget``  ``LazyCostRandomForestClassifier``
  (CEGB's lazy penalty carried across a random forest's trees) over a
  tradeoff grid, each model pruned by its hull / by ``fit_budget`` (brier and
  accuracy objectives);
* ``...+refit``     the three best prunings (validation accuracy) of the
  pruned families (``REFIT``: hull, fit_budget, the lazy and subset ones)
  within each budget after ``refit_leaves(method="global")`` on the
  training rows (structure and cost unchanged);
* ``brier``         ``po.prune(..., objective="brier")`` over a lam grid, only
  when ``prune_opt.objectives`` is importable;
* ``subset``        ``SubsetForestClassifier`` (40 trees) on the k best features
  of the cost-aware elimination ranking (``rank_features_by_cost`` on the
  training rows), for every k until the forest costs more than the largest
  budget;
* ``subset+fit_budget``  at each budget, the two smallest of those forests
  that cost more than it, each pruned by ``fit_budget`` (paper and brier
  objectives).

"best pipeline" picks, per seed and budget, the project method with the best
validation accuracy within the budget.  CEGB is ``lightgbm.LGBMClassifier``
with ``cegb_penalty_feature_lazy`` = each feature's cost and a
``cegb_tradeoff`` grid from 0 to 1000, at 50 and 200 rounds; its cost is the
average per-example cost of the units its trees reach on validation
(``forest_builders.lightgbm_import.lightgbm_acquisition_cost``).

The line before the last counts the cells where fit_budget's validation
accuracy reaches the best baseline's in every seed.  The last printed line is
``cells within 0.5 point of CEGB: k/n``: the number
of (dataset, budget) cells where the best pipeline's mean test accuracy is at
least CEGB's minus 0.005.

Usage::

    python benchmarks/frontier.py --quick
    python benchmarks/frontier.py --json frontier.json --plot frontier.png
    python benchmarks/frontier.py --csv data.csv --target label --costs costs.json
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

DATASETS = ("digits", "spambase", "magic", "letter", "thyroid", "pima", "heart",
            "breast_cancer", "adult")
QUICK_DATASETS = ("pima", "heart", "breast_cancer")
BUDGETS = (0.10, 0.25, 0.50)
# (tradeoff, max_features, stop_on_penalty): always-split models whose penalty only steers
# the features, and CEGB-rule models whose unprofitable nodes become leaves
LAZY_GRID = ((1.0, 0.3, False), (0.1, 0.5, True), (0.3, 0.5, True))
CEGB_TRADEOFFS = (0.0,) + tuple(float(v) for v in np.logspace(-4, 3, 8))
FEWER_TREES = (1, 2, 3, 4, 6, 8, 12, 16, 20, 25, 30, 35, 40)
# fit_budget's objectives, chosen per budget on validation (the RF and the lazy forests)
FIT_BUDGET_OBJECTIVES = ("paper", "brier", "accuracy")
LAZY_FIT_BUDGET_OBJECTIVES = ("brier", "accuracy")
# the baselines fit_budget must never lose to (validation accuracy, same budget)
BASELINES = ("greedy", "ccp", "fewer-trees")
CEGB_ROUNDS = (50, 200)


# ---------------------------------------------------------------- data
def load(name, args):
    """(X, y, FeatureCosts, label) of a named dataset or of --csv."""
    from prune_opt import FeatureCosts
    from prune_opt.datasets import load_dataset

    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        d = load_breast_cancer()
        names = [str(n) for n in d.feature_names]
        return d.data, d.target, FeatureCosts.uniform(len(names), feature_names=names), \
            "uniform"
    ds = load_dataset(args.csv if name == "csv" else name,
                      target=args.target if name == "csv" else None)
    X, y = ds.X, ds.y
    if ds.X_test is not None:  # one pool; the protocol draws its own splits
        X, y = np.vstack([X, ds.X_test]), np.concatenate([y, ds.y_test])
    if name == "csv" and args.costs:
        spec = json.loads(Path(args.costs).read_text())
        return X, y, FeatureCosts(spec, feature_names=ds.feature_names), "from " + args.costs
    kind = "real" if ds.costs is not None else "uniform"
    return X, y, ds.costs_or_uniform(), kind


def split(X, y, max_rows, seed):
    """Train 50% / validation 25% / test 25% of at most ``max_rows`` rows."""
    from sklearn.model_selection import train_test_split

    rng = np.random.default_rng(seed)
    if X.shape[0] > max_rows:
        idx = rng.choice(X.shape[0], size=max_rows, replace=False)
        X, y = X[idx], y[idx]
    strat = y if np.min(np.unique(y, return_counts=True)[1]) >= 4 else None
    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=0.5, random_state=seed,
                                                  stratify=strat)
    strat = y_rest if np.min(np.unique(y_rest, return_counts=True)[1]) >= 2 else None
    X_v, X_te, y_v, y_te = train_test_split(X_rest, y_rest, test_size=0.5,
                                            random_state=seed, stratify=strat)
    return X_tr, y_tr, X_v, y_v, X_te, y_te


# ---------------------------------------------------------------- families
class Context:
    """Everything one (dataset, seed) run shares: splits, costs, budgets."""

    def __init__(self, data, costs, budgets, time_limit=10.0):
        self.X_tr, self.y_tr, self.X_v, self.y_v, self.X_te, self.y_te = data
        self.costs = costs
        self.budgets = budgets
        self.time_limit = time_limit  # seconds per fit_budget call


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def hull_family(model, ctx, cost_resolution):
    import prune_opt as po
    from prune_opt.budget import tradeoff_curve

    problem = po.compile_problem(model, ctx.X_v, ctx.y_v, costs=ctx.costs,
                                 train=(ctx.X_tr, ctx.y_tr))
    _, pts = _quiet(tradeoff_curve, problem,
                    cost_resolution=cost_resolution, return_points=True)
    return problem, [q.pruned for q in pts]


def fit_budget_family(model, problem, ctx, objectives=FIT_BUDGET_OBJECTIVES):
    """``prune_opt.fit_budget`` at every budget, once per objective: the family then
    picks, per budget, the objective with the best validation accuracy (what a
    practitioner would do with the one function)."""
    import prune_opt as po

    out = []
    for b in ctx.budgets:
        for obj in objectives:
            try:
                pf = _quiet(po.fit_budget, None, ctx.X_v, ctx.y_v, budget=b,
                            problem=problem, objective=obj, time_limit=ctx.time_limit)
            except ValueError:  # the budget is below the cheapest pruning
                continue
            pf.solve_info["fit_objective"] = obj
            out.append(pf)
    return out


def refit_candidates(prunings, points, budgets, top=3):
    """The ``top`` prunings by validation accuracy within each budget (refit is costly)."""
    keep = set()
    for b in budgets:
        ok = [i for i, q in enumerate(points) if q["val_cost"] <= b * (1 + 1e-9)]
        keep.update(sorted(ok, key=lambda i: -points[i]["val_acc"])[:top])
    return [prunings[i] for i in sorted(keep)]


def refit_family(prunings, ctx):
    from prune_opt._refit import refit_leaves

    return [refit_leaves(p, None, None, train=(ctx.X_tr, ctx.y_tr), in_bag=False,
                         smoothing=1.0, method="global") for p in prunings]


def lazy_models(ctx, seed, n_trees, grid):
    from forest_builders import LazyCostRandomForestClassifier

    return [LazyCostRandomForestClassifier(n_trees, tradeoff=t, max_features=mf,
                                           stop_on_penalty=stop, costs=ctx.costs,
                                           random_state=seed).fit(ctx.X_tr, ctx.y_tr)
            for t, mf, stop in grid]


def has_brier_objective():
    """True when ``prune_opt.objectives`` exists and ``po.prune`` takes ``objective=``."""
    import inspect

    import prune_opt as po

    try:
        found = importlib.util.find_spec("prune_opt.objectives") is not None
    except ImportError:
        return False
    return found and "objective" in inspect.signature(po.prune).parameters


def brier_family(rf, ctx, lams):
    import prune_opt as po

    return [_quiet(po.prune, rf, ctx.X_v, ctx.y_v, costs=ctx.costs, lam=lam,
                   objective="brier") for lam in lams]


def subset_models(ctx, seed, n_trees):
    """Forests on the nested prefixes of the cost ranking, smallest first, until two of
    them cost more than the largest budget on validation."""
    from forest_builders import SubsetForestClassifier, rank_features_by_cost

    ranking = rank_features_by_cost(ctx.X_tr, ctx.y_tr, costs=ctx.costs, n_estimators=n_trees,
                                    random_state=seed)
    models, over = [], 0
    for k in range(1, ranking.size + 1):
        m = SubsetForestClassifier(n_trees, features=ranking[:k], costs=ctx.costs,
                                   random_state=seed).fit(ctx.X_tr, ctx.y_tr)
        cost = float(m.acquisition_cost(ctx.X_v).mean())
        models.append((m, cost))
        over += cost > max(ctx.budgets)
        if over == 2:
            break
    return models


def subset_fit_budget_family(models, ctx, objectives=("paper", "brier")):
    """Per budget: the two smallest subset forests above it, pruned to it by fit_budget."""
    import prune_opt as po

    out, problems = [], {}  # a forest above several budgets is compiled once
    for b in ctx.budgets:
        for i, (m, _) in [(i, mc) for i, mc in enumerate(models) if mc[1] > b][:2]:
            if i not in problems:
                problems[i] = po.compile_problem(m, ctx.X_v, ctx.y_v, costs=ctx.costs,
                                                 train=(ctx.X_tr, ctx.y_tr))
            problem = problems[i]
            for obj in objectives:
                pf = _quiet(po.fit_budget, problem, ctx.X_v, ctx.y_v, budget=b,
                            objective=obj, time_limit=ctx.time_limit)
                pf.solve_info["fit_objective"] = obj
                out.append(pf)
    return out


def project_families(rf, ctx, seed, args, base_val):
    """Dict method -> list of PrunedForest, and seconds per method."""
    import prune_opt as po
    from forest_builders import BudgetRandomForestClassifier
    from prune_opt.budget import ccp_prunings, fewer_trees_prunings, greedy_prunings

    res = args.cost_resolution * base_val
    fams, secs = {}, {}

    def timed(name, fn):
        t0 = time.perf_counter()
        out = fn()
        secs[name] = secs.get(name, 0.0) + time.perf_counter() - t0
        return out

    problem, hull = timed("hull", lambda: hull_family(rf, ctx, res))
    fams["hull"] = hull
    fams["fit_budget"] = timed("fit_budget", lambda: fit_budget_family(rf, problem, ctx))
    fams["greedy"] = timed("greedy", lambda: [p for _, p in _quiet(
        greedy_prunings, rf, ctx.X_v, ctx.y_v, problem=problem)])
    fams["ccp"] = timed("ccp", lambda: [p for _, p in ccp_prunings(
        rf, costs=ctx.costs, problem=problem)])
    fams["fewer-trees"] = timed("fewer-trees", lambda: [
        p for _, p in fewer_trees_prunings(rf, costs=ctx.costs, sizes=[
            m for m in FEWER_TREES if m <= args.trees])])
    brf = timed("budgetrf+hull", lambda: BudgetRandomForestClassifier(
        n_estimators=args.trees, costs=ctx.costs, random_state=seed).fit(ctx.X_tr, ctx.y_tr))
    fams["budgetrf+hull"] = timed("budgetrf+hull", lambda: hull_family(brf, ctx, res)[1])
    lazy = timed("lazy+hull", lambda: lazy_models(ctx, seed, args.trees, args.lazy_grid))
    fams["lazy+hull"], fams["lazy+fit_budget"] = [], []
    for m in lazy:
        prob, fam = timed("lazy+hull", lambda m=m: hull_family(m, ctx, res))
        fams["lazy+hull"] += fam
        fams["lazy+fit_budget"] += timed("lazy+fit_budget", lambda m=m, prob=prob: (
            fit_budget_family(m, prob, ctx, LAZY_FIT_BUDGET_OBJECTIVES)))
    subsets = timed("subset", lambda: subset_models(ctx, seed, args.trees))
    fams["subset"] = [po.PrunedForest(m.forest_, m.forest_.full_split_mask(), costs=ctx.costs)
                      for m, _ in subsets]
    fams["subset+fit_budget"] = timed("subset+fit_budget",
                                      lambda: subset_fit_budget_family(subsets, ctx))
    if has_brier_objective():
        lams = sorted({float(p.lam) for p in hull if p.lam} or {1e-3})
        lams = lams[:: max(1, len(lams) // 8)]
        fams["brier"] = timed("brier", lambda: brier_family(rf, ctx, lams))
    return fams, secs


REFIT = ("hull", "fit_budget", "lazy+hull", "lazy+fit_budget", "subset+fit_budget")


# ---------------------------------------------------------------- evaluation
class Evaluator:
    """Accuracy and average cost of many prunings of one forest on one data set.

    Routes the rows through every tree once; each pruning (split mask, and
    leaf values for refit leaves) is then scored by array operations only.
    Same arithmetic as ``PrunedForest.predict`` / ``acquisition_cost``.
    """

    def __init__(self, forest, X, y, costs):
        f = forest
        Xc = f.check_X(X)
        self.forest, self.costs, self.y, self.n = f, costs, np.asarray(y), Xc.shape[0]
        rows, nodes, starts = [], [], []
        base = 0
        for t in range(f.n_trees):
            ind = f.decision_paths(Xc, t)
            rows.append(np.repeat(np.arange(self.n), np.diff(ind.indptr)))
            nodes.append(ind.indices.astype(np.int64) + f.node_offset[t])
            starts.append(ind.indptr[:-1] + base)
            base += ind.nnz
        self.rows, self.nodes = np.concatenate(rows), np.concatenate(nodes)
        self.starts = np.concatenate(starts)  # (n_trees * n,) path start, tree-major

    def covers(self, pf):
        return pf.forest.left is self.forest.left and pf.forest.n_trees == self.forest.n_trees

    def __call__(self, pf):
        f = self.forest
        split = pf.split_mask[self.nodes]
        n_split = np.add.reduceat(split.astype(np.int64), self.starts)
        leaves = self.nodes[self.starts + n_split].reshape(f.n_trees, self.n)
        proba = pf.forest.value[leaves].sum(axis=0)  # tree order, as predict_proba
        if f.n_trees > 1:
            proba /= f.n_trees
        pred = f.classes_.take(np.argmax(proba, axis=1))
        import scipy.sparse as sp

        used = sp.csr_matrix((np.ones(int(split.sum())), (self.rows[split],
                                                          f.feature[self.nodes[split]])),
                             shape=(self.n, f.n_features))
        cost = float(self.costs.cost_of_usage(used > 0).mean())
        return float(np.mean(pred == self.y)), cost


def score_family(prunings, ctx, evals):
    """Validation/test accuracy and cost of each PrunedForest."""
    out = []
    for p in prunings:
        key = id(p.forest.left)
        if key not in evals and p.forest.n_trees > 1 and p.forest.left.size > 1:
            evals[key] = (Evaluator(p.forest, ctx.X_v, ctx.y_v, ctx.costs),
                          Evaluator(p.forest, ctx.X_te, ctx.y_te, ctx.costs))
        pair = evals.get(key)
        if pair is not None and pair[0].covers(p):
            (va, vc), (ta, tc) = pair[0](p), pair[1](p)
        else:
            va, vc = p.score(ctx.X_v, ctx.y_v), p.average_cost(ctx.X_v, ctx.costs)
            ta, tc = p.score(ctx.X_te, ctx.y_te), p.average_cost(ctx.X_te, ctx.costs)
        out.append({"val_acc": va, "val_cost": vc, "test_acc": ta, "test_cost": tc})
        if "fit_objective" in p.solve_info:
            out[-1]["objective"] = p.solve_info["fit_objective"]
    return out


def cegb_fit(ctx, seed, rounds, tradeoff):
    """One LightGBM CEGB model, scored like every project model."""
    import lightgbm as lgb

    from forest_builders.lightgbm_import import lightgbm_acquisition_cost

    penalty = [float(c) for c in ctx.costs.feature_cost()]
    m = lgb.LGBMClassifier(n_estimators=rounds, cegb_tradeoff=tradeoff,
                           cegb_penalty_feature_lazy=penalty, random_state=seed, n_jobs=1,
                           verbose=-1)
    _quiet(m.fit, ctx.X_tr, ctx.y_tr)
    return {"rounds": rounds, "tradeoff": tradeoff,
            "val_acc": float(np.mean(m.predict(ctx.X_v) == ctx.y_v)),
            "test_acc": float(np.mean(m.predict(ctx.X_te) == ctx.y_te)),
            "val_cost": float(lightgbm_acquisition_cost(m, ctx.X_v, ctx.costs).mean()),
            "test_cost": float(lightgbm_acquisition_cost(m, ctx.X_te, ctx.costs).mean())}


def cegb_points(ctx, seed, args, fit=None):
    """LightGBM CEGB over the tradeoff grid and both round counts.

    The cost falls in cliffs as the tradeoff grows, so after the log grid every
    budget with no model in ``(budget / 2, budget]`` gets ``args.cegb_refine``
    geometric bisection steps between the neighbouring grid tradeoffs whose
    costs straddle it.  ``fit(ctx, seed, rounds, tradeoff)`` returns one point
    (default :func:`cegb_fit`; ``benchmarks/regression.py`` passes its
    regressor's).
    """
    fit = cegb_fit if fit is None else fit
    pts = []
    for rounds in args.cegb_rounds:
        own = [fit(ctx, seed, rounds, t) for t in args.cegb_tradeoffs]
        for b in ctx.budgets:
            for _ in range(args.cegb_refine):
                if any(b / 2 < p["val_cost"] <= b for p in own):
                    break
                above = [p["tradeoff"] for p in own if p["val_cost"] > b]
                below = [p["tradeoff"] for p in own if p["val_cost"] <= b / 2]
                if not above or not below or max(above) >= min(below):
                    break
                lo, hi = max(above), min(below)
                t = float(np.sqrt(lo * hi)) if lo > 0 else hi / 100.0
                own.append(fit(ctx, seed, rounds, t))
        pts += own
    return pts


def pick(points, budget, fallback):
    """Best validation accuracy within the budget; ``fallback`` when none fits."""
    ok = [p for p in points if p["val_cost"] <= budget * (1 + 1e-9)]
    if not ok:
        return fallback
    return max(ok, key=lambda p: (p["val_acc"], -p["val_cost"]))


def make_cells(points, fracs, budgets, fallback):
    """Per budget: every method's pick and the best project method (by validation)."""
    cells = []
    for frac, b in zip(fracs, budgets):
        chosen = {m: pick(pts, b, fallback) for m, pts in points.items()}
        project = [m for m in points if m != "cegb"]
        best = max(project, key=lambda m: (chosen[m]["val_acc"], -chosen[m]["val_cost"]),
                   default=None)
        cells.append({"frac": frac, "budget": b, "best_method": best,
                      "chosen": {m: {k: c[k] for k in ("val_acc", "test_acc", "val_cost",
                                                       "test_cost")} | {
                          "fallback": bool(c.get("fallback"))} for m, c in chosen.items()}})
    return cells


# ---------------------------------------------------------------- one run
def run_seed(name, X, y, costs, seed, args):
    from sklearn.ensemble import RandomForestClassifier

    import prune_opt as po

    data = split(X, y, args.max_rows, seed)
    X_tr, y_tr, X_v, y_v, X_te, y_te = data
    t0 = time.perf_counter()
    rf = RandomForestClassifier(n_estimators=args.trees, random_state=seed, n_jobs=1)
    rf.fit(X_tr, y_tr)
    base_val = float(po.acquisition_cost(rf, X_v, costs).mean())
    ctx = Context(data, costs, [f * base_val for f in args.budgets], args.time_limit)
    fams, secs = ({}, {}) if args.only_cegb else project_families(rf, ctx, seed, args, base_val)
    evals = {}
    points = {}
    for m, fam in list(fams.items()):
        t1 = time.perf_counter()
        points[m] = score_family(fam, ctx, evals)
        secs[m] += time.perf_counter() - t1
        if args.refit and m in REFIT:
            t1 = time.perf_counter()
            keep = refit_candidates(fam, points[m], ctx.budgets)
            points[m + "+refit"] = score_family(refit_family(keep, ctx), ctx, evals)
            secs[m + "+refit"] = time.perf_counter() - t1
    if not args.no_cegb:
        t1 = time.perf_counter()
        points["cegb"] = cegb_points(ctx, seed, args)
        secs["cegb"] = time.perf_counter() - t1
    values, counts = np.unique(y_tr, return_counts=True)
    major = values[np.argmax(counts)]
    fallback = {"val_acc": float(np.mean(y_v == major)), "test_acc": float(np.mean(y_te == major)),
                "val_cost": 0.0, "test_cost": 0.0, "fallback": True}
    cells = make_cells(points, args.budgets, ctx.budgets, fallback)
    return {"dataset": name, "seed": seed, "n_rows": int(len(y_tr) + len(y_v) + len(y_te)),
            "n_features": int(X.shape[1]), "unpruned": {
                "val_cost": base_val, "test_cost": float(po.acquisition_cost(rf, X_te,
                                                                             costs).mean()),
                "test_acc": float(np.mean(rf.predict(X_te) == y_te))},
            "seconds": secs, "total_seconds": time.perf_counter() - t0, "cells": cells,
            "fallback": fallback,
            "points": points}


# ---------------------------------------------------------------- report
def fit_budget_holds(chosen):
    """fit_budget's validation accuracy minus the best baseline's (None if not run)."""
    fb = chosen.get("fit_budget")
    bases = [chosen[b]["val_acc"] for b in BASELINES
             if b in chosen and not chosen[b].get("fallback")]
    if fb is None or not bases:
        return None
    return fb["val_acc"] - max(bases)


def summarise(results, budgets):
    """Per dataset: mean test accuracy over seeds of every method at every budget."""
    table = {}
    for r in results:
        d = table.setdefault(r["dataset"], {"seeds": 0, "methods": {}, "best": {}, "best_of": {},
                                            "cegb_none": {}, "fb_margin": {}})
        d["seeds"] += 1
        for cell in r["cells"]:
            f = cell["frac"]
            margin = fit_budget_holds(cell["chosen"])
            if margin is not None:
                d["fb_margin"].setdefault(f, []).append(margin)
            for m, c in cell["chosen"].items():
                d["methods"].setdefault(m, {}).setdefault(f, []).append(c["test_acc"])
            if cell["best_method"] is not None:  # None in an --only-cegb run
                d["best"].setdefault(f, []).append(
                    cell["chosen"][cell["best_method"]]["test_acc"])
                d["best_of"].setdefault(f, []).append(cell["best_method"])
            cegb = cell["chosen"].get("cegb", {})
            d["cegb_none"][f] = d["cegb_none"].get(f, 0) + int(bool(cegb.get("fallback")))
    for d in table.values():
        for m in d["methods"].values():
            for f in list(m):
                m[f] = float(np.mean(m[f]))
        d["best"] = {f: float(np.mean(v)) for f, v in d["best"].items()}
    return table


def print_fit_budget_check(table, budgets):
    """Per cell: does fit_budget's validation accuracy reach the best baseline's in
    every seed?  Returns (cells that hold, cells)."""
    k = n = 0
    print(f"{'dataset':<14} {'budget':>7}  fit_budget - best baseline, validation accuracy "
          f"(per seed; baselines: {', '.join(BASELINES)})")
    for name, d in table.items():
        for f in budgets:
            margins = d.get("fb_margin", {}).get(f)
            if not margins:
                continue
            ok = all(m >= -1e-12 for m in margins)
            n, k = n + 1, k + ok
            print(f"{name:<14} {format(100 * f, 'g') + '%':>7}  "
                  f"{' '.join(format(m, '+.3f') for m in margins)}  {'ok' if ok else 'LOSS'}")
    print()
    return k, n


def print_report(results, table, budgets):
    cols = " ".join(f"{'@' + format(100 * f, 'g') + '%':>7}" for f in budgets)
    print(f"{'dataset':<14} {'method':<22} {cols}   seconds/seed")
    print("-" * (40 + 8 * len(budgets) + 14))
    for name, d in table.items():
        runs = [r for r in results if r["dataset"] == name]
        secs = {m: np.mean([r["seconds"].get(m, 0.0) for r in runs]) for m in d["methods"]}
        for m, accs in d["methods"].items():
            if m == "cegb":
                continue
            vals = " ".join(f"{accs[f]:>7.3f}" for f in budgets)
            print(f"{name:<14} {m:<22} {vals}   {secs[m]:.1f}")
        if d["best"]:
            vals = " ".join(f"{d['best'][f]:>7.3f}" for f in budgets)
            print(f"{name:<14} {'BEST PIPELINE':<22} {vals}")
        if "cegb" in d["methods"]:
            vals = " ".join(f"{d['methods']['cegb'][f]:>7.3f}" for f in budgets)
            print(f"{name:<14} {'LightGBM CEGB':<22} {vals}   {secs['cegb']:.1f}")
        unp = np.mean([r["unpruned"]["test_acc"] for r in runs])
        print(f"{name:<14} {'(unpruned RF: ' + format(unp, '.3f') + ')':<22}")
        print()
    fb_k, fb_n = print_fit_budget_check(table, budgets)
    k = n = 0
    print(f"{'dataset':<14} {'budget':>7} {'best pipeline':>13} {'CEGB':>7} {'diff':>7}  "
          "chosen methods (per seed); * CEGB had no model within the budget in k seeds")
    for name, d in table.items():
        if "cegb" not in d["methods"] or not d["best"]:
            continue
        for f in budgets:
            best, cegb = d["best"][f], d["methods"]["cegb"][f]
            n += 1
            k += best >= cegb - 0.005
            print(f"{name:<14} {format(100 * f, 'g') + '%':>7} {best:>13.3f} {cegb:>7.3f} "
                  f"{best - cegb:>+7.3f}  {', '.join(d['best_of'][f])}"
                  + (f"  *{d['cegb_none'][f]}" if d["cegb_none"].get(f) else ""))
    print(f"cells where fit_budget's validation accuracy >= the best baseline's in every "
          f"seed: {fb_k}/{fb_n}")
    return k, n


def plot(results, path, budgets):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from prune_opt._io import atomic_write

    first = {}
    for r in results:
        first.setdefault(r["dataset"], r)
    k = len(first)
    ncol = min(3, k)
    nrow = (k + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(5 * ncol, 3.6 * nrow), squeeze=False)
    styles = {"hull": "C0-", "greedy": "C1.", "budgetrf+hull": "C2.", "lazy+hull": "C3.",
              "lazy+hull+refit": "C4.", "brier": "C5.", "cegb": "k^"}
    for ax, (name, r) in zip(axes.ravel(), first.items()):
        for m, st in styles.items():
            pts = sorted(r["points"].get(m, []), key=lambda p: p["test_cost"])
            if pts:
                ax.plot([p["test_cost"] for p in pts], [p["test_acc"] for p in pts], st,
                        ms=3, lw=1, label=m)
        for f in budgets:
            ax.axvline(f * r["unpruned"]["val_cost"], color="0.8", lw=0.8)
        ax.set_xscale("symlog", linthresh=max(1e-3, 0.05 * r["unpruned"]["val_cost"]))
        ax.set_xlim(left=0)
        ax.set_title(f"{name} (seed {r['seed']})")
        ax.set_xlabel("average test cost")
        ax.set_ylabel("test accuracy")
    for ax in axes.ravel()[k:]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=7)
    fig.tight_layout()
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------- main
def _floats(text):
    return tuple(float(v) for v in text.split(",") if v.strip())


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=None, help=f"comma-separated (default: {DATASETS})")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    ap.add_argument("--budgets", default="0.1,0.25,0.5",
                    help="shares of the unpruned forest's validation cost")
    ap.add_argument("--csv", default=None, help="a user CSV/TSV instead of named datasets")
    ap.add_argument("--target", default=None, help="label column of --csv")
    ap.add_argument("--costs", default=None, help="JSON {feature name: cost} for --csv")
    ap.add_argument("--trees", type=int, default=40)
    ap.add_argument("--time-limit", type=float, default=10.0,
                    help="seconds per fit_budget call (default 10)")
    ap.add_argument("--max-rows", type=int, default=4000)
    ap.add_argument("--cost-resolution", type=float, default=0.01,
                    help="hull refinement, as a share of the unpruned cost")
    ap.add_argument("--no-refit", dest="refit", action="store_false")
    ap.add_argument("--no-cegb", action="store_true")
    ap.add_argument("--only-cegb", action="store_true",
                    help="run CEGB only; --merge puts its points into a full run's results")
    ap.add_argument("--cegb-refine", type=int, default=4,
                    help="bisection steps of the CEGB tradeoff per budget the grid misses")
    ap.add_argument("--quick", action="store_true",
                    help=f"{QUICK_DATASETS}, one seed, smaller grids")
    ap.add_argument("--merge", default=None, metavar="A.json,B.json",
                    help="print the report of earlier --json runs (e.g. datasets run in "
                         "parallel processes) instead of running")
    ap.add_argument("--exclude-objectives", default="", metavar="accuracy,...",
                    help="with --merge: re-pick every cell without fit_budget's prunings for "
                         "these objectives (e.g. to see what the accuracy objective's "
                         "fitting of the validation rows does to the best pipeline)")
    ap.add_argument("--json", default=None, metavar="OUT")
    ap.add_argument("--plot", default=None, metavar="OUT.png")
    args = ap.parse_args(argv)
    if args.costs and not args.csv:
        ap.error("--costs goes with --csv FILE")
    args.seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    args.exclude_objectives = [o.strip() for o in args.exclude_objectives.split(",")
                               if o.strip()]
    args.budgets = _floats(args.budgets)
    if not args.budgets or any(not 0 < b for b in args.budgets):
        ap.error("--budgets must be positive shares, e.g. 0.1,0.25,0.5")
    args.lazy_grid, args.cegb_tradeoffs, args.cegb_rounds = LAZY_GRID, CEGB_TRADEOFFS, CEGB_ROUNDS
    names = list(DATASETS)
    if args.quick:
        names, args.seeds = list(QUICK_DATASETS), args.seeds[:1]
        args.lazy_grid = LAZY_GRID[::2]
        args.cegb_tradeoffs = (0.0,) + tuple(float(v) for v in np.logspace(-3, 3, 7))
    if args.datasets:
        names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    if args.csv:
        names = ["csv"]
    args.names = names
    for p in (args.json, args.plot):
        if p:
            from prune_opt._io import check_output_path

            check_output_path(p, "--json/--plot")
    return args


def write_json(args, results):
    from prune_opt._io import atomic_write

    keep = {k: v for k, v in vars(args).items() if k != "names"}
    with atomic_write(args.json, "w") as fh:
        json.dump({"args": keep, "results": results}, fh, default=str)


def _replace_cegb(full, cegb_only):
    """Put the CEGB points of an ``--only-cegb`` run into a full run's result."""
    full["points"]["cegb"] = cegb_only["points"]["cegb"]
    own = {c["frac"]: c["chosen"].get("cegb", {}) for c in cegb_only["cells"]}
    for cell in full["cells"]:
        # the constant predictor stands in when nothing fits (a --no-cegb run has no
        # CEGB cell of its own: the CEGB run's, on the same split, is used)
        old = cell["chosen"].get("cegb") or own.get(cell["frac"], {})
        none = dict(old) if old.get("fallback") else {"val_acc": -1.0, "val_cost": 0.0}
        new = pick(full["points"]["cegb"], cell["budget"], none)
        cell["chosen"]["cegb"] = {k: new[k] for k in ("val_acc", "test_acc", "val_cost",
                                                      "test_cost")} | {
            "fallback": bool(new.get("fallback"))}


def _tag_objectives(points, n_budgets):
    """Objective of each fit_budget point of a run that did not record it (the family
    runs budgets in order, each objective in order)."""
    for fam, objs in (("fit_budget", FIT_BUDGET_OBJECTIVES),
                      ("lazy+fit_budget", LAZY_FIT_BUDGET_OBJECTIVES)):
        pts = points.get(fam, [])
        if pts and "objective" not in pts[0] and len(pts) % (n_budgets * len(objs)) == 0:
            for i, q in enumerate(pts):
                q["objective"] = objs[i % len(objs)]


def exclude_objectives(results, excluded, args):
    """Re-pick every cell without the fit_budget points of the ``excluded`` objectives
    (and without the ``+refit`` families of fit_budget, whose sources are not recorded)."""
    for r in results:
        _tag_objectives(r["points"], len(r["cells"]))
        for fam in ("fit_budget+refit", "lazy+fit_budget+refit", "subset+fit_budget+refit"):
            r["points"].pop(fam, None)
        for fam in ("fit_budget", "lazy+fit_budget", "subset+fit_budget"):
            if fam in r["points"]:
                r["points"][fam] = [q for q in r["points"][fam]
                                    if q.get("objective") not in excluded]
        fallback = r.get("fallback")
        if fallback is None:  # older runs: the training majority class on the same split
            X, y, _, _ = load(r["dataset"], args)
            _, y_tr, _, y_v, _, y_te = split(X, y, args.max_rows, r["seed"])
            values, counts = np.unique(y_tr, return_counts=True)
            major = values[np.argmax(counts)]
            fallback = {"val_acc": float(np.mean(y_v == major)),
                        "test_acc": float(np.mean(y_te == major)), "val_cost": 0.0,
                        "test_cost": 0.0, "fallback": True}
        r["cells"] = make_cells(r["points"], [c["frac"] for c in r["cells"]],
                                [c["budget"] for c in r["cells"]], fallback)
    return results


def merged_results(paths):
    """Results of earlier ``--json`` runs in one list (``--only-cegb`` runs merged in)."""
    results, budgets, cegb_only = [], None, []
    for p in paths.split(","):
        spec = json.loads(Path(p.strip()).read_text())
        if spec["args"].get("only_cegb"):
            cegb_only += spec["results"]
        else:
            results += spec["results"]
        b = tuple(spec["args"]["budgets"])
        if budgets not in (None, b):
            raise SystemExit(f"--merge: {p} used budgets {b}, the others {budgets}")
        budgets = b
    index = {(r["dataset"], r["seed"]): r for r in results}
    for r in cegb_only:
        if (r["dataset"], r["seed"]) in index:
            _replace_cegb(index[(r["dataset"], r["seed"])], r)
    return results, budgets


def main(argv=None):
    args = parse(argv)
    if args.merge:
        results, args.budgets = merged_results(args.merge)
        if args.exclude_objectives:
            results = exclude_objectives(results, set(args.exclude_objectives), args)
        k, n = print_report(results, summarise(results, args.budgets), args.budgets)
        if args.plot:
            plot(results, args.plot, args.budgets)
        print(f"cells within 0.5 point of CEGB: {k}/{n}")
        return 0
    if not args.no_cegb and importlib.util.find_spec("lightgbm") is None:
        print("lightgbm is not installed: CEGB skipped (pip install prune-opt[lightgbm])",
              file=sys.stderr)
        args.no_cegb = True
    results = []
    for name in args.names:
        try:
            X, y, costs, kind = load(name, args)
        except (FileNotFoundError, ValueError) as exc:
            print(f"{name}: skipped ({exc})", file=sys.stderr)
            continue
        for seed in args.seeds:
            t0 = time.perf_counter()
            r = run_seed(name if name != "csv" else Path(args.csv).name, X, y, costs, seed, args)
            r["costs"] = kind
            results.append(r)
            print(f"[{r['dataset']} seed {seed}: {time.perf_counter() - t0:.1f}s]",
                  file=sys.stderr, flush=True)
            if args.json:  # after every seed, so an interrupted run keeps what it did
                write_json(args, results)
    table = summarise(results, args.budgets)
    k, n = print_report(results, table, args.budgets)
    if args.plot:
        plot(results, args.plot, args.budgets)
    print(f"cells within 0.5 point of CEGB: {k}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
