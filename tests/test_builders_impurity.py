"""Impurities (admissibility of threshold-Pairs) and the vectorized split search."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from forest_builders._impurity import entropy, get_impurity, gini, threshold_pairs
from forest_builders._splits import candidate_splits, n_random_thresholds, split_threshold

counts3 = st.lists(st.integers(0, 30), min_size=3, max_size=3)
alphas = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5])


@given(a=counts3, extra=counts3, k=st.integers(0, 2), alpha=alphas)
def test_threshold_pairs_is_monotone_and_supermodular(a, extra, k, alpha):
    A = np.array(a, dtype=float)
    B = A + np.array(extra, dtype=float)  # A is a sub-multiset of B
    e = np.eye(3)[k]
    fA, fB = threshold_pairs(A, alpha), threshold_pairs(B, alpha)
    assert fB >= fA - 1e-9  # monotone
    assert threshold_pairs(A + e, alpha) >= fA - 1e-9
    # supermodular: the marginal value of one more example grows with the set
    assert threshold_pairs(B + e, alpha) - fB >= threshold_pairs(A + e, alpha) - fA - 1e-9


@given(labels=st.lists(st.integers(0, 3), min_size=0, max_size=25))
def test_threshold_pairs_alpha0_counts_mixed_pairs(labels):
    brute = sum(1 for i, j in itertools.combinations(range(len(labels)), 2)
                if labels[i] != labels[j])
    counts = np.bincount(np.asarray(labels, dtype=int), minlength=4)
    assert threshold_pairs(counts) == pytest.approx(brute)


@given(a=counts3, alpha=alphas)
def test_threshold_pairs_matches_definition_and_batches(a, alpha):
    n = np.array(a, dtype=float)
    direct = sum(max(max(n[i] - alpha, 0) * max(n[j] - alpha, 0) - alpha ** 2, 0)
                 for i in range(3) for j in range(i + 1, 3))
    assert threshold_pairs(n, alpha) == pytest.approx(direct)
    batch = np.stack([n, n[::-1], np.zeros(3)])
    assert np.allclose(threshold_pairs(batch, alpha),
                       [threshold_pairs(r, alpha) for r in batch])


@given(a=counts3, k=st.integers(0, 2))
def test_count_weighted_entropy_and_gini_are_monotone(a, k):
    A = np.array(a, dtype=float)
    e = np.eye(3)[k]
    for f in (entropy, gini):
        assert f(A + e) >= f(A) - 1e-9
        assert f(A) >= 0


def test_impurity_values_and_lookup():
    assert threshold_pairs([4, 0]) == 0
    assert entropy([5, 5]) == pytest.approx(10 * np.log(2))
    assert gini([5, 5]) == pytest.approx(5.0)
    assert get_impurity("entropy") is entropy
    with pytest.raises(ValueError, match="impurity must be one of"):
        get_impurity("variance")
    with pytest.raises(ValueError, match="alpha"):
        threshold_pairs([1, 2], alpha=-1)


@given(data=st.data())
def test_split_threshold_separates_float32_neighbours(data):
    lo = np.float32(data.draw(st.floats(-1e6, 1e6, width=32)))
    hi = np.float32(data.draw(st.floats(-1e6, 1e6, width=32)))
    if lo == hi:
        hi = np.nextafter(lo, np.float32(np.inf))
    lo, hi = min(lo, hi), max(lo, hi)
    t = split_threshold(lo, hi)
    assert np.float32(t) == t  # a float32 value
    assert lo <= t < hi


def _brute_left(x, y, w, thr, n_classes):
    return np.bincount(y[x <= thr], weights=w[x <= thr], minlength=n_classes)


@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), nan=st.booleans())
def test_exhaustive_candidates_match_brute_force(seed, n, nan):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, 3)).astype(np.float32)  # many ties
    if nan:
        X[rng.random((n, 3)) < 0.2] = np.nan
    y = rng.integers(0, 3, n)
    w = rng.integers(1, 4, n).astype(float)
    cand = candidate_splits(X, y, w, 3)
    if cand is None:
        assert all(np.unique(X[~np.isnan(X[:, j]), j]).size < 2 for j in range(3))
        return
    assert np.allclose(cand.total, np.bincount(y, weights=w, minlength=3))
    for j in range(3):
        vals = np.unique(X[~np.isnan(X[:, j]), j])
        thr = cand.threshold[cand.valid[:, j], j]
        assert thr.size == max(vals.size - 1, 0)  # every gap exactly once
        for t, left in zip(thr, cand.left[cand.valid[:, j], j]):
            assert ((vals <= t).sum() >= 1) and ((vals > t).sum() >= 1)
            assert np.allclose(left, _brute_left(X[:, j], y, w, t, 3))


@given(seed=st.integers(0, 10_000), k=st.integers(1, 8))
def test_random_candidates_are_a_subset_of_gaps(seed, k):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 2)).astype(np.float32)
    y = rng.integers(0, 2, 30)
    cand = candidate_splits(X, y, np.ones(30), 2, n_thresholds=k, rng=rng)
    full = candidate_splits(X, y, np.ones(30), 2)
    for j in range(2):
        thr = cand.threshold[cand.valid[:, j], j]
        assert thr.size == min(k, 29)
        assert np.unique(thr).size == thr.size
        assert set(thr.tolist()) <= set(full.threshold[:, j].tolist())
        for t, left in zip(thr, cand.left[cand.valid[:, j], j]):
            assert np.allclose(left, _brute_left(X[:, j], y, np.ones(30), t, 2))


def test_threshold_schedule():
    assert [n_random_thresholds(n, (80, 40, 20)) for n in (2001, 2000, 501, 500, 3)] == \
        [80, 40, 40, 20, 20]
