"""``prune-opt demo``: prune a 40-tree forest over a lambda grid with every backend,
then draw the accuracy-cost frontier a user cares about, and the best models at
10/25/50% of the forest's cost.

The fast exact backends (min-cut, primal-dual) solve the whole grid; the
matrix-based LP backends (HiGHS, GLOP, PDLP, CBC), which need seconds to minutes
per solve on this 1M-nonzero program, solve the check point(s) ``--lp-lams`` so the
agreement table shows both that every backend reaches the same optimum and what
the closure reduction buys.  ``--lp-lams all`` runs every backend on every lambda.

The picture (``accuracy_cost.png``) shows the exact BudgetPrune hull as steps
(between two vertices only the cheaper one is attainable), the baselines,
LightGBM's CEGB over its trade-off grid when lightgbm is installed, the budget
methods of :data:`BUDGET_METHODS` at each budget as points (the budget
estimator ``forest_builders.BudgetPrunedForestClassifier`` and ``fit_budget``
with their defaults), and the unpruned forest.  The budget table holds the same
methods (CEGB: the model chosen on the validation split among those within the
budget there).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ._common import (
    add_data_arguments,
    add_output_argument,
    format_table,
    naming_errors,
    phase,
    setup_experiment,
    ticking,
    write_json,
)
from .compare import parse_solvers
from .curve import check_time_limit, hull_rows, parse_budget_shares

DEFAULT_LAMS = (0.0, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04)
DEFAULT_LP_LAMS = (0.005,)
DEFAULT_BUDGETS = (0.1, 0.25, 0.5)
DEFAULT_BASELINES = "greedy,fewer-trees"
#: members of a baseline family drawn (evenly spread; see curve --baseline-points)
BASELINE_POINTS = 50
#: budget table: 'method' names what was fitted and 'picked' what it settled on;
#: 'fit_cost' is the average cost on the rows where the method meets the budget; 'gap'
#: the certified relative gap of the result's objective, or 'no bound'
BUDGET_COLUMNS = ["budget_share", "budget", "method", "picked", "test_accuracy", "test_cost",
                  "fit_cost", "gap", "seconds"]
#: what the budget table's columns mean (printed above it)
BUDGET_LEGEND = (
    "budget_share: share of the unpruned forest's validation cost; picked: what the method "
    "settled on;\nfit_cost: average cost on the rows where the method meets the budget "
    "(fit_budget and CEGB: the validation split;\nthe estimator: its own pruning rows, a "
    "fifth of train+validation); gap: certified relative gap, or 'no bound';\nseconds: "
    "the fit (CEGB: its whole trade-off grid, trained once for every budget)")
#: cegb_tradeoff values of LightGBM's CEGB (its default grid, denser where the models
#: fall from the whole forest's cost to none)
CEGB_TRADEOFFS = (0.0, 1e-2, 3e-2, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
#: agreement table: 'objective' is the value reached, 'vs_best' its distance to the best
#: exact backend's at the same lambda (relative), 'gap' the backend's own certified gap
TABLE_COLUMNS = ["lam", "solver", "objective", "vs_best", "gap", "status", "seconds",
                 "test_accuracy", "average_cost", "splits"]


def add_parser(sub):
    p = sub.add_parser("demo", help="end-to-end demo on a bundled real dataset",
                       description="Fit a random forest on a bundled dataset (digits by "
                       "default), prune it over a lambda grid with every installed backend, "
                       "print a table and save an accuracy-cost plot (PNG) and the table "
                       "(JSON).")
    add_data_arguments(p, trees=40, task=False)
    p.add_argument("--lams", default=",".join(str(x) for x in DEFAULT_LAMS),
                   help="comma-separated lambda grid")
    p.add_argument("--solvers", default=None,
                   help="comma-separated backends (default: every installed one except "
                        "the small-problem references cbc-ip and mincut-networkx)")
    p.add_argument("--lp-lams", default=",".join(str(x) for x in DEFAULT_LP_LAMS),
                   help="lambdas at which the matrix-based LP backends run (default "
                        "0.005; 'all' = every lambda of the grid)")
    p.add_argument("--budgets", default=",".join(str(x) for x in DEFAULT_BUDGETS),
                   help="budgets as shares of the unpruned forest's validation cost: at each, "
                        "the budget estimator, fit_budget and (lightgbm installed) CEGB "
                        "(default 0.1,0.25,0.5; 'none' skips them)")
    p.add_argument("--budget-time-limit", type=float, default=None, metavar="SECONDS",
                   help="seconds per fit_budget call (default: fit_budget's own)")
    p.add_argument("--estimator-time-limit", type=float, default=None, metavar="SECONDS",
                   help="seconds per fit of the budget estimator (default: its own, 18)")
    p.add_argument("--no-cegb", action="store_true",
                   help="leave LightGBM's CEGB out (it runs when lightgbm is installed)")
    p.add_argument("--baselines", default=DEFAULT_BASELINES,
                   help="baseline curves drawn beside the exact hull, comma-separated "
                        f"(default {DEFAULT_BASELINES}; also ccp, impurity; 'none')")
    p.add_argument("--hull-resolution", type=float, default=0.01,
                   help="trace the exact hull down to gaps of this share of the unpruned "
                        "forest's validation cost (default 0.01; 0 = every breakpoint)")
    add_output_argument(p, "--out", kind="dir", default="demo-output",
                        help="output folder (default demo-output)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run)


def run(args):
    lams, lp_lams = _parse_grids(args)
    shares = parse_budget_shares(args.budgets)
    limits = {"fit_budget": check_time_limit(args.budget_time_limit, "--budget-time-limit"),
              "estimator": check_time_limit(args.estimator_time_limit,
                                            "--estimator-time-limit")}
    if limits["estimator"] == 0:
        raise ValueError("--estimator-time-limit must be > 0 seconds")
    if not (0 <= args.hull_resolution < 1):
        raise ValueError(f"--hull-resolution must be a share in [0, 1), got "
                         f"{args.hull_resolution}")
    baselines = _parse_baselines(args.baselines)
    solvers = parse_solvers(args.solvers or "all")  # a misspelt backend fails first
    progress = not args.no_progress
    exp = setup_experiment(args)
    exp["seed"] = args.seed
    unpruned = _unpruned_figures(args, exp)
    rows = add_vs_best(_solve_grid(exp, _jobs(lams, lp_lams, solvers), progress=progress))
    print("\nbackend agreement (vs_best: relative distance to the best exact backend at "
          "the same lambda; gap: the backend's own certified gap)")
    print(format_table(rows, TABLE_COLUMNS))
    for line in _agreement_lines(rows):
        print(line)
    full = unpruned["validation_cost"]  # the budgets and the hull resolution are shares of it
    curves = _frontier(exp, baselines, args.hull_resolution * full, progress=progress)
    lightgbm = importlib.util.find_spec("lightgbm") is not None  # for CEGB
    cegb = None if args.no_cegb or not lightgbm else _cegb_models(exp, progress)
    if cegb:
        curves["cegb (LightGBM)"] = [{"param": m["tradeoff"], "average_cost": m["val_cost"],
                                      "accuracy_eval": m["test_accuracy"],
                                      "cost_eval": m["test_cost"]} for m in cegb]
    budget_rows = _budget_table(exp, [s * full for s in shares], shares, limits, cegb,
                                progress=progress)
    if budget_rows:
        print("\naccuracy at a budget, on the test split")
        print(BUDGET_LEGEND)
        print(format_table(budget_rows, BUDGET_COLUMNS))
        _print_families(budget_rows)
        if cegb is None and not args.no_cegb:
            print("(LightGBM's CEGB is left out: lightgbm is not installed; pip install "
                  "lightgbm)")
    _write_outputs(Path(args.out), exp, args.trees, unpruned, rows, budget_rows, curves)
    return 0


def _parse_baselines(text):
    from .curve import parse_methods

    if text.strip().lower() == "none":
        return []
    methods = parse_methods(text)
    if "budgetprune" in methods:
        raise ValueError("--baselines: budgetprune is always drawn (its exact hull); list "
                         "only baselines")
    return methods


def add_vs_best(rows):
    """Each row's relative distance to the best exact backend's objective at its lambda."""
    from ..solvers import list_solvers

    kinds = list_solvers()
    for lam in {r["lam"] for r in rows}:
        at = [r for r in rows if r["lam"] == lam]
        exact = [r["objective"] for r in at if kinds[r["solver"]]["exact"]]
        best = min(exact) if exact else min(r["objective"] for r in at)
        for r in at:
            diff = r["objective"] - best
            r["vs_best"] = 0.0 if abs(diff) <= 1e-12 * max(1.0, abs(best)) else \
                diff / max(abs(best), 1e-12)
    return rows


def _frontier(exp, baselines, resolution, *, progress=True):
    """The exact hull (test accuracy and cost of every vertex, traced to gaps of
    ``resolution`` in average cost) and the baseline curves."""
    from .. import compile_problem
    from .curve import baseline_rows

    rf, costs, Xv, yv = exp["forest"], exp["costs"], exp["X_val"], exp["y_val"]
    problem = compile_problem(rf, Xv, yv, costs=costs, train=(exp["X_train"], exp["y_train"]))
    curves = {"BudgetPrune exact hull": hull_rows(problem, Xv, exp["X_test"], exp["y_test"],
                                                  cost_resolution=resolution,
                                                  progress=progress)}
    for m in baselines:
        curves[m] = baseline_rows(exp, problem, m, BASELINE_POINTS, progress=progress)
    return curves


def _cegb_models(exp, progress):
    """LightGBM's CEGB (lazy per-example penalty) at each of :data:`CEGB_TRADEOFFS`,
    trained on the training split: validation cost and accuracy (to choose at a budget),
    test accuracy and cost."""
    import time
    import warnings

    from tqdm import tqdm

    from ._plugins import estimator_class

    CEGBClassifier = estimator_class("CEGBClassifier")

    out = []
    bar = tqdm(CEGB_TRADEOFFS, unit="model", disable=not progress)
    for tr in bar:
        bar.set_description(f"LightGBM CEGB at tradeoff {tr:g}")
        t0 = time.perf_counter()
        model = CEGBClassifier(costs=exp["costs"], cegb_tradeoff=tr,
                               n_estimators=len(exp["forest"].estimators_),
                               random_state=exp["seed"])
        with warnings.catch_warnings():  # a constant model is the curve's cheapest end
            warnings.simplefilter("ignore", UserWarning)
            model.fit(exp["X_train"], exp["y_train"])
        out.append({"tradeoff": tr, "val_cost": model.average_cost(exp["X_val"]),
                    "val_accuracy": model.score(exp["X_val"], exp["y_val"]),
                    "test_accuracy": model.score(exp["X_test"], exp["y_test"]),
                    "test_cost": model.average_cost(exp["X_test"]),
                    "seconds": time.perf_counter() - t0})
    bar.close()
    return out


def _estimator_row(exp, budget, limits, progress):
    """The budget estimator with its defaults, fit on the training and validation
    splits (it splits them itself to grow, prune and choose)."""
    import numpy as np

    from ._plugins import estimator_class

    BudgetPrunedForestClassifier = estimator_class("BudgetPrunedForestClassifier")

    X = np.concatenate([exp["X_train"], exp["X_val"]])
    y = np.concatenate([exp["y_train"], exp["y_val"]])
    kwargs = {} if limits["estimator"] == "default" else {"time_limit": limits["estimator"]}
    est = BudgetPrunedForestClassifier(budget=budget, costs=exp["costs"],
                                       n_estimators=len(exp["forest"].estimators_),
                                       random_state=exp["seed"], verbose=progress,
                                       **kwargs).fit(X, y)
    c = est.candidates_
    win = c[c["chosen"]].iloc[0]
    pruned = ", pruned" if win["objective"] != "none" else ""
    return {"picked": f"{win['name']} [{win['family']}{pruned}]",
            "test_accuracy": est.score(exp["X_test"], exp["y_test"]),
            "test_cost": est.average_cost(exp["X_test"]),
            "fit_cost": float(win["average_cost"]), "gap": "no bound",
            "seconds": float(est.fit_seconds_), "family": str(win["family"]),
            "families": _families_of(c)}


def _families_of(candidates):
    """Per candidate family of one estimator fit: the models it grew, the rows (models as
    grown or pruned) that fit the budget, its best held-out accuracy among them, and
    whether it won (a family the clock had no room for has 0 models)."""
    out = []
    for family, rows in candidates.groupby("family", sort=False):
        scored = rows[rows["score"].notna()]
        fitting = scored[scored["fits_budget"].astype(bool)]
        grown = rows[~rows["reason"].str.startswith(("not grown", "not ranked"))]
        out.append({"family": str(family), "models": int(grown["model"].nunique()),
                    "fitting": int(len(fitting)),
                    "best_heldout_accuracy": (float(fitting["score"].max()) if len(fitting)
                                              else float("nan")),
                    "won": bool(rows["chosen"].any())})
    return out


def _print_families(budget_rows):
    """The estimator's candidates by family at each budget, below the budget table."""
    rows = [{"budget_share": r["budget_share"], **f} for r in budget_rows
            if r["method"] == "budget estimator" for f in r.get("families", [])]
    if rows:
        print("\nthe budget estimator's candidates by family (models grown; prunings and "
              "models that fit the budget;\ntheir best accuracy on the estimator's held-out "
              "select rows; the winner's family)")
        print(format_table(rows, ["budget_share", "family", "models", "fitting",
                                  "best_heldout_accuracy", "won"]))


