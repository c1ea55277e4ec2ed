"""``prune-opt prune``: prune a forest at a given lambda or to a cost budget."""

from __future__ import annotations

import time
import warnings

from ._common import (
    NO_LIBRARY_WRITER,
    add_data_arguments,
    add_output_argument,
    check_solver_name,
    error_data,
    library_model_path,
    library_of,
    naming_errors,
    phase,
    save_model,
    score_metrics,
    setup_experiment,
    task_line,
    write_json,
    write_library_model,
)


def add_parser(sub):
    p = sub.add_parser(
        "prune", help="prune a forest at --lam or to a --budget and save it as JSON",
        description="Fit a random forest on a dataset, prune it exactly at a trade-off "
        "weight (--lam) or to an average acquisition-cost budget measured on the validation "
        "split (--budget), print objective, accuracy (regression: R^2 and MSE), cost and "
        "status, and save the pruned forest as JSON (load it with prune_opt.load).")
    add_data_arguments(p, trees=40, model=True)
    goal = p.add_mutually_exclusive_group(required=True)
    goal.add_argument("--lam", type=float, help="trade-off weight of the average cost")
    goal.add_argument("--budget", type=float,
                      help="largest average acquisition cost per example (validation data)")
    p.add_argument("--solver", default="auto",
                   help="backend (default auto; with --budget: the hard-budget search, or "
                        "another backend for the Lagrangian hull vertex, see --budget-method)")
    p.add_argument("--objective", default=None,
                   help="what to minimise besides the cost: 'paper' (mean per-tree error, "
                        "exact; the default with --lam), 'auto' (the default with --budget: "
                        "fit_budget tries the paper's error term and the forest's own loss "
                        "on held-out rows and keeps the better) or an ensemble objective of "
                        "prune_opt.objectives ('brier', 'logloss', 'margin', 'accuracy': the "
                        "forest's own loss on the validation split, block coordinate "
                        "descent)")
    p.add_argument("--budget-method", choices=("search", "hull"), default="search",
                   help="with --budget: 'search' (default) solves the hard budget with a "
                        "certified gap; 'hull' returns the Lagrangian hull vertex below it")
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds (with --lam: per solve; with --budget: the whole "
                        "fit_budget call, default fit_budget's own: a few seconds with "
                        "--objective auto, 30 with an explicit objective)")
    add_output_argument(p, "--out", default="pruned.json",
                        help="output JSON (default pruned.json)")
    add_output_argument(p, "--model-out", default=None, metavar="FILE",
                        help="with --model: the pruned model in its library's own format "
                             "(default: beside --out, <stem>.txt for LightGBM, "
                             "<stem>.xgboost.json for XGBoost, <stem>.catboost.json for "
                             "CatBoost)")
    add_output_argument(p, "--usage-plot", kind="figure", default=None, metavar="PNG",
                        help="write the per-feature usage picture (before/after, test data)")
    add_output_argument(p, "--json", default=None, metavar="FILE",
                        help="also write the printed summary as JSON")
    p.add_argument("--no-progress", action="store_true",
                   help="hide what each step is doing (shown on stderr)")
    p.set_defaults(func=run)


def run(args):
    from ..program._compile_steps import memory_report

    _check_goal(args)
    exp = setup_experiment(args)
    print(task_line(exp))
    print(memory_report(exp["forest"], exp["X_val"], exp["costs"]))  # before compiling
    progress = not args.no_progress
    t0 = time.perf_counter()
    with phase(_solve_phase(args), enabled=progress):
        pruned = _prune(args, exp)
    seconds = time.perf_counter() - t0
    with phase("scoring on the test split", enabled=progress):
        summary = _summary(args, exp, pruned, seconds)
    info = pruned.solve_info
    if info.get("note"):
        print(f"note: {info['note']}")
    for k, v in summary.items():
        if v is not None:
            print(f"{k:>24}: {v:.6g}" if isinstance(v, float) else f"{k:>24}: {v}")
    save_model(pruned, args.out, exp["dataset"])
    print(f"wrote {args.out}")
    if args.model:
        out = args.model_out or library_model_path(args.out, pruned.forest)
        if out is None:
            print(f"note: prune-opt writes no {library_of(pruned.forest)} model file; "
                  f"{args.out} holds the pruned model (prune_opt.load reads it)")
        else:
            write_library_model(pruned, out)
            print(f"wrote {out}")
    if args.usage_plot:
        with naming_errors(args.usage_plot):
            _usage_plot(args, exp, pruned)
        print(f"wrote {args.usage_plot}")
    if args.json:
        write_json(args.json, {**summary, "solve_info": info})
        print(f"wrote {args.json}")
    return 0


def _solve_phase(args):
    """What the solve step says while it runs."""
    if args.lam is not None:
        what = args.objective or "the model's own loss"
        return f"pruning at lambda={args.lam:g} ({what} objective)"
    limit = ("fit_budget's default time limit" if args.time_limit is None
             else f"time limit {args.time_limit:g} s")
    return (f"searching the best pruning within budget {args.budget:g} "
            f"({args.objective} objective, {limit})")


