"""Fixtures shared by the tests; the ROS ones build on `salamander_testing.ros_helpers`."""

import pytest
from hypothesis import settings

# Deterministic property tests: the same examples on every run (CI must not turn red by chance). Each test
# still draws thousands of examples; a failure prints the blob to reproduce it.
settings.register_profile("salamander", derandomize=True, print_blob=True)
settings.load_profile("salamander")


@pytest.fixture(autouse=True)
def own_ros_home(tmp_path_factory, monkeypatch):
    """Every test gets its own ROS_HOME (inherited by the nodes it starts): the behaviour server keeps its
    run progress there (salamander_behavior/progress.py), which must not leak from one test into another
    (nor from a developer's ~/.ros into a test)."""
    home = tmp_path_factory.mktemp("ros_home")
    monkeypatch.setenv("ROS_HOME", str(home))
    return home


@pytest.fixture
def ros_context():
    """An initialised rclpy Context on a DDS domain of its own; shut down after the test."""
    import rclpy
    from rclpy.context import Context

    from salamander_testing.ros_helpers import next_domain_id

    context = Context()
    rclpy.init(context=context, domain_id=next_domain_id())
    yield context
    context.try_shutdown()


@pytest.fixture
def ros_executor(ros_context):
    """A SingleThreadedExecutor of `ros_context`; use with ros_helpers.spin_until."""
    from rclpy.executors import SingleThreadedExecutor

    executor = SingleThreadedExecutor(context=ros_context)
    yield executor
    executor.shutdown()


@pytest.fixture
def make_node(ros_context, ros_executor):
    """Factory: make_node(name) -> rclpy Node in `ros_context`, added to `ros_executor`, destroyed after."""
    from rclpy.node import Node

    nodes = []

    def make(name: str, **kwargs) -> Node:
        node = Node(name, context=ros_context, **kwargs)
        ros_executor.add_node(node)
        nodes.append(node)
        return node

    yield make
    for node in nodes:
        ros_executor.remove_node(node)
        node.destroy_node()
