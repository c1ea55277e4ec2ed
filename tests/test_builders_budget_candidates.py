"""The budget estimator's candidate families: the registry, ``candidates=``, boosted
winners, honest rows, the budget on every row given to fit, the time limit and the
saved record."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes

from forest_builders import BudgetPrunedForestClassifier, BudgetPrunedForestRegressor
from forest_builders.estimator import _boosted as _boosted_candidates
from forest_builders.estimator import _estimator as budget_pruned
from forest_builders.estimator import _registry as _candidates
from forest_builders.estimator._pruning import COST_MARGIN
from forest_builders.estimator._registry import CANDIDATE_FAMILIES, family_status, resolve_families
from tests._timing import run_seconds
from tests.estimator_walk import export_agrees, walk_cost, walk_output

ROOMY = dict(n_estimators=4, time_limit=30, max_subsets=2, random_state=0)


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    costs = 1.0 + np.arange(X.shape[1]) % 5
    est = BudgetPrunedForestClassifier(budget=4.0, costs=costs, **ROOMY).fit(X, y)
    return X, y, costs, est


def test_the_registry_lists_every_family_once_in_growing_order():
    assert list(CANDIDATE_FAMILIES) == ["rf", "shallow", "subset", "gbm", "cegb", "catboost",
                                        "lazy"]
    assert [f.boosted for f in CANDIDATE_FAMILIES.values()] == [False] * 3 + [True] * 3 + [False]
    assert family_status("regression")["lazy"] is not None  # a classifier's family
    assert resolve_families(None, "regression") == ["rf", "shallow", "subset", "gbm", "cegb"]


def test_candidates_table_records_every_family(cancer):
    """With time for everything, every family that applies grows at least one candidate,
    and each row names its family, its model and its costs."""
    X, _, _, est = cancer
    table = est.candidates_
    assert set(table["family"]) == set(resolve_families(None, "classification"))
    assert table["reason"].str.len().gt(0).all() and table["chosen"].sum() == 1
    for fam, model in zip(table["family"], table["model"]):
        assert model.split("(")[0] in {fam, "rf"}  # shallow forests are rf(max_leaf_nodes=8)
    boosted = table[table["family"].isin(["gbm", "cegb"])]
    assert set(boosted.loc[boosted["objective"] != "none", "objective"]) <= {"logloss"}
    assert not boosted["refit"].any()  # leaf refits are for forests


def test_candidates_parameter_names_the_families():
    X, y = load_breast_cancer(return_X_y=True)
    est = BudgetPrunedForestClassifier(budget=3.0, candidates=["gbm", "rf"], **ROOMY).fit(X, y)
    assert set(est.candidates_["family"]) == {"rf", "gbm"}
    one = BudgetPrunedForestClassifier(budget=3.0, candidates="cegb", **ROOMY).fit(X, y)
    assert set(one.candidates_["family"]) == {"cegb"}
    for bad, match in ((["forest"], "unknown family 'forest'"), ([], "empty"),
                       (["rf", "rf"], "named twice")):
        with pytest.raises(ValueError, match=match):
            BudgetPrunedForestClassifier(budget=3.0, candidates=bad).fit(X, y)
    Xd, yd = load_diabetes(return_X_y=True)
    with pytest.raises(ValueError, match="'lazy' cannot be used here: it grows classification"):
        BudgetPrunedForestRegressor(budget=3.0, candidates=["lazy"]).fit(Xd, yd)


def test_without_lightgbm_cegb_is_left_out_and_gbm_is_histgradientboosting(monkeypatch):
    real = _candidates.importlib.util.find_spec
    monkeypatch.setattr(_candidates.importlib.util, "find_spec",
                        lambda name, *a: None if name == "lightgbm" else real(name, *a))
    monkeypatch.setattr(_boosted_candidates, "boosting_library", lambda: "sklearn")
    assert "cegb" not in resolve_families(None, "classification")
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.raises(ValueError, match="'cegb' cannot be used here: it needs lightgbm"):
        BudgetPrunedForestClassifier(budget=3.0, candidates=["cegb"]).fit(X, y)
    est = BudgetPrunedForestClassifier(budget=3.0, candidates=["gbm"], **ROOMY).fit(X, y)
    assert est.pruned_.estimator_class == "HistGradientBoostingClassifier"
    assert est.average_cost(X[est.split_["prune"]]) <= 3.0 * (1 + 1e-9)
    assert np.allclose(walk_output(est.pruned_, X), est.predict_proba(X), atol=1e-9)
    export_agrees(est, X)


@pytest.mark.parametrize("cls", [BudgetPrunedForestClassifier, BudgetPrunedForestRegressor])
def test_a_boosted_winner_predicts_exports_and_saves_as_scored(cls, tmp_path):
    """A boosted winner (a regressor's target standardised and mapped back: raw scores
    and initial score) predicts as its walked trees, as its LightGBM export and as the
    estimator loaded from its JSON file."""
    X, y = load_diabetes(return_X_y=True)
    y = (y > np.median(y)).astype(int) if cls is BudgetPrunedForestClassifier else 1e6 + 3 * y
    costs = np.linspace(1, 3, X.shape[1])
    est = cls(budget=4.0, costs=costs, candidates=["gbm"], **ROOMY).fit(X, y)
    assert est.pruned_.forest.is_additive
    out = est.predict_proba(X) if cls is BudgetPrunedForestClassifier else est.predict(X)
    assert np.allclose(walk_output(est.pruned_, X), out, rtol=1e-9, atol=1e-9)
    assert export_agrees(est, X) == "lightgbm"
    if cls is BudgetPrunedForestRegressor:
        sel = est.split_["select"]
        win = est.candidates_[est.candidates_["chosen"]].iloc[0]
        assert win["score"] == pytest.approx(est.score(X[sel], y[sel]))
        assert win["brier"] == pytest.approx(np.mean((est.predict(X[sel]) - y[sel]) ** 2))
    est.save(tmp_path / "m.json")
    back = cls.load(tmp_path / "m.json")
    assert np.array_equal(back.predict(X), est.predict(X))
    assert np.array_equal(walk_cost(back.pruned_, X, costs), est.acquisition_cost(X))


def test_the_selecting_rows_never_grew_or_pruned_any_candidate(monkeypatch):
    """Flipping the select rows' labels changes the scores and maybe the winner, but no
    grown model and no pruning: those rows' labels reach nothing but the selection."""
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:300], y[:300]
    costs = 1.0 + np.arange(X.shape[1]) % 5
    parts = budget_pruned.three_way_split(y, True, np.random.default_rng(0), (0.6, 0.2, 0.2))
    monkeypatch.setattr(budget_pruned, "three_way_split", lambda *a: parts)
    kw = dict(budget=3.0, costs=costs, **{**ROOMY, "time_limit": 60, "max_subsets": 1})
    a = BudgetPrunedForestClassifier(**kw).fit(X, y)
    flipped = y.copy()
    flipped[parts[2]] = 1 - flipped[parts[2]]
    b = BudgetPrunedForestClassifier(**kw).fit(X, flipped)
    same = ["name", "family", "objective", "n_splits", "average_cost", "fit_cost",
            "heldout_cost"]
    pd.testing.assert_frame_equal(a.candidates_[same], b.candidates_[same])
    assert not np.allclose(a.candidates_["score"], b.candidates_["score"])
    for est in (a, b):  # and the winner was grown on the grow rows (and the prune rows
        # when its features fit the budget, so it was never pruned): never the select rows
        if est.pruned_.forest.in_bag is not None:
            sizes = {np.asarray(bag).size for bag in est.pruned_.forest.in_bag}
            assert sizes <= {parts[0].size, parts[0].size + parts[1].size}


