"""OR-Tools linear solvers (GLOP simplex, PDLP first-order) via model_builder.

The model is filled in bulk from scipy.sparse arrays
(``ModelBuilderHelper.fill_model_from_sparse_data``), never element by element.
"""

from __future__ import annotations

from ._base import STOPPED, Solver
from ._lp import lp_result
from ._registry import register_solver


class _OrToolsLP(Solver):
    kind = "lp"
    requires = ("ortools.linear_solver.python.model_builder",)
    install_hint = "pip install ortools"
    backend = ""
    options = {}
    mip = False
    matrix_based = True
    reference_only = False
    supports_budget_row = True
    # model_builder.SolveStatus names; FEASIBLE / NOT_SOLVED / ABNORMAL come back when
    # a limit stops the solve
    STATUS_MAP = {"OPTIMAL": "optimal", "FEASIBLE": STOPPED, "NOT_SOLVED": STOPPED,
                  "ABNORMAL": STOPPED, "CANCELLED_BY_USER": STOPPED,
                  "INFEASIBLE": "infeasible", "UNBOUNDED": "unbounded",
                  "MODEL_IS_VALID": "error", "UNKNOWN_STATUS": "error",
                  "MODEL_INVALID": "error", "INVALID_SOLVER_PARAMETERS": "error",
                  "SOLVER_TYPE_UNAVAILABLE": "error", "INCOMPATIBLE_OPTIONS": "error"}

    def _solve(self, problem, *, deadline, verbose):
        from ortools.linear_solver.python import model_builder as mb

        from ..program._files import build_program

        model = build_program(problem, names=False)
        solver = mb.Solver(self.backend)
        if not solver.solver_is_supported():
            raise RuntimeError(f"this OR-Tools build has no {self.backend} backend")
        if not deadline.unlimited:
            solver.set_time_limit_in_seconds(deadline.seconds())
        if self.params.get("parameters"):
            solver.set_solver_specific_parameters(self.params["parameters"])
        solver.enable_output(bool(verbose))
        native = solver.solve(model)
        status = self.map_status(native.name, time_limited=not deadline.unlimited,
                                 message=solver.status_string)
        has_point = native in (mb.SolveStatus.OPTIMAL, mb.SolveStatus.FEASIBLE)
        x = solver.values(model.get_variables()).to_numpy() if has_point else None
        return lp_result(problem, x, status=status, message=solver.status_string,
                         objective=solver.objective_value if status == "optimal" else None)


@register_solver
class GlopSolver(_OrToolsLP):
    """OR-Tools GLOP primal/dual simplex on the LP relaxation.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    >>> po.solve(po.compile_problem(tree, X, y, lam=0.01), solver="glop").solve_info["status"]
    'optimal'
    """

    name = "glop"
    backend = "glop"
    options = {"parameters": ""}
    exact = True
    auto_rank = 2


@register_solver
class PdlpSolver(_OrToolsLP):
    """OR-Tools PDLP (first-order primal-dual LP).  Tolerance-limited, and on a
    degenerate program it may stop inside the optimal face rather than at a
    vertex: its point is rounded and re-evaluated, so the reported objective is
    the rounded pruning's.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    >>> p = po.compile_problem(tree, X, y, lam=0.01)
    >>> abs(po.solve(p, solver="pdlp").objective - po.solve(p).objective) < 1e-6
    True
    """

    name = "pdlp"
    backend = "pdlp"
    exact = False
    auto_rank = None
    options = {"parameters": ("termination_criteria { simple_optimality_criteria { "
                              "eps_optimal_relative: 1e-9 eps_optimal_absolute: 1e-9 } }")}

    def _solve(self, problem, *, deadline, verbose):
        result = super()._solve(problem, deadline=deadline, verbose=verbose)
        rounded = problem.evaluate(result.split_mask).objective
        result.info.setdefault("lp_objective", result.objective)
        result.bound = min(result.bound, result.objective, rounded)
        result.objective = rounded
        return result
