"""Solve one pruning problem with every installed backend and check they agree.

The BudgetPrune program is compiled once (digits, 5 trees of depth <= 5, 200
validation rows, uniform costs: small enough for every backend, including the
Python-built CBC integer program, to finish in seconds) and handed to each backend from ``prune_opt.available_solvers()``: LP solvers
(HiGHS, GLOP, CBC), the integer program (CBC), the exact min-cut / closure
reduction, the first-order PDLP and the paper's primal-dual method.  Exact
backends that report optimality must reach the same objective; the others
report their status and their distance from the optimum.

Run::

    python examples/02_compare_solvers.py [--lam 0.003] [--trees 5] [--max-depth 5]
        [--examples 200] [--time-limit 10]
"""

from __future__ import annotations

import argparse

from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import prune_opt as po
from prune_opt.datasets import load_dataset


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lam", type=float, default=3e-3)
    parser.add_argument("--trees", type=int, default=5)
    parser.add_argument("--max-depth", type=int, default=5)
    parser.add_argument("--examples", type=int, default=200,
                        help="validation rows compiled into the program")
    parser.add_argument("--time-limit", type=float, default=10.0,
                        help="seconds per backend")
    args = parser.parse_args(argv)

    data = load_dataset("digits")
    X_train, X_rest, y_train, y_rest = train_test_split(data.X, data.y, train_size=0.5,
                                                        random_state=0, stratify=data.y)
    X_val, X_test, y_val, y_test = train_test_split(X_rest, y_rest, test_size=0.5,
                                                    random_state=0, stratify=y_rest)
    rf = RandomForestClassifier(n_estimators=args.trees, max_depth=args.max_depth,
                                random_state=0).fit(X_train, y_train)
    X_val, y_val = X_val[:args.examples], y_val[:args.examples]
    problem = po.compile_problem(rf, X_val, y_val, costs=data.costs_or_uniform(),
                                 lam=args.lam, train=(X_train, y_train))
    size = problem.size()
    print(f"{problem!r}")
    print(f"LP: {size['n_variables']:,} variables, {size['n_rows']:,} rows, "
          f"{size['nnz']:,} nonzeros ({size['n_cost_rows']} merged cost rows)")

    info = po.list_solvers()
    rows = []
    for name in po.available_solvers():
        pruned = po.solve(problem, solver=name, time_limit=args.time_limit)
        si = pruned.solve_info
        rows.append({"solver": name, "kind": info[name]["kind"], "exact": info[name]["exact"],
                     "status": si["status"], "objective": pruned.objective,
                     "gap": si["gap"], "seconds": si["seconds"], "splits": pruned.n_splits,
                     "test_acc": pruned.score(X_test, y_test),
                     "avg_cost": pruned.average_cost(X_test)})

    header = (f"{'solver':>12} {'kind':>13} {'status':>10} {'objective':>14} {'gap':>9} "
              f"{'seconds':>8} {'splits':>6} {'test acc':>8} {'avg cost':>8}")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['solver']:>12} {r['kind']:>13} {r['status']:>10} {r['objective']:14.10f} "
              f"{r['gap']:9.1e} {r['seconds']:8.2f} {r['splits']:6d} {r['test_acc']:8.4f} "
              f"{r['avg_cost']:8.2f}")

    exact = [r for r in rows if r["exact"] and r["status"] == "optimal"]
    if not exact:
        raise SystemExit("no exact backend reached optimality")
    best = min(r["objective"] for r in exact)
    spread = max(abs(r["objective"] - best) for r in exact) / max(abs(best), 1e-12)
    print(f"exact backends at optimality: {len(exact)}; objectives agree to {spread:.1e} "
          "relative")
    for r in rows:
        if not (r["exact"] and r["status"] == "optimal"):
            print(f"{r['solver']}: {r['status']}, {(r['objective'] - best) / best:+.1e} "
                  "relative to the optimum")
    if spread > 1e-9:
        raise SystemExit("exact backends disagree")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
