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

from ._common import add_data_arguments, format_table, setup_experiment, write_json

DEFAULT_LAMS = (0.0, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04)
DEFAULT_LP_LAMS = (0.005,)
# reference backends for small problems: the PuLP-built binary program and the
# pure-Python networkx cut
SKIP_BY_DEFAULT = ("cbc-ip", "mincut-networkx", "budget")  # budget: a min-cut on lam problems


def add_parser(sub):
    p = sub.add_parser("demo", help="end-to-end demo on a bundled real dataset",
                       description="Fit a random forest on a bundled dataset (digits by "
                       "default), prune it over a lambda grid with every installed backend, "
                       "print a table and save an accuracy-cost plot (PNG) and the table "
                       "(JSON).")
    add_data_arguments(p, trees=40)
    p.add_argument("--lams", default=",".join(str(x) for x in DEFAULT_LAMS),
                   help="comma-separated lambda grid")
    p.add_argument("--solvers", default=None,
                   help="comma-separated backends (default: every installed one except "
                        "the small-problem references cbc-ip and mincut-networkx)")
    p.add_argument("--lp-lams", default=",".join(str(x) for x in DEFAULT_LP_LAMS),
                   help="lambdas at which the matrix-based LP backends run (default "
                        "0.005; 'all' = every lambda of the grid)")
    p.add_argument("--out", default="demo-output", help="output folder (default demo-output)")
    p.set_defaults(func=run)


def run(args):
    from tqdm import tqdm

    from .. import acquisition_cost, available_solvers, prune

    lams = [float(s) for s in args.lams.split(",") if s.strip()]
    solvers = (args.solvers.split(",") if args.solvers
               else [s for s in available_solvers() if s not in SKIP_BY_DEFAULT])
    from ..solvers import get_solver

    for s in solvers:  # fail before any work on a misspelt backend
        get_solver(s)
    exp = setup_experiment(args)
    rf = exp["forest"]
    costs = exp["costs"]
    Xte, yte = exp["X_test"], exp["y_test"]
    base_acc = float(np.mean(rf.predict(Xte) == yte))
    base_cost = float(acquisition_cost(rf, Xte, costs).mean())
    print(f"dataset {exp['dataset'].name}: train {len(exp['y_train'])}, validation "
          f"{len(exp['y_val'])}, test {len(yte)}; {args.trees} trees")
    print(f"unpruned forest: test accuracy {base_acc:.4f}, average cost {base_cost:.4g}")
    from ..solvers import list_solvers

    kinds = list_solvers()
    lp_lams = lams if args.lp_lams.strip() == "all" else [
        float(x) for x in args.lp_lams.split(",") if x.strip()]
    rows = []
    jobs = [(lam, s) for lam in sorted(set(lams) | set(lp_lams)) for s in solvers
            if kinds[s]["kind"] not in ("lp", "ip") or lam in lp_lams]
    for lam, s in tqdm(jobs, desc="pruning", unit="solve"):
        pruned = prune(rf, exp["X_val"], exp["y_val"], costs=costs, lam=lam, solver=s,
                       train=(exp["X_train"], exp["y_train"]))
        rows.append({"lam": lam, "solver": s, "objective": pruned.objective,
                     "seconds": pruned.solve_info["seconds"],
                     "status": pruned.solve_info["status"],
                     "test_accuracy": pruned.score(Xte, yte),
                     "average_cost": pruned.average_cost(Xte), "splits": pruned.n_splits,
                     "gap": pruned.solve_info["gap"]})
    print(format_table(rows, ["lam", "solver", "objective", "seconds", "test_accuracy",
                              "average_cost", "splits"]))
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
            print(f"lam={lam:g}: " + "; ".join(parts))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "demo.json", {"dataset": exp["dataset"].name, "trees": args.trees,
                                   "unpruned": {"test_accuracy": base_acc,
                                                "average_cost": base_cost},
                                   "rows": rows})
    _plot(rows, base_acc, base_cost, out / "accuracy_cost.png", exp["dataset"].name)
    print(f"wrote {out / 'demo.json'} and {out / 'accuracy_cost.png'}")
    return 0


def _plot(rows, base_acc, base_cost, path, name):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    fig.savefig(path, dpi=120)
    plt.close(fig)
