"""Sphinx configuration of the prune-opt documentation.

Build (warnings are errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Two deliberate, narrow tolerances let the site build while parts of the
project are still being written; nothing else is silenced:

* ``OPTIONAL_MODULES`` lists the modules the API reference documents only when
  they are importable.  The ``optional-automodule`` directive defined below
  checks each with :func:`importlib.util.find_spec`; a present module gets a
  normal ``automodule``, a missing one a visible note on the page.  A module
  that is *not* in this list and fails to import is still a build error.
* The toctrees of ``index.md`` end in globs (``math/*``, ``howto/*``,
  ``growers*``) so pages written later are picked up.  A glob that matches no
  page yet is not an error: ``suppress_warnings`` names ``toc.empty_glob`` and,
  because Sphinx 9.0 emits that warning without its type, the
  ``EmptyGlobFilter`` below drops exactly that one message.  A missing
  *explicit* toctree entry is still an error.

Two content choices, not tolerances: scikit-learn's generated
``set_*_request`` methods are left out of the API pages (their docstrings
point into sklearn's own glossary), and the ``cli-help`` directive renders each
command's ``--help`` from the argparse parser at build time.  ``.rst`` is a
source suffix only because numpydoc's autosummary support requires it; the
pages themselves are MyST markdown.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the checkout, for autodoc

import prune_opt  # noqa: E402

project = "prune-opt"
author = "prune-opt developers"
copyright = "2026, prune-opt developers"
release = prune_opt.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build"]
suppress_warnings = ["toc.empty_glob"]

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_title = f"prune-opt {release}"

# Modules written in parallel with the core (or depending on optional packages).
# The API reference documents each only when importable; see the module docstring.
OPTIONAL_MODULES = (
    "prune_opt.budget",
    "prune_opt.checks",
    "prune_opt.plotting",
    "prune_opt.solvers.mincut",
    "prune_opt.solvers.mincut_networkx",
    "prune_opt.solvers.primal_dual",
    "forest_builders",
    "forest_builders.budget_rf",
    "forest_builders.cost_sensitive_rf",
    "forest_builders.act",
    "forest_builders.cegb",
    "forest_builders.lightgbm_import",
    "forest_builders.lazy_cost_rf",
    "forest_builders.feature_subset",
    "forest_builders.estimator",
)


def module_present(name):
    """True when ``name`` can be found (its parent packages are imported to check)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


class OptionalAutomodule(Directive):
    """``.. optional-automodule:: NAME`` -- ``automodule`` for a module in
    ``OPTIONAL_MODULES`` when it exists, otherwise a note saying it is absent.

    Options are passed on to ``automodule`` (``members``, ``no-index``...).
    """

    required_arguments = 1
    has_content = False
    option_spec = {"members": directives.unchanged, "no-index": directives.flag,
                   "undoc-members": directives.flag}

    def run(self):
        name = self.arguments[0]
        if name not in OPTIONAL_MODULES:
            raise self.error(f"optional-automodule: {name!r} is not listed in "
                             "OPTIONAL_MODULES of docs/conf.py; use automodule instead")
        if not module_present(name):
            para = nodes.paragraph()
            para += nodes.emphasis(text=f"The module {name} is not present in this build of "
                                        "prune-opt, so its reference is not shown.")
            return [para]
        lines = [f".. automodule:: {name}"]
        for key, value in self.options.items():
            lines.append(f"   :{key}:" + (f" {value}" if value else ""))
        node = nodes.container()
        self.state.nested_parse(StringList(lines, source="optional-automodule"),
                                self.content_offset, node)
        return node.children


class CliHelp(Directive):
    """``.. cli-help:: COMMAND`` -- the ``--help`` text of ``prune-opt COMMAND``,
    generated from the argparse parser at build time so the reference cannot
    drift from the code.  A command whose module is not present in this build
    (``prune_opt.cli`` skips those) gets a note instead.
    """

    required_arguments = 1
    has_content = False

    def run(self):
        from prune_opt.cli import build_parser

        name = self.arguments[0]
        old = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "90"  # argparse wraps help text to $COLUMNS
        try:
            parser = build_parser()
            if name == "prune-opt":
                text = parser.format_help()
            else:
                sub = next(a for a in parser._actions
                           if isinstance(a, argparse._SubParsersAction))
                if name not in sub.choices:
                    para = nodes.paragraph()
                    para += nodes.emphasis(text=f"The command {name} is not present in this "
                                                "build of prune-opt.")
                    return [para]
                text = sub.choices[name].format_help()
        finally:
            if old is None:
                os.environ.pop("COLUMNS", None)
            else:
                os.environ["COLUMNS"] = old
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def skip_sklearn_request_methods(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated metadata-routing methods
    (``set_fit_request``, ``set_score_request``...): every estimator has them,
    and their docstrings cross-reference sklearn's own glossary, which does not
    exist in this site."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


class EmptyGlobFilter(logging.Filter):
    """Drop only Sphinx's "toctree glob pattern ... didn't match any documents"."""

    def filter(self, record):
        return "didn't match any documents" not in str(record.msg)


def setup(app):
    app.add_directive("optional-automodule", OptionalAutomodule)
    app.add_directive("cli-help", CliHelp)
    app.connect("autodoc-skip-member", skip_sklearn_request_methods)
    logging.getLogger("sphinx.sphinx.directives.other").addFilter(EmptyGlobFilter())
    return {"parallel_read_safe": True}
