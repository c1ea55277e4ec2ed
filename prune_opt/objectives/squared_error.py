"""Squared error of a regression forest's average prediction."""

from __future__ import annotations

import numpy as np

from ._base import Objective, register_objective

__all__ = ["SquaredError"]


@register_objective
class SquaredError(Objective):
    """``(mean of the trees' leaf values - y)**2 / scale`` for a regression forest.

    ``scale`` is the (weighted) variance of the targets being scored, as for
    the paper's regression node errors, so the mean loss is ``1 - R^2`` of the
    forest's prediction (1 when the targets are constant).

    Parameters
    ----------
    scale : float, default 1
        Set from the scored targets by :meth:`for_data`.

    Examples
    --------
    >>> import numpy as np
    >>> obj = SquaredError().for_data(np.array([0.0, 2.0]))
    >>> obj.loss(np.array([[1.0], [1.0]]), np.array([0.0, 2.0]))
    array([1., 1.])
    """

    name = "squared_error"
    task = "regression"

    def __init__(self, scale=1.0):
        if not (np.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
        self.scale = float(scale)

    def for_data(self, y, weight=None):
        y = np.asarray(y, dtype=float)
        w = np.full(y.size, 1.0 / max(y.size, 1)) if weight is None else weight / weight.sum()
        mid = float(np.max(np.abs(y))) if y.size else 0.0
        if mid == 0 or not np.isfinite(mid):
            return SquaredError()
        z = y / mid  # rescaled before squaring: no overflow for huge targets
        var = float(w @ (z - w @ z) ** 2)
        return SquaredError(var * mid * mid) if var > 0 and np.isfinite(var * mid * mid) \
            else SquaredError()

    def loss(self, proba, y):
        return (proba[:, 0] - y) ** 2 / self.scale

    def raw_derivatives(self, raw, y, forest):
        """A regression booster's derivatives in its raw score, its own loss's divided by
        ``scale``: ``2 (s - y) / scale`` and ``2 / scale``."""
        gh = forest.ensemble.own_gradients(self.name, raw, y)
        return None if gh is None else (gh[0] / self.scale, gh[1] / self.scale)

    def __repr__(self):
        return f"SquaredError(scale={self.scale:g})"
