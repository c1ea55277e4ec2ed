"""Hostile inputs to lazy prediction: callbacks that misbehave, partial DataFrames, costs.

Every case either predicts exactly what ``PrunedForest.predict_proba`` gives on
the full matrix and charges exactly the units fetched, or fails at once with a
message that names the unit or argument.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po

NAMES = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def case():
    """A pruned forest over named features with a shared group and a derived feature."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] + X[:, 3] > 0).astype(int)
    df = pd.DataFrame(X, columns=NAMES)
    rf = RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0).fit(df, y)
    fc = po.FeatureCosts({"a": 1, "b": 2, "c": 3}, groups={"g": (5, ["c", "d"])},
                         requires={"d": ["a"]}, feature_names=NAMES)
    return X, df, po.prune(rf, df, y, costs=fc, lam=0.001)


def _source(X):
    def acquire(rows, unit):
        return X[np.ix_(rows, list(unit.features))] if unit.features else None
    return acquire


def _unknown(n):
    return np.full((n, 4), np.nan)


# ------------------------------------------------------------ callback results
RESULT_FORMS = {
    "2-D array": lambda v, rows: v,
    "1-D array": lambda v, rows: v[:, 0],
    "list": lambda v, rows: v[:, 0].tolist(),
    "float32": lambda v, rows: v.astype(np.float32),
    "Series indexed by rows": lambda v, rows: pd.Series(v[:, 0], index=rows),
    "Series with a fresh index": lambda v, rows: pd.Series(v[:, 0]),
    "DataFrame indexed by rows": lambda v, rows: pd.DataFrame(v, index=rows),
}


@pytest.mark.parametrize("form", list(RESULT_FORMS))
def test_every_accepted_result_form_predicts_like_the_full_matrix(case, form):
    X, df, pruned = case

    def acquire(rows, unit):
        if not unit.features:
            return None
        return RESULT_FORMS[form](X[np.ix_(rows, list(unit.features))], rows)

    out = po.LazyPredictor(pruned, acquire).predict_proba(_unknown(len(X)))
    np.testing.assert_array_equal(out.proba, pruned.predict_proba(df))
    np.testing.assert_allclose(out.cost_paid, pruned.acquisition_cost(df), rtol=0, atol=1e-12)


@given(seed=st.integers(0, 2**32 - 1))
def test_a_series_in_another_row_order_is_matched_by_label(case, seed):
    """A data source returning the requested rows in its own order (indexed by row) must
    not be read by position."""
    X, df, pruned = case
    rng = np.random.default_rng(seed)

    def acquire(rows, unit):
        if not unit.features:
            return None
        order = rng.permutation(rows.size)
        return pd.Series(X[rows[order], unit.features[0]], index=rows[order])

    out = po.LazyPredictor(pruned, acquire).predict_proba(_unknown(len(X)))
    np.testing.assert_array_equal(out.proba, pruned.predict_proba(df))


BAD_RESULTS = {
    "complex": (lambda v, rows: v + 1j, TypeError, "complex"),
    "masked": (lambda v, rows: np.ma.masked_array(v, mask=True), TypeError, "masked"),
    "strings": (lambda v, rows: np.array(["x"] * len(rows)), TypeError, "non-numeric"),
    "scalar": (lambda v, rows: 1.0, ValueError, "shape"),
    "one row short": (lambda v, rows: v[:-1], ValueError, "shape"),
    "transposed": (lambda v, rows: v.T if len(rows) > 1 else np.zeros((1, 2)), ValueError,
                   "shape"),
    "inf": (lambda v, rows: np.full_like(v, np.inf), ValueError, "inf"),
    "None for a feature": (lambda v, rows: None, ValueError, "None"),
    "Series repeating a row": (
        lambda v, rows: pd.Series(v[:, 0], index=np.r_[rows[1:], rows[1]])
        if len(rows) > 1 else np.zeros((1, 2)), ValueError, "unit"),
}


@pytest.mark.parametrize("name", list(BAD_RESULTS))
def test_a_bad_callback_result_is_refused_naming_the_unit(case, name):
    X, _, pruned = case
    form, exc, words = BAD_RESULTS[name]

    def acquire(rows, unit):
        if not unit.features:
            return None
        return form(X[np.ix_(rows, list(unit.features))], rows)

    with pytest.raises(exc, match=words):
        po.LazyPredictor(pruned, acquire).predict(_unknown(len(X)))


def test_an_exception_in_the_callback_propagates_unchanged(case):
    _, _, pruned = case

    def acquire(rows, unit):
        raise KeyError("lab system down")

    with pytest.raises(KeyError, match="lab system down"):
        pruned.predict(_unknown(3), acquire=acquire)


