"""Every script in examples/ runs for real, in a subprocess.

The scripts are found by glob, so a new example is run without editing this
file.  Each must exit with status 0 within ``TIMEOUT`` seconds.  A script may
leave out a section only for an optional dependency that is genuinely not
installed: every line it prints about something missing or skipped must match
one of ``OPTIONAL``, and the test then checks that the dependency really is
missing here.  A project module (``prune_opt.*``, ``forest_builders``) is never
optional, so "... is not present" fails the test.  The known examples must
also print the lines their full run prints (``EXPECTED``).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TIMEOUT = 240  # seconds; each script takes well under a minute on an idle machine


def _missing(module):
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # a parent package is missing
        return True


def _cmr_missing():
    from prune_opt.checks import cmr_available

    return not cmr_available()[0]


# a skip message (regex) -> (dependency, "is it really missing here?")
OPTIONAL = {
    r"lightgbm is not installed|CEGB skipped": ("lightgbm", lambda: _missing("lightgbm")),
    r"passagemath-cmr is not installed": ("passagemath-cmr", _cmr_missing),
    r"catboost is not installed": ("catboost", lambda: _missing("catboost")),
}
# words of a line that says a section did not run
SKIP_WORDS = re.compile(r"not present|not installed|not available|skipped|unavailable",
                        re.IGNORECASE)

# lines every complete run of a known example prints (all of them are required)
EXPECTED = {
    "01_prune_sklearn_forest.py": ("reloaded predictions identical: True",),
    "02_compare_solvers.py": ("objectives agree to",),
    "03_budget_and_curve.py": ("exact trade-off curve",),
    "04_tu_check.py": ("network method: totally unimodular",),
    "05_cost_aware_growers.py": ("BudgetRF (budget",),
    "06_lazy_thyroid.py": ("predictions identical to the fully measured ones: True",),
    "07_budget_pipelines.py": ("chosen on validation:",),
    "08_budget_estimator.py": ("predict identically: True",),
    "09_prune_boosted.py": ("pruned by fit_budget", "LightGBM's probabilities differ"),
    "10_prune_catboost.py": ("pruned by fit_budget", "first-use penalties",
                             "the pruned model as a CatBoost model"),
}
EXTRA_ARGS = {
    "01_prune_sklearn_forest.py": lambda tmp: ["--out", str(tmp)],
    "03_budget_and_curve.py": lambda tmp: ["--plot", str(tmp / "curve.png")],
}


def _scripts():
    return sorted(p.name for p in EXAMPLES.glob("*.py"))


def check_skips(stdout):
    """Fail unless every 'skipped / not installed' line names an optional dependency
    that is really missing; returns the dependencies skipped."""
    skipped = []
    for line in stdout.splitlines():
        if not SKIP_WORDS.search(line):
            continue
        known = [(dep, missing) for pattern, (dep, missing) in OPTIONAL.items()
                 if re.search(pattern, line)]
        assert known, f"a section did not run, and not for an optional dependency: {line!r}"
        for dep, missing in known:
            assert missing(), f"{dep} is installed, yet the example skipped it: {line!r}"
            skipped.append(dep)
    return skipped


def test_the_examples_are_found():
    assert set(EXPECTED) <= set(_scripts()), "an example listed in EXPECTED is gone"


@pytest.mark.parametrize("line", ["prune_opt.budget is not present in this installation",
                                  "forest_builders is not present; nothing to show",
                                  "something else skipped"])
def test_a_project_module_is_never_a_legitimate_skip(line):
    with pytest.raises(AssertionError, match="not for an optional dependency"):
        check_skips(line)


def test_an_installed_optional_dependency_is_not_a_legitimate_skip(monkeypatch):
    monkeypatch.setitem(OPTIONAL, r"lightgbm is not installed|CEGB skipped",
                        ("lightgbm", lambda: False))
    with pytest.raises(AssertionError, match="lightgbm is installed"):
        check_skips("lightgbm is not installed: the CEGB row is skipped")


@pytest.mark.slow
@pytest.mark.parametrize("name", _scripts())
def test_example_runs(name, tmp_path):
    # one OpenMP thread: the scripts run beside the other test workers (2 cores), and
    # HistGradientBoosting's and LightGBM's threads would otherwise spin against them
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    args = [sys.executable, str(EXAMPLES / name), *EXTRA_ARGS.get(name, lambda _: [])(tmp_path)]
    proc = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    assert proc.stdout.strip(), f"{name} printed nothing"
    check_skips(proc.stdout)
    for marker in EXPECTED.get(name, ()):
        assert marker in proc.stdout, f"{name} did not print {marker!r}:\n{proc.stdout}"
    if name == "03_budget_and_curve.py":
        assert (tmp_path / "curve.png").stat().st_size > 0
    if name == "01_prune_sklearn_forest.py":
        assert (tmp_path / "pruned.json").exists()
    # scripts write nothing into the working directory unless asked to
    assert {p.name for p in tmp_path.iterdir()} <= {"curve.png", "pruned.json"}
