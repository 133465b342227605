"""The guarded pass over the rim and its search (behaviors/search.py): probe pattern, band, runs on fakes.

The fake arm (`FakeMotion.obstacle`) plays the box: a guarded descent whose target lies farther than
the side clearance from where the compartment really is meets the rim; one within it passes.
"""

from __future__ import annotations

import math
import re

import py_trees
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from py_trees.common import Status

from salamander_behavior.behaviors.base import OFFSET_SEARCH, offset_key, offset_source_key
from salamander_behavior.behaviors.search import (
    SEARCH_EXHAUSTED,
    RimBand,
    RimPass,
    next_probe,
    probe_offsets,
    push_axes,
    push_text,
    rim_band,
    search_key,
)
from salamander_behavior.mock.ports import Rig, Script
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import load_jobs
from salamander_behavior.ports import MotionPhase, MotionRequest
from salamander_behavior.report import CanResult
from salamander_control.cell.layout import load_cell_layout
from salamander_testing import REPO

CELL = REPO / "config" / "cell.yaml"
JOBS = load_jobs(CELL)
LAYOUT = load_cell_layout(CELL)
CLEARANCE = LAYOUT.side_clearance


PUSH_N = 1.4
"""N: the sideways push of the rim's edge the fake reports along an axis the can stands beyond the
clearance on (the physics cell gave 1.1-1.7 N at a 5 N trip)."""


def box_shifted(
    rig: Rig, dx: float, dy: float, passes: bool = True, push: bool = False
) -> list[MotionRequest]:
    """Play a box standing (dx, dy) off its planned place: guarded descents farther off meet the rim.

    Returns the list the guarded requests are recorded in. `passes` False: every guarded descent meets
    the rim. `push`: a contact's force pushes the can back toward the compartment along each axis on
    which it stands beyond the clearance, as the rim's edge does (else straight up: no direction).
    """
    guarded: list[MotionRequest] = []
    by_can = {job.can: job for job in rig.jobs}

    def obstacle(request: MotionRequest) -> tuple[float, float, float] | None:
        guarded.append(request)
        job = by_can[re.search(r"can_\d+", request.label).group(0)]
        true_x, true_y = job.place_release.x + dx, job.place_release.y + dy
        off = math.hypot(request.target.x - true_x, request.target.y - true_y)
        if passes and off <= CLEARANCE:
            return None
        assert job.rim_pass_z is not None
        if push:
            ex, ey = request.target.x - true_x, request.target.y - true_y
            side = [-math.copysign(PUSH_N, e) if abs(e) > CLEARANCE else 0.0 for e in (ex, ey)]
            rig.motion.contact_force = (side[0], side[1], 6.0)
        return (request.target.x, request.target.y, job.rim_pass_z)

    rig.motion.obstacle = obstacle
    return guarded


# --- the probe pattern (pure) -------------------------------------------------------------------------


def test_probes_walk_a_square_spiral_outwards_from_the_offset_that_met_the_rim() -> None:
    s = 0.0015
    probes = probe_offsets(s, 0.006, 12)
    expected_first = [(s, 0.0), (0.0, s), (-s, 0.0), (0.0, -s), (s, s), (-s, s), (-s, -s), (s, -s)]
    expected = [*expected_first, (2 * s, 0.0), (0.0, 2 * s), (-2 * s, 0.0), (0.0, -2 * s)]
    assert len(probes) == 12
    for got, want in zip(probes, expected, strict=True):
        assert got == pytest.approx(want)
    assert len(probe_offsets(s, 0.006, 1000)) == 48  # every grid point within 4 steps but the centre


