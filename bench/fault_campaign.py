"""Fault and bad-input campaign over the running stack (issue 13): fuzz every input, kill every node; counts.

Run from the repository root inside scripts/env.sh:

    python bench/fault_campaign.py                        # ~12 min on a 2-core machine
    python bench/fault_campaign.py --fuzz 100 --kills carry --domain 103
    python bench/fault_campaign.py --cell shipped --fuzz 0 --kills rim search   # the guarded pass, the search

Each trial starts launch/arm_control.launch.xml through the runner in a private ROS_DOMAIN_ID, with the
simulated cell on its kinematic engine without uncertainty (every can lands clear unless something goes
wrong; `--cell shipped`: config/cell.yaml as shipped, the physics engine and its uncertainty, where the
guarded pass and the search run), and the demo run (run_on_start). A monitor watches the whole trial:
every /joint_states sample against the arm's limits (`kinematics.within_limits`, 1e-6 rad), the
simulated motors' stop hits (/arm/sim/stop_hits), the cell's ground truth (/salamander/cell/state: every
can on its spot, on the pad or standing in its own compartment, clear or touching a wall; a can that
leaves the pad with the vacuum still on, or anywhere but its compartment, is "astray"), and the runner's
output (a node that exits, a Traceback or a FATAL is a crash).

- fuzz: while the run goes, `--fuzz` messages per interface, in a seeded random order: joint goals on
  /arm/joint_target (unknown, repeated and missing names, wrong lengths, NaN, inf, 1e200, old and future
  stamps, the tree's client id and random tokens as frame_id), Joy on /joy (any lengths, NaN, huge
  values, any stamp), twists on /salamander/operator/jog, /arm/solve_ik and /arm/compute_fk requests,
  /arm/lease calls (any operation, client id, timeout and token), /arm/retarget_cartesian calls,
  MoveCartesian goals (any pose, path, speed scale, client id, token, branch) and parameter sets on
  every node (NaN, inf, 1e300, negative, zero, wrong types; for a random parameter of a random node).
  Left out on purpose: the vacuum service and the operator's confirm, which are commands anyone on the
  graph may give (a vacuum-off during a carry drops the can: that is the hardware contract, not a fault).
- kill (`--kills`, moments `carry`, `descent`, `rim`, `search`): one trial per node of the launch and
  moment; the node's process gets SIGKILL while can_0 is carried (lifted off its spot), while it goes
  down into its compartment (30 mm below place_above, the cell's ground truth), while its bottom is in
  the guarded band over the rim (6 mm below to 4 mm above it), or the moment the tree logs its first
  contact with the rim (the search starts; with `--cell shipped` can_1 meets the rim). A respawning
  node comes back after its delay; the trial then waits for
  the run's end ("run complete" or "run stopped") and judges it: completed, or safely held (the run
  stopped, a can still on the pad held with the vacuum on). A restarted behaviour server finds the
  carried can on the pad and waits for the operator: the campaign confirms as an operator would, and
  the run places it and goes on (a carried can no longer on the pad, or one lost in transit: the server
  asks for the cell clear first, and the campaign confirms that too). A node that does not respawn
  stops the stack (the runner's fail-stop): judged by the cell's last state.
- freeze (`--freezes`, the same moments): one trial per node in the motion's path (the generator,
  sim_hardware, cell_sim, the Cartesian node, the behaviour server) and moment; the node's process is
  stopped (SIGSTOP) for `FREEZE_S` and then goes on (SIGCONT): a node that stalls, as under a debugger
  or a starved machine. The run's end is judged as after a kill.

Printed: one line per trial, the fuzz counts per interface (sent, answered, refused / accepted), then a
summary: crashes, limit crossings, stop hits, cans astray. Exit code 0 when all are zero.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from salamander_control import names
from salamander_control.cell.layout import load_cell_layout
from salamander_control.cell.targets import cell_targets
from salamander_control.kinematics import JOINT_NAMES, ArmParams, within_limits
from salamander_testing import REPO
from salamander_testing.cell import cell_config_without_uncertainty
from salamander_testing.process import ChildProcess
from salamander_testing.ros_helpers import ros_env
from salamander_testing.runner_faults import kill_node, node_pid

LAUNCH = REPO / "launch" / "arm_control.launch.xml"
RUNNER = [sys.executable, "-m", "salamander_bringup.runner"]
BAD = [math.nan, math.inf, -math.inf, 1e200, -1e200, 1e308]
CRASH_MARKS = ("Traceback", "[FATAL]", "exited unexpectedly", "exited with code")
FREEZE_S = 2.5
"""s a frozen node stays stopped (SIGSTOP, then SIGCONT): longer than every staleness bound of the stack
(joint states 1 s, the Cartesian feedback 1.5 s, the part-present signal 0.5 s)."""


class Monitor:
    """The trial's ROS side: what the stack measures and reports, and the fuzzer's clients."""

    def __init__(self, domain: int) -> None:
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String, UInt64

        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = Node("fault_campaign", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.arm = ArmParams()
        self.samples = 0
        self.crossings: list[tuple[float, ...]] = []
        self.stop_hits = 0
        self.state: dict[str, Any] | None = None
        self.start: dict[str, list[float]] = {}
        self.astray: set[str] = set()
        layout = load_cell_layout(REPO / "config" / "cell.yaml")
        self.places = [tuple(p.place_above[:2]) for p in cell_targets(layout).places]
        self.rim_z = layout.rim_z
        self._above_z: dict[str, float] = {}
        self.node.create_subscription(
            JointState, names.absolute(names.JOINT_STATES), self._on_joints, qos_profile_sensor_data
        )
        self.node.create_subscription(UInt64, names.absolute(names.SIM_STOP_HITS), self._on_hits, _latched())
        self.node.create_subscription(String, names.absolute(names.CELL_STATE), self._on_cell, 10)

    def _on_joints(self, msg: Any) -> None:
        by_name = dict(zip(msg.name, msg.position, strict=False))
        if all(n in by_name for n in JOINT_NAMES):
            q = tuple(by_name[n] for n in JOINT_NAMES)
            self.samples += 1
            if not within_limits(q, self.arm, 1e-6):
                self.crossings.append(q)

    def _on_hits(self, msg: Any) -> None:
        self.stop_hits = max(self.stop_hits, int(msg.data))

    def _on_cell(self, msg: Any) -> None:
        self.state = json.loads(msg.data)
        for can in self.state["cans"]:
            self.start.setdefault(can["id"], can["position"])
            if self._astray(can):
                self.astray.add(f"{can['id']} at {[round(v, 4) for v in can['position']]} {can['outcome']}")

    def _astray(self, can: dict[str, Any]) -> bool:
        """Neither on its spot, on the pad, on its way down into its own compartment, nor in it standing.

        In it standing: clear of the walls, or touching one (the shipped cell's uncertainty puts a box's
        first can there now and then: docs/design/guarded_moves.md, "Touching cans").
        """
        assert self.state is not None
        if self.state["held"] == can["id"] or math.dist(can["position"], self.start[can["id"]]) < 1e-3:
            return False
        outcome = can["outcome"] or {}
        if not outcome:
            return False  # let go over its compartment and still falling: the outcome follows
        return not (outcome.get("compartment") == int(can["id"].split("_")[1])
                    and outcome.get("result") in ("in_box_clear", "in_box_touching"))  # fmt: skip

    def _bottom_over_place(self, can_id: str, within: float) -> float | None:
        """The z of `can_id`'s bottom while it is on the pad within `within` (m, xy) of its compartment."""
        if not self.carrying(can_id):
            return None
        can = next(c for c in self.state["cans"] if c["id"] == can_id)  # type: ignore[index]
        x, y, z = can["position"]
        tx, ty = self.places[int(can_id.split("_")[1])]
        return z if math.hypot(x - tx, y - ty) <= within else None

    def descending(self, can_id: str) -> bool:
        """`can_id` on the pad, over its compartment (5 mm in xy) and 30 mm below where it got there."""
        z = self._bottom_over_place(can_id, 5e-3)
        if z is None:
            return False
        self._above_z.setdefault(can_id, z)
        return z < self._above_z[can_id] - 0.03

    def in_rim_band(self, can_id: str) -> bool:
        """`can_id` on the pad over its compartment (8 mm in xy: a search's probe), its bottom within the
        guarded band's reach of the rim (6 mm below to 4 mm above: the behaviour server's guard band)."""
        z = self._bottom_over_place(can_id, 8e-3)
        return z is not None and -0.006 <= z - self.rim_z <= 0.004

    def carrying(self, can_id: str) -> bool:
        if self.state is None or self.state["held"] != can_id:
            return False
        can = next(c for c in self.state["cans"] if c["id"] == can_id)
        return math.dist(can["position"], self.start[can_id]) > 0.05

    def spin(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=min(0.02, max(end - time.monotonic(), 0.0)))

    def wait(self, predicate, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > end:
                return False
            self.executor.spin_once(timeout_sec=0.05)
        return True

    def close(self) -> None:
        self.node.destroy_node()
        self.context.try_shutdown()


def _latched():
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
    )


