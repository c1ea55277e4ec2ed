"""One clock per call: a deadline made once from ``time_limit`` and passed down.

Every front door (:func:`~prune_opt.fit_budget`, :func:`~prune_opt.prune`,
:func:`~prune_opt.solve`, the curves, the budget estimator's ``fit``) turns its
``time_limit`` into one :class:`Deadline` and hands it to what it calls.  Below
the door nothing converts seconds again: a step asks the deadline whether it has
passed (:meth:`Deadline.expired`), how long is left (:meth:`Deadline.left`),
whether a step of known length fits (:meth:`Deadline.fits`), or for a sub-deadline
that ends earlier (:meth:`Deadline.share` of what is left, :meth:`Deadline.until` a
share of the whole call, :meth:`Deadline.within` a number of seconds).  A
sub-deadline never ends after its parent.  A backend that takes seconds (CP-SAT,
HiGHS) is given :meth:`Deadline.seconds` at the moment it starts.
"""

from __future__ import annotations

import math
import time

from ._validation import check_time_limit

__all__ = ["Deadline", "UNLIMITED"]


class Deadline:
    """The end of one call's time, and what is left of it.

    Parameters
    ----------
    time_limit : float, None or Deadline
        Seconds from ``start`` (``None`` or ``inf``: no limit), checked by the one
        ``time_limit`` rule (the argument is named in the error).  A Deadline is
        accepted as it is (see :meth:`of`).
    name : str, default "time_limit"
        The argument named in an error.
    timer : callable, default time.perf_counter
        The clock read: wall seconds, or ``time.process_time`` for a budget in CPU
        seconds that does not depend on the machine's load.
    start : float, optional
        The timer's reading when the time started (default: now).

    Examples
    --------
    >>> from prune_opt import Deadline
    >>> d = Deadline(10.0)
    >>> d.expired(), d.fits(1.0), 9.0 < d.left() <= 10.0
    (False, True, True)
    >>> half = d.share(0.5)          # half of what is left, from now
    >>> half.end <= d.end and half.left() <= 5.0
    True
    >>> Deadline(None).left(), Deadline(None).seconds() is None
    (inf, True)
    """

    __slots__ = ("limit", "start", "end", "timer")

    def __init__(self, time_limit=None, *, name="time_limit", timer=time.perf_counter,
                 start=None):
        if isinstance(time_limit, Deadline):
            limit, timer, start = time_limit.limit, time_limit.timer, time_limit.start
        else:
            limit = check_time_limit(time_limit, name)
        self.timer = timer
        self.limit = limit
        self.start = timer() if start is None else float(start)
        self.end = math.inf if limit is None else self.start + limit

    @classmethod
    def of(cls, time_limit, name="time_limit"):
        """``time_limit`` as a Deadline: a Deadline is returned as it is (so a caller
        can hand its own clock down), anything else is checked and started now."""
        return time_limit if isinstance(time_limit, Deadline) else cls(time_limit, name=name)

    def _ending(self, end, cap=True):
        """A sub-deadline on the same timer ending at ``end`` (never after this one,
        unless ``cap`` is False)."""
        child = Deadline.__new__(Deadline)
        child.timer, child.start = self.timer, self.timer()
        child.end = min(self.end, end) if cap else end
        child.limit = None if math.isinf(child.end) else max(child.end - child.start, 0.0)
        return child

    @property
    def unlimited(self):
        """Whether there is no limit."""
        return math.isinf(self.end)

    def now(self):
        """The timer's reading."""
        return self.timer()

    def elapsed(self):
        """Seconds since the start."""
        return self.timer() - self.start

    def left(self):
        """Seconds until the end (0 once passed; ``inf`` without a limit)."""
        return max(self.end - self.timer(), 0.0)

    def seconds(self):
        """:meth:`left` for a backend that takes seconds: ``None`` without a limit."""
        return None if self.unlimited else self.left()

    def expired(self):
        """Whether the end has passed."""
        return self.timer() > self.end

    def fits(self, seconds):
        """Whether a step expected to take ``seconds`` ends before the end."""
        return self.timer() + seconds <= self.end

    def share(self, fraction):
        """A sub-deadline: ``fraction`` of the time left, from now."""
        now = self.timer()
        return self._ending(now + fraction * max(self.end - now, 0.0))

    def until(self, fraction, at_least=0.0):
        """A sub-deadline: the first ``fraction`` of this deadline's whole time (the
        rest is kept for what comes after, e.g. assembling the result), but at least
        ``at_least`` seconds from now: a step a caller promises a floor of time runs
        that long even when that ends after this deadline (the one exception to a
        sub-deadline ending no later than its parent)."""
        if self.unlimited:
            return self._ending(math.inf)
        end = self.start + fraction * (self.end - self.start)
        return self._ending(max(end, self.timer() + at_least), cap=at_least <= 0)

    def reserve(self, seconds):
        """A sub-deadline that ends ``seconds`` before this one (kept for what follows)."""
        return self._ending(self.end - seconds)

    def within(self, seconds):
        """A sub-deadline ``seconds`` from now (``None``: no sooner than this one)."""
        return self._ending(math.inf if seconds is None else self.timer() + seconds)

    def __repr__(self):
        if self.unlimited:
            return "Deadline(None)"
        return f"Deadline({self.limit:.6g} s, {self.left():.3g} s left)"


#: the deadline of a step given none: it never expires
UNLIMITED = Deadline(None)
