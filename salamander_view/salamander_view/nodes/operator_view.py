"""/salamander/operator_view: the browser operator view (viser), a node that only reads and operates.

    python -m salamander_view.nodes.operator_view [--ros-args -p host:=0.0.0.0 -p port:=8080]

It subscribes the stack's state and draws it on a web page served by viser (its address is logged:
``operator view: http://127.0.0.1:8080``): the arm at /joint_states, the IK ghost
(/salamander/ik_ghost/joint_state + status), the cell (/salamander/cell/markers), the joints against
their limits and the coupled margins (/arm/coupled_limits), the lease holder (/arm/lease_state), the
teleop mode, the run's step and each can's outcome (/salamander/behavior/tree), the box estimate
(/salamander/box/estimate). Its controls use the operator interfaces only: the RunPickPlace action
(start, cancel every goal like the gamepad's SHARE), the behaviour server's `manual_place` parameter,
operator/jog twists (the nudge buttons, see `controls.NudgeTrain`), operator/confirm and the behaviour
server's box/new_box service ("new box", like the gamepad's L1).

Threads: subscription callbacks only store the newest message under a lock (the 25 Hz monitor copy of
/joint_states costs a dict assignment); viser's callbacks (clicks, connects) only queue requests under
the same lock, then wake the executor (a one-shot timer, `_wake`). While a browser is connected a timer at
`rate_hz` runs the queued requests, reads the newest state and redraws what changed; a timer at
`jog_rate_hz` sends the nudge train and runs only while a nudge does. With no browser connected the view
draws nothing and does not even subscribe the streams it draws (the arm's and the ghost's states, the
cell's markers): the first connect subscribes them again and the first frames draw the current state
(~10 ms later); the latched state (lease, mode, tree, limits) is kept all along. So nothing here can slow
the control loop beyond the DDS reads of its topics, an unwatched view costs almost nothing
(docs/design/cpu.md), and the stack runs the same without this node (launch argument view:=false).

Security: `access.AccessGuard` (params.py, docs/security.md): on a non-loopback `host` a control from
a client that has not entered the token is refused and logged; the scene stays readable.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from action_msgs.srv import CancelGoal
from geometry_msgs.msg import Twist
from rcl_interfaces.msg import Parameter, ParameterEvent, ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, String
from std_srvs.srv import Trigger
from visualization_msgs.msg import Marker, MarkerArray

from salamander_control import names
from salamander_control.box_status import status_text
from salamander_control.kinematics import JOINT_NAMES
from salamander_control.ros.coupled_limits_sync import follow_coupled_limits
from salamander_control.ros.params import ParamBinding
from salamander_control.ros.qos import LATCHED
from salamander_control.ros.run import run_node
from salamander_msgs.action import RunPickPlace
from salamander_msgs.msg import CoupledLimits, IkStatus, LeaseState
from salamander_view import params
from salamander_view.access import AccessGuard
from salamander_view.controls import Facts, NudgeTrain, availability
from salamander_view.gauges import coupled_gauges, joint_gauges, joint_limits
from salamander_view.page import Panel, PanelView, status_markdown
from salamander_view.param_mirror import ParamMirror
from salamander_view.params import ViewSettings
from salamander_view.scene import Scene, Shape
from salamander_view.snapshot import parse
from salamander_view.viser_threads import install as install_loop_safe_events

MANUAL_PLACE = "manual_place"
_KINDS = {Marker.CUBE: "cube", Marker.CYLINDER: "cylinder", Marker.TEXT_VIEW_FACING: "text"}
CAN_NAMES = tuple(f"can_{i}" for i in range(32))
"""Names the tree snapshot's can branches may have (config/cell.yaml numbers its cans can_0, can_1, ...)."""
PARAM_POLL_S = 2.0
"""s between two reads of manual_place while the behaviour server's parameter service is there."""


