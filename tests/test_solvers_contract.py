"""The contract every registered backend keeps, generated from the registry.

A backend added to ``BACKEND_MODULES`` is picked up here without editing this
file: on small random problems it must return a valid pruning whose objective
is the shared evaluation's, agree with ``mincut`` when it claims exactness,
return integral LP points, honour time limits with a valid pruning, and
either honour a budget row (matching a brute-force optimum when it enforces
integrality) or refuse it.
"""

import itertools
import time

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

import prune_opt as po
from prune_opt.solvers import STATUSES, get_solver, list_solvers, solver_classes
from tests.forest_cases import forest_cases

ALL = list(solver_classes())
INFO = list_solvers()
RTOL = 1e-9


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


def installed(name):
    if not INFO[name]["installed"]:
        pytest.skip(f"{name} not installed: {INFO[name]['reason']}")
    return solver_classes()[name]


def small_problem(case, **kw):
    return po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                              lam=case["lam"], depth_cost=case["depth_cost"],
                              train=(case["X_train"], case["y_train"]), **kw)


def n_prunings(forest):
    """How many valid prunings a forest has (1 + left * right per split, leaves 1)."""
    count = np.ones(forest.n_nodes, dtype=object)
    for h in np.argsort(-forest.depth, kind="stable"):
        if not forest.is_leaf[h]:
            count[h] = 1 + count[forest.left[h]] * count[forest.right[h]]
    return int(np.prod([count[forest.node_offset[t]] for t in range(forest.n_trees)]))


def prunings(forest):
    """Every valid pruning of a (small) forest, as global split masks."""
    per_tree = []

    def closed(h):  # the parent-closed split sets of the subtree under global node h
        if forest.is_leaf[h]:
            return [frozenset()]
        lefts, rights = closed(forest.left[h]), closed(forest.right[h])
        return [frozenset()] + [a | b | {h} for a in lefts for b in rights]

    for t in range(forest.n_trees):
        per_tree.append([sorted(s) for s in closed(forest.node_offset[t])])
    for combo in itertools.product(*per_tree):
        mask = np.zeros(forest.n_nodes, dtype=bool)
        for nodes in combo:
            mask[nodes] = True
        yield mask


@pytest.mark.parametrize("name", ALL)
@given(case=forest_cases(max_examples=30))
@settings(max_examples=8)
def test_valid_pruning_and_objective_from_the_shared_evaluation(name, case):
    cls = installed(name)
    problem = small_problem(case)
    res = get_solver(name).solve(problem)
    problem.forest.check_split_mask(res.split_mask)
    assert res.status in STATUSES
    evaluated = problem.evaluate(res.split_mask).objective
    assert rel(res.objective, evaluated) <= RTOL
    assert res.bound <= res.objective + 1e-12
    reference = po.solve(problem, solver="mincut").objective
    if cls.exact:
        assert res.status == "optimal"
        assert rel(res.objective, reference) <= RTOL
    else:
        assert res.objective >= reference - 1e-12 * max(1.0, reference)
        assert res.bound <= reference + 1e-12 * max(1.0, reference)
    if cls.matrix_based and not cls.mip and cls.exact:
        assert res.max_fractionality <= 1e-6  # totally unimodular: an integral vertex


@pytest.fixture(scope="module")
def iris_problem():
    X, y = load_iris(return_X_y=True)
    tree = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X[::2], y[::2])
    return po.compile_problem(tree, X[1::2], y[1::2], costs=[1.0, 2.0, 3.0, 4.0], lam=0.01)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("limit", [0.0, 1e-6])
def test_time_limit_returns_a_valid_pruning(name, limit, iris_problem):
    installed(name)
    t0 = time.perf_counter()
    res = get_solver(name).solve(iris_problem, time_limit=limit)  # never refused
    assert time.perf_counter() - t0 < 5
    assert res.status in STATUSES
    iris_problem.forest.check_split_mask(res.split_mask)
    assert rel(res.objective, iris_problem.evaluate(res.split_mask).objective) <= RTOL
    assert res.bound <= res.objective + 1e-12


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("limit", [1e300, float("inf")])
def test_huge_time_limit_means_no_limit(name, limit, iris_problem):
    cls = installed(name)
    res = po.solve(iris_problem, solver=name, time_limit=limit)
    exact = po.solve(iris_problem, solver="mincut").objective
    if cls.exact:
        assert res.solve_info["status"] == "optimal"
        assert rel(res.objective, exact) <= RTOL


@pytest.mark.parametrize("name", ALL)
@given(case=forest_cases(max_examples=30), frac=st.sampled_from([0.0, 0.2, 0.5, 0.9]))
@settings(max_examples=6)
def test_budget_row_honoured_or_refused(name, case, frac):
    cls = installed(name)
    base = small_problem(case)
    assume(n_prunings(base.forest) <= 3000)
    masks = list(prunings(base.forest))
    full_cost = base.evaluate(base.forest.full_split_mask()).average_cost
    problem = base.with_budget(frac * full_cost)
    if not cls.supports_budget_row:
        with pytest.raises(ValueError, match="cannot honour the budget row.*highs"):
            po.solve(problem, solver=name)
        return
    res = get_solver(name).solve(problem)
    bd = problem.evaluate(res.split_mask)
    assert bd.average_cost <= problem.budget * (1 + 1e-9) + 1e-12
    feasible = [problem.evaluate(m) for m in masks]
    best = min(b.objective for b in feasible if b.average_cost <= problem.budget + 1e-12)
    assert res.bound <= best + 1e-9 * max(1.0, best) <= res.objective + 2e-9 * max(1.0, best)
    if cls.mip or res.status == "optimal":
        assert rel(bd.objective, best) <= 1e-9


def test_every_installed_backend_is_exercised():
    """The parametrisation is the registry: pdlp and the references are included."""
    assert {"highs", "glop", "pdlp", "cbc", "cbc-ip", "mincut", "mincut-networkx",
            "primal-dual"} <= set(ALL)
