"""`/salamander/behavior_server_node`: the pick-and-place tree (tree.py), run by the RunPickPlace action.

    python -m salamander_behavior.nodes.behavior_server_node --ros-args -p cell_config:=config/cell.yaml
    behavior_server_node --ros-args --params-file config/arm.yaml --params-file config/behavior.yaml

A thin shell: it declares the parameters (`salamander_behavior.params`, one frozen snapshot), loads the
cell config (one job per can) and serves runs. The server starts **idle, holding nothing**. A run:

1. starts from a RunPickPlace goal on `run_pick_place` (/salamander/run_pick_place; `runs.select_cans`
   decides which cans from the run's progress, or rejects the goal with the reason in the log: unknown
   or repeated ids, cans already placed, another run active, nothing left), or once at start-up
   with `run_on_start` as soon as the stack is ready (arm, lease service, gripper; no lease held while
   waiting, and the log says what is awaited, once, then every 10 s): the server then sends that goal
   to itself, so the demo run is watched and cancelled like any other;
2. builds a fresh tree for its cans (`tree.build_tree`: the blackboard starts clean), acquires the arm
   lease (`ArmMotionCore.acquire_lease`) and ticks the tree on the node's timer (`tick_rate_hz`),
   publishing feedback (current can, running leaf, cans done) whenever it changes;
3. ends when the root ends (SUCCESS: every can placed, missed or skipped; FAILURE: a can aborted, the arm
   holding it) or on cancel (the tree is stopped: the running Cartesian goal is cancelled, the vacuum is
   left as it is, so a can on the pad stays there); the lease is released, and once the generator
   answered the RELEASE (bounded wait) the run logs ``run complete: ...`` / ``run stopped: ...`` /
   ``run cancelled: ...`` and the goal gets its result: one outcome per can (`runs.outcomes`).

The run's progress (progress.py: which cans are placed, skipped, aborted or removed, and which can was
carried) is kept in the file `progress_file` (default ``$ROS_HOME/salamander/<node>/progress.json``),
read at start and written atomically whenever it changes (after the tick that changed it). So a
server restarted mid-run (the runner respawns it) resumes: an empty goal (run_on_start's too) picks
only the cans not yet done, and the can recorded as carried is not picked but offered to the pad
check (behaviors/pad.py), which runs before every pick: with a can on the pad the tree waits for the
operator to confirm its placement or remove it. A can lost in transit (part-present dropped while
carried) is recorded "lost" until the operator confirms the cell is clear: every run begins, before
any motion, by waiting for that confirmation (behaviors/lost.py), and the batch is not over before it.
A run that leaves every can of the cell done resets the progress (the next batch); the service
`run_pick_place/reset_progress` (std_srvs/Trigger, refused while a run is active) does it by hand. At
start, before any run, a can found on the pad (fresh part-present true) gets the vacuum switched on
once: the valve state is unknown after a restart.

The box estimate (box_estimate.py: where the box really stands, from cans placed by ManualAdjust or the
search) is kept in the same file: each run's tree starts from it (``/box_estimate`` on the blackboard)
and the node takes it back after every tick. It belongs to the box: neither reset forgets it; the
service `box/new_box` (/salamander/box/new_box, std_srvs/Trigger, refused while a run is active) does,
when the operator says a new box is in (gamepad, operator view, ``salamanderctl new-box``). It is
shown on `box/estimate` (std_msgs/String, JSON of salamander_control/box_status.py, latched), and the
start line says whether one was loaded.

The operator's live sets of `params.OPERATOR_PARAMS` (manual_place, allow_z, max_offset_z; `ros2 param
set`, salamanderctl, the operator view) are kept in the same file, and a restarted server applies them
over its launch values before anything else; its start line says where each value came from
(``manual_place true (kept from before the restart; launch file said false)``, or ``(launch file)``).
They stay until the operator sets them again or resets the progress (the reset sets the launch values
again); the reset after a finished batch keeps them, and a fresh ROS_HOME (a new simulated stack) starts
from the launch file.

Contact sensing: the first joint state on `names.JOINT_STATES_MONITOR` decides whether the release
descent is guarded (behaviors/search.py): with efforts and `guarded_pass` true the can passes the rim
band with a guarded move and a contact starts a search; without efforts it is one unguarded descent as
before. The server says which, once, as soon as that first joint state arrived (`_check_efforts`).

So the lease is held exactly while a run is active (ManualAdjust included), and between runs the
gamepad's anonymous joint jog moves the arm. The snapshot (`snapshot_rate_hz`, std_msgs/String on
/salamander/behavior/tree, latched) shows the current or last run's summary, one line per finished can
and ``py_trees.display.unicode_tree`` with every behaviour's status.

Executor: the node runs on one SingleThreadedExecutor (`run_node`), so the goal, cancel and timer
callbacks never run at the same time and share state without locks. Not the EventsExecutor, although it
costs less per wake-up: it resumes a waiting coroutine again at once, so the execute callback's wait
kept a core busy for the whole run (53 % of one core, against 19 % here: docs/design/cpu.md). The
measured joints (guard, readiness) come at the monitors' rate, `names.JOINT_STATES_MONITOR`. The
action's execute callback is a coroutine that awaits an rclpy Future which the tick timer completes when
the run has ended: while it waits it yields to the executor (which resumes it once per wake-up), so
nothing ever blocks.

Shutdown: Ctrl-C and SIGTERM alike end the spin loop with the context still working
(`salamander_control.ros.run.run_node`), and `destroy_node` stops the tree of an active run (the running
goal is cancelled) and releases the lease. Should the process die without that, the lease expires within
`lease_timeout_s` and the trajectory generator stops the arm.
"""

