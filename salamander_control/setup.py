"""ament_python package setup of salamander_control."""

from setuptools import find_packages, setup

PACKAGE = "salamander_control"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="Salamander developers",
    maintainer_email="salamander-dev@example.com",
    description="Kinematics, trajectory generation and simulated hardware of the Salamander arm.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "trajectory_generator = salamander_control.nodes.trajectory_generator:main",
            "sim_hardware = salamander_control.nodes.sim_hardware:main",
            "arm_kinematics_node = salamander_control.nodes.arm_kinematics_node:main",
            "arm_cartesian_motion_node = salamander_control.nodes.arm_cartesian_motion_node:main",
            "ik_ghost_node = salamander_control.nodes.ik_ghost_node:main",
            "salamanderctl = salamander_control.tools.ctl:main",
            "workspace_plot = salamander_control.tools.workspace_plot:main",
        ],
    },
)
