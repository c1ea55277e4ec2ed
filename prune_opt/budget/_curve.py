"""Exact error-cost trade-off curve of BudgetPrune by breakpoint search.

For a fixed pruning ``s`` the objective is a line in ``lam``::

    objective_s(lam) = E_s + lam * C_s

with ``E_s`` the error term and ``C_s`` the cost term (average acquisition
cost plus ``depth_cost`` times the average depth).  The optimal objective is
the lower envelope of these lines, a concave piecewise-linear function of
``lam``; its pieces are the vertices of the lower convex hull of the points
``(C_s, E_s)`` and its kinks are the breakpoints.  The optimal cost is a
non-increasing step function of ``lam`` that only changes at breakpoints.

The search (Eisner and Severance's method for parametric programs) solves at
``lam = 0`` and at a ``lam`` large enough to give the cheapest pruning, then
at the ``lam`` where the two lines cross: either a pruning strictly below both
lines appears (a new hull vertex, and both halves are searched again) or the
crossing is a breakpoint.  Every hull vertex costs one solve and every
breakpoint one more, so the whole curve takes about ``2 * n_points`` solves
of one compiled problem (re-weighted, never re-routed).

budget_curve: fit_budget on a grid of budgets, as curve rows beside the hull's.
"""

from __future__ import annotations

import math

import numpy as np

from .._frames import records_frame
from .._validation import check_labels
from ..program._compile import compile_problem
from ..program._problem import PruningProblem
from ..solvers._solve import solve

__all__ = ["problem_at_lam", "HullPoint", "LagrangianHull", "tradeoff_curve", "lam_upper_bound"]


def problem_at_lam(problem, lam):
    """A copy of a compiled :class:`~prune_opt.PruningProblem` at another ``lam``.

    The routed data (errors, first-use records, cost rows) is shared with the
    original, so this is O(1) in the size of the data.

    Parameters
    ----------
    problem : PruningProblem
    lam : float
        New trade-off weight (>= 0).

    Returns
    -------
    PruningProblem

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> from prune_opt.budget import problem_at_lam
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> p0 = po.compile_problem(rf, X, y)
    >>> p1 = problem_at_lam(p0, 0.01)
    >>> (p0.lam, p1.lam, p1.node_error is p0.node_error)
    (0.0, 0.01, True)
    """
    return problem.with_lam(lam)


def _cost_term(problem, breakdown):
    return breakdown.average_cost + problem.depth_cost * breakdown.average_depth


def lam_upper_bound(problem):
    """A ``lam`` above which cutting every tree to its root is optimal.

    Any pruning that keeps a split keeps some root split ``r``; every cost
    example then pays at least the cost term of ``r`` alone, ``c_r``, while the
    error term can drop by at most the root-only error ``E_0``.  So for
    ``lam > E_0 / min_r c_r`` the root-only pruning is the unique optimum.

    Returns
    -------
    float or None
        None when some root split costs nothing (a free feature): then no
        finite ``lam`` forces the roots.
    """
    f = problem.forest
    roots = f.node_offset[:-1]
    split_roots = roots[~f.is_leaf[roots]]
    if split_roots.size == 0:
        return 0.0
    pair_cost = problem.pair_cost()
    # cost of keeping only root r: every first-use record at r (one per row and unit)
    use_node, use_pair = problem.use_node, problem.use_pair  # use_pair is derived: once
    at_root = f.depth[use_node] == 0
    c_root = np.bincount(use_node[at_root], weights=pair_cost[use_pair[at_root]],
                         minlength=f.n_nodes)[split_roots]
    c_root = c_root + problem.depth_cost * problem.node_cost_weight[split_roots] / (
        problem.total_weight)
    c_min = float(c_root.min())
    err0 = problem.closure_weights()["constant"]
    if c_min <= 0:
        return None
    return 2.0 * err0 / c_min + 1e-12


