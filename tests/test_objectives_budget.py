"""The budgeted ensemble search, prune(objective=...) dispatch and argument errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.objectives import evaluate_objective, optimize_ensemble
from tests.forest_cases import ensemble_search, forest_cases


def data(seed=0, n=120, trees=6, depth=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 5))
    y = (X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(scale=0.5, size=2 * n) > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed)
    return rf.fit(X[:n], y[:n]), X[n:], y[n:]


@settings(max_examples=12)  # each example runs a whole lam search
@given(case=forest_cases(max_examples=40, with_groups=False),
       share=st.sampled_from([0.0, 0.1, 0.3, 0.6, 1.5]))
def test_budget_is_met_and_the_best_feasible_point_is_returned(case, share):
    est, X, y, costs = case["est"], case["X_val"], case["y_val"], case["costs"]
    full = po.acquisition_cost(est, X, costs).mean()
    budget = share * full
    f, search, run = ensemble_search(est, X, y, budget=budget, costs=costs)
    pf = po.PrunedForest(f, run["mask"], costs=costs)
    assert pf.average_cost(X) <= budget * (1 + 1e-9) + 1e-12
    ev = evaluate_objective(pf, X, y, objective="brier", lam=0.0)
    points = [r["breakdown"] for _, r in search.points]
    fits = [p["loss"] for p in points if p["average_cost"] <= budget * (1 + 1e-12)]
    # the best point's tracked loss is what the pruning scores from scratch
    assert ev["loss"] == pytest.approx(min(fits), rel=1e-9, abs=1e-12)
    root = [r["breakdown"]["loss"] for _, r in search.points if r["start"] == "root"]
    assert ev["loss"] <= root[0] + 1e-12


def test_budget_search_reaches_intermediate_costs():
    rf, X, y = data(seed=3)
    costs = np.ones(5)
    full = po.acquisition_cost(rf, X, costs).mean()
    f, search, run = ensemble_search(rf, X, y, objective="margin", budget=0.5 * full,
                                     costs=costs)
    pf = po.PrunedForest(f, run["mask"], costs=costs)
    assert 0.0 < pf.average_cost(X) <= 0.5 * full
    assert search.n_lams >= 2
    root = po.PrunedForest(pf.forest, np.zeros(pf.forest.n_nodes, bool))
    assert pf.score(X, y) > root.score(X, y)


def test_prune_dispatches_and_paper_stays_the_default():
    rf, X, y = data(seed=1)
    paper = po.prune(rf, X, y, lam=0.01)
    assert paper.solve_info["solver"] != "block-descent"
    problem = po.compile_problem(rf, X, y, lam=0.01)
    assert paper.objective == pytest.approx(po.solve(problem).objective, rel=1e-9)
    brier = po.prune(rf, X, y, lam=0.01, objective="brier")
    direct = optimize_ensemble(rf, X, y, lam=0.01, objective="brier")
    assert brier.solve_info["objective"] == "brier"
    assert np.array_equal(brier.split_mask, direct.split_mask)
    # the brier pruning is never worse on its own objective than the paper optimum
    assert brier.objective <= evaluate_objective(paper, X, y, objective="brier",
                                                 lam=0.01)["objective"] + 1e-12
    assert brier.solve_info["paper_objective"] >= paper.objective - 1e-12
    clf = brier.to_sklearn()
    assert np.array_equal(clf.predict_proba(X), brier.predict_proba(X))


def test_argument_errors_name_the_argument():
    rf, X, y = data(seed=2, n=40, trees=2, depth=2)
    with pytest.raises(ValueError, match="train="):
        po.prune(rf, X, y, lam=0.1, objective="brier", train=(X, y))
    with pytest.raises(ValueError, match="unknown objective"):
        po.prune(rf, X, y, lam=0.1, objective="nope")
    with pytest.raises(TypeError, match="budget"):  # a budget is fit_budget's
        optimize_ensemble(rf, X, y, lam=0.1, budget=1.0)
    with pytest.raises(ValueError, match="lam is required"):
        optimize_ensemble(rf, X, y)
    with pytest.raises(ValueError, match="init must be"):
        optimize_ensemble(rf, X, y, lam=0.1, init="root")
    with pytest.raises(ValueError, match="max_iter"):
        optimize_ensemble(rf, X, y, lam=0.1, max_iter=0)
    with pytest.raises(ValueError, match="lam must"):
        optimize_ensemble(rf, X, y, lam=-1.0)
    with pytest.raises(ValueError, match="budget"):
        po.fit_budget(rf, X, y, budget=float("nan"), objective="brier")
    problem = po.compile_problem(rf, X, y, lam=0.1)
    with pytest.raises(ValueError, match="costs"):
        optimize_ensemble(problem, X, y, costs=np.ones(5))
    assert optimize_ensemble(problem, X, y).solve_info["lam"] == 0.1
    with pytest.raises(TypeError, match="PrunedForest"):
        evaluate_objective(rf, X, y, objective="brier", lam=0.0)


@given(seed=st.integers(0, 2**31 - 1), share=st.sampled_from([0.2, 0.5, 0.8]),
       objective=st.sampled_from(["brier", "logloss", "accuracy"]))
@settings(max_examples=6)
def test_budget_descent_lowers_the_loss_within_budget(seed, share, objective):
    from prune_opt.budget._own_loss import budget_descent, greedy_repair
    from prune_opt.objectives import EnsembleState, get_objective

    rf, X, y = data(seed=seed % 1000, n=60, trees=4, depth=4)
    f = po.Forest.from_sklearn(rf)
    costs = po.FeatureCosts([1.0, 2.0, 1.0, 3.0, 0.5])
    state = EnsembleState(f, f.check_X(X), np.searchsorted(f.classes_, y), np.ones(y.size),
                          costs, get_objective(objective), lam=0.0)
    state.set_mask(f.full_split_mask())
    budget = share * state.breakdown()["average_cost"]
    start = greedy_repair(state, f.full_split_mask(), budget)
    mask, losses = budget_descent(state, start, budget)
    assert np.all(np.diff(losses) <= 1e-9)
    pf = po.PrunedForest(f, mask, costs=costs)
    assert pf.average_cost(X) <= budget * (1 + 1e-9)
    ev = evaluate_objective(pf, X, y, objective=objective, lam=0.0)
    assert ev["loss"] == pytest.approx(losses[-1], rel=1e-9, abs=1e-12)
    with pytest.raises(ValueError, match="within the budget"):
        budget_descent(state, f.full_split_mask(), budget)
