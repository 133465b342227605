"""ament_python package setup of salamander_view."""

from setuptools import find_packages, setup

PACKAGE = "salamander_view"

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
    description="salamander_view of the Salamander arm: the browser operator view.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "operator_view = salamander_view.nodes.operator_view:main",
        ]
    },
)
