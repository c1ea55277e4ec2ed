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


# ------------------------------------------------------------------ labels, tasks, splits
# A model file's classes are 0..K-1: the table's labels are mapped to them by a rule a
# user can check (class numbers as they are, else exactly K labels in sorted order, else
# --classes), never by their rank among the labels the table happens to hold.

@pytest.fixture(scope="module")
def thyroid():
    return load_dataset("thyroid")


def _write_table(path, X, labels, names, target="class"):
    """A CSV of the rows (duplicated feature rows dropped, so a row names its label)."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=names)
    frame[target] = labels
    frame = frame.drop_duplicates(subset=list(names))
    frame.to_csv(path, index=False)
    return path


def _label_of_row(table, target="class"):
    """{feature row: label} of a table, read the way the command line reads it."""
    ds = load_dataset(str(table), target=target)
    return {row.tobytes(): label for row, label in zip(ds.X, ds.y)}


def _split(argv):
    """The experiment the command line sets up for ``argv`` (same options, same split)."""
    from prune_opt.cli import build_parser
    from prune_opt.cli._common import setup_experiment

    return setup_experiment(build_parser().parse_args(argv))


def _lightgbm_labels(model_file, X, classes):
    """What LightGBM itself predicts for X, as labels: class k is ``classes[k]``."""
    raw = lgb.Booster(model_file=str(model_file)).predict(X)
    index = (raw > 0.5).astype(int) if raw.ndim == 1 else np.argmax(raw, axis=1)
    return np.asarray(classes)[index]


@pytest.fixture(scope="module")
def thyroid_012(tmp_path_factory, thyroid):
    """A 3-class LightGBM model whose classes are the numbers 0, 1, 2 (thyroid's 1..3
    minus one), trained on the training file's rows."""
    pd = pytest.importorskip("pandas")
    path = tmp_path_factory.mktemp("models") / "thyroid012.txt"
    frame = pd.DataFrame(thyroid.X, columns=thyroid.feature_names)
    lgb.LGBMClassifier(n_estimators=15, num_leaves=6, verbose=-1, random_state=0).fit(
        frame, thyroid.y - 1).booster_.save_model(str(path))
    return path


