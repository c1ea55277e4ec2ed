"""``prune-opt demo``: prune a 40-tree forest over a lambda grid with every backend."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._common import add_data_arguments, format_table, setup_experiment, write_json

DEFAULT_LAMS = (0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
# LP backends that build per-element Python models are slow on the full demo
SKIP_BY_DEFAULT = ("cbc-ip",)


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
                        "cbc-ip)")
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
    rows = []
    jobs = [(lam, s) for lam in lams for s in solvers]
    for lam, s in tqdm(jobs, desc="pruning", unit="solve"):
        pruned = prune(rf, exp["X_val"], exp["y_val"], costs=costs, lam=lam, solver=s,
                       train=(exp["X_train"], exp["y_train"]))
        rows.append({"lam": lam, "solver": s, "objective": pruned.objective,
                     "seconds": pruned.solve_info["seconds"],
                     "status": pruned.solve_info["status"],
                     "test_accuracy": pruned.score(Xte, yte),
                     "average_cost": pruned.average_cost(Xte), "splits": pruned.n_splits})
    print(format_table(rows, ["lam", "solver", "objective", "seconds", "test_accuracy",
                              "average_cost", "splits"]))
    for lam in lams:
        objs = [r["objective"] for r in rows if r["lam"] == lam]
        spread = (max(objs) - min(objs)) / max(abs(min(objs)), 1e-12)
        print(f"lam={lam:g}: backends agree to {spread:.2e} relative")
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
