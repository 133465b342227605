"""What the generator sends how often: the held command's keep-alive and the monitors' joint states.

Properties: a command that differs from the last one sent (positions, or any velocity now or then) is
always sent in its own cycle; a standing command is repeated exactly every `hold_cycles` cycles; with
one cycle every command goes out. The monitor gate keeps 1 / period on average from a jittery faster
stream, never sends two messages of one validity closer than the period allows, and passes a change of
validity at once. The last test runs the real core: every cycle of a motion is sent, the rest between
motions only as keep-alives.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_control.kinematics import REST_POSTURE, ArmParams
from salamander_control.trajectory.core import TrajectoryConfig, TrajectoryCore
from salamander_control.trajectory.otg import MotionLimits
from salamander_control.trajectory.output_rates import HoldThrottle, MonitorGate, hold_cycles

ZERO = (0.0,) * 5


def test_hold_cycles_is_the_whole_number_of_cycles_per_keep_alive() -> None:
    assert hold_cycles(500.0, 50.0) == 10
    assert hold_cycles(500.0, 25.0) == 20
    assert hold_cycles(500.0, 500.0) == 1
    assert hold_cycles(500.0, 2000.0) == 1  # faster than the loop: every cycle
    assert hold_cycles(500.0, 3.0) == 166  # 3 Hz cannot be met exactly: never slower than asked


@pytest.mark.parametrize("control, hold", [(0.0, 50.0), (500.0, 0.0), (500.0, math.nan), (math.inf, 50.0)])
def test_hold_cycles_refuses_a_rate_that_is_not_a_positive_number(control: float, hold: float) -> None:
    with pytest.raises(ValueError, match="must be a positive number"):
        hold_cycles(control, hold)


# A command per cycle: positions from a small set (so repeats are common) and a velocity flag.
commands = st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=300)


@settings(max_examples=200, deadline=None)
@given(commands, st.integers(1, 25), st.lists(st.integers(1, 5), min_size=1, max_size=300))
def test_a_changed_command_is_always_sent_and_a_standing_one_exactly_every_n_cycles(
    seq: list[tuple[int, bool]], cycles: int, runs: list[int]
) -> None:
    throttle = HoldThrottle()
    last_sent: tuple[tuple[float, ...], bool] | None = None
    since = 0
    for i, (pos_id, moving) in enumerate(seq):
        position = (float(pos_id),) * 5
        velocity = (0.0, 0.0, 0.3, 0.0, 0.0) if moving else ZERO
        run = runs[i % len(runs)]
        since += run
        sent = throttle.due(position, velocity, cycles, run)
        standing = last_sent is not None and last_sent == (position, False) and not moving
        if not standing:
            assert sent, f"cycle {i}: a changed command was held back"
        else:
            assert sent == (since >= cycles), f"cycle {i}: {since} cycles since the last send, n={cycles}"
        if sent:
            last_sent, since = (position, moving), 0


def test_with_one_cycle_every_command_is_sent() -> None:
    throttle = HoldThrottle()
    assert all(throttle.due(REST_POSTURE, ZERO, 1) for _ in range(100))


def test_forget_makes_the_next_command_due_even_a_standing_one() -> None:
    throttle = HoldThrottle()
    assert throttle.due(REST_POSTURE, ZERO, 10)
    assert not throttle.due(REST_POSTURE, ZERO, 10)
    throttle.forget()
    assert throttle.due(REST_POSTURE, ZERO, 10)


def test_the_monitor_gate_thins_a_jittery_100_hz_stream_to_25_hz() -> None:
    gate = MonitorGate(1.0 / 25.0)
    jitter = [0.0009, -0.0007, 0.0004, -0.0009, 0.0002]
    times = [k * 0.01 + jitter[k % 5] for k in range(1000)]  # 10 s
    sent = [t for t in times if gate.due(t, True)]
    assert len(sent) == pytest.approx(250, abs=2)
    gaps = [b - a for a, b in zip(sent, sent[1:], strict=False)]
    assert min(gaps) > 0.028 and max(gaps) < 0.052  # 40 ms, give or take an input period and the jitter


def test_the_monitor_gate_restarts_its_grid_after_a_gap_and_passes_a_validity_change_at_once() -> None:
    gate = MonitorGate(0.04)
    assert gate.due(0.0, True)
    assert not gate.due(0.01, True)
    assert gate.due(0.02, False)  # malformed: out at once
    assert gate.due(0.03, True)  # and the valid one after it
    assert not gate.due(0.05, True)
    assert gate.due(1.0, True)  # after a gap: at once, and the grid starts there
    assert not gate.due(1.03, True)
    assert gate.due(1.04, True)


def test_with_the_real_core_every_cycle_of_a_motion_is_sent_and_the_rest_only_as_keep_alives() -> None:
    config = TrajectoryConfig(ArmParams(), MotionLimits(), hold_command_rate_hz=50.0)
    core = TrajectoryCore(config, REST_POSTURE)
    n = hold_cycles(config.control_rate_hz, config.hold_command_rate_hz)
    throttle = HoldThrottle()
    goal = tuple(q + 0.2 for q in REST_POSTURE)
    sent, changed = [], []
    previous = None
    for cycle in range(1500):  # 3 s: at rest, a 0.2 rad move, at rest again
        if cycle == 200:
            core.set_goal(goal, config.arm)
        out = core.step(config)
        changed.append(previous is None or out.position != previous or any(out.velocity))
        previous = out.position
        sent.append(throttle.due(out.position, out.velocity, n))
    assert all(s for s, c in zip(sent, changed, strict=True) if c)  # nothing that moves is held back
    moving = [i for i, c in enumerate(changed) if c and i > 0]
    assert moving[0] == 200 and sent[200]  # the first cycle of the motion goes out in that cycle
    assert core.command == pytest.approx(goal)
    rest_after = range(moving[-1] + 1, 1500)
    assert sum(sent[i] for i in rest_after) == pytest.approx(len(rest_after) / n, abs=1)
    assert sum(sent[1:200]) == pytest.approx(199 / n, abs=1)
