"""Exact trade-off curve: breakpoints against brute force and dense lam grids."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.budget import lam_upper_bound, problem_at_lam, tradeoff_curve
from tests.forest_cases import forest_cases

SOLVER = "highs"


def tree_prunings(f, h):
    """Every closed set of splits in the subtree of global node h (brute force)."""
    if f.is_leaf[h]:
        return [frozenset()]
    out = [frozenset()]
    for a, b in itertools.product(tree_prunings(f, f.left[h]), tree_prunings(f, f.right[h])):
        out.append(frozenset({h}) | a | b)
    return out


def all_prunings(f, limit=4000):
    per_tree = [tree_prunings(f, f.node_offset[t]) for t in range(f.n_trees)]
    if math.prod(len(p) for p in per_tree) > limit:
        return None
    masks = []
    for combo in itertools.product(*per_tree):
        m = np.zeros(f.n_nodes, dtype=bool)
        m[list(set().union(*combo))] = True
        masks.append(m)
    return masks


def lower_hull(points):
    """Vertices of the lower-left convex hull of (cost, error) points, costliest first,
    restricted to the part that some lam >= 0 makes optimal."""
    pts = sorted(set(points))  # by cost, then error
    # for each cost keep the lowest error
    best = {}
    for c, e in pts:
        best.setdefault(c, e)
    pts = sorted(best.items())
    hull = []
    for p in pts:
        while len(hull) >= 2:
            (c1, e1), (c2, e2) = hull[-2], hull[-1]
            if (c2 - c1) * (p[1] - e1) - (e2 - e1) * (p[0] - c1) <= 1e-12:
                hull.pop()
            else:
                break
        hull.append(p)
    # keep the decreasing-error part (slopes <= 0): optimal for some lam >= 0
    emin = min(e for _, e in hull)
    out = []
    for c, e in hull:
        out.append((c, e))
        if e <= emin + 1e-15:
            break
    return out[::-1]


def _small_case(seed, trees=2, depth=2, n=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 4)).round(1)
    y = (X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2] + rng.normal(scale=0.6, size=2 * n) > 0)
    rf = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed,
                                max_features=None).fit(X[:n], y[:n])
    costs = po.FeatureCosts([1.0, 3.0, 0.5, 7.0], groups={"g": (2.0, [0, 2])})
    return rf, X[n:], y[n:], costs


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_curve_vertices_equal_brute_force_hull(seed):
    rf, X, y, costs = _small_case(seed)
    problem = po.compile_problem(rf, X, y, costs=costs)
    masks = all_prunings(problem.forest)
    assert masks is not None
    pts = []
    for m in masks:
        bd = problem.evaluate(m)
        pts.append((round(bd.average_cost, 10), round(bd.error_term, 10)))
    hull = lower_hull(pts)
    curve = tradeoff_curve(rf, X, y, costs=costs, solver=SOLVER)
    got = list(zip(np.round(curve["average_cost"], 10), np.round(curve["error_term"], 10)))
    assert got == hull


@settings(max_examples=8, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(case=forest_cases(max_examples=50))
def test_every_grid_optimum_is_a_curve_point(case):
    problem = po.compile_problem(case["est"], case["X_val"], case["y_val"], costs=case["costs"],
                                 train=(case["X_train"], case["y_train"]))
    curve = tradeoff_curve(problem, solver=SOLVER)
    costs = np.asarray(curve["cost_term"])
    errs = np.asarray(curve["error_term"])
    lo, hi = np.asarray(curve["lam_lo"]), np.asarray(curve["lam_hi"])
    # shape of an exact envelope: cost strictly falls, error strictly rises, intervals tile
    assert np.all(np.diff(costs) < 0) and np.all(np.diff(errs) > 0)
    assert lo[0] == 0.0 and math.isinf(hi[-1])
    np.testing.assert_allclose(hi[:-1], lo[1:])
    assert np.all(hi >= lo)
    ub = lam_upper_bound(problem)
    finite_hi = hi[np.isfinite(hi)]
    top = ub if ub is not None else 10 * max(finite_hi.max(initial=0.0), 1.0)
    mids = 0.5 * (lo[1:-1] + hi[1:-1])
    grid = np.concatenate([np.geomspace(1e-6, 1.5 * max(top, 1e-5), 80), mids])
    for lam in grid:
        r = po.solve(problem_at_lam(problem, lam), solver=SOLVER)
        c = r.breakdown.average_cost + problem.depth_cost * r.breakdown.average_depth
        k = int(np.argmin(np.abs(costs - c)))
        assert abs(costs[k] - c) <= 1e-9 * max(1.0, c), (lam, c, costs)
        # the matching point is optimal at this lam
        assert errs[k] + lam * costs[k] == pytest.approx(r.objective, rel=1e-9, abs=1e-12)


def test_interval_midpoints_reproduce_points():
    rf, X, y, costs = _small_case(7, trees=3, depth=3)
    problem = po.compile_problem(rf, X, y, costs=costs)
    curve, points = tradeoff_curve(problem, solver=SOLVER,
                                   return_points=True)
    for q in points[1:-1]:
        mid = 0.5 * (q.lam_lo + q.lam_hi)
        r = po.solve(problem_at_lam(problem, mid), solver=SOLVER)
        assert r.breakdown.average_cost == pytest.approx(q.average_cost, rel=1e-12, abs=1e-12)
        assert r.breakdown.error_term == pytest.approx(q.error_term, rel=1e-12, abs=1e-12)
    # the cheapest point is the root-only forest
    assert points[-1].n_splits == 0 and points[-1].average_cost == 0.0


def test_upper_bound_prunes_to_roots_and_zero_cost_roots():
    rf, X, y, costs = _small_case(3)
    problem = po.compile_problem(rf, X, y, costs=costs)
    ub = lam_upper_bound(problem)
    assert ub > 0
    assert po.solve(problem_at_lam(problem, ub), solver=SOLVER).n_splits == 0
    free = po.compile_problem(rf, X, y, costs=[0.0, 0.0, 0.0, 0.0])
    assert lam_upper_bound(free) is None
    curve = tradeoff_curve(free, solver=SOLVER)
    assert len(curve) == 1 and curve["average_cost"].iloc[0] == 0.0


def test_problem_at_lam_shares_data_and_validates():
    rf, X, y, costs = _small_case(0)
    p = po.compile_problem(rf, X, y, costs=costs, lam=0.3)
    q = problem_at_lam(p, 0.01)
    assert q.lam == 0.01 and p.lam == 0.3 and q.use_node is p.use_node
    m = po.solve(q, solver=SOLVER).split_mask
    assert q.evaluate(m).objective == pytest.approx(
        po.compile_problem(rf, X, y, costs=costs, lam=0.01).evaluate(m).objective, rel=1e-12)
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="lam"):
            problem_at_lam(p, bad)


def test_lam_grid_mode_eval_columns_and_resolution():
    rf, X, y, costs = _small_case(5, trees=3, depth=3)
    grid = tradeoff_curve(rf, X, y, costs=costs, lams=[0.0, 0.01, 1.0], solver=SOLVER,
                          X_eval=X, y_eval=y)
    assert list(grid["lam"]) == [0.0, 0.01, 1.0]
    assert {"accuracy_eval", "cost_eval"} <= set(grid.columns)
    np.testing.assert_allclose(grid["cost_eval"], grid["average_cost"], rtol=1e-12)
    full = tradeoff_curve(rf, X, y, costs=costs, solver=SOLVER)
    coarse = tradeoff_curve(rf, X, y, costs=costs, solver=SOLVER, cost_resolution=5.0)
    assert len(coarse) <= len(full)
    # every coarse point is an exact hull vertex
    assert set(np.round(coarse["average_cost"], 9)) <= set(np.round(full["average_cost"], 9))
    with pytest.raises(ValueError, match="X_eval"):
        tradeoff_curve(rf, X, y, costs=costs, X_eval=X)
    with pytest.raises(ValueError, match="cost_resolution"):
        tradeoff_curve(rf, X, y, costs=costs, cost_resolution=-1)


def test_one_return_type_dataframe():
    import pandas as pd

    rf, X, y, costs = _small_case(1)
    curve = tradeoff_curve(rf, X, y, costs=costs, solver=SOLVER)
    grid = tradeoff_curve(rf, X, y, costs=costs, solver=SOLVER, lams=[0.0, 1.0])
    assert isinstance(curve, pd.DataFrame) and isinstance(grid, pd.DataFrame)
    assert curve["lam_lo"].iloc[0] == 0.0 and list(grid["lam"]) == [0.0, 1.0]


def test_problem_first_signature():
    rf, X, y, costs = _small_case(2)
    problem = po.compile_problem(rf, X, y, costs=costs)
    new = tradeoff_curve(problem, solver=SOLVER)
    assert new.equals(tradeoff_curve(rf, X, y, costs=costs, solver=SOLVER))
    with pytest.raises(TypeError, match="problem"):
        tradeoff_curve(None, None, None, problem=problem, solver=SOLVER)


@pytest.mark.parametrize("extra", [dict(X="X"), dict(y="y"), dict(costs="costs"),
                                   dict(train="train"), dict(depth_cost=0.5)])
def test_problem_with_data_arguments_is_refused(extra):
    rf, X, y, costs = _small_case(2)
    problem = po.compile_problem(rf, X, y, costs=costs)
    values = {"X": X, "y": y, "costs": costs, "train": (X, y)}
    kwargs = {k: values.get(v, v) for k, v in extra.items()}
    with pytest.raises(ValueError, match="PruningProblem alone"):
        tradeoff_curve(problem, **kwargs)


def test_forest_without_data_is_refused():
    rf, X, y, _ = _small_case(2)
    with pytest.raises(ValueError, match="with X and y"):
        tradeoff_curve(rf)
    with pytest.raises(ValueError, match="with X and y"):
        tradeoff_curve(rf, X)
@pytest.mark.parametrize("seed", [0, 4])
def test_default_solver_gives_the_same_hull(seed):
    rf, X, y, costs = _small_case(seed, trees=4, depth=4)
    a = tradeoff_curve(rf, X, y, costs=costs, solver="auto")
    b = tradeoff_curve(rf, X, y, costs=costs, solver=SOLVER)
    np.testing.assert_allclose(a["average_cost"], b["average_cost"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a["error_term"], b["error_term"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a["lam_lo"], b["lam_lo"], rtol=1e-9, atol=1e-15)
