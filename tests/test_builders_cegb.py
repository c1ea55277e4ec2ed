"""CEGB wrapper and LightGBM import: LightGBM's own routing reproduced, exact cost
accounting against brute force, penalties lower cost, RF import prunes exactly."""

import sys

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.model_selection import train_test_split

import prune_opt as po
from forest_builders.cegb import CEGBClassifier
from forest_builders.lightgbm_import import (
    forest_from_lightgbm,
    lightgbm_acquisition_cost,
    lightgbm_feature_usage,
    lightgbm_leaves,
    lightgbm_trees,
)
from prune_opt.datasets import load_dataset

lgb = pytest.importorskip("lightgbm", reason="lightgbm not installed (pip install "
                                             "prune-opt[lightgbm])")


@pytest.fixture(scope="module")
def pima():
    d = load_dataset("pima")
    X = d.X.astype(np.float32).astype(np.float64)  # float32-representable, see docs
    Xtr, Xte, ytr, yte = train_test_split(X, d.y, test_size=0.3, random_state=0, stratify=d.y)
    return d, Xtr, Xte, ytr, yte


def _with_missing(X, seed=0):
    """Copy of X with some NaNs and exact zeros, to exercise missing-value routing."""
    rng = np.random.default_rng(seed)
    X = X.copy()
    X[rng.random(X.shape) < 0.08] = np.nan
    X[rng.random(X.shape) < 0.08] = 0.0
    return X


def _brute_features(node, x, acc):
    """Walk one dumped tree for one example with LightGBM's rule, collecting features."""
    while "split_index" in node:
        f = node["split_feature"]
        acc.add(f)
        v = x[f]
        mt = node["missing_type"]
        if np.isnan(v) and mt != "NaN":
            v = 0.0
        if (mt == "Zero" and abs(v) <= 1e-35) or (mt == "NaN" and np.isnan(v)):
            left = node["default_left"]
        else:
            left = v <= node["threshold"]
        node = node["left_child"] if left else node["right_child"]
    return node["leaf_index"]


@pytest.mark.parametrize("zero_as_missing", [False, True])
@pytest.mark.parametrize("boosting", ["gbdt", "rf"])
def test_routing_matches_lightgbm_leaves(pima, zero_as_missing, boosting):
    d, Xtr, Xte, ytr, _ = pima
    Xtr, Xte = _with_missing(Xtr, 1), _with_missing(Xte, 2)
    extra = dict(subsample=0.7, subsample_freq=1) if boosting == "rf" else {}
    m = lgb.LGBMClassifier(boosting_type=boosting, n_estimators=15, num_leaves=12,
                           zero_as_missing=zero_as_missing, verbose=-1, random_state=0,
                           **extra).fit(Xtr, ytr)
    leaves = m.booster_.predict(Xte, pred_leaf=True)
    np.testing.assert_array_equal(lightgbm_leaves(m, Xte), leaves)
    missing_types = set()
    for tree in lightgbm_trees(m):
        missing_types |= set(tree["missing_type"][tree["left"] >= 0].tolist())
    assert missing_types - {0}  # NaN/Zero handling was really exercised


def test_cegb_cost_accounting_equals_brute_force(pima):
    d, Xtr, Xte, ytr, _ = pima
    Xte = _with_missing(Xte)
    m = CEGBClassifier(costs=d.costs, cegb_tradeoff=0.002, n_estimators=20, num_leaves=8,
                       random_state=0).fit(_with_missing(Xtr, 3), ytr)
    dump = m.booster_.dump_model()
    used = m.feature_usage(Xte).toarray()
    cost = m.acquisition_cost(Xte)
    leaves = m.booster_.predict(Xte, pred_leaf=True)
    for i, x in enumerate(Xte):  # brute force, one example at a time
        feats = set()
        for t, info in enumerate(dump["tree_info"]):
            assert _brute_features(info["tree_structure"], x, feats) == leaves[i, t]
        assert set(np.flatnonzero(used[i]).tolist()) == feats
        assert cost[i] == pytest.approx(d.costs.cost_of(feats), abs=1e-12)
    assert np.array_equal(cost, lightgbm_acquisition_cost(m.booster_, Xte, d.costs))
    assert 0 < cost.mean() < d.costs.unit_costs.sum()


