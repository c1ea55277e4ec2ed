"""What one fit_budget(objective=...) call walks through (benchmarks/call_graph.py
counts it): the backends it does not run stay untouched."""

from __future__ import annotations

import os
import sys

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

import prune_opt as po
from prune_opt.budget import fit_budget

ROOT = os.sep + "prune_opt" + os.sep


def _entered(fn):
    seen = set()

    def prof(frame, event, arg):
        if event == "call" and ROOT in frame.f_code.co_filename:
            code = frame.f_code
            path = code.co_filename[code.co_filename.rfind(ROOT) + 1:]
            seen.add((path, code.co_name))

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


def test_fit_budget_with_an_ensemble_objective_touches_no_other_backend():
    X, y = make_classification(150, 6, n_informative=3, random_state=0)
    rf = RandomForestClassifier(4, max_depth=4, random_state=0).fit(X, y)
    costs = po.FeatureCosts(np.arange(1.0, 7.0))
    seen = _entered(lambda: fit_budget(rf, X, y, costs=costs, budget=2.0, objective="brier",
                                       time_limit=5))
    files = {path for path, _ in seen}
    assert "prune_opt/objectives/_descent.py" in files  # the shared descent ran
    others = {"highs", "cbc", "ortools_lp", "primal_dual", "mincut_networkx", "_dual_ascent",
              "_lp"}
    assert not {p for p in files if p.rpartition("/")[2][:-3] in others}
    # neither "auto" nor the listings were resolved: no backend module was loaded to rank it
    assert not {("prune_opt/solvers/_registry.py", n) for n in ("_load", "auto_solver")} & seen
    # the lam = 0 start is the trees' own optimum: no min-cut solver run for it
    assert ("prune_opt/solvers/mincut.py", "_solve") not in seen


def test_fit_budget_with_an_ensemble_objective_routes_x_once():
    """One fit_budget(objective="brier") call routes X through the trees once: the
    compile, the baselines' scorer and the ensemble search share one RoutedData (the
    leaves of every row, from one route_leaves call), and nothing routes the rows
    again."""
    X, y = make_classification(200, 6, n_informative=3, random_state=1)
    rf = RandomForestClassifier(5, max_depth=4, random_state=0).fit(X, y)
    routings = ("decision_paths", "leaf_matrix", "apply", "apply_tree", "route_leaves")
    calls = []

    def prof(frame, event, arg):
        if event == "call" and ROOT in frame.f_code.co_filename \
                and frame.f_code.co_name in routings:
            calls.append(frame.f_code.co_name)

    sys.setprofile(prof)
    try:
        fit_budget(rf, X, y, costs=np.arange(1.0, 7.0), budget=2.0, objective="brier",
                   time_limit=5)
    finally:
        sys.setprofile(None)
    assert calls == ["route_leaves"]
