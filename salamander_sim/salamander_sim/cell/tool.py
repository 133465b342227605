"""The suction tool of the physics cell: its spring-loaded level compensator and the wrench it feels.

A real suction tool does not hold its pad rigidly: the pad sits on a spring-loaded plunger (a level
compensator) that gives along the pad axis, so a held can set down on something pushes the pad in
against a force that grows with the press instead of at once. Modelled in MuJoCo as the body
`pad_tip`, a child of the pad's mocap body on a slide joint along the pad's +z (toward the arm),
position s in [0, COMPENSATOR_STROKE]:

- at s = 0 (fully out) it rests on its stop with COMPENSATOR_PRELOAD (the spring's reference lies
  preload / rate beyond the stop) and its own weight, so a hanging can (3.4 N) moves nothing: the pad
  stays rigid until a contact carries the can's weight plus those 2 N;
- beyond, the force is preload + COMPENSATOR_RATE * s (+ COMPENSATOR_DAMPING * ds/dt);
- at s = COMPENSATOR_STROKE it is on its inner stop: rigid again (a press farther pushes or peels the
  can off, as the seal check decides).

The seal (the weld) is between `pad_tip` and the can. `tool_wrench` converts the weld's wrench on the
held can into what the tool feels: the force on the tool and its moment about the TCP, base_link.
Numbers and the press they allow: docs/design/cell_model.md, "The pad's compliance".
Pure: no mujoco, no rclpy.
"""

from __future__ import annotations

import math

COMPENSATOR_STROKE = 0.009
"""m: axial travel of the level compensator (suction tools' compensators: 5-15 mm)."""
COMPENSATOR_PRELOAD = 1.0
"""N: spring force at full extension; with the moving part's weight (1 N) the press beyond the can's weight
before the pad gives is 2 N."""
COMPENSATOR_RATE = 500.0
"""N/m: spring rate (0.5 N/mm: 5.5 N at the end of the stroke)."""
COMPENSATOR_DAMPING = 10.0
"""N s/m: viscous damping of the plunger (0.7 of critical for the empty plunger; 0.2 N at 20 mm/s)."""
TIP_MASS = 0.1
"""kg: the moving part (plunger, fitting, pad); it also keeps the weld stiff (`physics_scene.WELD_SOLIMP`)."""

Wrench = tuple[float, float, float, float, float, float]
"""(fx, fy, fz, mx, my, mz): force N and moment N m, base_link."""
ZERO_WRENCH: Wrench = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def compensator_xml(stiff: float) -> str:
    """The MJCF of the plunger body under the pad's mocap body; `stiff`: the stops' time constant (s)."""
    ref = -COMPENSATOR_PRELOAD / COMPENSATOR_RATE
    return (
        f'<body name="pad_tip"><joint name="compensator" type="slide" axis="0 0 1" limited="true" '
        f'range="0 {COMPENSATOR_STROKE!r}" stiffness="{COMPENSATOR_RATE!r}" springref="{ref!r}" '
        f'damping="{COMPENSATOR_DAMPING!r}" solreflimit="{stiff!r} 1" solimplimit="0.99 0.999 0.0005"/>'
        f'<inertial pos="0 0 0" mass="{TIP_MASS!r}" diaginertia="1e-6 1e-6 1e-6"/></body>'
    )


def compensator_force(stroke: float) -> float:
    """The spring's static force at `stroke` m pushed in (N): preload + rate * stroke, within the stroke."""
    return COMPENSATOR_PRELOAD + COMPENSATOR_RATE * min(max(stroke, 0.0), COMPENSATOR_STROKE)


def tool_wrench(
    force_on_can: tuple[float, float, float], moment_on_can: tuple[float, float, float]
) -> Wrench:
    """What the tool feels from the held can: minus the seal's force and moment on it (base_link).

    `force_on_can`: the weld's force on the can (N); `moment_on_can`: its moment about the TCP (N m).
    Non-finite input gives ZERO_WRENCH (a solver blow-up is no reading).
    """
    values = (*force_on_can, *moment_on_can)
    if not all(map(math.isfinite, values)):
        return ZERO_WRENCH
    return tuple(-v for v in values)  # type: ignore[return-value]
