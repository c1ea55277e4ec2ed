"""OR-Tools linear solvers (GLOP simplex, PDLP first-order) via model_builder.

The model is filled in bulk from scipy.sparse arrays
(``ModelBuilderHelper.fill_model_from_sparse_data``), never element by element.
"""

from __future__ import annotations

from ._base import Solver, register_solver
from ._lp import lp_result


def build_model(problem):
    """The LP relaxation as an OR-Tools Model (the exporter's bulk filler, unnamed)."""
    from .._export import build_program

    return build_program(problem, names=False)


class _OrToolsLP(Solver):
    kind = "lp"
    requires = ("ortools.linear_solver.python.model_builder",)
    install_hint = "pip install ortools"
    backend = ""
    options = {}

    def _solve(self, problem, *, time_limit, verbose):
        from ortools.linear_solver.python import model_builder as mb

        model = build_model(problem)
        solver = mb.Solver(self.backend)
        if not solver.solver_is_supported():
            raise RuntimeError(f"this OR-Tools build has no {self.backend} backend")
        if time_limit is not None:
            solver.set_time_limit_in_seconds(float(time_limit))
        if self.params.get("parameters"):
            solver.set_solver_specific_parameters(self.params["parameters"])
        solver.enable_output(bool(verbose))
        status = solver.solve(model)
        if status == mb.SolveStatus.OPTIMAL:
            x = solver.values(model.get_variables()).to_numpy()
            obj = solver.objective_value
            return lp_result(problem, x, scaled_objective=obj, scaled_bound=obj,
                             status="optimal")
        if status in (mb.SolveStatus.FEASIBLE, mb.SolveStatus.NOT_SOLVED,
                      getattr(mb.SolveStatus, "ABNORMAL", None)) and time_limit is not None:
            return lp_result(problem, None, scaled_objective=None, scaled_bound=None,
                             status="time_limit", info={"message": solver.status_string})
        raise RuntimeError(f"{self.backend} returned {status}: {solver.status_string}")


@register_solver
class GlopSolver(_OrToolsLP):
    """OR-Tools GLOP primal/dual simplex on the LP relaxation."""

    name = "glop"
    backend = "glop"
    options = {"parameters": ""}


@register_solver
class PdlpSolver(_OrToolsLP):
    """OR-Tools PDLP (first-order primal-dual LP).  Tolerance-limited: its point is
    rounded and re-evaluated, so the reported objective is the rounded pruning's."""

    name = "pdlp"
    backend = "pdlp"
    exact = False
    options = {"parameters": ("termination_criteria { simple_optimality_criteria { "
                              "eps_optimal_relative: 1e-9 eps_optimal_absolute: 1e-9 } }")}

    def _solve(self, problem, *, time_limit, verbose):
        result = super()._solve(problem, time_limit=time_limit, verbose=verbose)
        rounded = problem.evaluate(result.split_mask).objective
        result.info["lp_objective"] = result.objective
        result.bound = min(result.bound, result.objective)
        result.objective = rounded
        return result
