"""benchmarks/frontier.py report: the fit_budget-vs-baselines check and the last lines."""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _frontier():
    spec = importlib.util.spec_from_file_location("frontier", ROOT / "benchmarks" / "frontier.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _cell(frac, fb, greedy, cegb, fallback_ccp=False):
    def c(v, fallback=False):
        return {"val_acc": v, "test_acc": v, "val_cost": 0.0, "test_cost": 0.0,
                "fallback": fallback}
    return {"frac": frac, "budget": frac, "best_method": "fit_budget",
            "chosen": {"fit_budget": c(fb), "greedy": c(greedy), "ccp": c(0.99, fallback_ccp),
                       "fewer-trees": c(0.1), "cegb": c(cegb)}}


def test_fit_budget_check_ignores_fallbacks_and_counts_cells():
    fr = _frontier()
    assert fr.fit_budget_holds(_cell(0.1, 0.8, 0.7, 0.5, fallback_ccp=True)["chosen"]) \
        == pytest.approx(0.1)
    assert fr.fit_budget_holds(_cell(0.1, 0.8, 0.7, 0.5)["chosen"]) == pytest.approx(-0.19)
    assert fr.fit_budget_holds({"greedy": {"val_acc": 1.0}}) is None


def test_merged_report_ends_with_both_counts(tmp_path, capsys):
    fr = _frontier()
    results = [{"dataset": "toy", "seed": s, "n_rows": 10, "n_features": 2,
                "unpruned": {"val_cost": 1.0, "test_cost": 1.0, "test_acc": 0.9},
                "seconds": {"fit_budget": 1.0, "greedy": 1.0, "ccp": 1.0,
                            "fewer-trees": 1.0, "cegb": 1.0},
                "cells": [_cell(0.1, 0.8, 0.7, 0.8, fallback_ccp=True),
                          _cell(0.5, 0.6 + 0.2 * s, 0.7, 0.9, fallback_ccp=True)],
                "points": {}} for s in (0, 1)]
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"args": {"budgets": [0.1, 0.5]}, "results": results}))
    assert fr.main(["--merge", str(path)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == "cells within 0.5 point of CEGB: 1/2"
    assert lines[-2] == ("cells where fit_budget's validation accuracy >= the best "
                         "baseline's in every seed: 1/2")
    assert any("LOSS" in ln and "50%" in ln for ln in lines)


def test_excluding_an_objective_repicks_cells_from_the_points():
    fr = _frontier()
    fb = [{"val_acc": v, "test_acc": t, "val_cost": 0.5, "test_cost": 0.5}
          for v, t in ((0.6, 0.6), (0.7, 0.7), (0.9, 0.65))]  # paper, brier, accuracy
    fallback = {"val_acc": 0.2, "test_acc": 0.2, "val_cost": 0.0, "test_cost": 0.0,
                "fallback": True}
    greedy = [{"val_acc": 0.8, "test_acc": 0.8, "val_cost": 2.0, "test_cost": 2.0}]
    r = {"dataset": "toy", "seed": 0, "fallback": fallback,
         "points": {"fit_budget": fb, "fit_budget+refit": fb, "greedy": greedy},
         "cells": [{"frac": 0.5, "budget": 1.0}]}
    out = fr.exclude_objectives([r], {"accuracy"}, None)[0]
    cell = out["cells"][0]
    assert cell["chosen"]["fit_budget"]["test_acc"] == 0.7  # brier, not the accuracy fit
    assert cell["chosen"]["greedy"]["fallback"]  # 2.0 does not fit 1.0
    assert "fit_budget+refit" not in cell["chosen"]
    assert cell["best_method"] == "fit_budget"


def test_subset_pipelines_stay_within_their_budgets():
    """The subset families: nested prefixes grown until two forests exceed the largest
    budget, and each budget's prunings of the forests just above it fit that budget."""
    import numpy as np
    from sklearn.datasets import load_breast_cancer

    from prune_opt import FeatureCosts

    fr = _frontier()
    X, y = load_breast_cancer(return_X_y=True)
    data = fr.split(X, y, 4000, 0)
    costs = FeatureCosts.uniform(X.shape[1])
    ctx = fr.Context(data, costs, [1.5, 3.0], time_limit=1.0)
    models = fr.subset_models(ctx, 0, 5)
    sizes = [m.features_.size for m, _ in models]
    assert sizes == list(range(1, len(models) + 1))
    assert sum(c > 3.0 for _, c in models) == 2 and models[-1][1] > 3.0
    for m, c in models:  # the recorded cost is the forest's on validation
        assert c == pytest.approx(float(np.mean(m.acquisition_cost(ctx.X_v))))
    prunings = fr.subset_fit_budget_family(models, ctx, objectives=("paper",))
    assert len(prunings) == 4  # two forests per budget, one objective
    for budget, pf in zip([1.5, 1.5, 3.0, 3.0], prunings):
        assert pf.average_cost(ctx.X_v) <= budget + 1e-9