class HullPoint:
    """One vertex of the lower hull: a pruning optimal on a ``lam`` interval.

    Attributes
    ----------
    pruned : PrunedForest
    error_term : float
        Error term of the objective (on the error data).
    cost_term : float
        Coefficient of ``lam``: average acquisition cost (+ depth term).
    average_cost : float
        Average acquisition cost on the cost data.
    lam_lo, lam_hi : float
        The interval of ``lam`` on which this pruning is optimal (``lam_hi``
        may be ``inf``).
    exact_interval : bool
        False when the search stopped refining next to this point
        (``cost_resolution``), so the interval is only bracketed.
    """

    __slots__ = ("pruned", "error_term", "cost_term", "average_cost", "n_splits", "lam_lo",
                 "lam_hi", "exact_interval", "found_at")

    def __init__(self, pruned, problem, found_at):
        bd = pruned.breakdown
        self.pruned = pruned
        self.error_term = float(bd.error_term)
        self.cost_term = float(_cost_term(problem, bd))
        self.average_cost = float(bd.average_cost)
        self.n_splits = int(bd.n_splits)
        self.found_at = float(found_at)
        self.lam_lo = float("nan")
        self.lam_hi = float("nan")
        self.exact_interval = True

    def value(self, lam):
        return self.error_term + lam * self.cost_term

    def as_dict(self):
        return {"lam_lo": self.lam_lo, "lam_hi": self.lam_hi, "error_term": self.error_term,
                "cost_term": self.cost_term, "average_cost": self.average_cost,
                "n_splits": self.n_splits, "exact_interval": self.exact_interval}

    def __repr__(self):
        return (f"HullPoint(cost={self.average_cost:.6g}, error={self.error_term:.6g}, "
                f"lam=[{self.lam_lo:.6g}, {self.lam_hi:.6g}])")


class LagrangianHull:
    """Solve one compiled problem at many ``lam`` values (memoised).

    Parameters
    ----------
    problem : PruningProblem
        Compiled once (its own ``lam`` is ignored).
    solver : str
        Backend for every solve (``"auto"`` by default).
    tol : float
        Relative tolerance deciding that a new pruning lies strictly below a
        line (guards against solver round-off).
    solver_options : dict, optional
    """

    def __init__(self, problem, *, solver="auto", tol=1e-9, solver_options=None):
        if not isinstance(tol, (int, float)) or not (0 <= tol < 1):
            raise ValueError(f"tol must be a number in [0, 1), got {tol!r}")
        self.problem = problem
        self.solver = solver
        self.tol = float(tol)
        self.solver_options = solver_options
        self.n_solves = 0
        self.seconds = 0.0
        self._cache = {}

    def solve(self, lam):
        lam = float(lam)
        if lam not in self._cache:
            pruned = solve(problem_at_lam(self.problem, lam), solver=self.solver,
                           solver_options=self.solver_options)
            if pruned.solve_info.get("status") != "optimal":
                raise RuntimeError(
                    f"solver {pruned.solve_info.get('solver')!r} stopped with status "
                    f"{pruned.solve_info.get('status')!r} at lam={lam:g}; the breakpoint "
                    "search needs optimal solves (use an exact solver without a time limit)")
            self.n_solves += 1
            self.seconds += float(pruned.solve_info.get("seconds", 0.0))
            self._cache[lam] = HullPoint(pruned, self.problem, lam)
        return self._cache[lam]

    def below(self, p, line_a, lam):
        """True when point p is strictly below line_a at lam (beyond tolerance)."""
        ref = line_a.value(lam)
        return p.value(lam) < ref - self.tol * max(1.0, abs(ref)) - 1e-15

    def same(self, a, b):
        tol = self.tol * max(1.0, abs(a.cost_term), abs(b.cost_term))
        return (abs(a.cost_term - b.cost_term) <= tol
                and abs(a.error_term - b.error_term) <= self.tol * max(1.0, abs(a.error_term)))

    def endpoints(self):
        """The hull's two ends: the best pruning at lam=0 and the cheapest one."""
        left = self.solve(0.0)
        # lam = 0 may have ties (equal error, different cost).  Errors are separable
        # per tree, so with integer example weights any pruning with a larger error
        # loses at least one example of one tree: 1 / (T max N_t).  Below that gap
        # divided by the largest cost, lam only breaks the ties, towards the cheapest.
        pb = self.problem
        c_full = _cost_term(pb, pb.evaluate(pb.forest.full_split_mask()))
        if c_full > 0 and left.cost_term > 0:
            delta = 0.25 / (pb.n_trees * float(pb.tree_error_weight.max()) * c_full)
            tie = self.solve(delta)
            if (tie.cost_term < left.cost_term
                    and abs(tie.error_term - left.error_term)
                    <= self.tol * max(1.0, left.error_term)):
                left = tie
        ub = lam_upper_bound(self.problem)
        if ub is None:  # a free root feature: raise lam until the cost stops falling
            ub = 1.0
            right = self.solve(ub)
            for _ in range(40):
                nxt = self.solve(ub * 10.0)
                if nxt.cost_term >= right.cost_term - self.tol * max(1.0, right.cost_term):
                    break
                ub *= 10.0
                right = nxt
        else:
            right = self.solve(ub)
        return left, right

    def intersection(self, a, b):
        """lam where the lines of a (costlier) and b (cheaper) cross."""
        dc = a.cost_term - b.cost_term
        return max((b.error_term - a.error_term) / dc, 0.0)

    def search(self, *, cost_resolution=0.0, progress=None):
        """All hull vertices, costliest first, with their ``lam`` intervals."""
        left, right = self.endpoints()
        if self.same(left, right) or left.cost_term <= right.cost_term:
            left.lam_lo, left.lam_hi = 0.0, math.inf
            return [left]
        pts = [left, right]
        breaks = {}  # id pair -> (lam, exact)
        stack = [(left, right)]
        while stack:
            a, b = stack.pop()
            lam = self.intersection(a, b)
            if a.average_cost - b.average_cost <= cost_resolution and cost_resolution > 0:
                breaks[(id(a), id(b))] = (lam, False)
                continue
            p = self.solve(lam)
            if progress is not None:
                progress.update(1)
            if (self.below(p, a, lam) and not self.same(p, a) and not self.same(p, b)
                    and b.cost_term < p.cost_term < a.cost_term):
                pts.append(p)
                stack.append((a, p))
                stack.append((p, b))
            else:
                breaks[(id(a), id(b))] = (lam, True)
        pts.sort(key=lambda q: -q.cost_term)
        pts[0].lam_lo = 0.0
        pts[-1].lam_hi = math.inf
        for a, b in zip(pts[:-1], pts[1:]):
            lam, exact = breaks[(id(a), id(b))]
            a.lam_hi = b.lam_lo = lam
            if not exact:
                a.exact_interval = b.exact_interval = False
        # a vertex optimal only at lam = 0 (a tie at lam = 0 the solver broke towards
        # the costlier pruning) is dominated for every lam > 0
        kept = [q for q in pts if not (q.lam_hi <= 0.0 and len(pts) > 1)]
        if kept:
            kept[0].lam_lo = 0.0
        return kept


