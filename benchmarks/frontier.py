"""Accuracy at a budget: the project's pipelines against CEGB, CatBoost penalties, cheap subsets.

The anchors are LightGBM's CEGB, CatBoost grown under its feature penalties and
models on the cheapest feature prefixes.

The protocol (splits, budgets, selection on validation, scoring) is
``benchmarks/_protocol.py``'s; the families are built in ``_families.py`` and the
report in ``_report.py``.  Families (classification; errors of the pruning
program counted on each tree's in-bag sample, costs on validation):

* ``hull``                 the exact trade-off curve of the random forest;
* ``fit_budget``           ``fit_budget`` on that program at each budget with the
  objectives paper / brier / accuracy (``--time-limit`` s each), chosen on validation;
* ``fit_budget default``   one ``po.fit_budget(rf, X_val, y_val, costs=, budget=B)`` call per
  budget with every other argument at its default;
* ``fit_budget paper`` / ``fit_budget brier``  the same call with the objective set by hand
  (``--time-limit`` s each);
* the registered baselines (``prune_opt.budget.BASELINES``: greedy, ccp, fewer-trees, ...);
* ``budgetrf+hull``, ``lazy+hull``, ``lazy+fit_budget``, ``subset``, ``subset+fit_budget``:
  the cost-aware growers of ``forest_builders``, pruned;
* ``...+refit``            leaves of the three best prunings per budget refitted jointly;
* ``brier``                ``po.prune(objective="brier")`` over a lam grid;
* anchors: ``cegb`` (LightGBM's CEGB, lazy and coupled penalties, num_leaves 7 and 31,
  50 and 200 rounds, tradeoff 0 to 1000, the configuration chosen on validation),
  ``catboost penalties`` (CatBoost, 100 rounds, ``first_feature_use_penalties`` = the
  costs on symmetric trees of depth 4 and 6, ``per_object_feature_penalties`` on
  depth-6 Depthwise trees, a grid of ``penalties_coefficient``, chosen on validation;
  its cost is that of the features the model's own splits read),
  ``cheap-subset rf`` (a random forest on the prefix of the features ranked by
  importance per unit of cost, the prefix chosen on validation) and
  ``cheap-subset gbm`` (LightGBM with its default parameters on the prefix of the
  features ranked by a default LightGBM's gain per unit of cost, the prefix chosen on
  validation);
* ``estimator``            ``forest_builders.BudgetPrunedForestClassifier(budget=B, costs=,
  random_state=seed)`` fitted on train + validation with its defaults, one per budget.

"best pipeline" picks, per seed and budget, the project family with the best
validation accuracy within the budget (the estimator, which saw the validation rows,
and the anchors are not among them).  The report ends with the estimator's winners
by candidate family (and whether a pruning won), the targets counted over the cells
of the run, how often the estimator's test cost exceeds 1.02 x the budget, its
slowest fit against 1.25 x its time limit, and the median seconds of the one-call
rows.

Usage::

    python benchmarks/frontier.py --quick                       # 2 small datasets, 1 seed
    python benchmarks/frontier.py --json frontier.json          # 9 datasets x 3 seeds
    python benchmarks/frontier.py --datasets digits --seeds 0 --json a.json
    python benchmarks/frontier.py --merge a.json,b.json         # report of parallel runs
    python benchmarks/frontier.py --families targets --json t.json   # only the target rows
    python benchmarks/frontier.py --csv data.csv --target label --costs costs.json
    python benchmarks/frontier.py --families estimator --candidates --json c.json
    python benchmarks/selection_rules.py c.json                 # the estimator's selection
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import _families as fam  # noqa: E402
from benchmarks import _protocol as proto  # noqa: E402
from benchmarks import _report as report  # noqa: E402

DATASETS = ("digits", "spambase", "magic", "letter", "thyroid", "pima", "heart",
            "breast_cancer", "adult")
QUICK_DATASETS = ("pima", "heart")
# (tradeoff, max_features, stop_on_penalty): always-split models whose penalty only steers
# the features, and CEGB-rule models whose unprofitable nodes become leaves
LAZY_GRID = ((1.0, 0.3, False), (0.1, 0.5, True), (0.3, 0.5, True))
FIT_BUDGET_OBJECTIVES = ("paper", "brier", "accuracy")
LAZY_FIT_BUDGET_OBJECTIVES = ("brier", "accuracy")
# the baselines the fit_budget family must never lose to on validation
CHECKED_BASELINES = ("greedy", "ccp", "fewer-trees")
ANCHORS = ("cegb", "catboost penalties", "cheap-subset rf", "cheap-subset gbm")
# the pruned families whose best prunings get their leaves refitted
REFIT = ("hull", "fit_budget", "lazy+hull", "lazy+fit_budget", "subset+fit_budget")
ORDER = ("hull", "fit_budget", "fit_budget default", "fit_budget paper", "fit_budget brier",
         "greedy", "ccp", "fewer-trees", "impurity", "budgetrf+hull", "lazy+hull",
         "lazy+fit_budget", "subset", "subset+fit_budget", "hull+refit", "fit_budget+refit",
         "lazy+hull+refit", "lazy+fit_budget+refit", "subset+fit_budget+refit", "brier",
         "cheap-subset rf", "cheap-subset gbm", "cegb", "catboost penalties", "estimator")
STYLES = {"hull": "C0-", "greedy": "C1.", "budgetrf+hull": "C2.", "lazy+hull": "C3.",
          "subset": "C4.", "brier": "C5.", "cheap-subset rf": "C6.", "cheap-subset gbm": "C7.",
          "cegb": "k^", "catboost penalties": "C8v"}


# --families targets: the rows the issue targets are counted on
TARGET_FAMILIES = ("fit_budget default", "fit_budget paper", "fit_budget brier", "greedy",
                   "cheap-subset rf", "cheap-subset gbm", "cegb", "catboost penalties",
                   "estimator")


def families(rf, ctx, timer, args):
    """{family: members, or None when not available} of one (dataset, seed) run."""
    if args.only is not None:
        return fam.only(rf, ctx, timer, args, args.only)
    import prune_opt as po

    res = args.cost_resolution * ctx.base_cost
    out = {}
    problem, hull = timer("hull", fam.hull, rf, ctx, res)
    out["hull"] = timer("hull", fam.score, hull, ctx)
    out["fit_budget"] = timer("fit_budget", fam.fit_budget_objectives, problem, ctx,
                              FIT_BUDGET_OBJECTIVES)
    out["fit_budget default"] = timer("fit_budget default", fam.fit_budget_calls, rf, ctx)
    for obj in ("paper", "brier"):
        out[f"fit_budget {obj}"] = timer(f"fit_budget {obj}", fam.fit_budget_calls, rf, ctx,
                                         objective=obj, time_limit=args.time_limit)
    out.update(fam.baselines(rf, problem, ctx, timer))
    brf = timer("budgetrf+hull", fam.budget_rf, ctx)
    out["budgetrf+hull"] = timer("budgetrf+hull", lambda: fam.score(
        fam.hull(brf, ctx, res)[1], ctx))
    out["lazy+hull"], out["lazy+fit_budget"] = [], []
    for m in timer("lazy+hull", fam.lazy_forests, ctx, args.lazy_grid):
        prob, prunings = timer("lazy+hull", fam.hull, m, ctx, res)
        out["lazy+hull"] += timer("lazy+hull", fam.score, prunings, ctx)
        out["lazy+fit_budget"] += timer("lazy+fit_budget", fam.fit_budget_objectives, prob, ctx,
                                        LAZY_FIT_BUDGET_OBJECTIVES)
    subsets = timer("subset", fam.subset_forests, ctx)
    out["subset"] = timer("subset", fam.score, [
        po.PrunedForest(m.forest_, m.forest_.full_split_mask(), costs=ctx.costs)
        for m, _ in subsets], ctx)
    out["subset+fit_budget"] = timer("subset+fit_budget", fam.subset_fit_budget, subsets, ctx)
    if args.refit:
        for name in REFIT:
            out[name + "+refit"] = timer(name + "+refit", fam.refit, out[name], ctx)
    lams = sorted({float(p.lam) for p in hull if p.lam} or {1e-3})
    out["brier"] = timer("brier", fam.brier, rf, ctx, lams[:: max(1, len(lams) // 8)])
    out["cheap-subset rf"] = timer("cheap-subset rf", fam.cheap_subset_rf, rf, ctx)
    out["cheap-subset gbm"] = timer("cheap-subset gbm", fam.cheap_subset_gbm, rf, ctx)
    if not args.no_cegb:
        out["cegb"] = timer("cegb", fam.cegb, ctx, refine=args.cegb_refine, **args.cegb_grid)
    if not args.no_catboost:
        out["catboost penalties"] = timer("catboost penalties", fam.catboost_penalties, ctx,
                                          refine=args.cegb_refine, **args.catboost_grid)
    out["estimator"] = timer("estimator", fam.estimator, ctx)
    return out


def run_seed(name, X, y, costs, seed, args):
    def fams(rf, ctx, timer):
        return families(rf, ctx, timer, args)

    label = Path(args.csv).name if name == "csv" else name
    return proto.run_seed(label, X, y, costs, seed, args, task="classification",
                          families=fams,
                          pipelines=[m for m in ORDER if m not in ANCHORS + ("estimator",)])


def print_report(results, budgets, plot_path=None):
    table = report.summarise(results)
    report.print_table(results, table, budgets, order=ORDER)
    fb_check = report.print_fit_budget_check(results, budgets, CHECKED_BASELINES)
    report.print_cells(table, budgets, ["estimator", "cegb", "catboost penalties",
                                        "cheap-subset rf", "cheap-subset gbm"])
    report.print_winners(results)
    report.print_cells(table, budgets, ["fit_budget default", "fit_budget paper",
                                        "fit_budget brier"])
    targets = {"fit_budget family >= best baseline on validation in every seed": fb_check,
               **report.frontier_targets(results, table, budgets)}
    report.print_targets(targets)
    if plot_path:
        report.plot(results, plot_path, budgets, STYLES)
    return targets


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    proto.add_common_args(ap, datasets=DATASETS,
                          quick=f"{','.join(QUICK_DATASETS)}, one seed, smaller grids and "
                                "2 s per fit_budget call (a few minutes)")
    ap.add_argument("--csv", default=None, help="a user CSV/TSV instead of named datasets")
    ap.add_argument("--target", default=None, help="label column of --csv")
    ap.add_argument("--costs", default=None, help="JSON {feature name: cost} for --csv")
    ap.add_argument("--cost-resolution", type=float, default=0.01,
                    help="hull refinement, as a share of the unpruned cost")
    ap.add_argument("--no-refit", dest="refit", action="store_false")
    ap.add_argument("--plot", default=None, metavar="OUT.png")
    ap.add_argument("--candidates", action="store_true",
                    help="record every candidate the estimator scores (select-row and test "
                         "scores) in the --json output, for benchmarks/selection_rules.py")
    proto.add_families_arg(ap, TARGET_FAMILIES)
    args = ap.parse_args(argv)
    proto.check_families(ap, args, TARGET_FAMILIES)
    if args.costs and not args.csv:
        ap.error("--costs goes with --csv FILE")
    quick = args.quick
    args.lazy_grid = LAZY_GRID[1:2] if quick else LAZY_GRID
    args.cegb_grid = fam.CEGB_QUICK if quick else {}
    args.catboost_grid = fam.CATBOOST_QUICK if quick else {}
    if quick:
        if args.seeds == "0,1,2":
            args.seeds = "0"
        if args.time_limit == 10.0:
            args.time_limit = 2.0
        args.cegb_refine = min(args.cegb_refine, 2)
    args = proto.finish_args(ap, args, QUICK_DATASETS if quick else DATASETS)
    if args.csv:
        args.names = ["csv"]
    if args.plot:
        from prune_opt._io import check_output_path

        check_output_path(args.plot, "--plot")
    return args


def main(argv=None):
    args = parse(argv)

    def load(name):
        return proto.load(name, csv=args.csv, target=args.target, costs_json=args.costs)

    proto.run_all(args, load, run_seed,
                  lambda results, budgets: print_report(results, budgets, args.plot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
