"""Hinge loss on the forest's voting margin."""

from __future__ import annotations

import numpy as np

from ._base import Objective, register_objective

__all__ = ["Margin", "vote_margin"]


def vote_margin(proba, y):
    """``p_y - max_{c != y} p_c`` for every row (in [-1, 1]; > 0 means a right vote)."""
    rows = np.arange(y.size)
    p_true = proba[rows, y]
    other = proba.copy()
    other[rows, y] = -np.inf
    return p_true - other.max(axis=1)


@register_objective
class Margin(Objective):
    """Hinge on the vote margin: ``max(0, gamma - (p_y - max_{c != y} p_c))``.

    Zero once the true class leads every other class by ``gamma``; grows
    linearly with the deficit.  Unlike the 0/1 loss it rewards moving a wrong
    vote towards the right class.

    Parameters
    ----------
    gamma : float, default 0.2
        Required lead of the true class, in (0, 2].

    Examples
    --------
    >>> import numpy as np
    >>> Margin().loss(np.array([[0.7, 0.3], [0.4, 0.6]]), np.array([0, 0])).round(3)
    array([0. , 0.4])
    """

    name = "margin"

    def __init__(self, gamma=0.2):
        if not 0.0 < float(gamma) <= 2.0:
            raise ValueError(f"gamma must lie in (0, 2], got {gamma!r}")
        self.gamma = float(gamma)

    def loss(self, proba, y):
        return np.maximum(0.0, self.gamma - vote_margin(proba, y))

    def __repr__(self):
        return f"Margin(gamma={self.gamma:g})"
