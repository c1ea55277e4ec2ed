"""The prune, curve and export commands, in-process on a bundled dataset."""

import csv
import json

import pytest

import prune_opt as po
from prune_opt.cli import main

DATA = ["--dataset", "pima", "--trees", "4", "--max-depth", "3"]


def test_prune_lam_and_budget(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["prune", *DATA, "--lam", "0.001", "--solver", "highs", "--out", str(out),
                 "--json", str(tmp_path / "s.json"), "--usage-plot",
                 str(tmp_path / "u.png")]) == 0
    assert (tmp_path / "u.png").read_bytes()[:4] == b"\x89PNG"
    text = capsys.readouterr().out
    assert "objective" in text and "test_accuracy" in text and "status: optimal" in text
    lines = text.splitlines()
    assert lines[0].startswith("task: classification")
    assert lines[1].startswith("[prune-opt] memory estimate for ") and "available" in text
    pf = po.load(out)
    summary = json.loads((tmp_path / "s.json").read_text())
    assert pf.n_splits == summary["splits"]
    out2 = tmp_path / "b.json"
    assert main(["prune", *DATA, "--budget", "10", "--solver", "highs", "--out",
                 str(out2), "--json", str(tmp_path / "b_s.json")]) == 0
    s2 = json.loads((tmp_path / "b_s.json").read_text())
    assert s2["validation_cost"] <= 10 + 1e-9
    assert s2["solve_info"]["budget"] == 10.0


def test_prune_budget_with_the_paper_objective_reports_its_certified_gap(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["prune", *DATA, "--budget", "10", "--objective", "paper", "--time-limit",
                 "5", "--out", str(out), "--json", str(tmp_path / "m_s.json")]) == 0
    s = json.loads((tmp_path / "m_s.json").read_text())
    assert s["validation_cost"] <= 10 + 1e-9 and "hull_error_gap" in s
    assert s["hull_error_gap"] >= -1e-12
    assert s["loss"] == "paper" and 0 <= s["gap"] and s["bound"] <= s["objective"] + 1e-12
    assert "gap: " in capsys.readouterr().out


def test_prune_budget_hull_vertex_says_it_is_the_paper_objective(tmp_path):
    js = tmp_path / "h.json"
    assert main(["prune", *DATA, "--budget", "10", "--budget-method", "hull", "--out",
                 str(tmp_path / "h_p.json"), "--json", str(js), "--no-progress"]) == 0
    s = json.loads(js.read_text())
    assert s["loss"] == "paper" and s["validation_cost"] <= 10 + 1e-9 and s["lam"] >= 0


def test_prune_budget_uses_fit_budgets_default_and_prints_only_what_exists(tmp_path, capsys):
    """--budget without --objective is fit_budget's default (objective auto): the summary
    names the loss it chose and shows a certified gap only for the paper objective."""
    js = tmp_path / "s.json"
    assert main(["prune", "--dataset", "heart", "--trees", "6", "--max-depth", "4",
                 "--budget", "40", "--out", str(tmp_path / "p.json"), "--json",
                 str(js)]) == 0
    text = capsys.readouterr().out
    s = json.loads(js.read_text())
    assert s["loss"] in ("auto: paper", "auto: brier")
    assert s["validation_cost"] <= 40 + 1e-9
    held_out = dict(part.split() for part in s["auto_holdout_loss"].split(", "))
    assert set(held_out) == {"paper", "brier"}
    # the chosen loss scored at least as well on the held-out rows (ties go to brier,
    # and so does a paper run that kept no split)
    if s["loss"] == "auto: paper":
        assert float(held_out["paper"]) < float(held_out["brier"])
    if s["loss"] == "auto: brier":  # the forest's own loss has no bound: none is printed
        assert "gap" not in s and "bound" not in s and "gap:" not in text
    assert "None" not in text  # a field that does not exist is left out, not printed
    assert s["seconds"] > 0


def test_prune_user_errors(tmp_path, capsys):
    assert main(["prune", *DATA, "--lam", "-1", "--out", str(tmp_path / "x.json")]) == 2
    assert "--lam" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # the dead flag is gone
        main(["prune", *DATA, "--budget", "1", "--exact-budget",
              "--out", str(tmp_path / "x.json")])
    assert main(["prune", *DATA, "--lam", "0.1", "--objective", "auto",
                 "--out", str(tmp_path / "x.json")]) == 2
    assert "--objective auto needs --budget" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["prune", *DATA, "--out", str(tmp_path / "x.json")])  # neither lam nor budget


