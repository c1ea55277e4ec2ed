"""The budget estimator's floor: the anchors are grown first whatever the time left, and
the prior (a constant prediction) never wins silently.

None of these tests depends on how fast the machine is: the clock is replaced by one
that has no time left at all, or the searches by ones that ran out of time.
"""

import functools
import time
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits

import prune_opt as po
from forest_builders import BudgetPrunedForestClassifier, BudgetPrunedForestRegressor
from forest_builders.estimator import _clock as _fit_clock
from forest_builders.estimator import _registry as _candidates
from forest_builders.estimator._forests import random_forest
from forest_builders.estimator._registry import CANDIDATE_FAMILIES
from forest_builders.estimator._selection import choose, prior_score

KW = dict(n_estimators=10, max_subsets=2, random_state=0)
#: about 10% of a 40-tree random forest's cost on digits (uniform costs: 46.7 features)
DIGITS_BUDGET = 4.7


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X, y


@pytest.fixture
def no_time_left(monkeypatch):
    """A fit clock on which the time limit has long passed, from the start: no time is
    left in any phase (a machine too busy for anything)."""
    real = _fit_clock.FitClock.__init__

    def started_long_ago(self, time_limit, start=None, **kw):
        real(self, time_limit, time.perf_counter() - 1e3 * time_limit, **kw)

    monkeypatch.setattr(_fit_clock.FitClock, "__init__", started_long_ago)


@pytest.fixture
def growth_order(monkeypatch):
    """The names of the candidates in the order they were grown."""
    names = []
    real = _candidates.GrowContext.add

    def add(self, name, *args, **kwargs):
        names.append(name)
        return real(self, name, *args, **kwargs)

    monkeypatch.setattr(_candidates.GrowContext, "add", add)
    return names


def _user_warnings(record):
    return [str(w.message) for w in record if issubclass(w.category, UserWarning)]


def _fit(est, X, y):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y)
    return _user_warnings(record)


def test_the_prefix_families_are_the_registry_s_anchors():
    anchored = [n for n, f in CANDIDATE_FAMILIES.items() if f.anchor is not None]
    assert anchored == ["subset", "gbm"]


def test_the_anchors_grow_first_even_when_no_family_has_time(digits, no_time_left,
                                                             growth_order):
    """With no time left anywhere, a fit still grows a forest and a boosted model on the
    longest cost-ranked prefix whose features fit the budget, first; every other family
    is a skipped row, and an anchor wins, above the prior, without a warning."""
    X, y = digits
    est = BudgetPrunedForestClassifier(budget=DIGITS_BUDGET, **KW)
    said = _fit(est, X, y)
    assert said == []
    assert [n.split("(")[0] for n in growth_order] == ["subset", "gbm"]
    c = est.candidates_
    anchors = c[c["name"].isin(growth_order)]
    assert len(anchors) == 2 and (anchors["objective"] == "none").all()
    assert anchors["fits_budget"].all() and (anchors["n_splits"] > 0).all()
    # their features fit: no row pays more than the budget
    assert (est.acquisition_cost(X) <= DIGITS_BUDGET + 1e-9).all()
    others = c[~c["name"].isin(growth_order)]
    assert len(others) and others["reason"].str.startswith("not ").all()
    win = c[c["chosen"]].iloc[0]
    assert win["name"] in growth_order and win["above_prior"]
    sel = est.split_["select"]
    assert win["score"] > prior_score(y[sel], "classification")


def test_a_tiny_time_limit_still_returns_an_anchor_not_the_prior(digits):
    X, y = digits
    est = BudgetPrunedForestClassifier(budget=DIGITS_BUDGET, time_limit=0.01, **KW)
    assert _fit(est, X, y) == []
    c = est.candidates_
    win = c[c["chosen"]].iloc[0]
    assert win["family"] in ("subset", "gbm") and win["n_splits"] > 0 and win["above_prior"]


def test_a_family_registered_with_an_anchor_grows_it_before_every_family(digits,
                                                                         no_time_left,
                                                                         growth_order):
    """The order is the registry's: a new family's anchor is grown with the others, before
    any family's own steps, whatever its place in the registry."""
    X, y = digits
    before = list(CANDIDATE_FAMILIES)

    def stumps(ctx):
        ctx.grow("stumps", "late", "stumps", functools.partial(random_forest, ctx,
                                                                max_depth=1))

    _candidates.register_family("late", order=1000, anchor=stumps)(lambda ctx: None)
    try:
        est = BudgetPrunedForestClassifier(budget=50.0, candidates=["rf", "late"], **KW)
        _fit(est, X, y)
    finally:
        CANDIDATE_FAMILIES.pop("late")
    assert growth_order == ["stumps"]  # first; the random forest then had no time
    assert "rf" in set(est.candidates_["name"])  # a skipped row
    assert list(CANDIDATE_FAMILIES) == before  # the registry is as it was


def test_a_pruning_that_kept_the_prior_never_wins_over_a_better_anchor(digits, monkeypatch):
    """The issue's busy machine: every fit_budget search ran out of time and kept the
    prior (no split).  The gbm anchor, grown first, wins; the constant prunings lose,
    saying why, and nothing warns."""
    X, y = digits

    def out_of_time(problem, *args, **kwargs):
        f = problem.forest if isinstance(problem, po.PruningProblem) else po.as_forest(problem)
        return po.PrunedForest(f, np.zeros(f.n_nodes, dtype=bool), costs=problem.costs)

    monkeypatch.setattr(po, "fit_budget", out_of_time)
    est = BudgetPrunedForestClassifier(budget=DIGITS_BUDGET, candidates=["cegb", "gbm"],
                                       time_limit=30, **KW)
    assert _fit(est, X, y) == []
    c = est.candidates_
    win = c[c["chosen"]].iloc[0]
    assert win["family"] == "gbm" and win["n_splits"] > 0 and win["above_prior"]
    constant = c[(c["n_splits"] == 0) & c["fits_budget"]]
    assert len(constant) and not constant["chosen"].any() and not constant["above_prior"].any()
    assert constant["reason"].str.contains("not above the prior|keeps no split").all()


