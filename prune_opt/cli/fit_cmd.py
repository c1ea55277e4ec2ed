"""``prune-opt fit``: the best forest under a cost budget, in one call.

Runs ``forest_builders.BudgetPrunedForestClassifier`` (``...Regressor`` for a
regression target) on the training and validation splits -- it splits them
again itself to grow, prune and select its candidates -- prints the candidates
table and the winner's score and cost on the test split, and saves the winner
as JSON (``prune_opt.load`` reads it back).
"""

from __future__ import annotations

from ._common import (
    add_data_arguments,
    add_output_argument,
    format_table,
    save_model,
    score_metrics,
    setup_experiment,
    task_line,
    write_csv,
    write_json,
)

#: columns of the printed candidates table
TABLE_COLUMNS = ("name", "n_splits", "average_cost", "score", "above_prior", "fits_budget", "chosen")


def add_parser(sub):
    p = sub.add_parser(
        "fit", help="fit the best forest under a cost budget (one call) and save it as JSON",
        description="Grow candidate forests (a random forest, forests on cost-ranked feature "
        "prefixes, lazy-penalty forests), prune each to the budget with fit_budget, keep the "
        "best on held-out rows (forest_builders.BudgetPrunedForestClassifier / Regressor, fit "
        "on the training and validation splits), print the candidates and the winner's test "
        "score and cost, and save it as JSON (load it with prune_opt.load).")
    add_data_arguments(p, trees=40)
    goal = p.add_mutually_exclusive_group(required=True)
    goal.add_argument("--budget", type=float,
                      help="largest average acquisition cost per example (measured on the "
                           "estimator's own pruning rows)")
    goal.add_argument("--budget-share", type=float, metavar="FRAC",
                      help="the budget as a share of what a --trees random forest costs on "
                           "the validation split (e.g. 0.25)")
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds for the whole fit (default: the estimator's, 12)")
    add_output_argument(p, "--out", default="model.json", help="output JSON (default "
                        "model.json)")
    add_output_argument(p, "--candidates-csv", default=None, metavar="CSV",
                        help="also write the candidates table as CSV")
    add_output_argument(p, "--json", default=None, metavar="FILE",
                        help="also write the printed summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _check(args):
    import numpy as np

    for flag, value, positive in (("--budget", args.budget, False),
                                  ("--budget-share", args.budget_share, True),
                                  ("--time-limit", args.time_limit, True)):
        if value is not None and not (np.isfinite(value) and (value > 0 if positive
                                                                else value >= 0)):
            need = "> 0" if positive else ">= 0"
            raise ValueError(f"{flag} must be a finite number {need}, got {value}")
    if args.max_depth is not None:
        raise ValueError("--max-depth is not used by fit (the estimator grows full trees and "
                         "prunes them to the budget); leave it out")


def _frame(X, names):
    import pandas as pd

    return X if names is None else pd.DataFrame(X, columns=[str(n) for n in names])


def run(args):
    import numpy as np

    from .. import acquisition_cost
    from ._plugins import estimator_class

    _check(args)
    exp = setup_experiment(args, fit=args.budget_share is not None)
    print(task_line(exp))
    names = exp["dataset"].feature_names
    costs = exp["costs"]
    if names is not None and costs.feature_names is not None and \
            list(costs.feature_names) != [str(n) for n in names]:
        names = None  # the costs name the columns differently: fit on plain arrays
    X_fit = np.concatenate([exp["X_train"], exp["X_val"]])
    y_fit = np.concatenate([exp["y_train"], exp["y_val"]])
    if args.budget_share is not None:
        full = float(np.mean(acquisition_cost(exp["forest"], exp["X_val"], exp["costs"])))
        budget = args.budget_share * full
        print(f"budget: {budget:.6g} per example ({args.budget_share:.0%} of the random "
              f"forest's {full:.6g} on the validation split)")
    else:
        budget = args.budget
    kwargs = {} if args.time_limit is None else {"time_limit": args.time_limit}
    cls = estimator_class("BudgetPrunedForestRegressor" if exp["task"] == "regression"
                          else "BudgetPrunedForestClassifier")
    est = cls(budget=budget, costs=costs, n_estimators=args.trees, random_state=args.seed,
              verbose=not args.quiet, **kwargs)
    est.fit(_frame(X_fit, names), y_fit)
    table = est.candidates_
    print(format_table(table.to_dict(orient="records"), list(TABLE_COLUMNS), align="left"))
    win = table[table["chosen"]].iloc[0]
    print(f"chosen: {win['name']} ({win['reason']})")
    X_te = _frame(exp["X_test"], names)
    summary = {"budget": float(budget), "chosen": str(win["name"]),
               "n_splits": int(est.pruned_.n_splits),
               "prune_rows_average_cost": float(win["average_cost"]),
               **score_metrics(est, X_te, exp["y_test"], exp["task"]),
               "test_average_cost": est.average_cost(X_te),
               "test_max_cost": float(np.max(est.acquisition_cost(X_te))),
               "fit_seconds": float(est.fit_seconds_)}
    for k, v in summary.items():
        print(f"{k:>24}: {v:.6g}" if isinstance(v, float) else f"{k:>24}: {v}")
    save_model(est.pruned_, args.out, exp["dataset"])  # est.save's file, plus a CSV's coding
    print(f"wrote {args.out}")
    if args.candidates_csv:
        write_csv(args.candidates_csv, table.to_dict(orient="records"))
        print(f"wrote {args.candidates_csv}")
    if args.json:
        write_json(args.json, {**summary, "candidates": table.to_dict(orient="records")})
        print(f"wrote {args.json}")
    return 0
