"""Primal-dual decomposition: exact subproblems (DP = brute force = networkx
shortest paths), certified bounds, valid prunings, convergence to the optimum,
warm starts and determinism across joblib workers."""

import itertools

import joblib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits

import prune_opt as po
from prune_opt import Forest
from prune_opt.solvers import get_solver
from prune_opt.solvers._tree_dp import TreeLayout, tree_dp, tree_networkx
from prune_opt.solvers.primal_dual import initial_duals, lagrangian
from tests.forest_cases import forest_cases


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


# ----------------------------------------------------------------- random trees
@st.composite
def random_tree(draw, max_internal=7):
    """A random binary tree (node ids in a random parent-before-child order)."""
    n_internal = draw(st.integers(0, max_internal))
    left, right = [-1], [-1]
    leaves = [0]
    for _ in range(n_internal):
        h = leaves.pop(draw(st.integers(0, len(leaves) - 1)))
        left[h], right[h] = len(left), len(left) + 1
        left += [-1, -1]
        right += [-1, -1]
        leaves += [left[h], right[h]]
    if draw(st.booleans()):  # ids in creation order: parent < child, not preorder
        return dict(left=left, right=right)
    # any order (Forest.from_arrays renumbers it): shuffle the non-root ids
    n = len(left)
    perm = np.concatenate([[0], 1 + np.asarray(draw(st.permutations(range(n - 1))), int)])
    new_left, new_right = [-1] * n, [-1] * n
    for h in range(n):
        if left[h] >= 0:
            new_left[perm[h]], new_right[perm[h]] = int(perm[left[h]]), int(perm[right[h]])
    return dict(left=new_left, right=new_right, renumber=True)


@st.composite
def random_forest_and_weights(draw):
    trees = draw(st.lists(random_tree(), min_size=1, max_size=4))
    renumber = any(t.get("renumber") for t in trees)
    arrays = []
    for t in trees:
        n = len(t["left"])
        left = np.asarray(t["left"])
        arrays.append(dict(left=left, right=np.asarray(t["right"]),
                           feature=np.where(left >= 0, 0, -1), threshold=np.zeros(n),
                           value=np.ones((n, 2))))
    if renumber:
        forest = Forest.from_arrays(arrays, classes=[0, 1], n_features=1)
    else:
        forest = Forest(arrays, classes=[0, 1], n_features=1)
    weights = draw(st.lists(st.sampled_from([-3.0, -1.0, -0.5, 0.0, 0.25, 1.0, 2.5]),
                            min_size=forest.n_nodes, max_size=forest.n_nodes))
    return forest, np.asarray(weights)


def brute_force(forest, weight):
    """Per tree: min over every parent-closed set of internal nodes of sum(weight)."""
    out = []
    for t in range(forest.n_trees):
        sl = forest.tree_slice(t)
        internal = np.flatnonzero(~forest.is_leaf[sl]) + sl.start
        best = 0.0
        for bits in itertools.product([False, True], repeat=internal.size):
            chosen = set(internal[np.asarray(bits, dtype=bool)].tolist())
            if all(forest.parent[h] < 0 or forest.parent[h] in chosen for h in chosen):
                best = min(best, float(sum(weight[h] for h in chosen)))
        out.append(best)
    return np.asarray(out)


def mask_value(layout, weight, mask):
    return np.bincount(layout.tree_of_node[mask], weight[mask], minlength=layout.n_trees)


@given(case=random_forest_and_weights())
@settings(max_examples=60)
def test_dp_equals_brute_force_and_networkx(case):
    forest, weight = case
    layout = TreeLayout(forest)
    values, mask = tree_dp(layout, weight)
    expected = brute_force(forest, weight)
    assert np.allclose(values, expected, rtol=0, atol=1e-12)
    forest.check_split_mask(mask)  # valid pruning
    assert np.allclose(mask_value(layout, weight, mask), values, rtol=0, atol=1e-12)
    nx_values, nx_mask = tree_networkx(layout, weight)
    assert np.allclose(nx_values, values, rtol=0, atol=1e-9)
    forest.check_split_mask(nx_mask)
    assert np.allclose(mask_value(layout, weight, nx_mask), values, rtol=0, atol=1e-9)


