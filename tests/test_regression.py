"""Regression forests end to end: the IR, the squared-error node loss, prediction,
export, persistence, lazy prediction and leaf refits.

The error term is checked against a brute-force walk of the pruned trees; the
solvers, budgets and baselines are in ``test_regression_solvers.py``, the
command line in ``test_regression_cli.py``.
"""

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor

import prune_opt as po
from prune_opt import FeatureCosts
from prune_opt.program._problem import close_under_parents
from tests.test_persistence import _METADATA, _apply, _paths, json_values


@st.composite
def regression_cases(draw, max_examples=50):
    """A fitted single-output sklearn regressor, train/validation data and costs."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n_features = draw(st.integers(2, 6))
    n = draw(st.integers(10, max_examples))
    X = rng.normal(size=(2 * n, n_features)).round(draw(st.sampled_from([0, 1, 3])))
    scale = draw(st.sampled_from([1e-3, 1.0, 250.0]))
    offset = draw(st.sampled_from([0.0, 1e4]))  # a large mean must not cost precision
    y = offset + scale * (X @ rng.normal(size=n_features) + rng.normal(scale=0.5, size=2 * n))
    kind = draw(st.sampled_from(["rf", "et", "dt", "xt"]))
    depth, trees = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    est = {"rf": lambda: RandomForestRegressor(n_estimators=trees, max_depth=depth,
                                               random_state=seed),
           "et": lambda: ExtraTreesRegressor(n_estimators=trees, max_depth=depth,
                                             random_state=seed),
           "dt": lambda: DecisionTreeRegressor(max_depth=depth, random_state=seed),
           "xt": lambda: ExtraTreeRegressor(max_depth=depth, random_state=seed)}[kind]()
    est.fit(X[:n], y[:n])
    own = rng.choice([0.0, 0.5, 1.0, 2.0, 7.3, 13.0], size=n_features)
    groups = None
    if n_features >= 3 and draw(st.booleans()):
        groups = {"g": (float(rng.choice([0.5, 3.0])), [0, 1])}
    lam = draw(st.sampled_from([0.0, 1e-4, 1e-3, 1e-2, 0.05, 0.3, 2.0]))
    return dict(est=est, X_train=X[:n], y_train=y[:n], X_val=X[n:], y_val=y[n:],
                costs=FeatureCosts(own, groups=groups), lam=lam, seed=seed)


def random_mask(forest, rng):
    """A random pruning (parent-closed split mask) of ``forest``."""
    return close_under_parents(forest, ~forest.is_leaf & (rng.random(forest.n_nodes) < 0.7))


def brute_force_error_term(est, mask, X, y, weights_per_tree):
    """(1/T) sum_t SSE_t / (N_t var(y)) by walking every pruned tree in Python."""
    trees = est.estimators_ if hasattr(est, "estimators_") else [est]
    pooled = np.sum(weights_per_tree, axis=0)
    mean = np.sum(pooled * y) / pooled.sum()
    var = np.sum(pooled * (y - mean) ** 2) / pooled.sum()
    X32, total, offset = np.asarray(X, dtype=np.float32), 0.0, 0
    for tree, w in zip(trees, weights_per_tree):
        tr = tree.tree_
        sse = 0.0
        for i in range(X.shape[0]):
            h = 0
            while tr.children_left[h] >= 0 and mask[offset + h]:
                go_left = X32[i, tr.feature[h]] <= tr.threshold[h]
                h = tr.children_left[h] if go_left else tr.children_right[h]
            sse += w[i] * (y[i] - tr.value[h, 0, 0]) ** 2
        total += sse / (w.sum() * var)
        offset += tr.node_count
    return total / len(trees)


# ------------------------------------------------------------------ IR
@pytest.mark.parametrize("cls", [RandomForestRegressor, ExtraTreesRegressor,
                                 DecisionTreeRegressor, ExtraTreeRegressor])
def test_forest_reads_regressors_as_node_means(cls):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(80, 3)), rng.normal(size=80)
    est = cls(max_depth=3, random_state=0).fit(X, y)
    f = po.as_forest(est)
    assert f.task == "regression" and f.classes_ is None and f.n_classes is None
    assert f.value.shape == (f.n_nodes, 1) and f.value_width == 1
    np.testing.assert_array_equal(f.predict(X), est.predict(X))
    assert "task='regression'" in repr(f)
    with pytest.raises(AttributeError, match="regression forest"):
        f.predict_proba(X)


def test_forest_from_arrays_regression_and_task_checks():
    stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
                 threshold=[0.5, 0, 0], value=[[1.0], [-2.0], [4.0]])
    f = po.Forest.from_arrays([stump], classes=None, n_features=1)
    np.testing.assert_array_equal(f.predict(np.array([[0.0], [1.0]])), [-2.0, 4.0])
    with pytest.raises(ValueError, match="one value per node"):
        po.Forest([dict(stump, value=[[1, 1]] * 3)], classes=None, n_features=1)
    with pytest.raises(ValueError, match="classes must be None"):
        po.Forest([stump], classes=[0, 1], n_features=1, task="regression")
    with pytest.raises(ValueError, match="task must be one of"):
        po.Forest([stump], classes=None, n_features=1, task="ranking")
    with pytest.raises(ValueError, match="finite"):
        po.Forest([dict(stump, value=[[1.0], [np.nan], [0.0]])], classes=None, n_features=1)


def test_multi_output_regressor_is_refused_with_the_fix():
    X = np.random.default_rng(0).normal(size=(30, 2))
    est = RandomForestRegressor(n_estimators=2, max_depth=2).fit(X, np.c_[X[:, 0], X[:, 1]])
    with pytest.raises(ValueError, match="multi-output.*one regressor per output"):
        po.as_forest(est)


# ------------------------------------------------------------------ error term
@given(case=regression_cases(), data=st.data())
@settings(max_examples=15)
def test_error_term_is_the_brute_force_normalised_mse(case, data):
    est, X, y = case["est"], case["X_val"], case["y_val"]
    problem = po.compile_problem(est, X, y, costs=case["costs"])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1)))
    ones = [np.ones(len(y))] * problem.n_trees
    for mask in (random_mask(problem.forest, rng), problem.forest.full_split_mask(),
                 np.zeros(problem.n_nodes, dtype=bool)):
        expected = brute_force_error_term(est, mask, X, y, ones)
        got = problem.evaluate(mask).error_term
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert problem.error_scale == pytest.approx(np.var(y), rel=1e-9)


@given(case=regression_cases(max_examples=30), data=st.data())
@settings(max_examples=10)
def test_in_bag_error_term_is_the_brute_force_bootstrap_mse(case, data):
    est = case["est"]
    Xt, yt = case["X_train"], case["y_train"]
    problem = po.compile_problem(est, case["X_val"], case["y_val"], costs=case["costs"],
                                 train=(Xt, yt))
    if hasattr(est, "estimators_") and getattr(est, "bootstrap", False):
        bags = [np.bincount(s, minlength=len(yt)).astype(float)
                for s in est.estimators_samples_]
    else:
        bags = [np.ones(len(yt))] * problem.n_trees
    mask = random_mask(problem.forest, np.random.default_rng(data.draw(st.integers(0, 99))))
    expected = brute_force_error_term(est, mask, Xt, yt, bags)
    assert problem.evaluate(mask).error_term == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_unpruned_in_bag_error_is_zero_for_fully_grown_trees():
    # every leaf of a fully grown tree predicts the mean of its in-bag examples
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(60, 3)), rng.normal(size=60)
    rf = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    problem = po.compile_problem(rf, X, y, train=(X, y))
    assert problem.evaluate(problem.forest.full_split_mask()).error_term == 0.0


def test_sample_weights_scale_the_error_and_the_variance():
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(50, 2)), rng.normal(size=50)
    tree = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    w = rng.integers(1, 4, size=50).astype(float)
    weighted = po.compile_problem(tree, X, y, sample_weight=w)
    repeated = po.compile_problem(tree, np.repeat(X, w.astype(int), axis=0),
                                  np.repeat(y, w.astype(int)))
    mask = random_mask(weighted.forest, rng)
    assert weighted.evaluate(mask).error_term == pytest.approx(
        repeated.evaluate(mask).error_term, rel=1e-12)


def test_constant_target_falls_back_to_the_plain_mse_with_a_warning():
    X = np.arange(20.0)[:, None]
    tree = DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0])
    y = np.full(20, 3.0)
    with pytest.warns(RuntimeWarning, match="constant.*plain mean squared error"):
        problem = po.compile_problem(tree, X, y)
    assert problem.error_scale == 1.0
    root_only = np.zeros(problem.n_nodes, dtype=bool)
    expected = np.mean((tree.tree_.value[0, 0, 0] - y) ** 2)
    assert problem.evaluate(root_only).error_term == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("y, err, match", [
    (np.array([1.0, np.nan] * 10), ValueError, "NaN or inf"),
    (np.array(["a", "b"] * 10), TypeError, "real numbers"),
    (np.ones((20, 2)), ValueError, "1-D"),
])
def test_bad_targets_are_refused_naming_y(y, err, match):
    X = np.arange(20.0)[:, None]
    tree = DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0])
    with pytest.raises(err, match=match):
        po.compile_problem(tree, X, y)


def test_classification_only_features_refuse_regression_forests():
    X = np.arange(40.0).reshape(20, 2)
    rf = RandomForestRegressor(n_estimators=2, max_depth=2, random_state=0).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="regression forest.*'squared_error'"):
        po.prune(rf, X, X[:, 0], lam=0.1, objective="brier")
    with pytest.raises(TypeError, match="client must be a dask"):  # regression is supported
        po.compile_problem(rf, X, X[:, 0], client=object())


# ------------------------------------------------------------------ predict, export, JSON
@given(case=regression_cases())
@settings(max_examples=15)
def test_predict_export_and_json_round_trip(case, tmp_path_factory):
    est, X = case["est"], np.vstack([case["X_train"], case["X_val"]])
    pruned = po.prune(est, case["X_val"], case["y_val"], costs=case["costs"], lam=case["lam"])
    pred = pruned.predict(X)
    assert pred.shape == (X.shape[0],) and not hasattr(pruned, "predict_proba")
    sk = pruned.to_sklearn()
    assert type(sk) is type(est)
    np.testing.assert_allclose(sk.predict(X), pred, rtol=1e-12, atol=0)
    path = tmp_path_factory.mktemp("json") / "r.json"
    pruned.save(path)
    loaded = po.load(path)
    assert loaded.task == "regression"
    np.testing.assert_array_equal(loaded.predict(X), pred)
    np.testing.assert_array_equal(loaded.acquisition_cost(X), pruned.acquisition_cost(X))
    rebuilt = loaded.to_sklearn()  # no source estimator: rebuilt from the arrays, same class
    assert type(rebuilt) is type(est)
    np.testing.assert_allclose(rebuilt.predict(X), pred, rtol=1e-12, atol=0)
    assert pruned.score(X, sk.predict(X)) == 1.0


def test_score_is_r2_like_sklearn():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(100, 3)), rng.normal(size=100)
    rf = RandomForestRegressor(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    whole = po.PrunedForest(po.as_forest(rf), po.as_forest(rf).full_split_mask())
    assert whole.score(X, y) == pytest.approx(rf.score(X, y), rel=1e-12)
    with pytest.raises(AttributeError, match="regressor.*use predict"):
        whole.predict_proba(X)


def test_missing_values_route_and_save(tmp_path):
    from prune_opt.datasets import load_dataset

    d = load_dataset("heart-severity")
    assert np.isnan(d.X).any()
    rf = RandomForestRegressor(n_estimators=6, random_state=0).fit(d.X[:150], d.y[:150])
    pruned = po.prune(rf, d.X[150:], d.y[150:], costs=d.costs, lam=1e-3)
    np.testing.assert_array_equal(pruned.to_sklearn().predict(d.X), pruned.predict(d.X))
    pruned.save(tmp_path / "h.json")
    np.testing.assert_array_equal(po.load(tmp_path / "h.json").predict(d.X),
                                  pruned.predict(d.X))


def _saved(tmp_path):
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(40, 2)), rng.normal(size=40)
    tree = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, y)
    pruned = po.prune(tree, X, y, lam=0.01)
    pruned.save(tmp_path / "r.json")
    return json.loads((tmp_path / "r.json").read_text())


@pytest.mark.parametrize("mutate, match", [
    (lambda d: d.update(classes=[0, 1], classes_kind="int"), "regression forest has no class"),
    (lambda d: d.update(estimator="RandomForestClassifier"), "does not match task"),
    (lambda d: d.update(task="ranking"), "task must be"),
    (lambda d: d.update(task=["regression"]), "task must be"),
    (lambda d: d.update(task="classification"), "does not match task"),
    (lambda d: d["trees"][0].update(value=[[1.0, 2.0]] * len(d["trees"][0]["value"])),
     "rows of 1 finite"),
    (lambda d: d["trees"][0]["value"][0].__setitem__(0, "x"), "finite numbers"),
])
def test_regression_file_schema_violations_are_refused(tmp_path, mutate, match):
    doc = _saved(tmp_path)
    assert doc["task"] == "regression" and "classes" not in doc
    mutate(doc)
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=match):
        po.load(tmp_path / "bad.json")


def test_files_without_a_task_load_as_classification(tmp_path):
    from sklearn.datasets import load_iris
    from sklearn.tree import DecisionTreeClassifier

    X, y = load_iris(return_X_y=True)
    pruned = po.prune(DecisionTreeClassifier(max_depth=2).fit(X, y), X, y, lam=0.01)
    pruned.save(tmp_path / "c.json")
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc.pop("task") == "classification"
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = po.load(tmp_path / "old.json")
    assert old.task == "classification"
    np.testing.assert_array_equal(old.predict_proba(X), pruned.predict_proba(X))
    del doc["classes"]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="missing field 'classes'"):
        po.load(tmp_path / "bad.json")


# ------------------------------------------------------------------ lazy prediction
@given(case=regression_cases())
@settings(max_examples=15)
def test_lazy_prediction_pays_acquisition_cost_once_per_unit(case):
    est, X = case["est"], case["X_val"]
    pruned = po.prune(est, X, case["y_val"], costs=case["costs"], lam=case["lam"])
    fetched = np.zeros((X.shape[0], pruned.costs.n_units), dtype=int)

    def acquire(rows, unit):
        fetched[rows, unit.index] += 1
        return X[np.ix_(rows, unit.features)] if unit.features else None

    out = po.LazyPredictor(pruned, acquire).predict_proba(np.full(X.shape, np.nan))
    assert fetched.max(initial=0) <= 1
    np.testing.assert_array_equal(out.values, pruned.predict(X))
    np.testing.assert_allclose(out.cost_paid, pruned.acquisition_cost(X), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(fetched @ pruned.costs.unit_costs, out.cost_paid, atol=1e-12)
    assert out.classes is None
    with pytest.raises(AttributeError, match="use .values"):
        getattr(out, "labels")  # noqa: B009 (the attribute read is the test)
    np.testing.assert_array_equal(pruned.predict(np.full(X.shape, np.nan), acquire=acquire),
                                  pruned.predict(X))


# ------------------------------------------------------------------ refit
def test_refit_counts_gives_leaf_means_of_the_refit_data():
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(120, 3)), rng.normal(size=120)
    rf = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X[:60], y[:60])
    pruned = po.prune(rf, X[60:], y[60:], lam=0.02)
    same = po.refit_leaves(pruned, None, None, train=(X[:60], y[:60]))
    np.testing.assert_allclose(same.predict(X), pruned.predict(X), rtol=1e-12)
    refit = po.refit_leaves(pruned, X[60:], y[60:])
    f = refit.forest
    for t in range(f.n_trees):  # each reached pruned leaf predicts its rows' mean
        leaves = pruned._pruned_leaves(X[60:], t)[0] + f.node_offset[t]
        for h in np.unique(leaves):
            assert f.value[h, 0] == pytest.approx(y[60:][leaves == h].mean(), rel=1e-12)
    np.testing.assert_array_equal(refit.acquisition_cost(X), pruned.acquisition_cost(X))
    glob = po.refit_leaves(pruned, X[60:], y[60:], method="global", smoothing=1.0)
    assert glob.score(X[60:], y[60:]) >= pruned.score(X[60:], y[60:]) - 1e-12


@pytest.fixture(scope="module")
def regression_file(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("saved")
    doc = _saved(tmp)
    return json.dumps(doc), po.load(tmp / "r.json")


@given(data=st.data())
@settings(max_examples=60)
def test_every_mutation_of_a_regression_file_loads_identically_or_raises(
        regression_file, tmp_path_factory, data):
    """A mutated regression file raises ValueError naming the problem, or loads into a
    valid regression forest: identical predictions when only metadata changed."""
    tmp = tmp_path_factory.mktemp("mut")
    doc, original = json.loads(regression_file[0]), regression_file[1]
    X = np.random.default_rng(4).normal(size=(40, 2))
    target = data.draw(st.sampled_from([p for p in _paths(doc) if p]))
    op = data.draw(st.sampled_from(["replace", "delete", "duplicate", "insert"]))
    _apply(doc, target, op, data.draw(json_values))
    (tmp / "m.json").write_text(json.dumps(doc))
    try:
        loaded = po.load(tmp / "m.json")
    except ValueError as exc:
        assert str(exc).startswith("cannot load pruned forest")
        return
    loaded.forest.check_split_mask(loaded.split_mask)
    assert loaded.task == "regression" and not hasattr(loaded, "predict_proba")
    pred = loaded.predict(X)
    assert pred.shape == (40,) and np.isfinite(pred).all()
    if target[0] in _METADATA:
        np.testing.assert_array_equal(pred, original.predict(X))
        np.testing.assert_array_equal(loaded.acquisition_cost(X), original.acquisition_cost(X))


# ------------------------------------------------------------------ extreme target scales
def _scaled_forest(forest, factor):
    """The same trees with every node mean multiplied by ``factor``."""
    trees = []
    for t in range(forest.n_trees):
        sl = forest.tree_slice(t)
        left, right = forest.left[sl], forest.right[sl]
        trees.append(dict(left=np.where(left >= 0, left - sl.start, -1),
                          right=np.where(right >= 0, right - sl.start, -1),
                          feature=forest.feature[sl], threshold=forest.threshold[sl],
                          value=forest.value[sl] * factor))
    return po.Forest(trees, classes=None, n_features=forest.n_features)


@pytest.mark.parametrize("factor", [1e160, 3e300, 1e-160, 1e-300])
def test_extreme_target_scales_keep_the_normalised_error(factor):
    """Targets near 1e160 overflowed the variance (a root-only forest, a wrong "constant
    targets" warning); the normalised error term is scale-free, so it must equal the
    brute-force one of the unscaled targets."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 3))
    y = X[:, 0] + 0.3 * rng.normal(size=150)
    est = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    big = _scaled_forest(po.as_forest(est), factor)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        problem = po.compile_problem(big, X, y * factor, lam=0.0)
        pruned = po.prune(big, X, y * factor, lam=0.001)
    ones = [np.ones(len(y))] * problem.n_trees
    rng2 = np.random.default_rng(1)
    for mask in (random_mask(problem.forest, rng2), problem.forest.full_split_mask(),
                 np.zeros(problem.n_nodes, dtype=bool)):
        expected = brute_force_error_term(est, mask, X, y, ones)
        assert problem.evaluate(mask).error_term == pytest.approx(expected, rel=1e-9)
    small = po.prune(po.as_forest(est), X, y, lam=0.001)
    assert pruned.n_splits == small.n_splits > 0
    np.testing.assert_array_equal(pruned.split_mask, small.split_mask)
    assert problem.error_scale == pytest.approx(float(np.var(y)) * factor * factor, rel=1e-9)


@pytest.mark.parametrize("level", [1e200, -3e250, 1e-200])
def test_constant_extreme_targets_fall_back_without_nan(level):
    X = np.arange(40.0).reshape(20, 2)
    rf = RandomForestRegressor(n_estimators=2, max_depth=2, random_state=0).fit(X, X[:, 0])
    big = _scaled_forest(po.as_forest(rf), 0.0)  # every node predicts 0
    y = np.full(20, level)
    with pytest.warns(RuntimeWarning, match="constant"):
        problem = po.compile_problem(big, X, y)
    assert np.isfinite(problem.node_error).all() and (problem.node_error > 0).all()


@pytest.mark.parametrize("method", ["counts", "global"])
@pytest.mark.parametrize("factor", [1e160, 1e-160])
def test_refit_of_extreme_targets_is_the_scaled_refit(method, factor):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 3))
    y = X[:, 0] + 0.3 * rng.normal(size=120)
    est = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X[:60], y[:60])
    small_f = po.as_forest(est)
    big_f = _scaled_forest(small_f, factor)
    small = po.refit_leaves(po.PrunedForest(small_f, small_f.full_split_mask()), X[60:],
                            y[60:], method=method, smoothing=1.0)
    big = po.refit_leaves(po.PrunedForest(big_f, big_f.full_split_mask()), X[60:],
                          y[60:] * factor, method=method, smoothing=1.0)
    np.testing.assert_allclose(big.predict(X) / factor, small.predict(X), rtol=1e-9)
    assert not np.allclose(small.predict(X), po.PrunedForest(
        small_f, small_f.full_split_mask()).predict(X))  # the refit changed something


