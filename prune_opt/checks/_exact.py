"""Exact integer helpers: determinants, verified counterexamples, row scaling."""

from __future__ import annotations

from fractions import Fraction
from math import gcd, lcm

import numpy as np
import scipy.sparse as sp

from ..program._problem import PruningProblem

__all__ = ["exact_determinant", "verified_counterexample", "scale_rows_to_integers",
           "as_integer_matrix"]


def exact_determinant(M):
    """Determinant of an integer matrix with exact (fraction-free Bareiss) arithmetic.

    Parameters
    ----------
    M : array-like of int, shape (k, k)

    Returns
    -------
    int

    Examples
    --------
    >>> exact_determinant([[1, 1, 0], [0, 1, 1], [1, 0, 1]])
    2
    """
    a = [[int(v) for v in row] for row in np.asarray(M).tolist()]
    n = len(a)
    if n == 0:
        return 1
    if any(len(row) != n for row in a):
        raise ValueError(f"M must be square, got {n} rows of lengths "
                         f"{sorted({len(r) for r in a})}")
    sign, prev = 1, 1
    for k in range(n - 1):
        if a[k][k] == 0:
            swap = next((i for i in range(k + 1, n) if a[i][k] != 0), None)
            if swap is None:
                return 0
            a[k], a[swap] = a[swap], a[k]
            sign = -sign
        akk = a[k][k]
        for i in range(k + 1, n):
            aik = a[i][k]
            row_i, row_k = a[i], a[k]
            for j in range(k + 1, n):
                row_i[j] = (row_i[j] * akk - aik * row_k[j]) // prev
        prev = akk
    return sign * a[n - 1][n - 1]


def verified_counterexample(A, rows, cols):
    """The square submatrix ``A[rows, cols]`` as a counterexample to total
    unimodularity, or None when its exact determinant is in {-1, 0, 1}.

    Returns
    -------
    dict or None
        ``rows``, ``columns`` (sorted indices into ``A``), ``determinant``
        (exact int) and ``submatrix`` (list of lists of int).

    Examples
    --------
    >>> import numpy as np
    >>> verified_counterexample(np.array([[1, 1], [1, -1]]), [0, 1], [0, 1])["determinant"]
    -2
    """
    rows = sorted(int(r) for r in rows)
    cols = sorted(int(c) for c in cols)
    if len(rows) != len(cols) or not rows:
        raise ValueError("a counterexample needs as many rows as columns (at least one)")
    if sp.issparse(A):
        sub = A.tocsr()[rows][:, cols].toarray()
    else:
        sub = np.asarray(A)[np.ix_(rows, cols)]
    sub = np.asarray(sub).astype(np.int64)
    det = exact_determinant(sub)
    if det in (-1, 0, 1):
        return None
    return {"rows": rows, "columns": cols, "determinant": int(det),
            "submatrix": sub.tolist()}


def _row_scale(values, primitive, max_denominator=10**6):
    """Positive rational s with s*values integer (and coprime with ``primitive``)."""
    uniq = np.unique(np.abs(values[values != 0]))
    if uniq.size == 0:
        return Fraction(1), {}
    fracs = {}
    for v in uniq.tolist():
        f = Fraction(v).limit_denominator(max_denominator)
        if f == 0 or abs(float(f) - v) > 1e-12 * abs(v):
            raise ValueError(f"entry {v!r} is not a rational number with denominator <= "
                             f"{max_denominator}; cannot scale the row to integers")
        fracs[v] = f
    den = lcm(*(f.denominator for f in fracs.values()))
    num = 0
    if primitive:
        for f in fracs.values():
            num = gcd(num, int(f * den))
    return Fraction(den, max(num, 1)), fracs


