"""Output files of the CLI: bad paths fail early with one line, writes are atomic.

Every command's output options are checked before any data is loaded; a full
disk (ENOSPC, simulated by making ``fsync`` fail) or Ctrl-C during a write
gives one line on stderr and leaves the destination as it was.
"""

import csv
import errno
import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prune_opt.checks import save_matrix
from prune_opt.cli import EXIT_INTERRUPTED, main
from prune_opt.cli._common import write_csv, write_json
from tests.cli_checks import one_line_error

DATA = ["--dataset", "pima", "--trees", "2", "--max-depth", "3"]

# (argv before the output option, the output option); a placeholder {} is the path
OUTPUT_OPTIONS = [
    (["prune", *DATA, "--lam", "0.01"], "--out"),
    (["prune", *DATA, "--lam", "0.01"], "--json"),
    (["prune", *DATA, "--lam", "0.01"], "--usage-plot"),
    (["compare", *DATA, "--solvers", "mincut", "--no-progress"], "--json"),
    (["curve", *DATA, "--methods", "fewer-trees", "--no-progress"], "--plot"),
    (["curve", *DATA, "--methods", "fewer-trees", "--no-progress"], "--csv"),
    (["curve", *DATA, "--methods", "fewer-trees", "--no-progress"], "--json"),
    (["export", *DATA, "--lam", "0.01"], "--out"),
    (["tu-check", "--dataset", "pima"], "--json"),
]
IDS = [f"{argv[0]}{flag}" for argv, flag in OUTPUT_OPTIONS]


def _suffix(flag):
    return {"--plot": ".png", "--usage-plot": ".png", "--csv": ".csv"}.get(flag, ".json")


def _out_name(argv, flag):
    return "out.mps" if argv[0] == "export" else "out" + _suffix(flag)


