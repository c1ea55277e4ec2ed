"""cost_sample=: the cost term on a uniform sample, the error term on all rows, an
interval that covers the true cost, and the true cost measured on all rows."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits, load_iris
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.budget import fit_budget
from prune_opt.program._sampling import (
    cost_sample_report,
    full_average_cost,
    resolve_cost_sample,
    sampled_cost_interval,
)
from tests.forest_cases import forest_cases


@pytest.fixture(scope="module")
def forest_data():
    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, max_depth=6, random_state=0).fit(X[:800],
                                                                                 y[:800])
    return rf, X[800:], y[800:]


@pytest.mark.parametrize("bad, exc", [("half", ValueError), (1, ValueError), (0, ValueError),
                                      (2.5, TypeError), (True, TypeError)])
def test_bad_cost_sample_is_refused_by_name(bad, exc):
    with pytest.raises(exc, match="cost_sample"):
        resolve_cost_sample(bad, 1000)


def test_sample_as_large_as_the_data_is_the_exact_problem(forest_data):
    rf, X, y = forest_data
    a = po.compile_problem(rf, X, y, lam=0.01, cost_sample=len(y))
    b = po.compile_problem(rf, X, y, lam=0.01)
    assert a.cost_sample is None and np.array_equal(a.use_node, b.use_node)


def test_error_term_uses_every_row(forest_data):
    rf, X, y = forest_data
    a = po.compile_problem(rf, X, y, lam=0.01, cost_sample=100, random_state=4)
    b = po.compile_problem(rf, X, y, lam=0.01)
    assert np.array_equal(a.node_error, b.node_error)
    assert np.array_equal(a.tree_error_weight, b.tree_error_weight)
    assert a.total_weight == 100 and a.cost_sample["n_population"] == len(y)


def test_sampled_cost_is_the_sample_mean_of_true_costs(forest_data):
    rf, X, y = forest_data
    p = po.compile_problem(rf, X, y, lam=0.01, cost_sample=300, random_state=1)
    mask = po.solve(p, solver="mincut").split_mask
    rows = p.cost_sample["rows"]
    got = sampled_cost_interval(p, mask)["sampled_average_cost"]
    assert got == pytest.approx(full_average_cost(p.forest, mask, p.costs, X[rows]),
                                rel=1e-12)
    assert got == pytest.approx(p.evaluate(mask).average_cost, rel=1e-12)


def test_interval_covers_the_true_cost_of_a_fixed_pruning(forest_data):
    """The estimator is unbiased for a fixed pruning and its 95% interval covers
    the true cost in about 95% of the samples (binomial margin)."""
    rf, X, y = forest_data
    full = po.compile_problem(rf, X, y, lam=0.01)
    mask = po.solve(full, solver="mincut").split_mask
    true = full.evaluate(mask).average_cost
    means, hits = [], 0
    for seed in range(40):
        p = po.compile_problem(rf, X, y, lam=0.01, cost_sample=150, random_state=seed)
        ci = sampled_cost_interval(p, mask)
        means.append(ci["sampled_average_cost"])
        hits += ci["cost_ci"][0] <= true <= ci["cost_ci"][1]
    se = np.std(means) / np.sqrt(len(means))
    assert abs(np.mean(means) - true) < 4 * se + 1e-12
    assert hits >= 33


def test_prune_reports_interval_and_true_cost_on_all_rows(forest_data):
    rf, X, y = forest_data
    w = np.random.default_rng(0).integers(1, 3, size=len(y))
    pruned = po.prune(rf, X, y, lam=0.01, cost_sample=400, solver="mincut", sample_weight=w)
    info = pruned.solve_info
    assert info["n_sample"] == 400 and info["n_population"] == len(y)
    assert info["cost_ci"][0] <= info["sampled_average_cost"] <= info["cost_ci"][1]
    true = np.average(pruned.acquisition_cost(X), weights=w)
    assert info["true_average_cost"] == pytest.approx(true, rel=1e-12)
    exact = po.compile_problem(rf, X, y, lam=0.01, sample_weight=w)
    assert info["true_objective"] == pytest.approx(
        exact.evaluate(pruned.split_mask).objective, rel=1e-12)


def test_report_is_empty_without_sampling(forest_data):
    rf, X, y = forest_data
    p = po.compile_problem(rf, X, y, lam=0.01)
    assert cost_sample_report(p, p.forest.full_split_mask()) == {}


def test_fit_budget_passes_cost_sample_through(forest_data):
    rf, X, y = forest_data
    pruned = fit_budget(rf, X, y, budget=15.0, cost_sample=300, time_limit=10)
    assert pruned.solve_info["problem_size"]["n_cost_rows"] <= 300


@given(case=forest_cases(), lam=st.sampled_from([1e-3, 0.05]), chunk=st.sampled_from([7, 4096]))
@settings(max_examples=15, deadline=None)
def test_streaming_true_cost_equals_the_pruned_forests_cost(case, lam, chunk):
    from prune_opt.model._pruned import PrunedForest

    p = po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                           lam=lam)
    mask = po.solve(p, solver="mincut").split_mask
    X = p.forest.check_X(case["X_val"])
    want = PrunedForest(p.forest, mask, costs=p.costs).acquisition_cost(X).mean()
    got = full_average_cost(p.forest, mask, p.costs, X, chunk_size=chunk)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_auto_rule_follows_the_interval_and_the_memory_cap():
    from statistics import NormalDist

    from prune_opt.program._sampling import auto_sample_rows

    z = NormalDist().inv_cdf(0.975)
    n = 10**8
    m = auto_sample_rows(n)  # worst case: sd <= max / 2
    assert m == pytest.approx((z / 0.004) ** 2, rel=0.01)
    # uniform per-row costs of the unpruned forest: sd bound max/2 = mean/2, same rule
    assert auto_sample_rows(n, np.full(100, 6.0)) == m
    # skewed costs need more rows; a memory cap wins over the statistics
    assert auto_sample_rows(n, np.r_[np.full(99, 1.0), 50.0]) > m
    assert auto_sample_rows(n, memory_rows=1000) == 1000
    assert auto_sample_rows(m // 2) is None  # more than half the rows: use all


def test_auto_compiles_on_the_rule_s_sample(monkeypatch):
    from prune_opt.program import _sampling

    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    monkeypatch.setattr(_sampling, "AUTO_HALF_WIDTH", 0.05)
    p = po.compile_problem(rf, np.tile(X, (20, 1)), np.tile(y, 20), lam=0.01,
                           cost_sample="auto")
    assert p.cost_sample is not None and 2 <= p.cost_sample["n_sample"] < 1500


@pytest.fixture(scope="module")
def booster_data():
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = load_digits(return_X_y=True)
    y = (y >= 5).astype(int)
    gb = HistGradientBoostingClassifier(max_iter=25, max_depth=4, random_state=0).fit(
        X[:700], y[:700])
    return gb, X[700:], y[700:]


def test_a_boosters_sampled_compile_streams_its_rows(booster_data, monkeypatch):
    """The error term of a booster compiled with cost_sample reads every row, block by
    block, and no leaf matrix of every row is made: only blocks and the sample."""
    from prune_opt.program import _compile, _compile_steps

    gb, X, y = booster_data
    whole = po.compile_problem(gb, X, y, lam=0.01, chunk_size=256)
    sizes = []
    real = _compile_steps.route_leaves

    def counted(forest, rows, *args, **kwargs):
        sizes.append(rows.shape[0])
        return real(forest, rows, *args, **kwargs)

    def refused(*args, **kwargs):
        raise AssertionError("a leaf matrix of every row")

    monkeypatch.setattr(_compile_steps, "route_leaves", counted)
    monkeypatch.setattr(_compile, "leaf_matrix", refused)
    p = po.compile_problem(gb, X, y, lam=0.01, cost_sample=300, chunk_size=256)
    assert sizes and max(sizes) <= 300 and sum(sizes) == X.shape[0]  # each row once
    # the same blocks summed in the same order: the same errors and node values, bit for bit
    np.testing.assert_array_equal(p.node_error, whole.node_error)
    np.testing.assert_array_equal(p.forest.value, whole.forest.value)
    assert p.n_rows <= 300 and p.cost_sample["n_population"] == X.shape[0]


def test_a_boosters_budget_on_a_sample_reports_its_true_cost(booster_data):
    from prune_opt.model._pruned import PrunedForest

    gb, X, y = booster_data
    f = po.as_forest(gb)
    base = PrunedForest(f, f.full_split_mask(), costs=None).average_cost(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a true cost above the budget
        pf = fit_budget(gb, X, y, budget=0.3 * base, cost_sample=400, time_limit=20)
    info = pf.solve_info
    assert info["n_sample"] == 400 and info["true_average_cost"] == pytest.approx(
        pf.average_cost(X), rel=1e-12)
    lo, hi = info["cost_ci"]
    assert lo <= info["sampled_average_cost"] <= hi


@pytest.mark.parametrize("lam", [1e-3, 0.05, 1.0])
def test_streaming_true_cost_skips_only_trees_that_add_nothing(booster_data, lam):
    """The true-cost pass routes only the trees that pay a unit not every row pays:
    the same cost as the pruned model's, for prunings that cut some trees to the root
    and pay a root's units in others."""
    from prune_opt.model._pruned import PrunedForest

    gb, X, y = booster_data
    p = po.compile_problem(gb, X, y, lam=lam)
    mask = po.solve(p, solver="mincut").split_mask.copy()
    mask[p.forest.tree_slice(3)] = False  # a tree cut to its root
    Xc = p.forest.check_X(X)
    want = PrunedForest(p.forest, mask, costs=p.costs).acquisition_cost(Xc).mean()
    got = full_average_cost(p.forest, mask, p.costs, Xc, chunk_size=100)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
