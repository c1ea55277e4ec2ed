"""``--model FILE``: prune a user's LightGBM, XGBoost or CatBoost model from the command
line."""

import json

import numpy as np
import pytest
from cli_checks import one_line_error

import prune_opt as po
from prune_opt.cli import main
from prune_opt.datasets import load_dataset

lgb = pytest.importorskip("lightgbm")


@pytest.fixture(scope="module")
def pima():
    return load_dataset("pima")


@pytest.fixture(scope="module")
def lightgbm_file(tmp_path_factory, pima):
    path = tmp_path_factory.mktemp("models") / "model.txt"
    model = lgb.LGBMClassifier(n_estimators=30, num_leaves=8, verbose=-1, random_state=0)
    model.fit(pima.X[:300], pima.y[:300])
    model.booster_.save_model(str(path))
    return path


def _summary(tmp_path, name):
    return json.loads((tmp_path / name).read_text())


def test_prune_a_lightgbm_file_to_a_budget_writes_both_formats(capsys, tmp_path,
                                                               lightgbm_file, pima):
    out = tmp_path / "pruned.json"
    code = main(["prune", "--model", str(lightgbm_file), "--dataset", "pima", "--budget", "8",
                 "--out", str(out), "--json", str(tmp_path / "s.json"), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    assert "the model in" in text and f"wrote {tmp_path / 'pruned.txt'}" in text
    summary = _summary(tmp_path, "s.json")
    assert summary["validation_cost"] <= 8 * (1 + 1e-9)
    assert summary["trees"] == 30
    pruned = po.load(out)
    booster = lgb.Booster(model_file=str(tmp_path / "pruned.txt"))
    # the LightGBM file predicts what the prune-opt file predicts, and no feature more
    np.testing.assert_array_equal(booster.predict(pima.X), pruned.predict_proba(pima.X)[:, 1])
    assert pruned.n_splits < po.as_forest(lgb.Booster(model_file=str(lightgbm_file))).n_nodes


def test_an_xgboost_file_with_named_columns_in_another_order(capsys, tmp_path, pima):
    xgb = pytest.importorskip("xgboost")
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(pima.X[:300], columns=pima.feature_names)
    reversed_cols = list(frame.columns[::-1])
    model = xgb.XGBClassifier(n_estimators=20, max_depth=3, n_jobs=1)
    model.fit(frame[reversed_cols], pima.y[:300])
    model.save_model(str(tmp_path / "xgb.json"))
    code = main(["prune", "--model", str(tmp_path / "xgb.json"), "--dataset", "pima",
                 "--lam", "0.01", "--out", str(tmp_path / "p.json"), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    pruned = po.load(tmp_path / "p.json")
    assert pruned.forest.feature_names == reversed_cols
    # read by name: the frame in the dataset's order predicts as the model's order
    full = pd.DataFrame(pima.X, columns=pima.feature_names)
    np.testing.assert_array_equal(pruned.predict_proba(full),
                                  pruned.predict_proba(full[reversed_cols]))
    booster = xgb.Booster(model_file=str(tmp_path / "p.xgboost.json"))
    dm = xgb.DMatrix(full[reversed_cols])
    np.testing.assert_allclose(booster.predict(dm), pruned.predict_proba(full)[:, 1],
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("command", [
    ["compare", "--lam", "0.01"],
    ["curve", "--budgets", "0.25"],
    ["tu-check", "--examples", "15"],
])
def test_every_command_that_prunes_takes_the_model(capsys, tmp_path, lightgbm_file, command):
    extra = ["--csv", str(tmp_path / "c.csv")] if command[0] == "curve" else []
    code = main([command[0], "--model", str(lightgbm_file), "--dataset", "pima",
                 *command[1:], *extra])
    assert code == 0, capsys.readouterr().err


@pytest.mark.parametrize("content, words", [
    (b"\x80\x04\x95 pickled", "pickle"),
    (b"glucose,age\n1,2\n", "neither a LightGBM model text nor an XGBoost or CatBoost JSON"),
    (b"tree\nversion=v4\nnum_class=1\n", "LightGBM model text"),
    (b'{"learner": ', "JSON"),
])
def test_a_file_that_is_not_a_model_is_one_line(capsys, tmp_path, content, words):
    path = tmp_path / "model.bin"
    path.write_bytes(content)
    code = main(["prune", "--model", str(path), "--dataset", "pima", "--lam", "0.01",
                 "--out", str(tmp_path / "p.json")])
    one_line_error(capsys, code, words)


def test_a_model_of_the_other_task_or_columns_is_refused(capsys, tmp_path, lightgbm_file):
    code = main(["prune", "--model", str(lightgbm_file), "--dataset", "pima", "--lam", "0.01",
                 "--task", "regression", "--out", str(tmp_path / "p.json")])
    one_line_error(capsys, code, "classification model")
    code = main(["prune", "--model", str(lightgbm_file), "--dataset", "heart", "--lam",
                 "0.01", "--out", str(tmp_path / "p.json")])
    one_line_error(capsys, code, "features", "the table the model was trained on")
    code = main(["prune", "--dataset", "pima", "--lam", "0.01", "--model-out",
                 str(tmp_path / "m.txt"), "--out", str(tmp_path / "p.json")])
    one_line_error(capsys, code, "--model-out needs --model")


# ------------------------------------------------------------------ CatBoost JSON models
@pytest.fixture(scope="module")
def catboost_file(tmp_path_factory, pima):
    cb = pytest.importorskip("catboost")
    path = tmp_path_factory.mktemp("models") / "catboost.json"
    model = cb.CatBoostClassifier(iterations=20, depth=3, verbose=0, thread_count=1,
                                  random_seed=0, allow_writing_files=False)
    model.fit(pima.X[:300], pima.y[:300])
    model.save_model(str(path), format="json")
    return path


def load_catboost(path):
    cb = pytest.importorskip("catboost")
    model = cb.CatBoostClassifier()
    model.load_model(str(path), format="json")
    return model


def test_prune_a_catboost_file_to_a_budget_writes_both_formats(capsys, tmp_path,
                                                               catboost_file, pima):
    out = tmp_path / "pruned.json"
    code = main(["prune", "--model", str(catboost_file), "--dataset", "pima", "--budget", "8",
                 "--out", str(out), "--json", str(tmp_path / "s.json"), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    assert f"the model in {catboost_file}" in text
    assert f"wrote {tmp_path / 'pruned.catboost.json'}" in text
    summary = _summary(tmp_path, "s.json")
    assert summary["validation_cost"] <= 8 * (1 + 1e-9)
    assert summary["trees"] == 20
    pruned = po.load(out)
    assert pruned.forest.source == "catboost.CatBoost"
    full = po.as_forest(pruned.forest)
    assert pruned.n_splits < int((~full.is_leaf).sum())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pruned.catboost.json",
                                                          "pruned.json", "s.json"]
    # the CatBoost file predicts what the prune-opt file predicts, bit for bit
    model = load_catboost(tmp_path / "pruned.catboost.json")
    np.testing.assert_array_equal(model.predict(pima.X, prediction_type="RawFormulaVal"),
                                  pruned.decision_function(pima.X))
    np.testing.assert_array_equal(model.predict_proba(pima.X), pruned.predict_proba(pima.X))


def test_export_the_program_of_a_catboost_file(capsys, tmp_path, catboost_file):
    out = tmp_path / "program.mps"
    code = main(["export", "--model", str(catboost_file), "--dataset", "pima", "--lam", "0.01",
                 "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert "wrote" in capsys.readouterr().out and out.stat().st_size > 0


@pytest.mark.parametrize("command", [
    ["compare", "--lam", "0.01"],
    ["tu-check", "--examples", "15"],
])
def test_other_commands_take_a_catboost_file(capsys, catboost_file, command):
    code = main([command[0], "--model", str(catboost_file), "--dataset", "pima", *command[1:]])
    assert code == 0, capsys.readouterr().err


def test_catboost_binary_files_are_one_line(capsys, tmp_path):
    cbm = tmp_path / "model.cbm"
    cbm.write_bytes(b"CBM1\x00\x00binary")
    code = main(["prune", "--model", str(cbm), "--dataset", "pima", "--lam", "0.01",
                 "--out", str(tmp_path / "p.json")])
    one_line_error(capsys, code, "binary format (.cbm)", "format='json'")


def test_model_out_names_the_catboost_file(capsys, tmp_path, catboost_file, pima):
    code = main(["prune", "--model", str(catboost_file), "--dataset", "pima", "--lam", "0.01",
                 "--model-out", str(tmp_path / "m.json"), "--out", str(tmp_path / "p.json"),
                 "--no-progress"])
    assert code == 0, capsys.readouterr().err
    assert f"wrote {tmp_path / 'm.json'}" in capsys.readouterr().out
    pruned = po.load(tmp_path / "p.json")
    # a symmetric model stays one; the file is CatBoost's JSON, numbers read back exactly
    doc = json.loads((tmp_path / "m.json").read_text())
    assert len(doc["oblivious_trees"]) == 20
    model = load_catboost(tmp_path / "m.json")
    np.testing.assert_array_equal(model.predict(pima.X, prediction_type="RawFormulaVal"),
                                  pruned.decision_function(pima.X))
    # prune-opt reads it back: the same predictions
    again = po.as_forest(model)
    np.testing.assert_array_equal(again.decision_function(pima.X),
                                  pruned.decision_function(pima.X))
