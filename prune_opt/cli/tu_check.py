"""``prune-opt tu-check``: is a pruning LP (or any matrix) totally unimodular?"""

from __future__ import annotations

from ._common import (
    add_data_options,
    add_model_option,
    add_output_argument,
    forest_for,
    load_data,
    model_experiment,
    write_json,
)

EXAMPLES = """examples:
  prune-opt tu-check --dataset digits --trees 3 --examples 200
  prune-opt tu-check --dataset pima --trees 2 --examples 30 --budget 5 --vertices 10
  prune-opt tu-check --matrix A.npz --method cmr --json out.json
"""


def add_parser(sub):
    import argparse

    p = sub.add_parser(
        "tu-check", help="certify total unimodularity of a pruning LP or a matrix",
        description="Check whether the constraint matrix of a BudgetPrune program (fitted on "
        "a small forest) or a matrix read from a file is totally unimodular. Prints the "
        "verdict, the deciding method, its timing and either a certificate summary or a "
        "counterexample submatrix with its exact determinant.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_options(p, dataset_default=None)
    p.add_argument("--matrix", default=None,
                   help="matrix file: .npz (scipy.sparse or numpy with key 'A'), .mtx, .mps "
                        "(instead of --dataset)")
    add_model_option(p)
    p.add_argument("--trees", type=int, default=2, help="forest size (default 2)")
    p.add_argument("--examples", type=int, default=30,
                   help="examples used to grow the forest and, separately, to compile the "
                        "program (default 30)")
    p.add_argument("--max-depth", type=int, default=3, help="tree depth limit (default 3)")
    p.add_argument("--budget", type=float, default=None,
                   help="add the hard row 'average acquisition cost <= BUDGET' (breaks TU)")
    p.add_argument("--lam", type=float, default=0.0,
                   help="cost weight of the objective (only matters for --vertices)")
    p.add_argument("--uniform-costs", action="store_true",
                   help="use cost 1 per feature instead of the dataset's costs")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--method", default="auto",
                   choices=["auto", "network", "cmr", "brute", "ghouila-houri"],
                   help="decision method (default auto)")
    p.add_argument("--time-limit", type=float, default=None, help="seconds for the check")
    p.add_argument("--vertices", type=int, default=None, metavar="K",
                   help="also solve the LP at vertices (HiGHS dual simplex) for the program's "
                        "objective and K random objectives and report fractionality")
    add_output_argument(p, "--json", default=None, metavar="OUT",
                        help="write the report as JSON")
    p.set_defaults(func=run)


def _problem_from_dataset(args):
    import numpy as np

    from .. import FeatureCosts, compile_problem

    for name in ("trees", "examples", "max_depth"):
        v = getattr(args, name)
        if v is None or v < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be a positive integer, got {v}")
    if args.uniform_costs and args.costs:
        raise ValueError("--uniform-costs and --costs contradict each other; give one")
    data = load_data(args)
    ds, regression = data["dataset"], data["task"] == "regression"
    n = ds.X.shape[0]
    if 2 * args.examples > n:
        raise ValueError(f"--examples {args.examples}: dataset {ds.name} has {n} rows, at most "
                         f"{n // 2} can be used (half grow the forest, half compile it)")
    rng = np.random.default_rng(args.seed)
    idx = rng.permutation(n)
    fit = idx[: args.examples]
    costs = (FeatureCosts.uniform(ds.X.shape[1], feature_names=ds.feature_names)
             if args.uniform_costs else data["costs"])
    budget = '' if args.budget is None else f', budget row avg cost <= {args.budget:g}'
    if args.model:  # the user's model, compiled on --examples rows of the dataset (its
        # classes named from every label of the dataset, which a sample may lack)
        comp = idx[: args.examples]
        exp = model_experiment(args, dict(dataset=ds, costs=costs, X_train=ds.X[comp],
                                          y_train=ds.y[comp], X_val=ds.X[comp],
                                          y_val=ds.y[comp], X_test=ds.X[comp],
                                          y_test=ds.y[comp], task=data["task"],
                                          labels=ds.y if ds.y_test is None else
                                          np.concatenate([ds.y, ds.y_test])))
        problem = compile_problem(exp["forest"], exp["X_val"], exp["y_val"],
                                  costs=exp["costs"], lam=args.lam, budget=args.budget)
        note = f"\n{exp['class_note']}" if exp.get("class_note") else ""
        return problem, (f"dataset {ds.name}: the {exp['forest'].task} model of {args.model} "
                         f"({exp['forest'].n_trees} trees), program compiled on "
                         f"{args.examples} examples{budget}{note}")
    rf = forest_for(data["task"], args).fit(ds.X[fit], ds.y[fit])
    rest = idx[args.examples:]
    if not regression:
        rest = rest[np.isin(ds.y[rest], rf.classes_)]  # labels the forest knows
    comp = rest[: args.examples]
    problem = compile_problem(rf, ds.X[comp], ds.y[comp], costs=costs, lam=args.lam,
                              budget=args.budget)
    desc = (f"dataset {ds.name} ({data['task']}): {args.trees} trees of depth <= {args.max_depth} grown on "
            f"{args.examples} examples, program compiled on {args.examples} others{budget}")
    return problem, desc


def run(args):
    import numpy as np

    from ..checks import (
        is_totally_unimodular,
        load_matrix,
        scale_rows_to_integers,
        vertex_integrality,
    )

    if args.time_limit is not None and not args.time_limit > 0:
        raise ValueError(f"--time-limit must be positive, got {args.time_limit}")
    out, notes = {}, []
    if args.matrix and args.dataset:
        raise ValueError("--dataset and --matrix both given; check one pruning program "
                         "(--dataset) or one matrix file (--matrix)")
    if args.matrix:
        if any(getattr(args, k) is not None for k in ("target", "costs")):
            raise ValueError("--target and --costs need --dataset (a pruning program)")
        if args.budget is not None or args.vertices is not None:
            raise ValueError("--budget and --vertices need --dataset (a pruning program)")
        A = load_matrix(args.matrix)
        if A.nnz and (A.data != np.round(A.data)).any():
            A, factors = scale_rows_to_integers(A)
            notes.append(f"{len(factors)} row(s) with fractional entries scaled to primitive "
                         "integers")
        target, desc = A, f"matrix {args.matrix}"
    elif args.dataset:
        target, desc = _problem_from_dataset(args)
        out["problem"] = target.size()
    else:
        raise ValueError("pass --dataset NAME (a small pruning program) or --matrix FILE")
    print(desc)
    report = is_totally_unimodular(target, method=args.method, time_limit=args.time_limit)
    report.notes[:0] = notes
    print(report)
    out.update(source=desc, report=report.to_dict())
    if args.vertices is not None:
        if args.vertices < 0:
            raise ValueError(f"--vertices must be >= 0, got {args.vertices}")
        vi = vertex_integrality(target, random_objectives=args.vertices, seed=args.seed)
        print(f"LP vertices: {vi}")
        if vi.fractional_variables:
            sl = target.variable_slices()
            shown = ", ".join(f"{_var_name(i, sl)}={v:.4g}" for i, v in
                              vi.fractional_variables[:6])
            print(f"  fractional values: {shown}")
        out["vertex_integrality"] = vi.to_dict()
    if args.json:
        write_json(args.json, out)
        print(f"wrote {args.json}")
    return 0


def _var_name(i, slices):
    for name, s in slices.items():
        if s.start <= i < s.stop:
            return f"{name}[{i - s.start}]"
    return f"x[{i}]"
