"""Count-weighted impurity functions for greedy tree growers.

Every function maps class counts of shape ``(..., n_classes)`` (possibly
weighted by bootstrap multiplicities) to an impurity of shape ``(...)``.  They
are *count-weighted* (they grow with the number of examples), which is what
the minimax rule of the Feature-Budgeted Random Forest needs: it compares the
absolute impurity reduction ``F(S) - F(S_child)`` of the two children of a
stump.

``threshold_pairs`` is the admissible impurity of Nan, Wang and Saligrama
(ICML 2015): monotone and supermodular in the multiset of labels, and zero
exactly when at most one class holds more than ``alpha`` examples.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["IMPURITIES", "entropy", "get_impurity", "gini", "threshold_pairs"]


def _as_counts(counts):
    counts = np.asarray(counts, dtype=float)
    if counts.ndim == 0:
        raise ValueError("counts must have a trailing class axis, got a scalar")
    return counts


@lru_cache(maxsize=64)
def _pairs(n_classes):
    return np.triu_indices(n_classes, k=1)


def threshold_pairs(counts, alpha=0.0):
    """Threshold-Pairs impurity ``sum_{i<j} [[n_i - a]_+ [n_j - a]_+ - a^2]_+``.

    Parameters
    ----------
    counts : array-like of shape (..., n_classes)
        Class counts (non-negative; weights allowed).
    alpha : float, default 0.0
        Threshold.  With ``alpha=0`` this is the number of pairs of examples
        with different labels; larger values stop the growth earlier (a node
        is "pure enough" once every class but one holds at most ``alpha``).

    Returns
    -------
    ndarray of shape (...)

    Examples
    --------
    >>> from forest_builders._impurity import threshold_pairs
    >>> float(threshold_pairs([3, 2]))            # 6 mixed pairs
    6.0
    >>> float(threshold_pairs([3, 2], alpha=1))   # [(2 * 1) - 1]_+
    1.0
    >>> float(threshold_pairs([5, 0, 0]))
    0.0
    """
    counts = _as_counts(counts)
    alpha = float(alpha)
    if alpha < 0 or not np.isfinite(alpha):
        raise ValueError(f"alpha must be a finite non-negative number, got {alpha!r}")
    p = np.maximum(counts - alpha, 0.0)
    c = counts.shape[-1]
    if c < 2:
        return np.zeros(counts.shape[:-1])
    if c == 2:
        return np.maximum(p[..., 0] * p[..., 1] - alpha * alpha, 0.0)
    if alpha == 0.0:  # no clipping needed: sum_{i<j} p_i p_j = ((sum p)^2 - sum p^2) / 2
        s = p.sum(axis=-1)
        return np.maximum((s * s - (p * p).sum(axis=-1)) / 2.0, 0.0)
    iu, ju = _pairs(c)
    prod = p[..., iu] * p[..., ju]
    return np.maximum(prod - alpha * alpha, 0.0).sum(axis=-1)


def entropy(counts, alpha=0.0):
    """Count-weighted Shannon entropy ``n * H(counts / n)`` in nats.

    ``alpha`` is accepted for a uniform signature and ignored.

    Examples
    --------
    >>> from forest_builders._impurity import entropy
    >>> round(float(entropy([2, 2])), 6)          # 4 * log(2)
    2.772589
    """
    counts = _as_counts(counts)
    n = counts.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        xlogx = np.where(counts > 0, counts * np.log(np.where(counts > 0, counts, 1.0)), 0.0)
        nlogn = np.where(n > 0, n * np.log(np.where(n > 0, n, 1.0)), 0.0)
    return np.maximum(nlogn - xlogx.sum(axis=-1), 0.0)


def gini(counts, alpha=0.0):
    """Count-weighted Gini impurity ``n * (1 - sum p_i^2) = n - sum n_i^2 / n``.

    ``alpha`` is accepted for a uniform signature and ignored.

    Examples
    --------
    >>> from forest_builders._impurity import gini
    >>> float(gini([2, 2]))
    2.0
    """
    counts = _as_counts(counts)
    n = counts.sum(axis=-1)
    sq = (counts * counts).sum(axis=-1)
    return np.where(n > 0, n - sq / np.where(n > 0, n, 1.0), 0.0)


IMPURITIES = {"threshold_pairs": threshold_pairs, "entropy": entropy, "gini": gini}


def get_impurity(name):
    """Impurity function by name (one of :data:`IMPURITIES`).

    Examples
    --------
    >>> from forest_builders._impurity import get_impurity
    >>> get_impurity("gini").__name__
    'gini'
    """
    try:
        return IMPURITIES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"impurity must be one of {sorted(IMPURITIES)}, got {name!r}"
        ) from None