from __future__ import annotations

import time
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Any

import py_trees
import rclpy.logging
from py_trees.common import Status
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.task import Future
from std_msgs.msg import String
from std_srvs.srv import Trigger

import salamander_behavior.progress as run_progress
import salamander_behavior.runs as runs
from salamander_behavior import params
from salamander_behavior.behaviors.base import BOX_ESTIMATE_KEY, Ports
from salamander_behavior.behaviors.guard import GuardSettings, guard_conditions, guarded
from salamander_behavior.behaviors.search import contact_sensing_line
from salamander_behavior.box_estimate import BoxEstimate
from salamander_behavior.limits.urdf_limits import default_urdf_path
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import CanJob, load_jobs
from salamander_behavior.report import RunReport
from salamander_behavior.ros.arm_motion_client import ArmMotionCore
from salamander_behavior.ros.gripper_client import GripperIO
from salamander_behavior.tree import build_tree
from salamander_control import names
from salamander_control.cell.layout import default_cell_config
from salamander_control.kinematics import ArmParams
from salamander_control.ros.coupled_limits_sync import follow_coupled_limits
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.qos import LATCHED
from salamander_control.ros.run import run_node
from salamander_control.urdf import UrdfNotFoundError
from salamander_msgs.action import RunPickPlace

WAITING_LOG_PERIOD_S = 10.0
"""s between two "run_on_start: waiting for ..." lines (the first one is logged at once)."""
AUTO_GOAL_RETRY_S = 5.0
"""s; run_on_start sends its goal again when no answer came this long (a request lost at start-up)."""
EFFORTS_CHECK_PERIOD_S = 0.5
"""s between two looks for the first joint state (whether it carries efforts), until it came."""
RELEASE_WAIT_MIN_S = 1.0
"""s; the run waits for the generator's answer to its RELEASE at least this long (2 lease timeouts)."""


def snapshot_text(root: py_trees.behaviour.Behaviour, report: RunReport, state: str | None = None) -> str:
    """What /salamander/behavior/tree carries: run status, per-can results, the tree with statuses.

    `state` replaces the root's status in the head (e.g. "CANCELLED"); default: the root's status.
    """
    head = [f"run: {state or root.status.value} ({report.summary()})", *report.lines(), ""]
    return "\n".join(head) + py_trees.display.unicode_tree(root, show_status=True)