def test_the_callback_gets_its_own_copy_of_the_rows(case):
    X, df, pruned = case
    inner = _source(X)

    def vandal(rows, unit):
        values = inner(rows, unit)
        rows[:] = 0  # must not redirect where the values are stored
        return values

    np.testing.assert_array_equal(pruned.predict(_unknown(len(X)), acquire=vandal),
                                  pruned.predict(df))


def test_a_group_unit_may_return_none_or_an_empty_block_but_not_values(case):
    X, df, pruned = case
    for empty in (None, lambda rows: np.empty((rows.size, 0))):
        def acquire(rows, unit, empty=empty):
            if unit.features:
                return X[np.ix_(rows, list(unit.features))]
            return None if empty is None else empty(rows)
        np.testing.assert_array_equal(pruned.predict(_unknown(len(X)), acquire=acquire),
                                      pruned.predict(df))

    def chatty(rows, unit):
        return X[rows, unit.features[0]] if unit.features else np.ones(rows.size)

    with pytest.raises(ValueError, match="group:g"):
        pruned.predict(_unknown(len(X)), acquire=chatty)


# ------------------------------------------------------------ X given to the predictor
@given(order=st.permutations(NAMES), keep=st.sets(st.sampled_from(NAMES)),
       perm_seed=st.integers(0, 2**32 - 1))
def test_any_subset_and_order_of_columns_and_rows_predicts_the_same(case, order, keep,
                                                                    perm_seed):
    """Known columns in any order (missing ones unknown) and rows in any order give
    the full-matrix prediction row for row, never paying more than the full cost."""
    X, df, pruned = case
    perm = np.random.default_rng(perm_seed).permutation(len(X))
    Xp = X[perm]
    known = pd.DataFrame(Xp, columns=NAMES)[[c for c in order if c in keep]]
    out = po.LazyPredictor(pruned, _source(Xp)).predict_proba(known)
    np.testing.assert_array_equal(out.proba, pruned.predict_proba(df)[perm])
    assert (out.cost_paid <= pruned.acquisition_cost(df)[perm] + 1e-9).all()
    if not keep:
        np.testing.assert_allclose(out.cost_paid, pruned.acquisition_cost(df)[perm], atol=1e-12)


@pytest.mark.parametrize("bad, exc, words", [
    (lambda n: pd.DataFrame(np.full((n, 5), np.nan), columns=[*NAMES, "a"]), ValueError,
     "duplicated"),
    (lambda n: pd.DataFrame(np.full((n, 1), np.nan), columns=["zz"]), ValueError,
     "does not know"),
    (lambda n: np.full((n, 4), np.nan) + 0j, TypeError, "complex"),
    (lambda n: np.full((n, 3), np.nan), ValueError, "shape"),
    (lambda n: np.full(4, np.nan), ValueError, "shape"),
    (lambda n: np.full((n, 4), np.inf), ValueError, "inf"),
    (lambda n: np.full((n, 4), "x"), TypeError, "numeric"),
])
def test_bad_partial_X_is_refused(case, bad, exc, words):
    X, _, pruned = case
    with pytest.raises(exc, match=words):
        po.LazyPredictor(pruned, _source(X)).predict(bad(5))
    with pytest.raises(exc, match=words):
        pruned.next_units(bad(5))


def test_zero_rows_and_one_row(case):
    X, df, pruned = case
    lazy = po.LazyPredictor(pruned, _source(X))
    assert lazy.predict(_unknown(0)).shape == (0,)
    assert lazy.next_units(_unknown(0)) == []
    np.testing.assert_array_equal(lazy.predict(_unknown(1)), pruned.predict(df.iloc[:1]))


def test_next_units_fetches_nothing_and_names_prerequisites_first(case):
    _, _, pruned = case

    def never(rows, unit):  # pragma: no cover - must not be called
        raise AssertionError("next_units acquired something")

    plan = po.LazyPredictor(pruned, never).next_units(_unknown(3))
    assert plan == pruned.next_units(_unknown(3))
    for units in plan:
        if "d" in units:  # d needs the group draw and a (its input) first
            assert units.index("d") > units.index("group:g")
            assert units.index("d") > units.index("a")


