"""``prune-opt --help`` starts without the heavy libraries.

The command line imports NumPy, scikit-learn, SciPy and the solvers only when a
command runs: building the parsers and printing help imports the standard
library and ``prune_opt.cli`` alone (importing the heavy ones took 4.9 s of the
6.5 s that ``prune-opt --help`` needed on a busy machine).  Checked by what a
real process imports (``python -X importtime``), not by timing it.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: libraries (top-level packages) a start-up must not import
HEAVY = {"numpy", "scipy", "sklearn", "pandas", "matplotlib", "joblib", "tqdm", "lightgbm",
         "xgboost", "catboost", "ortools", "networkx", "highspy", "pulp", "dask",
         "distributed", "threadpoolctl"}


def _imported(argv):
    """Top-level names of every module ``python -m prune_opt.cli ARGV`` imported, and
    its exit status."""
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "prune_opt.cli", *argv],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    names = {line.rsplit("|", 1)[-1].strip().split(".")[0]
             for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return names, proc


@pytest.mark.parametrize("argv", [["--help"], [], ["prune", "--help"], ["curve", "--help"],
                                  ["compare", "--help"], ["tu-check", "--help"],
                                  ["demo", "--help"], ["fit", "--help"],
                                  ["predict", "--help"], ["export", "--help"]])
def test_help_imports_no_heavy_library(argv):
    names, proc = _imported(argv)
    assert proc.returncode == (2 if not argv else 0), proc.stderr
    assert "usage: prune-opt" in proc.stdout
    assert "prune_opt" in names  # the check sees the package's own imports
    assert names & HEAVY == set()


def test_a_command_that_runs_imports_what_it_needs(tmp_path):
    # the other side of the check above: the libraries come in when the command runs
    names, proc = _imported(["tu-check", "--dataset", "pima", "--trees", "1", "--examples",
                             "10", "--json", str(tmp_path / "tu.json")])
    assert proc.returncode == 0, proc.stderr
    assert {"numpy", "sklearn"} <= names
