"""Regression: networkx's cut partition with float capacities picked the wrong source
side on a 40-tree digits forest (right cut value, objective 3.8x too high)."""

import pytest
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import prune_opt as po


@pytest.mark.slow
def test_networkx_cut_side_matches_mincut_on_digits():
    X, y = load_digits(return_X_y=True)
    Xtr, Xr, ytr, yr = train_test_split(X, y, train_size=0.5, random_state=0, stratify=y)
    Xv, _, yv, _ = train_test_split(Xr, yr, test_size=0.5, random_state=0)
    rf = RandomForestClassifier(n_estimators=40, random_state=0).fit(Xtr, ytr)
    problem = po.compile_problem(rf, Xv, yv, lam=0.002, train=(Xtr, ytr))
    exact = po.solve(problem, solver="mincut")
    ref = po.solve(problem, solver="mincut-networkx",
                   solver_options={"flow_func": "preflow_push"})
    assert abs(ref.objective - exact.objective) <= 1e-9 * exact.objective
    assert ref.solve_info["bound"] <= ref.objective
