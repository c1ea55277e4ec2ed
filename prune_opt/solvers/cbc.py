"""CBC: the LP relaxation ("cbc") and the binary program ("cbc-ip").

"cbc" writes the LP as MPS in bulk (OR-Tools model_builder) and runs the CBC
binary that PuLP provides (``pulp[cbc]``), so it scales like the other LP
backends.  "cbc-ip" builds the binary program through PuLP's own modelling API
- an independent model-building path, which is what a verification backend
should have - and is therefore meant for small problems.
"""

from __future__ import annotations

import numpy as np

from ._base import Solver, register_solver
from ._lp import lp_result


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


def _affine(pulp, variables, row):
    return pulp.LpAffineExpression(
        [(variables[j], float(v)) for j, v in zip(row.indices, row.data)])


class _PulpCbc(Solver):
    kind = "lp"
    requires = ("pulp",)
    install_hint = "pip install 'pulp[cbc]'"
    max_nnz = 3_000_000
    integral = False
    options = {"threads": 1}

    @classmethod
    def is_installed(cls):
        if not super().is_installed():
            return False
        import pulp

        return bool(cbc_command(pulp).available())

    def _solve(self, problem, *, time_limit, verbose):
        import pulp

        sf = problem.to_standard_form()
        n = sf["c"].size
        cat = pulp.LpBinary if self.integral else pulp.LpContinuous
        model = pulp.LpProblem("budgetprune", pulp.LpMinimize)
        xs = [model.add_variable(f"x{j}", 0, 1, cat=cat) for j in range(n)]
        nz = np.flatnonzero(sf["c"])
        model += pulp.LpAffineExpression([(xs[j], float(sf["c"][j])) for j in nz])
        A_eq, A_ub = sf["A_eq"], sf["A_ub"]
        for r in range(A_eq.shape[0]):
            model += _affine(pulp, xs, A_eq.getrow(r)) == float(sf["b_eq"][r])
        for r in range(A_ub.shape[0]):
            model += _affine(pulp, xs, A_ub.getrow(r)) <= float(sf["b_ub"][r])
        cmd = cbc_command(pulp, msg=bool(verbose), timeLimit=time_limit,
                          threads=int(self.params["threads"]))
        model.solve(cmd)
        status = pulp.LpStatus[model.status]
        values = np.array([v.varValue if v.varValue is not None else np.nan for v in xs])
        has_point = not np.isnan(values).any()
        obj = pulp.value(model.objective)
        obj = 0.0 if obj is None else float(obj)
        if status == "Optimal" and model.sol_status == pulp.LpSolutionOptimal:
            return lp_result(problem, values, scaled_objective=obj, scaled_bound=obj,
                             status="optimal")
        if time_limit is not None and status in ("Not Solved", "Optimal", "Undefined"):
            return lp_result(problem, values if has_point else None,
                             scaled_objective=obj if has_point else None, scaled_bound=None,
                             status="time_limit")
        raise RuntimeError(f"CBC returned status {status!r}")


@register_solver
class CbcLpSolver(_PulpCbc):
    """LP relaxation solved by CBC's simplex (MPS written in bulk, PuLP's CBC binary)."""

    name = "cbc"
    max_nnz = None
    requires = ("pulp", "ortools.linear_solver.python.model_builder")

    def _solve(self, problem, *, time_limit, verbose):
        import os
        import re
        import subprocess
        import tempfile

        import pulp

        from .ortools_lp import build_model

        model = build_model(problem)
        n = problem.n_nodes + problem.n_uses + problem.n_pairs
        binary = cbc_command(pulp).path
        with tempfile.TemporaryDirectory(prefix="prune-opt-cbc-") as tmp:
            mps = os.path.join(tmp, "model.mps")
            sol = os.path.join(tmp, "solution.txt")
            model.helper.write_to_mps_file(mps)
            args = [binary, mps]
            if time_limit is not None:
                args += ["-sec", str(float(time_limit))]
            args += ["-threads", str(int(self.params["threads"])), "-initialSolve",
                     "-solu", sol]
            try:
                # CBC's own -sec does not stop its initial LP solve, so the clock is ours
                run = subprocess.run(args, capture_output=True, text=True, timeout=time_limit)
            except subprocess.TimeoutExpired:
                return lp_result(problem, None, scaled_objective=None, scaled_bound=None,
                                 status="time_limit",
                                 info={"message": "CBC stopped at the time limit"})
            if verbose:
                print(run.stdout)
            if not os.path.exists(sol):
                raise RuntimeError(f"CBC wrote no solution (exit {run.returncode}): "
                                   f"{run.stdout[-300:]}")
            with open(sol) as fh:
                header = fh.readline().strip()
                x = np.zeros(n)
                for line in fh:
                    parts = line.split()
                    if len(parts) >= 3:
                        x[int(parts[0])] = float(parts[2])
        match = re.search(r"objective value\s+(\S+)", header)
        obj = float(match.group(1)) if match else float("nan")
        if header.startswith("Optimal"):
            return lp_result(problem, x, scaled_objective=obj, scaled_bound=obj,
                             status="optimal")
        if time_limit is not None and header.startswith("Stopped"):
            return lp_result(problem, None, scaled_objective=None, scaled_bound=None,
                             status="time_limit", info={"message": header})
        raise RuntimeError(f"CBC: {header}")


@register_solver
class CbcIpSolver(_PulpCbc):
    """Binary program solved by CBC branch-and-cut: an independent exact check."""

    name = "cbc-ip"
    kind = "ip"
    integral = True