@given(
    step=st.floats(0.0002, 0.01),
    reach=st.floats(0.0005, 0.03),
    probes=st.integers(0, 100),
)
def test_every_probe_is_a_distinct_grid_point_within_reach_nearest_first(
    step: float, reach: float, probes: int
) -> None:
    offsets = probe_offsets(step, reach, probes)
    assert len(offsets) <= probes
    assert len(set(offsets)) == len(offsets)
    distances = [math.hypot(*p) for p in offsets]
    assert all(0.0 < d <= reach + 1e-9 for d in distances)
    assert distances == sorted(distances) or all(
        b >= a - 1e-12 for a, b in zip(distances, distances[1:], strict=False)
    )
    for x, y in offsets:
        assert x / step == pytest.approx(round(x / step), abs=1e-6)
        assert y / step == pytest.approx(round(y / step), abs=1e-6)
    if step <= reach and probes >= 4:
        assert len(offsets) >= 4  # the four axial neighbours at one step always fit


@given(radius=st.floats(0.0, 2 * CLEARANCE), angle=st.floats(0.0, 2 * math.pi))
def test_the_default_search_finds_every_box_offset_up_to_twice_the_clearance(
    radius: float, angle: float
) -> None:
    settings = BehaviorSettings()
    box = (radius * math.cos(angle), radius * math.sin(angle))
    candidates = [(0.0, 0.0), *probe_offsets(settings.search_step_m, settings.search_reach_m, 12)]
    assert any(math.dist(box, p) <= CLEARANCE for p in candidates)


def test_a_push_names_the_axes_the_rim_pushed_the_can_along() -> None:
    assert push_axes((1.4, 0.1, 6.0)) == (1, 0)
    assert push_axes((-1.0, 1.2, 6.0)) == (-1, 1)  # diagonal: both axes hold over 0.4 of it
    # 0.2-0.5 N sideways: its larger axis only (the stack's weak readings: the smaller one was noise)
    assert push_axes((-0.1, -0.2, 6.0)) == (0, -1) and push_axes((0.3, -0.2, 6.0)) == (1, 0)
    assert push_axes((0.2, -0.2, 6.0)) == (0, 0)  # no larger axis: no direction
    assert push_axes((-0.1, -0.1, 6.0)) == (0, 0)  # under 0.2 N sideways: no direction
    assert push_axes((math.nan, 1.0, 6.0)) == (0, 0)
    assert push_axes(None) == (0, 0)
    assert push_text((-1.0, 1.2, 6.0)) == "pushed toward -x +y (1.6 N sideways)"
    assert push_text((0.0, 0.0, 6.0)) == "no sideways push (+0.0, +0.0 N: under 0.2 N)"
    assert push_text((0.1, -0.1, 6.0)) == "no sideways push (+0.1, -0.1 N: under 0.2 N)"  # what there was
    assert push_text((0.1, -0.3, 6.0)) == "pushed weakly toward -y (+0.1, -0.3 N: its larger axis only)"
    assert push_text((math.nan, 1.0, 6.0)) == push_text(None) == "no sideways push"


def test_the_next_probe_is_a_step_where_the_rim_pushed_else_the_spiral() -> None:
    s = 0.002
    probes = probe_offsets(s, 0.006, 12)
    index = {p: i for i, p in enumerate(probes)}

    def near(p: tuple[float, float]) -> int:
        return min(range(len(probes)), key=lambda i: math.dist(probes[i], p))

    assert next_probe(probes, [], (0.0, 0.0), (0.0, 0.0, 6.0), s) == 0  # no push: the spiral's first
    assert next_probe(probes, [], (0.0, 0.0), None, s) == 0  # search_follow_push false
    assert next_probe(probes, [], (0.0, 0.0), (-1.4, 0.0, 6.0), s) == near((-s, 0.0))
    assert next_probe(probes, [], (0.0, 0.0), (1.2, -1.1, 6.0), s) == near((s, -s))
    assert next_probe(probes, [], (0.0, 0.0), (-0.1, -0.2, 6.0), s) == near((0.0, -s))  # weak: larger axis
    # From a probe at +x that met the rim again, pushed +y: one step on in y from it.
    first = near((s, 0.0))
    assert next_probe(probes, [first], (s, 0.0), (0.0, 1.3, 6.0), s) == near((s, s))
    # The aim tried already: the nearest untried, the nearer the start on a tie; all tried: None.
    assert next_probe(probes, [first], (0.0, 0.0), (1.4, 0.0, 6.0), s) in {near((s, s)), near((s, -s))}
    assert next_probe(probes, list(index.values()), (0.0, 0.0), (1.4, 0.0, 6.0), s) is None


