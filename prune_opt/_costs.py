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

__all__ = ["FeatureCosts", "as_feature_costs"]


def _check_cost_value(value, what):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a number, got {value!r}") from None
    if not np.isfinite(value):
        raise ValueError(f"{what} must be finite, got {value!r}; pass a non-negative number")
    if value < 0:
        raise ValueError(f"{what} must be non-negative, got {value!r}")
    return value


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
        names = None if feature_names is None else [str(n) for n in feature_names]
        if names is not None and len(set(names)) != len(names):
            raise ValueError("feature_names contains duplicates; pass unique column names")
        if isinstance(costs, FeatureCosts):
            raise TypeError("costs is already a FeatureCosts; pass it directly instead of wrapping")
        if isinstance(costs, Mapping):
            if names is None:
                raise ValueError(
                    "costs is a mapping keyed by feature name, so feature_names is required "
                    "(pass feature_names=list(X.columns) or the estimator's feature_names_in_)"
                )
            unknown = [k for k in costs if str(k) not in names]
            if unknown:
                raise ValueError(
                    f"costs names unknown features {unknown}; known features are {names}"
                )
            own = np.full(len(names), np.nan)
            for key, value in costs.items():
                own[names.index(str(key))] = _check_cost_value(value, f"costs[{key!r}]")
        else:
            if isinstance(costs, (str, bytes)) or costs is None:
                raise TypeError(
                    "costs must be an array-like of per-feature costs, a mapping "
                    f"{{feature_name: cost}} or a FeatureCosts, got {type(costs).__name__}"
                )
            try:
                own = np.asarray(costs, dtype=float)
            except (TypeError, ValueError):
                raise TypeError(
                    "costs must be numeric (array-like of per-feature costs or a mapping)"
                ) from None
            if own.ndim != 1 or own.size == 0:
                raise ValueError(
                    f"costs must be 1-D with one entry per feature, got shape {own.shape}"
                )
            if names is not None and len(names) != own.size:
                raise ValueError(
                    f"costs has {own.size} entries but feature_names has {len(names)}; "
                    "pass one cost per feature"
                )
            if np.isnan(own).any() and requires is None:
                bad = np.flatnonzero(np.isnan(own)).tolist()
                raise ValueError(
                    f"costs has NaN at feature indices {bad}; pass a cost for every feature "
                    "(or declare derived features in requires)"
                )
            if np.isinf(own).any():
                raise ValueError("costs must be finite; got inf")
            if (own[~np.isnan(own)] < 0).any():
                bad = np.flatnonzero(own < 0).tolist()
                raise ValueError(f"costs must be non-negative; negative at feature indices {bad}")
        n = own.size
        self.n_features = int(n)
        self.feature_names = names

        def index(f, what):
            if isinstance(f, (int, np.integer)) and not isinstance(f, bool):
                if not 0 <= int(f) < n:
                    raise ValueError(f"{what}: feature index {f} out of range [0, {n})")
                return int(f)
            if names is None:
                raise ValueError(
                    f"{what} refers to feature {f!r} by name but feature_names was not given"
                )
            if str(f) not in names:
                raise ValueError(f"{what} names unknown feature {f!r}; known features: {names}")
            return names.index(str(f))

        requires = dict(requires or {})
        req_idx = {}
        for f, deps in requires.items():
            k = index(f, "requires")
            if isinstance(deps, (str, int, np.integer)):
                deps = [deps]
            req_idx[k] = sorted({index(d, f"requires[{f!r}]") for d in deps} - {k})
        missing = [k for k in np.flatnonzero(np.isnan(own)) if k not in req_idx]
        if missing:
            label = [names[k] for k in missing] if names else missing
            raise ValueError(
                f"no cost given for features {label}; pass a cost for each, "
                "or declare them in requires if they are computed from other features"
            )
        own = np.where(np.isnan(own), 0.0, own)

        unit_names = [names[k] if names else f"x{k}" for k in range(n)]
        unit_costs = list(own)
        needs = [{k} for k in range(n)]
        seen_members = {}
        for gname, spec in dict(groups or {}).items():
            try:
                gcost, members = spec
            except (TypeError, ValueError):
                raise TypeError(
                    f"groups[{gname!r}] must be a pair (group_cost, [member features])"
                ) from None
            gcost = _check_cost_value(gcost, f"groups[{gname!r}] cost")
            if isinstance(members, (str, int, np.integer)):
                members = [members]
            u = len(unit_costs)
            unit_names.append(f"group:{gname}")
            unit_costs.append(gcost)
            for m in members:
                k = index(m, f"groups[{gname!r}]")
                if k in seen_members:
                    raise ValueError(
                        f"feature {m!r} is in both group {seen_members[k]!r} and {gname!r}; "
                        "groups must not overlap (make a feature need both via requires instead)"
                    )
                seen_members[k] = gname
                needs[k].add(u)
        # transitive closure of requires
        closure = {}

        def resolve(k, stack):
            if k in closure:
                return closure[k]
            if k in stack:
                raise ValueError(f"requires has a cycle through feature {k}")
            acc = set(needs[k])
            for d in req_idx.get(k, []):
                acc |= resolve(d, stack | {k})
            closure[k] = acc
            return acc

        for k in range(n):
            resolve(k, frozenset())
        rows, cols = [], []
        for k in range(n):
            for u in sorted(closure[k]):
                rows.append(k)
                cols.append(u)
        self.unit_costs = np.asarray(unit_costs, dtype=float)
        self.unit_names = unit_names
        self.feature_units = sp.csr_matrix(
            (np.ones(len(rows), dtype=bool), (rows, cols)), shape=(n, len(unit_costs))
        )
        self._spec = {
            "costs": own.tolist(),
            "groups": {str(g): [float(s[0]), [int(index(m, "groups")) for m in
                                              ([s[1]] if isinstance(s[1], (str, int)) else s[1])]]
                       for g, s in dict(groups or {}).items()},
            "requires": {str(k): v for k, v in req_idx.items()},
            "feature_names": names,
        }

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
        used = sp.csr_matrix(used, dtype=float)
        if used.shape[1] != self.n_features:
            raise ValueError(
                f"usage matrix has {used.shape[1]} features, costs cover {self.n_features}"
            )
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

    @classmethod
    def uniform(cls, n_features, cost=1.0, feature_names=None):
        """Every feature costs ``cost``."""
        return cls(np.full(int(n_features), float(cost)), feature_names=feature_names)

    def __repr__(self):
        return (f"FeatureCosts(n_features={self.n_features}, n_units={self.n_units}, "
                f"total={self.unit_costs.sum():.4g})")


def as_feature_costs(costs, n_features, feature_names=None, *, name="costs"):
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
            raise ValueError(f"{name}: {exc}") from None
    fc.check_n_features(n_features, feature_names)
    return fc
