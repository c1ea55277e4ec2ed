"""Regression problems through every exact backend, budgets, curves and baselines."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

import prune_opt as po
from prune_opt.budget import (
    BASELINES,
    baseline_curve,
    fit_budget,
    impurity_threshold_prunings,
    tradeoff_curve,
)
from prune_opt.budget._baselines import node_impurity
from prune_opt.solvers import find_solvers, list_solvers
from tests.test_regression import regression_cases

RTOL = 1e-9
#: every installed exact backend that is not a slow reference, plus the installed
#: references (small problems only here)
EXACT = find_solvers(exact=True, reference_only=False) + [
    n for n in find_solvers(exact=True, reference_only=True)]
INFO = list_solvers()


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


@given(case=regression_cases(max_examples=30))
@settings(max_examples=12)
def test_exact_backends_agree_on_regression_problems(case):
    problem = po.compile_problem(case["est"], case["X_val"], case["y_val"],
                                 costs=case["costs"], lam=case["lam"],
                                 train=(case["X_train"], case["y_train"]))
    reference = po.solve(problem, solver="mincut").objective
    for name in EXACT:
        pruned = po.solve(problem, solver=name)
        info = pruned.solve_info
        assert info["status"] == "optimal", name
        assert rel(pruned.objective, reference) <= RTOL, name
        assert rel(problem.evaluate(pruned.split_mask).objective, reference) <= RTOL, name
        if INFO[name]["matrix_based"] and not INFO[name]["mip"]:
            assert info["max_fractionality"] <= 1e-6, name  # an integral LP vertex


@given(case=regression_cases(max_examples=30))
@settings(max_examples=8)
def test_inexact_backends_bracket_the_regression_optimum(case):
    # primal-dual (the paper's Algorithm 1) and PDLP: a valid pruning no better than
    # the optimum and a certified bound no above it
    problem = po.compile_problem(case["est"], case["X_val"], case["y_val"],
                                 costs=case["costs"], lam=case["lam"])
    reference = po.solve(problem, solver="mincut").objective
    tol = 1e-9 * max(1.0, reference)
    for name in find_solvers(exact=False):
        pruned = po.solve(problem, solver=name)
        assert rel(problem.evaluate(pruned.split_mask).objective, pruned.objective) <= RTOL
        assert pruned.objective >= reference - tol, name
        assert pruned.solve_info["bound"] <= reference + tol, name


def test_every_registered_exact_backend_is_exercised():
    assert "mincut" in EXACT and "highs" in EXACT
    assert set(EXACT) >= set(find_solvers(exact=True, reference_only=False))


def _split(seed=0, n=240, trees=6, depth=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = X @ np.array([3.0, -2.0, 1.0, 0.5, 0.0]) + np.sin(3 * X[:, 0]) + rng.normal(size=n)
    third = n // 3
    rf = RandomForestRegressor(n_estimators=trees, max_depth=depth, random_state=seed)
    rf.fit(X[:third], y[:third])
    return rf, (X[:third], y[:third]), (X[third:2 * third], y[third:2 * third]), \
        (X[2 * third:], y[2 * third:])


COSTS = [1.0, 2.0, 5.0, 9.0, 3.0]


@pytest.mark.parametrize("share", [0.1, 0.25, 0.5])
def test_fit_budget_fits_and_is_no_worse_than_every_baseline(share):
    rf, train, (Xv, yv), _ = _split()
    full = po.acquisition_cost(rf, Xv, COSTS).mean()
    budget = share * full
    problem = po.compile_problem(rf, Xv, yv, costs=COSTS, train=train)
    best = fit_budget(rf, Xv, yv, costs=COSTS, budget=budget, train=train, time_limit=20)
    assert best.average_cost(Xv) <= budget + 1e-9
    mine = problem.evaluate(best.split_mask).error_term
    for name in ("ccp", "greedy", "impurity"):  # prunings of this forest (masks)
        for _, pf in BASELINES[name](rf, Xv, yv, costs=COSTS, problem=problem):
            if pf.average_cost(Xv) <= budget + 1e-9:
                assert mine <= problem.evaluate(pf.split_mask).error_term + 1e-12, name


def test_tradeoff_curve_and_baseline_curves_report_r2():
    rf, train, (Xv, yv), (Xt, yt) = _split(trees=3, depth=4)
    curve = tradeoff_curve(rf, Xv, yv, costs=COSTS, X_eval=Xt, y_eval=yt)
    assert "r2_eval" in curve and "accuracy_eval" not in curve
    assert (curve["average_cost"].diff().dropna() < 0).all()
    whole = po.prune(rf, Xv, yv, costs=COSTS, lam=0.0)
    assert curve["r2_eval"].iloc[0] == pytest.approx(whole.score(Xt, yt), abs=0.05)
    for name, fn in BASELINES.items():
        rows = baseline_curve(fn(rf, Xv, yv, costs=COSTS), Xv, y=yv, X_eval=Xt, y_eval=yt,
                              method=name)
        assert {"r2", "r2_eval", "cost_eval"} <= set(rows.columns), name
        assert rows["r2"].max() <= 1.0


def test_impurity_baseline_uses_node_variance():
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(80, 3)), rng.normal(size=80)
    tree = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
    f = po.as_forest(tree)
    np.testing.assert_allclose(node_impurity(f), tree.tree_.impurity)
    arrays = po.Forest([dict(left=tree.tree_.children_left, right=tree.tree_.children_right,
                             feature=tree.tree_.feature, threshold=tree.tree_.threshold,
                             value=tree.tree_.value[:, 0, :])], classes=None, n_features=3)
    with pytest.raises(ValueError, match="pass X and y"):
        node_impurity(arrays)
    np.testing.assert_allclose(node_impurity(arrays, X, y), tree.tree_.impurity,
                               rtol=1e-9, atol=1e-12)
    seq = impurity_threshold_prunings(arrays, X=X, y=y)
    assert seq[-1][1].n_splits == 0 and seq[0][1].n_splits == (~f.is_leaf).sum()


@given(case=regression_cases(max_examples=30), share=st.sampled_from([0.2, 0.6]))
@settings(max_examples=6)
def test_fit_budget_on_random_regression_forests_fits(case, share):
    Xv = case["X_val"]
    full = po.acquisition_cost(case["est"], Xv, case["costs"]).mean()
    pruned = fit_budget(case["est"], Xv, case["y_val"], costs=case["costs"],
                        budget=share * full, time_limit=5, objective="paper")
    assert pruned.average_cost(Xv) <= share * full + 1e-9
    assert pruned.solve_info["gap"] <= 1e-6 or pruned.solve_info["status"] != "optimal"


@pytest.mark.parametrize("criterion", ["absolute_error", "poisson", None])
def test_fit_budget_on_other_criteria_and_on_a_loaded_forest(criterion, tmp_path):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(200, 4))
    y = np.exp(X[:, 0]) + rng.poisson(1.0, size=200)
    rf = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0,
                               criterion=criterion or "squared_error").fit(X[:100], y[:100])
    forest = rf
    if criterion is None:  # an array forest without node variances (loaded from JSON)
        po.prune(rf, X[100:], y[100:], lam=0.0).save(tmp_path / "r.json")
        forest = po.load(tmp_path / "r.json").forest
    pruned = fit_budget(forest, X[100:], y[100:], costs=[1, 2, 3, 4], budget=2.0,
                        time_limit=5)
    assert pruned.average_cost(X[100:]) <= 2.0 + 1e-9
    if criterion is None:
        with pytest.raises(ValueError, match="pass X and y"):
            impurity_threshold_prunings(forest)
        assert len(BASELINES["impurity"](forest, X[100:], y[100:])) > 1