@given(case=random_forest_and_weights(), n_blocks=st.integers(1, 4))
@settings(max_examples=30)
def test_dp_blocks_match_whole_forest(case, n_blocks):
    from prune_opt.solvers.primal_dual import _blocks

    forest, weight = case
    values, mask = tree_dp(TreeLayout(forest), weight)
    blocks = _blocks(forest, n_blocks)
    assert [t for b in blocks for t in b] == list(range(forest.n_trees))
    parts = [tree_dp(lay, weight[lay.start:lay.stop])
             for lay in (TreeLayout(forest, b) for b in blocks)]
    assert np.array_equal(np.concatenate([v for v, _ in parts]), values)
    assert np.array_equal(np.concatenate([m for _, m in parts]), mask)


# --------------------------------------------------------------- real problems
def compile_case(case):
    return po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                              lam=case["lam"], depth_cost=case["depth_cost"],
                              train=(case["X_train"], case["y_train"]))


@given(case=forest_cases(), data=st.data())
@settings(max_examples=20)
def test_lagrangian_is_a_lower_bound_for_any_duals(case, data):
    problem = compile_case(case)
    exact = po.solve(problem, solver="cbc-ip").objective
    scale = data.draw(st.sampled_from([0.0, 0.5, 1.0, 3.0]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1)))
    beta = initial_duals(problem) * rng.uniform(0, 2 * scale, size=problem.n_uses)
    for sub in ("dp", "networkx"):
        out = lagrangian(problem, beta, subproblem=sub)
        assert out["bound"] <= exact + 1e-9 * max(1.0, abs(exact))
        problem.forest.check_split_mask(out["split_mask"])
        assert problem.evaluate(out["split_mask"]).objective >= exact - 1e-9 * max(1, exact)
    dp, nx = lagrangian(problem, beta), lagrangian(problem, beta, subproblem="networkx")
    assert np.allclose(dp["tree_values"], nx["tree_values"], rtol=1e-9, atol=1e-12)
    assert rel(dp["bound"], nx["bound"]) <= 1e-9 or abs(dp["bound"] - nx["bound"]) < 1e-12


@given(case=forest_cases())
@settings(max_examples=20)
def test_solver_brackets_and_reaches_the_optimum(case):
    problem = compile_case(case)
    exact = po.solve(problem, solver="cbc-ip").objective
    got = po.solve(problem, solver="primal-dual",
                   solver_options={"max_iter": 3000, "gap_tol": 1e-7})
    info = got.solve_info
    problem.forest.check_split_mask(got.split_mask)
    tol = 1e-9 * max(1.0, abs(exact))
    assert info["bound"] <= exact + tol
    assert exact <= got.objective + tol
    assert got.objective == problem.evaluate(got.split_mask).objective
    assert rel(got.objective, exact) <= 1e-3
    assert info["status"] in ("optimal", "gap_limit", "iteration_limit")
    if info["status"] == "optimal":
        assert rel(got.objective, exact) <= 1e-9
    hist = info["history"]
    assert len(hist["bound"]) == info["iterations"]
    assert np.all(np.diff(hist["best_objective"]) <= 0)
    assert np.all(np.diff(hist["best_bound"]) >= 0)
    assert np.all(hist["bound"] <= exact + tol)


def test_step_rules_are_a_table_of_step_length_functions():
    from types import SimpleNamespace

    from prune_opt.solvers._dual_ascent import STEP_RULES

    assert set(STEP_RULES) == {"polyak", "diminishing", "constant"}
    run = SimpleNamespace(stall=0, patience=3, theta=1.5, best_obj=2.0, t0=None,
                          step_size=0.5)
    assert STEP_RULES["polyak"](run, 1, 1.0, 4.0) == pytest.approx(1.5 * 1.0 / 4.0)
    run.stall = 3  # the bound stalled: theta halves, the stall counter resets
    assert STEP_RULES["polyak"](run, 2, 1.0, 4.0) == pytest.approx(0.75 / 4.0)
    assert (run.theta, run.stall) == (0.75, 0)
    assert STEP_RULES["constant"](run, 1, 1.0, 4.0) == pytest.approx(0.5 * 0.25)
    assert run.t0 == pytest.approx(0.25)  # fixed by the first step
    assert STEP_RULES["constant"](run, 9, 0.0, 100.0) == pytest.approx(0.125)
    assert STEP_RULES["diminishing"](run, 4, 0.0, 1.0) == pytest.approx(0.125 / 2)


