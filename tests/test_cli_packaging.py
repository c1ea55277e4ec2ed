"""The package installs the ``prune-opt`` command without deprecation warnings: the
license is an SPDX expression, which needs setuptools 77 or later to build."""

import re
from pathlib import Path

import tomllib

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_license_is_an_spdx_string_and_the_build_needs_a_setuptools_that_reads_it():
    doc = tomllib.loads(PYPROJECT.read_text())
    assert doc["project"]["license"] == "MIT"  # a table ({text = ...}) is deprecated
    assert not any(c.startswith("License ::") for c in doc["project"].get("classifiers", []))
    req = next(r for r in doc["build-system"]["requires"] if r.startswith("setuptools"))
    version = re.fullmatch(r"setuptools>=(\d+)(\.\d+)*", req)
    assert version and int(version.group(1)) >= 77, req
    assert doc["project"]["scripts"]["prune-opt"] == "prune_opt.cli:main"
