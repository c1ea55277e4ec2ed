"""Typed results of the TU methods, and their deprecated dict-style access."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prune_opt.checks import (
    Counterexample,
    MethodResult,
    SearchLimitExceeded,
    brute_force_tu,
    estimate_2x2_work,
    exact_determinant,
    find_2x2_violation,
)

TRIANGLE = np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]])


def test_2x2_violation_is_a_counterexample_or_none():
    hit = find_2x2_violation(np.array([[1, 1, 0], [1, -1, 0]]))
    assert isinstance(hit, Counterexample)
    assert hit.to_dict() == {"rows": [0, 1], "columns": [0, 1], "determinant": -2,
                             "submatrix": [[1, 1], [1, -1]]}
    assert find_2x2_violation(TRIANGLE) is None  # its violation is 3x3


def test_the_work_limit_raises_instead_of_returning_a_string():
    A = np.ones((40, 40), dtype=int)
    work = estimate_2x2_work(A)
    with pytest.raises(SearchLimitExceeded, match="max_work") as info:
        find_2x2_violation(A, max_work=work - 1)
    assert info.value.work == work and info.value.limit == work - 1
    assert find_2x2_violation(A, max_work=work) is None  # rank one: no violation
    assert find_2x2_violation(A, max_work=None) is None


def test_results_are_plain_dataclasses_without_item_access():
    hit = find_2x2_violation(np.array([[1, 1], [1, -1]]))
    assert hit.rows == [0, 1] and hit.determinant == -2
    res = brute_force_tu(TRIANGLE)
    assert res.verdict is False
    with pytest.raises(TypeError):
        hit["rows"]
    with pytest.raises(TypeError):
        res["verdict"]


def test_method_result_fields():
    res = brute_force_tu(TRIANGLE)
    assert res.verdict is False and res.counterexample["determinant"] == 2
    assert res.note == res.summary and res.info["submatrices"] > 0
    assert MethodResult(None, reason="why").note == "why"
    with pytest.raises(ValueError, match="verdict"):
        MethodResult("skipped")


@given(st.lists(st.sampled_from([-1, 0, 0, 1]), min_size=12, max_size=12))
@settings(max_examples=40)
def test_counterexample_fields_are_exact(values):
    A = np.array(values).reshape(3, 4)
    hit = find_2x2_violation(A)
    minors = {(r, c): exact_determinant(A[np.ix_(r, c)])
              for r in combinations(range(3), 2) for c in combinations(range(4), 2)}
    if hit is None:  # no violation returned: then every 2x2 minor is in {-1, 0, 1}
        assert all(abs(d) <= 1 for d in minors.values())
    else:
        sub = A[np.ix_(hit.rows, hit.columns)]
        assert sub.tolist() == hit.submatrix
        assert exact_determinant(sub) == hit.determinant and abs(hit.determinant) == 2
        assert minors[(tuple(hit.rows), tuple(hit.columns))] == hit.determinant


def test_counterexample_strategy_reaches_both_outcomes():
    """The property above is exercised on matrices with and without a violation."""
    assert find_2x2_violation(np.array([[1, 1, 0, 0], [1, -1, 0, 0], [0, 0, 0, 0]])) is not None
    assert find_2x2_violation(np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]])) is None