class Fuzzer:
    """Sends bad input on every interface of the stack (see the module docstring); counts per interface."""

    def __init__(self, mon: Monitor, rng: random.Random) -> None:
        from geometry_msgs.msg import Twist
        from rcl_interfaces.srv import ListParameters, SetParameters
        from rclpy.action import ActionClient
        from sensor_msgs.msg import JointState, Joy

        from salamander_msgs.action import MoveCartesian
        from salamander_msgs.srv import ArmLease, ComputeFk, RetargetCartesian, SolveIk

        self.mon, self.rng, node = mon, rng, mon.node
        self.sent: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.accepted: Counter[str] = Counter()
        self.accepted_params: list[str] = []
        self.pubs = {
            "joint_target": node.create_publisher(JointState, names.absolute(names.JOINT_TARGET), 10),
            "joy": node.create_publisher(Joy, names.absolute(names.JOY), 10),
            "jog": node.create_publisher(Twist, names.absolute(names.OPERATOR_JOG), 10),
        }
        self.clients = {
            "solve_ik": node.create_client(SolveIk, names.absolute(names.SOLVE_IK)),
            "compute_fk": node.create_client(ComputeFk, names.absolute(names.COMPUTE_FK)),
            "lease": node.create_client(ArmLease, names.absolute(names.LEASE_SERVICE)),
            "retarget": node.create_client(RetargetCartesian, names.absolute(names.RETARGET_CARTESIAN)),
        }
        self.action = ActionClient(node, MoveCartesian, names.absolute(names.MOVE_CARTESIAN))
        self.types = {"JointState": JointState, "Joy": Joy, "Twist": Twist, "MoveCartesian": MoveCartesian,
                      "SolveIk": SolveIk, "ComputeFk": ComputeFk, "ArmLease": ArmLease,
                      "RetargetCartesian": RetargetCartesian}  # fmt: skip
        self.param_nodes: dict[str, list[str]] = {}
        self._list_type, self._set_type = ListParameters, SetParameters

    # --- values ------------------------------------------------------------------------------------

    def number(self) -> float:
        r = self.rng.random()
        if r < 0.4:
            return self.rng.choice(BAD)
        if r < 0.7:
            return self.rng.uniform(-10.0, 10.0)
        return self.rng.uniform(-1e6, 1e6)

    def numbers(self, n: int | None = None) -> list[float]:
        n = self.rng.choice([0, 1, 4, 5, 5, 5, 6, 12]) if n is None else n
        return [self.number() for _ in range(n)]

    def joint_names(self) -> list[str]:
        r = self.rng.random()
        names_ = list(JOINT_NAMES)
        if r < 0.25:
            self.rng.shuffle(names_)
            return names_[: self.rng.randint(0, 5)]
        if r < 0.5:
            return names_ + [self.rng.choice(names_)]  # repeated
        if r < 0.7:
            names_[self.rng.randrange(5)] = "elbow"  # unknown
            return names_
        return names_

    def stamp(self, msg: Any) -> None:
        now = self.mon.node.get_clock().now().nanoseconds
        offset = self.rng.choice([0, -10**9, -10**11, 10**9, 10**12, -now])
        t = max(now + offset, 0)
        msg.header.stamp.sec, msg.header.stamp.nanosec = t // 10**9 % 2**31, t % 10**9

    # --- interfaces --------------------------------------------------------------------------------

    def joint_target(self) -> None:
        msg = self.types["JointState"]()
        self.stamp(msg)
        msg.header.frame_id = self.rng.choice(["", "behavior_server", "x" * 32, "salamander_ctl"])
        msg.name = self.joint_names()
        msg.position = self.numbers()
        msg.velocity = self.numbers(self.rng.choice([0, 0, 5, 3]))
        self.pubs["joint_target"].publish(msg)

    def joy(self) -> None:
        msg = self.types["Joy"]()
        self.stamp(msg)
        msg.axes = [self.number() if self.rng.random() < 0.3 else self.rng.uniform(-1, 1)
                    for _ in range(self.rng.choice([0, 2, 6, 8, 30]))]  # fmt: skip
        msg.buttons = [self.rng.choice([0, 1, -1, 2**31 - 1]) for _ in range(self.rng.choice([0, 4, 13, 40]))]
        self.pubs["joy"].publish(msg)

    def jog(self) -> None:
        msg = self.types["Twist"]()
        for v in (msg.linear, msg.angular):
            v.x, v.y, v.z = self.number(), self.number(), self.number()
        self.pubs["jog"].publish(msg)

    def wait_ready(self) -> None:
        """Until every service and the action server are discovered (at most 15 s)."""
        clients = list(self.clients.values())

        def ready() -> bool:
            return self.action.server_is_ready() and all(c.service_is_ready() for c in clients)

        self.mon.wait(ready, 15.0)

    def call(self, key: str, request: Any) -> None:
        client = self.clients[key]
        future = client.call_async(request)
        future.add_done_callback(lambda f, k=key: self._answered(k, f))

    def _answered(self, key: str, future: Any) -> None:
        self.answered[key] += 1
        result = future.result()
        if result is not None and getattr(result, "success", False):
            self.accepted[key] += 1

    def solve_ik(self) -> None:
        req = self.types["SolveIk"].Request()
        req.tcp.x, req.tcp.y, req.tcp.z = self.number(), self.number(), self.number()
        req.tool_pitch, req.tool_yaw = self.number(), self.number()
        req.seed = self.numbers(self.rng.choice([0, 5, 3, 7]))
        req.branch = self.rng.choice(["", "up", "down", "sideways"])
        self.call("solve_ik", req)

    def compute_fk(self) -> None:
        req = self.types["ComputeFk"].Request()
        req.name, req.position = self.joint_names(), self.numbers()
        self.call("compute_fk", req)

    def lease(self) -> None:
        req = self.types["ArmLease"].Request()
        req.operation = self.rng.choice([0, 1, 2, 3, 255])
        req.client_id = self.rng.choice(["", "behavior_server", "fuzzer", "\u00e9" * 10])
        req.timeout = self.number()
        req.token = self.rng.choice(["", "x" * 32, "behavior_server"])
        self.call("lease", req)

    def retarget(self) -> None:
        req = self.types["RetargetCartesian"].Request()
        req.tcp.x, req.tcp.y, req.tcp.z = self.number(), self.number(), self.number()
        req.tool_pitch, req.tool_yaw = self.number(), self.number()
        req.lease_token = self.rng.choice(["", "x" * 32])
        self.call("retarget", req)

    def move_cartesian(self) -> None:
        goal = self.types["MoveCartesian"].Goal()
        goal.tcp.x, goal.tcp.y, goal.tcp.z = self.number(), self.number(), self.number()
        goal.tool_pitch, goal.tool_yaw = self.number(), self.number()
        goal.path = self.rng.choice(["linear", "joint", "", "curvy"])
        goal.speed_scale = self.number()
        goal.client_id = self.rng.choice(["", "behavior_server", "fuzzer"])
        goal.lease_token = self.rng.choice(["", "x" * 32])
        goal.branch = self.rng.choice(["", "up", "down", "left"])
        future = self.action.send_goal_async(goal)
        future.add_done_callback(self._goal_answered)

    def _goal_answered(self, future: Any) -> None:
        self.answered["move_cartesian"] += 1
        handle = future.result()
        if handle is not None and handle.accepted:
            self.accepted["move_cartesian"] += 1

    def parameter(self) -> None:
        from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue

        if not self.param_nodes:
            return
        fqn = self.rng.choice(sorted(self.param_nodes))
        name = self.rng.choice(self.param_nodes[fqn])
        value = ParameterValue()
        kind = self.rng.choice(["double", "double", "double", "int", "string", "array"])
        if kind == "double":  # no number a parameter's range admits: an out-of-range value only
            value.type = ParameterType.PARAMETER_DOUBLE
            value.double_value = self.rng.choice(BAD[:5] + [-1e300])
        elif kind == "int":
            value.type = ParameterType.PARAMETER_INTEGER
            value.integer_value = self.rng.choice([2**62, -(2**62)])
        elif kind == "string":
            value.type = ParameterType.PARAMETER_STRING
            value.string_value = self.rng.choice(["", "nan", "\x01"])
        else:
            value.type, value.double_array_value = ParameterType.PARAMETER_DOUBLE_ARRAY, [math.nan, 1.0]
        client = self.set_clients[fqn]
        request = self._set_type.Request(parameters=[Parameter(name=name, value=value)])
        future = client.call_async(request)
        what = f"{fqn} {name} = {_value_text(value)}"
        future.add_done_callback(lambda f, w=what: self._param_answered(w, f))

    def _param_answered(self, what: str, future: Any) -> None:
        self.answered["parameters"] += 1
        result = future.result()
        if result is not None and result.results and result.results[0].successful:
            self.accepted["parameters"] += 1
            self.accepted_params.append(what)

    def list_parameters(self, nodes: list[str]) -> None:
        """The parameter names of each node (skipping use_sim_time and the QoS overrides)."""
        self.set_clients = {}
        for fqn in nodes:
            self.set_clients[fqn] = self.mon.node.create_client(self._set_type, f"{fqn}/set_parameters")
            client = self.mon.node.create_client(self._list_type, f"{fqn}/list_parameters")
            if not self.mon.wait(client.service_is_ready, 10.0):
                continue
            future = client.call_async(self._list_type.Request())
            if self.mon.wait(future.done, 10.0) and future.result() is not None:
                found = [n for n in future.result().result.names
                         if n != "use_sim_time" and not n.startswith("qos_overrides")]  # fmt: skip
                if found:
                    self.param_nodes[fqn] = found

    def kinds(self) -> dict[str, Any]:
        """The interfaces, by name: each a call that sends one bad input."""
        return {
            "joint_target": self.joint_target, "joy": self.joy, "jog": self.jog, "solve_ik": self.solve_ik,
            "compute_fk": self.compute_fk, "lease": self.lease, "retarget": self.retarget,
            "move_cartesian": self.move_cartesian, "parameters": self.parameter,
        }  # fmt: skip

    def run(self, per_interface: int, mon: Monitor) -> None:
        """`per_interface` of each kind in a random order, ~100 a second (whatever becomes of the run)."""
        kinds = self.kinds()
        order = [k for k in kinds for _ in range(per_interface)]
        self.rng.shuffle(order)
        for kind in order:
            kinds[kind]()
            self.sent[kind] += 1
            mon.spin(0.01)
        mon.spin(2.0)  # the last answers