@pytest.mark.parametrize("step", ["polyak", "diminishing", "constant"])
def test_step_rules_keep_a_certified_bracket(step, digits_problem):
    problem, exact = digits_problem
    got = po.solve(problem, solver="primal-dual",
                   solver_options={"step": step, "max_iter": 150, "gap_tol": 0.0,
                                   "step_size": 1.0 if step == "polyak" else 0.5})
    assert got.solve_info["iterations"] <= 150
    assert got.solve_info["bound"] <= exact + 1e-9 * exact <= got.objective + 2e-9 * exact
    # every rule makes real progress from the first iterate
    hist = got.solve_info["history"]
    assert hist["best_bound"][-1] > hist["bound"][0]


@pytest.fixture(scope="module")
def digits_problem():
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=6, max_depth=6, random_state=0).fit(X[:900], y[:900])
    problem = po.compile_problem(rf, X[900:], y[900:], lam=0.02)
    exact = po.solve(problem, solver="highs").objective
    return problem, exact


def test_polyak_converges_on_digits(digits_problem):
    problem, exact = digits_problem
    got = po.solve(problem, solver="primal-dual", solver_options={"gap_tol": 1e-4})
    assert got.solve_info["status"] in ("gap_limit", "optimal")
    assert got.solve_info["gap"] <= 1e-4
    assert got.solve_info["bound"] <= exact * (1 + 1e-9)
    assert rel(got.objective, exact) <= 1e-4


def test_networkx_subproblem_solves_the_same_program(digits_problem):
    problem, exact = digits_problem
    got = po.solve(problem, solver="primal-dual",
                   solver_options={"subproblem": "networkx", "max_iter": 40, "gap_tol": 0.0})
    assert got.solve_info["subproblem"] == "networkx"
    assert got.solve_info["bound"] <= exact * (1 + 1e-9)
    assert exact <= got.objective * (1 + 1e-9)


def test_warm_start_reduces_iterations_on_a_neighbouring_lambda(digits_problem):
    problem, _ = digits_problem
    forest = problem.forest
    X, y = load_digits(return_X_y=True)
    opts = {"gap_tol": 1e-4, "max_iter": 3000}
    first = po.solve(problem, solver="primal-dual", solver_options=opts)
    near = po.compile_problem(forest, X[900:], y[900:], lam=0.022)
    cold = po.solve(near, solver="primal-dual", solver_options=opts)
    duals = first.solve_info["duals"] * (near.lam / problem.lam)
    warm = po.solve(near, solver="primal-dual", solver_options={**opts, "warm_start": duals})
    exact = po.solve(near, solver="highs").objective
    assert warm.solve_info["iterations"] < cold.solve_info["iterations"]
    assert warm.solve_info["bound"] <= exact * (1 + 1e-9) <= warm.objective * (1 + 2e-9)


@given(case=forest_cases(max_examples=40))
@settings(max_examples=8)
def test_identical_results_across_n_jobs(case):
    problem = compile_case(case)
    opts = {"max_iter": 60, "gap_tol": 0.0}
    one = po.solve(problem, solver="primal-dual", solver_options={**opts, "n_jobs": 1})
    with joblib.parallel_backend("threading"):
        many = po.solve(problem, solver="primal-dual", solver_options={**opts, "n_jobs": 3})
    assert np.array_equal(one.split_mask, many.split_mask)
    assert one.objective == many.objective
    assert one.solve_info["bound"] == many.solve_info["bound"]
    assert np.array_equal(one.solve_info["duals"], many.solve_info["duals"])
    assert np.array_equal(one.solve_info["history"]["bound"], many.solve_info["history"]["bound"])


