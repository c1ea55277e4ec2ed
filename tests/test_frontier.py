"""The budget benchmarks (benchmarks/frontier.py, benchmarks/regression.py) at small size:
the shared protocol's selection, the families' budgets and costs, the report's counts."""

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt import FeatureCosts

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import _families as fam  # noqa: E402
from benchmarks import _protocol as proto  # noqa: E402
from benchmarks import _report as report  # noqa: E402
from benchmarks import frontier, regression  # noqa: E402


@pytest.fixture(scope="module")
def cancer_ctx():
    X, y = load_breast_cancer(return_X_y=True)
    costs = FeatureCosts(np.linspace(1.0, 3.0, X.shape[1]))
    ctx = proto.Context(proto.split(X, y, 4000, 0), costs, [], seed=0, trees=5,
                        time_limit=1.0)
    rf = proto.reference_forest(ctx)
    ctx.base_cost = float(po.acquisition_cost(rf, ctx.X_v, costs).mean())
    ctx.budgets = [0.1 * ctx.base_cost, 0.25 * ctx.base_cost]
    return ctx, rf


# ---------------------------------------------------------------- protocol
def _member(ctx, acc, cost, **kw):
    """A member whose validation accuracy is ``acc`` (the first rows right, then wrong)."""
    n = len(ctx.y_v)
    pred = np.where(np.arange(n) < round(acc * n), ctx.y_v, 1 - ctx.y_v)
    return proto.Member(ctx, pred, cost, lambda: (ctx.y_te, cost), **kw)


def test_pick_keeps_the_best_fitting_member_and_one_calls_for_their_budget(cancer_ctx):
    ctx, _ = cancer_ctx
    free, dear, best = _member(ctx, 0.6, 0.0), _member(ctx, 0.95, 5.0), _member(ctx, 0.8, 1.0)
    assert proto.pick([free, dear, best], 1.0, ctx) is best
    assert proto.pick([free, dear, best], 0.5, ctx) is free
    assert proto.pick([dear], 1.0, ctx) is None  # nothing fits: the caller falls back
    one_call = _member(ctx, 0.7, 1.5, budget=1.0)  # over its budget, yet it stands for it
    assert proto.pick([best, one_call], 1.0, ctx) is one_call
    assert proto.pick([best, one_call], 2.0, ctx) is best


def test_cells_fall_back_flag_over_budget_and_test_only_what_is_chosen(cancer_ctx):
    ctx, _ = cancer_ctx
    tested = []

    def member(acc, cost, **kw):
        m = _member(ctx, acc, cost, **kw)
        m._test = lambda m=m: tested.append(m) or (ctx.y_te, cost)
        return m

    fams = {"a": [member(0.9, 9.0)], "b": [member(0.7, 0.1), member(0.8, 0.2)],
            "one": [member(0.99, 99.0, budget=ctx.budgets[0])],
            "missing": proto.Unavailable("not available")}
    ctx2 = proto.Context([ctx.X_tr, ctx.y_tr, ctx.X_v, ctx.y_v, ctx.X_te, ctx.y_te], ctx.costs,
                         [ctx.budgets[0]])
    cells = proto.make_cells(fams, ctx2, [0.1], pipelines=["a", "b"])
    ch = cells[0]["chosen"]
    assert ch["a"]["fallback"] and ch["a"]["val_cost"] == 0.0  # the constant predictor
    assert not ch["b"]["fallback"] and ch["b"]["val_cost"] == 0.2
    assert ch["one"]["over_budget"] and not ch["b"]["over_budget"]
    assert "missing" not in ch
    assert cells[0]["best_method"] == "b"
    assert len(tested) == 2  # b's chosen member and the one-call member, nothing else


