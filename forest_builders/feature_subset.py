"""Cost-aware feature selection, and random forests grown on the selected columns.

A random forest spreads its splits over nearly every feature, and an example
pays for a feature as soon as one tree asks for it; pruning can only remove
a feature from an example's bill when *every* tree stops asking for it.  The
most direct way to a budget is often to never grow on the expensive,
redundant features at all.

:func:`rank_features_by_cost` orders the features by cost-aware recursive
feature elimination (RFE; Guyon et al., Machine Learning 2002): a random
forest is fitted on the surviving features, and the feature with the least
impurity importance *per unit of cost it saves* is dropped, then the forest
is refitted.  The saving of feature j is ``cost(S) - cost(S minus j)`` under
the :class:`~prune_opt.FeatureCosts` model, so shared acquisition units
(a blood draw paying for several tests) and ``requires`` chains are counted
exactly: a feature whose unit another survivor still needs saves nothing
alone, and is scored by what dropping it with the other such survivors of
that unit saves (so a shared unit's members do not look free and crowd the
short prefixes).  Savings count as zero only relative to the subset's cost,
so scaling every cost leaves the ranking unchanged.  Any prefix
``ranking[:k]`` is a nested feature subset.

:class:`SubsetForestClassifier` grows a scikit-learn random forest on a
subset (given, or the ranking's features taken in order while they fit within
``max_cost``) and
exposes it over *all* the input columns, so ``prune_opt.prune``,
``prune_opt.fit_budget``, ``to_sklearn()`` and the cost accounting take it
unchanged.  With ``max_cost`` every example costs at most ``max_cost``: the
forest can only ask for the subset's features.  Pruning it with
``fit_budget`` then spends the budget within the subset.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.ensemble import RandomForestClassifier
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_X_y

from prune_opt import Forest, as_feature_costs
from prune_opt.budget import fits_budget

from ._base import MAX_FEATURES_CONSTRAINT, CostAwareClassifier, ForestPredictions

__all__ = ["SubsetForestClassifier", "rank_features_by_cost", "subset_costs"]


def subset_costs(costs, ranking):
    """Per-example cost of asking for every feature of ``ranking[:k]``, k = 1 .. d.

    Parameters
    ----------
    costs : FeatureCosts
    ranking : sequence of int
        Feature indices, most valuable first (from :func:`rank_features_by_cost`).

    Returns
    -------
    ndarray of shape (len(ranking),)
        Entry k-1 is the cost of the prefix of length k, an upper bound on what
        any example pays to a forest grown on those features.

    Examples
    --------
    >>> from prune_opt import FeatureCosts
    >>> subset_costs(FeatureCosts([1.0, 5.0, 2.0]), [2, 0, 1]).tolist()
    [2.0, 3.0, 8.0]
    """
    ranking = _check_ranking(ranking, costs.n_features)
    prefix = np.zeros((ranking.size, costs.n_features), dtype=bool)
    for k in range(ranking.size):
        prefix[k:, ranking[k]] = True
    return np.asarray(costs.cost_of_usage(prefix), dtype=float)


def _check_ranking(ranking, n_features):
    """``ranking`` as a 1-D int64 array of column indices in [0, n_features)."""
    arr = np.asarray(ranking, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"ranking must be a 1-D sequence of feature indices, got shape "
                         f"{arr.shape}")
    bad = [r for r in arr.tolist() if isinstance(r, bool) or not isinstance(
        r, (Integral, np.integer))]
    if bad:
        raise ValueError(f"ranking must hold integer feature indices, got {bad[0]!r}")
    out = np.asarray(arr.tolist(), dtype=np.int64)
    wrong = out[(out < 0) | (out >= n_features)]
    if wrong.size:
        raise ValueError(f"ranking: feature index {int(wrong[0])} is out of range for "
                         f"{n_features} features (valid: 0 .. {n_features - 1})")
    return out


def _savings(costs, survivors):
    """What dropping each survivor saves: cost(S) - cost(S minus j), all j in S."""
    used = np.zeros((survivors.size + 1, costs.n_features), dtype=bool)
    used[:, survivors] = True
    used[np.arange(survivors.size), survivors] = False  # row k drops survivor k
    total = np.asarray(costs.cost_of_usage(used), dtype=float)
    return total[-1] - total[:-1]


def _drop_savings(costs, survivors):
    """The savings the drop score divides by, and the tolerance under which a saving is
    zero (relative to cost(S): the ranking does not change when every cost is scaled).

    A survivor whose removal alone saves nothing (a member of a shared unit, or a
    free feature that ``requires`` a paid one, while a partner survives) is
    credited with what dropping it *with* those partners saves: the other
    survivors that save nothing alone and need one of its paid units.  Without
    this, such a member looks free (score +inf) and is kept to the end, so the
    ranking's short prefixes start with an expensive unit.
    """
    saving = _savings(costs, survivors)
    every = np.zeros((1, costs.n_features), dtype=bool)
    every[0, survivors] = True
    total = float(costs.cost_of_usage(every)[0])
    tol = 1e-12 * total
    alone = np.flatnonzero(~(saving > tol))
    if alone.size and total > 0:
        paid = costs.feature_units[survivors[alone]].multiply(costs.unit_costs > 0).tocsr()
        partners = (paid @ paid.T).toarray() > 0  # pairs sharing a paid unit
        group = np.repeat(every, alone.size, axis=0)
        for r in range(alone.size):  # a loop over features
            group[r, survivors[alone[partners[r]]]] = False
            group[r, survivors[alone[r]]] = False
        saving = saving.copy()
        saving[alone] = total - np.asarray(costs.cost_of_usage(group), dtype=float)
    return saving, tol


def _drop_order(importance, saving, n_drop, tol=0.0):
    """Indices (into the survivors) of the ``n_drop`` least valuable per cost saved.

    A feature whose removal saves nothing (at most ``tol``) is free to keep
    (score +inf); ties drop the one that saves more first.
    """
    score = np.full(saving.shape, np.inf)
    pays = saving > tol
    score[pays] = importance[pays] / saving[pays]
    order = np.lexsort((-saving, score))
    return order[:n_drop]


def rank_features_by_cost(X, y, *, costs=None, n_estimators=50, step=1, max_features="sqrt",
                          sample_weight=None, random_state=None, verbose=False, time_limit=None):
    """Order the features by cost-aware recursive feature elimination.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training data (NaN allowed, as in scikit-learn's random forests).
    y : array-like of shape (n_samples,)
        Class labels.
    costs : FeatureCosts, array-like, mapping or None
        Acquisition costs (uniform 1.0 when None).
    n_estimators : int, default 50
        Trees of each elimination round's random forest.
    step : int or float, default 1
        Features dropped per round: a count, or a fraction (in (0, 1)) of the
        survivors, at least one.
    max_features : {"sqrt", "log2"}, int, float or None, default "sqrt"
        Passed to each round's forest.
    sample_weight : array-like of shape (n_samples,), optional
    random_state : int, RandomState or None
    verbose : bool, default False
        Print one line per round.
    time_limit : float or None, default None
        Seconds of this process's CPU time the ranking may take (CPU time, not
        wall-clock time, so that the ranking does not depend on the machine's
        load; on a busy machine the wall clock runs longer).  When the rounds
        left at ``step`` are not
        expected to end in time (each as long as the last one), a round drops
        more features, so that the survivors shrink geometrically to one in the
        rounds the time left holds; with no time for another round, the last
        round's importances per cost rank every survivor.  The first round always
        runs.  None: every round at ``step``.

    Returns
    -------
    ndarray of shape (n_features,)
        Feature indices, most valuable per unit of cost first: ``ranking[:k]``
        is the subset of k features the elimination kept.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4))
    >>> y = (X[:, 1] + 0.1 * X[:, 3] > 0).astype(int)
    >>> ranking = rank_features_by_cost(X, y, costs=[1, 1, 1, 1], n_estimators=10,
    ...                                 random_state=0)
    >>> int(ranking[0]), sorted(ranking.tolist())
    (1, [0, 1, 2, 3])
    """
    names = [str(c) for c in X.columns] if hasattr(X, "columns") else None  # DataFrame
    X, y = check_X_y(X, y, dtype=np.float32, ensure_all_finite="allow-nan")
    check_classification_targets(y)
    fc = as_feature_costs(costs, X.shape[1], names)
    if isinstance(step, bool) or not isinstance(step, (Integral, Real)) or not step > 0 or (
            isinstance(step, Real) and not isinstance(step, Integral) and step >= 1):
        raise ValueError(f"step must be a positive int or a fraction in (0, 1), got {step!r}")
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(
            time_limit, Real) or not time_limit >= 0):
        raise ValueError(f"time_limit must be None or seconds >= 0, got {time_limit!r}")
    forest = RandomForestClassifier(n_estimators=n_estimators, max_features=max_features,
                                    random_state=random_state, n_jobs=1)
    return _eliminate(X, y, fc, forest, step, _drop_savings, sample_weight=sample_weight,
                      verbose=verbose, time_limit=time_limit)


def _n_drop(step, n):
    """Features one round at ``step`` drops from ``n`` survivors (at least one, and one
    survivor kept)."""
    n_drop = int(step) if isinstance(step, Integral) else int(step * n)
    return min(max(n_drop, 1), n - 1)


def _rounds_left(step, n):
    """Rounds the elimination at ``step`` takes from ``n`` survivors to one."""
    rounds = 0
    while n > 1:
        n -= _n_drop(step, n)
        rounds += 1
    return rounds


def _timed_drop(step, n, seconds, left):
    """Features the current round drops from ``n`` survivors when a round takes
    ``seconds`` and ``left`` seconds remain: as at ``step`` when the rounds that follow
    fit in ``left``, else enough that the survivors shrink geometrically to one in the
    rounds that do (all but one when none does)."""
    n_drop = _n_drop(step, n)
    affordable = int(left // seconds) if seconds > 0 else n
    if _rounds_left(step, n - n_drop) <= affordable:
        return n_drop
    if affordable <= 0:
        return n - 1
    keep = max(1, int(np.floor(n ** (affordable / (affordable + 1)) + 1e-9)))
    return max(n_drop, n - keep)


def _eliminate(X, y, costs, forest, step, savings, sample_weight=None, verbose=False,
               time_limit=None):
    """The ranking of cost-aware recursive feature elimination: ``forest`` (an unfitted
    scikit-learn forest) is refit on the survivors every round, and ``savings(costs,
    survivors)`` gives what dropping each saves and the tolerance of a zero saving;
    coarser rounds when ``time_limit`` seconds would not hold the rounds at ``step``."""
    survivors = np.arange(X.shape[1])
    dropped = []
    # CPU seconds, not wall-clock ones: how coarse the rounds are, and so the ranking,
    # must not depend on the machine's load
    t_start = time.process_time()
    while survivors.size > 1:
        t0 = time.process_time()
        rf = forest.fit(X[:, survivors], y, sample_weight=sample_weight)
        if time_limit is None:
            n_drop = _n_drop(step, survivors.size)
        else:
            now = time.process_time()
            n_drop = _timed_drop(step, survivors.size, now - t0,
                                 t_start + time_limit - now)
        saving, tol = savings(costs, survivors)
        gone = _drop_order(rf.feature_importances_, saving, n_drop, tol)
        if verbose:
            print(f"rank_features_by_cost: {survivors.size} features, dropping "
                  f"{survivors[gone].tolist()}")
        dropped.extend(survivors[gone].tolist())  # least valuable first
        survivors = np.delete(survivors, gone)
    return np.asarray(survivors.tolist() + dropped[::-1], dtype=np.int64)


def _widened_forest(rf, columns, X, classes, names):
    """A scikit-learn forest fitted on ``X[:, columns]`` as a Forest over every column of
    ``X``, with its in-bag counts and its trees' node statistics (``classes``: None for
    a regressor)."""
    n = X.shape[0]
    bags = [np.bincount(s, minlength=n).astype(np.int64) if rf.bootstrap
            else np.ones(n, dtype=np.int64) for s in rf.estimators_samples_]
    trees = [_widen(t, columns) for t in rf.estimators_]
    forest = Forest(trees, classes=classes, n_features=X.shape[1], feature_names=names,
                    in_bag=bags)
    forest.node_stats = {k: np.concatenate([np.asarray(getattr(t.tree_, k))
                                            for t in rf.estimators_])  # the same nodes
                         for k in ("n_node_samples", "weighted_n_node_samples", "impurity")}
    return forest


def _fill_within(costs, ranking, max_cost):
    """The ranking's features taken in order, each kept when the subset still costs at
    most ``max_cost``: the longest prefix within it, then every later feature that
    still fits (a cheap feature ranked after an expensive one is not lost)."""
    chosen = []
    for j in ranking:  # a loop over features, each a cost of at most d features
        if fits_budget(costs.cost_of([*chosen, int(j)]), max_cost):
            chosen.append(int(j))
    return chosen


def _resolve_features(features, n_features, names):
    """Column indices of ``features`` (indices, or names when X had column names)."""
    items = list(np.atleast_1d(np.asarray(features, dtype=object)))
    if not items:
        raise ValueError("features is empty; pass at least one column, or features=None")
    out = []
    for f in items:
        if isinstance(f, (Integral, np.integer)) and not isinstance(f, bool):
            if not 0 <= int(f) < n_features:
                raise ValueError(f"features: index {f} is out of range for {n_features} "
                                 "columns")
            out.append(int(f))
        elif isinstance(f, str) and names is not None and f in names:
            out.append(names.index(f))
        else:
            known = "" if names is None else f"; columns: {names[:10]}"
            raise ValueError(f"features: {f!r} is not a column index or name of X{known}")
    if len(set(out)) != len(out):
        raise ValueError(f"features: a column is listed twice ({items})")
    return np.asarray(out, dtype=np.int64)


def _widen(tree, columns):
    """One sklearn tree's arrays with split features mapped back to the input columns."""
    tr = tree.tree_
    feature = np.asarray(tr.feature, dtype=np.int64)
    internal = feature >= 0
    wide = np.full(feature.shape, -1, dtype=np.int64)
    wide[internal] = columns[feature[internal]]
    return dict(left=tr.children_left, right=tr.children_right, feature=wide,
                threshold=tr.threshold, value=tr.value[:, 0, :],
                missing_go_to_left=getattr(tr, "missing_go_to_left", None))