# ------------------------------------------------------------ costs and the pruning
def test_costs_given_to_the_predictor_are_what_it_charges(case):
    """The units fetched and the cost paid follow the predictor's costs, not the
    pruning's (they were charged with the pruning's before)."""
    X, df, pruned = case
    flat = po.FeatureCosts([10.0, 10.0, 10.0, 10.0], feature_names=NAMES)
    out = po.LazyPredictor(pruned, _source(X), costs=flat).predict_proba(_unknown(len(X)))
    expected = po.PrunedForest(pruned.forest, pruned.split_mask, costs=flat).acquisition_cost(df)
    np.testing.assert_allclose(out.cost_paid, expected, rtol=0, atol=1e-12)
    assert set(np.unique(out.cost_paid)) <= {0.0, 10.0, 20.0, 30.0, 40.0}
    np.testing.assert_array_equal(out.proba, pruned.predict_proba(df))


@pytest.mark.parametrize("not_pruned", ["forest", "estimator", "array"])
def test_what_is_not_a_pruned_forest_is_refused_by_name(case, not_pruned):
    X, _, pruned = case
    obj = {"forest": pruned.forest, "estimator": RandomForestClassifier(),
           "array": X}[not_pruned]
    with pytest.raises(TypeError, match="pruned must be a PrunedForest"):
        po.LazyPredictor(obj, _source(X))
    with pytest.raises(TypeError, match="acquire must be a callable"):
        po.LazyPredictor(pruned, "not callable")


def test_refit_leaves_keep_lazy_prediction_exact(case):
    X, df, pruned = case
    y = (X[:, 0] > 0).astype(int)
    for method in ("counts", "global"):
        refit = po.refit_leaves(pruned, df, y, method=method, smoothing=0.5)
        out = po.LazyPredictor(refit, _source(X)).predict_proba(_unknown(len(X)))
        np.testing.assert_array_equal(out.proba, refit.predict_proba(df))
        np.testing.assert_allclose(out.cost_paid, pruned.acquisition_cost(df), atol=1e-12)


@given(seed=st.integers(0, 2**32 - 1), share=st.floats(0.0, 1.0))
def test_rows_whose_plan_is_empty_are_never_asked_for(case, seed, share):
    """next_units' dry run is exact: a row it says needs nothing more is never passed
    to the callback, and a row it says needs a unit gets that unit first."""
    X, df, pruned = case
    known = np.where(np.random.default_rng(seed).random(X.shape) < share, X, np.nan)
    plan = pruned.next_units(known)
    done = np.array([not units for units in plan])
    first = {}
    inner = _source(X)

    def acquire(rows, unit):
        assert not done[rows].any(), "a row with an empty plan was asked for a unit"
        for r in rows.tolist():
            first.setdefault(r, unit.name)
        return inner(rows, unit)

    out = po.LazyPredictor(pruned, acquire).predict_proba(known)
    np.testing.assert_array_equal(out.proba, pruned.predict_proba(df))
    for r, name in first.items():
        assert name in plan[r]


# junk a callback may return that must never be read as missing values or numbers
JUNK_RESULTS = {
    "list of None": lambda v: np.full(v.shape, None, dtype=object).tolist(),
    "object array of None": lambda v: np.full(v.shape, None, dtype=object),
    "one None among numbers": lambda v: np.where(np.arange(v.size).reshape(v.shape) == 0,
                                                 None, v.astype(object)),
    "numeric strings": lambda v: v.astype(str),
    "numeric strings as objects": lambda v: v.astype(str).astype(object),
    "numeric bytes": lambda v: v.astype(str).astype(bytes),
    "list of numeric strings": lambda v: v.astype(str).tolist(),
    "DataFrame of numeric strings": lambda v: pd.DataFrame(v.astype(str)),
    "DataFrame of None": lambda v: pd.DataFrame(np.full(v.shape, None, dtype=object)),
    "strings 'nan'": lambda v: np.full(v.shape, "nan"),
}


@pytest.mark.parametrize("name", list(JUNK_RESULTS))
def test_junk_is_refused_naming_the_unit(case, name):
    X, _, pruned = case
    asked = []

    def acquire(rows, unit):
        if not unit.features:
            return None
        asked.append(unit.name)
        return JUNK_RESULTS[name](X[np.ix_(rows, list(unit.features))])

    with pytest.raises(TypeError, match="acquire returned") as info:
        po.LazyPredictor(pruned, acquire).predict(_unknown(len(X)))
    assert repr(asked[-1]) in str(info.value)


def test_python_numbers_in_an_object_array_are_accepted(case):
    X, _, pruned = case

    def acquire(rows, unit):
        if not unit.features:
            return None
        return X[np.ix_(rows, list(unit.features))].astype(object)

    out = po.LazyPredictor(pruned, acquire).predict_proba(_unknown(len(X)))
    assert np.array_equal(out.proba, pruned.predict_proba(X))
