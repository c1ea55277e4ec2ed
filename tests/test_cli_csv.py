"""A new user's own table through the installed ``prune-opt`` entry point: a real CSV
(UCI Cleveland heart disease) with text columns and a yes/no target."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _heart_csv import CHEST_PAIN, heart_names, write_heart_csv
from cli_checks import one_line_error

import prune_opt as po
from prune_opt.cli import main
from prune_opt.cli._common import read_cost_file

ROOT = Path(__file__).resolve().parents[1]


def entry_point(*argv, cwd):
    """Run the installed ``prune-opt`` script (this checkout's code first on the path)."""
    exe = Path(sys.executable).with_name("prune-opt")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "prune_opt.cli"]
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    return subprocess.run([*cmd, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def heart_csv(tmp_path_factory):
    d = tmp_path_factory.mktemp("heart")
    write_heart_csv(d / "heart.csv")
    return d


def test_prune_then_predict_a_csv_with_text_columns(heart_csv):
    d = heart_csv
    run = entry_point("prune", "--dataset", "heart.csv", "--target", "disease", "--trees", "6",
                      "--lam", "0.002", "--out", "model.json", "--usage-plot", "usage.png",
                      cwd=d)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    doc = json.loads((d / "model.json").read_text())
    enc = doc["feature_encoding"]
    assert enc["target"] == "disease" and enc["columns"] == heart_names()
    assert enc["categories"]["cp"] == sorted(CHEST_PAIN.values())
    assert set(enc["categories"]) == {"sex", "cp", "thal"}
    assert doc["classes"] == ["no", "yes"]
    # one column per source column: a categorical column is one feature with one cost,
    # charged once whichever of its categories a split tests
    assert doc["n_features"] == len(heart_names()) == len(doc["costs"]["costs"])
    # a new table: other column order, fewer rows; the same coding by column name
    cols = ["disease", *heart_names()[::-1]]
    write_heart_csv(d / "new.csv", rows=50, columns=cols)
    run = entry_point("predict", "--model", "model.json", "--dataset", "new.csv",
                      "--out", "pred.csv", cwd=d)
    assert run.returncode == 0, run.stderr
    assert "accuracy" in run.stdout
    lines = (d / "pred.csv").read_text().splitlines()
    assert lines[0] == "prediction,acquisition_cost" and len(lines) == 51
    preds = [ln.split(",")[0] for ln in lines[1:]]
    # independently: code the training table's first 50 rows by hand and predict
    from prune_opt.datasets import load_csv

    ds = load_csv(d / "heart.csv", target="disease")
    model = po.load(d / "model.json")
    cp = heart_names().index("cp")
    words = sorted(CHEST_PAIN.values())
    assert [words[int(v)] for v in ds.X[:5, cp]] == [
        CHEST_PAIN[line.split(",")[2]] for line in
        (ROOT / "prune_opt" / "data" / "processed.cleveland.data").read_text().splitlines()[:5]]
    assert preds == model.predict(ds.X[:50]).tolist()
    costs = [float(ln.split(",")[1]) for ln in lines[1:]]
    np.testing.assert_allclose(costs, model.acquisition_cost(ds.X[:50]))


def test_unseen_category_names_column_row_and_value(heart_csv, tmp_path):
    d = heart_csv
    if not (d / "model.json").exists():
        assert entry_point("prune", "--dataset", "heart.csv", "--trees", "3", "--lam", "0.01",
                           "--out", "model.json", cwd=d).returncode == 0
    text = (d / "heart.csv").read_text().splitlines()
    bad = text[0] + "\n" + text[1].replace("typical", "crushing") + "\n"
    (tmp_path / "bad.csv").write_text(bad)
    run = entry_point("predict", "--model", str(d / "model.json"), "--dataset",
                      str(tmp_path / "bad.csv"), "--out", str(tmp_path / "p.csv"), cwd=d)
    assert run.returncode == 2
    assert "column 'cp' row 2: category 'crushing' was not seen" in run.stderr
    assert "Traceback" not in run.stderr


def test_every_data_command_reads_the_csv(heart_csv, tmp_path):
    d = heart_csv
    costs = {n: 1.0 for n in heart_names()}
    costs.update(thal=102.9, ca=100.9)
    (tmp_path / "costs.json").write_text(json.dumps(costs))
    common = ["--dataset", "heart.csv", "--target", "disease", "--costs",
              str(tmp_path / "costs.json")]
    for argv in (["tu-check", *common, "--trees", "2", "--examples", "25", "--task",
                  "classification"],
                 ["curve", *common, "--trees", "4", "--methods", "budgetprune,fewer-trees",
                  "--no-progress"],
                 ["compare", *common, "--trees", "4", "--no-progress"]):
        run = entry_point(*argv, cwd=d)
        assert run.returncode == 0, (argv[0], run.stderr)
        assert "Traceback" not in run.stderr
    assert "totally unimodular" in entry_point("tu-check", *common, cwd=d).stdout.lower()


def test_cost_file_from_to_dict_is_matched_by_name(tmp_path):
    names = ["a", "b", "c", "d"]
    rev = po.FeatureCosts({"d": 4.0, "c": 3.0, "b": 2.0, "a": 1.0},
                          groups={"lab": (5.0, ["c", "d"])}, feature_names=names[::-1])
    path = tmp_path / "c.json"
    path.write_text(json.dumps(rev.to_dict()))
    fc = read_cost_file(path, names)
    assert fc.feature_names == names
    # brute force: every usage pattern costs what the file says, by name
    for used in np.ndindex(2, 2, 2, 2):
        u = np.array(used, dtype=bool)
        want = sum(k + 1.0 for k in range(4) if u[k]) + (5.0 if u[2] or u[3] else 0.0)
        assert fc.cost_of_usage(u[None, :])[0] == pytest.approx(want)
    other = po.FeatureCosts([1, 2, 3, 4], feature_names=["a", "b", "c", "x"])
    path.write_text(json.dumps(other.to_dict()))
    with pytest.raises(ValueError, match=r"only in the file \['x'\], only in the dataset \['d'\]"):
        read_cost_file(path, names)


def test_requires_in_a_reordered_cost_file_follow_names(tmp_path):
    from prune_opt.datasets import load_dataset

    fc = load_dataset("thyroid").costs
    names = fc.feature_names
    spec = fc.to_dict()
    order = np.random.default_rng(0).permutation(len(names))
    shuffled = po.FeatureCosts(
        {names[k]: spec["costs"][k] for k in order},
        requires={"FTI": ["TT4", "T4U"]}, feature_names=[names[k] for k in order])
    path = tmp_path / "t.json"
    path.write_text(json.dumps(shuffled.to_dict()))
    back = read_cost_file(path, names)
    X = np.random.default_rng(1).random((64, len(names))) > 0.5
    np.testing.assert_allclose(back.cost_of_usage(X), fc.cost_of_usage(X))


@pytest.mark.parametrize("argv, needle", [
    (["--solver", "gurobi"], "--solver 'gurobi' is not a backend"),
    (["--objective", "bier"], "unknown objective 'bier'"),
])
def test_prune_refuses_bad_names_before_loading_data(argv, needle, no_work, capsys, tmp_path):
    code = main(["prune", "--dataset", "pima", "--lam", "0.01", *argv,
                 "--out", str(tmp_path / "p.json")])
    one_line_error(capsys, code, needle)


def test_brier_summary_counts_the_whole_forest(tmp_path):
    from prune_opt.cli import build_parser
    from prune_opt.cli._common import setup_experiment

    argv = ["prune", "--dataset", "pima", "--trees", "8", "--budget", "3", "--objective",
            "brier", "--time-limit", "3", "--out", str(tmp_path / "p.json"), "--json",
            str(tmp_path / "s.json")]
    assert main(argv) == 0
    summary = json.loads((tmp_path / "s.json").read_text())
    rf = setup_experiment(build_parser().parse_args(argv))["forest"]
    whole = sum(int((e.tree_.children_left >= 0).sum()) for e in rf.estimators_)
    assert summary["unpruned_splits"] == whole
    assert summary["splits"] <= whole


def test_feature_usage_of_a_bundled_dataset_names_its_features():
    from sklearn.ensemble import RandomForestClassifier

    from prune_opt.datasets import PIMA_NAMES, load_dataset

    d = load_dataset("pima")
    rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(d.X, d.y)
    usage = po.prune(rf, d.X, d.y, costs=d.costs, lam=1e-3).feature_usage(d.X)
    assert list(usage["feature"]) == PIMA_NAMES  # glucose, insulin, ... not x0 ... x7


@pytest.mark.parametrize("command", ["prune", "predict"])
def test_a_csv_with_an_unbalanced_quote_is_one_line_and_exit_2(command, heart_csv, tmp_path,
                                                               capsys):
    """About 200 KB of table after a stray opening quote: one line naming the line
    where the quote opened, exit 2, no traceback (the csv module's field limit)."""
    lines = (heart_csv / "heart.csv").read_text().splitlines()
    body = "\n".join(lines[1:])
    text = lines[0] + "\n" + lines[1].replace(",", ',"', 1) + "\n" + body * (
        200_000 // len(body) + 1)
    (tmp_path / "bad.csv").write_text(text)
    if command == "prune":
        argv = ["prune", "--dataset", str(tmp_path / "bad.csv"), "--lam", "0.01"]
    else:
        model = tmp_path / "m.json"
        assert main(["prune", "--dataset", str(heart_csv / "heart.csv"), "--trees", "2",
                     "--lam", "0.01", "--out", str(model)]) == 0
        capsys.readouterr()
        argv = ["predict", "--model", str(model), "--dataset", str(tmp_path / "bad.csv")]
    code = main([*argv, "--out", str(tmp_path / "out.json" if command == "prune"
                                     else tmp_path / "p.csv")])
    one_line_error(capsys, code, "line 2: a quoted field", "never closed")


def test_predict_rows_still_to_be_labelled(heart_csv, tmp_path, capsys):
    """New rows whose target cell is empty are predicted, not refused; the accuracy is
    printed on the rows whose target is filled, checked against the model's own
    predictions of those rows."""
    from prune_opt.datasets import load_csv

    model = tmp_path / "m.json"
    assert main(["prune", "--dataset", str(heart_csv / "heart.csv"), "--target", "disease",
                 "--trees", "3", "--lam", "0.01", "--out", str(model)]) == 0
    lines = (heart_csv / "heart.csv").read_text().splitlines()[:41]
    names = lines[0].split(",")
    t = names.index("disease")
    truth = [ln.split(",")[t] for ln in lines[1:]]

    def table(keep):
        rows = [ln.split(",") for ln in lines[1:]]
        for i, r in enumerate(rows):
            r[t] = r[t] if keep(i) else ""
        return "\n".join([lines[0], *(",".join(r) for r in rows)]) + "\n"

    ds = load_csv(heart_csv / "heart.csv", target="disease")
    pred = po.load(model).predict(ds.X[:40])
    for keep, shown in ((lambda i: False, None), (lambda i: i % 3 == 0, 14)):
        (tmp_path / "new.csv").write_text(table(keep))
        capsys.readouterr()
        code = main(["predict", "--model", str(model), "--dataset", str(tmp_path / "new.csv"),
                     "--out", str(tmp_path / "p.csv")])
        out = capsys.readouterr().out
        assert code == 0
        written = (tmp_path / "p.csv").read_text().splitlines()[1:]
        assert [w.split(",")[0] for w in written] == pred.tolist()
        if shown is None:
            assert "accuracy" not in out
            continue
        rows = [i for i in range(40) if keep(i)]
        acc = np.mean([pred[i] == truth[i] for i in rows])
        assert f"the {shown} of 40 rows whose target is filled: accuracy {acc:.4f}" in out


@pytest.mark.parametrize("command", ["prune", "fit"])
def test_a_model_saved_from_a_csv_reads_a_frame_by_column_name(command, heart_csv, tmp_path):
    """The command line names its model by the table's columns, so prune_opt.load(m)
    reads a DataFrame by name (the rows of a frame in another column order agreed with
    the model on 71 % of rows when it was read by position) and refuses other columns."""
    import pandas as pd

    from prune_opt.datasets import load_csv

    model = tmp_path / "m.json"
    assert main([command, "--dataset", str(heart_csv / "heart.csv"), "--target", "disease",
                 "--trees", "4", "--budget", "40", "--out", str(model),
                 *(["--time-limit", "1", "--quiet"] if command == "fit" else [])]) == 0
    ds = load_csv(heart_csv / "heart.csv", target="disease")
    frame = pd.DataFrame(ds.X, columns=ds.feature_names)
    loaded = po.load(model)
    assert loaded.forest.feature_names == ds.feature_names
    order = np.random.default_rng(0).permutation(len(ds.feature_names))
    shuffled = frame[[ds.feature_names[k] for k in order]]
    np.testing.assert_array_equal(loaded.predict_proba(shuffled), loaded.predict_proba(ds.X))
    with pytest.raises(ValueError, match=r"lacks \['age'\]"):
        loaded.predict(frame.rename(columns={"age": "years"}))


@pytest.mark.parametrize("text, needle", [
    ('{"a": 1, "b": 2, "a": 5}', "the key 'a' appears twice"),
    ("a: 1\nb: 2\na: 5\n", "line 3 names 'a' again"),
])
def test_a_cost_file_naming_a_feature_twice_is_refused(tmp_path, text, needle):
    """Both cost file formats kept the last of two costs of one feature without a word."""
    path = tmp_path / "c.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=needle):
        read_cost_file(path, ["a", "b"])


@pytest.mark.parametrize("text", ['{"a": 1.5, "b": 2}', "a: 1.5\nb: 2\n"])
def test_a_cost_file_with_a_byte_order_mark_reads_as_without(tmp_path, text):
    """A BOM made a JSON cost file fall through to the 'name:cost' reader, which then
    blamed line 1."""
    path = tmp_path / "c.txt"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    fc = read_cost_file(path, ["a", "b"])
    assert fc.unit_costs.tolist() == [1.5, 2.0]
