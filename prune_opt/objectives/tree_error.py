"""The paper's error term as a (tree-separable) objective."""

from __future__ import annotations

import numpy as np

from ._base import Objective, register_objective

__all__ = ["TreeError"]


@register_objective
class TreeError(Objective):
    """Mean over trees of each tree's 0/1 error (the BudgetPrune error term).

    A tree's leaf is wrong on an example when the leaf's majority class
    (first ``argmax`` of its distribution) is not the label.  With the
    evaluation data as error data this is exactly the paper's objective, so
    block coordinate descent on it can be checked against the exact min-cut
    optimum (it can never beat it).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> forest = SimpleNamespace(n_trees=4)
    >>> TreeError().pair_loss(None, np.array([[0.6, 0.4]]), np.array([1]), forest)
    array([0.25])
    """

    name = "tree_error"
    separable = True
    boosted = False  # a boosted tree's leaf is a raw score, not a vote

    def loss(self, proba, y):
        raise TypeError("tree_error is separable over trees: it has no loss of the forest's "
                        "averaged probabilities; use total() or pair_loss()")

    def pair_loss(self, rest, leaf_value, y, forest):
        return (np.argmax(leaf_value, axis=1) != y) / float(forest.n_trees)

    def total(self, leaf_values, y, weight, forest):
        T = float(len(leaf_values))
        return float(sum(weight @ ((np.argmax(v, axis=1) != y) / T) for v in leaf_values))
