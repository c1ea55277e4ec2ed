"""``prune-opt demo``: prune a 40-tree forest over a lambda grid with every backend.

The fast exact backends (min-cut, primal-dual) solve the whole grid; the
matrix-based LP backends (HiGHS, GLOP, PDLP, CBC), which need seconds to minutes
per solve on this 1M-nonzero program, solve the check point(s) ``--lp-lams`` so the
table shows both that every backend reaches the same optimum and what the
closure reduction buys.  ``--lp-lams all`` runs every backend on every lambda.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._common import (
    add_data_arguments,
    add_output_argument,
    format_table,
    naming_errors,
    setup_experiment,
    write_json,
)
from .compare import parse_solvers

DEFAULT_LAMS = (0.0, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04)
DEFAULT_LP_LAMS = (0.005,)
DEFAULT_BUDGETS = (0.1, 0.25, 0.5)
BUDGET_OBJECTIVES = ("paper", "brier")
BUDGET_COLUMNS = ["budget_share", "budget", "objective", "test_accuracy", "test_cost",
                  "status", "gap", "seconds"]
TABLE_COLUMNS = ["lam", "solver", "objective", "seconds", "test_accuracy", "average_cost",
                 "splits"]


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
                   help="budgets as shares of the unpruned forest's validation cost, each "
                        "solved by fit_budget with the paper and the Brier objective "
                        "(default 0.1,0.25,0.5; 'none' skips them)")
    p.add_argument("--budget-time-limit", type=float, default=5.0,
                   help="seconds per fit_budget call (default 5)")
    add_output_argument(p, "--out", kind="dir", default="demo-output",
                        help="output folder (default demo-output)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run)


def run(args):
    lams, lp_lams = _parse_grids(args)
    shares = _parse_budgets(args.budgets)
    if not (0 <= args.budget_time_limit < float("inf")):  # NaN too: fail before the work
        raise ValueError(f"--budget-time-limit must be a finite number of seconds >= 0, got "
                         f"{args.budget_time_limit}")
    solvers = parse_solvers(args.solvers or "all")  # a misspelt backend fails first
    exp = setup_experiment(args)
    unpruned = _unpruned_figures(args, exp)
    rows = _solve_grid(exp, _jobs(lams, lp_lams, solvers), progress=not args.no_progress)
    print(format_table(rows, TABLE_COLUMNS))
    for line in _agreement_lines(rows):
        print(line)
    budget_rows = _budget_table(exp, shares, args.budget_time_limit)
    if budget_rows:
        print("\naccuracy at a budget (fit_budget; budget = share of the unpruned forest's "
              "validation cost; CEGB side by side: benchmarks/frontier.py)")
        print(format_table(budget_rows, BUDGET_COLUMNS))
    _write_outputs(Path(args.out), exp, args.trees, unpruned, rows, budget_rows)
    return 0


def _parse_budgets(text):
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


def _budget_table(exp, shares, time_limit):
    """fit_budget at each budget share, with the paper and the Brier objective."""
    import warnings

    from .. import acquisition_cost
    from ..budget import fit_budget

    rf, costs, Xv, yv = exp["forest"], exp["costs"], exp["X_val"], exp["y_val"]
    full = float(acquisition_cost(rf, Xv, costs).mean())
    rows = []
    for share, objective in ((s, o) for s in shares for o in BUDGET_OBJECTIVES):
        train = (exp["X_train"], exp["y_train"]) if objective == "paper" else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pf = fit_budget(rf, Xv, yv, costs=costs, budget=share * full, train=train,
                            objective=objective, time_limit=time_limit)
        info = pf.solve_info
        rows.append({"budget_share": share, "budget": share * full, "objective": objective,
                     "test_accuracy": pf.score(exp["X_test"], exp["y_test"]),
                     "test_cost": pf.average_cost(exp["X_test"]),
                     "status": info.get("status"), "gap": info.get("gap"),
                     "seconds": info.get("seconds")})
    return rows


def _parse_lams(text, flag):
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
    from .. import acquisition_cost

    rf, Xte, yte = exp["forest"], exp["X_test"], exp["y_test"]
    base = {"test_accuracy": float(np.mean(rf.predict(Xte) == yte)),
            "average_cost": float(acquisition_cost(rf, Xte, exp["costs"]).mean())}
    print(f"dataset {exp['dataset'].name}: train {len(exp['y_train'])}, validation "
          f"{len(exp['y_val'])}, test {len(yte)}; {args.trees} trees")
    print(f"unpruned forest: test accuracy {base['test_accuracy']:.4f}, average cost "
          f"{base['average_cost']:.4g}")
    return base


def _solver_kinds():
    from ..solvers import list_solvers

    return list_solvers()


def _jobs(lams, lp_lams, solvers):
    """(lam, solver) pairs: matrix-based backends only at ``lp_lams``."""
    kinds = _solver_kinds()
    return [(lam, s) for lam in sorted(set(lams) | set(lp_lams)) for s in solvers
            if kinds[s]["kind"] not in ("lp", "ip") or lam in lp_lams]


def _solve_grid(exp, jobs, *, progress=True):
    from tqdm import tqdm

    from .. import prune

    rows = []
    Xte, yte = exp["X_test"], exp["y_test"]
    for lam, s in tqdm(jobs, desc="pruning", unit="solve", disable=not progress):
        pruned = prune(exp["forest"], exp["X_val"], exp["y_val"], costs=exp["costs"],
                       lam=lam, solver=s, train=(exp["X_train"], exp["y_train"]))
        info = pruned.solve_info
        rows.append({"lam": lam, "solver": s, "objective": pruned.objective,
                     "seconds": info["seconds"], "status": info["status"],
                     "test_accuracy": pruned.score(Xte, yte),
                     "average_cost": pruned.average_cost(Xte), "splits": pruned.n_splits,
                     "gap": info["gap"]})
    return rows


def _agreement_lines(rows):
    """Per lambda: how closely the exact backends agree, how far the others are."""
    kinds = _solver_kinds()
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


def _write_outputs(out, exp, trees, unpruned, rows, budget_rows=()):
    out.mkdir(exist_ok=True)  # its parent was checked before the work started
    write_json(out / "demo.json", {"dataset": exp["dataset"].name, "trees": trees,
                                   "unpruned": unpruned, "rows": rows,
                                   "budgets": list(budget_rows)})
    with naming_errors(out / "accuracy_cost.png"):
        _plot(rows, unpruned["test_accuracy"], unpruned["average_cost"],
              out / "accuracy_cost.png", exp["dataset"].name)
    print(f"wrote {out / 'demo.json'} and {out / 'accuracy_cost.png'}")


def _plot(rows, base_acc, base_cost, path, name):
    from ..plotting import _pyplot, save_figure

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for s in sorted({r["solver"] for r in rows}):
        pts = sorted((r["average_cost"], r["test_accuracy"]) for r in rows if r["solver"] == s)
        ax.plot(*zip(*pts), marker="o", label=f"BudgetPrune ({s})", alpha=0.7)
    ax.scatter([base_cost], [base_acc], marker="*", s=150, color="k", label="unpruned forest")
    ax.set_xlabel("average acquisition cost per test example")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"{name}: accuracy vs feature cost")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        save_figure(fig, path)
    finally:
        plt.close(fig)
