"""scikit-learn's boosted models read into the IR route and predict exactly as the library."""

import numpy as np
import pytest
from boosted_cases import boosted_cases, boosting_data, fit_boosted
from hypothesis import given
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression

import prune_opt as po

TOL = 1e-9


def _per_tree_values(model, X):
    """Each tree's own contribution, as the library computes it: (n, n_trees)."""
    if isinstance(model, (HistGradientBoostingClassifier, HistGradientBoostingRegressor)):
        Xd = np.asarray(X, dtype=np.float64)
        return np.column_stack([p.predict(Xd, known_cat_bitsets=np.zeros((0, 8), np.uint32),
                                          f_idx_map=np.zeros(0, np.uint32), n_threads=1)
                                for stage in model._predictors for p in stage])
    lr = model.learning_rate
    return np.column_stack([lr * tree.predict(np.asarray(X, np.float32))
                            for stage in model.estimators_ for tree in stage])


def _ir_tree_values(forest, X):
    cols = np.zeros(forest.n_trees, int) if forest.ensemble.tree_class is None \
        else forest.ensemble.tree_class
    leaves = forest.apply(X)
    return np.column_stack([forest.value[forest.node_offset[t] + leaves[:, t], cols[t]]
                            for t in range(forest.n_trees)])


@given(boosted_cases())
def test_every_tree_and_the_model_predict_as_the_library(case):
    model, Xt, yt, Xv, yv, costs, task = case
    f = po.as_forest(model)
    for X in (Xt, Xv):
        # the same leaf in every tree: the leaf values the library adds are the IR's
        np.testing.assert_array_equal(_ir_tree_values(f, X), _per_tree_values(model, X))
        if task == "regression":
            np.testing.assert_allclose(f.predict(X), model.predict(X), rtol=TOL, atol=TOL)
            continue
        np.testing.assert_allclose(f.predict_proba(X), model.predict_proba(X), atol=TOL)
        np.testing.assert_allclose(f.decision_function(X), model.decision_function(X),
                                   rtol=TOL, atol=TOL)
        # rows whose winning class is decided: no tie between the two best raw scores
        # (summed in another order, a tie may break either way)
        raw = f.decision_function(X)
        if task == "binary":
            decided = np.abs(raw).min(axis=-1) > 1e-9
        else:
            top = np.sort(raw, axis=1)
            decided = top[:, -1] - top[:, -2] > 1e-9
        np.testing.assert_array_equal(f.predict(X)[decided], model.predict(X)[decided])


def test_gradient_boosting_keeps_its_trees_and_shapes():
    X, y = load_breast_cancer(return_X_y=True)
    gb = GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y)
    f = po.as_forest(gb)
    assert (f.n_trees, f.ensemble.link, f.value_width, f.split_dtype) == (4, "logistic", 1,
                                                                          "float32")
    # node for node as sklearn: the stage trees' node ids are the IR's local ids
    np.testing.assert_array_equal(f.apply(X), gb.apply(X)[:, :, 0].astype(int))
    rng = np.random.default_rng(0)
    Xm, ym = boosting_data(rng, "multiclass", 90, 3)
    gm = GradientBoostingClassifier(n_estimators=2, max_depth=2, random_state=0).fit(Xm, ym)
    fm = po.as_forest(gm)
    assert fm.n_trees == 6 and fm.round_size == 3
    assert fm.ensemble.tree_class.tolist() == [0, 1, 2, 0, 1, 2]


def test_hist_gradient_boosting_routes_missing_values_as_the_library():
    rng = np.random.default_rng(3)
    X, y = boosting_data(rng, "binary", 300, 4, nan_share=0.2)
    m = fit_boosted("hgb", "binary", X, y, 0, n_rounds=8)
    f = po.as_forest(m)
    assert f.split_dtype == "float64" and f.allow_nan
    Xn = X.copy()
    Xn[:, 0] = np.nan  # a column missing at prediction time only
    np.testing.assert_allclose(f.predict_proba(Xn), m.predict_proba(Xn), atol=TOL)


def test_hist_gradient_boosting_compares_in_float64():
    # values between two float32 numbers: float32 routing would send them the other way
    X = np.linspace(0, 1, 400)[:, None]
    y = (np.arange(400) % 7 > 3).astype(int)
    m = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    f = po.as_forest(m)
    thr = f.threshold[~f.is_leaf]
    probe = np.concatenate([thr, np.nextafter(thr, 2.0)])[:, None]
    np.testing.assert_allclose(f.predict_proba(probe), m.predict_proba(probe), atol=TOL)


@pytest.mark.parametrize("model, message", [
    (GradientBoostingClassifier(loss="exponential", n_estimators=2), "loss='exponential'"),
    (GradientBoostingRegressor(loss="huber", n_estimators=2), "loss='huber'"),
    (GradientBoostingRegressor(init=LinearRegression(), n_estimators=2), "init=LinearRegression"),
    (HistGradientBoostingRegressor(loss="poisson", max_iter=2), "loss='poisson'"),
    (HistGradientBoostingClassifier(categorical_features=[0], max_iter=2), "categorical"),
])
def test_unsupported_models_are_refused_by_name(model, message):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    y = (X[:, 1] > 1).astype(int) if hasattr(model, "predict_proba") else X[:, 1] + 1.0
    model.fit(X, y)
    with pytest.raises(ValueError, match=message):
        po.as_forest(model)


def test_unfitted_and_foreign_models_are_refused():
    with pytest.raises(NotFittedError, match="not fitted"):
        po.as_forest(HistGradientBoostingClassifier())
    with pytest.raises(TypeError, match="unsupported model LinearRegression.*HistGradient"):
        po.as_forest(LinearRegression())


def test_gradient_boosting_refuses_missing_values_like_the_library():
    X, y = load_breast_cancer(return_X_y=True)
    f = po.as_forest(GradientBoostingClassifier(n_estimators=2).fit(X, y))
    Xn = X[:3].copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        f.predict(Xn)
