"""The runner's respawn rules (launch's ExecuteLocal: respawn, respawn_delay, respawn_max_retries) on a
fake clock, and the launch file attributes that set them. Around real processes: test/test_launch_runner.py.
"""

import signal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from salamander_bringup.launch_plan import LaunchFileError, RespawnSpec, load_plan
from salamander_bringup.respawn import (
    STARTUP_RETRIES,
    Fail,
    Respawn,
    RespawnTracker,
    StartupRetries,
    startup_crash,
)


def test_without_respawn_an_exit_fails_and_nothing_is_scheduled():
    tracker = RespawnTracker(RespawnSpec())
    decision = tracker.on_exit(10.0, stopping=False)
    assert isinstance(decision, Fail)
    assert tracker.pending is None and tracker.due(1e9, stopping=False) is None


@pytest.mark.parametrize("delay", [0.0, 2.0])
def test_respawn_restarts_after_the_delay_and_counts_from_one(delay):
    tracker = RespawnTracker(RespawnSpec(respawn=True, delay=delay))
    assert tracker.on_exit(100.0, stopping=False) == Respawn(at=100.0 + delay, delay=delay, attempt=1)
    if delay:
        assert tracker.due(100.0 + delay - 1e-6, stopping=False) is None  # not before its time
    assert tracker.due(100.0 + delay, stopping=False) == Respawn(100.0 + delay, delay, 1)
    assert tracker.due(200.0, stopping=False) is None  # started once, not again
    assert tracker.on_exit(300.0, stopping=False) == Respawn(300.0 + delay, delay, 2)


def test_a_node_that_never_comes_up_is_not_restarted_after_three_tries_in_a_row():
    # A bad parameter (`run_on_start:=1` reached the server as an integer) killed it at every start;
    # respawned every 2 s for ever, the stack looked up without it.
    tracker = RespawnTracker(RespawnSpec(respawn=True, delay=2.0))
    assert isinstance(tracker.on_exit(1.0, stopping=False, up=False), Respawn)
    assert isinstance(tracker.on_exit(2.0, stopping=False, up=True), Respawn)  # up once: the count restarts
    assert isinstance(tracker.on_exit(3.0, stopping=False, up=False), Respawn)
    assert isinstance(tracker.on_exit(4.0, stopping=False, up=False), Respawn)
    failed = tracker.on_exit(5.0, stopping=False, up=False)
    assert isinstance(failed, Fail) and "exited 3 times in a row before it was up" in failed.reason
    other = RespawnTracker(RespawnSpec(respawn=True))  # a node that cannot say (rviz): never counted
    assert all(isinstance(other.on_exit(t, stopping=False, up=None), Respawn) for t in range(10))


def test_an_exit_during_a_requested_stop_is_never_respawned():
    tracker = RespawnTracker(RespawnSpec(respawn=True, delay=0.0))
    assert tracker.on_exit(1.0, stopping=True) is None
    assert tracker.pending is None and tracker.retries == 0


def test_a_stop_during_the_respawn_delay_drops_the_restart():
    tracker = RespawnTracker(RespawnSpec(respawn=True, delay=2.0))
    tracker.on_exit(0.0, stopping=False)
    assert tracker.due(5.0, stopping=True) is None  # the delay is over, but a stop came first
    assert tracker.pending is None and tracker.due(6.0, stopping=False) is None
    tracker.on_exit(10.0, stopping=False)
    assert tracker.cancel() == Respawn(12.0, 2.0, 2)
    assert tracker.cancel() is None and tracker.due(99.0, stopping=False) is None


def test_max_retries_bound_the_restarts_over_the_whole_life_and_negative_means_unbounded():
    tracker = RespawnTracker(RespawnSpec(respawn=True, delay=0.0, max_retries=2))
    assert isinstance(tracker.on_exit(0.0, False), Respawn)
    assert tracker.due(0.0, False) is not None
    assert isinstance(tracker.on_exit(100.0, False), Respawn)  # launch never resets the count
    assert tracker.due(100.0, False) is not None
    spent = tracker.on_exit(200.0, False)
    assert isinstance(spent, Fail) and "respawn_max_retries=2" in spent.reason
    assert isinstance(RespawnTracker(RespawnSpec(True, 0.0, 0)).on_exit(0.0, False), Fail)
    unbounded = RespawnTracker(RespawnSpec(True, 0.0, -1))
    for attempt in range(1, 50):
        assert unbounded.on_exit(float(attempt), False).attempt == attempt
        unbounded.due(float(attempt), False)


