"""Hard-budget search (backend "budget"): fits the budget, beats every baseline,
brackets the brute-force optimum between its bound and its objective."""

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prune_opt as po
from prune_opt.budget import (
    ccp_prunings,
    fewer_trees_prunings,
    fits_budget,
    greedy_prunings,
    impurity_threshold_prunings,
)
from prune_opt.budget._baselines import greedy_path
from prune_opt.budget._mip import BudgetProgram, budget_scale, objective_scale
from prune_opt.budget._search import budget_search
from prune_opt.objectives._descent import ProblemState
from prune_opt.program._problem import close_under_parents
from prune_opt.solvers._tree_dp import best_tree_within
from tests.forest_cases import brute_force_cost, forest_cases, sklearn_tree_arrays
from tests.test_budget_curve import all_prunings


def _problem(case, lam=0.0):
    return po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                              lam=lam, train=(case["X_train"], case["y_train"]))


def _local_masks(f, mask):
    return [mask[f.tree_slice(t)] for t in range(f.n_trees)]


def _baseline_best(problem, est, budget):
    """Best objective of every baseline among its prunings that fit (by evaluate)."""
    f = problem.forest
    fams = {
        "greedy": [pf.split_mask for _, pf in greedy_prunings(None, None, None,
                                                              problem=problem)],
        "ccp": [pf.split_mask for _, pf in ccp_prunings(f, problem=problem)],
        "impurity": [pf.split_mask for _, pf in impurity_threshold_prunings(f)],
    }
    fewer = []
    for m, _ in fewer_trees_prunings(f):
        mk = f.full_split_mask()
        mk[f.node_offset[m]:] = False
        fewer.append(mk)
    fams["fewer-trees"] = fewer
    out = {}
    for name, masks in fams.items():
        vals = [problem.evaluate(m) for m in masks]
        fit = [v.objective for v in vals if fits_budget(v.average_cost, budget)]
        out[name] = min(fit) if fit else np.inf
    return out


@settings(max_examples=20)
@given(case=forest_cases(max_examples=30), frac=st.sampled_from([0.05, 0.2, 0.45, 0.8]),
       lam=st.sampled_from([0.0, 0.0, 0.01]))
def test_search_fits_beats_baselines_and_brackets_optimum(case, frac, lam):
    problem = _problem(case, lam)
    f = problem.forest
    full = problem.evaluate(f.full_split_mask()).average_cost
    budget = frac * full
    r = budget_search(problem, budget, time_limit=20)
    # fits: counted by walking every tree example by example
    per_example = brute_force_cost(sklearn_tree_arrays(case["est"]),
                                   _local_masks(f, r.split_mask), case["X_val"], case["costs"])
    assert per_example.mean() <= budget + 1e-9 * max(1.0, budget)
    assert r.objective == pytest.approx(problem.evaluate(r.split_mask).objective, abs=1e-12)
    for name, value in _baseline_best(problem, case["est"], budget).items():
        assert r.objective <= value + 1e-12, name
    masks = all_prunings(f, limit=3000)
    if masks is not None:
        vals = [problem.evaluate(m) for m in masks]
        opt = min(v.objective for v in vals if fits_budget(v.average_cost, budget))
        assert r.bound <= opt + 1e-9 * max(1.0, abs(opt))
        assert opt <= r.objective + 1e-12
        if r.status == "optimal":
            assert r.objective == pytest.approx(opt, rel=1e-9, abs=1e-12)
        # never root-only when a fitting pruning with splits scores better
        root = problem.evaluate(np.zeros(f.n_nodes, dtype=bool)).objective
        if any(v.n_splits > 0 and v.objective < root - 1e-12 and fits_budget(v.average_cost, budget)
               for v in vals):
            assert r.split_mask.any()


def _digits_like(seed=0, trees=6):
    """Many cheap features each used by few trees: a hull with holes."""
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    idx = rng.permutation(X.shape[0])[:400]
    X, y = X[idx], y[idx]
    rf = RandomForestClassifier(n_estimators=trees, max_depth=6, random_state=seed).fit(
        X[:200], y[:200])
    return rf, X[:200], y[:200], X[200:], y[200:]


def test_hole_in_hull_gets_a_pruning_with_splits():
    rf, Xt, yt, Xv, yv = _digits_like()
    problem = po.compile_problem(rf, Xv, yv, train=(Xt, yt))
    full = problem.evaluate(problem.forest.full_split_mask()).average_cost
    budget = 0.15 * full
    with pytest.warns(UserWarning, match="root-only"):
        hull = po.budget.fit_budget(problem, budget=budget, method="hull")
    assert hull.n_splits == 0  # no lam reaches a pruning with splits under this budget
    r = budget_search(problem, budget, time_limit=4, mip=False)
    root = problem.evaluate(np.zeros(problem.n_nodes, dtype=bool))
    assert r.split_mask.any() and r.objective < root.objective
    assert fits_budget(r.average_cost, budget)
    assert r.bound <= r.objective
    assert 0.0 <= r.gap and r.status in ("optimal", "time_limit")
    assert set(r.info["phase_seconds"]) >= {"lagrangian", "baselines", "local-search"}


