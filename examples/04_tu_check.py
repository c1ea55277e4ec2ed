"""Check that the pruning LP is totally unimodular, and that a budget row breaks it.

Without a budget the constraint matrix of BudgetPrune is totally unimodular
(TU), so every vertex of its LP relaxation is integral and an LP solver
returns an exact 0/1 pruning.  This script compiles a small problem (thyroid,
real costs, 3 shallow trees), certifies TU with a verified network-matrix
certificate and, when passagemath-cmr is installed, independently with CMR;
then it adds the hard row "average cost <= budget", shows a verified
counterexample submatrix, and measures fractional LP vertices.

Needs the ``prune_opt.checks`` module; without it the script says so and
exits with status 0.

Run::

    python examples/04_tu_check.py [--trees 3] [--max-depth 3] [--examples 150]
"""

from __future__ import annotations

import argparse
import importlib.util

from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.datasets import load_dataset


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=int, default=3)
    parser.add_argument("--max-depth", type=int, default=3)
    parser.add_argument("--examples", type=int, default=150,
                        help="validation rows compiled into the program")
    args = parser.parse_args(argv)

    if importlib.util.find_spec("prune_opt.checks") is None:
        print("prune_opt.checks is not present in this installation of prune-opt; the "
              "total-unimodularity checks are unavailable, nothing to show.")
        return 0
    from prune_opt.checks import cmr_available, is_totally_unimodular, vertex_integrality

    data = load_dataset("thyroid")
    n = args.examples
    X_train, y_train = data.X[:1500], data.y[:1500]
    X_val, y_val = data.X[1500:1500 + n], data.y[1500:1500 + n]
    rf = RandomForestClassifier(n_estimators=args.trees, max_depth=args.max_depth,
                                random_state=0).fit(X_train, y_train)
    problem = po.compile_problem(rf, X_val, y_val, costs=data.costs, lam=1e-3)
    size = problem.size()
    print(f"{problem!r}: {size['n_variables']} variables, {size['n_rows']} rows, "
          f"{size['nnz']} nonzeros")

    report = is_totally_unimodular(problem, method="network")
    print(f"network method: {report.verdict} ({report.seconds:.2f}s); "
          f"{report.certificate_summary}")
    if cmr_available():
        cmr = is_totally_unimodular(problem, method="cmr", time_limit=30)
        print(f"CMR (Seymour decomposition): {cmr.verdict} ({cmr.seconds:.2f}s)")
    else:
        print("CMR: passagemath-cmr is not installed (optional extra 'tu'); skipped")

    lp = vertex_integrality(problem, random_objectives=5)
    print(f"without a budget: {lp}")

    full_cost = po.acquisition_cost(rf, X_val, data.costs).mean()
    budget = 0.5 * full_cost
    budgeted = po.compile_problem(rf, X_val, y_val, costs=data.costs, lam=0.0, budget=budget)
    b_report = is_totally_unimodular(budgeted)
    print(f"\nwith the row 'average cost <= {budget:.2f}': {b_report.verdict} "
          f"(decided by {b_report.method})")
    ce = b_report.counterexample
    if ce is not None:
        print(f"  verified counterexample: {len(ce['rows'])}x{len(ce['columns'])} submatrix "
              f"with determinant {ce['determinant']}")
    b_lp = vertex_integrality(budgeted, random_objectives=5)
    print(f"  {b_lp}")
    if report.is_tu is not True:
        raise SystemExit("the budget-free pruning matrix was not certified TU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
