"""Input checks and normalisation of the budget-pruned estimator's fit.

The row split (grow / prune / select), the refusal of features that are not
numbers (naming the column), a regression target read as numbers and
standardised without overflow, and costs divided by their mean positive unit
cost, so that the searches see the same numbers whatever unit the costs are in.
"""

from __future__ import annotations

import numpy as np

from prune_opt import FeatureCosts

__all__ = ["three_way_split", "check_numeric_features", "numeric_target", "target_scale",
           "normalised_costs", "unstandardised_stats"]


def three_way_split(y, classification, rng, split):
    """Disjoint (grow, prune, select) row indices; per class for a classifier, every
    class with at least one grow row."""
    groups = ([np.flatnonzero(y == c) for c in np.unique(y)] if classification
              else [np.arange(y.shape[0])])
    parts = ([], [], [])
    for rows in groups:
        rows = rng.permutation(rows)
        n = rows.size
        n_grow = max(1, int(round(split[0] * n)))
        n_prune = int(round(split[1] * n))
        parts[0].append(rows[:n_grow])
        parts[1].append(rows[n_grow:n_grow + n_prune])
        parts[2].append(rows[n_grow + n_prune:])
    return tuple(np.sort(np.concatenate(p)).astype(np.int64) for p in parts)


def unstandardised_stats(stats, scale):
    """Node statistics with the impurities (target variances) in the target's units;
    where those are beyond float64 (targets near 1e155 and beyond) they stay in the
    standardised units, which give the same feature importances (a ratio)."""
    if stats is None:
        return None
    with np.errstate(over="ignore"):
        impurity = stats["impurity"] * np.float64(scale) * np.float64(scale)
    return {**stats, "impurity": impurity if np.isfinite(impurity).all()
            else stats["impurity"]}


def check_numeric_features(X):
    """Refuse, naming the column, a feature of text, dates or other values that are not
    numbers (scikit-learn's own check names neither ``X`` nor the column)."""
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        columns = [(name, X[name]) for name in X.columns]
    else:
        try:
            arr = None if hasattr(X, "toarray") else np.asarray(X)
        except ValueError:  # ragged rows: scikit-learn says so
            return
        if arr is None or arr.dtype.kind in "biufcV" or arr.ndim != 2:
            return  # numbers, a sparse matrix or a shape scikit-learn refuses by itself
        columns = [(k, arr[:, k]) for k in range(arr.shape[1])]
    for name, values in columns:
        refused = getattr(getattr(values, "dtype", None), "kind", "O") in "Mm"  # dates
        try:
            if not refused:
                np.asarray(values, dtype=np.float64)
        except ValueError:  # text (other objects raise numpy's TypeError, naming their type)
            refused = True
        if refused:
            first = next((v for v in np.asarray(values, dtype=object).ravel()
                          if not _is_number_text(v)), None)
            raise ValueError(f"X column {name!r} holds {getattr(values, 'dtype', 'object')} "
                             f"values such as {first!r}, which are not numbers; encode it as "
                             "numbers first (e.g. ordinal codes of its categories, as "
                             "prune_opt.datasets.load_csv does)")


def numeric_target(y):
    """A regression target as numbers (numeric text converted, as scikit-learn's
    regressors do); other values are refused naming ``y``."""
    if y is None or isinstance(getattr(y, "dtype", None), np.dtype) and y.dtype.kind in "biuf":
        return y
    arr = np.asarray(y)
    if arr.dtype.kind in "biuf":
        return y
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError):
        first = next((v for v in arr.ravel() if not _is_number_text(v)), arr.ravel()[:1])
        raise ValueError(f"y holds {arr.dtype} values such as {first!r}, which are not "
                         "numbers: a regressor needs numeric targets (for class labels use "
                         "BudgetPrunedForestClassifier)") from None


def _is_number_text(v):
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def target_scale(y):
    """(shift, scale) that standardise a regression target without overflow (scale 1
    for a constant target)."""
    big = float(np.max(np.abs(y))) if y.size else 0.0
    if not np.isfinite(big) or big == 0.0:
        return 0.0, 1.0
    z = y / big
    shift = float(np.mean(z))
    spread = float(np.std(z - shift))
    if spread == 0.0:
        return shift * big, 1.0
    return shift * big, spread * big


def normalised_costs(fc):
    """(scale, costs / scale) with scale the mean positive unit cost (1 when none is
    positive): the candidates and the pruning searches see the same numbers whatever
    unit the user's costs are in, so the fitted model does not depend on it."""
    units = np.asarray(fc.unit_costs, dtype=float)
    positive = units[units > 0]
    scale = float(np.mean(positive)) if positive.size else 1.0
    if scale == 1.0:
        return 1.0, fc
    spec = fc.to_dict()
    spec["costs"] = [c / scale for c in spec["costs"]]
    spec["groups"] = {g: [v[0] / scale, v[1]] for g, v in (spec.get("groups") or {}).items()}
    return scale, FeatureCosts.from_dict(spec)


def rescaled_forest(forest, shift, scale):
    """A copy of a regression ``forest`` predicting ``shift + scale * prediction``: an
    averaged forest's node means mapped so (its impurities scaled too), a boosted one's
    raw scores scaled and its initial score mapped."""
    import copy

    out = copy.copy(forest)
    out.value, out.ensemble = forest.ensemble.rescaled(forest.value, shift, scale)
    out.node_stats = unstandardised_stats(forest.node_stats, scale)
    return out
