"""How often the generator sends what it sends: the held command, and the measured state for monitors.

Two small decisions of the generator node, pure (no rclpy, no clock of their own), so they are tested
without ROS (docs/design/cpu.md says why they exist: every message costs each receiving Python process
a wake-up of its executor, far more than the message's content).

`HoldThrottle` (`hold_command_rate_hz`): the control loop runs every cycle; while the command stands
still (the same positions as the last one sent, every velocity zero, then and now) it is sent again only
every `cycles` cycles, as a keep-alive. Any other command (the first cycle of a motion, a re-anchor,
a narrowing that moves the arm, a stop) is sent in the cycle that computed it: the throttle only ever
drops an exact repeat of the command the driver already has, and the hardware contract has the driver
hold its last command anyway (docs/interfaces.md, "Hardware contract"). With `cycles` = 1 every cycle
is sent, as before.

`MonitorGate` (`monitor_rate_hz`): of the measured joint states the generator receives (it needs them
all for its measurement watch), it republishes one at most every `period` seconds on
`names.JOINT_STATES_MONITOR`, for consumers that sample the arm 20 to 50 times a second. A message
whose validity differs from the last one republished goes out at once, so a malformed measurement (and
the valid one after it) reaches the monitors as it would on `/joint_states`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def hold_cycles(control_rate_hz: float, hold_rate_hz: float) -> int:
    """Control cycles between two sends of a command that stands still (>= 1; 1 = every cycle).

    Raises:
        ValueError: a rate that is not a positive finite number.
    """
    for name, value in (("control_rate_hz", control_rate_hz), ("hold_command_rate_hz", hold_rate_hz)):
        if not (math.isfinite(value) and value > 0.0):
            raise ValueError(f"{name} must be a positive number, got {value}")
    return max(1, math.floor(control_rate_hz / hold_rate_hz + 1e-9))


class HoldThrottle:
    """Whether a control cycle's command must be sent (see the module docstring)."""

    def __init__(self) -> None:
        self._sent: tuple[float, ...] | None = None  # positions of the last command sent
        self._sent_moving = True  # it had a velocity (or none was sent yet)
        self._since = 0  # cycles since it was sent

    def due(
        self, position: Sequence[float], velocity: Sequence[float], cycles: int, cycles_run: int = 1
    ) -> bool:
        """Whether to send the command of the newest of `cycles_run` cycles (several after a late call).

        Args:
            position: the newest cycle's command, rad.
            velocity: its velocity, rad/s.
            cycles: `hold_cycles(...)`: a standing command is sent again after this many cycles.
            cycles_run: control cycles run since the previous call (>= 1).

        A command is a repeat when its positions equal the last one sent exactly and its velocity and
        that one's are all zero; anything else is due at once. The answer True records it as sent.
        """
        moving = any(v != 0.0 for v in velocity)
        self._since += max(1, cycles_run)
        standing = not moving and not self._sent_moving and tuple(position) == self._sent
        if standing and self._since < cycles:
            return False
        self._sent, self._sent_moving, self._since = tuple(position), moving, 0
        return True

    def forget(self) -> None:
        """The next command is due whatever it is (e.g. after the node sent nothing for a while)."""
        self._sent, self._sent_moving, self._since = None, True, 0


class MonitorGate:
    """Which received measurements to republish for monitors (see the module docstring).

    Args:
        period: the shortest time between two republished messages of the same validity, s
            (1 / monitor_rate_hz).
    """

    def __init__(self, period: float) -> None:
        self.period = period
        self._due = -math.inf  # receive time from which the next message may go out
        self._valid: bool | None = None  # validity of the last message republished

    def due(self, now: float, valid: bool) -> bool:
        """Whether the message received at `now` (monotonic, s) goes out; True records it as sent.

        Messages go out on a grid of `period` (a message a little early for its slot waits for the
        next one, so the rate stays 1 / period on average without drifting up with jitter); after a gap
        of more than a period the grid restarts at the message.
        """
        if valid == self._valid and now < self._due:
            return False
        self._due = self._due + self.period if now - self._due < self.period else now + self.period
        self._valid = valid
        return True