def _fit_budget_row(exp, budget, limits, progress):
    """``fit_budget`` with its defaults on the demo's forest (validation rows)."""
    import time
    import warnings

    from ..budget import fit_budget

    t0 = time.perf_counter()
    with warnings.catch_warnings(), phase(f"fit_budget at budget {budget:.4g}",
                                          enabled=progress):
        warnings.simplefilter("ignore")
        pf = fit_budget(exp["forest"], exp["X_val"], exp["y_val"], costs=exp["costs"],
                        budget=budget, train=(exp["X_train"], exp["y_train"]),
                        time_limit=limits["fit_budget"])
    info = pf.solve_info
    chosen = info.get("auto", {}).get("chosen")
    loss = info.get("objective", "paper")
    gap = info.get("gap")
    return {"picked": f"loss {chosen} (auto)" if chosen else f"loss {loss}",
            "test_accuracy": pf.score(exp["X_test"], exp["y_test"]),
            "test_cost": pf.average_cost(exp["X_test"]),
            "fit_cost": pf.average_cost(exp["X_val"]),
            # a search without a lower bound (the forest's own loss) has no gap to certify
            "gap": gap if gap is not None else "no bound",
            "seconds": time.perf_counter() - t0}


#: what the budget table and the picture's points show at each budget:
#: label -> function(exp, budget, time limits, progress) -> the row's figures
#: (picked, test_accuracy, test_cost, fit_cost, gap, seconds).  One more method is one
#: more entry.
BUDGET_METHODS = {
    "budget estimator": _estimator_row,
    "fit_budget": _fit_budget_row,
}


