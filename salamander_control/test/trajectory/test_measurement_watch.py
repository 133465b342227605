"""The measurement watch: hold while /joint_states is missing, re-anchor when it is back or disagrees.

Pure, on a fake clock: `Loop` does per control cycle what the generator node does (watch, then hold or
re-anchor and step the core), against the simulated motors, which a test can kill (no measurement, then
back at rest elsewhere), push, or silence. Properties: no command while the measurement is stale; the
first command after a re-anchor is the measured state; every other command step is within the velocity
limits; the motors never move faster than the generator's limits; ordinary motion never re-anchors.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.kinematics import REST_POSTURE, ArmParams, project_to_feasible
from salamander_control.trajectory.core import CycleOutput, TrajectoryConfig, TrajectoryCore
from salamander_control.trajectory.measurement_watch import (
    MAX_SILENCE_STEP,
    MeasurementWatch,
    Verdict,
)
from salamander_control.trajectory.otg import MotionLimits
from salamander_sim.hardware import SimModel

CONFIG = TrajectoryConfig(ArmParams(), MotionLimits())
DT = 1.0 / CONFIG.control_rate_hz
TIMEOUT, TOL = CONFIG.joint_state_timeout, CONFIG.joint_state_tolerance
HELD = (0.8, 0.3, 0.9, 0.5, 1.0)  # a posture away from the sim's initial (rest) one


class Loop:
    """The generator's control cycle (nodes/trajectory_generator.py `_on_cycle`) with the sim motors."""

    def __init__(self, start=REST_POSTURE) -> None:
        self.sim = SimModel(start=start)
        self.core = TrajectoryCore(CONFIG, self.sim.position)
        self.watch = MeasurementWatch(self.sim.position)
        self.commands: list[tuple[float, ...]] = []
        self.anchors: list[int] = []  # indices in `commands` of the first command after each re-anchor
        self.warnings: list[str] = []
        self.infos: list[str] = []
        self.cycle_count = 0
        self.age = 0.0  # s since the newest measurement was taken
        self.measuring = True  # the sim publishes (every other cycle: 250 Hz)
        self.worst_speed = [0.0] * 5

    def cycle(self) -> CycleOutput | None:
        self.cycle_count += 1
        self.sim.step(DT)
        fresh = None
        if self.measuring and self.cycle_count % 2 == 0:
            fresh, self.age = self.sim.position, 0.0
            for i, v in enumerate(self.sim.velocity):
                self.worst_speed[i] = max(self.worst_speed[i], abs(v))
        else:
            self.age += DT
        decision = self.watch.cycle(DT, fresh, TIMEOUT, TOL)
        self.warnings += [decision.warning] if decision.warning else []
        self.infos += [decision.info] if decision.info else []
        if decision.verdict is Verdict.HOLD:
            return None
        if decision.anchor is not None:  # as the node's `_reanchor`
            core = self.core
            goal = core.goal if decision.keep_goal and not (core.streaming or core.stopping) else None
            core.reanchor(decision.anchor)
            if goal is not None:
                core.set_goal(goal, CONFIG.arm)
            self.anchors.append(len(self.commands))
        out = self.core.step(CONFIG)
        assert self.age <= TIMEOUT + 1e-9, "a command was computed on a stale measurement"
        self.watch.commanded(out.position)
        self.commands.append(out.position)
        self.sim.command(out.position)
        return out

    def run(self, cycles: int) -> None:
        for _ in range(cycles):
            self.cycle()

    def kill_and_restart(self, dead_cycles: int, back_at=REST_POSTURE) -> None:
        """The driver dies (nothing measured, nothing followed) and comes back at rest at `back_at`."""
        for _ in range(dead_cycles):
            self.cycle_count += 1
            self.age += DT
            decision = self.watch.cycle(DT, None, TIMEOUT, TOL)
            self.warnings += [decision.warning] if decision.warning else []
            if decision.verdict is not Verdict.HOLD:
                out = self.core.step(CONFIG)
                self.watch.commanded(out.position)
                self.commands.append(out.position)
                assert self.age <= TIMEOUT + 1e-9
        self.sim = SimModel(start=back_at)

    def stall_driver(self, cycles: int) -> None:
        """The driver stalls (a loaded machine): it neither moves, measures nor takes commands meanwhile."""
        sim, self.sim = self.sim, _Frozen(self.sim)
        self.run(cycles)
        self.sim = sim  # back where it stalled; it takes the newest command from its next cycle on


class _Frozen:
    """A stalled driver: commands and steps go nowhere; `position` is where it stalled."""

    def __init__(self, sim: SimModel) -> None:
        self.position, self.velocity = sim.position, sim.velocity

    def step(self, dt: float) -> None:
        pass

    def command(self, q) -> None:
        pass