@given(
    pushes=st.lists(
        st.tuples(st.floats(-3.0, 3.0), st.floats(-3.0, 3.0), st.floats(0.0, 10.0)), min_size=1, max_size=60
    )
)
def test_a_search_following_any_pushes_tries_every_probe_once(
    pushes: list[tuple[float, float, float]],
) -> None:
    s = 0.002
    probes = probe_offsets(s, 0.006, 12)
    tried: list[int] = []
    at = (0.0, 0.0)
    for k in range(len(probes) + 1):
        index = next_probe(probes, tried, at, pushes[k % len(pushes)], s)
        if index is None:
            break
        assert index not in tried and 0 <= index < len(probes)
        tried.append(index)
        at = probes[index]
    assert sorted(tried) == list(range(len(probes)))


def test_the_probe_pattern_refuses_a_step_or_reach_that_is_not_positive() -> None:
    with pytest.raises(ValueError, match="positive step"):
        probe_offsets(0.0, 0.006, 12)
    with pytest.raises(ValueError, match="positive step"):
        probe_offsets(0.001, math.nan, 12)
    assert probe_offsets(0.002, 0.001, 12) == []  # a step beyond the reach leaves nothing to probe


def test_the_band_spans_where_the_cans_bottom_passes_the_rim_and_divider_tops() -> None:
    job = JOBS[1]
    settings = BehaviorSettings()
    band = rim_band(job, settings)
    rim_pass = LAYOUT.rim_z + LAYOUT.can_height  # the TCP when the can's bottom is level with the rim
    assert job.rim_pass_z == pytest.approx(rim_pass)
    above, below = settings.guard_band_above_m, settings.guard_band_below_m
    assert band == RimBand(pytest.approx(rim_pass + above), pytest.approx(rim_pass - below))
    assert job.place_release.z < band.bottom < band.top < job.place_above.z
    # An upward release offset raises the lowest point the pass may go to, never the band above the plan.
    high = rim_band(job, settings, dz=0.050)
    assert high is not None and high.bottom == pytest.approx(job.place_release.z + 0.050)
    low = rim_band(job, settings, dz=0.070)  # the release would be above the band: no band to pass
    assert low is None


# --- the pass and the search in the tree (fakes) --------------------------------------------------------


def test_a_pass_without_contact_is_one_descent_to_the_release_slow_and_guarded_through_the_band() -> None:
    rig = Rig(JOBS[:1])
    box_shifted(rig, 0.0, 0.0)
    assert rig.run() == "SUCCESS"
    job = JOBS[0]
    band = rim_band(job, BehaviorSettings())
    assert band is not None
    assert rig.motion.labels == ["above can_0", "descend to can_0", "lift can_0", "carry can_0",
                                 "over the rim can_0: through the rim", "rise"]  # fmt: skip
    descent = rig.motion.handles[4].request
    assert (descent.speed_scale, descent.guard_force, descent.target) == (0.5, 5.0, job.place_release)
    top, bottom = band.top - job.place_release.z, band.bottom - job.place_release.z
    band_of = descent.band  # 10 mm/s from 4 mm above to 6 mm below the rim, without stopping
    assert band_of is not None and band_of.speed_scale == BehaviorSettings().guard_speed
    assert (band_of.start, band_of.end) == (pytest.approx(top), pytest.approx(bottom))
    assert [h.request.guard_force > 0 for h in rig.motion.handles].count(True) == 1
    assert rig.gripper.releases[0].at == job.place_release
    assert not [m for level, m in rig.log.lines if level in ("warning", "error")]


