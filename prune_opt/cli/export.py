"""``prune-opt export``: write the BudgetPrune program as MPS or LP text."""

from __future__ import annotations


def add_parser(sub):
    from ._common import add_data_arguments, add_output_argument

    p = sub.add_parser(
        "export", help="write the pruning program as MPS/LP for external solvers",
        description="Compile the BudgetPrune program of a forest fitted on a dataset and "
        "write it as MPS or LP text (OR-Tools writers) so Gurobi, CPLEX, SCIP, HiGHS or CBC "
        "can solve it. Variables: z<h> (node h is a pruned leaf), wt<k> (first-use record "
        "k pays), w<p> (cost pair p is paid); the objective is scaled by problem.scale.")
    add_data_arguments(p, trees=40, model=True)
    p.add_argument("--lam", type=float, required=True, help="trade-off weight")
    p.add_argument("--budget", type=float, default=None,
                   help="add the hard row 'average acquisition cost <= BUDGET'")
    p.add_argument("--format", choices=("mps", "lp"), default=None,
                   help="output format (default: from the --out suffix)")
    p.add_argument("--integer", action="store_true", help="mark every variable binary")
    add_output_argument(p, "--out", required=True, help="output file")
    p.set_defaults(func=run)


def run(args):
    from .. import compile_problem
    from ..program._files import write_program
    from ._common import error_data, naming_errors, setup_experiment, task_line

    if args.format is None and not args.out.lower().endswith((".mps", ".lp")):
        raise ValueError(f"--out={args.out!r}: cannot tell the format from the suffix; pass "
                         "--format mps|lp or name the file *.mps / *.lp")
    exp = setup_experiment(args)
    print(task_line(exp))
    problem = compile_problem(exp["forest"], exp["X_val"], exp["y_val"], costs=exp["costs"],
                              lam=args.lam, train=error_data(exp),
                              budget=args.budget)
    with naming_errors(args.out):
        info = write_program(problem, args.out, args.format, integer=args.integer)
    kind = "binary program" if args.integer else "LP relaxation"
    print(f"wrote {info['path']} ({info['format'].upper()}, {kind}): "
          f"{info['n_variables']:,} variables, {info['n_rows']:,} rows, {info['nnz']:,} "
          f"nonzeros; objective = {info['scale']:g} x natural objective")
    return 0
