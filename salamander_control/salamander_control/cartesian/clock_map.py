"""Stamps that agree with the monotonic clock a plan is sampled on.

The Cartesian motion node samples its plan on `time.monotonic()` and stamps each joint target with ROS
time. `ClockMap` measures the offset between the two clocks once per goal (the tightest of `READS`
bracketed reads) and then converts, so every stamp of a goal lies exactly as far apart as the plan
times it samples. Why not read both clocks per sample (the measurement): docs/design/clock_map.md.

No rclpy: the clocks are passed in as functions returning nanoseconds.
"""

from __future__ import annotations

from collections.abc import Callable

READS = 5
"""Bracketed reads per calibration; the tightest bracket wins (one read is preempted now and then)."""
JITTER_NS = 1_000_000
"""ns: how far a recalibration may move stamps back and still count as the measurement's jitter, not a
stepped clock (`ClockMap.to_other_ns` keeps a later instant's stamp after an earlier one's then)."""


class ClockMap:
    """Converts monotonic seconds into the other clock's nanoseconds by a fixed offset.

    Args:
        monotonic_ns: the monotonic clock (e.g. `time.monotonic_ns`).
        other_ns: the clock the stamps are in (e.g. the node's ROS clock, as nanoseconds).
    """

    def __init__(self, monotonic_ns: Callable[[], int], other_ns: Callable[[], int]) -> None:
        self._mono = monotonic_ns
        self._other = other_ns
        self._offset = 0
        self._latest: tuple[int, int] | None = None  # (monotonic ns, stamp ns) of the latest instant mapped
        self.calibrate()

    @property
    def offset_ns(self) -> int:
        """The other clock minus the monotonic one, ns."""
        return self._offset

    def calibrate(self) -> int:
        """Measure the offset again (the other clock may have been stepped); returns the bracket, ns."""
        best: tuple[int, int] | None = None
        for _ in range(READS):
            before = self._mono()
            other = self._other()
            after = self._mono()
            bracket = after - before
            if best is None or bracket < best[0]:
                best = (bracket, other - (before + after) // 2)
        assert best is not None
        self._offset = best[1]
        return best[0]

    def to_other_ns(self, monotonic_s: float) -> int:
        """The other clock's time, ns, at monotonic time `monotonic_s` (seconds).

        An instant later than any mapped before maps to a later stamp, even when a recalibration moved
        the offset back a little (up to `JITTER_NS`: the bracket's jitter, a slewed system clock): the
        trajectory generator drops a target stamped before the last one it took, and a joint goal bent
        out of a line's tail is stamped a microsecond after the tail's last sample (the Cartesian node's
        `AFTER_TAIL_S`), which an offset a few microseconds lower turned into "0.000 s older" and a
        dropped goal. A larger step back is the clock's own (a stepped system clock) and is followed.
        """
        mono = round(monotonic_s * 1e9)
        stamp = mono + self._offset
        latest = self._latest
        if latest is not None and mono > latest[0] and latest[1] - JITTER_NS < stamp <= latest[1]:
            stamp = latest[1] + 1
        if latest is None or mono >= latest[0]:
            self._latest = (mono, stamp)
        return stamp
