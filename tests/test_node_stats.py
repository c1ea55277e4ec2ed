"""Node training statistics: what to_sklearn()'s feature_importances_ are computed from,
for every source of a forest (scikit-learn, a JSON file, the growers, a sub-forest)."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

import prune_opt as po
from forest_builders import (
    ACTClassifier,
    ACTForestClassifier,
    BudgetPrunedForestClassifier,
    BudgetPrunedForestRegressor,
    BudgetRandomForestClassifier,
    CostSensitiveRandomForestClassifier,
    LazyCostRandomForestClassifier,
    SubsetForestClassifier,
)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=300, n_features=6, n_informative=4, random_state=0)
    return X, y


def _bags(rf, n):
    return [np.bincount(s, minlength=n) for s in rf.estimators_samples_]


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_stats_from_the_training_rows_are_scikit_learns_own(data, task):
    """Independently: scikit-learn's trees record the counts, weights and Gini impurity
    (variance) of their bootstrap rows; the stats computed from the rows agree."""
    X, y = data
    if task == "regression":
        y = X[:, 0] * 3e5 + X[:, 1]
        rf = RandomForestRegressor(n_estimators=4, max_depth=5, random_state=0).fit(X, y)
    else:
        rf = RandomForestClassifier(n_estimators=4, max_depth=5, random_state=0).fit(X, y)
    sk = po.Forest.from_sklearn(rf)
    f = po.Forest.from_sklearn(rf)
    f.in_bag = _bags(rf, X.shape[0])
    mine = po.training_node_stats(f, X, y)
    np.testing.assert_array_equal(mine["n_node_samples"], sk.node_stats["n_node_samples"])
    np.testing.assert_allclose(mine["weighted_n_node_samples"],
                               sk.node_stats["weighted_n_node_samples"], rtol=1e-12)
    np.testing.assert_allclose(mine["impurity"], sk.node_stats["impurity"], rtol=1e-7,
                               atol=1e-9 * sk.node_stats["impurity"].max())


def _check_importances(pruned):
    imp = pruned.to_sklearn().feature_importances_
    assert np.isfinite(imp).all() and (imp >= 0).all(), imp
    assert imp.sum() == pytest.approx(1.0), imp
    return imp


def _growers():
    return [LazyCostRandomForestClassifier(5, random_state=0),
            BudgetRandomForestClassifier(n_estimators=5, random_state=0),
            CostSensitiveRandomForestClassifier(n_estimators=5, random_state=0),
            ACTClassifier(r=1, max_depth=4, random_state=0),
            ACTForestClassifier(n_estimators=3, r=1, max_depth=4, random_state=0),
            SubsetForestClassifier(5, features=[0, 1, 2], random_state=0)]


@pytest.mark.parametrize("grower", _growers(), ids=lambda g: type(g).__name__)
def test_a_pruned_grower_exports_finite_importances(data, grower, tmp_path):
    """A grower's forest gets the statistics of its training rows when it is grown, so
    its pruning's export (also after a round trip through a file) has importances that
    are finite and sum to 1, not NaN."""
    X, y = data
    grower.fit(X, y)
    pruned = po.prune(grower, X, y, lam=0.002)
    assert pruned.n_splits > 0
    imp = _check_importances(pruned)
    pruned.save(tmp_path / "g.json")
    np.testing.assert_array_equal(_check_importances(po.load(tmp_path / "g.json")), imp)


def test_a_forest_loaded_from_json_exports_its_importances(data, tmp_path):
    """The saved statistics are scikit-learn's: the loaded export's importances equal
    the in-memory export's, whose trees keep the source's node statistics."""
    X, y = data
    rf = RandomForestClassifier(n_estimators=6, max_depth=5, criterion="entropy",
                                random_state=0).fit(X, y)
    pruned = po.prune(rf, X, y, lam=0.002)
    pruned.save(tmp_path / "p.json")
    loaded = po.load(tmp_path / "p.json")
    np.testing.assert_allclose(_check_importances(loaded), _check_importances(pruned),
                               rtol=1e-12)


@pytest.mark.parametrize("cls", [BudgetPrunedForestClassifier, BudgetPrunedForestRegressor])
def test_an_estimator_loaded_from_json_exports_its_importances(data, cls, tmp_path):
    X, y = data
    if cls is BudgetPrunedForestRegressor:
        y = X[:, 0] * 1e160 + X[:, 1] * 1e159  # importances do not depend on the scale
    # the forest families: a boosted winner is exported by its own library (to_sklearn
    # refuses it, tests/estimator_walk.py)
    est = cls(budget=3.0, n_estimators=5, time_limit=1, max_subsets=1, random_state=0,
              candidates=["rf", "shallow", "subset"])
    est.fit(X, y).save(tmp_path / "e.json")
    imp = _check_importances(est)
    np.testing.assert_allclose(_check_importances(cls.load(tmp_path / "e.json")), imp,
                               rtol=1e-12)


def test_a_sub_forest_keeps_the_statistics_of_its_trees(data):
    from prune_opt.budget import fewer_trees_prunings

    X, y = data
    rf = RandomForestClassifier(n_estimators=6, max_depth=5, random_state=0).fit(X, y)
    f = po.Forest.from_sklearn(rf)
    f.estimator = None  # as an array-built forest: the statistics must come with the trees
    _, sub = fewer_trees_prunings(f, sizes=[3])[0]
    expected = np.mean([t.feature_importances_ for t in rf.estimators_[:3]], axis=0)
    np.testing.assert_allclose(_check_importances(sub), expected / expected.sum())


def test_tampered_node_statistics_are_refused(data, tmp_path):
    import json

    X, y = data
    rf = RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(X, y)
    po.prune(rf, X, y, lam=0.01).save(tmp_path / "p.json")
    doc = json.loads((tmp_path / "p.json").read_text())
    for change, match in ((lambda d: d["trees"][0].pop("impurity"), "together"),
                          (lambda d: d["trees"][1]["n_node_samples"].__setitem__(0, -3), ">= 0"),
                          (lambda d: d["trees"][0]["impurity"].pop(), "length"),
                          (lambda d: [t.pop(k) for t in d["trees"][:1] for k in (
                              "impurity", "n_node_samples", "weighted_n_node_samples")],
                           "every tree or none")):
        bad = json.loads(json.dumps(doc))
        change(bad)
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=match):
            po.load(tmp_path / "bad.json")


def test_a_lightgbm_random_forest_exports_finite_importances(data):
    lgb = pytest.importorskip("lightgbm")
    from forest_builders import forest_from_lightgbm

    X, y = data
    X = X.astype(np.float32)
    model = lgb.LGBMClassifier(boosting_type="rf", n_estimators=4, subsample=0.7,
                               subsample_freq=1, num_leaves=8, verbose=-1).fit(X, y)
    pruned = po.prune(forest_from_lightgbm(model, X, y), X, y, lam=0.002)
    assert pruned.n_splits > 0
    _check_importances(pruned)
