"""The demo command end to end (small), and the CLI's user-error contract."""

import importlib.util
import json

import pytest

from prune_opt.cli import main

HAVE_LGBM = importlib.util.find_spec("lightgbm") is not None


def test_demo_small(tmp_path, capsys):
    code = main(["demo", "--dataset", "thyroid", "--trees", "3", "--max-depth", "4",
                 "--lams", "0,0.01", "--lp-lams", "all", "--solvers", "highs,cbc-ip",
                 "--estimator-time-limit", "3", "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "lam=0.01: exact backends (highs, cbc-ip) agree" in out
    doc = json.loads((tmp_path / "demo.json").read_text())
    rows = doc["rows"]
    assert {r["solver"] for r in rows} == {"highs", "cbc-ip"}
    for lam in (0.0, 0.01):
        objs = [r["objective"] for r in rows if r["lam"] == lam]
        assert abs(objs[0] - objs[1]) <= 1e-9 * max(abs(objs[0]), 1e-12)
    assert (tmp_path / "accuracy_cost.png").stat().st_size > 1000
    # accuracy at a budget: the estimator, fit_budget and (lightgbm installed) CEGB at
    # every share
    assert "accuracy at a budget" in out
    budgets = doc["budgets"]
    methods = {"budget estimator", "fit_budget"} | ({"LightGBM CEGB"} if HAVE_LGBM else set())
    assert {(r["budget_share"], r["method"]) for r in budgets} == {
        (s, m) for s in (0.1, 0.25, 0.5) for m in methods}
    full = doc["unpruned"]["validation_cost"]
    for r in budgets:
        assert r["budget"] == pytest.approx(r["budget_share"] * full)
        # each meets the budget on the rows it measures cost on (the estimator: its own
        # pruning rows; fit_budget and CEGB: the validation split)
        if r["picked"] != "none fits":
            assert r["fit_cost"] <= r["budget"] * (1 + 1e-9)
            assert 0 <= r["test_accuracy"] <= 1 and r["test_cost"] >= 0
    # the estimator's rows name the winner's family and list every family it tried (the
    # boosted ones too when installed), exactly one of them the winner's
    from forest_builders.estimator._registry import CANDIDATE_FAMILIES

    for r in budgets:
        if r["method"] == "budget estimator":
            fams = {f["family"]: f for f in r["families"]}
            assert set(fams) <= set(CANDIDATE_FAMILIES) and "rf" in fams
            assert [f for f in fams if fams[f]["won"]] == [r["family"]]
            assert f"[{r['family']}" in r["picked"]
            assert "gbm" in fams  # LightGBM, else HistGradientBoosting (or skipped: a row)
    assert "the budget estimator's candidates by family" in out
    # every budget row has a gap: a number, or 'no bound' for a search without one
    assert all(isinstance(r["gap"], float) or r["gap"] == "no bound" for r in budgets)
    # the budget table's headers are not the agreement table's: 'objective' is a number
    assert all(isinstance(r["objective"], float) for r in rows)
    assert all("objective" not in r and "loss" not in r for r in budgets)
    header = next(ln for ln in out.splitlines() if ln.lstrip().startswith("budget_share "))
    assert header.split() == ["budget_share", "budget", "method", "picked", "test_accuracy",
                              "test_cost", "fit_cost", "gap", "seconds"]
    # the frontier: the exact hull, the default baselines and CEGB, on the test split
    frontier = doc["frontier"]
    assert set(frontier) == {"BudgetPrune exact hull", "greedy", "fewer-trees"} | (
        {"cegb (LightGBM)"} if HAVE_LGBM else set())
    hull = frontier["BudgetPrune exact hull"]
    assert len(hull) >= 2 and all({"cost_eval", "accuracy_eval"} <= set(r) for r in hull)


def test_demo_picture_draws_hull_steps_baselines_and_budget_points(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from prune_opt.cli import demo

    seen = {}
    real = demo._plot

    def spy(curves, budget_rows, unpruned, path, name):
        real(curves, budget_rows, unpruned, path, name)
        seen["fig"] = plt.gcf()

    monkeypatch.setattr(plt, "close", lambda fig=None: None)  # keep the figure to look at
    monkeypatch.setattr(demo, "_plot", spy)
    assert main(["demo", "--dataset", "pima", "--trees", "4", "--max-depth", "4",
                 "--lams", "0.01", "--solvers", "mincut", "--budgets", "0.25,0.5",
                 "--budget-time-limit", "1", "--estimator-time-limit", "2", "--no-progress",
                 "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "demo.json").read_text())
    ax = seen["fig"].axes[0]
    lines = {ln.get_label(): ln for ln in ax.lines}
    assert lines["BudgetPrune exact hull"].get_drawstyle() == "steps-post"
    assert {"greedy", "fewer-trees"} <= set(lines)
    assert ("cegb (LightGBM)" in lines) == HAVE_LGBM
    # one point per budget for the estimator and fit_budget, no line per backend
    points = {c.get_label(): c for c in ax.collections}
    assert set(points) >= {"fit_budget", "budget estimator", "unpruned forest"}
    for label in ("fit_budget", "budget estimator"):
        mine = sorted((r["test_cost"], r["test_accuracy"]) for r in doc["budgets"]
                      if r["method"] == label)
        assert sorted(map(tuple, points[label].get_offsets().tolist())) == mine
    assert not any("mincut" in label for label in lines)


def test_demo_without_cegb_or_budgets(tmp_path, capsys):
    assert main(["demo", "--dataset", "pima", "--trees", "3", "--max-depth", "3",
                 "--lams", "0.01", "--solvers", "mincut", "--budgets", "0.5", "--no-cegb",
                 "--estimator-time-limit", "2", "--no-progress", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "demo.json").read_text())
    assert {r["method"] for r in doc["budgets"]} == {"budget estimator", "fit_budget"}
    assert "cegb (LightGBM)" not in doc["frontier"]
    capsys.readouterr()
    assert main(["demo", "--dataset", "pima", "--trees", "3", "--max-depth", "3",
                 "--lams", "0.01", "--solvers", "mincut", "--budgets", "none",
                 "--no-progress", "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "demo.json").read_text())["budgets"] == []
    assert "accuracy at a budget" not in capsys.readouterr().out


@pytest.mark.parametrize("argv, match", [
    (["demo", "--dataset", "no-such-data"], "neither a known name"),
    (["demo", "--trees", "0"], "--trees must be at least 1"),
    (["demo", "--solvers", "nope", "--trees", "1"], "installed solvers"),
    (["demo", "--train-frac", "1.5"], "--train-frac"),
    (["demo", "--budgets", "0.1,2"], "--budgets"),
    (["demo", "--estimator-time-limit", "0"], "--estimator-time-limit"),
    (["demo", "--budget-time-limit", "inf"], "--budget-time-limit"),
])
def test_user_errors_exit_2_with_one_line(argv, match, capsys, tmp_path):
    code = main(argv + ["--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert match in err


def test_debug_shows_traceback(tmp_path):
    with pytest.raises(ValueError):
        main(["--debug", "demo", "--dataset", "no-such-data", "--out", str(tmp_path)])


def test_zero_objective_with_float_noise_in_the_bound_has_no_gap():
    """At lambda = 0 a min-cut can prove an objective of 0 with a bound of -5e-16: that is
    no gap (it was reported as 5e-4, relative to the 1e-12 floor)."""
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier

    import prune_opt as po
    from prune_opt.solvers._solve import _relative_gap

    assert _relative_gap(0.0, -5.242659605053657e-16) == 0.0
    assert _relative_gap(0.1, 0.09) == pytest.approx(0.1)
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X[:600], y[:600])
    for solver in ("mincut", "highs"):
        p = po.prune(rf, X[600:900], y[600:900], lam=0.0, solver=solver, train=(X[:600], y[:600]))
        assert p.solve_info["status"] == "optimal"
        assert p.solve_info["gap"] <= 1e-9 * max(1.0, p.objective), solver