def test_time_limit_returns_a_valid_pruning_quickly():
    rf, Xt, yt, Xv, yv = _digits_like(trees=10)
    problem = po.compile_problem(rf, Xv, yv, train=(Xt, yt))
    budget = 0.3 * problem.evaluate(problem.forest.full_split_mask()).average_cost
    t0 = time.perf_counter()
    r = budget_search(problem, budget, time_limit=0.0)
    assert time.perf_counter() - t0 < 2.0
    problem.forest.check_split_mask(r.split_mask)
    assert fits_budget(r.average_cost, budget) and r.status == "time_limit"
    assert r.bound <= r.objective


def test_backend_registered_and_needs_a_budget():
    rf, Xt, yt, Xv, yv = _digits_like(trees=3)
    problem = po.compile_problem(rf, Xv, yv, train=(Xt, yt))
    assert "budget" in po.available_solvers()
    plain = po.solve(problem.with_lam(0.01), solver="budget")  # no budget row: min-cut
    assert plain.solve_info["status"] == "optimal"
    assert plain.objective == pytest.approx(
        po.solve(problem.with_lam(0.01), solver="mincut").objective, rel=1e-12)
    budget = 0.3 * problem.evaluate(problem.forest.full_split_mask()).average_cost
    pf = po.solve(problem.with_budget(budget), solver="budget", time_limit=5,
                  solver_options={"mip": False})
    assert fits_budget(pf.breakdown.average_cost, budget)
    info = pf.solve_info
    assert info["solver"] == "budget" and info["bound"] <= pf.objective + 1e-15
    assert info["found_by"] and "phase_seconds" in info
    with pytest.raises(ValueError, match="mip_workers"):
        po.solve(problem.with_budget(budget), solver="budget",
                 solver_options={"mip_workers": 0})


@settings(max_examples=15)
@given(case=forest_cases(max_examples=30))
def test_fast_greedy_is_greedy_by_brute_force(case):
    """Every GreedyPrune step removes one feature (its nodes and their subtrees) with
    the least error increase per cost saved, scored by ``evaluate`` (to round-off)."""
    problem = _problem(case)
    fast, removed = greedy_path(problem)
    seq = greedy_prunings(None, None, None, problem=problem)
    assert len(seq) == len(fast) and all((a == pf.split_mask).all()
                                         for a, (_, pf) in zip(fast, seq))
    assert seq[-1][1].solve_info["removed"] == removed
    _check_greedy(problem)


def test_fast_greedy_with_more_than_64_features(monkeypatch):
    """The per-node feature bitsets span several 64-bit words."""
    from sklearn.ensemble import ExtraTreesClassifier

    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 80))
    y = (X[:, 5] + X[:, 70] + rng.normal(size=100) > 0).astype(int)
    rf = ExtraTreesClassifier(10, max_depth=5, max_features=1, random_state=0).fit(X, y)
    problem = po.compile_problem(rf, X, y, costs=rng.uniform(1, 3, 80))
    assert np.unique(problem.forest.feature[~problem.forest.is_leaf]).size > 64
    _check_greedy(problem)
    import prune_opt.budget._baselines as bm

    whole = greedy_path(problem)
    monkeypatch.setattr(bm, "GREEDY_CHUNK_CELLS", 5)  # many small blocks
    monkeypatch.setattr(bm, "_CACHE", {})  # computed again, not read from the cache
    blocks = greedy_path(problem)
    assert blocks is not whole
    assert whole[1] == blocks[1] and all((a == b).all() for a, b in zip(whole[0], blocks[0]))


def _check_greedy(problem):
    f = problem.forest
    fast, removed = greedy_path(problem)
    assert not fast[-1].any() and len(removed) == len(fast) - 1
    for mask, nxt, k in zip(fast, fast[1:], removed):
        now = problem.evaluate(mask)
        scores = {}
        for j in np.unique(f.feature[mask]):
            cand = close_under_parents(f, mask & (f.feature != j))
            ev = problem.evaluate(cand)
            d_err, saved = ev.error_term - now.error_term, now.average_cost - ev.average_cost
            if abs(d_err) <= 1e-9 * max(abs(now.error_term), 1e-12):
                d_err = 0.0
            scores[j] = (0, d_err / saved) if saved > 1e-12 else (1, d_err)
            if j == k:
                np.testing.assert_array_equal(nxt, cand)
        best = min(scores.values())
        assert scores[k][0] == best[0]
        assert scores[k][1] <= best[1] + 1e-9 * max(abs(best[1]), 1e-12)


