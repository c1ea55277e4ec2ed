"""Bad input gets a clear, early error naming the argument (never an IndexError,
KeyError or a broadcasting error from deep inside)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import prune_opt as po
from prune_opt import FeatureCosts, Forest
from prune_opt._validation import (
    FINITE_NONNEG,
    POSITIVE_INT,
    StrOptions,
    check_param,
    check_params,
)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    return X, y, rf


def _prune(iris, **kw):
    X, y, rf = iris
    args = dict(forest=rf, X=X, y=y, lam=0.01, solver="highs")
    args.update(kw)
    forest, X, y = args.pop("forest"), args.pop("X"), args.pop("y")
    return po.prune(forest, X, y, **args)


# ---------------------------------------------------------------- forest
@pytest.mark.parametrize("est", [RandomForestClassifier(), DecisionTreeClassifier()])
def test_unfitted_forest(iris, est):
    with pytest.raises(NotFittedError, match="fit"):
        _prune(iris, forest=est)


def test_unsupported_estimator_lists_supported(iris):
    X, y, _ = iris
    with pytest.raises(TypeError, match="RandomForestClassifier"):
        _prune(iris, forest=LogisticRegression().fit(X, y))


@pytest.mark.parametrize("cls", [DecisionTreeRegressor, RandomForestRegressor])
def test_multi_output_regressors_refused(iris, cls):
    X, y, _ = iris
    with pytest.raises(ValueError, match="multi-output"):
        _prune(iris, forest=cls(max_depth=2).fit(X, np.c_[y, y]))


def test_multi_output_refused(iris):
    X, y, _ = iris
    est = DecisionTreeClassifier(max_depth=2).fit(X, np.c_[y, y])
    with pytest.raises(ValueError, match="multi-output"):
        _prune(iris, forest=est)


def test_pruned_forest_is_not_a_forest(iris):
    pruned = _prune(iris)
    with pytest.raises(TypeError, match="pruned.forest"):
        _prune(iris, forest=pruned)


# ---------------------------------------------------------------- X
def test_wrong_feature_count(iris):
    X, y, _ = iris
    with pytest.raises(ValueError, match="X has 3 features.*fitted on 4"):
        _prune(iris, X=X[:, :3])


def test_one_dimensional_X(iris):
    X, y, _ = iris
    with pytest.raises(ValueError, match="2-D"):
        _prune(iris, X=X[0], y=y[:1])


def test_empty_X(iris):
    X, y, _ = iris
    with pytest.raises(ValueError, match="no rows"):
        _prune(iris, X=X[:0], y=y[:0])


def test_inf_in_X(iris):
    X, y, _ = iris
    Xb = X.copy()
    Xb[3, 1] = np.inf
    with pytest.raises(ValueError, match="X contains inf"):
        _prune(iris, X=Xb)


def test_non_numeric_X(iris):
    X, y, _ = iris
    Xb = X.astype(object)
    Xb[0, 0] = "abc"
    with pytest.raises(TypeError, match="X must be numeric"):
        _prune(iris, X=Xb)


def test_nan_refused_when_forest_cannot_route_it():
    stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
                 threshold=[0.5, 0, 0], value=[[2, 2], [2, 0], [0, 2]])
    f = Forest([stump], classes=[0, 1], n_features=1)
    with pytest.raises(ValueError, match="NaN"):
        po.prune(f, np.array([[np.nan], [1.0]]), [0, 1], lam=0.1)


def test_pandas_columns_are_matched_by_name():
    """A frame with the forest's columns in another order is read by name (the same
    pruning and predictions as in the right order); a missing, unknown or repeated
    column is refused, naming it."""
    pd = pytest.importorskip("pandas")
    X, y = load_iris(return_X_y=True, as_frame=True)
    rf = RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y)
    pruned = po.prune(rf, X, y, lam=0.01)
    shuffled = X[X.columns[[2, 0, 3, 1]]]
    again = po.prune(rf, shuffled, y, lam=0.01)
    assert np.array_equal(again.split_mask, pruned.split_mask)
    np.testing.assert_array_equal(pruned.predict_proba(shuffled), pruned.predict_proba(X))
    np.testing.assert_array_equal(pruned.acquisition_cost(shuffled), pruned.acquisition_cost(X))
    renamed = X.rename(columns={X.columns[1]: "petal size"})
    with pytest.raises(ValueError, match=r"lacks \['sepal width \(cm\)'\]; has columns the "
                                         r"forest was not fitted on \['petal size'\]"):
        pruned.predict(renamed)
    with pytest.raises(ValueError, match="repeats"):
        pruned.predict(pd.concat([X.iloc[:, :3], X.iloc[:, :1]], axis=1))


# ---------------------------------------------------------------- y
def test_wrong_label_count(iris):
    X, y, _ = iris
    with pytest.raises(ValueError, match="y has 10 labels for 150"):
        _prune(iris, y=y[:10])


def test_unknown_labels(iris):
    X, y, _ = iris
    yb = y.copy()
    yb[0] = 7
    with pytest.raises(ValueError, match=r"labels \[7\] unknown"):
        _prune(iris, y=yb)


def test_two_dimensional_y(iris):
    X, y, _ = iris
    with pytest.raises(ValueError, match="y must be 1-D"):
        _prune(iris, y=np.c_[y, y])


# ---------------------------------------------------------------- costs
@pytest.mark.parametrize("costs, match", [
    ([1, 1, -1, 1], "non-negative"),
    ([1, 1, np.nan, 1], "NaN"),
    ([1, 1, np.inf, 1], "finite"),
    ([1, 2, 3], "costs cover 3 features but the forest was fitted on 4"),
    ([[1, 2], [3, 4]], "1-D"),
    ("cheap", "costs must be"),
])
def test_bad_costs(iris, costs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        _prune(iris, costs=costs)


def test_cost_mapping_needs_names():
    with pytest.raises(ValueError, match="feature_names is required"):
        FeatureCosts({"a": 1.0})


def test_cost_mapping_unknown_names():
    with pytest.raises(ValueError, match="unknown features"):
        FeatureCosts({"a": 1.0, "zz": 2.0}, feature_names=["a", "b"])


def test_cost_mapping_missing_feature():
    with pytest.raises(ValueError, match=r"no cost given for features \['b'\]"):
        FeatureCosts({"a": 1.0}, feature_names=["a", "b"])


def test_overlapping_groups():
    with pytest.raises(ValueError, match="groups must not overlap"):
        FeatureCosts([1, 1, 1], groups={"g1": (1.0, [0, 1]), "g2": (2.0, [1, 2])})


def test_requires_unknown_feature():
    with pytest.raises(ValueError, match="unknown feature"):
        FeatureCosts({"a": 1.0}, requires={"b": ["zz"]}, feature_names=["a", "b"])


def test_requires_cycle():
    with pytest.raises(ValueError, match="cycle"):
        FeatureCosts([1, 1], requires={0: [1], 1: [0]})


def test_group_cost_negative():
    with pytest.raises(ValueError, match="non-negative"):
        FeatureCosts([1, 1], groups={"g": (-1.0, [0])})


def test_costs_names_must_match_forest():
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=2, max_depth=2).fit(X, y)
    fc = FeatureCosts([1, 2, 3, 4], feature_names=["a", "b", "c", "d"])
    f = Forest.from_sklearn(rf)
    f.feature_names = ["a", "b", "d", "c"]
    with pytest.raises(ValueError, match="do not match"):
        po.prune(f, X, y, costs=fc, lam=0.1)


# ---------------------------------------------------------------- scalars & options
@pytest.mark.parametrize("kw, exc, match", [
    (dict(lam=-1.0), ValueError, "lam must be"),
    (dict(lam=float("nan")), ValueError, "lam must be"),
    (dict(lam="big"), TypeError, "lam must be a finite non-negative real number, got .big."),
    (dict(depth_cost=-0.5), ValueError, "depth_cost"),
    (dict(time_limit=-1.0), ValueError, "time_limit"),
    (dict(solver="gurobi-ultra"), ValueError, "installed solvers: .*highs"),
    (dict(solver=3), TypeError, "solver must be a name"),
    (dict(solver_options={"methd": "highs-ipm"}), ValueError, "did you mean 'method'"),
    (dict(solver_options=[1]), TypeError, "solver_options must be a dict"),
    (dict(train=(1, 2, 3)), TypeError, "train must be a pair"),
    (dict(sample_weight=[1.0, 2.0]), ValueError, "sample_weight must have shape"),
])
def test_bad_scalars_and_options(iris, kw, exc, match):
    with pytest.raises(exc, match=match):
        _prune(iris, **kw)


def test_negative_budget(iris):
    X, y, rf = iris
    with pytest.raises(ValueError, match="budget"):
        po.compile_problem(rf, X, y, budget=-3.0)


def test_bad_chunk_size(iris):
    X, y, rf = iris
    with pytest.raises(ValueError, match="chunk_size"):
        po.compile_problem(rf, X, y, chunk_size=0)


def test_train_must_be_the_training_data(iris):
    X, y, rf = iris
    with pytest.raises(ValueError, match="fitted on 150"):
        _prune(iris, train=(X[:100], y[:100]))


def test_invalid_split_mask(iris):
    X, y, rf = iris
    f = Forest.from_sklearn(rf)
    mask = np.zeros(f.n_nodes, bool)
    child = f.left[0]
    if child >= 0 and f.left[child] >= 0:
        mask[child] = True  # split below a cut root
        with pytest.raises(ValueError, match="closed under parents"):
            po.PrunedForest(f, mask)
    with pytest.raises(ValueError, match="shape"):
        po.PrunedForest(f, mask[:-1])


def test_malformed_forest_arrays():
    with pytest.raises(ValueError, match="exactly one child"):
        Forest([dict(left=[1, -1], right=[-1, -1], feature=[0, -1], threshold=[0, 0],
                     value=[[1, 1], [1, 0]])], classes=[0, 1], n_features=1)
    with pytest.raises(ValueError, match="value has 3 class columns"):
        Forest([dict(left=[-1], right=[-1], feature=[-1], threshold=[0],
                     value=[[1, 1, 1]])], classes=[0, 1], n_features=1)


def test_predict_on_wrong_width(iris):
    X, y, _ = iris
    pruned = _prune(iris)
    with pytest.raises(ValueError, match="features"):
        pruned.predict(X[:, :2])
    with pytest.raises(ValueError, match="features"):
        pruned.acquisition_cost(X[:, :2])


# ---------------------------------------------------------------- labels (every entry)
def test_column_vector_y_is_raveled_with_a_warning(iris):
    # regression: score(X, y.reshape(-1, 1)) broadcast to (n, n) and gave a wrong accuracy
    X, y, _ = iris
    pruned = _prune(iris)
    with pytest.warns(DataConversionWarning, match="column vector"):
        col = pruned.score(X, y.reshape(-1, 1))
    assert col == pruned.score(X, y)
    with pytest.warns(DataConversionWarning, match="y is a column vector"):
        p2 = _prune(iris, y=y.reshape(-1, 1))
    assert np.array_equal(p2.split_mask, pruned.split_mask)


def test_score_refuses_wrong_length_and_unknown_labels(iris):
    X, y, _ = iris
    pruned = _prune(iris)
    with pytest.raises(ValueError, match="y has 149 labels for 150 examples"):
        pruned.score(X, y[:-1])
    with pytest.raises(ValueError, match=r"string labels.*classes are numbers \[0, 1, 2\]"):
        pruned.score(X, y.astype(str))
    with pytest.raises(ValueError, match=r"classes are numbers \[0, 1, 2\]"):
        _prune(iris, y=y.astype(str))


def test_tradeoff_curve_checks_y_eval_before_solving(iris):
    X, y, rf = iris
    with pytest.raises(ValueError, match="y_eval has 10 labels for 150 examples"):
        po.tradeoff_curve(rf, X, y, lams=[0.0], X_eval=X, y_eval=y[:10])
    with pytest.warns(DataConversionWarning, match="y_eval is a column vector"):
        col = po.tradeoff_curve(rf, X, y, lams=[0.0], X_eval=X, y_eval=y.reshape(-1, 1))
    flat = po.tradeoff_curve(rf, X, y, lams=[0.0], X_eval=X, y_eval=y)
    assert list(col["accuracy_eval"]) == list(flat["accuracy_eval"])


@st.composite
def label_shapes(draw, n=150):
    shape = draw(st.sampled_from([(n,), (n, 1), (n, 2), (1, n), (n - 1,), (n + 1,), (),
                                  (n, 1, 1), (0,)]))
    return shape


@settings(max_examples=30, deadline=None)
@given(label_shapes(), st.sampled_from(["int", "float", "str", "object-str"]))
def test_any_label_shape_is_accepted_exactly_or_refused_clearly(iris_fixed, shape, kind):
    X, y, pruned, expected = iris_fixed
    base = np.resize(y, int(np.prod(shape))).reshape(shape)
    labels = {"int": base, "float": base.astype(float), "str": base.astype(str),
              "object-str": base.astype(str).astype(object)}[kind]
    good = shape in ((150,), (150, 1)) and kind in ("int", "float")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataConversionWarning)
        if shape == (150, 1):
            warnings.simplefilter("ignore", DataConversionWarning)
        if good:
            assert pruned.score(X, labels) == expected
        else:
            with pytest.raises(ValueError, match="y "):
                pruned.score(X, labels)


@pytest.fixture(scope="module")
def iris_fixed(iris):
    X, y, rf = iris
    pruned = _prune(iris)
    return X, y, pruned, float(np.mean(pruned.predict(X) == y))


def test_string_labels_of_a_string_forest(iris):
    X, y, _ = iris
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    rf = RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, names)
    pruned = po.prune(rf, X, names, lam=0.0, solver="highs")
    assert pruned.score(X, names) == np.mean(rf.predict(X) == names)
    assert pruned.score(X, list(names)) == pruned.score(X, names)
    with pytest.raises(ValueError, match=r"labels \['dahlia'\] unknown"):
        pruned.score(X, np.where(np.arange(150) == 3, "dahlia", names))
    with pytest.raises(ValueError, match="not comparable|classes are"):
        pruned.score(X, y)


# ---------------------------------------------------------------- sparse / complex X
def test_small_sparse_X_is_routed_like_dense(iris):
    X, y, rf = iris
    dense = _prune(iris)
    for fmt in (sp.csr_matrix, sp.csc_matrix, sp.coo_array):
        pruned = _prune(iris, X=fmt(X))
        assert np.array_equal(pruned.split_mask, dense.split_mask)
        assert np.array_equal(pruned.predict_proba(fmt(X)), dense.predict_proba(X))


def test_large_sparse_X_is_refused_saying_it_is_sparse(iris, monkeypatch):
    import prune_opt._validation as v

    X, y, rf = iris
    monkeypatch.setattr(v, "MAX_DENSE_FROM_SPARSE", 100)
    with pytest.raises(ValueError, match=r"X is a scipy sparse matrix of shape \(150, 4\)"):
        _prune(iris, X=sp.csr_matrix(X))


@pytest.mark.parametrize("make", [lambda X: X + 0j, lambda X: sp.csr_matrix(X + 1j)])
def test_complex_X_is_refused_not_cast(iris, make):
    X, y, _ = iris
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way
        with pytest.raises(TypeError, match="X is complex"):
            _prune(iris, X=make(X))


# ---------------------------------------------------------------- declarative checks
@pytest.mark.parametrize("value, constraints, exc, match", [
    (-1.0, [FINITE_NONNEG], ValueError, "x must be a finite non-negative real number, got -1.0"),
    (np.nan, [FINITE_NONNEG], ValueError, "finite non-negative"),
    (np.inf, [FINITE_NONNEG], ValueError, "finite non-negative"),
    (True, [FINITE_NONNEG], TypeError, "got True"),
    ("1", [FINITE_NONNEG, None], TypeError, "real number or None, got '1'"),
    (0, [POSITIVE_INT], ValueError, "x must be an integer in \\[1, inf\\), got 0"),
    (2.0, [POSITIVE_INT], TypeError, "integer"),
    ("fast", [StrOptions({"dp", "networkx"})], ValueError, r"one of \['dp', 'networkx'\]"),
    (3, [StrOptions({"dp"})], TypeError, "one of"),
])
def test_check_param_errors(value, constraints, exc, match):
    with pytest.raises(exc, match=match):
        check_param(value, "x", constraints)


@given(st.one_of(st.floats(), st.integers(-10**6, 10**6), st.booleans(), st.none(),
                 st.text(max_size=3)))
def test_check_param_accepts_exactly_the_finite_nonnegative_reals(value):
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
          and np.isfinite(value) and value >= 0)
    if ok:
        assert check_param(value, "x", [FINITE_NONNEG]) == float(value)
    else:
        with pytest.raises((TypeError, ValueError), match="x must be"):
            check_param(value, "x", [FINITE_NONNEG])


def test_check_params_names_key_and_suggests():
    spec = {"max_iter": [POSITIVE_INT], "gap_tol": [FINITE_NONNEG]}
    assert check_params({"max_iter": np.int64(5)}, spec, name="opts") == {"max_iter": 5}
    with pytest.raises(ValueError, match=r"opts\['gap_tol'\] must be a finite non-negative"):
        check_params({"gap_tol": -1}, spec, name="opts")
    with pytest.raises(ValueError, match="did you mean 'gap_tol'"):
        check_params({"gap_tl": 1}, spec, name="opts")
    with pytest.raises(TypeError, match="opts must be a dict"):
        check_params([1], spec, name="opts")