def test_curve_writes_png_csv_json(tmp_path, capsys):
    png, csvf, js = tmp_path / "c.png", tmp_path / "c.csv", tmp_path / "c.json"
    assert main(["curve", *DATA, "--methods", "budgetprune,ccp,greedy,fewer-trees,impurity",
                 "--solver", "highs", "--plot", str(png), "--csv", str(csvf), "--json",
                 str(js), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "acc@10%" in out and "acc@50%" in out
    assert png.read_bytes()[:4] == b"\x89PNG"
    rows = list(csv.DictReader(csvf.open()))
    methods = {r["method"] for r in rows}
    assert methods == {"budgetprune", "ccp", "greedy", "fewer-trees", "impurity"}
    data = json.loads(js.read_text())
    assert len(data["rows"]) == len(rows)
    bp = [r for r in data["rows"] if r["method"] == "budgetprune"]
    assert bp[0]["lam_lo"] == 0.0 and bp[-1]["average_cost"] == 0.0


def test_curve_bad_method(capsys):
    assert main(["curve", *DATA, "--methods", "budgetprune,nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_curve_cegb_moved_out_of_the_cli(capsys):
    # prune_opt never imports forest_builders: the CEGB curve is forest_builders.cegb.cegb_curve
    assert main(["curve", *DATA, "--methods", "cegb"]) == 2
    assert "forest_builders.cegb.cegb_curve" in capsys.readouterr().err


def _experiment_problem(args, lam):
    from prune_opt.cli import build_parser
    from prune_opt.cli._common import setup_experiment

    ns = build_parser().parse_args(args)
    exp = setup_experiment(ns)
    return po.compile_problem(exp["forest"], exp["X_val"], exp["y_val"], costs=exp["costs"],
                              lam=lam, train=(exp["X_train"], exp["y_train"]))


def test_export_mps_reads_back_with_ortools(tmp_path):
    from ortools.linear_solver.python import model_builder as mb

    out = tmp_path / "prog.mps"
    args = ["export", *DATA, "--lam", "0.01", "--out", str(out), "--integer"]
    assert main(args) == 0
    model = mb.Model()
    assert model.import_from_mps_file(str(out))
    problem = _experiment_problem(args, 0.01)
    size = problem.size()
    assert model.num_variables == size["n_variables"]
    assert model.num_constraints == size["n_rows"]
    assert all(v.is_integral for v in model.get_variables())
    # solving the re-read binary program gives the optimal pruning objective (scaled)
    solver = mb.Solver("scip")
    assert solver.solve(model) == mb.SolveStatus.OPTIMAL
    best = po.solve(problem, solver="highs").objective
    assert solver.objective_value / problem.scale == pytest.approx(best, rel=1e-7)


def test_export_lp_is_read_and_solved_by_cbc(tmp_path):
    import subprocess

    import pulp

    from prune_opt.solvers.cbc import cbc_command

    cmd = cbc_command(pulp)
    if not cmd.available():
        pytest.skip("no CBC binary")
    out = tmp_path / "prog.lp"
    args = ["export", *DATA, "--lam", "0.01", "--format", "lp", "--out", str(out)]
    assert main(args) == 0
    sol = tmp_path / "sol.txt"
    subprocess.run([cmd.path, str(out), "-solve", "-solu", str(sol)], check=True,
                   capture_output=True, timeout=120)
    first = sol.read_text().splitlines()[0]
    assert first.startswith("Optimal")
    problem = _experiment_problem(args, 0.01)
    value = float(first.split()[-1])
    assert value / problem.scale == pytest.approx(po.solve(problem, solver="highs").objective,
                                                  rel=1e-7)


def test_export_format_from_suffix_errors(tmp_path, capsys):
    assert main(["export", *DATA, "--lam", "0.01", "--out", str(tmp_path / "x.txt")]) == 2
    assert "format" in capsys.readouterr().err


def test_prune_with_an_ensemble_objective(tmp_path, capsys):
    out = tmp_path / "p.json"
    code = main(["prune", "--dataset", "heart", "--trees", "4", "--max-depth", "4",
                 "--budget", "30", "--objective", "brier", "--time-limit", "10",
                 "--out", str(out)])
    assert code == 0 and out.exists()
    text = capsys.readouterr().out
    cost = float(next(ln for ln in text.splitlines() if "validation_cost" in ln).split(":")[1])
    assert cost <= 30 + 1e-9
    assert main(["prune", "--dataset", "heart", "--trees", "2", "--lam", "0.01",
                 "--objective", "nope", "--out", str(out)]) == 2
    assert "nope" in capsys.readouterr().err


def test_curve_with_an_ensemble_objective(tmp_path, capsys):
    csv_path = tmp_path / "c.csv"
    assert main(["curve", "--dataset", "heart", "--trees", "3", "--max-depth", "3",
                 "--methods", "budgetprune", "--objective", "brier", "--no-progress",
                 "--csv", str(csv_path)]) == 0
    rows = list(csv.DictReader(csv_path.open()))
    assert {r["method"] for r in rows} == {"budgetprune", "brier"}
    assert main(["curve", "--dataset", "heart", "--trees", "2", "--methods", "greedy",
                 "--objective", "brier"]) == 2


def test_curve_scores_at_most_baseline_points_members_of_each_family(tmp_path):
    import json as _json

    from prune_opt.cli import main as _main

    out = tmp_path / "c.json"
    argv = ["curve", "--dataset", "pima", "--trees", "5", "--methods", "ccp,fewer-trees",
            "--no-progress", "--json", str(out)]
    assert _main([*argv, "--baseline-points", "0"]) == 0
    full = [r for r in _json.loads(out.read_text())["rows"] if r["method"] == "ccp"]
    assert _main([*argv, "--baseline-points", "4"]) == 0
    rows = _json.loads(out.read_text())["rows"]
    ccp = [r for r in rows if r["method"] == "ccp"]
    assert len(full) > 4 and len(ccp) == 4
    # the thinned family keeps its ends: the unpruned forest and the cheapest member
    assert ccp[0] == full[0] and ccp[-1] == full[-1]
    assert len([r for r in rows if r["method"] == "fewer-trees"]) == 4


def test_curve_auto_resolution_draws_exact_hull_vertices_only(tmp_path, capsys):
    import json as _json

    from prune_opt.cli import main as _main

    out = tmp_path / "c.json"
    argv = ["curve", "--dataset", "thyroid", "--trees", "6", "--methods", "budgetprune",
            "--no-progress", "--json", str(out)]

    def vertices():
        rows = _json.loads(out.read_text())["rows"]
        return {(r["n_splits"], round(r["average_cost"], 9)) for r in rows}

    assert _main([*argv, "--cost-resolution", "0"]) == 0
    every = vertices()
    assert _main(argv) == 0
    assert "exact hull traced to cost gaps of" in capsys.readouterr().out
    auto = vertices()
    assert auto <= every and len(auto) >= 2
    code = _main([*argv, "--cost-resolution", "fine"])
    assert code == 2 and "--cost-resolution must be 'auto'" in capsys.readouterr().err


def test_curve_draws_fit_budget_on_the_budget_grid(tmp_path, capsys):
    """fit_budget (its defaults) at each budget of --budgets, within the budget on the
    validation split, beside the hull and the baselines; the summary reads every method
    at the budgets by validation cost."""
    import math

    from prune_opt.cli.curve import score_at_budget

    js = tmp_path / "c.json"
    assert main(["curve", *DATA, "--budgets", "0.2,0.5", "--no-progress", "--json",
                 str(js), "--plot", str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr().out
    data = json.loads(js.read_text())
    rows = data["rows"]
    assert {r["method"] for r in rows} == {"budgetprune", "fit_budget", "ccp", "greedy",
                                           "fewer-trees"}
    fb = [r for r in rows if r["method"] == "fit_budget"]
    val_cost = data["unpruned"]["validation_cost"]
    assert sorted(r["budget"] for r in fb) == pytest.approx([0.2 * val_cost, 0.5 * val_cost])
    for r in fb:
        assert r["average_cost"] <= r["budget"] * (1 + 1e-9)
        assert 0 <= r["accuracy_eval"] <= 1 and r["cost_eval"] >= 0
    assert "acc@20%" in out and "acc@50%" in out
    for srow in data["summary"]:
        mine = [r for r in rows if r["method"] == srow["method"]]
        for share in (0.2, 0.5):
            want = score_at_budget(mine, share * val_cost)
            got = float(srow[f"acc@{share:.0%}"])  # NaN is written as "nan"
            assert (math.isnan(want) and math.isnan(got)) or got == want
    summary = {r["method"]: r for r in data["summary"]}
    # fit_budget's point at a budget is its own answer there
    assert summary["fit_budget"]["acc@50%"] == max(fb, key=lambda r: r["budget"])[
        "accuracy_eval"]


def test_curve_hull_scores_equal_tradeoff_curves_own(tmp_path):
    """The CLI scores the hull's vertices with the rows routed once: the same figures as
    tradeoff_curve(X_eval=...) scoring each vertex from scratch."""
    from prune_opt.budget import tradeoff_curve
    from prune_opt.cli import build_parser
    from prune_opt.cli._common import setup_experiment
    from prune_opt.cli.curve import hull_rows

    exp = setup_experiment(build_parser().parse_args(["curve", *DATA]))
    problem = po.compile_problem(exp["forest"], exp["X_val"], exp["y_val"],
                                 costs=exp["costs"], train=(exp["X_train"], exp["y_train"]))
    fast = hull_rows(problem, exp["X_val"], exp["X_test"], exp["y_test"], progress=False)
    slow = tradeoff_curve(problem, X_eval=exp["X_test"], y_eval=exp["y_test"]).to_dict(
        "records")
    assert len(fast) == len(slow) >= 2
    for a, b in zip(fast, slow):
        assert a["n_splits"] == b["n_splits"]
        assert a["accuracy_eval"] == b["accuracy_eval"]
        assert a["cost_eval"] == pytest.approx(b["cost_eval"], rel=1e-12)


@pytest.mark.parametrize("argv, needle", [
    (["--budgets", "0,0.5"], "--budgets shares must lie in (0, 1]"),
    (["--budgets", "none"], "--methods fit_budget needs budgets"),
    (["--budget-time-limit", "nan"], "--budget-time-limit must be a finite number"),
])
def test_curve_budget_options_fail_early_with_one_line(argv, needle, capsys):
    assert main(["curve", *DATA, *argv]) == 2
    assert needle in capsys.readouterr().err
