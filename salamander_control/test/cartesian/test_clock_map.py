"""Stamps of the Cartesian node's joint targets: one fixed offset from the monotonic clock per goal."""

from __future__ import annotations

from salamander_control.cartesian.clock_map import JITTER_NS, READS, ClockMap


class FakeClocks:
    """A monotonic and a ROS clock 1000 s apart; `stall` puts that many ns between some paired reads."""

    def __init__(self, stalls: list[int]) -> None:
        self.t = 5_000_000_000
        self.stalls = list(stalls)
        self.stepped = 0  # ns the ROS (system) clock was stepped by

    def mono(self) -> int:
        self.t += 100
        return self.t

    def ros(self) -> int:
        self.t += self.stalls.pop(0) if self.stalls else 0  # preempted right before this read
        self.t += 100
        return self.t + 1_000_000_000_000 + self.stepped


def test_the_offset_comes_from_the_tightest_pair_of_reads_not_a_preempted_one() -> None:
    clocks = FakeClocks([1_800_000, 0, 900_000, 0, 0])  # 1.8 ms and 0.9 ms stalls (measured on the stack)
    cmap = ClockMap(clocks.mono, clocks.ros)
    assert cmap.offset_ns == 1_000_000_000_000
    assert cmap.to_other_ns(7.25) == 7_250_000_000 + 1_000_000_000_000


def test_stamps_lie_exactly_as_far_apart_as_the_monotonic_times_they_convert() -> None:
    clocks = FakeClocks([])
    cmap = ClockMap(clocks.mono, clocks.ros)
    times = [10.0 + 0.01 * k + 1e-7 * (k % 3) for k in range(100)]
    stamps = [cmap.to_other_ns(t) for t in times]
    for k in range(1, len(times)):
        assert abs((stamps[k] - stamps[k - 1]) - (times[k] - times[k - 1]) * 1e9) <= 1  # whole ns only


def test_recalibrating_follows_a_stepped_clock_and_reports_the_bracket() -> None:
    clocks = FakeClocks([])
    cmap = ClockMap(clocks.mono, clocks.ros)
    before = cmap.offset_ns
    clocks.stepped = 3_000_000_000  # the system clock was stepped by 3 s between two goals
    assert cmap.offset_ns == before  # nothing changes within a goal
    bracket = cmap.calibrate()
    assert cmap.offset_ns == before + 3_000_000_000
    assert bracket == 200 and READS >= 3


def test_a_later_instant_keeps_a_later_stamp_when_a_recalibration_moves_the_offset_back_a_little() -> None:
    # The tail's last sample, then a joint goal stamped 1 us after it (AFTER_TAIL_S) under a new goal's
    # calibration 3 us lower: it had come out 2 us *before* the sample and the generator dropped it.
    clocks = FakeClocks([])
    cmap = ClockMap(clocks.mono, clocks.ros)
    last = cmap.to_other_ns(20.0)
    clocks.stepped = -3_000  # the tightest bracket of the next calibration reads 3 us lower
    cmap.calibrate()
    assert cmap.to_other_ns(20.0 + 1e-6) > last
    assert cmap.to_other_ns(20.5) == round(20.5e9) + cmap.offset_ns  # later samples: the offset as measured
    assert cmap.to_other_ns(19.0) == round(19.0e9) + cmap.offset_ns  # an earlier instant is not moved


def test_a_clock_stepped_back_further_than_the_jitter_is_followed() -> None:
    clocks = FakeClocks([])
    cmap = ClockMap(clocks.mono, clocks.ros)
    last = cmap.to_other_ns(20.0)
    clocks.stepped = -(JITTER_NS + 5_000)
    cmap.calibrate()
    assert cmap.to_other_ns(20.0 + 1e-6) < last
