"""The browser operator view in a real headless browser against the running simulated stack.

The stack is the README's first command as the runner starts it (launch/arm_control.launch.xml with
run_on_start:=false, teleop:=false, view:=true, and the simulated cell's kinematic model without
uncertainty, its box roomier than the product's) in a DDS domain and a ROS_HOME of its own, started once
for the module; the page is opened in Debian's Chromium, driven by Selenium through
/usr/bin/chromedriver (nothing is downloaded; the browser gets a fresh profile and no network but the
page's). The checks read the page's DOM (the panel's buttons, their `disabled` state, the checkbox, the
status table, the reasons list), count pixels of screenshots (the arm's orange, the ghost's green or
red), and read the stack over ROS (the tree snapshot, the lease, operator/jog and operator/confirm, the
behaviour server's parameter) and the processes' log lines. A script added to the page before it loads
(`_PAGE_PROBE`) counts the message batches viser's client receives and keeps what the page sends, so a
test can wait until a typed value has left the page (viser sends a field's value at most every 50 ms,
the last one winning).

1. The arm is drawn; the ghost is green at rest; after a joint goal to a pose near the coupled bound
   and a narrowing of alpha_max under it (every joint goal is clamped into the IK's limits by the
   generator, so a joint goal alone never leaves the IK's domain), the ghost is red with the reason.
2. The checkbox "manual_place" sets the behaviour server's parameter (read back over its parameter
   service) both ways, and follows a change made elsewhere without writing it back.
3. A run from the page: "start run" starts it (the tree, the lease, the server's log); with manual_place
   the run waits in ManualAdjust, where the nudge buttons and the keys (J, L) send operator/jog twists
   that move the offset out and back (the tree's and the page's), and "confirm" ends the wait (the tree
   goes on to the release: the valve closes); "cancel run" then ends the run. Meanwhile: the view's CPU
   and what the page receives, idle and during the run (printed and recorded).
   SALAMANDER_VIEW_SCREENSHOT=<file.png> keeps a screenshot of the page during the ManualAdjust wait
   (docs/operator_view.png is one).
4. "new box" resets the behaviour server's box estimate (its log) and the status row "box estimate"
   shows none.
5. A second view of the same stack served on the machine's own non-loopback address: the status is
   readable and the scene arrives (the probe's count of scene messages as the arm moves), every
   control is disabled with the reason "enter the access token first",
   a start_run request forged through the page's own connection is refused and logged and starts
   nothing, a wrong token unlocks nothing, and with the token typed into the page the controls work.

Skipped, saying so, where no Chromium/chromedriver/selenium exists (the README's test command installs
nothing; .ci/run installs the two Debian packages when it runs as root).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import secrets
import shutil
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psutil
import pytest

from salamander_control import names
from salamander_control.kinematics import forward_kinematics
from salamander_testing import REPO
from salamander_testing.node_process import find_executable, stack_ros_args
from salamander_testing.process import ChildProcess
from salamander_testing.ros_helpers import RosPeer, next_domain_id, ros_env

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
try:
    import selenium  # noqa: F401
    from PIL import Image

    _missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
except ImportError as exc:  # pragma: no cover - depends on the machine
    _missing = [f"python package {exc.name}"]
if _missing:
    pytest.skip(
        f"operator view browser tests need a headless browser: missing {', '.join(map(str, _missing))} "
        "(Debian: apt-get install chromium chromium-driver; .ci/run does this as root)",
        allow_module_level=True,
    )

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

pytestmark = pytest.mark.ros

LAUNCH = REPO / "launch" / "arm_control.launch.xml"
RUNNER = [sys.executable, "-m", "salamander_bringup.runner"]
START_TIMEOUT = 120.0  # the whole stack and the page on a loaded 2-core machine
STEP_TIMEOUT = 60.0
RUN_TIMEOUT = 120.0  # start run -> ManualAdjust of the first can, on a loaded machine
MEASURE_S = 5.0  # the window of the CPU and update-rate measurements
ADDRESS = re.compile(r"operator view: (http://\S+)")
POSE_P = (0.0, -0.75, 0.62, 0.0, 0.0)  # q2 - q1 = 1.37: inside alpha_max 1.40, outside 1.10
ARM_AREA = (slice(200, 420), slice(520, 720))  # (rows, cols) of the screenshot around the arm
SCREENSHOT_OUT = os.environ.get("SALAMANDER_VIEW_SCREENSHOT", "")  # set to keep the run's screenshot
ROOMY_CLEARANCE = 0.010  # m per side around a centred can (config/cell.yaml: 0.00195; see Stack)
SCREENSHOT_LIMIT = 300_000  # bytes: the README's picture stays modest
OFFSET_ROW = re.compile(r"\[(-?[\d.]+), (-?[\d.]+), (-?[\d.]+)\] mm")


# --- the stack, the test's ROS peer, the browser ---------------------------------------------------------


class Stack(RosPeer):
    """The runner's stack and the test's node: tree snapshot, ghost status, lease, operator/jog and
    operator/confirm, the generator's and (RosPeer's) the behaviour server's parameters, the log."""

    def __init__(self, log_dir: Path) -> None:
        from geometry_msgs.msg import Twist
        from rclpy.parameter_client import AsyncParameterClient
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Bool, String

        from salamander_control.ros.qos import LATCHED
        from salamander_msgs.msg import IkStatus, LeaseState
        from salamander_testing.cell import cell_config_without_uncertainty

        self.domain = next_domain_id()
        # The cell's fast kinematic model without uncertainty: the view is under test, not the physics
        # (which costs a third of a core and, on a starved machine, stale part-present signals). And a
        # roomy box (ROOMY_CLEARANCE): test 3 releases a can after nudging it out and back, and a nudge is
        # a train of twists whose length ManualAdjust measures by their arrival times, so on a starved
        # machine each 5 mm step comes out a few mm longer or shorter; with the product's 1.95 mm per side
        # the residual offset (or the stack's own path error on the descent) knocks the can off the rim.
        cell = cell_config_without_uncertainty(log_dir, engine="kinematic", side_clearance=ROOMY_CLEARANCE)
        args = [str(LAUNCH), "run_on_start:=false", "teleop:=false", "view:=true", f"cell_config:={cell}"]
        # A ROS_HOME of its own: the behaviour server keeps its run progress there, which must neither
        # come from ~/.ros nor go there (the module's stack starts before the per-test ROS_HOME fixture).
        env = {**ros_env(self.domain), "ROS_HOME": str(log_dir / "ros_home")}
        self.runner = ChildProcess([*RUNNER, *args], env, log_dir / "runner.log", process_group=True)
        at = names.absolute
        super().__init__(self.domain, "operator_view_browser_test", at(names.BEHAVIOR_SERVER),
                         self.runner.describe, STEP_TIMEOUT)  # fmt: skip
        self.generator = AsyncParameterClient(self.node, at(names.TRAJECTORY_GENERATOR))
        self.tree = ""
        self.offsets: list[tuple[float, float, float] | None] = []  # tree_offset() of every snapshot
        self.ghost: list[IkStatus] = []
        self.node.create_subscription(String, at(names.BEHAVIOR_TREE), self._on_tree, LATCHED)
        self.node.create_subscription(IkStatus, at(names.GHOST_STATUS), self.ghost.append, 10)
        self.targets = self.node.create_publisher(JointState, at(names.JOINT_TARGET), 10)
        self.JointState = JointState
        self.lease = None
        self.jogs: list[tuple[float, float, float]] = []
        self.confirms: list[bool] = []
        self.node.create_subscription(LeaseState, at(names.LEASE_STATE), self._on_lease, LATCHED)
        self.node.create_subscription(Twist, at(names.OPERATOR_JOG), self._on_jog, 50)
        self.node.create_subscription(Bool, at(names.OPERATOR_CONFIRM), self._on_confirm, 10)

    def _on_lease(self, msg) -> None:
        self.lease = msg

    def _on_jog(self, msg) -> None:
        self.jogs.append((msg.linear.x, msg.linear.y, msg.linear.z))

    def _on_confirm(self, msg) -> None:
        self.confirms.append(msg.data)

    def tree_offset(self) -> tuple[float, float, float] | None:
        """The waiting ManualAdjust's offset in the tree snapshot, mm (None when none waits)."""
        from salamander_view.snapshot import parse

        manual = parse(self.tree, tuple(f"can_{i}" for i in range(8))).manual
        return None if manual is None else manual.offset_mm

    def settled_offset(self, since: int, before: tuple[float, float, float], what: str):
        """The waiting ManualAdjust's offset once it moved from `before` (in a snapshot from offsets[since]
        on) and then held still over two snapshots in a row (half a second apart at the server's 2 Hz:
        longer than a twist counts after its arrival, 0.3 s). Call after the nudge's zero twist."""
        def settled():
            new = self.offsets[since:]
            return len(new) >= 2 and new[-1] is not None and new[-1] == new[-2] != before

        self.wait(settled, what, 15.0)
        return self.offsets[-1]

    def holder(self) -> str | None:
        return None if self.lease is None else self.lease.holder

    def log_mark(self) -> int:
        return len(self.runner.lines)

    def logged(self, *wanted: str, since: int, timeout: float = STEP_TIMEOUT) -> None:
        """Wait for log lines of the stack (each string in some line from `since` on)."""
        found = self.runner.wait_for_text(*wanted, timeout=timeout, since=since)
        warned = [line for line in self.runner.lines[since:] if "[WARN]" in line or "[ERROR]" in line]
        assert found, (wanted, "warnings and errors since:", warned[-30:], "tail:",
                       self.runner.text()[-3000:])  # fmt: skip

    def said_since(self, since: int) -> str:
        return "\n".join(self.runner.lines[since:])

    def param_becomes(self, name: str, want: object, timeout: float = STEP_TIMEOUT) -> None:
        """Read the behaviour server's parameter over its service until it is `want`."""
        deadline = time.monotonic() + timeout
        while (got := self.get_param(name)) != want:
            assert time.monotonic() < deadline, (name, got, want, self.runner.text()[-4000:])
            self.spin_until(lambda: False, 0.2)  # between two reads: let other answers in

    def jog_step(self, since: int, axis: tuple[float, ...], what: str) -> list[tuple[float, float, float]]:
        """Wait for one nudge's twists after jogs[since:]: along `axis` at the view's speed, then zero."""
        def done() -> bool:
            new = self.jogs[since:]
            return any(j != (0.0, 0.0, 0.0) for j in new) and new[-1] == (0.0, 0.0, 0.0)

        self.wait(done, what, 15.0)
        moving = [j for j in self.jogs[since:] if j != (0.0, 0.0, 0.0)]
        want = tuple(0.025 * c for c in axis)  # nudge_speed 25 mm/s (config/view.yaml)
        assert all(math.dist(j, want) < 1e-9 for j in moving), moving
        return moving

    def _on_tree(self, msg) -> None:
        self.tree = msg.data
        self.offsets.append(self.tree_offset())

    def address(self) -> str:
        assert self.runner.wait_for_text("operator view: http://", timeout=START_TIMEOUT), self.runner.text()
        return ADDRESS.search(self.runner.text())[1]

    def set_generator(self, **values) -> None:
        from rclpy.parameter import Parameter

        self.wait(self.generator.services_are_ready, "the generator's parameter services")
        params = [Parameter(k, value=v) for k, v in values.items()]
        reply = self.answer(self.generator.set_parameters(params), "the generator's set_parameters answer")
        assert all(r.successful for r in reply.results), reply

    def send_joints(self, q) -> None:
        from salamander_control.kinematics import JOINT_NAMES

        self.targets.publish(self.JointState(name=list(JOINT_NAMES), position=list(q)))  # anonymous goal

    def view_process(self) -> psutil.Process:
        for child in psutil.Process(self.runner.proc.pid).children(recursive=True):
            if any("operator_view" in part for part in child.cmdline()[:3]):
                return child
        raise AssertionError(f"no operator_view process under the runner\n{self.runner.text()}")


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    s = Stack(tmp_path_factory.mktemp("operator_view"))
    try:
        s.address()
        idle = s.runner.wait_for_text("[behavior_server_node]", "idle", timeout=START_TIMEOUT)
        assert idle, s.runner.text()
        yield s
    finally:
        s.close()
        s.runner.stop(timeout=15.0)
        print(s.runner.text()[-6000:])


