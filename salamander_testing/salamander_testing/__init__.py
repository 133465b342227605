"""Test support shared by the tests of every Salamander package (not used by the nodes).

`REPO` is the repository root: the folder that holds `launch/`, `config/` and `urdf/`. The tests read
those files from the source tree, so the suite runs the same from `pytest` at the root and from
`colcon test` inside a package. Fixtures: `salamander_testing.fixtures` (each `test/conftest.py`
imports them); ROS helpers: `ros_helpers`; processes a test starts: `process` (`ChildProcess`: output,
waits on it, clean stop) and `node_process` (`NodeProcess`: a node placed as the launch file places it);
the URDF's forward kinematics: `urdf_chain`.
"""

from __future__ import annotations

from pathlib import Path


def _find_repo() -> Path:
    here = Path(__file__).resolve()
    for candidate in (*here.parents, *Path.cwd().resolve().parents, Path.cwd().resolve()):
        if (candidate / "launch" / "arm_control.launch.xml").is_file() and (candidate / "config").is_dir():
            return candidate
    raise RuntimeError(f"no Salamander source tree above {here} or {Path.cwd()}")


REPO = _find_repo()
