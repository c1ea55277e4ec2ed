"""Ghouila-Houri's characterisation: every row subset has an equitable bicoloring."""

from __future__ import annotations

import time
from itertools import combinations, product

import numpy as np
import scipy.sparse as sp

from ._brute import brute_force_tu
from ._result import MethodResult

__all__ = ["ghouila_houri_tu", "equitable_bicoloring", "DEFAULT_MAX_GH_ROWS"]

#: largest number of lines (rows, or columns when fewer) the method enumerates
DEFAULT_MAX_GH_ROWS = 14


def _sign_table(k):
    """All sign vectors of length k with a leading +1 (s and -s are equivalent)."""
    if k <= 1:
        return np.ones((1, k), dtype=np.int64)
    rest = np.array(list(product((1, -1), repeat=k - 1)), dtype=np.int64).reshape(-1, k - 1)
    return np.hstack([np.ones((rest.shape[0], 1), dtype=np.int64), rest])


def equitable_bicoloring(A):
    """A sign vector s (one per row) with ``|s @ A| <= 1`` entrywise, or None.

    Exhaustive over the 2**(m-1) colorings (vectorized), for small ``m``.

    Examples
    --------
    >>> import numpy as np
    >>> equitable_bicoloring(np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]])) is None
    True
    >>> equitable_bicoloring(np.array([[1, 1], [0, 1]])).tolist()
    [1, -1]
    """
    A = np.asarray(A.toarray() if sp.issparse(A) else A, dtype=np.int64)
    S = _sign_table(A.shape[0])
    ok = (np.abs(S @ A) <= 1).all(axis=1)
    if not ok.any():
        return None
    return S[int(np.argmax(ok))]


def ghouila_houri_tu(M, *, time_limit=None, max_lines=DEFAULT_MAX_GH_ROWS):
    """Total unimodularity by Ghouila-Houri's theorem (exponential in the lines).

    ``A`` is totally unimodular iff every subset of its rows has an
    equitable bicoloring (signs making every column sum -1, 0 or 1); the
    same holds for columns, so the shorter side is enumerated.  Subsets are
    visited by increasing size, so the first failing subset ``R`` is minimal:
    every violating square submatrix of ``A[R]`` then uses all of ``R``, and
    a brute-force search over column subsets of size ``|R|`` extracts one,
    verified exactly.

    Returns
    -------
    MethodResult
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    M = sp.csr_matrix(M, dtype=np.int64)
    nz_rows = np.flatnonzero(np.diff(M.indptr) > 0)
    nz_cols = np.unique(M.indices)
    transposed = nz_rows.size > nz_cols.size
    line_ids = nz_cols if transposed else nz_rows
    m = line_ids.size
    side = "columns" if transposed else "rows"
    if m > max_lines:
        return MethodResult(None, reason=f"{m} nonzero {side} exceed the Ghouila-Houri limit "
                            f"{max_lines} (2**{m} subsets)")
    D = (M.T.tocsr() if transposed else M)[line_ids].toarray()
    for k in range(1, m + 1):
        S = _sign_table(k)
        for R in combinations(range(m), k):
            if deadline is not None and time.perf_counter() > deadline:
                return MethodResult(None, reason=f"time limit {time_limit:g} s reached at "
                                    f"{side} subsets of size {k}")
            sub = D[list(R)]
            sub = sub[:, (sub != 0).any(axis=0)]
            if (np.abs(S @ sub) <= 1).all(axis=1).any():
                continue
            fail = line_ids[list(R)]
            inner = brute_force_tu(M.T.tocsr() if transposed else M, rows_fixed=fail,
                                   time_limit=None if deadline is None
                                   else max(deadline - time.perf_counter(), 0.1))
            cex = inner.counterexample
            if cex is None:
                return MethodResult(None, reason=f"{side} {fail.tolist()} have no equitable "
                                    "bicoloring (so A is not TU) but the violating submatrix "
                                    f"was not extracted: {inner.reason}",
                                    failing_lines=fail.tolist())
            if transposed:
                cex = {**cex, "rows": cex["columns"], "columns": cex["rows"],
                       "submatrix": np.asarray(cex["submatrix"]).T.tolist()}
            return MethodResult(False, counterexample=cex, certificate={side: fail.tolist()},
                                summary=f"{side} {fail.tolist()} have no equitable "
                                f"bicoloring; violating {k}x{k} submatrix inside them",
                                failing_lines=fail.tolist())
    return MethodResult(True, certificate={"lines": side, "subsets": 2 ** m - 1},
                        summary=f"all {2 ** m - 1} subsets of the {m} nonzero {side} have an "
                        "equitable bicoloring")