def _records(points, X_eval, y_eval, costs):
    rows = []
    for q in points:
        r = q.as_dict()
        if X_eval is not None:
            # score: accuracy, or R^2 for a regression forest
            score = "r2_eval" if q.pruned.forest.task == "regression" else "accuracy_eval"
            r[score] = q.pruned.score(X_eval, y_eval)
            r["cost_eval"] = q.pruned.average_cost(X_eval, costs)
        rows.append(r)
    return rows


def check_hull_solver(solver):
    """Refuse, before any work, a backend that cannot trace the hull: every point
    must be a proven optimum at its ``lam`` (an ``exact`` backend)."""
    from ..solvers import solver_classes

    cls = solver_classes().get(str(solver).lower()) if isinstance(solver, str) else None
    if cls is not None and not cls.exact:
        exact = [n for n, c in solver_classes().items() if c.exact and n != "budget"]
        raise ValueError(f"solver={solver!r} cannot trace the Lagrangian hull: its solves are "
                         "not proven optimal at each lam (it reports a gap); use an exact "
                         f"backend: {exact} (or solver='auto')")


def _problem_of(problem_or_forest, X, y, costs, train, depth_cost):
    """The compiled problem to trace, from the arguments of :func:`tradeoff_curve`."""
    if isinstance(problem_or_forest, PruningProblem):
        given = [n for n, v in (("X", X), ("y", y), ("costs", costs), ("train", train),
                                ("depth_cost", depth_cost)) if v is not None]
        if given:
            raise ValueError(
                f"tradeoff_curve: got a compiled PruningProblem and {', '.join(given)}; the "
                "problem already holds its data, costs and depth_cost. Pass either a "
                "PruningProblem alone or a forest with X and y.")
        return problem_or_forest
    if problem_or_forest is None or X is None or y is None:
        raise ValueError("tradeoff_curve: pass a compiled PruningProblem, or a fitted forest "
                         "with X and y (the cost data); got "
                         f"{type(problem_or_forest).__name__} with X="
                         f"{'None' if X is None else '...'}, y={'None' if y is None else '...'}")
    return compile_problem(problem_or_forest, X, y, costs=costs, lam=0.0, train=train,
                           depth_cost=0.0 if depth_cost is None else depth_cost)


def _grid_points(hull, lams, bar):
    points = []
    for lam in lams:
        points.append(hull.solve(lam))
        if bar is not None:
            bar.update(1)
    return points


def _rows(points, lams, X_eval, y_eval, costs):
    rows = _records(points, X_eval, y_eval, costs)
    if lams is not None:
        for r, lam in zip(rows, lams):
            for k in ("lam_lo", "lam_hi", "exact_interval"):
                r.pop(k)
            r["lam"] = lam
    return rows