def test_the_prior_as_winner_warns_and_is_flagged(digits, monkeypatch):
    """When every candidate keeps no split (the searches ran out of time, and no prefix
    fits), the winner is the prior: a UserWarning says so and why, and no row of
    candidates_ is above the prior."""
    X, y = digits

    def out_of_time(problem, *args, **kwargs):
        f = problem.forest
        return po.PrunedForest(f, np.zeros(f.n_nodes, dtype=bool), costs=problem.costs)

    monkeypatch.setattr(po, "fit_budget", out_of_time)
    est = BudgetPrunedForestClassifier(budget=DIGITS_BUDGET, candidates=["rf"], **KW)
    said = _fit(est, X, y)
    assert len(said) == 1
    assert "no better than the prior" in said[0] and "every candidate with a split" in said[0]
    assert "candidates_['above_prior']" in said[0]
    c = est.candidates_
    assert not c["above_prior"].any() and c.loc[c["chosen"], "n_splits"].iloc[0] == 0
    assert "not above the prior" in c.loc[c["chosen"], "reason"].iloc[0]


@pytest.mark.parametrize("cls", [BudgetPrunedForestClassifier, BudgetPrunedForestRegressor])
def test_a_budget_below_every_feature_warns_that_the_winner_is_the_prior(cls):
    """No feature fits and none is free: every model is the prior, and the fit says so."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + 0.1 * rng.normal(size=300)
    y = (y > 0).astype(int) if cls is BudgetPrunedForestClassifier else y
    est = cls(budget=0.5, n_estimators=5, max_subsets=1, time_limit=20, random_state=0)
    said = _fit(est, X, y)
    assert len(said) == 1 and "no better than" in said[0]
    assert (est.candidates_["n_splits"] == 0).all() and not est.candidates_["above_prior"].any()


def test_a_winner_with_splits_but_no_better_than_the_prior_warns():
    """Labels independent of the features: the winner may keep splits, but when it is no
    better than the majority class on the held-out rows the fit says so."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 5))
    y = (rng.random(400) < 0.8).astype(int)
    est = BudgetPrunedForestClassifier(budget=2.0, n_estimators=5, max_subsets=1,
                                       time_limit=20, random_state=0)
    said = _fit(est, X, y)
    win = est.candidates_[est.candidates_["chosen"]].iloc[0]
    assert bool(said) == (not win["above_prior"])
    if said:
        assert "no better than the prior" in said[0]


# ------------------------------------------------------------- the selection rule
def _row(name, score, brier, n_splits, cost=1.0, fits=True):
    return dict(name=name, score=score, brier=brier, n_splits=n_splits, average_cost=cost,
                fit_cost=cost, fit_cost_bound=cost, fits_budget=fits, chosen=False,
                reason="", _pruned=object())


def test_a_constant_model_never_wins_over_a_model_with_splits_that_scores_better():
    """Nothing beats the prior (0.80) here; the constant model has the lowest Brier loss
    and is within one standard error of the best, yet the model with splits that scores
    better wins, and both are flagged as no better than the prior."""
    rows = [_row("constant", 0.79, 0.30, 0), _row("splits", 0.80, 0.32, 12)]
    best = choose(rows, "classification", 200, 2.0, prior=0.80)
    assert rows[best]["name"] == "splits"
    assert not any(r["above_prior"] for r in rows)
    assert "keeps no split" in rows[0]["reason"]
    assert "not above the prior" in rows[1]["reason"]


def test_a_constant_model_may_win_when_no_model_with_splits_scores_better():
    rows = [_row("constant", 0.80, 0.30, 0), _row("splits", 0.78, 0.33, 12)]
    best = choose(rows, "classification", 200, 2.0, prior=0.80)
    assert rows[best]["name"] == "constant" and not rows[best]["above_prior"]


def test_a_candidate_above_the_prior_wins_over_those_that_are_not():
    """The one-standard-error rule would pick the lowest Brier loss (a model at the prior's
    accuracy); a candidate above the prior exists, so the choice is among those."""
    rows = [_row("at prior", 0.80, 0.25, 30), _row("above", 0.81, 0.28, 40),
            _row("over budget", 0.95, 0.10, 50, cost=3.0, fits=False)]
    best = choose(rows, "classification", 200, 2.0, prior=0.80)
    assert rows[best]["name"] == "above"
    assert [r["above_prior"] for r in rows] == [False, True, True]
    assert "not above the prior's 0.8000, which 1 candidate(s)" in rows[0]["reason"]
    assert "more than the budget" in rows[2]["reason"]


def test_the_prior_of_a_regressor_is_an_r2_of_zero():
    assert prior_score(np.array([1.0, 5.0]), "regression") == 0.0
    assert prior_score(np.array([0, 1, 1, 2]), "classification") == 0.5
    rows = [_row("mean", -0.01, 1.0, 0), _row("model", 0.3, 0.7, 8)]
    best = choose(rows, "regression", 100, 2.0, prior=0.0)
    assert rows[best]["name"] == "model" and rows[best]["above_prior"]
