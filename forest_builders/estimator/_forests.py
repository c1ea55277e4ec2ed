"""The bagged-forest candidate families of the budget-pruned estimator.

* ``rf``: a random forest on every column;
* ``shallow``: two random forests of at most 8 leaves per tree, one with
  ``max_features=0.5`` (a small tree reads few features per example, what CEGB's
  7-leaf trees exploit at small budgets; with half the features offered at each
  split the trees agree more on the informative ones);
* ``subset``: random forests on nested prefixes of the cost-aware feature ranking,
  from the longest prefix whose features all fit the budget until two cost more
  than it on the prune rows (at most ``max_subsets``); the first, which fits by
  construction, is the family's anchor (grown before every family);
* ``lazy``: forests grown under CEGB's lazy per-example feature penalty
  (classification).
"""

from __future__ import annotations

import functools

from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from prune_opt import Forest

from ..feature_subset import SubsetForestClassifier, _widened_forest
from ..lazy_cost_rf import LazyCostRandomForestClassifier
from ._registry import register_family

__all__ = ["SHALLOW_RF", "LAZY_GRID", "random_forest"]

#: shallow random forests: (label, scikit-learn keywords)
SHALLOW_RF = (("max_leaf_nodes=8", {"max_leaf_nodes": 8}),
              ("max_leaf_nodes=8, max_features=0.5", {"max_leaf_nodes": 8, "max_features": 0.5}))
#: (tradeoff, max_features, stop_on_penalty) of the lazy-penalty forests
LAZY_GRID = ((1.0, 0.3, False), (0.1, 0.5, True))


def random_forest(ctx, rows, deadline=None, **kw):
    """A scikit-learn random forest (``kw``: extra hyperparameters) fitted on ``rows``, as
    a Forest named by the context's column names (``deadline``: not read; a forest's time
    is the clock's reference, expected well)."""
    cls = RandomForestClassifier if ctx.task == "classification" else RandomForestRegressor
    m = cls(n_estimators=ctx.n_estimators, random_state=ctx.seed, n_jobs=ctx.n_jobs,
            **kw).fit(ctx.X[rows], ctx.y[rows])
    forest = Forest.from_sklearn(m)
    forest.feature_names = ctx.names
    return forest


@register_family("rf", order=10, description="a random forest on every column")
def _rf(ctx):
    ctx.grow("rf", "rf", "rf", functools.partial(random_forest, ctx))


@register_family("shallow", order=20, description="random forests of at most 8 leaves per tree")
def _shallow(ctx):
    for label, kw in SHALLOW_RF:
        ctx.grow(f"rf({label})", "shallow", "shallow", functools.partial(random_forest, ctx, **kw))


def _subset_forest(ctx, cols, rows, deadline=None):
    """A random forest grown on the columns ``cols`` of ``rows``, over every column."""
    X, y = ctx.X[rows], ctx.y[rows]
    if ctx.task == "classification":
        m = SubsetForestClassifier(ctx.n_estimators, features=cols, costs=ctx.costs,
                                   n_jobs=ctx.n_jobs, random_state=ctx.seed).fit(X, y)
        f = m.forest_
        f.feature_names = ctx.names
        return f
    rf = RandomForestRegressor(n_estimators=ctx.n_estimators, max_features=1.0,
                               random_state=ctx.seed, n_jobs=ctx.n_jobs).fit(X[:, cols], y)
    return _widened_forest(rf, cols, X, None, ctx.names)


def _subset_prefixes(ctx, anchor=False):
    """The subset forests from the longest prefix whose features all fit the budget (only
    that one, when it fits and is not every column, for the ``anchor``)."""
    if ctx.max_subsets == 0 or ctx.n_features < 2:
        return
    ctx.grow_prefixes("subset", lambda cols, fits: functools.partial(_subset_forest, ctx, cols),
                      last=ctx.n_features - 1, most=ctx.max_subsets, anchor=anchor)


def _subset_anchor(ctx):
    """The forest on the longest cost-ranked prefix whose features all fit the budget."""
    _subset_prefixes(ctx, anchor=True)


@register_family("subset", order=30, anchor=_subset_anchor,
                 description="random forests on the cheapest-feature prefixes")
def _subset(ctx):
    _subset_prefixes(ctx)


class _LazyForestUntil(LazyCostRandomForestClassifier):
    """A lazy-penalty forest that adds no tree once ``until`` (a Deadline, None: no limit)
    has passed; the first tree always grows.  Its trees grow one after another in Python,
    and their time grows with the classes (on letter's 9 classes a forest took 40 x the
    random forest's time, 5-7 x on two classes), so the estimator's step stops with its
    share of the growing time rather than overrun it."""

    until = None

    def _grow(self, spec, X, y, seeds):
        def in_time():
            for k, seed in enumerate(seeds):
                if k and self.until is not None and self.until.expired():
                    return
                yield seed

        return super()._grow(spec, X, y, in_time())


def _lazy_forest(ctx, tradeoff, max_features, stop, rows, deadline=None):
    m = _LazyForestUntil(ctx.n_estimators, tradeoff=tradeoff, max_features=max_features,
                         stop_on_penalty=stop, costs=ctx.costs, random_state=ctx.seed)
    m.until = deadline
    m.fit(ctx.X[rows], ctx.y[rows])
    f = m.forest_
    f.feature_names = ctx.names
    return f


@register_family("lazy", tasks=("classification",), order=60,
                 description="random forests grown under CEGB's lazy per-example penalty")
def _lazy(ctx):
    for t, mf, stop in LAZY_GRID:
        ctx.grow(f"lazy(tradeoff={t:g})", "lazy", "lazy",
                 functools.partial(_lazy_forest, ctx, t, mf, stop))
