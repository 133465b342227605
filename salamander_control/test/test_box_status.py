"""/salamander/box/estimate's format: a round trip, the text people read, and bad input refused."""

from __future__ import annotations

import pytest

from salamander_control.box_status import BoxStatus, status_text


def test_round_trip_and_text() -> None:
    sources = ("can_0 (ManualAdjust)", "can_1 (search)")
    status = BoxStatus((1.24, -0.4), 0.151, (0.42, 0.4), 0.3, True, 2, sources)
    assert BoxStatus.from_json(status.to_json()) == status
    assert status.text() == (
        "offset (1.2, -0.4) mm, yaw 0.15 deg, sigma (0.4, 0.4) mm, yaw sigma 0.30 deg; from 2 cans"
    )
    one = BoxStatus((1.0, 0.0), 0.0, (0.5, 0.5), 0.9, False, 1)
    assert "yaw not yet seen" in one.text() and one.text().endswith("from 1 can")
    assert BoxStatus().text().startswith("none yet (the plan)")


BAD = ["", "{", "[]", '{"cans": 1}', BoxStatus().to_json().replace("0.0", "NaN", 1),
       BoxStatus(cans=-1).to_json(),
       BoxStatus().to_json().replace('"cans": 0', '"cans": 1e999'),  # OverflowError killed the view
       "[" * 100_000]


@pytest.mark.parametrize("text", BAD)
def test_bad_text_is_refused_and_shown_as_unreadable(text: str) -> None:
    with pytest.raises(ValueError):
        BoxStatus.from_json(text)
    assert status_text(text).startswith("unreadable (")
