"""ament_python package setup of salamander_control: the data files; the console scripts are in setup.cfg."""

import os
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "salamander_control"
# launch/ and config/ live at the repository root, next to this package folder. colcon runs setup.py
# from the source folder (plain build, package identification) but from build/<pkg>/ through a symlink
# (--symlink-install), so paths are taken from this file's real location and made relative to the
# current directory (colcon requires relative data_files). Installed as share/<pkg>/launch and
# share/<pkg>/config (with the rviz view, config/*.rviz) and share/<pkg>/urdf, so the launch file's
# $(dirname)/../config and $(dirname)/../urdf paths hold there as in the tree.
_REPO = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def _repo_files(pattern: str) -> list[str]:
    """Files of the repository root matching `pattern`, relative to the current directory."""
    return sorted(os.path.relpath(f) for f in glob(os.path.join(_REPO, pattern)))


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", _repo_files("launch/*.launch.xml")),
        (f"share/{PACKAGE}/config", _repo_files("config/*.yaml") + _repo_files("config/*.rviz")),
        (f"share/{PACKAGE}/urdf", _repo_files("urdf/*.urdf")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="Salamander developers",
    maintainer_email="salamander-dev@example.com",
    description=(
        "The Salamander arm: kinematics, trajectory generation, Cartesian motion, the IK ghost and "
        "their nodes."
    ),
    license="Apache-2.0",
)