def test_a_prefix_that_fits_grows_on_the_prune_rows_too_and_is_never_pruned(monkeypatch):
    """A subset forest or gbm model on a prefix whose features all fit the budget cannot
    cost more than it: it grows on the grow and prune rows (every round: no early
    stopping on rows it learnt from) and is kept as grown; any other prefix grows on the
    grow rows only; the select rows grow nothing."""
    from forest_builders.estimator import _forests as _forest_candidates

    X, y = load_breast_cancer(return_X_y=True)
    costs = 1.0 + np.arange(X.shape[1]) % 5
    calls = []

    def spy(real, family):
        def wrapped(ctx, *args, **kw):
            # _subset_forest(ctx, cols, rows); _grow_boosted(ctx, library, cols, params,
            # rounds, rows)
            cols, rows = (args[0] if family == "subset" else args[1]), args[-1]
            calls.append((family, None if cols is None else tuple(int(c) for c in cols),
                          set(rows.tolist()), kw.get("stop_early", True), ctx))
            return real(ctx, *args, **kw)
        return wrapped

    monkeypatch.setattr(_forest_candidates, "_subset_forest",
                        spy(_forest_candidates._subset_forest, "subset"))
    monkeypatch.setattr(_boosted_candidates, "_grow_boosted",
                        spy(_boosted_candidates._grow_boosted, "gbm"))
    est = BudgetPrunedForestClassifier(budget=6.0, costs=costs, candidates=["subset", "gbm"],
                                       **ROOMY).fit(X, y)
    grow, prune, select = (set(est.split_[k].tolist()) for k in ("grow", "prune", "select"))
    fc = est.costs_
    assert {f for f, *_ in calls} == {"subset", "gbm"}
    both = 0
    for family, cols, rows, stop_early, _ in calls:
        assert not rows & select
        whole = sum(fc.feature_cost()[list(cols)]) if cols is not None else np.inf
        if rows == grow | prune:
            both += 1
            assert whole <= 6.0 * (1 + 1e-9) and (family == "subset" or not stop_early)
        else:
            assert rows == grow and whole > 6.0 and (family == "subset" or stop_early)
    assert both >= 2  # the first prefix of each family
    table = est.candidates_
    for k in {len(cols) for _, cols, rows, *_ in calls if rows == grow | prune}:
        for fam in ("subset", "gbm"):
            row = table[table["name"] == f"{fam}(k={k})"]
            assert len(row) == 1 and row["objective"].iloc[0] == "none"