def test_cegb_penalties_lower_acquisition_cost(pima):
    d, Xtr, Xte, ytr, yte = pima
    costs = {}
    for trade in (0.0, 0.003, 0.03):
        m = CEGBClassifier(costs=d.costs, cegb_tradeoff=trade, n_estimators=30,
                           num_leaves=8, random_state=0).fit(Xtr, ytr)
        costs[trade] = m.average_cost(Xte)
        assert m.score(Xte, yte) > 0.6
    assert costs[0.0] > costs[0.003] > costs[0.03]
    # coupled (per-model) penalties also cut the features the model reads
    cpl = CEGBClassifier(costs=d.costs, cegb_tradeoff=5.0, penalty="coupled",
                         n_estimators=30, num_leaves=8, random_state=0).fit(Xtr, ytr)
    assert cpl.average_cost(Xte) < costs[0.0]
    assert cpl.feature_penalty_ == pytest.approx(d.costs.feature_cost())


def test_lightgbm_rf_import_routes_like_lightgbm(pima):
    d, Xtr, Xte, ytr, yte = pima
    rf = lgb.LGBMClassifier(boosting_type="rf", n_estimators=25, subsample=0.7,
                            subsample_freq=1, colsample_bytree=0.8, num_leaves=16,
                            verbose=-1, random_state=0).fit(Xtr, ytr)
    forest = forest_from_lightgbm(rf, Xtr, ytr)
    assert forest.n_trees == 25
    # leaf assignment per tree is identical to LightGBM's on unseen data
    lgb_leaves = rf.booster_.predict(Xte, pred_leaf=True)
    ours = forest.apply(Xte)
    for t in range(forest.n_trees):
        np.testing.assert_array_equal(forest.lightgbm_leaf_index[t][ours[:, t]],
                                      lgb_leaves[:, t])
    # every node holds the class frequencies of the training rows reaching it
    for t in (0, 7):
        ind = forest.decision_paths(Xtr, t)
        counts = ind.T @ np.eye(2)[ytr]
        reached = counts.sum(axis=1) > 0
        np.testing.assert_allclose(forest.value[forest.tree_slice(t)][reached],
                                   counts[reached] / counts[reached].sum(axis=1)[:, None])
    # LightGBM averages raw leaf scores, the Forest averages class frequencies: the
    # classes mostly agree but not everywhere
    agree = (forest.predict_proba(Xte).argmax(axis=1) == rf.predict(Xte)).mean()
    assert agree > 0.9


def test_values_next_to_thresholds_route_as_lightgbm(pima):
    # the import compares float64 as LightGBM does: values one ulp either side of every
    # threshold (which float32 would round onto it) reach LightGBM's leaves
    d, Xtr, _, ytr, _ = pima
    rf = lgb.LGBMClassifier(boosting_type="rf", n_estimators=3, subsample=0.7,
                            subsample_freq=1, num_leaves=4, verbose=-1,
                            random_state=0).fit(Xtr, ytr)
    X = np.repeat(Xtr[:1], 3 * sum(int((t["left"] >= 0).sum()) for t in lightgbm_trees(rf)),
                  axis=0)
    row = 0
    for tree in lightgbm_trees(rf):
        for f, thr in zip(tree["feature"][tree["left"] >= 0], tree["threshold"][tree["left"] >= 0]):
            X[row:row + 3, f] = [np.nextafter(thr, -np.inf), thr, np.nextafter(thr, np.inf)]
            row += 3
    forest = forest_from_lightgbm(rf, X, np.resize(ytr, X.shape[0]))
    ours = np.column_stack([forest.lightgbm_leaf_index[t][forest.apply_tree(X, t)]
                            for t in range(forest.n_trees)])
    np.testing.assert_array_equal(ours, rf.booster_.predict(X, pred_leaf=True))


def test_forest_import_check_reports_a_routing_difference(pima, monkeypatch):
    d, Xtr, _, ytr, _ = pima
    rf = lgb.LGBMClassifier(boosting_type="rf", n_estimators=3, subsample=0.7,
                            subsample_freq=1, num_leaves=4, verbose=-1,
                            random_state=0).fit(Xtr, ytr)
    true_predict = rf.booster_.predict
    monkeypatch.setattr(rf.booster_, "predict",
                        lambda X, **kw: true_predict(X, **kw) + (1 if kw.get("pred_leaf") else 0))
    with pytest.raises(RuntimeError, match="leaves differ"):
        forest_from_lightgbm(rf, Xtr, ytr)
    forest_from_lightgbm(rf, Xtr, ytr, check=False)


