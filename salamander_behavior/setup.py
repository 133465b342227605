"""ament_python package setup of salamander_behavior."""

from setuptools import find_packages, setup

PACKAGE = "salamander_behavior"

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
    description="salamander_behavior of the Salamander arm.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "behavior_server_node = salamander_behavior.nodes.behavior_server_node:main",
        ]
    },
)