def scale_rows_to_integers(A, rows=None, *, primitive=True):
    """Scale rows of ``A`` by positive rationals so they become integer vectors.

    Row scaling by a positive number does not change the feasible set of
    ``A x <= b`` (scale ``b`` too), but total unimodularity is a property of
    the scaled integer matrix.  Each selected row is multiplied by the lcm of
    its entries' denominators (exact fractions) and, with ``primitive``,
    divided by the gcd of the result, so the smallest integer representative
    is tested (a budget row with all coefficients equal becomes all ones).

    Parameters
    ----------
    A : array-like or scipy.sparse matrix
    rows : sequence of int, optional
        Rows to scale; default every row holding a non-integer entry.
    primitive : bool
        Also divide the selected rows by the gcd of their integer entries.

    Returns
    -------
    scaled : scipy.sparse.csr_matrix of int64
    factors : dict {row: Fraction}
        The factor applied to each scaled row.

    Examples
    --------
    >>> import numpy as np
    >>> S, f = scale_rows_to_integers(np.array([[1.0, 0.0], [0.5, 1.5]]))
    >>> S.toarray().tolist(), f
    ([[1, 0], [1, 3]], {1: Fraction(2, 1)})
    """
    M = sp.csr_matrix(A, dtype=float)
    M.sum_duplicates()
    if not np.isfinite(M.data).all():
        raise ValueError("A has NaN or infinite entries")
    if rows is None:
        bad = M.data != np.round(M.data)
        rows = np.unique(np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))[bad])
    factors = {}
    data = M.data.copy()
    for r in np.asarray(rows, dtype=int).tolist():  # only the few rows that need it
        seg = slice(M.indptr[r], M.indptr[r + 1])
        s, fracs = _row_scale(data[seg], primitive)
        exact = [(fracs[abs(v)] if v > 0 else -fracs[abs(v)]) * s if v else Fraction(0)
                 for v in data[seg].tolist()]
        data[seg] = [float(x) for x in exact]
        factors[int(r)] = s
    out = sp.csr_matrix((np.round(data).astype(np.int64), M.indices.copy(), M.indptr.copy()),
                        shape=M.shape)
    out.eliminate_zeros()
    return out, factors


def as_integer_matrix(A):
    """Coerce a matrix or a PruningProblem to an integer CSR matrix.

    Returns
    -------
    M : scipy.sparse.csr_matrix of int64
    problem : PruningProblem or None
    notes : list of str
    """
    notes = []
    if isinstance(A, PruningProblem):
        M = sp.csr_matrix(A.constraint_matrix(), dtype=float)
        if A.budget is not None:
            M, factors = scale_rows_to_integers(M, rows=[M.shape[0] - 1])
            f = factors[M.shape[0] - 1]
            notes.append(f"budget row (last row) multiplied by {f} to primitive integers")
        return _integer_csr(M.data, M), A, notes
    if hasattr(A, "constraint_matrix") and not sp.issparse(A):
        raise TypeError(f"A: expected an array, a scipy.sparse matrix or a "
                        f"PruningProblem, got {type(A).__name__}")
    if sp.issparse(A):
        M = sp.csr_matrix(A)
    else:
        arr = np.asarray(A)
        if arr.dtype == object or arr.ndim != 2:
            raise ValueError(f"A must be a 2-D numeric matrix, got shape "
                             f"{getattr(arr, 'shape', None)} and dtype {arr.dtype}")
        M = sp.csr_matrix(arr)
    if M.dtype.kind not in "biuf":
        raise TypeError(f"A must be numeric, got dtype {M.dtype}")
    M.sum_duplicates()
    data = M.data.astype(float)
    if not np.isfinite(data).all():
        raise ValueError("A has NaN or infinite entries")
    frac = data != np.round(data)
    if frac.any():
        k = int(np.flatnonzero(frac)[0])
        r = int(np.searchsorted(M.indptr, k, side="right") - 1)
        raise ValueError(f"A has a non-integer entry {data[k]!r} in row {r}; total "
                         "unimodularity is defined for integer matrices: scale such rows "
                         "first with prune_opt.checks.scale_rows_to_integers")
    return _integer_csr(data, M), None, notes


def _integer_csr(data, M):
    """``M``'s pattern with the integral values ``data`` as int64, zeros dropped, sorted."""
    out = sp.csr_matrix((np.round(data).astype(np.int64), M.indices, M.indptr), shape=M.shape)
    out.eliminate_zeros()
    out.sort_indices()
    return out