def test_the_pass_says_where_its_goal_is_on_every_tick_it_runs() -> None:
    """The tree's snapshot shows the leg, its target and the goal's progress, not a stale line."""
    rig = Rig(JOBS[:1], scripts={"over the rim can_0: through the rim": Script(polls=6)})
    box_shifted(rig, 0.0, 0.0)
    rim = rig.leaf("over the rim can_0")
    seen: list[str] = []
    rig.run(until=lambda: bool(seen.append(rim.feedback_message)) or rig.motion.labels[-1:] == ["rise"])
    running = [m for m in seen if m.startswith("through the rim: (")]
    assert running and {m.rsplit(": ", 1)[1] for m in running} >= {"waiting for acceptance", "29%", "57%"}


def test_a_contact_lifts_the_can_clear_and_the_search_releases_at_the_first_probe_that_passes() -> None:
    dx, dy = -0.0026, 0.0026  # the box 3.7 mm off diagonally: the planned descent meets the rim
    rig = Rig(JOBS[:1])
    box_shifted(rig, dx, dy)
    assert rig.run() == "SUCCESS"
    job, s = JOBS[0], BehaviorSettings().search_step_m
    mm = f"{s * 1000:.1f}"
    band = rim_band(job, BehaviorSettings())
    assert band is not None
    labels = rig.motion.labels
    first_contact = labels.index("over the rim can_0: through the rim")
    assert labels[first_contact + 1] == "over the rim can_0: lift clear"
    lift = rig.motion.handles[first_contact + 1].request
    assert lift.target.z == pytest.approx(band.top) and lift.guard_force == 0.0
    assert (lift.target.x, lift.target.y) == (job.place_release.x, job.place_release.y)  # straight up
    # Probes 1-5 meet the rim (each lifted clear), probe 6 at (-1.5, +1.5) mm passes (1.6 mm off).
    for k in range(1, 6):
        assert f"over the rim can_0: probe {k} through the rim" in labels
        assert f"over the rim can_0: probe {k} lift clear" in labels
    assert "over the rim can_0: probe 6 lift clear" not in labels
    assert "over the rim can_0: probe 7 above the rim" not in labels
    assert labels[labels.index("over the rim can_0: probe 6 through the rim") + 1] == "rise"
    # Every lateral move happens above the band; every guarded descent goes to the release height, slow
    # through the band (a probe starts at its top: slow from its start).
    for handle in rig.motion.handles:
        request = handle.request
        if "above the rim" in request.label or "lift clear" in request.label:
            assert request.target.z == pytest.approx(band.top) and request.guard_force == 0.0
        if "through the rim" in request.label:
            assert request.target.z == pytest.approx(job.place_release.z) and request.guard_force == 5.0
            assert request.band is not None and request.band.speed_scale == BehaviorSettings().guard_speed
            assert request.band.start == pytest.approx(band.top - job.place_release.z)
    offset = py_trees.blackboard.Blackboard.get(offset_key("can_0"))
    assert offset == pytest.approx((-s, s, 0.0))
    assert py_trees.blackboard.Blackboard.get(offset_source_key("can_0")) == OFFSET_SEARCH
    release = rig.gripper.releases[0].at
    assert release == job.place_release.shifted(-s, s)
    assert rig.gripper.commands == [True, False]
    warnings = [m for level, m in rig.log.lines if level == "warning"]
    assert len(warnings) == 1
    assert warnings[0].startswith("can_0: met the rim: TCP (")
    assert (
        "N, over compartment 0 at offset [0.0, 0.0, 0.0] mm, no sideways push (+0.0, +0.0 N: under 0.2 N): "
        "lifting it clear (vacuum on), "
        "then " in warnings[0]
    )
    assert warnings[0].endswith("in a square spiral")  # the fake's contact pushes straight up
    reach = BehaviorSettings().search_reach_m  # the candidates: every grid point within it (6 mm)
    assert f"searching (12 probes, step {s * 1000:.1f} mm, within {reach * 1000:.1f} mm)" in warnings[0]
    infos = rig.log.text()
    assert "can_0: probe 1/12 met the rim: TCP" in infos and "lifting clear, probe 2 next" in infos
    assert (
        f"can_0: probe 6/12 passed the rim over compartment 0 at offset [-{mm}, {mm}, 0.0] mm "
        f"(the search moved it [-{mm}, {mm}, 0.0] mm): releasing there"
    ) in infos
    assert rig.report.records()[0].result is CanResult.PLACED
    assert f"offset [-{mm}, {mm}, 0.0] mm" in rig.report.records()[0].detail


