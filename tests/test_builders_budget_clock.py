"""The budget estimator's one clock: a prune_opt.Deadline made in ``fit``, the time a
step is expected to take by its family and the classes, the steps that stop at their
deadline by themselves, and the seconds of every candidate.

The timing tests slow one family down on purpose (a sleep per tree, which takes no CPU)
so that they do not depend on how busy the machine is."""

import time

import numpy as np
import pytest
from sklearn.datasets import load_digits

import prune_opt as po
from forest_builders import BudgetPrunedForestClassifier
from forest_builders.estimator import _forests
from forest_builders.estimator import _registry as _candidates
from forest_builders.estimator._boosted import _grow_boosted
from forest_builders.estimator._clock import CLASS_POWERS, FACTORS, OVERRUN, FitClock
from tests._timing import run_seconds

ROOMY = dict(n_estimators=4, time_limit=30, max_subsets=1, random_state=0)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X, y


def test_the_clock_is_one_deadline_and_its_phases_end_within_it():
    clock = FitClock(10.0)
    assert isinstance(clock.deadline, po.Deadline) and clock.time_limit == 10.0
    growing = clock.until(0.5)
    assert growing.end <= clock.deadline.end and 4.9 < growing.left() <= 5.0
    assert clock.fits("rf", growing) and not clock.fits("rf", growing, extra=6.0)
    passed = FitClock(po.Deadline(1.0, start=time.perf_counter() - 2.0))  # a given deadline
    assert passed.left() == 0.0 and not passed.fits("rf", passed.deadline)


@pytest.mark.parametrize("n_classes", [1, 2, 9, 26])
def test_a_family_is_expected_by_its_factor_and_the_classes(n_classes):
    """Before a step of its kind ran, a step is expected to take the reference (the
    random forest) times its family's factor, times (classes / 2) ** its class power: a
    lazy forest's Python grower and a leaf refit grow with the classes, a boosted model
    (its rounds capped at TREE_CAP trees) does not; after one ran, as long as it took."""
    clock = FitClock(10.0, n_classes=n_classes)
    clock.note("rf", 0.3)
    scale = max(n_classes / 2, 1.0)
    for kind in ("lazy", "refit", "cegb", "shallow"):
        want = 0.3 * FACTORS[kind] * scale ** CLASS_POWERS.get(kind, 0.0)
        assert clock.expected(kind) == pytest.approx(want)
    assert clock.expected("cegb") == pytest.approx(0.3 * FACTORS["cegb"])  # not by class
    if n_classes >= 9:  # measured: a lazy forest took 40 x the random forest on 9 classes
        assert clock.expected("lazy") >= 0.3 * 27
    clock.note("lazy", 2.0)
    assert clock.expected("lazy") == 2.0


def _grow_context(X, y, n_grow, n_prune):
    """A growing context on the first ``n_grow`` rows, pruned on the next ``n_prune``."""
    return _candidates.GrowContext(X, y, np.arange(n_grow), np.arange(n_grow, n_grow + n_prune),
                                   5.0, po.FeatureCosts.uniform(X.shape[1]), None,
                                   "classification",
                                   {"n_estimators": 6, "seed": 0, "max_subsets": 1},
                                   FitClock(10.0), 0.5)


def test_a_lazy_forest_stops_adding_trees_at_its_deadline(digits):
    X, y = digits
    ctx = _grow_context(X, y, 300, 100)
    passed = po.Deadline(0.0)
    assert _forests._lazy_forest(ctx, 1.0, 0.3, False, ctx.rows, deadline=passed).n_trees == 1
    assert _forests._lazy_forest(ctx, 1.0, 0.3, False, ctx.rows).n_trees == 6


def test_a_lightgbm_model_stops_adding_rounds_at_its_deadline(digits):
    pytest.importorskip("lightgbm")
    X, y = digits
    ctx = _grow_context(X, y, 600, 300)
    passed = po.Deadline(0.0)
    stopped = _grow_boosted(ctx, "lightgbm", None, {}, (20, 0.1), ctx.rows, deadline=passed)
    whole = _grow_boosted(ctx, "lightgbm", None, {}, (20, 0.1), ctx.rows, stop_early=False)
    assert stopped.n_trees == 10 and whole.n_trees == 20 * 10  # one round of 10 classes


