"""The estimator's opt-in candidate families, and the CatBoost family (off by default):
its registration, when it applies, what it grows and that it is used only when named."""

import numpy as np
import pytest

from forest_builders.estimator import _catboost as _catboost_candidates
from forest_builders.estimator import _registry as _candidates
from forest_builders.estimator._registry import CANDIDATE_FAMILIES, resolve_families


@pytest.fixture
def opt_in_family():
    """A family registered with ``default=False`` (removed afterwards)."""
    saved = dict(CANDIDATE_FAMILIES)
    _candidates.register_family("opt-in", order=35, default=False)(lambda ctx: None)
    try:
        yield "opt-in"
    finally:
        CANDIDATE_FAMILIES.clear()
        CANDIDATE_FAMILIES.update(saved)


def test_an_opt_in_family_is_grown_only_when_named(opt_in_family):
    assert not CANDIDATE_FAMILIES[opt_in_family].default
    assert opt_in_family not in resolve_families(None, "classification")
    assert opt_in_family not in resolve_families(None, "regression")
    # named, it takes its place in the growing order among the others
    assert resolve_families(["gbm", opt_in_family, "rf"], "classification") == [
        "rf", opt_in_family, "gbm"]


# ---------------------------------------------------------------- the CatBoost family
def _without_catboost(monkeypatch):
    real = _candidates.importlib.util.find_spec
    monkeypatch.setattr(_candidates.importlib.util, "find_spec",
                        lambda name, *a: None if name == "catboost" else real(name, *a))


def test_the_catboost_family_is_registered_off_by_default():
    fam = CANDIDATE_FAMILIES["catboost"]
    assert fam.boosted and fam.requires == ("catboost",) and not fam.default
    names = list(CANDIDATE_FAMILIES)
    assert names.index("cegb") < names.index("catboost") < names.index("lazy")
    for task in ("classification", "regression"):
        assert "catboost" not in resolve_families(None, task)


def test_the_catboost_family_applies_when_catboost_is_installed():
    pytest.importorskip("catboost")
    for task in ("classification", "regression"):
        assert CANDIDATE_FAMILIES["catboost"].status(task) is None
        assert resolve_families(["rf", "catboost"], task) == ["rf", "catboost"]


def test_without_catboost_the_family_is_refused_naming_why(monkeypatch):
    from sklearn.datasets import load_breast_cancer

    from forest_builders import BudgetPrunedForestClassifier

    _without_catboost(monkeypatch)
    assert CANDIDATE_FAMILIES["catboost"].status("classification") == (
        "needs catboost (pip install prune-opt[catboost])")
    assert "catboost" not in resolve_families(None, "classification")
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.raises(ValueError, match="'catboost' cannot be used here: it needs catboost"):
        BudgetPrunedForestClassifier(budget=3.0, candidates=["rf", "catboost"]).fit(X, y)


def test_penalties_are_the_costs_in_their_mean_unit():
    from prune_opt import FeatureCosts

    got = _catboost_candidates.catboost_penalties(FeatureCosts([2.0, 4.0, 0.0]), 3.0)
    assert got == {"first_feature_use_penalties": [2 / 3, 4 / 3, 0.0],
                   "penalties_coefficient": 3.0}
    free = _catboost_candidates.catboost_penalties(FeatureCosts([0.0, 0.0]), 1.0)
    assert free["first_feature_use_penalties"] == [0.0, 0.0]


ROOMY = dict(n_estimators=4, time_limit=30, max_subsets=2, random_state=0)


@pytest.fixture(scope="module")
def cancer():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    return X, y, 1.0 + np.arange(X.shape[1]) % 5


