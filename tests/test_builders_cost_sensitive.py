"""CostSensitiveRandomForestClassifier: cost/gain trade-off, reuse, pruning."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import load_iris, make_classification
from sklearn.utils.estimator_checks import parametrize_with_checks

import prune_opt as po
from forest_builders._impurity import entropy, gini
from forest_builders._splits import candidate_splits
from forest_builders.cost_sensitive_rf import (
    CostSensitiveRandomForestClassifier,
    cost_gain_chooser,
)
from prune_opt import FeatureCosts


@parametrize_with_checks([CostSensitiveRandomForestClassifier(n_estimators=4, random_state=0),
                          CostSensitiveRandomForestClassifier(
                              n_estimators=3, criterion="gini", cost_mode="difference",
                              beta=0.001, random_state=0)])
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)


def _brute_best(X, y, cost, imp, mode, beta):
    n = len(y)
    fs = imp(np.bincount(y, minlength=3))
    scores, gains = [], []
    for j in range(X.shape[1]):
        best = -np.inf
        for t in np.unique(X[:, j])[:-1]:
            m = X[:, j] <= t
            g = (fs - imp(np.bincount(y[m], minlength=3)) - imp(np.bincount(y[~m], minlength=3)))
            best = max(best, g / n)
        gains.append(best)
        if mode == "ratio":
            scores.append(np.inf if cost[j] ** beta == 0 else best / cost[j] ** beta)
        else:
            scores.append(best - beta * cost[j])
    return np.asarray(scores), np.asarray(gains)


@given(seed=st.integers(0, 5000), mode=st.sampled_from(["ratio", "difference"]),
       crit=st.sampled_from(["entropy", "gini"]), free=st.booleans())
def test_chooser_matches_brute_force(seed, mode, crit, free):
    imp = {"entropy": entropy, "gini": gini}[crit]
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(30, 4)).astype(np.float32)
    y = rng.integers(0, 3, 30)
    cost = rng.uniform(0.5, 4, 4)
    if free:
        cost[rng.integers(4)] = 0.0
    beta = 0.05 if mode == "difference" else 1.0
    cand = candidate_splits(X, y, np.ones(30), 3)
    total = np.bincount(y, minlength=3).astype(float)
    pick = cost_gain_chooser(imp, mode, beta)(cand, cost, total)
    scores, gains = _brute_best(X, y, cost, imp, mode, beta)
    ok = gains > 1e-12
    if not ok.any() or (mode == "difference" and scores[ok].max() <= 0):
        assert pick is None
        return
    j, thr = pick
    assert scores[j] == pytest.approx(scores[ok].max(), rel=1e-9)
    m = X[:, j] <= thr
    g = (imp(total) - imp(np.bincount(y[m], minlength=3))
         - imp(np.bincount(y[~m], minlength=3))) / 30
    assert g == pytest.approx(gains[j], rel=1e-9)


def test_beta_trades_accuracy_for_cost():
    X, y = make_classification(600, 8, n_informative=4, n_redundant=2, shuffle=False,
                               random_state=0)
    costs = np.array([20.0, 20.0, 20.0, 20.0, 1.0, 1.0, 1.0, 1.0])  # informative = costly
    avg = []
    for beta in (0.0, 0.3, 1.0):
        est = CostSensitiveRandomForestClassifier(n_estimators=8, beta=beta, costs=costs,
                                                  max_depth=3, random_state=0).fit(X, y)
        avg.append(est.acquisition_cost(X).mean())
    assert avg[0] > avg[1] > avg[2]


def test_free_reuse_lowers_cost_and_units_count_once():
    X, y = make_classification(500, 6, n_informative=4, random_state=2)
    costs = FeatureCosts([3.0, 3.0, 3.0, 3.0, 3.0, 3.0], groups={"g": (5.0, [0, 1, 2])})
    kw = dict(n_estimators=6, costs=costs, max_features=None, random_state=0)
    reuse = CostSensitiveRandomForestClassifier(free_reuse=True, **kw).fit(X, y)
    fixed = CostSensitiveRandomForestClassifier(free_reuse=False, **kw).fit(X, y)
    assert reuse.acquisition_cost(X).mean() < fixed.acquisition_cost(X).mean()
    # the estimator's accounting is prune_opt's (units paid once per example)
    assert np.allclose(reuse.acquisition_cost(X), po.acquisition_cost(reuse, X, costs))


def test_difference_mode_stops_when_no_split_pays():
    X, y = load_iris(return_X_y=True)
    est = CostSensitiveRandomForestClassifier(n_estimators=3, cost_mode="difference",
                                              beta=10.0, random_state=0).fit(X, y)
    f = est.to_forest()
    assert f.n_nodes == 3 and f.is_leaf.all()
    assert np.allclose(est.acquisition_cost(X), 0.0)


def test_round_trip_and_prune_agree_across_solvers():
    X, y = load_iris(return_X_y=True)
    idx = np.random.default_rng(1).permutation(len(y))
    tr, va = idx[:100], idx[100:]
    costs = [1.0, 1.0, 6.0, 6.0]
    est = CostSensitiveRandomForestClassifier(n_estimators=5, costs=costs,
                                              random_state=0).fit(X[tr], y[tr])
    f = est.to_forest()
    assert np.array_equal(f.predict_proba(X), est.predict_proba(X))
    assert f.in_bag is est.in_bag_
    solvers = ["highs", "cbc-ip"] + [s for s in ("mincut",) if s in po.available_solvers()]
    for lam in (0.01, 0.1):
        objs = [po.prune(est, X[va], y[va], costs=costs, lam=lam, train=(X[tr], y[tr]),
                         solver=s).objective for s in solvers]
        assert np.allclose(objs, objs[0], rtol=1e-9, atol=1e-12), (lam, objs)


def test_budget_mode_and_errors():
    X, y = load_iris(return_X_y=True)
    est = CostSensitiveRandomForestClassifier(budget=2.5, max_trees=30, costs=[1, 1, 2, 2],
                                              random_state=0).fit(X[:100], y[:100],
                                                                  X[100:], y[100:])
    assert est.acquisition_cost(X[100:]).mean() <= 2.5
    with pytest.raises(ValueError, match="cost_mode"):
        CostSensitiveRandomForestClassifier(cost_mode="sum").fit(X, y)
    with pytest.raises(ValueError, match="criterion"):
        CostSensitiveRandomForestClassifier(criterion="pairs").fit(X, y)
    with pytest.raises(ValueError, match="beta"):
        CostSensitiveRandomForestClassifier(beta=-1).fit(X, y)
