"""Objective protocol and registry of the ensemble-aware pruning objectives.

An objective scores the *forest's* prediction on each evaluation example.  The
optimiser only needs two things from it:

* :meth:`Objective.loss` -- the per-example loss of forest probabilities
  (what the user wants small), used for every from-scratch evaluation;
* :meth:`Objective.pair_loss` -- the loss of example ``i`` when tree ``t``'s
  pruned leaf for ``i`` is node ``h`` and the other trees are fixed, from
  which the block optimiser sums exact node leaf-losses.

A *separable* objective (the paper's per-tree error) is a sum over trees
instead of a function of the forest's average; its total is the sum of
``pair_loss`` over trees.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Objective", "register_objective", "get_objective", "available_objectives",
           "check_objective_task"]

_REGISTRY = {}


class Objective:
    """Base class of a per-example loss of the forest's class probabilities.

    Subclasses set ``name`` and implement :meth:`loss`.

    Attributes
    ----------
    name : str
        Registry key (``objective="name"``).
    separable : bool
        True when the loss is a sum over trees of per-tree terms rather than a
        function of the forest's averaged probabilities.
    task : str
        ``"classification"`` (``proba`` are class probabilities, ``y`` class
        indices) or ``"regression"`` (``proba`` is the (n, 1) prediction: the
        average of the trees' leaf means, or a booster's raw score; ``y`` the
        real targets).
    boosted : bool
        Whether the objective applies to a boosted (additive) model; False for one
        that scores trees as voters (the paper's per-tree error).
    """

    name = ""
    separable = False
    task = "classification"
    boosted = True

    def for_data(self, y, weight=None):
        """The objective configured for the labels ``y`` it will score (e.g. a
        normalisation by their spread); the same object by default."""
        return self

    def loss(self, proba, y):
        """Per-example loss.

        Parameters
        ----------
        proba : ndarray (n, n_classes)
            Forest class probabilities (rows sum to 1).
        y : ndarray of int (n,)
            Labels as class indices.

        Returns
        -------
        ndarray (n,)
        """
        raise NotImplementedError

    def pair_loss(self, rest, leaf_value, y, forest):
        """Loss of each example when one tree's leaf gives ``leaf_value``.

        Parameters
        ----------
        rest : ndarray (m, value_width)
            Sum of the other trees' leaf values for each example.
        leaf_value : ndarray (m, value_width)
            Value of the candidate leaf of the tree being optimised.
        y : ndarray of int (m,)
        forest : Forest
            Combines the trees' total into the prediction (:meth:`Forest.output`:
            the average, or a booster's linked raw score).

        Returns
        -------
        ndarray (m,)
        """
        total = rest + leaf_value
        return self.loss(forest.output(total, out=total), y)

    def has_raw_derivatives(self, forest):
        """Whether :meth:`raw_derivatives` offers derivatives for ``forest``: the
        objective is the loss its raw scores minimise (asked of its kind)."""
        return type(self).raw_derivatives is not Objective.raw_derivatives and \
            forest.ensemble.is_own_loss(self.name)

    def raw_derivatives(self, raw, y, forest):
        """First and second derivatives of :meth:`loss` in a booster's raw scores,
        ``(g, h)`` each (n, value_width), or None when the objective offers none
        (the descent then computes its node terms exactly from the paths).

        ``raw`` is the raw score (initial score included) of an additive
        forest.  They drive the second-order proposals of
        :class:`~prune_opt.objectives._raw_state.RawScoreState`; every move is
        still checked on :meth:`loss` itself.
        """
        return None

    def total(self, leaf_values, y, weight, forest):
        """Weighted objective loss term of a pruning from the per-tree leaf values.

        Parameters
        ----------
        leaf_values : list of ndarray (n, value_width)
            Per tree (in tree order), the value of the pruned leaf each example
            reaches.
        y : ndarray of int (n,)
        weight : ndarray (n,)
            Example weights summing to 1.
        forest : Forest
            Whose :attr:`~Forest.ensemble` combines ``len(leaf_values)`` trees
            (fewer than the forest's for a sub-forest of its first trees).
        """
        total = np.zeros_like(leaf_values[0])
        for v in leaf_values:  # the order and rounding of PrunedForest.predict_proba
            total += v
        pred = forest.ensemble.output(total, len(leaf_values), out=total)
        return float(weight @ self.loss(pred, y))

    def __repr__(self):
        return f"{type(self).__name__}()"


def register_objective(cls):
    """Class decorator: add an :class:`Objective` subclass to the registry."""
    if not cls.name:
        raise ValueError("an objective needs a non-empty name")
    _REGISTRY[cls.name] = cls
    return cls


def available_objectives():
    """Names accepted by ``objective=`` besides ``"paper"`` (sorted).

    Examples
    --------
    >>> from prune_opt.objectives import available_objectives
    >>> available_objectives()
    ['accuracy', 'brier', 'logloss', 'margin', 'squared_error', 'tree_error']
    """
    return sorted(_REGISTRY)


def check_objective_task(objective, forest):
    """Refuse an objective made for the other task than ``forest``'s, or one that
    scores trees as independent voters on a boosted model."""
    ensemble = getattr(forest, "ensemble", None)
    if ensemble is not None:
        ensemble.check_objective(objective)
    task = getattr(forest, "task", "classification")
    if objective.task != task:
        fits = sorted(n for n, c in _REGISTRY.items() if c.task == task)
        raise ValueError(f"objective={objective.name!r} scores a {objective.task} forest, but "
                         f"this forest is a {task} forest; choose one of {fits}")


def get_objective(objective):
    """An :class:`Objective` from a registered name or an instance.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt.objectives import get_objective
    >>> get_objective("brier").loss(np.array([[0.5, 0.5]]), np.array([0]))
    array([0.5])
    """
    if isinstance(objective, Objective):
        return objective
    if isinstance(objective, str) and objective in _REGISTRY:
        return _REGISTRY[objective]()
    if objective == "paper":
        raise ValueError('objective="paper" is solved exactly by prune_opt.prune (min-cut), '
                         'not by the ensemble optimiser; use "tree_error" for the paper\'s '
                         'objective under block coordinate descent')
    raise ValueError(f"unknown objective {objective!r}; choose one of "
                     f"{available_objectives()} or pass an Objective instance (prune and "
                     "fit_budget also take 'paper', names are case-sensitive)")