def _value_text(value: Any) -> str:
    field = {2: "integer_value", 3: "double_value", 4: "string_value", 8: "double_array_value"}[value.type]
    v = getattr(value, field)
    return repr(list(v) if field == "double_array_value" else v)


def started_nodes(runner: ChildProcess) -> list[str]:
    out = []
    for line in runner.lines:
        if line.startswith("[runner] started /"):
            out.append(line.split()[2])
    return out


def crashes(runner: ChildProcess, killed: str | None) -> list[str]:
    """Lines of the runner's output that show a crash (a node's exit other than the one killed)."""
    found = []
    for line in runner.lines:
        if any(mark in line for mark in CRASH_MARKS):
            if killed and line.startswith(f"[runner] {killed} exited"):
                continue
            if killed and "exited unexpectedly" in line and killed in line:
                continue
            found.append(line)
    return found


TAKEN = ("confirmed: placing", "the operator confirmed the cell is clear")
"""The server's lines for a confirmation taken: the held can placed, or the cell confirmed clear."""


def operator_confirms(mon: Monitor, runner: ChildProcess, since: int) -> str:
    """The operator's recovery: confirm (each second, at most 60 s) until the server takes it."""
    from std_msgs.msg import Bool

    pub = mon.node.create_publisher(Bool, names.absolute(names.OPERATOR_CONFIRM), 10)
    for _ in range(60):
        pub.publish(Bool(data=True))
        if mon.wait(lambda: any(t in line for line in runner.lines[since:] for t in TAKEN), 1.0):
            return "confirmed; "
    return "confirm not taken; "


