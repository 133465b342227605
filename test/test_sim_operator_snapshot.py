"""The simulated operator reads the ManualAdjust wait from the behaviour server's own tree snapshot.

The real tree (salamander_behavior's ports faked, as in its ManualAdjust tests) rendered by the
server's `snapshot_text`: the operator's reader (`sim.operator.perception.read_wait`) sees the wait with
the offset ManualAdjust integrated, agrees with the operator view's reader, and sees no wait once the
operator confirmed. A change of the leaf's feedback or of the snapshot layout fails here, not in a demo.
"""

from __future__ import annotations

import pytest
from py_trees.common import Status

from salamander_behavior.active_run import snapshot_text
from salamander_behavior.mock.ports import Rig
from salamander_behavior.params import BehaviorSettings
from salamander_behavior.plan import load_jobs
from salamander_sim.operator.perception import read_wait
from salamander_testing import REPO
from salamander_view.snapshot import parse

ADJUST = "ManualAdjust[place_can_0]"


def test_the_wait_its_offset_and_its_end_as_the_operator_reads_them():
    rig = Rig(load_jobs(REPO / "config" / "cell.yaml")[:1], settings=BehaviorSettings(manual_place=True))
    assert read_wait(snapshot_text(rig.root, rig.report)) is None  # not there yet
    rig.run(until=lambda: rig.leaf(ADJUST).status is Status.RUNNING)
    for _ in range(20):  # 1 s of +x at 4 mm/s, 20 Hz
        rig.jog(0.004, 0.0)
        rig.tick()
    text = snapshot_text(rig.root, rig.report)
    wait = read_wait(text)
    assert wait is not None and wait.name == "place_can_0"
    integrated = rig.leaf(ADJUST).integrator.offset3
    assert wait.offset == pytest.approx(integrated, abs=0.00005)  # shown to 0.1 mm
    assert 0.0035 <= wait.offset[0] <= 0.0045
    view = parse(text, ("can_0",)).manual
    assert view is not None and view.name == wait.name
    assert view.offset_mm == pytest.approx(tuple(v * 1000 for v in wait.offset))
    rig.confirm(True)
    rig.tick()
    assert read_wait(snapshot_text(rig.root, rig.report)) is None  # confirmed: no longer a wait
