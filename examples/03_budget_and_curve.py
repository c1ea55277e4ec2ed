"""Exact error-cost trade-off curve and a pruning that meets a cost budget.

Pima diabetes with Turney's test costs, where glucose and insulin share a
2.10 blood draw (an acquisition *group*).  ``tradeoff_curve`` finds every
breakpoint of the Lagrangian curve exactly (each row is a pruning optimal on
a whole interval of lam); ``fit_budget`` solves the hard budget (average cost
on the validation rows at most the budget) with a certified gap and reports
the hull vertex below the budget next to it; the curve of the "first m trees"
baseline is printed alongside.  A plot (``plot_tradeoff``: the exact curve as
steps, the baseline, the budget pruning as a point) is written only when
``--plot FILE`` is given.

Run::

    python examples/03_budget_and_curve.py [--budget 10] [--plot curve.png]
"""

from __future__ import annotations

import argparse

from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.budget import baseline_curve, fewer_trees_prunings, fit_budget, tradeoff_curve
from prune_opt.datasets import load_dataset
from prune_opt.plotting import plot_tradeoff


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=10.0,
                        help="largest allowed average acquisition cost per example")
    parser.add_argument("--trees", type=int, default=30)
    parser.add_argument("--plot", default=None, help="write the curves to this PNG file")
    args = parser.parse_args(argv)

    data = load_dataset("pima")
    X, X_test, y, y_test = train_test_split(data.X, data.y, test_size=0.3, random_state=0,
                                            stratify=data.y)
    X_train, X_val, y_train, y_val = train_test_split(X, y, train_size=0.5, random_state=0,
                                                      stratify=y)
    rf = RandomForestClassifier(n_estimators=args.trees, random_state=0).fit(X_train, y_train)
    print(f"pima: {len(y_train)} train / {len(y_val)} validation / {len(y_test)} test rows; "
          f"unpruned: test accuracy {rf.score(X_test, y_test):.4f}, average cost "
          f"{po.acquisition_cost(rf, X_test, data.costs).mean():.2f}")

    # compile once, reuse for the curve and the budget search
    problem = po.compile_problem(rf, X_val, y_val, costs=data.costs, train=(X_train, y_train))
    curve = tradeoff_curve(problem, X_eval=X_test, y_eval=y_test)
    rows = curve.to_dict("records")
    print(f"\nexact trade-off curve: {len(rows)} hull vertices")
    print(f"{'lam from':>10} {'lam to':>10} {'error':>8} {'val cost':>9} {'splits':>6} "
          f"{'test acc':>8} {'test cost':>9}")
    for r in rows:
        print(f"{r['lam_lo']:10.3g} {r['lam_hi']:10.3g} {r['error_term']:8.4f} "
              f"{r['average_cost']:9.3f} {r['n_splits']:6d} {r['accuracy_eval']:8.4f} "
              f"{r['cost_eval']:9.3f}")

    pruned = fit_budget(problem, budget=args.budget, time_limit=10)
    info = pruned.solve_info
    print(f"\nfit_budget(budget={args.budget:g}): lam={info['lam']:.4g}, validation cost "
          f"{info['achieved_cost']:.3f} (slack {info['budget_slack']:.3f}), "
          f"{info['n_solves']} solves")
    print(f"  hard-budget search: {info['status']}, certified gap {info['gap']:.3g}, found by "
          f"{info['found_by']}; error term {pruned.breakdown.error_term:.4f} vs "
          f"{pruned.breakdown.error_term + info['hull_error_gap']:.4f} at the hull vertex")
    print(f"  test accuracy {pruned.score(X_test, y_test):.4f}, test cost "
          f"{pruned.average_cost(X_test):.3f}, {pruned.n_splits} splits")
    costlier = info["hull_neighbours"]["costlier"]
    if costlier is not None:
        print(f"  next hull vertex costs {costlier['average_cost']:.3f} (over budget): no lam "
              "reaches anything in between")

    base = baseline_curve(fewer_trees_prunings(rf, costs=data.costs), X_val, X_eval=X_test, y_eval=y_test,
                          method="fewer-trees")
    brows = base.to_dict("records")
    print("\nbaseline 'first m trees' (every 5th m):")
    for r in brows[::5]:
        print(f"  m={r['param']!s:>3}: test accuracy {r['accuracy_eval']:.4f}, test cost "
              f"{r['cost_eval']:.3f}")

    if args.plot:
        budget_point = {"cost_eval": pruned.average_cost(X_test),
                        "accuracy_eval": pruned.score(X_test, y_test)}
        plot_tradeoff({"budgetprune (exact curve)": rows, "first m trees": brows},
                      points={f"fit_budget({args.budget:g})": [budget_point]},
                      budget=args.budget, path=args.plot,
                      reference=(po.acquisition_cost(rf, X_test, data.costs).mean(),
                                 rf.score(X_test, y_test)),
                      title="pima: test accuracy vs feature cost")
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