class RunEnd(Enum):
    """How a run ended; the value is the word of its log line ("run complete: ...")."""

    COMPLETE = "complete"  # the root SUCCEEDED
    STOPPED = "stopped"  # the root FAILED (a can aborted, or not ready in time)
    CANCELLED = "cancelled"  # the goal was cancelled (or the server stopped)


class ActiveRun:
    """One run's tree, report and goal; `finished` completes with the RunPickPlace result."""

    def __init__(self, cans: tuple[str, ...], root: py_trees.behaviour.Behaviour, report: RunReport,
                 goal_handle: Any | None) -> None:
        self.cans = cans
        self.root = root
        self.tree = py_trees.trees.BehaviourTree(root)
        self.report = report
        self.goal_handle = goal_handle  # None for the run_on_start run
        self.finished: Future = Future()
        self.cancel_requested = False
        self.end: RunEnd | None = None  # set when the tree stopped; the run is over once `done`
        self.done = False
        self.release: Future | None = None
        self.release_deadline = 0.0
        self.result = RunPickPlace.Result()
        self.last_feedback: tuple[str, str, int] | None = None

    @property
    def state(self) -> str | None:
        """The snapshot head's word once the run was cancelled (the root's status says INVALID)."""
        return "CANCELLED" if self.end is RunEnd.CANCELLED else None


