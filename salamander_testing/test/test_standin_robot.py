"""The stand-in robot's suction rule (testing/standin_robot.py), without ROS."""

from __future__ import annotations

from salamander_testing.standin_robot import StandinGripper, parse_args


def test_a_part_seals_only_with_the_valve_open_and_the_pad_low_and_the_switch_lags() -> None:
    gripper = StandinGripper(grip_below_z=-0.06, delay_s=0.03)
    assert gripper.step(-0.065, 0.0) is False  # pad low, valve closed: nothing
    gripper.valve = True
    assert gripper.step(0.085, 0.1) is False  # valve open, pad high: nothing
    assert gripper.step(-0.065, 0.2) is False  # sealed now, the switch not yet
    assert gripper.step(-0.065, 0.23) is True
    assert gripper.step(0.085, 1.0) is True  # carried up: stays sealed
    gripper.valve = False
    assert gripper.step(0.085, 2.0) is True
    assert gripper.step(0.085, 2.03) is False
    assert not gripper.needs_pad


def test_options_default_to_the_shipped_cell() -> None:
    options = parse_args([])
    assert options.cell == "" and options.grip_below_z == -0.06 and options.switch_delay_s == 0.03


def test_with_lose_first_above_z_the_first_part_carried_above_it_breaks_loose_once() -> None:
    gripper = StandinGripper(grip_below_z=-0.06, delay_s=0.0, lose_above_z=0.0)
    gripper.valve = True
    assert gripper.step(-0.065, 0.0) is True
    assert gripper.needs_pad  # it watches the height while a part is to be lost
    assert gripper.step(-0.01, 0.1) is True
    assert gripper.step(0.01, 0.2) is False and gripper.valve  # torn off, the valve still open
    assert gripper.step(-0.065, 1.0) is True  # the next part ...
    assert not gripper.needs_pad
    assert gripper.step(0.085, 1.1) is True  # ... stays sealed
    assert parse_args([]).lose_first_above_z is None
