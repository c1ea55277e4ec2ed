"""Feature-Budgeted Random Forest (Nan, Wang, Saligrama, ICML 2015).

Each tree is a GreedyTree: at a node holding examples ``S`` it scores every
candidate feature ``t`` by the minimax cost-weighted rule

    R(t) = min over stumps g on t of  max over outcomes i of
           c(t) / (F(S) - F(S_g^i))

and splits on the feature with the smallest ``R(t)``; growth stops when the
admissible impurity ``F(S)`` is 0 (or a depth / size limit is reached).  The
stumps of a feature are randomly drawn thresholds (80 / 40 / 20 of them for
nodes with more than 2000 / more than 500 / fewer examples).  Trees are grown
on bootstrap samples and added until the average acquisition cost on
validation data would exceed the budget.
"""

from __future__ import annotations

import numbers
from numbers import Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import ArrayForestClassifier
from ._impurity import entropy, get_impurity
from ._splits import n_random_thresholds

__all__ = ["BudgetRandomForestClassifier", "minimax_chooser", "ratio_chooser"]

IMPURITY_CHOICES = ("threshold_pairs", "entropy", "gini", "cost_entropy")


def _cost_per_reduction_chooser(impurity, alpha, reduction):
    """Chooser minimising ``cost / reduction`` where ``reduction(fs, f_left, f_right)``
    is the impurity reduction of every candidate stump (shared by both rules)."""

    def choose(cand, cost, total):
        fs = impurity(total, alpha)
        if fs <= 0:
            return None
        red = np.where(cand.valid, reduction(fs, impurity(cand.left, alpha),
                                             impurity(cand.right, alpha)), -np.inf)
        best_row = np.argmax(red, axis=0)
        rmax = red[best_row, np.arange(red.shape[1])]
        ok = rmax > 1e-12 * max(fs, 1.0)
        if not ok.any():
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(ok, np.where(cost > 0, cost / np.where(ok, rmax, 1.0), 0.0),
                             np.inf)
        j = int(np.lexsort((-np.where(ok, rmax, -np.inf), score))[0])  # ties: larger rmax
        return j, float(cand.threshold[best_row[j], j])

    return choose


def minimax_chooser(impurity, alpha):
    """Split chooser of the GreedyTree minimax rule.

    Per feature, the best stump maximises ``min_i (F(S) - F(S_i))`` over the
    two outcomes; the feature's score is ``c(t)`` divided by that reduction.
    Free features (``c = 0``) score 0; ties go to the larger reduction.

    Examples
    --------
    >>> import numpy as np
    >>> from forest_builders._impurity import threshold_pairs
    >>> from forest_builders._splits import candidate_splits
    >>> from forest_builders.budget_rf import minimax_chooser
    >>> X = np.array([[0, 5], [1, 6], [2, 7], [3, 8]], dtype=np.float32)
    >>> y = np.array([0, 0, 1, 1])
    >>> cand = candidate_splits(X, y, np.ones(4), 2)
    >>> minimax_chooser(threshold_pairs, 0.0)(cand, np.array([1.0, 1.0]), np.array([2., 2.]))
    (0, 1.5)
    """

    return _cost_per_reduction_chooser(
        impurity, alpha, lambda fs, fl, fr: fs - np.maximum(fl, fr))


def ratio_chooser(impurity, alpha):
    """Split chooser of the cost-weighted gain rule: minimise ``c(t) / gain``.

    ``gain = F(S) - F(S_left) - F(S_right)`` (count-weighted impurity), i.e.
    the classic cost-weighted information gain when ``impurity`` is entropy.

    Examples
    --------
    >>> import numpy as np
    >>> from forest_builders._impurity import entropy
    >>> from forest_builders._splits import candidate_splits
    >>> from forest_builders.budget_rf import ratio_chooser
    >>> X = np.array([[0, 5], [1, 6], [2, 7], [3, 8]], dtype=np.float32)
    >>> cand = candidate_splits(X, np.array([0, 0, 1, 1]), np.ones(4), 2)
    >>> ratio_chooser(entropy, 0.0)(cand, np.array([5.0, 1.0]), np.array([2., 2.]))
    (1, 6.5)
    """

    return _cost_per_reduction_chooser(impurity, alpha, lambda fs, fl, fr: fs - fl - fr)