def tradeoff_curve(problem_or_forest, X=None, y=None, *, costs=None, lams=None, train=None,
                   solver="auto", X_eval=None, y_eval=None, depth_cost=None,
                   cost_resolution=0.0, tol=1e-9, progress=False, return_points=False,
                   solver_options=None):
    """The error-cost trade-off curve of BudgetPrune.

    By default every breakpoint of the curve is found exactly (see the module
    docstring): each row is a pruning that is optimal for every ``lam`` in
    ``[lam_lo, lam_hi]``, and every optimal cost of any ``lam > 0`` appears
    in some row (at ``lam = 0`` exactly, ties in error are broken towards the
    cheapest pruning).

    Parameters
    ----------
    problem_or_forest : PruningProblem, or fitted estimator / Forest
        A compiled problem (re-weighted, never re-routed; give no ``X``,
        ``y``, ``costs``, ``train`` or ``depth_cost`` with it), or a forest,
        which is compiled from ``X``, ``y`` first.
    X, y : array-like
        Cost data (validation data) of a forest; also error data unless
        ``train`` is given.  Required with a forest, refused with a problem.
    costs : FeatureCosts, array-like or mapping, optional
        Acquisition costs (uniform when omitted); forest only.
    lams : sequence of float, optional
        Solve only at these values instead of searching breakpoints (rows then
        carry ``lam`` instead of an interval).
    train : tuple (X_train, y_train), optional
        Count errors on each tree's in-bag sample; forest only.
    solver : str
        Backend name (``"auto"``: the fastest exact one installed).
    X_eval, y_eval : array-like, optional
        Held-out data: adds ``accuracy_eval`` (``r2_eval`` for a regression forest) and
        ``cost_eval`` columns.
    depth_cost : float, optional
        Weight of the average depth inside the lam term (0 when omitted);
        forest only.
    cost_resolution : float
        Stop refining between two hull points whose average costs differ by at
        most this much (0: find every breakpoint).  Rows next to an unrefined
        gap have ``exact_interval == False``.
    tol : float
        Relative tolerance for "strictly below a line".
    progress : bool
        Show a tqdm progress bar (one tick per solve).
    return_points : bool
        Also return the :class:`HullPoint` objects (with their PrunedForest).
    solver_options : dict, optional

    Returns
    -------
    pandas.DataFrame
        Columns ``lam_lo``, ``lam_hi``, ``error_term``, ``cost_term``,
        ``average_cost``, ``n_splits``, ``exact_interval`` (or ``lam``), plus
        ``accuracy_eval`` and ``cost_eval`` when ``X_eval`` is given; costliest
        first.  With ``return_points=True`` a pair ``(curve, points)``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> from prune_opt.budget import tradeoff_curve
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> curve = tradeoff_curve(rf, X, y, costs=[1, 1, 5, 5])
    >>> bool((curve["average_cost"].diff().dropna() < 0).all())
    True
    >>> float(curve["lam_lo"].iloc[0]), float(curve["average_cost"].iloc[-1])
    (0.0, 0.0)
    >>> problem = po.compile_problem(rf, X, y, costs=[1, 1, 5, 5])
    >>> tradeoff_curve(problem).equals(curve)
    True
    """
    check_hull_solver(solver)
    problem = _problem_of(problem_or_forest, X, y, costs, train, depth_cost)
    if (X_eval is None) != (y_eval is None):
        raise ValueError("X_eval and y_eval must be given together")
    if y_eval is not None:  # refuse bad eval labels before solving, not after
        n_eval = len(problem.forest.check_X(X_eval, "X_eval"))
        y_eval = check_labels(problem.forest, y_eval, n_eval, name="y_eval")
        if problem.forest.task == "classification":  # regression: the targets themselves
            y_eval = problem.forest.classes_[y_eval]
    cost_resolution = float(cost_resolution)
    if not cost_resolution >= 0:
        raise ValueError(f"cost_resolution must be >= 0, got {cost_resolution!r}")
    if problem.budget is not None:
        raise ValueError(f"tradeoff_curve traces every lam without a budget, but the problem "
                         f"has the hard row 'average cost <= {problem.budget:g}'; pass "
                         "problem.with_budget(None), or use fit_budget for one budget")
    if lams is not None:
        try:
            lams = np.asarray(lams, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"lams must be a sequence of numbers, got {lams!r}") from None
        if lams.ndim > 1:
            raise ValueError(f"lams must be a 1-D sequence of lambdas, got shape {lams.shape}")
        lams = [float(v) for v in np.atleast_1d(lams)]
    hull = LagrangianHull(problem, solver=solver, tol=tol, solver_options=solver_options)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(desc="breakpoints" if lams is None else "lambda grid", unit="solve")
    try:
        points = (hull.search(cost_resolution=cost_resolution, progress=bar) if lams is None
                  else _grid_points(hull, lams, bar))
    finally:
        if bar is not None:
            bar.close()
    curve = records_frame(_rows(points, lams, X_eval, y_eval, problem.costs))
    if return_points:
        return curve, points
    return curve