# Added to every page before its own scripts: viser's client talks to its server through a Web Worker
# (the WebSocket lives there), so the probe wraps Worker: it counts the message batches the worker hands
# to the page (one per server flush), those with a scene update (not only GUI widgets), and their
# messages by type, keeps what the page sends, and keeps
# the worker, through which a test can send a message as the page would (a forged request).
_PAGE_PROBE = """
(() => {
  // The 3D view is hidden (not rendered) while <html> has the class no3d: from the start with the query
  // salamander_no3d, then as Page.draw_3d says (viser stops rendering a canvas that is out of view).
  // This script runs before the parser made <html>: the rule goes in once it exists.
  const no3d = () => {
    const style = document.createElement("style");
    style.textContent = "html.no3d div:has(> div > div > canvas[data-engine]) { display: none !important; }";
    document.documentElement.appendChild(style);
    if (location.search.includes("salamander_no3d")) document.documentElement.classList.add("no3d");
  };
  if (document.documentElement) no3d();
  else new MutationObserver((_, seen) => {
    if (document.documentElement) { seen.disconnect(); no3d(); }
  }).observe(document, {childList: true});
  const Base = window.Worker;
  const probe = window.__probe = {batches: [], scene: [], types: {}, sent: [], worker: null};
  window.Worker = class extends Base {
    constructor(...args) {
      super(...args);
      probe.worker = this;
      this.addEventListener("message", (e) => {
        const d = e.data;
        if (!d || d.type !== "message_batch") return;
        probe.batches.push(performance.now());
        if (d.messages.some((m) => !m.type.startsWith("Gui"))) probe.scene.push(performance.now());
        for (const m of d.messages) probe.types[m.type] = (probe.types[m.type] || 0) + 1;
      });
    }
    postMessage(data, ...rest) {
      if (data && data.type === "send" && data.message) probe.sent.push(JSON.stringify(data.message));
      return super.postMessage(data, ...rest);
    }
  };
})();
"""


