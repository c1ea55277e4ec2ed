"""HiGHS through scipy.optimize.linprog."""

from __future__ import annotations

from ._base import Solver, register_solver
from ._lp import lp_result


@register_solver
class HighsSolver(Solver):
    """LP relaxation solved by HiGHS (scipy); integral by total unimodularity.

    Options: ``method`` ("highs", "highs-ds" dual simplex, "highs-ipm"),
    ``presolve`` (bool).
    """

    name = "highs"
    kind = "lp"
    requires = ("scipy.optimize",)
    install_hint = "pip install scipy>=1.11"
    max_nnz = 400_000_000
    options = {"method": "highs-ds", "presolve": True}

    def _solve(self, problem, *, time_limit, verbose):
        from scipy.optimize import linprog

        sf = problem.to_standard_form()
        opts = {"presolve": bool(self.params["presolve"]), "disp": bool(verbose)}
        if time_limit is not None:
            opts["time_limit"] = float(time_limit)
        res = linprog(sf["c"], A_ub=sf["A_ub"], b_ub=sf["b_ub"], A_eq=sf["A_eq"],
                      b_eq=sf["b_eq"], bounds=sf["bounds"], method=self.params["method"],
                      options=opts)
        if res.status == 0:
            return lp_result(problem, res.x, scaled_objective=res.fun, scaled_bound=res.fun,
                             status="optimal", iterations=int(getattr(res, "nit", 0)))
        if res.status == 1:
            return lp_result(problem, None, scaled_objective=None, scaled_bound=None,
                             status="time_limit" if time_limit is not None else "iteration_limit",
                             info={"message": res.message})
        raise RuntimeError(f"HiGHS returned status {res.status}: {res.message}")
