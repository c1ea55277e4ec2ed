"""prune() and solve(): compile, solve with a registered backend, check, wrap."""

from __future__ import annotations

import time

from ._compile import compile_problem
from ._pruned import PrunedForest
from ._sampling import cost_sample_report
from ._validation import check_nonneg_scalar
from .solvers import SolverError, get_solver

__all__ = ["prune", "solve"]

# relative agreement demanded between a solver's optimal objective and the shared evaluation
OBJECTIVE_RTOL = 1e-6


def solve(problem, *, solver="auto", time_limit=None, verbose=False, solver_options=None):
    """Solve a compiled :class:`PruningProblem` and return a :class:`PrunedForest`.

    The returned objective is recomputed from the pruning by
    :meth:`PruningProblem.evaluate`; an exact backend claiming optimality
    with a different objective raises :class:`SolverError`.

    Parameters
    ----------
    problem : PruningProblem
    solver : str
        A name from :func:`available_solvers` or ``"auto"``.
    time_limit : float, optional
        Seconds; the best valid pruning found is returned with
        ``solve_info["status"] == "time_limit"``.
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
    time_limit = check_nonneg_scalar(time_limit, "time_limit", allow_none=True)
    if solver_options is not None and not isinstance(solver_options, dict):
        raise TypeError("solver_options must be a dict of backend options")
    backend = get_solver(solver, **(solver_options or {}))
    if verbose:
        print(f"[prune-opt] solving {problem!r} with {backend.name}")
    result = backend.solve(problem, time_limit=time_limit, verbose=verbose)
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
        "gap": max(breakdown.objective - result.bound, 0.0) / max(abs(breakdown.objective),
                                                                    1e-12),
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


def prune(forest, X, y, *, costs=None, lam, solver="auto", train=None, depth_cost=0.0,
          time_limit=None, verbose=False, solver_options=None, sample_weight=None,
          cost_sample=None, client=None):
    """Prune a fitted forest by solving the BudgetPrune program exactly.

    Parameters
    ----------
    forest : fitted estimator or Forest
        ``RandomForestClassifier``, ``ExtraTreesClassifier``,
        ``DecisionTreeClassifier``, a forest_builders estimator, or a Forest.
    X, y : array-like
        Cost data (validation data); also error data unless ``train`` is given.
    costs : FeatureCosts, array-like or mapping, optional
        Feature acquisition costs (uniform when omitted).
    lam : float
        Weight of the average acquisition cost against the error.
    solver : str, default "auto"
        Backend name; see :func:`available_solvers`.
    train : tuple (X_train, y_train), optional
        Count errors on each tree's in-bag sample (the paper's choice; with
        ``lam=0`` a fully grown forest is then kept whole).
    depth_cost : float
        Weight of the average path length (computation) inside the lam term.
    time_limit : float, optional
    verbose : bool
    solver_options : dict, optional
    sample_weight : array-like, optional
        Weights of the rows of X.
    cost_sample : int or "auto", optional
        Estimate the cost term on a uniform sample of the rows of X (see
        :func:`compile_problem`); ``solve_info`` then holds the sampled cost's
        confidence interval and the pruning's true cost on all rows.
    client : dask.distributed.Client, optional
        Compile on a Dask cluster (see :func:`compile_problem`).

    Returns
    -------
    PrunedForest

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> whole = po.prune(rf, X, y, lam=0.0, train=(X, y))
    >>> whole.n_splits == int((rf.estimators_[0].tree_.children_left >= 0).sum() +
    ...     sum((e.tree_.children_left >= 0).sum() for e in rf.estimators_[1:]))
    True
    """
    t0 = time.perf_counter()
    problem = compile_problem(forest, X, y, costs=costs, lam=lam, train=train,
                              depth_cost=depth_cost, sample_weight=sample_weight,
                              cost_sample=cost_sample, client=client, verbose=verbose)
    compile_seconds = time.perf_counter() - t0
    if verbose:
        print(f"[prune-opt] compiled {problem!r} in {compile_seconds:.2f}s")
    pruned = solve(problem, solver=solver, time_limit=time_limit, verbose=verbose,
                   solver_options=solver_options)
    pruned.solve_info["compile_seconds"] = compile_seconds
    if problem.cost_sample is not None:  # sampled cost term: interval and true cost
        pruned.solve_info.update(cost_sample_report(problem, pruned.split_mask,
                                                    None if client else X, sample_weight))
    pruned.problem = problem
    return pruned