def _driver(profile: Path) -> webdriver.Chrome:
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,900",
                f"--user-data-dir={profile}"):  # fmt: skip
        options.add_argument(arg)
    # The browser on one core (chromedriver's, which Chromium's processes inherit): on the robot it runs
    # on the operator's machine, here it shares 2 cores with the stack under test, and a page loading and
    # drawing its 3D view in software otherwise starved the stack until its own guards stopped the run
    # (the behaviour server's joint states "stale: 0.54 s old"). A lower priority does not hold: Chromium
    # sets its processes' own (as root, up to -8).
    cpus = sorted(os.sched_getaffinity(0))
    one_core = {"preexec_fn": lambda: os.sched_setaffinity(0, cpus[-1:])} if len(cpus) > 1 else {}
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER, popen_kw=one_core), options=options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _PAGE_PROBE})
    driver.set_script_timeout(STEP_TIMEOUT)  # a busy page runs a test's script late, not never
    return driver


@pytest.fixture(scope="module")
def browser():
    profile = Path(tempfile.mkdtemp(prefix="salamander_chromium_"))  # a fresh profile, removed after
    driver = _driver(profile)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def page(stack, browser):
    """The stack's page, loaded once for the tests that use it (a load costs seconds on a busy machine);
    its 3D view hidden until a test shows it (test 3 loads a drawn one for its screenshot)."""
    return Page(browser, stack.address())