# ---------------------------------------------------------------- families
def test_path_cost_is_the_library_cost_of_the_same_forest(cancer_ctx):
    """The cheap-subset anchor's cost: with every column, exactly po.acquisition_cost."""
    ctx, rf = cancer_ctx
    cols = np.arange(ctx.X_v.shape[1])
    np.testing.assert_allclose(fam._path_cost(rf, cols, ctx.X_v, ctx.costs),
                               po.acquisition_cost(rf, ctx.X_v, ctx.costs), rtol=1e-12)
    fc = ctx.costs.feature_cost()
    for j, k in ((5, 17), (20, 2)):  # a forest on columns j, k pays for j, k or both
        cols = np.array([j, k])
        m = RandomForestClassifier(5, random_state=0).fit(ctx.X_tr[:, cols], ctx.y_tr)
        cost = fam._path_cost(m, cols, ctx.X_v, ctx.costs)
        assert set(np.round(cost, 9)) <= {round(fc[j], 9), round(fc[k], 9),
                                          round(fc[j] + fc[k], 9)}
        assert np.any(np.isclose(cost, fc[j] + fc[k]))


def test_cheap_subset_rf_grows_nested_prefixes_by_importance_per_cost(cancer_ctx):
    ctx, rf = cancer_ctx
    members = fam.cheap_subset_rf(rf, ctx)
    assert [m.point["n_features"] for m in members] == list(range(1, len(members) + 1))
    assert sum(m.point["val_cost"] > max(ctx.budgets) for m in members) == 2
    value = rf.feature_importances_ / ctx.costs.feature_cost()
    first = int(np.argmax(value))
    # one feature: every example pays at most that feature, and the forest reads it
    assert 0 < members[0].point["val_cost"] <= ctx.costs.feature_cost()[first] + 1e-12
    for m in members:  # a prefix never costs more than all of its features
        k = m.point["n_features"]
        top = np.argsort(-value, kind="stable")[:k]
        assert m.point["val_cost"] <= ctx.costs.feature_cost()[top].sum() + 1e-9


def test_subset_pipelines_stay_within_their_budgets(cancer_ctx):
    """Nested prefixes grown until two forests exceed the largest budget; each budget's
    prunings of the forests just above it fit that budget on validation."""
    ctx, _ = cancer_ctx
    models = fam.subset_forests(ctx)
    sizes = [m.features_.size for m, _ in models]
    assert sizes == list(range(1, len(models) + 1))
    assert sum(c > max(ctx.budgets) for _, c in models) == 2
    for m, c in models:  # the recorded cost is the forest's on validation
        assert c == pytest.approx(float(np.mean(m.acquisition_cost(ctx.X_v))))
    members = fam.subset_fit_budget(models, ctx, objectives=("paper",))
    assert len(members) == 4  # two forests per budget, one objective
    for budget, m in zip(np.repeat(ctx.budgets, 2), members):
        assert m.point["val_cost"] <= budget + 1e-9
        assert m.point["val_cost"] == pytest.approx(m.model.average_cost(ctx.X_v))


def test_fit_budget_calls_are_one_call_members_within_budget(cancer_ctx):
    ctx, rf = cancer_ctx
    members = fam.fit_budget_calls(rf, ctx, objective="paper", time_limit=2.0)
    assert [m.budget for m in members] == ctx.budgets
    for m in members:
        assert m.point["val_cost"] <= m.budget * (1 + 1e-9)
        assert m.point["seconds"] >= 0
        assert m.point["val_acc"] == pytest.approx(m.model.score(ctx.X_v, ctx.y_v))


def test_the_estimator_row_is_not_available_without_the_class(cancer_ctx, monkeypatch):
    import forest_builders

    ctx, _ = cancer_ctx
    monkeypatch.delattr(forest_builders, "BudgetPrunedForestClassifier", raising=False)
    row = fam.estimator(ctx)
    assert isinstance(row, proto.Unavailable) and row.why.startswith("not available")


def test_a_failing_estimator_is_reported_failed_not_crashed(cancer_ctx, monkeypatch):
    import forest_builders

    ctx, _ = cancer_ctx

    class Broken:
        def __init__(self, **kw):
            pass

        def fit(self, X, y):
            raise ValueError("Input X contains NaN.\nmore text")

    monkeypatch.setattr(forest_builders, "BudgetPrunedForestClassifier", Broken, raising=False)
    row = fam.estimator(ctx)
    assert isinstance(row, proto.Unavailable)
    assert row.why == "failed: ValueError: Input X contains NaN."