@pytest.fixture(autouse=True)
def _cwd(tmp_path_factory, monkeypatch):
    """Default output names (pruned.json, demo-output) land in a scratch folder."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.mark.parametrize("argv, flag", OUTPUT_OPTIONS, ids=IDS)
@pytest.mark.parametrize("case", ["directory", "missing-parent", "read-only"])
def test_bad_output_path_fails_before_the_work(argv, flag, case, tmp_path, capsys, no_work,
                                               monkeypatch):
    if case == "directory":
        target, why = tmp_path, "is a directory"
    elif case == "missing-parent":
        target, why = tmp_path / "no" / "such" / "x.json", "does not exist"
    else:
        target, why = tmp_path / "ro" / _out_name(argv, flag), "not writable"
        target.parent.mkdir()
        target.parent.chmod(0o555)
        if os.access(target.parent, os.W_OK):  # root ignores permission bits: simulate them
            real_access = os.access
            monkeypatch.setattr(os, "access", lambda p, mode, **kw: False
                                if os.fspath(p) == str(target.parent) else real_access(p, mode))
    code = main([*argv, flag, str(target)])
    one_line_error(capsys, code, flag, why)


def test_demo_output_folder_must_be_a_folder(tmp_path, capsys, no_work):
    a_file = tmp_path / "f"
    a_file.write_text("x")
    one_line_error(capsys, main(["demo", "--out", str(a_file)]), "--out", "is a file")
    code = main(["demo", "--out", str(tmp_path / "no" / "such")])
    one_line_error(capsys, code, "--out", "does not exist")


def test_two_options_naming_one_file_is_an_error(tmp_path, capsys, no_work):
    same = str(tmp_path / "same.json")
    code = main(["prune", *DATA, "--lam", "0.01", "--out", same, "--json", same])
    one_line_error(capsys, code, "--out and --json", "own file")


def _fail_fsync(monkeypatch, exc):
    def fsync(fd):
        raise exc

    monkeypatch.setattr(os, "fsync", fsync)


def _leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name != "keep")


# the prune command saves its forest first: its outputs are covered separately
WRITES = [(o, i) for o, i in zip(OUTPUT_OPTIONS, IDS) if o[0][0] != "prune"]


@pytest.mark.parametrize("argv, flag", [o for o, _ in WRITES], ids=[i for _, i in WRITES])
def test_full_disk_is_one_line_and_keeps_the_old_file(argv, flag, tmp_path, capsys,
                                                       monkeypatch):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / _out_name(argv, flag)
    target.write_bytes(b"previous content")
    if argv[0] == "tu-check":
        argv = ["tu-check", "--dataset", "pima", "--trees", "1", "--examples", "10"]
    _fail_fsync(monkeypatch, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    code = main([*argv, flag, str(target)])
    one_line_error(capsys, code, "No space left on device", target.name)
    assert target.read_bytes() == b"previous content"
    assert _leftovers(out_dir) == [target.name]  # no temporary file left behind


def test_full_disk_while_saving_the_pruned_forest(tmp_path, capsys, monkeypatch):
    import inspect

    import prune_opt.model._codec as persistence

    if "atomic_write" not in inspect.getsource(persistence):
        pytest.skip("PrunedForest.save does not write through atomic_write in this build")
    target = tmp_path / "p.json"
    _fail_fsync(monkeypatch, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    code = main(["prune", *DATA, "--lam", "0.01", "--out", str(target)])
    one_line_error(capsys, code, "No space left on device")
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_during_a_write_leaves_no_file(tmp_path, capsys, monkeypatch):
    A = tmp_path / "A.npz"
    save_matrix(A, np.array([[1, -1, 0], [0, 1, -1]]))
    _fail_fsync(monkeypatch, KeyboardInterrupt())
    code = main(["tu-check", "--matrix", str(A), "--json", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == EXIT_INTERRUPTED
    assert err.strip().splitlines() == ["interrupted"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["A.npz"]


def test_outputs_are_whole_files(tmp_path):
    """The atomic path really writes: every output loads back."""
    A = tmp_path / "A.mtx"
    save_matrix(A, np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]]))
    assert main(["tu-check", "--matrix", str(A), "--json", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["report"]["is_tu"] is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["A.mtx", "r.json"]


cells = st.one_of(st.integers(-10**6, 10**6), st.text(max_size=8),
                  st.floats(allow_nan=False, allow_infinity=False))
rows_strategy = st.lists(st.dictionaries(st.sampled_from(["a", "b", "c"]), cells, min_size=1),
                         min_size=1, max_size=6)


@given(rows=rows_strategy, fail=st.booleans())
@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_csv_and_json_writers_are_all_or_nothing(rows, fail, tmp_path_factory):
    out = tmp_path_factory.mktemp("w")
    csv_path, json_path = out / "r.csv", out / "r.json"
    for p in (csv_path, json_path):
        p.write_text("old")
    real_fsync = os.fsync
    if fail:
        os.fsync = lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full"))
    try:
        for write, path in ((write_csv, csv_path), (write_json, json_path)):
            if fail:
                with pytest.raises(OSError, match=path.name):
                    write(path, rows)
            else:
                write(path, rows)
    finally:
        os.fsync = real_fsync
    assert sorted(p.name for p in out.iterdir()) == ["r.csv", "r.json"]
    if fail:
        assert csv_path.read_text() == json_path.read_text() == "old"
        return
    back = list(csv.DictReader(csv_path.open(newline="")))
    keys = list(dict.fromkeys(k for r in rows for k in r))
    assert [list(r) for r in back] == [keys] * len(rows)
    assert [{k: str(v) for k, v in r.items()} for r in rows] == \
        [{k: v for k, v in r.items() if k in rows[i]} for i, r in enumerate(back)]
    assert json.loads(json_path.read_text()) == rows


def test_phase_shows_the_step_on_a_terminal_and_nothing_in_a_pipe(monkeypatch):
    import io
    import sys
    import time

    from prune_opt.cli._common import phase

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with phase("baseline ccp: scoring 12 prunings"):
        time.sleep(0.6)  # one refresh of the background thread
    assert "baseline ccp: scoring 12 prunings: 00:00" in term.getvalue()
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    with phase("silent"):
        pass
    assert pipe.getvalue() == ""