_FIRST = ("const first = (xpath) => document.evaluate("
          "xpath, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;")


class Page:
    """The page in the browser: DOM reads and clicks by label, screenshots as RGB arrays.

    Selectors follow viser 1.1.1's DOM (salamander_view/page.py): a button is a <button> with its label
    as text and its GUI id as `id`; an input's label is a <label> (split by <wbr> after "_", so its text
    still normalises to the label), whose `for` is a checkbox's id; a text field is the <input> in the
    label's row.

    Every read and click is one script in the page: it finds the element and uses it in the same turn of
    the page's event loop. React re-renders the panel at any time (the status rows several times a
    second), so an element found by one WebDriver call can be replaced before the next one reads it
    (a StaleElementReferenceException, seen in CI on the reasons list).
    """

    def __init__(self, driver, url: str, draw_3d: bool = False) -> None:
        self.driver = driver
        driver.get(url if draw_3d else f"{url}/?salamander_no3d")
        # The scene comes first, then the panel.
        self.until(lambda: self.enabled("start run") is not None, "the panel", START_TIMEOUT)

    def until(self, predicate, what: str, timeout: float = STEP_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"page: timed out waiting for {what}\n{self.text()}")

    def text(self) -> str:
        return self.driver.find_element(By.TAG_NAME, "body").text

    def draw_3d(self, on: bool) -> None:
        """Show or hide the 3D view (hidden from the start unless Page(..., draw_3d=True)). Hidden,
        viser's client does not render (its canvas is out of view) and applies every update without
        drawing it: Chromium's software WebGL on a busy 2-core machine otherwise lags the whole page
        (buttons, status) by many seconds. Shown for the pixel checks (test 3's screenshot loads
        a drawn page: shown after a run's half minute hidden, Chromium blocked for minutes)."""
        self.driver.execute_script("document.documentElement.classList.toggle('no3d', !arguments[0]);", on)

    def _button(self, label: str, then: str):
        """Run `then` (JS, on the button `b` labelled `label`, or null while the panel has none)."""
        return self.driver.execute_script(_FIRST + f"const b = first(arguments[0]); {then}",
                                          f"//button[normalize-space(.)='{label}']")  # fmt: skip

    def enabled(self, label: str) -> bool | None:
        """Whether the button `label` is enabled (None while the panel has no such button)."""
        return self._button(label, "return b === null ? null : !b.disabled;")

    def click(self, label: str) -> None:
        click = "if (b === null || b.disabled) return false; b.click(); return true;"
        self.until(lambda: self._button(label, click), f"'{label}' enabled and clicked")

    def _checkbox(self, label: str, then: str):
        """Run `then` (JS, on the checkbox `c` whose <label> reads `label`, or null while there is none)."""
        find = "const l = first(arguments[0]); const c = l && document.getElementById(l.htmlFor);"
        return self.driver.execute_script(f"{_FIRST} {find} {then}", f"//label[normalize-space(.)='{label}']")

    def checkbox_enabled(self, label: str) -> bool | None:
        return self._checkbox(label, "return c ? !c.disabled : null;")

    def checked(self, label: str) -> bool | None:
        return self._checkbox(label, "return c ? c.checked : null;")

    def toggle(self, label: str) -> None:
        """Click the (enabled) checkbox `label`, as a user does."""
        click = "if (!c || c.disabled) return false; c.click(); return true;"
        self.until(lambda: self._checkbox(label, click), f"'{label}' enabled and clicked")

    def type_into(self, label: str, text: str) -> None:
        """Replace the text of the field `label` by keystrokes (focused and selected in the page, typed into
        whatever has the focus: no element reference to go stale), then wait until the page has sent it."""
        row = f"//label[normalize-space(.)='{label}']/ancestor::div[contains(@class, 'mantine-Flex-root')][1]"
        focus = _FIRST + "const f = first(arguments[0]); f?.focus(); f?.select(); return f !== null;"
        self.until(lambda: self.driver.execute_script(focus, f"{row}//input"), f"the field '{label}'")
        before = len(self.sent())
        self.press_key(Keys.BACKSPACE + text)  # not clear(): React keeps its own copy of the value
        sent = f'"value":{json.dumps(text)}'
        self.until(lambda: any(sent in m for m in self.sent()[before:]), f"the page sending '{label}'")

    def press_key(self, key: str) -> None:
        ActionChains(self.driver).send_keys(key).perform()

    def reasons(self) -> list[str]:
        labels = "document.querySelectorAll('.mantine-List-itemLabel')"
        return self.driver.execute_script(f"return Array.from({labels}, (e) => e.innerText.trim());")

    def sent(self) -> list[str]:
        return self.driver.execute_script("return window.__probe.sent;")

    def forge_click(self, label: str) -> None:
        """Send what a click on button `label` sends, through the page's own connection, whether the
        button is enabled or not (a tampered or stale page)."""
        uuid = self._button(label, "return b && b.id;")
        click = {"type": "GuiUpdateMessage", "uuid": uuid, "updates": {"value": True}}
        message = {"type": "send", "message": click}
        self.driver.execute_script("window.__probe.worker.postMessage(arguments[0]);", message)

    def batches(self) -> tuple[float, int, int, dict[str, int]]:
        """(page time s, message batches received so far, of them with a scene update, messages by type)."""
        t, n, scene, types = self.driver.execute_script(
            "const p = window.__probe;"
            "return [performance.now(), p.batches.length, p.scene.length, p.types];")
        return t / 1000.0, n, scene, dict(types)

    def dismiss_notices(self) -> None:
        """Close viser's notifications (headless Chromium gets "Software WebGL rendering detected")."""
        self.driver.execute_script(
            "document.querySelectorAll('.mantine-Notification-closeButton').forEach((b) => b.click());")
        self.until(lambda: not self.driver.find_elements(By.CSS_SELECTOR, ".mantine-Notification-root"),
                   "the notifications closed")  # fmt: skip

    def offset(self) -> tuple[float, float, float] | None:
        match = OFFSET_ROW.search(self.status("place offset"))
        return None if match is None else tuple(float(v) for v in match.groups())

    def status(self, what: str) -> str:
        script = _FIRST + "const c = first(arguments[0]); return c ? c.innerText.trim() : '';"
        return self.driver.execute_script(script, f"//td[normalize-space(.)='{what}']/following-sibling::td")

    def screenshot(self, path: Path | None = None) -> np.ndarray:
        png = self.driver.get_screenshot_as_png()
        if path is not None:
            path.write_bytes(png)
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)