MOMENTS = {
    "carry": lambda mon, runner: mon.carrying("can_0"),
    "descent": lambda mon, runner: mon.descending("can_0"),
    "rim": lambda mon, runner: mon.in_rim_band("can_0"),
    "search": lambda mon, runner: any("met the rim" in line for line in runner.lines),
}
"""The kill moments: can_0 carried; going down into its compartment; its bottom in the rim band (the
guarded pass); the tree's first contact logged (the search starts: `--cell shipped`, where can_1 meets the
rim)."""

def freeze_node(mon: Monitor, runner: ChildProcess, fqn: str, seconds: float) -> bool:
    """Stop `fqn`'s process (SIGSTOP) for `seconds` while `mon` watches, then let it go on (SIGCONT).

    False when the runner has not reported the node's process (nothing frozen).
    """
    pid = node_pid(runner, fqn)
    if pid is None:
        return False
    os.kill(pid, signal.SIGSTOP)
    try:
        mon.spin(seconds)  # the length of the freeze is the fault itself
    finally:
        os.kill(pid, signal.SIGCONT)
    return True


ENDED = ("]: run complete: ", "]: run stopped: ")
"""The behaviour server's lines for the end of a run."""


def await_end(mon: Monitor, runner: ChildProcess, since: int, timeout: float = 240.0) -> str:
    """Wait for the run's end after a fault (from line `since`), confirming as an operator would; judge it.

    A restarted server with a can held, or one asking whether the cell is clear, waits for the operator:
    confirm, then wait for the end. Returns "completed", "safely held" (the run stopped, a held can with
    the vacuum on), "held WITHOUT vacuum" or "no end line", after what the operator did.
    """
    waits = ("a can is on the pad before picking", "until the operator confirms the cell is clear")
    marks = (*ENDED, *waits)
    mon.wait(lambda: any(m in line for line in runner.lines[since:] for m in marks), timeout)
    prefix = ""
    if any(w in line for line in runner.lines[since:] for w in waits):
        prefix = "held, waited for the operator; " + operator_confirms(mon, runner, since)
        mon.wait(lambda: any(e in line for line in runner.lines[since:] for e in ENDED), timeout)
    end = [line for line in runner.lines[since:] if any(e in line for e in ENDED)]
    outcome = ("completed" if end and "run complete" in end[0] else
               "safely held" if end else "no end line")  # fmt: skip
    state = mon.state or {}
    if end and outcome == "safely held" and state.get("held") and not state.get("vacuum"):
        outcome = "held WITHOUT vacuum"
    return prefix + outcome


