"""The primal-dual solver on a Dask cluster through joblib's "dask" backend:
the tree blocks really run as Dask tasks and the result equals n_jobs=1 bit for bit."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po

distributed = pytest.importorskip(
    "dask.distributed", reason="dask.distributed is not installed (pip install "
    "'prune-opt[distributed]')")
joblib = pytest.importorskip("joblib")


@pytest.fixture(scope="module")
def problem():
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, max_depth=5, random_state=3).fit(X[:800], y[:800])
    return po.compile_problem(rf, X[800:1300], y[800:1300], lam=0.02)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_backend_matches_serial_exactly(problem, client):
    opts = {"max_iter": 30, "gap_tol": 0.0}
    serial = po.solve(problem, solver="primal-dual", solver_options={**opts, "n_jobs": 1})
    with distributed.get_task_stream(client) as stream:
        with joblib.parallel_backend("dask"):
            remote = po.solve(problem, solver="primal-dual",
                              solver_options={**opts, "n_jobs": -1})
    # two workers -> two tree blocks per iteration, each a Dask task
    assert remote.solve_info["n_blocks"] == 2
    assert len(stream.data) >= 2 * remote.solve_info["iterations"]
    assert np.array_equal(serial.split_mask, remote.split_mask)
    assert serial.objective == remote.objective
    assert serial.solve_info["bound"] == remote.solve_info["bound"]
    assert np.array_equal(serial.solve_info["duals"], remote.solve_info["duals"])
    for key in ("objective", "bound"):
        assert np.array_equal(serial.solve_info["history"][key],
                              remote.solve_info["history"][key])


def test_dask_backend_with_networkx_subproblem(problem, client):
    opts = {"max_iter": 5, "gap_tol": 0.0, "subproblem": "networkx"}
    serial = po.solve(problem, solver="primal-dual", solver_options={**opts, "n_jobs": 1})
    with joblib.parallel_backend("dask"):
        remote = po.solve(problem, solver="primal-dual", solver_options={**opts, "n_jobs": 2})
    assert np.array_equal(serial.split_mask, remote.split_mask)
    assert np.array_equal(serial.solve_info["duals"], remote.solve_info["duals"])
