"""``prune-opt compare``: solve one compiled problem with several backends side by side.

Every solve runs in a child process forked from the command (so the compiled
problem is shared, not copied or pickled) and its peak memory is measured
there: the child resets the kernel's resident-set high-water mark
(``/proc/self/clear_refs``) before solving, and reports ``VmHWM - VmRSS at
start`` afterwards, i.e. the extra resident memory the solve needed,
including what C/C++ solver libraries allocate.  Where fork or ``/proc`` is
unavailable, the solve runs in-process and the figure is the ``tracemalloc``
peak (Python and numpy allocations only) and is labelled so.
"""

from __future__ import annotations

import os
import signal
import time
import traceback
import tracemalloc

from ._common import (
    add_data_arguments,
    add_output_argument,
    error_data,
    format_table,
    score_metrics,
    task_line,
    write_json,
)
from ._memory import proc_status_kb, reset_peak_rss

COLUMNS = ["solver", "objective", "gap_to_best", "seconds", "peak_mb", "max_frac", "status",
           "test_accuracy", "test_cost"]
#: regression forests report R^2 and MSE instead of accuracy
REGRESSION_COLUMNS = [c for c in COLUMNS if c != "test_accuracy"] + ["test_r2", "test_mse"]


def add_parser(sub):
    p = sub.add_parser(
        "compare", help="solve one problem with several backends and compare them",
        description="Fit a random forest, compile the BudgetPrune program once, solve it "
        "with each backend (each in its own child process), and print objective, gap to the "
        "best, seconds, peak extra memory, integrality, status, test accuracy (regression: "
        "R^2 and MSE) and test cost.")
    add_data_arguments(p, trees=40, model=True)
    p.add_argument("--lam", type=float, default=1e-3, help="cost weight lambda (default 1e-3)")
    p.add_argument("--depth-cost", type=float, default=0.0,
                   help="weight of the average path length inside the lambda term")
    p.add_argument("--solvers", default=None,
                   help="comma-separated backends, or 'all'. Default: the backends that "
                        "answer in seconds (installed, not matrix-based, not a "
                        "small-problem reference: min-cut, primal-dual, the budget MIP). The "
                        "matrix LP backends (HiGHS, GLOP, PDLP, CBC) take minutes on a "
                        "program of a million nonzeros: 'all' adds them, or name them")
    p.add_argument("--examples", type=int, default=None,
                   help="subsample the validation (cost) rows to N examples")
    p.add_argument("--time-limit", type=float, default=None, help="seconds per solve")
    add_output_argument(p, "--json", default=None, metavar="OUT",
                        help="write the table as JSON")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run)


def fast_solvers():
    """The default backends: installed, not matrix-based, not a slow reference.

    Examples
    --------
    >>> from prune_opt.cli.compare import fast_solvers
    >>> "mincut" in fast_solvers(), "cbc" in fast_solvers()
    (True, False)
    """
    from ..solvers import find_solvers

    return find_solvers(reference_only=False, matrix_based=False)


def parse_solvers(spec):
    """Validate a comma-separated solver list against the registry.

    ``None`` is :func:`fast_solvers`; ``"all"`` every installed backend but the
    small-problem references (which run only by name).  Returns the list of
    names; raises ValueError naming unknown or uninstalled ones and listing the
    installed solvers.
    """
    from ..solvers import available_solvers, default_solvers, list_solvers

    installed = available_solvers()
    if spec is None:
        return fast_solvers()
    if spec.strip().lower() == "all":
        return default_solvers()
    names = [s.strip().lower() for s in spec.split(",") if s.strip()]
    if not names:
        raise ValueError(f"--solvers is empty; installed solvers: {', '.join(installed)}")
    known = list_solvers()
    bad = [s for s in names if s not in known or not known[s]["installed"]]
    if bad:
        raise ValueError(f"--solvers: unknown or not installed: {', '.join(bad)}; installed "
                         f"solvers: {', '.join(installed)}")
    return list(dict.fromkeys(names))


def skipped_line(solvers):
    """The line saying which installed backends the default leaves out, and how to add them."""
    from ..solvers import default_solvers

    left = [s for s in default_solvers() if s not in solvers]
    if not left:
        return None
    return (f"not run: {', '.join(left)} (matrix LP backends: minutes on large programs); "
            "add them with --solvers all or by name")


