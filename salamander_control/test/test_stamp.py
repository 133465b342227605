"""Reading a header stamp: every value the message type admits is an exact time or a `StampError`."""

from __future__ import annotations

import pytest
from builtin_interfaces.msg import Time
from hypothesis import given
from hypothesis import strategies as st

from salamander_control.stamp import NS_PER_S, StampError, skew_problem, stamp_ns

INT32 = st.integers(-(2**31), 2**31 - 1)
UINT32 = st.integers(0, 2**32 - 1)


@given(INT32, UINT32)
def test_every_stamp_the_type_admits_is_a_time_or_refused_never_another_error(sec: int, nanosec: int) -> None:
    stamp = Time(sec=sec, nanosec=nanosec)
    if sec >= 0 and nanosec < NS_PER_S:
        assert stamp_ns(stamp) == sec * NS_PER_S + nanosec
        assert divmod(stamp_ns(stamp), NS_PER_S) == (sec, nanosec)  # exact: no float on the way
    else:
        with pytest.raises(StampError):
            stamp_ns(stamp)


def test_the_refusal_names_the_field_and_the_range() -> None:
    with pytest.raises(StampError, match=r"sec -100 is negative"):
        stamp_ns(Time(sec=-100))
    with pytest.raises(StampError, match=r"nanosec 1000000000 is not in \[0, 999999999\]"):
        stamp_ns(Time(sec=1, nanosec=NS_PER_S))
    assert stamp_ns(Time()) == 0  # unstamped
    assert issubclass(StampError, ValueError)


def test_a_measurement_stamped_past_the_limit_either_side_of_the_clock_is_refused_with_the_reason() -> None:
    now = 1_000 * NS_PER_S
    assert skew_problem(now, now, 0.5) == "" and skew_problem(now - NS_PER_S // 2, now, 0.5) == ""
    stale = skew_problem(now - 2 * NS_PER_S, now, 0.5)
    assert stale.startswith("stamped 2.000 s before this node's clock (more than 0.50 s): stale")
    assert skew_problem(now + NS_PER_S // 20, now, 0.5) == ""  # within AHEAD_S (0.1 s)
    ahead = skew_problem(now + NS_PER_S // 4, now, 0.5)
    assert ahead.startswith("stamped 0.250 s after this node's clock (more than 0.10 s): ahead")

