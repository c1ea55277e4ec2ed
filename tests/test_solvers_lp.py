"""LP backends under a budget row: a fractional optimum is a bound, the pruning
returned respects the budget; backends that cannot honour the row refuse it."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.solvers import find_solvers, get_solver, solver_classes
from prune_opt.solvers._lp import budget_rounding, fallback_mask, within_budget

LP = find_solvers(matrix_based=True, mip=False)
NO_BUDGET = find_solvers(installed=False, supports_budget_row=False)


@pytest.fixture(scope="module")
def budgeted():
    """Issue case: the LP optimum under this budget is fractional (0.2283 from integral)."""
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    p = po.compile_problem(rf, X, y, costs=[1, 2, 3, 4], lam=0.01)
    full = p.evaluate(p.forest.full_split_mask()).average_cost
    return p.with_budget(0.5 * full)


@pytest.fixture(scope="module")
def mip_optimum(budgeted):
    return po.solve(budgeted, solver="cbc-ip").objective


@pytest.mark.parametrize("name", LP)
def test_lp_backend_reports_a_fractional_budgeted_optimum_as_a_bound(name, budgeted,
                                                                     mip_optimum):
    pruned = po.solve(budgeted, solver=name)  # used to raise "backend is inconsistent"
    info = pruned.solve_info
    assert pruned.breakdown.average_cost <= budgeted.budget * (1 + 1e-9)
    assert info["max_fractionality"] > 1e-3
    assert info["status"] == "feasible"
    assert info["bound"] <= mip_optimum + 1e-9 <= pruned.objective + 2e-9
    assert info["lp_objective"] == pytest.approx(0.2569244444, rel=1e-6)


@pytest.mark.parametrize("name", NO_BUDGET)
def test_backend_without_budget_row_refuses_and_names_those_that_can(name, budgeted):
    if not solver_classes()[name].is_installed():
        pytest.skip(f"{name} not installed")
    with pytest.raises(ValueError, match=r"cannot honour the budget row.*'highs'.*'cbc-ip'"):
        po.solve(budgeted, solver=name)  # mincut used to return "optimal", over budget
    with pytest.raises(ValueError, match="cannot honour the budget row"):
        get_solver(name).solve(budgeted)


def test_budget_rounding_is_feasible_valid_and_no_worse_than_roots_only(budgeted):
    x = np.random.default_rng(0).random(budgeted.n_nodes + budgeted.n_uses + budgeted.n_pairs)
    mask = budget_rounding(budgeted, x)
    budgeted.forest.check_split_mask(mask)
    assert within_budget(budgeted, mask)
    roots = np.zeros(budgeted.n_nodes, dtype=bool)
    assert budgeted.evaluate(mask).objective <= budgeted.evaluate(roots).objective


def test_fallback_respects_the_budget(budgeted):
    mask = fallback_mask(budgeted)
    assert within_budget(budgeted, mask)
    assert not within_budget(budgeted, budgeted.forest.full_split_mask())
    assert not mask.any()


def test_zero_budget_gives_the_roots_only_pruning(budgeted):
    p = budgeted.with_budget(0.0)
    for name in LP:
        pruned = po.solve(p, solver=name)
        assert pruned.breakdown.average_cost == 0.0 and pruned.n_splits == 0


def test_an_over_budget_result_is_caught(budgeted, monkeypatch):
    from prune_opt.solvers._base import SolveResult
    from prune_opt.solvers.highs import HighsSolver

    def ignores_budget(self, problem, *, deadline, verbose):
        mask = problem.forest.full_split_mask()
        obj = problem.evaluate(mask).objective
        return SolveResult(split_mask=mask, objective=obj, bound=obj, status="optimal",
                           seconds=0.0)

    monkeypatch.setattr(HighsSolver, "_solve", ignores_budget)
    with pytest.raises(po.SolverError, match="above the budget"):
        po.solve(budgeted, solver="highs")


def test_solve_refuses_what_is_not_a_problem():
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    for bad in (rf, None, {"lam": 0.1}):
        with pytest.raises(TypeError, match="problem must be a PruningProblem"):
            po.solve(bad)
        with pytest.raises(TypeError, match="problem must be a PruningProblem"):
            get_solver("mincut").solve(bad)


@pytest.mark.parametrize("limit", [float("nan"), -1.0, "10"])
def test_bad_time_limit_is_named(limit, budgeted):
    with pytest.raises((TypeError, ValueError), match="time_limit"):
        po.solve(budgeted, solver="highs", time_limit=limit)
