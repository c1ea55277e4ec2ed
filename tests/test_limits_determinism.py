"""Time limits give valid prunings; same inputs give identical prunings."""

import time

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.solvers import STATUSES, SolverError, get_solver, solver_classes
from prune_opt.solvers._base import SolveResult


@pytest.fixture(scope="module")
def digits_problem():
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(X[:900], y[:900])
    return po.compile_problem(rf, X[900:], y[900:], lam=0.003, train=(X[:900], y[:900]))


@pytest.mark.slow
@pytest.mark.parametrize("solver", [n for n, c in solver_classes().items()
                                    if not c.reference_only or c.mip])
def test_time_limit_returns_valid_pruning(digits_problem, solver):
    if solver not in po.available_solvers():
        pytest.skip(f"{solver} not installed")
    t0 = time.perf_counter()
    pruned = po.solve(digits_problem, solver=solver, time_limit=0.05)
    elapsed = time.perf_counter() - t0
    assert pruned.solve_info["status"] in STATUSES
    digits_problem.forest.check_split_mask(pruned.split_mask)
    assert pruned.objective == pytest.approx(
        digits_problem.evaluate(pruned.split_mask).objective)
    assert pruned.solve_info["bound"] <= pruned.objective + 1e-12
    # building the model is not covered by the solver's own clock
    assert elapsed < 30


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

    def lying(self, problem, *, time_limit, verbose):
        res = real(self, problem, time_limit=time_limit, verbose=verbose)
        return SolveResult(split_mask=res.split_mask, objective=res.objective * 0.5,
                           bound=res.bound * 0.5, status="optimal", seconds=0.0)

    monkeypatch.setattr(type(backend), "_solve", lying)
    with pytest.raises(SolverError, match="inconsistent"):
        po.solve(digits_problem, solver="highs")


def test_crashing_backend_is_named(digits_problem, monkeypatch):
    backend = get_solver("glop")

    def crash(self, problem, *, time_limit, verbose):
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
