"""optimize_ensemble: prune a forest for its own loss plus lam times the average cost."""

from __future__ import annotations

from .._validation import check_nonneg_scalar, check_time_limit
from ._base import get_objective
from ._budget import fit_budget_ensemble
from ._setup import Setup, now
from ._starts import _check_max_iter, run_starts
from ._state import EnsembleState

__all__ = ["optimize_ensemble"]


def optimize_ensemble(problem_or_forest, X, y, *, objective="brier", lam=None, costs=None,
                      budget=None, depth_cost=0.0, sample_weight=None, init="best",
                      max_iter=50, unit_moves=True, solver="auto", time_limit=None,
                      verbose=False):
    """Prune a forest to minimise its own loss on (X, y) plus lam times its average cost.

    The objective is ``mean_i loss(forest_proba(x_i), y_i) + lam * (average
    acquisition cost + depth_cost * average depth)`` on ``(X, y)``, with the
    same cost term as the paper's program.  It is minimised by exact block
    coordinate descent over trees: each step re-prunes one tree optimally
    given the others (a dynamic program), so the objective never increases;
    the result is a fixed point, not a certified global optimum.

    Parameters
    ----------
    problem_or_forest : PruningProblem, fitted estimator or Forest
        A compiled problem supplies the forest, costs and depth_cost (its
        cost data should be ``X``).
    X, y : array-like
        Evaluation (validation) data: the loss and the average cost are
        measured on it.
    objective : str or Objective, default "brier"
        ``"brier"``, ``"logloss"``, ``"margin"``, ``"accuracy"`` or
        ``"tree_error"`` (the paper's error term); see
        :func:`available_objectives`.
    lam : float
        Weight of the average cost (required unless ``budget`` is given).
    costs : FeatureCosts, array-like or mapping, optional
    budget : float, optional
        Instead of ``lam``: the best pruning whose average cost on X is at most
        ``budget`` (delegates to :func:`fit_budget_ensemble`).
    depth_cost : float
    sample_weight : array-like, optional
    init : {"best", "paper", "full"}, split mask or PrunedForest
        Start(s): the paper's exact optimum at the same lam, the unpruned
        forest, or both ("best": the better end point is kept).
    max_iter : int
        Maximum iterations (sweeps over the trees) per start.
    unit_moves : bool, default True
        At a fixed point of the tree blocks, try dropping each acquisition
        unit from every tree at once (kept only if the objective drops).
    solver : str
        Backend of the paper start.
    time_limit : float, optional
        Seconds; sweeps stop once it is exceeded (the current pruning is valid).
    verbose : bool

    Returns
    -------
    PrunedForest
        ``objective`` is the ensemble objective (recomputed from scratch);
        ``solve_info`` holds the ``trace`` (objective after each sweep,
        non-increasing), ``iterations``, ``paper_objective``, ``loss``,
        ``average_cost`` and the end point of every start.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.objectives import optimize_ensemble
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> pf = optimize_ensemble(rf, X, y, objective="brier", lam=0.01)
    >>> trace = pf.solve_info["trace"]
    >>> all(b <= a for a, b in zip(trace, trace[1:]))
    True
    """
    if budget is not None:
        if lam is not None:
            raise ValueError("pass either lam or budget, not both")
        return fit_budget_ensemble(problem_or_forest, X, y, objective=objective, budget=budget,
                                   costs=costs, depth_cost=depth_cost,
                                   sample_weight=sample_weight, max_iter=max_iter,
                                   solver=solver, time_limit=time_limit, verbose=verbose)
    t0 = now()
    obj = get_objective(objective)
    max_iter = _check_max_iter(max_iter)
    time_limit = check_time_limit(time_limit)
    depth_cost = check_nonneg_scalar(depth_cost, "depth_cost")
    setup = Setup(problem_or_forest, X, y, costs=costs, depth_cost=depth_cost,
                  sample_weight=sample_weight, solver=solver, objective=obj)
    obj = setup.objective
    if lam is None:
        if setup.problem is None:
            raise ValueError("lam is required (or pass budget=); e.g. lam=0.01")
        lam = setup.problem.lam
    lam = check_nonneg_scalar(lam, "lam")
    state = EnsembleState(setup.forest, setup.X, setup.y, setup.weight, setup.costs, obj,
                          lam=lam, depth_cost=setup.depth_cost)
    deadline = None if time_limit is None else t0 + time_limit
    runs = run_starts(state, setup, setup.starts(init, lam), max_iter=max_iter,
                      deadline=deadline, verbose=verbose, unit_moves=unit_moves)
    info = {"starts": {r["start"]: r["trace"][-1] for r in runs}, "seconds": now() - t0}
    return setup.result(runs[0], obj, lam, info, state)
