"""The demo command end to end (small), and the CLI's user-error contract."""

import json

import pytest

from prune_opt.cli import main


def test_demo_small(tmp_path, capsys):
    code = main(["demo", "--dataset", "thyroid", "--trees", "3", "--max-depth", "4",
                 "--lams", "0,0.01", "--lp-lams", "all", "--solvers", "highs,cbc-ip",
                 "--out", str(tmp_path)])
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
    # accuracy at a budget: every share with both objectives, each within its budget
    assert "accuracy at a budget" in out
    budgets = doc["budgets"]
    assert {(r["budget_share"], r["loss"]) for r in budgets} == {
        (s, o) for s in (0.1, 0.25, 0.5) for o in ("paper", "brier")}
    # every budget row has a gap: a number, or 'no bound' for a search without one
    assert all(isinstance(r["gap"], float) or r["gap"] == "no bound" for r in budgets)
    # the budget table's headers are not the agreement table's: 'objective' is a number
    assert all(isinstance(r["objective"], float) for r in rows)
    assert all("objective" not in r for r in budgets)
    # the frontier: the exact hull and the default baselines, on the test split
    frontier = doc["frontier"]
    assert set(frontier) == {"BudgetPrune exact hull", "greedy", "fewer-trees"}
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
                 "--lams", "0.01", "--solvers", "mincut", "--budgets", "0.25",
                 "--budget-time-limit", "1", "--no-progress", "--out", str(tmp_path)]) == 0
    ax = seen["fig"].axes[0]
    lines = {ln.get_label(): ln for ln in ax.lines}
    assert lines["BudgetPrune exact hull"].get_drawstyle() == "steps-post"
    assert {"greedy", "fewer-trees"} <= set(lines)
    # one point per budget method, no line per backend
    assert {c.get_label() for c in ax.collections} >= {"fit_budget", "fit_budget (brier)",
                                                        "unpruned forest"}
    assert not any("mincut" in label for label in lines)


@pytest.mark.parametrize("argv, match", [
    (["demo", "--dataset", "no-such-data"], "neither a known name"),
    (["demo", "--trees", "0"], "--trees must be at least 1"),
    (["demo", "--solvers", "nope", "--trees", "1"], "installed solvers"),
    (["demo", "--train-frac", "1.5"], "--train-frac"),
    (["demo", "--budgets", "0.1,2"], "--budgets"),
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
    from prune_opt._solve import _relative_gap

    assert _relative_gap(0.0, -5.242659605053657e-16) == 0.0
    assert _relative_gap(0.1, 0.09) == pytest.approx(0.1)
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X[:600], y[:600])
    for solver in ("mincut", "highs"):
        p = po.prune(rf, X[600:900], y[600:900], lam=0.0, solver=solver, train=(X[:600], y[:600]))
        assert p.solve_info["status"] == "optimal"
        assert p.solve_info["gap"] <= 1e-9 * max(1.0, p.objective), solver
