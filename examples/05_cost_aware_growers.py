"""Grow a cost-aware forest, then prune it with BudgetPrune.

BudgetPrune prunes any forest; a forest grown with costs in mind starts
cheaper.  On Pima (Turney's costs, shared blood draw) this script grows

* a plain scikit-learn random forest,
* a Feature-Budgeted Random Forest (``forest_builders.budget_rf``, Nan, Wang &
  Saligrama 2015) that adds trees while its validation cost stays under a
  budget,

and prunes each with the same lam, reporting test accuracy and cost.  A
bagged CEGB model (LightGBM's cost-efficient gradient boosting in random
forest mode, so its trees are averaged and can be pruned) is added when
``forest_builders.cegb`` and lightgbm are available.

Needs the ``forest_builders`` package; without it the script says so and
exits with status 0.

Run::

    python examples/05_cost_aware_growers.py [--budget 20] [--lam 0.006]
"""

from __future__ import annotations

import argparse
import importlib.util

from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.datasets import load_dataset


def _present(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=20.0,
                        help="average validation cost allowed to the BudgetRF")
    parser.add_argument("--lam", type=float, default=6e-3, help="BudgetPrune trade-off")
    parser.add_argument("--trees", type=int, default=30)
    args = parser.parse_args(argv)

    if not _present("forest_builders.budget_rf"):
        print("forest_builders is not present in this installation of prune-opt; the "
              "cost-aware growers are unavailable, nothing to show.")
        return 0
    from forest_builders.budget_rf import BudgetRandomForestClassifier

    data = load_dataset("pima")
    X, X_test, y, y_test = train_test_split(data.X, data.y, test_size=0.3, random_state=0,
                                            stratify=data.y)
    X_train, X_val, y_train, y_val = train_test_split(X, y, train_size=0.5, random_state=0,
                                                      stratify=y)
    costs = data.costs

    models = {
        "sklearn RF": RandomForestClassifier(n_estimators=args.trees, random_state=0)
        .fit(X_train, y_train),
        f"BudgetRF (budget {args.budget:g})": BudgetRandomForestClassifier(
            budget=args.budget, max_trees=args.trees, costs=costs, random_state=0)
        .fit(X_train, y_train, X_val, y_val),
    }
    if _present("forest_builders.cegb") and _present("lightgbm"):
        from forest_builders.cegb import CEGBClassifier

        models["CEGB (LightGBM, rf)"] = CEGBClassifier(
            costs=costs, boosting_type="rf", cegb_tradeoff=0.01, n_estimators=args.trees,
            subsample=0.632, subsample_freq=1, random_state=0).fit(X_train, y_train)
    else:
        print("CEGB skipped: forest_builders.cegb or lightgbm is not installed")

    print(f"pima: {len(y_train)} train / {len(y_val)} validation / {len(y_test)} test rows; "
          f"BudgetPrune with lam={args.lam:g}")
    print(f"{'model':>22} {'trees':>5} {'acc':>7} {'cost':>7}  {'pruned acc':>10} "
          f"{'pruned cost':>11}")
    for name, model in models.items():
        forest = po.Forest.from_sklearn(model) if hasattr(model, "estimators_") \
            else model.to_forest()
        acc = float((model.predict(X_test) == y_test).mean())
        cost = po.acquisition_cost(model, X_test, costs).mean()
        # in-bag errors when the model records its bootstrap samples (the paper's choice);
        # otherwise (LightGBM) errors are counted on the validation rows
        train = (X_train, y_train) if forest.in_bag is not None or hasattr(model, "estimators_") \
            else None
        pruned = po.prune(model, X_val, y_val, costs=costs, lam=args.lam, train=train)
        print(f"{name:>22} {forest.n_trees:5d} {acc:7.4f} {cost:7.2f}  "
              f"{pruned.score(X_test, y_test):10.4f} {pruned.average_cost(X_test):11.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
