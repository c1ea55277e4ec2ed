"""Ctrl-C in a real ``prune-opt`` process: one line, exit 130, no partial file, no orphan.

Each test starts the command in its own session, waits until it prints the
line that precedes its long phase, then sends SIGINT to the whole process
group, as a terminal's Ctrl-C does (forked solver children receive it too).
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


def _start(argv, cwd):
    env = dict(os.environ, PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-m", "prune_opt.cli", *argv], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


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