def test_the_estimator_is_fitted_once_per_budget_on_train_and_validation(cancer_ctx,
                                                                          monkeypatch):
    import forest_builders

    ctx, _ = cancer_ctx
    seen = []

    class Fake:
        time_limit = 20.0

        def __init__(self, *, budget, costs, random_state):
            self.budget = budget

        def fit(self, X, y):
            seen.append((self.budget, X.shape[0]))
            self.rf_ = RandomForestClassifier(3, random_state=0).fit(X, y)
            self.candidates_ = pd.DataFrame([{"model": "rf", "family": "rf", "chosen": True,
                                              "objective": "none", "fit_cost": 1.0}])
            return self

        def predict(self, X):
            return self.rf_.predict(X)

        def acquisition_cost(self, X):
            return po.acquisition_cost(self.rf_, X, ctx.costs)

    monkeypatch.setattr(forest_builders, "BudgetPrunedForestClassifier", Fake, raising=False)
    members = fam.estimator(ctx)
    n = len(ctx.y_tr) + len(ctx.y_v)
    assert seen == [(b, n) for b in ctx.budgets]
    assert [m.budget for m in members] == ctx.budgets
    assert all("seconds" in m.point for m in members)


def test_recorded_candidates_replay_to_the_estimator_s_own_choice(cancer_ctx, tmp_path):
    """--candidates records every candidate of every estimator fit; replaying the
    estimator's rule on the records picks the candidate it chose, with the test
    accuracy it scores."""
    from benchmarks import selection_rules

    ctx, _ = cancer_ctx
    ctx.candidates = []
    try:
        members = fam.estimator(ctx)
        recorded = list(ctx.candidates)
    finally:
        ctx.candidates = None
    assert len(members) == len(ctx.budgets)
    assert {r["n_select"] for r in recorded} and all("test_acc" in r for r in recorded
                                                     if r["fits_budget"])
    run = {"dataset": "cancer", "seed": 0, "candidates": recorded}
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"results": [run]}))
    table = selection_rules.replay([str(path)])
    for m, b in zip(members, ctx.budgets):
        key = ("cancer", round(b / ctx.base_cost, 6))
        assert table["one standard error"][key] == pytest.approx(m.tested()["test_acc"])
        assert table["hindsight"][key] >= table["one standard error"][key]


# ---------------------------------------------------------------- report
def _cell(frac, values, fallback=()):
    return {"frac": frac, "budget": frac, "best_method": "fit_budget", "chosen": {
        m: {"val_acc": v, "test_acc": v, "val_cost": 0.0, "test_cost": 0.0,
            "fallback": m in fallback, "over_budget": False} for m, v in values.items()}}


def _results(seeds=(0, 1)):
    out = []
    for s in seeds:
        cells = [
            _cell(0.1, {"fit_budget": 0.8, "greedy": 0.75, "ccp": 0.99, "fewer-trees": 0.1,
                        "cegb": 0.80, "cheap-subset rf": 0.79, "estimator": 0.812,
                        "fit_budget default": 0.70, "fit_budget paper": 0.704,
                        "fit_budget brier": 0.60}, fallback=("ccp",)),
            _cell(0.5, {"fit_budget": 0.6 + 0.2 * s, "greedy": 0.7, "ccp": 0.99,
                        "fewer-trees": 0.1, "cegb": 0.94, "cheap-subset rf": 0.95,
                        "estimator": 0.946, "fit_budget default": 0.8,
                        "fit_budget paper": 0.7, "fit_budget brier": 0.9},
                  fallback=("ccp",))]
        out.append({"dataset": "toy", "seed": s, "task": "classification", "n_rows": 10,
                    "n_features": 2, "unpruned": {"val_cost": 1.0, "test_cost": 1.0,
                                                  "test_acc": 0.9},
                    "seconds": {}, "call_seconds": {"fit_budget default": [1.0, 3.0 + s]},
                    "cells": cells, "points": {}, "not_available": {}})
    return out


