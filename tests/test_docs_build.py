"""The documentation builds with warnings as errors, and its tolerance for
modules that are not written yet is exactly the documented one.

Skipped when the ``docs`` extra (sphinx, myst-parser, numpydoc) is not
installed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("sphinx", "myst_parser", "numpydoc")),
    reason="the docs extra (sphinx, myst-parser, numpydoc) is not installed",
)


def _conf():
    spec = importlib.util.spec_from_file_location("prune_opt_docs_conf", DOCS / "conf.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_optional_module_detection():
    conf = _conf()
    assert conf.module_present("prune_opt")
    assert not conf.module_present("prune_opt.no_such_module")
    assert not conf.module_present("no_such_package.sub")
    # every optional module that the API page names is declared in conf.py
    api = (DOCS / "api.md").read_text()
    named = {line.split("::", 1)[1].strip() for line in api.splitlines()
             if "optional-automodule::" in line}
    assert named and named <= set(conf.OPTIONAL_MODULES)


def _build(src, out):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E",
                           "-b", "html", str(src), str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_docs_build_with_warnings_as_errors(tmp_path):
    proc = _build(DOCS, tmp_path / "html")
    assert proc.returncode == 0, proc.stderr[-4000:]
    html = (tmp_path / "html" / "api.html").read_text()
    assert "prune_opt.PruningProblem.evaluate" in html
    cli = (tmp_path / "html" / "cli.html").read_text()
    assert "usage: prune-opt demo" in cli


@pytest.mark.slow
def test_unknown_module_is_still_an_error(tmp_path):
    """Only modules listed in OPTIONAL_MODULES may be absent; a broken
    explicit toctree entry or an unlisted module fails the build."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text((DOCS / "conf.py").read_text())
    (src / "index.md").write_text(
        "# t\n\n```{eval-rst}\n.. optional-automodule:: prune_opt.not_listed\n```\n"
    )
    proc = _build(src, tmp_path / "out")
    assert proc.returncode != 0
    assert "not listed in OPTIONAL_MODULES" in proc.stderr


@pytest.mark.slow
def test_listed_missing_module_gives_a_note(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    conf = (DOCS / "conf.py").read_text()
    conf += '\nOPTIONAL_MODULES = OPTIONAL_MODULES + ("prune_opt.not_written_yet",)\n'
    (src / "conf.py").write_text(conf)
    (src / "index.md").write_text(
        "# t\n\n```{eval-rst}\n.. optional-automodule:: prune_opt.not_written_yet\n"
        "   :members:\n```\n\n```{toctree}\n:glob:\n\nnothing_here*\n```\n"
    )
    proc = _build(src, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr[-4000:]
    html = (tmp_path / "out" / "index.html").read_text()
    assert "prune_opt.not_written_yet is not present in this build" in html