#: a solution whose largest distance to an integer exceeds this is a fractional LP optimum
FRACTIONAL = 1e-6


def mark_fractional(row):
    """An LP answer that is not integral is a fractional optimum, not a pruning: say so.

    The status becomes ``fractional`` (the solver's own in ``solver_status``)
    and ``note`` explains what the row's figures are.
    """
    if row.get("status") == "error" or row.get("max_frac", 0.0) <= FRACTIONAL:
        return row
    row["solver_status"] = row["status"]
    row["status"] = "fractional"
    row["note"] = (f"{row['solver']}: the LP optimum it returned is fractional (max_frac "
                   f"{row['max_frac']:.2g}), not a pruning; the objective, accuracy and cost "
                   "shown are of its rounding, and its bound is the LP value")
    return row


def _solve_and_report(problem, solver, *, time_limit, solver_options, test, method):
    """Solve and summarise (runs in the child); returns a JSON-able dict."""
    from .. import solve

    rss0 = proc_status_kb("VmRSS")
    reset = method == "fork" and reset_peak_rss()
    if not reset:
        tracemalloc.start()
    t0 = time.perf_counter()
    pruned = solve(problem, solver=solver, time_limit=time_limit,
                   solver_options=solver_options)
    wall = time.perf_counter() - t0
    if reset:
        peak_mb = max(proc_status_kb("VmHWM") - rss0, 0) / 1024.0
        total_mb = proc_status_kb("VmHWM") / 1024.0
        how = "rss-hwm"
    else:
        peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        total_mb = None
        how = "tracemalloc"
    info = pruned.solve_info
    row = {"solver": solver, "objective": float(pruned.objective),
           "bound": float(info["bound"]), "seconds": float(info["seconds"]),
           "wall_seconds": wall, "peak_mb": peak_mb, "peak_total_mb": total_mb,
           "memory_method": how, "max_frac": float(info["max_fractionality"]),
           "status": info["status"], "n_splits": int(pruned.n_splits)}
    if test is not None:
        X_te, y_te = test
        row.update(score_metrics(pruned, X_te, y_te, pruned.forest.task))
        row["test_cost"] = float(pruned.average_cost(X_te))
    return row


def _child(conn, problem, solver, kwargs):
    # Ctrl-C reaches the whole process group: the parent handles it and stops
    # this child, which must not print a traceback of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        conn.send(("ok", _solve_and_report(problem, solver, **kwargs)))
    except BaseException as exc:  # reported to the parent, which prints one line
        conn.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
    finally:
        conn.close()


def measure_solve(problem, solver, *, time_limit=None, solver_options=None, test=None,
                  isolate=True):
    """Solve ``problem`` with ``solver`` and measure seconds and peak extra memory.

    Parameters
    ----------
    problem : PruningProblem
    solver : str
    time_limit : float, optional
    solver_options : dict, optional
    test : tuple (X_test, y_test), optional
        Adds ``test_accuracy`` (regression: ``test_r2`` and ``test_mse``) and
        ``test_cost`` (average acquisition cost).
    isolate : bool
        Solve in a forked child process (peak RSS increase from
        ``/proc/self/status``); otherwise in-process with ``tracemalloc``.

    Returns
    -------
    dict
        ``solver, objective, bound, seconds, peak_mb, memory_method, max_frac,
        status, n_splits`` (+ test figures), or ``solver, status="error",
        error`` when the backend failed or the child died.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> row = measure_solve(po.compile_problem(rf, X, y, lam=0.01), "mincut")
    >>> row["status"]
    'optimal'
    """
    import multiprocessing as mp

    kwargs = dict(time_limit=time_limit, solver_options=solver_options, test=test)
    can_fork = isolate and hasattr(os, "fork") and "fork" in mp.get_all_start_methods() \
        and proc_status_kb("VmRSS") is not None
    if not can_fork:
        try:
            return _solve_and_report(problem, solver, method="inprocess", **kwargs)
        except Exception as exc:
            return {"solver": solver, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, problem, solver, dict(kwargs, method="fork")))
    proc.start()
    child.close()
    try:
        msg = parent.recv()
    except EOFError:
        msg = None
    except BaseException:  # Ctrl-C while waiting: stop the child, do not orphan it
        _stop(proc)
        raise
    proc.join()
    if msg is None:
        code = proc.exitcode
        why = "killed by the kernel (out of memory?)" if code == -9 else f"exit code {code}"
        return {"solver": solver, "status": "error", "error": f"solver process died: {why}"}
    if msg[0] == "error":
        return {"solver": solver, "status": "error", "error": msg[1]}
    return msg[1]