def own_address() -> str:
    """This machine's first non-loopback IPv4 address, or 0.0.0.0 (every interface) when it has none."""
    for addrs in psutil.net_if_addrs().values():
        for a in addrs:
            if a.family == socket.AF_INET and not a.address.startswith("127."):
                return a.address
    return "0.0.0.0"


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def colour_counts(rgb: np.ndarray) -> dict[str, int]:
    """Pixels around the arm (it stands at the same place of every page: the camera starts fixed) by hue:
    the arm's orange (also where the light green ghost lies over it: yellowish), the green ghost and the
    red ghost (which, stronger, turns everything under it red). Only saturated pixels count (not the
    background, the grid, the table, the arm's dark and grey parts)."""
    from matplotlib.colors import rgb_to_hsv

    hsv = rgb_to_hsv(rgb[ARM_AREA] / 255.0)
    hue, coloured = hsv[..., 0] * 360.0, (hsv[..., 1] > 0.25) & (hsv[..., 2] > 0.2)
    arm = coloured & (hue >= 25) & (hue < 75)
    green = coloured & (hue >= 90) & (hue < 170)
    red = coloured & ((hue >= 330) | (hue < 20))  # the orange's shaded side reaches down to about 22
    return {"arm": int(arm.sum()), "green": int(green.sum()), "red": int(red.sum())}


@dataclass(frozen=True)
class Load:
    """The view's CPU (percent of one core) and what the page received over one window."""

    cpu_percent: float
    batches_per_s: float
    scene_batches_per_s: float
    messages: dict[str, int]
    view_frames_per_s: str


