"""``prune-opt compare`` on a small real dataset, run in-process."""

import json

import pytest

from prune_opt.cli import main
from prune_opt.cli.compare import add_gaps, measure_solve, parse_solvers


def test_compare_writes_consistent_json(tmp_path, capsys):
    out = tmp_path / "cmp.json"
    rc = main(["compare", "--dataset", "pima", "--trees", "4", "--max-depth", "6",
               "--lam", "0.01", "--solvers", "mincut,highs,cbc-ip", "--examples", "120",
               "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["n_validation"] == 120 and data["trees"] == 4
    rows = {r["solver"]: r for r in data["rows"]}
    assert set(rows) == {"mincut", "highs", "cbc-ip"}
    best = data["best_objective"]
    for name, r in rows.items():
        assert r["status"] == "optimal", name
        assert abs(r["objective"] - best) <= 1e-9 * abs(best), name
        assert r["gap_to_best"] <= 1e-9
        assert r["seconds"] > 0 and r["memory_method"] in ("rss-hwm", "tracemalloc")
        assert 0.0 <= r["test_accuracy"] <= 1.0 and r["test_cost"] >= 0
        assert r["bound"] <= r["objective"] + 1e-12
    assert rows["mincut"]["max_frac"] == 0.0
    text = capsys.readouterr().out
    assert "gap_to_best" in text and "mincut" in text
    # the memory estimate is printed before compiling
    assert text.index("memory estimate for 120 cost rows") < text.index("compiled in")


def test_unknown_solver_is_a_one_line_error(capsys):
    rc = main(["compare", "--dataset", "pima", "--trees", "2", "--solvers", "mincut,nope"])
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "nope" in err and "installed solvers" in err and "mincut" in err


def test_parse_solvers_default_is_the_fast_backends():
    from prune_opt.solvers import list_solvers

    names = parse_solvers(None)
    info = list_solvers()
    assert "mincut" in names and "cbc-ip" not in names and "mincut-networkx" not in names
    assert all(not info[s]["matrix_based"] and not info[s]["reference_only"] for s in names)
    every = parse_solvers("all")
    assert set(names) < set(every) and "highs" in every and "cbc-ip" not in every
    assert parse_solvers("MinCut, highs,mincut") == ["mincut", "highs"]
    with pytest.raises(ValueError, match="--solvers"):
        parse_solvers(" , ")


def test_measure_solve_reports_errors_instead_of_raising():
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    import prune_opt as po

    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    problem = po.compile_problem(rf, X, y, lam=0.01)
    bad = measure_solve(problem.with_budget(1.0), "mincut")  # mincut refuses a budget row
    assert bad["status"] == "error" and "budget" in bad["error"]
    rows = [measure_solve(problem, "mincut", isolate=False), bad]
    assert rows[0]["memory_method"] == "tracemalloc"
    assert add_gaps(rows) == rows[0]["objective"] and rows[0]["gap_to_best"] == 0.0


class _Solved:
    objective, n_splits = 1.0, 0
    solve_info = {"bound": 1.0, "seconds": 0.01, "max_fractionality": 0.0, "status": "optimal"}


@pytest.mark.parametrize("isolate", [True, False])
def test_peak_memory_measures_what_the_solve_allocates(monkeypatch, isolate):
    """A solve that touches 160 MiB is measured at 160 MiB or a little more, not at any
    non-negative number."""
    import numpy as np

    import prune_opt

    def allocating_solve(problem, solver, **kwargs):
        block = np.ones(160 * 2**20 // 8)  # every page written
        assert block.sum() > 0
        return _Solved()

    monkeypatch.setattr(prune_opt, "solve", allocating_solve)
    row = measure_solve(object(), "mincut", isolate=isolate)
    assert row["status"] == "optimal", row
    assert 155 <= row["peak_mb"] <= 260, row


def test_a_fractional_lp_optimum_is_called_fractional():
    from prune_opt.cli.compare import mark_fractional

    row = mark_fractional({"solver": "pdlp", "status": "optimal", "max_frac": 0.49})
    assert row["status"] == "fractional" and row["solver_status"] == "optimal"
    assert "fractional" in row["note"] and "0.49" in row["note"]
    assert mark_fractional({"solver": "highs", "status": "optimal", "max_frac": 0.0})[
        "status"] == "optimal"