def default_urdf() -> Path:
    """urdf/salamander.urdf of the source tree, else of salamander_control's install share."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "urdf" / "salamander.urdf"
        if candidate.is_file():
            return candidate
    from ament_index_python.packages import get_package_share_directory

    return Path(get_package_share_directory("salamander_control")) / "urdf" / "salamander.urdf"


def shape_of(marker: Marker) -> Shape | None:
    """A cell marker as a scene shape (None for a kind the view does not draw)."""
    kind = _KINDS.get(marker.type)
    if kind is None:
        return None
    p, o, s, c = marker.pose.position, marker.pose.orientation, marker.scale, marker.color
    pose = ((p.x, p.y, p.z), (o.w, o.x, o.y, o.z))
    return Shape(kind, *pose, (s.x, s.y, s.z), (c.r, c.g, c.b, c.a), marker.text)


class OperatorViewNode(Node):
    """Serves the operator view (see the module docstring)."""

    def __init__(self, **node_kwargs: Any) -> None:
        """`node_kwargs` go to rclpy's Node (e.g. cli_args= for a test that builds it in-process)."""
        super().__init__(names.OPERATOR_VIEW, **node_kwargs)
        self._binding: ParamBinding[ViewSettings] = ParamBinding(
            self, params.param_specs(), params.build_config, warn=params.config_warnings,
            on_change=self._on_params,
        )
        settings = self._binding.snapshot
        self._pair = follow_coupled_limits(self)  # alpha_max/beta_max: one pair for the whole arm
        self._lock = threading.Lock()
        self._latest: dict[str, Any] = {}
        self._shapes: dict[tuple[str, int], Shape] = {}
        self._shapes_changed = False
        self._requests: deque[tuple[int, str, object]] = deque()
        self._panels: dict[int, Panel] = {}
        self._guard = AccessGuard(settings.host, settings.access_token)
        self._train = NudgeTrain(settings.nudge_step_m, settings.nudge_speed)
        self._manual_place: ParamMirror[bool] = ParamMirror()  # events and polls, newest wins
        self._goal_pending = False
        self._param_asked = -math.inf
        self._frames = 0
        self._rate_t0 = time.monotonic()
        self.frame_rate = 0.0

        self._drawn_subs: list[Any] = []  # the drawn streams' subscriptions, only while watched (`_watch`)
        sub = self.create_subscription
        sub(LeaseState, names.LEASE_STATE, self._keep("lease"), LATCHED)
        sub(String, names.TELEOP_MODE, self._keep("mode"), LATCHED)
        sub(String, names.BEHAVIOR_TREE, self._keep("tree"), LATCHED)
        sub(CoupledLimits, names.COUPLED_LIMITS, self._keep("coupled"), LATCHED)
        sub(String, names.BOX_ESTIMATE, self._keep("box"), LATCHED)
        sub(ParameterEvent, "/parameter_events", self._on_param_event, 10)
        self._jog_pub = self.create_publisher(Twist, names.OPERATOR_JOG, 10)
        self._confirm_pub = self.create_publisher(Bool, names.OPERATOR_CONFIRM, 10)
        self._run_client = ActionClient(self, RunPickPlace, names.RUN_PICK_PLACE)
        self._run_cancel = self.create_client(CancelGoal, f"{names.RUN_PICK_PLACE}/_action/cancel_goal")
        self._get_params = self.create_client(GetParameters, names.BEHAVIOR_GET_PARAMETERS)
        self._set_params = self.create_client(SetParameters, names.BEHAVIOR_SET_PARAMETERS)
        self._new_box = self.create_client(Trigger, names.NEW_BOX)
        self._bt_fqn = self.resolve_topic_name(names.BEHAVIOR_SERVER)

        import viser  # here, not at the top: the module's pure parts (tests, param docs) need no viser

        install_loop_safe_events()  # before the server: its buffers are woken from this node's threads
        self._server = viser.ViserServer(host=settings.host, port=settings.port, verbose=False)
        self._scene = Scene(self._server, Path(settings.urdf_path) if settings.urdf_path else default_urdf())
        self._frame_timer = self.create_timer(1.0 / settings.rate_hz, self._on_frame)
        self._frame_timer.cancel()  # runs while a browser is connected (`_watch`)
        self._wake = self.create_timer(0.001, self._on_wake)  # one-shot: viser's threads reset it
        self._wake.cancel()
        self._jog_timer = self.create_timer(1.0 / settings.jog_rate_hz, self._on_jog)
        self._jog_timer.cancel()  # runs only while a nudge does (`_run_request` starts it)
        shown = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
        self.address = f"http://{shown}:{self._server.get_port()}"
        # Last: the server already serves, and a browser that connected meanwhile (one reloading after a
        # respawn) is handed to the callback at once, on viser's thread, which needs all of the above.
        self._server.on_client_connect(self._on_connect)
        self._server.on_client_disconnect(self._on_disconnect)
        self.get_logger().info(f"operator view: {self.address}")
        if self._guard.required:
            origin = "configured (access_token)" if settings.access_token else "generated"
            self.get_logger().warning(
                f"operator view listens on {settings.host} (not only this machine): the controls need the "
                f"access token, {origin}: {self._guard.token}"
            )

    # Callbacks: store only -------------------------------------------------------------------------

    def _watch(self, watched: bool) -> None:
        """Subscribe the drawn streams and draw at `rate_hz` while watched; neither while not."""
        if watched == bool(self._drawn_subs):
            return
        if watched:
            sub = self.create_subscription
            self._drawn_subs = [
                sub(JointState, names.JOINT_STATES_MONITOR, self._keep("joints"), qos_profile_sensor_data),
                sub(JointState, names.GHOST_JOINT_STATE, self._keep("ghost_q"), 10),
                sub(IkStatus, names.GHOST_STATUS, self._keep("ghost_status"), 10),
                sub(MarkerArray, names.CELL_MARKERS, self._on_markers, 10),
            ]
            self._frame_timer.reset()
            self._frames, self._rate_t0 = 0, time.monotonic()
            return
        for subscription in self._drawn_subs:
            self.destroy_subscription(subscription)
        self._drawn_subs = []
        self._frame_timer.cancel()
        with self._lock:  # nothing stale is drawn when a browser connects again
            for key in ("joints", "ghost_q", "ghost_status"):
                self._latest.pop(key, None)

    def _on_wake(self) -> None:
        """A connect, disconnect or control of viser's threads: (un)watch and run the request now."""
        self._wake.cancel()
        self._on_frame()

    def _keep(self, key: str) -> Any:
        def store(msg: Any) -> None:
            with self._lock:
                self._latest[key] = msg

        return store

    def _on_markers(self, msg: MarkerArray) -> None:
        with self._lock:
            for marker in msg.markers:
                key = (marker.ns, marker.id)
                if marker.action == Marker.DELETEALL:
                    self._shapes.clear()
                elif marker.action == Marker.DELETE:
                    self._shapes.pop(key, None)
                else:
                    shape = shape_of(marker)
                    if shape is not None and self._shapes.get(key) != shape:
                        self._shapes[key] = shape
                    else:
                        continue
                self._shapes_changed = True

    def _on_param_event(self, msg: ParameterEvent) -> None:
        if msg.node != self._bt_fqn:
            return
        for p in [*msg.new_parameters, *msg.changed_parameters]:
            if p.name == MANUAL_PLACE and p.value.type == ParameterType.PARAMETER_BOOL:
                with self._lock:
                    self._manual_place.on_event(p.value.bool_value)

    def _on_connect(self, client: Any) -> None:
        panel = Panel(client, self.on_control, self._guard.required, self.address)
        with self._lock:
            self._panels[client.client_id] = panel
        self._wake.reset()

    def _on_disconnect(self, client: Any) -> None:
        with self._lock:
            self._panels.pop(client.client_id, None)
            self._guard.forget(client.client_id)
        self._wake.reset()

    def on_control(self, client: int, control: str, arg: object) -> None:
        """A click of client `client` (viser's thread): queue it; refuse it here without the token."""
        with self._lock:
            if control == "token":
                ok = self._guard.offer(client, str(arg))
                if not ok:
                    self.get_logger().warning(f"operator view: client {client}: wrong access token")
                return
            if not self._guard.allowed(client):
                self.get_logger().warning(
                    f"operator view: refused {control} from client {client}: no access token entered"
                )
                return
            self._requests.append((client, control, arg))
        self._wake.reset()

    def _on_params(self, old: ViewSettings, new: ViewSettings) -> None:
        """A live change: the nudge buttons' step and speed, the two timers' rates.

        The gauges need nothing here: they read the arm model from the snapshot each frame.
        """
        self._train.step, self._train.speed = new.nudge_step_m, new.nudge_speed
        if new.rate_hz != old.rate_hz:
            self._frame_timer.timer_period_ns = round(1e9 / new.rate_hz)
        if new.jog_rate_hz != old.jog_rate_hz:
            self._jog_timer.timer_period_ns = round(1e9 / new.jog_rate_hz)

    # The frame: requests, then drawing ---------------------------------------------------------------

    def _facts(self, tree_running: bool, manual_waiting: bool, authorized: bool) -> Facts:
        return Facts(
            run_server=self._run_client.server_is_ready(),
            param_server=self._set_params.service_is_ready(),
            run_active=tree_running or self._goal_pending,
            manual_waiting=manual_waiting,
            authorized=authorized,
            box_server=self._new_box.service_is_ready(),
        )

    def _on_frame(self) -> None:
        with self._lock:
            panels = dict(self._panels)
        self._watch(bool(panels))
        with self._lock:
            latest = dict(self._latest)
            requests = list(self._requests)
            self._requests.clear()
            shapes = dict(self._shapes) if self._shapes_changed and panels else None
            self._shapes_changed = self._shapes_changed and not panels
            manual_place = self._manual_place.value
        tree = parse(latest["tree"].data if "tree" in latest else "", CAN_NAMES)
        facts = self._facts(tree.running, tree.manual is not None, True)
        reasons = availability(facts)
        for client, control, arg in requests:
            self._run_request(client, control, arg, reasons)
        if not panels:
            return
        self._poll_manual_place()
        self._draw(latest, shapes)
        gauges = self._gauges(latest)
        status = self._status(latest, tree)
        for cid, panel in panels.items():
            why = reasons if self._guard.allowed(cid) else availability(
                self._facts(tree.running, tree.manual is not None, False))
            panel.show(PanelView(status, gauges, why, manual_place))
        self._frames += 1
        now = time.monotonic()
        if now - self._rate_t0 >= 2.0:
            self.frame_rate = self._frames / (now - self._rate_t0)
            self._frames, self._rate_t0 = 0, now

    def _run_request(self, client: int, control: str, arg: object, reasons: dict[str, str]) -> None:
        key = ("confirm" if arg else "abort") if control == "confirm" else control
        key = "nudge" if key == "nudge_key" else key
        why = reasons.get(key, "unknown control")
        if why:
            self.get_logger().warning(f"operator view: {control} from client {client} not done: {why}")
            return
        log = self.get_logger()
        if control == "start_run":
            self._goal_pending = True
            log.info(f"operator view: start run (client {client})")
            self._run_client.send_goal_async(RunPickPlace.Goal()).add_done_callback(self._on_goal_answer)
        elif control == "cancel_run":
            log.info(f"operator view: cancel run (client {client})")
            self._run_cancel.call_async(CancelGoal.Request())  # zero id and stamp: every goal
        elif control == "manual_place":
            value = bool(arg)
            log.info(f"operator view: manual_place := {value} (client {client})")
            p = Parameter(name=MANUAL_PLACE, value=ParameterValue(type=ParameterType.PARAMETER_BOOL,
                                                                   bool_value=value))
            self._set_params.call_async(SetParameters.Request(parameters=[p]))
        elif control in ("nudge", "nudge_key"):
            press = self._train.press if control == "nudge" else self._train.hold
            press(str(arg), time.monotonic())
            self._on_jog()
            if self._jog_timer.is_canceled():
                self._jog_timer.reset()
        elif control == "new_box":
            log.info(f"operator view: new box (client {client})")
            self._new_box.call_async(Trigger.Request()).add_done_callback(self._on_new_box_answer)
        elif control == "confirm":
            self._train.stop()
            self._on_jog()  # the final zero twist now (the jog timer may be stopped)
            log.info(f"operator view: {'confirm' if arg else 'abort'} (client {client})")
            self._confirm_pub.publish(Bool(data=bool(arg)))

    def _on_new_box_answer(self, future: Any) -> None:
        if future.exception() is not None:
            self.get_logger().warning(f"operator view: new box failed: {future.exception()}")
        elif future.result().success:
            self.get_logger().info(f"operator view: {future.result().message}")
        else:
            self.get_logger().warning(f"operator view: new box refused: {future.result().message}")

    def _on_goal_answer(self, future: Any) -> None:
        handle = future.result() if future.exception() is None else None
        if handle is None or not handle.accepted:
            self._goal_pending = False
            self.get_logger().warning("operator view: run not accepted (the behaviour server logs why)")
            return
        self.get_logger().info("operator view: run accepted")
        handle.get_result_async().add_done_callback(self._on_run_result)
        # The tree snapshot says RUNNING from the first tick; until then the goal counts as the run.
        timer = None

        def clear_pending_once() -> None:
            self._goal_pending = False
            self.destroy_timer(timer)

        timer = self.create_timer(1.0, clear_pending_once)

    def _on_run_result(self, future: Any) -> None:
        self._goal_pending = False
        if future.exception() is None:
            result = future.result().result
            self.get_logger().info(f"operator view: run ended: {result.message}")

    def _poll_manual_place(self) -> None:
        now = time.monotonic()
        if now - self._param_asked < PARAM_POLL_S or not self._get_params.service_is_ready():
            return
        self._param_asked = now
        with self._lock:
            ticket = self._manual_place.ask()
        future = self._get_params.call_async(GetParameters.Request(names=[MANUAL_PLACE]))
        future.add_done_callback(lambda f: self._on_param_answer(f, ticket))

    def _on_param_answer(self, future: Any, ticket: int) -> None:
        if future.exception() is not None or not future.result().values:
            return
        value = future.result().values[0]
        if value.type == ParameterType.PARAMETER_BOOL:
            with self._lock:
                self._manual_place.on_answer(ticket, value.bool_value)

    def _on_jog(self) -> None:
        with self._lock:
            tree = self._latest.get("tree")
        if parse(tree.data if tree is not None else "", CAN_NAMES).manual is None:
            self._train.stop()  # the wait ended (confirmed from the gamepad, ...): the train ends with it
        v = self._train.twist(time.monotonic())
        if v is None:
            self._jog_timer.cancel()  # the train has ended: nothing to send until the next nudge
            return
        msg = Twist()
        msg.linear.x, msg.linear.y, msg.linear.z = v
        self._jog_pub.publish(msg)

    # Drawing -----------------------------------------------------------------------------------------

    @staticmethod
    def _by_name(msg: JointState | None) -> dict[str, float] | None:
        if msg is None:
            return None
        q = {n: float(p) for n, p in zip(msg.name, msg.position, strict=False) if math.isfinite(p)}
        return q or None

    def _draw(self, latest: dict[str, Any], shapes: dict[tuple[str, int], Shape] | None) -> None:
        q = self._by_name(latest.get("joints"))
        if q is not None:
            self._scene.set_arm(q)
        status: IkStatus | None = latest.get("ghost_status")
        ok = None if status is None else status.status == IkStatus.OK
        tcp = None if status is None else (status.tcp.x, status.tcp.y, status.tcp.z)
        reason = "" if status is None else status.reason
        # As the ghost's own markers: green on the IK's joints, red on the measured ones (the IK has none).
        ghost_q = self._by_name(latest.get("ghost_q")) if ok else q
        self._scene.set_ghost(ghost_q, ok, reason, tcp)
        if shapes is not None:
            self._scene.set_shapes(shapes)

    def _gauges(self, latest: dict[str, Any]) -> tuple:
        q = self._by_name(latest.get("joints"))
        if q is None or not all(n in q for n in JOINT_NAMES):
            return ()
        coupled: CoupledLimits | None = latest.get("coupled")
        arm = self._binding.snapshot.arm
        pair = coupled or arm  # the pair /arm/coupled_limits says once it came, else the arm model's
        alpha_max, beta_max = pair.alpha_max, pair.beta_max
        vector = [q[n] for n in JOINT_NAMES]
        return (*joint_gauges(vector, joint_limits(arm)), *coupled_gauges(vector, alpha_max, beta_max))

    def _status(self, latest: dict[str, Any], tree: Any) -> str:
        lease: LeaseState | None = latest.get("lease")
        mode: String | None = latest.get("mode")
        ghost: IkStatus | None = latest.get("ghost_status")
        ghost_text = "—" if ghost is None else "ok" if ghost.status == IkStatus.OK else f"**{ghost.reason}**"
        rows = [
            ("lease", "—" if lease is None else (lease.holder or "free")),
            ("teleop mode", "—" if mode is None else mode.data),
            ("IK ghost", ghost_text),
            ("run", tree.state.lower() + (f" ({tree.summary})" if tree.summary else "")),
            ("step", (f"{tree.can}: " if tree.can else "") + (tree.step or "—")),
        ]
        if tree.manual is not None:
            x, y, z = tree.manual.offset_mm
            rows.append(("place offset", f"[{x:.1f}, {y:.1f}, {z:.1f}] mm"))
        box: String | None = latest.get("box")
        rows.append(("box estimate", "—" if box is None else status_text(box.data)))
        rows += [(can, outcome) for can, outcome in sorted(tree.outcomes.items())]
        rows.append(("view", f"{self.frame_rate:.1f} frames/s"))
        return status_markdown(rows)

    def destroy_node(self) -> Any:
        """Stop the web server with the node, and destroy the run's action client.

        `Node.destroy_node` leaves an action client alone, and while one exists the node stays in the ROS
        graph until the process ends or the garbage collector frees it: an operator view destroyed in a
        process that goes on (a test) was still listed in its domain.
        """
        try:
            self._server.stop()
        except Exception as exc:  # noqa: BLE001 (shutting down: best effort)
            self.get_logger().warning(f"operator view: could not stop the web server: {exc}")
        self._run_client.destroy()
        return super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """Console-script entry point (`operator_view`)."""
    run_node(OperatorViewNode, args, events_executor=True)  # less CPU per message and timer


if __name__ == "__main__":
    main()