def test_named_the_family_grows_penalised_catboost_models_around_the_budget(cancer,
                                                                             monkeypatch):
    """The search keeps the least penalised model that fits the prune rows' budget and the
    most penalised one above it, which is pruned with its own loss; every candidate was
    grown with a coefficient, and the winner fits."""
    pytest.importorskip("catboost")
    from forest_builders import BudgetPrunedForestClassifier
    from forest_builders.estimator import _boosted as _boosted_candidates
    from prune_opt.budget import fits_budget

    monkeypatch.setattr(_boosted_candidates, "ROUNDS", 20)  # small models, same search
    X, y, costs = cancer
    est = BudgetPrunedForestClassifier(budget=4.0, costs=costs, candidates=["catboost"],
                                       **ROOMY).fit(X, y)
    table = est.candidates_
    assert set(table["family"]) == {"catboost"} and table["chosen"].sum() == 1
    # the two models either side of the budget (and a stronger one with STRONGER set)
    assert 1 <= table["model"].nunique() <= 3
    pruned = table[table["objective"] != "none"]
    assert set(pruned["objective"]) <= {"logloss"}  # a booster's own loss
    coefficients = sorted(float(m.split("=")[1].rstrip(")")) for m in set(table["model"]))
    for c in coefficients[:-1]:  # only the most penalised (cheapest) one may fit as grown
        over = table[table["model"] == f"catboost(coefficient={c:.3g})"]
        assert (over["objective"] != "none").all()
    assert all(m.startswith("catboost(coefficient=") for m in table["model"])
    assert fits_budget(float(table.loc[table["chosen"], "average_cost"].iloc[0]), 4.0)
    assert est.pruned_.forest.source.startswith("CatBoost")
    assert est.average_cost(X) == pytest.approx(float(np.mean(est.acquisition_cost(X))))
    assert est.score(X, y) > 0.85


def test_a_regressor_grows_the_catboost_family_too(monkeypatch):
    pytest.importorskip("catboost")
    from sklearn.datasets import load_diabetes

    from forest_builders import BudgetPrunedForestRegressor
    from forest_builders.estimator import _boosted as _boosted_candidates

    monkeypatch.setattr(_boosted_candidates, "ROUNDS", 20)
    X, y = load_diabetes(return_X_y=True)
    costs = np.linspace(1.0, 5.0, X.shape[1])
    est = BudgetPrunedForestRegressor(budget=6.0, costs=costs, candidates=["rf", "catboost"],
                                      **ROOMY).fit(X, y)
    assert "catboost" in set(est.candidates_["family"])
    pred = est.predict(X)
    assert pred.shape == y.shape and abs(pred.mean() - y.mean()) < 0.2 * y.std()


def test_a_grown_model_is_catboost_s_under_the_penalties(cancer, monkeypatch):
    """The recipe fits CatBoost with the costs as first-use penalties, one thread as asked,
    writing no files; the Forest predicts as the model does, and a larger coefficient
    makes it use fewer features."""
    pytest.importorskip("catboost")
    import catboost as cb

    from forest_builders.estimator._clock import FitClock
    from forest_builders.estimator._registry import GrowContext
    from prune_opt import FeatureCosts

    X, y, costs = cancer
    seen = []
    real_fit = cb.CatBoostClassifier.fit

    def spy(self, *a, **kw):
        seen.append((self.get_params(), kw))
        return real_fit(self, *a, **kw)

    monkeypatch.setattr(cb.CatBoostClassifier, "fit", spy)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))
    grow, prune = np.sort(idx[:300]), np.sort(idx[300:450])
    ctx = GrowContext(X, y, grow, prune, 4.0, FeatureCosts(costs), None, "classification",
                      {"n_estimators": 4, "seed": 0, "max_subsets": 2, "n_jobs": None},
                      FitClock(30.0), 0.5)
    loose = _catboost_candidates._grow_catboost(ctx, 0.0, 15, grow)
    tight = _catboost_candidates._grow_catboost(ctx, 100.0, 15, grow)
    params, fit_kw = seen[0]
    assert params["thread_count"] == 1 and params["allow_writing_files"] is False
    assert params["first_feature_use_penalties"] == pytest.approx(list(costs / costs.mean()))
    assert "eval_set" in fit_kw  # stopped early on the prune rows, which did not grow it
    n_used = [np.unique(f.feature[~f.is_leaf]).size for f in (loose, tight)]
    assert n_used[1] < n_used[0]
    both = _catboost_candidates._grow_catboost(ctx, 0.0, 15, ctx.grow_prune)
    assert "eval_set" not in seen[-1][1] and both.n_trees == 15  # no early stop on them
