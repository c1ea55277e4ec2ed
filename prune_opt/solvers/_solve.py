"""solve(): run a registered backend on a compiled problem, check it, wrap the result."""

from __future__ import annotations

from .._clock import Deadline
from ..model._pruned import PrunedForest
from ..program._problem import PruningProblem
from . import SolverError, get_solver

__all__ = ["solve", "OBJECTIVE_RTOL"]

# relative agreement demanded between a solver's optimal objective and the shared evaluation
OBJECTIVE_RTOL = 1e-6
#: a bound below the objective by less than this (times max(1, |objective|)) is float
#: noise, not a gap: at lambda = 0 a min-cut bound of -5e-16 under an objective of 0
#: once read as a relative gap of 5e-4
GAP_NOISE = 1e-12


def solve(problem, *, solver="auto", time_limit=None, verbose=False, solver_options=None):
    """Solve a compiled :class:`PruningProblem` and return a :class:`PrunedForest`.

    The returned objective is recomputed from the pruning by
    :meth:`PruningProblem.evaluate`; an exact backend claiming optimality
    with a different objective raises :class:`SolverError`.

    Parameters
    ----------
    problem : PruningProblem
        From :func:`compile_problem`.  With ``problem.budget`` set, only the
        backends of :func:`prune_opt.solvers.budget_solvers` are accepted.
    solver : str
        A name from :func:`available_solvers` or ``"auto"`` (the installed
        backend of lowest ``auto_rank`` that can take the problem).
    time_limit : float, Deadline, optional
        Seconds for the call (or a caller's :class:`~prune_opt.Deadline` to share);
        the best valid pruning found is returned with
        ``solve_info["status"] == "time_limit"``.  ``None``, ``inf`` or any
        value above ``1e8`` means no limit.
    verbose : bool
    solver_options : dict, optional
        Backend options (see each backend's ``options``).

    Returns
    -------
    PrunedForest

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> problem = po.compile_problem(rf, X, y, lam=0.01)
    >>> a = po.solve(problem, solver="highs")
    >>> b = po.solve(problem, solver="cbc-ip")
    >>> abs(a.objective - b.objective) < 1e-9
    True
    """
    if not isinstance(problem, PruningProblem):
        raise TypeError(f"problem must be a PruningProblem from compile_problem(...), got "
                        f"{type(problem).__name__}; to prune a fitted forest directly use "
                        "prune(forest, X, y, lam=...)")
    deadline = Deadline.of(time_limit)
    if solver_options is not None and not isinstance(solver_options, dict):
        raise TypeError("solver_options must be a dict of backend options")
    backend = get_solver(solver, problem=problem, **(solver_options or {}))
    if verbose:
        print(f"[prune-opt] solving {problem!r} with {backend.name}")
    result = backend.solve(problem, time_limit=deadline, verbose=verbose)
    # a backend that already evaluated its pruning on this problem passes the breakdown
    # on ("_breakdown"): the records are not read a second time
    breakdown = result.info.pop("_breakdown", None)
    if breakdown is None:
        breakdown = problem.evaluate(result.split_mask)
    if result.status == "optimal" and backend.exact:
        tol = OBJECTIVE_RTOL * max(1.0, abs(breakdown.objective)) + 1e-9
        if abs(result.objective - breakdown.objective) > tol:
            raise SolverError(
                f"solver {backend.name!r} reported optimal objective {result.objective!r} but "
                f"its pruning evaluates to {breakdown.objective!r}; the backend is inconsistent"
            )
    info = {
        "solver": backend.name,
        "status": result.status,
        "seconds": result.seconds,
        "solver_objective": result.objective,
        "bound": min(result.bound, breakdown.objective),
        "gap": _relative_gap(breakdown.objective, result.bound),
        "max_fractionality": result.max_fractionality,
        "iterations": result.iterations,
        "problem_size": problem.size(),
        "lam": problem.lam,
        "depth_cost": problem.depth_cost,
        **{k: v for k, v in result.info.items() if k != "solver"},
    }
    return PrunedForest(problem.forest, result.split_mask, costs=problem.costs,
                        objective=breakdown.objective, breakdown=breakdown, solve_info=info,
                        lam=problem.lam)


def _relative_gap(objective, bound):
    """``(objective - bound) / |objective|``, with float noise below the objective read as 0.

    Examples
    --------
    >>> from prune_opt.solvers._solve import _relative_gap
    >>> _relative_gap(0.0, -5.2e-16), _relative_gap(2.0, 1.0)
    (0.0, 0.5)
    """
    slack = max(objective - bound, 0.0)
    if slack <= GAP_NOISE * max(1.0, abs(objective)):
        return 0.0
    return slack / max(abs(objective), 1e-12)
