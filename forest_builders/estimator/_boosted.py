"""The boosted candidate families of the budget-pruned estimator.

* ``gbm``: gradient boosting (LightGBM when installed, else scikit-learn's
  HistGradientBoosting) on nested prefixes of the cost-aware feature ranking,
  from the longest prefix whose features all fit the budget (a model that fits
  as it is) to longer ones that the estimator prunes to the budget with the
  model's own loss, until two cost more than the budget on the prune rows (at
  most ``max_subsets``, the whole feature set included); the first, when its
  features fit, is the family's anchor (grown before every family);
* ``cegb``: LightGBM's cost-efficient gradient boosting (CEGB's lazy per-example
  feature penalty, Peter et al., NIPS 2017) at the trade-offs around the budget: a
  geometric search of ``cegb_tradeoff`` for the least penalised model that fits
  the budget on the prune rows, kept with the most penalised one above it (which
  the estimator prunes); with :data:`STRONGER` set (off by default, measured),
  also a stronger one at about twice the budget, pruned last with the model's
  own loss.

Both grow with LightGBM's defaults (31 leaves, learning rate 0.1, 100 rounds)
and stop early on the prune rows (10 rounds without improvement of the loss):
those rows never select the winner.  A multiclass model grows one tree per class
and round, so its rounds are capped at :data:`TREE_CAP` trees (the learning rate
raised in proportion, at most 0.3); fewer rounds again when the time left is
short.  A model on a prefix sees the other columns as constant zeros, so it
reads the full feature vector and never asks for them.
"""

from __future__ import annotations

import functools
import importlib.util
import warnings

import numpy as np

from prune_opt import as_forest

from ._registry import register_family

__all__ = ["TREE_CAP", "ROUNDS", "MIN_ROUNDS", "CEGB_START", "CEGB_STEPS",
           "boosting_library", "boosted_model"]

#: LightGBM's default number of rounds (the most a boosted candidate grows)
ROUNDS = 100
#: the fewest rounds a boosted candidate grows
MIN_ROUNDS = 10
#: the most trees a multiclass candidate grows (rounds x classes): pruning a booster
#: takes time in proportion to its trees
TREE_CAP = 300
#: rounds without improvement of the prune rows' loss before growing stops
STOPPING_ROUNDS = 10
#: CEGB: the first cegb_tradeoff tried (costs in units of their mean), the factor between
#: the trade-offs of the first search, and the geometric bisection steps after it
CEGB_START = 0.03
CEGB_FACTOR = 10.0
CEGB_STEPS = 3
#: CEGB: the search gives up beyond these trade-offs
CEGB_RANGE = (1e-5, 1e3)
#: CEGB: LightGBM parameters beside the trade-off and the penalty (its defaults otherwise)
CEGB_PARAMS = {}
#: a penalised family may also keep a model that costs about this many times the budget
#: on the prune rows (within STRONGER_BAND times), pruned to the budget by its own loss;
#: None (the default) keeps only the two models around the budget.  Measured on the
#: frontier (docs/frontier.md, "Adaptive acquisition"): +0.14 points idle on seeds 0-2,
#: -0.39 beside a test run on seeds 3-5, -0.02 idle on seeds 3-5 without the extra
#: growth, so it is off
STRONGER = None
STRONGER_BAND = (1.5, 4.0)
#: whether the search grows one more model when none of those grown is in the band
STRONGER_GROWS = True


def boosting_library():
    """``"lightgbm"`` when LightGBM is installed, else ``"sklearn"`` (HistGradientBoosting)."""
    return "lightgbm" if importlib.util.find_spec("lightgbm") is not None else "sklearn"


