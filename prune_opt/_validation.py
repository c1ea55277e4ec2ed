"""Input checks at the door: every message names the argument and the fix."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_features", "check_labels", "check_nonneg_scalar", "check_weights"]


def _column_names(X):
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    return [str(c) for c in cols]


def check_features(forest, X, *, name="X"):
    """Return ``X`` as a 2-D float ndarray that the forest can route.

    Checks dimensionality, emptiness, feature count, column names (pandas),
    non-numeric values, inf, and NaN when the forest cannot route it.
    """
    if X is None:
        raise ValueError(f"{name} is None; pass a 2-D array of shape (n_examples, "
                         f"{forest.n_features})")
    names = _column_names(X)
    try:
        arr = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric; encode categorical columns first") from None
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D of shape (n_examples, {forest.n_features}), got shape "
            f"{arr.shape}; reshape a single example with X.reshape(1, -1)"
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{name} has no rows; pass at least one example")
    if arr.shape[1] != forest.n_features:
        raise ValueError(
            f"{name} has {arr.shape[1]} features, but the forest was fitted on "
            f"{forest.n_features}; pass the same columns used for fitting"
        )
    if names is not None and forest.feature_names is not None and names != forest.feature_names:
        raise ValueError(
            f"{name} column names do not match the forest's feature_names_in_ "
            f"(got {names[:5]}..., expected {forest.feature_names[:5]}...); reorder the columns"
        )
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains inf; replace infinite values before pruning")
    if np.isnan(arr).any() and not forest.allow_nan:
        raise ValueError(
            f"{name} contains NaN and this forest cannot route missing values; impute them "
            "or fit a forest that supports missing values"
        )
    return arr


def check_labels(forest, y, n_rows, *, name="y"):
    """Encode labels as class indices of the forest, refusing unknown labels."""
    if y is None:
        raise ValueError(f"{name} is None; pass the labels of the examples")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {y.shape}")
    if y.shape[0] != n_rows:
        raise ValueError(f"{name} has {y.shape[0]} labels for {n_rows} examples; pass one label "
                         "per row")
    classes = forest.classes_
    order = np.argsort(classes, kind="stable")
    sorted_classes = classes[order]
    try:
        pos = np.searchsorted(sorted_classes, y)
    except TypeError:
        raise ValueError(f"{name} labels are not comparable with the forest's classes "
                         f"{classes.tolist()}") from None
    pos = np.clip(pos, 0, classes.size - 1)
    ok = sorted_classes[pos] == y
    if not np.all(ok):
        unknown = np.unique(y[~ok])[:5].tolist()
        raise ValueError(
            f"{name} contains labels {unknown} unknown to the forest (classes "
            f"{classes.tolist()}); pass labels the forest was fitted on"
        )
    return order[pos].astype(np.int64)


def check_nonneg_scalar(value, name, *, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
    return value


def check_weights(weights, n, name="sample_weight"):
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"{name} must be finite and non-negative")
    return w
