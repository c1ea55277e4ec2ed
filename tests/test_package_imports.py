"""``import prune_opt`` is cheap: the public names are imported on first use (PEP 562),
and every one of them still imports with ``from prune_opt import X``."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import prune_opt

ROOT = Path(__file__).resolve().parents[1]
#: the public names of the package (the eager __init__ exported exactly these)
PUBLIC = ["Deadline", "FeatureCosts", "Forest", "LazyPrediction", "LazyPredictor",
          "ObjectiveBreakdown", "PrunedForest", "PruningProblem", "SolverError",
          "acquisition_cost", "as_feature_costs", "as_forest", "available_solvers",
          "compile_problem", "fit_budget", "is_totally_unimodular", "list_solvers", "load",
          "prune", "refit_leaves", "route", "solve", "tradeoff_curve",
          "training_node_stats", "vertex_integrality"]
#: modules a cheap import must not load
HEAVY = ("numpy", "scipy", "sklearn", "pandas", "matplotlib", "lightgbm", "xgboost",
         "catboost", "ortools", "networkx")


def _python(code):
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_public_names_are_unchanged():
    assert sorted(prune_opt.__all__) == sorted(PUBLIC)
    assert set(PUBLIC) <= set(dir(prune_opt))


def test_import_prune_opt_loads_nothing_heavy():
    loaded = _python("import json, sys, prune_opt\n"
                     f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & "
                     f"set({HEAVY!r}))))")
    assert loaded == []


def test_every_public_name_imports_from_the_package_in_a_fresh_interpreter():
    code = ("import json, importlib, prune_opt\n"
            "bad = {}\n"
            "for name in prune_opt.__all__:\n"
            "    ns = {}\n"
            "    exec(f'from prune_opt import {name}', ns)\n"
            "    home = importlib.import_module(prune_opt._EXPORTS[name], 'prune_opt')\n"
            "    if ns[name] is not getattr(home, name):\n"
            "        bad[name] = repr(ns[name])\n"
            "print(json.dumps(bad))")
    assert _python(code) == {}


def test_star_import_and_sub_packages_as_attributes():
    ns = {}
    exec("from prune_opt import *", ns)
    assert set(PUBLIC) <= set(ns)
    import prune_opt as po

    assert po.importers.read_model_file is not None and po.budget.fit_budget is po.fit_budget
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        po.no_such_name  # noqa: B018


def test_as_forest_registers_the_importers_on_first_use():
    # nothing imported prune_opt.importers: as_forest still reads a scikit-learn model,
    # and supported_models lists every library
    code = ("import json, sys\n"
            "from prune_opt.forest._forest import as_forest, supported_models\n"
            "before = 'prune_opt.importers' in sys.modules\n"
            "from sklearn.tree import DecisionTreeClassifier\n"
            "f = as_forest(DecisionTreeClassifier(max_depth=1).fit([[0], [1]], [0, 1]))\n"
            "print(json.dumps([before, f.n_trees, 'lightgbm.LGBMClassifier' in supported_models()]))")
    assert _python(code) == [False, 1, True]
