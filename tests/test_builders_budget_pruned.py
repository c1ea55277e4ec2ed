"""BudgetPrunedForestClassifier / Regressor: the best forest under a budget in one call."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks

import prune_opt as po
from forest_builders import BudgetPrunedForestClassifier, BudgetPrunedForestRegressor
from tests._timing import run_seconds
from tests.estimator_walk import export_agrees, selection_pool, walk_cost, walk_output

FAST = dict(n_estimators=4, time_limit=2, max_subsets=1, random_state=0)


@parametrize_with_checks([BudgetPrunedForestClassifier(n_estimators=4, random_state=0),
                          BudgetPrunedForestRegressor(n_estimators=4, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


# with a budget of one feature per example, the classifier cannot reach the 0.83
# training accuracy check_classifiers_train asks of every classifier on its data
BUDGET_EXPECTED_FAILURES = {
    "check_classifiers_train": "a budget of one feature per example caps the accuracy "
                               "below the check's 0.83 threshold on its blobs"}


@pytest.mark.slow
@pytest.mark.parametrize("cls", [BudgetPrunedForestClassifier, BudgetPrunedForestRegressor])
def test_sklearn_checks_with_a_budget(cls):
    # time enough for every candidate: the checks compare fits (under a tight time_limit
    # the candidates skipped for time depend on the machine's load)
    est = cls(budget=1.0, n_estimators=2, time_limit=20, max_subsets=1, random_state=0)
    expected = BUDGET_EXPECTED_FAILURES if cls is BudgetPrunedForestClassifier else {}
    check_estimator(est, expected_failed_checks=expected)


def _brute_force_cost(pf, X, unit_cost):
    """Per-example cost by walking every pruned tree row by row (plain per-feature costs;
    a forest or a boosted winner, see tests/estimator_walk.py)."""
    return walk_cost(pf, X, unit_cost)


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    y = np.where(y == 1, "benign", "malignant")  # string labels
    costs = {c: 1.0 + (i % 5) for i, c in enumerate(X.columns)}  # mapping by name
    est = BudgetPrunedForestClassifier(budget=4.0, costs=costs, n_estimators=8, time_limit=4,
                                       max_subsets=2, final_refit=True, random_state=0)
    est.fit(X, y)
    return X, y, costs, est


def test_budget_is_met_on_the_prune_rows_by_brute_force(cancer):
    X, _, costs, est = cancer
    unit = np.array([costs[c] for c in X.columns])
    rows = X.values[est.split_["prune"]]
    brute = _brute_force_cost(est.pruned_, rows, unit)
    assert np.allclose(brute, est.acquisition_cost(X.iloc[est.split_["prune"]]))
    assert brute.mean() <= 4.0 + 1e-9
    every = _brute_force_cost(est.pruned_, X.values, unit)  # reported on any rows
    assert np.allclose(every, est.acquisition_cost(X))
    assert est.average_cost(X) == pytest.approx(every.mean())


def test_predictions_agree_with_sklearn_export_and_json(cancer, tmp_path):
    X, y, _, est = cancer
    pred, proba = est.predict(X), est.predict_proba(X)
    assert set(pred) <= {"benign", "malignant"} and list(est.classes_) == ["benign", "malignant"]
    assert np.allclose(walk_output(est.pruned_, X.values), proba, atol=1e-9)
    export_agrees(est, X)
    path = tmp_path / "model.json"
    est.save(path)
    pf = po.load(path)
    assert np.array_equal(pf.predict(X.values), pred)
    back = BudgetPrunedForestClassifier.load(path)
    assert np.array_equal(back.predict(X), pred)
    assert np.allclose(back.predict_proba(X), proba, atol=1e-12)
    assert back.get_params()["budget"] == 4.0 and back.n_features_in_ == X.shape[1]
    assert back.candidates_.shape == est.candidates_.shape
    assert back.score(X, y) == est.score(X, y)


def test_load_refuses_a_plain_pruned_forest(cancer, tmp_path):
    X, y, _, est = cancer
    plain = po.PrunedForest(est.pruned_.forest, est.pruned_.split_mask, costs=est.costs_)
    plain.save(tmp_path / "plain.json")
    with pytest.raises(ValueError, match="prune_opt.load"):
        BudgetPrunedForestClassifier.load(tmp_path / "plain.json")


def test_candidates_table_is_consistent(cancer):
    X, y, _, est = cancer
    table = est.candidates_
    assert {"name", "average_cost", "score", "fits_budget", "chosen", "reason"} <= set(table)
    assert table["chosen"].sum() == 1 and table["reason"].str.len().gt(0).all()
    win = table[table["chosen"]].iloc[0]
    prune, select = est.split_["prune"], est.split_["select"]
    assert win["average_cost"] == pytest.approx(est.pruned_.average_cost(X.values[prune]))
    chosen = est.selected_  # the winner as scored; pruned_ is it after the final refit
    assert win["score"] == pytest.approx(np.mean(chosen.predict(X.values[select]) == y[select]))
    fits = table[table["fits_budget"]]
    assert (fits["average_cost"] <= 4.0 + 1e-9).all()
    # the one-standard-error rule: within one standard error of the best accuracy,
    # the lowest Brier loss
    top = fits["score"].max()
    se = np.sqrt(top * (1 - top) / select.size)
    assert win["score"] >= top - se - 1e-12
    prior = np.max(np.unique(y[select], return_counts=True)[1]) / select.size
    pool = selection_pool(table, prior)  # after the prior's rules set some aside
    near = pool[pool["score"] >= top - se - 1e-12]
    assert win["brier"] <= near["brier"].min() + 1e-12
    # the others lose on the rule, or score no better than the prior (which others beat)
    out = table[~table.index.isin(near.index) & table["fits_budget"]]
    assert (out["reason"].str.contains("one standard error") == out["above_prior"]).all()
    assert (out.loc[~out["above_prior"], "score"] <= prior + 1e-12).all()
    assert out.loc[~out["above_prior"], "reason"].str.contains("not above the prior").all()
    assert {"rf", "lazy(tradeoff=1)", "rf(max_leaf_nodes=8)"} <= set(table["model"])
    assert table["model"].str.startswith("subset").any()
    # the shallow forests' trees have at most 8 leaves (7 splits) before any pruning
    shallow = table[table["model"].str.startswith("rf(max_leaf_nodes=8")]
    assert len(shallow) and (shallow["n_splits"] <= 7 * est.n_estimators).all()


@pytest.mark.parametrize("families", [["rf", "subset"], ["gbm"]])
def test_final_refit_keeps_the_winner_s_splits_and_cost(cancer, families):
    """A forest winner's leaves are refit on the grow and select rows (same splits, same
    cost); a boosted winner is kept as scored."""
    X, y, _, est = cancer
    est = clone(est).set_params(candidates=families).fit(X, y)
    assert np.array_equal(est.pruned_.split_mask, est.selected_.split_mask)
    assert np.array_equal(est.pruned_.acquisition_cost(X.values),
                          est.selected_.acquisition_cost(X.values))
    if est.pruned_.forest.is_additive:
        assert est.pruned_ is est.selected_ and "final_refit" not in est.pruned_.solve_info
    else:
        assert est.pruned_.solve_info["final_refit"]["n_rows"] == (
            est.split_["grow"].size + est.split_["select"].size)
    assert clone(est).set_params(final_refit=False).fit(X, y).pruned_.solve_info.get(
        "final_refit") is None


def test_selection_rows_are_disjoint_from_growing_and_pruning(cancer):
    X, _, _, est = cancer
    grow, prune, select = (set(est.split_[k].tolist()) for k in ("grow", "prune", "select"))
    assert not (grow & prune) and not (grow & select) and not (prune & select)
    assert grow | prune | select == set(range(X.shape[0]))
    in_bag = est.selected_.forest.in_bag  # the winner was grown on the grow rows only
    if in_bag is not None:
        assert all(np.asarray(b).size == len(grow) for b in in_bag)


def test_feature_names_reach_the_pruned_forest(cancer):
    X, _, _, est = cancer
    assert list(est.feature_names_in_) == list(X.columns)
    assert list(est.pruned_.feature_usage(X.values)["feature"]) == list(X.columns)
    assert list(est.feature_usage(X)["feature"]) == list(X.columns)


def test_lazy_predictor_fetches_what_the_pruned_forest_needs(cancer):
    X, _, _, est = cancer
    full = X.values[:40]

    def fetch(rows, unit):
        return full[rows][:, unit.features[0]] if unit.features else None

    out = est.lazy_predictor(fetch).predict_proba(np.full_like(full, np.nan))
    assert np.array_equal(out.labels, est.predict(X.iloc[:40]))
    assert np.allclose(out.cost_paid, est.acquisition_cost(X.iloc[:40]))


def test_without_a_budget_it_is_the_random_forest_on_every_row():
    X, y = load_breast_cancer(return_X_y=True)
    est = BudgetPrunedForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    assert est.pruned_.n_splits == est.pruned_.forest.full_split_mask().sum()
    assert len(est.candidates_) == 1 and bool(est.candidates_["chosen"].iloc[0])


def test_imbalanced_data_does_not_get_the_majority_predictor():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 6))
    y = (X[:, 2] > np.quantile(X[:, 2], 0.97)).astype(int)  # 3% positives, one cheap cue
    costs = [5.0, 5.0, 1.0, 5.0, 5.0, 5.0]
    est = BudgetPrunedForestClassifier(budget=1.5, costs=costs, **FAST).fit(X, y)
    select = est.split_["select"]
    majority = np.mean(y[select] == 0)
    assert est.pruned_.n_splits > 0
    assert est.score(X[select], y[select]) > majority
    assert est.average_cost(X[est.split_["prune"]]) <= 1.5 + 1e-9


def test_sklearn_tools_pipeline_grid_search_cross_validation_clone():
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:300], y[:300]
    est = BudgetPrunedForestClassifier(budget=3.0, **FAST)
    assert clone(est).get_params() == est.get_params()
    pipe = make_pipeline(StandardScaler(), est).fit(X, y)
    assert pipe.score(X, y) > 0.8
    assert pipe[-1].average_cost(pipe[0].transform(X)[pipe[-1].split_["prune"]]) <= 3.0 + 1e-9
    scores = cross_val_score(est, X, y, cv=2)
    assert scores.shape == (2,) and np.all(scores > 0.7)
    grid = GridSearchCV(est, {"budget": [1.0, 5.0]}, cv=2).fit(X, y)
    assert grid.best_params_["budget"] in (1.0, 5.0)
    assert grid.best_estimator_.budget == grid.best_params_["budget"]


def test_html_repr_names_the_estimator_and_its_budget():
    html = BudgetPrunedForestClassifier(budget=2.5)._repr_html_()
    assert "BudgetPrunedForestClassifier" in html and "2.5" in html


def test_regression_path():
    X, y = load_diabetes(return_X_y=True)
    costs = np.linspace(1, 3, X.shape[1])
    est = BudgetPrunedForestRegressor(budget=3.0, costs=costs, **FAST).fit(X, y)
    prune = X[est.split_["prune"]]
    assert est.average_cost(prune) <= 3.0 + 1e-9
    assert np.allclose(_brute_force_cost(est.pruned_, prune, costs), est.acquisition_cost(prune))
    assert np.allclose(walk_output(est.pruned_, X), est.predict(X), rtol=1e-9)
    export_agrees(est, X)
    win = est.candidates_[est.candidates_["chosen"]].iloc[0]
    select = est.split_["select"]
    assert win["score"] == pytest.approx(est.selected_.score(X[select], y[select]))
    assert {"rf"} <= set(est.candidates_["model"])


@pytest.mark.parametrize("kwargs, X_bad, match", [
    (dict(budget=-1.0), None, "budget"),
    (dict(budget=2.0, costs=[1.0, 2.0]), None, "cost"),
    (dict(budget=2.0), "inf", "X contains infinity"),
])
def test_bad_input_is_refused_with_a_clear_error(kwargs, X_bad, match):
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:120].copy()
    if X_bad == "inf":
        X[3, 4] = np.inf
    with pytest.raises(ValueError, match=match):
        BudgetPrunedForestClassifier(**kwargs, **FAST).fit(X, y[:120])


def test_inf_message_names_x_and_wrong_width_is_refused_at_predict():
    X, y = load_breast_cancer(return_X_y=True)
    bad = X[:100].copy()
    bad[0, 0] = -np.inf
    with pytest.raises(ValueError, match="X contains infinity"):
        BudgetPrunedForestClassifier(**FAST).fit(bad, y[:100])
    est = BudgetPrunedForestClassifier(**FAST).fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="X contains infinity"):
        est.predict(bad[:5])
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:5, :-1])


def test_missing_values_in_heart_are_accepted(tmp_path):
    """heart has NaN: the fit works, the winner predicts rows with NaN as its
    sklearn export and its JSON round trip do, and the budget holds on the prune
    rows by a walk that follows the missing-value side."""
    from prune_opt.datasets import load_dataset

    data = load_dataset("heart")
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    rows = np.isnan(X).any(axis=1)
    assert rows.any()
    costs = np.linspace(0.5, 2.0, X.shape[1])
    est = BudgetPrunedForestClassifier(budget=2.0, costs=costs, **FAST).fit(X, y)
    assert int(est.candidates_["chosen"].sum()) == 1
    pred = est.predict(X[rows])
    proba = est.predict_proba(X[rows])
    assert np.allclose(walk_output(est.pruned_, X[rows]), proba, atol=1e-9)
    export_agrees(est, X[rows])
    est.save(tmp_path / "heart.json")
    assert np.array_equal(po.load(tmp_path / "heart.json").predict(X[rows]), pred)
    assert np.array_equal(type(est).load(tmp_path / "heart.json").predict(X[rows]), pred)
    walked = _brute_force_cost(est.pruned_, X, costs)
    assert np.allclose(walked, est.acquisition_cost(X), rtol=1e-9)
    assert walked[est.split_["prune"]].mean() <= 2.0 * (1 + 1e-9)


@settings(max_examples=5)
@given(seed=st.integers(0, 2**16), share=st.floats(0.1, 0.6))
def test_random_data_budget_met_and_exports_agree(seed, share):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(90, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=90) > 0).astype(int)
    costs = rng.uniform(0.5, 3.0, size=4)
    budget = share * costs.sum()
    est = BudgetPrunedForestClassifier(budget=budget, costs=costs, n_estimators=3, time_limit=1,
                                       max_subsets=1, random_state=seed).fit(X, y)
    prune = X[est.split_["prune"]]
    assert _brute_force_cost(est.pruned_, prune, costs).mean() <= budget + 1e-9
    export_agrees(est, X)


@pytest.mark.slow
def test_pima_with_its_costs():
    from prune_opt.datasets import load_dataset

    ds = load_dataset("pima")
    costs = ds.costs_or_uniform()
    full = BudgetPrunedForestClassifier(costs=costs, n_estimators=20, random_state=0)
    base = full.fit(ds.X, ds.y).average_cost(ds.X)
    est = BudgetPrunedForestClassifier(budget=0.25 * base, costs=costs, n_estimators=20,
                                       time_limit=10, random_state=0).fit(ds.X, ds.y)
    prune, select = est.split_["prune"], est.split_["select"]
    assert est.average_cost(ds.X[prune]) <= 0.25 * base + 1e-9
    assert est.score(ds.X[select], ds.y[select]) > np.mean(ds.y[select] == 0)
    assert list(est.pruned_.feature_usage(ds.X)["feature"]) == list(ds.feature_names)
    # fitted on a plain array (the names came with the costs): the export takes a plain
    # array too, without scikit-learn's feature-name warning, and predicts the same --
    # also when the winner has no scikit-learn forest behind it (a lazy or subset
    # forest), whose export is built afresh from the named pruned forest
    import copy
    import warnings

    if est.pruned_.forest.is_additive:  # a boosted winner: the forests' export
        est = BudgetPrunedForestClassifier(budget=0.25 * base, costs=costs, n_estimators=20,
                                           candidates=["rf", "subset"], time_limit=10,
                                           random_state=0).fit(ds.X, ds.y)
    bare = copy.copy(est.pruned_.forest)
    bare.estimator = None
    est.pruned_ = po.PrunedForest(bare, est.pruned_.split_mask, costs=est.costs_)
    assert est.pruned_.forest.feature_names is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(est.to_sklearn().predict(ds.X), est.predict(ds.X))


def test_verbose_shows_each_phase_and_what_was_skipped_for_time(capsys):
    X, y = load_breast_cancer(return_X_y=True)
    BudgetPrunedForestClassifier(budget=2.0, verbose=True, **FAST).fit(X[:150], y[:150])
    err = capsys.readouterr().err
    assert "growing rf candidates" in err and "pruning rf (paper)" in err
    assert "selecting on held-out rows" in err
    est = BudgetPrunedForestClassifier(budget=2.0, verbose=True, **{**FAST, "time_limit": 0.05})
    est.fit(X, y)
    err = capsys.readouterr().err
    skipped = est.candidates_[est.candidates_["reason"].str.startswith("not ")]
    assert len(skipped)
    for name, reason in zip(skipped["name"], skipped["reason"]):
        assert f"skipped {name}: {reason}" in err


def test_regrow_repeats_the_winning_recipe_on_more_rows_within_the_budget():
    X, y = load_breast_cancer(return_X_y=True)
    costs = 1.0 + np.arange(X.shape[1]) % 4
    # regrow runs only when the clock has room for it: FAST's 2 s left none on a loaded
    # machine (the suite on two busy cores), so this fit gets more
    est = BudgetPrunedForestClassifier(budget=2.5, costs=costs, regrow=True,
                                       **dict(FAST, time_limit=8)).fit(X, y)
    win = est.candidates_[est.candidates_["chosen"]].iloc[0]
    info = est.pruned_.solve_info["regrow"]
    assert info["model"] == win["model"]
    assert info["n_rows"] == est.split_["grow"].size + est.split_["select"].size
    if est.pruned_.forest.in_bag is not None:  # grown on the grow and select rows
        assert all(np.asarray(b).size == info["n_rows"] for b in est.pruned_.forest.in_bag)
    prune = X[est.split_["prune"]]
    assert _brute_force_cost(est.pruned_, prune, costs).mean() <= 2.5 * (1 + 1e-9)
    export_agrees(est, X)
    assert est.selected_ is not est.pruned_
    assert win["score"] == pytest.approx(est.selected_.score(X[est.split_["select"]],
                                                             y[est.split_["select"]]))


def test_row_split_shares_per_task():
    """A classifier grows on 60% of the rows and prunes and selects on 20% each, per
    class; a regressor keeps 50/25/25 (the measured defaults); the parts are disjoint."""
    from forest_builders.estimator._estimator import SPLIT
    from forest_builders.estimator._input import three_way_split as _three_way_split

    y = np.repeat([0, 1], [400, 600])
    rng = np.random.default_rng(0)
    for task, shares in (("classification", (600, 200, 200)), ("regression", (500, 250, 250))):
        parts = _three_way_split(y if task == "classification" else y.astype(float),
                                 task == "classification", rng, SPLIT[task])
        assert tuple(p.size for p in parts) == shares
        assert np.unique(np.concatenate(parts)).size == y.size
        if task == "classification":
            assert [int((y[parts[0]] == c).sum()) for c in (0, 1)] == [240, 360]


@pytest.mark.parametrize("cls", [BudgetPrunedForestClassifier, BudgetPrunedForestRegressor])
def test_own_loss_prunings_start_from_the_paper_pruning(cls, monkeypatch):
    """Each own-loss call gets the paper pruning of the same forest and budget as a warm
    start, so its candidates include the full paper search's result."""
    X, y = load_diabetes(return_X_y=True)
    if cls is BudgetPrunedForestClassifier:
        y = (y > np.median(y)).astype(int)
    calls, real = [], po.fit_budget

    def spy(problem, *args, **kwargs):
        out = real(problem, *args, **kwargs)
        calls.append((problem, kwargs["objective"], kwargs.get("warm_start"), out))
        return out

    monkeypatch.setattr(po, "fit_budget", spy)
    cls(budget=1.5, candidates=["rf", "shallow", "subset"],
        **{**FAST, "time_limit": 20}).fit(X, y)  # room for every call
    papers = {id(p): out for p, obj, _, out in calls if obj == "paper"}
    own = [(p, warm) for p, obj, warm, _ in calls if obj != "paper"]
    assert own, "no own-loss pruning ran"
    for problem, warm in own:
        # a retry below the budget (the margin on every row was missed) starts from its
        # first result and the paper pruning
        starts = warm if isinstance(warm, list) else [warm]
        assert any(w is papers[id(problem)] for w in starts)


