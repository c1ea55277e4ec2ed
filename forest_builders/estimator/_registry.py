"""The candidate families of the budget-pruned estimator: one registry.

Each family the estimator grows (a random forest, shallow forests, forests on
the cheapest features, lazy-penalty forests, gradient boosting on the cheapest
features, CEGB) is one :class:`CandidateFamily` in :data:`CANDIDATE_FAMILIES`:
its name, the tasks it applies to, the packages it needs, and ``grow(ctx)``,
which grows its models on the grow rows of one fit through a
:class:`GrowContext`.  The estimator, its ``candidates=`` parameter and the
benchmarks iterate over the registry; adding a family is one decorated
function (:func:`register_family`) in a module that ``forest_builders.estimator``
imports (``_forests``, ``_boosted``, ``_catboost``: they register when imported).

A family grows through the context only: :meth:`GrowContext.grow` runs a
model's recipe (``recipe(rows, deadline=None) -> Forest``; a boosted model or a
lazy forest stops adding rounds or trees once ``deadline`` has passed) on the
grow rows when the fit's clock expects it to end in time, records the model as a
candidate (with the recipe, so the winner can be grown again on other rows) or,
when there is no room, a row saying what was skipped and why.

**Anchors.**  A family may also register an *anchor*: ``anchor(ctx)`` grows its
one model that is cheap and strong at any budget (the families on feature
prefixes: their model on the longest cost-ranked prefix whose features all fit
the budget, which fits by construction).  The estimator grows every anchor
first, whatever the clock says (inside :meth:`GrowContext.anchoring`; the cost
ranking they need ends by :data:`RANK_SHARE` of ``time_limit``, with coarser
rounds when time is short), and only then gives the families their shares of
the growing time; a family's own ``grow`` meets its anchor's model again under
the same name and keeps it (:meth:`GrowContext.grow` does not grow a name twice).
"""

from __future__ import annotations

import contextlib
import importlib.util
import time
from dataclasses import dataclass, field

import numpy as np

from prune_opt import Deadline

from ._clock import EarliestOf

__all__ = ["CandidateFamily", "CANDIDATE_FAMILIES", "register_family", "family_status",
           "resolve_families", "GrowContext", "Candidate", "RANK_SHARE", "REGARDLESS_SHARE",
           "REGARDLESS_WALL_SHARE"]

#: name -> CandidateFamily, in the order the estimator grows them
CANDIDATE_FAMILIES = {}
#: the share of time_limit, in CPU seconds, by which the cost ranking the anchors need
#: ends (its elimination drops more features per round when the rounds would not end by
#: then)
RANK_SHARE = 0.25
#: the share of time_limit, in CPU seconds from the start of growing, by which the steps
#: that run whatever the clock says (the anchors, the fit's first model) stop adding
#: rounds or trees; they normally end long before (the ranking included)
REGARDLESS_SHARE = 0.4
#: the share of time_limit on the wall clock by which they stop at the latest
REGARDLESS_WALL_SHARE = 0.5


@dataclass(frozen=True)
class CandidateFamily:
    """One kind of candidate model of the budget-pruned estimator.

    Attributes
    ----------
    name : str
        The family's name (``candidates=``, ``candidates_["family"]``).
    grow : callable
        ``grow(ctx)`` grows the family's models through a :class:`GrowContext`.
    tasks : tuple of str
        ``"classification"`` and/or ``"regression"``.
    requires : tuple of str
        Python packages the family needs (it is skipped when one is missing).
    boosted : bool
        Whether its models are boosted (additive) ensembles.
    description : str
        One line for tables and docs.
    order : int
        Families are grown in increasing order (the cheap and most useful first:
        the clock may leave no room for the last ones).
    default : bool
        Whether ``candidates=None`` grows it (False: only when named).
    anchor : callable or None
        ``anchor(ctx)`` grows the family's model that is cheap and strong at any
        budget; the estimator grows every anchor before any family's ``grow``,
        whatever the time left (see the module docstring).  None: no anchor.
    """

    name: str
    grow: object
    tasks: tuple = ("classification", "regression")
    requires: tuple = ()
    boosted: bool = False
    description: str = ""
    order: int = 100
    default: bool = True
    anchor: object = None

    def status(self, task):
        """None when the family applies to ``task`` here, else why not."""
        if task not in self.tasks:
            return f"grows {' and '.join(self.tasks)} models only"
        missing = [p for p in self.requires if importlib.util.find_spec(p) is None]
        if missing:
            return f"needs {', '.join(missing)} (pip install prune-opt[{missing[0]}])"
        return None