def test_a_search_following_the_push_goes_in_at_its_first_probe() -> None:
    dx, dy = -0.0026, 0.0026  # as above: beyond the clearance in x and y; the rim pushes -x, +y
    rig = Rig(JOBS[:1])
    box_shifted(rig, dx, dy, push=True)
    assert rig.run() == "SUCCESS"
    s = BehaviorSettings().search_step_m
    labels = rig.motion.labels
    assert "over the rim can_0: probe 1 through the rim" in labels
    assert "over the rim can_0: probe 1 lift clear" not in labels  # it passed
    assert rig.gripper.releases[0].at == JOBS[0].place_release.shifted(-s, s)
    warning = next(m for level, m in rig.log.lines if level == "warning")
    assert "pushed toward -x +y (2.0 N sideways)" in warning
    assert warning.endswith("first where the rim pushed it")
    assert "can_0: probe 1/12 passed the rim" in rig.log.text()
    # The same box with search_follow_push false: the spiral, probe 6 (as above).
    rig = Rig(JOBS[:1], settings=BehaviorSettings(search_follow_push=False))
    box_shifted(rig, dx, dy, push=True)
    assert rig.run() == "SUCCESS"
    assert "can_0: probe 6/12 passed the rim" in rig.log.text()
    assert next(m for level, m in rig.log.lines if level == "warning").endswith("in a square spiral")


def test_a_push_along_one_axis_walks_the_search_along_it() -> None:
    rig = Rig(JOBS[:1])
    box_shifted(rig, 0.0045, 0.0, push=True)  # 4.5 mm in +x: +2 mm still meets the rim, +4 mm passes
    assert rig.run() == "SUCCESS"
    s = BehaviorSettings().search_step_m
    assert rig.gripper.releases[0].at == JOBS[0].place_release.shifted(2 * s, 0.0)
    text = rig.log.text()
    assert "can_0: probe 1/12 met the rim" in text and "pushed toward +x" in text
    assert "can_0: probe 2/12 passed the rim over compartment 0 at offset [4.0, 0.0, 0.0] mm" in text


@pytest.mark.parametrize("early", [0.01, 0.0])
def test_the_vacuum_goes_off_as_the_can_nears_its_release_height_below_the_band(early: float) -> None:
    """`release_early_m` before the release height (measured), below the band, the pass hands its goal on
    and "vacuum off" follows while it finishes; once the can let go, the rise bends out of it (its goal goes
    out while the descent's still runs). 0: after the goal's end."""
    label = "over the rim can_0: through the rim"
    rig = Rig(JOBS[:1], BehaviorSettings(release_early_m=early), scripts={label: Script(polls=120)})
    box_shifted(rig, 0.0, 0.0)
    rig.run(until=lambda: rig.gripper.commands == [True, False])
    descent = next(h for h in rig.motion.handles if h.request.label == label)
    assert descent.request.handoff == early
    span = math.dist(JOBS[0].place_above.position, JOBS[0].place_release.position)
    remaining = (1.0 - descent.polls / (descent.script.polls + 1)) * span  # the fake's, at vacuum off
    band = rim_band(JOBS[0], BehaviorSettings())
    assert band is not None
    if early:
        assert not descent.poll().done and 0.0 < remaining <= early  # still on its way down
        assert remaining < band.bottom - JOBS[0].place_release.z  # below the band: in the compartment
        leaf = next(b for b in rig.root.iterate() if b.name == "over the rim can_0")
        assert leaf.feedback_message.endswith("mm above the release height, the descent finishing")
    else:
        assert descent.poll().phase is MotionPhase.SUCCEEDED
    rig.run(until=lambda: "rise" in rig.motion.labels)
    assert not rig.gripper.vacuum and rig.gripper.holding is None  # the can let go first
    ended_first = label in [request.label for request, _ in rig.motion.finished]
    assert ended_first is not bool(early)  # handed on: the rise did not wait for the descent's end
    assert rig.run() == "SUCCESS" and rig.motion.cancels == 0