# ------------------------------------------------ the record in a saved estimator
@pytest.fixture(scope="module")
def saved_pair(cancer, tmp_path_factory):
    """A classifier fitted on a DataFrame and a regressor, saved."""
    X, y, _, est = cancer
    d = tmp_path_factory.mktemp("saved")
    est.save(d / "clf.json")
    Xd, yd = load_diabetes(return_X_y=True)
    BudgetPrunedForestRegressor(budget=3.0, **FAST).fit(Xd, yd).save(d / "reg.json")
    BudgetPrunedForestRegressor(n_estimators=2).fit(Xd, yd).save(d / "free.json")
    return d


def _record_of(doc):
    return doc["solve_info"]["budget_pruned_estimator"]


def _swap(names):
    return [names[1], names[0], *names[2:]]


@pytest.mark.parametrize("file, mutation, match", [
    # a permutation of the file's own feature names read frames in the wrong order
    ("clf", lambda d: _record_of(d).update(feature_names_in=_swap(d["feature_names"])),
     "feature_names_in .* differs from the file's feature_names"),
    ("clf", lambda d: _record_of(d).update(feature_names_in=7), "feature_names_in must be"),
    ("clf", lambda d: _record_of(d).update(feature_names_in=["a", "b"]),
     "feature_names_in must be"),
    # a regressor's file that says it is a classifier loaded with no classes_
    ("reg", lambda d: _record_of(d).update(**{"class": "BudgetPrunedForestClassifier"}),
     "a classification estimator, but the file holds a regression forest"),
    ("clf", lambda d: _record_of(d).update(params=[1, 2]), "params must be an object"),
    ("clf", lambda d: _record_of(d)["params"].update(budget=-1), "params are invalid.*budget"),
    ("clf", lambda d: _record_of(d)["params"].update(n_estimators="many"),
     "params are invalid.*n_estimators"),
    ("clf", lambda d: _record_of(d)["params"].update(time_limit=[1]), r"params \['time_limit'\]"),
    ("clf", lambda d: _record_of(d).update(candidates=[1, 2]), "candidates must be an object"),
    ("clf", lambda d: _record_of(d).update(candidates="table"), "candidates must be an object"),
    ("clf", lambda d: _record_of(d)["candidates"].update(score="high"),
     "candidates must hold one list per column"),
    ("clf", lambda d: _record_of(d)["candidates"]["score"].__setitem__(0, "high"),
     "candidates.score must hold numbers"),
    ("clf", lambda d: _record_of(d)["candidates"]["chosen"].__setitem__(0, 1),
     "candidates.chosen must hold bool"),
    ("clf", lambda d: _record_of(d)["candidates"]["chosen"].__setitem__(
        slice(None), [True] * len(_record_of(d)["candidates"]["chosen"])), "exactly one row"),
    ("clf", lambda d: _record_of(d)["candidates"].pop("reason"), "exactly the columns"),
    ("clf", lambda d: _record_of(d).update(extra=1), "unknown ones"),
])
def test_a_record_that_breaks_its_schema_or_the_file_is_refused(saved_pair, tmp_path, file,
                                                               mutation, match):
    import json

    cls = BudgetPrunedForestClassifier
    doc = json.loads((saved_pair / f"{file}.json").read_text())
    mutation(doc)
    (tmp_path / "m.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=match):
        cls.load(tmp_path / "m.json")


def test_a_loaded_record_has_the_fitted_types(cancer, saved_pair):
    """NaN cells (written as text) come back as floats, each column with its type
    (without a budget there are no select rows to score on)."""
    _, _, _, est = cancer
    back = BudgetPrunedForestClassifier.load(saved_pair / "clf.json")
    assert list(back.feature_names_in_) == list(est.feature_names_in_)
    for col in ("score", "brier", "average_cost", "select_cost", "seconds"):
        assert back.candidates_[col].dtype == float
        np.testing.assert_array_equal(back.candidates_[col].to_numpy(dtype=float),
                                      est.candidates_[col].to_numpy(dtype=float))
    reg = BudgetPrunedForestRegressor.load(saved_pair / "reg.json")
    assert not hasattr(reg, "classes_") and reg.candidates_["chosen"].sum() == 1
    free = BudgetPrunedForestRegressor.load(saved_pair / "free.json").candidates_
    assert free["score"].dtype == float and np.isnan(free["score"]).all()  # no select rows


@pytest.mark.parametrize("scale", [1e155, 1e200, 1e-155])
def test_regression_targets_of_any_magnitude_fit_and_score(scale):
    """The regressor standardises its target, so targets whose squares overflow (or
    underflow) fit without an error or a warning; score is R² computed here in units
    of the scale, and the chosen candidate's squared error is its select-row error in
    the target's units (inf beyond float64)."""
    import warnings

    X, y = load_diabetes(return_X_y=True)
    y = (y - y.mean()) / y.std() * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est = BudgetPrunedForestRegressor(budget=3.0, **FAST).fit(X, y)
        score = est.score(X, y)
    pred = est.predict(X) / scale
    u = y / scale
    assert score == pytest.approx(1 - np.sum((u - pred) ** 2) / np.sum((u - u.mean()) ** 2),
                                  rel=1e-9)
    sel = est.split_["select"]
    row = est.candidates_[est.candidates_["chosen"]].iloc[0]
    with np.errstate(over="ignore"):
        want = np.mean((est.selected_.predict(X[sel]) / scale - u[sel]) ** 2) * scale * scale
    assert row["brier"] == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("y, ok", [(np.array(["low", "high"] * 50), False),
                                   (np.array(["1.5", "-2", "3e1", "0"] * 25), True),
                                   (np.array(["1.5", None] * 50, dtype=object), False)])
def test_regression_text_targets_are_numbers_or_refused_naming_y(y, ok):
    X = np.random.default_rng(0).normal(size=(100, 3))
    est = BudgetPrunedForestRegressor(budget=2.0, **FAST)
    if ok:  # numeric text is read as numbers, as scikit-learn's regressors do
        assert est.fit(X, y).predict(X).dtype == float
        return
    with pytest.raises(ValueError, match=r"^y holds .* not numbers|^Input y contains NaN"):
        est.fit(X, y)  # None is read as NaN, which scikit-learn refuses naming y


# ----------------------------------------------------------------- time_limit
def _timed_fit(est, X, y):
    """The fit's seconds less the time other jobs kept it waiting for a core (a limit
    cannot bound that wait, so a test that counted it would fail under load)."""
    with run_seconds() as t:
        est.fit(X, y)
    return t.seconds


def test_a_small_time_limit_keeps_the_fit_small():
    """time_limit covers the whole fit: with 0.5 s on 800 rows and 20 trees a fit took
    4.1 s (every fit_budget call got at least 0.3 s, growing was not counted); now the
    candidates the limit has no room for are skipped and say so, and the winner still
    meets the budget."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=800, n_features=10, n_informative=5,
                               random_state=0)
    costs = np.arange(1.0, 11.0)
    est = BudgetPrunedForestClassifier(budget=5.5, costs=costs, n_estimators=20,
                                       time_limit=0.5, random_state=0)
    _timed_fit(est, X[:100], y[:100])  # imports and first calls are not the limit's
    seconds = _timed_fit(est, X, y)
    assert seconds <= 1.25 * 0.5, seconds
    c = est.candidates_
    assert c["chosen"].sum() == 1 and c.loc[c["chosen"], "fits_budget"].all()
    skipped = c[c["reason"].str.startswith("not ")]
    assert len(skipped) > 0 and skipped["reason"].str.contains("time_limit").all()
    assert est.average_cost(X[est.split_["prune"]]) <= 5.5 * (1 + 1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["digits", "thyroid"])
def test_time_limit_is_kept_on_real_tables(name):
    """On real tables a fit takes at most 1.25 x time_limit."""
    from prune_opt.datasets import load_dataset

    d = load_dataset(name)
    fc = d.costs_or_uniform()
    budget = 0.25 * float(fc.unit_costs.sum()) / 2
    est = BudgetPrunedForestClassifier(budget=budget, costs=fc, time_limit=6.0,
                                       random_state=0)
    seconds = _timed_fit(est, d.X, d.y)
    assert seconds <= 1.25 * 6.0, (seconds, est.candidates_[["name", "reason"]])
    assert est.candidates_["chosen"].sum() == 1


@pytest.mark.parametrize("kind", ["text", "category", "dates"])
def test_features_that_are_not_numbers_are_refused_naming_the_column(kind):
    """scikit-learn's own message ('could not convert string to float: x', or a numpy
    dtype-promotion error for dates) names neither X nor the column."""
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=100), "b": rng.normal(size=100)})
    y = (frame["a"] > 0).astype(int)
    values = {"text": ["x", "y"] * 50, "category": pd.Categorical(["x", "y"] * 50),
              "dates": pd.date_range("2020-01-01", periods=100)}[kind]
    est = BudgetPrunedForestClassifier(budget=1.0, **FAST)
    with pytest.raises(ValueError, match=r"^X column 'c' holds .* not numbers"):
        est.fit(frame.assign(c=values), y)
    est.fit(frame.assign(c=np.arange(100.0)), y)
    with pytest.raises(ValueError, match=r"^X column 'c' holds .* not numbers"):
        est.predict(frame.assign(c=values))
    with pytest.raises(ValueError, match=r"^X column 2 holds"):  # an array: by position
        est.predict(np.column_stack([frame.to_numpy(), np.array(["x", "y"] * 50)]))


def test_what_the_docs_promise_of_a_boosted_winner_is_what_it_does(tmp_path):
    """A boosted winner's probabilities are its link of summed raw scores (not averaged
    class probabilities), and what agrees with ``predict`` is the file and the export of
    its own kind (``pruned_.to_lightgbm()``), not ``to_sklearn()``, which refuses it: the
    docstring and docs/estimator.md said otherwise."""
    from pathlib import Path

    pytest.importorskip("lightgbm")
    X, y = load_breast_cancer(return_X_y=True)
    est = BudgetPrunedForestClassifier(budget=3.0, candidates=["gbm"], random_state=0,
                                       time_limit=5).fit(X, y)
    assert est.pruned_.forest.is_additive
    assert export_agrees(est, X) == "lightgbm"  # to_sklearn() refuses, to_lightgbm agrees
    est.save(tmp_path / "m.json")
    assert np.array_equal(po.load(tmp_path / "m.json").predict_proba(X), est.predict_proba(X))
    doc = BudgetPrunedForestClassifier.predict_proba.__doc__
    assert "boosted" in doc and "link" in doc and not doc.lstrip().startswith("Averaged")
    guide = (Path(__file__).parents[1] / "docs" / "estimator.md").read_text()
    promise = guide[guide.index("* **One model everywhere**"):]
    promise = promise[:promise.index("\n* ", 3)]
    assert "to_lightgbm()" in promise and "forest winner" in promise
