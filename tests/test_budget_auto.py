"""fit_budget's default objective="auto": the objective is picked on held-out rows,
the budget is met, a larger budget never returns a worse loss, and an imbalanced
table does not get the constant predictor when a fitting pruning scores better."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

import prune_opt as po
from prune_opt.budget import fit_budget
from prune_opt.budget._fit_budget import AUTO_MIN_ROWS
from prune_opt.objectives._scorer import VoteScorer


def _case(seed=0, n=400, positives=0.5, trees=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 6)).round(2)
    score = X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2] + rng.normal(scale=0.7, size=2 * n)
    y = (score > np.quantile(score, 1 - positives)).astype(int)
    rf = RandomForestClassifier(n_estimators=trees, max_depth=6, random_state=seed).fit(
        X[:n], y[:n])
    costs = po.FeatureCosts([1.0, 2.0, 4.0, 0.5, 3.0, 1.5])
    return rf, X[n:], y[n:], costs


def _brier(pf, X, y):
    return VoteScorer(pf.forest, X, y, pf.costs, "brier").score(pf.split_mask)[0]


@pytest.mark.parametrize("seed", [0, 1])
def test_auto_picks_on_held_out_rows_and_meets_the_budget(seed):
    rf, X, y, costs = _case(seed)
    full = po.acquisition_cost(rf, X, costs).mean()
    pf = fit_budget(rf, X, y, costs=costs, budget=0.3 * full)
    info = pf.solve_info["auto"]
    assert pf.average_cost(X) <= 0.3 * full * (1 + 1e-10)
    assert info["chosen"] in ("paper", "brier") and set(info["holdout_loss"]) == {
        "paper", "brier"}
    assert info["holdout_loss"][info["chosen"]] == min(info["holdout_loss"].values())
    assert info["n_holdout_rows"] == pytest.approx(len(y) / 2, abs=2)
    assert pf.solve_info["auto_loss"] == pytest.approx(_brier(pf, X, y), rel=1e-12)


def _error(pf, X, y):
    return 1.0 - pf.score(X, y)


def test_a_larger_budget_never_returns_a_worse_loss():
    """Monotone in what the final run ranks by: predict's error, then the Brier loss."""
    rf, X, y, costs = _case(2)
    full = po.acquisition_cost(rf, X, costs).mean()
    losses = []
    for share in (0.1, 0.15, 0.2, 0.3, 0.5):
        pf = fit_budget(rf, X, y, costs=costs, budget=share * full)
        assert pf.average_cost(X) <= share * full * (1 + 1e-10)
        key = (_error(pf, X, y), _brier(pf, X, y))
        assert pf.solve_info["auto_rank_loss"] == pytest.approx(key[0], abs=1e-12)
        assert pf.solve_info["auto_loss"] == pytest.approx(key[1], rel=1e-12)
        losses.append(key)
    assert all(b[0] < a[0] - 1e-12 or (abs(b[0] - a[0]) <= 1e-12 and b[1] <= a[1] + 1e-12)
               for a, b in zip(losses, losses[1:])), losses


def test_the_final_run_starts_from_the_half_runs_and_ranks_by_accuracy():
    """The prunings found on the fitting half join the run on all rows; of the fitting
    candidates, the one with the fewest errors of predict wins (then the Brier loss)."""
    from prune_opt.budget import _fit_budget as fb

    rf, X, y, costs = _case(7)
    full = po.acquisition_cost(rf, X, costs).mean()
    fb._INCUMBENTS.clear()
    pf = fit_budget(rf, X, y, costs=costs, budget=0.2 * full, time_limit=None)
    info = pf.solve_info
    if info["auto"]["chosen"] == "paper":
        pytest.skip("the paper objective won on the held-out rows")
    assert {"half-paper", "half-brier"} <= set(info["candidates_loss"])
    rank = info["candidates_rank"]
    assert info["ranked_by"] == "accuracy"
    assert rank[info["found_by"]] == min(rank.values())
    assert rank[info["found_by"]] == pytest.approx(_error(pf, X, y), abs=1e-12)


