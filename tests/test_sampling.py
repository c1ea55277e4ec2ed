"""cost_sample=: the cost term on a uniform sample, the error term on all rows, an
interval that covers the true cost, and the true cost measured on all rows."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt._sampling import (
    cost_sample_report,
    full_average_cost,
    resolve_cost_sample,
    sampled_cost_interval,
)
from prune_opt.budget import fit_budget


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