def assert_steps_within_limits(loop: Loop) -> None:
    """Every command step within the velocity limits, except onto a re-anchor (the measured state)."""
    vmax = CONFIG.limits.max_velocity
    for k in range(1, len(loop.commands)):
        if k in loop.anchors:
            continue
        for i in range(5):
            step = abs(loop.commands[k][i] - loop.commands[k - 1][i])
            assert step <= vmax[i] * DT * (1 + 1e-9) + 1e-12, (k, i, step / DT)


def test_full_speed_motion_with_the_motors_lag_never_re_anchors() -> None:
    loop = Loop()
    for goal in (HELD, (-2.5, -1.2, 0.2, -1.5, -2.5), (2.9, 1.3, 0.5, 1.5, 3.0), REST_POSTURE):
        loop.core.set_goal(goal, CONFIG.arm)
        loop.run(2500)
    assert loop.anchors == [] and loop.warnings == [] and loop.infos == []
    assert loop.commands[-1] == REST_POSTURE


def test_a_killed_driver_is_held_then_re_anchored_where_it_comes_back_without_a_jump() -> None:
    loop = Loop()
    loop.core.set_goal(HELD, CONFIG.arm)
    loop.run(2000)
    assert loop.commands[-1] == HELD
    sent = len(loop.commands)
    loop.kill_and_restart(dead_cycles=int(1.0 / DT))
    # held after joint_state_timeout_s of silence: nothing sent after that
    assert len(loop.commands) - sent == pytest.approx(TIMEOUT / DT, abs=2)
    assert loop.watch.holding
    assert loop.warnings == [
        "no /joint_states for 0.50 s: holding; the arm is not commanded until the measurement is back"
    ]
    assert "holding: no /joint_states" in loop.watch.hold_reason(TIMEOUT)
    loop.run(500)
    assert len(loop.anchors) == 1 and loop.commands[loop.anchors[0]] == REST_POSTURE  # the measured state
    assert loop.warnings[1].startswith("measured shoulder_pitch is 1.0854 rad")  # it came back elsewhere
    assert loop.infos[0].startswith("re-anchored at the measured state [0.0000, ")
    assert loop.infos[0].endswith("after 1.00 s without /joint_states; holding there")
    assert all(q == REST_POSTURE for q in loop.commands[loop.anchors[0]:])  # the stale goal is forgotten
    loop.core.set_goal(HELD, CONFIG.arm)  # a new goal moves it again, within the limits
    loop.run(2000)
    assert loop.commands[-1] == HELD
    assert_steps_within_limits(loop)
    assert all(s <= v * (1 + 1e-9) for s, v in zip(loop.worst_speed, CONFIG.limits.max_velocity, strict=True))


def test_a_measurement_that_disagrees_re_anchors_at_it_and_names_the_joint() -> None:
    loop = Loop()
    loop.run(10)
    pushed = list(loop.sim.position)
    pushed[3] += 0.2  # the wrist pitch pushed by 0.2 rad (the driver came back elsewhere)
    loop.sim = SimModel(start=pushed)
    loop.run(4)
    # the motors already moved a little back towards the command when it was measured
    assert len(loop.warnings) == 1
    assert re.match(r"measured wrist_pitch is 0\.19\d\d rad from the recent commands", loop.warnings[0])
    assert loop.commands[loop.anchors[0]] == pytest.approx(pushed, abs=0.01)
    assert "after the measurement disagreed" in loop.infos[0]
    loop.run(200)
    assert len(loop.anchors) == 1  # agrees from then on


def test_a_measurement_that_only_paused_resumes_the_goal_from_rest_at_the_measured_state() -> None:
    loop = Loop()
    loop.core.set_goal(HELD, CONFIG.arm)
    loop.run(300)  # under way at full speed
    moving = loop.commands[-1]
    loop.measuring = False  # the measurement pauses (a loaded machine); the motors still follow
    loop.run(int((TIMEOUT + 0.3) / DT))
    assert loop.watch.holding and loop.warnings[0].startswith("no /joint_states for 0.50 s: holding")
    assert len(loop.commands) - 300 == pytest.approx(TIMEOUT / DT, abs=2)  # nothing sent while holding
    loop.measuring = True
    loop.run(2000)
    assert len(loop.anchors) == 1 and len(loop.warnings) == 1  # agrees: no disagreement
    # re-anchored at rest at the last command, which the motors hold: no step back to the old measurement
    anchor = loop.anchors[0]
    assert loop.commands[anchor] == pytest.approx(loop.commands[anchor - 1], abs=1e-6)  # from rest there
    assert loop.commands[anchor - 1] != moving
    assert loop.infos[0].startswith(f"re-anchored at the last command [{loop.commands[anchor][0]:.4f}, ")
    assert "agrees with it; resuming towards the goal from rest" in loop.infos[0]
    assert loop.commands[-1] == HELD  # the goal still stood
    assert_steps_within_limits(loop)


