"""`/salamander/behavior_server_node`: serves pick-and-place runs (tree.py) through the RunPickPlace action.

    python -m salamander_behavior.nodes.behavior_server_node --ros-args -p cell_config:=config/cell.yaml
    behavior_server_node --ros-args --params-file config/arm.yaml --params-file config/behavior.yaml

The ROS shell only: it declares the parameters (params.py, one frozen snapshot), loads the cell config
(plan.py, one job per can) and wires the RunPickPlace action server, the services
run_pick_place/reset_progress and box/new_box, the latched topics behavior/tree and box/estimate, and its
timers (tick, snapshot, the first joint state's efforts). The decisions live beside it: active_run.py (a
run, its end, result and snapshot), progress_keeper.py (the run's progress and its file, which cans a goal
runs, the operator's kept sets), auto_start.py (run_on_start's wait), runs.py and tree.py.

Invariants: the server starts idle, holding nothing; the arm lease is held exactly while a run is active,
one run at a time; every callback runs on one SingleThreadedExecutor (`run_node`), so they share state
without locks, and the execute callback never blocks (it awaits a Future the tick timer completes);
`destroy_node` stops an active run's tree and releases the lease.

How a run goes, the progress file, the box estimate, the operator's kept sets, contact sensing, the
executor choice and shutdown: docs/design/behavior_server.md; names and semantics: docs/interfaces.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import rclpy.logging
from py_trees.common import Status
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.task import Future
from std_msgs.msg import String
from std_srvs.srv import Trigger

import salamander_behavior.progress as run_progress
from salamander_behavior import params
from salamander_behavior.active_run import IDLE_SNAPSHOT, ActiveRun, RunEnd
from salamander_behavior.auto_start import AutoStart, waiting_for
from salamander_behavior.behaviors.base import Ports
from salamander_behavior.behaviors.guard import can_guard
from salamander_behavior.behaviors.search import contact_sensing_line
from salamander_behavior.box_estimate import BoxEstimate
from salamander_behavior.limits.urdf_limits import default_urdf_path
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import CanJob, load_jobs
from salamander_behavior.ports import PendingCall
from salamander_behavior.progress_keeper import ProgressKeeper, ProgressNotWritten, reset_text
from salamander_behavior.report import RunReport
from salamander_behavior.ros.arm_motion_client import ArmMotionCore
from salamander_behavior.ros.gripper_client import GripperIO
from salamander_behavior.tree import build_tree
from salamander_control import names
from salamander_control.cell.layout import default_cell_config
from salamander_control.ros.coupled_limits_sync import follow_coupled_limits
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.qos import LATCHED
from salamander_control.ros.run import run_node
from salamander_control.urdf import UrdfNotFoundError
from salamander_msgs.action import RunPickPlace

TriggerHandler = Callable[[Trigger.Request, Trigger.Response], Trigger.Response]

WAITING_LOG_PERIOD_S = 10.0
"""s between two "run_on_start: waiting for ..." lines (the first one is logged at once)."""
EFFORTS_CHECK_PERIOD_S = 0.5
"""s between two looks for the first joint state (whether it carries efforts), until it came."""
PROGRESS_FLUSH_S = 2.0
"""s a shutdown waits for the run's progress to be written (its writer thread, progress_keeper.py)."""


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
        # A motion's result or a change of the part-present switch ticks the tree at once (besides the tick
        # timer): the next step starts without waiting up to a tick period (docs/design/cycle.md).
        self._wake = self.create_guard_condition(self._on_tick)
        self._core.on_result = self._wake.trigger
        self._gripper = GripperIO(
            self, time.monotonic, lambda: self._binding.snapshot.part_present_timeout_s, self._wake.trigger
        )
        self._tree_pub = self.create_publisher(String, names.BEHAVIOR_TREE, LATCHED)
        self.run: ActiveRun | None = None  # the active run, or the last one once it is done
        self._reserved = False  # a goal was accepted and its execute callback has not started the run yet
        progress_path = (
            Path(settings.progress_file).expanduser() if settings.progress_file
            else run_progress.default_path(self.get_fully_qualified_name())
        )
        places = {can: job.planned_xy for can, job in self.jobs.items()}
        self._box_centre = next(iter(self.jobs.values())).centre
        layout = (self._box_centre, places)
        self._keeper = ProgressKeeper(progress_path, list(self.jobs), self._write_failed, layout)
        for warning in self._keeper.warnings:
            self.get_logger().warning(f"run progress: {warning}")
        launch = self._binding.values
        self._launch_params = {name: launch[name] for name in params.OPERATOR_PARAMS}
        kept = self._keeper.apply_kept(self._set_param, self.get_logger().warning)
        self._applying_kept = False  # True while the node itself sets them (not an operator's set)
        self.add_post_set_parameters_callback(self._keep_operator_sets)
        self._secured = False  # the start-up check of the pad (vacuum on for a can found on it) is done
        self._securing: PendingCall | None = None  # its vacuum-on call, until answered
        self._securing_since = -math.inf  # when it was sent (or last refused)
        reset = self._between_runs("reset_progress", "cancel it or wait for its result", self._reset_progress)
        self.create_service(Trigger, names.RESET_PROGRESS, reset)
        self._box_pub = self.create_publisher(String, names.BOX_ESTIMATE, LATCHED)
        new_box_refusal = "a new box goes in between runs (cancel it or wait)"  # not under a run
        new_box = self._between_runs("new_box", new_box_refusal, self._new_box)
        self.create_service(Trigger, names.NEW_BOX, new_box)
        self._auto = AutoStart(settings.run_on_start)  # until the first run started (or was refused)
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
        start = self._auto.start_text(self.resolve_topic_name(names.RUN_PICK_PLACE))
        self.get_logger().info(
            f"pick and place of {', '.join(self.jobs)} from {path} as lease client {settings.client_id!r}; "
            f"{params.sources_text(self._launch_params, kept)}; {start}"
        )
        self.get_logger().info(f"run progress ({self._keeper.path}): {self._keeper.progress.describe()}")
        self.get_logger().info(self._keeper.box_text(self._box(), self.resolve_service_name(names.NEW_BOX)))
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

    def _set_param(self, name: str, value: Any) -> str | None:
        """Set one parameter; None when it was set, else the reason it was refused."""
        result = self.set_parameters_atomically([Parameter(name, value=value)])
        return None if result.successful else result.reason

    def _keep_operator_sets(self, changed: list[Parameter]) -> None:
        """After an accepted set: keep an operator's live set of `params.OPERATOR_PARAMS` (progress.py)."""
        if self._applying_kept:
            return
        # During a run not waited for: a slow fsync (0.38 s seen) would stall the tick and the heartbeats.
        line = self._keeper.keep_sets([(p.name, p.value) for p in changed], wait=not self.active)
        if line is not None:
            self.get_logger().info(line)

    def _write_failed(self, line: str) -> None:
        """The run's progress could not be written (throttled: one call site)."""
        self.get_logger().error(line, throttle_duration_sec=WAITING_LOG_PERIOD_S)

    # Starting a run -----------------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """Whether a run is active (from its start until its lease was given back and it answered)."""
        return self._reserved or (self.run is not None and not self.run.done)

    def _on_goal(self, goal: RunPickPlace.Goal) -> GoalResponse:
        requested = list(goal.cans)
        cans, why = self._keeper.refusal(requested, self._destroyed, self.active)
        if why:
            self.get_logger().warning(f"RunPickPlace goal {requested} rejected: {why}")
            return GoalResponse.REJECT
        self._reserved = True  # until the execute callback starts it: a second goal now is refused
        self.get_logger().info(f"RunPickPlace goal accepted: {', '.join(cans) or 'no can left to pick'}")
        return GoalResponse.ACCEPT

    def _on_cancel(self, goal_handle: Any) -> CancelResponse:
        if self.run is None or not self.run.cancel(goal_handle):
            return CancelResponse.REJECT
        self.get_logger().info("RunPickPlace: cancel requested")
        return CancelResponse.ACCEPT

    async def _execute(self, goal_handle: Any) -> RunPickPlace.Result:
        """Start the run and wait (yielding to the executor) until the tick timer ended it."""
        self._reserved = False
        cans, why = self._keeper.refusal(list(goal_handle.request.cans), self._destroyed, self.active)
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
        return RunPickPlace.Result(**asdict(result))

    def _start_run(self, cans: tuple[str, ...], goal_handle: Any | None) -> ActiveRun:
        """Build the run's tree, set it up, take the lease; the tick timer does the rest.

        The can recorded as carried is not picked: it leads the run's cans, and the first pad check
        offers to place it (or to have it removed). Cans lost in transit lead them all: the run first
        waits for the operator to confirm the cell is clear of them (behaviors/lost.py).
        """
        report = RunReport()
        order = self._keeper.run_order(cans)
        held, lost = order.held, order.lost
        held_job = self.jobs[held] if held is not None else None
        picks = [self.jobs[can] for can in order.picks]
        guard = can_guard(lambda: self._binding.snapshot.arm)  # the current parameters' arm model
        arm = self._binding.snapshot.arm
        cell = tuple(self.jobs.values())  # where every can stands, for the low carry
        root = build_tree(picks, guard, held_job, lost, self._keeper.progress.box, arm, cell)
        for note in order.notes():
            self.get_logger().warning(note)
        cans = order.cans
        ports = Ports(  # the leaves' ports for this run: its own report, the node's arm and gripper
            motion=self._core, gripper=self._gripper, clock=time.monotonic,
            settings=lambda: self._binding.snapshot, log=self.get_logger(), report=report,
            wake_after=self._wake_after,
        )  # fmt: skip
        run = ActiveRun(cans, root, report, goal_handle, ports.handoff)
        run.tree.setup(node=self, ports=ports)
        self.run = run
        if self._tick_timer.is_canceled():
            self._tick_timer.reset()
        self._auto.stop()  # a run started: run_on_start has done its job
        self._core.acquire_lease()
        self.get_logger().info(f"run started: {', '.join(cans)} (arm lease requested)")
        return run

    def _start_on_ready(self) -> None:
        """run_on_start: once the stack is ready, send this server the goal of every can."""
        why = waiting_for(self._core.stack_ready(), self._gripper.ready()) or (
            "" if self._self_client.server_is_ready()
            else f"own {self.resolve_topic_name(names.RUN_PICK_PLACE)} action server (discovery)"
        )
        if why:
            self.get_logger().info(
                f"run_on_start: waiting for the stack: {why}", throttle_duration_sec=WAITING_LOG_PERIOD_S
            )
        elif self._auto.due(time.monotonic()):
            self.get_logger().info(
                "run_on_start: the stack is ready: sending the RunPickPlace goal of every can"
            )
            self._self_client.send_goal_async(RunPickPlace.Goal()).add_done_callback(self._on_auto_answer)

    def _on_auto_answer(self, future: Future) -> None:
        handle = future.result() if future.exception() is None else None
        if handle is not None and not handle.accepted:
            self._auto.stop()  # refused (the reason is logged): do not insist

    # Ticking ------------------------------------------------------------------------------------------

    def _wake_after(self, seconds: float) -> None:
        """A tick `seconds` from now besides the periodic ones (a leaf's hold ends between two ticks)."""
        timer: Any = None

        def once() -> None:
            self.destroy_timer(timer)
            if not self._destroyed:
                self._wake.trigger()

        timer = self.create_timer(max(seconds, 0.0), once)

    def _on_tick(self) -> None:
        if self._destroyed:
            return
        run = self.run
        if not self._secured and (run is None or run.done):
            self._secure_pad()
        if run is None or run.done:
            if self._auto.pending and not self._reserved:
                self._start_on_ready()
            elif self._secured:
                self._tick_timer.cancel()  # nothing to tick until the next run starts
            return
        if run.end is not None:  # the tree stopped; waiting for the RELEASE answer
            if run.released(time.monotonic()):
                self._finish(run)
            return
        skip, gap = run.stalled(time.monotonic())  # this process stalled: its inputs are as old
        if gap is not None:
            self.get_logger().warning(
                f"the tree did not tick for {gap:.2f} s: this process stalled (starved of CPU, stopped or "
                "swapped out), so what its leaves cached is that old too; it ticks again on fresh inputs"
            )
        if skip:
            return
        end = run.tick()  # a cancel requested: the tree is stopped instead
        if end is not None:
            self._end(run, end)
            return
        self._observe(run)
        self._publish_feedback(run)

    def _publish_feedback(self, run: ActiveRun) -> None:
        """When the running step changed: the goal's feedback, and the tree snapshot at once.

        Between changes the snapshot comes at `snapshot_rate_hz`; a new step (a ManualAdjust that begins
        to wait for the operator, above all) shows without waiting for that timer.
        """
        feedback = run.feedback()
        if feedback is None:
            return
        self._publish_snapshot()
        if run.goal_handle is not None:
            run.goal_handle.publish_feedback(RunPickPlace.Feedback(**asdict(feedback)))

    def _observe(self, run: ActiveRun) -> None:
        """Bring the run's progress up to date with the tree (stages, outcomes, box estimate); write it."""
        if self._keeper.observe(run.cans, run.stages(), run.report, run.box()):
            self._publish_box()

    def _box(self) -> BoxEstimate:
        """The box estimate kept (an empty one: none yet), weighed with the current noise parameters."""
        return self._keeper.box(self._box_centre, self._binding.snapshot.estimate_noise)

    def _publish_box(self) -> None:
        """The box estimate on /salamander/box/estimate (latched JSON, salamander_control/box_status.py)."""
        if not self._destroyed:
            self._box_pub.publish(String(data=self._box().summary().to_json()))

    def _between_runs(self, service: str, refusal: str, act: Callable[[], str]) -> TriggerHandler:
        """A Trigger handler that does `act` (its answer is logged), refused with `refusal` during a run."""

        def handle(request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
            if self.active:
                response.success = False
                response.message = f"a run is active: {refusal}"
                self.get_logger().warning(f"{service} refused: {response.message}")
                return response
            try:
                response.message = act()
            except ProgressNotWritten as exc:  # done in memory only: said so, never answered as kept
                response.success, response.message = False, str(exc)
                self.get_logger().error(response.message)
                return response
            response.success = True
            self.get_logger().info(response.message)
            return response

        return handle

    def _new_box(self) -> str:
        """A new box is in: forget the box estimate (shown forgotten even when its write failed)."""
        try:
            return self._keeper.new_box()
        finally:
            self._publish_box()

    def _reset_progress(self) -> str:
        """Forget the run's progress (every can to do again, nothing carried; the box stays)."""
        kept, failure = self._keeper.reset()
        if kept:  # back to the launch values (not an operator's set: not kept)
            self._applying_kept = True
            try:
                self.set_parameters_atomically([Parameter(n, value=self._launch_params[n]) for n in kept])
            finally:
                self._applying_kept = False
        text = reset_text(kept, self._launch_params)
        if failure is not None:
            raise ProgressNotWritten(f"{text}; but only in this server, not in its file: {failure}")
        return text

    def _secure_pad(self) -> None:
        """Once at start, before any run: a can found on the pad gets the vacuum on (valve state unknown).

        Done only once the valve said yes: a refused or unanswered call (the service not there yet) is
        said and asked again, never logged as switched on.
        """
        now = time.monotonic()
        if self._securing is not None:
            if not self._securing.done():
                if now - self._securing_since <= self._binding.snapshot.vacuum_timeout_s:
                    return
                ok, message = False, f"no answer within {self._binding.snapshot.vacuum_timeout_s:.1f} s"
            else:
                ok, message = self._securing.result()
            self._securing = None
            if ok:
                self._secured = True
                self.get_logger().warning(
                    f"a can is on the pad at start: vacuum on to keep it ({message}); the next run does not "
                    "pick before it is placed (operator confirm) or removed"
                )
                return
            self.get_logger().error(
                f"a can is on the pad at start, and the vacuum could not be switched on ({message}): it may "
                "drop; asking again",
                throttle_duration_sec=WAITING_LOG_PERIOD_S,
            )
            self._securing_since = now  # asked again after WAITING_LOG_PERIOD_S, not every tick
        if now - self._securing_since < WAITING_LOG_PERIOD_S:
            return
        reading = self._gripper.part_present()
        if not reading.fresh(now, self._binding.snapshot.part_present_timeout_s):
            return
        if not reading.value:
            self._secured = True
            return
        self._securing, self._securing_since = self._gripper.set_vacuum(True), now

    def _end(self, run: ActiveRun, end: RunEnd) -> None:
        """The tree stopped: outcomes, the run's progress, then give the lease back (answer awaited)."""
        left = run.conclude(end)
        self._observe(run)
        if left:
            self.get_logger().warning(
                f"{', '.join(left)} may still be on the pad or in the arm's way after this run: the next "
                "run does not pick while a can is on the pad (it offers to place it or asks to remove it)"
            )
        lease_timeout_s = self._binding.snapshot.lease_timeout_s
        # The lease first: the batch's reset below waits for its write (two slow fsyncs, 0.38 s each seen,
        # came near the lease's 1 s timeout with no heartbeat sent meanwhile).
        run.await_release(self._core.release_lease(), time.monotonic(), lease_timeout_s)
        if self._keeper.batch_done():
            self.get_logger().info("every can of the cell is done: run progress reset for the next batch")
            self._keeper.next_batch()
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
        self._tree_pub.publish(String(data=IDLE_SNAPSHOT if run is None else run.snapshot()))

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
                if not self._keeper.flush(PROGRESS_FLUSH_S):
                    self.get_logger().warning(
                        f"shutdown: the run's progress is still being written after {PROGRESS_FLUSH_S:.0f} s "
                        f"({self._keeper.path}); a restart may not know the last change"
                    )
        return super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`behavior_server_node`)."""
    run_node(BehaviorServerNode, args)  # SingleThreadedExecutor: see the module docstring


if __name__ == "__main__":
    main()
