"""The physics cell's scene as MJCF: the table, the box's solids, the cans and the pad with its seal welds.

Built from the *true* layout (`uncertainty.draw_truth`); what each body is and why: `physics`'s module
docstring and docs/design/cell_model.md. Pure: no MuJoCo import, no rclpy.
"""

from __future__ import annotations

from salamander_sim.cell.config import STANDARD_GRAVITY, CellLayout
from salamander_sim.cell.geometry import box_prisms
from salamander_sim.cell.tool import compensator_xml

FRICTION = (0.4, 0.005, 0.0005)
"""Sliding (aluminium on cardboard, plastic or a table top: 0.3-0.5), torsional (m) and rolling (m)
friction of every contact."""
TABLE_SLAB = 0.02
"""m: half the thickness of the table, a 2 x 2 m box whose top is table_z. Not a MuJoCo plane: MuJoCo
4.0's plane-cylinder test reports a phantom contact under a can whose attitude is upright to within
rounding (1e-15) but not exactly, 7 mm above the plane (reproduced with a held can turned by the tool
yaw); the box-cylinder test (the general convex one, as for the box floor) has no such case."""
WELD_SOLIMP = "0.99 0.999 0.001"
"""The seal's weld impedance: near-hard (MuJoCo's default, 0.9-0.95, lets a can hang 0.5 mm low on
the light plunger of the compensator; this keeps it within 0.02 mm, as on the rigid pad before)."""
PAD_PARK = (0.0, 0.0, 2.0)
"""Where the pad is before the first joint state (far above the cell)."""


def xml_name(name: str) -> str:
    """A box solid's geom name: its `box_prisms` name with "_" for " " and "|"."""
    return name.replace(" ", "_").replace("|", "_")


def scene_xml(layout: CellLayout, timestep: float, compensator: bool = True) -> str:
    """The MJCF of the cell (see the module docstring).

    Geom names: table, the box solids as `box_prisms` names them with "_" for " " and "|", and can_i.
    `compensator` False: the plunger is fixed to the pad (a rigid pad, for comparison).
    """
    h = layout.can_height / 2
    stiff = max(2.0 * timestep, 0.004)  # MuJoCo's guidance: a constraint time constant >= 2 steps
    friction = " ".join(f"{f:g}" for f in FRICTION)
    walls = []
    for prism in box_prisms(layout):
        zc = (prism.z0 + prism.z1) / 2 - layout.table_z
        hz = (prism.z1 - prism.z0) / 2
        walls.append(
            f'<geom name="{xml_name(prism.name)}" type="box" pos="{prism.u!r} {prism.v!r} {zc!r}" '
            f'size="{prism.hu!r} {prism.hv!r} {hz!r}" rgba="0.55 0.4 0.25 1"/>'
        )
    cans, welds = [], []
    for cid, (x, y) in zip(layout.can_ids, layout.can_xy, strict=True):
        cans.append(
            f'<body name="{cid}" pos="{x!r} {y!r} {layout.table_z + h!r}"><freejoint name="{cid}"/>'
            f'<geom name="{cid}" type="cylinder" size="{layout.can_radius!r} {h!r}" '
            f'mass="{layout.can_mass!r}" condim="6" rgba="0.75 0.75 0.78 1"/></body>'
        )
        welds.append(
            f'<weld name="grip_{cid}" body1="pad_tip" body2="{cid}" active="false" solref="{stiff!r} 1" '
            f'solimp="{WELD_SOLIMP}"/>'
        )
    nl = "\n    "
    return f"""<mujoco model="salamander_cell">
  <option timestep="{timestep!r}" gravity="0 0 {-STANDARD_GRAVITY!r}" integrator="implicitfast"
          cone="elliptic" jacobian="dense"/>
  <default><geom friction="{friction}" condim="4" solref="{stiff!r} 1"/></default>
  <worldbody>
    <geom name="table" type="box" pos="0 0 {layout.table_z - TABLE_SLAB!r}" size="1 1 {TABLE_SLAB!r}"
          rgba="0.35 0.35 0.38 1"/>
    <body name="box" pos="{layout.box_x!r} {layout.box_y!r} {layout.table_z!r}"
          euler="0 0 {layout.box_yaw!r}">
    {nl.join(walls)}
    </body>
    <body name="pad" mocap="true" pos="{PAD_PARK[0]} {PAD_PARK[1]} {PAD_PARK[2]}">
      {compensator_xml(stiff) if compensator else '<body name="pad_tip"/>'}
    </body>
    {nl.join(cans)}
  </worldbody>
  <equality>
    {nl.join(welds)}
  </equality>
</mujoco>
"""
