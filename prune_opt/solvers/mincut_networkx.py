"""Reference min-cut backend on networkx (pure Python; small problems only).

Builds the same reduced closure graph as ``mincut`` (see
:func:`prune_opt.solvers.mincut.build_closure_graph`) and cuts it with
``networkx.minimum_cut``.  Capacities are the same power-of-two-scaled integers
as ``mincut`` (:func:`prune_opt.solvers.mincut.integer_capacities`), as Python
ints: networkx's cut partition compares flows with capacities for equality,
which float capacities break (seen: the right cut value with the wrong source
side).  The arcs that encode "chosen implies chosen" carry no capacity
(networkx treats them as infinite).
It exists to cross-check ``mincut`` with an independent max-flow code.
"""

from __future__ import annotations

import numpy as np

from ._base import Solver, SolveResult
from ._registry import register_solver
from .mincut import SINK, SOURCE, build_closure_graph, integer_capacities

__all__ = ["NetworkxMinCutSolver"]

FLOW_FUNCS = ("preflow_push", "edmonds_karp", "shortest_augmenting_path", "dinitz",
              "boykov_kolmogorov")


@register_solver
class NetworkxMinCutSolver(Solver):
    """Max-weight closure cut by ``networkx.minimum_cut`` (reference backend).

    Options: ``flow_func`` (one of ``preflow_push``, ``edmonds_karp``,
    ``shortest_augmenting_path``, ``dinitz``, ``boykov_kolmogorov``; default
    ``preflow_push``) and ``max_arcs`` (refuse larger graphs, default 200,000).
    The bound is certified as for ``mincut`` (integer cut value over the scale
    factor, minus the rounding slack).  ``time_limit`` is not
    supported by networkx; the solve always runs to the end.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    >>> problem = po.compile_problem(rf, X, y, lam=0.01)
    >>> a = po.solve(problem, solver="mincut-networkx")
    >>> b = po.solve(problem, solver="mincut")
    >>> abs(a.objective - b.objective) <= 1e-9 * abs(b.objective)
    True
    """

    name = "mincut-networkx"
    kind = "closure"
    requires = ("networkx",)
    install_hint = "pip install networkx>=3.0"
    options = {"flow_func": "preflow_push", "max_arcs": 200_000}
    exact = True
    mip = False
    matrix_based = False
    reference_only = True
    supports_budget_row = False
    auto_rank = None
    STATUS_MAP = {"optimal": "optimal"}  # networkx's cut always runs to the end

    def _solve(self, problem, *, deadline, verbose):
        import networkx as nx
        from networkx.algorithms import flow as nxflow

        name = self.params["flow_func"]
        if name not in FLOW_FUNCS:
            raise ValueError(f"solver_options: flow_func={name!r} is unknown; choose from "
                             f"{list(FLOW_FUNCS)}")
        g = build_closure_graph(problem)
        limit = int(self.params["max_arcs"])
        if g.n_arcs > limit:
            raise ValueError(
                f"solver='mincut-networkx' is a pure-Python reference limited to {limit:,} "
                f"arcs, but this problem needs {g.n_arcs:,}; use solver='mincut' (the same "
                "cut on OR-Tools, exact and fast)"
            )
        w, K, slack = integer_capacities(g.weight)
        v = np.arange(2, g.n_vertices)
        G = nx.DiGraph()
        G.add_nodes_from([SOURCE, SINK])
        G.add_nodes_from(v.tolist())
        neg, pos = w < 0, w > 0
        G.add_edges_from((SOURCE, int(a), {"capacity": -int(c)})
                         for a, c in zip(v[neg], w[neg]))
        G.add_edges_from((int(a), SINK, {"capacity": int(c)}) for a, c in zip(v[pos], w[pos]))
        G.add_edges_from(zip(g.inf_tail.tolist(), g.inf_head.tolist()))  # infinite
        cut, (source_side, _) = nx.minimum_cut(G, SOURCE, SINK,
                                               flow_func=getattr(nxflow, name))
        mask = g.mask_from_source_side(sorted(source_side), problem.n_nodes)
        objective = problem.evaluate(mask).objective
        # integer cut value -> certified bound on the real objective (see mincut)
        bound = g.constant + (int(cut) + int(w[neg].sum())) / K - slack
        if objective > bound + 1e-9 * max(1.0, abs(objective)) + 2 * slack:
            raise RuntimeError(
                f"networkx returned a cut of value {bound!r} but a source side worth "
                f"{objective!r}; flow_func={name!r} is numerically unreliable here")
        if verbose:
            print(f"[mincut-networkx] {g.n_vertices:,} vertices, {g.n_arcs:,} arcs, "
                  f"flow_func={name}")
        return SolveResult(split_mask=mask, objective=float(objective),
                           bound=float(min(bound, objective)), status="optimal", seconds=0.0,
                           max_fractionality=0.0,
                           info={"graph": dict(g.stats, n_vertices=int(g.n_vertices),
                                               n_arcs=g.n_arcs), "flow_func": name})