def register_family(name, *, tasks=("classification", "regression"), requires=(),
                    boosted=False, description="", order=100, default=True, anchor=None):
    """Decorator: register ``grow(ctx)`` as the candidate family ``name`` (grown in
    increasing ``order``; ``default=False``: only when ``candidates=`` names it;
    ``anchor(ctx)``, when given, before every family)."""
    def deco(fn):
        CANDIDATE_FAMILIES[name] = CandidateFamily(name, fn, tuple(tasks), tuple(requires),
                                                   bool(boosted), description, int(order),
                                                   bool(default), anchor)
        ordered = sorted(CANDIDATE_FAMILIES.items(), key=lambda kv: kv[1].order)
        CANDIDATE_FAMILIES.clear()
        CANDIDATE_FAMILIES.update(ordered)
        return fn
    return deco


def family_status(task):
    """``{name: None or why it does not apply}`` of every registered family for ``task``."""
    return {name: fam.status(task) for name, fam in CANDIDATE_FAMILIES.items()}


def resolve_families(candidates, task):
    """The family names a fit grows: every default one that applies to ``task`` and is
    installed (``candidates=None``), or the named ones, in registry order.

    Raises
    ------
    ValueError
        A name is unknown, or the family does not apply (wrong task, package missing).
    """
    status = family_status(task)
    if candidates is None:
        return [n for n, why in status.items()
                if why is None and CANDIDATE_FAMILIES[n].default]
    names = [candidates] if isinstance(candidates, str) else list(candidates)
    if not names:
        raise ValueError(f"candidates is empty; name at least one family of "
                         f"{list(CANDIDATE_FAMILIES)}, or pass None for all that apply")
    for n in names:
        if not isinstance(n, str) or n not in status:
            raise ValueError(f"candidates: unknown family {n!r}; the families are "
                             f"{list(CANDIDATE_FAMILIES)}")
        if status[n] is not None:
            raise ValueError(f"candidates: family {n!r} cannot be used here: it {status[n]}")
    if len(set(names)) != len(names):
        raise ValueError(f"candidates: a family is named twice ({names})")
    return [n for n in CANDIDATE_FAMILIES if n in names]


@dataclass
class Candidate:
    """A grown model: its name, family, clock kind, the Forest grown on the grow rows and
    its recipe (``(rows, deadline=None) -> Forest``), which grows it again on other rows;
    ``seconds``: what growing it took; ``routes``: the fit's rows routed through it
    (:class:`forest_builders.estimator._pruning.Routes`), while they are needed."""

    name: str
    family: str
    kind: str
    forest: object
    recipe: object
    info: dict = field(default_factory=dict)
    routes: object = None
    #: seconds it took to grow
    seconds: float = 0.0


