"""fit_budget: the hard-budget search meets the budget and beats the hull vertex;
method="hull" keeps the Lagrangian vertex (nothing on the hull between it and the
budget); the search is optimal at every budget against brute force."""

import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.budget import fit_budget, fits_budget, tradeoff_curve

SOLVER = "highs"


def _case(seed, trees=3, depth=3, n=80):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 5)).round(2)
    y = (X[:, 0] - X[:, 1] + 0.5 * X[:, 3] + rng.normal(scale=0.5, size=2 * n) > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed).fit(
        X[:n], y[:n])
    costs = po.FeatureCosts([2.0, 1.0, 4.0, 0.5, 3.0], groups={"lab": (1.5, [2, 4])})
    return rf, X[:n], y[:n], X[n:], y[n:], costs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_budget_met_and_no_hull_point_in_between(seed):
    rf, Xt, yt, X, y, costs = _case(seed)
    problem = po.compile_problem(rf, X, y, costs=costs, train=(Xt, yt))
    curve = tradeoff_curve(problem, solver=SOLVER)
    hull_costs = np.asarray(curve["average_cost"])
    full = hull_costs[0]
    for frac in (0.05, 0.2, 0.5, 0.8, 1.0, 1.3):
        budget = frac * full
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            pf = fit_budget(rf, X, y, costs=costs, budget=budget, train=(Xt, yt), solver=SOLVER,
                            method="hull")
        cost = pf.average_cost(X)
        assert cost <= budget + 1e-12
        assert cost == pytest.approx(pf.solve_info["achieved_cost"], rel=1e-12, abs=1e-12)
        # the chosen cost is a hull vertex and no hull vertex lies in (cost, budget]
        assert np.min(np.abs(hull_costs - cost)) <= 1e-9
        assert not np.any((hull_costs > cost + 1e-9) & (hull_costs <= budget + 1e-12))
        # the chosen pruning is optimal at the reported lam
        lam = pf.solve_info["lam"]
        best = po.solve(po.budget.problem_at_lam(problem, lam), solver=SOLVER).objective
        assert problem.evaluate(pf.split_mask).error_term + lam * cost == pytest.approx(
            best, rel=1e-9, abs=1e-12)
        nb = pf.solve_info["hull_neighbours"]
        if nb["costlier"] is not None:
            assert nb["costlier"]["average_cost"] > budget


@pytest.mark.parametrize("seed", [0, 3])
def test_search_beats_or_matches_hull(seed):
    rf, Xt, yt, X, y, costs = _case(seed, trees=2, depth=3)
    problem = po.compile_problem(rf, X, y, costs=costs, train=(Xt, yt))
    full = problem.evaluate(problem.forest.full_split_mask()).average_cost
    for budget in (0.3 * full, 0.6 * full):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            lag = fit_budget(rf, X, y, costs=costs, budget=budget, train=(Xt, yt),
                             solver=SOLVER, method="hull")
        pf = fit_budget(rf, X, y, costs=costs, budget=budget, train=(Xt, yt), time_limit=20,
                        objective="paper")
        info = pf.solve_info
        assert info["status"] == "optimal" and info["gap"] <= 1e-9
        assert pf.average_cost(X) <= budget * (1 + 1e-10)
        e_lag = problem.evaluate(lag.split_mask).error_term
        e = problem.evaluate(pf.split_mask).error_term
        assert e <= e_lag + 1e-12
        assert info["hull_error_gap"] == pytest.approx(e_lag - e, abs=1e-12)
        assert info["bound"] <= e + 1e-12 and info["found_by"]


@pytest.mark.parametrize("seed", [5, 6])
def test_search_is_optimal_at_every_budget_by_brute_force(seed):
    """At every budget between two consecutive costs of the whole pruning space
    (and at the costs themselves), the search returns the brute-force optimum."""
    from tests.test_budget_curve import all_prunings

    rf, Xt, yt, X, y, costs = _case(seed, trees=2, depth=3)
    problem = po.compile_problem(rf, X, y, costs=costs, train=(Xt, yt))
    evals = [problem.evaluate(m) for m in all_prunings(problem.forest)]
    cost_levels = np.unique([b.average_cost for b in evals])
    budgets = np.unique(np.concatenate([cost_levels, (cost_levels[:-1] + cost_levels[1:]) / 2]))
    for budget in budgets:
        best = min(b.error_term for b in evals if b.average_cost <= budget * (1 + 1e-10))
        pf = fit_budget(problem, budget=float(budget), time_limit=None)
        assert pf.breakdown.average_cost <= budget * (1 + 1e-10)
        assert pf.breakdown.error_term == pytest.approx(best, abs=1e-12)
        assert pf.solve_info["status"] == "optimal"
        root = problem.evaluate(np.zeros(problem.n_nodes, dtype=bool)).error_term
        if best < root - 1e-12:  # never the root-only forest when a pruning scores better
            assert pf.n_splits > 0