def test_a_table_that_lacks_a_class_is_scored_against_the_models_classes(
        capsys, tmp_path, thyroid, thyroid_012):
    # the table holds classes 0 and 2 of a 3-class model: ranked among the table's own
    # labels, 2 became class 1 and the model's own accuracy (0.99) was reported as ~0.07
    keep = thyroid.y_test != 2
    table = _write_table(tmp_path / "t.csv", thyroid.X_test[keep], thyroid.y_test[keep] - 1,
                         thyroid.feature_names)
    argv = ["prune", "--model", str(thyroid_012), "--dataset", str(table), "--target",
            "class", "--lam", "0.001", "--out", str(tmp_path / "p.json"),
            "--json", str(tmp_path / "s.json"), "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err
    assert "the labels are the class numbers of the model, 0..2 (the table has 0, 2)" in (
        capsys.readouterr().out)
    X_test = _split(argv)["X_test"]
    truth = [_label_of_row(table)[row.tobytes()] for row in X_test]
    own = np.mean(_lightgbm_labels(thyroid_012, X_test, [0, 1, 2]) == truth)
    assert own > 0.9
    assert _summary(tmp_path, "s.json")["unpruned_test_accuracy"] == pytest.approx(own)
    assert po.load(tmp_path / "p.json").forest.classes_.tolist() == [0, 1, 2]


def _predict_accuracy(text):
    return float(text.split("accuracy ")[1].split()[0])


@pytest.mark.parametrize("case", ["pima no/yes", "thyroid 1/2/3"])
def test_prune_then_predict_keeps_the_tables_labels(capsys, tmp_path, pima, thyroid, case):
    # LGBMClassifier codes the labels in sorted order; prune --model does the same, the
    # saved file keeps the labels and predict writes and scores them (it printed
    # accuracy 0.0000 for no/yes and 0.19 for 1/2/3: the file held classes 0..K-1)
    pd = pytest.importorskip("pandas")
    if case.startswith("pima"):
        ds, X, y = pima, pima.X, np.where(pima.y == 1, "yes", "no")
        fit, rows = slice(0, 400), slice(400, None)
        X_fit, y_fit, X_rows, y_rows = X[fit], y[fit], X[rows], y[rows]
    else:
        ds = thyroid
        X_fit, y_fit, X_rows, y_rows = thyroid.X, thyroid.y, thyroid.X_test, thyroid.y_test
    model_file = tmp_path / "m.txt"
    lgb.LGBMClassifier(n_estimators=15, num_leaves=6, verbose=-1, random_state=0).fit(
        pd.DataFrame(X_fit, columns=ds.feature_names), y_fit).booster_.save_model(
        str(model_file))
    table = _write_table(tmp_path / "t.csv", X_rows, y_rows, ds.feature_names)
    code = main(["prune", "--model", str(model_file), "--dataset", str(table), "--target",
                 "class", "--lam", "0.001", "--train-frac", "0", "--out",
                 str(tmp_path / "p.json"), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    classes = np.unique(y_fit)
    mapping = ", ".join(f"{c!r} -> {k}" if isinstance(c, str) else f"{c} -> {k}"
                        for k, c in enumerate(classes.tolist()))
    assert f"coded in sorted order, as LGBMClassifier and XGBClassifier code them: {mapping}" \
        in capsys.readouterr().out
    assert main(["predict", "--model", str(tmp_path / "p.json"), "--dataset", str(table),
                 "--out", str(tmp_path / "preds.csv")]) == 0
    read = load_dataset(str(table), target="class")
    expected = _lightgbm_labels(tmp_path / "p.txt", read.X, classes)  # the pruned model
    accuracy = float(np.mean(expected == read.y))
    assert accuracy > 0.6
    assert _predict_accuracy(capsys.readouterr().out) == pytest.approx(accuracy, abs=5e-5)
    written = pd.read_csv(tmp_path / "preds.csv")["prediction"].astype(str).tolist()
    assert written == [str(v) for v in expected.tolist()]


def test_labels_that_are_not_the_classes_need_classes(capsys, tmp_path, thyroid,
                                                       thyroid_012, pima, lightgbm_file):
    # labels 1 and 3 of a model with classes 0..2: neither class numbers nor 3 labels
    keep = thyroid.y_test != 2
    table = _write_table(tmp_path / "t.csv", thyroid.X_test[keep], thyroid.y_test[keep],
                         thyroid.feature_names)
    base = ["prune", "--model", str(thyroid_012), "--dataset", str(table), "--target",
            "class", "--lam", "0.001", "--out", str(tmp_path / "p.json"), "--no-progress"]
    one_line_error(capsys, main(base), "3 classes (0..2)", "labels 1, 3", "--classes")
    for given, words in [("1,2", "name each one's label"), ("1,2,2", "twice"),
                         ("1,2,4", "does not name the table's labels 3"),
                         ("a,b,c", "labels are numbers")]:
        one_line_error(capsys, main([*base, "--classes", given]), "--classes", words)
    assert main([*base, "--classes", "1,2,3"]) == 0, capsys.readouterr().err
    assert "classes (--classes): 1 -> 0, 2 -> 1, 3 -> 2" in capsys.readouterr().out
    assert po.load(tmp_path / "p.json").forest.classes_.tolist() == [1, 2, 3]
    assert main(["predict", "--model", str(tmp_path / "p.json"), "--dataset", str(table),
                 "--out", str(tmp_path / "preds.csv")]) == 0
    read = load_dataset(str(table), target="class")
    expected = _lightgbm_labels(tmp_path / "p.txt", read.X, [1, 2, 3])
    assert _predict_accuracy(capsys.readouterr().out) == pytest.approx(
        np.mean(expected == read.y), abs=5e-5)
    # more labels than the model has classes; --classes without a model or a classifier
    code = main(["prune", "--model", str(lightgbm_file), "--dataset", "pima", "--lam",
                 "0.01", "--classes", "0,1", "--task", "classification", "--out",
                 str(tmp_path / "q.json")])
    assert code == 0, capsys.readouterr().err
    code = main(["prune", "--dataset", "pima", "--lam", "0.01", "--classes", "0,1",
                 "--out", str(tmp_path / "q.json")])
    one_line_error(capsys, code, "--classes needs --model")
    three = _write_table(tmp_path / "three.csv", pima.X, np.arange(pima.y.size) % 3,
                         pima.feature_names)
    code = main(["prune", "--model", str(lightgbm_file), "--dataset", str(three), "--target",
                 "class", "--lam", "0.01", "--out", str(tmp_path / "q.json")])
    one_line_error(capsys, code, "2 classes (0..1)", "3 labels", "--classes")


@pytest.fixture(scope="module")
def regression_files(tmp_path_factory):
    """LightGBM and XGBoost regression models of diabetes, trained on its first rows."""
    pd = pytest.importorskip("pandas")
    xgb = pytest.importorskip("xgboost")
    ds = load_dataset("diabetes")
    frame = pd.DataFrame(ds.X[:200], columns=ds.feature_names)
    folder = tmp_path_factory.mktemp("regression")
    lgb.LGBMRegressor(n_estimators=8, num_leaves=6, verbose=-1, random_state=0).fit(
        frame, ds.y[:200]).booster_.save_model(str(folder / "lgb.txt"))
    xgb.XGBRegressor(n_estimators=8, max_depth=3, n_jobs=1).fit(frame, ds.y[:200]).save_model(
        str(folder / "xgb.json"))
    return {"lightgbm": folder / "lgb.txt", "xgboost": folder / "xgb.json"}


def _library_predict(model_file, X):
    """The regression model's own prediction of X, by its library."""
    if str(model_file).endswith(".txt"):
        return lgb.Booster(model_file=str(model_file)).predict(X)
    import xgboost as xgb

    booster = xgb.Booster(model_file=str(model_file))
    return booster.predict(xgb.DMatrix(X, feature_names=booster.feature_names))


def _r2_mse(pred, y):
    return 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2), np.mean((y - pred) ** 2)


COMMANDS = {
    "prune --budget": ["prune", "--budget", "3", "--out", "{tmp}/p.json", "--json",
                       "{tmp}/s.json", "--no-progress"],
    "prune --lam": ["prune", "--lam", "0.001", "--out", "{tmp}/p.json", "--json",
                    "{tmp}/s.json", "--no-progress"],
    "curve": ["curve", "--budgets", "0.25,0.5", "--json", "{tmp}/s.json", "--no-progress"],
    "compare": ["compare", "--lam", "0.001", "--json", "{tmp}/s.json", "--no-progress"],
    "export": ["export", "--lam", "0.001", "--out", "{tmp}/p.mps"],
    "tu-check": ["tu-check", "--examples", "20", "--json", "{tmp}/s.json"],
}


@pytest.mark.parametrize("library", ["lightgbm", "xgboost"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_takes_a_regression_model(capsys, tmp_path, regression_files,
                                                command, library):
    # prune and curve pruned, then crashed scoring the model ('Forest' object has no
    # attribute 'score'); every command reports R^2 and MSE as for a forest
    model_file = regression_files[library]
    argv = [COMMANDS[command][0], "--model", str(model_file), "--dataset", "diabetes",
            *[a.format(tmp=tmp_path) for a in COMMANDS[command][1:]]]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "regression" in out
    if command == "export":
        assert (tmp_path / "p.mps").stat().st_size > 0
        return
    summary = _summary(tmp_path, "s.json")
    if command == "tu-check":
        assert summary["report"]["is_tu"] in (True, False)
        return
    exp = _split(argv)
    r2, mse = _r2_mse(_library_predict(model_file, exp["X_test"]), exp["y_test"])
    if command.startswith("prune"):
        assert summary["unpruned_test_r2"] == pytest.approx(r2, rel=1e-5)
        assert summary["unpruned_test_mse"] == pytest.approx(mse, rel=1e-5)
        pruned = po.load(tmp_path / "p.json")
        r2, mse = _r2_mse(pruned.predict(exp["X_test"]), exp["y_test"])
        assert summary["test_r2"] == pytest.approx(r2) and summary["test_mse"] == pytest.approx(mse)
    elif command == "curve":
        assert summary["unpruned"]["test_r2"] == pytest.approx(r2, rel=1e-5)
        assert summary["unpruned"]["test_mse"] == pytest.approx(mse, rel=1e-5)
        assert summary["trees"] == 8 and "diabetes: 8 trees" in out
    else:
        assert all("test_r2" in row and "test_mse" in row for row in summary["rows"])
        assert summary["trees"] == 8 and "diabetes: 8 trees" in out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_takes_a_multiclass_model(capsys, tmp_path, thyroid_012, command):
    # thyroid's labels 1..3 on a model with classes 0..2: 3 labels in sorted order
    argv = [COMMANDS[command][0], "--model", str(thyroid_012), "--dataset", "thyroid",
            *[a.format(tmp=tmp_path) for a in COMMANDS[command][1:]]]
    if command == "prune --budget":
        argv[argv.index("3")] = "10"
    assert main(argv) == 0, capsys.readouterr().err
    assert "classes: the table's labels coded in sorted order" in capsys.readouterr().out
    if command.startswith("prune"):
        exp = _split(argv)
        own = np.mean(_lightgbm_labels(thyroid_012, exp["X_test"], [1, 2, 3]) == exp["y_test"])
        assert own > 0.9
        assert _summary(tmp_path, "s.json")["unpruned_test_accuracy"] == pytest.approx(own)
        assert po.load(tmp_path / "p.json").forest.classes_.tolist() == [1, 2, 3]


def test_train_frac_zero_splits_every_row_between_validation_and_test(capsys, tmp_path,
                                                                      lightgbm_file, pima):
    # a model trained elsewhere: no row of the table trained it, so none is set aside
    argv = ["prune", "--model", str(lightgbm_file), "--dataset", "pima", "--train-frac", "0",
            "--lam", "0.01", "--out", str(tmp_path / "p.json"), "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err
    exp = _split(argv)
    assert exp["X_train"].shape[0] == 0
    assert len(exp["y_val"]) + len(exp["y_test"]) == pima.y.size
    assert abs(len(exp["y_val"]) - len(exp["y_test"])) <= 1
    rows = np.vstack([exp["X_val"], exp["X_test"]])
    assert sorted(map(bytes, rows)) == sorted(map(bytes, pima.X))
    # without --model the command grows its forest on the train split: refused
    code = main(["prune", "--dataset", "pima", "--train-frac", "0", "--lam", "0.01",
                 "--out", str(tmp_path / "q.json")])
    one_line_error(capsys, code, "--train-frac 0 needs --model")
    for command in (["compare", "--lam", "0.01"], ["curve", "--budgets", "0.5"],
                    ["export", "--lam", "0.01", "--out", str(tmp_path / "e.mps")]):
        code = main([command[0], "--model", str(lightgbm_file), "--dataset", "pima",
                     "--train-frac", "0", *command[1:]])
        assert code == 0, capsys.readouterr().err


@pytest.mark.parametrize("objective", ["paper", None])
def test_an_objective_asked_for_at_lam_is_the_one_minimised(capsys, tmp_path, lightgbm_file,
                                                            objective):
    # --objective paper at --lam was dropped for a --model booster: the summary said
    # 'loss: logloss' and the pruning was the log-loss one. Without --objective a
    # booster is pruned for its own loss, as documented
    argv = ["prune", "--model", str(lightgbm_file), "--dataset", "pima", "--lam", "0.003",
            "--out", str(tmp_path / "p.json"), "--json", str(tmp_path / "s.json"),
            "--no-progress", *(["--objective", objective] if objective else [])]
    assert main(argv) == 0, capsys.readouterr().err
    summary = _summary(tmp_path, "s.json")
    assert summary["loss"] == (objective or "logloss")
    exp = _split(argv)
    expected = po.prune(exp["forest"], exp["X_val"], exp["y_val"], costs=exp["costs"],
                        lam=0.003, objective=objective)
    np.testing.assert_array_equal(po.load(tmp_path / "p.json").split_mask,
                                  expected.split_mask)


def test_a_classifier_given_a_regression_target_says_so(capsys, tmp_path, lightgbm_file):
    # pima's glucose-like continuous column as the target of a 2-class model: one line
    # saying it is a regression target, not a list of hundreds of "labels"
    code = main(["prune", "--model", str(lightgbm_file), "--dataset", "diabetes", "--lam",
                 "0.01", "--out", str(tmp_path / "p.json")])
    err = one_line_error(capsys, code)
    assert "features" in err  # diabetes is not the model's table: its columns first
    pd = pytest.importorskip("pandas")
    ds = load_dataset("pima")
    frame = pd.DataFrame(ds.X, columns=ds.feature_names)
    frame["class"] = ds.X[:, 1] * 1.5 + 0.25
    frame.to_csv(tmp_path / "t.csv", index=False)
    code = main(["prune", "--model", str(lightgbm_file), "--dataset", str(tmp_path / "t.csv"),
                 "--target", "class", "--lam", "0.01", "--out", str(tmp_path / "p.json")])
    err = one_line_error(capsys, code, "classifier of 2 classes", "non-integer values",
                         "--target")
    assert len(err) < 300


def test_a_baseline_a_boosted_model_cannot_have_is_refused_before_the_work(
        capsys, tmp_path, lightgbm_file):
    # impurity thresholds need node impurities, which raw scores do not have: refused
    # after the exact hull had been traced, now before anything is solved
    code = main(["curve", "--model", str(lightgbm_file), "--dataset", "pima", "--methods",
                 "budgetprune,impurity", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--methods impurity" in err and "boosted model" in err and "ccp, greedy" in err
    assert "exact hull" not in out  # nothing was traced


def test_a_regression_model_refuses_class_labels_by_name(capsys, tmp_path, regression_files):
    pd = pytest.importorskip("pandas")
    ds = load_dataset("diabetes")
    frame = pd.DataFrame(ds.X, columns=ds.feature_names)
    frame["target"] = np.where(ds.y > np.median(ds.y), "high", "low")
    frame.to_csv(tmp_path / "t.csv", index=False)
    base = ["prune", "--model", str(regression_files["lightgbm"]), "--lam", "0.01",
            "--out", str(tmp_path / "p.json")]
    code = main([*base, "--dataset", str(tmp_path / "t.csv"), "--target", "target"])
    one_line_error(capsys, code, "regression model", "text ('high', 'low')", "--target")
    code = main([*base, "--dataset", "diabetes", "--classes", "a,b"])
    one_line_error(capsys, code, "--classes", "regression model", "drop --classes")

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


# ------------------------------------------------ the classes are the importer's answer
# A CatBoost file names its classes (class_names): the command line labelled them by the
# LightGBM/XGBoost rule instead (class numbers, or the table's labels in sorted order),
# so class_names=['yes', 'no'] scored 0.10 where CatBoost scores 0.90, and a model of
# labels 1, 2, 3 on a table holding 1 and 2 was scored, and pruned, with 1 and 2 read as
# the class numbers 1 and 2 (CatBoost's classes 1 and 2 are the labels 2 and 3).

def _catboost_model(path, X, y, names, **params):
    cb = pytest.importorskip("catboost")
    pd = pytest.importorskip("pandas")
    model = cb.CatBoostClassifier(iterations=25, depth=3, verbose=0, thread_count=1,
                                  random_seed=0, allow_writing_files=False, **params)
    model.fit(pd.DataFrame(X, columns=names), y)
    model.save_model(str(path), format="json")
    return model


def _catboost_labels(model, X, names):
    pd = pytest.importorskip("pandas")
    return np.ravel(model.predict(pd.DataFrame(X, columns=names)))


@pytest.fixture(scope="module")
def yes_no(tmp_path_factory, pima):
    """A CatBoost model whose class 0 is 'yes' (class_names), and a pima table with
    labels no/yes, whose sorted order is the other one."""
    folder = tmp_path_factory.mktemp("yes_no")
    labels = np.where(pima.y == 1, "yes", "no")
    model = _catboost_model(folder / "cb.json", pima.X[:300], labels[:300],
                            pima.feature_names, class_names=["yes", "no"])
    table = _write_table(folder / "t.csv", pima.X, labels, pima.feature_names)
    return model, folder / "cb.json", table


def test_a_catboost_files_class_names_label_its_classes(capsys, tmp_path, yes_no):
    model, model_file, table = yes_no
    argv = ["prune", "--model", str(model_file), "--dataset", str(table), "--target", "class",
            "--lam", "0.003", "--out", str(tmp_path / "p.json"), "--json",
            str(tmp_path / "s.json"), "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err
    assert "classes: the model's own labels: 'yes' -> 0, 'no' -> 1" in capsys.readouterr().out
    exp = _split(argv)
    assert exp["forest"].classes_.tolist() == ["yes", "no"]
    pruned = _agrees_with_catboost(tmp_path, model, exp, exp["forest"].feature_names, 0.003)
    assert pruned.forest.classes_.tolist() == ["yes", "no"]
    # predict writes CatBoost's labels (the pruned model's own CatBoost file agrees)
    assert main(["predict", "--model", str(tmp_path / "p.json"), "--dataset", str(table),
                 "--out", str(tmp_path / "preds.csv")]) == 0
    pd = pytest.importorskip("pandas")
    read = load_dataset(str(table), target="class")
    written = pd.read_csv(tmp_path / "preds.csv")["prediction"].tolist()
    assert written == _catboost_labels(load_catboost(tmp_path / "p.catboost.json"), read.X,
                                       pruned.forest.feature_names).tolist()


def _agrees_with_catboost(tmp_path, model, exp, feature_names, lam):
    """The CLI's unpruned test accuracy is CatBoost's own on the same rows, and its pruning
    (``p.json``) the one the library makes of the model it reads (``po.as_forest``)."""
    own = np.mean(_catboost_labels(model, exp["X_test"], feature_names) == exp["y_test"])
    assert own > 0.7
    assert _summary(tmp_path, "s.json")["unpruned_test_accuracy"] == pytest.approx(own)
    expected = po.prune(po.as_forest(model), exp["X_val"], exp["y_val"], costs=exp["costs"],
                        lam=lam)
    pruned = po.load(tmp_path / "p.json")
    np.testing.assert_array_equal(pruned.split_mask, expected.split_mask)
    return pruned


def test_a_table_that_lacks_a_class_of_a_catboost_file(capsys, tmp_path, thyroid):
    # labels 1, 2, 3; the table holds 1 and 2 only
    model = _catboost_model(tmp_path / "cb.json", thyroid.X, thyroid.y, thyroid.feature_names)
    keep = thyroid.y_test != 3
    table = _write_table(tmp_path / "t.csv", thyroid.X_test[keep], thyroid.y_test[keep],
                         thyroid.feature_names)
    argv = ["prune", "--model", str(tmp_path / "cb.json"), "--dataset", str(table),
            "--target", "class", "--train-frac", "0", "--lam", "0.001", "--out",
            str(tmp_path / "p.json"), "--json", str(tmp_path / "s.json"), "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err
    assert ("classes: the model's own labels: 1 -> 0, 2 -> 1, 3 -> 2 (the table has 1, 2)"
            in capsys.readouterr().out)
    exp = _split(argv)
    pruned = _agrees_with_catboost(tmp_path, model, exp, thyroid.feature_names, 0.001)
    assert pruned.forest.classes_.tolist() == [1, 2, 3]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_takes_the_classes_of_a_catboost_file(capsys, tmp_path, yes_no,
                                                            command):
    model, model_file, table = yes_no
    argv = [COMMANDS[command][0], "--model", str(model_file), "--dataset", str(table),
            "--target", "class", *[a.format(tmp=tmp_path) for a in COMMANDS[command][1:]]]
    if command == "prune --budget":
        argv[argv.index("3")] = "10"
    assert main(argv) == 0, capsys.readouterr().err
    assert "classes: the model's own labels: 'yes' -> 0, 'no' -> 1" in capsys.readouterr().out
    if command in ("export", "tu-check"):
        return
    exp = _split(argv)
    own = np.mean(_catboost_labels(model, exp["X_test"], exp["forest"].feature_names)
                  == exp["y_test"])
    summary = _summary(tmp_path, "s.json")
    if command == "curve":
        assert summary["unpruned"]["test_accuracy"] == pytest.approx(own)
    elif command == "compare":  # each backend's pruning scored against CatBoost's labels
        assert all(row["test_accuracy"] > 0.6 for row in summary["rows"])
    else:
        assert summary["unpruned_test_accuracy"] == pytest.approx(own)


def test_labels_a_catboost_file_does_not_name_need_classes(capsys, tmp_path, yes_no, pima):
    _, model_file, _ = yes_no
    table = _write_table(tmp_path / "t.csv", pima.X, np.where(pima.y == 1, "Y", "N"),
                         pima.feature_names)
    base = ["prune", "--model", str(model_file), "--dataset", str(table), "--target", "class",
            "--lam", "0.003", "--out", str(tmp_path / "p.json"), "--no-progress"]
    # not coded in sorted order: the file says which class is which label
    one_line_error(capsys, main(base), "names its 2 classes 'yes', 'no'", "'N', 'Y'",
                   "--classes")
    assert main([*base, "--classes", "Y,N"]) == 0, capsys.readouterr().err
    assert "classes (--classes): 'Y' -> 0, 'N' -> 1" in capsys.readouterr().out
    assert po.load(tmp_path / "p.json").forest.classes_.tolist() == ["Y", "N"]


@pytest.mark.parametrize("library", ["lightgbm", "xgboost", "catboost"])
def test_the_classes_are_those_the_library_reads_the_file_with(tmp_path, pima, library):
    # for every library the command line's classes are the importer's (po.as_forest of
    # the model), and the model predicts as the library does
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(pima.X[:300], columns=pima.feature_names)
    path = tmp_path / ("model.txt" if library == "lightgbm" else "model.json")
    if library == "lightgbm":
        model = lgb.LGBMClassifier(n_estimators=10, num_leaves=6, verbose=-1).fit(
            frame, pima.y[:300])
        model.booster_.save_model(str(path))
    elif library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        model = xgb.XGBClassifier(n_estimators=10, max_depth=3, n_jobs=1).fit(frame,
                                                                                 pima.y[:300])
        model.save_model(str(path))
    else:
        model = _catboost_model(path, pima.X[:300], pima.y[:300], pima.feature_names)
    exp = _split(["prune", "--model", str(path), "--dataset", "pima", "--lam", "0.01"])
    assert exp["forest"].classes_.tolist() == po.as_forest(model).classes_.tolist() == [0, 1]
    X_test = pd.DataFrame(exp["X_test"], columns=pima.feature_names)
    np.testing.assert_array_equal(
        po.PrunedForest(exp["forest"], exp["forest"].full_split_mask()).predict(
            exp["X_test"]), np.ravel(model.predict(X_test)))


# ------------------------------------------------ options for the other source of the forest
# --trees 3 and --max-depth 2 with --model exited 0 and changed nothing (the summary still
# said the model's 30 trees). Which options apply only to a forest the command grows, or
# only to a --model file, is one table (_common.SOURCE_OPTIONS), checked for every command.

def _commands_with(flag):
    from prune_opt.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sorted(name for name, p in sub.choices.items()
                  if any(flag in a.option_strings for a in p._actions))


#: what each command that takes a model file needs besides it
NEEDS = {"prune": ["--lam", "0.01", "--out", "{tmp}/p.json"], "compare": [], "curve": [],
         "export": ["--lam", "0.01", "--out", "{tmp}/p.mps"], "tu-check": []}
VALUES = {"--trees": "3", "--max-depth": "2", "--classes": "0,1", "--model-out": "{tmp}/m.txt"}


def test_the_table_covers_every_command_that_takes_a_model():
    from prune_opt.cli._common import SOURCE_OPTIONS

    assert set(_commands_with("--classes")) == set(NEEDS)  # the library-model commands
    assert {flag for flag, _, _ in SOURCE_OPTIONS.values()} == set(VALUES)


@pytest.mark.parametrize("command", sorted(NEEDS))
def test_an_option_for_the_other_source_is_refused(capsys, tmp_path, lightgbm_file, command):
    from prune_opt.cli._common import SOURCE_OPTIONS

    base = [command, "--dataset", "pima", *[a.format(tmp=tmp_path) for a in NEEDS[command]]]
    checked = 0
    for flag, applies, _ in SOURCE_OPTIONS.values():
        if command not in _commands_with(flag):
            continue
        value = VALUES[flag].format(tmp=tmp_path)
        if applies == "grown":
            for given in ([flag, value], [flag, "40"], [f"{flag}={value}"], [flag[:-1], value]):
                code = main([*base, "--model", str(lightgbm_file), *given])
                one_line_error(capsys, code, f"{flag} does not apply to --model",
                               f"drop {flag}")
        else:
            one_line_error(capsys, main([*base, flag, value]), f"{flag} needs --model")
        checked += 1
        assert list(tmp_path.iterdir()) == []  # refused before any work
    assert checked >= 3


def test_the_grown_forests_options_still_apply_without_a_model(capsys, tmp_path):
    argv = ["prune", "--dataset", "pima", "--trees", "3", "--max-depth", "2", "--lam", "0.01",
            "--out", str(tmp_path / "p.json"), "--json", str(tmp_path / "s.json"),
            "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err
    assert _summary(tmp_path, "s.json")["trees"] == 3
    assert po.load(tmp_path / "p.json").forest.max_depth <= 2


# ------------------------------------------------ a table with columns the model does not read
# prune --model refused a table with more columns than the model reads; the columns are
# matched by name, by the one function predict matches them with (match_columns).

@pytest.fixture(scope="module")
def extra_columns(tmp_path_factory, pima):
    """A LightGBM model of pima's columns, and a table holding them in another order
    besides an id and a text column the model does not read."""
    pd = pytest.importorskip("pandas")
    folder = tmp_path_factory.mktemp("extra")
    frame = pd.DataFrame(pima.X, columns=pima.feature_names)
    lgb.LGBMClassifier(n_estimators=15, num_leaves=6, verbose=-1, random_state=0).fit(
        frame.iloc[:300], pima.y[:300]).booster_.save_model(str(folder / "m.txt"))
    table = frame[list(pima.feature_names[::-1])].copy()
    table.insert(0, "id", np.arange(len(table)))
    table.insert(1, "ward", np.where(np.arange(len(table)) % 2, "north", "south"))
    table["class"] = pima.y
    table.to_csv(folder / "t.csv", index=False)
    return folder / "m.txt", folder / "t.csv"


def test_a_table_with_columns_the_model_does_not_read(capsys, tmp_path, extra_columns, pima):
    model_file, table = extra_columns
    argv = ["prune", "--model", str(model_file), "--dataset", str(table), "--lam", "0.01",
            "--out", str(tmp_path / "p.json"), "--json", str(tmp_path / "s.json"),
            "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err
    exp = _split(argv)
    assert exp["X_test"].shape[1] == len(pima.feature_names)
    own = np.mean(_lightgbm_labels(model_file, exp["X_test"], [0, 1]) == exp["y_test"])
    assert _summary(tmp_path, "s.json")["unpruned_test_accuracy"] == pytest.approx(own)
    pruned = po.load(tmp_path / "p.json")
    assert pruned.forest.feature_names == list(pima.feature_names)
    assert pruned.feature_encoding["columns"] == list(pima.feature_names)
    # the library file reads the model's columns only, and predicts what predict writes
    booster = lgb.Booster(model_file=str(tmp_path / "p.txt"))
    assert booster.feature_name() == list(pima.feature_names)
    assert main(["predict", "--model", str(tmp_path / "p.json"), "--dataset", str(table),
                 "--out", str(tmp_path / "preds.csv")]) == 0, capsys.readouterr().err
    pd = pytest.importorskip("pandas")
    written = pd.read_csv(tmp_path / "preds.csv")["prediction"].to_numpy()
    np.testing.assert_array_equal(written, (booster.predict(pima.X) > 0.5).astype(int))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_reads_a_table_with_more_columns(capsys, tmp_path, extra_columns,
                                                       command):
    model_file, table = extra_columns
    argv = [COMMANDS[command][0], "--model", str(model_file), "--dataset", str(table),
            *[a.format(tmp=tmp_path) for a in COMMANDS[command][1:]]]
    assert main(argv) == 0, capsys.readouterr().err


def test_one_function_matches_the_columns_for_prune_and_predict(capsys, tmp_path, monkeypatch,
                                                               extra_columns):
    import prune_opt.datasets as datasets

    model_file, table = extra_columns
    calls = []
    real = datasets.match_columns
    monkeypatch.setattr(datasets, "match_columns",
                        lambda header, columns: calls.append(list(columns)) or
                        real(header, columns))
    assert main(["prune", "--model", str(model_file), "--dataset", str(table), "--lam", "0.01",
                 "--out", str(tmp_path / "p.json"), "--no-progress"]) == 0
    assert main(["predict", "--model", str(tmp_path / "p.json"), "--dataset", str(table),
                 "--out", str(tmp_path / "preds.csv")]) == 0
    assert len(calls) == 2 and calls[0] == calls[1]
    # a column the model reads and the table lacks is named, by both
    lacking = tmp_path / "lacking.csv"
    lacking.write_text("\n".join(",".join(row.split(",")[:-2] + row.split(",")[-1:])
                                 for row in table.read_text().splitlines()))
    code = main(["prune", "--model", str(model_file), "--dataset", str(lacking), "--lam",
                 "0.01", "--out", str(tmp_path / "q.json")])
    one_line_error(capsys, code, "lacks the column(s) ['timespreg']")
    code = main(["predict", "--model", str(tmp_path / "p.json"), "--dataset", str(lacking),
                 "--out", str(tmp_path / "q.csv")])
    one_line_error(capsys, code, "lacks the column(s) ['timespreg']")


def test_costs_of_columns_the_model_does_not_read_are_still_paid(capsys, tmp_path, thyroid):
    # thyroid's FTI is computed from TT4 and T4U: a model that reads FTI but neither of
    # them still pays for both with it
    pd = pytest.importorskip("pandas")
    names = [n for n in thyroid.feature_names if n not in ("TT4", "T4U")]
    cols = [thyroid.feature_names.index(n) for n in names]
    lgb.LGBMClassifier(n_estimators=10, num_leaves=6, verbose=-1, random_state=0).fit(
        pd.DataFrame(thyroid.X[:, cols], columns=names), thyroid.y).booster_.save_model(
        str(tmp_path / "m.txt"))
    argv = ["prune", "--model", str(tmp_path / "m.txt"), "--dataset", "thyroid", "--lam",
            "0.001", "--out", str(tmp_path / "p.json"), "--json", str(tmp_path / "s.json"),
            "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err
    full, exp = thyroid.costs_or_uniform(), _split(argv)
    fti, tt4 = exp["costs"].feature_names.index("FTI"), thyroid.feature_names.index("TT4")
    assert exp["costs"].cost_of([fti]) == pytest.approx(14.51 + 11.41)
    forest = exp["forest"]
    expected = po.acquisition_cost(forest, exp["X_test"], exp["costs"]).mean()
    assert _summary(tmp_path, "s.json")["unpruned_test_cost"] == pytest.approx(expected)
    assert full.cost_of([tt4]) == pytest.approx(14.51)


def test_the_kept_columns_cost_what_they_cost_among_all():
    # any set of the kept columns costs what it cost among all the table's columns
    import itertools

    from prune_opt.cli._common import costs_of_columns

    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(300):
        n = int(rng.integers(2, 7))
        names = [f"c{i}" for i in range(n)]
        pool = [int(k) for k in rng.permutation(n)]
        groups = {f"g{g}": (float(rng.integers(1, 9)), [pool.pop(), pool.pop()])
                  for g in range(int(rng.integers(0, 3))) if len(pool) >= 2}
        order = [int(k) for k in rng.permutation(n)]  # requires point to earlier columns
        requires = {k: [order[j] for j in rng.choice(i, min(i, 2), replace=False)]
                    for i, k in enumerate(order) if i and rng.random() < 0.4}
        full = po.FeatureCosts(rng.integers(0, 5, n).astype(float), groups=groups or None,
                               requires=requires or None, feature_names=names)
        keep = [int(k) for k in rng.choice(n, int(rng.integers(1, n + 1)), replace=False)]
        try:
            kept = costs_of_columns(full, keep, [names[k] for k in keep])
        except ValueError as exc:  # overlapping shared units: said in one line
            assert "--costs" in str(exc) and "\n" not in str(exc)
            continue
        checked += 1
        for r in range(1, len(keep) + 1):
            for subset in itertools.combinations(range(len(keep)), r):
                assert kept.cost_of(subset) == pytest.approx(
                    full.cost_of([keep[s] for s in subset]))
    assert checked > 250
