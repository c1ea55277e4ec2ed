"""0/1 loss of the forest's vote."""

from __future__ import annotations

import numpy as np

from ._base import Objective, register_objective
from .margin import vote_margin

__all__ = ["PredictError", "ZeroOne"]

# a vote counts as right only when the true class leads by more than this, so that
# rounding differences between summation orders cannot flip a tie
TIE_TOL = 1e-9


@register_objective
class ZeroOne(Objective):
    """0/1 loss of the vote: 1 unless the true class has the strictly largest probability.

    Exact ties (within 1e-9) count as errors, so the loss never depends on
    the order in which tree probabilities are summed.  ``1 - loss`` is the
    forest's accuracy except at exact ties, where ``predict`` picks the first
    tied class.

    Examples
    --------
    >>> import numpy as np
    >>> ZeroOne().loss(np.array([[0.7, 0.3], [0.5, 0.5]]), np.array([0, 0]))
    array([0., 1.])
    """

    name = "accuracy"

    def loss(self, proba, y):
        return (vote_margin(proba, y) <= TIE_TOL).astype(float)


class PredictError(ZeroOne):
    """The error of ``predict``: 1 unless the class it picks (the first of the tied
    largest probabilities) is the true class.

    What a user measures, so finished candidates are ranked by it
    (``fit_budget(objective="auto")`` ranks its fitting candidates by it first).  Not
    registered for the searches: at an exact tie it depends on the order in which
    the trees are summed, which :class:`ZeroOne` avoids by counting ties as errors;
    a model whose first CatBoost tree leaves rows at a raw score of exactly 0 has
    such ties, and ZeroOne ranked its more accurate one-tree truncation below a
    pruning it beats.

    Examples
    --------
    >>> import numpy as np
    >>> PredictError().loss(np.array([[0.7, 0.3], [0.5, 0.5]]), np.array([0, 0]))
    array([0., 0.])
    """

    def loss(self, proba, y):
        return (np.argmax(proba, axis=1) != y).astype(float)