def trial(args, domain: int, log: Path, kill: tuple[str, str, str] | None, rng: random.Random, fuzz_counts):
    """One stack, one run: fuzzed (`kill` None), or one node killed or frozen at a moment (`kill`:
    ("kill" or "freeze", the node, the moment)). Returns a result dict."""
    cell = (REPO / "config" / "cell.yaml" if args.cell == "shipped" else
            cell_config_without_uncertainty(log.parent, engine="kinematic"))  # fmt: skip
    home = Path(tempfile.mkdtemp(prefix="ros_home_", dir=log.parent))  # a fresh run progress per trial
    env = {**ros_env(domain), "ROS_HOME": str(home)}
    runner = ChildProcess([*RUNNER, str(LAUNCH), f"cell_config:={cell}"], env, log, process_group=True)
    mon = Monitor(domain)
    ended = ENDED
    outcome = "?"
    try:
        if not mon.wait(lambda: "run started" in runner.text() or not runner.alive(), 120.0):
            return {"outcome": "no run started", "crashes": crashes(runner, None), "mon": mon}
        if kill is None:
            fuzzer = Fuzzer(mon, rng)
            fuzzer.list_parameters(started_nodes(runner))
            fuzzer.wait_ready()
            done = lambda: any(e in runner.text() for e in ended) or not runner.alive()  # noqa: E731
            fuzzer.run(args.fuzz, mon)
            for k in ("sent", "answered", "accepted"):
                fuzz_counts[k].update(getattr(fuzzer, k))
            fuzz_counts["accepted_params"].extend(fuzzer.accepted_params)
            mon.wait(done, 240.0)
            ends = [line.split("]: ", 1)[-1] for line in runner.lines if any(e in line for e in ended)]
            outcome = ends[0] if ends else "no end line"
            victim = None
        else:
            action, victim, moment = kill
            reached = mon.wait(lambda: MOMENTS[moment](mon, runner), 120.0)
            if not reached:
                return {"outcome": f"{moment} not reached", "crashes": crashes(runner, None), "mon": mon}
            since = len(runner.lines)
            if action == "freeze":
                if not freeze_node(mon, runner, victim, FREEZE_S):
                    return {"outcome": "no pid to freeze", "crashes": crashes(runner, None), "mon": mon}
                outcome = await_end(mon, runner, since)
                victim = None  # frozen, not killed: an exit of it is a crash
            else:
                outcome = _killed(args, mon, runner, victim, since)
                if outcome is None:
                    return {"outcome": "kill not confirmed", "crashes": crashes(runner, victim), "mon": mon}
        mon.spin(1.0)
        return {"outcome": outcome, "crashes": crashes(runner, victim), "mon": mon}
    finally:
        runner.stop(timeout=30.0)
        mon.close()