@hypothesis_settings(max_examples=40, deadline=None)
@given(
    polls=st.integers(2, 200),
    early=st.floats(0.0, 0.03),
    below=st.floats(0.001, 0.05),
    dx=st.floats(-2 * CLEARANCE, 2 * CLEARANCE),
)
def test_the_vacuum_goes_off_only_below_the_band_after_a_pass_without_contact(
    polls: int, early: float, below: float, dx: float
) -> None:
    """Property: whatever the descent's pace, `release_early_m` and band, "vacuum off" comes only after a
    descent that crossed its band without a contact, with the can at its release height or below the band
    within `release_early_m` of that height (the fake's distance remaining when the vacuum went off)."""
    settings = BehaviorSettings(release_early_m=early, guard_band_below_m=below)
    rig = Rig(JOBS[:1], settings, default=Script(polls=polls))
    box_shifted(rig, dx, 0.0, push=True)
    seen: list[tuple[float, bool]] = []
    gripper_off = rig.gripper.set_vacuum

    def off_watch(on: bool):  # noqa: ANN202 (the fake's PendingCall)
        if not on:
            descent = [h for h in rig.motion.handles if "through the rim" in h.request.label][-1]
            ended = descent.ended
            seen.append((descent.remaining, ended is not None))
            assert ended is None or ended.phase is MotionPhase.SUCCEEDED
        return gripper_off(on)

    rig.gripper.set_vacuum = off_watch  # type: ignore[method-assign]
    assert rig.run(max_ticks=20000) == "SUCCESS"
    band = rim_band(JOBS[0], settings)
    assert band is not None and len(seen) == 1
    remaining, done = seen[0]
    assert done or remaining <= min(early, band.bottom - JOBS[0].place_release.z) + 1e-9


def test_the_vacuum_never_goes_off_above_the_bands_bottom() -> None:
    """A `release_early_m` reaching above the band's bottom is cut to it (a band 45 mm below the rim)."""
    settings = BehaviorSettings(release_early_m=0.03, guard_band_below_m=0.045)
    rig = Rig(JOBS[:1], settings)
    box_shifted(rig, 0.0, 0.0)
    assert rig.run() == "SUCCESS"
    band = rim_band(JOBS[0], settings)
    assert band is not None
    descent = next(h for h in rig.motion.handles if "through the rim" in h.request.label)
    assert descent.request.handoff == pytest.approx(band.bottom - JOBS[0].place_release.z)
    assert descent.request.handoff < 0.03


def test_following_the_push_reaches_beyond_the_spirals_twelve_nearest_probes() -> None:
    """A box 4.8 mm off in +x and 2.6 mm in +y: none of the spiral's 12 nearest probes (to 4 mm) passes and
    the run stops holding the can; the rim's push walks the search to (+4, +2) mm (4.5 mm out, within the
    6 mm reach) in two probes."""
    rig = Rig(JOBS[:1])
    box_shifted(rig, 0.0048, 0.0026, push=True)
    assert rig.run() == "SUCCESS"
    assert rig.gripper.releases[0].at == JOBS[0].place_release.shifted(0.004, 0.002)
    assert "can_0: probe 2/12 passed the rim" in rig.log.text()
    rig = Rig(JOBS[:1], settings=BehaviorSettings(search_follow_push=False))
    box_shifted(rig, 0.0048, 0.0026, push=True)
    assert rig.run() == "FAILURE"
    assert "no probe of the search passed the rim (12 probes within 4.0 mm)" in rig.log.text()