def _check_goal(args):
    import numpy as np

    if args.lam is not None and not (np.isfinite(args.lam) and args.lam >= 0):
        raise ValueError(f"--lam must be a finite number >= 0, got {args.lam}")
    if args.budget is not None and not (np.isfinite(args.budget) and args.budget >= 0):
        raise ValueError(f"--budget must be a finite number >= 0, got {args.budget}")
    if args.model_out:
        from ..importers import model_file_kind

        kind = model_file_kind(args.model)
        if kind in NO_LIBRARY_WRITER:
            raise ValueError(f"--model-out: prune-opt writes no {kind} model file; the "
                             "pruned model is saved to --out as prune-opt JSON "
                             "(prune_opt.load reads it): drop --model-out")
    if args.objective is None and not (args.model and args.lam is not None):
        # (a --model booster at --lam keeps None: prune's default, the model's own loss)
        args.objective = "paper" if args.lam is not None else "auto"
    if args.objective == "auto" and args.lam is not None:
        raise ValueError("--objective auto needs --budget (it picks the objective that scores "
                         "better at the budget); with --lam use 'paper' or an ensemble "
                         "objective")
    check_solver_name(args.solver)
    if args.objective not in ("paper", "auto", None):
        from ..objectives import get_objective

        get_objective(args.objective)  # an unknown name lists the objectives


def _prune(args, exp):
    from .. import prune

    rf, costs, Xv, yv = exp["forest"], exp["costs"], exp["X_val"], exp["y_val"]
    train = error_data(exp)  # a --model booster: errors on the validation split
    if args.objective is None:  # a --model booster at --lam: its own loss
        return prune(rf, Xv, yv, costs=costs, lam=args.lam, time_limit=args.time_limit)
    if args.objective not in ("paper", "auto"):
        return _prune_ensemble_objective(args, rf, Xv, yv, costs)
    if args.lam is not None:  # the paper's objective, also for a --model booster
        return prune(rf, Xv, yv, costs=costs, lam=args.lam, solver=args.solver, train=train,
                     objective="paper", time_limit=args.time_limit)
    return _fit_to_budget(args, rf, Xv, yv, costs, train)


def _prune_ensemble_objective(args, rf, Xv, yv, costs):
    """``--objective`` other than paper: the forest's own loss on the validation split."""
    from .. import prune
    from ..budget import fit_budget

    if args.lam is not None:
        return prune(rf, Xv, yv, costs=costs, lam=args.lam, objective=args.objective,
                     time_limit=args.time_limit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fit_budget(rf, Xv, yv, costs=costs, budget=args.budget, objective=args.objective,
                          method=args.budget_method,  # 'hull' is refused, not ignored
                          time_limit=_time_limit(args))


def _fit_to_budget(args, rf, Xv, yv, costs, train):
    """``fit_budget`` as the options ask: the hard-budget search by default, the
    Lagrangian hull vertex with ``--budget-method hull`` or a non-budget ``--solver``."""
    from ..budget import fit_budget

    method = args.budget_method
    if method == "search" and args.solver.lower() not in ("auto", "budget"):
        print(f"note: --solver {args.solver} cannot meet a hard budget; returning the "
              "Lagrangian hull vertex it computes (--budget-method hull). Leave --solver "
              "unset for the hard-budget search")
        method = "hull"
    if method == "hull" and args.objective == "auto":
        args.objective = "paper"  # the hull's vertices are the paper objective's
    with warnings.catch_warnings():  # notes are printed from solve_info
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", FutureWarning)
        return fit_budget(rf, Xv, yv, costs=costs, budget=args.budget, train=train,
                          solver="auto" if method == "search" else args.solver,
                          method=method, objective=args.objective, time_limit=_time_limit(args))


def _time_limit(args):
    return "default" if args.time_limit is None else args.time_limit


def _summary(args, exp, pruned, seconds):
    from .. import acquisition_cost, as_forest

    rf, Xte, yte = exp["forest"], exp["X_test"], exp["y_test"]
    info = pruned.solve_info
    chosen = info.get("auto", {}).get("chosen")  # what objective="auto" picked
    summary = {
        "dataset": exp["dataset"].name, "task": exp["task"], "trees": as_forest(rf).n_trees,
        "lam": info.get("lam", args.lam), "budget": args.budget,
        # 'objective' is the value reached, 'loss' the name of what was minimised ('paper',
        # an ensemble objective or 'auto: <chosen>')
        "objective": pruned.objective,
        "loss": f"auto: {chosen}" if chosen else info.get("objective") or args.objective,
        "status": info.get("status"),
        "solver": info.get("solver"), "splits": pruned.n_splits,
        # the whole fitted forest (an ensemble objective may keep a sub-forest)
        "unpruned_splits": int((~as_forest(rf).is_leaf).sum()),
        "validation_cost": pruned.average_cost(exp["X_val"]),
        **score_metrics(pruned, Xte, yte, exp["task"]),
        "test_cost": pruned.average_cost(Xte),
        **score_metrics(rf, Xte, yte, exp["task"], prefix="unpruned_test_"),
        "unpruned_test_cost": float(acquisition_cost(rf, Xte, exp["costs"]).mean()),
    }
    if args.budget is not None:
        # paper-specific figures (bound, certified gap, ...) only where the result has them
        for key in ("bound", "gap", "found_by", "hull_error_gap"):
            if info.get(key) is not None:
                summary[key] = info[key]
        held_out = info.get("auto", {}).get("holdout_loss")
        if held_out:  # what objective="auto" compared, on rows neither run was fitted on
            summary["auto_holdout_loss"] = ", ".join(f"{k} {v:.6g}"
                                                     for k, v in held_out.items())
        if info.get("n_trees_kept") is not None:
            summary["trees_kept"] = int(info["n_trees_kept"])
    summary["seconds"] = seconds
    return summary


def _usage_plot(args, exp, pruned):
    from .. import PrunedForest
    from ..plotting import plot_feature_usage

    f = pruned.forest
    plot_feature_usage(PrunedForest(f, f.full_split_mask(), costs=exp["costs"]), pruned,
                       exp["X_test"], path=args.usage_plot, top=30,
                       title=f"{exp['dataset'].name}: trees testing each feature per "
                             "example, before (plain) / after (hatched)")