def test_a_tie_on_the_held_out_rows_goes_to_the_own_loss():
    """A budget below every split's cost leaves both half runs at the root: the tie
    goes to the forest's own loss (its run holds every baseline)."""
    rf, X, y, costs = _case(8)
    pf = fit_budget(rf, X, y, costs=costs, budget=0.0)
    info = pf.solve_info["auto"]
    assert info["holdout_loss"]["paper"] == info["holdout_loss"]["brier"]
    assert info["chosen"] == "brier"


def test_imbalanced_table_does_not_get_the_constant_predictor():
    rf, X, y, costs = _case(3, n=600, positives=0.03)
    full = po.acquisition_cost(rf, X, costs).mean()
    pf = fit_budget(rf, X, y, costs=costs, budget=0.25 * full)
    f = po.Forest.from_sklearn(rf)
    root = po.PrunedForest(f, np.zeros(f.n_nodes, dtype=bool), costs=costs)
    assert _brier(pf, X, y) <= _brier(root, X, y)
    if _brier(pf, X, y) < _brier(root, X, y) - 1e-12:
        assert pf.n_splits > 0


def test_auto_on_a_regression_forest_uses_the_squared_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = X[:, 0] - 2 * X[:, 1] + rng.normal(scale=0.3, size=400)
    est = RandomForestRegressor(n_estimators=5, max_depth=5, random_state=0).fit(X[:200],
                                                                                  y[:200])
    full = po.acquisition_cost(est, X[200:]).mean()
    pf = fit_budget(est, X[200:], y[200:], budget=0.4 * full)
    assert pf.solve_info["auto"]["chosen"] in ("paper", "squared_error")
    assert pf.average_cost(X[200:]) <= 0.4 * full * (1 + 1e-10)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_auto_falls_back_to_the_paper_objective_where_only_it_applies():
    rf, X, y, costs = _case(4, n=100)
    problem = po.compile_problem(rf, X, y, costs=costs)
    pf = fit_budget(problem, budget=2.0)  # a problem without its rows
    assert "gap" in pf.solve_info and "auto" not in pf.solve_info
    pf = fit_budget(rf, X, y, costs=costs, budget=2.0, method="hull")
    assert pf.solve_info["method"] == "hull"


def test_budget_curve_rows_meet_their_budgets_and_improve_with_them():
    from prune_opt.budget import budget_curve

    rf, X, y, costs = _case(5)
    full = po.acquisition_cost(rf, X, costs).mean()
    budgets = [0.5 * full, 0.1 * full, 0.25 * full]
    curve = budget_curve(rf, X, y, budgets=budgets, costs=costs, X_eval=X, y_eval=y)
    assert list(curve["budget"]) == sorted(budgets, reverse=True)
    assert (curve["average_cost"] <= curve["budget"] * (1 + 1e-10)).all()
    assert {"accuracy_eval", "cost_eval", "n_splits", "error_term"} <= set(curve.columns)
    np.testing.assert_allclose(curve["cost_eval"], curve["average_cost"], rtol=1e-9)
    with pytest.raises(ValueError, match="budgets"):
        budget_curve(rf, X, y, budgets=[-1.0], costs=costs)


def test_held_out_rows_scored_on_the_routed_subset_match_a_fresh_scorer():
    """auto routes X once and scores its held-out half (and sub-forest results) on a
    subset of those paths: the same loss and cost as scoring the result afresh."""
    from prune_opt.budget._fit_budget import _full_mask
    from prune_opt.routing._routed import RoutedData

    rf, X, y, costs = _case(4)
    f = po.Forest.from_sklearn(rf)
    full = po.acquisition_cost(rf, X, costs).mean()
    sel = np.arange(1, len(y), 3)
    routed = RoutedData(f, f.check_X(X)).subset(sel)
    kinds = set()
    for share in (0.05, 0.2, 0.6):  # 0.2 and 0.6 keep a sub-forest of trees
        pf = fit_budget(rf, X, y, costs=costs, budget=share * full, objective="brier")
        kinds.add("trees_kept" in pf.solve_info)
        fresh = VoteScorer(pf.forest, X[sel], y[sel], costs, "brier").score(pf.split_mask)
        again = VoteScorer(f, X[sel], y[sel], costs, "brier", routed=routed).score(
            *_full_mask(f, pf))
        assert again == pytest.approx(fresh, rel=1e-12)
    assert kinds == {True, False}


