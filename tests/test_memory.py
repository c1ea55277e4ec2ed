"""Memory available (cgroup v2/v1, rlimits, MemAvailable) and the estimates that
let compile and solve refuse a problem before allocating it."""

import re
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt import _memory
from prune_opt._memory import available_memory, estimate_compile_memory, problem_bytes


@pytest.fixture(scope="module")
def forest_data():
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=6, max_depth=8, random_state=0).fit(X[:800],
                                                                                 y[:800])
    return rf, X[800:], y[800:]


def test_cgroup_v2_limit_is_respected(tmp_path):
    (tmp_path / "memory.max").write_text("1000000\n")
    (tmp_path / "memory.current").write_text("400000\n")
    assert available_memory(cgroup_root=str(tmp_path)) == 600000


def test_cgroup_v1_limit_and_unlimited_values(tmp_path):
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text("5000000")
    (tmp_path / "memory" / "memory.usage_in_bytes").write_text("1000000")
    assert available_memory(cgroup_root=str(tmp_path)) == 4000000
    (tmp_path / "memory.max").write_text("max\n")  # v2 without a limit: v1 files win
    assert available_memory(cgroup_root=str(tmp_path)) == 4000000
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text(str(2**63 - 4096))
    free = available_memory(cgroup_root=str(tmp_path))
    assert free is None or free > 4000000  # "no limit" in v1 is ignored


