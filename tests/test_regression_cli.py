"""The command line and the datasets on regression: --task, R^2/MSE, heart-severity."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

import prune_opt as po
from prune_opt.cli import main
from prune_opt.cli._common import detect_task
from prune_opt.datasets import dataset_catalog, load_dataset

DATA = ["--dataset", "diabetes", "--trees", "4", "--max-depth", "3"]


def test_regression_datasets_carry_real_or_documented_costs():
    heart = load_dataset("heart-severity")
    assert heart.task == "regression" and heart.X.shape == (303, 13)
    assert set(np.unique(heart.y)) == {0.0, 1.0, 2.0, 3.0, 4.0}
    binary = load_dataset("heart")  # the same patients and Turney costs, binarised
    np.testing.assert_array_equal(binary.y, heart.y > 0)
    np.testing.assert_array_equal(heart.costs.unit_costs, binary.costs.unit_costs)
    diabetes = load_dataset("diabetes")
    assert diabetes.task == "regression" and diabetes.costs.n_units == 11  # + blood draw
    rows = {r["name"]: r for r in dataset_catalog()}
    assert rows["heart-severity"]["task"] == "regression" and rows["heart-severity"]["local"]
    assert "illustrative" in rows["diabetes"]["costs"]


def test_datasets_command_lists_the_task(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("heart-severity"))
    assert "regression" in line and "Turney" in line


@pytest.mark.parametrize("requested, y, task", [
    ("auto", np.linspace(0, 1, 50), "regression"),
    ("auto", np.repeat([0.0, 1.0], 25), "classification"),
    ("auto", np.arange(50), "classification"),  # integers: labels unless told
    ("regression", np.arange(50), "regression"),
    ("classification", np.linspace(0, 5, 6), "classification"),
])
def test_task_detection(requested, y, task):
    assert detect_task(requested, SimpleNamespace(y=y, task="classification"))[0] == task


def test_task_regression_needs_a_numeric_target():
    with pytest.raises(ValueError, match="numeric target"):
        detect_task("regression", SimpleNamespace(y=np.array(["a", "b"]), task="x"))


def test_prune_regression_reports_r2_and_mse(tmp_path, capsys):
    out, summary = tmp_path / "p.json", tmp_path / "s.json"
    assert main(["prune", *DATA, "--lam", "0.001", "--out", str(out),
                 "--json", str(summary)]) == 0
    text = capsys.readouterr().out
    assert "task: regression (the dataset's task)" in text
    assert "test_r2" in text and "test_mse" in text and "test_accuracy" not in text
    s = json.loads(summary.read_text())
    pruned = po.load(out)
    assert pruned.task == "regression" and s["task"] == "regression"
    d = load_dataset("diabetes")
    assert np.isfinite(pruned.predict(d.X)).all()
    assert main(["prune", *DATA, "--budget", "5", "--out", str(out), "--json",
                 str(summary)]) == 0
    assert json.loads(summary.read_text())["validation_cost"] <= 5 + 1e-9


def test_prune_csv_target_detected_and_forced(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = X[:, 0] * 2.5 + rng.normal(size=120)
    path = tmp_path / "t.csv"
    path.write_text("a,b,c,y\n" + "\n".join(",".join(f"{v:.6f}" for v in (*x, t))
                                          for x, t in zip(X, y)))
    args = ["prune", "--dataset", str(path), "--trees", "3", "--max-depth", "3", "--lam",
            "0.01", "--out", str(tmp_path / "p.json")]
    assert main(args) == 0
    assert "task: regression (detected: float target with 120 distinct values)" in \
        capsys.readouterr().out
    assert main([*args, "--task", "regression"]) == 0
    assert "task: regression (as requested)" in capsys.readouterr().out
    assert main([*args, "--task", "classification"]) == 2
    assert "--task classification needs class labels" in capsys.readouterr().err


def test_prune_regression_refuses_ensemble_objectives(tmp_path, capsys):
    assert main(["prune", *DATA, "--lam", "0.01", "--objective", "brier",
                 "--out", str(tmp_path / "p.json")]) == 2
    assert "regression forest" in capsys.readouterr().err


def test_compare_regression_table(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert main(["compare", *DATA, "--solvers", "mincut,highs", "--no-progress",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "test_r2" in text and "test_mse" in text
    rows = json.loads(out.read_text())["rows"]
    assert abs(rows[0]["objective"] - rows[1]["objective"]) <= 1e-9 * abs(rows[0]["objective"])
    assert rows[0]["test_r2"] == rows[1]["test_r2"]


def test_curve_regression(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert main(["curve", *DATA, "--methods", "budgetprune,greedy,impurity",
                 "--no-progress", "--json", str(out), "--plot", str(tmp_path / "c.png")]) == 0
    text = capsys.readouterr().out
    assert "unpruned test R^2" in text and "r2@50%" in text
    doc = json.loads(out.read_text())
    assert doc["task"] == "regression" and "test_mse" in doc["unpruned"]
    assert all("r2_eval" in r for r in doc["rows"])
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_export_takes_task_and_commands_without_it_refuse_continuous_targets(tmp_path,
                                                                            capsys):
    assert main(["export", *DATA, "--lam", "0.01", "--out", str(tmp_path / "p.mps")]) == 0
    assert "task: regression" in capsys.readouterr().out
    with pytest.raises(ValueError, match="fits a classifier.*take --task regression"):
        detect_task(None, SimpleNamespace(y=np.linspace(0, 1, 50), task="classification"))
