"""prune(): compile a forest's program and solve it (paper objective) or run an
ensemble objective; ``solve`` lives in ``_solve`` and is re-exported here."""

from __future__ import annotations

import time

from ._clock import Deadline
from ._validation import refuse_train_for_boosted
from .forest._costs import estimator_costs
from .forest._forest import as_forest
from .program._compile import compile_problem
from .program._sampling import cost_sample_report, local_rows
from .solvers._solve import OBJECTIVE_RTOL, solve

__all__ = ["prune", "solve", "OBJECTIVE_RTOL"]


def prune(forest, X, y, *, costs=None, lam, solver="auto", train=None, depth_cost=0.0,
          time_limit=None, verbose=False, solver_options=None, sample_weight=None,
          objective=None, cost_sample=None, client=None):
    """Prune a fitted forest by solving the BudgetPrune program exactly.

    With ``objective="paper"`` (the default for a forest) the paper's program
    is solved exactly.  Any other objective (``"brier"``, ``"logloss"``,
    ``"margin"``, ``"accuracy"``; see :mod:`prune_opt.objectives`) minimises
    the forest's own loss on ``(X, y)`` plus ``lam`` times the same average
    cost, by block coordinate descent over trees (monotone, a local optimum).
    A boosted model (GradientBoosting, HistGradientBoosting, LightGBM,
    XGBoost) is pruned by default for its own loss (log-loss or squared
    error), starting from the exact optimum of its expanded program, which
    ``objective="paper"`` solves alone (see ``docs/math/boosting.md``).

    Parameters
    ----------
    forest : fitted estimator or Forest
        ``RandomForestClassifier``, ``ExtraTreesClassifier``,
        ``DecisionTreeClassifier``, their regressors, a boosted model, a
        forest_builders estimator, or a Forest (see :func:`prune_opt.as_forest`).
    X, y : array-like
        Cost data (validation data); also error data unless ``train`` is given.
    costs : FeatureCosts, array-like or mapping, optional
        Feature acquisition costs (when omitted: a grower's fitted costs, else
        uniform).
    lam : float
        Weight of the average acquisition cost against the error.
    solver : str, default "auto"
        Backend name; see :func:`available_solvers`.
    train : tuple (X_train, y_train), optional
        Count errors on each tree's in-bag sample (the paper's choice; with
        ``lam=0`` a fully grown forest is then kept whole).  A boosted model
        refuses it: its errors are always counted on ``(X, y)`` (each of its
        trees fits every training row, so there is no in-bag sample).
    depth_cost : float
        Weight of the average path length (computation) inside the lam term.
    time_limit : float or Deadline, optional
        Seconds for the whole call, the compile included (``None``: no limit); the
        solver gets what is left once the program is compiled.
    verbose : bool
    solver_options : dict, optional
    sample_weight : array-like, optional
        Weights of the rows of X.
    objective : str or Objective, optional
        What to minimise besides ``lam`` times the average cost.  Default:
        ``"paper"`` for an averaged forest, the model's own loss for a boosted one.
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
    >>> po.prune(rf, X, y, lam=0.01, objective="brier").solve_info["objective"]
    'brier'
    """
    deadline = Deadline.of(time_limit)  # the one clock of this call
    costs = estimator_costs(forest, costs)  # a grower's own costs when none are given
    forest = as_forest(forest)
    refuse_train_for_boosted(forest, train)  # for every objective alike
    if objective is None:
        objective = forest.ensemble.default_objective(forest.task)
    if not (isinstance(objective, str) and objective == "paper"):
        if cost_sample is not None or client is not None:
            raise ValueError(f"cost_sample= and client= apply to objective='paper'; "
                             f"objective={objective!r} routes X in process")
        return _prune_ensemble(forest, X, y, costs=costs, lam=lam, solver=solver, train=train,
                               depth_cost=depth_cost, time_limit=deadline, verbose=verbose,
                               solver_options=solver_options, sample_weight=sample_weight,
                               objective=objective)
    t0 = time.perf_counter()
    problem = compile_problem(forest, X, y, costs=costs, lam=lam, train=train,
                              depth_cost=depth_cost, sample_weight=sample_weight,
                              cost_sample=cost_sample, client=client, verbose=verbose)
    compile_seconds = time.perf_counter() - t0
    if verbose:
        print(f"[prune-opt] compiled {problem!r} in {compile_seconds:.2f}s")
    pruned = solve(problem, solver=solver, time_limit=deadline, verbose=verbose,
                   solver_options=solver_options)
    pruned.solve_info["compile_seconds"] = compile_seconds
    if problem.cost_sample is not None:  # sampled cost term: interval and true cost
        pruned.solve_info.update(cost_sample_report(problem, pruned.split_mask,
                                                    local_rows(X), sample_weight))
    pruned.problem = problem
    return pruned


def _prune_ensemble(forest, X, y, *, train, solver_options, objective, **kwargs):
    """prune() with an ensemble objective (see :func:`prune_opt.objectives.optimize_ensemble`)."""
    from .objectives import optimize_ensemble

    if train is not None:
        raise ValueError("train= sets the paper objective's error data; an ensemble objective "
                         f"({objective!r}) measures the forest's loss on (X, y): drop train= "
                         'or use objective="paper"')
    if solver_options:
        raise ValueError("solver_options apply to objective=\"paper\" only")
    return optimize_ensemble(forest, X, y, objective=objective, **kwargs)
