"""bench/cycle_bound.py: the stack's plans per can as configured and at full speed, and the floor."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import yaml

from salamander_testing import REPO

sys.path.insert(0, str(REPO / "bench"))

import cycle_bound as cb  # noqa: E402

VENTED = "let go (vented from release_early_m)"
WAITS = ("attach settle + grip confirm", "release settle + settle", VENTED)
BAND = "through the rim band (guard_speed)"


@pytest.fixture(scope="module")
def rows() -> list[tuple[str, list[cb.Segment]]]:
    return cb.bounds()


@pytest.fixture(scope="module")
def floors() -> dict[str, list[cb.Step]]:
    return dict(cb.floors())


def test_the_bound_is_the_configured_cycle_at_full_speed_with_the_release_descent_at_half(rows) -> None:
    assert [can for can, _ in rows] == ["can_0", "can_1", "can_2"]
    cell = cb._params(cb.CELL, "cell_sim")
    tree = cb._params(cb.BEHAVIOR, "behavior_server_node")
    grip = cell["attach_settle_s"] + tree["grip_confirm_s"]
    for _, segments in rows:
        assert len(segments) == 10  # the release descent in three lines: to the band, through it, below it
        # Every step takes time, but the let-go: vented far enough up, the valve is done as the arm arrives.
        assert all(0.0 < s.bound <= s.configured + 1e-9 for s in segments if s.name != VENTED)
        assert sum(s.bound for s in segments if s.name == WAITS[0]) == pytest.approx(grip)
        # The vacuum goes off release_early_m before the release height: the valve vents meanwhile.
        (let_go,) = [s for s in segments if s.name == VENTED]
        assert tree["settle_s"] <= let_go.bound < cell["release_settle_s"] + tree["settle_s"]
        moving = sum(s.bound for s in segments if s.name not in WAITS)
        assert 4.0 < moving < 12.0  # nine motions of 0.01-0.4 m and a joint path: seconds, not ms or minutes
    # The shipped carry is a joint path at the generator's limits, faster than the line over its 0.36 m.
    cfg = cb.motion_config()
    job = cb.load_jobs(cb.CELL)[0]
    carry = [s for s in rows[0][1] if s.name.startswith("carry")][0]
    above = cb._ik(job.above, tuple(cb.REST_POSTURE), cfg)
    assert carry.name == "carry to its low end (joint path)" and carry.configured == carry.bound
    assert carry.bound < cb.line_time(above, job.place_above, 1.0, cfg) - 0.2


def test_the_low_carry_shortens_the_release_descent_and_not_the_carry(rows, tmp_path) -> None:
    data = yaml.safe_load(cb.BEHAVIOR.read_text())
    next(iter(data.values()))["ros__parameters"]["low_carry"] = False
    high = tmp_path / "behavior.yaml"
    high.write_text(yaml.safe_dump(data))
    for (_, low), (_, segments) in zip(rows, cb.bounds(behavior_path=high), strict=True):
        carries = [s for s in (*low, *segments) if s.name.startswith("carry")]
        assert [c.name.split(" (")[0] for c in carries] == ["carry to its low end", "carry to place_above"]
        assert carries[0].bound == pytest.approx(carries[1].bound, abs=0.02)  # the base's turn sets it
        to_band = [s.bound for s in (*low, *segments) if s.name.startswith("release descent to the band")]
        assert 0.25 < to_band[1] - to_band[0] < 0.45  # 48 mm less of the line at release_speed


def test_without_release_early_m_the_valve_vents_after_the_descent(rows, tmp_path) -> None:
    data = yaml.safe_load(cb.BEHAVIOR.read_text())
    next(iter(data.values()))["ros__parameters"]["release_early_m"] = 0.0
    late = tmp_path / "behavior.yaml"
    late.write_text(yaml.safe_dump(data))
    cell = cb._params(cb.CELL, "cell_sim")
    tree = cb._params(cb.BEHAVIOR, "behavior_server_node")
    for (_, vented), (_, segments) in zip(rows, cb.bounds(behavior_path=late), strict=True):
        (let_go,) = [s for s in segments if s.name == "release settle + settle"]
        assert let_go.bound == pytest.approx(cell["release_settle_s"] + tree["settle_s"])
        saved = sum(s.bound for s in segments) - sum(s.bound for s in vented)
        assert 0.1 < saved <= cell["release_settle_s"] + 1e-9  # the overlap: the valve's time, or most of it


def test_the_rim_band_is_passed_at_guard_speed(rows) -> None:
    settings = cb.BehaviorSettings.from_values(cb._params(cb.BEHAVIOR, "behavior_server_node"))
    height = settings.guard_band_above_m + settings.guard_band_below_m
    for _, segments in rows:
        band = [s for s in segments if s.name == BAND][0]
        assert band.bound == band.configured
        # One goal crossing the band at guard_speed, entered and left at that speed: the height at it.
        assert band.bound == pytest.approx(height / settings.guard_speed, rel=1e-6)


def test_at_full_speed_everywhere_the_configured_cycle_is_the_bound(tmp_path) -> None:
    data = yaml.safe_load(cb.BEHAVIOR.read_text())
    params = next(iter(data.values()))["ros__parameters"]
    params.update(transit_speed=1.0, approach_speed=1.0, release_speed=cb.RELEASE_SPEED)
    fast = tmp_path / "behavior.yaml"
    fast.write_text(yaml.safe_dump(data))
    for _, segments in cb.bounds(behavior_path=fast):
        assert all(abs(s.bound - s.configured) < 1e-9 for s in segments)


def test_a_chain_times_legs_handed_on_as_the_cartesian_node_continues_a_preempting_goal() -> None:
    cfg = cb.motion_config()
    job = cb.load_jobs(cb.CELL)[1]
    contact = cb._ik(job.contact, cb._ik(job.above, tuple(cb.REST_POSTURE), cfg), cfg)
    rest = [(job.above, 0.3, 0.0), (job.place_above, 0.5, 0.0)]
    blended = [(job.above, 0.3, 0.025), (job.place_above, 0.5, 0.0)]
    (lift, carry), end = cb.chain_times(contact, rest, cfg)
    (lift_b, carry_b), end_b = cb.chain_times(contact, blended, cfg)
    assert lift == pytest.approx(cb.line_time(contact, job.above, 0.3, cfg))  # from rest: the plain plan
    assert carry == pytest.approx(cb.line_time(cb._ik(job.above, contact, cfg), job.place_above, 0.5, cfg))
    assert lift_b < lift - 0.05  # handed on 25 mm before its end
    # The carry bent out of the rising lift is planned slower than from rest (a moving start's joint fit is
    # best effort, docs/design/cycle.md): a hand-off saves the stack's stop, not planned motion time.
    assert abs((lift_b + carry_b) - (lift + carry)) < 0.3
    assert np.allclose(end, end_b, atol=1e-6)  # both end at rest at place_above
    (rise,), _ = cb.chain_times(cb._ik(job.place_release, end, cfg), [(job.place_above, 0.3, 0.06)], cfg)
    assert rise < cb.line_time(cb._ik(job.place_release, end, cfg), job.place_above, 0.3, cfg) - 0.1


def test_a_slower_speed_scale_never_plans_a_faster_line() -> None:
    cfg = cb.motion_config()
    job = cb.load_jobs(cb.CELL)[1]
    above = cb._ik(job.above, tuple(cb.REST_POSTURE), cfg)
    times = [cb.line_time(above, job.place_above, s, cfg) for s in (0.1, 0.3, 0.5, 1.0)]
    assert times == sorted(times, reverse=True) and times[0] > 2 * times[-1]


def test_the_floor_is_below_the_plan_at_full_speed_below_as_configured(rows, floors) -> None:
    for can, segments in rows:
        floor = sum(seconds for _, seconds in floors[can])
        full, conf = sum(s.bound for s in segments), sum(s.configured for s in segments)
        assert 0.0 < floor <= full <= conf


def test_the_floor_waits_for_the_part_present_events_only(floors) -> None:
    cell = cb._params(cb.CELL, "cell_sim")
    for steps in floors.values():
        waits = [seconds for name, seconds in steps if "event" in name]
        assert waits == [cell["attach_settle_s"], cell["release_settle_s"]]
        names = [name for name, _ in steps]
        assert sum("(blended)" in name for name in names) == 2 and BAND in names
    assert [name for name, _ in floors["can_2"]][-1] == "rise"  # the last can's rise ends the run


def test_a_blended_path_ends_straight_down_and_stays_between_its_waypoints() -> None:
    job0, job1 = cb.load_jobs(cb.CELL)[:2]
    poses = cb.blended_poses(job0.place_release, job0.place_above, job1.above, job1.contact)
    assert np.allclose(poses[0], cb._pose(job0.place_release))
    assert np.allclose(poses[-1], cb._pose(job1.contact))
    top = job1.contact.z + cb.VERTICAL_M + 1e-12
    vertical = poses[len(poses) - np.argmax(poses[::-1, 2] > top) :]  # the rows after the last one above top
    assert vertical[0, 2] == pytest.approx(top) and len(vertical) >= 3
    assert np.allclose(vertical[:, [0, 1, 4]], cb._pose(job1.contact)[[0, 1, 4]])
    assert poses[:, 2].max() <= max(job0.place_above.z, job1.above.z) + 1e-12
    assert poses[:, 2].min() >= min(job0.place_release.z, job1.contact.z) - 1e-12


def _sampled_ratios(traj, vmax, amax) -> tuple[float, float]:
    ts = np.linspace(0.0, traj.duration, 4000)
    return (np.abs(traj(ts, 1)) / vmax).max(), (np.abs(traj(ts, 2)) / amax).max()


def test_toppra_times_a_straight_joint_move_bang_coast_bang_within_the_limits() -> None:
    vmax, amax = np.array([1.5, 1.0, 1.0, 2.0, 2.0]), np.array([4.0, 3.0, 3.0, 6.0, 6.0])
    points = np.linspace(np.zeros(5), [1.0, 0.0, 0.0, 0.0, 0.0], 30)
    traj = cb.topp(points, vmax, amax)
    assert traj.duration == pytest.approx(1.0 / 1.5 + 1.5 / 4.0, rel=0.005)  # d / v + v / a
    assert max(_sampled_ratios(traj, vmax, amax)) <= 1.0 + 1e-6


def test_toppra_keeps_a_curved_path_within_the_limits() -> None:
    vmax, amax = np.array([1.5, 1.0, 1.0, 2.0, 2.0]), np.array([4.0, 3.0, 3.0, 6.0, 6.0])
    a = np.linspace(0.0, np.pi, 60)
    points = np.column_stack([np.cos(a), np.sin(a), 0.2 * a, 0.5 * np.sin(2 * a), np.zeros_like(a)])
    traj = cb.topp(points, vmax, amax)
    vel, acc = _sampled_ratios(traj, vmax, amax)
    assert vel <= 1.0 + 1e-3 and acc <= 1.01  # the acceleration is checked on the grid, constant between
    assert max(vel, acc) > 0.99  # and time-optimal: some limit is reached