class GrowContext:
    """The rows, costs, budget, parameters and clock a family grows its models with.

    Parameters
    ----------
    X, y : ndarray
        Every row given to ``fit`` (a regression target standardised).
    grow, prune : ndarray of int
        The grow rows (models are fitted on them) and the prune rows (their costs
        steer which models are grown; boosted models stop early on them).
    budget : float
        In the normalised cost units of ``costs``.
    costs : prune_opt.FeatureCosts
    names : list of str or None
        Column names given to every Forest.
    task : str
    params : dict
        ``n_estimators``, ``n_jobs``, ``seed``, ``max_subsets`` of the estimator.
    clock : FitClock
    share : float
        The share of ``time_limit`` by which growing must end (after the anchors: of the
        time they left, see :meth:`anchoring`).
    parts : dict, optional
        ``{"grow", "prune", "select": rows}``, sliced once for the whole fit (default:
        sliced here, the select rows being the others).
    """

    def __init__(self, X, y, grow, prune, budget, costs, names, task, params, clock, share,
                 parts=None):
        self.X, self.y, self.rows, self.prune = X, y, grow, prune
        #: the rows of each part of the fit, sliced once (``FitData.parts``)
        self.parts = parts if parts is not None else {
            "grow": X[grow], "prune": X[prune],
            "select": X[np.setdiff1d(np.arange(X.shape[0]), np.concatenate([grow, prune]))]}
        self.budget, self.costs, self.names, self.task = budget, costs, names, task
        self.n_estimators = int(params["n_estimators"])
        self.n_jobs = params.get("n_jobs")
        self.seed = int(params["seed"])
        self.max_subsets = int(params["max_subsets"])
        self.clock, self.share = clock, share
        self.candidates, self.skipped = [], []
        #: the grow and prune rows: a model that cannot exceed the budget grows on both
        self.grow_prune = np.sort(np.concatenate([grow, prune]))
        self._ranking = False  # not computed yet (None: could not be)
        #: the growing phase (a sub-deadline of the fit's) and the current family's share
        self.growing = clock.until(share)
        self.family = None
        #: what the steps that run whatever the clock says stop by (the anchors, the fit's
        #: first model): REGARDLESS_SHARE of time_limit in CPU seconds, a bound the
        #: machine's load does not move, or REGARDLESS_WALL_SHARE of it on the wall clock,
        #: which only a machine that starves the fit's threads reaches (LightGBM with
        #: n_jobs=-1 beside other jobs: 20 s for one anchor at time_limit=18)
        self.regardless = EarliestOf(
            Deadline(REGARDLESS_SHARE * clock.time_limit, timer=time.process_time),
            clock.until(REGARDLESS_WALL_SHARE))
        self._anchoring = False  # growing the anchors: their steps run whatever the clock

    @contextlib.contextmanager
    def anchoring(self):
        """Grow the families' anchors: every step runs whatever the clock says (its rounds
        end by :attr:`regardless`), and the cost ranking ends by :data:`RANK_SHARE` of
        ``time_limit`` in CPU seconds (coarser rounds when short).  Growing then ends by
        ``share`` of the time the anchors left, not of ``time_limit``: the anchors need
        no pruning, so the pruning phase does not lose what they took."""
        self._anchoring = True
        try:
            yield self
        finally:
            self._anchoring = False
            self.growing = self.clock.deadline.share(self.share)

    def grow_left(self):
        """Seconds left until growing ends (0 after)."""
        return self.growing.left()

    def grown(self, name):
        """The candidate named ``name`` when it was grown (by an anchor), else None."""
        return next((c for c in self.candidates if c.name == name), None)

    def begin_family(self, families_left):
        """Give the family about to grow an equal share of the growing time left among the
        ``families_left`` (itself included): one family's steps (a CEGB search on a
        multiclass table, say) cannot take the time of the others."""
        self.family = self.growing.share(1.0 / max(int(families_left), 1))

    def phase(self):
        """The deadline of the current family's steps: its share of the growing time."""
        return self.family if self.family is not None else self.growing

    def left(self):
        """Seconds left for the current family's steps."""
        return self.phase().left()

    @property
    def n_features(self):
        return self.X.shape[1]

    def allows(self, kind, extra=0.0):
        """Whether a step of ``kind`` is expected to end before the current family's share
        of the growing time (and growing) ends."""
        return self.clock.fits(kind, self.phase(), extra)

    def time_share(self, kind, models):
        """The share (at most 1) of its usual size that each of ``models`` more models of
        ``kind`` can have to be grown in the time left, by the last one's duration (1
        before any): a family grows fewer rounds when time is short."""
        expected = self.clock.expected(kind) if kind in self.clock.seconds else 0.0
        if expected <= 0.0:
            return 1.0
        return float(min(1.0, self.left() / (models * expected)))

    def skip(self, name, family, kind, what="grown", *, shared=False):
        """Record that ``name`` was not grown (or ranked) for lack of time: in the
        current family's share of the growing time, or (``shared``) in all of it."""
        left, of = ((self.grow_left(), "the growing share") if shared else
                    (self.left(), f"the {family} family's share"))
        self.skipped.append((name, family, (
            f"not {what}: expected to take {self.clock.expected(kind):.3g} s, "
            f"{left:.3g} s were left of {of} of time_limit")))

    def timed(self, kind, fn):
        """``fn(deadline)`` timed as a step of ``kind``: ``(its result, seconds)``, or
        ``(None, 0.0)`` (nothing run) when the clock expects it not to end in time, unless
        an anchor is growing or no candidate was grown yet (a fit has at least one).
        ``deadline`` is what the step stops by when it can stop early (a boosted model's
        rounds, a lazy forest's trees): the current family's share of the growing time,
        or, for a step that runs whatever the clock says, :attr:`regardless`."""
        regardless = self._anchoring or not self.candidates
        if not regardless and not self.allows(kind):
            return None, 0.0
        t0 = time.perf_counter()
        with self.clock.step(kind):
            out = fn(self.regardless if regardless else self.phase())
        return out, time.perf_counter() - t0

    def grow(self, name, family, kind, recipe, *, rows=None, **info):
        """Grow ``recipe(rows, deadline=...)`` (default: the grow rows; see :meth:`timed`)
        as the candidate ``name`` when the clock has room (an anchor, and the fit's first
        candidate, always is); the Forest, or None when skipped.  ``rows=ctx.grow_prune``
        is for a model that fits the budget whatever it learns (see :meth:`prefix_fits`):
        it is never pruned, so the prune rows may grow it; the select rows never do.  A
        name already grown (by an anchor) is not grown again: its Forest is returned."""
        done = self.grown(name)
        if done is not None:
            return done.forest
        use = self.rows if rows is None else rows
        forest, seconds = self.timed(kind, lambda deadline: recipe(use, deadline=deadline))
        if forest is None:
            self.skip(name, family, kind)
            return None
        if rows is not None:
            info["grown_on"] = "grow+prune"
        return self.add(name, family, kind, forest, recipe, seconds=seconds, **info)

    def add(self, name, family, kind, forest, recipe, *, seconds=0.0, **info):
        """Record ``forest`` (grown on the grow rows by ``recipe`` in ``seconds``) as a
        candidate."""
        self.candidates.append(Candidate(name, family, kind, forest, recipe, info,
                                         seconds=float(seconds)))
        return forest

    def prune_cost(self, forest):
        """Average acquisition cost of the whole (unpruned) ``forest`` on the prune rows,
        kept with its candidate (the pruning phase reads it instead of measuring again,
        and the prune rows stay routed through it for its pruning)."""
        from prune_opt import PrunedForest

        from ._pruning import Routes

        cand = next((c for c in self.candidates if c.forest is forest), None)
        if cand is not None and "prune_cost" in cand.info:
            return cand.info["prune_cost"]
        pf = PrunedForest(forest, forest.full_split_mask(), costs=self.costs)
        if cand is None:  # not (yet) a candidate: nothing to keep
            return float(pf.average_cost(self.parts["prune"]))
        if cand.routes is None:
            cand.routes = Routes(forest, self.parts)
        cand.info["prune_cost"] = float(np.mean(cand.routes.row_costs(pf, "prune")))
        return cand.info["prune_cost"]

    def ranking(self, family):
        """The cost-aware feature ranking on the grow rows (computed once per fit, shared
        by the families on feature prefixes); None when the clock had no room for it."""
        if self._ranking is not False:
            return self._ranking
        from ..feature_subset import rank_on_rows

        Xa, ya = self.X[self.rows], self.y[self.rows]
        # the ranking serves every family on prefixes (subset, gbm): it may take the
        # growing time left to all of them, not only the asking family's share; for the
        # anchors it always runs, in RANK_SHARE of time_limit in CPU seconds: a fixed
        # figure, so the anchors do not depend on the machine's load
        left = RANK_SHARE * self.clock.time_limit if self._anchoring else self.grow_left()
        if not self._anchoring and self.candidates and not self.clock.fits("rank",
                                                                           self.growing):
            self._ranking = None
            self.skip("ranking", family, "rank", "ranked", shared=True)
            return None
        with self.clock.step("rank"):
            self._ranking = rank_on_rows(Xa, ya, self.costs, self.task,
                                         min(20, self.n_estimators), self.seed,
                                         time_limit=max(left, 0.0))
        return self._ranking

    def prefix_fits(self, ranking, k):
        """Whether the first ``k`` features of ``ranking`` together fit the budget: then a
        model reading only them cannot cost more than the budget on any row."""
        from prune_opt.budget import fits_budget

        from ..feature_subset import subset_costs

        return bool(fits_budget(subset_costs(self.costs, ranking)[k - 1], self.budget))

    def prefix_start(self, ranking):
        """The longest prefix of ``ranking`` whose features all fit the budget (at least 1)."""
        from prune_opt.budget import fits_budget

        from ..feature_subset import subset_costs

        prefix = subset_costs(self.costs, ranking)
        return max(1, int(np.sum(fits_budget(prefix, self.budget))))

    def grow_prefixes(self, family, recipe_at, *, last, most, anchor=False, **info):
        """The ``family``'s models on nested prefixes of the cost ranking, named
        ``family(k=...)``: from the longest prefix whose features all fit the budget
        (only that one, when it fits, for the ``anchor``) to at most the first ``last``
        features, until ``most`` were grown or two cost more than the budget on the prune
        rows.  ``recipe_at(cols, fits)`` is the recipe of the model reading the columns
        ``cols`` (None: every column), whose features all fit the budget or not (``fits``):
        one that fits is never pruned, so it grows on the grow and prune rows."""
        from prune_opt.budget import fits_budget

        ranking = self.ranking(family)
        if ranking is None:
            return
        k, n_grown, over = self.prefix_start(ranking), 0, 0
        if anchor and not (k <= last and self.prefix_fits(ranking, k)):
            return
        while k <= last and n_grown < (1 if anchor else most) and over < 2:
            fits = self.prefix_fits(ranking, k)
            cols = None if k == self.n_features else np.sort(ranking[:k])
            f = self.grow(f"{family}(k={k})", family, family, recipe_at(cols, fits),
                          rows=self.grow_prune if fits else None, **info)
            if f is None:
                return
            n_grown += 1
            over += not fits_budget(self.prune_cost(f), self.budget)
            k += 1