class BehaviorServerNode(Node):
    """Serves pick-and-place runs (see the module docstring)."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. namespace= for a test that builds it in-process)."""
        try:  # the limit guard's per-joint limits: found at start-up (before the node exists, so nothing
            default_urdf_path()  # is half-built to tear down), not when a run builds its tree
        except UrdfNotFoundError as exc:
            rclpy.logging.get_logger(names.BEHAVIOR_SERVER).fatal(f"cannot start: {exc}")
            raise SystemExit(1) from exc
        super().__init__(names.BEHAVIOR_SERVER, **node_kwargs)
        self._destroyed = False
        self._binding: ParamBinding[BehaviorSettings] = ParamBinding(
            self, params.param_specs(), params.build_config
        )
        self._limits = follow_coupled_limits(self)  # alpha_max/beta_max: one pair for the whole arm
        settings = self._binding.snapshot
        try:
            path = Path(settings.cell_config) if settings.cell_config else default_cell_config()
            jobs = load_jobs(path)
        except (OSError, ValueError) as exc:
            self.get_logger().fatal(f"cannot load the cell config: {exc}")
            raise SystemExit(1) from exc
        self.jobs: dict[str, CanJob] = {job.can: job for job in jobs}
        # The measured joints at the monitors' rate (25 Hz): the guard ticks at tick_rate_hz (20 Hz), and
        # every message costs this process a wake-up (docs/design/cpu.md).
        self._core = ArmMotionCore(
            self, settings.client_id, settings.lease_timeout_s, joint_states_topic=names.JOINT_STATES_MONITOR
        )
        self._gripper = GripperIO(self, time.monotonic, lambda: self._binding.snapshot.part_present_timeout_s)
        self._tree_pub = self.create_publisher(String, names.BEHAVIOR_TREE, LATCHED)
        self.run: ActiveRun | None = None  # the active run, or the last one once it is done
        self._reserved = False  # a goal was accepted and its execute callback has not started the run yet
        self._progress_path = (
            Path(settings.progress_file).expanduser() if settings.progress_file
            else run_progress.default_path(self.get_fully_qualified_name())
        )
        self._progress, warnings = run_progress.load(self._progress_path, list(self.jobs))
        for warning in warnings:
            self.get_logger().warning(f"run progress: {warning}")
        launch = self._binding.values
        self._launch_params = {name: launch[name] for name in params.OPERATOR_PARAMS}
        kept = self._apply_kept_params()
        self._applying_kept = False  # True while the node itself sets them (not an operator's set)
        self.add_post_set_parameters_callback(self._keep_operator_sets)
        self._secured = False  # the start-up check of the pad (vacuum on for a can found on it) is done
        self.create_service(Trigger, names.RESET_PROGRESS, self._on_reset_progress)
        self._box_centre = next(iter(self.jobs.values())).centre
        self._box_pub = self.create_publisher(String, names.BOX_ESTIMATE, LATCHED)
        self.create_service(Trigger, names.NEW_BOX, self._on_new_box)
        self._run_on_start = settings.run_on_start  # until the first run started (or was refused)
        self._auto_sent_at = -AUTO_GOAL_RETRY_S
        self._action = ActionServer(
            self,
            RunPickPlace,
            names.RUN_PICK_PLACE,
            execute_callback=self._execute,
            goal_callback=self._on_goal,
            cancel_callback=self._on_cancel,
        )
        self._self_client = ActionClient(self, RunPickPlace, names.RUN_PICK_PLACE)  # run_on_start's goal
        # The tick runs while there is something to tick: a run, the start-up pad check, run_on_start's
        # wait; idle between runs it stops (`_on_tick`) and `_start_run` starts it again.
        self._tick_timer = self.create_timer(1.0 / settings.tick_rate_hz, self._on_tick)
        self.create_timer(1.0 / settings.snapshot_rate_hz, self._publish_snapshot)
        # Until the first joint state: whether it carries efforts decides the guarded pass (one line).
        self._efforts_timer = self.create_timer(EFFORTS_CHECK_PERIOD_S, self._check_efforts)
        start = (
            "run_on_start: one run of every can once the stack is ready"
            if self._run_on_start
            else f"idle, holding no lease: start a run with the RunPickPlace action on "
            f"{self.resolve_topic_name(names.RUN_PICK_PLACE)}"
        )
        self.get_logger().info(
            f"pick and place of {', '.join(self.jobs)} from {path} as lease client {settings.client_id!r}; "
            f"{params.sources_text(self._launch_params, kept)}; {start}"
        )
        self.get_logger().info(f"run progress ({self._progress_path}): {self._progress.describe()}")
        box = self._progress.box
        self.get_logger().info(
            f"box estimate loaded from the run's progress: {self._box().describe()} from {box.count} can(s) "
            f"(new box: {self.resolve_service_name(names.NEW_BOX)})"
            if box is not None and not box.empty
            else "box estimate: none loaded (the plan until a can is placed by ManualAdjust or the search)"
        )
        self._publish_box()
        self._publish_snapshot()

    def _check_efforts(self) -> None:
        """Once the first joint state arrived: say whether the release descent is guarded, then stop."""
        efforts = self._core.contact_sensing()
        if efforts is None:
            return
        self._efforts_timer.cancel()
        warn, line = contact_sensing_line(efforts, self._binding.snapshot, self._core.joint_states_name)
        if warn:
            self.get_logger().warning(line)
        else:
            self.get_logger().info(line)

    def _apply_kept_params(self) -> dict[str, Any]:
        """Set the operator's kept sets (the run's progress) over the launch values; those applied.

        A kept value the parameter refuses (a wrong type, out of range) is dropped with a warning: the
        launch value stays, and the file forgets it.
        """
        applied: dict[str, Any] = {}
        for name, value in self._progress.operator_params.items():
            try:
                value = params.kept_value(name, value)
            except ValueError as exc:
                why = str(exc)
            else:
                result = self.set_parameters_atomically([Parameter(name, value=value)])
                if result.successful:
                    applied[name] = value
                    continue
                why = result.reason
            self.get_logger().warning(
                f"run progress: the operator's kept {name}={value!r} is not applied ({why}); the launch "
                "file's value stays"
            )
        if applied != dict(self._progress.operator_params):
            self._store(replace(self._progress, operator_params=applied))
        return applied

    def _keep_operator_sets(self, changed: list[Parameter]) -> None:
        """After an accepted set: keep an operator's live set of `params.OPERATOR_PARAMS` (progress.py)."""
        if self._applying_kept:
            return
        ours = [p for p in changed if p.name in params.OPERATOR_PARAMS]
        new = self._progress
        for param in ours:
            new = new.with_operator_param(param.name, param.value)
        if new != self._progress:
            self._store(new)
            sets = ", ".join(f"{p.name}={p.value}" for p in ours)
            self.get_logger().info(f"kept with the run's progress (a restart applies it again): {sets}")

    def _arm(self) -> ArmParams:
        """The arm model the guard judges with: the current parameters' (config/arm.yaml at start-up)."""
        return self._binding.snapshot.arm

    def _guard(self, child: py_trees.behaviour.Behaviour, can: str) -> py_trees.behaviour.Behaviour:
        """The limit guard of a can's cycle (conditions share the node's one joint state cache in setup)."""
        conditions = guard_conditions(
            GuardSettings(), arm=self._arm, topic=names.JOINT_STATES_MONITOR, prefix=f"{can}."
        )
        return guarded(child, conditions, name=f"Guarded[{can}]")

    def _make_ports(self, report: RunReport) -> Ports:
        """The leaves' ports for one run (its own report; arm and gripper are the node's)."""
        return Ports(
            motion=self._core,
            gripper=self._gripper,
            clock=time.monotonic,
            settings=lambda: self._binding.snapshot,
            log=self.get_logger(),
            report=report,
        )

    # Starting a run -----------------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """Whether a run is active (from its start until its lease was given back and it answered)."""
        return self._reserved or (self.run is not None and not self.run.done)

    def _refusal(self, requested: list[str]) -> tuple[tuple[str, ...], str]:
        """(cans, "") for a run that may start now, else ((), the reason)."""
        if self._destroyed:
            return (), "the server is shutting down"
        if self.active:
            return (), "a run is active (cancel it first, or wait for its result)"
        try:
            done, final, lost = self._progress.done(), self._progress.final(), self._progress.lost()
            return runs.select_cans(requested, list(self.jobs), done, final, lost), ""
        except ValueError as exc:
            return (), str(exc)

    def _held(self) -> str | None:
        """The can recorded as carried (not picked: the pad check offers to place it), None if none."""
        carrying = self._progress.carrying
        return carrying if carrying in self.jobs and carrying not in self._progress.final() else None

    def _on_goal(self, goal: RunPickPlace.Goal) -> GoalResponse:
        requested = list(goal.cans)
        cans, why = self._refusal(requested)
        if why:
            self.get_logger().warning(f"RunPickPlace goal {requested} rejected: {why}")
            return GoalResponse.REJECT
        self._reserved = True  # until the execute callback starts it: a second goal now is refused
        self.get_logger().info(f"RunPickPlace goal accepted: {', '.join(cans) or 'no can left to pick'}")
        return GoalResponse.ACCEPT

    def _on_cancel(self, goal_handle: Any) -> CancelResponse:
        run = self.run
        if run is None or run.done or run.goal_handle is not goal_handle:
            return CancelResponse.REJECT
        run.cancel_requested = True  # the next tick stops the tree
        self.get_logger().info("RunPickPlace: cancel requested")
        return CancelResponse.ACCEPT

    async def _execute(self, goal_handle: Any) -> RunPickPlace.Result:
        """Start the run and wait (yielding to the executor) until the tick timer ended it."""
        self._reserved = False
        cans, why = self._refusal(list(goal_handle.request.cans))
        if why:  # the world changed between acceptance and execution (e.g. shutting down)
            goal_handle.abort()
            return RunPickPlace.Result(success=False, message=f"not started: {why}")
        run = self._start_run(cans, goal_handle)
        result = await run.finished
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif result.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    def _start_run(self, cans: tuple[str, ...], goal_handle: Any | None) -> ActiveRun:
        """Build the run's tree, set it up, take the lease; the tick timer does the rest.

        The can recorded as carried is not picked: it leads the run's cans, and the first pad check
        offers to place it (or to have it removed). Cans lost in transit lead them all: the run first
        waits for the operator to confirm the cell is clear of them (behaviors/lost.py).
        """
        report = RunReport()
        held = self._held()
        lost = tuple(can for can in self.jobs if can in self._progress.lost())
        picks = tuple(can for can in cans if can != held)
        held_job = self.jobs[held] if held is not None else None
        root = build_tree([self.jobs[can] for can in picks], self._guard, held_job, lost, self._progress.box)
        if held is not None:
            self.get_logger().warning(
                f"{held} is recorded as carried when the last run stopped: not picked; the pad check "
                "offers to place it (operator confirm) if it is on the pad"
            )
        if lost:
            self.get_logger().warning(
                f"{', '.join(lost)} recorded as lost in transit, not yet confirmed cleared: the run asks the "
                "operator to confirm the cell is clear before it moves"
            )
        first = (*lost, *([held] if held is not None else []))
        cans = (*first, *(can for can in picks if can not in first))
        run = ActiveRun(cans, root, report, goal_handle)
        run.tree.setup(node=self, ports=self._make_ports(report))
        self.run = run
        if self._tick_timer.is_canceled():
            self._tick_timer.reset()
        self._run_on_start = False  # a run started: run_on_start has done its job
        self._core.acquire_lease()
        self.get_logger().info(f"run started: {', '.join(cans)} (arm lease requested)")
        return run

    def _stack_ready(self) -> tuple[bool, str]:
        """Everything a run needs besides the lease (what run_on_start waits for)."""
        arm_ok, arm_why = self._core.stack_ready()
        gripper_ok, gripper_why = self._gripper.ready()
        why = "; ".join(w for ok, w in ((arm_ok, arm_why), (gripper_ok, gripper_why)) if not ok)
        return (arm_ok and gripper_ok, why)

    def _start_on_ready(self) -> None:
        """run_on_start: once the stack is ready, send this server the goal of every can."""
        ok, why = self._stack_ready()
        if ok and not self._self_client.server_is_ready():
            ok, why = False, f"own {self.resolve_topic_name(names.RUN_PICK_PLACE)} action server (discovery)"
        if not ok:
            self.get_logger().info(
                f"run_on_start: waiting for the stack: {why}", throttle_duration_sec=WAITING_LOG_PERIOD_S
            )
            return
        now = time.monotonic()
        if now - self._auto_sent_at < AUTO_GOAL_RETRY_S:
            return
        self._auto_sent_at = now
        self.get_logger().info("run_on_start: the stack is ready: sending the RunPickPlace goal of every can")
        self._self_client.send_goal_async(RunPickPlace.Goal()).add_done_callback(self._on_auto_answer)

    def _on_auto_answer(self, future: Future) -> None:
        handle = future.result() if future.exception() is None else None
        if handle is not None and not handle.accepted:
            self._run_on_start = False  # refused (the reason is logged): do not insist

    # Ticking ------------------------------------------------------------------------------------------

    def _on_tick(self) -> None:
        if self._destroyed:
            return
        run = self.run
        if not self._secured and (run is None or run.done):
            self._secure_pad()
        if run is None or run.done:
            if self._run_on_start and not self._reserved:
                self._start_on_ready()
            elif self._secured:
                self._tick_timer.cancel()  # nothing to tick until the next run starts
            return
        if run.end is not None:  # the tree stopped; waiting for the RELEASE answer
            if (run.release is None or run.release.done()
                    or time.monotonic() > run.release_deadline):  # fmt: skip
                self._finish(run)
            return
        if run.cancel_requested:
            run.root.stop(Status.INVALID)  # terminate(): the running goal is cancelled, the vacuum untouched
            self._end(run, RunEnd.CANCELLED)
            return
        run.tree.tick()
        self._observe(run)
        status = run.root.status
        if status in (Status.SUCCESS, Status.FAILURE):
            self._end(run, RunEnd.COMPLETE if status is Status.SUCCESS else RunEnd.STOPPED)
            return
        self._publish_feedback(run)

    def _publish_feedback(self, run: ActiveRun) -> None:
        if run.goal_handle is None:
            return
        now = runs.progress(run.root, run.cans)
        done = sum(1 for can in run.cans if run.report.result_of(can) is not None)
        key = (now.can, now.step, done)
        if key == run.last_feedback:
            return
        run.last_feedback = key
        run.goal_handle.publish_feedback(
            RunPickPlace.Feedback(can=now.can, step=now.step, cans_done=done, cans_total=len(run.cans))
        )

    def _observe(self, run: ActiveRun) -> None:
        """Bring the run's progress up to date with the tree (stages, outcomes, box estimate); write it."""
        stages = {can: runs.stage_of(can) for can in run.cans}
        box = py_trees.blackboard.Blackboard.storage.get(BOX_ESTIMATE_KEY)
        box = box if isinstance(box, BoxEstimate) else None
        new = run_progress.observe(self._progress, run.cans, stages, run.report, box)
        changed = new.box != self._progress.box
        self._store(new)
        if changed:
            self._publish_box()

    def _box(self) -> BoxEstimate:
        """The box estimate kept (an empty one: none yet), weighed with the current noise parameters."""
        box = self._progress.box or BoxEstimate(self._box_centre)
        return box.with_noise(self._binding.snapshot.estimate_noise)

    def _publish_box(self) -> None:
        """The box estimate on /salamander/box/estimate (latched JSON, salamander_control/box_status.py)."""
        if not self._destroyed:
            self._box_pub.publish(String(data=self._box().summary().to_json()))

    def _refused(self, response: Trigger.Response, service: str, what: str) -> Trigger.Response:
        """A Trigger refused while a run is active: the answer says so, and one warning."""
        response.success = False
        response.message = f"a run is active: {what}"
        self.get_logger().warning(f"{service} refused: {response.message}")
        return response

    def _on_new_box(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        """A new box is in: forget the box estimate (refused during a run: the box cannot change under it)."""
        if self.active:
            return self._refused(response, "new_box", "a new box goes in between runs (cancel it or wait)")
        before = self._progress.box
        self._store(self._progress.with_box(None), force=True)
        self._publish_box()
        response.success = True
        response.message = (
            "new box: the box estimate is reset (it rested on "
            f"{0 if before is None else before.count} can(s)); the plan until a can is placed by "
            "ManualAdjust or the search"
        )
        self.get_logger().info(response.message)
        return response

    def _store(self, new: run_progress.RunProgress, force: bool = False) -> None:
        if new == self._progress and not force:
            return
        self._progress = new
        try:
            run_progress.save(self._progress_path, new)
        except OSError as exc:
            self.get_logger().error(
                f"run progress: cannot write {self._progress_path} ({exc}); a restart would not know it",
                throttle_duration_sec=WAITING_LOG_PERIOD_S,
            )

    def _on_reset_progress(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        """Forget the run's progress (every can to do again, nothing carried); refused during a run."""
        if self.active:
            return self._refused(response, "reset_progress", "cancel it or wait for its result")
        kept = dict(self._progress.operator_params)
        self._store(run_progress.RunProgress(box=self._progress.box), force=True)  # the box stays
        response.success = True
        response.message = (
            "run progress reset: an empty goal runs every can, none is recorded as carried (the box "
            "estimate stays: new_box forgets it)"
        )
        if kept:
            launch = {name: self._launch_params[name] for name in kept}
            self._applying_kept = True
            try:
                self.set_parameters_atomically([Parameter(n, value=v) for n, v in launch.items()])
            finally:
                self._applying_kept = False
            response.message += "; the operator's kept sets are forgotten, back to the launch file's: " + (
                params.sources_text(self._launch_params, {})
            )
        self.get_logger().info(response.message)
        return response

    def _secure_pad(self) -> None:
        """Once at start, before any run: a can found on the pad gets the vacuum on (valve state unknown)."""
        reading = self._gripper.part_present()
        if not reading.fresh(time.monotonic(), self._binding.snapshot.part_present_timeout_s):
            return
        self._secured = True
        if reading.value:
            self.get_logger().warning(
                "a can is on the pad at start: vacuum switched on to keep it; the next run does not pick "
                "before it is placed (operator confirm) or removed"
            )
            self._gripper.set_vacuum(True)

    def _end(self, run: ActiveRun, end: RunEnd) -> None:
        """The tree stopped: outcomes, the run's progress, then give the lease back (answer awaited)."""
        run.end = end
        stages = {can: runs.stage_of(can) for can in run.cans}
        outcomes = runs.outcomes(run.cans, run.report, stages)
        self._observe(run)
        left = runs.left_on_pad(run.cans, run.report, stages)
        if left:
            self.get_logger().warning(
                f"{', '.join(left)} may still be on the pad or in the arm's way after this run: the next "
                "run does not pick while a can is on the pad (it offers to place it or asks to remove it)"
            )
        if self._progress.batch_done(list(self.jobs)):
            self.get_logger().info("every can of the cell is done: run progress reset for the next batch")
            self._store(self._progress.next_batch())
        summary = run.report.summary()
        if end is RunEnd.CANCELLED:
            summary += f"; cancelled, outcomes {dict(zip(run.cans, outcomes, strict=True))}"
        run.result = RunPickPlace.Result(
            success=end is RunEnd.COMPLETE and all(o == "placed" for o in outcomes),
            message=summary,
            cans=list(run.cans),
            outcomes=outcomes,
        )
        run.release = self._core.release_lease()
        settings = self._binding.snapshot
        run.release_deadline = time.monotonic() + max(RELEASE_WAIT_MIN_S, 2.0 * settings.lease_timeout_s)
        self._publish_snapshot()

    def _finish(self, run: ActiveRun) -> None:
        """The lease is given back: log the run's end and answer the goal."""
        run.done = True
        if run.release is not None and not run.release.done():
            self.get_logger().warning("arm lease: no answer to the RELEASE; the generator drops it on expiry")
        # One call site per severity: rclpy refuses to log from one line at two severities.
        if run.end is RunEnd.COMPLETE:
            self.get_logger().info(f"run complete: {run.result.message}")
        elif run.end is RunEnd.CANCELLED:
            self.get_logger().warning(f"run cancelled: {run.result.message}")
        else:
            self.get_logger().error(f"run stopped: {run.result.message}")
        self._publish_snapshot()
        run.finished.set_result(run.result)

    def _publish_snapshot(self) -> None:
        if self._destroyed:  # SIGTERM destroys the node from the signal handler; the executor may
            return  # still run a timer that was ready at that moment
        run = self.run
        if run is None:
            text = "run: IDLE (no run yet: start one with the RunPickPlace action)"
        else:
            text = snapshot_text(run.root, run.report, run.state)
        self._tree_pub.publish(String(data=text))

    def destroy_node(self) -> Any:
        """Stop an active run's tree (cancel its goal) and release the lease while the context works."""
        if not getattr(self, "_destroyed", False):
            self._destroyed = True
            if hasattr(self, "_action"):  # fully built: a start that failed (bad config) has nothing to stop
                try:
                    run = self.run
                    if self.context.ok():
                        if run is not None and run.end is None:
                            run.root.stop(Status.INVALID)  # terminate(): the running goal is cancelled
                        self._core.shutdown()
                except Exception as exc:  # noqa: BLE001 (shutting down: best effort, never a traceback)
                    self.get_logger().warning(f"shutdown: could not stop cleanly: {exc}")
                self._action.destroy()
        return super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`behavior_server_node`)."""
    run_node(BehaviorServerNode, args)  # SingleThreadedExecutor: see the module docstring


if __name__ == "__main__":
    main()
