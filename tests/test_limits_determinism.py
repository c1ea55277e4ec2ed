"""Time limits give valid prunings; same inputs give identical prunings.

No assertion here is about wall-clock time (timings live in benchmarks/): a
limit is tested by what the result promises under it.
"""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.solvers import STATUSES, SolverError, get_solver, solver_classes
from prune_opt.solvers._base import SolveResult
from prune_opt.solvers._solve import GAP_NOISE


@pytest.fixture(scope="module")
def digits_problem():
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(X[:900], y[:900])
    return po.compile_problem(rf, X[900:], y[900:], lam=0.003, train=(X[:900], y[:900]))


@pytest.fixture(scope="module")
def digits_optimum(digits_problem):
    return po.solve(digits_problem, solver="mincut").objective


@pytest.mark.slow
@pytest.mark.parametrize("solver", [n for n, c in solver_classes().items()
                                    if not c.reference_only or c.mip])
def test_time_limit_returns_valid_pruning(digits_problem, digits_optimum, solver):
    """Stopped by a tiny limit or not, a backend returns a valid pruning, the shared
    evaluation's objective, a true lower bound, and the gap between the two."""
    if solver not in po.available_solvers():
        pytest.skip(f"{solver} not installed")
    pruned = po.solve(digits_problem, solver=solver, time_limit=0.05)
    info = pruned.solve_info
    assert info["status"] in STATUSES
    digits_problem.forest.check_split_mask(pruned.split_mask)
    assert pruned.objective == pytest.approx(
        digits_problem.evaluate(pruned.split_mask).objective, rel=1e-9)
    tol = 1e-9 * max(1.0, digits_optimum)
    assert info["bound"] <= pruned.objective + tol
    assert info["bound"] <= digits_optimum + tol  # a proven bound never exceeds the optimum
    assert pruned.objective >= digits_optimum - tol  # a valid pruning never beats it
    slack = max(pruned.objective - info["bound"], 0.0)
    gap = slack / max(abs(pruned.objective), 1e-12)
    if slack <= GAP_NOISE * max(1.0, abs(pruned.objective)):
        gap = 0.0  # float noise under the objective is reported as no gap
    assert info["gap"] == pytest.approx(gap, rel=1e-9, abs=1e-15)
    if info["status"] == "optimal" and solver_classes()[solver].exact:
        assert pruned.objective == pytest.approx(digits_optimum, rel=1e-9)


@pytest.mark.parametrize("limit", [0.0, 0.05, None])
def test_a_limit_never_makes_the_result_worse_than_the_trivial_prunings(digits_problem,
                                                                         limit):
    """Whatever the limit, the pruning returned is at least as good as the better of
    the root-only and the full forest (the fallback a stopped solver returns)."""
    f = digits_problem.forest
    trivial = min(digits_problem.evaluate(np.zeros(f.n_nodes, dtype=bool)).objective,
                  digits_problem.evaluate(f.full_split_mask()).objective)
    for solver in ("highs", "primal-dual"):
        pruned = po.solve(digits_problem, solver=solver, time_limit=limit)
        assert pruned.objective <= trivial * (1 + 1e-12)


def test_same_seed_same_primal_dual_run():
    """The primal-dual method's randomised polishing is seeded: the same seed gives the
    same pruning, duals and bound, while the seeds do lead to different prunings."""
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(X[:900], y[:900])
    problem = po.compile_problem(rf, X[900:], y[900:], lam=0.003, costs=np.linspace(1, 5, 64),
                                 train=(X[:900], y[:900]))
    objectives = set()
    for seed in range(6):
        opts = {"max_iter": 3, "polish": 1, "seed": seed, "init": "zero"}
        a = po.solve(problem, solver="primal-dual", solver_options=opts)
        b = po.solve(problem, solver="primal-dual", solver_options=opts)
        assert np.array_equal(a.split_mask, b.split_mask)
        assert np.array_equal(a.solve_info["duals"], b.solve_info["duals"])
        assert a.solve_info["bound"] == b.solve_info["bound"]
        objectives.add(a.objective)
    assert len(objectives) > 1  # the seed matters here, so equal runs are the seed's doing


def test_same_seed_same_cost_sample():
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X[:600], y[:600])
    kw = {"lam": 1e-3, "cost_sample": 200}
    a = po.compile_problem(rf, X[600:], y[600:], random_state=3, **kw)
    b = po.compile_problem(rf, X[600:], y[600:], random_state=3, **kw)
    assert a.cost_sample["rows"].size == 200
    assert np.array_equal(a.cost_sample["rows"], b.cost_sample["rows"])
    assert np.array_equal(po.solve(a).split_mask, po.solve(b).split_mask)
    c = po.compile_problem(rf, X[600:], y[600:], random_state=4, **kw)
    assert not np.array_equal(a.cost_sample["rows"], c.cost_sample["rows"])


def test_same_inputs_same_pruning(digits_problem):
    a = po.solve(digits_problem, solver="highs")
    b = po.solve(digits_problem, solver="highs")
    assert np.array_equal(a.split_mask, b.split_mask)
    X, y = load_digits(return_X_y=True)
    rf = digits_problem.forest.estimator
    p1 = po.compile_problem(rf, X[900:], y[900:], lam=0.003, train=(X[:900], y[:900]))
    assert np.array_equal(p1.use_node, digits_problem.use_node)
    assert np.array_equal(p1.node_error, digits_problem.node_error)


def test_inconsistent_backend_is_caught(digits_problem, monkeypatch):
    backend = get_solver("highs")
    real = type(backend)._solve

    def lying(self, problem, *, deadline, verbose):
        res = real(self, problem, deadline=deadline, verbose=verbose)
        return SolveResult(split_mask=res.split_mask, objective=res.objective * 0.5,
                           bound=res.bound * 0.5, status="optimal", seconds=0.0)

    monkeypatch.setattr(type(backend), "_solve", lying)
    with pytest.raises(SolverError, match="inconsistent"):
        po.solve(digits_problem, solver="highs")


def test_crashing_backend_is_named(digits_problem, monkeypatch):
    backend = get_solver("glop")

    def crash(self, problem, *, deadline, verbose):
        raise RuntimeError("segfault-like failure")

    monkeypatch.setattr(type(backend), "_solve", crash)
    with pytest.raises(SolverError, match="solver 'glop' failed"):
        po.solve(digits_problem, solver="glop")


def test_missing_backend_is_named(monkeypatch):
    from prune_opt.solvers.ortools_lp import GlopSolver

    monkeypatch.setattr(GlopSolver, "is_installed", classmethod(lambda cls: False))
    assert "glop" not in po.available_solvers()
    with pytest.raises(SolverError, match="'glop' is not installed; pip install ortools"):
        get_solver("glop")


def test_oversized_lp_refused_with_pointer_to_mincut(digits_problem, monkeypatch):
    import prune_opt.solvers._base as base

    monkeypatch.setattr(base, "available_memory", lambda: 1024)
    with pytest.raises(ValueError, match="use solver='mincut'"):
        po.solve(digits_problem, solver="highs")