def test_no_probe_passing_holds_the_can_above_its_compartment_and_stops_the_run() -> None:
    rig = Rig(JOBS[:2])
    box_shifted(rig, 0.0, 0.0, passes=False)
    assert rig.run() == "FAILURE"
    job = JOBS[0]
    band = rim_band(job, BehaviorSettings())
    assert band is not None
    assert rig.gripper.commands == [True]  # the vacuum never went off
    assert rig.gripper.holding == "can_0" and rig.gripper.releases == []
    assert "rise" not in rig.motion.labels and "above can_1" not in rig.motion.labels
    assert rig.motion.labels[-1] == "over the rim can_0: probe 12 lift clear"
    assert rig.motion.position is not None and rig.motion.position.z == pytest.approx(band.top)
    errors = [m for level, m in rig.log.lines if level == "error"]
    assert (
        "can_0: no probe of the search passed the rim (12 probes within 4.0 mm): holding the can above "
        "compartment 0 (vacuum on); the run stops"
    ) in errors[0]
    record = rig.report.records()[0]
    assert record.result is CanResult.ABORTED
    assert "over the rim can_0: no probe of the search passed the rim" in record.detail
    assert any(m.startswith("can_0: aborted, run stopped") and "vacuum on" in m for m in errors)
    assert py_trees.blackboard.Blackboard.get(search_key("can_0")) == SEARCH_EXHAUSTED
    assert rig.leaf("ManualAdjust[place_can_0 after the search]").status is Status.INVALID  # never ran


@pytest.mark.parametrize("why", ["guarded_pass false", "no efforts", "no joint state"])
def test_unguarded_the_release_descent_is_one_move_from_place_above_as_before(why: str) -> None:
    settings = BehaviorSettings(guarded_pass=why != "guarded_pass false")
    rig = Rig(JOBS[:1], settings=settings)
    rig.motion.efforts = {"no efforts": False, "no joint state": None}.get(why, True)
    guarded = box_shifted(rig, 0.005, 0.0, passes=False)  # would meet the rim, if it were felt
    assert rig.run() == "SUCCESS"
    assert rig.motion.labels == ["above can_0", "descend to can_0", "lift can_0", "carry can_0",
                                 "over the rim can_0: to the release", "rise"]
    assert all(h.request.guard_force == 0.0 and h.request.band is None for h in rig.motion.handles)
    assert guarded == [] and rig.motion.handles[4].request.speed_scale == 0.5
    assert rig.gripper.releases[0].at == JOBS[0].place_release
    assert "unguarded" in rig.leaf("over the rim can_0").feedback_message


def test_the_search_adds_its_probe_on_top_of_the_offset_the_descent_started_from() -> None:
    # The operator (or the box estimate) moved the can 2 mm in +x; the box stands 4 mm off in +x: the
    # descent at +2 mm meets the rim, probe 1 (+2 mm more) passes: the can goes in at +4 mm.
    rig = Rig(JOBS[:1], settings=BehaviorSettings(manual_place=True))
    box_shifted(rig, 0.004, 0.0)
    rig.run(until=lambda: rig.leaf("ManualAdjust[place_can_0]").status is Status.RUNNING)
    for _ in range(4):  # 50 mm/s for 0.04 s = 2 mm
        rig.jog(0.05)
        rig.clock.advance(0.01)
    rig.jog(0.0)
    rig.tick()
    rig.confirm(True)
    assert rig.run() == "SUCCESS"
    base = py_trees.blackboard.Blackboard.get(offset_key("can_0"))
    release = rig.gripper.releases[0].at
    assert release is not None
    moved = release.x - JOBS[0].place_release.x
    assert moved == pytest.approx(base[0])
    assert 0.0015 < moved and abs(moved - 0.004) <= CLEARANCE
    assert "over the rim can_0: probe 1 through the rim" in rig.motion.labels
    assert py_trees.blackboard.Blackboard.get(offset_source_key("can_0")) == OFFSET_SEARCH


