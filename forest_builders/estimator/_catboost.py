"""The CatBoost candidate family of the budget-pruned estimator (off by default).

* ``catboost``: CatBoost grown under its first-use feature penalties
  (``first_feature_use_penalties`` = the feature costs, in units of their mean
  positive cost, scaled by ``penalties_coefficient``) at the coefficients
  around the budget: a geometric search for the least penalised model that
  fits the budget on the prune rows, kept with the most penalised one above it
  (which the estimator prunes with the model's own loss; ``_boosted.penalty_search``,
  whose ``STRONGER`` option keeps a stronger one too).

Why first-use penalties: CatBoost grows symmetric trees, whose every level tests
one split for all the examples that reach it, so every example goes through
every level of every tree and an unpruned model's per-example cost is the cost
of every feature it uses.  A penalty paid once per model for each feature is
then exactly what the model costs per example; pruning can still make a
model cheaper for some examples than for others.

The models are CatBoost's defaults but for the rounds: symmetric trees of depth
:data:`CATBOOST_DEPTH`, at most the rounds of the other boosted families
(``_boosted_candidates.ROUNDS``, a multiclass model capped at ``TREE_CAP``
trees, fewer when time is short), CatBoost's own learning rate, stopped early
on the prune rows (:data:`CATBOOST_STOPPING_ROUNDS` rounds without improvement,
the best round kept); they never write files.

The family is registered with ``default=False``: ``candidates=None`` leaves it
out, ``candidates=[..., "catboost"]`` grows it (when CatBoost is installed).
"""

from __future__ import annotations

import functools

import numpy as np

from ._boosted import _as_candidate, _cannot_grow, _rounds, penalty_search
from ._registry import register_family

__all__ = ["CATBOOST_DEPTH", "CATBOOST_START", "CATBOOST_STEPS", "catboost_penalties"]

#: depth of the symmetric trees (CatBoost's default)
CATBOOST_DEPTH = 6
#: rounds without improvement of the prune rows' loss before growing stops
CATBOOST_STOPPING_ROUNDS = 10
#: the first penalties_coefficient tried (costs in units of their mean positive cost), the
#: factor between the coefficients of the first search, and the geometric bisection steps
#: after it
CATBOOST_START = 1.0
CATBOOST_FACTOR = 10.0
CATBOOST_STEPS = 3
#: the search gives up beyond these coefficients
CATBOOST_RANGE = (1e-4, 1e4)


def catboost_penalties(costs, coefficient):
    """CatBoost's keywords for first-use penalties equal to ``costs`` (a FeatureCosts) in
    units of their mean positive cost, times ``coefficient``.

    Examples
    --------
    >>> from prune_opt import FeatureCosts
    >>> catboost_penalties(FeatureCosts([0.0, 1.0, 3.0]), 0.5)
    {'first_feature_use_penalties': [0.0, 0.5, 1.5], 'penalties_coefficient': 0.5}
    """
    fc = np.asarray(costs.feature_cost(), dtype=float)
    unit = float(fc[fc > 0].mean()) if np.any(fc > 0) else 1.0
    return {"first_feature_use_penalties": [float(c) for c in fc / unit],
            "penalties_coefficient": float(coefficient)}


def _threads(ctx):
    from joblib import effective_n_jobs

    return int(effective_n_jobs(ctx.n_jobs or 1))


class _StopAt:
    """A CatBoost callback that ends the training once ``deadline`` has passed."""

    def __init__(self, deadline):
        self.deadline = deadline

    def after_iteration(self, info):
        return not self.deadline.expired()


def _grow_catboost(ctx, coefficient, rounds, rows, deadline=None):
    """A CatBoost model of at most ``rounds`` rounds grown on ``rows`` under first-use
    penalties at ``coefficient``, stopped early on the prune rows unless they are among
    ``rows``, and once ``deadline`` (a Deadline) has passed, as an additive Forest."""
    import catboost as cb

    y, classes = ctx.y, None
    if ctx.task == "classification":  # class indices (the prune rows' labels too)
        classes = np.unique(y)
        y = np.searchsorted(classes, y)
    cls = cb.CatBoostClassifier if ctx.task == "classification" else cb.CatBoostRegressor
    model = cls(iterations=int(rounds), depth=CATBOOST_DEPTH, random_seed=ctx.seed,
                thread_count=_threads(ctx), allow_writing_files=False, verbose=0,
                **catboost_penalties(ctx.costs, coefficient))
    fit = {}
    if not np.isin(ctx.prune, rows).any():
        fit = {"eval_set": (ctx.X[ctx.prune], y[ctx.prune]),
               "early_stopping_rounds": CATBOOST_STOPPING_ROUNDS}
    if deadline is not None:
        fit["callbacks"] = [_StopAt(deadline)]
    model.fit(ctx.X[rows], y[rows], **fit)
    return _as_candidate(ctx, model, classes)


@register_family("catboost", requires=("catboost",), boosted=True, order=55, default=False,
                 description="CatBoost under first-use feature penalties around the budget")
def _catboost(ctx):
    if _cannot_grow(ctx, "catboost"):
        return
    penalty_search(ctx, "catboost", "coefficient",
                   lambda c: functools.partial(_grow_catboost, ctx, c, _rounds(ctx, "catboost", 4)[0]),
                   CATBOOST_START, CATBOOST_FACTOR, CATBOOST_STEPS, CATBOOST_RANGE)