def test_the_report_counts_the_targets_cell_by_cell():
    results = _results()
    results[1]["cells"][0]["chosen"]["estimator"]["over_budget"] = True
    table = report.summarise(results)
    t = report.frontier_targets(results, table, [0.1, 0.5])
    # 10%: 0.812 >= max(0.80, 0.79) - 0.005 and >= 0.80 + 0.01; 50%: 0.946 >= 0.95 - 0.005,
    # not >= 0.94 + 0.01
    assert t["estimator >= max(CEGB, cheap-subset RF) - 0.5 point"] == "2/2"
    assert t["estimator >= CEGB + 1 point"] == "1/2"
    # 10%: 0.70 >= 0.704 - 0.005; 50%: 0.8 < 0.9 - 0.005
    assert t["fit_budget default >= better of paper / brier by hand - 0.5 point"] == "1/2"
    assert t["fit_budget default >= GreedyPrune"] == "1/2"
    assert t["median seconds per call, fit_budget default"] == "2.00 (4 calls)"
    assert t["median seconds per call, estimator"] == report.NOT_AVAILABLE
    assert t["estimator over budget on validation (cells x seeds)"] == "1/4"
    margins = report.fit_budget_margins(results, [0.1, 0.5], frontier.CHECKED_BASELINES)
    assert margins[("toy", 0.1)] == pytest.approx([0.05, 0.05])  # ccp fell back: ignored
    assert margins[("toy", 0.5)] == pytest.approx([-0.1, 0.1])


def test_a_family_missing_on_one_dataset_counts_as_missed_there():
    results = _results()
    other = json.loads(json.dumps(results))
    for r in other:
        r["dataset"] = "toy2"
        for c in r["cells"]:
            del c["chosen"]["estimator"]
        r["not_available"] = {"estimator": "failed: ValueError: Input X contains NaN."}
    table = report.summarise(results + other)
    t = report.frontier_targets(results + other, table, [0.1, 0.5])
    assert t["estimator >= CEGB + 1 point"] == "1/4 (2 cells without estimator)"


def test_a_missing_family_is_reported_not_counted():
    results = _results()
    for r in results:
        for c in r["cells"]:
            del c["chosen"]["estimator"]
        r["not_available"] = {"estimator": "not available: no estimator"}
    table = report.summarise(results)
    t = report.frontier_targets(results, table, [0.1, 0.5])
    assert t["estimator >= CEGB + 1 point"].startswith("n/a (estimator")


def test_merged_report_prints_the_table_and_targets(tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"args": {"budgets": [0.1, 0.5]}, "results": _results()}))
    assert frontier.main(["--merge", str(path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^fit_budget family >= best baseline on validation in every seed +1/2$",
                     out, re.M)
    assert any("LOSS" in ln and "50%" in ln for ln in out.splitlines())
    assert out.strip().splitlines()[-1].startswith("median seconds per call, estimator")


@pytest.mark.slow
def test_tiny_runs_end_to_end(tmp_path, capsys):
    """Both scripts run one small dataset and seed, write their JSON, and every family's
    choice fits its budget on validation (one-call rows aside, which are flagged)."""
    out = tmp_path / "f.json"
    assert frontier.main(["--quick", "--datasets", "breast_cancer", "--trees", "4",
                          "--no-cegb", "--time-limit", "1", "--no-refit",
                          "--json", str(out)]) == 0
    spec = json.loads(out.read_text())
    assert spec["summary"]["fit_budget default >= GreedyPrune"].endswith("/3")
    reg = tmp_path / "r.json"
    assert regression.main(["--quick", "--datasets", "diabetes", "--trees", "4", "--no-cegb",
                            "--time-limit", "1", "--json", str(reg)]) == 0
    for path in (out, reg):
        for r in json.loads(path.read_text())["results"]:
            for cell in r["cells"]:
                assert "catboost penalties" in cell["chosen"] or \
                    "catboost" in r["not_available"].get("catboost penalties", "")
                for name, c in cell["chosen"].items():
                    if name not in ("fit_budget default", "estimator"):
                        assert c["val_cost"] <= cell["budget"] * (1 + 1e-9), name
                    assert c["test_cost"] >= 0


def test_merge_combines_runs_of_different_families_of_one_seed(tmp_path, capsys):
    """Anchors from one run and one-call rows from another make one table; a run of
    another split of the same dataset and seed is refused."""
    full = _results()
    anchors, calls = json.loads(json.dumps(full)), json.loads(json.dumps(full))
    for r in anchors:
        for c in r["cells"]:
            c["chosen"] = {k: v for k, v in c["chosen"].items() if k in ("cegb", "greedy")}
    for r in calls:
        for c in r["cells"]:
            c["chosen"] = {k: v for k, v in c["chosen"].items() if k not in ("cegb", "greedy")}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"args": {"budgets": [0.1, 0.5]}, "results": anchors}))
    b.write_text(json.dumps({"args": {"budgets": [0.1, 0.5]}, "results": calls}))
    merged, budgets = proto.merged_results(f"{a},{b}")
    assert budgets == [0.1, 0.5] and len(merged) == len(full)
    targets = report.frontier_targets(merged, report.summarise(merged), budgets)
    # the best pipeline picks among every project family: not counted on partial runs
    assert targets["best pipeline within 0.5 point of CEGB"].startswith("n/a")
    for m, r in zip(merged, full):
        assert [c["chosen"] for c in m["cells"]] == [c["chosen"] for c in r["cells"]]
    other = json.loads(json.dumps(calls))
    other[0]["unpruned"]["val_cost"] = -1.0
    b.write_text(json.dumps({"args": {"budgets": [0.1, 0.5]}, "results": other}))
    with pytest.raises(SystemExit, match="differs between files"):
        proto.merged_results(f"{a},{b}")


