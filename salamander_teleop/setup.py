"""ament_python package setup of salamander_teleop."""

from setuptools import find_packages, setup

PACKAGE = "salamander_teleop"

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
    description="salamander_teleop of the Salamander arm.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "controller_node = salamander_teleop.nodes.controller_node:main",
            "gamepad_node = salamander_teleop.nodes.gamepad_node:main",
        ]
    },
)
