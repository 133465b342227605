"""ament_python package setup of salamander_bringup."""

from setuptools import find_packages, setup

PACKAGE = "salamander_bringup"

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
    description=(
        "Bring-up of the Salamander stack without ros2 launch (the launch-file runner, respawn), "
        "the operator CLI salamanderctl and the operator tools."
    ),
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "salamanderctl = salamander_bringup.cli.ctl:main",
            "workspace_plot = salamander_bringup.tools.workspace_plot:main",
        ]
    },
)