@pytest.mark.slow
def test_pruning_imported_lightgbm_rf_agrees_across_solvers(pima):
    d, Xtr, Xte, ytr, yte = pima
    model = CEGBClassifier(costs=d.costs, cegb_tradeoff=0.001, boosting_type="rf",
                           n_estimators=8, num_leaves=8, subsample=0.7, subsample_freq=1,
                           random_state=0).fit(Xtr, ytr)
    forest = model.to_forest()
    np.testing.assert_array_equal(po.acquisition_cost(forest, Xte, d.costs),
                                  model.acquisition_cost(Xte))
    problem = po.compile_problem(model, Xte, yte, costs=d.costs, lam=0.005)
    a = po.solve(problem, solver="highs")
    b = po.solve(problem, solver="cbc-ip")
    assert a.objective == pytest.approx(b.objective, rel=1e-9, abs=1e-12)
    assert a.average_cost(Xte) <= model.average_cost(Xte) + 1e-9
    whole = problem.evaluate(forest.full_split_mask()).objective
    assert a.objective <= whole + 1e-12


def test_boosted_model_is_not_a_forest(pima):
    d, Xtr, _, ytr, _ = pima
    m = CEGBClassifier(n_estimators=3, random_state=0).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="boosting_type='rf'"):
        m.to_forest()


def test_categorical_splits_are_refused():
    rng = np.random.default_rng(0)
    X = np.c_[rng.integers(0, 6, 300), rng.normal(size=300)]
    y = (X[:, 0] % 2 == 0).astype(int)
    m = lgb.LGBMClassifier(n_estimators=2, num_leaves=4, verbose=-1, min_child_samples=5,
                           min_data_per_group=5, cat_smooth=1).fit(X, y, categorical_feature=[0])
    with pytest.raises(ValueError, match="categorical"):
        lightgbm_trees(m)
    with pytest.raises(ValueError, match="categorical"):
        lightgbm_feature_usage(m, X)


def test_zero_as_missing_refused_by_forest_import(pima):
    d, Xtr, _, ytr, _ = pima
    X = _with_missing(Xtr, 4)
    rf = lgb.LGBMClassifier(boosting_type="rf", n_estimators=5, subsample=0.7,
                            subsample_freq=1, num_leaves=8, verbose=-1, zero_as_missing=True,
                            random_state=0).fit(X, ytr)
    if not any((t["missing_type"] == 1).any() for t in lightgbm_trees(rf)):
        pytest.skip("no 'Zero' split in this model")
    with pytest.raises(ValueError, match="zero_as_missing"):
        forest_from_lightgbm(rf, X, ytr)


def test_missing_lightgbm_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ImportError, match=r"pip install prune-opt\[lightgbm\]"):
        CEGBClassifier().fit(X, y)


def test_parameter_validation():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="penalty"):
        CEGBClassifier(penalty="eager").fit(X, y)
    with pytest.raises(ValueError, match="cegb_tradeoff"):
        CEGBClassifier(cegb_tradeoff=-1).fit(X, y)
    with pytest.raises(ValueError, match="lgbm_params must not set"):
        CEGBClassifier(lgbm_params={"cegb_penalty_split": 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="costs"):
        CEGBClassifier(costs=[1.0, 2.0]).fit(X, y)
    with pytest.raises(TypeError, match="model"):
        lightgbm_trees(object())


def test_sklearn_api_basics():
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError

    X, y = load_iris(return_X_y=True)
    m = CEGBClassifier(n_estimators=5, cegb_tradeoff=0.5, random_state=0)
    assert clone(m).get_params() == m.get_params()
    with pytest.raises(NotFittedError):
        m.predict(X)
    m.fit(X, y)
    assert m.n_features_in_ == 4 and list(m.classes_) == [0, 1, 2]
    np.testing.assert_allclose(m.predict_proba(X).sum(axis=1), 1.0)
    assert m.score(X, y) > 0.9


def test_cegb_curve_rows_match_the_models_and_prune_opt_costs():
    # moved here from prune_opt.budget: prune_opt never imports forest_builders
    import pandas as pd

    from forest_builders.cegb import cegb_curve

    X, y = load_iris(return_X_y=True)
    costs = [1.0, 1.0, 5.0, 5.0]
    rows = cegb_curve(X, y, costs=costs, tradeoffs=[0.0, 3.0], X_eval=X, y_eval=y,
                      n_estimators=5)
    assert isinstance(rows, pd.DataFrame) and list(rows["method"]) == ["cegb", "cegb"]
    for tr, row in zip([0.0, 3.0], rows.itertuples()):
        m = CEGBClassifier(costs=costs, cegb_tradeoff=tr, n_estimators=5, random_state=0).fit(X, y)
        assert row.cost_eval == pytest.approx(m.average_cost(X), rel=1e-12)
        assert row.accuracy_eval == pytest.approx(float((m.predict(X) == y).mean()))
    with pytest.raises(ValueError, match="X_eval and y_eval"):
        cegb_curve(X, y, tradeoffs=[0.0])