def measure(stack: Stack, page: Page, seconds: float = MEASURE_S) -> Load:
    """The stack's view process's CPU and the page's received batches over `seconds` (the test's node
    spins meanwhile; the window is the measurement, nothing waits on it)."""
    proc = stack.view_process()
    c0, w0 = sum(proc.cpu_times()[:2]), time.monotonic()
    t0, n0, s0, m0 = page.batches()
    stack.spin_until(lambda: False, seconds)
    c1, w1 = sum(proc.cpu_times()[:2]), time.monotonic()
    t1, n1, s1, m1 = page.batches()
    messages = {k: v - m0.get(k, 0) for k, v in m1.items() if v > m0.get(k, 0)}
    cpu, dt = 100.0 * (c1 - c0) / (w1 - w0), t1 - t0
    return Load(cpu, (n1 - n0) / dt, (s1 - s0) / dt, messages, page.status("view"))


def save_modest_png(png: bytes, path: Path, limit: int = SCREENSHOT_LIMIT) -> int:
    """Write the screenshot as a PNG under `limit` bytes (palette, then smaller, as needed); its size."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    for scale in (1.0, 0.8, 0.65, 0.5):
        sized = image if scale == 1.0 else image.resize((int(image.width * scale), int(image.height * scale)))
        out = io.BytesIO()
        sized.quantize(colors=192, method=Image.Quantize.MEDIANCUT).save(out, "PNG", optimize=True)
        if out.tell() <= limit:
            break
    path.write_bytes(out.getvalue())
    return out.tell()


# --- the tests --------------------------------------------------------------------------------------------


def test_arm_drawn_ghost_green_at_rest_and_red_outside_the_iks_domain(stack, page, tmp_path):
    page.draw_3d(True)
    page.until(lambda: page.status("IK ghost") == "ok", "the ghost's status 'ok' on the page")
    def shot(name: str) -> dict[str, int]:
        return colour_counts(page.screenshot(tmp_path / name))

    rest = page.until(lambda: (c := shot("rest.png"))["green"] > 300 and c, "a green ghost drawn")
    assert rest["arm"] > 300 and rest["red"] < 0.05 * rest["green"], rest

    p_tcp = forward_kinematics(POSE_P).tcp
    since = len(stack.ghost)
    stack.send_joints(POSE_P)
    stack.wait(lambda: any(g.reason == "ok" and math.dist((g.tcp.x, g.tcp.y, g.tcp.z), p_tcp) < 2e-3
                           for g in stack.ghost[since:]), "the arm at P, the ghost green")  # fmt: skip
    # Slow the shoulder and beam, then narrow alpha_max under the arm: the generator walks it back onto
    # the new bound slowly, and meanwhile the pose is outside the IK's domain.
    stack.set_generator(**{"max_velocity.shoulder_pitch": 0.01, "max_velocity.beam_pitch": 0.01})
    try:
        stack.set_generator(alpha_max=1.10)
        reason = "the ghost's reason on the page"
        page.until(lambda: page.status("IK ghost") == "coupled_limit", reason, 45.0)
        red = page.until(lambda: (c := shot("red.png"))["red"] > 300 and c, "a red ghost drawn", 45.0)
        assert red["green"] < 0.05 * red["red"], red
    finally:
        stack.set_generator(alpha_max=1.40)
        stack.set_generator(**{"max_velocity.shoulder_pitch": 1.0, "max_velocity.beam_pitch": 1.0})
    page.until(lambda: page.status("IK ghost") == "ok", "the ghost green again")


def test_manual_place_checkbox_sets_the_parameter_and_follows_it_without_echo(stack, page):
    page.draw_3d(False)
    before = stack.get_param("manual_place")
    assert isinstance(before, bool)
    page.until(lambda: page.checked("manual_place") is before, "the checkbox showing the parameter")
    for want in (not before, before):
        mark = stack.log_mark()
        page.toggle("manual_place")
        stack.param_becomes("manual_place", want)
        stack.logged(f"operator view: manual_place := {want} (client", since=mark)
        page.until(lambda w=want: page.checked("manual_place") is w, f"the checkbox at {want}")
    # Changed elsewhere (salamanderctl, another tab): the page follows and writes nothing back.
    mark = stack.log_mark()
    for want in (not before, before):
        assert stack.set_param("manual_place", want).successful
        page.until(lambda w=want: page.checked("manual_place") is w, f"the checkbox following {want}")
    assert "operator view: manual_place :=" not in stack.said_since(mark), stack.said_since(mark)


def test_a_run_from_the_page_start_nudge_confirm_cancel(stack, browser, page, record_property):
    page.draw_3d(False)  # what the page receives does not depend on its drawing (Page.draw_3d)
    assert stack.set_param("manual_place", True).successful
    page.until(lambda: page.checked("manual_place") is True, "the checkbox showing manual_place")
    page.until(lambda: page.enabled("start run") and not page.enabled("cancel run"), "start run enabled")
    assert not page.enabled("+x") and "nudge: not waiting for the operator" in page.reasons()
    idle = measure(stack, page)

    mark = stack.log_mark()
    page.click("start run")
    stack.logged("operator view: start run (client", "RunPickPlace goal accepted", "run started", since=mark)
    stack.wait(lambda: stack.holder() == "behavior_server", "the run holding the lease", RUN_TIMEOUT)
    page.until(lambda: page.status("run").startswith("running"), "the page saying running")
    page.until(lambda: page.enabled("cancel run") and not page.enabled("start run"), "cancel run enabled")
    running = measure(stack, page)  # the arm on its way to can_0
    for name, load in (("idle", idle), ("run", running)):
        print(f"operator view {name}: CPU {load.cpu_percent:.1f} % of one core, page received "
              f"{load.batches_per_s:.1f} batches/s, {load.scene_batches_per_s:.1f} with a scene update "
              f"({load.view_frames_per_s} by the view's count), messages {load.messages}")  # fmt: skip
        record_property(f"view_cpu_percent_{name}", round(load.cpu_percent, 1))
        record_property(f"page_scene_updates_per_s_{name}", round(load.scene_batches_per_s, 1))
    assert running.scene_batches_per_s > 2.0, running  # the moving arm reaches the page

    # ManualAdjust waits for the operator (for at most 120 s, its timeout).
    page.until(lambda: page.enabled("+x"), "the nudge buttons enabled (ManualAdjust waiting)", RUN_TIMEOUT)
    waiting = "ManualAdjust[place_can_0] [*] -- waiting for the operator"
    stack.wait(lambda: waiting in stack.tree, "the tree waiting in ManualAdjust[place_can_0]")
    assert page.offset() == (0.0, 0.0, 0.0) == stack.tree_offset(), page.status("place offset")
    if SCREENSHOT_OUT:  # the README's picture: the can over its compartment, the nudges enabled
        # On the page loaded again with its 3D view drawn from the start: the hidden view shown again
        # after the run's half minute blocked Chromium for longer than chromedriver's 120 s, and a page
        # drawn all along receives almost nothing of the run on the starved machine (measured above).
        page = Page(browser, stack.address(), draw_3d=True)
        page.dismiss_notices()
        page.until(lambda: page.enabled("+x") and page.offset() == (0.0, 0.0, 0.0), "the new page waiting")
        page.until(lambda: colour_counts(page.screenshot())["arm"] > 300, "the arm drawn")
        png = browser.get_screenshot_as_png()
        assert page.enabled("+x"), "the wait ended before the screenshot"  # so it shows the wait
        print(f"screenshot: {SCREENSHOT_OUT} ({save_modest_png(png, Path(SCREENSHOT_OUT))} bytes)")
        page = Page(browser, stack.address())  # hidden again for the rest
        page.until(lambda: page.enabled("+x"), "the nudge buttons enabled on the page loaded again")

    # Each nudge: the view's twists along its axis at nudge_speed, then a zero one; the tree's offset
    # moves along that axis only, then holds still, and the page shows it. How far one nudge goes
    # (nominally 5 mm) is the twists' arrival times at the tree: on a starved machine anything from a
    # few mm to a few more (the box is roomy for that, Stack). Out and back, by a button and a key on each.
    def nudge(what: str, act, axis: tuple[float, float, float]) -> tuple[float, float, float]:
        before, since, sent = stack.tree_offset(), len(stack.offsets), len(stack.jogs)
        act()
        stack.jog_step(sent, axis, f"the twists of {what}")
        after = stack.settled_offset(since, before, f"the tree's offset after {what}")
        step = [a - b for a, b in zip(after, before, strict=True)]
        along = sum(d * c for d, c in zip(step, axis, strict=True))
        across = [d for d, c in zip(step, axis, strict=True) if c == 0.0]
        assert 0.0 < along <= 15.0 and across == [0.0, 0.0], (what, before, after)
        page.until(lambda: page.offset() == after, f"the page showing the offset {after} mm")
        print(f"nudge {what}: the tree's offset {before} -> {after} mm")
        return after

    nudge("+x", lambda: page.click("+x"), (1.0, 0.0, 0.0))
    nudge("key J", lambda: page.press_key("j"), (0.0, 1.0, 0.0))
    nudge("-x", lambda: page.click("-x"), (-1.0, 0.0, 0.0))
    final = nudge("key L", lambda: page.press_key("l"), (0.0, -1.0, 0.0))

    mark = stack.log_mark()
    page.click("confirm")
    stack.wait(lambda: stack.confirms == [True], "operator/confirm true")
    # The wait ends and the tree goes on to the release: the simulated cell's valve closes and the can
    # lands in its compartment (the cell's own lines: an error line of the tree also says "vacuum off").
    x, y, z = (v + 0.0 for v in final)  # + 0.0: "0.0", never "-0.0", as the server writes it
    confirmed = f"ManualAdjust[place_can_0]: confirmed, offset [{x:.1f}, {y:.1f}, {z:.1f}] mm"
    released = ("cell_sim]: vacuum off: can_0 lets go", "cell_sim]: can_0 ", "(compartment 0; clearance mm")
    stack.logged(confirmed, *released, since=mark, timeout=RUN_TIMEOUT)
    page.until(lambda: page.status("can_0") == "placed", "the page saying can_0 placed", RUN_TIMEOUT)
    page.until(lambda: not page.enabled("+x"), "the nudge buttons disabled again")

    mark = stack.log_mark()
    page.click("cancel run")
    stack.logged("operator view: cancel run (client", "RunPickPlace: cancel requested", "run cancelled",
                 since=mark)  # fmt: skip
    stack.wait(lambda: stack.holder() == "", "the lease free after the cancel", 10.0)
    page.until(lambda: page.status("run").startswith("cancelled"), "the page saying cancelled")
    again = "start run enabled again"
    page.until(lambda: page.enabled("start run") and not page.enabled("cancel run"), again)


def test_new_box_resets_the_box_estimate_the_status_shows(stack, page):
    """After the run above, whose confirmed can_0 is evidence of the box: the row shows an estimate, and
    "new box" resets it (before, this ran on a fresh stack whose row read "none yet" from the start)."""
    page.draw_3d(False)

    def estimated() -> bool:
        row = page.status("box estimate")
        return row != "" and not row.startswith("none yet")

    page.until(estimated, "the box estimate from can_0's confirm")
    page.until(lambda: page.enabled("new box"), "new box enabled (no run)")
    mark = stack.log_mark()
    page.click("new box")
    stack.logged("operator view: new box (client", "new box: the box estimate is reset", since=mark)
    page.until(lambda: page.status("box estimate").startswith("none yet"), "the page showing no estimate")


def test_on_an_open_address_the_controls_need_the_token(stack, browser, tmp_path):
    host = own_address()
    port = free_port(host)
    token = secrets.token_urlsafe(12)
    ros_args = [a.replace("__node:=operator_view", "__node:=operator_view_open")
                for a in stack_ros_args(names.OPERATOR_VIEW)]  # fmt: skip
    cmd = [find_executable("operator_view"), "--ros-args", *ros_args,
           "-p", f"host:={host}", "-p", f"port:={port}", "-p", f"access_token:={token}"]  # fmt: skip
    with ChildProcess(cmd, ros_env(stack.domain), tmp_path / "open_view.log") as view:
        started = view.wait_for_text("operator view: http://", "need the access token", timeout=START_TIMEOUT)
        assert started, view.describe()
        page = Page(browser, f"http://{'127.0.0.1' if host == '0.0.0.0' else host}:{port}")
        page.until(lambda: page.status("IK ghost") == "ok", "the ghost's status on the locked page")
        locked = "start run: enter the access token first"
        page.until(lambda: locked in page.reasons(), "the reason on the locked page")
        assert all(r.endswith("enter the access token first") for r in page.reasons()), page.reasons()
        assert not page.enabled("start run") and not page.checkbox_enabled("manual_place")
        # A start_run sent anyway (a tampered page): refused, logged, nothing started.
        before = stack.get_param("manual_place")
        view_mark, stack_mark = len(view.lines), stack.log_mark()
        page.forge_click("start run")
        assert view.wait_for_text("refused start_run from client", "no access token entered",
                                  since=view_mark, timeout=STEP_TIMEOUT), view.describe()  # fmt: skip
        # A wrong token unlocks nothing (and the forged request above was never queued: no trace of it).
        page.type_into("access token", token[::-1])
        page.click("unlock")
        wrong = view.wait_for_text("wrong access token", since=view_mark, timeout=STEP_TIMEOUT)
        assert wrong, view.describe()
        assert locked in page.reasons() and not page.enabled("start run")
        assert "operator view: start run" not in view.text()
        assert "RunPickPlace goal" not in stack.said_since(stack_mark), stack.said_since(stack_mark)
        # The 3D view is readable too: the locked page received the scene (the arm's meshes) and follows
        # the arm (its joint frames' orientations); test 1 checks that such a page draws them.
        _, _, _, got = page.batches()
        assert got.get("GlbMessage", 0) + got.get("MeshMessage", 0) >= 5, got
        orientations = got.get("SetOrientationMessage", 0)
        stack.send_joints(POSE_P)  # an anonymous goal (the lease is free): test 1's pose, clear of the cell
        page.until(lambda: page.batches()[3].get("SetOrientationMessage", 0) > orientations + 5,
                   "the locked page following the arm")  # fmt: skip
        # The token typed into the page: the controls apply.
        page.type_into("access token", token)
        page.click("unlock")
        page.until(lambda: page.enabled("start run"), "start run enabled with the token")
        assert locked not in page.reasons()
        view_mark = len(view.lines)
        page.toggle("manual_place")
        stack.param_becomes("manual_place", not before)
        assert view.wait_for_text(f"manual_place := {not before} (client", since=view_mark), view.describe()
        page.toggle("manual_place")
        stack.param_becomes("manual_place", before)
