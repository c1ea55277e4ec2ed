"""``prune-opt curve``: accuracy-cost (regression: R^2-cost) curves of BudgetPrune,
``fit_budget`` on a grid of budgets, and their competitors."""

from __future__ import annotations

from ._common import (
    add_data_arguments,
    add_output_argument,
    check_solver_name,
    error_data,
    format_table,
    naming_errors,
    phase,
    score_metrics,
    setup_experiment,
    task_line,
    write_csv,
    write_json,
)

#: the methods besides the registered baselines: BudgetPrune's exact hull, and
#: fit_budget on a grid of budgets
OWN_METHODS = ("budgetprune", "fit_budget")
DEFAULT_METHODS = "budgetprune,fit_budget,ccp,greedy,fewer-trees"
#: budgets of fit_budget and of the summary, as shares of the unpruned forest's
#: validation cost
DEFAULT_BUDGETS = (0.1, 0.25, 0.5)
#: --cost-resolution auto: this share of the unpruned forest's validation cost (spambase,
#: 20 trees: 54 hull vertices in 3.6 s of CPU; 0.01 gave 75 in 5.7 s, 0.005 106, and 0
#: traces all 160 from 317 solves, far more than a picture shows)
AUTO_RESOLUTION = 0.02


def add_parser(sub):
    p = sub.add_parser(
        "curve", help="accuracy-cost curves of BudgetPrune, fit_budget and baselines",
        description="Fit a random forest, trace the exact BudgetPrune trade-off curve "
        "(every breakpoint of lambda, on the validation split), run fit_budget (its "
        "defaults) at a grid of budgets, and trace the curves of the baselines "
        "(cost-complexity pruning, GreedyPrune, fewer trees, impurity-threshold early "
        "stopping); evaluate all on the test split, print the test score each method gets "
        "at each budget, and write a plot, CSV and/or JSON.  Regression forests (--task) "
        "are scored by test R^2.")
    add_data_arguments(p, trees=40, model=True)
    p.add_argument("--methods", default=DEFAULT_METHODS,
                   help=f"comma-separated subset of {', '.join(OWN_METHODS)} and the "
                        "baselines registered in prune_opt.budget.BASELINES (ccp, greedy, "
                        "fewer-trees, impurity, feature-prefix, ...; a name it does not know "
                        f"lists them) (default {DEFAULT_METHODS})")
    p.add_argument("--budgets", default=",".join(str(x) for x in DEFAULT_BUDGETS),
                   help="budgets as shares of the unpruned forest's validation cost: "
                        "fit_budget runs at each, and the summary reports every method there "
                        "(default 0.1,0.25,0.5)")
    p.add_argument("--budget-time-limit", type=float, default=None, metavar="SECONDS",
                   help="seconds for fit_budget over all the budgets (default: "
                        "budget_curve's own, 6 s with its default objective)")
    p.add_argument("--solver", default="auto", help="BudgetPrune backend (default auto)")
    p.add_argument("--objective", default="paper",
                   help="'paper' (default): the exact BudgetPrune curve; an ensemble "
                        "objective of prune_opt.objectives ('brier', 'logloss', 'margin', "
                        "'accuracy') adds its curve over the lambdas of the paper's hull")
    p.add_argument("--cost-resolution", default="auto",
                   help="stop refining BudgetPrune hull gaps narrower than this average cost; "
                        f"'auto' (default): {AUTO_RESOLUTION:g} of the unpruned forest's "
                        "validation cost (every point drawn is still an exact hull vertex; "
                        "the ones skipped are closer than that to a drawn one); 0: every "
                        "breakpoint")
    add_output_argument(p, "--plot", kind="figure", default=None, metavar="PNG",
                        help="write the accuracy-cost plot")
    add_output_argument(p, "--csv", default=None, metavar="FILE",
                        help="write all curve rows as CSV")
    add_output_argument(p, "--json", default=None, metavar="FILE",
                        help="write all curve rows as JSON")
    p.add_argument("--baseline-points", type=int, default=50, metavar="N",
                   help="score at most N members of each baseline family, evenly spread "
                        "(default 50; 0 = all: cost-complexity pruning has hundreds, each "
                        "scored on the validation and test rows)")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(func=run)