def _killed(args, mon: Monitor, runner: ChildProcess, victim: str, since: int) -> str | None:
    """SIGKILL `victim` and judge the run's end from line `since` on; None when the kill was not seen."""
    respawns = victim not in args.no_respawn
    try:
        kill_node(runner, victim, signal.SIGKILL, expect_respawn=respawns, timeout=30.0)
    except AssertionError:
        return None
    if respawns:
        return await_end(mon, runner, since)
    mon.wait(lambda: not runner.alive(), 60.0)
    return "stack stopped (fail-stop)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzz", type=int, default=300, help="messages per interface (0: no fuzz trial)")
    parser.add_argument("--kills", nargs="*", default=["carry", "descent"], choices=sorted(MOMENTS),
                        help="moments to kill at")
    parser.add_argument("--freezes", nargs="*", default=[], choices=sorted(MOMENTS),
                        help=f"moments to freeze (SIGSTOP for {FREEZE_S} s) the motion's nodes at")
    parser.add_argument("--cell", choices=("plain", "shipped"), default="plain",
                        help="plain: kinematic, no uncertainty; shipped: config/cell.yaml as shipped")
    parser.add_argument("--nodes", nargs="*", default=None, help="only these nodes (fully qualified names)")
    parser.add_argument("--domain", type=int, default=103, help="private ROS_DOMAIN_ID (not the suite's)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--logs", type=Path, default=Path(tempfile.gettempdir()) / "fault_campaign")
    args = parser.parse_args(argv)
    args.no_respawn = {names.absolute(n) for n in (
        names.TRAJECTORY_GENERATOR, names.SIM_HARDWARE, names.CELL_SIM)}  # fmt: skip
    args.logs.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    fuzz_counts: dict[str, Any] = {"sent": Counter(), "answered": Counter(), "accepted": Counter(),
                                   "accepted_params": []}  # fmt: skip
    plan: list[tuple[str, str, str] | None] = [None] if args.fuzz else []
    nodes = [names.absolute(n) for n in (
        names.KINEMATICS_NODE, names.CARTESIAN_MOTION_NODE, names.IK_GHOST_NODE, names.BEHAVIOR_SERVER,
        names.CONTROLLER_NODE, names.OPERATOR_VIEW, names.TRAJECTORY_GENERATOR, names.SIM_HARDWARE,
        names.CELL_SIM)]  # fmt: skip
    plan += [("kill", n, m) for m in args.kills for n in nodes if args.nodes is None or n in args.nodes]
    frozen = [names.absolute(n) for n in (
        names.TRAJECTORY_GENERATOR, names.SIM_HARDWARE, names.CELL_SIM, names.CARTESIAN_MOTION_NODE,
        names.BEHAVIOR_SERVER)]  # fmt: skip
    plan += [("freeze", n, m) for m in args.freezes for n in frozen if args.nodes is None or n in args.nodes]
    totals: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    for i, kill in enumerate(plan):
        what = ("fuzz" if kill is None else f"kill -9 {kill[1]} during {kill[2]}" if kill[0] == "kill"
                else f"SIGSTOP {kill[1]} for {FREEZE_S} s during {kill[2]}")  # fmt: skip
        started = time.monotonic()
        res = trial(args, args.domain, args.logs / f"trial_{i:02d}.log", kill, rng, fuzz_counts)
        mon = res["mon"]
        row = Counter(crashes=len(res["crashes"]), crossings=len(mon.crossings), stop_hits=mon.stop_hits,
                      astray=len(mon.astray))  # fmt: skip
        totals.update(row)
        outcomes[res["outcome"].split(":")[0]] += 1
        print(f"{i:2d} {what}: {res['outcome']}; {mon.samples} joint states, crashes {row['crashes']}, limit "
              f"crossings {row['crossings']}, stop hits {row['stop_hits']}, cans astray {row['astray']} "
              f"({time.monotonic() - started:.0f} s)", flush=True)  # fmt: skip
        for line in res["crashes"][:3] + sorted(mon.astray)[:3]:
            print(f"     {line}", flush=True)
    if args.fuzz:
        print("\nfuzzed per interface: sent / answered / accepted")
        for k in sorted(fuzz_counts["sent"]):
            topic = k in ("joint_target", "joy", "jog")  # a topic: no answer (refusals are logged)
            answered = "    -" if topic else f"{fuzz_counts['answered'][k]:5d}"
            accepted = "   -" if topic else f"{fuzz_counts['accepted'][k]:4d}"
            print(f"  {k:15s} {fuzz_counts['sent'][k]:5d} / {answered} / {accepted}")
        if fuzz_counts["accepted_params"]:
            print("  parameter sets accepted: " + "; ".join(fuzz_counts["accepted_params"][:12]))
    print(
        f"\n{len(plan)} trials; outcomes {dict(outcomes)}; crashes {totals['crashes']}, limit crossings "
        f"{totals['crossings']}, stop hits {totals['stop_hits']}, cans astray {totals['astray']}"
    )
    return 0 if not any(totals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
