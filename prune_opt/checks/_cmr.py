"""Seymour-decomposition TU test through the CMR library (passagemath-cmr, optional)."""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp

from ._exact import verified_counterexample
from ._result import MethodResult

__all__ = ["cmr_available", "cmr_tu", "INSTALL_HINT"]

INSTALL_HINT = "not installed: pip install prune-opt[tu]  (passagemath-cmr)"


def _import_cmr():
    from sage.matrix.matrix_cmr_sparse import Matrix_cmr_chr_sparse
    from sage.matrix.matrix_space import MatrixSpace
    from sage.rings.integer_ring import ZZ

    return Matrix_cmr_chr_sparse, MatrixSpace, ZZ


def cmr_available():
    """(bool, detail): whether CMR's TU test can be imported, else why not.

    Examples
    --------
    >>> ok, detail = cmr_available()
    >>> isinstance(ok, bool)
    True
    """
    try:
        _import_cmr()
    except Exception as exc:  # ImportError, or a broken sage install
        return False, f"{INSTALL_HINT} ({type(exc).__name__}: {exc})"
    return True, "passagemath-cmr"


@contextmanager
def _captured_stderr_fd():
    """Collect what C code writes to file descriptor 2 (CMR prints its errors there)."""
    buf = {"text": ""}
    try:
        saved = os.dup(2)
    except OSError:  # no usable fd 2: nothing to capture
        yield buf
        return
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield buf
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            buf["text"] = tmp.read().decode(errors="replace")


def _decomposition_summary(node):
    """Counts of the Seymour decomposition's node types, e.g. {'GraphicNode': 3}."""
    counts = Counter()
    stack = [node]
    while stack:
        nd = stack.pop()
        counts[type(nd).__name__] += 1
        try:
            stack.extend(nd.child_nodes())
        except Exception:  # leaf node types without children
            pass
    return dict(counts)


def cmr_tu(M, *, time_limit=None):
    """Total unimodularity by CMR (Seymour decomposition), with certificate.

    A True verdict carries CMR's decomposition tree; a False verdict carries
    the row/column indices CMR reports, re-verified here with exact
    arithmetic (a submatrix that does not verify gives None, not False).
    CMR errors (e.g. "User input error", time limit) give None with the
    reason, so callers can fall back to another method.

    Returns
    -------
    MethodResult
    """
    ok, detail = cmr_available()
    if not ok:
        return MethodResult(None, reason=detail)
    CM, MatrixSpace, ZZ = _import_cmr()
    M = sp.coo_matrix(M, dtype=np.int64)
    m, n = M.shape
    if m == 0 or n == 0:
        return MethodResult(True, summary="empty matrix")
    entries = {(int(i), int(j)): int(v) for i, j, v in zip(M.row, M.col, M.data) if v}
    try:
        with _captured_stderr_fd() as err:
            A = CM(MatrixSpace(ZZ, m, n, sparse=True), entries)
            kwargs = {"certificate": True}
            if time_limit is not None:
                kwargs["time_limit"] = float(max(time_limit, 1e-3))
            result = A.is_totally_unimodular(**kwargs)
    except Exception as exc:  # CMR reports input and limit problems as RuntimeError
        where = err["text"].strip().splitlines()
        # keep CMR's last message, with source paths shortened to file names
        detail = (" (CMR: " + re.sub(r"\S*/", "", where[-1].strip()) + ")") if where else ""
        return MethodResult(None, reason=f"CMR failed: {type(exc).__name__}: {exc}{detail}")
    verdict, cert = result
    if verdict:
        counts = _decomposition_summary(cert)
        return MethodResult(True, certificate=cert,
                            summary=f"Seymour decomposition {cert!r}; node types {counts}",
                            decomposition=counts)
    node, where = cert if isinstance(cert, tuple) else (cert, None)
    if where is None:
        return MethodResult(None, certificate=node,
                            reason="CMR says not TU but gave no submatrix to verify")
    rows, cols = (list(map(int, x)) for x in where)
    cex = verified_counterexample(M.tocsr(), rows, cols)
    if cex is None:
        return MethodResult(None, certificate=node,
                            reason=f"CMR says not TU but its submatrix rows {rows}, columns "
                            f"{cols} has determinant in {{-1, 0, 1}}")
    k = len(rows)
    return MethodResult(False, certificate=node, counterexample=cex,
                        summary=f"CMR: {k}x{k} submatrix with determinant "
                        f"{cex['determinant']} (decomposition {node!r})")
