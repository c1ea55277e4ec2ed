"""train= on a forest without an in-bag record: one rule everywhere.

A forest that does not know which training rows each tree was grown on (loaded
from a file, a sub-forest chosen by fit_budget, a LightGBM import, a
to_sklearn() export of such a forest) cannot count errors on each tree's
in-bag rows: every entry point that takes ``train=`` refuses it with a
ValueError naming ``train=`` and the fix, instead of silently counting every
training row (or crashing with an AttributeError).  A forest that does know
(a scikit-learn forest as fitted, a single tree) keeps its in-bag count,
checked against a brute-force count.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import prune_opt as po
from prune_opt.budget import greedy_prunings


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=240, n_features=6, n_informative=4, random_state=1)
    return X[:160], y[:160], X[160:], y[160:]


@pytest.fixture(scope="module")
def rf(data):
    Xt, yt, _, _ = data
    return RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0).fit(Xt, yt)


def _loaded(rf, data, tmp_path_factory):
    Xt, yt, Xv, yv = data
    path = tmp_path_factory.mktemp("inbag") / "m.json"
    po.prune(rf, Xv, yv, lam=0.0).save(path)
    return po.load(path)


def _no_record_forests(rf, data, tmp_path_factory):
    Xt, yt, Xv, yv = data
    loaded = _loaded(rf, data, tmp_path_factory)
    out = {"loaded": loaded.forest, "loaded_to_sklearn": loaded.to_sklearn()}
    # an ExtraTrees export rebuilds bootstrap=False by default: still no record of how
    # the saved forest was grown (it may have been bootstrapped)
    et = ExtraTreesClassifier(n_estimators=3, max_depth=3, bootstrap=True,
                              random_state=0).fit(Xt, yt)
    out["loaded_extra_trees_to_sklearn"] = _loaded(et, data, tmp_path_factory).to_sklearn()
    sub = po.fit_budget(rf, Xv, yv, budget=1.0, objective="brier", time_limit=5)
    out["fit_budget_sub_forest"] = sub.forest
    try:
        import lightgbm as lgb

        from forest_builders.lightgbm_import import forest_from_lightgbm
        m = lgb.LGBMClassifier(boosting_type="rf", n_estimators=3, subsample=0.7,
                               subsample_freq=1, num_leaves=6, verbose=-1,
                               random_state=0).fit(Xt, yt)
        out["lightgbm"] = forest_from_lightgbm(m, Xt, yt)
    except ImportError:
        pass
    return out


def _entry_points(forest, data):
    Xt, yt, Xv, yv = data
    train = (Xt, yt)
    pruned = po.PrunedForest(po.as_forest(forest), po.as_forest(forest).full_split_mask())
    return {
        "compile_problem": lambda: po.compile_problem(forest, Xv, yv, train=train),
        "prune": lambda: po.prune(forest, Xv, yv, lam=0.01, train=train),
        "fit_budget": lambda: po.fit_budget(forest, Xv, yv, budget=1.0, train=train,
                                            time_limit=5),
        "greedy_prunings": lambda: greedy_prunings(forest, Xv, yv, train=train),
        "tradeoff_curve": lambda: po.tradeoff_curve(forest, Xv, yv, train=train),
        "refit_leaves": lambda: po.refit_leaves(pruned, Xv, yv, train=train),
    }


def test_train_refused_without_in_bag_record(rf, data, tmp_path_factory):
    held = 0
    for kind, forest in _no_record_forests(rf, data, tmp_path_factory).items():
        for name, call in _entry_points(forest, data).items():
            with pytest.raises(ValueError, match=r"train=.*in-bag") as info:
                call()
            # the message says what to do instead
            assert "drop train=" in str(info.value), (kind, name)
            held += 1
    assert held >= 24


def _brute_in_bag_errors(rf, Xt, yt):
    """Per-tree in-bag misclassified weight at each root, counted by hand."""
    out = []
    for est, s in zip(rf.estimators_, rf.estimators_samples_):
        mult = np.bincount(s, minlength=len(yt))
        majority = rf.classes_[np.argmax(est.tree_.value[0, 0])]
        out.append(float(mult @ (yt != majority)))
    return np.array(out)


def test_fitted_forest_keeps_its_in_bag_count(rf, data):
    Xt, yt, Xv, yv = data
    problem = po.compile_problem(rf, Xv, yv, train=(Xt, yt))
    roots = problem.forest.node_offset[:-1]
    assert np.allclose(problem.node_error[roots], _brute_in_bag_errors(rf, Xt, yt))


def test_single_tree_counts_every_training_row(data):
    Xt, yt, Xv, yv = data
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(Xt, yt)
    problem = po.compile_problem(tree, Xv, yv, train=(Xt, yt))
    majority = tree.classes_[np.argmax(tree.tree_.value[0, 0])]
    assert problem.node_error[0] == float(np.sum(yt != majority))


def test_to_sklearn_of_a_fitted_forest_keeps_its_record(rf, data):
    """The export of a forest pruned from the fitted estimator is that estimator's copy:
    its bootstrap samples are the same, so train= still counts in-bag rows."""
    Xt, yt, Xv, yv = data
    exported = po.prune(rf, Xv, yv, lam=0.0).to_sklearn()
    a = po.compile_problem(exported, Xv, yv, train=(Xt, yt))
    roots = a.forest.node_offset[:-1]
    assert np.array_equal(a.node_error[roots], _brute_in_bag_errors(rf, Xt, yt))


def test_extra_trees_without_bootstrap_counts_every_row(data):
    Xt, yt, Xv, yv = data
    et = ExtraTreesClassifier(n_estimators=3, max_depth=3, random_state=0).fit(Xt, yt)
    problem = po.compile_problem(et, Xv, yv, train=(Xt, yt))
    roots = problem.forest.node_offset[:-1]
    for t, est in enumerate(et.estimators_):
        majority = et.classes_[np.argmax(est.tree_.value[0, 0])]
        assert problem.node_error[roots[t]] == float(np.sum(yt != majority))


def _boosted_models(data):
    """Boosted models of every importer, fitted on the training rows."""
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingRegressor

    Xt, yt, _, _ = data
    out = {"GradientBoostingClassifier": GradientBoostingClassifier(
               n_estimators=3, max_depth=2, random_state=0).fit(Xt, yt),
           "HistGradientBoostingRegressor": HistGradientBoostingRegressor(
               max_iter=3, max_leaf_nodes=4).fit(Xt, yt.astype(float))}
    try:
        import lightgbm as lgb
        out["LGBMClassifier"] = lgb.LGBMClassifier(n_estimators=3, num_leaves=4,
                                                   verbose=-1).fit(Xt, yt)
    except ImportError:
        pass
    try:
        import xgboost as xgb
        out["XGBClassifier"] = xgb.XGBClassifier(n_estimators=3, max_depth=2,
                                                 n_jobs=1).fit(Xt, yt)
    except ImportError:
        pass
    return out


def _train_calls(model, Xv, yv, train, own):
    """Every entry that takes ``train=``, called with it on ``model``."""
    return {
        "prune": lambda: po.prune(model, Xv, yv, lam=0.01, train=train),
        "prune paper": lambda: po.prune(model, Xv, yv, lam=0.01, train=train,
                                        objective="paper"),
        "prune own": lambda: po.prune(model, Xv, yv, lam=0.01, train=train, objective=own),
        "fit_budget": lambda: po.fit_budget(model, Xv, yv, budget=1.0, train=train,
                                            time_limit=5),
        "fit_budget paper": lambda: po.fit_budget(model, Xv, yv, budget=1.0, train=train,
                                                  objective="paper", time_limit=5),
        "fit_budget own": lambda: po.fit_budget(model, Xv, yv, budget=1.0, train=train,
                                                objective=own, time_limit=5),
        "compile_problem": lambda: po.compile_problem(model, Xv, yv, train=train),
        "tradeoff_curve": lambda: po.tradeoff_curve(model, Xv, yv, train=train),
    }


def test_train_with_a_boosted_model_is_refused_alike_everywhere(data):
    """One rule: a boosted model's errors are counted on the pruning rows (X, y). Its
    trees each fit every training row (no in-bag sample to count on), so ``train=``
    is refused with the same message by prune and fit_budget for every objective, and
    by what compiles the paper's program; before, prune refused it only for the model's
    own loss and fit_budget accepted and ignored it."""
    Xt, yt, Xv, yv = data
    held = 0
    for kind, model in _boosted_models(data).items():
        regression = "Regressor" in kind
        y_val = yv.astype(float) if regression else yv
        train = (Xt, yt.astype(float) if regression else yt)
        own = "squared_error" if regression else "logloss"
        for name, call in _train_calls(model, Xv, y_val, train, own).items():
            with pytest.raises(ValueError, match=r"^train=: a boosted model's errors are "
                                                 r"counted on the pruning rows") as info:
                call()
            assert "drop train=" in str(info.value), (kind, name)
            held += 1
        # without train= the same calls run, counting errors on (X, y)
        assert po.fit_budget(model, Xv, y_val, budget=1.0, time_limit=5).average_cost(
            Xv) <= 1.0 + 1e-9
    assert held >= 16
