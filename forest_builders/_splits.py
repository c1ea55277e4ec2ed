"""Vectorized split search shared by the forest growers.

For the examples of one node and a set of candidate features, one call sorts
every candidate column at once, accumulates the (weighted) class counts along
the sorted order, and returns the class counts left of every candidate
threshold for every feature.  Nothing loops over examples in Python.

Thresholds are float32 midpoints between consecutive distinct float32 values,
so a forest that routes ``float32(x) <= threshold`` (prune_opt's Forest, like
sklearn) sends every training example to the side it was counted on.  Missing
values (NaN) sort last, never fall left of a threshold, and are routed right
(``missing_go_to_left = 0``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SplitCandidates", "candidate_splits", "candidates_from_sorted", "n_random_thresholds", "split_threshold"]


@dataclass
class SplitCandidates:
    """Candidate stumps of one node.

    Attributes
    ----------
    threshold : ndarray (k, m) float64 (values of float32 numbers)
    left : ndarray (k, m, n_classes)
        Weighted class counts of the examples with ``x <= threshold``.
    total : ndarray (n_classes,)
        Class counts of the node (right counts are ``total - left``).
    valid : ndarray (k, m) bool
        False for padding entries (a feature with fewer than k distinct gaps).
    """

    threshold: np.ndarray
    left: np.ndarray
    total: np.ndarray
    valid: np.ndarray

    @property
    def right(self):
        return self.total - self.left


def split_threshold(lo, hi):
    """A float32 value ``t`` with ``lo <= t < hi`` for float32 ``lo < hi``.

    The midpoint rounded to float32; when rounding reaches ``hi`` (adjacent
    float32 numbers) the lower value itself is used.

    Examples
    --------
    >>> import numpy as np
    >>> from forest_builders._splits import split_threshold
    >>> float(split_threshold(np.float32(1.0), np.float32(2.0)))
    1.5
    >>> a = np.float32(1.0); b = np.nextafter(a, np.float32(2))
    >>> float(split_threshold(a, b)) == float(a)
    True
    """
    lo = np.asarray(lo, dtype=np.float32)
    hi = np.asarray(hi, dtype=np.float32)
    mid = ((lo.astype(np.float64) + hi.astype(np.float64)) / 2.0).astype(np.float32)
    return np.where(mid < hi, mid, lo).astype(np.float64)


def n_random_thresholds(n_samples, schedule):
    """Number of random thresholds for a node with ``n_samples`` examples.

    ``schedule = (a, b, c)`` gives ``a`` above 2000 examples, ``b`` above 500,
    ``c`` otherwise (the paper's 80/40/20).

    Examples
    --------
    >>> from forest_builders._splits import n_random_thresholds
    >>> [n_random_thresholds(n, (80, 40, 20)) for n in (5000, 1000, 100)]
    [80, 40, 20]
    """
    a, b, c = schedule
    return int(a if n_samples > 2000 else b if n_samples > 500 else c)


def candidate_splits(Xn, yn, wn, n_classes, n_thresholds=None, rng=None):
    """Class counts left of candidate thresholds for every column of ``Xn``.

    Parameters
    ----------
    Xn : ndarray (n, m) float32
        The node's examples restricted to the candidate features.
    yn : ndarray (n,) int
        Class index of each example.
    wn : ndarray (n,) float
        Example weights (bootstrap multiplicities).
    n_classes : int
    n_thresholds : int or None
        None: every gap between distinct values is a candidate (exhaustive
        search).  An int ``k``: up to ``k`` gaps per feature drawn uniformly
        at random without replacement (the random stumps of BudgetRF).
    rng : numpy.random.Generator, optional
        Needed when ``n_thresholds`` is an int.

    Returns
    -------
    SplitCandidates or None
        None when no feature has two distinct non-missing values.

    Examples
    --------
    >>> import numpy as np
    >>> from forest_builders._splits import candidate_splits
    >>> X = np.array([[0.0], [1.0], [2.0]], dtype=np.float32)
    >>> c = candidate_splits(X, np.array([0, 0, 1]), np.ones(3), 2)
    >>> c.threshold[:, 0].tolist(), c.left[:, 0].tolist()
    ([0.5, 1.5], [[1.0, 0.0], [2.0, 0.0]])
    """
    order = np.argsort(Xn, axis=0, kind="stable")  # NaN last
    xs = np.take_along_axis(Xn, order, axis=0)
    yn = np.asarray(yn)
    wn = np.asarray(wn, dtype=float)
    return candidates_from_sorted(xs, yn[order], wn[order], n_classes, n_thresholds, rng)


def candidates_from_sorted(xs, ys, ws, n_classes, n_thresholds=None, rng=None):
    """:func:`candidate_splits` for columns that are already sorted.

    Parameters
    ----------
    xs : ndarray (n, m) float32
        Each column sorted increasingly, NaN last.
    ys, ws : ndarray (n, m)
        Class index and weight of the example at each sorted position.
    n_classes, n_thresholds, rng
        As in :func:`candidate_splits`.

    Returns
    -------
    SplitCandidates or None

    Examples
    --------
    >>> import numpy as np
    >>> from forest_builders._splits import candidates_from_sorted
    >>> xs = np.array([[0.0], [1.0], [1.0]], dtype=np.float32)
    >>> c = candidates_from_sorted(xs, np.array([[0], [1], [1]]), np.ones((3, 1)), 2)
    >>> c.threshold.ravel().tolist(), c.left.reshape(-1, 2).tolist()
    ([0.5], [[1.0, 0.0]])
    """
    n, m = xs.shape
    if n < 2 or m == 0:
        return None
    gap = xs[1:] > xs[:-1]  # False where equal or where NaN is involved
    if not gap.any():
        return None
    cum = np.zeros((n, m, n_classes))
    cum[np.arange(n)[:, None], np.arange(m)[None, :], ys] = ws
    total = cum[:, 0, :].sum(axis=0)
    np.cumsum(cum, axis=0, out=cum)  # (n, m, C): counts of the first i+1 sorted
    n_gaps = gap.sum(axis=0)
    if n_thresholds is None or n_gaps.max() <= n_thresholds:
        k = int(n_gaps.max())
        # positions of the gaps, gaps first then padding, in sorted order per column
        key = np.where(gap, np.arange(n - 1)[:, None], n)
        pos = np.sort(key, axis=0)[:k]
    else:
        k = int(n_thresholds)
        key = np.where(gap, rng.random(gap.shape), 2.0)
        pick = np.argpartition(key, k - 1, axis=0)[:k]
        pos = np.where(np.take_along_axis(key, pick, axis=0) <= 1.0, pick, n)
    valid = pos < n - 1
    p = np.where(valid, pos, 0)
    cols = np.arange(m)[None, :]
    lo = xs[p, cols]
    hi = xs[p + 1, cols]
    thr = np.where(valid, split_threshold(lo, np.where(valid, hi, lo + 1)), np.nan)
    left = cum[p, cols]  # (k, m, C)
    return SplitCandidates(threshold=thr, left=left, total=total, valid=valid)
