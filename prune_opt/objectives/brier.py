"""Brier score of the forest's probabilities."""

from __future__ import annotations

import numpy as np

from ._base import Objective, register_objective

__all__ = ["Brier"]


@register_objective
class Brier(Objective):
    """Multi-class Brier score ``sum_c (p_c - [y = c])**2`` (in [0, 2]).

    Examples
    --------
    >>> import numpy as np
    >>> Brier().loss(np.array([[0.75, 0.25], [0.0, 1.0]]), np.array([0, 0]))
    array([0.125, 2.   ])
    """

    name = "brier"

    def loss(self, proba, y):
        rows = np.arange(y.size)
        sq = np.einsum("ij,ij->i", proba, proba)
        return sq - 2.0 * proba[rows, y] + 1.0