def test_the_budget_holds_on_every_row_given_to_fit_with_its_margin(cancer):
    """Every fitting candidate meets the budget on the prune rows, and with
    COST_MARGIN standard errors of its mean on every row given to fit; the cost columns
    are the winner's walked costs on those rows."""
    X, y, costs, est = cancer
    table = est.candidates_
    fits = table[table["fits_budget"]]
    assert (fits["average_cost"] <= 4.0 * (1 + 1e-9)).all()
    assert (fits["fit_cost_bound"] <= 4.0 * (1 + 1e-9)).all()
    over = table[~table["fits_budget"] & table["fit_cost"].notna()]
    assert ((over["average_cost"] > 4.0) | (over["fit_cost_bound"] > 4.0)).all()
    walked = walk_cost(est.selected_, X, costs)
    win = table[table["chosen"]].iloc[0]
    g, p, s = (est.split_[k] for k in ("grow", "prune", "select"))
    assert win["fit_cost"] == pytest.approx(walked.mean())
    se = walked.std(ddof=1) / np.sqrt(walked.size)
    assert win["fit_cost_bound"] == pytest.approx(walked.mean() + COST_MARGIN * se)
    assert win["heldout_cost"] == pytest.approx(walked[np.concatenate([g, s])].mean())
    assert win["average_cost"] == pytest.approx(walked[p].mean())


def test_the_time_limit_holds_with_every_family():
    """The whole fit, growing included, ends within 1.25 x time_limit (a generous bound
    for a shared machine: imports and first calls run before the timed fit; the time
    other jobs kept it waiting for a core is not the limit's, tests/_timing.py)."""
    X, y = load_breast_cancer(return_X_y=True)
    costs = 1.0 + np.arange(X.shape[1]) % 5
    est = BudgetPrunedForestClassifier(budget=4.0, costs=costs, time_limit=3.0,
                                       random_state=0)
    clone(est).set_params(time_limit=1.0).fit(X[:200], y[:200])
    with run_seconds() as t:  # less what other jobs kept the fit waiting for a core
        est.fit(X, y)
    assert t.seconds <= 1.25 * 3.0, (t.wall, t.waited, est.candidates_[["name", "seconds"]])
    assert est.candidates_["chosen"].sum() == 1


def test_the_record_round_trip_is_lossless(cancer, tmp_path):
    X, _, _, est = cancer
    est = clone(est).set_params(candidates=["rf", "gbm", "cegb"]).fit(X, cancer[1])
    est.save(tmp_path / "m.json")
    back = BudgetPrunedForestClassifier.load(tmp_path / "m.json")
    assert back.get_params() == {**est.get_params(), "costs": back.costs}
    assert back.candidates == ["rf", "gbm", "cegb"]
    pd.testing.assert_frame_equal(back.candidates_, est.candidates_, check_exact=True)
    assert np.array_equal(back.predict_proba(X), est.predict_proba(X))


