"""One deadline for a whole fit, and what its steps are expected to take.

The budget-pruned estimator's ``fit`` is a front door: it turns ``time_limit``
into one :class:`prune_opt.Deadline` (:attr:`FitClock.deadline`), and every phase
below it asks that deadline for its share (:meth:`FitClock.until`: growing,
pruning) and every step for a sub-deadline of its phase (a family's share of
the growing time, a pruning call's seconds).  The fit ends within
:data:`OVERRUN` × ``time_limit``: a step runs only when the time it is expected
to take fits before the end of its phase, and the steps that could still run
long stop at their phase's end by themselves (a boosted model's rounds, a lazy
forest's trees, a ``fit_budget`` search).

A step of a kind (``"rf"``, ``"lazy"``, ``"prune-additive"``, ...) is expected
to take as long as the last step of its kind (the first one also pays for
imports and warm-up, which the next does not).  Before the first, as long as
the reference took -- the random forest, or before it the forest on a feature
prefix grown as an anchor (kind ``"subset"``) -- times the kind's factor
(:data:`FACTORS`, an upper end of the ratios measured on binary tables) times
its class scale, ``(classes / 2) ** CLASS_POWERS[kind]``: a kind whose work grows
with the classes faster than the random forest's (a lazy forest's Python
grower, a leaf refit's projected gradient over every class) is expected to take
longer on a many-class table than on the binary tables its factor was measured
on.
"""

from __future__ import annotations

import contextlib
import time

from prune_opt import Deadline

__all__ = ["FitClock", "EarliestOf", "FACTORS", "CLASS_POWERS", "OVERRUN"]

#: a step's expected seconds, before one of its kind has run, in units of the first
#: random forest's growing time on the same table (measured at 40 trees on pima,
#: spambase, magic and adult, binary: shallow forests 0.6-1.4, the cost ranking 3.5-7, a
#: subset forest 0.9-1.2, a gbm model 0.8-1.5, a lazy forest 4-17, a leaf refit 1.5-4, a
#: CEGB model 1.0-3.6, a 100-round CatBoost model of depth 6 under first-use penalties
#: 1.0-5.2, one thread); any other kind: 1
FACTORS = {"rf": 1.0, "shallow": 1.5, "rank": 8.0, "subset": 1.5, "gbm": 2.0,
           "lazy": 16.0, "refit": 5.0, "cegb": 4.0, "catboost": 6.0}
#: how a kind's time relative to the random forest's grows with the classes beyond two:
#: its factor is scaled by ``(classes / 2) ** power`` (measured on letter's first 2 to 26
#: classes, 13 features, 900-3,600 rows: a lazy forest 6-7 x the random forest on 2-3
#: classes, 27-32 on 5-9, 45 on 15, 60 on 26; a leaf refit works on every class: 7.3 s on
#: 26 classes, 15 x the random forest; a CatBoost model 10 x on 26); any other kind: 0
#: (a boosted model's rounds are capped at TREE_CAP trees, so its time relative to the
#: random forest's does not grow with the classes: CEGB 1.0-3.0, gbm 0.8-1.5 on 2-26)
CLASS_POWERS = {"lazy": 0.6, "refit": 1.0, "catboost": 0.3}
#: the fit ends within this many times time_limit
OVERRUN = 1.25


class FitClock:
    """The deadline of one fit and the duration of its last step of each kind.

    Parameters
    ----------
    time_limit : float or prune_opt.Deadline
        Seconds for the whole fit, or the fit's deadline itself.
    start : float, optional
        ``time.perf_counter()`` when the fit started (default: now).
    n_classes : int, default 2
        The classes of the target (1 for a regression): steps whose work grows with
        them are expected to take longer (:data:`CLASS_POWERS`).

    Examples
    --------
    >>> clock = FitClock(10.0, n_classes=9)
    >>> with clock.step("rf"):
    ...     pass
    >>> growing = clock.until(0.5)          # the first half of the fit's time
    >>> clock.fits("lazy", growing)
    True
    >>> clock.expected("lazy") >= 16 * clock.seconds["rf"]
    True
    """

    def __init__(self, time_limit, start=None, *, n_classes=2):
        self.deadline = Deadline(time_limit, start=start)
        self.n_classes = max(int(n_classes), 1)
        self.seconds = {}

    @property
    def time_limit(self):
        """Seconds for the whole fit."""
        return self.deadline.limit

    def elapsed(self):
        return self.deadline.elapsed()

    def left(self, share=1.0):
        """Seconds until ``share`` of the time limit has passed (0 after)."""
        return self.until(share).left()

    def until(self, share):
        """The phase that ends when ``share`` of the time limit has passed: a sub-deadline
        of the fit's."""
        return self.deadline.until(share)

    @contextlib.contextmanager
    def step(self, kind):
        """Time the block as one step of ``kind``."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.note(kind, time.perf_counter() - t0)

    def note(self, kind, seconds):
        """Record that a step of ``kind`` took ``seconds``."""
        self.seconds[kind] = max(float(seconds), 0.0)

    def reference(self):
        """Seconds of the step the factors are relative to: the random forest, or before
        it the forest grown on a feature prefix (0 before either)."""
        return self.seconds.get("rf", self.seconds.get("subset", 0.0))

    def class_scale(self, kind):
        """How much longer than on two classes a first step of ``kind`` is expected to
        take on this fit's classes (:data:`CLASS_POWERS`)."""
        return max(self.n_classes / 2.0, 1.0) ** CLASS_POWERS.get(kind, 0.0)

    def expected(self, kind):
        """Seconds a step of ``kind`` is expected to take: the last one's, or before any,
        the reference times its factor and its class scale."""
        if kind in self.seconds:
            return self.seconds[kind]
        return FACTORS.get(kind, 1.0) * self.reference() * self.class_scale(kind)

    def fits(self, kind, within, extra=0.0):
        """Whether a step of ``kind`` (plus ``extra`` seconds) is expected to end before
        the deadline ``within`` (a phase of this fit, or a share of one)."""
        return within.fits(self.expected(kind) + extra)


class EarliestOf:
    """The end of whichever of ``deadlines`` passes first; they may read different timers
    (a bound in CPU seconds, which the machine's load does not move, and one in wall
    seconds, which a machine that starves the fit's threads cannot stretch).

    Examples
    --------
    >>> import time
    >>> from prune_opt import Deadline
    >>> EarliestOf(Deadline(60.0, timer=time.process_time), Deadline(0.0)).expired()
    True
    """

    def __init__(self, *deadlines):
        self.deadlines = deadlines

    def expired(self):
        """Whether one of the deadlines has passed."""
        return any(d.expired() for d in self.deadlines)