events = st.lists(st.tuples(st.sampled_from(["exit", "tick", "stop"]), st.floats(0.0, 5.0)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(respawn=st.booleans(), delay=st.floats(0.0, 3.0), retries=st.integers(-1, 4), script=events)
def test_property_no_restart_after_a_stop_none_early_none_beyond_the_limit(respawn, delay, retries, script):
    tracker = RespawnTracker(RespawnSpec(respawn, delay, retries))
    now, stopping, alive, started, exited_at = 0.0, False, True, 0, 0.0
    for kind, dt in script:
        now += dt
        if kind == "stop":
            stopping = True
        elif kind == "exit" and alive:
            alive, exited_at = False, now
            decision = tracker.on_exit(now, stopping)
            assert decision is None if stopping else isinstance(decision, Respawn | Fail)
            assert not isinstance(decision, Respawn) or respawn
        due = tracker.due(now, stopping)
        if due is not None:
            assert not stopping and not alive and now >= exited_at + delay
            alive, started = True, started + 1
    assert retries < 0 or started <= retries
    assert respawn or started == 0


def _plan(tmp_path, attrs):
    path = tmp_path / "r.launch.xml"
    node = f'<node pkg="p" exec="e" name="n" {attrs}/>'
    path.write_text(f'<launch><arg name="on" default="true"/>{node}</launch>')
    return load_plan(path, {}, find_share=lambda pkg: f"/share/{pkg}")


@pytest.mark.parametrize(
    ("attrs", "spec"),
    [
        ("", RespawnSpec(False, 0.0, -1)),
        ('respawn="true"', RespawnSpec(True, 0.0, -1)),
        ('respawn="$(var on)" respawn_delay="2"', RespawnSpec(True, 2.0, -1)),  # a substitution, as launch
        ('respawn="False" respawn_delay="0.5" respawn_max_retries="3"', RespawnSpec(False, 0.5, 3)),
        ('respawn="1" respawn_max_retries="-1"', RespawnSpec(True, 0.0, -1)),
    ],
)
def test_launch_file_respawn_attributes(tmp_path, attrs, spec):
    assert _plan(tmp_path, attrs).nodes[0].respawn == spec


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ('respawn="yes"', "neither true/1 nor false/0"),
        ('respawn="true" respawn_delay="-1"', "respawn_delay must be a non-negative number"),
        ('respawn="true" respawn_delay="nan"', "respawn_delay must be a non-negative number"),
        ('respawn="true" respawn_delay="soon"', "not 'soon'"),
        ('respawn="true" respawn_max_retries="2.5"', "respawn_max_retries must be an integer"),
    ],
)
def test_bad_respawn_attributes_are_refused(tmp_path, attrs, message):
    with pytest.raises(LaunchFileError) as info:
        _plan(tmp_path, attrs)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("code", "up", "crash"),
    [
        (-signal.SIGSEGV, False, "SIGSEGV"),
        (-signal.SIGABRT, False, "SIGABRT"),
        (-signal.SIGSEGV, True, ""),  # it said it was up: a running node's crash, launch's rules apply
        (-signal.SIGKILL, False, ""),  # sent by someone: not the process's own fault
        (-signal.SIGINT, False, ""),
        (1, False, ""),  # an exit code (a bad config, a traceback): starting it again would not help
        (0, False, ""),
    ],
)
def test_only_a_fatal_signal_before_the_node_is_up_is_a_startup_crash(code, up, crash):
    assert startup_crash(code, up) == crash


def test_start_up_retries_are_counted_and_bounded_over_the_whole_launch():
    retries = StartupRetries()
    assert retries.on_exit(1, up=False) == "" and retries.used == 0  # not a start-up crash: not counted
    for n in range(1, STARTUP_RETRIES + 1):
        assert retries.on_exit(-signal.SIGSEGV, up=False) == "SIGSEGV" and retries.used == n
    assert retries.on_exit(-signal.SIGSEGV, up=False) == "" and retries.used == STARTUP_RETRIES  # spent
