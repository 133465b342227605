"""ament_python package setup of salamander_testing."""

from setuptools import find_packages, setup

PACKAGE = "salamander_testing"

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
        "The Salamander test kit: fixtures, process helpers, a stand-in robot and hypothesis "
        "strategies shared by every package's tests."
    ),
    license="Apache-2.0",
)
