"""A model and its pruning rows made ready once, for every call that prunes.

``prune``, ``fit_budget`` and the estimator all start the same way: read the
model into the IR, check the rows, route them through every tree, and, for
an ensemble whose pruned nodes take their values from the data (a booster's
node-value rule, see :mod:`prune_opt.program._boosted`), fit those values.  Doing it
here once means the rows are routed once per call: the node-value fit, the
compile, the objective state and every scorer read the same
:class:`~prune_opt.routing._routed.RoutedData`.
"""

from __future__ import annotations

from ..forest._forest import as_forest
from ..routing._routed import RoutedData
from ._boosted import fitted_forest

__all__ = ["Prepared", "prepare"]


class Prepared:
    """``forest`` (node values fitted when its kind asks for it), the checked rows ``X``
    and their ``routed`` leaves.

    Attributes
    ----------
    forest : Forest
    X : ndarray
        The rows, checked by ``forest.check_X``.
    routed : RoutedData
        ``X`` routed through the forest's trees (shared by the fitted copy: the same
        splits).
    """

    def __init__(self, forest, X, routed):
        self.forest, self.X, self.routed = forest, X, routed


def prepare(model, X, y=None, *, train=None, sample_weight=None, routed=None):
    """Read ``model``, check and route ``X`` once, and fit the node values the kind
    needs on the error rows (``train`` when given, else ``X``, ``y``).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> gb = GradientBoostingClassifier(n_estimators=3, max_depth=2).fit(X, y)
    >>> ready = prepare(gb, X, y)
    >>> ready.routed.n_rows, ready.forest.node_value_fit["n_rows"]
    (569, 569)
    """
    forest = as_forest(model)
    Xc = forest.check_X(X)
    if routed is None or not forest.same_splits(routed.forest) or routed.n_rows != Xc.shape[0]:
        routed = RoutedData(forest, Xc)
    if y is not None or train is not None:
        forest = fitted_forest(forest, Xc, y, sample_weight=sample_weight, train=train,
                               routed=routed)
    return Prepared(forest, Xc, routed)
