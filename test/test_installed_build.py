"""An installed (non-symlink) colcon build finds the arm's URDF; without one the server says so in a line.

Issue 9.4: the behaviour server looked for the URDF only in the source tree, so a plain
``colcon build`` (no ``--symlink-install``) copied elsewhere would crash with a traceback when a run
built its limit guard. Here salamander_control and salamander_behavior are built WITHOUT
``--symlink-install`` into a temporary folder (once for the module: ~1 min on this machine), and
everything runs from that install with the source tree hidden (not on PYTHONPATH, not the working
directory; only salamander_msgs comes from the repository's own install):

- `find_urdf` / `default_urdf_path` return the installed share copy (a real file, not a link into the
  tree) and the guard's limits load from it;
- the behaviour server starts from the install (idle, holding no lease);
- with salamander_control missing from the ament index, the lookup raises one line naming where it
  looked, and the server stops at start-up with exit code 1 and that line, no traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from salamander_testing import REPO
from salamander_testing.process import ChildProcess
from salamander_testing.ros_helpers import next_domain_id

PACKAGES = ("salamander_control", "salamander_behavior")
PY = f"python{sys.version_info.major}.{sys.version_info.minor}"
BUILD_TIMEOUT = 280.0  # s; ~1 min on this machine, more under the shared load
SHARE_URDF = Path("share/salamander_control/urdf/salamander.urdf")
LOOKUP = """
import json
import salamander_behavior.limits.urdf_limits as ul
import salamander_control.urdf as u
try:
    path = ul.default_urdf_path()
except u.UrdfNotFoundError as exc:
    print(json.dumps({"module": u.__file__, "error": str(exc)}))
else:
    names = [limit.name for limit in ul.load_urdf_limits()]
    print(json.dumps({"module": u.__file__, "urdf": str(path), "joints": names}))
"""


@pytest.fixture(scope="module")
def install(tmp_path_factory) -> Path:
    """salamander_control + salamander_behavior built without --symlink-install (once per module)."""
    root = tmp_path_factory.mktemp("installed_build")
    cmd = [
        "colcon", "--log-base", str(root / "log"), "build", "--base-paths", *PACKAGES,
        "--build-base", str(root / "build"), "--install-base", str(root / "install"),
    ]  # fmt: skip
    done = subprocess.run(
        cmd, cwd=REPO, capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False
    )
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return root / "install"


def hidden_env(install: Path, indexed: bool = True) -> dict[str, str]:
    """The environment of a process that sees the install, not the source tree."""
    msgs = REPO / "install" / "salamander_msgs"
    site = [install / p / "lib" / PY / "site-packages" for p in PACKAGES]
    site.append(msgs / "lib" / PY / "site-packages")
    prefixes = [install / p for p in PACKAGES if indexed or p != "salamander_control"]
    venv = os.environ.get("VIRTUAL_ENV", str(REPO / ".venv"))
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("COLCON_", "AMENT_", "PYTHONPATH"))
    }
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in site)
    env["AMENT_PREFIX_PATH"] = os.pathsep.join([*(str(p) for p in prefixes), str(msgs), venv])
    return env


def lookup(install: Path, cwd: Path, indexed: bool = True) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", LOOKUP], env=hidden_env(install, indexed), cwd=cwd, capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_installed_build_finds_its_own_urdf(install, tmp_path) -> None:
    found = lookup(install, tmp_path)
    assert found["module"].startswith(str(install)), found  # imported from the install, not the tree
    urdf = Path(found["urdf"])
    assert urdf == install / "salamander_control" / SHARE_URDF
    assert urdf.is_file() and not urdf.is_symlink()  # a copy: no --symlink-install
    assert sorted(found["joints"]) == ["base_yaw", "beam_pitch", "shoulder_pitch", "wrist_pitch", "wrist_yaw"]


def test_without_the_index_the_lookup_fails_with_one_line_naming_where_it_looked(install, tmp_path) -> None:
    found = lookup(install, tmp_path, indexed=False)
    error = found["error"]
    assert "\n" not in error
    assert "ament index" in error and "salamander_control" in error
    assert str(install / "salamander_control" / "lib") in error  # the (absent) source-tree location


def server(install: Path, cwd: Path, indexed: bool) -> ChildProcess:
    cmd = [
        sys.executable, "-m", "salamander_behavior.nodes.behavior_server_node", "--ros-args",
        "-p", f"cell_config:={REPO / 'config' / 'cell.yaml'}",
    ]  # fmt: skip
    env = {**hidden_env(install, indexed), "ROS_DOMAIN_ID": str(next_domain_id())}
    return ChildProcess(cmd, env, cwd=cwd)


@pytest.mark.ros
def test_the_server_starts_from_the_installed_build(install, tmp_path) -> None:
    with server(install, tmp_path, indexed=True) as proc:
        assert proc.wait_for_text("idle, holding no lease", timeout=60.0), proc.describe()
        assert "Traceback" not in proc.text()


@pytest.mark.ros
def test_the_server_without_a_urdf_stops_at_start_up_with_one_line(install, tmp_path) -> None:
    with server(install, tmp_path, indexed=False) as proc:
        assert proc.wait(timeout=60.0) == 1, proc.describe()
        lines = [line for line in proc.lines if "cannot start: the arm's URDF" in line]
        assert len(lines) == 1 and "[FATAL]" in lines[0], proc.describe()
        assert "Traceback" not in proc.text()
