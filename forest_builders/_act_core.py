"""Growing one ACT tree (Esmeir & Markovitch, JAIR 2008): EG2 scores, stochastic
EG2 lookahead samples, C4.5 pessimistic errors and cost-aware post-pruning.

The growth is a recursion over the nodes of one tree (each node's choice
depends on lookahead samples below it); everything inside a node — threshold
search over all features, class counts, pessimistic errors, context costs — is
vectorised with numpy.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaincinv, entr

from ._base import preorder
from ._splits import split_threshold

__all__ = ["ACTConfig", "best_splits", "grow_tree", "pessimistic_rate", "leaf_costs"]


class ACTConfig:
    """Everything a grower needs, prepared once per fit.

    Parameters
    ----------
    X32 : ndarray float32 (n, F)
    codes : ndarray int (n,)   class index of each row
    n_classes : int
    unit_costs : ndarray (U,)
    feature_units : ndarray bool (F, U)
    M : ndarray (C, C)   M[j, k] = cost of predicting k when the truth is j
    r, w, cf, max_depth, min_samples_split, max_features (int or None)
    """

    def __init__(self, X32, codes, n_classes, unit_costs, feature_units, M, *, r, w, cf,
                 max_depth, min_samples_split, max_features=None):
        self.X32 = X32
        self.codes = codes
        self.C = int(n_classes)
        self.unit_costs = np.asarray(unit_costs, dtype=float)
        self.feature_units = np.asarray(feature_units, dtype=bool)
        self.M = np.asarray(M, dtype=float)
        self.r = int(r)
        self.w = float(w)
        self.cf = float(cf)
        self.max_depth = np.inf if max_depth is None else int(max_depth)
        self.min_samples_split = int(min_samples_split)
        self.max_features = max_features
        # cost of one pessimistic extra error when a leaf predicting k has none observed:
        # the mean cost of mistaking another class for k
        if self.C > 1:
            self.error_unit_cost = (self.M * ~np.eye(self.C, dtype=bool)).sum(axis=0) / (
                self.C - 1)
        else:
            self.error_unit_cost = np.zeros(1)

    def context_costs(self, paid):
        """Extra cost of every feature for an example that already paid units ``paid``."""
        return (self.feature_units & ~paid) @ self.unit_costs


def _entropy(counts):
    """Entropy in bits of count rows (last axis = classes)."""
    n = counts.sum(axis=-1, keepdims=True)
    p = counts / np.maximum(n, 1e-300)
    return entr(p).sum(axis=-1) / np.log(2.0)


def best_splits(X32, codes, n_classes, features):
    """Best information-gain threshold of every feature on one node's rows.

    Sorts each column once and scores every cut between distinct values from
    cumulative class counts (vectorised over rows and features).

    Parameters
    ----------
    X32 : ndarray float32 (n, F_all)
    codes : ndarray int (n,)
    n_classes : int
    features : ndarray int
        Columns to score.

    Returns
    -------
    gain : ndarray (len(features),)   information gain in bits (-inf: no cut)
    threshold : ndarray float64       float32 midpoint; ``float32(x) <= t`` goes left
    """
    Xs = X32[:, features]
    n, f = Xs.shape
    gain = np.full(f, -np.inf)
    thr = np.zeros(f)
    if n < 2 or f == 0:
        return gain, thr
    order = np.argsort(Xs, axis=0, kind="stable")
    v = np.take_along_axis(Xs, order, axis=0)
    onehot = np.zeros((n, n_classes))
    onehot[np.arange(n), codes] = 1.0
    cum = np.cumsum(onehot[order], axis=0)  # (n, f, C): counts of the first i+1 sorted rows
    total = cum[-1, 0]
    left = cum[:-1]  # cut after position i
    right = total - left
    nl = np.arange(1, n, dtype=float)[:, None]
    child = (nl * _entropy(left) + (n - nl) * _entropy(right)) / n
    g = _entropy(total) - child
    valid = v[1:] > v[:-1]
    g = np.where(valid, g, -np.inf)
    best = np.argmax(g, axis=0)
    cols = np.arange(f)
    gain = g[best, cols]
    return gain, split_threshold(v[best, cols], v[best + 1, cols])


def pessimistic_rate(errors, n, cf):
    """C4.5's pessimistic error rate: upper ``cf`` confidence limit of a binomial.

    Vectorised; ``errors == n`` gives 1 and ``n == 0`` gives 0.

    Examples
    --------
    >>> round(float(pessimistic_rate(0, 6, 0.25)), 3)
    0.206
    """
    errors = np.asarray(errors, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(all="ignore"):
        u = betaincinv(errors + 1.0, np.maximum(n - errors, 1e-300), 1.0 - cf)
    u = np.where(errors >= n, 1.0, u)
    return np.where(n > 0, u, 0.0)


def leaf_costs(counts, cfg):
    """Pessimistic misclassification cost (summed over examples) of leaves.

    A leaf predicts the class with the lowest observed cost; its observed
    cost is scaled by pessimistic/observed errors (C4.5's U_cf), and a leaf
    without observed errors pays U_cf(0, N)*N errors at the mean cost of
    mistaking another class for its prediction.
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    n = counts.sum(axis=1)
    cost_by_pred = counts @ cfg.M
    k = np.argmin(cost_by_pred, axis=1)
    observed = cost_by_pred[np.arange(counts.shape[0]), k]
    errors = n - counts[np.arange(counts.shape[0]), k]
    pess_errors = n * pessimistic_rate(errors, n, cfg.cf)
    per_error = np.where(errors > 0, observed / np.where(errors > 0, errors, 1),
                         cfg.error_unit_cost[k])
    return pess_errors * per_error


class _Grower:
    def __init__(self, cfg, rng):
        self.cfg = cfg
        self.rng = rng

    def _counts(self, idx):
        return np.bincount(self.cfg.codes[idx], minlength=self.cfg.C).astype(float)

    def _candidates(self, idx, paid, features):
        """Gain, threshold and context cost of every feature with a useful cut."""
        cfg = self.cfg
        gain, thr = best_splits(cfg.X32[idx], cfg.codes[idx], cfg.C, features)
        ok = gain > 1e-12
        cost = cfg.context_costs(paid)[features]
        return features[ok], gain[ok], thr[ok], cost[ok]

    def _stop(self, idx, counts, depth):
        return (depth >= self.cfg.max_depth or idx.size < self.cfg.min_samples_split
                or (counts > 0).sum() <= 1)

    def _children(self, idx, paid, f, t):
        """Rows of the two children of the cut ``x_f <= t`` and the units paid below it."""
        go_left = self.cfg.X32[idx, f] <= t
        return idx[go_left], idx[~go_left], paid | self.cfg.feature_units[f]

    def _icf(self, gain, cost):
        return (np.exp2(gain) - 1.0) / (cost + 1.0) ** self.cfg.w

    def sample_cost(self, idx, paid, depth, stochastic):
        """Total cost (test + pessimistic misclassification) of an (S)EG2 subtree.

        Each example pays the context cost of the tests on its path; the
        subtree is pruned wherever a leaf would be cheaper.
        """
        cfg = self.cfg
        counts = self._counts(idx)
        leaf = float(leaf_costs(counts, cfg)[0])
        if self._stop(idx, counts, depth):
            return leaf
        feats, gain, thr, cost = self._candidates(idx, paid, np.arange(cfg.X32.shape[1]))
        if feats.size == 0:
            return leaf
        icf = self._icf(gain, cost)
        if stochastic and icf.sum() > 0:
            j = self.rng.choice(feats.size, p=icf / icf.sum())
        else:
            j = int(np.argmax(icf))
        li, ri, new_paid = self._children(idx, paid, feats[j], thr[j])
        below = idx.size * cost[j]
        if below >= leaf:
            return leaf
        below += self.sample_cost(li, new_paid, depth + 1, stochastic)
        if below >= leaf:
            return leaf
        below += self.sample_cost(ri, new_paid, depth + 1, stochastic)
        return min(leaf, below)

    def _estimate(self, idx, paid, depth):
        """min over r lookahead samples (the first one greedy EG2, the rest SEG2)."""
        return min(self.sample_cost(idx, paid, depth, stochastic=s > 0)
                   for s in range(self.cfg.r))

    def grow(self, idx, paid, depth):
        """ACT node: returns (nested node, subtree cost)."""
        cfg = self.cfg
        counts = self._counts(idx)
        leaf = float(leaf_costs(counts, cfg)[0])
        node = {"counts": counts}
        if self._stop(idx, counts, depth):
            return node, leaf
        features = np.arange(cfg.X32.shape[1])
        if cfg.max_features is not None and cfg.max_features < features.size:
            features = np.sort(self.rng.choice(features.size, cfg.max_features, replace=False))
        feats, gain, thr, cost = self._candidates(idx, paid, features)
        if feats.size == 0:
            return node, leaf
        if cfg.r == 0:  # EG2
            j = int(np.argmax(self._icf(gain, cost)))
        else:
            est = np.empty(feats.size)
            for c in range(feats.size):  # candidate splits of this node
                li, ri, p = self._children(idx, paid, feats[c], thr[c])
                est[c] = (idx.size * cost[c] + self._estimate(li, p, depth + 1)
                          + self._estimate(ri, p, depth + 1))
            j = int(np.argmin(est))
        li, ri, p = self._children(idx, paid, feats[j], thr[j])
        left, lc = self.grow(li, p, depth + 1)
        right, rc = self.grow(ri, p, depth + 1)
        subtree = idx.size * cost[j] + lc + rc
        if leaf <= subtree:  # post-prune: the tests do not pay for the error they save
            return node, leaf
        node.update(feature=int(feats[j]), threshold=float(thr[j]), left=left, right=right)
        return node, subtree


def grow_tree(cfg, idx, rng):
    """Grow one ACT tree on rows ``idx`` (repeats = bootstrap weights).

    Returns
    -------
    dict of preorder arrays: left, right, feature, threshold, value (class counts)
    """
    root, _ = _Grower(cfg, rng).grow(np.asarray(idx, dtype=np.int64),
                                     np.zeros(cfg.unit_costs.size, dtype=bool), 0)
    nodes, left, right = preorder(root, lambda n: (n["left"], n["right"]) if "left" in n
                                  else None)
    return dict(left=left, right=right, feature=np.asarray([n.get("feature", -1) for n in nodes]),
                threshold=np.asarray([n.get("threshold", 0.0) for n in nodes]),
                value=np.asarray([n["counts"] for n in nodes]))
