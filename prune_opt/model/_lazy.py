"""Lazy prediction: acquire each feature only when a pruned tree asks for it.

A :class:`PrunedForest` is cheaper only if the features it skips are never
acquired.  :class:`LazyPredictor` walks every pruned tree level by level.
When examples reach a split on a feature they do not know yet, the
acquisition units that feature needs (its own unit, a shared group unit, the
units of the features it is computed from) are fetched through a user
callback, for all such examples in one call per unit, and every unit is
fetched at most once per example.  Prediction on a full ``X`` is the special
case in which every feature is already known.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["LazyPredictor", "LazyPrediction", "Unit"]


@dataclass(frozen=True)
class Unit:
    """One acquisition unit, as handed to the ``acquire`` callback.

    Attributes
    ----------
    index : int
        Column of the unit in ``FeatureCosts.unit_costs``.
    name : str
        ``FeatureCosts.unit_names[index]`` (a feature name, or ``"group:<name>"``).
    cost : float
        What one example pays for it.
    features : tuple of int
        Feature columns whose values this unit reveals: ``(k,)`` for feature
        k's own unit, ``()`` for a shared group unit (a blood draw that only
        enables its member tests).
    """

    index: int
    name: str
    cost: float
    features: tuple


@dataclass
class LazyPrediction:
    """What a lazy prediction returns.

    Attributes
    ----------
    proba : ndarray (n_examples, n_classes)
        Identical to ``PrunedForest.predict_proba`` on the completed features;
        for a regression forest, (n_examples, 1) averaged leaf means.
    classes : ndarray (n_classes,) or None
        None for a regression forest.
    cost_paid : ndarray (n_examples,)
        Cost of the units fetched through ``acquire`` for each example.
    units_fetched : scipy.sparse.csr_matrix of bool (n_examples, n_units)
        Which units were fetched for each example (each at most once).
    X : ndarray (n_examples, n_features)
        The input completed with every fetched value (NaN where never needed).
    n_calls : int
        Number of ``acquire`` calls made.
    """

    proba: np.ndarray
    classes: np.ndarray
    cost_paid: np.ndarray
    units_fetched: sp.csr_matrix
    X: np.ndarray
    n_calls: int

    @property
    def labels(self):
        """Predicted class of each example (classification)."""
        if self.classes is None:
            raise AttributeError("labels: a regression forest predicts values; use .values")
        return self.classes.take(np.argmax(self.proba, axis=1), axis=0)

    @property
    def values(self):
        """Predicted value of each example (regression): ``PrunedForest.predict``."""
        if self.classes is not None:
            raise AttributeError("values: a classification forest predicts labels; use "
                                 ".labels (or .proba)")
        return self.proba[:, 0]

    @property
    def predictions(self):
        """What ``PrunedForest.predict`` returns: labels, or values for regression."""
        return self.labels if self.classes is not None else self.values


class LazyPredictor:
    """Predict with a pruned forest, acquiring features on demand.

    Parameters
    ----------
    pruned : PrunedForest
        Any pruned forest (an unpruned one is ``po.prune(..., lam=0)`` or a
        ``PrunedForest(forest, forest.full_split_mask())``).
    acquire : callable ``acquire(rows, unit) -> values``
        ``rows`` is an int ndarray of example indices (into the ``X`` given
        to :meth:`predict_proba`), ``unit`` a :class:`Unit`.  It returns an
        array of shape ``(len(rows), len(unit.features))`` (or
        ``(len(rows),)`` for a one-feature unit) with the revealed values; a
        group unit (no features) may return ``None``.  A returned NaN is a
        real missing value, routed as the trees route missing values.  A
        pandas Series or DataFrame indexed by the requested rows is matched by
        label, in any order; complex or masked values, ``None`` among the
        values and text (even numeric strings) are refused.
    costs : FeatureCosts, optional
        Defaults to the costs the forest was pruned with; when given, the
        units fetched and ``cost_paid`` follow these costs.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> pruned = po.prune(rf, X, y, costs=[1, 1, 5, 5], lam=0.01)
    >>> lazy = po.LazyPredictor(pruned, lambda rows, unit: X[rows, unit.features[0]])
    >>> out = lazy.predict_proba(np.full((150, 4), np.nan))
    >>> bool((out.proba == pruned.predict_proba(X)).all())
    True
    >>> bool(np.allclose(out.cost_paid, pruned.acquisition_cost(X)))
    True
    """

    def __init__(self, pruned, acquire, *, costs=None):
        from ..forest._costs import as_feature_costs

        if not callable(acquire):
            raise TypeError(f"acquire must be a callable acquire(rows, unit), got "
                            f"{type(acquire).__name__}")
        if not all(hasattr(pruned, a) for a in ("forest", "split_mask", "costs")):
            raise TypeError(f"pruned must be a PrunedForest (from prune_opt.prune or fit_budget; "
                            f"an unpruned forest is po.prune(..., lam=0)), got "
                            f"{type(pruned).__name__}")
        self.pruned = pruned
        self.acquire = acquire
        f = pruned.forest
        self.costs = pruned.costs if costs is None else as_feature_costs(
            costs, f.n_features, f.feature_names)
        self._units = _describe_units(self.costs)
        self._order = _fetch_order(self.costs)
        self._feature_units = self.costs.feature_units.tocsr()  # once, not per level

    # ------------------------------------------------------------ public
    def predict_proba(self, X):
        """Route ``X`` (NaN = not acquired yet), fetching what the trees ask for.

        Returns
        -------
        LazyPrediction
        """
        state = _State(self.pruned, _partial_matrix(self.pruned.forest, X), self.costs)
        while True:
            active, rows, feats = state.waiting()
            if active.size == 0:
                break
            self._fetch(state, rows, feats)
            state.advance(active, rows, feats)
        return state.result()

    def predict(self, X):
        """Predicted labels, or values for a regression forest (see
        :meth:`predict_proba` for the full record)."""
        return self.predict_proba(X).predictions

    def next_units(self, X):
        """Dry run: units each example must acquire before any tree can go further.

        Routes as far as the known features allow (NaN = unknown) and reports,
        per example, the units its blocked splits need, prerequisites first.
        Nothing is fetched.

        Returns
        -------
        list of list of str
            Unit names per example; an empty list means the prediction is
            already determined by what is known.
        """
        state = _State(self.pruned, _partial_matrix(self.pruned.forest, X), self.costs)
        while True:
            active, rows, feats = state.waiting()
            known = state.known[rows, feats]
            if not known.any():
                break
            state.advance(active[known], rows[known], feats[known])
        rows, units = self._missing_units(state, rows, feats)
        rank = np.empty(self._order.size, dtype=np.int64)
        rank[self._order] = np.arange(self._order.size)
        out = [[] for _ in range(state.n)]
        for i, u in sorted(zip(rows.tolist(), units.tolist()), key=lambda p: (p[0], rank[p[1]])):
            out[i].append(self.costs.unit_names[u])
        return out

    # ------------------------------------------------------------ internals
    def _missing_units(self, state, rows, feats):
        """Distinct (example, unit) pairs still unpaid for the blocked splits."""
        need = ~state.known[rows, feats]
        rows, feats = rows[need], feats[need]
        fu = self._feature_units
        counts = np.diff(fu.indptr)[feats]
        rows = np.repeat(rows, counts)
        starts = np.repeat(fu.indptr[feats], counts)
        within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        units = fu.indices[starts + within].astype(np.int64)
        unpaid = ~state.paid[rows, units]
        key = np.unique(rows[unpaid] * self.costs.n_units + units[unpaid])
        return key // self.costs.n_units, key % self.costs.n_units

    def _fetch(self, state, example_rows, feats):
        rows, units = self._missing_units(state, example_rows, feats)
        for u in self._order:  # groups and prerequisites before the feature itself
            sel = rows[units == u]
            if sel.size:
                unit = self._units[u]
                values = self.acquire(sel.copy(), unit)
                state.store(sel, unit, _check_values(values, sel, unit))
        # a feature with every unit paid (e.g. a free derived feature) is known
        still = ~state.known[example_rows, feats]
        if still.any():
            bad = int(feats[still][0])
            raise RuntimeError(f"feature {bad} is still unknown after its units were fetched; "
                               "its own unit must reveal its value")


class _State:
    """Routing state of every (example, tree) pair and what each example knows."""

    def __init__(self, pruned, X, costs):
        f = pruned.forest
        self.forest, self.split_mask = f, pruned.split_mask
        self.X = X
        self.n = X.shape[0]
        self.known = ~np.isnan(X)
        self.paid = np.zeros((self.n, costs.n_units), dtype=bool)
        self.paid[:, :f.n_features] = self.known  # a feature known up front: its own unit is paid
        self.fetched = np.zeros_like(self.paid)
        self.unit_costs = costs.unit_costs  # the predictor's costs, not the pruning's
        self.node = np.ascontiguousarray(np.repeat(f.node_offset[:-1][None, :].astype(np.int64),
                                                     self.n, axis=0))
        self.n_calls = 0

    def waiting(self):
        """Flat (example * T + tree) ids of the pairs at a kept split, their example,
        and the split's feature."""
        flat = self.node.reshape(-1)
        active = np.flatnonzero(self.split_mask[flat])
        return active, active // self.forest.n_trees, self.forest.feature[flat[active]]

    def store(self, rows, unit, values):
        self.n_calls += 1
        self.paid[rows, unit.index] = True
        self.fetched[rows, unit.index] = True
        for j, k in enumerate(unit.features):
            self.X[rows, k] = values[:, j]
            self.known[rows, k] = True

    def advance(self, active, rows, feats):
        """Move the given pairs one level down (their features are known)."""
        f = self.forest
        flat = self.node.reshape(-1)  # a view: node is C-contiguous
        h = flat[active]
        x = self.X[rows, feats].astype(f.split_dtype)  # the source's comparison dtype
        go_left = x <= f.threshold[h]
        nan = np.isnan(x)
        if nan.any():
            if not f.allow_nan:
                raise ValueError("acquire returned NaN for a forest that cannot route missing "
                                 "values; return real values")
            go_left = np.where(nan, f.missing_go_to_left[h].astype(bool), go_left)
        flat[active] = np.where(go_left, f.left[h], f.right[h])

    def result(self):
        f = self.forest
        total = np.zeros((self.n, f.value_width))
        for t in range(f.n_trees):  # same summation order as PrunedForest.predict_proba
            total += f.value[self.node[:, t]]
        proba = f.output(total, out=total)
        cost = self.fetched.astype(float) @ self.unit_costs
        return LazyPrediction(proba=proba, classes=f.classes_, cost_paid=cost,
                              units_fetched=sp.csr_matrix(self.fetched), X=self.X,
                              n_calls=self.n_calls)


