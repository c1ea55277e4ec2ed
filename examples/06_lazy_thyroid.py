"""Order thyroid lab tests only when the pruned forest asks for them.

UCI thyroid with Turney's test costs (TSH 22.78, T3 11.41, TT4 14.51, T4U
11.41; FTI is computed from TT4 and T4U).  A random forest is pruned with
``fit_budget``, then every test-set patient starts with *nothing* measured:
``po.LazyPredictor`` walks the pruned trees level by level and orders a test
(through the ``order_lab_test`` callback) only when some tree reaches a split
that needs it, once per patient.  The script prints what was spent against
what the unpruned forest would have ordered, and checks that the predictions
equal those made with every value known.

Run::

    python examples/06_lazy_thyroid.py [--budget 60] [--trees 40]

Thyroid needs TSH and FTI (about 49 of the unpruned forest's 72 per patient) to
beat the majority class; below that every pruning predicts "normal".
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.datasets import load_dataset


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=60.0,
                        help="largest average acquisition cost per patient on validation")
    parser.add_argument("--trees", type=int, default=40)
    args = parser.parse_args(argv)

    ds = load_dataset("thyroid")
    rng = np.random.default_rng(0)
    order = rng.permutation(ds.X.shape[0])
    train, val = order[:2500], order[2500:]
    rf = RandomForestClassifier(n_estimators=args.trees, max_depth=8, random_state=0)
    rf.fit(ds.X[train], ds.y[train])
    pruned = po.fit_budget(rf, ds.X[val], ds.y[val], costs=ds.costs, budget=args.budget,
                           time_limit=10)
    unpruned = po.prune(rf, ds.X[val], ds.y[val], costs=ds.costs, lam=0.0)  # keeps every split

    lab = ds.X_test  # the values the lab would return
    orders = Counter()

    def order_lab_test(rows, unit):
        orders[unit.name] += rows.size
        return lab[rows, unit.features[0]] if unit.features else None

    nothing_known = np.full(lab.shape, np.nan)
    lazy = po.LazyPredictor(pruned, order_lab_test).predict_proba(nothing_known)
    full_cost = unpruned.acquisition_cost(lab)
    same = bool(np.array_equal(lazy.labels, pruned.predict(lab)))

    print(f"{lab.shape[0]} test patients, {args.trees} trees, budget {args.budget:g}")
    print(f"{'':28s}{'cost/patient':>14s}{'accuracy':>10s}")
    print(f"{'unpruned forest (all tests)':28s}{full_cost.mean():14.2f}"
          f"{unpruned.score(lab, ds.y_test):10.3f}")
    print(f"{'pruned, ordered on demand':28s}{lazy.cost_paid.mean():14.2f}"
          f"{np.mean(lazy.labels == ds.y_test):10.3f}")
    saved = full_cost.sum() - lazy.cost_paid.sum()
    print(f"money saved on {lab.shape[0]} patients: {saved:,.2f} "
          f"({100 * saved / max(full_cost.sum(), 1e-12):.1f}%)")
    print("tests ordered:", ", ".join(f"{k} x{v}" for k, v in orders.most_common()))
    print(f"predictions identical to the fully measured ones: {same}")
    print(f"paid exactly acquisition_cost: "
          f"{bool(np.allclose(lazy.cost_paid, pruned.acquisition_cost(lab)))}")


if __name__ == "__main__":
    main()
