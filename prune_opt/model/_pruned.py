"""PrunedForest: a forest plus the nodes that stay splits.

Persistence (:mod:`._codec`) and the scikit-learn export
(:mod:`.exporters`) sit beside this class: they read its fields and
never import it, so the dependencies only point down to the Forest IR.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._frames import records_frame
from .._validation import check_labels
from ..exporters import (
    pruned_to_catboost,
    pruned_to_lightgbm,
    pruned_to_sklearn,
    pruned_to_xgboost,
)
from ..forest._costs import as_feature_costs, estimator_costs
from ..forest._forest import as_forest
from ..forest._router import route_leaves
from ..routing._routed import RoutedData, stop_map
from ._codec import (
    check_feature_encoding,
    check_names_agree,
    read_pruned,
    save_pruned,
)
from ._lazy import LazyPredictor

__all__ = ["PrunedForest", "acquisition_cost", "load"]

USAGE_BINS = ("never", "1-7", ">7")


class _classifier_only:
    """Method decorator: on a regression forest the attribute does not exist
    (``hasattr`` is False, as for scikit-learn regressors) and reading it raises
    an AttributeError that says what to call instead."""

    def __init__(self, func):
        self.func = func
        self.__doc__ = func.__doc__
        self.__name__ = func.__name__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.func
        if obj.forest.task == "regression":
            raise AttributeError(f"{self.__name__}: this pruned forest is a regressor "
                                 "(task='regression') and has no class probabilities; use "
                                 "predict(X) for the averaged leaf means")
        return self.func.__get__(obj, owner)


class PrunedForest:
    """A pruned forest: every original node either stays a split or is cut.

    A cut internal node becomes a leaf predicting its class distribution (the
    paper's rule); the forest predicts the average of its trees' leaf
    distributions.  For a regression forest (``forest.task == "regression"``)
    a leaf predicts its node's mean target, :meth:`predict` averages them,
    :meth:`score` is R^2 and there is no :meth:`predict_proba`.  For a boosted
    model (an additive ensemble kind) a cut node predicts the raw score of
    ``forest.value`` (set by the pruning's node-value rule, see
    ``docs/math/boosting.md``), and the trees' raw scores are summed onto the
    initial score and linked, as the source library predicts.

    Parameters
    ----------
    forest : Forest
    split_mask : ndarray of bool (n_nodes,)
        True where a node stays a split (closed under parents).
    costs : FeatureCosts, optional
        Costs used by :meth:`acquisition_cost` (uniform when omitted).
    objective : float, optional
        Objective of the pruning, recomputed by the shared evaluation.
    breakdown : ObjectiveBreakdown, optional
    solve_info : dict, optional
        Solver, status, seconds, solver objective, bound, gap, fractionality,
        problem size.
    lam : float, optional
        The trade-off weight the pruning was solved at.
    problem : PruningProblem, optional
        The compiled problem it was solved from (set by :func:`prune_opt.prune`).
    estimator_class : str, optional
        Class name of the source scikit-learn estimator, which
        :meth:`to_sklearn` rebuilds; taken from ``forest.estimator`` when
        omitted (and kept in saved files).
    feature_encoding : dict, optional
        How a table's columns became the features (``columns`` in the order of
        ``X``, text columns' ``categories``, the ``target`` column), as the
        command line records it for ``prune-opt predict``; kept in saved files.
        Its columns must agree with ``forest.feature_names`` and the costs'
        feature names when those are set.

    Attributes
    ----------
    forest, split_mask, costs, objective, breakdown, solve_info, lam, problem,
    estimator_class, feature_encoding
        The parameters, validated (``split_mask`` is an owned boolean copy,
        ``costs`` a :class:`~prune_opt.FeatureCosts`).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> pruned = po.prune(rf, X, y, costs=[1, 1, 5, 5], lam=0.01)
    >>> pruned.predict(X[:3])
    array([0, 0, 0])
    >>> bool(pruned.average_cost(X) <= po.acquisition_cost(rf, X, [1, 1, 5, 5]).mean())
    True
    """

    def __init__(self, forest, split_mask, *, costs=None, objective=None, breakdown=None,
                 solve_info=None, lam=None, problem=None, estimator_class=None,
                 feature_encoding=None):
        self.forest = forest
        self.split_mask = forest.check_split_mask(split_mask)
        self.costs = as_feature_costs(costs, forest.n_features, forest.feature_names)
        self.feature_encoding = feature_encoding
        self.objective = objective
        self.breakdown = breakdown
        self.solve_info = dict(solve_info or {})
        self.lam = lam
        self.problem = problem
        if estimator_class is None:
            estimator_class = forest.source
        self.estimator_class = estimator_class

    @property
    def feature_encoding(self):
        """How a table's columns became the features (see the parameter), or None."""
        return self._feature_encoding

    @feature_encoding.setter
    def feature_encoding(self, enc):
        enc = check_feature_encoding(enc, self.forest.n_features)
        if enc is not None:  # its columns must read X in the order the forest does
            check_names_agree([("feature_encoding.columns", enc["columns"]),
                               ("forest.feature_names", self.forest.feature_names),
                               ("costs.feature_names", self.costs.feature_names)])
        self._feature_encoding = enc

    # ------------------------------------------------------------ structure
    @property
    def classes_(self):
        return self.forest.classes_

    @property
    def n_trees(self):
        return self.forest.n_trees

    @property
    def split_masks(self):
        """Per-tree boolean masks over the original nodes (True = still a split)."""
        return [self.split_mask[self.forest.tree_slice(t)] for t in range(self.n_trees)]

    @property
    def n_splits(self):
        return int(self.split_mask.sum())

    def _pruned_leaves(self, X, t):
        """Local id of the pruned leaf reached by each row in tree t, and the path."""
        ind = self.forest.decision_paths(X, t)
        off = self.forest.node_offset[t]
        split = self.split_mask[ind.indices.astype(np.int64) + off]
        n_split = np.add.reduceat(split.astype(np.int64), ind.indptr[:-1]) if ind.nnz else 0
        leaves = ind.indices[ind.indptr[:-1] + n_split].astype(np.int64)
        return leaves, ind, split

    # ------------------------------------------------------------ prediction
    @property
    def task(self):
        """``"classification"`` or ``"regression"`` (the forest's task)."""
        return self.forest.task

    def _leaves(self, Xc, t):
        return self._pruned_leaves(Xc, t)[0]

    def _stops(self, Xc):
        """(n_trees, n) global ids of the pruned leaf of every row of checked ``Xc`` (or
        of routed rows, :func:`prune_opt.route`) in every tree: rows routed once, then
        one gather (:mod:`prune_opt.routing._routed`)."""
        f = self.forest
        if isinstance(Xc, RoutedData):
            return self._routed(Xc).all_leaves(self.split_mask)
        local = route_leaves(f, Xc)
        return stop_map(f, self.split_mask)[local.T.astype(np.int64) + f.node_offset[:-1, None]]

    def _routed(self, rows):
        """``rows`` (routed rows) when they were routed through this forest's splits."""
        if rows.forest is not self.forest and not rows.forest.same_splits(self.forest):
            raise ValueError("X: these rows were routed through another model's trees "
                             "(prune_opt.route); route them through this pruning's "
                             "forest, or pass the feature matrix")
        return rows

    def _total(self, X):
        """Sum over trees of the pruned leaves' values, in tree order."""
        f = self.forest
        stops = self._stops(X if isinstance(X, RoutedData) else f.check_X(X))
        total = np.zeros((stops.shape[1], f.value_width))
        for t in range(f.n_trees):
            total += f.value[stops[t]]
        return total

    def _combined_value(self, X):
        """The pruned forest's output: averaged leaf values, or a booster's linked raw
        score (see :meth:`prune_opt.Forest.output`), (n, n_classes) or (n, 1).

        Computed in the same order as sklearn (sum over trees, then division
        by the number of trees), so :meth:`to_sklearn` matches bit for bit.
        """
        total = self._total(X)
        return self.forest.output(total, out=total)

    @_classifier_only
    def predict_proba(self, X, *, acquire=None):
        """Class probabilities (classification only): the average of the trees'
        (pruned) leaf class distributions, or a booster's linked raw score.

        Computed in the same order as sklearn (sum over trees, then division
        by the number of trees), so :meth:`to_sklearn` matches bit for bit.

        Parameters
        ----------
        X : array-like of shape (n_examples, n_features)
            With ``acquire``, NaN marks a feature not acquired yet (a
            DataFrame may omit columns).  Rows routed once through this
            forest's splits (:func:`prune_opt.route`) are read without routing
            them again (``predict``, ``score``, ``acquisition_cost`` take them
            too).
        acquire : callable ``acquire(rows, unit)``, optional
            Fetch features on demand instead of reading them from ``X``: see
            :class:`prune_opt.LazyPredictor`, whose ``predict_proba(X).proba``
            this returns (use the predictor itself for the cost paid).
        """
        if acquire is not None:
            return LazyPredictor(self, acquire).predict_proba(X).proba
        return self._combined_value(X)

    def predict(self, X, *, acquire=None):
        """Class with the highest averaged probability, or, for a regression
        forest, the average of the trees' (pruned) leaf means (``acquire``: see
        :meth:`predict_proba`; it works for both tasks).

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> import prune_opt as po
        >>> X, y = load_diabetes(return_X_y=True)
        >>> rf = RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(X, y)
        >>> pruned = po.prune(rf, X, y, lam=0.01)
        >>> pruned.predict(X[:2]).shape, pruned.task
        ((2,), 'regression')
        """
        if acquire is not None:
            return LazyPredictor(self, acquire).predict(X)
        return self.forest.prediction(self._combined_value(X))

    def decision_function(self, X):
        """A boosted model's raw scores (initial score plus the pruned trees' values):
        (n,) for binary classification and regression, (n, n_classes) for
        multiclass, as the source library's ``decision_function`` / ``raw_score``."""
        f = self.forest
        if not f.ensemble.has_raw_score:
            return f.decision_function(X)  # its error: an averaged forest has no raw score
        raw = f.ensemble.raw(self._total(X), f.n_trees)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def next_units(self, X):
        """Dry run of lazy prediction: the units each example must acquire next.

        ``X`` holds NaN for features not known yet; see
        :meth:`prune_opt.LazyPredictor.next_units`.  Nothing is fetched.
        """
        return LazyPredictor(self, _never_called).next_units(X)

    def score(self, X, y):
        """Accuracy on (X, y), or the coefficient of determination R^2 for a
        regression forest (as scikit-learn's regressors)."""
        if self.forest.task == "regression":
            from sklearn.metrics import r2_score

            from ..forest._ensemble import target_unit

            pred = self.predict(X)
            y = check_labels(self.forest, y, pred.shape[0])
            unit = target_unit(y)  # R^2 is scale-free; squares of 1e160 are not finite
            return float(r2_score(y / unit, pred / unit))
        pred = np.argmax(self._combined_value(X), axis=1)
        return float(np.mean(pred == check_labels(self.forest, y, pred.shape[0])))

    # ------------------------------------------------------------ costs
    def used_features(self, X):
        """Sparse (n_examples, n_features) count of trees whose pruned path tests
        each feature (already checked X)."""
        f = self.forest
        counts = np.zeros((X.shape[0], f.n_features), dtype=np.int32)
        routed = RoutedData(f, X)
        for t in range(f.n_trees):
            counts += routed.used(self.split_mask, trees=[t])
        return sp.csr_matrix(counts.astype(float))

    def acquisition_cost(self, X, costs=None):
        """Cost each example actually pays: every unit it needs, once.

        Parameters
        ----------
        X : array-like (n_examples, n_features), or rows routed once
            (:func:`prune_opt.route`) through this forest's splits
        costs : FeatureCosts or array-like, optional
            Defaults to the costs the forest was pruned with.

        Returns
        -------
        ndarray of shape (n_examples,)
        """
        fc = self.costs if costs is None else as_feature_costs(
            costs, self.forest.n_features, self.forest.feature_names)
        if isinstance(X, RoutedData):
            return self._routed(X).row_costs(self.split_mask, fc)
        return RoutedData(self.forest, self.forest.check_X(X)).row_costs(self.split_mask, fc)

    def average_cost(self, X, costs=None):
        """Mean of :meth:`acquisition_cost`."""
        return float(self.acquisition_cost(X, costs).mean())

    def feature_usage(self, X):
        """Share of examples using each feature in 0, 1-7 and >7 trees (paper's Table 1).

        Returns
        -------
        pandas.DataFrame
            One row per feature, columns ``feature``, ``never``, ``1-7``, ``>7``.
        """
        Xc = self.forest.check_X(X)
        counts = self.used_features(Xc).toarray()
        # a forest fitted on an array has no names; the costs often do (bundled datasets,
        # CSV headers, cost files)
        names = (self.forest.feature_names or self.costs.feature_names
                 or [f"x{k}" for k in range(self.forest.n_features)])
        records = []
        for k, name in enumerate(names):
            c = counts[:, k]
            records.append({"feature": name, "never": float(np.mean(c == 0)),
                            "1-7": float(np.mean((c >= 1) & (c <= 7))),
                            ">7": float(np.mean(c > 7))})
        return records_frame(records, columns=["feature", *USAGE_BINS])

    # ------------------------------------------------------------ export
    def pruned_tree_arrays(self, t):
        """Arrays of tree t after pruning, renumbered (cut subtrees dropped)."""
        f = self.forest
        sl = f.tree_slice(t)
        mask = self.split_mask[sl]
        off = sl.start
        parent = f.parent[sl]
        keep = np.ones(mask.size, dtype=bool)
        has_parent = parent >= 0
        keep[has_parent] = mask[parent[has_parent] - off]
        old = np.flatnonzero(keep)
        new_id = np.full(mask.size, -1, dtype=np.int64)
        new_id[old] = np.arange(old.size)
        left = f.left[sl][old]
        right = f.right[sl][old]
        is_split = mask[old]
        return {
            "old_ids": old,
            "left": np.where(is_split, new_id[np.maximum(left - off, 0)], -1),
            "right": np.where(is_split, new_id[np.maximum(right - off, 0)], -1),
            "feature": np.where(is_split, f.feature[sl][old], -2),
            "threshold": np.where(is_split, f.threshold[sl][old], -2.0),
            "value": f.value[sl][old],
            "missing_go_to_left": f.missing_go_to_left[sl][old],
        }

    def to_sklearn(self):
        """A fitted sklearn estimator of the source's class holding the pruned trees.

        For forests built from arrays (forest_builders, loaded JSON, sub-forests)
        the result is of the recorded ``estimator_class`` when that is one of
        the eight supported scikit-learn classes (an ``ExtraTreesClassifier``
        stays one), else a ``RandomForestClassifier`` (``RandomForestRegressor``
        for a regression forest).  ``predict_proba``
        (regression: ``predict``) is identical to this object's.  The estimator is independent of this object
        and of the source estimator (refitting either changes nothing here).
        """
        return pruned_to_sklearn(self)

    def to_lightgbm(self):
        """A ``lightgbm.Booster`` of the pruned trees of a boosted forest, predicting
        exactly as this object (raw scores, probabilities, leaves) and asking for
        the same features; see :func:`prune_opt.exporters.pruned_to_lightgbm`."""
        return pruned_to_lightgbm(self)

    def to_xgboost(self):
        """An ``xgboost.Booster`` holding the pruned trees of a boosted float32 model (read
        from XGBoost or scikit-learn's ``GradientBoosting*``): it asks for the same
        features and predicts the same to XGBoost's float32 precision.  Needs XGBoost
        (``pip install prune-opt[xgboost]``); see
        :func:`prune_opt.exporters._xgboost.xgboost_model_json` for the rules and what is
        refused.
        """
        return pruned_to_xgboost(self)

    def to_catboost(self):
        """A ``CatBoostClassifier`` (``CatBoostRegressor``) of a pruned model read from
        CatBoost, predicting exactly as this object (raw scores, probabilities, NaN
        included) and depending on no feature it does not ask for.  A pruned
        symmetric tree keeps its levels, its leaves taking the values of the pruned
        nodes above them; Depthwise and Lossguide trees hold the pruned trees.  Needs
        CatBoost (``pip install prune-opt[catboost]``); see
        :mod:`prune_opt.exporters._catboost` for the rules and
        :func:`~prune_opt.exporters.catboost_model_json` for the JSON model alone.
        """
        return pruned_to_catboost(self)

    def save(self, path):
        """Write the pruned forest as JSON (no pickle; see :func:`prune_opt.load`).

        The file is written atomically: on any error the previous file, if
        any, is left as it was.
        """
        save_pruned(self, path)

    def __repr__(self):
        obj = "" if self.objective is None else f", objective={self.objective:.6g}"
        return (f"PrunedForest(n_trees={self.n_trees}, splits={self.n_splits}/"
                f"{int((~self.forest.is_leaf).sum())}{obj})")


def acquisition_cost(forest, X, costs=None):
    """Per-example acquisition cost of an (unpruned) forest.

    Parameters
    ----------
    forest : fitted estimator, Forest or PrunedForest
    X : array-like (n_examples, n_features)
    costs : FeatureCosts, array-like or mapping, optional
        Default: the costs a cost-aware grower was fitted with (``costs_``),
        else uniform.

    Returns
    -------
    ndarray of shape (n_examples,)

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y)
    >>> po.acquisition_cost(tree, X[:2], [1, 2, 3, 4])
    array([4., 4.])
    """
    if isinstance(forest, PrunedForest):
        return forest.acquisition_cost(X, costs)
    f = as_forest(forest)
    pf = PrunedForest(f, f.full_split_mask(), costs=estimator_costs(forest, costs))
    return pf.acquisition_cost(X)


def load(path):
    """Load a pruned forest written by :meth:`PrunedForest.save`.

    Parsing is plain JSON: nothing in the file is executed or looked up by
    name.  Every field is checked against the schema; a truncated, tampered
    or foreign file raises ``ValueError`` naming the field at fault.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    PrunedForest

    Examples
    --------
    >>> import tempfile, os
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> pruned = po.prune(rf, X, y, lam=0.01)
    >>> path = os.path.join(tempfile.mkdtemp(), "pruned.json")
    >>> pruned.save(path)
    >>> bool((po.load(path).predict_proba(X) == pruned.predict_proba(X)).all())
    True
    """
    return PrunedForest(**read_pruned(path))


def _never_called(rows, unit):  # pragma: no cover - a dry run fetches nothing
    raise RuntimeError("next_units is a dry run and never acquires anything")
