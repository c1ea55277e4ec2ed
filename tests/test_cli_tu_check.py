"""``prune-opt tu-check`` end to end."""

import json

import numpy as np
import pytest

from prune_opt.checks import exact_determinant, save_matrix
from prune_opt.cli import main


def run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_dataset_program_is_certified(capsys, tmp_path):
    rc, out, _ = run(["tu-check", "--dataset", "digits", "--trees", "2", "--examples", "60",
                      "--json", str(tmp_path / "r.json")], capsys)
    assert rc == 0
    assert "verdict: totally unimodular" in out and "method: network" in out
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["report"]["is_tu"] is True and d["report"]["certificate"]["kind"] == "pruning-tree"
    assert d["problem"]["n_rows"] == d["report"]["shape"][0]


def test_budget_program_prints_a_structural_counterexample(capsys, tmp_path):
    out_json = tmp_path / "b.json"
    rc, out, _ = run(["tu-check", "--dataset", "pima", "--trees", "2", "--examples", "30",
                      "--budget", "2", "--uniform-costs", "--vertices", "5",
                      "--json", str(out_json)], capsys)
    assert rc == 0
    assert "NOT totally unimodular" in out and "counterexample: 5x5 submatrix" in out
    assert "LP vertices:" in out
    d = json.loads(out_json.read_text())
    cex = d["report"]["counterexample"]
    assert len(cex["rows"]) >= 2
    assert exact_determinant(cex["submatrix"]) == cex["determinant"]
    assert abs(cex["determinant"]) >= 2
    assert d["vertex_integrality"]["n_random"] == 5


@pytest.mark.parametrize("method", ["auto", "brute", "ghouila-houri"])
def test_matrix_file(capsys, tmp_path, method):
    path = tmp_path / "tri.npz"
    save_matrix(path, np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]]))
    rc, out, _ = run(["tu-check", "--matrix", str(path), "--method", method], capsys)
    assert rc == 0 and "NOT totally unimodular" in out and "determinant 2" in out
    assert "[  1   1   0 ]" in out


def test_matrix_with_fractional_row_is_scaled(capsys, tmp_path):
    path = tmp_path / "f.mtx"
    save_matrix(path, np.array([[0.5, 0.5, 0.0], [0.0, 1.0, -1.0]]))
    rc, out, _ = run(["tu-check", "--matrix", str(path), "--time-limit", "10"], capsys)
    assert rc == 0 and "scaled to primitive integers" in out
    assert "verdict: totally unimodular" in out


@pytest.mark.parametrize("argv, match", [
    (["tu-check"], "--dataset NAME"),
    (["tu-check", "--matrix", "BAD", "--budget", "1"], "--budget and --vertices need"),
    (["tu-check", "--dataset", "pima", "--examples", "100000"], "--examples 100000"),
    (["tu-check", "--dataset", "pima", "--trees", "0"], "--trees must be"),
    (["tu-check", "--dataset", "pima", "--time-limit", "-1"], "--time-limit"),
])
def test_user_errors_exit_2_with_one_line(capsys, argv, match):
    rc, _, err = run(argv, capsys)
    assert rc == 2 and match in err and err.count("\n") == 1


def test_malformed_matrix_file(capsys, tmp_path):
    path = tmp_path / "m.mps"
    path.write_text("this is not MPS\n")
    rc, _, err = run(["tu-check", "--matrix", str(path)], capsys)
    assert rc == 2 and "m.mps" in err and err.count("\n") == 1


def test_cmr_certificate_goes_to_json(capsys, tmp_path):
    from prune_opt.checks import cmr_available

    if not cmr_available()[0]:
        pytest.skip("passagemath-cmr not installed")
    path = tmp_path / "bip.npz"
    save_matrix(path, np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 1, 1, 1]]))
    rc, out, _ = run(["tu-check", "--matrix", str(path), "--method", "cmr", "--json",
                      str(tmp_path / "c.json")], capsys)
    d = json.loads((tmp_path / "c.json").read_text())
    assert rc == 0 and d["report"]["method"] == "cmr"
    assert d["report"]["is_tu"] is not None and d["report"]["certificate"]["summary"]
