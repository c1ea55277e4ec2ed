"""Exhaustive subdeterminant search (exact verdicts on small matrices)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import combinations
from math import comb, lgamma, log

import numpy as np
import scipy.sparse as sp

from ._exact import verified_counterexample
from ._result import Counterexample, MethodResult, SearchLimitExceeded

__all__ = ["brute_force_tu", "find_entry_violation", "find_2x2_violation",
           "estimate_2x2_work", "DEFAULT_MAX_SUBMATRICES"]

#: enumeration budget of the brute-force method (square submatrices examined)
DEFAULT_MAX_SUBMATRICES = 20_000_000


def find_entry_violation(M):
    """A 1x1 counterexample (an entry outside {-1, 0, 1}) or None."""
    M = sp.csr_matrix(M)
    bad = np.flatnonzero(np.abs(M.data) > 1)
    if bad.size == 0:
        return None
    k = int(bad[0])
    r = int(np.searchsorted(M.indptr, k, side="right") - 1)
    return verified_counterexample(M, [r], [int(M.indices[k])])


def estimate_2x2_work(M):
    """Number of row-pair products the vectorized 2x2 search would form."""
    cnt = np.diff(sp.csc_matrix(M).indptr).astype(float)
    return float((cnt * cnt).sum())


def find_2x2_violation(M, max_work=5e7):
    """Vectorized search for a 2x2 submatrix with determinant +-2.

    For a {-1, 0, 1} matrix, rows i and j hold such a submatrix exactly when
    the products ``A[i, k] * A[j, k]`` over their common columns take both
    signs.  Counts of each sign come from two sparse products, ``A A^T`` and
    ``|A| |A|^T``, formed in row blocks.

    Parameters
    ----------
    M : integer matrix (dense or sparse)
    max_work : float or None
        Refuse when :func:`estimate_2x2_work` exceeds it (None: no limit).

    Returns
    -------
    Counterexample or None
        The exactly verified 2x2 submatrix, or None when there is none.

    Raises
    ------
    SearchLimitExceeded
        The work estimate exceeds ``max_work`` (the search was not run).

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt.checks import find_2x2_violation
    >>> find_2x2_violation(np.array([[1, 1, 0], [0, 1, 1]])) is None
    True
    >>> find_2x2_violation(np.array([[1, 1], [1, -1]])).determinant
    -2
    """
    M = sp.csr_matrix(M, dtype=np.int64)
    work = estimate_2x2_work(M)
    if max_work is not None and work > max_work:
        raise SearchLimitExceeded(f"the 2x2 search would form {work:.3g} row-pair products, "
                                  f"more than max_work={max_work:.3g}; raise max_work or use "
                                  "is_totally_unimodular", work=work, limit=max_work)
    hit = _first_mixed_sign_pair(M)
    if hit is None:
        return None
    i, j = hit
    prod = M[i].toarray().ravel() * M[j].toarray().ravel()
    kp = int(np.flatnonzero(prod > 0)[0])
    km = int(np.flatnonzero(prod < 0)[0])
    cex = verified_counterexample(M, [i, j], [kp, km])
    return None if cex is None else Counterexample.from_dict(cex)


def _first_mixed_sign_pair(M, block=4096):
    """First rows (i, j) whose common-column products take both signs, or None."""
    S = abs(M)
    MT, ST = M.T.tocsr(), S.T.tocsr()
    for start in range(0, M.shape[0], block):
        stop = min(start + block, M.shape[0])
        P = (M[start:stop] @ MT).tocsr()
        Q = (S[start:stop] @ ST).tocoo()
        p = np.asarray(P[Q.row, Q.col]).ravel()
        # plus = (q + p) / 2 and minus = (q - p) / 2 both positive <=> |p| < q
        hit = (np.abs(p) < Q.data) & (Q.row + start != Q.col)
        if hit.any():
            k = int(np.flatnonzero(hit)[0])
            return int(Q.row[k] + start), int(Q.col[k])
    return None


def _reduce(M):
    """Drop zero rows/columns and duplicate (up to sign) rows/columns.

    A minimal violating submatrix never contains a zero line or two parallel
    lines (its determinant would vanish), so the verdict is unchanged.
    Returns the reduced dense matrix and the original row/column indices.
    """
    D = np.asarray(M.toarray() if sp.issparse(M) else M, dtype=np.int64)
    rows = np.arange(D.shape[0])
    cols = np.arange(D.shape[1])
    for _ in range(2):
        keep_r = np.flatnonzero(np.abs(D).sum(axis=1) > 0)
        D, rows = D[keep_r], rows[keep_r]
        keep_c = np.flatnonzero(np.abs(D).sum(axis=0) > 0)
        D, cols = D[:, keep_c], cols[keep_c]
        if D.size == 0:
            break
        # canonical sign: first nonzero positive, then unique
        first = np.argmax(D != 0, axis=1)
        sgn = np.sign(D[np.arange(D.shape[0]), first])
        _, ur = np.unique(D * sgn[:, None], axis=0, return_index=True)
        ur = np.sort(ur)
        D, rows = D[ur], rows[ur]
        first = np.argmax(D != 0, axis=0)
        sgn = np.sign(D[first, np.arange(D.shape[1])])
        _, uc = np.unique((D * sgn[None, :]).T, axis=0, return_index=True)
        uc = np.sort(uc)
        D, cols = D[:, uc], cols[uc]
    return D, rows, cols


def _search_size(D, k, row_sets, deadline, col_chunk=200_000):
    """Search k x k submatrices with rows from ``row_sets``.

    Only columns with >= 2 nonzeros in the chosen rows are combined, and only
    submatrices whose every row and column has >= 2 nonzeros get a
    determinant: a minimal violator has no line with a single nonzero
    (expanding along it gives a smaller violator).  Float determinants that
    are not clearly in {-1, 0, 1} are recomputed exactly by the caller.

    Returns (local rows, local cols) of a candidate, "timeout", or None.
    """
    need = 1 if k == 1 else 2
    for R in row_sets:
        if deadline is not None and time.perf_counter() > deadline:
            return "timeout"
        sub = D[list(R)]
        elig = np.flatnonzero((sub != 0).sum(axis=0) >= need)
        if elig.size < k:
            continue
        sub = sub[:, elig]
        combos = np.fromiter(
            (c for cc in combinations(range(elig.size), k) for c in cc), dtype=np.int64
        ).reshape(-1, k) if comb(elig.size, k) <= col_chunk else None
        chunks = [combos] if combos is not None else _combo_chunks(elig.size, k, col_chunk)
        for C in chunks:
            if deadline is not None and time.perf_counter() > deadline:
                return "timeout"
            blocks = sub[:, C].transpose(1, 0, 2)  # (n_combos, k, k)
            nz = blocks != 0
            ok = (nz.sum(axis=1) >= need).all(axis=1) & (nz.sum(axis=2) >= need).all(axis=1)
            if not ok.any():
                continue
            idx = np.flatnonzero(ok)
            det = np.linalg.det(blocks[idx].astype(float))
            near = np.round(det)
            suspicious = (np.abs(near) > 1) | (np.abs(det - near) > 0.25)
            for s in np.flatnonzero(suspicious):
                return list(R), elig[C[idx[s]]].tolist()
    return None


def _combo_chunks(n, k, size):
    it = combinations(range(n), k)
    while True:
        block = np.fromiter((c for _, cc in zip(range(size), it) for c in cc),
                            dtype=np.int64)
        if block.size == 0:
            return
        yield block.reshape(-1, k)


def _binomial(n, k):
    """C(n, k): exact when below 1e17, else a float estimate (capped at 1e300; never
    computes huge binomials)."""
    if n < k:
        return 0
    log10 = (lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)) / log(10)
    return comb(n, k) if log10 < 17 else 10.0 ** min(log10, 300)


def _count_squares(m, n):
    """Number of nonempty square submatrices of an m x n matrix, C(m+n, m) - 1."""
    return _binomial(m + n, m) - 1


def _fmt_count(x):
    if isinstance(x, int):
        return f"{x:d}"
    return "more than 1e300" if x >= 1e300 else f"~{x:.2e}"


def brute_force_tu(M, *, time_limit=None, max_submatrices=DEFAULT_MAX_SUBMATRICES,
                   rows_fixed=None):
    """Exhaustive total-unimodularity test by subdeterminant enumeration.

    Square sizes grow from 1; every k x k submatrix (after sound pruning,
    see :func:`_search_size`) gets a determinant, so a True verdict is a
    proof by exhaustion and False comes with an exactly verified submatrix.

    Parameters
    ----------
    M : integer matrix (dense or sparse)
    time_limit : float, optional
        Seconds; past it the verdict is None.
    max_submatrices : int
        Refuse (verdict None) when the number of square submatrices of the
        reduced matrix exceeds this.
    rows_fixed : sequence of int, optional
        Only examine submatrices using exactly these rows (used by the
        Ghouila-Houri method on a minimal failing row set).

    Returns
    -------
    MethodResult

    Examples
    --------
    >>> from prune_opt.checks import brute_force_tu
    >>> brute_force_tu([[1, 1, 0], [0, 1, 1], [1, 0, 1]]).counterexample["determinant"]
    2
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    M = sp.csr_matrix(M, dtype=np.int64)
    hit = find_entry_violation(M)
    if hit is not None and rows_fixed is None:
        return MethodResult(False, counterexample=hit, summary="entry outside {-1, 0, 1}")
    space = (_fixed_rows_space(M, rows_fixed) if rows_fixed is not None
             else _reduced_space(M, max_submatrices))
    if isinstance(space, MethodResult):
        return space
    if space.total > max_submatrices:
        return _too_many(space.total, max_submatrices)
    found = _enumerate(M, space, deadline, time_limit)
    if found is not None:
        return found
    what = (f"all {len(rows_fixed)}-row square submatrices of the given rows"
            if rows_fixed is not None else "every square submatrix")
    return MethodResult(True, summary=f"{what} has determinant in {{-1, 0, 1}} "
                        f"(exhaustive, {_fmt_count(space.total)} candidates before pruning)",
                        submatrices=space.total)