def test_families_option_names_the_rows_or_refuses():
    args = frontier.parse(["--families", "targets"])
    assert args.only == list(frontier.TARGET_FAMILIES)
    with pytest.raises(SystemExit):
        frontier.parse(["--families", "hull"])


# ---------------------------------------------------------------- CatBoost penalties anchor
TINY_CATBOOST = (("first-use", "SymmetricTree", 3, (0.0, 1000.0)),
                 ("per-object", "Depthwise", 3, (1e-3,)))


def _catboost_refit(ctx, point):
    """The member's model fitted again (CatBoost is deterministic with one thread and a
    seed), imported, as a PrunedForest keeping every split."""
    import catboost as cb

    cls = cb.CatBoostClassifier if ctx.task == "classification" else cb.CatBoostRegressor
    m = cls(iterations=point["rounds"], depth=point["depth"], grow_policy=point["grow_policy"],
            random_seed=ctx.seed, thread_count=1, allow_writing_files=False, verbose=0,
            **fam.catboost_penalty_params(ctx.costs, point["penalty"], point["coefficient"],
                                          None if ctx.task == "classification" else ctx.y_tr))
    m.fit(ctx.X_tr, ctx.y_tr)
    forest = po.as_forest(m)
    return m, po.PrunedForest(forest, forest.full_split_mask(), costs=ctx.costs)


def test_catboost_penalty_keywords_are_the_costs_in_their_mean_unit():
    costs = FeatureCosts([0.0, 2.0, 6.0])
    first = fam.catboost_penalty_params(costs, "first-use", 0.5)
    assert first == {"first_feature_use_penalties": [0.0, 0.5, 1.5], "penalties_coefficient": 0.5}
    per = fam.catboost_penalty_params(costs, "per-object", 0.5, y=np.array([0.0, 10.0]))
    assert per["per_object_feature_penalties"] == [0.0, 0.5, 1.5]
    assert per["penalties_coefficient"] == pytest.approx(0.5 * 25.0)  # times var(y)
    with pytest.raises(KeyError):
        fam.catboost_penalty_params(costs, "lazy", 0.5)


def test_catboost_penalties_cost_what_the_model_s_own_splits_read(cancer_ctx):
    """Every member is scored by CatBoost's own predictions and the library's cost of the
    imported model; a symmetric tree's rows pay for every feature the model uses; the
    coefficient is bisected for a budget the grid misses."""
    pytest.importorskip("catboost")
    ctx, _ = cancer_ctx
    members = fam.catboost_penalties(ctx, configs=TINY_CATBOOST, rounds=8, refine=2)
    pts = [m.point for m in members]
    grid = [p for p in pts if p["coefficient"] in (0.0, 1000.0, 1e-3)]
    assert len(grid) == 3 and len(pts) > 3  # bisection steps were added
    assert all(0.0 < p["coefficient"] < 1000.0 for p in pts[2:-1])  # first-use's steps
    free, dear = pts[0], pts[1]
    assert free["val_cost"] > dear["val_cost"]  # the penalty makes the model cheaper
    fc = ctx.costs.feature_cost()
    for p in (free, dear, pts[-1]):
        m, pf = _catboost_refit(ctx, p)
        assert p["val_cost"] == pytest.approx(pf.average_cost(ctx.X_v), rel=1e-12)
        assert p["val_acc"] == pytest.approx(np.mean(np.ravel(m.predict(ctx.X_v)) == ctx.y_v))
        if p["grow_policy"] == "SymmetricTree":
            used = np.unique(pf.forest.feature[~pf.forest.is_leaf])
            np.testing.assert_allclose(pf.acquisition_cost(ctx.X_v), fc[used].sum())
    assert {m.point["penalty"] for m in members} == {"first-use", "per-object"}
    assert all(m.model is None for m in members)  # scored eagerly, models not kept