@pytest.mark.parametrize("dropped", [
    ("family", "fit_cost", "fit_cost_bound", "heldout_cost", "above_prior"),  # before boosting
    ("above_prior",),  # before the prior's flag
])
def test_a_record_of_an_earlier_version_loads_with_the_new_columns_unknown(cancer, tmp_path,
                                                                           dropped):
    X, _, _, est = cancer
    est.save(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    table = doc["solve_info"]["budget_pruned_estimator"]["candidates"]
    for col in dropped:
        del table[col]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    back = BudgetPrunedForestClassifier.load(tmp_path / "old.json")
    if "family" in dropped:
        assert (back.candidates_["family"] == "").all()
        assert back.candidates_["fit_cost"].isna().all()
    assert not back.candidates_["above_prior"].any()  # not known to be above the prior
    assert list(back.candidates_["name"]) == list(est.candidates_["name"])
    assert list(back.candidates_.columns) == list(est.candidates_.columns)


def test_a_record_lacking_a_column_of_an_older_version_only_is_refused(cancer, tmp_path):
    """Columns were added in versions: a table lacking an older one but holding a newer
    one matches no version."""
    cancer[3].save(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    del doc["solve_info"]["budget_pruned_estimator"]["candidates"]["family"]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="exactly the columns"):
        BudgetPrunedForestClassifier.load(tmp_path / "bad.json")


def _record(doc):
    return doc["solve_info"]["budget_pruned_estimator"]


@pytest.mark.parametrize("mutation, match", [
    (lambda d: _record(d)["candidates"]["family"].__setitem__(0, 3),
     "candidates.family must hold str"),
    (lambda d: _record(d)["candidates"]["fit_cost_bound"].__setitem__(0, "low"),
     "candidates.fit_cost_bound must hold numbers"),
    (lambda d: _record(d)["candidates"].pop("heldout_cost"), "exactly the columns"),
    (lambda d: _record(d)["params"].update(candidates=["rf", "forest"]),
     r"candidate families \['forest'\] that do not exist"),
    (lambda d: _record(d)["params"].update(candidates=["rf", 3]), r"params \['candidates'\]"),
    (lambda d: _record(d)["params"].update(budget=[1.0]), r"params \['budget'\]"),
])
def test_a_record_with_a_bad_new_field_is_refused(cancer, tmp_path, mutation, match):
    cancer[3].save(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    mutation(doc)
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=match):
        BudgetPrunedForestClassifier.load(tmp_path / "bad.json")


@pytest.mark.parametrize("cls", [BudgetPrunedForestClassifier, BudgetPrunedForestRegressor])
def test_scores_and_costs_read_off_the_routed_rows_are_the_models_own(cls, monkeypatch):
    """Each candidate's rows are routed once and shared by its cost columns and its
    select-row scores: every scored row holds what its model says when asked directly
    (forests and boosted models, as grown, pruned and with their leaves refit)."""
    from forest_builders.estimator._pruning import prune_row_loss, refits_leaves

    X, y = load_diabetes(return_X_y=True)
    y = (y > np.median(y)).astype(int) if cls is BudgetPrunedForestClassifier else y
    costs = np.linspace(1, 3, X.shape[1])
    seen = []
    real = cls._choose

    def spy(self, rows):
        seen.extend(r for r in rows if r["_pruned"] is not None)
        return real(self, rows)

    monkeypatch.setattr(cls, "_choose", spy)
    est = cls(budget=4.0, costs=costs, **ROOMY).fit(X, y)
    p, s = est.split_["prune"], est.split_["select"]
    assert {r["objective"] != "none" for r in seen} == {False, True}
    assert {r["refit"] for r in seen} == {False, True}
    assert {refits_leaves(r["_pruned"].forest) for r in seen} == {False, True}  # both kinds
    yt = y if cls is BudgetPrunedForestClassifier else (y - y.mean()) / y.std()
    for r in seen:
        pf = r["_pruned"]
        walked = pf.acquisition_cost(X, costs=est.costs_)  # in the user's units
        assert r["average_cost"] == pytest.approx(walked[p].mean(), rel=1e-12)
        assert r["fit_cost"] == pytest.approx(walked.mean(), rel=1e-12)
        assert r["select_cost"] == pytest.approx(walked[s].mean(), rel=1e-12)
        if cls is BudgetPrunedForestClassifier:
            assert r["score"] == pf.score(X[s], y[s])
            assert r["brier"] == pytest.approx(prune_row_loss(pf, X[s], y[s]), rel=1e-12)
        else:  # scored on the standardised target, R² is the same
            assert r["score"] == pytest.approx(pf.score(X[s], yt[s]), rel=1e-9, abs=1e-12)


class _SearchContext:
    """A growing context for :func:`penalty_search` alone: a model is its penalty, its
    cost on the prune rows ``10 / (1 + penalty)``, and ``room`` models have time."""

    rows = None

    def __init__(self, budget, room=99):
        self.budget, self.room = budget, room
        self.tried, self.added, self.skipped = [], [], []

    def timed(self, kind, fn):
        return (fn(None), 1.0) if len(self.tried) < self.room else (None, 0.0)

    def prune_cost(self, model):
        return 10.0 / (1.0 + model)

    def skip(self, name, family, kind):
        self.skipped.append(name)

    def add(self, name, family, kind, model, recipe, seconds=0.0, **info):
        self.added.append((name, info))


@pytest.mark.parametrize("budget, room, tried, kept", [
    # above the budget at the start: ten times the penalty until a model fits, then three
    # geometric bisections; the least penalised that fits and the most penalised above
    (4.0, 99, [0.03, 0.3, 3.0, 0.9487, 1.687, 1.2651], ["1.27", "1.69"]),
    # within it at the start: a tenth of the penalty until one is above
    (9.9, 99, [0.03, 0.003, 0.009487, 0.01687, 0.01265], ["0.00949", "0.0127"]),
    # no room after two models: what was grown is kept
    (4.0, 2, [0.03, 0.3], ["0.3"]),
])
def test_the_penalty_search_walks_geometrically_then_bisects(budget, room, tried, kept):
    """The one search of the penalised families (CEGB's trade-off, CatBoost's coefficient)."""
    ctx = _SearchContext(budget, room)

    def recipe_at(value):
        return lambda rows, deadline=None: ctx.tried.append(value) or value

    _boosted_candidates.penalty_search(ctx, "cegb", "tradeoff", recipe_at, 0.03, 10.0, 3,
                                       (1e-5, 1e3))
    assert ctx.tried == pytest.approx(tried, rel=1e-3)
    assert [name for name, _ in ctx.added] == [f"cegb(tradeoff={k})" for k in kept]
    assert all(info["prune_cost"] == ctx.prune_cost(info["tradeoff"]) for _, info in ctx.added)
    assert ctx.skipped == []


def test_a_stronger_model_is_grown_where_the_search_left_a_gap(monkeypatch):
    """The model for pruning at about twice the budget.  Here the cost jumps as CEGB's
    does on a shared blood draw (10 up to a penalty of 0.35, 2.5 up to 0.45, 1.2 up to
    1.4, then 0.5; budget 1): no model the search grew costs 1.5 to 4 x the budget, the
    most penalised above the budget (1.265, cost 1.2) is near it and the next less
    penalised one grown costs 10, so one more is grown at 1.265 / sqrt(10) = 0.4 (cost
    2.5) and kept, pruned last; with STRONGER = None (the default) the family keeps its
    two models around the budget."""
    class Steps(_SearchContext):
        def prune_cost(self, model):
            return 10.0 if model < 0.35 else 2.5 if model < 0.45 else 1.2 if model < 1.4 else 0.5

    def search():
        ctx = Steps(1.0)
        _boosted_candidates.penalty_search(
            ctx, "cegb", "tradeoff",
            lambda v: (lambda rows, deadline=None: ctx.tried.append(v) or v),
            0.03, 10.0, 3, (1e-5, 1e3))
        return ctx

    monkeypatch.setattr(_boosted_candidates, "STRONGER", 2.0)
    ctx = search()
    assert ctx.tried == pytest.approx([0.03, 0.3, 3.0, 0.9487, 1.687, 1.2651, 0.4], rel=1e-3)
    assert [info["prune_last"] for _, info in ctx.added] == [True, False, False]
    assert [name for name, _ in ctx.added] == [f"cegb(tradeoff={k})"
                                               for k in ("0.4", "1.27", "1.69")]
    monkeypatch.setattr(_boosted_candidates, "STRONGER", None)
    ctx = search()
    assert len(ctx.tried) == 6 and [n for n, _ in ctx.added] == ["cegb(tradeoff=1.27)",
                                                                 "cegb(tradeoff=1.69)"]


def test_the_penalty_search_without_room_for_its_first_model_is_a_skipped_row():
    ctx = _SearchContext(4.0, room=0)
    _boosted_candidates.penalty_search(ctx, "catboost", "coefficient", lambda v: None, 1.0,
                                       10.0, 3, (1e-4, 1e4))
    assert ctx.skipped == ["catboost"] and ctx.added == []
