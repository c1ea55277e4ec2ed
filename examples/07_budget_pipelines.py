"""Make a forest cost at most B per example: three pipelines, chosen on validation.

The user's first question: "make my model cost at most B per example and keep it
accurate".  On Pima (Turney's costs; the blood tests share one draw) this script
takes B = a share of what a 40-tree random forest costs on validation and builds

* the random forest pruned to B by ``fit_budget`` (BudgetPrune's objective);
* a lazy-penalty forest (``LazyCostRandomForestClassifier``: trees reuse the
  features each example has already paid for) pruned to B by ``fit_budget``;
* forests on the cheapest useful feature subsets (``rank_features_by_cost`` and
  ``SubsetForestClassifier``): the two smallest subsets whose forests cost more
  than B, each pruned to B by ``fit_budget``;
* LightGBM's cost-efficient gradient boosting (CEGB) over a tradeoff grid, when
  lightgbm is installed (its models are not pruned; those within B compete).

Every candidate must cost at most B on the validation rows; the one with the best
validation accuracy is chosen, and its test accuracy and cost are reported.

Run::

    python examples/07_budget_pipelines.py [--share 0.25] [--dataset pima]
"""

from __future__ import annotations

import argparse
import importlib.util
import warnings

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.datasets import load_dataset


def _split(X, y, seed):
    X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, train_size=0.5, random_state=seed,
                                                  stratify=y)
    X_v, X_te, y_v, y_te = train_test_split(X_rest, y_rest, test_size=0.5, random_state=seed,
                                            stratify=y_rest)
    return X_tr, y_tr, X_v, y_v, X_te, y_te


def _pruned_candidates(models, data, costs, budget, objective, time_limit):
    X_tr, y_tr, X_v, y_v, _, _ = data
    out = []
    for model in models:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            train = (X_tr, y_tr) if objective == "paper" else None
            pf = po.fit_budget(model, X_v, y_v, costs=costs, budget=budget, train=train,
                               objective=objective, time_limit=time_limit)
        out.append((pf.score(X_v, y_v), pf))
    return out


def _subset_models(data, costs, budget, seed, trees):
    from forest_builders import SubsetForestClassifier, rank_features_by_cost

    X_tr, y_tr, X_v = data[0], data[1], data[2]
    ranking = rank_features_by_cost(X_tr, y_tr, costs=costs, n_estimators=trees,
                                    random_state=seed)
    above = []
    for k in range(1, ranking.size + 1):
        m = SubsetForestClassifier(trees, features=ranking[:k], costs=costs,
                                   random_state=seed).fit(X_tr, y_tr)
        if m.acquisition_cost(X_v).mean() > budget:
            above.append(m)
            if len(above) == 2:
                break
    return above


def _cegb_best(data, costs, budget, seed):
    """LightGBM CEGB over a tradeoff grid: (validation accuracy, test accuracy, test
    cost) of the best model within the budget on validation, or None."""
    import lightgbm as lgb

    from forest_builders import lightgbm_acquisition_cost

    X_tr, y_tr, X_v, y_v, X_te, y_te = data
    best = None
    for tradeoff in [0.0] + [float(t) for t in np.logspace(-3, 3, 7)]:
        m = lgb.LGBMClassifier(n_estimators=100, cegb_tradeoff=tradeoff,
                               cegb_penalty_feature_lazy=list(costs.feature_cost()),
                               random_state=seed, n_jobs=1, verbose=-1).fit(X_tr, y_tr)
        if lightgbm_acquisition_cost(m, X_v, costs).mean() > budget:
            continue
        row = (float(np.mean(m.predict(X_v) == y_v)), float(np.mean(m.predict(X_te) == y_te)),
               float(lightgbm_acquisition_cost(m, X_te, costs).mean()))
        best = row if best is None or row[0] > best[0] else best
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="pima")
    parser.add_argument("--share", type=float, default=0.25,
                        help="budget as a share of the random forest's validation cost")
    parser.add_argument("--trees", type=int, default=40)
    parser.add_argument("--time-limit", type=float, default=5.0,
                        help="seconds per fit_budget call")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if importlib.util.find_spec("forest_builders") is None:
        print("forest_builders is not present in this installation of prune-opt; the "
              "growers are unavailable, nothing to show.")
        return 0
    from forest_builders import LazyCostRandomForestClassifier

    ds = load_dataset(args.dataset)
    costs = ds.costs_or_uniform()
    data = _split(ds.X, ds.y, args.seed)
    X_tr, y_tr, X_v, y_v, X_te, y_te = data
    rf = RandomForestClassifier(args.trees, random_state=args.seed).fit(X_tr, y_tr)
    budget = args.share * float(po.acquisition_cost(rf, X_v, costs).mean())
    print(f"{ds.name}: {len(y_tr)} train / {len(y_v)} validation / {len(y_te)} test rows; "
          f"budget B = {budget:.4g} per example ({args.share:.0%} of the random forest's "
          f"validation cost)")
    lazy = LazyCostRandomForestClassifier(args.trees, tradeoff=0.1, max_features=0.5,
                                          stop_on_penalty=True, costs=costs,
                                          random_state=args.seed).fit(X_tr, y_tr)
    pipelines = {
        "random forest + fit_budget": _pruned_candidates([rf], data, costs, budget, "paper",
                                                         args.time_limit),
        "lazy forest + fit_budget": _pruned_candidates([lazy], data, costs, budget, "brier",
                                                       args.time_limit),
        "feature subset + fit_budget": _pruned_candidates(
            _subset_models(data, costs, budget, args.seed, args.trees), data, costs, budget,
            "paper", args.time_limit),
    }
    rows = []
    for name, cands in pipelines.items():
        val, pf = max(cands, key=lambda c: c[0])
        rows.append((name, val, pf.score(X_te, y_te), pf.average_cost(X_te)))
    if importlib.util.find_spec("lightgbm") is not None:
        best = _cegb_best(data, costs, budget, args.seed)
        if best is not None:
            rows.append(("LightGBM CEGB (not pruned)", *best))
    else:
        print("lightgbm is not installed: the CEGB row is skipped (pip install "
              "prune-opt[lightgbm])")
    print(f"\n{'pipeline':<30} {'val acc':>8} {'test acc':>9} {'test cost':>10}")
    for name, val, test, cost in rows:
        print(f"{name:<30} {val:>8.3f} {test:>9.3f} {cost:>10.4g}")
    chosen = max(rows, key=lambda r: r[1])
    print(f"\nchosen on validation: {chosen[0]} (its validation cost is within B; on test "
          f"it scores {chosen[2]:.3f} at an average cost of {chosen[3]:.4g})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
