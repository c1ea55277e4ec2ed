"""Every candidate family of the budget-pruned estimator, registered.

Importing this module registers the built-in families in
:data:`forest_builders.estimator._registry.CANDIDATE_FAMILIES` (the forests, then the
boosted models); the estimator and the benchmarks read the registry from here.
"""

from . import _forests as _forest_candidates  # noqa: F401  (they register)
from ._registry import CANDIDATE_FAMILIES, family_status, resolve_families

__all__ = ["CANDIDATE_FAMILIES", "family_status", "resolve_families"]
