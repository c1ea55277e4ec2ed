"""Deprecated location of the backend list; it lives in ``_registry.BACKEND_MODULES``.

Importing this module still imports every backend, as it used to.
"""

from ._registry import BACKEND_MODULES, solver_classes

solver_classes()

__all__ = ["BACKEND_MODULES"]
