"""fit_budget with an ensemble objective: the best candidate in the forest's own loss.

Candidates, all fitting the budget on the pruning data ``(X, y)``:

* the paper objective's candidate: budget descent on the error term from the
  fitting baseline with the lowest error term (at most a third of the time);
* every member of every baseline that fits (GreedyPrune on the problem's error
  data, cost-complexity pruning, impurity thresholds, the first m trees both
  as a sub-forest and as a mask with the other trees cut to their roots), the
  best of each family by the chosen objective;
* the ensemble search (:func:`search_budget`, on the same routed rows) started from those candidates: budget descent from the
  best of them (exact block moves, loss never increasing, every iterate within
  the budget), then its lambda continuation, greedy repair and descent again.

Every candidate is scored exactly by :class:`VoteScorer` (the arithmetic of
``PrunedForest.predict_proba``; ``predict``'s error for ``"accuracy"``) and
the lowest wins, so the result is never worse than any fitting baseline.
Each candidate is also scored with its root-only trees dropped from the vote
(they add the same in-bag class shares to every example's vote, a bias towards
the frequent classes, and cost nothing); the result may then be a pruning of
that smaller forest (``solve_info["trees_kept"]``).

:func:`search_budget` is the best-loss pruning within an average-cost budget on a
ready state: given candidates, budget descent from the best of them
(:func:`budget_descent`, the shared :func:`~prune_opt.objectives._descent.descend`
under the budget); a continuation in ``lam``, greedy repair
(:func:`greedy_repair`) and budget descent again.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .._clock import UNLIMITED, Deadline
from .._validation import fits_budget
from ..forest._costs import estimator_costs
from ..model._pruned import PrunedForest
from ..objectives import check_objective_task, get_objective
from ..objectives._descent import ProblemState, block_descent, descend, run_starts, without_unit
from ..objectives._optimize import tree_optimum
from ..objectives._raw_state import ensemble_state
from ..objectives._scorer import VoteScorer
from ..program._compile import compile_problem
from ..program._prepare import prepare
from ..program._problem import PruningProblem
from ._baselines import (
    LATE_FAMILIES,
    MASK_FAMILIES,
    best_in_nested,
    mask_families,
    sub_forest,
)

__all__ = ["fit_budget_objective", "PAPER_SHARE", "search_budget", "BudgetSearch", "budget_descent", "greedy_repair"]

# share of the time left after the baselines given to the paper-objective search
PAPER_SHARE = 1.0 / 3.0
# share of the time left after the anchors (the prior, the first rounds) that the other
# baseline families may take; members beyond it are not scored
BASELINE_SHARE = 0.25
# share of the time left that the first budget descent (from the best baseline) may take
FIRST_POLISH_SHARE = 0.4
#: baseline families built and scored whatever the clock says, with the prior and the
#: first rounds: cheap to build (one ranking of the features, 0.01 s on 1,000 trees) and
#: strong where the budget leaves room for a few features only, where the prior is the
#: only other anchor (no round of a multiclass model fits)
ANCHOR_FAMILIES = ("feature-prefix",)
#: the searches end early enough for this many scores of the full model by the ranking
#: objective (``select``): the distinct fitting candidates ranked at the end (6-9 on
#: boosted models: the searches', the paper's and the baselines')
RANKED_CANDIDATES = 8


def _check_problem(problem, scorer):
    if problem.depth_cost != 0:
        raise ValueError("fit_budget needs a problem compiled with depth_cost=0 (the budget "
                         "bounds acquisition cost only)")
    if getattr(problem, "cost_sample", None) is not None:
        # the cost term was estimated on a sample of X's rows: the budget is measured on
        # every row of X by the scorer, so only the row count can be checked
        n_pop = problem.cost_sample.get("n_population") if isinstance(
            problem.cost_sample, dict) else None
        if n_pop is not None and n_pop != scorer.n:
            raise ValueError(f"problem= was compiled (with cost_sample) on {n_pop} rows but X "
                             f"has {scorer.n}: pass the rows it was compiled on")
        return
    full = problem.forest.full_split_mask()
    mine, theirs = scorer.score(full)[1], problem.evaluate(full).average_cost
    if not math.isclose(mine, theirs, rel_tol=1e-9, abs_tol=1e-12):
        raise ValueError(f"problem= measures the unpruned forest's average cost as {theirs:g} "
                         f"but X gives {mine:g}: compile the problem on the same X (the "
                         "budget and the objective are both measured on X)")


def _compiled_from(problem, X):
    """The :class:`RoutedData` ``problem`` was compiled from (``compile_problem(...,
    routed=)``) when it is still held and holds the rows of ``X``, else None: a caller
    that routed the rows once and compiled from them does not have them routed again."""
    source = getattr(problem, "routed_from", None)
    routed = None if source is None else source()
    if routed is None or routed.n_rows != np.shape(X)[0]:
        return None
    Xc = routed.forest.check_X(X)
    same = Xc is routed.X or np.array_equal(Xc, routed.X, equal_nan=True)
    return routed if same else None


def fit_budget_objective(problem_or_forest, X, y, *, costs, budget, train, objective,
                         time_limit, verbose, solver_options, cost_sample=None, client=None,
                         routed=None, paper=None, extra=None, select=None):
    """``fit_budget`` with an ensemble objective: the lowest-loss fitting candidate (see
    the module docstring); a PrunedForest.

    ``routed``: ``X`` already routed through the forest (:class:`RoutedData`);
    ``paper``: the paper search's result on this problem and budget, when already
    run (it is then the paper candidate, instead of budget descent on the error
    term); ``extra``: more named split masks of the same forest (e.g. earlier
    results on part of the rows) that join the candidates and the ensemble
    search's starts; ``select``: an objective
    whose loss on ``(X, y)`` ranks the fitting candidates first (ties, then
    everything else, by ``objective``'s loss), e.g. ``"accuracy"`` when the
    result is judged by its accuracy."""
    if cost_sample is not None or client is not None:
        raise ValueError("cost_sample= and client= apply to objective='paper' (an ensemble "
                         "objective scores every row of X in process); compile the "
                         "problem with cost_sample and pass it first instead")
    obj = get_objective(objective)  # a clear error listing the objectives for a wrong name
    if X is None or y is None:
        raise ValueError(f"objective={objective!r} scores the forest's vote on (X, y): pass the "
                         "pruning data X and y (with a problem, the data it was compiled on)")
    t0 = time.perf_counter()
    deadline = Deadline.of(time_limit)
    problem = problem_or_forest if isinstance(problem_or_forest, PruningProblem) else None
    if routed is None and problem is not None:  # the rows the problem was compiled from
        routed = _compiled_from(problem, X)
    # X is read and routed once (or not at all, when the caller holds its routed rows)
    ready = prepare(problem.forest if problem is not None else problem_or_forest, X,
                    None if problem is not None else y, train=train, routed=routed)
    f = problem.forest if problem is not None else ready.forest
    routed = ready.routed
    check_objective_task(obj, f)
    if problem is None:
        problem = compile_problem(f, ready.X, y, costs=estimator_costs(problem_or_forest, costs),
                                  lam=0.0, train=train, routed=routed)
    scorer = VoteScorer(f, ready.X, y, problem.costs, obj, routed=routed)
    source = getattr(problem, "routed_from", None)
    if source is None or source() is not routed:  # a problem compiled elsewhere
        _check_problem(problem, scorer)
    rank = (VoteScorer(f, ready.X, y, problem.costs, select, routed=routed)
            if select is not None and get_objective(select).name != obj.name else None)
    # the anchors first, whatever the time: the prior and the first rounds (trees)
    root = np.zeros(f.n_nodes, dtype=bool)
    pool = {"baseline:root-only": (*scorer.score(root), root)}
    # the first rounds in both losses, from one pass over the trees
    prefixes = scorer.prefix_scores(also=rank)
    rank_prefixes = None if rank is None else [(m, r, c) for m, _, c, r in prefixes]
    prefixes = [p[:3] for p in prefixes]
    # the end ranks every fitting candidate: that time is kept out of the searches'
    end = deadline.reserve(_ranking_time(rank, f))
    names = (solver_options or {}).get("baselines")
    if names is None:
        names = f.ensemble.baseline_families(MASK_FAMILIES)
    # the families quick to build, within their share of the time; the anchor families
    # first and always (at least their first fitting member): a busy machine that
    # leaves the searches no time still returns more than the prior
    quick = [n for n in names if n not in LATE_FAMILIES]
    share = end.share(BASELINE_SHARE)
    pool.update(_baseline_pool(problem, scorer, rank, budget,
                               [n for n in quick if n in ANCHOR_FAMILIES], share, always=True))
    pool.update(_baseline_pool(problem, scorer, rank, budget,
                               [n for n in quick if n not in ANCHOR_FAMILIES], share))
    for name, mask in extra or ():
        pool[name] = (*scorer.score(f.check_split_mask(mask, name=f"extra[{name!r}]")), mask)
    pool, paper_info, ens = _search(problem, scorer, pool, budget, paper, routed, end,
                                    verbose)
    ens["baselines_skipped"] = _late_families(problem, scorer, rank, pool, budget, names,
                                              end)
    return _choose(problem, scorer, pool, budget, ens, paper_info, obj, t0, rank=rank,
                   prefixes=prefixes, rank_prefixes=rank_prefixes, deadline=deadline,
                   keep_scoring={name for name, _ in extra or ()})


def _ranking_time(rank, f):
    """Seconds :func:`_choose` is expected to spend ranking the fitting candidates: one
    score of the full model by ``rank``, timed, per :data:`RANKED_CANDIDATES` (0 without
    a ranking)."""
    if rank is None:
        return 0.0
    t = time.perf_counter()
    rank.score(f.full_split_mask())
    return RANKED_CANDIDATES * (time.perf_counter() - t)


def _search(problem, scorer, pool, budget, paper, routed, deadline, verbose):
    """The ensemble search on the routed rows: budget descent from the best of ``pool``
    first (the most a short time buys), then from the paper objective's candidate
    (``paper`` when already run), then the continuation in lam from the starts'
    optimum.  ``(pool with "paper" and "ensemble-search", paper info, search info)``."""
    f = problem.forest
    if deadline.expired() and paper is None:  # no time left for a search: the anchors stand
        return pool, {"status": "skipped"}, {"start": None, "n_lams": 0,
                                             "status": "time_limit"}
    state = ensemble_state(f, None, scorer.y, scorer.weight, problem.costs, scorer.objective,
                           lam=0.0, routed=routed)
    search = BudgetSearch(state, budget, deadline=deadline.share(FIRST_POLISH_SHARE),
                          verbose=verbose)
    for name, (_, _, mask) in pool.items():
        search.add(name, mask)
    search.polish(n_points=1)
    if paper is not None:
        paper_mask, paper_info = paper.split_mask, paper.solve_info
    elif not deadline.expired():
        paper_mask, paper_info = _paper_descent(problem, pool, budget,
                                                deadline.share(PAPER_SHARE))
    else:
        paper_mask, paper_info = None, {"status": "skipped"}
    if paper_mask is not None:
        pool = {"paper": (*scorer.score(paper_mask), paper_mask), **pool}
        search.add("paper", paper_mask)
    search.deadline = deadline
    search.polish(n_points=1)
    if not deadline.expired():
        search.explore([("paper", tree_optimum(problem)), ("full", f.full_split_mask())])
    _, run = search.best()
    pool["ensemble-search"] = (*scorer.score(run["mask"]), run["mask"])
    return pool, paper_info, {"start": run["start"], "n_lams": search.n_lams,
                              "status": "time_limit" if deadline.expired() else "within_budget"}


def _late_families(problem, scorer, rank, pool, budget, names, deadline):
    """Add the best members of the families that take long to build (in ``names``) to
    ``pool``, each only when its expected time fits before ``deadline``; the names of
    those skipped."""
    late = [n for n in names if n in LATE_FAMILIES]
    fit = [n for n in late if deadline.fits(LATE_FAMILIES[n](problem))]
    pool.update(_baseline_pool(problem, scorer, rank, budget, fit, deadline))
    return [n for n in late if not any(
        k == f"baseline:{n}" or k.startswith(f"baseline:{n}(") for k in pool)]


def _baseline_pool(problem, scorer, rank, budget, names, deadline=UNLIMITED, always=False):
    """The best fitting member of every baseline family in ``names`` in the scorer's
    loss, and with ``rank`` (a
    VoteScorer), the best in its loss too: ``{name: (loss, cost, mask)}``.  Past
    ``deadline`` no further family is built (``always``: every family is) and no
    further member scored (a family's first fitting member always is)."""
    pool = {}
    for name, masks in mask_families(problem, names=names,
                                     deadline=UNLIMITED if always else deadline,
                                     skip_late=True).items():
        ranked = []

        def score(mask, ranked=ranked):
            loss, cost, other = scorer.score(mask, also=rank)
            if fits_budget(cost, budget):
                ranked.append(((other, loss, cost), mask))
            return loss, cost

        best = best_in_nested(masks, budget, scorer.score if rank is None else score,
                              deadline=deadline)
        if best is not None:
            pool[f"baseline:{name}"] = best
        if ranked:  # the family's best member by the ranking loss too
            (_, loss, cost), mask = min(ranked, key=lambda e: e[0])
            if mask is not best[2]:
                pool[f"baseline:{name}(by {rank.objective.name})"] = (loss, cost, mask)
    return pool


def _paper_descent(problem, pool, budget, deadline):
    """The paper objective's candidate: budget descent on the error term (the paper
    search's local-search move, the shared tree descent) from the fitting candidate
    with the lowest error term.  ``(mask, info)``."""
    p0 = problem.with_lam(0.0)
    best = None
    for name, (_, cost, m) in pool.items():  # the error term alone: no record is read
        if not fits_budget(cost, budget):
            continue
        err = p0.error_term(m)
        if best is None or err < best[0]:
            best = (err, name, m)
    _, name, start = best or (None, "root-only", np.zeros(p0.n_nodes, dtype=bool))
    run = descend(ProblemState(p0, start), start, budget, deadline=deadline)
    return run["mask"], {"status": "converged" if run["converged"] else "stopped",
                         "found_by": f"descent({name})", "gap": None, "bound": None}


def _choose(problem, scorer, pool, budget, ens, paper_info, obj, t0, rank=None,
            prefixes=None, rank_prefixes=None, deadline=UNLIMITED, keep_scoring=()):
    """Wrap the lowest-loss candidate (ties: cheaper, then pool order); with ``rank``
    (a VoteScorer), the lowest in ``rank``'s loss first, then as above.  Past
    ``deadline`` only the candidates named in ``keep_scoring`` (the caller's warm
    starts) are also scored without their root-only trees."""
    f = problem.forest
    fitting = {k: (*v, None) for k, v in pool.items() if fits_budget(v[1], budget)}
    # each candidate with its root-only trees dropped from the vote, when that scores
    # better: a tree cut to its root adds the same class distribution (its in-bag class
    # shares) to every example's vote, a bias towards the frequent classes that weighs
    # more the more trees are cut; dropping those trees costs nothing
    for name, (loss, _, mask) in pool.items():
        kept = np.flatnonzero(mask[f.node_offset[:-1]]).tolist()
        if 0 < len(kept) < f.n_trees and (not deadline.expired() or name in keep_scoring):
            d_loss, d_cost = scorer.score(mask, kept)
            if fits_budget(d_cost, budget) and d_loss < loss:
                fitting[f"{name}(stumps dropped)"] = (d_loss, d_cost, mask, kept)
    # the first m trees (a booster: its first rounds, the model truncated as the
    # libraries' num_iteration does)
    prefixes = scorer.prefix_scores() if prefixes is None else prefixes
    subs = [(loss, cost, m) for m, loss, cost in prefixes if fits_budget(cost, budget)]
    name = f.ensemble.truncation_name
    if subs:
        loss, cost, m = min(subs)
        fitting[f"baseline:{name}(sub-forest)"] = (loss, cost, f.full_split_mask(),
                                                   list(range(m)))
    if subs and rank is not None:  # the best truncation by the ranking loss too
        own = {m: loss for loss, _, m in subs}
        by_rank = [(r_loss, own[m], cost, m) for m, r_loss, cost in (
                   rank.prefix_scores() if rank_prefixes is None else rank_prefixes)
                   if m in own]
        _, loss, cost, m = min(by_rank)
        fitting.setdefault(f"baseline:{name}(sub-forest, by {rank.objective.name})",
                           (loss, cost, f.full_split_mask(), list(range(m))))
    ranked, seen = {}, {}
    for k, (_, _, mask, trees) in fitting.items():
        if rank is None:
            ranked[k] = 0.0
            continue
        same = (mask.tobytes(), None if trees is None else tuple(trees))
        if same not in seen:  # candidates often repeat (a search returning its start)
            seen[same] = rank.score(mask, trees)[0]
        ranked[k] = seen[same]
    name = min(fitting, key=lambda k: (ranked[k], *fitting[k][:2]))
    loss, cost, mask, trees = fitting[name]
    info = {"objective": obj.name, "budget": budget,
            "candidates_loss": {k: v[0] for k, v in fitting.items()},
            **({} if rank is None else {"candidates_rank": ranked,
                                        "ranked_by": rank.objective.name}),
            "paper": {k: paper_info.get(k) for k in ("gap", "bound", "status", "found_by")},
            "ensemble_search": ens}
    if trees is None:
        out = PrunedForest(f, mask, costs=problem.costs, breakdown=problem.evaluate(mask),
                           lam=0.0)
    else:
        sub = sub_forest(f, trees)
        est = f.source
        out = PrunedForest(sub, np.concatenate([mask[f.tree_slice(t)] for t in trees]),
                           costs=problem.costs, estimator_class=est)
        info.update(n_trees_kept=len(trees), trees_kept=[int(t) for t in trees])
    info.update(found_by=name, found_by_objective=name, ensemble_loss=loss,
                achieved_cost=cost, budget_slack=budget - cost, method="search",
                status="within_budget", seconds=time.perf_counter() - t0)
    out.objective, out.solve_info = loss, info
    return out


# lam grows by this factor along the continuation path; the first lam is this
# fraction of the full forest's loss gain per unit of cost
LAM_GROWTH = 1.6


LAM_START = 0.1


# over-budget end points (the cheapest) made feasible by greedy unit removal
REPAIR_POINTS = 3


# feasible end points (lowest loss first) improved by budget descent
POLISH_POINTS = 4


class BudgetSearch:
    """The lowest-loss pruning within an average-cost budget, searched in phases on a
    ready state (at lam 0, the rows routed), each stopping at ``deadline``:

    * :meth:`add` -- a candidate pruning joins the end points (scored exactly);
    * :meth:`polish` -- budget descent (exact block moves, loss never rising, every
      iterate within the budget) from the lowest-loss fitting end points;
    * :meth:`explore` -- a continuation in ``lam`` from the starts' optimum at lam 0,
      greedy repair of the cheapest points over the budget, and polish again.

    The root-only pruning is an end point from the start, so a fitting one always
    exists; :meth:`best` is the lowest-loss fitting end point.
    """

    def __init__(self, state, budget, max_iter=50, deadline=UNLIMITED, verbose=False):
        self.state, self.budget = state, budget
        self.max_iter, self.deadline, self.verbose = max_iter, deadline, verbose
        self.points = []  # (lam, run)
        self.n_lams = 0
        self._polished = set()
        self.add("root", np.zeros(state.forest.n_nodes, dtype=bool))

    def fits(self, run):
        return fits_budget(run["breakdown"]["average_cost"], self.budget)

    def add(self, name, mask):
        """A candidate pruning (closed mask) as an end point at lam 0; the run."""
        run = _mask_run(self.state.with_lam(0.0), mask, name)
        self.points.append((0.0, run))
        return run

    def solve_at(self, lam, warm):
        """Block descent at lam warm-started from ``warm``; the run."""
        run = block_descent(self.state.with_lam(lam), warm, unit_moves=False,
                            max_iter=self.max_iter, deadline=self.deadline,
                            verbose=self.verbose)
        run["start"] = "warm"
        self.points.append((lam, run))
        return run

    def out_of_time(self):
        return self.deadline.expired()

    def _distinct(self, field, digits, n_points, fitting):
        """Indices of the first ``n_points`` end points by ``breakdown[field]``, one per
        value rounded to ``digits``, among those that fit (``fitting``) or not; the
        root-only start is never one."""
        chosen = {}
        for value, i in sorted([(r["breakdown"][field], i)
                                for i, (_, r) in enumerate(self.points)
                                if self.fits(r) == fitting and r["start"] != "root"]):
            if len(chosen) < n_points:
                chosen.setdefault(round(value, digits), i)
        return list(chosen.values())

    def repair(self, n_points=REPAIR_POINTS):
        """Make the cheapest over-budget end points fit by greedy unit removal."""
        for i in self._distinct("average_cost", 9, n_points, fitting=False):
            if self.out_of_time():
                break
            lam, run = self.points[i]
            st = self.state.with_lam(lam)
            mask = greedy_repair(st, run["mask"], self.budget, deadline=self.deadline)
            self.points.append((lam, _mask_run(st, mask, "repair")))

    def polish(self, n_points=POLISH_POINTS):
        """Budget descent from the lowest-loss feasible end points (distinct losses) not
        polished yet."""
        for i in self._distinct("loss", 6, n_points, fitting=True):
            key = self.points[i][1]["mask"].tobytes()
            if self.out_of_time() or key in self._polished:
                continue
            self._polished.add(key)
            mask, losses = budget_descent(self.state, self.points[i][1]["mask"], self.budget,
                                          deadline=self.deadline)
            run = _mask_run(self.state.with_lam(0.0), mask, "budget-descent")
            run.update(iterations=len(losses) - 1, losses=losses)
            self._polished.add(mask.tobytes())
            self.points.append((0.0, run))

    def explore(self, starts, max_lams=24):
        """Block descent at lam 0 from ``starts`` (tree moves only: at lam 0 a unit move
        trades loss for nothing), then, when that optimum is over the budget, the
        continuation in lam, greedy repair and polish."""
        if self.out_of_time():
            return
        state = self.state
        runs = run_starts(state, starts, max_iter=self.max_iter, deadline=self.deadline,
                          verbose=self.verbose, unit_moves=state.lam > 0)
        self.points.extend((0.0, r) for r in runs)
        n = 0
        root = self.points[0][1]
        if not self.fits(runs[0]):
            n = _continuation(self, LAM_START * _lam_scale(runs[0], root), runs[0]["mask"],
                              max_lams)
            self.repair()
        self.polish()
        self.n_lams += n + 1

    def best(self):
        """Lowest-loss end point within the budget (ties: the cheaper one)."""
        ok = [(r["breakdown"]["loss"], r["breakdown"]["average_cost"], i)
              for i, (_, r) in enumerate(self.points) if self.fits(r)]
        return self.points[min(ok)[2]]


def _mask_run(state, mask, start):
    """A given pruning as an end point at the state's lam (no descent from it)."""
    state.set_mask(mask)
    b = state.breakdown()
    return {"mask": state.mask.copy(), "trace": [b["objective"]], "iterations": 0,
            "converged": False, "changes": [], "breakdown": b, "start": start}


def _lam_scale(full_run, root_run):
    """A first lam: loss gained by the full model per unit of its cost."""
    gain = root_run["breakdown"]["loss"] - full_run["breakdown"]["loss"]
    cost = max(full_run["breakdown"]["average_cost"], 1e-12)
    return max(gain, 1e-6) / cost


def _continuation(search, lam, mask, max_lams):
    """Raise lam geometrically, each block descent warm-started from the previous
    (costlier) end point, until the chain fits the budget; then bisect the last
    lam step, again warm-starting from the costlier side.  Returns lams tried."""
    lo, lo_mask, hi, n, stuck = 0.0, mask, None, 0, 0
    while hi is None and n < max_lams and stuck < 2 and not search.out_of_time():
        run = search.solve_at(lam, lo_mask)
        n += 1
        if search.fits(run):
            hi = lam
        else:
            stuck = stuck + 1 if np.array_equal(run["mask"], lo_mask) else 0
            lo, lo_mask, lam = lam, run["mask"], lam * LAM_GROWTH
    while hi is not None and n < max_lams and not search.out_of_time():
        mid = math.sqrt(lo * hi) if lo > 0 else hi / LAM_GROWTH
        if hi / mid < 1.0 + 1e-3:
            break
        run = search.solve_at(mid, lo_mask)
        n += 1
        if search.fits(run):
            hi = mid
        else:
            lo, lo_mask = mid, run["mask"]
    return n


def search_budget(state, budget, starts, candidates=(), *, max_iter=50, max_lams=24,
                  deadline=UNLIMITED, verbose=False):
    """The lowest-loss pruning within an average-cost budget, searched on a ready
    state (at lam 0, the rows routed): the ensemble search of
    :func:`prune_opt.fit_budget` with an ensemble objective.

    A continuation in ``lam``: starting from the best pruning at ``lam = 0``
    (block descent from each of ``starts``), lam grows geometrically and block
    descent at each lam is warm-started from the previous (costlier) end
    point, so the chain prunes step by step instead of jumping between
    "everything" and "root only".  Once the chain fits, the last lam step is
    bisected; it also stops when two lam steps change nothing.  The cheapest
    end points over the budget are then made to fit by greedy unit removal
    (drop, from every tree, the unit with the least loss increase per cost
    saved until the budget holds), because no lam may give a pruning near the
    budget, and budget descent runs from the lowest-loss fitting end points.

    ``candidates`` (closed ``[(name, mask)]``, e.g. the baselines') join the end
    points before anything else runs, and budget descent starts first from
    the lowest-loss one that fits, so the result's loss is never above any
    fitting candidate's.  The root-only pruning is always an end point, so a
    fitting one always exists.

    Returns
    -------
    The search: ``points`` holds every end point ``(lam, run)`` (``run["start"]``
    is ``"root"``, a start's or a candidate's name, ``"warm"``, ``"repair"`` or
    ``"budget-descent"``; ``run["breakdown"]`` its loss and average cost),
    ``best()`` the lowest-loss one that fits (ties: the cheaper), ``n_lams`` the
    lams tried.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> from prune_opt.objectives import EnsembleState, get_objective
    >>> X, y = load_iris(return_X_y=True)
    >>> f = po.Forest.from_sklearn(RandomForestClassifier(5, random_state=0).fit(X, y))
    >>> state = EnsembleState(f, X, y, np.ones(len(y)), po.FeatureCosts.uniform(4),
    ...                       get_objective("brier"), lam=0.0)
    >>> search = search_budget(state, 1.0, [("full", f.full_split_mask())])
    >>> lam, run = search.best()
    >>> po.budget.fits_budget(run["breakdown"]["average_cost"], 1.0)  # the one tolerance
    True
    """
    search = BudgetSearch(state, budget, max_iter, deadline, verbose)
    fitting = 0
    for name, m in candidates:
        fitting += search.fits(search.add(name, m))
    if fitting:
        search.polish(n_points=1)
    search.explore(starts, max_lams=max_lams)
    return search


def budget_descent(state, mask, budget, *, max_iter=20, deadline=UNLIMITED):
    """Loss-decreasing block descent that keeps the average cost within ``budget``.

    ``mask`` must fit the budget.  Returns ``(mask, losses)`` with the loss
    after each sweep (non-increasing, the start first).
    """
    run = descend(state.with_lam(0.0, depth_cost=0.0), mask, budget, max_sweeps=max_iter,
                  deadline=deadline)
    return run["mask"], run["trace"]


def greedy_repair(state, mask, budget, *, deadline=UNLIMITED):
    """Drop units until the average cost is at most ``budget`` (hard constraint).

    Each step removes, from every tree, the unit with the smallest loss
    increase per unit of average cost saved (GreedyPrune's rule applied to
    the ensemble loss), re-evaluated exactly.  Returns the feasible split mask.
    """
    state = state.with_lam(state.lam)
    state.set_mask(mask)
    b = state.breakdown()
    while not fits_budget(b["average_cost"], budget) and not (
            deadline.expired()):
        best = None
        for u in state.paid_units():
            cand = without_unit(state.forest, state.mask, state.unit_nodes, u)
            c = state.breakdown_if(cand)
            saved = b["average_cost"] - c["average_cost"]
            if saved > 0:
                ratio = (c["loss"] - b["loss"]) / saved
                if best is None or ratio < best[0]:
                    best = (ratio, cand, c)
        if best is None:
            break
        state.set_mask(best[1])
        b = best[2]
    if not fits_budget(b["average_cost"], budget):  # out of time: every tree to its root
        state.set_mask(np.zeros_like(mask))
    return state.mask.copy()
