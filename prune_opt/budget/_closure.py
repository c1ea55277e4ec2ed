"""One closure graph per problem, re-solved at any budget multiplier.

The budget search solves ``min J(s) + mu * C(s)`` many times, with
``J = E + lam * (C + depth_cost * D)`` the problem's own objective and
``C`` the average acquisition cost, sometimes with some nodes forbidden
(forced to be leaves).  The closure graph's *structure* (nodes, paid pairs,
arcs) does not depend on ``mu``; only vertex weights do::

    node weight = split_weight(lam) + (lam + mu) * folded pair cost   (forbidden: +inf)
    pair weight = (lam + mu) * merged pair cost

so the graph is reduced once (:func:`~prune_opt.solvers.mincut.build_closure_graph`
on the cost-only program) and every solve is one max-flow.  The reductions that hold
for every ``mu >= 0`` apply: prefix hubs (weight-free), and leaving out the nodes
whose subtree cannot pay for itself on the split weights of ``J`` alone
(:func:`~prune_opt.solvers.mincut.unprofitable_nodes`: costs, the multiplier's
included, and a forbidden node's extra weight are never negative, so some optimum
cuts them at every ``mu``, forbidden nodes or not).
"""

from __future__ import annotations

import numpy as np

from ..solvers.mincut import (
    INFINITE,
    SINK,
    SOURCE,
    build_closure_graph,
    integer_capacities,
    unprofitable_nodes,
)

__all__ = ["MultiplierClosure"]


class MultiplierClosure:
    """Min-cut solves of ``min J + mu * C`` over prunings of one problem.

    Parameters
    ----------
    problem : PruningProblem
        Its ``lam`` and ``depth_cost`` define ``J``; its ``budget`` is ignored.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> p = po.compile_problem(rf, X, y, costs=[1, 1, 5, 5])
    >>> mask, bound = MultiplierClosure(p).solve(0.0)
    >>> bool(abs(p.evaluate(mask).objective - bound) < 1e-9)
    True
    """

    def __init__(self, problem):
        self.problem = problem
        zero = np.zeros(problem.n_nodes)
        cost_only = problem._replace(node_error=zero, lam=1.0, depth_cost=0.0)
        cd = problem.closure_weights()
        g = build_closure_graph(cost_only, prefix_hubs=True,
                                drop=unprofitable_nodes(problem.forest, cd["split_weight"]))
        self.graph = g
        n_int = g.internal_nodes.size
        self.n_internal = n_int
        self.node_cost = g.weight[:n_int].copy()
        self.pair_cost = g.weight[n_int:].copy()  # hubs (weight 0) first, then pairs
        self.node_base = cd["split_weight"][g.internal_nodes].astype(float)
        self.constant = float(cd["constant"])
        self.n_solves = 0

    def weights(self, mu, forbidden=None):
        """Vertex weights at multiplier ``mu`` (forbidden internal nodes get +big)."""
        lam = self.problem.lam + float(mu)
        w = np.concatenate([self.node_base + lam * self.node_cost, lam * self.pair_cost])
        if forbidden is not None:
            big = float(np.abs(w).sum()) + 1.0
            w[: self.n_internal][forbidden[self.graph.internal_nodes]] = big
        return w

    def solve(self, mu, forbidden=None):
        """Optimal split mask of ``min J + mu * C`` and a certified lower bound on it.

        Parameters
        ----------
        mu : float
            Multiplier of the average acquisition cost (added to the problem's ``lam``).
        forbidden : ndarray of bool (n_nodes,), optional
            Nodes that must not stay splits.  The bound is then the bound of the
            restricted program.

        Returns
        -------
        (mask, bound)
        """
        g = self.graph
        W, K, slack = integer_capacities(self.weights(mu, forbidden))
        v = np.arange(2, g.n_vertices, dtype=np.int32)
        neg, pos = W < 0, W > 0
        tails = np.concatenate([np.full(int(neg.sum()), SOURCE, np.int32), v[pos], g.inf_tail])
        heads = np.concatenate([v[neg], np.full(int(pos.sum()), SINK, np.int32), g.inf_head])
        caps = np.concatenate([-W[neg], W[pos], np.full(g.inf_tail.size, INFINITE, np.int64)])
        self.n_solves += 1
        if not neg.any():  # nothing pays for itself: every tree cut to its root
            return np.zeros(self.problem.n_nodes, dtype=bool), self.constant - slack
        from ortools.graph.python import max_flow

        flow = max_flow.SimpleMaxFlow()
        flow.add_arcs_with_capacity(tails, heads, caps)
        if flow.solve(SOURCE, SINK) != flow.OPTIMAL:
            raise RuntimeError("OR-Tools max-flow did not reach optimality")
        cut = int(flow.optimal_flow())
        mask = g.mask_from_source_side(flow.get_source_side_min_cut(), self.problem.n_nodes)
        bound = self.constant + (cut + int(W[neg].sum())) / K - slack
        return mask, float(bound)
