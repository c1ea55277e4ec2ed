"""CBC: the LP relaxation ("cbc") and the binary program ("cbc-ip").

"cbc" writes the LP as MPS in bulk (OR-Tools model_builder) and runs the CBC
binary that PuLP provides (``pulp[cbc]``), so it scales like the other LP
backends.  "cbc-ip" builds the binary program through PuLP's own modelling API
- an independent model-building path, which is what a verification backend
should have - and is therefore meant for small problems.  It runs in a child
process (PuLP's model build and CBC both), which is killed at the time limit.
"""

from __future__ import annotations

import os
import subprocess
import tempfile

import numpy as np

from ._base import STOPPED, Solver
from ._lp import lp_result
from ._registry import register_solver
from ._subprocess import run_killable

# seconds "cbc-ip" gives CBC after the time limit to hand back its incumbent
CBC_GRACE_SECONDS = 2.0


def cbc_command(pulp, **kwargs):
    """A PuLP CBC command: the cbcbox binary (``pulp[cbc]``) when present, else the
    binary bundled with older PuLP releases."""
    try:
        import cbcbox

        cmd = pulp.COIN_CMD(path=cbcbox.cbc_bin_path(), **kwargs)
        if cmd.available():
            return cmd
    except ImportError:
        pass
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pulp.PULP_CBC_CMD(**kwargs)


class _PulpCbc(Solver):
    requires = ("pulp",)
    install_hint = "pip install 'pulp[cbc]'"
    options = {"threads": 1}
    exact = True
    matrix_based = True
    supports_budget_row = True

    @classmethod
    def install_status(cls):
        installed, reason = super().install_status()
        if not installed:
            return installed, reason
        import pulp

        if not cbc_command(pulp).available():
            return False, "PuLP found no CBC binary"
        return True, ""


@register_solver
class CbcLpSolver(_PulpCbc):
    """LP relaxation solved by CBC's simplex (MPS written in bulk, PuLP's CBC binary).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    >>> po.solve(po.compile_problem(tree, X, y, lam=0.01), solver="cbc").solve_info["status"]
    'optimal'
    """

    name = "cbc"
    kind = "lp"
    requires = ("pulp", "ortools.linear_solver.python.model_builder")
    mip = False
    reference_only = False
    auto_rank = 3
    # first words of the header of CBC's solution file
    STATUS_MAP = {"Optimal": "optimal", "Stopped on time": "time_limit",
                  "Stopped on iterations": "iteration_limit", "Stopped on ctrl-c": STOPPED,
                  "Stopped on difficulties": "error", "Infeasible": "infeasible",
                  "Integer infeasible": "infeasible", "Unbounded": "unbounded"}

    def _solve(self, problem, *, deadline, verbose):
        import pulp

        from ..program._files import program_text

        n = problem.n_nodes + problem.n_uses + problem.n_pairs
        with tempfile.TemporaryDirectory(prefix="prune-opt-cbc-") as tmp:
            mps, sol = os.path.join(tmp, "model.mps"), os.path.join(tmp, "solution.txt")
            with open(mps, "w") as fh:  # full precision (OR-Tools' writer keeps 6 digits)
                fh.write(program_text(problem, "mps"))
            args = [cbc_command(pulp).path, mps]
            time_limit = deadline.seconds()
            if time_limit is not None:
                args += ["-sec", str(time_limit)]
            args += ["-threads", str(int(self.params["threads"])), "-initialSolve",
                     "-solu", sol]
            try:
                # CBC's own -sec does not stop its initial LP solve, so the clock is ours
                run = subprocess.run(args, capture_output=True, text=True, timeout=time_limit)
            except subprocess.TimeoutExpired:
                return lp_result(problem, None, status="time_limit",
                                 message="CBC stopped at the time limit")
            if verbose:
                print(run.stdout)
            if not os.path.exists(sol):
                raise RuntimeError(f"CBC wrote no solution (exit {run.returncode}): "
                                   f"{run.stdout[-300:]}")
            header, x = _read_cbc_solution(sol, n)
        native = header.split(" - ")[0].strip()
        status = self.map_status(native, time_limited=not deadline.unlimited, message=header)
        # the LP value of the returned point at full precision: CBC prints its objective
        # with 8 significant digits, too few for non-integral (regression) error terms
        optimal = status == "optimal"
        return lp_result(problem, x if optimal else None, status=status, message=header,
                         objective=float(problem.objective_vector() @ x) if optimal else None)


def _read_cbc_solution(path, n):
    """Header line and dense point of a CBC ``-solu`` file."""
    with open(path) as fh:
        header = fh.readline().strip()
        x = np.zeros(n)
        for line in fh:
            parts = line.split()
            if len(parts) >= 3:
                x[int(parts[0])] = float(parts[2])
    return header, x