@settings(max_examples=15)
@given(case=forest_cases(max_examples=30), data=st.data())
def test_state_tracks_evaluate_and_tree_moves_are_exact(case, data):
    problem = _problem(case, lam=case["lam"])
    f = problem.forest
    masks = all_prunings(f, limit=400)
    if masks is None:
        return
    state = ProblemState(problem, masks[data.draw(st.integers(0, len(masks) - 1))])
    t = data.draw(st.integers(0, f.n_trees - 1))
    sl = f.tree_slice(t)
    other = masks[data.draw(st.integers(0, len(masks) - 1))]
    state.set_tree(t, other[sl])
    assert state.value() == pytest.approx(problem.evaluate(state.mask).objective,
                                              rel=1e-12, abs=1e-12)
    # the one-tree dynamic programme is optimal among all masks of tree t
    price = data.draw(st.sampled_from([0.0, 0.01, 1.0]))
    node_cost = state.alone(t)
    split = state.split_local[sl] + price * node_cost
    value, tree_mask, added = best_tree_within(state.layouts[t], state.leaf_error[sl], split,
                                               node_cost, np.inf)
    scores = []
    for m in masks:
        cand = state.mask.copy()
        cand[sl] = m[sl]
        scores.append((state.local_value(t, cand) + price * node_cost[m[sl]].sum(),
                       node_cost[m[sl]].sum()))
    assert value == pytest.approx(min(v for v, _ in scores), rel=1e-12, abs=1e-12)
    # with a room: the move fits it and never claims better than the constrained optimum
    room = data.draw(st.sampled_from([0.0, 0.5 * added, added]))
    found = best_tree_within(state.layouts[t], state.leaf_error[sl], split, node_cost, room)
    assert found is not None  # cutting the tree to its root always fits a room >= 0
    v, m, used = found
    assert used <= room + 1e-12 and used == pytest.approx(node_cost[m].sum())
    best_fit = min(val for val, c in scores if c <= room + 1e-12)
    assert v >= best_fit - 1e-12
    if room >= added:
        assert v == pytest.approx(value, rel=1e-12, abs=1e-12)


def test_integer_scaling_is_exact_for_counts_and_decimal_costs():
    rf, Xt, yt, Xv, yv = _digits_like(trees=3)
    costs = po.FeatureCosts(np.round(np.linspace(0.5, 22.78, 64), 2))
    problem = po.compile_problem(rf, Xv, yv, costs=costs, train=(Xt, yt))
    prog = BudgetProgram(problem, 10.0)
    assert prog.slack == 0.0 and prog.row_exact
    K, slack = objective_scale(problem, prog.coef)
    assert slack == 0.0 and np.allclose(prog.coef * K, np.rint(prog.coef * K), atol=1e-9)
    coef, rhs, exact = budget_scale(np.array([0.1, 1.0 / 3.0]), 1.0)
    assert not exact and (coef >= np.array([0.1, 1.0 / 3.0]) * 1.0).all()


def test_mip_phase_proves_small_optimum():
    rf, Xt, yt, Xv, yv = _digits_like(trees=2)
    problem = po.compile_problem(rf, Xv[:60], yv[:60], train=(Xt, yt))
    budget = 0.2 * problem.evaluate(problem.forest.full_split_mask()).average_cost
    r = budget_search(problem, budget, time_limit=20)
    assert r.status == "optimal" and r.gap <= 1e-9
    assert "mip" in r.info or r.info["lagrangian"]["bound"] >= r.objective - 1e-12


def test_backend_honours_lam_and_depth_cost_of_the_problem():
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.3 * X[:, 2] > 0).astype(int)
    rf = RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(X[:30], y[:30])
    problem = po.compile_problem(rf, X[30:], y[30:], costs=[1.0, 2.5, 0.7], lam=0.05,
                                 depth_cost=0.3)
    vals = [problem.evaluate(m) for m in all_prunings(problem.forest)]
    for budget in (0.0, 0.8, 1.0, 2.6):
        pf = po.solve(problem.with_budget(budget), solver="budget", time_limit=10)
        opt = min(v.objective for v in vals if fits_budget(v.average_cost, budget))
        assert fits_budget(pf.breakdown.average_cost, budget)
        assert pf.objective == pytest.approx(opt, rel=1e-9, abs=1e-12)
        assert pf.solve_info["status"] == "optimal"


def test_budget_backend_without_a_budget_row_is_the_plain_exact_solve():
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_digits(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0).fit(X[:600], y[:600])
    problem = po.compile_problem(rf, X[600:900], y[600:900], lam=0.01)
    a = po.solve(problem, solver="budget", time_limit=5)  # a budget of inf once crashed here
    b = po.solve(problem, solver="mincut")
    assert a.objective == pytest.approx(b.objective, rel=1e-12)
    assert a.solve_info["status"] == "optimal"
