"""fit_budget(warm_start=...): a pruning handed in is never beaten by the result in the
objective the call minimises, whatever the time limit; foreign prunings are refused."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.budget import fits_budget
from prune_opt.objectives import evaluate_objective
from tests.forest_cases import forest_cases


def _cut(forest, rng):
    """A random pruning: every tree cut at its own random depth (closed under parents)."""
    tree_of = np.repeat(np.arange(forest.n_trees), np.diff(forest.node_offset))
    cut = rng.integers(0, int(forest.depth.max()) + 2, size=forest.n_trees)
    return forest.full_split_mask() & (forest.depth < cut[tree_of])


@given(case=forest_cases(max_examples=40), share=st.sampled_from([0.3, 0.6, 1.0]),
       objective=st.sampled_from(["paper", "brier"]), seed=st.integers(0, 2**16))
@settings(max_examples=15)
def test_never_worse_than_a_fitting_warm_start(case, share, objective, seed):
    est, Xv, yv, costs = case["est"], case["X_val"], case["y_val"], case["costs"]
    train = (case["X_train"], case["y_train"])
    problem = po.compile_problem(est, Xv, yv, costs=costs, train=train)
    mask = _cut(problem.forest, np.random.default_rng(seed))
    start = problem.evaluate(mask)
    budget = share * start.average_cost  # share 1.0: the warm start fits exactly
    # a tiny time limit: the warm start must survive even when the searches barely run
    pf = po.fit_budget(est, Xv, yv, costs=costs, budget=budget, objective=objective,
                       train=train, time_limit=0.05, warm_start=mask,
                       solver_options={"mip": False} if objective == "paper" else None)
    assert fits_budget(pf.average_cost(Xv), budget)
    if not fits_budget(start.average_cost, budget):
        return
    if objective == "paper":
        assert problem.evaluate(pf.split_mask).error_term <= start.error_term + 1e-12
    else:
        warm = po.PrunedForest(problem.forest, mask, costs=problem.costs)
        mine = evaluate_objective(pf, Xv, yv, objective="brier", lam=0.0)["loss"]
        assert mine <= evaluate_objective(warm, Xv, yv, objective="brier", lam=0.0)["loss"] \
            + 1e-12


def _iris_case():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X[::2], y[::2])
    return rf, X[1::2], y[1::2], [1.0, 1.0, 5.0, 5.0]


def test_auto_and_the_paper_search_take_an_earlier_result():
    rf, X, y, costs = _iris_case()
    budget = 0.5 * po.acquisition_cost(rf, X, costs).mean()
    first = po.fit_budget(rf, X, y, costs=costs, budget=budget, objective="paper",
                          time_limit=10)
    # the paper search offers it before its heuristics: at the same budget it is optimal,
    # so with no time for anything else the warm start is what comes back
    again = po.fit_budget(rf, X, y, costs=costs, budget=budget, objective="paper",
                          time_limit=1e-6, warm_start=first)
    assert again.objective <= first.objective + 1e-12
    auto = po.fit_budget(rf, X, y, costs=costs, budget=budget, warm_start=[first])
    assert fits_budget(auto.average_cost(X), budget)


def test_warm_start_refusals_name_the_argument():
    rf, X, y, costs = _iris_case()
    other = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=1).fit(X, y)
    foreign = po.fit_budget(other, X, y, costs=costs, budget=3.0, objective="paper",
                            time_limit=5)
    with pytest.raises(ValueError, match=r"warm_start\[0\] is a pruning of another forest"):
        po.fit_budget(rf, X, y, costs=costs, budget=3.0, warm_start=foreign)
    with pytest.raises(ValueError, match=r"warm_start\[1\] must have shape"):
        po.fit_budget(rf, X, y, costs=costs, budget=3.0, objective="brier",
                      warm_start=[po.as_forest(rf).full_split_mask(), np.ones(3, bool)])
    with pytest.raises(ValueError, match="warm_start= applies to method='search'"):
        po.fit_budget(rf, X, y, costs=costs, budget=3.0, method="hull", warm_start=foreign)


def test_an_ensemble_objective_keeps_an_earlier_result_with_no_time_to_search():
    """Breast cancer, 20 trees, 10% of the cost: a call with no time finds a worse
    pruning than one with 3 s; handed that result, it keeps it (as a sub-forest when
    the result dropped its root-only trees)."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    n = len(y) // 2
    rf = RandomForestClassifier(n_estimators=20, random_state=0).fit(X[:n], y[:n])
    Xv, yv = X[n:], y[n:]
    budget = 0.1 * po.acquisition_cost(rf, Xv).mean()
    first = po.fit_budget(rf, Xv, yv, budget=budget, objective="brier", time_limit=3)
    cold = po.fit_budget(rf, Xv, yv, budget=budget, objective="brier", time_limit=1e-6)
    warm = po.fit_budget(rf, Xv, yv, budget=budget, objective="brier", time_limit=1e-6,
                         warm_start=first)
    assert cold.solve_info["ensemble_loss"] > first.solve_info["ensemble_loss"]
    assert warm.solve_info["ensemble_loss"] <= first.solve_info["ensemble_loss"] + 1e-12
    assert fits_budget(warm.average_cost(Xv), budget)