def test_catboost_penalties_in_regression_scale_the_coefficient_by_the_target():
    pytest.importorskip("catboost")
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    y = y.astype(float)
    costs = FeatureCosts(np.linspace(1.0, 5.0, X.shape[1]))
    ctx = proto.Context(proto.split(X, y, 4000, 0, stratify=False), costs, [3.0],
                        task="regression", seed=0)
    ctx.base_cost = 30.0
    members = fam.catboost_penalties(ctx, configs=TINY_CATBOOST[:1], rounds=8, refine=0)
    free, dear = (m.point for m in members)
    assert dear["val_cost"] < free["val_cost"] and np.isfinite(dear["val_mse"])
    m, pf = _catboost_refit(ctx, dear)
    assert dear["val_mse"] == pytest.approx(float(np.mean((m.predict(ctx.X_v) - ctx.y_v) ** 2)))
    assert dear["val_cost"] == pytest.approx(pf.average_cost(ctx.X_v))


def test_catboost_penalties_are_not_available_without_catboost(cancer_ctx, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "catboost" else real(name, *a))
    row = fam.catboost_penalties(cancer_ctx[0])
    assert isinstance(row, proto.Unavailable) and "catboost is not installed" in row.why


def test_the_estimator_is_counted_against_the_best_of_every_anchor():
    results = _results()
    for r in results:
        for c, gbm, cat in zip(r["cells"], (0.70, 0.90), (0.83, 0.949)):
            c["chosen"]["cheap-subset gbm"] = dict(c["chosen"]["cegb"], test_acc=gbm)
            c["chosen"]["catboost penalties"] = dict(c["chosen"]["cegb"], test_acc=cat)
    table = report.summarise(results)
    t = report.frontier_targets(results, table, [0.1, 0.5])
    # 10%: 0.812 < 0.83 - 0.005 (CatBoost ahead); 50%: 0.946 >= max(0.95, 0.949) - 0.005
    key = ("estimator >= max(CEGB, CatBoost penalties, cheap-subset RF, cheap-subset GBM) "
           "- 0.5 point")
    assert t[key] == "1/2"
    assert t["estimator >= max(CEGB, cheap-subset RF, cheap-subset GBM) - 0.5 point"] == "2/2"
    for r in results:  # a run without the CatBoost anchor says so
        for c in r["cells"]:
            del c["chosen"]["catboost penalties"]
    t = report.frontier_targets(results, report.summarise(results), [0.1, 0.5])
    assert t[key].startswith("n/a (catboost penalties")


def test_the_regression_estimator_is_counted_against_the_best_of_every_anchor():
    cell = {"frac": 0.1, "budget": 1.0, "best_method": None, "chosen": {
        m: {"test_mse": v, "val_mse": v, "val_cost": 0.0, "test_cost": 0.0, "fallback": False,
            "over_budget": False}
        for m, v in {"estimator": 1.0, "cegb": 1.2, "catboost penalties": 0.985,
                     "cheap-subset rf": 1.1, "cheap-subset gbm": 1.3}.items()}}
    results = [{"dataset": "toy", "seed": 0, "task": "regression", "cells": [cell],
                "unpruned": {"test_mse": 1.0}, "seconds": {}, "call_seconds": {}}]
    t = report.regression_targets(results, report.summarise(results), [0.1])
    assert t["estimator MSE <= 1.02 x best of (CEGB, CatBoost penalties, cheap-subset RF, "
             "cheap-subset GBM)"] == "1/1"  # 1.0 <= 1.02 x 0.985
    cell["chosen"]["catboost penalties"]["test_mse"] = 0.9
    t = report.regression_targets(results, report.summarise(results), [0.1])
    assert t["estimator MSE <= 1.02 x best of (CEGB, CatBoost penalties, cheap-subset RF, "
             "cheap-subset GBM)"] == "0/1"


