"""Regression at a budget: pruned random-forest regressors against CEGB and CatBoost penalties.

The protocol is ``benchmarks/frontier.py``'s (``benchmarks/_protocol.py``): train 50% /
validation 25% / test 25%, budgets at 10 / 25 / 50% of a 40-tree
``RandomForestRegressor``'s validation cost, every family's member chosen by the
lowest *validation* mean squared error within the budget, the table showing its
*test* MSE averaged over the seeds; the constant training mean stands in when
nothing fits.  Families (node errors: squared error on each tree's in-bag sample,
normalised by the target variance; see ``docs/regression.md``):

* ``hull``                the exact trade-off curve of the random forest;
* ``fit_budget``          ``fit_budget`` on that program at each budget (``--time-limit`` s);
* ``fit_budget default``  one ``po.fit_budget(rf, X_val, y_val, costs=, budget=B)`` call per
  budget, every other argument at its default;
* the registered baselines (``prune_opt.budget.BASELINES``);
* ``refit``               the three best prunings (validation MSE) of ``hull``, ``fit_budget``
  and ``greedy`` within each budget after ``refit_leaves(method="global", smoothing=s)``,
  ``s`` in {1, 10};
* anchors: ``cegb`` (``lightgbm.LGBMRegressor`` with CEGB, lazy and coupled penalties,
  num_leaves 7 and 31, 50 and 200 rounds, tradeoff 0 to 1000), ``catboost penalties``
  (``CatBoostRegressor``, 100 rounds, first-use and per-object feature penalties = the
  costs, ``penalties_coefficient`` on a grid times the training target's variance; see
  ``benchmarks/frontier.py``), ``cheap-subset rf``
  (a random forest on the prefix of the features ranked by importance per unit of cost)
  and ``cheap-subset gbm`` (``lightgbm.LGBMRegressor`` with its defaults on the prefix of
  the features ranked by a default model's gain per unit of cost);
* ``estimator``           ``forest_builders.BudgetPrunedForestRegressor(budget=B, costs=,
  random_state=seed)`` on train + validation with its defaults.

Datasets: ``heart-severity`` (UCI Cleveland, severity 0-4, Turney's real test
costs) and ``diabetes`` (scikit-learn's bundled set, an illustrative cost
model stated in ``prune_opt.datasets``).

Usage::

    python benchmarks/regression.py --json regression.json      # 2 datasets x 3 seeds
    python benchmarks/regression.py --quick
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import _families as fam  # noqa: E402
from benchmarks import _protocol as proto  # noqa: E402
from benchmarks import _report as report  # noqa: E402

DATASETS = ("heart-severity", "diabetes")
ORDER = ("hull", "fit_budget", "fit_budget default", "greedy", "ccp", "fewer-trees",
         "impurity", "refit", "cheap-subset rf", "cheap-subset gbm", "cegb",
         "catboost penalties", "estimator")
PIPELINES = ("hull", "fit_budget", "fit_budget default", "greedy", "ccp", "fewer-trees",
             "impurity", "refit")
REFIT_FROM = ("hull", "fit_budget", "greedy")
REFIT_SMOOTHING = (1.0, 10.0)


# --families targets: the rows the targets are counted on
TARGET_FAMILIES = ("fit_budget default", "greedy", "cheap-subset rf", "cheap-subset gbm",
                   "cegb", "catboost penalties", "estimator")


def families(rf, ctx, timer, args):
    if args.only is not None:
        return fam.only(rf, ctx, timer, args, args.only)
    out = {}
    problem, hull = timer("hull", fam.hull, rf, ctx, None)
    out["hull"] = timer("hull", fam.score, hull, ctx)
    out["fit_budget"] = timer("fit_budget", fam.fit_budget_objectives, problem, ctx,
                              ("paper",))
    out["fit_budget default"] = timer("fit_budget default", fam.fit_budget_calls, rf, ctx)
    out.update(fam.baselines(rf, problem, ctx, timer))
    out["refit"] = timer("refit", fam.refit, [m for n in REFIT_FROM for m in out[n]], ctx,
                         smoothing=REFIT_SMOOTHING)
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
    return proto.run_seed(name, X, y, costs, seed, args, task="regression",
                          families=lambda rf, ctx, timer: families(rf, ctx, timer, args),
                          pipelines=PIPELINES)


def print_report(results, budgets):
    table = report.summarise(results)
    report.print_table(results, table, budgets, order=ORDER)
    report.print_cells(table, budgets, ["estimator", "cegb", "catboost penalties",
                                        "cheap-subset rf", "cheap-subset gbm"])
    report.print_winners(results)
    targets = report.regression_targets(results, table, budgets)
    report.print_targets(targets)
    return targets


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    proto.add_common_args(ap, datasets=DATASETS,
                          quick="one seed, 20 trees, smaller CEGB grid, 2 s per fit_budget call")
    proto.add_families_arg(ap, TARGET_FAMILIES)
    args = ap.parse_args(argv)
    proto.check_families(ap, args, TARGET_FAMILIES)
    args.cegb_grid = fam.CEGB_QUICK if args.quick else {}
    args.catboost_grid = fam.CATBOOST_QUICK if args.quick else {}
    if args.quick:
        if args.seeds == "0,1,2":
            args.seeds = "0"
        if args.time_limit == 10.0:
            args.time_limit = 2.0
        args.trees = 20 if args.trees == 40 else args.trees
        args.cegb_refine = min(args.cegb_refine, 2)
    return proto.finish_args(ap, args, DATASETS)


def main(argv=None):
    args = parse(argv)
    proto.run_all(args, proto.load, run_seed, print_report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