def test_identical_results_with_loky_processes(digits_problem):
    problem, _ = digits_problem
    opts = {"max_iter": 25, "gap_tol": 0.0}
    one = po.solve(problem, solver="primal-dual", solver_options={**opts, "n_jobs": 1})
    two = po.solve(problem, solver="primal-dual", solver_options={**opts, "n_jobs": 2})
    assert two.solve_info["n_blocks"] == 2
    assert np.array_equal(one.split_mask, two.split_mask)
    assert np.array_equal(one.solve_info["duals"], two.solve_info["duals"])
    assert one.solve_info["bound"] == two.solve_info["bound"]


def test_agrees_with_mincut_when_registered(digits_problem):
    if "mincut" not in po.available_solvers():
        pytest.skip("the 'mincut' backend is not registered in this checkout")
    problem, _ = digits_problem
    exact = po.solve(problem, solver="mincut").objective
    got = po.solve(problem, solver="primal-dual", solver_options={"gap_tol": 1e-5})
    assert got.solve_info["bound"] <= exact * (1 + 1e-9) <= got.objective * (1 + 2e-9)
    assert rel(got.objective, exact) <= 1e-5


def test_registration_and_zero_lambda_is_solved_exactly():
    info = po.list_solvers()["primal-dual"]
    assert info["kind"] == "decomposition" and info["exact"] is False
    X, y = load_digits(return_X_y=True)
    from sklearn.ensemble import RandomForestClassifier

    rf = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=1).fit(X[:500], y[:500])
    problem = po.compile_problem(rf, X[500:900], y[500:900], lam=0.0)
    got = po.solve(problem, solver="primal-dual")
    exact = po.solve(problem, solver="highs").objective
    # without costs the subproblems are the whole program: one iteration, zero gap
    assert got.solve_info["status"] == "optimal"
    assert got.solve_info["iterations"] == 1
    assert rel(got.objective, exact) <= 1e-9


def test_options_are_checked(digits_problem):
    problem, _ = digits_problem
    with pytest.raises(ValueError, match="step"):
        po.solve(problem, solver="primal-dual", solver_options={"step": "armijo"})
    with pytest.raises(ValueError, match="subproblem"):
        po.solve(problem, solver="primal-dual", solver_options={"subproblem": "bfs"})
    with pytest.raises(ValueError, match="warm_start"):
        po.solve(problem, solver="primal-dual", solver_options={"warm_start": np.ones(3)})
    with pytest.raises(ValueError, match="warm_start"):
        po.solve(problem, solver="primal-dual",
                 solver_options={"warm_start": -np.ones(problem.n_uses)})
    with pytest.raises(ValueError, match="max_iter"):
        po.solve(problem, solver="primal-dual", solver_options={"max_iter": 0})
    with pytest.raises(ValueError, match="n_jobs"):
        po.solve(problem, solver="primal-dual", solver_options={"n_jobs": 0})
    with pytest.raises(ValueError, match="did you mean"):
        get_solver("primal-dual", stepsize=1.0)


def test_budget_problems_are_refused():
    X, y = load_digits(return_X_y=True)
    from sklearn.ensemble import RandomForestClassifier

    rf = RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(X[:300], y[:300])
    problem = po.compile_problem(rf, X[300:500], y[300:500], lam=0.01, budget=5.0)
    with pytest.raises(ValueError, match="budget"):
        po.solve(problem, solver="primal-dual")


def test_time_limit_returns_a_valid_pruning(digits_problem):
    problem, exact = digits_problem
    got = po.solve(problem, solver="primal-dual", time_limit=0.0,
                   solver_options={"gap_tol": 0.0})
    assert got.solve_info["status"] in ("time_limit", "optimal")
    problem.forest.check_split_mask(got.split_mask)
    assert got.solve_info["bound"] <= exact * (1 + 1e-9) <= got.objective * (1 + 2e-9)