def _rounds(ctx, kind, models):
    """(rounds, learning rate): LightGBM's 100 and 0.1; fewer rounds (and a larger rate,
    at most 0.3) for a multiclass model beyond :data:`TREE_CAP` trees, or when the time
    left would not grow ``models`` more models of ``kind`` of the last one's size."""
    k = len(np.unique(ctx.y)) if ctx.task == "classification" else 1
    per_round = k if k > 2 else 1
    rounds = max(MIN_ROUNDS, min(ROUNDS, TREE_CAP // per_round))
    rounds = max(MIN_ROUNDS, int(rounds * ctx.time_share(kind, models)))
    return rounds, min(0.3, 0.1 * ROUNDS / rounds)


def boosted_model(ctx, library, rounds, learning_rate, **params):
    """An unfitted gradient-boosting model of ``library`` for the context's task."""
    if library == "lightgbm":
        import lightgbm as lgb

        cls = lgb.LGBMClassifier if ctx.task == "classification" else lgb.LGBMRegressor
        return cls(n_estimators=rounds, learning_rate=learning_rate, random_state=ctx.seed,
                   n_jobs=ctx.n_jobs or 1, verbose=-1, **params)
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    cls = (HistGradientBoostingClassifier if ctx.task == "classification"
           else HistGradientBoostingRegressor)
    return cls(max_iter=rounds, learning_rate=learning_rate, random_state=ctx.seed,
               early_stopping=True, n_iter_no_change=STOPPING_ROUNDS, **params)


def _masked(X, cols):
    """``X`` with every column outside ``cols`` set to 0 (None: every column kept)."""
    if cols is None:
        return X
    out = np.zeros_like(X)
    out[:, cols] = X[:, cols]
    return out


def _stop_at(deadline):
    """A LightGBM callback that ends the training once ``deadline`` has passed, keeping
    the rounds grown (at least one)."""
    import lightgbm as lgb

    def stop(env):
        if deadline.expired():
            raise lgb.callback.EarlyStopException(env.iteration, env.evaluation_result_list)

    stop.order = 40  # after the early stopping's (30)
    return stop


def _grow_boosted(ctx, library, cols, params, rounds, rows, *, stop_early=True, deadline=None):
    """A boosted model of at most ``rounds = (rounds, learning rate)`` grown on ``rows``
    (only the columns ``cols``), stopped early on the prune rows (``stop_early``; when
    they are among ``rows``, all the rounds are grown), as an additive Forest over every
    column.  A LightGBM model also stops adding rounds once ``deadline`` (a Deadline)
    has passed."""
    rounds, rate = rounds
    model = boosted_model(ctx, library, rounds, rate, **params)
    y, classes = ctx.y, None
    if ctx.task == "classification":  # class indices (the libraries' validation rows)
        classes = np.unique(y)
        y = np.searchsorted(classes, y)
    X = _masked(ctx.X[rows], cols)
    fit = {}
    if not stop_early:
        if library == "sklearn":
            model.set_params(early_stopping=False)
    elif library == "lightgbm":
        import inspect

        import lightgbm as lgb

        Xp, yp = _masked(ctx.X[ctx.prune], cols), y[ctx.prune]
        # LightGBM 4.7 names the validation rows eval_X / eval_y (eval_set deprecated)
        fit = ({"eval_X": (Xp,), "eval_y": (yp,)}
               if "eval_X" in inspect.signature(model.fit).parameters
               else {"eval_set": [(Xp, yp)]})
        fit["callbacks"] = [lgb.early_stopping(STOPPING_ROUNDS, verbose=False)]
    else:
        fit = {"X_val": _masked(ctx.X[ctx.prune], cols), "y_val": y[ctx.prune]}
    if library == "lightgbm" and deadline is not None:
        fit["callbacks"] = fit.get("callbacks", []) + [_stop_at(deadline)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.fit(X, y[rows], **fit)
    return _as_candidate(ctx, model, classes)


def _as_candidate(ctx, model, classes):
    """A fitted boosted model as a Forest named by the context's columns and labelled by
    its classes."""
    forest = as_forest(model)
    forest.feature_names = ctx.names
    if classes is not None:
        forest.classes_ = classes
    return forest


def _cannot_grow(ctx, family):
    """Whether boosted models cannot be grown here (recorded as a skipped row): a boosted
    classifier needs at least two classes, and every class of ``y`` among the grow rows
    (its trees are indexed by class; a forest predicts the classes it saw)."""
    if ctx.task != "classification":
        return False
    total, present = np.unique(ctx.y).size, np.unique(ctx.y[ctx.rows]).size
    if total >= 2 and present == total:
        return False
    if any(name == family for name, _, _ in ctx.skipped):  # said once (anchor, family)
        return True
    ctx.skipped.append((family, family, (
        f"not grown: the grow rows hold {present} of the {total} class(es) of y; a boosted "
        "classifier needs two classes or more, each among the grow rows")))
    return True


def _gbm_prefixes(ctx, anchor=False):
    """The gbm models from the longest prefix whose features all fit the budget (only that
    one, when it fits, for the ``anchor``)."""
    if _cannot_grow(ctx, "gbm"):
        return
    library = boosting_library()

    def recipe_at(cols, fits):
        # a prefix whose features all fit is never pruned: it grows on the prune rows too,
        # all its rounds (LightGBM's default 100), as a user's model on those features
        return functools.partial(_grow_boosted, ctx, library, cols, {}, _rounds(ctx, "gbm", 2),
                                 stop_early=not fits)

    ctx.grow_prefixes("gbm", recipe_at, last=ctx.n_features, most=max(ctx.max_subsets, 1),
                      anchor=anchor, library=library)


def _gbm_anchor(ctx):
    """Gradient boosting on the longest cost-ranked prefix whose features all fit the
    budget."""
    _gbm_prefixes(ctx, anchor=True)


@register_family("gbm", boosted=True, order=40, anchor=_gbm_anchor,
                 description="gradient boosting on the cheapest-feature prefixes "
                             "(LightGBM, else HistGradientBoosting)")
def _gbm(ctx):
    _gbm_prefixes(ctx)


def penalty_search(ctx, family, param, recipe_at, start, factor, steps, bounds):
    """The models of a penalised ``family`` around the budget: ``recipe_at(value)`` is the
    recipe of its model at the penalty ``param=value`` (more penalty, a cheaper model).

    A geometric search from ``start`` by ``factor`` (within ``bounds``) for a model on
    each side of the budget on the prune rows, then ``steps`` geometric bisections
    between the two sides; the least penalised model that fits and the most penalised
    one above the budget (which the estimator prunes), and with :data:`STRONGER` set a
    stronger one at about that many times the budget (:func:`_stronger`, pruned last)
    become the candidates ``family(param=value)``.  A first model with no room is a
    skipped row; a later one ends the search."""
    from prune_opt.budget import fits_budget

    models = {}  # value -> (forest, cost on the prune rows, recipe, seconds)

    def fit(value):
        if value not in models:
            recipe = recipe_at(value)
            f, seconds = ctx.timed(family, lambda deadline: recipe(ctx.rows, deadline=deadline))
            if f is None:
                return None
            models[value] = (f, ctx.prune_cost(f), recipe, seconds)
        return models[value]

    def side(fitting):
        return [v for v, (_, cost, _, _) in models.items()
                if fits_budget(cost, ctx.budget) == fitting]

    value = start
    got = fit(value)
    if got is None:
        ctx.skip(family, family, family)
        return
    step = factor if not fits_budget(got[1], ctx.budget) else 1.0 / factor
    while not (side(True) and side(False)) and bounds[0] <= value * step <= bounds[1]:
        value *= step
        if fit(value) is None:
            break
    for _ in range(steps):
        above, below = side(False), side(True)
        if not above or not below or fit(float(np.sqrt(max(above) * min(below)))) is None:
            break
    above, below = side(False), side(True)
    keep = ([min(below)] if below else []) + ([max(above)] if above else [])
    stronger = (_stronger(models, above, ctx.budget, fit, factor)
                if STRONGER is not None and above and ctx.budget > 0 else [])
    for v in sorted(keep + stronger):
        f, cost, recipe, seconds = models[v]
        # the stronger model is pruned after every other candidate, in the time they leave
        ctx.add(f"{family}({param}={v:.3g})", family, family, f, recipe, seconds=seconds,
                prune_cost=cost, prune_last=v in stronger, **{param: v})


def _stronger(models, above, budget, fit, factor):
    """The penalty of a model stronger than the budget allows, for the estimator to prune
    with its own loss (easy rows stop early, hard rows buy the feature that settles
    them): of the models above the budget, the one whose prune-row cost is closest to
    :data:`STRONGER` x the budget within :data:`STRONGER_BAND`; when none is, the cheapest
    model above the budget is near it and no less penalised one grown is within the band's
    reach, one grown at its penalty over ``sqrt(factor)``."""
    def band(values):
        return [v for v in values if v != max(above)
                and STRONGER_BAND[0] * budget < models[v][1] <= STRONGER_BAND[1] * budget]

    inside = band(above)
    # grow one only when the models grown leave a gap: the cheapest above the budget is
    # near it, and none less penalised was grown or the next one is beyond the band
    gap = (models[max(above)][1] <= STRONGER_BAND[0] * budget
           and (len(above) == 1 or models[min(above)][1] > STRONGER_BAND[1] * budget))
    if STRONGER_GROWS and not inside and gap and fit(max(above) / np.sqrt(factor)) is not None:
        inside = band(models)
    if not inside:
        return []
    return [min(inside, key=lambda v: abs(np.log(models[v][1] / (STRONGER * budget))))]


def _cegb_params(ctx, tradeoff):
    return {**CEGB_PARAMS, "cegb_tradeoff": float(tradeoff),
            "cegb_penalty_feature_lazy": [float(c) for c in ctx.costs.feature_cost()]}


@register_family("cegb", requires=("lightgbm",), boosted=True, order=50,
                 description="LightGBM's CEGB at the trade-offs around the budget")
def _cegb(ctx):
    if _cannot_grow(ctx, "cegb"):
        return
    penalty_search(ctx, "cegb", "tradeoff",
                   lambda t: functools.partial(_grow_boosted, ctx, "lightgbm", None,
                                               _cegb_params(ctx, t), _rounds(ctx, "cegb", 4)),
                   CEGB_START, CEGB_FACTOR, CEGB_STEPS, CEGB_RANGE)
