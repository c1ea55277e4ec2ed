"""fit_budget with an ensemble objective: never worse than any baseline that fits."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.budget import (
    ccp_prunings,
    fewer_trees_prunings,
    fits_budget,
    greedy_prunings,
    impurity_threshold_prunings,
)
from prune_opt.objectives import evaluate_objective
from tests.forest_cases import ensemble_search, forest_cases

OBJECTIVES = ["brier", "logloss", "margin", "accuracy"]


def _loss(pf, X, y, objective):
    """The objective's loss of the pruning's vote, from its predictions (for "accuracy",
    the 0/1 loss that counts an exact tie as an error)."""
    return evaluate_objective(pf, X, y, objective=objective, lam=0.0)["loss"]


def _tied(pf, X):
    """Share of rows whose vote has two classes tied for the top (predict picks the
    first of them; the "accuracy" objective counts the row as an error)."""
    top2 = np.sort(pf.predict_proba(X), axis=1)[:, -2:]
    return float(np.mean(top2[:, 1] - top2[:, 0] <= 1e-9))


def _baselines(case):
    est, Xv, yv, costs = case["est"], case["X_val"], case["y_val"], case["costs"]
    train = (case["X_train"], case["y_train"])
    fams = {"greedy": greedy_prunings(est, Xv, yv, costs=costs, train=train),
            "ccp": ccp_prunings(est, costs=costs),
            "impurity": impurity_threshold_prunings(est, costs=costs),
            "fewer-trees": fewer_trees_prunings(est, costs=costs)}
    return [(name, pf) for name, fam in fams.items() for _, pf in fam]


@given(case=forest_cases(max_examples=40), share=st.sampled_from([0.15, 0.4, 0.7]),
       objective=st.sampled_from(OBJECTIVES))
@settings(max_examples=12)
def test_never_worse_than_any_fitting_baseline(case, share, objective):
    est, Xv, yv, costs = case["est"], case["X_val"], case["y_val"], case["costs"]
    full = po.acquisition_cost(est, Xv, costs).mean()
    budget = share * full
    pf = po.fit_budget(est, Xv, yv, costs=costs, budget=budget, objective=objective,
                       train=(case["X_train"], case["y_train"]), time_limit=5)
    assert pf.average_cost(Xv) <= budget * (1 + 1e-9) + 1e-12
    mine = _loss(pf, Xv, yv, objective)
    assert mine == pytest.approx(pf.solve_info["ensemble_loss"], rel=1e-9, abs=1e-12)
    for name, base in _baselines(case):
        if base.average_cost(Xv) <= budget * (1 + 1e-12):
            assert mine <= _loss(base, Xv, yv, objective) + 1e-12, name
    if objective == "accuracy":  # predict's accuracy: a baseline wins only by its ties
        best = max((b.score(Xv, yv) - _tied(b, Xv) for _, b in _baselines(case)
                    if b.average_cost(Xv) <= budget * (1 + 1e-12)), default=0.0)
        assert pf.score(Xv, yv) >= best - 1e-12


def _digits(n_trees=10):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=n_trees, max_depth=6, random_state=0)
    return rf.fit(X[:500], y[:500]), X[500:800], y[500:800]


def test_candidates_start_a_monotone_descent_and_are_never_lost():
    rf, Xv, yv = _digits()
    f = po.Forest.from_sklearn(rf)
    budget = 0.3 * po.acquisition_cost(rf, Xv).mean()
    fewer = [(f"first {m}", p) for m, p in fewer_trees_prunings(rf) if m < f.n_trees]
    cands = []
    for name, p in fewer:  # the first m trees kept, the others cut to their root
        mask = f.full_split_mask()
        mask[f.node_offset[p.n_trees]:] = False
        cands.append((name, mask))
    _, search, run = ensemble_search(rf, Xv, yv, budget=budget, candidates=cands)
    pf = po.PrunedForest(f, run["mask"])
    # the package's one budget tolerance, on both sides
    assert fits_budget(pf.average_cost(Xv), budget)
    fitting = [evaluate_objective(po.PrunedForest(f, m), Xv, yv, objective="brier",
                                  lam=0.0)["loss"]
               for _, m in cands if fits_budget(po.PrunedForest(f, m).average_cost(Xv), budget)]
    loss = evaluate_objective(pf, Xv, yv, objective="brier", lam=0.0)["loss"]
    assert fitting and loss <= min(fitting) + 1e-12
    descents = [r["breakdown"]["loss"] for _, r in search.points
                if r["start"] == "budget-descent"]
    assert descents and min(descents) <= min(fitting)


def test_problem_must_be_compiled_on_the_same_data():
    rf, Xv, yv = _digits(4)
    problem = po.compile_problem(rf, Xv[:100], yv[:100])
    with pytest.raises(ValueError, match="same X"):
        po.fit_budget(problem, Xv, yv, budget=5.0, objective="accuracy")
    with pytest.raises(ValueError, match="pass the pruning data"):
        po.fit_budget(problem, budget=5.0, objective="accuracy")
    ok = po.compile_problem(rf, Xv, yv)
    pf = po.fit_budget(ok, Xv, yv, budget=5.0, objective="accuracy",
                       time_limit=3)
    assert pf.average_cost(Xv) <= 5.0 + 1e-9
    assert set(pf.solve_info["candidates_loss"]) >= {"paper", "ensemble-search"}


def test_a_winning_sub_forest_exports_and_predicts():
    rf, Xv, yv = _digits(6)
    budget = 0.6 * po.acquisition_cost(rf, Xv).mean()
    pf = po.fit_budget(rf, Xv, yv, budget=budget, objective="brier", time_limit=3)
    if pf.solve_info["found_by"].endswith("(sub-forest)"):
        assert pf.n_trees == pf.solve_info["n_trees_kept"] < 6
    skl = pf.to_sklearn()
    np.testing.assert_array_equal(skl.predict(Xv), pf.predict(Xv))


def test_tree_subset_votes_with_the_kept_trees_only():
    from prune_opt.budget import sub_forest as tree_subset
    from prune_opt.objectives._scorer import VoteScorer

    rf, Xv, yv = _digits(5)
    f = po.Forest.from_sklearn(rf)
    sub = tree_subset(f, [1, 3])
    expected = (rf.estimators_[1].predict_proba(Xv) + rf.estimators_[3].predict_proba(Xv)) / 2
    np.testing.assert_allclose(po.PrunedForest(sub, sub.full_split_mask()).predict_proba(Xv),
                               expected, rtol=1e-12)
    scorer = VoteScorer(f, Xv, yv, po.FeatureCosts.uniform(f.n_features), "brier")
    mask = f.full_split_mask()
    mask[f.node_offset[0]:f.node_offset[1]] = False  # tree 0 cut to its root
    loss, cost = scorer.score(mask, [1, 2, 3, 4])
    pf = po.PrunedForest(tree_subset(f, [1, 2, 3, 4]),
                         mask[f.node_offset[1]:])
    assert cost == pf.average_cost(Xv)
    assert loss == pytest.approx(evaluate_objective(pf, Xv, yv, objective="brier",
                                                    lam=0.0)["loss"], rel=1e-12)
