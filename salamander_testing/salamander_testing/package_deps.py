"""What each package imports, as the keys its package.xml must name for `rosdep install --from-paths .`.

`ROSDEP_KEYS` maps a top-level import to its rosdep key: a ROS package's own name (``rclpy``,
``sensor_msgs``), the distribution's Python package where rosdep has one (``python3-numpy``), and the
pip key (``python3-<name>-pip``, rosdep's naming for what only PyPI ships) where not. test/test_package_xml.py
compares every package's imports with its package.xml through this table; docs/architecture.md says why.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

ROSDEP_KEYS = {
    "numpy": "python3-numpy",
    "yaml": "python3-yaml",
    "matplotlib": "python3-matplotlib",
    "psutil": "python3-psutil",
    "evdev": "python3-evdev",
    "scipy": "python3-scipy",
    "hypothesis": "python3-hypothesis",
    "pytest": "python3-pytest",
    "py_trees": "python3-py-trees",
    "trimesh": "python3-trimesh",
    "selenium": "python3-selenium",
    "ruckig": "python3-ruckig-pip",
    "mujoco": "python3-mujoco-pip",
    "viser": "python3-viser-pip",
    "yourdfpy": "python3-yourdfpy-pip",
}
"""Non-ROS imports and their keys; any other import is a ROS package named as it is imported."""


def rosdep_key(top: str) -> str:
    """The package.xml key of a top-level import name."""
    return ROSDEP_KEYS.get(top, top)


def declared(package_xml: Path) -> dict[str, set[str]]:
    """The keys a package.xml names, by kind: 'exec' (exec_depend, depend) and 'test' (test_depend)."""
    root = ET.parse(package_xml).getroot()
    exec_keys = {e.text.strip() for e in root.iter() if e.tag in ("exec_depend", "depend") and e.text}
    test_keys = {e.text.strip() for e in root.iter() if e.tag == "test_depend" and e.text}
    return {"exec": exec_keys, "test": test_keys}
