"""The behaviour server node's tree snapshot (nodes/behavior_server_node.py), without ROS."""

from __future__ import annotations

from salamander_behavior.plan import load_jobs
from salamander_testing import REPO

CELL = REPO / "config" / "cell.yaml"


def test_snapshot_shows_every_behavior_with_its_status() -> None:
    from salamander_behavior.mock.ports import Rig
    from salamander_behavior.nodes.behavior_server_node import snapshot_text

    rig = Rig(load_jobs(CELL)[:1])
    rig.run(until=lambda: len(rig.motion.labels) == 3)
    text = snapshot_text(rig.root, rig.report)
    assert text.splitlines()[0] == "run: RUNNING (0 placed, 0 missed, 0 skipped, 0 aborted)"
    assert "above can_0 [✓]" in text and "lift can_0 [*]" in text and "place_release [-]" in text
    assert "ManualAdjust[place_can_0]" in text
