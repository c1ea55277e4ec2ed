"""Log-loss of the forest's probabilities."""

from __future__ import annotations

import numpy as np

from ._base import Objective, register_objective

__all__ = ["LogLoss"]


@register_objective
class LogLoss(Objective):
    """Negative log-likelihood ``-log(max(p_y, eps))``.

    Forest probabilities are often exactly 0 (pure leaves), so the probability
    of the true class is floored at ``eps``; one confident mistake then costs
    ``-log(eps)`` (9.2 with the default), not infinity.

    Parameters
    ----------
    eps : float, default 1e-4
        Floor of the true class's probability, in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> LogLoss().loss(np.array([[0.5, 0.5]]), np.array([1])).round(4)
    array([0.6931])
    """

    name = "logloss"

    def __init__(self, eps=1e-4):
        if not 0.0 < float(eps) < 1.0:
            raise ValueError(f"eps must lie in (0, 1), got {eps!r}")
        self.eps = float(eps)

    def loss(self, proba, y):
        return -np.log(np.maximum(proba[np.arange(y.size), y], self.eps))

    def raw_derivatives(self, raw, y, forest):
        """A booster's log-loss derivatives in its raw scores (logistic or softmax
        link, :meth:`prune_opt.forest._ensemble.Ensemble.gradients`); zero for the rows whose
        true class's probability is below ``eps``, where this loss is flat."""
        gh = forest.ensemble.own_gradients(self.name, raw, y)
        if gh is None:
            return None
        g, h = gh
        # the true class's probability from g: p_y = 1 + g_y (softmax), 1 - |g| (logistic)
        p_true = 1.0 + g[np.arange(y.size), y] if g.shape[1] > 1 else 1.0 - np.abs(g[:, 0])
        flat = p_true < self.eps
        if flat.any():
            g[flat] = 0.0
            h[flat] = 0.0
        return g, h

    def __repr__(self):
        return f"LogLoss(eps={self.eps:g})"
