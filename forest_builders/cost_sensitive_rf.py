"""Cost-sensitive random forest: impurity decrease traded against feature cost.

An sklearn-style random forest (bootstrap samples, ``max_features`` features
drawn per node, exhaustive threshold search) whose split score is

* ``"ratio"``: ``gain / c ** beta``, or
* ``"difference"``: ``gain - beta * c``,

with ``gain`` the impurity decrease per example of the node
(``(F(S) - F(S_l) - F(S_r)) / |S|`` for count-weighted gini or entropy) and
``c`` the feature's acquisition cost.  With ``free_reuse=True`` a feature
whose units were already paid on the path costs only its unpaid units, so
the forest reuses features along a path -- exactly what BudgetPrune rewards.
This is the "cost-weighted entropy" forest that the BudgetPrune paper grows
before pruning in its Yahoo experiment.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import ArrayForestClassifier
from ._impurity import get_impurity

__all__ = ["CostSensitiveRandomForestClassifier", "cost_gain_chooser"]


def cost_gain_chooser(impurity, mode, beta):
    """Split chooser maximising ``gain / c**beta`` or ``gain - beta * c``.

    Free features (``c = 0``) rank first under ``"ratio"`` when ``beta > 0``;
    ties go to the larger gain.  Under ``"difference"`` a node whose best score is not
    positive becomes a leaf (no split is worth its cost).

    Examples
    --------
    >>> import numpy as np
    >>> from forest_builders._impurity import entropy
    >>> from forest_builders._splits import candidate_splits
    >>> from forest_builders.cost_sensitive_rf import cost_gain_chooser
    >>> X = np.array([[0, 5], [1, 6], [2, 7], [3, 8]], dtype=np.float32)
    >>> cand = candidate_splits(X, np.array([0, 0, 1, 1]), np.ones(4), 2)
    >>> cost_gain_chooser(entropy, "ratio", 1.0)(cand, np.array([4.0, 1.0]), np.array([2., 2.]))
    (1, 6.5)
    """

    def choose(cand, cost, total):
        n = total.sum()
        fs = impurity(total, 0.0)
        if fs <= 0:
            return None
        gain = np.where(cand.valid, (fs - impurity(cand.left, 0.0)
                                     - impurity(cand.right, 0.0)) / n, -np.inf)
        best_row = np.argmax(gain, axis=0)
        gmax = gain[best_row, np.arange(gain.shape[1])]
        ok = gmax > 1e-12 * max(fs / n, 1e-300)
        if not ok.any():
            return None
        if mode == "ratio":
            denom = np.power(cost, beta)  # 0 ** 0 == 1: beta = 0 ignores costs entirely
            with np.errstate(divide="ignore", invalid="ignore"):
                score = np.where(denom > 0, gmax / np.where(denom > 0, denom, 1.0), np.inf)
        else:
            score = gmax - beta * cost
        score = np.where(ok, score, -np.inf)
        j = int(np.lexsort((-np.where(ok, gmax, -np.inf), -score))[0])
        if not ok[j] or (mode == "difference" and score[j] <= 0):
            return None
        return j, float(cand.threshold[best_row[j], j])

    return choose


class CostSensitiveRandomForestClassifier(ArrayForestClassifier):
    """Random forest whose splits trade impurity decrease against feature cost.

    Parameters
    ----------
    n_estimators : int, default 100
    criterion : {"entropy", "gini"}, default "entropy"
    cost_mode : {"ratio", "difference"}, default "ratio"
        Split score ``gain / c**beta`` or ``gain - beta * c``.
    beta : float, default 1.0
        Weight of the cost (``beta = 0`` in ratio mode is a plain random
        forest with exhaustive thresholds).
    costs : FeatureCosts, array-like, mapping or None
        Feature acquisition costs (uniform when None).
    free_reuse : bool, default True
        Units already paid on the path from the root are free.
    budget : float or None
        Add trees while the average acquisition cost on ``X_val`` stays
        within the budget (see :class:`BudgetRandomForestClassifier`).
    max_features : {"sqrt", "log2"}, int, float or None, default "sqrt"
    max_depth : int or None
    min_samples_split : float, default 2
    max_trees : int, default 500
    bootstrap : bool, default True
    n_jobs : int or None
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_, forest_, n_estimators_,
    in_bag_, costs_, val_costs_ : as in :class:`BudgetRandomForestClassifier`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from forest_builders.cost_sensitive_rf import CostSensitiveRandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> est = CostSensitiveRandomForestClassifier(n_estimators=5, costs=[1, 1, 5, 5],
    ...                                           random_state=0).fit(X, y)
    >>> est.score(X, y) > 0.9
    True
    """

    _parameter_constraints: dict = {
        **ArrayForestClassifier._parameter_constraints,
        "criterion": [StrOptions({"entropy", "gini"})],
        "cost_mode": [StrOptions({"ratio", "difference"})],
        "beta": [Interval(Real, 0, np.inf, closed="left")],
    }

    def __init__(self, n_estimators=100, *, criterion="entropy", cost_mode="ratio", beta=1.0,
                 costs=None, free_reuse=True, budget=None, max_features="sqrt", max_depth=None,
                 min_samples_split=2, max_trees=500, bootstrap=True, n_jobs=None,
                 random_state=None):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.cost_mode = cost_mode
        self.beta = beta
        self.costs = costs
        self.free_reuse = free_reuse
        self.budget = budget
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.max_trees = max_trees
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_val=None, y_val=None):
        """Grow the forest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; NaN is allowed (routed to the right child).
        y : array-like of shape (n_samples,)
        X_val, y_val : array-like, optional
            Validation data, required with ``budget``.

        Returns
        -------
        self
        """
        X, y_enc, X_val, y_val = self._fit_validate(X, y, X_val, y_val)
        chooser = cost_gain_chooser(get_impurity(self.criterion), self.cost_mode,
                                    float(self.beta))
        trees, bags = self._grow_forest(X, y_enc, X_val, chooser, self._seed())
        return self._finish(trees, bags, X, y_enc)