@pytest.mark.parametrize("factor", [1e160, 1e-160])
def test_score_of_extreme_targets_is_the_unscaled_r2(factor):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 3))
    y = X[:, 0] + 0.2 * rng.normal(size=100)
    est = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    small_f = po.as_forest(est)
    big_f = _scaled_forest(small_f, factor)
    small = po.PrunedForest(small_f, small_f.full_split_mask()).score(X, y)
    big = po.PrunedForest(big_f, big_f.full_split_mask()).score(X, y * factor)
    assert big == pytest.approx(small, rel=1e-9) and small == pytest.approx(est.score(X, y))

# ------------------------------------------------------------------ squared_error objective
@given(case=regression_cases())
@settings(max_examples=8, deadline=None)
def test_squared_error_objective_under_a_budget_is_one_minus_r2_and_fits(case):
    """fit_budget(regressor, objective="squared_error") meets the budget and its
    reported loss is 1 - R^2 of the returned forest's prediction on (X, y)."""
    est, X, y = case["est"], case["X_val"], case["y_val"]
    full = po.acquisition_cost(est, X, case["costs"]).mean()
    budget = 0.5 * full
    pf = po.fit_budget(est, X, y, costs=case["costs"], budget=budget,
                       objective="squared_error", time_limit=5)
    assert pf.average_cost(X) <= budget * (1 + 1e-10)
    pred = pf.predict(X)
    var = np.var(y)
    expected = np.mean((pred - y) ** 2) / var if var > 0 else np.mean((pred - y) ** 2)
    assert pf.solve_info["ensemble_loss"] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # never worse than the root-only forest (a fitting pruning)
    f = po.Forest.from_sklearn(est)
    root_pred = po.PrunedForest(f, np.zeros(f.n_nodes, dtype=bool)).predict(X)
    root = np.mean((root_pred - y) ** 2) / (var if var > 0 else 1.0)
    assert pf.solve_info["ensemble_loss"] <= root * (1 + 1e-9) + 1e-12
