"""Feature acquisition costs: features need *acquisition units*, units cost money.

An example pays for a unit the first time any split it reaches needs it; every
unit is paid at most once per example.  Plain per-feature costs are the special
case "each feature is its own unit".
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from .._validation import check_nonneg_scalar

# cost_of_usage works densely up to this many (example, unit) cells
_DENSE_CELLS = 1 << 22

__all__ = ["FeatureCosts", "as_feature_costs", "estimator_costs"]


def _parse_names(feature_names):
    names = None if feature_names is None else [str(n) for n in feature_names]
    if names is not None and len(set(names)) != len(names):
        raise ValueError("feature_names contains duplicates; pass unique column names")
    return names


def _series_to_container(costs):
    """A pandas Series keyed by feature name becomes a dict (matched by name); one with
    integer labels 0..n-1 (a default RangeIndex, in any order) is positional by label."""
    index, values = costs.index, costs.to_numpy()
    if index.has_duplicates:
        raise ValueError("costs is a Series with duplicated index labels; pass one cost per "
                         "feature")
    if index.dtype.kind in "iu":
        labels = index.to_numpy()
        if not np.array_equal(np.sort(labels), np.arange(labels.size)):
            raise ValueError("costs is a Series with integer labels that are not the feature "
                             "positions 0..n-1; index it by feature name or by position")
        return values[np.argsort(labels)]
    return dict(zip(index.tolist(), values.tolist()))


def _own_costs_from_mapping(costs, names):
    if names is None:
        raise ValueError(
            "costs is a mapping keyed by feature name, so feature_names is required "
            "(pass feature_names=list(X.columns) or the estimator's feature_names_in_)"
        )
    unknown = [k for k in costs if str(k) not in names]
    if unknown:
        raise ValueError(f"costs names unknown features {unknown}; known features are {names}")
    own = np.full(len(names), np.nan)
    for key, value in costs.items():
        own[names.index(str(key))] = check_nonneg_scalar(value, f"costs[{key!r}]")
    return own


def _own_costs_from_array(costs, names, has_requires):
    if isinstance(costs, (str, bytes)) or costs is None:
        raise TypeError(
            "costs must be an array-like of per-feature costs, a mapping "
            f"{{feature_name: cost}} or a FeatureCosts, got {type(costs).__name__}"
        )
    try:
        own = np.asarray(costs, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("costs must be numeric (array-like of per-feature costs or a mapping)"
                        ) from None
    if own.ndim != 1 or own.size == 0:
        raise ValueError(f"costs must be 1-D with one entry per feature, got shape {own.shape}")
    if names is not None and len(names) != own.size:
        raise ValueError(f"costs has {own.size} entries but feature_names has {len(names)}; "
                         "pass one cost per feature")
    if np.isnan(own).any() and not has_requires:
        bad = np.flatnonzero(np.isnan(own)).tolist()
        raise ValueError(f"costs has NaN at feature indices {bad}; pass a cost for every "
                         "feature (or declare derived features in requires)")
    if np.isinf(own).any():
        raise ValueError("costs must be finite; got inf")
    if (own[~np.isnan(own)] < 0).any():
        bad = np.flatnonzero(own < 0).tolist()
        raise ValueError(f"costs must be non-negative; negative at feature indices {bad}")
    return own


def _parse_own_costs(costs, names, has_requires):
    """Own cost of every feature (NaN where ``requires`` must supply it)."""
    if isinstance(costs, FeatureCosts):
        raise TypeError("costs is already a FeatureCosts; pass it directly instead of wrapping")
    if type(costs).__name__ == "Series" and hasattr(costs, "index"):
        costs = _series_to_container(costs)
    if isinstance(costs, Mapping):
        return _own_costs_from_mapping(costs, names)
    return _own_costs_from_array(costs, names, has_requires)


def _feature_indexer(names, n):
    """``index(f, what)``: column index of a feature given by index or by name."""

    def index(f, what):
        if isinstance(f, (int, np.integer)) and not isinstance(f, (bool, np.bool_)):
            if not 0 <= int(f) < n:
                raise ValueError(f"{what}: feature index {f} out of range [0, {n})")
            return int(f)
        if names is None:
            raise ValueError(
                f"{what} refers to feature {f!r} by name but feature_names was not given")
        if str(f) not in names:
            raise ValueError(f"{what} names unknown feature {f!r}; known features: {names}")
        return names.index(str(f))

    return index


def _as_members(members):
    """One feature (index or name) or an iterable of them, as a list."""
    if isinstance(members, (str, bytes, int, np.integer)):
        return [members]
    return list(members)


def _parse_groups(groups, index):
    """``[(name, cost, [member indices])]``, members normalised once; no overlaps."""
    parsed, owner = [], {}
    for gname, spec in dict(groups or {}).items():
        try:
            gcost, members = spec
        except (TypeError, ValueError):
            raise TypeError(
                f"groups[{gname!r}] must be a pair (group_cost, [member features])") from None
        gcost = check_nonneg_scalar(gcost, f"groups[{gname!r}] cost")
        idx = []
        for m in _as_members(members):
            k = index(m, f"groups[{gname!r}]")
            if k in owner:
                raise ValueError(
                    f"feature {m!r} is in both group {owner[k]!r} and {gname!r}; groups must "
                    "not overlap (make a feature need both via requires instead)")
            owner[k] = gname
            idx.append(k)
        parsed.append((str(gname), gcost, idx))
    return parsed


def _parse_requires(requires, index):
    """``{feature index: sorted direct dependency indices}`` (self-loops dropped)."""
    req = {}
    for f, deps in dict(requires or {}).items():
        k = index(f, "requires")
        req[k] = sorted({index(d, f"requires[{f!r}]") for d in _as_members(deps)} - {k})
    return req


def _find_cycle(remaining, req, label):
    """A dependency cycle among ``remaining`` features (each waits on another one)."""
    k, path, seen = next(iter(remaining)), [], {}
    while k not in seen:
        seen[k] = len(path)
        path.append(k)
        k = next(d for d in req[k] if d in remaining)
    cycle = path[seen[k]:] + [k]
    return " -> ".join(str(label(c)) for c in cycle)


def _topological_order(req, n, label):
    """Features, each after those it requires (Kahn's algorithm, no recursion).

    Features left over lie on a ``requires`` cycle, which is reported as a path.
    """
    waiting = np.zeros(n, dtype=np.int64)
    dependents = [[] for _ in range(n)]
    for k, deps in req.items():
        waiting[k] = len(deps)
        for d in deps:
            dependents[d].append(k)
    ready = [int(k) for k in np.flatnonzero(waiting == 0)]
    order = []
    while ready:  # loop over features, each once
        k = ready.pop()
        order.append(k)
        for j in dependents[k]:
            waiting[j] -= 1
            if waiting[j] == 0:
                ready.append(j)
    remaining = set(np.flatnonzero(waiting > 0).tolist())
    if remaining:
        raise ValueError(f"requires has a cycle: {_find_cycle(remaining, req, label)}; a "
                         "feature cannot be computed from itself")
    return order


def _requires_closure(needs, req, label):
    """Units each feature needs, transitively through ``requires`` (bool CSR).

    ``needs`` is the (n_features, n_units) incidence before ``requires``.
    Features that require nothing keep their row; the others are resolved in
    topological order, each as the sorted union of its own units and its
    dependencies' closures (a loop over those features only, so a chain of
    any length works and plain costs cost nothing extra).
    """
    n = needs.shape[0]
    order = _topological_order(req, n, label)
    closure = {}
    for k in (k for k in order if req.get(k)):
        parts = [needs.indices[needs.indptr[k]:needs.indptr[k + 1]]]
        parts += [closure.get(d, needs.indices[needs.indptr[d]:needs.indptr[d + 1]])
                  for d in req[k]]
        units = np.sort(np.concatenate(parts))
        closure[k] = units[np.concatenate(([True], units[1:] != units[:-1]))]
    if not closure:
        return needs
    plain = needs.tocoo()
    keep = ~np.isin(plain.row, np.fromiter(closure, dtype=np.int64))
    rows = np.concatenate([plain.row[keep]] + [np.full(c.size, k) for k, c in closure.items()])
    cols = np.concatenate([plain.col[keep]] + list(closure.values()))
    return sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, cols)), shape=needs.shape)


class FeatureCosts:
    """What an example pays to use each feature.

    Costs are paid per *acquisition unit* (a lab test, a descriptor, a blood
    draw).  Each feature needs a set of units: by default its own unit costing
    ``costs[k]``; members of a *group* additionally need the group's shared
    unit; a feature that *requires* other features needs their units too.  An
    example pays every unit it needs once, however many splits ask for it.

    Parameters
    ----------
    costs : array-like of shape (n_features,) or mapping
        Own cost of each feature.  A mapping is keyed by feature name (then
        ``feature_names`` is required); features absent from the mapping must
        be covered by ``requires`` (their own cost is then 0).
    groups : mapping, optional
        ``{group_name: (group_cost, [member features])}``.  Using any member
        pays the group's unit once (e.g. one image descriptor computed for
        several features, or a blood draw shared by two tests).
    requires : mapping, optional
        ``{feature: [features it is computed from]}``.  Using the feature pays
        for the units of those features that the example has not paid yet
        (thyroid's FTI is computed from TT4 and T4U).  Applied transitively.
    feature_names : sequence of str, optional
        Names of the features in column order.  Needed when costs, groups or
        requires refer to features by name.

    Attributes
    ----------
    n_features : int
    unit_costs : ndarray of shape (n_units,)
    unit_names : list of str
    feature_units : scipy.sparse.csr_matrix of shape (n_features, n_units)
        Boolean incidence: which units each feature needs.

    Examples
    --------
    >>> from prune_opt import FeatureCosts
    >>> fc = FeatureCosts({"TT4": 14.51, "T4U": 11.41, "age": 1.0},
    ...                   requires={"FTI": ["TT4", "T4U"]},
    ...                   feature_names=["age", "TT4", "T4U", "FTI"])
    >>> fc.feature_cost()          # cost of each feature used alone
    array([ 1.  , 14.51, 11.41, 25.92])
    >>> fc.cost_of([1, 3])         # TT4 then FTI: T4U is the only extra unit
    25.92
    """

    def __init__(self, costs, *, groups=None, requires=None, feature_names=None):
        names = _parse_names(feature_names)
        own = _parse_own_costs(costs, names, has_requires=requires is not None)
        n = own.size
        self.n_features = int(n)
        self.feature_names = names
        index = _feature_indexer(names, n)
        req = _parse_requires(requires, index)
        missing = [k for k in np.flatnonzero(np.isnan(own)) if k not in req]
        if missing:
            label = [names[k] for k in missing] if names else missing
            raise ValueError(f"no cost given for features {label}; pass a cost for each, or "
                             "declare them in requires if they are computed from other features")
        own = np.where(np.isnan(own), 0.0, own)
        group_list = _parse_groups(groups, index)
        self._build_units(own, group_list, req)
        self._spec = {
            "costs": own.tolist(),
            "groups": {g: [c, members] for g, c, members in group_list},
            "requires": {str(k): v for k, v in req.items()},
            "feature_names": names,
        }

    def _build_units(self, own, group_list, req):
        """Units (own + one per group) and the feature-to-unit incidence with requires."""
        n, names = own.size, self.feature_names
        self.unit_names = [names[k] if names else f"x{k}" for k in range(n)]
        self.unit_names += [f"group:{g}" for g, _, _ in group_list]
        self.unit_costs = np.concatenate([own, [c for _, c, _ in group_list]]).astype(float)
        members = [np.asarray(m, dtype=np.int64) for _, _, m in group_list]
        rows = np.concatenate([np.arange(n)] + members)
        cols = np.concatenate([np.arange(n)] + [np.full(m.size, n + g)
                                                 for g, m in enumerate(members)])
        needs = sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, cols)),
                              shape=(n, self.unit_costs.size))
        needs.sort_indices()
        self.feature_units = _requires_closure(
            needs, req, lambda k: names[k] if names else k)

    # ------------------------------------------------------------------ basics
    @property
    def n_units(self):
        return int(self.unit_costs.size)

    def feature_cost(self):
        """Cost of each feature when it is the only one an example uses."""
        return np.asarray(self.feature_units @ self.unit_costs, dtype=float).ravel()

    def cost_of(self, features):
        """Cost an example pays for using the given set of features.

        Parameters
        ----------
        features : iterable of int
            Feature indices the example uses (repeats are fine).
        """
        idx = np.unique(np.asarray(list(features), dtype=int))
        if idx.size == 0:
            return 0.0
        units = np.unique(self.feature_units[idx].indices)
        return float(self.unit_costs[units].sum())

    def cost_of_usage(self, used):
        """Per-example cost from a boolean (n_examples, n_features) usage matrix.

        Parameters
        ----------
        used : array-like or sparse matrix of shape (n_examples, n_features)
            ``used[i, k]`` is True when example ``i`` uses feature ``k``.

        Returns
        -------
        ndarray of shape (n_examples,)
        """
        if used.shape[1] != self.n_features:
            raise ValueError(
                f"usage matrix has {used.shape[1]} features, costs cover {self.n_features}"
            )
        if not sp.issparse(used) and used.shape[0] * self.n_units <= _DENSE_CELLS:
            # small dense usage: one sparse-times-dense product, no conversions
            units = (self.feature_units.T.astype(float) @ np.asarray(used, dtype=float).T) > 0
            return units.T.astype(float) @ self.unit_costs
        used = sp.csr_matrix(used, dtype=float)
        units = (used @ self.feature_units.astype(float)) > 0
        return np.asarray(units.astype(float) @ self.unit_costs).ravel()

    def check_n_features(self, n_features, feature_names=None):
        """Raise a clear error if these costs do not fit a model's features."""
        if n_features != self.n_features:
            raise ValueError(
                f"costs cover {self.n_features} features but the forest was fitted on "
                f"{n_features}; pass one cost per feature column"
            )
        if feature_names is not None and self.feature_names is not None:
            fn = [str(f) for f in feature_names]
            if fn != self.feature_names:
                raise ValueError(
                    "costs feature_names do not match the forest's feature_names_in_: "
                    f"{self.feature_names} vs {fn}; build the costs with the same columns"
                )

    def to_dict(self):
        """JSON-serialisable description (inverse of :meth:`from_dict`)."""
        return json.loads(json.dumps(self._spec))

    @classmethod
    def from_dict(cls, spec):
        """Rebuild from :meth:`to_dict` output."""
        if not isinstance(spec, Mapping) or "costs" not in spec:
            raise ValueError("a FeatureCosts description must be a mapping with a 'costs' entry")
        groups = {g: (v[0], v[1]) for g, v in dict(spec.get("groups") or {}).items()}
        requires = {int(k): v for k, v in dict(spec.get("requires") or {}).items()}
        return cls(spec["costs"], groups=groups, requires=requires or None,
                   feature_names=spec.get("feature_names"))

    def reorder(self, feature_names):
        """The same costs for the features in the order ``feature_names`` (a
        permutation of this object's names): own costs, groups and requires follow
        their features.

        Examples
        --------
        >>> from prune_opt import FeatureCosts
        >>> fc = FeatureCosts([1.0, 5.0, 2.0], groups={"draw": (3.0, [1, 2])},
        ...                   feature_names=["a", "b", "c"])
        >>> fc.reorder(["c", "a", "b"]).feature_cost()
        array([5., 1., 8.])
        """
        if self.feature_names is None:
            raise ValueError("these costs have no feature names to reorder by")
        names = [str(n) for n in feature_names]
        if sorted(names) != sorted(self.feature_names):
            missing = sorted(set(names) - set(self.feature_names))
            extra = sorted(set(self.feature_names) - set(names))
            raise ValueError(f"feature_names must be a permutation of the costs' features "
                             f"(unknown: {missing[:5]}, left out: {extra[:5]})")
        old = {n: k for k, n in enumerate(self.feature_names)}
        new = {old[n]: k for k, n in enumerate(names)}  # old column -> new column
        spec = self._spec
        return FeatureCosts([spec["costs"][old[n]] for n in names],
                            groups={g: (c, [new[int(m)] for m in members])
                                    for g, (c, members) in spec["groups"].items()},
                            requires={new[int(k)]: [new[int(j)] for j in v]
                                      for k, v in spec["requires"].items()} or None,
                            feature_names=names)

    @classmethod
    def uniform(cls, n_features, cost=1.0, feature_names=None):
        """Every feature costs ``cost``."""
        return cls(np.full(int(n_features), float(cost)), feature_names=feature_names)

    def __repr__(self):
        return (f"FeatureCosts(n_features={self.n_features}, n_units={self.n_units}, "
                f"total={self.unit_costs.sum():.4g})")


def as_feature_costs(costs, n_features, feature_names=None):
    """Coerce ``costs`` (None, array, mapping or FeatureCosts) and check it fits.

    ``None`` means uniform unit costs.
    """
    if costs is None:
        fc = FeatureCosts.uniform(n_features, feature_names=feature_names)
    elif isinstance(costs, FeatureCosts):
        fc = costs
    else:
        try:
            fc = FeatureCosts(costs, feature_names=feature_names)
        except ValueError as exc:
            raise ValueError(f"costs: {exc}") from None
    fc.check_n_features(n_features, feature_names)
    return fc


def estimator_costs(estimator, costs):
    """``costs``, or when it is None the costs a cost-aware estimator was fitted with.

    A grower of ``forest_builders`` keeps its checked costs in ``costs_``;
    pruning it without ``costs=`` must use them, not uniform costs.

    Examples
    --------
    >>> class Grown:
    ...     costs_ = FeatureCosts([1.0, 5.0])
    >>> estimator_costs(Grown(), None).unit_costs
    array([1., 5.])
    >>> estimator_costs(Grown(), [2, 2])
    [2, 2]
    """
    if costs is None:
        fitted = getattr(estimator, "costs_", None)
        if isinstance(fitted, FeatureCosts):
            return fitted
    return costs