@dataclass
class _SearchSpace:
    """The dense matrix searched, the original indices of its lines, the sizes to try."""

    D: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    sizes: object
    total: object
    fixed: bool = False
    transposed: bool = False

    def row_sets(self, k):
        if self.fixed:
            return [tuple(range(self.D.shape[0]))]
        return combinations(range(self.D.shape[0]), k)


def _too_many(count, limit):
    return MethodResult(None, reason=f"{_fmt_count(count)} square submatrices exceed the "
                        f"brute-force limit {limit:.3g} (max_submatrices)", submatrices=count)


def _fixed_rows_space(M, rows_fixed):
    sel = np.asarray(sorted(set(int(r) for r in rows_fixed)))
    D = M[sel].toarray()
    keep_c = np.flatnonzero(np.abs(D).sum(axis=0) > 0)
    return _SearchSpace(D[:, keep_c], sel, keep_c, [len(sel)],
                        _binomial(keep_c.size, len(sel)), fixed=True)


def _reduced_space(M, max_submatrices):
    nzr = int((np.diff(M.indptr) > 0).sum())
    nzc = int(np.unique(M.indices).size)
    pre = _count_squares(nzr, nzc) if nzr and nzc else 0
    if pre > max_submatrices and nzr * nzc > 4e6:  # too big even to densify and dedupe
        return _too_many(pre, max_submatrices)
    D, rows, cols = _reduce(M)
    total = _count_squares(*D.shape) if D.size else 0
    if D.shape[0] > D.shape[1]:  # enumerate row sets on the shorter side
        return _SearchSpace(D.T.copy(), cols, rows, range(1, D.shape[1] + 1), total,
                            transposed=True)
    return _SearchSpace(D, rows, cols, range(1, min(D.shape) + 1), total)


