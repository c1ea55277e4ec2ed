"""The one clock: a Deadline made at a front door, asked below it."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prune_opt import Deadline


class FakeTimer:
    """A timer the test moves by hand: what holds at any machine load."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


@given(limit=st.floats(0.0, 1e4), elapsed=st.floats(0.0, 2e4),
       fraction=st.floats(0.0, 1.0), reserve=st.floats(0.0, 1e4))
def test_sub_deadlines_never_end_after_their_parent(limit, elapsed, fraction, reserve):
    t = FakeTimer()
    d = Deadline(limit, timer=t)
    t.now += elapsed
    for child in (d.share(fraction), d.until(fraction), d.reserve(reserve),
                  d.within(reserve)):
        assert child.end <= d.end
        assert child.left() <= d.left()
    # as the timer reads the times: an elapsed time below the float spacing at the start
    # does not move the clock
    assert d.expired() == (100.0 + elapsed > 100.0 + limit)
    assert d.left() == pytest.approx(max(limit - elapsed, 0.0), abs=1e-9)


def test_share_until_reserve_and_within_say_when_they_end():
    t = FakeTimer()
    d = Deadline(10.0, timer=t)
    t.now += 4.0
    assert d.share(0.5).end == pytest.approx(t.now + 3.0)   # half of the 6 s left
    assert d.until(0.9).end == pytest.approx(109.0)        # 90 % of the whole call
    assert d.reserve(1.0).end == pytest.approx(109.0)      # 1 s kept for the end
    assert d.within(2.0).end == pytest.approx(106.0)
    assert d.fits(5.9) and not d.fits(6.1)
    t.now += 7.0
    assert d.expired() and d.left() == 0.0 and d.seconds() == 0.0
    # a floor promised to a step may run past the parent: the one documented exception
    floor = d.until(0.9, at_least=0.5)
    assert floor.end == pytest.approx(t.now + 0.5)


def test_no_limit_never_expires_and_is_handed_down_as_is():
    d = Deadline(None)
    assert d.unlimited and not d.expired() and d.left() == math.inf and d.seconds() is None
    assert Deadline(float("inf")).unlimited
    assert Deadline.of(d) is d
    assert d.share(0.1).unlimited and d.until(0.5, at_least=1.0).unlimited


@pytest.mark.parametrize("bad, error", [(-1.0, ValueError), ("5", TypeError),
                                        (float("nan"), ValueError), (True, TypeError)])
def test_a_bad_time_limit_is_named(bad, error):
    with pytest.raises(error, match="time_limit"):
        Deadline.of(bad)
    with pytest.raises(error, match="budget_seconds"):
        Deadline(bad, name="budget_seconds")
