"""``prune-opt fit``: the budget estimator from the command line."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import prune_opt as po
from prune_opt.cli import main
from tests.cli_checks import one_line_error

FAST = ["--trees", "4", "--time-limit", "3", "--quiet"]


def test_fit_prints_the_candidates_and_writes_a_loadable_model(tmp_path, capsys):
    from forest_builders import BudgetPrunedForestClassifier

    out, table, summary = tmp_path / "m.json", tmp_path / "c.csv", tmp_path / "s.json"
    assert main(["fit", "--dataset", "pima", "--budget-share", "0.25", *FAST, "--out",
                 str(out), "--candidates-csv", str(table), "--json", str(summary)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("task: classification")
    assert "fits_budget" in text and "chosen:" in text and "test_accuracy" in text
    s = json.loads(summary.read_text())
    rows = list(csv.DictReader(table.open()))
    chosen = [r for r in rows if r["chosen"] == "True"]
    assert len(chosen) == 1 and chosen[0]["name"] == s["chosen"]
    assert s["prune_rows_average_cost"] <= s["budget"] + 1e-9
    assert len(s["candidates"]) == len(rows) and s["chosen"] in text
    pf = po.load(out)
    est = BudgetPrunedForestClassifier.load(out)
    ds = po.datasets.load_dataset("pima")
    frame = pd.DataFrame(ds.X, columns=ds.feature_names)
    assert np.array_equal(pf.predict(ds.X), est.predict(frame))
    assert pf.n_splits == s["n_splits"]
    assert list(pf.feature_usage(ds.X)["feature"]) == list(ds.feature_names)


def test_fit_regression(tmp_path, capsys):
    out, summary = tmp_path / "r.json", tmp_path / "s.json"
    assert main(["fit", "--dataset", "diabetes", "--budget", "20", *FAST, "--out", str(out), "--json", str(summary)]) == 0
    text = capsys.readouterr().out
    assert "task: regression" in text and "test_r2" in text and "test_mse" in text
    s = json.loads(summary.read_text())
    assert s["prune_rows_average_cost"] <= 20 + 1e-9
    assert po.load(out).task == "regression"


@pytest.mark.parametrize("argv, needle", [
    (["--budget", "-1"], "--budget"),
    (["--budget-share", "0"], "--budget-share"),
    (["--budget", "5", "--time-limit", "0"], "--time-limit"),
    (["--budget", "5", "--max-depth", "3"], "--max-depth"),
])
def test_fit_user_errors_are_one_line(argv, needle, tmp_path, capsys, no_work):
    code = main(["fit", "--dataset", "pima", *argv, "--out", str(tmp_path / "x.json")])
    one_line_error(capsys, code, needle)


def test_fit_needs_a_budget(tmp_path):
    with pytest.raises(SystemExit):
        main(["fit", "--dataset", "pima", "--out", str(tmp_path / "x.json")])


def _entry_point():
    exe = Path(sys.executable).with_name("prune-opt")
    if not exe.exists():
        pytest.skip("the prune-opt entry point is not installed beside this interpreter")
    return str(exe)


def _cancer_csv(tmp_path, labels):
    from sklearn.datasets import load_breast_cancer

    frame = load_breast_cancer(as_frame=True).frame.iloc[:240, [0, 1, 2, 3, 4, 5, -1]].copy()
    frame["target"] = np.where(frame["target"] == 1, *labels)
    path = tmp_path / "cancer.csv"
    frame.to_csv(path, index=False)
    (tmp_path / "costs.json").write_text(json.dumps(
        {c: float(1 + i) for i, c in enumerate(frame.columns[:-1])}))
    try:
        po.datasets.load_csv(path, target="target")
    except ValueError as exc:
        pytest.skip(f"this version's CSV loader refuses text targets ({exc})")
    return path


@pytest.mark.parametrize("labels", [("benign", "malignant"), (1, 0)])
def test_fit_through_the_entry_point_on_a_csv(tmp_path, labels):
    csv_path = _cancer_csv(tmp_path, labels)
    out = tmp_path / "model.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(po.__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([_entry_point(), "fit", "--dataset", str(csv_path), "--target",
                           "target", "--costs", str(tmp_path / "costs.json"), "--budget", "3",
                           *FAST, "--out", str(out)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "chosen:" in done.stdout
    pf = po.load(out)
    assert set(pf.classes_.tolist()) == set(labels)
    assert pf.forest.feature_names[0] == "mean radius"
