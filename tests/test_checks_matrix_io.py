"""Reading matrices from .npz, .mtx and .mps files; malformed files fail clearly."""

import numpy as np
import pytest
import scipy.sparse as sp

import prune_opt as po
from prune_opt.checks import cmr_available, is_totally_unimodular, load_matrix, save_matrix
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


@pytest.mark.parametrize("budget", [None, 1.0])
def test_mps_export_of_a_pruning_problem_roundtrips(tmp_path, budget):
    from prune_opt.program._files import write_program

    rf, X, y = small_forest(seed=0, trees=2, depth=2, n=20)
    problem = po.compile_problem(rf, X, y, lam=0.01, costs=[1.0, 2.5, 0.5, 3.0], budget=budget)
    path = tmp_path / "p.mps"
    write_program(problem, path)
    M = load_matrix(path)
    assert np.allclose(M.toarray(), problem.constraint_matrix().toarray())
    if budget is not None:
        assert is_totally_unimodular(problem).is_tu is False
    else:  # a bare matrix: only CMR can certify it without the problem's structure
        rep = is_totally_unimodular(sp.csr_matrix(np.round(M.toarray())))
        assert rep.is_tu is (True if cmr_available()[0] else rep.is_tu)
        assert rep.is_tu in (True, None)


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


@pytest.mark.parametrize("suffix", [".npz", ".mtx"])
def test_save_matrix_is_atomic(tmp_path, monkeypatch, suffix):
    import errno
    import os

    target = tmp_path / f"A{suffix}"
    save_matrix(target, A)
    assert (load_matrix(target).toarray() == A).all()
    before = target.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        save_matrix(target, 2 * A)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [target.name]
