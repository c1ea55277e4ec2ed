"""Integrality of LP vertices of a pruning problem."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..program._problem import PruningProblem

__all__ = ["max_fractionality", "vertex_integrality", "IntegralityReport"]

SOLVERS = ("highs",)


def max_fractionality(x):
    """Largest distance of an entry of ``x`` to the nearest integer (0 for empty).

    Examples
    --------
    >>> max_fractionality([0.0, 1.0, 0.25, 0.9])
    0.25
    """
    x = np.asarray(x, dtype=float).ravel()
    if x.size == 0:
        return 0.0
    if not np.isfinite(x).all():
        raise ValueError("x has NaN or infinite entries")
    return float(np.max(np.abs(x - np.round(x))))


@dataclass
class IntegralityReport:
    """Fractionality of LP vertices of a pruning problem.

    Attributes
    ----------
    max_fractionality : float
        Of the optimal vertex for the problem's own objective.
    objective : float
        LP optimum in natural units (``c x / problem.scale``).
    fractional : bool
        ``max_fractionality > tol``.
    n_random, n_fractional_random : int
        Random objectives solved and how many gave a fractional vertex.
    max_fractionality_random : float
    fractional_variables : list of (int, float)
        Up to ten (index, value) pairs of the first fractional vertex found
        (own objective first), in the standard-form variable order.
    seconds : float
    tol : float
    """

    max_fractionality: float
    objective: float
    fractional: bool
    n_random: int = 0
    n_fractional_random: int = 0
    max_fractionality_random: float = 0.0
    fractional_variables: list = field(default_factory=list)
    seconds: float = 0.0
    tol: float = 1e-7
    budget: float | None = None

    def to_dict(self):
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def __str__(self):
        s = (f"LP vertex max fractionality {self.max_fractionality:.3g} "
             f"({'fractional' if self.fractional else 'integral'}; objective "
             f"{self.objective:.6g})")
        if self.n_random:
            s += (f"; random objectives: {self.n_fractional_random}/{self.n_random} fractional "
                  f"vertices (max fractionality {self.max_fractionality_random:.3g})")
        return s


def _solve_vertex(sf, c):
    from scipy.optimize import linprog

    res = linprog(c, A_ub=sf["A_ub"], b_ub=sf["b_ub"], A_eq=sf["A_eq"], b_eq=sf["b_eq"],
                  bounds=sf["bounds"], method="highs-ds")
    if res.status != 0:
        raise RuntimeError(f"HiGHS dual simplex failed: {res.message}")
    return res.x, float(res.fun)


def vertex_integrality(problem, solver="highs", random_objectives=0, seed=0, tol=1e-7):
    """Solve the LP relaxation at vertices and measure their fractionality.

    Uses the standard form of :meth:`PruningProblem.to_standard_form` and
    SciPy's HiGHS *dual simplex* (``method="highs-ds"``), which returns a
    basic solution, i.e. a vertex of the polytope.  Without a budget row the
    constraint matrix is totally unimodular and every vertex is integral;
    with a hard budget row fractional vertices appear.

    Parameters
    ----------
    problem : PruningProblem
    solver : {"highs"}
    random_objectives : int
        Also solve this many random objectives (standard normal costs) and
        count the fractional optimal vertices.
    seed : int
        Seed of the random objectives.
    tol : float
        Fractionality above which a vertex counts as fractional.

    Returns
    -------
    IntegralityReport

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> from prune_opt.checks import vertex_integrality
    >>> X = np.arange(20.0).reshape(10, 2); y = np.arange(10) % 3 == 0
    >>> tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    >>> vertex_integrality(po.compile_problem(tree, X, y, lam=0.01)).fractional
    False
    """
    if not isinstance(problem, PruningProblem):
        raise TypeError(f"problem must be a PruningProblem, got {type(problem).__name__}")
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS} (a simplex method that returns "
                         f"vertices), got {solver!r}")
    if not isinstance(random_objectives, (int, np.integer)) or random_objectives < 0:
        raise ValueError(f"random_objectives must be a non-negative integer, got "
                         f"{random_objectives!r}")
    t0 = time.perf_counter()
    sf = problem.to_standard_form()
    x, fun = _solve_vertex(sf, sf["c"])
    frac = max_fractionality(x)
    where = []

    def note(x):
        d = np.abs(x - np.round(x))
        idx = np.flatnonzero(d > tol)[:10]
        return [(int(i), float(x[i])) for i in idx]

    if frac > tol:
        where = note(x)
    rng = np.random.default_rng(seed)
    n_frac, worst = 0, 0.0
    for _ in range(int(random_objectives)):
        c = rng.standard_normal(sf["c"].size)
        xr, _ = _solve_vertex(sf, c)
        fr = max_fractionality(xr)
        worst = max(worst, fr)
        if fr > tol:
            n_frac += 1
            if not where:
                where = note(xr)
    return IntegralityReport(max_fractionality=frac, objective=fun / problem.scale,
                             fractional=frac > tol, n_random=int(random_objectives),
                             n_fractional_random=n_frac, max_fractionality_random=worst,
                             fractional_variables=where, seconds=time.perf_counter() - t0,
                             tol=tol, budget=problem.budget)