def test_a_driver_that_stalls_during_full_speed_motion_is_not_taken_for_a_pushed_arm() -> None:
    # Seen on a loaded machine: a 0.3 s stall of the simulated driver at the first motion; it then
    # reported the arm where it was commanded before the stall, 0.0692 rad from the last 0.25 s of
    # commands, and the goal was dropped. A stall shorter than the timeout is tolerated as a silence.
    loop = Loop()
    loop.core.set_goal(HELD, CONFIG.arm)
    loop.run(400)  # under way at full speed
    loop.stall_driver(int(0.45 / DT))
    loop.run(2500)
    assert loop.anchors == [] and loop.warnings == [], loop.warnings
    assert loop.commands[-1] == HELD


def test_a_pushed_arm_is_still_noticed_while_it_moves() -> None:
    loop = Loop()
    loop.core.set_goal(HELD, CONFIG.arm)
    loop.run(400)
    pushed = list(loop.sim.position)
    pushed[0] -= 0.5  # base_yaw pushed back by more than the window's commands and the tolerance
    loop.sim = SimModel(start=pushed)
    loop.run(4)
    assert len(loop.anchors) == 1 and loop.warnings[0].startswith("measured base_yaw is ")
    assert loop.commands[loop.anchors[0]] == pytest.approx(pushed, abs=0.01)


def test_commands_caught_up_in_one_late_call_are_recent_ones() -> None:
    # A late timer call runs the missed cycles at once (the generator's catch-up): the driver saw none
    # of them, so they must not push the commands it did see out of the window.
    watch = MeasurementWatch(REST_POSTURE)
    assert watch.cycle(DT, None, TIMEOUT, TOL).verdict is Verdict.RUN
    q = list(REST_POSTURE)
    for _ in range(200):  # 0.4 s of base_yaw at 0.5 rad/s, computed in one call
        q[0] += 0.5 * DT
        watch.commanded(q)
    assert watch.cycle(0.4, REST_POSTURE, TIMEOUT, TOL).verdict is Verdict.RUN


def test_a_stall_of_the_generator_itself_is_not_taken_for_a_silent_driver() -> None:
    watch = MeasurementWatch(REST_POSTURE)
    assert watch.cycle(5.0, None, TIMEOUT, TOL).verdict is Verdict.RUN  # one late call: +MAX_SILENCE_STEP
    assert watch.silence == MAX_SILENCE_STEP
    assert watch.cycle(math.nan, None, TIMEOUT, TOL).verdict is Verdict.RUN
    while watch.cycle(DT, None, TIMEOUT, TOL).verdict is Verdict.RUN:
        pass
    assert watch.holding and watch.silence > TIMEOUT
    assert watch.cycle(DT, None, TIMEOUT, TOL) == (Verdict.HOLD, None, False, "", "")  # said once


def test_bad_construction_is_refused() -> None:
    with pytest.raises(ValueError):
        MeasurementWatch((math.nan,) * 5)
    for name in ("joint_state_timeout", "joint_state_tolerance"):
        with pytest.raises(ValueError, match=name):
            TrajectoryConfig(ArmParams(), MotionLimits(), **{name: 0.0})


joint = st.floats(-3.0, 3.0, allow_nan=False)
event = st.one_of(
    st.tuples(st.just("goal"), st.lists(joint, min_size=5, max_size=5), st.integers(1, 400)),
    st.tuples(st.just("gap"), st.none(), st.integers(1, 400)),  # measurements withheld, motors follow
    st.tuples(st.just("kill"), st.lists(joint, min_size=5, max_size=5), st.integers(1, 400)),
    st.tuples(st.just("push"), st.lists(st.floats(-0.5, 0.5), min_size=5, max_size=5), st.integers(1, 50)),
)


def inside(q: list[float]) -> tuple[float, ...]:
    p = project_to_feasible(q[1], q[2], CONFIG.arm)
    return (q[0], p.q1, p.q2, max(min(q[3], 1.5), -1.5), q[4])


@settings(max_examples=150, deadline=None)
@given(events=st.lists(event, min_size=1, max_size=8))
def test_whatever_the_gaps_and_jumps_no_stale_command_and_no_step_beyond_the_limits(events) -> None:
    loop = Loop()
    for kind, value, cycles in events:
        if kind == "goal":
            if not loop.watch.holding:
                loop.core.set_goal(value, CONFIG.arm)
        elif kind == "gap":
            loop.measuring = False
            loop.run(cycles)
            loop.measuring = True
        elif kind == "kill":
            loop.kill_and_restart(cycles, inside(value))
        else:
            loop.sim = SimModel(start=inside([a + b for a, b in zip(loop.sim.position, value, strict=True)]))
        loop.run(cycles)  # the Loop asserts that no command is computed on a stale measurement
    assert_steps_within_limits(loop)
    assert loop.sim.stop_hits == 0
