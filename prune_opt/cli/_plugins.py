"""Estimators that installed packages offer to the command line.

The CLI never imports a grower package: a package declares its estimators in
the entry-point group ``prune_opt.estimators`` of its distribution metadata
(``forest_builders`` does so in ``pyproject.toml``), and a command asks for one
by name.  Imports keep pointing down; a missing package is a clear error.
"""

from __future__ import annotations

__all__ = ["GROUP", "estimator_class"]

#: entry-point group of the estimators offered to ``prune-opt``
GROUP = "prune_opt.estimators"


def estimator_class(name):
    """The estimator class an installed package offers under ``name``.

    Examples
    --------
    >>> from prune_opt.cli._plugins import estimator_class
    >>> estimator_class("BudgetPrunedForestClassifier").__name__
    'BudgetPrunedForestClassifier'
    """
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group=GROUP) if ep.name == name]
    if not found:
        offered = sorted(ep.name for ep in entry_points(group=GROUP))
        raise ValueError(f"no installed package offers the estimator {name!r} to prune-opt "
                         f"(entry-point group {GROUP!r} offers {offered or 'nothing'}); "
                         "install prune-opt with its growers (pip install -e .)")
    return found[0].load()
