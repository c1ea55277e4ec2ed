"""Seconds a block took on this machine, less what other jobs made it wait.

A time limit bounds the work a call starts; it cannot stop another job on the
machine from keeping the call's thread off the processor.  Tests of time-limited
paths therefore measure :func:`run_seconds`: the block's wall seconds minus the
time the scheduler kept this thread runnable but waiting for a core (Linux's
``/proc/thread-self/schedstat``, second field).  On an idle machine the two are
equal; under load only the wait is taken out, so what is left is the call's own
time, which its limit must keep whatever the load.  Where the file is missing
(not Linux) the wall seconds are returned unchanged.

The calls timed this way run on the calling thread (the estimator's growers use
one thread unless ``n_jobs`` says otherwise).
"""

from __future__ import annotations

import contextlib
import time

SCHEDSTAT = "/proc/thread-self/schedstat"


def _waited():
    """Nanoseconds this thread has spent runnable but waiting for a core (0 when the
    kernel does not say)."""
    try:
        with open(SCHEDSTAT) as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


class Timed:
    """What :func:`run_seconds` measured: ``wall`` seconds, ``waited`` seconds for a
    core, and ``seconds``, the wall time less the wait."""

    wall = waited = seconds = 0.0


@contextlib.contextmanager
def run_seconds():
    """Time the block; read ``.seconds`` (wall less the wait for a core) afterwards.

    Examples
    --------
    >>> with run_seconds() as t:
    ...     _ = sum(range(1000))
    >>> 0.0 <= t.seconds <= t.wall
    True
    """
    timed = Timed()
    w0, t0 = _waited(), time.perf_counter()
    try:
        yield timed
    finally:
        timed.wall = time.perf_counter() - t0
        timed.waited = min(max((_waited() - w0) / 1e9, 0.0), timed.wall)
        timed.seconds = timed.wall - timed.waited