def _describe_units(costs):
    n = costs.n_features
    return [Unit(index=u, name=costs.unit_names[u], cost=float(costs.unit_costs[u]),
                 features=(u,) if u < n else ()) for u in range(costs.n_units)]


def _fetch_order(costs):
    """Group units first, then own units by the size of their feature's unit closure
    (a feature computed from others has a strictly larger closure than each of them)."""
    closure_size = np.diff(costs.feature_units.tocsr().indptr)
    own = np.argsort(closure_size, kind="stable")
    groups = np.arange(costs.n_features, costs.n_units)
    return np.concatenate([groups, own]).astype(np.int64)


def _partial_matrix(forest, X):
    """Float copy of ``X`` with NaN for unknown values (a DataFrame may omit columns)."""
    names = forest.feature_names
    if hasattr(X, "columns") and hasattr(X, "reindex"):
        if names is None:
            raise ValueError("X is a DataFrame but the forest has no feature names; pass an "
                             "array with one column per feature (NaN = not acquired)")
        unknown = [c for c in X.columns if str(c) not in names]
        if unknown:
            raise ValueError(f"X has columns the forest does not know: {unknown[:5]}")
        cols = X.columns.map(str)
        if cols.has_duplicates:
            raise ValueError(f"X has duplicated columns {sorted(set(cols[cols.duplicated()]))}; "
                             "pass each feature once")
        X = X.rename(columns=str).reindex(columns=names)
    if sp.issparse(X):
        raise TypeError("X is a scipy sparse matrix; pass a dense array with NaN for the "
                        "features not acquired yet")
    if np.iscomplexobj(X):
        raise TypeError("X is complex; pass real values (NaN for features not acquired yet)")
    try:
        arr = np.array(X, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("X must be numeric, with NaN for features not acquired yet") from None
    if arr.ndim != 2 or arr.shape[1] != forest.n_features:
        raise ValueError(f"X must have shape (n_examples, {forest.n_features}) with NaN for "
                         f"features not acquired yet, got {arr.shape}")
    if np.isinf(arr).any():
        raise ValueError("X contains inf; replace infinite values")
    return arr


def _align_by_label(values, rows, unit):
    """A pandas result indexed by the requested rows in another order is aligned by
    label (as costs are matched by name), never taken by position."""
    index = getattr(values, "index", None)
    if index is None or not hasattr(values, "reindex") or len(index) != rows.size:
        return values
    labels = np.asarray(index)
    if np.array_equal(labels, rows):
        return values
    if labels.dtype.kind not in "iu" or np.array_equal(labels, np.arange(rows.size)):
        return values  # positional: a fresh RangeIndex, or labels that are not row numbers
    if index.has_duplicates or not np.array_equal(np.sort(labels), np.sort(rows)):
        raise ValueError(f"acquire returned a pandas object for unit {unit.name!r} whose "
                         "integer index is not the requested rows; index it by rows (any "
                         "order) or return a plain array in the order of rows")
    return values.reindex(rows)


def _refuse_junk(values, unit):
    """Refuse what numpy would quietly turn into numbers: None (read as NaN, a missing
    value) and strings or bytes (``"1.5"`` parsed as 1.5)."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError):  # ragged: the float conversion names it
        return
    if raw.dtype.kind in "Mm":
        raise TypeError(f"acquire returned dates or durations ({raw.dtype}) for unit "
                        f"{unit.name!r}; return numbers, with NaN for a missing value")
    if raw.dtype.kind in "USV":
        raise TypeError(f"acquire returned non-numeric text ({raw.dtype}) for unit {unit.name!r}; return "
                        "numbers, with NaN for a missing value")
    if raw.dtype == object:
        kinds = set(map(type, raw.ravel()))  # one C-level pass over the values
        if type(None) in kinds:
            raise TypeError(f"acquire returned None among the values for unit {unit.name!r}; "
                            "return numbers, with NaN (not None) for a missing value")
        if any(issubclass(k, (str, bytes)) for k in kinds):
            raise TypeError(f"acquire returned non-numeric text for unit {unit.name!r}; return numbers, "
                            "with NaN for a missing value")


def _check_values(values, rows, unit):
    n_rows, width = rows.size, len(unit.features)
    if values is None:
        if width:
            raise ValueError(f"acquire returned None for unit {unit.name!r}, which reveals "
                             f"feature(s) {list(unit.features)}; return their values")
        return np.empty((n_rows, 0))
    values = _align_by_label(values, rows, unit)
    if np.ma.isMaskedArray(values):
        raise TypeError(f"acquire returned a masked array for unit {unit.name!r}; return a plain "
                        "array with NaN for missing values")
    if np.iscomplexobj(values):
        raise TypeError(f"acquire returned complex values for unit {unit.name!r}; return real "
                        "values")
    _refuse_junk(values, unit)
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"acquire returned non-numeric values for unit {unit.name!r}") from None
    if arr.ndim == 1 and width == 1:
        arr = arr[:, None]
    if arr.shape != (n_rows, width):
        raise ValueError(f"acquire returned shape {arr.shape} for unit {unit.name!r} and "
                         f"{n_rows} rows; expected ({n_rows}, {width})"
                         + (" or a 1-D array" if width == 1 else ""))
    if np.isinf(arr).any():
        raise ValueError(f"acquire returned inf for unit {unit.name!r}")
    return arr
