"""Core pruning: backends agree with an exact IP, LP points are integral, pruned
forests are valid, predict what the IR says, and pay what a brute-force walk pays."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits, load_iris
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import prune_opt as po
from prune_opt.solvers import find_solvers
from tests.forest_cases import brute_force_cost, forest_cases, sklearn_tree_arrays

# exact LP backends (vertex solutions), from the registry's flags
LP_BACKENDS = find_solvers(exact=True, matrix_based=True, mip=False)


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


@given(case=forest_cases())
@settings(max_examples=20)
def test_lp_backends_agree_with_cbc_ip(case):
    problem = po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                                 lam=case["lam"], depth_cost=case["depth_cost"],
                                 train=(case["X_train"], case["y_train"]))
    exact = po.solve(problem, solver="cbc-ip")
    assert LP_BACKENDS
    for name in LP_BACKENDS:
        got = po.solve(problem, solver=name)
        assert rel(got.objective, exact.objective) <= 1e-9, name
        assert got.solve_info["max_fractionality"] <= 1e-6, name  # TU: integral vertex
        problem.forest.check_split_mask(got.split_mask)


@given(case=forest_cases(), data=st.data())
@settings(max_examples=20)
def test_evaluate_matches_brute_force_objective(case, data):
    """The shared evaluation equals the objective formula computed by hand."""
    est = case["est"]
    problem = po.compile_problem(est, case["X_val"], case["y_val"], costs=case["costs"],
                                 lam=case["lam"], depth_cost=case["depth_cost"])
    f = problem.forest
    # a random valid pruning: random mask, then closed under parents
    raw = np.array(data.draw(st.lists(st.booleans(), min_size=f.n_nodes, max_size=f.n_nodes)))
    from prune_opt.program._problem import close_under_parents

    mask = close_under_parents(f, raw & ~f.is_leaf)
    pf = po.PrunedForest(f, mask, costs=case["costs"])
    X, y = case["X_val"], case["y_val"]
    # error: each tree's pruned leaf predicts argmax of its distribution
    errs = []
    for t in range(f.n_trees):
        leaves, _, _ = pf._pruned_leaves(X, t)
        pred = f.classes_[np.argmax(f.value[leaves + f.node_offset[t]], axis=1)]
        errs.append(np.mean(pred != y))
    cost = brute_force_cost(sklearn_tree_arrays(est), pf.split_masks, X, case["costs"]).mean()
    depth = 0.0
    for t in range(f.n_trees):
        _, ind, split = pf._pruned_leaves(np.asarray(X, float), t)
        depth += split.sum() / X.shape[0]
    expected = np.mean(errs) + case["lam"] * (cost + case["depth_cost"] * depth)
    assert problem.evaluate(mask).objective == pytest.approx(expected, rel=1e-12, abs=1e-12)


@given(case=forest_cases())
@settings(max_examples=15)
def test_pruned_forest_to_sklearn_and_costs(case):
    pruned = po.prune(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                      lam=case["lam"], solver="highs")
    X = np.vstack([case["X_val"], case["X_train"]])
    sk = pruned.to_sklearn()
    assert type(sk) is type(case["est"])
    assert np.array_equal(sk.predict_proba(X), pruned.predict_proba(X))
    assert np.array_equal(sk.predict(X), pruned.predict(X))
    # cost actually paid == brute-force walk of the pruned trees
    brute = brute_force_cost(sklearn_tree_arrays(case["est"]), pruned.split_masks, X,
                             case["costs"])
    assert np.allclose(pruned.acquisition_cost(X), brute, rtol=0, atol=1e-12)
    # the pruned sklearn trees walk to the same cost
    brute_sk = brute_force_cost(sklearn_tree_arrays(sk),
                                [np.ones(len(a[0]), bool) for a in sklearn_tree_arrays(sk)], X,
                                case["costs"])
    assert np.allclose(brute_sk, brute)


@given(case=forest_cases())
@settings(max_examples=10)
def test_unpruned_cost_matches_brute_force(case):
    X = case["X_val"]
    got = po.acquisition_cost(case["est"], X, case["costs"])
    trees = sklearn_tree_arrays(case["est"])
    brute = brute_force_cost(trees, [np.ones(len(a[0]), bool) for a in trees], X, case["costs"])
    assert np.allclose(got, brute)


@pytest.mark.parametrize("cls", [RandomForestClassifier, ExtraTreesClassifier])
def test_lam_zero_with_train_keeps_fully_grown_forest(cls):
    X, y = load_iris(return_X_y=True)
    est = cls(n_estimators=8, random_state=0).fit(X, y)
    pruned = po.prune(est, X[::3], y[::3], lam=0.0, train=(X, y))
    assert pruned.n_splits == int((~pruned.forest.is_leaf).sum())
    assert np.array_equal(pruned.predict_proba(X), est.predict_proba(X))


def test_decision_tree_is_forest_of_one():
    X, y = load_iris(return_X_y=True)
    tree = DecisionTreeClassifier(random_state=0).fit(X, y)
    pruned = po.prune(tree, X, y, costs=[1, 1, 10, 10], lam=0.05)
    assert pruned.n_trees == 1
    sk = pruned.to_sklearn()
    assert isinstance(sk, DecisionTreeClassifier)
    assert np.array_equal(sk.predict_proba(X), pruned.predict_proba(X))
    assert pruned.average_cost(X) < po.acquisition_cost(tree, X, [1, 1, 10, 10]).mean()


def test_in_bag_error_counts_multiplicity():
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=1).fit(X, y)
    problem = po.compile_problem(rf, X, y, train=(X, y))
    for t, est in enumerate(rf.estimators_):
        bag = np.bincount(rf.estimators_samples_[t], minlength=len(y))
        assert problem.tree_error_weight[t] == bag.sum()
        leaves = est.apply(X.astype(np.float32))
        pred = np.argmax(est.tree_.value[leaves, 0], axis=1)
        sl = problem.forest.tree_slice(t)
        leaf_err = problem.node_error[sl][problem.forest.is_leaf[sl]].sum()
        assert leaf_err == pytest.approx(np.sum(bag * (pred != y)))


def test_larger_lambda_never_raises_cost():
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=6, max_depth=6, random_state=0).fit(X[:900], y[:900])
    problem = po.compile_problem(rf, X[900:1300], y[900:1300], lam=0.0)
    costs = []
    for lam in [0.0, 1e-3, 3e-3, 1e-2, 3e-2, 0.1]:
        costs.append(po.solve(problem.with_lam(lam), solver="highs").breakdown.average_cost)
    assert all(b <= a + 1e-12 for a, b in zip(costs, costs[1:]))
    assert costs[-1] < costs[0]


def test_merging_examples_keeps_the_optimum():
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(X[:600], y[:600])
    Xv, yv = X[600:900], y[600:900]
    merged = po.compile_problem(rf, Xv, yv, lam=0.01)
    plain = po.compile_problem(rf, Xv, yv, lam=0.01, merge=False)
    assert merged.n_rows < plain.n_rows
    a, b = po.solve(merged, solver="highs"), po.solve(plain, solver="highs")
    assert rel(a.objective, b.objective) <= 1e-9
    assert merged.evaluate(b.split_mask).objective == pytest.approx(b.objective, rel=1e-12)


def test_chunked_routing_equals_single_chunk():
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=4, max_depth=5, random_state=0).fit(X[:600], y[:600])
    a = po.compile_problem(rf, X[600:], y[600:], lam=0.01, chunk_size=97)
    b = po.compile_problem(rf, X[600:], y[600:], lam=0.01)
    assert np.array_equal(a.use_node, b.use_node) and np.array_equal(a.use_row, b.use_row)
    assert np.allclose(a.node_error, b.node_error)
    assert np.allclose(a.node_cost_weight, b.node_cost_weight)


def test_standard_form_is_the_papers_program():
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(X, y)
    problem = po.compile_problem(rf, X, y, lam=0.1)
    sf = problem.to_standard_form()
    A = problem.constraint_matrix()
    assert set(np.unique(A.data)) <= {-1.0, 1.0}
    mask = problem.forest.full_split_mask()
    x = problem.lp_point(mask)
    assert np.allclose(sf["A_eq"] @ x, sf["b_eq"])
    assert (sf["A_ub"] @ x <= sf["b_ub"] + 1e-12).all()
    assert sf["c"] @ x / problem.scale == pytest.approx(problem.evaluate(mask).objective,
                                                        rel=1e-12)


@given(case=forest_cases())
@settings(max_examples=10)
def test_cost_non_increasing_and_error_non_decreasing_in_lambda(case):
    problem = po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                                 lam=0.0, train=(case["X_train"], case["y_train"]))
    prev = None
    for lam in [0.0, 1e-3, 1e-2, 0.1, 1.0, 10.0]:
        b = po.solve(problem.with_lam(lam), solver="highs").breakdown
        if prev is not None:
            assert b.average_cost <= prev.average_cost + 1e-9
            assert b.error_term >= prev.error_term - 1e-9
        prev = b


def test_solve_names_the_problem_argument():
    X, y = load_iris(return_X_y=True)
    tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="problem must be a PruningProblem.*prune"):
        po.solve(tree)
    with pytest.raises(TypeError, match="problem must be a PruningProblem"):
        po.solve("not a problem", solver="highs")
