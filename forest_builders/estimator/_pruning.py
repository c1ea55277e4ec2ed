"""The pruning phase of the budget-pruned estimator: every candidate to the budget, scored.

A candidate *fits* when its average acquisition cost is within the budget on the
prune rows and, by a margin of :data:`COST_MARGIN` standard errors, on every row
given to ``fit`` (cost needs no labels, so every row measures it: the mean over
all of them is the better estimate of what a new row costs, and the margin
keeps it from being exceeded half the time).  A candidate that fits as grown is
kept as it is; any other is pruned on the prune rows by
:func:`prune_opt.fit_budget`: a forest with the paper's objective (errors on the
grow rows), a boosted model with its own loss (errors on the prune rows, which
did not grow it); the :data:`OWN_LOSS_MODELS` forests whose paper pruning has the
lowest Brier loss (squared error) on the prune rows are pruned again with their
own loss, started from that pruning.  The searches are given the budget times a
ratio ``rho`` (1 at first); when a pruning misses the margin on every row, ``rho``
is lowered by the miss and the pruning is run again (at most :data:`RETRIES`
times, when the clock has room).  Every pruning of a forest is also tried with
its leaves refit on the grow rows (``refit=True``; same splits, same cost).

A candidate's rows are routed through its trees once (:class:`Routes`): its cost
on the prune rows while it grows, its pruning program and search, every
pruning's cost on every row and its scores on the select rows all read the same
leaves, since a pruning or a leaf refit keeps the candidate's splits.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import prune_opt as po
from prune_opt import Deadline, PrunedForest
from prune_opt.budget import fits_budget

__all__ = ["FitData", "PruningRun", "Routes", "cost_summary", "fits", "zero_cost_model",
           "refits_leaves", "COST_MARGIN"]

#: the share of the time left per pruning call that its fit_budget search is given (the
#: searches end a little late, and compiling, refitting and scoring come on top)
CALL_SHARE = 0.6
#: the least time limit of a fit_budget call (it returns its quickest fitting pruning)
MIN_CALL = 0.02
#: a pruning call runs only when this share of time_limit is left for its search (a search
#: cut shorter mostly returns a baseline): when time is short, fewer candidates are pruned
MIN_CALL_SHARE = 0.04
#: forests pruned with their own loss besides the paper's objective (the best paper prunings)
OWN_LOSS_MODELS = 3
#: standard errors of the mean cost over every row given to fit that a candidate keeps
#: below the budget
COST_MARGIN = 1.0
#: prunings of one candidate again at a lower share of the budget when one misses the margin
RETRIES = 2
#: the leaf refit of the prunings (:func:`prune_opt.refit_leaves`): a joint least-squares
#: fit of every leaf to the forest's Brier loss (or squared error)
REFIT_METHOD = "global"
#: ``candidates_`` cost columns (normalised units during the fit)
COST_COLUMNS = ("average_cost", "fit_cost", "fit_cost_bound", "heldout_cost", "select_cost")


class FitData:
    """The checked rows of one fit, its three disjoint index sets and the budget in
    normalised cost units."""

    def __init__(self, X, y, grow, prune, select, budget):
        self.X, self.y = X, y
        self.grow, self.prune, self.select = grow, prune, select
        self.budget = budget
        #: the rows no candidate is pruned on (the grow and select rows)
        self.heldout = np.sort(np.concatenate([grow, select]))
        #: the rows of each part, sliced once: every candidate's :class:`Routes` read them
        self.parts = {"grow": X[grow], "prune": X[prune], "select": X[select]}


class Routes:
    """The rows of one fit routed once through one candidate's trees, part by part.

    Each part of the rows (``"grow"``, ``"prune"``, ``"select"``) is routed when first
    asked for (the prune rows while the candidate grows, the others when it is
    scored) and kept as prune_opt's :class:`~prune_opt.routing._routed.RoutedData`, which
    serves every pruning and leaf refit of the candidate: they keep its splits.

    Parameters
    ----------
    forest : Forest
        The candidate as grown.
    parts : dict
        ``{part: rows}``, the rows of each part of the fit (:attr:`FitData.parts`).
    """

    def __init__(self, forest, parts):
        self.forest, self.parts, self._views = forest, parts, {}

    def rows(self, part):
        """The rows of ``part`` routed through the candidate (:func:`prune_opt.route`)."""
        from prune_opt import route

        if part not in self._views:
            self._views[part] = route(self.forest, self.parts[part])
        return self._views[part]

    def serves(self, pf):
        """Whether ``pf`` keeps this candidate's splits (a pruning or a leaf refit of it)."""
        return pf.forest is self.forest or pf.forest.same_splits(self.forest)

    def row_costs(self, pf, part):
        """What each row of ``part`` pays under ``pf`` (a pruning of this candidate)."""
        return np.asarray(pf.acquisition_cost(self.rows(part)), dtype=float)


