"""Hard-budget search: ``min J(s)  s.t.  average acquisition cost C(s) <= B``.

``J`` is the problem's objective (error term, plus ``lam`` times cost and depth
when the problem carries a ``lam``).  The search keeps a certified lower bound
and the best pruning that fits, phase by phase, until the gap closes or the
time runs out (see ``docs/math/budget.md``):

1. **Lagrangian dual** -- ``g(mu) = min_s J(s) + mu (C(s) - B)`` by exact
   min-cuts, maximised over ``mu`` by the breakpoint search narrowed to B;
   every min-cut gives a certified ``g(mu)`` and possibly a fitting pruning;
2. **primal heuristics** -- tree-wise mixing of the two hull vertices around
   B, greedy unit removal with min-cut re-optimisation, the baselines
   (GreedyPrune, cost-complexity pruning, fewer trees, impurity thresholds)
   as seeds, then local search with exact one-tree moves from the best seeds;
3. **binary program** -- OR-Tools CP-SAT on the closure formulation,
   warm-started from the incumbent, for the time left; its bound tightens the
   Lagrangian one.

One closure graph per problem, re-solved at any budget multiplier.

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

Backend ``"budget"``: the hard-budget search on a problem with a budget row.

Solves ``min J(s)  s.t.  average acquisition cost C(s) <= budget`` for a
:class:`~prune_opt.PruningProblem` carrying ``budget``
(``problem.with_budget(B)``), where ``J`` is the problem's own objective;
without a budget row it solves the plain program exactly (one min-cut).
The search (Lagrangian bound by min-cuts, primal heuristics seeded by the
registered baseline families, CP-SAT warm-started from the incumbent) lives in
:mod:`prune_opt.budget._search`, below the user-facing
:mod:`prune_opt.budget`; this module adapts it to the solver interface.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from .._clock import UNLIMITED, Deadline
from .._validation import fits_budget
from ..objectives._descent import ProblemState, descend, unit_nodes, without_unit
from ..solvers._base import Solver, SolveResult
from ..solvers._registry import register_solver
from ..solvers.mincut import (
    INFINITE,
    SINK,
    SOURCE,
    MinCutSolver,
    build_closure_graph,
    integer_capacities,
    unprofitable_nodes,
)
from ._baselines import best_in_nested, mask_families

__all__ = ["BudgetSearchResult", "budget_search", "GAP_TOL", "MultiplierClosure", "BudgetSearchSolver"]


# a relative gap at or below this is reported as "optimal"
GAP_TOL = 1e-9


# CP-SAT model building from Python (one call per implication), measured ~1.5e-5 s/term
MIP_BUILD_SECONDS_PER_TERM = 2e-5


@dataclass
class BudgetSearchResult:
    """Outcome of :func:`budget_search` (natural units).

    Attributes
    ----------
    split_mask : ndarray of bool
        The best pruning found whose average cost fits the budget.
    objective, average_cost : float
    bound : float
        Certified lower bound on the optimum (max of Lagrangian and MIP bounds).
    gap : float
        ``(objective - bound) / max(|objective|, 1e-12)``.
    status : str
        ``"optimal"`` (gap <= ``GAP_TOL``) or ``"time_limit"``.
    found_by : str
        Heuristic that produced the incumbent.
    info : dict
        ``phase_seconds``, ``lagrangian`` (multiplier, bound, hull vertices),
        ``mip`` details, ``candidates`` (best objective per heuristic).
    """

    split_mask: np.ndarray
    objective: float
    average_cost: float
    bound: float
    gap: float
    status: str
    found_by: str
    info: dict = field(default_factory=dict)


class _Incumbent:
    """Best fitting pruning seen so far, and the best objective per source."""

    def __init__(self, problem, budget):
        self.problem, self.budget = problem, budget
        self.mask, self.objective, self.source = None, math.inf, None
        self.by_source = {}
        self.best_of = {}

    def offer(self, mask, source):
        if mask is None:
            return False
        bd = self.problem.evaluate(mask)
        if not fits_budget(bd.average_cost, self.budget):
            return False
        if bd.objective < self.by_source.get(source, math.inf):
            self.by_source[source] = bd.objective
            self.best_of[source] = mask.copy()
        if bd.objective < self.objective - 1e-15:
            self.mask, self.objective, self.source = mask.copy(), bd.objective, source
            return True
        return False


def _line(bd, mu):
    return bd.objective + mu * bd.average_cost


def lagrangian_phase(problem, closure, budget, inc, deadline):
    """Maximise the dual ``g(mu)`` by breakpoint search; returns its summary dict.

    ``a`` is the costlier (over budget) and ``b`` the cheaper (fitting) end of
    the bracket; at exit both are optimal at ``mu_star``.
    """
    mask0, bound0 = closure.solve(0.0)
    bd0 = problem.evaluate(mask0)
    out = {"bound": bound0, "mu": 0.0, "costlier": None, "n_solves": 1}
    if fits_budget(bd0.average_cost, budget):
        inc.offer(mask0, "unconstrained")
        return out
    a = (mask0, bd0)
    root = np.zeros(problem.n_nodes, dtype=bool)
    b = (root, problem.evaluate(root))
    inc.offer(root, "root-only")
    mu = 0.0
    last = 0.0  # seconds of the last solve: a max-flow cannot stop half-way, so one
    for _ in range(200):  # that would end past the deadline is not started
        if not deadline.fits(last):
            break
        mu = max((b[1].objective - a[1].objective) / (a[1].average_cost - b[1].average_cost),
                 0.0)
        t0 = time.perf_counter()
        mask, bound = closure.solve(mu)
        last = time.perf_counter() - t0
        out["n_solves"] += 1
        if bound - mu * budget > out["bound"]:
            out["bound"], out["mu"] = bound - mu * budget, mu
        bd = problem.evaluate(mask)
        ref = _line(a[1], mu)
        below = _line(bd, mu) < ref - 1e-12 * max(1.0, abs(ref))
        inside = b[1].average_cost < bd.average_cost < a[1].average_cost
        if not (below and inside):
            break
        if fits_budget(bd.average_cost, budget):
            b = (mask, bd)
            inc.offer(mask, "hull-vertex")
        else:
            a = (mask, bd)
    out.update(costlier=a[0], cheaper=b[0], mu_star=mu,
               vertices={"costlier": _vertex(a[1]), "cheaper": _vertex(b[1])})
    return out


def _vertex(bd):
    return {"objective": bd.objective, "error_term": bd.error_term,
            "average_cost": bd.average_cost, "n_splits": bd.n_splits}


def heuristic_phase(problem, closure, budget, lag, inc, deadline, timer, baselines=None):
    """Mixing, baselines, local search from the best seeds, then greedy unit removal
    (most valuable first, so a short time limit keeps the best of them)."""
    if lag["costlier"] is not None:
        with _timed(timer, "mixing"):
            inc.offer(tree_mixing(problem, lag["cheaper"], lag["costlier"], budget, deadline),
                      "mixing")
    if not deadline.expired():
        with _timed(timer, "baselines"):
            for name, mask in baseline_masks(problem, budget, deadline, baselines).items():
                inc.offer(mask, f"baseline:{name}")
    moves = 0
    with _timed(timer, "local-search"):
        for source, mask in _seed_order(inc):
            if deadline.expired():
                break
            improved, n = block_descent(problem, mask, budget, deadline)
            moves += n
            inc.offer(improved, f"local-search({source})")
    if lag["costlier"] is not None and not deadline.expired():
        with _timed(timer, "greedy-removal"):
            # re-optimise below the bracket's multiplier: at mu_star itself the
            # min-cut breaks the tie towards the cheaper (often root-only) vertex
            removal = greedy_unit_removal(problem, closure, lag["costlier"],
                                          0.5 * lag["mu_star"], budget, deadline)
            if inc.offer(removal, "greedy-removal"):
                polished, n = block_descent(problem, removal, budget, deadline)
                moves += n
                inc.offer(polished, "local-search(greedy-removal)")
    return {"local_search_moves": moves}


def _seed_order(inc, n_seeds=3):
    """The best pruning of each heuristic, best first, distinct, at most ``n_seeds``
    (local search from the incumbent is worth most; others diversify)."""
    order = sorted(inc.by_source, key=inc.by_source.get)
    out, seen = [], set()
    for source in order:
        key = inc.best_of[source].tobytes()
        if key not in seen and inc.best_of[source].any():
            seen.add(key)
            out.append((source, inc.best_of[source]))
    return out[:n_seeds]


# ------------------------------------------------------------ primal heuristics
def tree_mixing(problem, cheap, costly, budget, deadline=UNLIMITED):
    """Start from ``cheap`` (fits) and copy whole trees of ``costly`` while the budget holds.

    Trees are taken in order of objective saved per cost added (each measured
    alone against ``cheap``); a tree is kept only when the result still fits
    and its objective drops.  Past ``deadline`` (a :class:`~prune_opt.Deadline`)
    no further tree is measured or copied, and the result is the mix reached by
    then (it fits).

    Returns
    -------
    ndarray of bool
        A closed split mask of cost <= ``budget``.
    """
    f = problem.forest
    state = ProblemState(problem, cheap)
    lam = problem.lam
    base_cost = state.cost()
    local = np.array([state.local_value(t) for t in range(f.n_trees)])
    gain = np.full(f.n_trees, -np.inf)  # a tree not measured is not copied
    differs = [t for t in range(f.n_trees)
               if not np.array_equal(cheap[f.tree_slice(t)], costly[f.tree_slice(t)])]
    for t in differs:
        if deadline.expired():
            break
        sl = f.tree_slice(t)
        old = state.mask[sl].copy()
        state.set_tree(t, costly[sl])
        d_cost = state.cost() - base_cost
        d_obj = state.local_value(t) - local[t] + lam * d_cost
        state.set_tree(t, old)
        gain[t] = -d_obj / d_cost if d_cost > 0 else (np.inf if d_obj < 0 else -np.inf)
    value = local.sum() + lam * base_cost
    for t in np.argsort(-gain, kind="stable"):
        if gain[t] <= 0 or deadline.expired():
            break
        sl = f.tree_slice(t)
        old = state.mask[sl].copy()
        state.set_tree(t, costly[sl])
        new_local = state.local_value(t)
        new_value = value - local[t] + new_local + lam * (state.cost() - base_cost)
        if fits_budget(state.cost(), budget) and new_value < value:
            value, base_cost, local[t] = new_value, state.cost(), new_local
        else:
            state.set_tree(t, old)
    return state.mask.copy()


def greedy_unit_removal(problem, closure, start, mu, budget, deadline):
    """Forbid units until the min-cut optimum at ``mu`` fits the budget.

    Each round ranks the units still paid by the objective increase per cost
    saved when every node needing the unit is cut (with its subtree), forbids
    the best units until their summed savings cover half the excess (at least
    one), and re-solves ``min J + mu * C`` exactly over the remaining nodes.

    Returns
    -------
    ndarray of bool or None
        A fitting mask, or None when the deadline came first.
    """
    users = unit_nodes(problem.forest, problem.costs.feature_units)
    forbidden = np.zeros(problem.n_nodes, dtype=bool)
    mask = start
    bd = problem.evaluate(mask)
    while not fits_budget(bd.average_cost, budget):
        if deadline.expired():
            return None
        ranked = []
        for u in np.flatnonzero(users[mask].getnnz(axis=0)):
            cand = without_unit(problem.forest, mask, users, u)
            c = problem.evaluate(cand)
            saved = bd.average_cost - c.average_cost
            if saved > 0:
                ranked.append(((c.objective - bd.objective) / saved, saved, u))
        if not ranked:
            return None
        ranked.sort()
        excess, total = bd.average_cost - budget, 0.0
        for _, saved, u in ranked:
            forbidden[users.indices[users.indptr[u]:users.indptr[u + 1]]] = True
            total += saved
            if total >= 0.5 * excess:
                break
        mask, _ = closure.solve(mu, forbidden)
        bd = problem.evaluate(mask)
    return mask


def block_descent(problem, mask, budget, deadline, max_sweeps=20):
    """Local search: re-optimise one tree at a time, the others fixed, within the budget
    (:func:`~prune_opt.objectives._descent.descend` on the paper's objective).

    Returns
    -------
    (mask, n_moves)
    """
    run = descend(ProblemState(problem, mask), mask, budget, max_sweeps=max_sweeps,
                  deadline=deadline)
    return run["mask"], sum(run["changes"])


def baseline_masks(problem, budget, deadline, names=None):
    """The best fitting pruning of each registered baseline: ``{name: mask or None}``.

    Each baseline is a nested family of prunings (see
    :data:`~prune_opt.budget._baselines.MASK_FAMILIES`); the best one
    that fits is found by bisection on cost.  GreedyPrune is skipped once the
    deadline has passed.
    """
    def score(mask):
        b = problem.evaluate(mask)
        return b.objective, b.average_cost

    out = {}
    for name, masks in mask_families(problem, deadline, names).items():
        best = best_in_nested(masks, budget, score)
        out[name] = None if best is None else best[2]
    return out


@contextmanager
def _timed(seconds, name):
    """Add the seconds the ``with`` body takes to ``seconds[name]``."""
    t0 = time.perf_counter()
    yield
    seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - t0


def budget_search(problem, budget, *, time_limit=30.0, mip=True, mip_workers=1,
                  verbose=False, baselines=None, starts=None):
    """Best pruning of ``problem`` whose average acquisition cost is at most ``budget``.

    Parameters
    ----------
    problem : PruningProblem
        Compiled problem; its ``lam`` and ``depth_cost`` define the objective
        ``J`` (``lam = 0``: the error term alone).
    budget : float
        Largest average acquisition cost on the problem's cost rows.
    time_limit : float, Deadline or None
        Seconds for the whole search (None: run the binary program to optimality).
    mip : bool
        Run the CP-SAT phase.
    mip_workers : int
        CP-SAT search workers.
    verbose : bool
    baselines : list of str, optional
        Registered baseline families to seed from (default: all).
    starts : list of (str, ndarray), optional
        Named split masks offered as candidates before the heuristics
        (``found_by`` is the name of the one returned); one that fits and scores
        best is the incumbent the local search and CP-SAT start from.

    Returns
    -------
    BudgetSearchResult

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> p = po.compile_problem(rf, X, y, costs=[1, 1, 5, 5])
    >>> r = budget_search(p, 3.0, time_limit=10)
    >>> r.status, bool(r.average_cost <= 3.0), bool(r.bound <= r.objective)
    ('optimal', True, True)
    """
    if not (isinstance(budget, (int, float, np.floating, np.integer))
            and math.isfinite(budget) and budget >= 0):
        raise ValueError(f"budget must be a finite number >= 0, got {budget!r}; without a "
                         "budget solve the plain program (solver='mincut')")
    t_start = time.perf_counter()
    deadline = Deadline.of(time_limit)
    timer, inc = {}, _Incumbent(problem, budget)
    with _timed(timer, "lagrangian"):
        closure = MultiplierClosure(problem)
        lag = lagrangian_phase(problem, closure, budget, inc, deadline)
    for name, mask in starts or ():
        inc.offer(problem.forest.check_split_mask(mask, name=f"starts[{name!r}]"), name)
    bound = lag["bound"]
    info = {"lagrangian": {"bound": lag["bound"], "mu": lag["mu"],
                           "n_solves": lag["n_solves"],
                           "hull_vertices": lag.get("vertices")}}
    if _gap(inc.objective, bound) > GAP_TOL:
        info.update(heuristic_phase(problem, closure, budget, lag, inc, deadline, timer,
                                    baselines))
    mip_bound = None
    if mip and _gap(inc.objective, bound) > GAP_TOL and not deadline.expired():
        with _timed(timer, "mip"):
            mip_bound, info["mip"] = _mip_phase(problem, budget, inc, deadline, mip_workers,
                                                verbose)
    if mip_bound is not None:
        bound = max(bound, mip_bound)
    bound = min(bound, inc.objective)
    gap = _gap(inc.objective, bound)
    info.update(phase_seconds=timer, candidates=dict(inc.by_source),
                seconds=time.perf_counter() - t_start, n_min_cuts=closure.n_solves)
    bd = problem.evaluate(inc.mask)
    return BudgetSearchResult(
        split_mask=inc.mask, objective=inc.objective, average_cost=bd.average_cost,
        bound=float(bound), gap=gap, status="optimal" if gap <= GAP_TOL else "time_limit",
        found_by=inc.source, info=info)


def _gap(objective, bound):
    return max(objective - bound, 0.0) / max(abs(objective), 1e-12)


def _mip_terms(problem):
    """Variables plus implications of the CP-SAT program (what its build time scales
    with), counted without building it: a pair with a single first-use record, or
    of zero cost, is folded into its node."""
    n_rec = np.bincount(problem.use_pair, minlength=problem.n_pairs)
    raw = problem.costs.unit_costs[problem.pair_unit] * problem.row_weight[problem.pair_row]
    multi = (n_rec > 1) & (raw > 0)
    return int(np.count_nonzero(~problem.forest.is_leaf) + multi.sum() + n_rec[multi].sum())


def _mip_phase(problem, budget, inc, deadline, workers, verbose):
    build = MIP_BUILD_SECONDS_PER_TERM * _mip_terms(problem)
    if not deadline.fits(build + 0.5):
        return None, {"status": "skipped", "reason": f"{deadline.left():.2g}s left, model "
                      f"build needs about {build:.2g}s"}
    from ._mip import BudgetProgram

    prog = BudgetProgram(problem, budget)
    out = prog.solve(inc.mask, deadline, workers, verbose)
    inc.offer(out.pop("mask"), "cp-sat")
    bound = out["bound"]
    if bound is not None and not math.isfinite(bound):
        bound = None
    return bound, out


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


@register_solver
class BudgetSearchSolver(Solver):
    """Hard-budget search with a certified gap (OR-Tools max-flow and CP-SAT).

    Every returned pruning fits the budget; ``bound`` is the best of the
    Lagrangian dual (exact min-cuts) and the CP-SAT bound, so the gap is
    certified.  ``time_limit`` bounds the whole search (None: run the binary
    program to optimality); status is ``"optimal"`` when the gap is closed,
    else ``"time_limit"``.

    Options: ``mip`` (run the CP-SAT phase, default True), ``mip_workers``
    (CP-SAT search workers, default 1), ``baselines`` (names of the registered
    baseline families to seed from; default all).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> problem = po.compile_problem(rf, X, y, costs=[1, 1, 5, 5]).with_budget(3.0)
    >>> pruned = po.solve(problem, solver="budget", time_limit=10)
    >>> bool(pruned.breakdown.average_cost <= 3.0), pruned.solve_info["status"]
    (True, 'optimal')
    """

    name = "budget"
    kind = "closure"
    requires = ("ortools.graph.python.max_flow", "ortools.sat.python.cp_model")
    install_hint = "pip install ortools>=9.8"
    options = {"mip": True, "mip_workers": 1, "baselines": None, "starts": None}
    exact = True
    mip = True
    matrix_based = False
    reference_only = False
    supports_budget_row = True
    auto_rank = None
    # CP-SAT's status names -> this project's statuses (the search reports
    # "optimal" only when its certified gap is closed)
    STATUS_MAP = {"OPTIMAL": "optimal", "FEASIBLE": "time_limit", "UNKNOWN": "time_limit"}

    def search(self, problem, budget, *, time_limit, verbose=False):
        """:func:`~prune_opt.budget._search.budget_search` with this solver's
        options (checked as ``solve(solver="budget")`` checks them), without the
        result wrapping of :func:`prune_opt.solve`: a ``BudgetSearchResult``."""
        workers = self.params["mip_workers"]
        if not isinstance(workers, int) or workers < 1:
            raise ValueError(f"solver_options: mip_workers must be an int >= 1, got {workers!r}")
        return budget_search(problem, budget, time_limit=time_limit,
                             mip=bool(self.params["mip"]), mip_workers=workers,
                             verbose=verbose, baselines=self.params["baselines"],
                             starts=self.params["starts"])

    def _solve(self, problem, *, deadline, verbose):
        if problem.budget is None:
            # without a budget row the program is the plain one: one exact min-cut
            result = MinCutSolver().solve(problem, time_limit=deadline, verbose=verbose)
            result.info["note"] = "no budget row: solved as the plain program by mincut"
            return result
        r = self.search(problem, problem.budget, time_limit=deadline, verbose=verbose)
        info = dict(r.info, found_by=r.found_by, average_cost=r.average_cost,
                    budget=problem.budget)
        return SolveResult(split_mask=r.split_mask, objective=r.objective, bound=r.bound,
                           status=r.status, seconds=0.0, info=info)

