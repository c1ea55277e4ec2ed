"""Solver backends, found through a registry (see :func:`available_solvers`)."""

from ._base import (
    Solver,
    SolverError,
    SolveResult,
    available_solvers,
    get_solver,
    list_solvers,
    register_solver,
)

__all__ = ["Solver", "SolveResult", "SolverError", "available_solvers", "get_solver",
           "list_solvers", "register_solver"]
