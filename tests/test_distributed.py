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


# ------------------------------------------------- compile_problem(..., client=...)

ATTRS = ("use_node", "use_pair", "pair_row", "pair_unit", "row_weight", "row_of_example",
         "node_error", "node_cost_weight", "tree_error_weight")


@pytest.fixture(scope="module")
def process_client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def forest_data():
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, max_depth=6, random_state=2).fit(X[:700],
                                                                                 y[:700])
    return rf, X[700:], y[700:]


def assert_same_problem(a, b):
    for name in ATTRS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.slow
def test_cluster_compile_of_partitions_equals_single_process(process_client, forest_data):
    da = pytest.importorskip("dask.array")
    rf, X, y = forest_data
    serial = po.compile_problem(rf, X, y, lam=0.02, chunk_size=300)
    Xd, yd = da.from_array(X, chunks=(300, 16)), da.from_array(y, chunks=300)
    with distributed.get_task_stream(process_client) as stream:
        remote = po.compile_problem(rf, Xd, yd, lam=0.02, chunk_size=300,
                                    client=process_client)
    assert_same_problem(serial, remote)
    # the work was shared: the per-block routing tasks ran on both workers
    workers = {t["worker"] for t in stream.data
               if str(t["key"]).lstrip("('").startswith(("_leaf_block", "_stats_block"))}
    assert len(workers) == 2
    a, b = po.solve(serial, solver="mincut"), po.solve(remote, solver="mincut")
    assert np.array_equal(a.split_mask, b.split_mask) and a.objective == b.objective


@pytest.mark.slow
def test_cluster_compile_of_scattered_numpy_with_cost_sample(process_client, forest_data):
    rf, X, y = forest_data
    serial = po.compile_problem(rf, X, y, lam=0.02, chunk_size=256, cost_sample=500,
                                random_state=3)
    scattered = po.compile_problem(rf, X, y, lam=0.02, chunk_size=256, cost_sample=500,
                                   random_state=3, client=process_client)
    assert_same_problem(serial, scattered)
    assert np.array_equal(serial.cost_sample["rows"], scattered.cost_sample["rows"])
    pruned = po.prune(rf, X, y, lam=0.02, solver="mincut", client=process_client)
    assert pruned.objective == po.prune(rf, X, y, lam=0.02, solver="mincut").objective


@pytest.mark.slow
def test_cluster_compile_of_dataframe_partitions(process_client, forest_data):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    rf, X, y = forest_data
    Xf = dd.from_pandas(pd.DataFrame(X), npartitions=3)
    yf = dd.from_pandas(pd.Series(y), npartitions=3)
    framed = po.compile_problem(rf, Xf, yf, lam=0.02, client=process_client)
    assert_same_problem(po.compile_problem(rf, X, y, lam=0.02), framed)


def test_cluster_input_errors_name_the_argument(process_client, forest_data):
    rf, X, y = forest_data
    with pytest.raises(ValueError, match="y"):
        po.compile_problem(rf, X, y[:-1], lam=0.02, client=process_client)


# ------------------------------------------------- regression forests on a cluster
@pytest.fixture(scope="module")
def regression_data():
    from sklearn.ensemble import RandomForestRegressor

    X, y = load_digits(return_X_y=True)
    target = X[:, 20] * 1.5 + X[:, 43] + 0.1 * y
    rf = RandomForestRegressor(n_estimators=4, max_depth=6, random_state=2).fit(X[:700],
                                                                               target[:700])
    return rf, X, target


def test_cluster_compile_of_a_regression_forest_equals_single_process(process_client,
                                                                       regression_data):
    rf, X, y = regression_data
    Xv, yv = X[700:], y[700:]
    serial = po.compile_problem(rf, Xv, yv, lam=0.02, chunk_size=256)
    remote = po.compile_problem(rf, Xv, yv, lam=0.02, chunk_size=256, client=process_client)
    assert_same_problem(serial, remote)  # bit for bit: the same blocks, summed in order
    assert serial.error_scale == remote.error_scale
    a, b = po.solve(serial, solver="mincut"), po.solve(remote, solver="mincut")
    assert np.array_equal(a.split_mask, b.split_mask) and a.objective == b.objective
    # brute force: the root's error is the tree's root SSE over the target variance
    root = serial.forest.node_offset[0]
    v = rf.estimators_[0].tree_.value[0, 0, 0]
    assert remote.node_error[root] == pytest.approx(np.sum((yv - v) ** 2) / np.var(yv),
                                                    rel=1e-9)


def test_cluster_regression_with_weights_partitions_and_train(process_client, regression_data):
    da = pytest.importorskip("dask.array")
    rf, X, y = regression_data
    Xv, yv = X[700:], y[700:]
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(yv))
    serial = po.compile_problem(rf, Xv, yv, sample_weight=w, chunk_size=300)
    parts = po.compile_problem(rf, da.from_array(Xv, chunks=(300, 64)),
                               da.from_array(yv, chunks=300), sample_weight=w,
                               chunk_size=300, client=process_client)
    for name in ATTRS:
        np.testing.assert_allclose(getattr(parts, name), getattr(serial, name), rtol=1e-12,
                                   err_msg=name)
    assert parts.error_scale == pytest.approx(serial.error_scale, rel=1e-12)
    trained = po.compile_problem(rf, Xv, yv, train=(X[:700], y[:700]), client=process_client)
    assert_same_problem(po.compile_problem(rf, Xv, yv, train=(X[:700], y[:700])), trained)
    with pytest.warns(RuntimeWarning, match="constant"):
        po.compile_problem(rf, Xv, np.full(len(yv), 3.0), client=process_client)
