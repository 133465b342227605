"""A node of the stack started as a subprocess in a test's DDS domain, stopped cleanly afterwards.

Runs the installed console script (the entry point `ros2 run` / the launch file use), with the node's
name, namespace and parameters given on the command line. stderr (where ROS logs go) is written to a
file, so a test can wait for a log line and show the node's output when an assertion fails.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from salamander_control.testing import REPO as REPO_ROOT
from salamander_control.testing.ros_helpers import ros_env

REPO = REPO_ROOT
EXECUTABLES = REPO / "install" / "salamander_control" / "lib" / "salamander_control"


def _param_arg(name: str, value: object) -> str:
    if isinstance(value, bool):
        return f"{name}:={'true' if value else 'false'}"
    if isinstance(value, float):
        return f"{name}:={value!r}"  # repr keeps the decimal point: 20.0 stays a double
    return f"{name}:={value}"


class NodeProcess:
    """One running node.

    Args:
        executable: console script name in install/salamander_control/lib/salamander_control.
        fqn: fully qualified node name, e.g. "/arm/arm_kinematics_node".
        domain_id: the test's ROS_DOMAIN_ID.
        log_dir: where the stderr file goes (a pytest tmp_path).
        params: parameters to pass with ``-p``.
        params_file: a ``--params-file`` to pass.
        module: run ``python -m <module>`` instead of the console script (a node whose entry point
            is not built in this tree yet); `executable` is then ignored.
    """

    def __init__(
        self,
        executable: str,
        fqn: str,
        domain_id: int,
        log_dir: Path,
        params: dict[str, object] | None = None,
        params_file: Path | None = None,
        module: str | None = None,
    ) -> None:
        namespace, _, name = fqn.rpartition("/")
        cmd = [sys.executable, "-m", module] if module else [str(EXECUTABLES / executable)]
        cmd += ["--ros-args"]
        cmd += ["-r", f"__ns:={namespace or '/'}", "-r", f"__node:={name}"]
        if params_file is not None:
            cmd += ["--params-file", str(params_file)]
        for key, value in (params or {}).items():
            cmd += ["-p", _param_arg(key, value)]
        self.cmd = cmd
        self.stderr_path = log_dir / f"{name}.stderr.log"
        env = {**ros_env(domain_id), "RCUTILS_LOGGING_BUFFERED_STREAM": "0", "PYTHONUNBUFFERED": "1"}
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)

    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.proc.poll() is None

    def stderr_text(self) -> str:
        """Everything the node wrote to stderr so far."""
        return self.stderr_path.read_text(errors="replace")

    def describe(self) -> str:
        """Command, state and the tail of stderr: the message to attach to a failed assertion."""
        state = "running" if self.alive() else f"exited with {self.proc.returncode}"
        return f"{' '.join(self.cmd)}\n[{state}] stderr:\n{self.stderr_text()[-4000:]}"

    def stop(self, timeout: float = 10.0) -> int:
        """SIGINT, then SIGKILL after `timeout` s; returns the exit code."""
        if self.alive():
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout)
        return self.proc.returncode