def test_search_on_one_tree_matches_brute_force():
    from sklearn.tree import DecisionTreeClassifier

    from tests.test_budget_curve import all_prunings

    rf, Xt, yt, X, y, costs = _case(4)
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(Xt, yt)
    problem = po.compile_problem(tree, X, y, costs=costs)
    budget = 2.5
    best = min(problem.evaluate(m).error_term for m in all_prunings(problem.forest)
               if fits_budget(problem.evaluate(m).average_cost, budget))
    pf = fit_budget(problem, budget=budget, time_limit=None)
    assert pf.breakdown.error_term == pytest.approx(best, abs=1e-12)


def test_root_only_budget_warns_and_notes():
    rf, Xt, yt, X, y, costs = _case(1)
    with pytest.warns(UserWarning, match="root-only"):
        pf = fit_budget(rf, X, y, costs=costs, budget=0.0, solver=SOLVER, method="hull")
    assert pf.n_splits == 0 and pf.average_cost(X) == 0.0
    assert "root-only" in pf.solve_info["note"]
    # the search: nothing else fits, and the paper search certifies it
    pf = fit_budget(rf, X, y, costs=costs, budget=0.0, objective="paper")
    assert pf.n_splits == 0 and pf.solve_info["status"] == "optimal"
    pf = fit_budget(rf, X, y, costs=costs, budget=0.0)  # the default: the same forest
    assert pf.n_splits == 0 and pf.average_cost(X) == 0.0


@pytest.mark.parametrize("method", ["search", "hull"])
def test_generous_budget_keeps_best_forest(method):
    rf, Xt, yt, X, y, costs = _case(2)
    pf = fit_budget(rf, X, y, costs=costs, budget=1e6, train=(Xt, yt), method=method,
                    solver="auto", objective="paper")
    p = po.prune(rf, X, y, costs=costs, lam=0.0, solver=SOLVER, train=(Xt, yt))
    assert pf.solve_info["lam"] == 0.0
    assert pf.breakdown.error_term == pytest.approx(p.breakdown.error_term, abs=1e-12)


def test_errors_are_clear():
    rf, Xt, yt, X, y, costs = _case(0)
    with pytest.raises(ValueError, match="budget"):
        fit_budget(rf, X, y, costs=costs, budget=-1.0)
    with pytest.raises(ValueError, match="method='hull'"):
        fit_budget(rf, X, y, costs=costs, budget=1.0, solver="highs")
    with pytest.raises(ValueError, match="method"):
        fit_budget(rf, X, y, costs=costs, budget=1.0, method="lagrange")
    with pytest.raises(ValueError, match="time_limit"):
        fit_budget(rf, X, y, costs=costs, budget=1.0, time_limit=-1)
    deep = po.compile_problem(rf, X, y, costs=costs, depth_cost=0.1)
    with pytest.raises(ValueError, match="depth_cost"):
        fit_budget(deep, budget=1.0)
    problem = po.compile_problem(rf, X, y, costs=costs)
    with pytest.raises(ValueError, match="costs"):
        fit_budget(problem, budget=1.0, costs=costs)
    with pytest.raises(ValueError, match="X and y"):
        fit_budget(rf, budget=1.0)
    with pytest.raises(ValueError, match="first argument"):
        fit_budget(None, X, y, budget=1.0)


def test_an_infinite_time_limit_is_no_limit_everywhere():
    import math

    rf, Xt, yt, X, y, costs = _case(0)
    a = fit_budget(rf, X, y, costs=costs, budget=2.0, time_limit=math.inf)
    b = fit_budget(rf, X, y, costs=costs, budget=2.0, time_limit=None)
    assert a.breakdown.error_term == b.breakdown.error_term
    pf = po.prune(rf, X, y, costs=costs, lam=0.01, objective="brier", time_limit=math.inf)
    assert pf.solve_info["objective"] == "brier"


