"""ament_python package setup of salamander_sim."""

from setuptools import find_packages, setup

PACKAGE = "salamander_sim"

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
        "The Salamander arm's simulated hardware: the motor driver, the work cell (MuJoCo physics "
        "or a kinematic engine) and the simulated operator."
    ),
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "sim_hardware = salamander_sim.nodes.sim_hardware:main",
            "cell_sim = salamander_sim.nodes.cell_sim:main",
            "sim_operator = salamander_sim.nodes.sim_operator:main",
        ]
    },
)
