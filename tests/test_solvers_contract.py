"""The contract every registered backend keeps, generated from the registry.

A backend added to ``BACKEND_MODULES`` is picked up here without editing this
file.  Every backend, exact or not, and under any time limit, must return a
valid (closed) pruning whose objective is the shared evaluation's, a bound
that is a true lower bound (at most the optimum), an objective at least the
optimum, and, when it reports its own gap, a gap consistent with its
objective, bound and status.  Exact backends also agree with ``mincut``,
matrix backends return integral LP points, and a budget row is either
honoured (matching a brute-force optimum when integrality is enforced) or
refused.  No assertion is about wall-clock time (timings live in benchmarks/).
"""

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

import prune_opt as po
from prune_opt.solvers import STATUSES, get_solver, list_solvers, solver_classes
from prune_opt.solvers._dual_ascent import OPTIMAL_GAP, relative_gap
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


def assert_contract(problem, res, optimum, cls, *, gap_tol=1e-4):
    """What every backend promises about one result, whatever its status.

    ``optimum`` is the exact optimum (mincut's); ``gap_tol`` the gap at which a
    backend reporting its own gap may stop with status ``"gap_limit"``.
    """
    assert res.status in STATUSES
    mask = problem.forest.check_split_mask(res.split_mask)  # right shape, closed
    assert np.array_equal(mask, res.split_mask)
    assert rel(res.objective, problem.evaluate(mask).objective) <= RTOL
    scale = 1e-9 * max(1.0, abs(optimum))
    assert res.bound <= res.objective + scale
    assert res.bound <= optimum + scale  # a proven lower bound never exceeds the optimum
    assert res.objective >= optimum - scale  # a valid pruning never beats it
    if cls.exact and res.status == "optimal":
        assert rel(res.objective, optimum) <= RTOL
    if "gap" in res.info:  # a backend that reports its own gap (primal-dual)
        gap = res.info["gap"]
        assert gap == pytest.approx(relative_gap(res.objective, res.bound), rel=1e-9, abs=1e-15)
        assert gap == pytest.approx(res.gap, rel=1e-9, abs=1e-15)
        if res.status == "optimal":
            assert gap <= OPTIMAL_GAP
            assert rel(res.objective, optimum) <= 1e-8
        elif res.status == "gap_limit":
            assert gap <= gap_tol
        assert res.objective - optimum <= gap * max(abs(res.objective), 1e-12) + scale


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
    reference = po.solve(problem, solver="mincut").objective
    assert_contract(problem, res, reference, cls)
    if cls.exact:
        assert res.status == "optimal"
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
    cls = installed(name)
    res = get_solver(name).solve(iris_problem, time_limit=limit)  # never refused
    optimum = po.solve(iris_problem, solver="mincut").objective
    assert_contract(iris_problem, res, optimum, cls)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("limit", [1e300, float("inf")])
def test_huge_time_limit_means_no_limit(name, limit, iris_problem):
    cls = installed(name)
    res = get_solver(name).solve(iris_problem, time_limit=limit)
    optimum = po.solve(iris_problem, solver="mincut").objective
    assert_contract(iris_problem, res, optimum, cls)
    assert res.status != "time_limit"  # there was no limit to stop at
    if cls.exact:
        assert res.status == "optimal"


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


@pytest.fixture(scope="module")
def digits_problem():
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=6, random_state=0).fit(X[:600], y[:600])
    return po.compile_problem(rf, X[600:900], y[600:900], lam=1e-3, costs=np.linspace(1, 5, 64),
                              train=(X[:600], y[:600]))


@pytest.mark.parametrize("max_iter", [1, 2, 5])
def test_primal_dual_stopped_early_keeps_its_promises(max_iter, digits_problem):
    """Stopped by its iteration limit, the primal-dual method still returns a valid
    pruning, a true lower bound and the gap between them."""
    cls = installed("primal-dual")
    solver = get_solver("primal-dual", max_iter=max_iter, polish=0, init="zero")
    res = solver.solve(digits_problem)
    optimum = po.solve(digits_problem, solver="mincut").objective
    assert res.status == "iteration_limit" and res.iterations == max_iter
    assert_contract(digits_problem, res, optimum, cls)
    assert res.info["gap"] > 0
