"""Exact scores of many prunings of one forest: the referee of fit_budget's candidates.

:class:`VoteScorer` routes the evaluation rows through every tree once and
then scores any split mask -- and any sub-forest of the first ``m`` trees --
with the arithmetic of :class:`~prune_opt.PrunedForest` (sum of the pruned
leaves' values in tree order, then the forest's :meth:`~prune_opt.Forest.output`:
the average, or a booster's linked raw score; every acquisition unit paid once
per row), so a candidate ranked here
ranks the same under ``predict`` / ``predict_proba`` / ``average_cost``.

Every objective is scored the same way, by its own ``total`` of the
per-tree leaf values (the mean loss of the averaged prediction, or a sum
over trees for a separable objective such as ``"tree_error"``).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_labels
from ..routing._routed import RoutedData, bit_costs
from . import get_objective

__all__ = ["VoteScorer", "within_one_standard_error"]


class VoteScorer:
    """Loss and average acquisition cost of prunings of ``forest`` on ``(X, y)``.

    Parameters
    ----------
    forest : Forest
    X, y : array-like
        Evaluation rows and labels (original class labels).
    costs : FeatureCosts
    objective : str or Objective
    routed : RoutedData, optional
        ``X`` already routed through ``forest`` (shared with other scorers).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> f = po.Forest.from_sklearn(rf)
    >>> scorer = VoteScorer(f, X, y, po.FeatureCosts.uniform(4), "brier")
    >>> loss, cost = scorer.score(f.full_split_mask())
    >>> pf = po.PrunedForest(f, f.full_split_mask())
    >>> brier = ((pf.predict_proba(X) - np.eye(3)[y]) ** 2).sum(axis=1).mean()
    >>> bool(abs(loss - brier) < 1e-12), bool(cost == pf.average_cost(X))
    (True, True)
    """

    def __init__(self, forest, X, y, costs, objective, routed=None):
        f = self.forest = forest
        self.routed = RoutedData(f, f.check_X(X)) if routed is None else routed
        self.n = self.routed.n_rows
        self.y = check_labels(f, y, self.n, name="y")
        self.objective = get_objective(objective).for_data(self.y)
        self.weight = np.full(self.n, 1.0 / self.n)
        self.costs = costs
        self._running = _RunningScore(f, self.routed, costs)

    def loss_of(self, leaf_values):
        """Mean loss from the per-tree leaf values (list of (n, width) arrays)."""
        return self.objective.total(leaf_values, self.y, self.weight, self.forest)

    def loss_of_total(self, total, n_trees):
        """Mean loss of the forest whose ``n_trees`` trees sum to ``total`` (n, width)."""
        pred = self.forest.ensemble.output(total, n_trees, out=total.copy())
        return float(self.weight @ self.objective.loss(pred, self.y))

    def _loss(self, leaves, trees):
        """Mean loss of the pruned leaves ``leaves`` (n_trees, n) of ``trees``."""
        f = self.forest
        trees = range(f.n_trees) if trees is None else list(trees)
        if self.objective.separable:
            return self.loss_of(list(f.value[leaves[trees]]))
        return self.loss_of_total(tree_total(f, leaves, trees), len(trees))

    def score(self, mask, trees=None, also=None):
        """``(loss, average cost)`` of the pruning ``mask`` of the whole forest, or of
        the forest of the trees listed in ``trees`` only (the others dropped); with
        ``also`` (a VoteScorer of the same forest and rows, another objective),
        ``(loss, average cost, also's loss)`` from one routing of the pruning.

        A pruning of the whole forest is scored by its difference from the one scored
        before: only the trees whose pruning changed are read again (their leaves, their
        share of the per-row sums and of the units each row pays), so a nested family is
        scored at the cost of its changes."""
        separable = self.objective.separable or (also is not None
                                                 and also.objective.separable)
        if trees is not None or separable:
            leaves = self.routed.all_leaves(mask)
            cost = float(self.routed.row_costs(mask, self.costs, trees).mean())
            out = self._loss(leaves, trees), cost
            return out if also is None else (*out, also._loss(leaves, trees))
        T = self.forest.n_trees
        total, row_costs = self._running.update(np.asarray(mask, dtype=bool))
        out = self.loss_of_total(total, T), float(row_costs.mean())
        return out if also is None else (*out, also.loss_of_total(total, T))

    def prefix_scores(self, also=None):
        """``[(m, loss, average cost)]`` of the unpruned sub-forest of the first m trees,
        for every whole round: m = K, 2K, .., n_trees with K the trees per round (1 for a
        forest; what :func:`fewer_trees_prunings` returns); with ``also`` (a VoteScorer
        of the same forest and rows, another objective), ``[(m, loss, average cost,
        also's loss)]`` from the same pass over the trees."""
        f, r = self.forest, self.routed
        full = f.full_split_mask()
        K = f.round_size
        scorers = [self] if also is None else [self, also]
        keep = any(s.objective.separable for s in scorers)
        values, out = [], []
        total = np.zeros((self.n, f.value_width))
        tc = f.ensemble.columns_of_trees(f.n_trees)
        for t, row_costs in enumerate(r.row_cost_prefixes(full, self.costs)):
            # in tree order, as PrunedForest sums its trees (a booster's tree adds to one
            # column: the others' zeros change nothing)
            if tc is None:
                v = f.value[r.leaf[t]]
                total += v
            else:
                total[:, tc[t]] += f.value[r.leaf[t], tc[t]]
            if keep:
                values.append(v)
            if (t + 1) % K:
                continue
            losses = [s.loss_of(values) if s.objective.separable
                      else s.loss_of_total(total, t + 1) for s in scorers]
            out.append((t + 1, losses[0], float(row_costs.mean()), *losses[1:]))
        return out


class _RunningScore:
    """The per-row sums and paid units of the last pruning scored, updated by the trees
    whose pruning changed (from scratch when more than half of them did)."""

    #: (rows x units) counts kept at most this large; above, costs are read from scratch
    MAX_COUNT_CELLS = 1 << 24

    def __init__(self, forest, routed, costs):
        self.forest, self.routed, self.costs = forest, routed, costs
        self.mask = None

    def update(self, mask):
        f, r = self.forest, self.routed
        changed = None if self.mask is None else np.unique(
            f.tree_of_node[np.flatnonzero(mask != self.mask)])
        if changed is None or 2 * changed.size > f.n_trees:
            self.leaves = r.all_leaves(mask)
            self.total = tree_total(f, self.leaves, range(f.n_trees))
            self.row_costs = r.row_costs(mask, self.costs)
            self.count = None
        elif changed.size:
            from ..routing._routed import tree_stop_map

            bits = r.unit_bits(self.costs)
            units = self.costs.unit_costs.size
            if self.count is None and r.n_rows * units <= self.MAX_COUNT_CELLS:
                self.count = np.zeros((r.n_rows, units), dtype=np.int32)
                for t in range(f.n_trees):
                    self.count += _unpack(bits[self.leaves[t]], units)
            tc = f.ensemble.columns_of_trees(f.n_trees)
            for t in changed:
                new = tree_stop_map(f, mask, t)[r.leaf[t] - f.node_offset[t]]
                old = self.leaves[t]
                if tc is None:
                    self.total += f.value[new] - f.value[old]
                else:
                    self.total[:, tc[t]] += f.value[new, tc[t]] - f.value[old, tc[t]]
                if self.count is not None:
                    self.count += _unpack(bits[new], units)
                    self.count -= _unpack(bits[old], units)
                self.leaves[t] = new
            if self.count is not None:
                self.row_costs = bit_costs(_pack(self.count > 0), self.costs.unit_costs)
            else:
                self.row_costs = r.row_costs(mask, self.costs)
        self.mask = mask.copy()
        return self.total, self.row_costs


def _unpack(bits, width):
    """(n, width) int8 of (n, words) uint64 bit sets."""
    return np.unpackbits(np.ascontiguousarray(bits).view(np.uint8), axis=1,
                         bitorder="little")[:, :width].astype(np.int8)


def _pack(paid):
    """(n, words) uint64 bit sets of an (n, units) bool array (bit u of row i: paid)."""
    n, units = paid.shape
    words = max(1, -(-units // 64))
    padded = np.zeros((n, words * 64), dtype=bool)
    padded[:, :units] = paid
    return np.packbits(padded, axis=1, bitorder="little").view(np.uint64)


def tree_total(forest, leaves, trees):
    """Sum over ``trees`` of their leaves' values, (n, value_width), in tree order (the
    order of :class:`~prune_opt.PrunedForest`): a booster's trees add one raw-score
    column each, so each column sums its trees' scalars (the other columns' zeros
    change nothing)."""
    f = forest
    n = leaves.shape[1]
    tc = f.ensemble.columns_of_trees(f.n_trees)
    if tc is None:
        total = np.zeros((n, f.value_width))
        for t in trees:
            total += f.value[leaves[t]]
        return total
    trees = np.asarray(trees, dtype=np.int64)
    total = np.zeros((n, f.value_width))
    for k in range(f.value_width):
        mine = trees[tc[trees] == k]
        if mine.size:
            total[:, k] = f.value[leaves[mine], k].sum(axis=0)
    return total


def within_one_standard_error(errors, n_rows):
    """Which candidates' held-out error rates are within one standard error of the
    lowest: the set Breiman's one-standard-error rule chooses from.

    The standard error is the binomial one of the lowest rate ``e`` on ``n_rows``
    rows, ``sqrt(e (1 - e) / n_rows)``.  Among several candidates scored on a
    few hundred rows, the lowest error rate is partly luck; picking, within this
    set, the candidate with the lowest value of a smoother score (a proper loss
    such as the Brier loss of the same votes) is how ``forest_builders``'
    budget-pruned classifier chooses among its candidates.

    Parameters
    ----------
    errors : array-like of float
        Held-out error rates (1 - accuracy), one per candidate.
    n_rows : int
        Held-out rows they were measured on.

    Returns
    -------
    (ndarray of bool, float)
        The candidates within reach, and the standard error.

    Examples
    --------
    >>> keep, se = within_one_standard_error([0.20, 0.22, 0.30], 100)
    >>> keep.tolist(), round(se, 3)
    ([True, True, False], 0.04)
    """
    errors = np.asarray(errors, dtype=float)
    low = float(errors.min())
    se = float(np.sqrt(max(low * (1.0 - low), 0.0) / max(int(n_rows), 1)))
    return errors <= low + se + 1e-12, se