def test_auto_runs_on_a_problem_passed_with_its_rows():
    """A compiled problem passed first with the rows it was compiled on: auto picks on
    held-out rows, meets the budget and reports the result's own loss."""
    rf, X, y, costs = _case(6, n=200)
    full = po.acquisition_cost(rf, X, costs).mean()
    problem = po.compile_problem(rf, X, y, costs=costs)
    pf = fit_budget(problem, X, y, budget=0.3 * full, time_limit=None)
    info = pf.solve_info["auto"]
    assert pf.average_cost(X) <= 0.3 * full * (1 + 1e-10)
    assert set(info["holdout_loss"]) == {"paper", "brier"}
    assert pf.solve_info["auto_loss"] == pytest.approx(_brier(pf, X, y), rel=1e-12)


def _forget_incumbents():
    """Empty auto's memory of earlier prunings, so that each call below is independent."""
    from prune_opt.budget import _fit_budget

    _fit_budget._INCUMBENTS.clear()


def _sparse_case(task):
    rf, X, y, costs = _case(7, n=150, trees=5)
    X = np.where(np.abs(X) < 0.6, 0.0, X)  # mostly zeros, as a sparse table is
    if task == "regression":
        y = X[:, 0] - 2 * X[:, 1]
        rf = RandomForestRegressor(n_estimators=5, max_depth=5, random_state=0).fit(X, y)
    else:
        rf = RandomForestClassifier(n_estimators=5, max_depth=5, random_state=0).fit(X, y)
    return rf, X, y, costs


@pytest.mark.parametrize("case", ["classifier", "regressor", "train", "curve", "frame"])
def test_sparse_or_frame_X_is_pruned_as_its_dense_copy(case):
    """Every path of the default objective="auto" reads a scipy sparse X (or a
    DataFrame) as its dense copy: the same pruning, not an IndexError."""
    import pandas as pd
    import scipy.sparse as sp

    from prune_opt.budget import budget_curve

    rf, X, y, costs = _sparse_case("regression" if case == "regressor" else "classification")
    budget = 0.3 * po.acquisition_cost(rf, X, costs).mean()

    def run(Z):
        _forget_incumbents()
        if case == "curve":
            return budget_curve(rf, Z, y, budgets=[budget, 2 * budget], costs=costs,
                                time_limit=None).drop(columns="seconds")
        train = (Z, y) if case == "train" else None
        return fit_budget(rf, Z, y, costs=costs, budget=budget, train=train, time_limit=None)

    other = pd.DataFrame(X) if case == "frame" else sp.csr_matrix(X)
    dense, odd = run(X), run(other)
    if case == "curve":
        pd.testing.assert_frame_equal(dense, odd)
    else:
        assert np.array_equal(dense.split_mask, odd.split_mask)
        assert odd.solve_info["auto"]["chosen"] == dense.solve_info["auto"]["chosen"]


@pytest.mark.parametrize("n_rows, rare", [(30, False), (200, True)])
def test_without_an_honest_hold_out_auto_uses_the_forests_own_loss(n_rows, rare):
    """As the docstring says: fewer than 40 rows, or a class with fewer than 2 rows,
    leave no held-out half, and the forest's own loss (whose run also holds the paper
    objective's candidate) is run on all rows."""
    rf, X, y, costs = _case(8, n=max(n_rows, 200))
    X, y = X[:n_rows], y[:n_rows].copy()
    if rare:
        y[0] = 2  # a class with one row
        rf = RandomForestClassifier(n_estimators=5, max_depth=5, random_state=0).fit(X, y)
    budget = 0.3 * po.acquisition_cost(rf, X, costs).mean()
    pf = fit_budget(rf, X, y, costs=costs, budget=budget)
    info = pf.solve_info["auto"]
    assert info["chosen"] == "brier" and info["holdout_loss"] == {}
    assert pf.average_cost(X) <= budget * (1 + 1e-10)
    doc = " ".join(fit_budget.__doc__.split())
    said = next(s for s in doc.split(". ") if f"fewer than {AUTO_MIN_ROWS} rows" in s)
    assert "own loss is run on all rows" in said
