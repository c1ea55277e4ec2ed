"""The projected subgradient loop of the primal-dual method, in named steps.

:class:`DualAscent` holds the state of one run (duals, best pruning, best
bound, step-rule state); :data:`STEP_RULES` maps each step rule's name to the
function that computes the step length.  ``PrimalDualSolver`` drives it.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["STEP_RULES", "OPTIMAL_GAP", "DualAscent", "relative_gap"]

OPTIMAL_GAP = 1e-9
HISTORY_KEYS = ("objective", "bound", "best_objective", "best_bound", "seconds")


def relative_gap(objective, bound):
    """``max(objective - bound, 0) / max(|objective|, 1e-12)`` (as SolveResult.gap)."""
    return max(objective - bound, 0.0) / max(abs(objective), 1e-12)


def _dot(a, b):
    """Dot product without BLAS threads (their start-up dominates at this size)."""
    return float(np.einsum("i,i->", a, b))


def polyak_step(run, k, bound, gg):
    """``theta (UB - L) / ||d||^2``; theta halves after ``patience`` stalled bounds."""
    if run.stall >= run.patience:
        run.theta, run.stall = max(run.theta / 2, 1e-6), 0
    return run.theta * (run.best_obj - bound) / gg


def constant_step(run, k, bound, gg):
    """``step_size * t0`` with ``t0 = (UB_1 - L_1) / ||d_1||^2`` from the first step."""
    if run.t0 is None:
        run.t0 = max(run.best_obj - bound, 0.0) / gg
    return run.step_size * run.t0


def diminishing_step(run, k, bound, gg):
    """The constant step divided by ``sqrt(k)``."""
    return constant_step(run, k, bound, gg) / np.sqrt(k)


STEP_RULES = {"polyak": polyak_step, "diminishing": diminishing_step,
              "constant": constant_step}


class DualAscent:
    """State and steps of one projected-subgradient run on the Lagrangian dual.

    Parameters
    ----------
    problem : PruningProblem
    beta : ndarray (n_uses,)
        Starting duals.
    params : dict
        The solver's options (``step``, ``step_size``, ``deflection``,
        ``patience``, ``history``).
    """

    def __init__(self, problem, beta, params):
        cd = problem.closure_data()
        self.sw, self.pw, self.const = cd["split_weight"], cd["pair_weight"], cd["constant"]
        self.un, self.up = problem.use_node, problem.use_pair
        self.n_nodes, self.n_pairs = problem.n_nodes, problem.n_pairs
        self.beta = beta
        self.rule = STEP_RULES[params["step"]]
        self.step_size = self.theta = float(params["step_size"])
        self.deflect, self.patience = bool(params["deflection"]), int(params["patience"])
        self.best_obj, self.best_mask, self.best_bound = np.inf, None, -np.inf
        self.t0 = self.d_prev = None
        self.stall = 0
        self.start = time.perf_counter()
        self.history = {key: [] for key in HISTORY_KEYS} if params["history"] else None

    def primal_objective(self, mask):
        """Objective of a pruning and the mask of its paid pairs."""
        used = np.zeros(self.n_pairs, dtype=bool)
        used[self.up[mask[self.un]]] = True
        return self.const + float(self.sw[mask].sum()) + float(self.pw[used].sum())

    def evaluate_duals(self, subproblems):
        """``L(beta)``, the subproblems' pruning and the closed-form pair choice."""
        weight = self.sw + np.bincount(self.un, self.beta, self.n_nodes)
        values, mask = subproblems(weight)
        rc = self.pw - np.bincount(self.up, self.beta, self.n_pairs)
        w = rc < 0.0
        return self.const + float(values.sum()) + float(rc[w].sum()), mask, w

    def record(self, obj, mask, bound):
        """Keep the best pruning and bound; count iterations without a better bound."""
        if obj < self.best_obj:
            self.best_obj, self.best_mask = obj, mask
        if bound > self.best_bound + 1e-12 * abs(self.best_bound):
            self.best_bound, self.stall = bound, 0
        elif bound > self.best_bound:
            self.best_bound, self.stall = bound, self.stall + 1
        else:
            self.stall += 1
        if self.history is not None:
            for key, v in zip(HISTORY_KEYS, (obj, bound, self.best_obj, self.best_bound,
                                             time.perf_counter() - self.start)):
                self.history[key].append(v)
        return relative_gap(self.best_obj, self.best_bound)

    def direction(self, mask, w):
        """Projected (and optionally deflected) subgradient; returns it and its norm^2."""
        g = mask[self.un].astype(float) - w[self.up]
        if self.deflect and self.d_prev is not None:  # Camerini-Fratta-Maffioli
            gamma = max(0.0, -1.5 * _dot(g, self.d_prev) / max(_dot(self.d_prev, self.d_prev),
                                                                 1e-300))
            g = g + gamma * self.d_prev
        g[(self.beta <= 0.0) & (g < 0.0)] = 0.0  # projected direction: beta stays >= 0
        self.d_prev = g
        return g, _dot(g, g)

    def step(self, k, bound, g, gg):
        """Move the duals along ``g`` by the step rule's length, keeping them >= 0."""
        self.beta = np.maximum(self.beta + self.rule(self, k, bound, gg) * g, 0.0)

    def stop_reason(self, gap, gg, *, gap_tol, deadline, k, max_iter):
        """The status to stop with after iteration ``k``, or None to go on."""
        if gap <= OPTIMAL_GAP or gg == 0.0:
            return "optimal" if gap <= OPTIMAL_GAP else "gap_limit"
        if gap <= gap_tol:
            return "gap_limit"
        if deadline.expired():
            return "time_limit"
        return "iteration_limit" if k == max_iter else None
