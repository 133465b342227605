"""The waiting ManualAdjust's text: what the tree writes, its readers read back."""

from __future__ import annotations

import re

import pytest

from salamander_control.manual_wait import WAIT_OFFSET, read_wait_offset, wait_text


@pytest.mark.parametrize("offset", ["[0.0, 0.0, 0.0] mm", "[1.2, -0.4, 0.0] mm", "[-12.5, 3.0, -30.0] mm"])
def test_the_offset_written_is_the_offset_read(offset: str) -> None:
    text = wait_text(offset, 1.04, 120.0)
    assert text == f"waiting for the operator: offset {offset}, 1.0 of 120 s"
    expected = tuple(float(v) for v in re.findall(r"-?\d+\.\d", offset))
    assert read_wait_offset(text) == expected
    line = f"        --> ManualAdjust[place_can_0] [*] -- {text}"  # as the tree snapshot shows it
    assert read_wait_offset(line) == expected and re.search(WAIT_OFFSET, line)


def test_text_without_a_waiting_offset_reads_as_none() -> None:
    confirmed = "ManualAdjust[place_can_0]: confirmed, offset [1.0, 0.0, 0.0] mm after 3.1 s"
    assert read_wait_offset(confirmed) is None
    assert read_wait_offset("") is None
