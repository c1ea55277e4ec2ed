"""Read constraint matrices from .npz, Matrix Market (.mtx) and MPS files."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._io import atomic_write

__all__ = ["load_matrix", "save_matrix"]

SUFFIXES = (".npz", ".mtx", ".mps")


def _load_npz(path):
    try:
        return sp.load_npz(path).tocsr()
    except (ValueError, KeyError, OSError, zipfile.BadZipFile):
        pass
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"{path}: not a readable .npz archive ({first})") from None
    if not hasattr(data, "files"):
        raise ValueError(f"{path}: a single .npy array, not an .npz archive")
    with data:
        if "A" not in data.files:
            raise ValueError(f"{path}: no scipy.sparse matrix and no array 'A' in the "
                             f"archive (found {sorted(data.files)})")
        A = data["A"]
    if A.ndim != 2:
        raise ValueError(f"{path}: array 'A' must be 2-D, got shape {A.shape}")
    return sp.csr_matrix(A)


def _load_mtx(path):
    from scipy.io import mmread

    try:
        A = mmread(path)
    except Exception as exc:  # scipy raises ValueError/OSError/... on malformed files
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"{path}: not a valid Matrix Market file ({first})") from None
    if not sp.issparse(A):
        A = np.asarray(A)
        if A.ndim != 2:
            raise ValueError(f"{path}: Matrix Market content is not a matrix")
    return sp.csr_matrix(A)


def _load_mps(path):
    from ortools.linear_solver.python import model_builder as mb

    model = mb.Model()
    if not model.import_from_mps_file(str(path)):
        raise ValueError(f"{path}: OR-Tools could not parse the MPS file")
    h = model.helper
    m, n = model.num_constraints, model.num_variables
    rows, cols, vals = [], [], []
    for i in range(m):  # file import: one call per constraint row
        idx = h.constraint_var_indices(i)
        rows.append(np.full(len(idx), i))
        cols.append(np.asarray(idx, dtype=np.int64))
        vals.append(np.asarray(h.constraint_coefficients(i), dtype=float))
    if m == 0:
        return sp.csr_matrix((0, n))
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(m, n))


def load_matrix(path):
    """Read a constraint matrix from a file.

    Supported: ``.npz`` (``scipy.sparse.save_npz`` or ``numpy.savez`` with
    an array named ``A``), ``.mtx`` (Matrix Market) and ``.mps`` (rows of
    the linear constraints, read with OR-Tools' model builder; the
    objective row is not part of the matrix).

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    scipy.sparse.csr_matrix (float)

    Raises
    ------
    FileNotFoundError, ValueError
        One-line messages naming the file and the problem.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from prune_opt.checks import load_matrix, save_matrix
    >>> path = os.path.join(tempfile.mkdtemp(), "a.npz")
    >>> save_matrix(path, np.array([[1, 0], [1, 1]]))
    >>> load_matrix(path).toarray().tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path}: unsupported matrix format {suffix!r}; use one of "
                         f"{', '.join(SUFFIXES)}")
    loader = {".npz": _load_npz, ".mtx": _load_mtx, ".mps": _load_mps}[suffix]
    A = loader(path)
    A = sp.csr_matrix(A, dtype=float)
    if not np.isfinite(A.data).all():
        raise ValueError(f"{path}: matrix has NaN or infinite entries")
    return A


def save_matrix(path, A):
    """Write ``A`` (dense or sparse) as ``.npz`` (scipy.sparse) or ``.mtx``.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> save_matrix(os.path.join(tempfile.mkdtemp(), "a.mtx"), np.eye(2))
    """
    path = Path(path)
    A = sp.csr_matrix(A)
    suffix = path.suffix.lower()
    if suffix not in (".npz", ".mtx"):
        raise ValueError(f"{path}: save_matrix writes .npz or .mtx, got {path.suffix!r}")
    with atomic_write(path, "wb") as fh:  # whole file or none
        if suffix == ".npz":
            sp.save_npz(fh, A)
        else:
            from scipy.io import mmwrite

            mmwrite(fh, A)
