"""The hard-budget binary program in closure form, for OR-Tools CP-SAT.

Variables: ``x_h`` (internal node h stays a split) and ``y_p`` (pair p, a
(cost row, unit), is paid) for pairs with two or more first-use records; a
pair with a single record is folded into its node (``y_p = x_h`` at any
optimum).  Constraints: ``x_child <= x_parent``, ``x_node <= y_pair`` for
every record, and one budget row ``sum_p c_u v_row y_p <= B N``.  This is
the closure formulation, much smaller than the paper's LP.

CP-SAT needs integer coefficients, see ``docs/math/budget.md``:

* objective: scaled by ``K = T * lcm(N_t)`` when that makes every coefficient
  integral (errors are example counts), otherwise by a power of two with the
  total rounding error ``slack`` subtracted from the reported bound;
* budget row: scaled by the smallest ``10**k`` (k <= 6) that makes every
  ``c_u v_row`` integral, with the right-hand side relaxed by a relative
  1e-9 (so the program contains every pruning that fits, and its bound is a
  bound); otherwise coefficients are rounded up (a restriction: every
  solution fits, but the bound is not reported).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["BudgetProgram"]

_OBJ_MAX = 2.0**50
_ROW_MAX = 2.0**52


def _integral(v, tol=1e-7):
    return bool(np.all(np.abs(v - np.rint(v)) <= tol * np.maximum(1.0, np.abs(v))))


def objective_scale(problem, coef):
    """``(K, slack)``: integer scaling of objective coefficients (slack 0 when exact)."""
    n_t = problem.tree_error_weight
    total = float(np.abs(coef).sum())
    if _integral(n_t, 0.0) and n_t.max() < 2**31:
        lcm = int(np.lcm.reduce(n_t.astype(np.int64)))
        K = float(problem.n_trees * lcm)
        if K * total < _OBJ_MAX and _integral(coef * K, 1e-9):
            return K, 0.0
    if total == 0:
        return 1.0, 0.0
    K = float(2.0 ** math.floor(math.log2(_OBJ_MAX / total)))
    return K, float(np.abs(coef * K - np.rint(coef * K)).sum() / K)


def budget_scale(raw, rhs):
    """``(coefficients, rhs, exact)`` of the budget row as integers."""
    total = float(raw.sum()) + abs(rhs)
    for k in range(7):
        s = 10.0**k
        if total * s >= _ROW_MAX:
            break
        if _integral(raw * s):
            return np.rint(raw * s).astype(np.int64), int(math.floor(rhs * s * (1 + 1e-9))), True
    s = float(2.0 ** math.floor(math.log2(_ROW_MAX / max(total, 1e-300))))
    return np.ceil(raw * s).astype(np.int64), int(math.floor(rhs * s)), False


class BudgetProgram:
    """Closure-form binary program of ``min J s.t. average cost <= budget``.

    Parameters
    ----------
    problem : PruningProblem
    budget : float

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    >>> p = po.compile_problem(tree, X, y, costs=[1, 1, 5, 5])
    >>> out = BudgetProgram(p, 5.0).solve(hint=None, deadline=po.Deadline(10.0))
    >>> out["status"], bool(p.evaluate(out["mask"]).average_cost <= 5.0)
    ('OPTIMAL', True)
    """

    def __init__(self, problem, budget):
        self.problem = p = problem
        self.internal = np.flatnonzero(~p.forest.is_leaf)
        self.vid = vid = np.full(p.n_nodes, -1, dtype=np.int64)
        vid[self.internal] = np.arange(self.internal.size)
        raw = p.costs.unit_costs[p.pair_unit] * p.row_weight[p.pair_row]
        use_node, use_pair = p.use_node, p.use_pair  # use_pair is derived: read once
        n_rec = np.bincount(use_pair, minlength=p.n_pairs)
        live = (n_rec > 0) & (raw > 0)
        single = live & (n_rec == 1)
        multi = np.flatnonzero(live & (n_rec > 1))
        ipair, self.rhs, self.row_exact = budget_scale(raw, budget * p.total_weight)
        sel = single[use_pair]
        n_int = self.internal.size
        self.node_row = np.bincount(vid[use_node[sel]], weights=ipair[use_pair[sel]],
                                    minlength=n_int).astype(np.int64)
        self.pair_row = ipair[multi]
        pair_nat = p.pair_cost()
        cd = p.closure_weights()
        node_obj = cd["split_weight"][self.internal] + p.lam * np.bincount(
            vid[use_node[sel]], weights=pair_nat[use_pair[sel]], minlength=n_int)
        self.coef = np.concatenate([node_obj, p.lam * pair_nat[multi]])
        self.constant = float(cd["constant"])
        self.K, self.slack = objective_scale(p, self.coef)
        pid = np.full(p.n_pairs, -1, dtype=np.int64)
        pid[multi] = np.arange(multi.size)
        rec = pid[use_pair] >= 0
        self.rec_x = vid[use_node[rec]]
        self.rec_y = pid[use_pair[rec]]
        self.n_y = multi.size

    def _model(self, hint):
        from ortools.sat.python import cp_model

        f, n_int = self.problem.forest, self.internal.size
        m = cp_model.CpModel()
        x = [m.new_bool_var("") for _ in range(n_int)]
        y = [m.new_bool_var("") for _ in range(self.n_y)]
        par = f.parent[self.internal]
        for c, q in zip(np.flatnonzero(par >= 0).tolist(), self.vid[par[par >= 0]].tolist()):
            m.add_implication(x[c], x[q])
        for a, b in zip(self.rec_x.tolist(), self.rec_y.tolist()):
            m.add_implication(x[a], y[b])
        m.add(cp_model.LinearExpr.weighted_sum(x + y, np.concatenate(
            [self.node_row, self.pair_row]).tolist()) <= self.rhs)
        obj = np.rint(self.coef * self.K).astype(np.int64)
        m.minimize(cp_model.LinearExpr.weighted_sum(x + y, obj.tolist()))
        if hint is not None:
            hx = hint[self.internal]
            hy = np.zeros(self.n_y, dtype=bool)
            hy[self.rec_y[hx[self.rec_x]]] = True
            for v, h in zip(x + y, np.concatenate([hx, hy]).tolist()):
                m.add_hint(v, bool(h))
        return m, x

    def solve(self, hint, deadline, workers=1, verbose=False):
        """Run CP-SAT until ``deadline`` (a :class:`~prune_opt.Deadline`: building the
        model counts); returns a dict with ``mask`` (or None), ``bound`` (natural units,
        None when not certified), ``status`` and ``seconds``."""
        from ortools.sat.python import cp_model

        m, x = self._model(hint)
        solver = cp_model.CpSolver()
        left = deadline.seconds()
        solver.parameters.max_time_in_seconds = 1e9 if left is None else max(left, 0.01)
        solver.parameters.num_workers = int(workers)
        solver.parameters.random_seed = 0
        solver.parameters.log_search_progress = bool(verbose)
        # presolve (probing above all) takes longer than the search on these closure
        # programs (~1e5 implications) and finds little; the hint is then used at once
        solver.parameters.cp_model_presolve = False
        st = solver.solve(m)
        mask = bound = None  # CP-SAT reports no meaningful bound before its first solution
        if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            mask = np.zeros(self.problem.n_nodes, dtype=bool)
            mask[self.internal] = [solver.boolean_value(v) for v in x]
            if self.row_exact:
                bound = self.constant + solver.best_objective_bound / self.K - self.slack
        return {"mask": mask, "bound": bound, "status": solver.status_name(st),
                "seconds": solver.wall_time, "scale": self.K, "slack": self.slack,
                "row_exact": self.row_exact}