def test_rlimit_as_is_respected():
    code = ("import resource; from prune_opt._memory import available_memory, _status_bytes;"
            "size = _status_bytes('VmSize'); soft = size + 2**28;"
            "resource.setrlimit(resource.RLIMIT_AS, (soft, resource.getrlimit("
            "resource.RLIMIT_AS)[1])); print(available_memory())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert 0 <= int(out.stdout) <= 2**28


def test_compile_estimate_covers_the_records(forest_data):
    rf, X, y = forest_data
    p = po.compile_problem(rf, X, y, lam=0.01)
    est = estimate_compile_memory(p.forest, p.n_rows, p.costs,
                                  uses_per_row=p.n_uses / p.n_rows,
                                  pairs_per_row=p.n_pairs / p.n_rows)
    held = p.use_node.nbytes + p.use_pair.nbytes
    assert est["records"] == pytest.approx(held, rel=1e-6)
    assert est["bytes"] >= problem_bytes(p)
    # kept as leaves: the records part is the leaves' copy, far below the records
    compact = estimate_compile_memory(p.forest, p.n_rows, p.costs,
                                      uses_per_row=p.n_uses / p.n_rows,
                                      pairs_per_row=p.n_pairs / p.n_rows, compact=True)
    assert compact["records"] == p.leaf_records.leaves_by_tree.nbytes
    assert compact["records"] < est["records"] / 4


def test_solve_estimate_of_a_compact_problem_counts_no_records(forest_data):
    rf, X, y = forest_data
    p = po.compile_problem(rf, X, y, lam=0.01)
    assert not p.records_held
    est = _memory.estimate_solve_memory(p, "mincut")
    assert est["graph_build"] == _memory.COMPACT_BUILD_BYTES_PER_RECORD * p.n_uses
    assert est["problem"] == problem_bytes(p)
    p.use_node  # noqa: B018 (materialised: the build reads the records again)
    assert _memory.estimate_solve_memory(p, "mincut")["graph_build"] == \
        _memory.BUILD_BYTES_PER_RECORD * p.n_uses


def test_compile_refuses_early_with_the_options(forest_data, monkeypatch, capsys):
    rf, X, y = forest_data
    monkeypatch.setattr(_memory, "available_memory", lambda *a, **k: 2**20)
    with pytest.raises(MemoryError, match=r"(?s)needs about .* [MG]iB.*available.*cost_sample"
                                          r".*max_depth"):
        po.compile_problem(rf, X, y, lam=0.01, verbose=True)
    assert "memory estimate" in capsys.readouterr().out


def test_mincut_refuses_before_building_the_graph(forest_data, monkeypatch):
    rf, X, y = forest_data
    p = po.compile_problem(rf, X, y, lam=0.01)
    # the build needs BUILD_BYTES_PER_RECORD per record: more than a few kB here
    monkeypatch.setattr(_memory, "available_memory", lambda *a, **k: 2**12)
    with pytest.raises(MemoryError, match="solver='mincut'.*cost_sample"):
        po.solve(p, solver="mincut")


def test_solver_guard_delegates_to_memory_module(monkeypatch):
    from prune_opt.solvers import _base

    monkeypatch.setattr(_memory, "available_memory", lambda *a, **k: 12345)
    assert _base.available_memory() == 12345


def test_problem_arrays_are_compact(forest_data):
    rf, X, y = forest_data
    p = po.compile_problem(rf, X, y, lam=0.01)
    assert p.use_node.dtype == np.int32 and p.use_pair.dtype == np.int32
    assert p.pair_row.dtype == np.int32 and p.pair_unit.dtype == np.int32
    # use_row / use_unit are derived, not stored
    assert "use_row" not in vars(p) and "use_unit" not in vars(p)


@pytest.mark.parametrize("block", [997, 4096])
def test_graph_build_in_small_record_blocks_is_identical(forest_data, monkeypatch, block):
    from prune_opt.solvers import mincut

    rf, X, y = forest_data
    p = po.compile_problem(rf, X, y, lam=0.01)
    ref = mincut.build_closure_graph(p)
    monkeypatch.setattr(mincut, "BLOCK_RECORDS", block)
    g = mincut.build_closure_graph(p)
    assert g.stats == ref.stats
    assert np.array_equal(g.weight, ref.weight)
    assert np.array_equal(g.inf_tail, ref.inf_tail) and np.array_equal(g.inf_head, ref.inf_head)


def test_verbose_compile_prints_both_estimates_and_the_available_memory(forest_data, capsys):
    rf, X, y = forest_data
    po.compile_problem(rf, X, y, lam=0.01, verbose=True)
    out = capsys.readouterr().out
    assert re.search(r"compile [\d.]+ [MG]iB, exact solve \(mincut\) [\d.]+ [MG]iB \(at most "
                     r"[\d.]+ [MG]iB without graph reductions\); available", out)


def test_solve_estimate_covers_the_measured_solve(forest_data):
    """The typical estimate is below the unreduced upper bound and above what the
    reduced graph's max-flow needs on a real forest."""
    from prune_opt._memory import estimate_flow_memory, estimate_solve_sizes
    from prune_opt.solvers.mincut import build_closure_graph

    rf, X, y = forest_data
    p = po.compile_problem(rf, X, y, lam=0.01)
    typical = estimate_solve_sizes(p.n_uses, p.n_pairs, p.n_nodes)
    upper = estimate_solve_sizes(p.n_uses, p.n_pairs, p.n_nodes, reduced=False)
    g = build_closure_graph(p, prefix_hubs=True, drop_unprofitable=True)
    assert estimate_flow_memory(g.n_arcs, g.n_vertices)["bytes"] <= typical["max_flow"]
    assert typical["bytes"] <= upper["bytes"]


def test_mincut_refuses_a_flow_that_cannot_fit_after_the_build(forest_data, monkeypatch):
    from prune_opt.solvers import mincut

    rf, X, y = forest_data
    p = po.compile_problem(rf, X, y, lam=0.01)
    monkeypatch.setattr(_memory, "estimate_flow_memory",
                        lambda n_arcs, n_vertices: {"bytes": 2**50, "max_flow": 2**50})
    monkeypatch.setattr(mincut, "HUB_MIN_RECORDS", 0)
    with pytest.raises(MemoryError, match=r"max-flow of solver='mincut' \([\d,]+ arcs after"):
        po.solve(p, solver="mincut")
