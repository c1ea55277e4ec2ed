"""`prune-opt datasets` lists every named dataset; a closed pipe ends it quietly."""

import subprocess
import sys

from prune_opt.cli import main
from prune_opt.datasets import dataset_catalog


def test_lists_every_dataset(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for row in dataset_catalog():
        assert row["name"] in out


def test_closed_pipe_is_not_an_error():
    proc = subprocess.run(
        f"{sys.executable} -m prune_opt.cli datasets | head -1", shell=True,
        capture_output=True, text=True, timeout=60)
    assert proc.stdout.startswith("name")
    assert "error" not in proc.stderr and "Traceback" not in proc.stderr
