"""The part-present switch as the tree hears it: the newest value, when it arrived, when it changed (pure).

`PartPresentSignal` is filled by the subscription callback (`ros.gripper_client.GripperIO`) and read by
the leaves through `GripperPort.part_present()`, possibly from another thread, so it is guarded by a
lock. Times are the injected clock's (the behaviour server's `time.monotonic`, the tree's clock): the
age of a reading is measured from when the message *arrived*, not from a stamp in it (std_msgs/Bool has
none, and a driver's clock need not be ours). Every decision on the signal checks that age against
`part_present_timeout_s` (behaviors/vacuum.py).
"""

from __future__ import annotations

import threading

from salamander_behavior.ports import Clock, PartReading


class PartPresentSignal:
    """The newest part-present value with its arrival and change times."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._reading = PartReading()

    def put(self, value: bool, age: float = 0.0) -> None:
        """File one message, received `age` seconds ago (0: now), on the clock."""
        now = self._clock() - max(age, 0.0)
        with self._lock:
            old = self._reading
            changed = now if old.value is None or old.value != value else old.changed_at
            self._reading = PartReading(bool(value), now, changed)

    def reading(self) -> PartReading:
        """The newest reading (value None before the first message)."""
        with self._lock:
            return self._reading