def parse_resolution(text):
    """``--cost-resolution``: None for 'auto', else a number >= 0.

    Examples
    --------
    >>> from prune_opt.cli.curve import parse_resolution
    >>> parse_resolution("auto"), parse_resolution("0.5")
    (None, 0.5)
    """
    if str(text).strip().lower() == "auto":
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"--cost-resolution must be 'auto' or a number >= 0, got "
                         f"{text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"--cost-resolution must be 'auto' or a finite number >= 0, got "
                         f"{text!r}")
    return value


def all_methods():
    """BudgetPrune's exact hull, fit_budget on a grid of budgets, then every registered
    baseline (:data:`prune_opt.budget.BASELINES`, read when a command runs: the
    registry imports the baselines' libraries).

    Examples
    --------
    >>> from prune_opt.cli.curve import all_methods
    >>> all_methods()[:3]
    ('budgetprune', 'fit_budget', 'ccp')
    """
    from ..budget import BASELINES

    return (*OWN_METHODS, *BASELINES)


def parse_methods(text):
    methods = [m.strip().lower() for m in text.split(",") if m.strip()]
    known = all_methods()
    bad = [m for m in methods if m not in known]
    if bad or not methods:
        hint = ("; the LightGBM CEGB curve moved to forest_builders.cegb.cegb_curve"
                if "cegb" in bad else "")
        raise ValueError(f"--methods: unknown method(s) {bad}; choose from "
                         f"{', '.join(known)}{hint}")
    return list(dict.fromkeys(methods))


