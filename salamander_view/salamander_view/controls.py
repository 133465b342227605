"""Which operator control applies now, and why not; the nudge train behind the nudge buttons. Pure.

`availability(facts)` maps every control to "" (it applies) or the reason it does not, in the words the
page shows beside the disabled control ("start run: a run is active"). The rules:

- start run: the behaviour server's action is there, no run is active, and no earlier run left a can in
  doubt (the server would refuse the goal; its reason is in the tree snapshot's log, not here);
- cancel run: a run is active;
- manual_place: the behaviour server's parameter service is there (a change applies to the next can);
- nudge, confirm, abort: a ManualAdjust is waiting for the operator (tree snapshot);
- new box (the operator says a new box is in: the behaviour server forgets its box estimate): the
  server's new_box service is there and no run is active (the server would refuse it).

The nudge train: a click on a nudge button (or a key) asks for `step` metres along one axis; the node
then publishes operator/jog twists of `speed` along it at `jog_rate_hz` for step/speed seconds, then one
zero twist. Another click in the same direction extends the train (up to `MAX_TRAIN_M` ahead, ManualAdjust's
own bound); one in another direction replaces it. The node ends the train as soon as the tree snapshot
shows no wait any more, so a train never runs on into the next can's wait.
A key (`hold`, the page's I/K/J/L hotkeys) starts the same step, but the browser's auto-repeat of a held
key only keeps the train going (it never queues more): a held key jogs while held and stops at most one
step after its release, like the gamepad's stick.
So the page sends exactly what the gamepad's place jog sends, and ManualAdjust's bounds (0.3 s staleness,
50 mm/s, 30 mm) apply unchanged: if the view stops, the twists stop, and the tree stops the nudge.
"""

from __future__ import annotations

from dataclasses import dataclass

CONTROLS = ("start_run", "cancel_run", "manual_place", "nudge", "confirm", "abort", "new_box")
"""Every control of the page."""

AXES = {
    "+x": (1.0, 0.0, 0.0),
    "-x": (-1.0, 0.0, 0.0),
    "+y": (0.0, 1.0, 0.0),
    "-y": (0.0, -1.0, 0.0),
}
"""The nudge directions in base_link (x away from the robot, y to its left, as the gamepad's stick)."""

MAX_TRAIN_M = 0.030
"""m: the most clicks may queue ahead (ManualAdjust's 30 mm bound: twenty clicks were 100 mm, 4 s)."""


@dataclass(frozen=True)
class Facts:
    """What the node knows when it decides (from its topics and action/parameter clients)."""

    run_server: bool = False  # the RunPickPlace action server is there
    param_server: bool = False  # the behaviour server's parameter service is there
    run_active: bool = False  # the snapshot says RUNNING, or our goal is pending
    manual_waiting: bool = False  # a ManualAdjust waits for the operator
    authorized: bool = True  # this client may use controls (access token)
    box_server: bool = False  # the behaviour server's new_box service is there


def availability(facts: Facts) -> dict[str, str]:
    """Control -> "" when it applies now, else why not (see the module docstring)."""
    why: dict[str, str] = {}
    no_bt = "the behaviour server is not running"
    why["start_run"] = (
        no_bt if not facts.run_server else "a run is active" if facts.run_active else ""
    )
    why["cancel_run"] = no_bt if not facts.run_server else "" if facts.run_active else "no run is active"
    why["manual_place"] = "" if facts.param_server else no_bt
    waiting = "" if facts.manual_waiting else "not waiting for the operator"
    why["nudge"] = why["confirm"] = why["abort"] = waiting
    why["new_box"] = no_bt if not facts.box_server else "a run is active" if facts.run_active else ""
    if not facts.authorized:
        why = {name: "enter the access token first" for name in why}
    return why


class NudgeTrain:
    """Turns nudge clicks into a timed stream of twists (see the module docstring)."""

    def __init__(self, step: float, speed: float) -> None:
        if not (step > 0 and speed > 0):
            raise ValueError(f"nudge step and speed must be > 0, got {step}, {speed}")
        self.step = step
        self.speed = speed
        self._axis: tuple[float, float, float] | None = None
        self._until = 0.0
        self._stop_pending = False

    def press(self, direction: str, now: float) -> None:
        """A click towards `direction` (a key of AXES) at time `now` (s, monotonic)."""
        axis = AXES[direction]  # KeyError for an unknown direction: the caller's mistake
        duration = self.step / self.speed
        if axis == self._axis and self._until > now:
            self._until = min(self._until + duration, now + max(duration, MAX_TRAIN_M / self.speed))
        else:
            self._axis, self._until = axis, now + duration

    def hold(self, direction: str, now: float) -> None:
        """A key press (or its auto-repeat) towards `direction`: move until `now` + one step, no further."""
        axis = AXES[direction]
        end = now + self.step / self.speed
        if axis == self._axis and self._until > now:
            self._until = max(self._until, end)
        else:
            self._axis, self._until = axis, end

    def stop(self) -> None:
        """End the train now (the next `twist` is one zero twist)."""
        if self._axis is not None:
            self._axis, self._stop_pending = None, True

    @property
    def active(self) -> bool:
        """Whether a twist is still to be sent (a moving one or the final zero)."""
        return self._axis is not None or self._stop_pending

    def twist(self, now: float) -> tuple[float, float, float] | None:
        """The linear velocity (m/s) to publish now, (0, 0, 0) once at the end, None when idle."""
        if self._axis is not None and now < self._until:
            return (self._axis[0] * self.speed, self._axis[1] * self.speed, self._axis[2] * self.speed)
        if self._axis is not None or self._stop_pending:
            self._axis, self._stop_pending = None, False
            return (0.0, 0.0, 0.0)
        return None