def _stop(proc):
    proc.terminate()
    proc.join(2.0)  # a grace period before the kill
    if proc.is_alive():
        proc.kill()
        proc.join()


def add_gaps(rows):
    """Add ``gap_to_best`` (relative to the best objective among successful rows)."""
    objs = [r["objective"] for r in rows if r.get("status") != "error"]
    best = min(objs) if objs else None
    for r in rows:
        if best is not None and r.get("status") != "error":
            r["gap_to_best"] = (r["objective"] - best) / max(abs(best), 1e-12)
    return best


def run(args):
    import numpy as np
    from tqdm import tqdm

    from .. import as_forest, compile_problem

    solvers = parse_solvers(args.solvers)
    if args.examples is not None and args.examples < 1:
        raise ValueError(f"--examples must be a positive integer, got {args.examples}")
    if args.lam < 0:
        raise ValueError(f"--lam must be non-negative, got {args.lam}")
    from ._common import setup_experiment

    exp = setup_experiment(args)
    print(task_line(exp))
    X_val, y_val = exp["X_val"], exp["y_val"]
    if args.examples is not None and args.examples < len(y_val):
        pick = np.random.default_rng(args.seed).choice(len(y_val), args.examples, replace=False)
        X_val, y_val = X_val[np.sort(pick)], y_val[np.sort(pick)]
    from ..program._compile_steps import memory_report

    print(memory_report(exp["forest"], X_val, exp["costs"]))  # before compiling
    t0 = time.perf_counter()
    problem = compile_problem(exp["forest"], X_val, y_val, costs=exp["costs"], lam=args.lam,
                              depth_cost=args.depth_cost, train=error_data(exp))
    compile_seconds = time.perf_counter() - t0
    size = problem.size()
    n_trees = as_forest(exp["forest"]).n_trees  # a --model file's own, not --trees
    print(f"dataset {exp['dataset'].name}: {n_trees} trees, {len(y_val)} validation "
          f"examples; compiled in {compile_seconds:.2f}s: {size['n_nodes']:,} nodes, "
          f"{size['n_uses']:,} first-use records, {size['n_pairs']:,} pairs, LP "
          f"{size['n_variables']:,} variables x {size['n_rows']:,} rows, {size['nnz']:,} nnz")
    rows = []
    test = (exp["X_test"], exp["y_test"])
    print(f"backends: {', '.join(solvers)}")
    skipped = skipped_line(solvers)
    if skipped:
        print(skipped)
    bar = tqdm(solvers, unit="solver", disable=args.no_progress)
    for name in bar:
        # no redrawing thread here: the solve forks, and a fork while that thread holds
        # stderr's lock would leave the child unable to write to stderr
        bar.set_description(f"solving with {name}")
        rows.append(mark_fractional(
            measure_solve(problem, name, time_limit=args.time_limit, test=test)))
    bar.close()
    best = add_gaps(rows)
    print(format_table(rows, REGRESSION_COLUMNS if exp["task"] == "regression" else COLUMNS))
    for r in rows:
        if r.get("status") == "error":
            print(f"{r['solver']}: {r['error']}")
        elif r.get("note"):
            print(r["note"])
    method = next((r["memory_method"] for r in rows if "memory_method" in r), None)
    print("peak_mb: extra resident memory of the solve (VmHWM - VmRSS in a forked child)"
          if method == "rss-hwm" else "peak_mb: tracemalloc peak (Python/numpy only)")
    if args.json:
        write_json(args.json, {"dataset": exp["dataset"].name, "task": exp["task"],
                               "trees": n_trees, "lam": args.lam, "depth_cost": args.depth_cost,
                               "n_validation": int(len(y_val)), "problem_size": size,
                               "compile_seconds": compile_seconds, "best_objective": best,
                               "not_run": skipped,
                               "memory_method": method, "rows": rows})
        print(f"wrote {args.json}")
    return 0 if any(r.get("status") != "error" for r in rows) else 1