def routed_scores(pf, routed, y):
    """``(score, loss)`` of ``pf`` on the routed rows with labels ``y``: accuracy and Brier
    loss, or R² and squared error (:meth:`prune_opt.PrunedForest.score`,
    :func:`prune_row_loss`), read off the rows routed once."""
    if pf.task == "regression":
        pred = pf.predict(routed)
        return pf.score(routed, y), float(np.mean((pred - y) ** 2))
    out = pf.predict_proba(routed)
    classes = pf.classes_
    onehot = (y[:, None] == classes[None, :]).astype(float)
    acc = float(np.mean(classes[np.argmax(out, axis=1)] == y))
    return acc, float(np.mean(np.sum((out - onehot) ** 2, axis=1)))


def cost_summary(pf, d, routes=None):
    """The cost columns of a pruning: its average acquisition cost on the prune rows, on
    every row given to fit (and that plus :data:`COST_MARGIN` standard errors), on the
    rows it was not pruned on and on the select rows (read off ``routes``, the
    candidate's routed rows, when given)."""
    if routes is not None and routes.serves(pf):
        part = {p: routes.row_costs(pf, p) for p in ("grow", "prune", "select")}
    else:
        c = np.asarray(pf.acquisition_cost(d.X), dtype=float)
        part = {"grow": c[d.grow], "prune": c[d.prune], "select": c[d.select]}
    c = np.concatenate([part["grow"], part["prune"], part["select"]])
    heldout = np.concatenate([part["grow"], part["select"]])
    n = c.size
    mean = float(np.mean(c))
    se = float(np.std(c, ddof=1) / np.sqrt(n)) if n > 1 else 0.0
    return {"average_cost": float(np.mean(part["prune"])), "fit_cost": mean,
            "fit_cost_bound": mean + COST_MARGIN * se,
            "heldout_cost": float(np.mean(heldout)) if heldout.size else np.nan,
            "select_cost": float(np.mean(part["select"])) if part["select"].size else np.nan}


def fits(summary, budget):
    """Whether a pruning with these cost columns fits the budget."""
    return bool(fits_budget(summary["average_cost"], budget)
                and fits_budget(summary["fit_cost_bound"], budget))


def own_loss(forest):
    """The loss a model is pruned with besides the paper's objective: its kind's own
    (a booster's log-loss or squared error, a forest's Brier score or squared error),
    when offered."""
    own = forest.ensemble.own_loss(forest.task)
    return own if own in po.objectives.available_objectives() else None


def _first_objective(forest):
    """What a candidate is pruned with first: its kind's default (the paper's program for
    a forest, a booster's own loss)."""
    return forest.ensemble.default_objective(forest.task)


def zero_cost_model(pf, costs):
    """``pf`` keeping only the splits on features that cost nothing alone, below kept
    splits only: the model no row pays for (the prior when no feature is free).

    At budget 0 a pruning that costs nothing on the rows it was searched on can keep
    paid splits that only other rows reach; a search at a lower budget cannot help,
    so those splits go.  A pruned node predicts what the pruning's forest says of it
    (a boosted model's fitted node value), as in any pruning.
    """
    f = pf.forest
    free = np.asarray(costs.feature_cost(), dtype=float) == 0
    keep = pf.split_mask.copy()
    keep[keep] = free[f.feature[keep]]
    for level in range(1, f.max_depth + 1):  # a split below a dropped one goes too
        nodes = np.flatnonzero(keep & (f.depth == level))
        keep[nodes] = keep[f.parent[nodes]]
    if np.array_equal(keep, pf.split_mask):
        return pf
    return PrunedForest(f, keep, costs=pf.costs, estimator_class=pf.estimator_class,
                        solve_info={**pf.solve_info,
                                    "zero_cost": "budget 0: the splits on paid features dropped"})