def objective_curve(exp, objective, lams, *, max_points=12):
    """Rows of an ensemble objective's curve: ``po.prune(objective=...)`` at up to
    ``max_points`` of the given lambdas (evaluated on the test split)."""
    from .. import prune
    from ..budget import baseline_curve
    from ..objectives import get_objective

    get_objective(objective)
    lams = sorted({float(x) for x in lams if x > 0}) or [1e-3]
    lams = lams[:: max(1, len(lams) // max_points)]
    prunings = [(lam, prune(exp["forest"], exp["X_val"], exp["y_val"], costs=exp["costs"],
                            lam=lam, objective=objective)) for lam in lams]
    return baseline_curve(prunings, exp["X_val"], X_eval=exp["X_test"],
                          y_eval=exp["y_test"], method=objective).to_dict("records")


def thin(prunings, max_points):
    """At most ``max_points`` members of a nested family, evenly spread over it (the
    first and last kept); ``max_points`` 0 or None keeps all.

    Examples
    --------
    >>> from prune_opt.cli.curve import thin
    >>> thin(list(range(10)), 4)
    [0, 3, 6, 9]
    """
    import numpy as np

    if not max_points or len(prunings) <= max_points:
        return list(prunings)
    keep = np.unique(np.linspace(0, len(prunings) - 1, int(max_points)).round().astype(int))
    return [prunings[k] for k in keep]


def parse_budget_shares(text):
    """Budgets given as shares of the unpruned forest's cost: a tuple of numbers in
    (0, 1]; ``'none'`` is the empty tuple.

    Examples
    --------
    >>> from prune_opt.cli.curve import parse_budget_shares
    >>> parse_budget_shares("0.1,0.25"), parse_budget_shares("none")
    ((0.1, 0.25), ())
    """
    if text.strip().lower() == "none":
        return ()
    try:
        shares = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ValueError(f"--budgets must be comma-separated shares like 0.1,0.25, got "
                         f"{text!r}") from None
    if any(not (0 < s <= 1) for s in shares):
        raise ValueError(f"--budgets shares must lie in (0, 1], got {text!r}")
    return shares


def check_time_limit(value, flag):
    """A finite number of seconds >= 0 as given, or ``"default"`` (the library's) for
    None."""
    if value is not None and not (0 <= value < float("inf")):  # NaN too
        raise ValueError(f"{flag} must be a finite number of seconds >= 0, got {value}")
    return "default" if value is None else value


def compute_curves(exp, methods, *, solver="auto", cost_resolution=0.0, progress=True,
                   objective="paper", max_points=None, budgets=(), time_limit="default"):
    """All requested curves as {method: list of row dicts} (test-set columns
    ``accuracy_eval`` and ``cost_eval``); ``fit_budget`` runs at each of ``budgets``
    (average costs on the validation split); a baseline family longer than
    ``max_points`` is scored on that many evenly spread members; baselines dispatch through
    :data:`prune_opt.budget.BASELINES` (an unknown name is an error)."""
    import warnings

    from ..budget import budget_curve
    from ..program._compile import compile_problem

    Xv, yv, Xte, yte = exp["X_val"], exp["y_val"], exp["X_test"], exp["y_test"]
    problem = compile_problem(exp["forest"], Xv, yv, costs=exp["costs"], train=error_data(exp))
    out = {}
    for m in methods:
        if m == "budgetprune":
            rows = hull_rows(problem, Xv, Xte, yte, solver=solver,
                             cost_resolution=cost_resolution, progress=progress)
            for r in rows:
                r.update(method="budgetprune", param=r["lam_lo"])
            if objective != "paper":
                with phase(f"{objective} curve", enabled=progress):
                    out[objective] = objective_curve(exp, objective,
                                                     [r["lam_lo"] for r in rows])
        elif m == "fit_budget":
            if not budgets:
                continue
            with warnings.catch_warnings():  # what it did is in the rows
                warnings.simplefilter("ignore", UserWarning)
                curve = budget_curve(problem, Xv, yv, budgets=budgets, time_limit=time_limit,
                                     X_eval=Xte, y_eval=yte, progress=progress)
            rows = curve.to_dict("records")
            for r in rows:
                r["param"] = r["budget"]
        else:
            rows = baseline_rows(exp, problem, m, max_points, progress=progress)
        out[m] = rows
    return out


def baseline_rows(exp, problem, method, max_points, *, progress=True):
    """Rows of a baseline's curve: at most ``max_points`` of its prunings (see
    :func:`thin`) of the validation split, scored on the test split."""
    from ..budget import baseline_curve, get_baseline

    Xv = exp["X_val"]
    with phase(f"baseline {method}: pruning", enabled=progress):
        prunings = thin(get_baseline(method)(exp["forest"], Xv, exp["y_val"],
                                             costs=exp["costs"], problem=problem), max_points)
    with phase(f"baseline {method}: scoring {len(prunings)} prunings", enabled=progress):
        return baseline_curve(prunings, Xv, X_eval=exp["X_test"], y_eval=exp["y_test"],
                              method=method).to_dict("records")


def hull_rows(problem, X, X_eval, y_eval, *, solver="auto", cost_resolution=0.0,
              progress=True):
    """The exact hull's rows (:func:`~prune_opt.budget.tradeoff_curve`'s), each vertex
    scored on ``(X_eval, y_eval)`` with those rows routed once (the scoring core of
    :func:`~prune_opt.budget.baseline_curve`) instead of once per vertex; ``X`` are
    the rows ``problem`` was compiled on."""
    from ..budget import baseline_curve, tradeoff_curve

    curve, points = tradeoff_curve(problem, solver=solver, cost_resolution=cost_resolution,
                                   progress=progress, return_points=True)
    rows = curve.to_dict("records")
    with phase(f"exact hull: scoring {len(points)} vertices on the test split",
               enabled=progress):
        scored = baseline_curve([(p.found_at, p.pruned) for p in points], X,
                                X_eval=X_eval, y_eval=y_eval).to_dict("records")
    score = "r2_eval" if scored and "r2_eval" in scored[0] else "accuracy_eval"
    for r, q in zip(rows, scored):
        r[score], r["cost_eval"] = q[score], q["cost_eval"]
    return rows


def score_at_budget(rows, budget, *, y="accuracy_eval"):
    """The test score (column ``y``, e.g. ``r2_eval``) a curve gives at a budget: that
    of its costliest point whose validation cost (``average_cost``) is at most
    ``budget`` -- the point a user would pick without looking at the test rows (NaN
    when no point is that cheap).

    Examples
    --------
    >>> from prune_opt.cli.curve import score_at_budget
    >>> rows = [{"average_cost": 3.0, "accuracy_eval": 0.9},
    ...         {"average_cost": 1.0, "accuracy_eval": 0.7}]
    >>> score_at_budget(rows, 2.0), score_at_budget(rows, 0.5)
    (0.7, nan)
    """
    ok = [r for r in rows if r["average_cost"] <= budget * (1 + 1e-12)]
    if not ok:
        return float("nan")
    return float(max(ok, key=lambda r: (r["average_cost"], r[y]))[y])


def run(args):
    from .. import acquisition_cost, as_forest
    from ..plotting import plot_tradeoff

    methods = parse_methods(args.methods)
    check_solver_name(args.solver)
    if args.baseline_points < 0:
        raise ValueError(f"--baseline-points must be >= 0 (0 = all), got "
                         f"{args.baseline_points}")
    resolution = parse_resolution(args.cost_resolution)
    shares = parse_budget_shares(args.budgets)
    time_limit = check_time_limit(args.budget_time_limit, "--budget-time-limit")
    if "fit_budget" in methods and not shares:
        raise ValueError("--methods fit_budget needs budgets; give --budgets (e.g. 0.1,0.25) "
                         "or leave fit_budget out of --methods")
    if args.objective != "paper":  # a wrong name fails before the work
        from ..objectives import get_objective

        get_objective(args.objective)
        if "budgetprune" not in methods:
            raise ValueError("--objective needs the budgetprune method (its lambdas are reused)")
    exp = setup_experiment(args)
    rf, Xte, yte = exp["forest"], exp["X_test"], exp["y_test"]
    _check_methods_apply(methods, rf)
    print(task_line(exp))
    n_trees = as_forest(rf).n_trees  # a --model file's own, not --trees
    regression = exp["task"] == "regression"
    score, short = ("r2", "R^2") if regression else ("accuracy", "accuracy")
    base_cost = float(acquisition_cost(rf, Xte, exp["costs"]).mean())
    val_cost = float(acquisition_cost(rf, exp["X_val"], exp["costs"]).mean())
    base = score_metrics(rf, Xte, yte, exp["task"])
    base_score = base[f"test_{score}"]
    if resolution is None:
        resolution = AUTO_RESOLUTION * val_cost
    if "budgetprune" in methods:
        print(f"exact hull traced to cost gaps of {resolution:.4g}"
              + (" (--cost-resolution 0: every breakpoint)" if resolution > 0 else ""))
    budgets = [s * val_cost for s in shares]
    curves = compute_curves(exp, methods, solver=args.solver,
                            cost_resolution=resolution,
                            progress=not args.no_progress, objective=args.objective,
                            max_points=args.baseline_points, budgets=budgets,
                            time_limit=time_limit)
    extra = f", MSE {base['test_mse']:.4g}" if regression else ""
    print(f"dataset {exp['dataset'].name}: {n_trees} trees; unpruned test {short} "
          f"{base_score:.4f}{extra}, test cost {base_cost:.4g}, validation cost "
          f"{val_cost:.4g}")
    summary = _summary(curves, shares, budgets, "r2" if regression else "acc", score)
    if shares:
        print(f"test {short} at each budget (a share of the unpruned forest's validation "
              "cost): the method's costliest point whose validation cost fits it")
    print(format_table(summary, list(summary[0])))
    _write_outputs(args, exp, curves, summary, {**base, "test_cost": base_cost,
                                                "validation_cost": val_cost}, n_trees)
    if args.plot:
        with naming_errors(args.plot):
            plot_tradeoff(curves, path=args.plot, y=f"{score}_eval",
                          reference=(base_cost, base_score), budget=budgets or None,
                          title=f"{exp['dataset'].name}: test {short} vs feature cost")
        print(f"wrote {args.plot}")
    return 0


def _check_methods_apply(methods, rf):
    """Refuse, before any solve, a method the model cannot have."""
    from .. import as_forest

    if "impurity" in methods and not as_forest(rf).ensemble.has_impurity:
        raise ValueError("--methods impurity: a boosted model's nodes hold raw scores, so "
                         "they have no impurity; choose among the other baselines (ccp, "
                         "greedy, fewer-trees)")


def _summary(curves, shares, budgets, prefix, score):
    """One row per method: its point count and its test score at each budget."""
    summary = []
    for m, rows in curves.items():
        r = {"method": m, "points": len(rows)}
        for share, b in zip(shares, budgets):
            r[f"{prefix}@{share:.0%}"] = score_at_budget(rows, b, y=f"{score}_eval")
        summary.append(r)
    return summary


def _write_outputs(args, exp, curves, summary, unpruned, n_trees):
    all_rows = [dict(r, method=m) for m, rows in curves.items() for r in rows]
    if args.csv:
        write_csv(args.csv, all_rows)
        print(f"wrote {args.csv}")
    if args.json:
        write_json(args.json, {"dataset": exp["dataset"].name, "task": exp["task"],
                               "trees": n_trees, "unpruned": unpruned,
                               "summary": summary, "rows": all_rows})
        print(f"wrote {args.json}")
