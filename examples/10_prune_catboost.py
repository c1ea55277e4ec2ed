"""Prune a CatBoost model to a feature budget, beside CatBoost grown under its own penalties.

UCI thyroid (bundled) with Turney's costs: the 16 questionnaire features cost
1.00, the lab tests TSH 22.78, T3 11.41, TT4 14.51 and T4U 11.41, and FTI is
computed from TT4 and T4U.  A practitioner has a 100-round CatBoost model
(symmetric trees of depth 6) fitted on half of the training file.  Every
example goes through every level of a symmetric tree, so each pays for every
feature the model uses.  This script prunes the model, without retraining,
so that the average cost per patient on the other half (the validation rows)
is at most half of what the full model pays, and compares it on the official
test file with

* the model truncated to its first rounds (what one tries first), and
* CatBoost retrained under its own first-use feature penalties
  (``first_feature_use_penalties`` = the costs), the ``penalties_coefficient``
  chosen on validation within the same budget: the anchor the benchmarks
  compare with (``benchmarks/frontier.py``).

The pruned model is written back as a CatBoost model that CatBoost predicts
with exactly as the pruned model does.

Run::

    python examples/10_prune_catboost.py [--share 0.5]
"""

from __future__ import annotations

import argparse
import importlib.util

import numpy as np
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.budget import fewer_trees_prunings
from prune_opt.datasets import load_dataset

#: penalties_coefficient values of the retrained anchor (costs in units of their mean)
COEFFICIENTS = (0.1, 0.3, 1.0, 3.0, 10.0)


def catboost_model(**params):
    import catboost as cb

    # one thread and no training files: an example runs beside other work and leaves
    # nothing behind
    return cb.CatBoostClassifier(iterations=100, depth=6, random_seed=0, thread_count=1,
                                 allow_writing_files=False, verbose=0, **params)


def full_cost(model, costs, X):
    """Average cost per example of the model's own splits (every split kept)."""
    forest = po.as_forest(model)
    return po.PrunedForest(forest, forest.full_split_mask(), costs=costs).average_cost(X)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--share", type=float, default=0.5,
                        help="budget as a share of the full model's validation cost")
    args = parser.parse_args(argv)
    if importlib.util.find_spec("catboost") is None:
        print("catboost is not installed: nothing to show (pip install prune-opt[catboost])")
        return
    data = load_dataset("thyroid")
    costs = data.costs
    X_tr, X_val, y_tr, y_val = train_test_split(data.X, data.y, test_size=0.5, random_state=0,
                                                stratify=data.y)
    X_te, y_te = data.X_test, data.y_test

    model = catboost_model().fit(X_tr, y_tr)
    budget = args.share * full_cost(model, costs, X_val)
    print(f"CatBoost, 100 rounds: test accuracy {model.score(X_te, y_te):.3f} at an average "
          f"cost of {full_cost(model, costs, X_te):.2f}; budget {budget:.2f}")

    pruned = po.fit_budget(model, X_val, y_val, costs=costs, budget=budget)
    print(f"  {'pruned by fit_budget:':<28}accuracy {pruned.score(X_te, y_te):.3f}, cost "
          f"{pruned.average_cost(X_te):.2f} (validation {pruned.average_cost(X_val):.2f}), "
          f"{pruned.n_splits} of {int((~pruned.forest.is_leaf).sum())} splits kept")

    fitting = [(pf.score(X_val, y_val), r, pf) for r, pf in fewer_trees_prunings(
        model, costs=costs) if pf.average_cost(X_val) <= budget]
    if fitting:
        cut = max(fitting, key=lambda e: e[:2])[2]
        label = f"fewer rounds ({cut.n_trees // cut.forest.round_size}):"
        print(f"  {label:<28}accuracy "
              f"{cut.score(X_te, y_te):.3f}, cost {cut.average_cost(X_te):.2f}")
    else:
        print(f"  {'fewer rounds:':<28}no truncation fits the budget")

    fc = costs.feature_cost()
    penalties = [float(c) for c in fc / fc[fc > 0].mean()]
    grown = []
    for c in COEFFICIENTS:
        m = catboost_model(first_feature_use_penalties=penalties, penalties_coefficient=c)
        m.fit(X_tr, y_tr)
        if full_cost(m, costs, X_val) <= budget:
            grown.append((m.score(X_val, y_val), c, m))
    if grown:
        _, c, best = max(grown, key=lambda e: e[:2])
        label = f"first-use penalties (x{c:g}):"
        print(f"  {label:<28}accuracy {best.score(X_te, y_te):.3f}, cost "
              f"{full_cost(best, costs, X_te):.2f} (retrained)")
    else:
        print(f"  {'first-use penalties:':<28}no coefficient of the grid fits the budget")

    back = pruned.to_catboost()  # a CatBoostClassifier predicting as the pruned model
    gap = float(np.abs(back.predict_proba(X_te) - pruned.predict_proba(X_te)).max())
    print(f"\nthe pruned model as a CatBoost model: probabilities differ from the pruned "
          f"model's by at most {gap:.1e}")


if __name__ == "__main__":
    main()
