"""Lazy prediction pays exactly what acquisition_cost reports and predicts the same."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.datasets import load_dataset


class CountingSource:
    """An ``acquire`` callback over a full matrix that counts every (row, unit) fetch."""

    def __init__(self, X):
        self.X = X
        self.fetches = Counter()
        self.calls = 0

    def __call__(self, rows, unit):
        self.calls += 1
        for r in rows.tolist():
            self.fetches[(r, unit.index)] += 1
        if not unit.features:
            return None
        return self.X[np.ix_(rows, list(unit.features))]


def _check_lazy_matches_full(pruned, X, known=None):
    src = CountingSource(X)
    partial = np.full(X.shape, np.nan)
    if known is not None:
        partial[known] = X[known]
    out = po.LazyPredictor(pruned, src).predict_proba(partial)
    np.testing.assert_array_equal(out.proba, pruned.predict_proba(X))
    np.testing.assert_array_equal(out.labels, pruned.predict(X))
    assert max(src.fetches.values(), default=1) == 1  # each unit at most once per example
    assert out.n_calls == src.calls
    fetched = out.units_fetched.toarray()
    assert fetched.sum() == len(src.fetches)
    if known is None:
        np.testing.assert_allclose(out.cost_paid, pruned.acquisition_cost(X), rtol=0,
                                   atol=1e-9)
    else:  # features known up front are already paid for: never more than the full cost
        assert (out.cost_paid <= pruned.acquisition_cost(X) + 1e-9).all()
    return out, src


@pytest.mark.slow
def test_thyroid_lab_tests_on_demand():
    ds = load_dataset("thyroid")
    X, y = ds.X[:1500], ds.y[:1500]
    rf = RandomForestClassifier(n_estimators=15, max_depth=6, random_state=0).fit(X, y)
    Xv = ds.X_test[:400]
    full = po.prune(rf, Xv, ds.y_test[:400], costs=ds.costs, lam=0.0)
    pruned = po.prune(rf, Xv, ds.y_test[:400], costs=ds.costs, lam=0.02)
    for pf in (full, pruned):
        out, _ = _check_lazy_matches_full(pf, Xv)
    # the pruned forest really fetches less than the unpruned one
    full_out, _ = _check_lazy_matches_full(full, Xv)
    assert out.cost_paid.mean() <= full_out.cost_paid.mean()


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), lam=st.sampled_from([0.0, 0.01, 0.05]),
       with_group=st.booleans(), with_requires=st.booleans(), frac_known=st.floats(0, 0.5))
def test_random_costs_holdout(seed, lam, with_group, with_requires, frac_known):
    rng = np.random.default_rng(seed)
    n, d = 160, 5
    X = rng.normal(size=(n, d)).round(2)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=4, max_depth=4, random_state=seed).fit(X[:80], y[:80])
    costs = rng.uniform(0.5, 5.0, size=d)
    groups = {"draw": (2.0, [1, 2])} if with_group else None
    requires = {4: [0, 3]} if with_requires else None
    fc = po.FeatureCosts(costs, groups=groups, requires=requires)
    pruned = po.prune(rf, X[80:], y[80:], costs=fc, lam=lam)
    Xh = X[80:]
    _check_lazy_matches_full(pruned, Xh)
    known = rng.random(Xh.shape) < frac_known
    _check_lazy_matches_full(pruned, Xh, known=known)


def test_prerequisites_fetched_before_the_derived_feature():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    X[:, 2] = X[:, 0] + X[:, 1]  # derived feature computed from the other two
    y = (X[:, 2] > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    fc = po.FeatureCosts([1.0, 2.0, np.nan], requires={2: [0, 1]})
    pruned = po.prune(rf, X, y, costs=fc, lam=0.0)
    order = []

    def acquire(rows, unit):
        order.append(unit.index)
        if unit.index == 2:  # compute it from what was fetched: prerequisites must be there
            assert not np.isnan(state_X[rows][:, :2]).any()
            return state_X[rows, 0] + state_X[rows, 1]
        state_X[rows, unit.index] = X[rows, unit.index]
        return X[rows, unit.index]

    state_X = np.full(X.shape, np.nan)
    out = po.LazyPredictor(pruned, acquire).predict_proba(np.full(X.shape, np.nan))
    np.testing.assert_allclose(out.proba, pruned.predict_proba(X))
    np.testing.assert_allclose(out.cost_paid, pruned.acquisition_cost(X))


def test_next_units_is_a_dry_run():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=1).fit(X, y)
    pruned = po.prune(rf, X, y, costs=[1, 2, 3, 4], lam=0.0)
    lazy = po.LazyPredictor(pruned, lambda rows, unit: pytest.fail("dry run fetched"))
    nothing = lazy.next_units(np.full(X.shape, np.nan))
    roots = {f"x{int(pruned.forest.feature[pruned.forest.node_offset[t]])}"
             for t in range(3) if pruned.split_mask[pruned.forest.node_offset[t]]}
    assert all(set(units) == roots for units in nothing)
    assert lazy.next_units(X) == [[] for _ in range(60)]
    partial = X.copy()
    partial[:, 1:] = np.nan
    for units in lazy.next_units(partial):
        assert "x0" not in units and len(units) == len(set(units))


def test_dataframe_with_missing_columns():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    df = pd.DataFrame(rng.normal(size=(80, 3)), columns=["a", "b", "c"])
    y = (df["a"] > 0).astype(int).to_numpy()
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(df, y)
    pruned = po.prune(rf, df, y, lam=0.0)
    lazy = po.LazyPredictor(pruned, lambda rows, unit: df.to_numpy()[rows, unit.features[0]])
    out = lazy.predict_proba(df[["b"]])
    np.testing.assert_array_equal(out.proba, pruned.predict_proba(df))


def test_bad_callbacks_are_named():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    pruned = po.prune(RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0)
                      .fit(X, y), X, y, lam=0.0)
    with pytest.raises(TypeError, match="acquire must be a callable"):
        po.LazyPredictor(pruned, "nope")
    with pytest.raises(ValueError, match="expected"):
        po.LazyPredictor(pruned, lambda r, u: np.zeros(3)).predict_proba(np.full(X.shape, np.nan))
    with pytest.raises(ValueError, match="returned None"):
        po.LazyPredictor(pruned, lambda r, u: None).predict_proba(np.full(X.shape, np.nan))
    with pytest.raises(ValueError, match="shape"):
        po.LazyPredictor(pruned, lambda r, u: X[r, 0]).predict_proba(np.full((4, 3), np.nan))


def test_pruned_forest_methods_delegate_to_the_lazy_predictor():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] + X[:, 2] > 0).astype(int)
    pruned = po.prune(RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)
                      .fit(X, y), X, y, costs=[1, 2, 3], lam=0.0)
    src = CountingSource(X)
    nothing = np.full(X.shape, np.nan)
    np.testing.assert_array_equal(pruned.predict(nothing, acquire=src), pruned.predict(X))
    assert max(src.fetches.values()) == 1
    assert pruned.next_units(nothing) == po.LazyPredictor(pruned, src).next_units(nothing)
    assert pruned.next_units(X) == [[] for _ in range(50)]
