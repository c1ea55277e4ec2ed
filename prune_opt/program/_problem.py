"""The BudgetPrune program in solver-neutral form.

Objective (natural units, what :meth:`PruningProblem.evaluate` returns)::

    (1/T) sum_t err_t + lam * ( (1/N) sum_i sum_{u paid by i} c_u
                                + depth_cost * (1/N) sum_i sum_t depth_t(i) )

with ``err_t = (1/N_t) sum_{leaves h of pruned tree t} e_h``.  Solvers see the
same objective multiplied by ``scale = T * mean_t(N_t)`` so that an error
coefficient is a count of examples (O(1)), not a 1e-6 average that LP
tolerances would swallow.

Two equivalent views are offered:

* the paper's LP (:meth:`to_standard_form`): variables ``[z | wt | w]`` with
  ``z_h = 1`` when node h is a leaf of the pruned tree, ``wt`` one per
  first-use record, ``w`` one per (example row, unit) pair;
* the closure view (:meth:`closure_data`): ``x_h = 1`` when internal node h
  stays a split, with ``x_child <= x_parent`` and ``x_u <= w_{unit,row}``.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validation import check_nonneg_scalar

__all__ = ["PruningProblem", "ObjectiveBreakdown"]


@dataclass(frozen=True)
class ObjectiveBreakdown:
    """Objective of one pruning, evaluated from the IR (the single source of truth)."""

    objective: float
    error_term: float
    average_cost: float
    average_depth: float
    n_splits: int


class PruningProblem:
    """Compiled BudgetPrune program (see :func:`prune_opt.compile_problem`).

    Attributes
    ----------
    forest : Forest
    costs : FeatureCosts
    lam, depth_cost : float
    node_error : ndarray (n_nodes,)      e_h on the error data
    tree_error_weight : ndarray (T,)     N_t
    node_cost_weight : ndarray (n_nodes,) weighted cost examples reaching h
    row_weight : ndarray (n_rows,)       weight of each merged cost row
    total_weight : float                 N
    use_node, use_row, use_unit : ndarray (n_uses,)  first-use records
    pair_row, pair_unit : ndarray (n_pairs,)  distinct (row, unit) pairs
    pair_start : ndarray (n_pairs + 1,)  record offsets of each pair (records are
                                         sorted by pair, then node)
    use_pair : ndarray (n_uses,)         pair of each record (derived on demand)
    budget : float or None               hard average-cost budget row (research)
    scale : float                        solver objective = scale * objective
    error_scale : float                  what node errors were divided by: 1 for
                                         classification, var(y) of the error data
                                         for regression (error_term * error_scale
                                         is the mean squared error)
    """

    def __init__(self, forest, costs, *, lam, depth_cost, node_error, tree_error_weight,
                 cost_routing, budget=None, error_scale=1.0):
        self.forest = forest
        self.error_scale = float(error_scale)
        self.costs = costs
        self.lam = float(lam)
        self.depth_cost = float(depth_cost)
        self.node_error = np.asarray(node_error, dtype=float)
        self.tree_error_weight = np.asarray(tree_error_weight, dtype=float)
        if (self.tree_error_weight <= 0).any():
            raise ValueError("error data gives a tree no examples (N_t = 0); pass more data")
        cr = cost_routing
        self.node_cost_weight = cr.node_weight
        self.row_weight = cr.example_weight
        self.row_of_example = cr.row_of_example
        self.total_weight = float(cr.total_weight)
        if self.total_weight <= 0:
            raise ValueError("cost data has zero total weight; pass at least one example")
        # records and pairs come sorted and numbered from the routing (built block by
        # block of rows, never by a global sort): a problem holds at most one int32 node
        # per record and the record offsets of each pair (use_pair, use_row and use_unit
        # are derived on demand). When the routing kept the records' compact source
        # (leaves and first-use table) instead, the exact solver and evaluate read that,
        # and use_node is derived on first use (shared by the variants of with_lam etc.)
        self.leaf_records = getattr(cr, "leaf_records", None)
        use_node, self.pair_start = _compact_records(cr)
        self._records = {"use_node": use_node}
        self.pair_row = cr.pair_row
        self.pair_unit = cr.pair_unit
        self.budget = None if budget is None else float(budget)
        T = forest.n_trees
        self.scale = float(T * self.tree_error_weight.mean())
        self._ancestors = None
        self._uses_per_node = None
        # set by compile_problem(cost_sample=...): the sample the cost term is estimated on
        self.cost_sample = None

    # ------------------------------------------------------------ variants
    def _replace(self, **fields):
        out = copy.copy(self)  # routed data is shared: O(1) in the size of the data
        for name, value in fields.items():
            setattr(out, name, value)
        return out

    def with_lam(self, lam):
        """The same compiled program at another trade-off weight ``lam`` (a new object).

        The routed data is shared with ``self``, so this is O(1).

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> import prune_opt as po
        >>> X, y = load_iris(return_X_y=True)
        >>> p = po.compile_problem(DecisionTreeClassifier(max_depth=2).fit(X, y), X, y)
        >>> (p.lam, p.with_lam(0.5).lam)
        (0.0, 0.5)
        """
        return self._replace(lam=check_nonneg_scalar(lam, "lam"))

    def with_budget(self, budget):
        """The same program with the hard row "average acquisition cost <= budget"
        (``None`` removes it); a new object sharing the routed data."""
        return self._replace(budget=check_nonneg_scalar(budget, "budget", allow_none=True))

    def with_depth_cost(self, depth_cost):
        """The same program with another computation (depth) weight; a new object."""
        return self._replace(depth_cost=check_nonneg_scalar(depth_cost, "depth_cost"))

    @property
    def use_node(self):
        """Global node of each first-use record, sorted by pair, then node (int32;
        derived from ``leaf_records`` on first use when the routing kept only those)."""
        rec = self._records
        if rec["use_node"] is None:
            t0 = time.perf_counter()
            rec["use_node"] = self.leaf_records.use_node()
            # a measure of this machine's speed on these records (what estimates of the
            # work of a pass over them read, see budget._baselines)
            rec["use_node_seconds"] = time.perf_counter() - t0
        return rec["use_node"]

    @property
    def records_held(self):
        """Whether the records are materialised (``use_node`` costs nothing to read)."""
        return self._records["use_node"] is not None

    # ------------------------------------------------------------ sizes
    @property
    def use_pair(self):
        """Pair of each first-use record (derived from ``pair_start``, not stored)."""
        from ..routing._records import pair_ids

        return pair_ids(self.pair_start)

    def pair_blocks(self, block=1 << 22):
        """``(p0, p1, a, b)`` runs of pairs holding about ``block`` records each: pairs
        ``p0:p1`` own the records ``a:b`` (for passes over the records in bounded memory)."""
        starts = self.pair_start
        n_pairs = starts.size - 1
        cuts = np.searchsorted(starts, np.arange(0, int(starts[-1]), block), side="right") - 1
        cuts = np.unique(np.concatenate([cuts[cuts > 0], [0, n_pairs]]))
        return [(int(p0), int(p1), int(starts[p0]), int(starts[p1]))
                for p0, p1 in zip(cuts[:-1], cuts[1:])]

    def pairs_used(self, split_mask):
        """Boolean (n_pairs,): the pairs some split of ``split_mask`` pays (one of
        their first-use nodes stays a split), block by block."""
        mask = np.asarray(split_mask, dtype=bool)
        if not self.records_held:
            return self.leaf_records.pairs_used(mask, self.pair_row, self.pair_unit)
        used = np.zeros(self.n_pairs, dtype=bool)
        starts = self.pair_start
        for p0, p1, a, b in self.pair_blocks():
            run = np.zeros(b - a + 1, dtype=np.int64)
            np.cumsum(mask[self.use_node[a:b]], out=run[1:])
            local = starts[p0:p1 + 1] - a
            used[p0:p1] = run[local[1:]] > run[local[:-1]]
        return used

    @property
    def use_row(self):
        """Merged cost row of each first-use record (derived, not stored)."""
        return self.pair_row[self.use_pair]

    @property
    def use_unit(self):
        """Acquisition unit of each first-use record (derived, not stored)."""
        return self.pair_unit[self.use_pair]

    def uses_per_node(self):
        """Number of first-use records at each node (n_nodes,), cached."""
        if self._uses_per_node is None and not self.records_held:
            self._uses_per_node = self.leaf_records.uses_per_node(self.n_nodes)
        if self._uses_per_node is None:
            counts = np.zeros(self.n_nodes, dtype=np.int64)
            for a in range(0, self.use_node.size, 1 << 22):  # an int64 copy per block only
                counts += np.bincount(self.use_node[a:a + (1 << 22)], minlength=self.n_nodes)
            self._uses_per_node = counts
        return self._uses_per_node

    @property
    def n_trees(self):
        return self.forest.n_trees

    @property
    def n_nodes(self):
        return self.forest.n_nodes

    @property
    def n_uses(self):
        return int(self.pair_start[-1])

    @property
    def n_pairs(self):
        return int(self.pair_row.size)

    @property
    def n_rows(self):
        return int(self.row_weight.size)

    def size(self):
        """Dimensions of the LP: variables, rows and nonzeros (without building it)."""
        f = self.forest
        leaves = f.is_leaf
        nnz_path = int((f.depth[leaves] + 1).sum())
        nnz_use = int(self.uses_per_node() @ (f.depth + 2))
        n_vars = self.n_nodes + self.n_uses + self.n_pairs
        n_eq = int(leaves.sum()) + self.n_uses
        n_ub = self.n_uses + (self.budget is not None)
        nnz = nnz_path + nnz_use + 2 * self.n_uses + (self.n_pairs if self.budget is not None
                                                      else 0)
        return {"n_variables": n_vars, "n_rows": n_eq + n_ub, "n_eq": n_eq, "n_ub": n_ub,
                "nnz": nnz, "n_nodes": self.n_nodes, "n_uses": self.n_uses,
                "n_pairs": self.n_pairs, "n_cost_rows": self.n_rows}

    # ------------------------------------------------------------ coefficients
    def pair_cost(self):
        """Natural-unit cost of each (row, unit) pair: c_u * v_row / N (without lam)."""
        return (self.costs.unit_costs[self.pair_unit] * self.row_weight[self.pair_row]
                / self.total_weight)

    def leaf_error_coef(self):
        """Natural-unit error of each node if it is a leaf: e_h / (T N_t)."""
        T = self.n_trees
        return self.node_error / (T * self.tree_error_weight[self.forest.tree_of_node])

    def closure_weights(self):
        """:meth:`closure_data` without the records: ``constant``, ``split_weight``
        and ``pair_weight`` (the records are ``use_node`` and ``pair_start``)."""
        f = self.forest
        err = self.leaf_error_coef()
        internal = ~f.is_leaf
        gain = np.zeros(self.n_nodes)
        li, ri = f.left[internal], f.right[internal]
        gain[internal] = err[li] + err[ri] - err[internal]
        gain[internal] += self.lam * self.depth_cost * self.node_cost_weight[internal] / (
            self.total_weight)
        roots = f.node_offset[:-1]
        return {"constant": float(err[roots].sum()), "split_weight": gain,
                "pair_weight": self.lam * self.pair_cost()}

    def closure_data(self):
        """The maximum-weight-closure view, in natural units.

        Returns
        -------
        dict with
            ``constant``: objective when every tree is cut to its root;
            ``split_weight``: (n_nodes,) objective change when node h stays a
            split (its parent splitting), zero on leaves;
            ``pair_weight``: (n_pairs,) cost of each (row, unit) pair (times lam);
            ``use_node``, ``use_pair``: closure arcs x_node <= w_pair.
        """
        return {**self.closure_weights(), "use_node": self.use_node,
                "use_pair": self.use_pair}

    # ------------------------------------------------------------ evaluation
    def evaluate(self, split_mask):
        """Objective of a pruning given as a global split mask (True = stays a split).

        This is the single source of truth every solver is checked against.

        Parameters
        ----------
        split_mask : array of bool (n_nodes,)

        Returns
        -------
        ObjectiveBreakdown
        """
        mask = self.forest.check_split_mask(split_mask)
        error_term = self.error_term(mask)
        used = self.pairs_used(mask)
        avg_cost = float(self.pair_cost()[used].sum())
        avg_depth = float(self.node_cost_weight[mask].sum() / self.total_weight)
        obj = error_term + self.lam * (avg_cost + self.depth_cost * avg_depth)
        return ObjectiveBreakdown(objective=obj, error_term=error_term, average_cost=avg_cost,
                                  average_depth=avg_depth, n_splits=int(mask.sum()))

    def error_term(self, mask):
        """The mean per-tree error of the closed split mask ``mask`` (unchecked): the
        error part of :meth:`evaluate`, without the cost, which reads every record."""
        f = self.forest
        pruned_leaf = f.leaves_of(mask)
        err_t = np.bincount(f.tree_of_node[pruned_leaf], weights=self.node_error[pruned_leaf],
                            minlength=self.n_trees)
        return float(np.mean(err_t / self.tree_error_weight))

    # ------------------------------------------------------------ LP form
    def ancestors(self):
        """CSR (n_nodes, n_nodes): row h marks h and all its ancestors."""
        if self._ancestors is None:
            f = self.forest
            rows, cols = [], []
            cur = np.arange(self.n_nodes)
            alive = np.arange(self.n_nodes)
            while alive.size:  # one step per tree level
                rows.append(alive)
                cols.append(cur[alive])
                nxt = f.parent[cur[alive]]
                keep = nxt >= 0
                alive = alive[keep]
                cur[alive] = nxt[keep]
            r, c = np.concatenate(rows), np.concatenate(cols)
            self._ancestors = sp.csr_matrix((np.ones(r.size), (r, c)),
                                            shape=(self.n_nodes, self.n_nodes))
            self._ancestors.sort_indices()
        return self._ancestors

    def variable_slices(self):
        """Index ranges of the z, wt and w blocks in the standard form."""
        a, b = self.n_nodes, self.n_nodes + self.n_uses
        return {"z": slice(0, a), "wt": slice(a, b), "w": slice(b, b + self.n_pairs)}

    def row_slices(self):
        """Index ranges of the row blocks of :meth:`constraint_matrix` (``[A_eq; A_ub]``).

        ``path`` (one per original leaf), ``use`` (first-use equalities),
        ``coupling`` (``wt <= w``) and, with a budget, ``budget`` (one row).
        """
        n_leaves = int(self.forest.is_leaf.sum())
        a = n_leaves
        b = a + self.n_uses
        c = b + self.n_uses
        out = {"path": slice(0, a), "use": slice(a, b), "coupling": slice(b, c)}
        if self.budget is not None:
            out["budget"] = slice(c, c + 1)
        return out

    def objective_vector(self):
        """Scaled objective coefficients c of the standard form."""
        f = self.forest
        z = self.leaf_error_coef() + self.lam * self.depth_cost * f.depth * (
            self.node_cost_weight / self.total_weight)
        c = np.concatenate([z, np.zeros(self.n_uses), self.lam * self.pair_cost()])
        return c * self.scale

    def budget_row(self):
        """Budget row scaled to integer-ish coefficients: sum c_u v_i w <= B N.

        Returns (coefficients over the w block, right-hand side).
        """
        coef = self.costs.unit_costs[self.pair_unit] * self.row_weight[self.pair_row]
        return coef, self.budget * self.total_weight

    def to_standard_form(self):
        """The paper's LP as scipy.sparse data.

        Returns
        -------
        dict with ``c``, ``A_eq``, ``b_eq``, ``A_ub``, ``b_ub``, ``bounds``
        (``(0, 1)`` for all variables) and ``integrality`` (ones), for
        ``min c x  s.t.  A_eq x = b_eq, A_ub x <= b_ub, 0 <= x <= 1``.
        """
        f = self.forest
        anc = self.ancestors()
        nv = self.n_nodes + self.n_uses + self.n_pairs
        leaves = np.flatnonzero(f.is_leaf)
        path = anc[leaves]
        use = anc[self.use_node]
        ident = sp.identity(self.n_uses, format="csr")
        zeros = sp.csr_matrix((self.n_uses, self.n_pairs))
        A_eq = sp.vstack([
            sp.hstack([path, sp.csr_matrix((leaves.size, self.n_uses + self.n_pairs))]),
            sp.hstack([use, ident, zeros]),
        ], format="csr")
        b_eq = np.ones(A_eq.shape[0])
        pair_sel = sp.csr_matrix((-np.ones(self.n_uses), (np.arange(self.n_uses),
                                                          self.use_pair)),
                                 shape=(self.n_uses, self.n_pairs))
        A_ub = sp.hstack([sp.csr_matrix((self.n_uses, self.n_nodes)), ident, pair_sel],
                         format="csr")
        b_ub = np.zeros(self.n_uses)
        if self.budget is not None:
            coef, rhs = self.budget_row()
            row = sp.hstack([sp.csr_matrix((1, self.n_nodes + self.n_uses)),
                             sp.csr_matrix(coef[None, :])], format="csr")
            A_ub = sp.vstack([A_ub, row], format="csr")
            b_ub = np.append(b_ub, rhs)
        return {"c": self.objective_vector(), "A_eq": A_eq, "b_eq": b_eq, "A_ub": A_ub,
                "b_ub": b_ub, "bounds": (0.0, 1.0), "integrality": np.ones(nv)}

    def constraint_matrix(self):
        """Stacked constraint matrix ``[A_eq; A_ub]`` (CSR, entries in {-1, 0, 1}
        except for a budget row)."""
        sf = self.to_standard_form()
        return sp.vstack([sf["A_eq"], sf["A_ub"]], format="csr")

    def split_mask_from_lp(self, x):
        """Turn an LP point into a split mask and its max fractionality.

        Node h stays a split iff it is internal and no z on its root path
        (inclusive) is set; fractional points are rounded at 1/2 after the
        fractionality is recorded.
        """
        x = np.asarray(x, dtype=float)
        frac = float(np.max(np.minimum(np.abs(x - np.round(x)), 1.0))) if x.size else 0.0
        z = x[: self.n_nodes]
        covered = self.ancestors() @ z
        mask = (covered < 0.5) & ~self.forest.is_leaf
        # enforce closure after rounding (a no-op on integral points)
        mask = close_under_parents(self.forest, mask)
        return mask, frac

    def lp_point(self, split_mask):
        """The LP point (z, wt, w) of a pruning (for checks and warm starts)."""
        mask = np.asarray(split_mask, dtype=bool)
        z = self.forest.leaves_of(mask).astype(float)
        wt = mask[self.use_node].astype(float)
        w = np.zeros(self.n_pairs)
        np.maximum.at(w, self.use_pair, wt)
        return np.concatenate([z, wt, w])

    def __repr__(self):
        s = self.size()
        return (f"PruningProblem(trees={self.n_trees}, nodes={s['n_nodes']}, "
                f"cost_rows={s['n_cost_rows']}, uses={s['n_uses']}, lam={self.lam:g})")


def _compact_records(cr):
    """``(use_node, pair_start)`` of a routing: records sorted by (pair, node) and the
    record offsets of each pair (a routing that gives each record's pair is sorted
    first when it is not already)."""
    if cr.use_node is None:  # kept as leaf records: sorted and counted by the routing
        return None, np.asarray(cr.pair_start, dtype=np.int64)
    use_node = np.asarray(cr.use_node)
    if use_node.dtype != np.int32 and use_node.size and int(use_node.max()) < 2**31:
        use_node = use_node.astype(np.int32)
    n_pairs = int(np.asarray(cr.pair_row).size)
    if cr.pair_start is not None:
        return use_node, np.asarray(cr.pair_start, dtype=np.int64)
    pair = np.asarray(cr.use_pair)
    step = 1 << 22
    ordered = all(_sorted_block(pair[a:a + step + 1], use_node[a:a + step + 1])
                  for a in range(0, max(pair.size - 1, 0), step))
    if not ordered:
        order = np.lexsort((use_node, pair))
        use_node, pair = use_node[order], pair[order]
    counts = np.zeros(n_pairs, dtype=np.int64)
    for a in range(0, pair.size, step):  # a sorted block's pairs are one contiguous range
        block = pair[a:a + step]
        lo = int(block[0])
        counts[lo:int(block[-1]) + 1] += np.bincount(block - lo)
    starts = np.zeros(n_pairs + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return use_node, starts


def _sorted_block(pair, node):
    dp, dn = np.diff(pair), np.diff(node)
    return not ((dp < 0).any() or ((dp == 0) & (dn <= 0)).any())


def close_under_parents(forest, mask):
    """Largest sub-mask of ``mask`` closed under parents (a split needs its parent split);
    ``mask`` may also be a stack of masks, (k, n_nodes).  A copy; one pass per depth
    level (:func:`~prune_opt.routing._records.node_levels`, cached per forest)."""
    from ..routing._records import node_levels

    mask = np.array(mask, dtype=bool)
    for at, parent in node_levels(forest):  # shallowest first
        mask[..., at] &= mask[..., parent]
    return mask


@dataclass
class ErrorRouting:
    """Error-data routing: node error e_h and N_t per tree.

    ``error_scale`` is what the node errors were divided by: 1 for
    classification (counts of errors), the target variance of the error data
    for regression (so ``node_error * error_scale`` is a sum of squared errors).
    ``forest``: the forest whose node values the errors assume when they are not
    the routed forest's own (a boosted model's values fitted by the node-value
    rule, see :mod:`prune_opt.program._boosted`); None otherwise.
    """

    node_error: np.ndarray
    node_weight: np.ndarray
    tree_weight: np.ndarray
    error_scale: float = 1.0
    forest: object = None