def test_a_family_slower_than_expected_stops_with_its_share_of_the_time(digits, monkeypatch):
    """A lazy forest expected short (its factor times the random forest's time) that
    takes far longer (here 0.25 s a tree, 10 s for 40) stops adding trees when its
    family's share of the growing time ends, and the fit ends within 1.25 x time_limit;
    before the clock bounded it, such a step took the pruning phase's time and more."""
    X, y = digits
    real = _forests._LazyForestUntil._grow

    def slow(self, spec, X, y, seeds):
        def sleepy():
            for seed in seeds:
                time.sleep(0.25)
                yield seed

        return real(self, spec, X, y, sleepy())

    monkeypatch.setattr(_forests._LazyForestUntil, "_grow", slow)
    monkeypatch.setitem(FACTORS, "lazy", 0.01)  # expected far shorter than it takes
    est = BudgetPrunedForestClassifier(budget=4.0, candidates=["rf", "lazy"], n_estimators=40,
                                       max_subsets=1, time_limit=4.0, random_state=0)
    with run_seconds() as t:  # less what other jobs kept the fit waiting for a core
        est.fit(X[:600], y[:600])
    assert t.seconds <= OVERRUN * 4.0, est.candidates_[["name", "seconds", "reason"]]
    grown = est.candidates_[est.candidates_["model"].str.startswith("lazy")
                            & (est.candidates_["seconds"] > 0)]
    assert (grown["seconds"] < 4.0).all()


def test_every_candidate_s_seconds_hold_its_growing_and_pruning(monkeypatch):
    """``candidates_['seconds']``: a model kept as grown took its growing time; a pruning
    its model's growing plus the pruning call; a leaf refit those plus the refit; a
    skipped row 0."""
    from sklearn.datasets import load_breast_cancer

    grown = {}
    real = _candidates.GrowContext.add

    def spy(self, name, family, kind, forest, recipe, *, seconds=0.0, **info):
        grown[name] = seconds
        return real(self, name, family, kind, forest, recipe, seconds=seconds, **info)

    monkeypatch.setattr(_candidates.GrowContext, "add", spy)
    X, y = load_breast_cancer(return_X_y=True)
    costs = 1.0 + np.arange(X.shape[1]) % 5
    est = BudgetPrunedForestClassifier(budget=4.0, costs=costs, **ROOMY).fit(X, y)
    table = est.candidates_
    scored = table[table["score"].notna()]
    assert len(scored) and (scored["seconds"] > 0).all()
    assert all(grown[m] > 0 for m in scored["model"])
    as_grown = scored[scored["objective"] == "none"]
    assert np.allclose(as_grown["seconds"], [grown[m] for m in as_grown["model"]])
    pruned = scored[scored["objective"] != "none"]
    assert len(pruned) and (pruned["seconds"] > [grown[m] for m in pruned["model"]]).all()
    for _, r in pruned[pruned["refit"]].iterrows():
        plain = pruned[(pruned["name"] == r["name"].removesuffix(" + refit"))].iloc[0]
        assert r["seconds"] > plain["seconds"]
    assert (table.loc[table["score"].isna(), "seconds"] == 0).all()


def test_the_steps_that_run_regardless_stop_by_cpu_or_wall_time(digits):
    """The anchors (and a fit's first model) stop adding rounds by REGARDLESS_SHARE of
    time_limit in CPU seconds, which the load does not move, or at the latest by
    REGARDLESS_WALL_SHARE of it on the wall clock (a machine that starves the fit's
    threads: LightGBM with n_jobs=-1 beside other jobs took 20 s for one anchor)."""
    X, y = digits

    def context(clock):
        return _candidates.GrowContext(X, y, np.arange(300), np.arange(300, 400), 5.0,
                                       po.FeatureCosts.uniform(X.shape[1]), None,
                                       "classification",
                                       {"n_estimators": 6, "seed": 0, "max_subsets": 1},
                                       clock, 0.5)

    assert not context(FitClock(10.0)).regardless.expired()
    wall = 10.0 * _candidates.REGARDLESS_WALL_SHARE
    late = context(FitClock(10.0, start=time.perf_counter() - wall - 0.1))
    assert late.regardless.expired()  # no CPU spent, the wall share passed
    assert _forests._lazy_forest(late, 1.0, 0.3, False, late.rows,
                                 deadline=late.regardless).n_trees == 1
