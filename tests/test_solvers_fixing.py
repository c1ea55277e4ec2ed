"""Splits and paid pairs that every optimum shares (mincut's ``fix_splits``): the
reduced graph keeps the optimum of the unreduced one on random forests, random
boosted models and real LightGBM models, with the records kept as leaves or held,
and what it fixes is in every optimum the unreduced graph finds."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer

import prune_opt as po
from prune_opt.program._problem import close_under_parents
from prune_opt.solvers._fixing import cost_at_nodes, fixed_splits, record_weight_at_nodes
from prune_opt.solvers.mincut import build_closure_graph, unprofitable_nodes
from tests.boosted_cases import boosted_cases
from tests.forest_cases import forest_cases

LAMS = [0.0, 1e-6, 1e-4, 1e-3, 1e-2, 0.05, 1.0]
ALL_OFF = {"fold_single": False, "merge_pairs": False, "prefix_hubs": False,
           "drop_unprofitable": False, "fix_splits": False}


def held(problem):
    """The same problem with its records materialised and no leaf source (as a problem
    compiled on a cluster, or over many units, holds them)."""
    problem.use_node  # noqa: B018 - materialise the shared records
    return problem._replace(leaf_records=None)


def check_exact(problem):
    """The fixed graph's optimum against the unreduced graph's (1e-9 relative), the
    mask's objective by ``evaluate``, and the fixed nodes and forced pairs in the
    unreduced optimum; returns the reduced solve."""
    ref = po.solve(problem, solver="mincut", solver_options=ALL_OFF)
    got = po.solve(problem, solver="mincut")
    tol = 1e-9 * max(1.0, abs(ref.objective))
    assert abs(got.objective - ref.objective) <= tol
    mask = problem.forest.check_split_mask(got.split_mask)
    assert np.array_equal(mask, close_under_parents(problem.forest, mask))
    assert got.objective == problem.evaluate(mask).objective
    assert got.solve_info["bound"] <= ref.objective + tol
    off = unprofitable_nodes(problem.forest, problem.closure_weights()["split_weight"])
    fixed, forced, _ = fixed_splits(problem, off)
    assert ref.split_mask[fixed].all()  # in every optimum, so in this one
    assert problem.pairs_used(ref.split_mask)[forced].all()
    assert not (fixed & off).any()
    return got


@given(case=forest_cases(), lam=st.sampled_from(LAMS))
@settings(max_examples=30, deadline=None)
def test_fixing_keeps_the_optimum_of_random_forests(case, lam):
    problem = po.compile_problem(case["est"], case["X_val"], case["y_val"],
                                 costs=case["costs"], lam=lam, depth_cost=case["depth_cost"],
                                 train=(case["X_train"], case["y_train"]))
    got = check_exact(problem)
    again = po.solve(held(problem), solver="mincut")  # the records read one by one
    assert abs(again.objective - got.objective) <= 1e-12 * max(1.0, abs(got.objective))


@given(case=boosted_cases(), lam=st.sampled_from(LAMS))
@settings(max_examples=25, deadline=None)
def test_fixing_keeps_the_optimum_of_random_boosted_models(case, lam):
    model, _, _, Xv, yv, costs, _ = case
    check_exact(po.compile_problem(model, Xv, yv, costs=costs, lam=lam))


@pytest.fixture(scope="module")
def lightgbm_case():
    lgb = pytest.importorskip("lightgbm")
    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = rng.permutation(y.size)
    tr, va = idx[:300], idx[300:]
    model = lgb.LGBMClassifier(n_estimators=60, num_leaves=15, min_child_samples=5,
                               random_state=0, verbose=-1, n_jobs=1).fit(X[tr], y[tr])
    costs = rng.choice([1.0, 2.0, 5.0, 10.0], size=X.shape[1])
    return model, X[va], y[va], costs


@pytest.mark.parametrize("lam", [1e-5, 1e-4, 1e-3, 1e-2, 0.1])
def test_fixing_keeps_the_optimum_of_a_lightgbm_model(lightgbm_case, lam):
    model, Xv, yv, costs = lightgbm_case
    problem = po.compile_problem(model, Xv, yv, costs=costs, lam=lam)
    got = check_exact(problem)
    again = po.solve(held(problem), solver="mincut")
    assert abs(again.objective - got.objective) <= 1e-12 * max(1.0, abs(got.objective))
    assert again.solve_info["graph"]["n_fixed_splits"] == got.solve_info["graph"][
        "n_fixed_splits"]


def test_fixing_empties_the_graph_of_a_booster_at_a_small_lam(lightgbm_case):
    model, Xv, yv, costs = lightgbm_case
    problem = po.compile_problem(model, Xv, yv, costs=costs, lam=1e-5)
    full = build_closure_graph(problem, prefix_hubs=True, drop_unprofitable=True)
    fixed = build_closure_graph(problem, prefix_hubs=True, drop_unprofitable=True,
                                fix_splits=True)
    assert fixed.stats["n_fixed_splits"] > 0 and fixed.stats["n_pairs_forced"] > 0
    assert fixed.n_arcs < full.n_arcs / 10
    # the fixed nodes are in every mask read off a cut, even the empty one
    mask = fixed.mask_from_source_side([0], problem.n_nodes)
    assert mask[fixed.fixed_nodes].all() and mask.sum() == fixed.fixed_nodes.size


def test_node_weights_of_the_records_agree(lightgbm_case):
    model, Xv, yv, costs = lightgbm_case
    problem = po.compile_problem(model, Xv, yv, costs=costs, lam=0.01)
    a = problem.lam * problem.pair_cost()
    by_table = cost_at_nodes(problem)
    by_leaves = record_weight_at_nodes(problem, a)
    by_records = record_weight_at_nodes(held(problem), a)
    np.testing.assert_allclose(by_table, by_leaves, rtol=1e-12, atol=1e-18)
    np.testing.assert_allclose(by_records, by_leaves, rtol=1e-12, atol=1e-18)
    some = np.arange(0, problem.n_pairs, 7)
    ref = np.bincount(problem.use_node[np.isin(problem.use_pair, some)],
                      weights=a[problem.use_pair[np.isin(problem.use_pair, some)]],
                      minlength=problem.n_nodes)
    np.testing.assert_allclose(record_weight_at_nodes(problem, a, some), ref, rtol=1e-12,
                               atol=1e-18)


@given(case=boosted_cases(tasks=("binary", "regression")), lam=st.sampled_from(LAMS),
       mu=st.sampled_from([0.0, 1e-4, 1e-2, 1.0]), forbid=st.booleans())
@settings(max_examples=25, deadline=None)
def test_multiplier_closure_reductions_keep_every_multipliers_optimum(case, lam, mu, forbid):
    """The budget search's graph, reduced once (unprofitable nodes, prefix hubs), solves
    ``J + mu C`` exactly at every ``mu``, with forbidden nodes or not: against the
    same closure built without the reductions, and without forbidden nodes against
    ``mincut`` at ``lam + mu``."""
    from prune_opt.budget import _search as _closure
    from prune_opt.budget._search import MultiplierClosure
    from prune_opt.solvers import mincut

    model, _, _, Xv, yv, costs, _ = case
    problem = po.compile_problem(model, Xv, yv, costs=costs, lam=lam)
    at = problem.with_lam(lam + mu)
    forbidden = None
    if forbid:
        forbidden = np.zeros(problem.n_nodes, dtype=bool)
        forbidden[np.flatnonzero(~problem.forest.is_leaf)[::3]] = True
    old_hubs, old_drop = mincut.HUB_MIN_RECORDS, _closure.unprofitable_nodes
    try:
        mincut.HUB_MIN_RECORDS = 0  # hubs on however small the problem
        mask, bound = MultiplierClosure(problem).solve(mu, forbidden)
        mincut.HUB_MIN_RECORDS = 1 << 62
        _closure.unprofitable_nodes = lambda f, w: np.zeros(f.n_nodes, dtype=bool)
        ref_mask, ref_bound = MultiplierClosure(problem).solve(mu, forbidden)
    finally:
        mincut.HUB_MIN_RECORDS, _closure.unprofitable_nodes = old_hubs, old_drop
    ref = at.evaluate(ref_mask).objective
    tol = 1e-9 * max(1.0, abs(ref))
    assert abs(at.evaluate(mask).objective - ref) <= tol
    assert abs(bound - ref_bound) <= tol
    if forbid:
        assert not mask[forbidden].any() and not ref_mask[forbidden].any()
    else:
        exact = po.solve(at, solver="mincut", solver_options=ALL_OFF).objective
        assert abs(ref - exact) <= tol
