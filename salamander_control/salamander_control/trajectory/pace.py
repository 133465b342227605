"""The generator's loop pace: how many control cycles a timer call runs, and when the loop may rest.

Pure (no rclpy, the caller passes the time), so it is tested without ROS. The node owns the timer and
asks `LoopPace` two things each call:

- `cycles_due`: the core is open loop on its own cycle clock; a timer call that comes late (a loaded
  machine skips periods rather than queueing them) runs the cycles it missed, so the motion and the
  cycle clock stay on real time behind the stamps of streamed goals. After a stall of more than
  `MAX_CATCH_UP` periods the rest is dropped: the arm pauses, it does not lurch.
- `after`: once the command has stood still for `REST_AFTER_S` (no stop, no Ruckig error) the loop may
  rest: the timer runs at the keep-alive period and each call runs that many cycles one by one until one
  moves; the first cycle that moves ends the rest.

Invariant: a resting loop never skips a cycle that moves (the node runs the rest's cycles one by one
and stops at the first that moves), and `restart` (after a hold, a re-anchor, a new pace) drops any
catch-up, so the schedule resumes from the next call. Design: docs/design/cpu.md.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_CATCH_UP = 5
"""Control cycles one late timer call runs at most (10 ms at 500 Hz)."""
REST_AFTER_S = 0.1
"""s the command stands still before the loop slows to the keep-alive period."""


class LoopPace:
    """The catch-up schedule and the rest decision of one control loop (see the module docstring)."""

    def __init__(self) -> None:
        self.resting = False  # the timer runs at the keep-alive period
        self._next_cycle: float | None = None  # when the next control cycle is due (caller's clock)
        self._still = 0  # cycles the command has stood still at the full rate

    def restart(self) -> None:
        """Resume on a schedule from the next call, without catching up what came before."""
        self._next_cycle = None

    def set_resting(self, resting: bool) -> None:
        """The timer now runs at the keep-alive period (`resting`) or at the control rate."""
        self.resting, self._still, self._next_cycle = resting, 0, None

    def cycles_due(self, now: float, control_rate_hz: float) -> int:
        """Control cycles to run now: 1, or more when this call comes a period (or more) late."""
        period = 1.0 / control_rate_hz
        if self._next_cycle is None:
            self._next_cycle = now
        due = int((now - self._next_cycle) / period + 0.5) + 1
        if due > MAX_CATCH_UP:
            self._next_cycle = now
            due = MAX_CATCH_UP
        self._next_cycle += due * period
        return max(due, 1)

    def after(self, standing: Sequence[bool], hold_cycles: int, control_rate_hz: float) -> bool | None:
        """The pace after a call whose cycles stood still or not (`standing`, one per cycle run).

        Returns:
            True: rest now (the command stood still long enough); False: back to the full rate (a
            resting loop's cycle moved); None: keep the pace. Never rests when `hold_cycles` is 1 (the
            keep-alive period is the control period).
        """
        still = all(standing)
        if self.resting:
            return None if still else False
        if hold_cycles > 1:
            self._still = self._still + len(standing) if still else 0
            if self._still >= REST_AFTER_S * control_rate_hz:
                return True
        return None