def test_the_tree_error_objective_runs_under_a_budget():
    rf, Xt, yt, X, y, costs = _case(1)
    pf = fit_budget(rf, X, y, costs=costs, budget=2.0, objective="tree_error", time_limit=5)
    assert pf.average_cost(X) <= 2.0 * (1 + 1e-10)
    # the paper search on the same rows is a candidate: tree_error is its objective
    p = po.compile_problem(rf, X, y, costs=costs)
    assert pf.solve_info["ensemble_loss"] <= fit_budget(p, budget=2.0).breakdown.error_term + 1e-12


def test_primal_dual_cannot_trace_the_hull_and_says_so_up_front(monkeypatch):
    from prune_opt.program import _compile

    rf, Xt, yt, X, y, costs = _case(0)

    def no_compile(*a, **k):
        raise AssertionError("compiled before refusing")

    monkeypatch.setattr(_compile, "compile_problem", no_compile)
    for call in (lambda: tradeoff_curve(rf, X, y, costs=costs, solver="primal-dual"),
                 lambda: fit_budget(rf, X, y, costs=costs, budget=1.0, method="hull",
                                    solver="primal-dual")):
        with pytest.raises(ValueError, match="cannot trace the Lagrangian hull.*mincut"):
            call()


def test_fit_budget_with_an_ensemble_objective_meets_the_budget():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X[::2], y[::2])
    costs = [1.0, 1.0, 5.0, 5.0]
    full = po.acquisition_cost(rf, X[1::2], costs).mean()
    pruned = po.fit_budget(rf, X[1::2], y[1::2], costs=costs, budget=0.4 * full,
                           objective="brier", time_limit=20)
    assert pruned.average_cost(X[1::2]) <= 0.4 * full + 1e-9
    assert pruned.n_splits > 0  # a useful pruning, not the constant predictor
    with pytest.raises(ValueError, match="objective"):
        po.fit_budget(rf, X[1::2], y[1::2], costs=costs, budget=1.0, objective="nope")
    with pytest.raises(ValueError, match="method"):
        po.fit_budget(rf, X[1::2], y[1::2], costs=costs, budget=1.0, objective="brier",
                      method="hull")


def test_ensemble_budget_is_never_worse_than_its_candidates_in_its_own_loss():
    from sklearn.datasets import load_digits

    from prune_opt.objectives import evaluate_objective

    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0).fit(X[:600], y[:600])
    Xv, yv = X[600:900], y[600:900]
    budget = 0.25 * po.acquisition_cost(rf, Xv).mean()
    ens = po.fit_budget(rf, Xv, yv, budget=budget, objective="brier", time_limit=1.5)
    info = ens.solve_info
    loss = evaluate_objective(ens, Xv, yv, objective="brier", lam=0.0)["loss"]
    # the returned pruning is the better of the two candidates, in the chosen loss
    assert loss == pytest.approx(info["ensemble_loss"], rel=1e-12)
    assert info["ensemble_loss"] == min(info["candidates_loss"].values())
    assert ens.average_cost(Xv) <= budget + 1e-9
    assert ens.n_splits > 0


def test_time_limit_covers_the_compile(monkeypatch):
    """time_limit bounds the whole call: a slow compile leaves the search the rest
    (never less than MIN_SEARCH_SHARE of the limit)."""
    import time

    from prune_opt.budget import _fit_budget as fb

    rf, Xt, yt, X, y, costs = _case(0)
    real_compile, seen = fb.compile_problem, []

    def slow_compile(*a, **kw):
        out = real_compile(*a, **kw)
        time.sleep(0.3)
        return out

    def spy_search(problem, budget, deadline, verbose, solver_options):
        seen.append(deadline.left())  # the search's share of the call's one deadline
        return real_search(problem, budget, deadline, verbose, solver_options)

    real_search = fb._fit_search
    monkeypatch.setattr(fb, "compile_problem", slow_compile)
    monkeypatch.setattr(fb, "_fit_search", spy_search)
    for limit in (1.0, 0.2):
        pf = fit_budget(rf, X, y, costs=costs, budget=2.0, train=(Xt, yt), time_limit=limit,
                        objective="paper")
        assert pf.average_cost(X) <= 2.0 + 1e-12
    assert fb.MIN_SEARCH_SHARE * 1.0 <= seen[0] <= fb.TARGET_SHARE * 1.0 - 0.3
    assert seen[1] == pytest.approx(fb.MIN_SEARCH_SHARE * 0.2, abs=5e-3)  # the floor
