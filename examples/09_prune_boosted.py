"""Prune a user's boosted models to a feature budget: HistGradientBoosting and LightGBM.

UCI thyroid (bundled) with Turney's costs: the 16 questionnaire features cost
1.00, the lab tests TSH 22.78, T3 11.41, TT4 14.51 and T4U 11.41, and FTI is
computed from TT4 and T4U.  A practitioner has fitted a scikit-learn
``HistGradientBoostingClassifier`` and a LightGBM model on half of the
training file, then learns what each feature costs.  This script prunes both,
without retraining, so that the average acquisition cost per patient on the
other half (the validation rows) is at most half of what the full models
pay.  It reports accuracy and cost on the official test file beside the
models truncated to their first rounds (what one tries first), and writes the
pruned LightGBM model back as a LightGBM model file that LightGBM loads and
predicts with.

At a quarter (``--share 0.25``) nearly every tree asks for TSH or FTI at its
root, which that budget cannot pay for, and the cut to the roots is all that
fits: pruning keeps only splits the model already has.  Growing on the cheap
features is the budget estimator's job (``examples/08_budget_estimator.py``).

Run::

    python examples/09_prune_boosted.py [--share 0.5] [--out DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.budget import fewer_trees_prunings
from prune_opt.datasets import load_dataset


def best_truncation(model, costs, X_val, y_val, budget):
    """The model cut to its first r rounds (r chosen on validation) that fits the budget."""
    fitting = []
    for r, pf in reversed(fewer_trees_prunings(model, costs=costs)):  # fewest rounds first
        if pf.average_cost(X_val) > budget:  # more rounds never cost less
            break
        fitting.append((pf.score(X_val, y_val), r, pf))
    return max(fitting, key=lambda e: e[:2])[2] if fitting else None


def report(name, model, costs, X_val, y_val, X_te, y_te, share):
    full = po.acquisition_cost(model, X_val, costs).mean()
    budget = share * full
    pruned = po.fit_budget(model, X_val, y_val, costs=costs, budget=budget)
    cut = best_truncation(model, costs, X_val, y_val, budget)
    print(f"\n{name}: full model test accuracy {model.score(X_te, y_te):.3f} at an average "
          f"cost of {po.acquisition_cost(model, X_te, costs).mean():.2f}; budget {budget:.2f}")
    print(f"  pruned by fit_budget:  accuracy {pruned.score(X_te, y_te):.3f}, cost "
          f"{pruned.average_cost(X_te):.2f} (validation {pruned.average_cost(X_val):.2f}), "
          f"{pruned.n_splits} of {int((~pruned.forest.is_leaf).sum())} splits kept, loss "
          f"{pruned.solve_info['auto']['chosen']}")
    if cut is None:
        print("  fewer rounds:          no truncation fits the budget")
    else:
        print(f"  fewer rounds ({cut.n_trees:>3}):   accuracy {cut.score(X_te, y_te):.3f}, "
              f"cost {cut.average_cost(X_te):.2f}")
    return pruned


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--share", type=float, default=0.5,
                        help="budget as a share of the full models' validation cost")
    parser.add_argument("--out", default=None, help="folder for the exported LightGBM model")
    args = parser.parse_args(argv)
    data = load_dataset("thyroid")
    costs = data.costs
    X_tr, X_val, y_tr, y_val = train_test_split(data.X, data.y, test_size=0.5, random_state=0,
                                                stratify=data.y)
    X_te, y_te = data.X_test, data.y_test

    hgb = HistGradientBoostingClassifier(max_iter=100, random_state=0).fit(X_tr, y_tr)
    report("HistGradientBoostingClassifier", hgb, costs, X_val, y_val, X_te, y_te, args.share)

    try:
        import lightgbm as lgb
    except ImportError:
        print("\nlightgbm is not installed: the LightGBM section is skipped "
              "(pip install prune-opt[lightgbm])")
        return
    lgbm = lgb.LGBMClassifier(n_estimators=100, num_leaves=15, verbose=-1,
                              random_state=0).fit(X_tr, y_tr)
    pruned = report("LGBMClassifier", lgbm, costs, X_val, y_val, X_te, y_te, args.share)

    out = Path(args.out or tempfile.mkdtemp())
    path = out / "thyroid_pruned.txt"
    pruned.to_lightgbm().save_model(str(path))  # LightGBM's own model text
    booster = lgb.Booster(model_file=str(path))
    gap = float(np.abs(booster.predict(X_te) - pruned.predict_proba(X_te)).max())
    used = sorted({data.feature_names[k] for k in po.as_forest(booster).feature[
        po.as_forest(booster).feature >= 0]})
    print(f"\nwrote {path}: LightGBM's probabilities differ from the pruned model's by at "
          f"most {gap:.1e}; it reads {used}")


if __name__ == "__main__":
    main()