def test_the_catboost_anchor_is_a_family_of_both_scripts():
    args = frontier.parse(["--families", "targets"])
    assert "catboost penalties" in args.only
    assert frontier.parse(["--quick"]).catboost_grid == fam.CATBOOST_QUICK
    assert frontier.parse([]).catboost_grid == {} and frontier.parse(["--no-catboost"]).no_catboost
    assert "catboost penalties" in regression.parse(["--families", "targets"]).only
    assert "catboost penalties" in frontier.ANCHORS  # never the "best pipeline"


@pytest.mark.slow
def test_boosting_prunes_a_catboost_model_beside_the_catboost_anchor(tmp_path, monkeypatch):
    """benchmarks/boosting.py --model cb at tiny size: the CatBoost model is imported,
    pruned by fit_budget within each budget on validation, truncated, retrained on the
    cheapest features, and the penalties anchor runs beside it."""
    pytest.importorskip("catboost")
    import functools

    from benchmarks import boosting

    monkeypatch.setattr(boosting, "CATBOOST_ROUNDS", 10)
    monkeypatch.setattr(fam, "catboost_penalties", functools.partial(
        fam.catboost_penalties, configs=TINY_CATBOOST, rounds=8))
    out = tmp_path / "b.json"
    boosting.main(["--model", "cb", "--datasets", "breast_cancer", "--seeds", "0",
                   "--max-rows", "300", "--no-cegb", "--time-limit", "1", "--json", str(out)])
    spec = json.loads(out.read_text())
    (r,) = spec["results"]
    assert r["model"] == "cb model" and r["unpruned"]["val_cost"] > 0
    assert max(p["rounds"] for p in r["points"]["fewer-rounds"]) == 10
    for cell in r["cells"]:
        ch = cell["chosen"]
        assert {"fit_budget", "fewer-rounds", "cheap-subset gbm", "catboost penalties"} <= set(ch)
        assert ch["fit_budget"]["val_cost"] <= cell["budget"] * (1 + 1e-9)
        assert ch["catboost penalties"]["val_cost"] <= cell["budget"] * (1 + 1e-9)
    counts = spec["summary"]["counts"]
    assert counts["fit_budget >= fewer-rounds/greedy/ccp (validation)"][1] == 3
    assert counts["fit_budget >= catboost penalties (test)"][1] == 3


def test_estimator_params_name_the_catboost_family_beside_the_defaults(cancer_ctx,
                                                                        monkeypatch):
    """--estimator-params '{"candidates": ["default", "catboost"]}' grows the default
    families and CatBoost's; a "module.CATBOOST_..." key sets that family's constant for
    the fits only."""
    import forest_builders
    from forest_builders.estimator import _catboost as _catboost_candidates
    from forest_builders.estimator._registry import resolve_families

    ctx, _ = cancer_ctx
    seen = []

    class Fake:
        time_limit = 20.0

        def __init__(self, *, budget, costs, random_state, candidates):
            self.candidates = candidates

        def fit(self, X, y):
            seen.append((self.candidates, _catboost_candidates.CATBOOST_DEPTH))
            self.rf_ = RandomForestClassifier(3, random_state=0).fit(X, y)
            self.candidates_ = pd.DataFrame([{"model": "rf", "family": "rf", "chosen": True,
                                              "objective": "none", "fit_cost": 1.0}])
            return self

        def predict(self, X):
            return self.rf_.predict(X)

        def acquisition_cost(self, X):
            return po.acquisition_cost(self.rf_, X, ctx.costs)

    monkeypatch.setattr(forest_builders, "BudgetPrunedForestClassifier", Fake, raising=False)
    monkeypatch.setattr(ctx, "estimator_params", {"candidates": ["default", "catboost"],
                                                  "module.CATBOOST_DEPTH": 4}, raising=False)
    fam.estimator(ctx)
    want = resolve_families(None, "classification") + ["catboost"]
    assert seen == [(want, 4)] * len(ctx.budgets)
    assert _catboost_candidates.CATBOOST_DEPTH == 6  # restored
