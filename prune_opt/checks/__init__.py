"""Total unimodularity and integrality checks for BudgetPrune programs.

The LP relaxation of BudgetPrune has integral vertices because its
constraint matrix is totally unimodular (TU): its transpose is a network
matrix (see ``docs/math/tu.md``).  This package checks that claim on actual
matrices, with evidence:

* :func:`is_totally_unimodular` - verdict with a certificate (network tree,
  CMR's Seymour decomposition, exhaustive search) or an exactly verified
  counterexample submatrix;
* :func:`vertex_integrality` / :func:`max_fractionality` - fractionality of
  LP vertices, e.g. with a hard budget row (which breaks TU);
* :func:`load_matrix` - read .npz / .mtx / .mps matrices.

Examples
--------
>>> import numpy as np
>>> from prune_opt.checks import is_totally_unimodular
>>> is_totally_unimodular(np.array([[1, -1, 0], [0, 1, -1]])).is_tu
True
"""

from ._brute import brute_force_tu, estimate_2x2_work, find_2x2_violation
from ._cmr import cmr_available
from ._exact import exact_determinant, scale_rows_to_integers, verified_counterexample
from ._ghouila_houri import equitable_bicoloring
from ._integrality import IntegralityReport, max_fractionality, vertex_integrality
from ._matrix_io import load_matrix, save_matrix
from ._network import NetworkCertificate, generic_network_certificate, verify_network_matrix
from ._pruning_network import budget_counterexample, pruning_network_certificate
from ._result import Counterexample, MethodResult, SearchLimitExceeded
from ._tu import METHODS, TUReport, is_totally_unimodular

__all__ = [
    "METHODS",
    "Counterexample",
    "IntegralityReport",
    "MethodResult",
    "NetworkCertificate",
    "SearchLimitExceeded",
    "TUReport",
    "brute_force_tu",
    "budget_counterexample",
    "cmr_available",
    "equitable_bicoloring",
    "estimate_2x2_work",
    "exact_determinant",
    "find_2x2_violation",
    "generic_network_certificate",
    "is_totally_unimodular",
    "load_matrix",
    "max_fractionality",
    "pruning_network_certificate",
    "save_matrix",
    "scale_rows_to_integers",
    "verified_counterexample",
    "verify_network_matrix",
    "vertex_integrality",
]
