"""LP vertices are integral without a budget row and fractional with one."""

from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings

import prune_opt as po
from prune_opt.checks import max_fractionality, vertex_integrality
from tests.forest_cases import forest_cases
from tests.test_checks_network import small_forest


def test_max_fractionality():
    assert max_fractionality([]) == 0.0
    assert max_fractionality([0, 1, 2]) == 0.0
    assert max_fractionality([0.5, 1.0]) == 0.5
    assert max_fractionality(np.array([[0.9, -0.2]])) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="NaN"):
        max_fractionality([np.nan])


@given(case=forest_cases(max_examples=40))
@settings(max_examples=12)
def test_no_budget_every_vertex_is_integral(case):
    problem = po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                                 lam=case["lam"], depth_cost=case["depth_cost"])
    rep = vertex_integrality(problem, random_objectives=4, seed=case["seed"] % 1000)
    assert not rep.fractional and rep.max_fractionality <= 1e-7
    assert rep.n_fractional_random == 0 and rep.n_random == 4
    # the vertex objective is the optimum found by the exact backends
    best = po.solve(problem, solver="highs").objective
    assert abs(rep.objective - best) <= 1e-9 * max(1.0, abs(best))


def closed_masks(forest):
    """Every pruning (split mask closed under parents), by brute force."""
    internal = np.flatnonzero(~forest.is_leaf)
    for bits in product([False, True], repeat=internal.size):
        mask = np.zeros(forest.n_nodes, dtype=bool)
        mask[internal[list(bits)]] = True
        has_p = forest.parent >= 0
        if (mask[has_p] & ~mask[forest.parent[has_p]]).any():
            continue
        yield mask


def test_budget_row_gives_a_fractional_vertex_below_the_integer_optimum():
    rf, X, y = small_forest(seed=0, trees=2, depth=2, n=20)
    budget = 1.0
    problem = po.compile_problem(rf, X, y, lam=0.0, budget=budget)
    rep = vertex_integrality(problem, random_objectives=5, seed=0)
    assert rep.fractional and rep.max_fractionality > 0.01
    assert rep.n_fractional_random >= 1 and rep.fractional_variables
    # integer optimum of the budgeted problem, by enumerating every pruning
    feasible = [problem.evaluate(m) for m in closed_masks(problem.forest)]
    best = min(b.error_term for b in feasible if b.average_cost <= budget + 1e-12)
    assert rep.objective < best - 1e-6  # the LP relaxation is not exact any more
    # the same forest without the budget row: integral
    free = po.compile_problem(rf, X, y, lam=0.0)
    assert not vertex_integrality(free, random_objectives=5).fractional


def test_vertex_integrality_argument_errors():
    rf, X, y = small_forest(seed=0, trees=1, depth=2, n=20)
    problem = po.compile_problem(rf, X, y, lam=0.01)
    with pytest.raises(ValueError, match="solver"):
        vertex_integrality(problem, solver="glop")
    with pytest.raises(ValueError, match="random_objectives"):
        vertex_integrality(problem, random_objectives=-1)
    with pytest.raises(TypeError, match="PruningProblem"):
        vertex_integrality(np.eye(2))
    d = vertex_integrality(problem).to_dict()
    assert d["fractional"] is False and d["budget"] is None
