"""Solver backends, found through one ordered registry (see :func:`list_solvers`)."""

from ._base import STATUSES, Solver, SolverError, SolveResult
from ._registry import (
    BACKEND_MODULES,
    auto_solver,
    available_solvers,
    budget_solvers,
    default_solvers,
    find_solvers,
    get_solver,
    list_solvers,
    register_solver,
    solver_classes,
)

__all__ = ["BACKEND_MODULES", "STATUSES", "Solver", "SolveResult", "SolverError",
           "auto_solver", "available_solvers", "budget_solvers", "default_solvers",
           "find_solvers", "get_solver", "list_solvers", "register_solver", "solver_classes"]
