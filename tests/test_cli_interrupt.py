"""Ctrl-C in a real ``prune-opt`` process: one line, exit 130, no partial file, no orphan.

Each test starts the command in its own session, waits until it reaches the
moment under test, then sends SIGINT to the whole process group, as a
terminal's Ctrl-C does (forked solver children receive it too).  The moments
are recognised by what the process writes, never by a delay, so the tests
hold on a loaded machine: a line of its output (the long phase has begun),
or, with ``python -X importtime``, the line of a module it has just imported
(``argparse``: the command line has started; ``numpy``: the command is
importing its libraries).
"""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")]


def _start(argv, cwd, *, python_options=()):
    env = dict(os.environ, PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, *python_options, "-m", "prune_opt.cli", *argv],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _wait_for(proc, marker, timeout=120):
    """Read stdout until a line contains ``marker``; returns what was read."""
    seen, found = [], threading.Event()

    def reader():
        for line in proc.stdout:
            seen.append(line)
            if marker in line:
                found.set()
                return

    threading.Thread(target=reader, daemon=True).start()
    if not found.wait(timeout):
        proc.kill()
        pytest.fail(f"never printed {marker!r}: {''.join(seen)}{proc.stderr.read()}")
    return "".join(seen)


def _interrupt(proc, delay=0.5):
    time.sleep(delay)  # inside the long phase
    assert proc.poll() is None, "the command finished before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the command did not stop after SIGINT")
    return err


def _assert_clean_interrupt(proc, err):
    err = "".join(ln for ln in err.splitlines(keepends=True) if not _import_line(ln))
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert err.rstrip().splitlines()[-1] == "interrupted"
    lines = [ln for ln in err.splitlines() if "\r" not in ln and ln.strip()]
    assert lines == ["interrupted"], err
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):  # no child left running in the session
        os.killpg(proc.pid, 0)


def test_ctrl_c_while_a_forked_solver_runs(tmp_path):
    out = tmp_path / "cmp.json"
    proc = _start(["compare", "--dataset", "digits", "--trees", "10",
                   "--solvers", "mincut-networkx", "--no-progress", "--json", str(out)],
                  tmp_path)
    _wait_for(proc, "compiled in")
    _assert_clean_interrupt(proc, _interrupt(proc))
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_during_in_process_solves(tmp_path):
    proc = _start(["demo", "--dataset", "digits", "--trees", "10", "--solvers",
                   "mincut-networkx", "--lams", "0,0.001,0.002,0.005,0.01,0.02",
                   "--lp-lams", "", "--no-progress", "--out", str(tmp_path / "demo")],
                  tmp_path)
    _wait_for(proc, "unpruned forest")
    _assert_clean_interrupt(proc, _interrupt(proc))
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------- start-up: before the command's own work
# The command line installs its SIGINT handling before it imports anything, and imports
# NumPy, scikit-learn and SciPy only when a command runs: Ctrl-C while they are being
# imported printed a KeyboardInterrupt traceback from inside SciPy and the process died
# by the signal (status -2).

PRUNE = ["prune", "--dataset", "digits", "--trees", "10", "--lam", "0.01", "--out",
         "pruned.json", "--no-progress"]


def _import_line(line):
    return line.startswith("import time:")


class _Stderr:
    """Reads a process's stderr as it comes (``-X importtime`` writes more than a pipe
    holds) and says when a module whose name starts with ``prefix`` has been imported."""

    def __init__(self, proc):
        self.lines, self.proc = [], proc
        self._new = threading.Condition()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        threading.Thread(target=proc.stdout.read, daemon=True).start()  # drained, unread

    def _read(self):
        for line in self.proc.stderr:
            with self._new:
                self.lines.append(line)
                self._new.notify_all()
        with self._new:
            self.lines.append(None)  # end of the stream
            self._new.notify_all()

    def imported(self, prefix):
        return any(ln is not None and _import_line(ln) and
                   ln.rsplit("|", 1)[-1].strip().startswith(prefix) for ln in self.lines)

    def wait_for_import(self, prefix, timeout=120):
        with self._new:
            if not self._new.wait_for(lambda: self.imported(prefix) or None in self.lines,
                                      timeout):
                self.proc.kill()
                pytest.fail(f"{prefix} was never imported")
        assert self.imported(prefix), "".join(ln for ln in self.lines if ln)

    def text(self):
        self._thread.join(60)
        return "".join(ln for ln in self.lines if ln)


def _interrupt_now(proc, stderr):
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the command did not stop after SIGINT")
    return stderr.text()


def test_ctrl_c_as_soon_as_the_command_line_runs(tmp_path):
    # argparse is imported by main(), after its SIGINT handling is in place
    proc = _start(PRUNE, tmp_path, python_options=("-X", "importtime"))
    stderr = _Stderr(proc)
    stderr.wait_for_import("argparse")
    _assert_clean_interrupt(proc, _interrupt_now(proc, stderr))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("module", ["numpy", "scipy", "sklearn"])
def test_ctrl_c_while_the_command_imports_its_libraries(tmp_path, module):
    proc = _start(PRUNE, tmp_path, python_options=("-X", "importtime"))
    stderr = _Stderr(proc)
    stderr.wait_for_import(module)
    _assert_clean_interrupt(proc, _interrupt_now(proc, stderr))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05, 0.2, 1.0])
def test_ctrl_c_at_any_moment(tmp_path, delay):
    # Whenever the signal arrives once the command line runs (argparse imported), the
    # answer is one line and status 130. Earlier, the interpreter is still starting
    # (no Python code of prune-opt has run): its own handling applies, which no
    # program can change; the test only asks that the process stops
    proc = _start(PRUNE, tmp_path, python_options=("-X", "importtime"))
    stderr = _Stderr(proc)
    time.sleep(delay)
    err = _interrupt_now(proc, stderr)
    if stderr.imported("argparse"):
        _assert_clean_interrupt(proc, err)
    else:
        assert proc.returncode != 0, err
    assert not (tmp_path / "pruned.json").exists()


HARNESS = '''
import runpy, sys, types

import prune_opt.cli as cli

def add_parser(sub):
    sub.add_parser("interrupted-in-exec").set_defaults(func=run)

def run(args):
    exec("raise KeyboardInterrupt")  # as Ctrl-C inside SciPy's exec() of NumPy's names

fake = types.ModuleType("prune_opt.cli._interrupted_in_exec")
fake.add_parser, fake.run = add_parser, run
sys.modules[fake.__name__] = fake
cli.COMMANDS["interrupted-in-exec"] = "_interrupted_in_exec"
sys.argv = ["prune-opt", "interrupted-in-exec"]
runpy.run_module("prune_opt.cli", run_name="__main__")
'''


def test_an_interrupt_inside_exec_still_exits_with_130(tmp_path):
    # an interrupt that escaped exec() of a string (SciPy imports NumPy's names through
    # one) left CPython's mark of an unhandled KeyboardInterrupt set: after the one line,
    # `python -m prune_opt.cli` killed itself with SIGINT (status -2) instead of 130
    (tmp_path / "harness.py").write_text(HARNESS)
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "harness"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (130, "interrupted\n")