class SubsetForestClassifier(ForestPredictions, CostAwareClassifier):
    """Random forest grown on a cost-aware subset of the features.

    The subset is ``features`` when given; otherwise, with ``max_cost``, the
    features of :func:`rank_features_by_cost` taken in ranking order, each
    kept when the subset still costs at most ``max_cost`` per example (the
    longest prefix within it, then any later feature that still fits);
    otherwise every feature.  The
    forest is scikit-learn's :class:`~sklearn.ensemble.RandomForestClassifier`
    fitted on those columns and exposed over all the input columns.

    Parameters
    ----------
    n_estimators : int, default 100
    features : sequence of int or str, optional
        Columns to grow on (indices, or names when ``X`` has column names).
    max_cost : float, optional
        Per-example cost cap: the subset is filled in cost-ranking order
        within it, so no example ever costs more.  Exclusive with
        ``features``.  Below the cheapest feature (its cost alone, units and
        requirements included), every tree is a single leaf (the training
        class frequencies) and a warning says so.
    costs : FeatureCosts, array-like, mapping or None
        Acquisition costs (uniform 1.0 when None).
    criterion : {"gini", "entropy", "log_loss"}, default "gini"
    max_features : {"sqrt", "log2"}, int, float or None, default "sqrt"
        Of the subset's columns, per split.
    max_depth : int or None
    min_samples_leaf : int, default 1
    bootstrap : bool, default True
    ranking_estimators : int, default 50
        Trees of each elimination round of the ranking (``max_cost`` only).
    ranking_step : int or float, default 1
        Features dropped per elimination round (see :func:`rank_features_by_cost`).
    n_jobs : int or None
        For the final forest (scikit-learn's meaning).
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    features_ : ndarray of int
        The columns the forest may ask for.
    ranking_ : ndarray of int or None
        The cost ranking (``max_cost`` only).
    subset_cost_ : float
        Cost of acquiring every column of ``features_``: no example pays more.
    estimator_ : RandomForestClassifier or None
        The forest on ``X[:, features_]`` (None when the subset is empty).
    forest_ : prune_opt.Forest
        The same trees over all the input columns, with in-bag counts.
    costs_ : prune_opt.FeatureCosts

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> import numpy as np
    >>> import prune_opt as po
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = SubsetForestClassifier(20, max_cost=5.0, ranking_step=0.2,
    ...                              random_state=0).fit(X, y)
    >>> len(clf.features_), bool(clf.acquisition_cost(X).max() <= 5.0)
    (5, True)
    >>> bool(np.array_equal(clf.predict(X), clf.estimator_.predict(X[:, clf.features_])))
    True
    >>> pruned = po.fit_budget(clf, X, y, budget=3.0, time_limit=5)
    >>> bool(pruned.average_cost(X) <= 3.0)
    True
    """

    _parameter_constraints: dict = {
        **CostAwareClassifier._parameter_constraints,
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "features": ["array-like", None],
        "max_cost": [Interval(Real, 0, None, closed="left"), None],
        "criterion": [StrOptions({"gini", "entropy", "log_loss"})],
        "max_features": MAX_FEATURES_CONSTRAINT,
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "bootstrap": ["boolean"],
        "ranking_estimators": [Interval(Integral, 1, None, closed="left")],
        "ranking_step": [Interval(Integral, 1, None, closed="left"),
                         Interval(RealNotInt, 0, 1, closed="neither")],
        "n_jobs": [Integral, None],
    }

    def __init__(self, n_estimators=100, *, features=None, max_cost=None, costs=None,
                 criterion="gini", max_features="sqrt", max_depth=None, min_samples_leaf=1,
                 bootstrap=True, ranking_estimators=50, ranking_step=1, n_jobs=None,
                 random_state=None):
        self.n_estimators = n_estimators
        self.features = features
        self.max_cost = max_cost
        self.costs = costs
        self.criterion = criterion
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.ranking_estimators = ranking_estimators
        self.ranking_step = ranking_step
        self.n_jobs = n_jobs
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Choose the columns, then grow the forest on them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (NaN allowed).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        X, y_enc, names = self._fit_data(X, y)
        y = self.classes_[y_enc]  # labels as validated (a column vector flattened)
        self.features_, self.ranking_ = self._choose_columns(X, y, names, sample_weight)
        every = np.zeros((1, X.shape[1]), dtype=bool)
        every[0, self.features_] = True
        self.subset_cost_ = float(self.costs_.cost_of_usage(every)[0])
        if self.features_.size == 0:
            self.estimator_ = None
            return self._finish_constant(y_enc, sample_weight, names)
        self.estimator_ = RandomForestClassifier(
            n_estimators=self.n_estimators, criterion=self.criterion,
            max_features=self.max_features, max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf, bootstrap=self.bootstrap, n_jobs=self.n_jobs,
            random_state=self.random_state).fit(X[:, self.features_], y,
                                                sample_weight=sample_weight)
        self.forest_ = _widened_forest(self.estimator_, self.features_, X, self.classes_, names)
        return self

    def _choose_columns(self, X, y, names, sample_weight):
        if self.features is not None and self.max_cost is not None:
            raise ValueError("pass features or max_cost, not both (features fixes the "
                             "columns; max_cost chooses them by the cost ranking)")
        if self.features is not None:
            return _resolve_features(self.features, X.shape[1], names), None
        if self.max_cost is None:
            return np.arange(X.shape[1]), None
        ranking = rank_features_by_cost(X, y, costs=self.costs_,
                                        n_estimators=self.ranking_estimators,
                                        step=self.ranking_step, sample_weight=sample_weight,
                                        random_state=self.random_state)
        chosen = _fill_within(self.costs_, ranking, float(self.max_cost))
        if not chosen:
            cheapest = float(self.costs_.feature_cost().min())
            warnings.warn(f"max_cost={self.max_cost} is below the cost of every feature "
                          f"(cheapest {cheapest:.4g}); every tree "
                          "is a single leaf predicting the training class frequencies",
                          UserWarning, stacklevel=3)
        return np.sort(np.asarray(chosen, dtype=np.int64)), ranking

    def _finish_constant(self, y_enc, sample_weight, names):
        w = np.ones(y_enc.size) if sample_weight is None else np.asarray(sample_weight, float)
        value = np.bincount(y_enc, weights=w, minlength=self.classes_.size)[None, :]
        leaf = dict(left=[-1], right=[-1], feature=[-1], threshold=[0.0], value=value)
        self.forest_ = Forest([leaf] * self.n_estimators, classes=self.classes_,
                              n_features=self.n_features_in_, feature_names=names)
        return self


def rank_on_rows(X, y, costs, task, n_estimators, random_state, time_limit=None):
    """The cost-aware elimination ranking of ``X``'s features for a classification target
    (:func:`rank_features_by_cost`) or a regression one (a regression forest's impurity
    importance per unit of cost saved), a fifth of the survivors dropped per round beyond
    10 features (more when ``time_limit`` seconds would not hold the rounds)."""
    step = 1 if X.shape[1] <= 10 else 0.2
    if task == "classification":
        return rank_features_by_cost(X, y, costs=costs, n_estimators=n_estimators, step=step,
                                     random_state=random_state, time_limit=time_limit)
    from sklearn.ensemble import RandomForestRegressor

    rf = RandomForestRegressor(n_estimators=n_estimators, max_features=1.0,
                               random_state=random_state, n_jobs=1)
    return _eliminate(X, y, costs, rf, step, lambda fc, s: (_savings(fc, s), 0.0),
                      time_limit=time_limit)
