"""The fuzz kit's message variants: one field changed at a time, every field reached, only admitted values."""

from __future__ import annotations

import math

from rcl_interfaces.msg import ParameterEvent
from sensor_msgs.msg import JointState

from salamander_testing.message_fuzz import HUGE_SEQUENCE, LONG_STRING, STAMPS, extremes, variants


def _differing_fields(a: object, b: object) -> list[str]:
    def same(x: object, y: object) -> bool:
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            return True
        if hasattr(x, "get_fields_and_field_types"):
            return not _differing_fields(x, y)
        if isinstance(x, (list, tuple)) or hasattr(x, "tolist"):
            xs, ys = list(x), list(y)  # type: ignore[call-overload]
            return len(xs) == len(ys) and all(same(p, q) for p, q in zip(xs, ys, strict=True))
        return x == y

    return [f for f in a.get_fields_and_field_types() if not same(getattr(a, f), getattr(b, f))]  # type: ignore[attr-defined]


def test_each_variant_changes_one_field_of_the_base_and_every_field_is_reached() -> None:
    base = JointState(name=["base_yaw", "elbow"], position=[0.1, 0.2], velocity=[0.0, 0.0])
    base.header.stamp.sec = 7
    found = list(variants(base))
    paths = [path for path, _ in found]
    for path, msg in found:
        changed = _differing_fields(base, msg)
        assert changed == [path.split(".")[0].split("=")[0].split("[")[0]], (path, changed)
    fields = {"header.stamp", "header.frame_id", "name", "position", "velocity", "effort"}
    assert {p.split("=")[0] for p in paths} == fields
    stamps = [f"header.stamp=({sec}, {nanosec})" for sec, nanosec in STAMPS]
    assert [p for p in paths if p.startswith("header.stamp")] == stamps
    assert "position=[nan]*2" in paths and "effort=[inf]*2" in paths  # as long as the parallel arrays
    assert "position=[]" in paths and "position=base+1 (3 elements)" in paths
    assert f"position=[0.0]*{HUGE_SEQUENCE}" in paths and f"name=[<{LONG_STRING} characters>]*2" in paths
    assert base.header.stamp.sec == 7 and list(base.name) == ["base_yaw", "elbow"]  # the base is untouched
    assert paths == [p for p, _ in variants(base)]  # deterministic


def test_nested_sequences_and_integer_ends() -> None:
    paths = [p for p, _ in variants(ParameterEvent())]
    assert "new_parameters[0].value.integer_value=-9223372036854775808" in paths
    assert "new_parameters[0].value.type=255" in paths and "new_parameters=[Parameter()]*1000" in paths
    assert "new_parameters=[]" not in paths  # the base's own value is no variant
    assert "stamp=(-100, 0)" in paths
    assert extremes("float")[3] == 3.4028234663852886e38 and extremes("uint16") == (0, 65535)
