"""Backend ``"budget"``: the hard-budget search on a problem with a budget row.

Solves ``min J(s)  s.t.  average acquisition cost C(s) <= budget`` for a
:class:`~prune_opt.PruningProblem` carrying ``budget``
(``problem.with_budget(B)``), where ``J`` is the problem's own objective;
without a budget row it solves the plain program exactly (one min-cut).
The search (Lagrangian bound by min-cuts, primal heuristics seeded by the
registered baseline families, CP-SAT warm-started from the incumbent) lives in
:mod:`prune_opt.budget._search`, below the user-facing
:mod:`prune_opt.budget`; this module adapts it to the solver interface.
"""

from __future__ import annotations

from ..solvers._base import Solver, SolveResult
from ..solvers._registry import register_solver
from ..solvers.mincut import MinCutSolver
from ._search import budget_search

__all__ = ["BudgetSearchSolver"]


@register_solver
class BudgetSearchSolver(Solver):
    """Hard-budget search with a certified gap (OR-Tools max-flow and CP-SAT).

    Every returned pruning fits the budget; ``bound`` is the best of the
    Lagrangian dual (exact min-cuts) and the CP-SAT bound, so the gap is
    certified.  ``time_limit`` bounds the whole search (None: run the binary
    program to optimality); status is ``"optimal"`` when the gap is closed,
    else ``"time_limit"``.

    Options: ``mip`` (run the CP-SAT phase, default True), ``mip_workers``
    (CP-SAT search workers, default 1), ``baselines`` (names of the registered
    baseline families to seed from; default all).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> problem = po.compile_problem(rf, X, y, costs=[1, 1, 5, 5]).with_budget(3.0)
    >>> pruned = po.solve(problem, solver="budget", time_limit=10)
    >>> bool(pruned.breakdown.average_cost <= 3.0), pruned.solve_info["status"]
    (True, 'optimal')
    """

    name = "budget"
    kind = "closure"
    requires = ("ortools.graph.python.max_flow", "ortools.sat.python.cp_model")
    install_hint = "pip install ortools>=9.8"
    options = {"mip": True, "mip_workers": 1, "baselines": None, "starts": None}
    exact = True
    mip = True
    matrix_based = False
    reference_only = False
    supports_budget_row = True
    auto_rank = None
    # CP-SAT's status names -> this project's statuses (the search reports
    # "optimal" only when its certified gap is closed)
    STATUS_MAP = {"OPTIMAL": "optimal", "FEASIBLE": "time_limit", "UNKNOWN": "time_limit"}

    def search(self, problem, budget, *, time_limit, verbose=False):
        """:func:`~prune_opt.budget._search.budget_search` with this solver's
        options (checked as ``solve(solver="budget")`` checks them), without the
        result wrapping of :func:`prune_opt.solve`: a ``BudgetSearchResult``."""
        workers = self.params["mip_workers"]
        if not isinstance(workers, int) or workers < 1:
            raise ValueError(f"solver_options: mip_workers must be an int >= 1, got {workers!r}")
        return budget_search(problem, budget, time_limit=time_limit,
                             mip=bool(self.params["mip"]), mip_workers=workers,
                             verbose=verbose, baselines=self.params["baselines"],
                             starts=self.params["starts"])

    def _solve(self, problem, *, time_limit, verbose):
        if problem.budget is None:
            # without a budget row the program is the plain one: one exact min-cut
            result = MinCutSolver().solve(problem, time_limit=time_limit, verbose=verbose)
            result.info["note"] = "no budget row: solved as the plain program by mincut"
            return result
        r = self.search(problem, problem.budget, time_limit=time_limit, verbose=verbose)
        info = dict(r.info, found_by=r.found_by, average_cost=r.average_cost,
                    budget=problem.budget)
        return SolveResult(split_mask=r.split_mask, objective=r.objective, bound=r.bound,
                           status=r.status, seconds=0.0, info=info)