def build_pulp_model(sf):
    """The binary program as a PuLP model, row by row through PuLP's modelling API."""
    import pulp

    model = pulp.LpProblem("budgetprune", pulp.LpMinimize)
    xs = [model.add_variable(f"x{j}", 0, 1, cat=pulp.LpBinary) for j in range(sf["c"].size)]
    nz = np.flatnonzero(sf["c"])
    model += pulp.LpAffineExpression([(xs[j], float(sf["c"][j])) for j in nz])
    for A, b, sense in ((sf["A_eq"], sf["b_eq"], pulp.LpConstraintEQ),
                        (sf["A_ub"], sf["b_ub"], pulp.LpConstraintLE)):
        ptr, idx, val = A.indptr, A.indices.tolist(), A.data.tolist()
        for r in range(A.shape[0]):
            expr = pulp.LpAffineExpression(
                [(xs[j], v) for j, v in zip(idx[ptr[r]:ptr[r + 1]], val[ptr[r]:ptr[r + 1]])])
            model.addConstraint(pulp.LpConstraint(expr, sense, rhs=float(b[r])))
    return model, xs


def solve_pulp_cbc(sf, *, time_limit, threads, verbose):
    """Build the PuLP model and run CBC (meant for a child process).

    Returns ``(solution status name, point or None)``; the point is None
    when CBC found none or the time limit was used up by the build.
    """
    import time

    import pulp

    start = time.perf_counter()
    model, xs = build_pulp_model(sf)
    left = None if time_limit is None else time_limit - (time.perf_counter() - start)
    if left is not None and left <= 0:
        return pulp.LpSolution[pulp.LpSolutionNoSolutionFound], None
    model.solve(cbc_command(pulp, msg=bool(verbose), timeLimit=left, threads=threads))
    values = np.array([np.nan if v.varValue is None else v.varValue for v in xs])
    point = None if np.isnan(values).any() else values
    return pulp.LpSolution[model.sol_status], point


@register_solver
class CbcIpSolver(_PulpCbc):
    """Binary program solved by CBC branch-and-cut: an independent exact check.

    The PuLP build and CBC run in a child process.  With ``time_limit`` the
    child gets the limit plus ``CBC_GRACE_SECONDS`` to return CBC's incumbent;
    then it is killed and the best trivial pruning within the budget is
    returned with status ``"time_limit"``.  Without a limit, problems above
    ``max_nnz_without_limit`` nonzeros are refused up front (PuLP's build and
    CBC's branch-and-cut take minutes there).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    >>> p = po.compile_problem(tree, X, y, lam=0.01)
    >>> abs(po.solve(p, solver="cbc-ip").objective - po.solve(p).objective) < 1e-9
    True
    """

    name = "cbc-ip"
    kind = "ip"
    max_nnz = 3_000_000
    # measured: 25,620 nonzeros took 13 s end to end, 125,283 took 45-110 s
    max_nnz_without_limit = 50_000
    mip = True
    reference_only = True
    auto_rank = None
    # PuLP's solution statuses (pulp.LpSolution)
    STATUS_MAP = {"Optimal Solution Found": "optimal", "Solution Found": STOPPED,
                  "No Solution Found": STOPPED, "No Solution Exists": "infeasible",
                  "Solution is Unbounded": "unbounded"}

    def check_unlimited_size(self, problem, deadline):
        """Refuse, without a time limit, a program too large for the PuLP path."""
        size = problem.size()
        if deadline.unlimited and size["nnz"] > self.max_nnz_without_limit:
            instead = ("solver='highs' (an LP bound and a budget-feasible pruning)"
                       if problem.budget is not None else
                       "solver='highs' or 'mincut' (exact on this program)")
            raise ValueError(
                f"solver='cbc-ip' builds the binary program through PuLP and solves it by "
                f"branch and cut, a reference for small problems; this one has "
                f"{size['n_variables']:,} variables, {size['n_rows']:,} rows and "
                f"{size['nnz']:,} nonzeros, above its limit of "
                f"{self.max_nnz_without_limit:,} nonzeros without a time limit (it would "
                f"run for minutes); use {instead}, or pass time_limit= to get the best "
                "pruning cbc-ip finds within it")

    def _solve(self, problem, *, deadline, verbose):
        self.check_unlimited_size(problem, deadline)
        sf = problem.to_standard_form()
        time_limit = deadline.seconds()  # the child process is handed what is left
        wait = None if time_limit is None else time_limit + CBC_GRACE_SECONDS
        done, out = run_killable(solve_pulp_cbc, (sf,),
                                 dict(time_limit=time_limit, threads=int(self.params["threads"]),
                                      verbose=verbose), timeout=wait)
        if not done:
            return lp_result(problem, None, status="time_limit",
                             message=f"CBC killed {wait:g}s after the start")
        native, x = out
        status = self.map_status(native, time_limited=not deadline.unlimited)
        if status == "optimal" and x is None:
            raise RuntimeError("CBC reported optimal but returned no point")
        return lp_result(problem, x, status=status,
                         objective=None if x is None else float(sf["c"] @ x))
