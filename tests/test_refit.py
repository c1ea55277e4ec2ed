"""refit_leaves: new leaf distributions on a fixed pruned structure."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from forest_builders import LazyCostRandomForestClassifier
from prune_opt.model._refit import refit_leaves


def _data(seed=0, n=240):
    X, y = make_classification(n, 6, n_informative=4, n_classes=3, random_state=seed)
    return X[: n // 2], y[: n // 2], X[n // 2:], y[n // 2:]


def _pruned(est, Xtr, ytr, Xv, yv, lam=0.02):
    return po.prune(est, Xv, yv, costs=[1, 2, 3, 1, 2, 3], lam=lam, train=(Xtr, ytr))


@pytest.mark.parametrize("grower", ["sklearn", "lazy"])
def test_refit_on_the_leaves_own_data_reproduces_them(grower):
    Xtr, ytr, Xv, yv = _data()
    if grower == "sklearn":
        est = RandomForestClassifier(6, random_state=0).fit(Xtr, ytr)
    else:
        est = LazyCostRandomForestClassifier(6, tradeoff=0.2, random_state=0).fit(Xtr, ytr)
    pruned = _pruned(est, Xtr, ytr, Xv, yv)
    same = refit_leaves(pruned, None, None, train=(Xtr, ytr), in_bag=True, smoothing=2.0)
    np.testing.assert_allclose(same.forest.value, pruned.forest.value, rtol=0, atol=1e-12)
    np.testing.assert_allclose(same.predict_proba(Xv), pruned.predict_proba(Xv), atol=1e-12)


@settings(max_examples=12)
@given(seed=st.integers(0, 1000), smoothing=st.floats(0.0, 5.0),
       method=st.sampled_from(["counts", "global"]))
def test_structure_cost_and_sklearn_export_unchanged(seed, smoothing, method):
    Xtr, ytr, Xv, yv = _data(seed, 160)
    rf = RandomForestClassifier(4, max_depth=5, random_state=seed).fit(Xtr, ytr)
    pruned = _pruned(rf, Xtr, ytr, Xv, yv, lam=0.01)
    before = pruned.forest.value.copy()
    refit = refit_leaves(pruned, Xv, yv, smoothing=smoothing, method=method)
    np.testing.assert_array_equal(pruned.forest.value, before)  # the input is untouched
    np.testing.assert_array_equal(refit.split_mask, pruned.split_mask)
    np.testing.assert_array_equal(refit.acquisition_cost(Xtr), pruned.acquisition_cost(Xtr))
    np.testing.assert_allclose(refit.forest.value.sum(axis=1), 1.0, atol=1e-12)
    assert (refit.forest.value >= 0).all()
    np.testing.assert_array_equal(refit.to_sklearn().predict_proba(Xtr), refit.predict_proba(Xtr))
    assert refit.solve_info["refit"]["method"] == method


def test_counts_match_a_brute_force_leaf_count():
    Xtr, ytr, Xv, yv = _data(3)
    rf = RandomForestClassifier(3, random_state=0).fit(Xtr, ytr)
    pruned = _pruned(rf, Xtr, ytr, Xv, yv, lam=0.05)
    s = 1.5
    refit = refit_leaves(pruned, Xv, yv, smoothing=s)
    f = pruned.forest
    for t in range(f.n_trees):
        leaves = pruned._pruned_leaves(Xv, t)[0] + f.node_offset[t]
        for leaf in np.unique(leaves):
            rows = leaves == leaf
            counts = np.bincount(yv[rows], minlength=3)
            want = (counts + s * f.value[leaf]) / (rows.sum() + s)
            np.testing.assert_allclose(refit.forest.value[leaf], want, atol=1e-12)


def test_global_refit_with_one_tree_is_the_count_refit_and_lowers_brier():
    Xtr, ytr, Xv, yv = _data(5, 400)
    one = RandomForestClassifier(1, max_depth=6, random_state=0).fit(Xtr, ytr)
    p1 = _pruned(one, Xtr, ytr, Xv, yv, lam=0.005)
    a = refit_leaves(p1, Xv, yv, smoothing=0.7, method="counts")
    b = refit_leaves(p1, Xv, yv, smoothing=0.7, method="global")
    # the joint fit is iterative (projected gradient): agreement to its convergence
    np.testing.assert_allclose(a.predict_proba(Xv), b.predict_proba(Xv), atol=1e-5)
    rf = RandomForestClassifier(8, max_depth=4, random_state=0).fit(Xtr, ytr)
    pruned = _pruned(rf, Xtr, ytr, Xv, yv, lam=0.005)
    joint = refit_leaves(pruned, None, None, train=(Xtr, ytr), in_bag=False, method="global",
                         smoothing=1e-3)

    def brier(p):
        return float(np.mean(np.sum((p.predict_proba(Xtr) - np.eye(3)[ytr]) ** 2, axis=1)))

    assert brier(joint) < brier(pruned)


def test_clear_errors():
    X, y = load_breast_cancer(return_X_y=True)
    rf = RandomForestClassifier(3, random_state=0).fit(X, y)
    pruned = po.prune(rf, X, y, lam=0.01)
    with pytest.raises(TypeError, match="pruned must be a PrunedForest"):
        refit_leaves(rf, X, y)
    with pytest.raises(ValueError, match="method must be one of"):
        refit_leaves(pruned, X, y, method="ridge")
    with pytest.raises(ValueError, match="smoothing must be a finite non-negative"):
        refit_leaves(pruned, X, y, smoothing=-1.0)
    with pytest.raises(ValueError, match="train has 100 rows"):
        refit_leaves(pruned, None, None, train=(X[:100], y[:100]))
    bare = po.Forest.from_arrays([dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
                                       threshold=[0.0, -2, -2], value=[[1, 1], [1, 0], [0, 1]])],
                                 classes=[0, 1], n_features=1)
    pf = po.PrunedForest(bare, bare.full_split_mask())
    Xb = np.array([[-1.0], [1.0]])
    with pytest.raises(ValueError, match="pass in_bag=False"):
        refit_leaves(pf, None, None, train=(Xb, [0, 1]))
    np.testing.assert_array_equal(
        refit_leaves(pf, None, None, train=(Xb, [1, 1]), in_bag=False).predict(Xb), [1, 1])


def test_a_refit_keeps_the_table_coding_of_its_model(tmp_path):
    """A model the command line saved from a CSV, loaded, refit and saved again, still
    reads that CSV (refit_leaves dropped feature_encoding, so prune-opt predict then
    blamed a text column for not holding numbers)."""
    from prune_opt.cli import main
    from prune_opt.datasets import load_csv
    from tests._heart_csv import write_heart_csv

    write_heart_csv(tmp_path / "heart.csv", rows=120)
    assert main(["prune", "--dataset", str(tmp_path / "heart.csv"), "--trees", "3",
                 "--lam", "0.01", "--out", str(tmp_path / "m.json")]) == 0
    model = po.load(tmp_path / "m.json")
    ds = load_csv(tmp_path / "heart.csv")
    refit = refit_leaves(model, ds.X, ds.y)
    assert refit.feature_encoding == model.feature_encoding is not None
    refit.save(tmp_path / "r.json")
    assert main(["predict", "--model", str(tmp_path / "r.json"), "--dataset",
                 str(tmp_path / "heart.csv"), "--out", str(tmp_path / "p.csv")]) == 0
