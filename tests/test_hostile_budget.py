"""Hostile inputs to the budget search, the trade-off curve and cost sampling.

A budget is always met on the data it is measured on (or the result says, and
warns, that it was met on a sample only); every argument outside its domain is
refused by name before any solve.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po

COSTS = [1.0, 1.0, 5.0, 5.0]


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0).fit(X, y)
    full_cost = po.prune(rf, X, y, costs=COSTS, lam=0.0).average_cost(X)
    return rf, X, y, full_cost


# ------------------------------------------------------------ fit_budget
@pytest.mark.parametrize("objective", ["paper", "brier"])
@given(share=st.floats(0.0, 3.0))
def test_any_budget_is_met_on_the_data(iris, objective, share):
    """From 0 to three times the unpruned cost: the result never costs more than the
    budget, and at or above the full cost it keeps every split the search wants."""
    rf, X, y, full_cost = iris
    budget = share * full_cost
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pf = po.fit_budget(rf, X, y, costs=COSTS, budget=budget, objective=objective,
                           time_limit=5)
    assert pf.average_cost(X) <= budget * (1 + 1e-12) + 1e-12
    if budget == 0:
        assert pf.n_splits == 0


@pytest.mark.parametrize("objective", ["paper", "brier"])
@pytest.mark.parametrize("budget, exc", [
    (-1.0, ValueError), (math.nan, ValueError), (math.inf, ValueError), (-math.inf, ValueError),
    ("3", TypeError), (None, TypeError), (True, TypeError), ([3.0], TypeError),
])
def test_budget_outside_its_domain_is_refused_by_name(iris, objective, budget, exc):
    rf, X, y, _ = iris
    with pytest.raises(exc, match="budget"):
        po.fit_budget(rf, X, y, costs=COSTS, budget=budget, objective=objective)


@pytest.mark.parametrize("objective", ["paper", "brier"])
def test_time_limit_zero_nan_huge_and_infinite(iris, objective):
    rf, X, y, _ = iris
    for bad in (math.nan, -1.0, -math.inf, "5"):
        with pytest.raises((ValueError, TypeError), match="time_limit"):
            po.fit_budget(rf, X, y, costs=COSTS, budget=3.0, objective=objective,
                          time_limit=bad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        results = [po.fit_budget(rf, X, y, costs=COSTS, budget=3.0, objective=objective,
                                 time_limit=tl) for tl in (0, 1e300, math.inf, None)]
    for pf in results:  # 0 returns at once with a valid pruning; inf is no limit
        assert pf.average_cost(X) <= 3.0 + 1e-12
    if objective == "paper":
        assert [r.solve_info["status"] for r in results[1:]] == ["optimal"] * 3


@pytest.mark.parametrize("method", ["hull", "bogus", None])
def test_method_is_checked_for_every_objective(iris, method):
    """method= was silently ignored with an ensemble objective."""
    rf, X, y, _ = iris
    with pytest.raises(ValueError, match="method"):
        po.fit_budget(rf, X, y, costs=COSTS, budget=3.0, objective="brier", method=method)
    if method != "hull":
        with pytest.raises(ValueError, match="method"):
            po.fit_budget(rf, X, y, costs=COSTS, budget=3.0, method=method)


@pytest.mark.parametrize("objective", ["Paper", "BRIER", " brier", "nope", None, 3])
def test_unknown_objective_names_the_choices(iris, objective):
    rf, X, y, _ = iris
    with pytest.raises(ValueError, match="brier"):
        po.fit_budget(rf, X, y, costs=COSTS, budget=3.0, objective=objective)
    if objective is None:  # prune's default: the paper objective for a forest
        default = po.prune(rf, X, y, costs=COSTS, lam=0.01, objective=None)
        paper = po.prune(rf, X, y, costs=COSTS, lam=0.01, objective="paper")
        assert np.array_equal(default.split_mask, paper.split_mask)
        return
    with pytest.raises(ValueError, match="brier"):
        po.prune(rf, X, y, costs=COSTS, lam=0.01, objective=objective)


def test_single_class_validation_data_is_handled(iris):
    rf, X, y, _ = iris
    for objective in ("paper", "brier", "logloss", "margin", "accuracy"):
        pf = po.fit_budget(rf, X[:50], y[:50], costs=COSTS, budget=2.0, objective=objective,
                           time_limit=5)
        assert pf.average_cost(X[:50]) <= 2.0 + 1e-12
        assert pf.score(X[:50], y[:50]) == 1.0


def test_labels_unseen_in_training_are_refused(iris):
    rf, X, y, _ = iris
    for objective in ("paper", "brier"):
        with pytest.raises(ValueError, match="unknown to the forest"):
            po.fit_budget(rf, X, y + 1, costs=COSTS, budget=2.0, objective=objective)
        with pytest.raises(ValueError, match="unknown to the forest"):
            po.prune(rf, X, y + 1, costs=COSTS, lam=0.01, objective=objective)


# ------------------------------------------------------------ cost_sample
@pytest.mark.parametrize("cost_sample, exc", [
    (0, ValueError), (1, ValueError), (-3, ValueError), (0.5, TypeError), (10.0, TypeError),
    (True, TypeError), ("all", ValueError),
])
def test_cost_sample_outside_its_domain_is_refused(iris, cost_sample, exc):
    rf, X, y, _ = iris
    with pytest.raises(exc, match="cost_sample"):
        po.prune(rf, X, y, costs=COSTS, lam=0.01, cost_sample=cost_sample)
    with pytest.raises(exc, match="cost_sample"):
        po.fit_budget(rf, X, y, costs=COSTS, budget=3.0, cost_sample=cost_sample)


def test_cost_sample_at_or_above_n_and_auto_is_the_exact_problem(iris):
    rf, X, y, _ = iris
    exact = po.fit_budget(rf, X, y, costs=COSTS, budget=3.0, objective="paper", time_limit=5)
    for cs in (150, 10**6, "auto", np.int64(150)):
        pf = po.fit_budget(rf, X, y, costs=COSTS, budget=3.0, cost_sample=cs, time_limit=5)
        np.testing.assert_array_equal(pf.split_mask, exact.split_mask)
        assert "true_average_cost" not in pf.solve_info


@given(m=st.integers(2, 149), budget=st.floats(0.5, 8.0))
def test_a_budget_met_on_a_sample_reports_the_true_cost(iris, m, budget):
    """fit_budget(cost_sample=m) meets the budget on the sample; the true cost on all
    rows is recorded, and a warning says when it is above the budget (it was silent)."""
    rf, X, y, _ = iris
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pf = po.fit_budget(rf, X, y, costs=COSTS, budget=budget, cost_sample=m, time_limit=5)
    info = pf.solve_info
    assert info["n_sample"] == m
    assert info["true_average_cost"] == pytest.approx(pf.average_cost(X), abs=1e-12)
    over = info["true_average_cost"] > budget * (1 + 1e-10)
    said = [w for w in caught if "true average cost" in str(w.message)]
    assert bool(said) == over


@given(m=st.integers(2, 149), budget=st.floats(0.5, 8.0))
def test_a_sampled_problem_passed_first_keeps_the_true_cost_check(iris, m, budget):
    """A problem compiled with cost_sample and passed to fit_budget still gets the
    true-cost check on X (it was skipped), and without X a warning says it cannot."""
    rf, X, y, _ = iris
    problem = po.compile_problem(rf, X, y, costs=COSTS, cost_sample=m)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pf = po.fit_budget(problem, X, y, budget=budget, time_limit=5)
    info = pf.solve_info
    assert info["true_average_cost"] == pytest.approx(pf.average_cost(X), abs=1e-12)
    over = info["true_average_cost"] > budget * (1 + 1e-10)
    assert bool([w for w in caught if "true average cost" in str(w.message)]) == over
    with pytest.warns(UserWarning, match="sampled average cost only"):
        po.fit_budget(problem, budget=budget, time_limit=5)


def test_a_sampled_problem_is_accepted_by_an_ensemble_objective(iris):
    """With an ensemble objective the budget is met on every row of X, sampled
    problem or not (it was refused as compiled on another X)."""
    rf, X, y, full = iris
    problem = po.compile_problem(rf, X, y, costs=COSTS, cost_sample=40)
    pf = po.fit_budget(problem, X, y, budget=0.4 * full, objective="brier", time_limit=5)
    assert pf.average_cost(X) <= 0.4 * full * (1 + 1e-10)
    with pytest.raises(ValueError, match="rows it was compiled on"):
        po.fit_budget(problem, X[:100], y[:100], budget=0.4 * full, objective="brier")


def test_prune_with_cost_sample_reports_the_true_cost(iris):
    rf, X, y, _ = iris
    pf = po.prune(rf, X, y, costs=COSTS, lam=0.01, cost_sample=20)
    assert pf.solve_info["true_average_cost"] == pytest.approx(pf.average_cost(X), abs=1e-12)
    lo, hi = pf.solve_info["cost_ci"]
    assert lo <= pf.solve_info["sampled_average_cost"] <= hi


# ------------------------------------------------------------ client=
@pytest.mark.parametrize("client", [True, "tcp://127.0.0.1:1", object(), 0])
def test_what_is_not_a_dask_client_is_refused_by_name(iris, client):
    rf, X, y, _ = iris
    with pytest.raises(TypeError, match="client must be a dask.distributed.Client"):
        po.prune(rf, X, y, costs=COSTS, lam=0.01, client=client)
    with pytest.raises(TypeError, match="client must be a dask.distributed.Client"):
        po.fit_budget(rf, X, y, costs=COSTS, budget=3.0, client=client)


def test_a_dask_client_reports_the_true_cost_and_a_closed_one_is_refused(iris):
    """With client= and cost_sample= the true cost on all rows was left out of
    solve_info (the docstring promises it); a closed client gave 'IOLoop is closed'."""
    distributed = pytest.importorskip("dask.distributed")
    rf, X, y, _ = iris
    client = distributed.Client(processes=False, n_workers=1, threads_per_worker=1,
                                dashboard_address=None)
    try:
        remote = po.prune(rf, X, y, costs=COSTS, lam=0.01, cost_sample=20, client=client)
    finally:
        client.close()
    local = po.prune(rf, X, y, costs=COSTS, lam=0.01, cost_sample=20)
    np.testing.assert_array_equal(remote.split_mask, local.split_mask)
    assert remote.solve_info["true_average_cost"] == local.solve_info["true_average_cost"]
    with pytest.raises(ValueError, match="client is closed"):
        po.prune(rf, X, y, costs=COSTS, lam=0.01, client=client)
    with pytest.raises(ValueError, match="client is closed"):
        po.compile_problem(rf, X, y, costs=COSTS, client=client)


# ------------------------------------------------------------ tradeoff_curve
def test_tradeoff_curve_refuses_a_budget_row_problem_up_front(iris):
    """It failed after solving with 'stopped with status feasible'."""
    rf, X, y, _ = iris
    p = po.compile_problem(rf, X, y, costs=COSTS, budget=2.0)
    with pytest.raises(ValueError, match="with_budget"):
        po.tradeoff_curve(p)
    assert len(po.tradeoff_curve(p.with_budget(None))) >= 2


@pytest.mark.parametrize("lams, exc, words", [
    ([[0.1, 0.2]], ValueError, "1-D"), ([0.1, math.nan], ValueError, "lam"),
    ([-0.1], ValueError, "lam"), ([math.inf], ValueError, "lam"), (["x"], TypeError, "lams"),
    ({"a": 1}, TypeError, "lams"),
])
def test_tradeoff_curve_refuses_bad_lams(iris, lams, exc, words):
    rf, X, y, _ = iris
    with pytest.raises(exc, match=words):
        po.tradeoff_curve(rf, X, y, costs=COSTS, lams=lams)


def test_tradeoff_curve_rows_are_what_prune_returns(iris):
    """Each breakpoint row is the exact optimum of every lam inside its interval."""
    rf, X, y, _ = iris
    curve = po.tradeoff_curve(rf, X, y, costs=COSTS)
    for row in curve.itertuples():
        lam = (row.lam_lo + row.lam_hi) / 2 if np.isfinite(row.lam_hi) else 2 * row.lam_lo + 1
        pf = po.prune(rf, X, y, costs=COSTS, lam=lam)
        assert pf.average_cost(X) == pytest.approx(row.average_cost, abs=1e-9)


# ------------------------------------------------------------ objectives and refit
def test_evaluate_objective_refuses_zero_weights(iris):
    """Zero total weight gave NaN for every figure, with only a RuntimeWarning."""
    from prune_opt.objectives import evaluate_objective

    rf, X, y, _ = iris
    pf = po.prune(rf, X, y, costs=COSTS, lam=0.01)
    with pytest.raises(ValueError, match="sample_weight"):
        evaluate_objective(pf, X, y, objective="brier", lam=0.0, sample_weight=np.zeros(150))


@pytest.mark.parametrize("method", ["counts", "global"])
def test_refit_leaves_on_hostile_labels(iris, method):
    rf, X, y, _ = iris
    pf = po.prune(rf, X, y, costs=COSTS, lam=0.02, train=(X, y))
    single = po.refit_leaves(pf, X[:50], y[:50], method=method)  # one class only
    np.testing.assert_allclose(single.forest.value.sum(axis=1), 1.0)
    np.testing.assert_array_equal(single.acquisition_cost(X), pf.acquisition_cost(X))
    for bad, exc in ((y + 7, ValueError), (y.astype(str), ValueError), (y + 0.5, ValueError),
                     (y[:-1], ValueError)):
        with pytest.raises(exc, match="y"):
            po.refit_leaves(pf, X, bad, method=method)
    for smoothing in (math.nan, math.inf, -1.0):
        with pytest.raises(ValueError, match="smoothing"):
            po.refit_leaves(pf, X, y, smoothing=smoothing, method=method)
    with pytest.raises(ValueError, match="method"):
        po.refit_leaves(pf, X, y, method=method.upper())


@pytest.mark.parametrize("random_state", ["a", 1.5, -1, True, [1.5]])
def test_a_bad_sampling_seed_is_refused_by_name(iris, random_state):
    """A string or float seed raised numpy's 'SeedSequence expects int'."""
    rf, X, y, _ = iris
    with pytest.raises(TypeError, match="random_state"):
        po.compile_problem(rf, X, y, costs=COSTS, cost_sample=20, random_state=random_state)
    rng = np.random.default_rng(3)
    assert po.compile_problem(rf, X, y, costs=COSTS, cost_sample=20,
                              random_state=rng).cost_sample["n_sample"] == 20