class BudgetRandomForestClassifier(ArrayForestClassifier):
    """Feature-Budgeted Random Forest (BudgetRF, Nan, Wang & Saligrama, ICML 2015).

    Parameters
    ----------
    n_estimators : int, default 100
        Number of trees when ``budget`` is None.
    budget : float or None, default None
        Average acquisition cost per example allowed on the validation data
        passed to :meth:`fit`.  Trees are added (up to ``max_trees``) while the
        forest's average cost on ``X_val`` stays within the budget; the
        forest before the first tree that breaks it is returned.
    alpha : float or list of float, default 0.0
        Threshold of the threshold-Pairs impurity (in examples).  A list is
        tuned: one forest per value, the most accurate on ``(X_val, y_val)``
        is kept (``alpha_``, ``alpha_scores_``).
    impurity : {"threshold_pairs", "entropy", "gini", "cost_entropy"}
        Admissible impurity ``F`` of the minimax rule (entropy and gini are
        count-weighted).  ``"cost_entropy"`` replaces the minimax rule by the
        cost-weighted information gain ``c(t) / (F(S) - F(S_l) - F(S_r))``
        with count-weighted entropy.
    costs : FeatureCosts, array-like, mapping or None
        Feature acquisition costs (uniform when None).
    free_reuse : bool, default False
        When True, a feature whose acquisition units were already paid on the
        path from the root costs only its unpaid units (0 when all are paid),
        matching the "pay each unit once per example" accounting of
        prune_opt.  Off by default (the paper's fixed ``c(t)``): under the
        minimax rule a free feature wins with any positive reduction, which
        grows long chains of weak splits on already-paid features.
    n_thresholds : tuple of 3 int, default (80, 40, 20)
        Random thresholds per feature for nodes with more than 2000, more
        than 500, and fewer examples.
    max_features : {"sqrt", "log2"}, int, float or None, default None
        Candidate features drawn at each node.  The paper's GreedyTree
        considers every feature (randomness comes from the bootstrap and the
        random thresholds); sampling features spreads the forest over more
        features and so raises its acquisition cost.
    max_depth : int or None
    min_samples_split : float, default 2
        Minimum (bootstrap-weighted) number of examples to split a node.
    max_trees : int, default 500
        Cap on the number of trees in budget mode.
    bootstrap : bool, default True
    n_jobs : int or None
        Trees grown in parallel (joblib processes).
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray (only with pandas input)
    forest_ : prune_opt.Forest
    n_estimators_ : int
        Trees actually grown.
    in_bag_ : list of ndarray
        Bootstrap multiplicity of each training example, per tree.
    costs_ : FeatureCosts
    alpha_ : float
    alpha_scores_ : dict or None
        Validation accuracy per alpha when ``alpha`` is a list.
    val_costs_ : ndarray or None
        Average validation cost after each tree (budget mode).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from forest_builders.budget_rf import BudgetRandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> est = BudgetRandomForestClassifier(n_estimators=5, costs=[1, 1, 5, 5],
    ...                                    random_state=0).fit(X, y)
    >>> est.score(X, y) > 0.9
    True
    >>> import prune_opt as po
    >>> pruned = po.prune(est, X, y, costs=[1, 1, 5, 5], lam=0.01, train=(X, y))
    >>> bool(pruned.average_cost(X) <= est.acquisition_cost(X).mean())
    True
    """

    _parameter_constraints: dict = {
        **ArrayForestClassifier._parameter_constraints,
        "alpha": [Interval(Real, 0, np.inf, closed="left"), list, tuple, np.ndarray],
        "impurity": [StrOptions(set(IMPURITY_CHOICES))],
        "n_thresholds": [tuple, list],
    }

    def __init__(self, n_estimators=100, *, budget=None, alpha=0.0, impurity="threshold_pairs",
                 costs=None, free_reuse=False, n_thresholds=(80, 40, 20), max_features=None,
                 max_depth=None, min_samples_split=2, max_trees=500, bootstrap=True,
                 n_jobs=None, random_state=None):
        self.n_estimators = n_estimators
        self.budget = budget
        self.alpha = alpha
        self.impurity = impurity
        self.costs = costs
        self.free_reuse = free_reuse
        self.n_thresholds = n_thresholds
        self.max_features = max_features
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.max_trees = max_trees
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _alphas(self):
        a = self.alpha
        values = list(a) if isinstance(a, (list, tuple, np.ndarray)) else [a]
        if not values:
            raise ValueError("alpha is an empty list; pass a number or a non-empty list")
        for v in values:
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) \
                    or v < 0:
                raise ValueError(f"alpha must be a non-negative number or a list of them, "
                                 f"got {a!r}")
        return [float(v) for v in values], len(values) > 1 or isinstance(
            a, (list, tuple, np.ndarray))

    def _check_n_thresholds(self):
        nt = self.n_thresholds
        if len(nt) != 3 or any(isinstance(v, bool) or not isinstance(v, numbers.Integral)
                               or v < 1 for v in nt):
            raise ValueError(f"n_thresholds must be a tuple of 3 positive ints (for nodes with "
                             f"> 2000, > 500 and fewer examples), got {nt!r}")

    def _n_thresholds(self):
        schedule = tuple(int(v) for v in self.n_thresholds)
        return lambda n: n_random_thresholds(n, schedule)

    def _chooser(self, alpha):
        if self.impurity == "cost_entropy":
            return ratio_chooser(entropy, 0.0)
        return minimax_chooser(get_impurity(self.impurity), alpha)

    def _stop_rule(self):
        if self.impurity != "threshold_pairs":
            return None
        imp, alpha = get_impurity("threshold_pairs"), self._current_alpha
        return lambda total: imp(total, alpha) <= 0

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_val=None, y_val=None):
        """Grow the forest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; NaN is allowed (routed to the right child).
        y : array-like of shape (n_samples,)
        X_val, y_val : array-like, optional
            Validation data: required with ``budget`` (cost measurement) and
            with a list of ``alpha`` values (selection by accuracy).

        Returns
        -------
        self
        """
        alphas, tune = self._alphas()
        self._check_n_thresholds()
        X, y_enc, X_val, y_val = self._fit_validate(X, y, X_val, y_val)
        if tune and X_val is None:
            raise ValueError("alpha is a list, so fit needs X_val and y_val to choose it")
        seed = self._seed()
        best = None
        scores = {}
        for a in alphas:
            self._current_alpha = a
            trees, bags = self._grow_forest(X, y_enc, X_val, self._chooser(a), seed)
            val_costs = self.val_costs_
            self._finish(trees, bags, X, y_enc)
            if tune:
                acc = scores[a] = float(np.mean(self.predict(X_val) == y_val))
                if best is None or acc > best[0]:
                    best = (acc, a, trees, bags, val_costs)
        if tune:
            _, a, trees, bags, val_costs = best
            self._finish(trees, bags, X, y_enc)
            self.val_costs_ = val_costs
            self.alpha_ = a
        else:
            self.alpha_ = alphas[0]
        self.alpha_scores_ = scores if tune else None
        del self._current_alpha
        return self
