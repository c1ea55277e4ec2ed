"""The best forest under a cost budget, in one call: BudgetPrunedForestClassifier.

On Pima (Turney's costs; the blood tests share one draw) the budget is a share
of what a 40-tree random forest costs per example.  The estimator grows its
candidates (the random forest, forests on cost-ranked feature prefixes,
lazy-penalty forests) on 60% of the training rows, prunes each to the budget
on 20%, and on the last 20% keeps the one with the lowest Brier loss among
those whose accuracy is within one standard error of the best.
The script prints the best candidates, the winner's test accuracy and cost,
and checks that its scikit-learn export and its JSON file predict the same.

Run::

    python examples/08_budget_estimator.py [--share 0.25] [--dataset pima]
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
from pathlib import Path

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.datasets import load_dataset


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="pima")
    parser.add_argument("--share", type=float, default=0.25,
                        help="budget as a share of the random forest's cost per example")
    parser.add_argument("--time-limit", type=float, default=15.0,
                        help="seconds for the estimator's fit")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if importlib.util.find_spec("forest_builders") is None:
        print("forest_builders is not present in this installation of prune-opt; the "
              "estimator is unavailable, nothing to show.")
        return 0
    from forest_builders import BudgetPrunedForestClassifier

    ds = load_dataset(args.dataset)
    costs = ds.costs_or_uniform()
    X_tr, X_te, y_tr, y_te = train_test_split(ds.X, ds.y, test_size=0.25,
                                              random_state=args.seed, stratify=ds.y)
    rf = RandomForestClassifier(40, random_state=args.seed).fit(X_tr, y_tr)
    full = float(po.acquisition_cost(rf, X_tr, costs).mean())
    budget = args.share * full
    print(f"{ds.name}: {len(y_tr)} training / {len(y_te)} test rows; random forest: test "
          f"accuracy {rf.score(X_te, y_te):.3f} at {full:.4g} per example; budget "
          f"B = {budget:.4g} ({args.share:.0%})")

    est = BudgetPrunedForestClassifier(budget=budget, costs=costs, time_limit=args.time_limit,
                                       random_state=args.seed).fit(X_tr, y_tr)
    table = est.candidates_.sort_values("score", ascending=False)
    print(table[["name", "average_cost", "score", "brier", "chosen"]].head(6)
          .to_string(index=False))
    win = est.candidates_[est.candidates_["chosen"]].iloc[0]
    print(f"chosen on held-out rows: {win['name']} ({win['reason']})")
    print(f"test accuracy {est.score(X_te, y_te):.3f}, test cost per example "
          f"{est.average_cost(X_te):.4g} (budget {budget:.4g}, met on the prune rows: "
          f"{win['average_cost']:.4g}); fit took {est.fit_seconds_:.1f} s")

    same = np.array_equal(est.to_sklearn().predict(X_te), est.predict(X_te))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.json"
        est.save(path)
        same &= np.array_equal(po.load(path).predict(X_te), est.predict(X_te))
    print(f"to_sklearn() and the JSON file predict identically: {bool(same)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
