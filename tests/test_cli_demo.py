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
    assert {(r["budget_share"], r["objective"]) for r in budgets} == {
        (s, o) for s in (0.1, 0.25, 0.5) for o in ("paper", "brier")}


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
