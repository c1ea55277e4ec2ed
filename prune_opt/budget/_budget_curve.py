"""budget_curve: fit_budget on a grid of budgets, as curve rows beside the hull's."""

from __future__ import annotations

import time

import numpy as np

from .._frames import records_frame
from .._validation import check_labels
from ..program._problem import PruningProblem
from ._fit_budget import fit_budget

__all__ = ["budget_curve"]


def budget_curve(problem_or_forest, X=None, y=None, *, budgets, costs=None, train=None,
                 objective="auto", time_limit="default", X_eval=None, y_eval=None,
                 progress=False, **fit_kwargs):
    """:func:`fit_budget` at every budget of a grid, as rows comparable with
    :func:`tradeoff_curve`'s.

    The budgets are run from the smallest up, so with ``objective="auto"`` a
    larger budget never gets a worse loss than a smaller one (fit_budget keeps
    its best prunings of the same forest, rows and costs).

    Parameters
    ----------
    problem_or_forest, X, y, costs, train, objective, time_limit
        As for :func:`fit_budget` (``time_limit`` is per budget).
    budgets : sequence of float
        Average acquisition costs per example (>= 0).
    X_eval, y_eval : array-like, optional
        Held-out data: adds ``accuracy_eval`` (``r2_eval`` for a regression
        forest) and ``cost_eval`` columns.
    progress : bool
        Show a tqdm progress bar (one tick per budget).
    **fit_kwargs
        Other keywords of :func:`fit_budget` (``method``, ``solver_options``, ...).

    Returns
    -------
    pandas.DataFrame
        One row per budget, costliest first as ``tradeoff_curve``'s: ``method``
        (``"fit_budget"``), ``budget``, ``error_term`` (the paper's error term
        of the pruning on the problem's error data, when known), ``average_cost``,
        ``n_splits``, ``n_trees``, ``objective`` (what was optimised), ``seconds``,
        plus the evaluation columns.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from prune_opt.budget import budget_curve
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> curve = budget_curve(rf, X, y, budgets=[1.0, 2.0], costs=[1, 1, 5, 5])
    >>> list(curve["budget"]), bool((curve["average_cost"] <= curve["budget"]).all())
    ([2.0, 1.0], True)
    """
    try:
        grid = np.asarray(budgets, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"budgets must be a sequence of numbers, got {budgets!r}") from None
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or (grid < 0).any():
        raise ValueError(f"budgets must be a non-empty 1-D sequence of finite numbers >= 0, "
                         f"got {budgets!r}")
    if (X_eval is None) != (y_eval is None):
        raise ValueError("X_eval and y_eval must be given together")
    is_problem = isinstance(problem_or_forest, PruningProblem)
    extra = {} if is_problem else {"costs": costs, "train": train}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=grid.size, desc="budgets", unit="fit")
    rows = []
    try:
        for b in np.sort(grid):
            t0 = time.perf_counter()
            pf = fit_budget(problem_or_forest, X, y, budget=float(b), objective=objective,
                            time_limit=time_limit, **extra, **fit_kwargs)
            info = pf.solve_info
            bd = pf.breakdown
            r = {"method": "fit_budget", "budget": float(b),
                 "error_term": np.nan if bd is None else bd.error_term,
                 "average_cost": info.get("achieved_cost", np.nan if bd is None
                                          else bd.average_cost),
                 "n_splits": pf.n_splits, "n_trees": pf.n_trees,
                 "objective": info.get("auto", {}).get("chosen", info.get("objective",
                                                                          "paper")),
                 "seconds": time.perf_counter() - t0}
            if X_eval is not None:
                f = pf.forest
                n_eval = len(f.check_X(X_eval, "X_eval"))
                check_labels(f, y_eval, n_eval, name="y_eval")
                score = "r2_eval" if f.task == "regression" else "accuracy_eval"
                r[score] = pf.score(X_eval, y_eval)
                r["cost_eval"] = pf.average_cost(X_eval)
            rows.append(r)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return records_frame(rows[::-1])