def prune_row_loss(pf, X, y):
    """Brier loss (squared error for regression) of a pruning on ``(X, y)``."""
    if pf.task == "regression":
        return float(np.mean((pf.predict(X) - y) ** 2))
    onehot = (y[:, None] == pf.classes_[None, :]).astype(float)
    return float(np.mean(np.sum((pf.predict_proba(X) - onehot) ** 2, axis=1)))


def refits_leaves(forest):
    """Whether the estimator's leaf refit (:func:`refit_forest`) applies to ``forest``: its
    ensemble kind lists the refit methods of its node values (a forest's class
    distributions or means; a booster's raw scores are refit by no method of ours)."""
    return REFIT_METHOD in forest.ensemble.refit_methods()


def refit_forest(pf, X, y):
    """``pf`` with its leaves re-estimated on ``(X, y)`` (same splits, hence same cost)."""
    return po.refit_leaves(pf, None, None, train=(X, y), in_bag=False, smoothing=1.0,
                           method=REFIT_METHOD)


class PruningRun:
    """The pruning calls of one fit: every candidate to the budget, each result a row.

    Parameters
    ----------
    candidates : list of Candidate
    d : FitData
    costs : FeatureCosts
        Normalised.
    clock : FitClock
    share : float
        The share of ``time_limit`` by which the calls end (the pruning phase).
    bar : tqdm
        Progress (a no-op unless verbose).
    refit : bool
        Also try every forest pruning with its leaves refit on the grow rows.
    """

    def __init__(self, candidates, d, costs, clock, share, bar, refit):
        self.cands, self.d, self.costs = candidates, d, costs
        self.clock, self.bar, self.refit = clock, bar, refit
        #: the pruning phase: a sub-deadline of the fit's
        self.phase = clock.until(share)
        self.rho = 1.0
        self.rows, self.problems, self.calls = [], {}, 0

    # ------------------------------------------------------------ rows
    def routes(self, cand):
        """The candidate's :class:`Routes` (its rows routed once, kept until released)."""
        if cand.routes is None:
            cand.routes = Routes(cand.forest, self.d.parts)
        return cand.routes

    def _scores(self, cand, pf, part, y):
        """``(score, loss)`` of ``pf`` (a pruning of ``cand``) on the rows of ``part``."""
        routes = self.routes(cand)
        if routes.serves(pf):
            return routed_scores(pf, routes.rows(part), y)
        X = self.d.parts[part]
        return float(pf.score(X, y)), prune_row_loss(pf, X, y)

    def _row(self, label, cand, objective, refit, pf, summary, seconds):
        d = self.d
        score, brier = self._scores(cand, pf, "select", d.y[d.select])  # accuracy, or R²
        return dict(name=label, model=cand.name, family=cand.family, objective=objective,
                    refit=refit, n_splits=int(pf.n_splits), **summary, score=score,
                    brier=brier, above_prior=False, fits_budget=fits(summary, d.budget),
                    chosen=False, reason="", seconds=float(seconds), _pruned=pf)

    def skip(self, label, cand, objective, reason):
        """A row for a candidate that was not scored (``reason`` says why)."""
        self.rows.append(unscored_row(label, cand.name, cand.family, objective, reason))
        if self.bar is not None and not self.bar.disable:
            self.bar.write(f"skipped {label}: {reason}", file=sys.stderr)

    # ------------------------------------------------------------ the phase
    def run(self):
        """Every candidate as it is when it fits, else pruned; the rows."""
        d = self.d
        todo = {}  # candidate -> its cost over the budget on the prune rows
        for i, cand in enumerate(self.cands):
            full = PrunedForest(cand.forest, cand.forest.full_split_mask(), costs=self.costs)
            routes = self.routes(cand)
            # every row's cost only for a model within the budget on the prune rows (a
            # prefix model's prune-row cost was measured while the family grew)
            cost = cand.info.get("prune_cost")
            if cost is None:
                cost = float(np.mean(routes.row_costs(full, "prune")))
            summary = (cost_summary(full, d, routes) if fits_budget(cost, d.budget)
                       else None)
            if summary is not None and d.budget <= 0:  # paid splits no given row reaches
                full = zero_cost_model(full, self.costs)
            if summary is not None and fits(summary, d.budget):  # as grown: its growing time
                self.rows.append(self._row(cand.name, cand, "none", False, full, summary,
                                           cand.seconds))
                cand.routes = None  # scored: its routed rows are not needed again
            elif cand.info.get("grown_on") == "grow+prune":
                # grown on the prune rows because its features fit: never pruned there
                self.rows.append(unscored_row(
                    cand.name, cand.name, cand.family, "none",
                    "costs more than the budget with its margin on every row given to fit "
                    "although its features fit; grown on the prune rows, so not pruned "
                    "on them"))
            else:
                todo[i] = cost / d.budget if d.budget > 0 else np.inf
        # the models closest to the budget first: they lose least to pruning, and when time
        # is short the ones far above it are the ones left out; a penalised family's
        # stronger model (prune_last) only in the time every other pruning leaves
        todo = sorted(todo, key=lambda i: (bool(self.cands[i].info.get("prune_last")),
                                           todo[i], i))
        required = not self.rows  # nothing fits as grown: the first pruning must run
        # the models pruned by the paper's program first get a second pass in their own loss
        forests = [i for i in todo if _first_objective(self.cands[i].forest) == "paper"]
        second = (min(len(forests), OWN_LOSS_MODELS)
                  if forests and own_loss(self.cands[forests[0]].forest) else 0)
        self.calls = len(todo) + second
        self.bar.total += self.calls
        self.bar.refresh()
        screen, papers = [], {}
        for k, i in enumerate(todo):
            forest = self.cands[i].forest
            obj = _first_objective(forest)
            pruned = self.prune(i, obj, required=required and k == 0)
            if pruned is not None and obj == "paper":
                screen.append((self._scores(self.cands[i], pruned, "prune",
                                            d.y[d.prune])[1], i))
                papers[i] = pruned
        again = [i for _, i in sorted(screen)[:second]]
        for i in set(todo) - set(again):  # done: their routed rows are not needed again
            self.cands[i].routes = None
        for i in again:
            obj = own_loss(self.cands[i].forest)
            if obj is not None:  # the paper pruning joins the own loss's starts
                self.prune(i, obj, warm=papers[i])
        for cand in self.cands:
            cand.routes = None
        return self.rows

    def _problem(self, i):
        """Candidate ``i``'s pruning program on the prune rows, compiled once: errors on the
        grow rows for a forest (each tree's in-bag sample), on the prune rows for a
        boosted model (which were not among its training rows)."""
        if i not in self.problems:
            d, cand = self.d, self.cands[i]
            forest = cand.forest
            train = (d.parts["grow"], d.y[d.grow]) if forest.ensemble.in_bag_errors else None
            # from the candidate's routed prune rows, which fit_budget reads in turn
            self.problems[i] = po.compile_problem(forest, d.parts["prune"], d.y[d.prune],
                                                  costs=self.costs, train=train,
                                                  routed=self.routes(cand).rows("prune"))
        return self.problems[i]

    def _call(self, seconds, required):
        """The deadline of one ``fit_budget`` search of ``seconds``: within the pruning
        phase, or, for the pruning that must run (nothing fits as grown), its seconds
        whatever the phase has left."""
        return Deadline(seconds) if required else self.phase.within(seconds)

    def _search(self, i, obj, call, warm, rho):
        d = self.d
        problem = self._problem(i)  # compiled within the call's time
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return po.fit_budget(problem, d.parts["prune"], d.y[d.prune],
                                 budget=d.budget * rho, objective=obj,
                                 time_limit=call, warm_start=warm)

    def prune(self, i, obj, warm=None, required=False):
        """Candidate ``i`` pruned with ``obj`` (and refit), or None when it failed or the
        clock left no room for it (a row says which)."""
        cand, d, clock = self.cands[i], self.d, self.clock
        label = f"{cand.name} / fit_budget({obj})"
        kind = prune_kind(cand.forest)  # the clock learns each kind's overrun
        calls, self.calls = self.calls, self.calls - 1
        self.bar.set_description(f"pruning {cand.name} ({obj})")
        self.bar.update()
        floor = max(MIN_CALL, MIN_CALL_SHARE * clock.time_limit)
        if not required and not clock.fits(kind, self.phase, extra=floor):
            self.skip(label, cand, obj, no_room("pruned", clock, kind, self.phase, floor))
            return None
        t0 = time.perf_counter()
        room = self.phase.left() - calls * clock.expected(kind)
        limit = max(floor, CALL_SHARE * room / max(calls, 1))
        rho, tries = self.rho, 0
        try:
            pruned = self._search(i, obj, self._call(limit, required), warm, rho)
            if d.budget <= 0:  # no lower budget to aim at: the zero-cost model
                pruned = zero_cost_model(pruned, self.costs)
            summary = cost_summary(pruned, d, self.routes(cand))
            while not fits(summary, d.budget) and d.budget > 0 and (
                    tries < RETRIES + 2 * required) and (
                    required or clock.fits(kind, self.phase, extra=limit)):
                # the margin on every row was missed: aim lower on the prune rows, by the miss
                miss = summary["fit_cost_bound"] - d.budget
                rho = self.rho = min(self.rho, max(summary["average_cost"] - miss, 0.0)
                                     / d.budget * (1 - 1e-6))
                pruned = self._search(i, obj, self._call(limit, required),
                                      [pruned] + ([] if warm is None else [warm]), rho)
                summary = cost_summary(pruned, d, self.routes(cand))
                tries += 1
        except ValueError as exc:  # e.g. the budget is below the cheapest pruning
            self.skip(label, cand, obj, f"fit_budget failed: {exc}")
            return None
        if required and not fits(summary, d.budget):  # the free model always fits
            pruned = PrunedForest(cand.forest, np.zeros_like(pruned.split_mask),
                                  costs=self.costs)
            summary = cost_summary(pruned, d, self.routes(cand))
        elapsed = time.perf_counter() - t0
        # the row's seconds: the candidate's growing and this pruning (with its retries)
        self.rows.append(self._row(label, cand, obj, False, pruned, summary,
                                   cand.seconds + elapsed))
        clock.note(kind, elapsed / (1 + tries) - limit)  # beyond the search's limit
        if (self.refit and refits_leaves(cand.forest) and pruned.n_splits > 0
                and clock.fits("refit", self.phase)):
            t0 = time.perf_counter()
            with clock.step("refit"):
                refit = refit_forest(pruned, d.X[d.grow], d.y[d.grow])
                self.rows.append(self._row(label + " + refit", cand, obj, True, refit, summary,
                                           cand.seconds + elapsed + time.perf_counter() - t0))
        return pruned


def prune_kind(forest):
    """The clock's kind of a pruning call of ``forest``: one per ensemble kind."""
    return f"prune-{forest.ensemble.kind}"


def unscored_row(name, model, family, objective, reason):
    """The candidates row of a candidate that was not scored (``reason`` says why)."""
    return dict(name=name, model=model, family=family, objective=objective, refit=False,
                n_splits=0, **{c: np.nan for c in COST_COLUMNS}, score=np.nan, brier=np.nan,
                above_prior=False, fits_budget=False, chosen=False, reason=reason, seconds=0.0,
                _pruned=None)


def no_room(what, clock, kind, phase, extra=0.0):
    """Why a step was skipped: the time it was expected to take and the time left of its
    ``phase`` (a Deadline)."""
    return (f"not {what}: expected to take {clock.expected(kind) + extra:.3g} s, "
            f"{phase.left():.3g} s were left of this phase of time_limit")