def _cegb_row(cegb, budget):
    """CEGB at a budget: the model with the best validation accuracy among those whose
    validation cost fits (ties: the cheaper)."""
    ok = [m for m in cegb if m["val_cost"] <= budget * (1 + 1e-12)]
    if not ok:
        return {"picked": "none fits", "test_accuracy": float("nan"),
                "test_cost": float("nan"), "fit_cost": float("nan"), "gap": "no bound",
                "seconds": 0.0}
    m = max(ok, key=lambda m: (m["val_accuracy"], -m["val_cost"]))
    return {"picked": f"tradeoff {m['tradeoff']:g}", "test_accuracy": m["test_accuracy"],
            "test_cost": m["test_cost"], "fit_cost": m["val_cost"], "gap": "no bound",
            "seconds": sum(c["seconds"] for c in cegb)}


def _budget_table(exp, budgets, shares, limits, cegb=None, *, progress=True):
    """Every method of :data:`BUDGET_METHODS` (and CEGB when given) at each budget (the
    given ``shares`` of the unpruned forest's validation cost)."""
    rows = []
    for budget, share in zip(budgets, shares):
        for label, fit in BUDGET_METHODS.items():
            rows.append({"budget_share": share, "budget": budget, "method": label,
                         **fit(exp, budget, limits, progress)})
        if cegb:
            rows.append({"budget_share": share, "budget": budget, "method": "LightGBM CEGB",
                         **_cegb_row(cegb, budget)})
    return rows