def _enumerate(M, space, deadline, time_limit):
    """MethodResult(False/None) for the first violation or time-out; None if none."""
    for k in space.sizes:
        if k > min(space.D.shape):
            break
        found = _search_size(space.D, k, space.row_sets(k), deadline)
        if found is None:
            continue
        if found != "timeout":
            r_idx, c_idx = space.rows[found[0]], space.cols[found[1]]
            if space.transposed:
                r_idx, c_idx = c_idx, r_idx
            cex = verified_counterexample(M, r_idx, c_idx)
            if cex is None:  # float false alarm: redo this size exhaustively and exactly
                cex = _exact_size(space.D, k, space.row_sets(k), deadline, space.rows,
                                  space.cols, space.transposed, M)
            if cex is None:
                continue
            found = cex
        if found == "timeout":
            return MethodResult(None, reason=f"time limit {time_limit:g} s reached while "
                                f"checking {k}x{k} submatrices", submatrices=space.total)
        return MethodResult(False, counterexample=found, summary=f"{k}x{k} submatrix with "
                            f"determinant {found['determinant']}", submatrices=space.total)
    return None


def _exact_size(D, k, row_sets, deadline, rows, cols, transposed, M):
    """Exact fallback used only after a floating-point false alarm."""
    need = 1 if k == 1 else 2
    for R in row_sets:
        sub = D[list(R)]
        elig = np.flatnonzero((sub != 0).sum(axis=0) >= need)
        for C in combinations(elig.tolist(), k):
            if deadline is not None and time.perf_counter() > deadline:
                return "timeout"
            r_idx, c_idx = rows[list(R)], cols[list(C)]
            if transposed:
                r_idx, c_idx = c_idx, r_idx
            cex = verified_counterexample(M, r_idx, c_idx)
            if cex is not None:
                return cex
    return None
