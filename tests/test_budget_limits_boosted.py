"""A boosted model's fit_budget under a short limit: whatever the clock, the result fits
the budget and is never worse on the pruning rows than the prior and the first rounds
that fit, the anchors it scores first, and it says when the clock stopped it.

Nothing here measures wall-clock time: each limit is tested by what the result promises
under it (a limit of 1e-6 s is out before anything runs, the hardest case)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits

import prune_opt as po
from prune_opt.budget import fewer_trees_prunings, fits_budget
from prune_opt.program._prepare import prepare
from tests.boosted_cases import boosted_cases


def _anchor_scores(model, X, y, costs, budget):
    """The prior's and every fitting truncation's score on (X, y): the floor."""
    f = po.as_forest(model)
    root = po.PrunedForest(f, np.zeros(f.n_nodes, dtype=bool), costs=costs)
    scores = []
    for _, sub in fewer_trees_prunings(f, costs=costs):
        if fits_budget(sub.average_cost(X), budget):
            scores.append(sub.score(X, y))
    return root, scores


@pytest.mark.parametrize("limit", [1e-6, 0.3, None])
def test_a_multiclass_booster_under_any_limit_fits_and_beats_its_anchors(limit):
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = load_digits(return_X_y=True)
    gb = GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=0).fit(
        X[:900], y[:900])
    Xv, yv = X[900:], y[900:]
    costs = po.FeatureCosts(np.linspace(1.0, 3.0, X.shape[1]))
    full = po.PrunedForest(po.as_forest(gb), po.as_forest(gb).full_split_mask(), costs=costs)
    budget = 0.25 * full.average_cost(Xv)
    pf = po.fit_budget(gb, Xv, yv, costs=costs, budget=budget, time_limit=limit)
    assert fits_budget(pf.average_cost(Xv), budget)
    info = pf.solve_info
    # ranked by accuracy on the pruning rows: never below the prior or a fitting truncation
    _, truncations = _anchor_scores(gb, Xv, yv, costs, budget)
    prior = float(np.mean(yv == np.bincount(yv).argmax()))
    assert pf.score(Xv, yv) >= max([prior, *truncations]) - 1e-12
    # the feature-prefix family is an anchor too: scored whatever the clock says, so the
    # result is never below its best fitting member on the pruning rows
    prefix = [p for _, p in po.budget.feature_prefix_prunings(gb, Xv, yv, costs=costs)
              if fits_budget(p.average_cost(Xv), budget)]
    assert prefix and "baseline:feature-prefix" in info["candidates_loss"]
    assert pf.score(Xv, yv) >= prefix[0].score(Xv, yv) - 1e-12
    if limit == 1e-6:
        assert info["ensemble_search"]["status"] == "time_limit"
        assert pf.n_splits > 0 and pf.score(Xv, yv) > prior
    if limit is None:
        assert info["ensemble_search"]["status"] == "within_budget"
        assert info["ensemble_search"]["baselines_skipped"] == []


@settings(max_examples=15, deadline=None)
@given(case=boosted_cases(), share=st.sampled_from([0.0, 0.1, 0.3, 0.6]),
       limit=st.sampled_from([1e-6, 0.05, None]))
def test_any_booster_under_any_limit_returns_a_fitting_pruning(case, share, limit):
    model, _, _, Xv, yv, costs, _ = case
    f = po.as_forest(model)
    full = po.PrunedForest(f, f.full_split_mask(), costs=costs).average_cost(Xv)
    budget = share * full
    pf = po.fit_budget(model, Xv, yv, costs=costs, budget=budget, time_limit=limit)
    assert fits_budget(pf.average_cost(Xv), budget)
    # never worse on the pruning rows than the prior (every tree cut to its root, the
    # node values fitted on these rows): by accuracy (the first ranking) for a
    # classifier, by R^2 (the squared error) for regression
    fitted = prepare(model, Xv, yv).forest
    root = po.PrunedForest(fitted, np.zeros(f.n_nodes, dtype=bool), costs=costs)
    assert pf.score(Xv, yv) >= root.score(Xv, yv) - 1e-9


@settings(max_examples=15, deadline=None)
@given(case=boosted_cases(tasks=("binary", "multiclass")),
       share=st.sampled_from([0.2, 0.5, 0.8]), limit=st.sampled_from([0.05, None]))
def test_a_booster_is_never_less_accurate_than_a_fitting_truncation(case, share, limit):
    """fit_budget ranks a classifier's candidates by accuracy on the pruning rows first:
    every truncation to whole rounds that fits is among them, the most accurate one
    included (not only the one of the lowest log-loss)."""
    model, _, _, Xv, yv, costs, _ = case
    f = po.as_forest(model)
    full = po.PrunedForest(f, f.full_split_mask(), costs=costs).average_cost(Xv)
    budget = share * full
    pf = po.fit_budget(model, Xv, yv, costs=costs, budget=budget, time_limit=limit)
    _, truncations = _anchor_scores(model, Xv, yv, costs, budget)
    assert pf.score(Xv, yv) >= max(truncations, default=0.0) - 1e-12
    if truncations and "candidates_rank" in pf.solve_info:
        # the most accurate fitting truncation is a candidate of its own, ranked by its
        # error on the pruning rows
        ranks = pf.solve_info["candidates_rank"]
        key = "baseline:fewer-rounds(sub-forest, by accuracy)"
        assert ranks[key] == pytest.approx(1.0 - max(truncations), abs=1e-12)


def test_ties_at_a_raw_score_of_zero_rank_as_predict_breaks_them():
    """A CatBoost tree leaves rows in empty leaves at a raw score of exactly 0, where
    predict picks the first class: the final ranking counts those rows as predict does,
    so no fitting truncation is more accurate on the pruning rows than the result (the
    0/1 loss of the searches, which counts ties as errors, ranked such a truncation 7
    points below its accuracy on pima)."""
    cb = pytest.importorskip("catboost")
    from prune_opt.objectives.accuracy import PredictError

    rng = np.random.default_rng(9)
    X = rng.normal(size=(400, 6))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=1.0, size=400) > 0.6).astype(int)
    model = cb.CatBoostClassifier(iterations=30, depth=6, random_seed=0, thread_count=1,
                                  allow_writing_files=False, verbose=0).fit(X[:150], y[:150])
    Xv, yv = X[150:], y[150:]
    f = po.as_forest(model)
    costs = po.FeatureCosts(np.arange(1.0, 7.0))
    tied = [sub for _, sub in fewer_trees_prunings(f, costs=costs)
            if np.any(np.diff(sub.predict_proba(Xv), axis=1) == 0)]
    assert tied  # the ties this test is about: truncations with rows at a raw score of 0
    for sub in tied:
        loss = PredictError().loss(sub.predict_proba(Xv), yv).mean()
        assert loss == pytest.approx(1 - sub.score(Xv, yv))
    for share in (0.6, 0.8):  # at 60% the 0/1 loss kept a pruning 1.6 points behind
        full = po.PrunedForest(f, f.full_split_mask(), costs=costs).average_cost(Xv)
        budget = share * full
        pf = po.fit_budget(model, Xv, yv, costs=costs, budget=budget, time_limit=None)
        _, truncations = _anchor_scores(model, Xv, yv, costs, budget)
        assert pf.score(Xv, yv) >= max(truncations, default=0.0) - 1e-12
