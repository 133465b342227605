"""Batch FK/IK give the scalar API's answers; Jacobian and singularity measures are right."""

from __future__ import annotations

import math

import numpy as np
import pytest

from salamander_control.kinematics import (
    ArmParams,
    IkStatus,
    condition_number,
    forward_kinematics,
    forward_kinematics_batch,
    manipulability,
    position_jacobian,
    solve_ik_batch,
    solve_ik_pitched,
)
from salamander_control.kinematics.batch import BRANCH_UP

DEFAULT = ArmParams()
WIDE = ArmParams(alpha_max=2.7, beta_max=2.7)


def _random_joints(rng: np.random.Generator, n: int, params: ArmParams) -> np.ndarray:
    lo, hi = np.array(params.joint_lower), np.array(params.joint_upper)
    return rng.uniform(lo - 0.2, hi + 0.2, size=(n, 5))  # some outside the limits on purpose


@pytest.mark.parametrize("params", [DEFAULT, WIDE], ids=["default", "wide"])
def test_batch_fk_equals_scalar(params: ArmParams) -> None:
    q = _random_joints(np.random.default_rng(1), 2000, params)
    batch = forward_kinematics_batch(q, params)
    for i in range(0, 2000, 7):
        one = forward_kinematics(q[i], params)
        assert batch.tcp[i] == pytest.approx(one.tcp, abs=1e-12)
        assert batch.tool_pitch[i] == one.tool_pitch
        assert abs(math.remainder(batch.tool_yaw[i] - one.tool_yaw, 2 * math.pi)) < 1e-12


@pytest.mark.parametrize("params", [DEFAULT, WIDE], ids=["default", "wide"])
@pytest.mark.parametrize("seeded", [False, True])
def test_batch_ik_equals_scalar(params: ArmParams, seeded: bool) -> None:
    rng = np.random.default_rng(2)
    q = _random_joints(rng, 3000, params)
    fk = forward_kinematics_batch(q, params)
    tcp = fk.tcp + rng.normal(0.0, 0.02, size=fk.tcp.shape) * (rng.random((3000, 1)) < 0.3)
    seeds = q if seeded else None
    batch = solve_ik_batch(tcp, fk.tool_pitch, fk.tool_yaw, params, seeds=seeds)
    statuses = set()
    for i in range(3000):
        seed = None if seeds is None else q[i]
        one = solve_ik_pitched(tcp[i], fk.tool_pitch[i], fk.tool_yaw[i], params, seed=seed)
        statuses.add(one.status)
        assert batch.status[i] == one.status, (i, q[i], one)
        if one.ok:
            assert batch.q[i] == pytest.approx(one.q, abs=1e-12)
            assert (batch.branch[i] == BRANCH_UP) == (one.branch.value == "up")
        else:
            assert np.isnan(batch.q[i]).all()
    assert IkStatus.OK in statuses and len(statuses) >= 3  # the sample exercises failures too


def test_batch_ik_validates_input() -> None:
    with pytest.raises(ValueError, match="tcp"):
        solve_ik_batch(np.zeros((4, 2)), 0.0, 0.0)
    with pytest.raises(ValueError, match="tool_pitch"):
        solve_ik_batch(np.zeros((4, 3)), np.zeros(3), 0.0)
    with pytest.raises(ValueError, match="row 2"):
        solve_ik_batch(np.array([[0.3, 0, 0]] * 2 + [[np.nan, 0, 0]]), 0.0, 0.0)
    with pytest.raises(ValueError, match="seeds"):
        solve_ik_batch(np.zeros((4, 3)), 0.0, 0.0, seeds=np.zeros((4, 4)))


def test_jacobian_matches_finite_differences() -> None:
    rng = np.random.default_rng(3)
    for q in _random_joints(rng, 50, DEFAULT):
        jac = position_jacobian(q)
        h = 1e-7
        for j in range(5):
            dq = np.zeros(5)
            dq[j] = h
            plus, minus = forward_kinematics(q + dq).tcp, forward_kinematics(q - dq).tcp
            assert jac[:, j] == pytest.approx((np.array(plus) - np.array(minus)) / (2 * h), abs=1e-6)


def test_singularity_measures() -> None:
    rest = (0.0, math.radians(-45), math.radians(33.8), 0.0, 0.0)
    assert manipulability(rest) > 0.0 and math.isfinite(condition_number(rest))
    stretched = (0.0, 0.8, 0.8 - math.pi / 2, 0.0, 0.0)  # q1 - q2 = pi/2: links in line
    assert manipulability(stretched) == pytest.approx(0.0, abs=1e-15)
    assert condition_number(stretched) > 1e12
    # Manipulability falls as the arm approaches the stretch.
    values = [manipulability((0.0, 1.35, 1.35 - d, 0.0, 0.0)) for d in (0.5, 0.8, 1.2, 1.5)]
    assert values == sorted(values, reverse=True)


def test_batch_and_scalar_pick_the_same_turn_of_yaw_near_pi() -> None:
    q = (math.pi - 5e-10, 0.3, 0.5, 0.0, 0.0)
    seed = (-4e-10, 0.3, 0.5, 0.0, 0.0)
    pose = forward_kinematics(q)
    one = solve_ik_pitched(pose.tcp, pose.tool_pitch, pose.tool_yaw, seed=seed)
    batch = solve_ik_batch([pose.tcp], [pose.tool_pitch], [pose.tool_yaw], seeds=[seed])
    assert batch.q[0] == pytest.approx(one.q, abs=1e-12)


def test_batch_chunks_give_the_same_answer_as_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    from salamander_control.kinematics import batch as batch_module

    rng = np.random.default_rng(4)
    fk = forward_kinematics_batch(_random_joints(rng, 1000, DEFAULT))
    whole = solve_ik_batch(fk.tcp, fk.tool_pitch, fk.tool_yaw)
    monkeypatch.setattr(batch_module, "CHUNK", 97)
    chunked = solve_ik_batch(fk.tcp, fk.tool_pitch, fk.tool_yaw)
    np.testing.assert_array_equal(whole.status, chunked.status)
    np.testing.assert_array_equal(whole.q, chunked.q)
