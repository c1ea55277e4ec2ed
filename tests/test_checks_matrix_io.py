"""Reading matrices from .npz, .mtx and .mps files; malformed files fail clearly."""

import numpy as np
import pytest
import scipy.sparse as sp

import prune_opt as po
from prune_opt.checks import is_totally_unimodular, load_matrix, save_matrix
from tests.test_checks_network import small_forest

A = np.array([[1, -1, 0], [0, 1, 1]])


def test_npz_sparse_and_dense_roundtrip(tmp_path):
    save_matrix(tmp_path / "s.npz", A)
    np.savez(tmp_path / "d.npz", A=A)
    for name in ("s.npz", "d.npz"):
        got = load_matrix(tmp_path / name)
        assert sp.issparse(got) and np.array_equal(got.toarray(), A)


def test_mtx_roundtrip(tmp_path):
    save_matrix(tmp_path / "a.mtx", A)
    assert np.array_equal(load_matrix(tmp_path / "a.mtx").toarray(), A)


def test_mps_export_of_a_pruning_problem_roundtrips(tmp_path):
    from ortools.linear_solver.python import model_builder as mb

    rf, X, y = small_forest(seed=0, trees=2, depth=2, n=20)
    problem = po.compile_problem(rf, X, y, lam=0.01)
    sf = problem.to_standard_form()
    model = mb.Model()
    x = model.new_num_var_series("x", index=_index(sf["c"].size), lower_bounds=0,
                                 upper_bounds=1)
    xs = list(x)
    for A_, b, eq in ((sf["A_eq"], sf["b_eq"], True), (sf["A_ub"], sf["b_ub"], False)):
        A_ = A_.tocsr()
        for i in range(A_.shape[0]):
            expr = sum(v * xs[j] for j, v in zip(A_[i].indices, A_[i].data))
            model.add(expr == b[i] if eq else expr <= b[i])
    path = tmp_path / "p.mps"
    model.write_to_mps_file(str(path))
    M = load_matrix(path)
    assert np.array_equal(M.toarray(), problem.constraint_matrix().toarray())
    assert is_totally_unimodular(M).is_tu in (True, None)


def _index(n):
    import pandas as pd

    return pd.RangeIndex(n)


@pytest.mark.parametrize("name, content, match", [
    ("bad.npz", b"not a zip", "not a readable"),
    ("bad.mtx", b"%%MatrixMarket nonsense\n1 2\n", "Matrix Market"),
    ("bad.mps", b"garbage\nfoo bar\n", "could not parse"),
    ("bad.csv", b"1,2\n", "unsupported matrix format"),
])
def test_malformed_files_give_one_line_errors(tmp_path, name, content, match):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=match) as info:
        load_matrix(path)
    assert name in str(info.value) and "\n" not in str(info.value)


def test_npz_without_key_a_and_missing_file(tmp_path):
    np.savez(tmp_path / "k.npz", B=A)
    with pytest.raises(ValueError, match="no array 'A'"):
        load_matrix(tmp_path / "k.npz")
    with pytest.raises(FileNotFoundError):
        load_matrix(tmp_path / "missing.npz")