def budget_points(budget_rows):
    """The budget table as named point series of :func:`~prune_opt.plotting.plot_tradeoff`."""
    points = {}
    for r in budget_rows:
        if r["method"] not in BUDGET_METHODS:  # CEGB is drawn as its whole curve
            continue
        points.setdefault(r["method"], []).append(
            {"cost_eval": r["test_cost"], "accuracy_eval": r["test_accuracy"]})
    return points


def _parse_lams(text, flag):
    import numpy as np

    try:
        values = [float(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise ValueError(f"{flag} must be comma-separated numbers, got {text!r}") from None
    bad = [v for v in values if not (np.isfinite(v) and v >= 0)]
    if bad:
        raise ValueError(f"{flag}: every lambda must be a finite number >= 0, got {bad}")
    return values


def _parse_grids(args):
    """(lambda grid, lambdas at which the matrix-based backends run)."""
    lams = _parse_lams(args.lams, "--lams")
    if not lams:
        raise ValueError("--lams is empty; give at least one lambda, e.g. --lams 0,0.01")
    if args.lp_lams.strip() == "all":
        return lams, lams
    return lams, _parse_lams(args.lp_lams, "--lp-lams")


def _unpruned_figures(args, exp):
    import numpy as np

    from .. import acquisition_cost

    rf, Xte, yte = exp["forest"], exp["X_test"], exp["y_test"]
    base = {"test_accuracy": float(np.mean(rf.predict(Xte) == yte)),
            "average_cost": float(acquisition_cost(rf, Xte, exp["costs"]).mean()),
            # the budgets are shares of this
            "validation_cost": float(acquisition_cost(rf, exp["X_val"], exp["costs"]).mean())}
    print(f"dataset {exp['dataset'].name}: train {len(exp['y_train'])}, validation "
          f"{len(exp['y_val'])}, test {len(yte)}; {args.trees} trees")
    print(f"unpruned forest: test accuracy {base['test_accuracy']:.4f}, average cost "
          f"{base['average_cost']:.4g} on the test split, {base['validation_cost']:.4g} on "
          "the validation split")
    return base


def _jobs(lams, lp_lams, solvers):
    """(lam, solver) pairs: matrix-based backends only at ``lp_lams``."""
    from ..solvers import list_solvers

    kinds = list_solvers()
    return [(lam, s) for lam in sorted(set(lams) | set(lp_lams)) for s in solvers
            if kinds[s]["kind"] not in ("lp", "ip") or lam in lp_lams]


def _solve_grid(exp, jobs, *, progress=True):
    from tqdm import tqdm

    from .. import prune

    rows = []
    Xte, yte = exp["X_test"], exp["y_test"]
    bar = tqdm(jobs, unit="solve", disable=not progress)
    for lam, s in bar:
        bar.set_description(f"lambda grid: {s} at lambda={lam:g}")
        with ticking(bar):  # one LP solve can take a minute: keep the clock moving
            pruned = prune(exp["forest"], exp["X_val"], exp["y_val"], costs=exp["costs"],
                           lam=lam, solver=s, train=(exp["X_train"], exp["y_train"]))
        info = pruned.solve_info
        rows.append({"lam": lam, "solver": s, "objective": pruned.objective,
                     "seconds": info["seconds"], "status": info["status"],
                     "test_accuracy": pruned.score(Xte, yte),
                     "average_cost": pruned.average_cost(Xte), "splits": pruned.n_splits,
                     "gap": info["gap"], "max_frac": info.get("max_fractionality", 0.0)})
    bar.close()
    return rows


def _agreement_lines(rows):
    """Per lambda: how closely the exact backends agree, how far the others are."""
    from ..solvers import list_solvers

    kinds = list_solvers()
    lines = []
    for lam in sorted({r["lam"] for r in rows}):
        at = [r for r in rows if r["lam"] == lam]
        exact = [r for r in at if kinds[r["solver"]]["exact"]]
        best = min(r["objective"] for r in exact) if exact else None
        parts = []
        if len(exact) > 1:
            objs = [r["objective"] for r in exact]
            spread = (max(objs) - min(objs)) / max(abs(min(objs)), 1e-12)
            parts.append(f"exact backends ({', '.join(r['solver'] for r in exact)}) agree to "
                         f"{spread:.1e} relative")
        for r in at:
            if not kinds[r["solver"]]["exact"] and best is not None:
                gap = (r["objective"] - best) / max(abs(best), 1e-12)
                parts.append(f"{r['solver']} within {gap:.1e} of the optimum "
                             f"(certified gap {r.get('gap', float('nan')):.1e})")
        if parts:
            lines.append(f"lam={lam:g}: " + "; ".join(parts))
    return lines


def _write_outputs(out, exp, trees, unpruned, rows, budget_rows=(), curves=None):
    out.mkdir(exist_ok=True)  # its parent was checked before the work started
    write_json(out / "demo.json", {"dataset": exp["dataset"].name, "trees": trees,
                                   "unpruned": unpruned, "rows": rows,
                                   "budgets": list(budget_rows),
                                   "frontier": curves or {}})
    with naming_errors(out / "accuracy_cost.png"):
        _plot(curves or {}, budget_rows, unpruned, out / "accuracy_cost.png",
              f"{exp['dataset'].name}, {trees} trees")
    print(f"wrote {out / 'demo.json'} and {out / 'accuracy_cost.png'}")


def _plot(curves, budget_rows, unpruned, path, name):
    from ..plotting import _pyplot, plot_tradeoff, save_figure

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 5))
    try:
        budgets = sorted({r["budget"] for r in budget_rows}) or None
        plot_tradeoff(curves or {"BudgetPrune exact hull": []}, ax=ax,
                      points=budget_points(budget_rows), budget=budgets,
                      reference=(unpruned["average_cost"], unpruned["test_accuracy"]),
                      title=f"{name}: test accuracy vs feature cost\n(points: one model "
                            "per budget, fitted without the test rows;\nthe estimator's "
                            "labelled by its winner's candidate family)")
        for r in budget_rows:  # which candidate family the estimator chose at each budget
            if r["method"] == "budget estimator" and r.get("family"):
                ax.annotate(r["family"], (r["test_cost"], r["test_accuracy"]),
                            xytext=(4, -10), textcoords="offset points", fontsize=7)
        save_figure(fig, path)
    finally:
        plt.close(fig)
