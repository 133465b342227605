"""The cycle-per-can lower bound (bench/cycle_bound.py): plans as the stack plans, waits as configured."""

from __future__ import annotations

import sys

import yaml

from salamander_testing import REPO

sys.path.insert(0, str(REPO / "bench"))

import cycle_bound as cb  # noqa: E402

WAITS = ("attach settle + grip confirm", "release settle + settle")


def test_the_bound_is_the_configured_cycle_at_full_speed_with_the_release_descent_at_half() -> None:
    rows = cb.bounds()
    assert [can for can, _ in rows] == ["can_0", "can_1", "can_2"]
    cell = cb._params(cb.CELL, "cell_sim")
    tree = cb._params(cb.BEHAVIOR, "behavior_server_node")
    waits = cell["attach_settle_s"] + tree["grip_confirm_s"] + cell["release_settle_s"] + tree["settle_s"]
    for _, segments in rows:
        assert len(segments) == 8
        assert all(0.0 < s.bound <= s.configured + 1e-9 for s in segments)
        assert sum(s.bound for s in segments if s.name in WAITS) == waits
        moving = sum(s.bound for s in segments if s.name not in WAITS)
        assert 4.0 < moving < 10.0  # seven motions of 0.15-0.4 m and a joint path: seconds, not ms or minutes
    # The shipped carry runs at transit_speed 0.5, slower than full speed over its 0.36 m.
    carry = [s for s in rows[0][1] if s.name.startswith("carry")][0]
    assert carry.configured > carry.bound + 0.1


def test_at_full_speed_everywhere_the_configured_cycle_is_the_bound(tmp_path) -> None:
    data = yaml.safe_load(cb.BEHAVIOR.read_text())
    params = next(iter(data.values()))["ros__parameters"]
    params.update(transit_speed=1.0, approach_speed=1.0, release_speed=cb.RELEASE_SPEED)
    fast = tmp_path / "behavior.yaml"
    fast.write_text(yaml.safe_dump(data))
    for _, segments in cb.bounds(behavior_path=fast):
        assert all(abs(s.bound - s.configured) < 1e-9 for s in segments)


def test_a_slower_speed_scale_never_plans_a_faster_line() -> None:
    cfg = cb.MotionConfig()
    job = cb.load_jobs(cb.CELL)[1]
    above = cb._ik(job.above, tuple(cb.REST_POSTURE), cfg)
    times = [cb.line_time(above, job.place_above, s, cfg) for s in (0.1, 0.3, 0.5, 1.0)]
    assert times == sorted(times, reverse=True) and times[0] > 2 * times[-1]