def test_search_fallback_manual_asks_the_operator_then_passes_once_more_guarded_without_a_search() -> None:
    rig = Rig(JOBS[:1], settings=BehaviorSettings(search_fallback="manual", search_probes=2))
    guarded = box_shifted(rig, 0.0, 0.0, passes=False)
    rig.run(until=lambda: rig.leaf("ManualAdjust[place_can_0 after the search]").status is Status.RUNNING)
    warnings = [m for level, m in rig.log.lines if level == "warning"]
    assert any(
        "no probe of the search passed the rim (2 probes within 2.0 mm): holding the can above compartment "
        "0; ManualAdjust next (search_fallback manual" in m
        for m in warnings
    )
    rig.motion.obstacle = None  # the operator's look found the way in
    rig.tick()
    rig.confirm(True)
    assert rig.run() == "SUCCESS"
    labels = rig.motion.labels
    after = labels.index("over the rim can_0 after ManualAdjust: through the rim")
    assert labels[after + 1] == "rise"
    assert rig.motion.handles[after].request.guard_force == 5.0
    assert len(guarded) == 3  # the first descent and the two probes
    assert rig.gripper.commands == [True, False]


def test_a_contact_after_the_fallback_confirm_holds_the_can_without_another_search() -> None:
    rig = Rig(JOBS[:1], settings=BehaviorSettings(search_fallback="manual", search_probes=1))
    box_shifted(rig, 0.0, 0.0, passes=False)
    rig.run(until=lambda: rig.leaf("ManualAdjust[place_can_0 after the search]").status is Status.RUNNING)
    rig.tick()
    rig.confirm(True)
    assert rig.run() == "FAILURE"
    assert rig.gripper.commands == [True] and rig.gripper.holding == "can_0"
    assert rig.motion.labels[-1] == "over the rim can_0 after ManualAdjust: lift clear"
    text = rig.log.text()
    assert "lifting it clear (vacuum on) and holding it there (no search after ManualAdjust)" in text
    assert "can_0: the guarded pass met the rim after ManualAdjust: holding the can above compartment 0" in (
        text
    )


def test_a_guarded_move_that_fails_without_a_contact_stops_the_run_holding_with_the_reason() -> None:
    refused = Script(succeed=False, message="early fail: no efforts in /joint_states")
    rig = Rig(JOBS[:1], scripts={"over the rim can_0: through the rim": refused})
    assert rig.run() == "FAILURE"
    assert rig.gripper.commands == [True] and "rise" not in rig.motion.labels
    detail = rig.report.records()[0].detail
    assert "through the rim: early fail: no efforts in /joint_states" in detail


def test_a_can_dropping_during_the_search_cancels_the_probe_without_a_release() -> None:
    rig = Rig(JOBS[:1], default=Script(polls=10))
    box_shifted(rig, 0.0, 0.0, passes=False)
    rig.run(until=lambda: "over the rim can_0: probe 2 through the rim" in rig.motion.labels)
    probe = rig.motion.handles[-1]
    rig.gripper.holding = None
    rig.tick()
    rig.tick()
    assert probe.cancelled
    assert rig.run() == "FAILURE"
    assert rig.gripper.commands == [True]


def test_rim_pass_refuses_an_offset_beyond_30_mm_without_moving() -> None:
    rig = Rig(JOBS[:1])
    leaf = rig.leaf("over the rim can_0")
    assert isinstance(leaf, RimPass)
    py_trees.blackboard.Blackboard.set(offset_key("can_0"), (0.031, 0.0, 0.0))
    sent = len(rig.motion.handles)
    leaf.initialise()
    assert leaf.update() is Status.FAILURE
    assert "not within 30 mm" in leaf.feedback_message and len(rig.motion.handles) == sent
