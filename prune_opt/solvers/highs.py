"""HiGHS through scipy.optimize.linprog."""

from __future__ import annotations

import re

from ._base import STOPPED, Solver
from ._lp import lp_result
from ._registry import register_solver

# scipy reports HiGHS's model status in its message ("... (HiGHS Status 7: ...)")
_HIGHS_CODE = re.compile(r"HiGHS Status (\d+)")
# scipy's own status, for a message without the HiGHS code: as HiGHS model statuses
_SCIPY_TO_HIGHS = {0: 7, 1: 15, 2: 8, 3: 10, 4: 4}


@register_solver
class HighsSolver(Solver):
    """LP relaxation solved by HiGHS (scipy); integral by total unimodularity.

    Options: ``method`` ("highs", "highs-ds" dual simplex, "highs-ipm"),
    ``presolve`` (bool).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    >>> po.solve(po.compile_problem(tree, X, y, lam=0.01), solver="highs").solve_info["status"]
    'optimal'
    """

    name = "highs"
    kind = "lp"
    requires = ("scipy.optimize",)
    install_hint = "pip install scipy>=1.11"
    max_nnz = 400_000_000
    #: HiGHS's default feasibility tolerances (1e-7) let the simplex stop at a vertex
    #: whose objective is up to ~1e-9 (relative) above the optimum on real-valued node
    #: terms (a boosted model's); its tightest, 1e-10, keeps the exact backends within
    #: 1e-9 of each other
    options = {"method": "highs-ds", "presolve": True, "dual_feasibility_tolerance": 1e-10,
               "primal_feasibility_tolerance": 1e-10}
    exact = True
    mip = False
    matrix_based = True
    reference_only = False
    supports_budget_row = True
    auto_rank = 1
    # HiGHS model statuses (HighsModelStatus)
    STATUS_MAP = {7: "optimal", 6: "optimal", 13: "time_limit", 14: "iteration_limit",
                  15: STOPPED, 17: STOPPED, 8: "infeasible", 9: "infeasible",
                  10: "unbounded", 0: "error", 1: "error", 2: "error", 3: "error",
                  4: "error", 5: "error", 11: "error", 12: "error", 16: "error"}

    def _solve(self, problem, *, deadline, verbose):
        from scipy.optimize import linprog

        sf = problem.to_standard_form()
        opts = {"presolve": bool(self.params["presolve"]), "disp": bool(verbose),
                "dual_feasibility_tolerance": float(self.params["dual_feasibility_tolerance"]),
                "primal_feasibility_tolerance":
                    float(self.params["primal_feasibility_tolerance"])}
        if not deadline.unlimited:
            opts["time_limit"] = deadline.seconds()
        res = linprog(sf["c"], A_ub=sf["A_ub"], b_ub=sf["b_ub"], A_eq=sf["A_eq"],
                      b_eq=sf["b_eq"], bounds=sf["bounds"], method=self.params["method"],
                      options=opts)
        code = _HIGHS_CODE.search(res.message or "")
        native = int(code.group(1)) if code else _SCIPY_TO_HIGHS.get(res.status, 0)
        status = self.map_status(native, time_limited=not deadline.unlimited,
                                 message=res.message)
        return lp_result(problem, res.x if status == "optimal" else None, status=status,
                         objective=res.fun, iterations=int(getattr(res, "nit", 0) or 0),
                         message=res.message)
