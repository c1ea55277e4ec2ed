"""cbc-ip honours its time limit (killable child) and refuses programs too large
for the PuLP path; huge limits mean no limit for both CBC backends."""

import os
import subprocess
import time

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
import prune_opt.solvers.cbc as cbc
from prune_opt.solvers._subprocess import run_killable

pytestmark = pytest.mark.skipif("cbc-ip" not in po.available_solvers(),
                                reason="pulp[cbc] not installed")


@pytest.fixture(scope="module")
def problem():
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0).fit(X, y)
    return po.compile_problem(rf, X, y, costs=[1, 2, 3, 4], lam=0.01)


@pytest.mark.parametrize("limit", [0, 1e-6])
def test_tiny_time_limit_returns_fast_with_a_valid_pruning(problem, limit):
    t0 = time.perf_counter()
    pruned = po.solve(problem, solver="cbc-ip", time_limit=limit)
    assert time.perf_counter() - t0 < cbc.CBC_GRACE_SECONDS + 3
    assert pruned.solve_info["status"] == "time_limit"
    problem.forest.check_split_mask(pruned.split_mask)
    trivial = [problem.evaluate(m).objective for m in
               (problem.forest.full_split_mask(), np.zeros(problem.n_nodes, bool))]
    assert pruned.objective == pytest.approx(min(trivial), rel=1e-12)


def test_child_is_killed_at_the_deadline(problem, monkeypatch):
    """With no grace the child (still building or solving) is killed at once."""
    monkeypatch.setattr(cbc, "CBC_GRACE_SECONDS", 0.0)
    t0 = time.perf_counter()
    pruned = po.solve(problem, solver="cbc-ip", time_limit=0.0)
    assert time.perf_counter() - t0 < 3
    assert pruned.solve_info["status"] == "time_limit"
    assert "killed" in pruned.solve_info["message"]


def _spawn_and_wait(pidfile):
    child = subprocess.Popen(["sleep", "60"])
    with open(pidfile, "w") as fh:
        fh.write(str(child.pid))
    child.wait()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie is dead
        return fh.read().split()[2] != "Z"


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")
def test_run_killable_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "pid"
    t0 = time.perf_counter()
    done, value = run_killable(_spawn_and_wait, (str(pidfile),), timeout=1.0)
    assert (done, value) == (False, None) and time.perf_counter() - t0 < 5
    pid = int(pidfile.read_text())
    deadline = time.time() + 5
    while _alive(pid) and time.time() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_child_errors_are_raised():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run_killable(divmod, (1, 0))


def test_large_program_without_a_limit_is_refused_up_front(problem, monkeypatch):
    monkeypatch.setattr(cbc.CbcIpSolver, "max_nnz_without_limit", 10)
    size = problem.size()
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=rf"cbc-ip.*{size['n_variables']:,} variables.*"
                                         r"{:,} nonzeros.*'highs' or 'mincut'".replace(
                                             "{:,}", f"{size['nnz']:,}")):
        po.solve(problem, solver="cbc-ip")
    assert time.perf_counter() - t0 < 1
    # with a limit it runs and returns the best pruning found within it
    pruned = po.solve(problem, solver="cbc-ip", time_limit=60)
    assert pruned.solve_info["status"] in ("optimal", "time_limit")


@pytest.mark.parametrize("name", ["cbc", "cbc-ip"])
@pytest.mark.parametrize("limit", [1e300, float("inf")])
def test_huge_time_limit_is_no_limit(problem, name, limit):
    pruned = po.solve(problem, solver=name, time_limit=limit)  # was "timestamp too large"
    assert pruned.solve_info["status"] == "optimal"
    exact = po.solve(problem, solver="mincut").objective
    assert abs(pruned.objective - exact) <= 1e-9 * exact
