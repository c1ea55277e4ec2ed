"""One time limit for a whole fit, shared by its steps.

The budget-pruned estimator's ``time_limit`` covers everything ``fit`` does:
growing, ranking, compiling, pruning, refitting and scoring.  Its steps have
kinds (``"rf"``, ``"lazy"``, ``"prune"``, ...).  A step that must run (the
random forest, its pruning) runs whatever the clock says; any other step runs
only when the time it is expected to take fits before the end of its phase.
A step is expected to take as long as the last step of its kind (the first
one also pays for imports and warm-up, which the next does not); before the
first, as long as the first random forest took, times the kind's factor
(:data:`FACTORS`, an upper end of the ratios measured on pima, spambase, magic
and adult).  Before the random forest, the forest on a feature prefix grown
as an anchor (kind ``"subset"``) stands in for it.
"""

from __future__ import annotations

import contextlib
import time

__all__ = ["FitClock", "FACTORS"]

#: a step's expected seconds, before one of its kind has run, in units of the first
#: random forest's growing time (measured at 40 trees on pima, spambase and magic:
#: shallow forests 0.6-1.4, the cost ranking 3.5-7, a subset forest 0.9-1.2, a lazy
#: forest 4-17; a leaf refit 1.5 on pima, 4 on adult, binary: its projected gradient
#: works on every class, so a refit of K classes is expected K / 2 times longer (7.3 s on
#: letter's 26 classes, 15 x the random forest); a CEGB model 1.5-3.6 on letter's
#: 10 and 26 classes, 2,000 rows; a 100-round CatBoost model of depth 6 under first-use
#: penalties 1.0 on pima and magic, 5.2 on spambase, 10 on letter's 26 classes, 2,000
#: rows, one thread); any other kind: 1
FACTORS = {"rf": 1.0, "shallow": 1.5, "rank": 8.0, "subset": 1.5, "lazy": 16.0,
           "refit": 5.0, "cegb": 4.0, "catboost": 6.0}


class FitClock:
    """The deadline of one fit and the duration of its last step of each kind.

    Parameters
    ----------
    time_limit : float
        Seconds for the whole fit.
    start : float, optional
        ``time.perf_counter()`` when the fit started (default: now).

    Examples
    --------
    >>> clock = FitClock(10.0)
    >>> with clock.step("rf"):
    ...     pass
    >>> clock.allows("lazy", share=0.5)
    True
    """

    def __init__(self, time_limit, start=None):
        self.time_limit = float(time_limit)
        self.start = time.perf_counter() if start is None else float(start)
        self.seconds = {}

    def elapsed(self):
        return time.perf_counter() - self.start

    def left(self, share=1.0):
        """Seconds until ``share`` of the time limit has passed (negative after)."""
        return share * self.time_limit - self.elapsed()

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

    def expected(self, kind, scale=1.0):
        """Seconds a step of ``kind`` is expected to take: the last one's, or before any,
        its factor times the reference times ``scale`` (what makes this step costlier
        than the factor's measurements, e.g. a leaf refit's classes)."""
        if kind in self.seconds:
            return self.seconds[kind]
        return FACTORS.get(kind, 1.0) * self.reference() * float(scale)

    def allows(self, kind, share=1.0, extra=0.0, scale=1.0):
        """Whether a step of ``kind`` (plus ``extra`` seconds) is expected to end before
        ``share`` of the time limit has passed (``scale``: see :meth:`expected`)."""
        return self.expected(kind, scale) + extra <= self.left(share)
