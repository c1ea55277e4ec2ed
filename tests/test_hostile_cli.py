"""Hostile command lines: bad cost files, bad CSVs, options that used to fail late.

Every user error is one line on stderr and exit status 2, and whatever can be
checked from the command line alone is checked before any data is loaded.
"""

import json

import pytest

import prune_opt as po
import prune_opt.datasets
from prune_opt.cli import main
from tests.cli_checks import one_line_error

PIMA = ["--dataset", "pima", "--trees", "2", "--max-depth", "3"]


@pytest.fixture
def table(tmp_path):
    """A small CSV whose header is quoted and starts with a UTF-8 byte-order mark."""
    rows = ['"age","dose","marker","label"']
    rows += [f"{i % 7},{(i * 3) % 11},{(i * 5) % 13},{int((i % 7) + (i % 3) > 4)}"
             for i in range(80)]
    path = tmp_path / "table.csv"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(rows).encode())
    return path


# ------------------------------------------------------------ options checked up front
@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_demo_budget_time_limit_is_checked_before_the_work(value, capsys, no_work, tmp_path):
    """It was checked by fit_budget after the whole lambda grid had been solved."""
    code = main(["demo", "--budget-time-limit", value, "--out", str(tmp_path / "d")])
    one_line_error(capsys, code, "--budget-time-limit")


def test_curve_objective_and_plot_suffix_are_checked_before_the_work(capsys, no_work,
                                                                     tmp_path):
    code = main(["curve", *PIMA, "--objective", "nope", "--csv", str(tmp_path / "c.csv")])
    one_line_error(capsys, code, "unknown objective 'nope'")
    code = main(["curve", *PIMA, "--plot", str(tmp_path / "c.csv")])
    one_line_error(capsys, code, "--plot", "cannot write 'csv'")
    code = main(["prune", *PIMA, "--lam", "0.01", "--usage-plot", str(tmp_path / "u.txt"),
                 "--out", str(tmp_path / "p.json")])
    one_line_error(capsys, code, "--usage-plot", "cannot write 'txt'")


def test_budget_method_hull_with_an_ensemble_objective_is_refused(capsys, tmp_path):
    """--objective brier silently ignored --budget-method hull."""
    code = main(["prune", *PIMA, "--budget", "5", "--objective", "brier",
                 "--budget-method", "hull", "--out", str(tmp_path / "p.json")])
    one_line_error(capsys, code, "method", "'hull'")
    assert not (tmp_path / "p.json").exists()


def test_infinite_time_limit_means_no_limit_with_a_budget(capsys, tmp_path):
    out = tmp_path / "p.json"
    code = main(["prune", *PIMA, "--budget", "5", "--time-limit", "inf", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    # no limit: the search ran to its end (the paper search proved its optimum, or the
    # own-loss search finished within the budget), never stopped by the clock
    assert po.load(out).solve_info["status"] in ("optimal", "within_budget")


# ------------------------------------------------------------ cost files
@pytest.mark.parametrize("text, words", [
    ("[1, 2", "line 1 is not 'name:cost'"),
    ("glucose:1\ninsulin: lots\n", "line 2 is not 'name:cost'"),
    ("just words\n", "line 1 is not 'name:cost'"),
    ('{"no_such_feature": 1}', "unknown features"),
    ('{"glucose": -1}', "non-negative"),
])
def test_bad_cost_files_are_one_clear_line(text, words, capsys, tmp_path):
    """A file that was neither JSON nor 'name:cost' lines said 'no cost given for
    features [...]' as if it had been empty."""
    costs = tmp_path / "costs.txt"
    costs.write_text(text)
    code = main(["prune", *PIMA, "--lam", "0.01", "--costs", str(costs),
                 "--out", str(tmp_path / "p.json")])
    one_line_error(capsys, code, words)


def test_cost_lines_with_comments_and_a_csv_with_quoted_bom_header(table, capsys, tmp_path):
    """Costs keyed by the header's names reach the right columns: the byte-order mark
    and the quotes are not part of the names."""
    costs = tmp_path / "costs.txt"
    costs.write_text("# published costs\nage: 1\n\ndose: 2.5\nmarker: 40\n")
    out = tmp_path / "p.json"
    code = main(["prune", "--dataset", str(table), "--trees", "3", "--lam", "0.001",
                 "--costs", str(costs), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    pruned = po.load(out)
    assert pruned.costs.feature_names == ["age", "dose", "marker"]
    assert pruned.costs.unit_costs.tolist() == [1.0, 2.5, 40.0]
    costs.write_text(json.dumps({"marker": 40, "age": 1, "dose": 2.5}))  # any order
    assert main(["prune", "--dataset", str(table), "--trees", "3", "--lam", "0.001",
                 "--costs", str(costs), "--out", str(out)]) == 0
    assert po.load(out).costs.unit_costs.tolist() == [1.0, 2.5, 40.0]


# ------------------------------------------------------------ bad data files
@pytest.mark.parametrize("content, words", [
    (b"a,b,label\n" + b"1,2,0\n" * 19 + b"1,2x,1\n", "column 'b' row 21: cannot read '2x'"),
    (b"a,b,label\n1,2\n", "row 2 has 2 fields"),
    (b"", "is empty"),
    (b"\x1f\x8b\x08\x00garbage", "not readable text"),
])
def test_bad_csv_inputs_are_one_clear_line(content, words, capsys, tmp_path):
    path = tmp_path / ("data.csv.gz" if content.startswith(b"\x1f\x8b") else "data.csv")
    path.write_bytes(content)
    code = main(["prune", "--dataset", str(path), "--trees", "2", "--lam", "0.01",
                 "--out", str(tmp_path / "p.json")])
    one_line_error(capsys, code, words)


def test_a_folder_as_dataset_is_one_clear_line(capsys, tmp_path):
    code = main(["prune", "--dataset", str(tmp_path), "--trees", "2", "--lam", "0.01",
                 "--out", str(tmp_path / "p.json")])
    one_line_error(capsys, code, "not a file")


# ------------------------------------------------------------ export formats and datasets
def test_export_formats(capsys, tmp_path):
    for name, fmt, head in (("e.mps", None, "*"), ("e.lp", None, ""), ("e.MPS", None, "*"),
                            ("e.txt", "mps", "*")):
        argv = ["export", *PIMA, "--lam", "0.01", "--out", str(tmp_path / name)]
        assert main(argv + (["--format", fmt] if fmt else [])) == 0, capsys.readouterr().err
        text = (tmp_path / name).read_text()
        assert text.startswith(head) and ("ROWS" in text) == (head == "*")
    code = main(["export", *PIMA, "--lam", "0.01", "--out", str(tmp_path / "e.mps.gz")])
    one_line_error(capsys, code, "cannot tell the format")
    code = main(["export", *PIMA, "--lam", "0.01", "--budget", "-1",
                 "--out", str(tmp_path / "b.lp")])
    one_line_error(capsys, code, "budget")


def test_datasets_without_a_shared_folder_lists_every_name(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PRUNE_OPT_DATA", str(tmp_path / "none"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(prune_opt.datasets, "shared_data_dir", lambda: None)
    assert main(["datasets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    col = lines[0].split().index("local")
    local = {ln.split()[0]: ln.split()[col] for ln in lines[1:]}
    assert local["thyroid"] == "yes" and local["magic"] == "no"