def test_misspelt_paper_and_mistyped_labels_get_the_right_hint(iris):
    """'Paper' listed every objective but 'paper'; numeric labels for a forest of string
    classes were told to use y.astype(int)."""
    rf, X, y, _ = iris
    with pytest.raises(ValueError, match="'paper'.*case-sensitive"):
        po.prune(rf, X, y, costs=COSTS, lam=0.01, objective="Paper")
    named = RandomForestClassifier(n_estimators=2, random_state=0).fit(
        X, np.array(["setosa", "versicolor", "virginica"])[y])
    with pytest.raises(ValueError, match="number labels.*fitted on") as info:
        po.prune(named, X, y, costs=COSTS, lam=0.01)
    assert "astype(int)" not in str(info.value)


@given(exponent=st.integers(-300, 300))
def test_a_common_weight_factor_changes_nothing(iris, exponent):
    """The program is invariant to scaling every sample weight; weights near 1e18 made
    HiGHS fail with 'Solve error' or 'model error'."""
    rf, X, y, _ = iris
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    base = po.compile_problem(rf, X, y, costs=COSTS, lam=0.01, sample_weight=w)
    scaled = po.compile_problem(rf, X, y, costs=COSTS, lam=0.01,
                                sample_weight=w * 10.0**exponent)
    for solver in ("mincut", "highs"):
        a, b = po.solve(base, solver=solver), po.solve(scaled, solver=solver)
        assert b.solve_info["status"] == "optimal"
        assert b.objective == pytest.approx(a.objective, rel=1e-9)
        # ties may break differently, but the scaled optimum is optimal unscaled too
        assert base.evaluate(b.split_mask).objective == pytest.approx(a.objective, rel=1e-9)
