"""The operator view's 3D scene (viser): the arm, the IK ghost, the cell's shapes. No rclpy.

- the arm: urdf/salamander.urdf through viser's `ViserUrdf` (yourdfpy; mimic joints included) at the
  measured joints;
- the ghost: the same URDF twice, translucent green and translucent red, of which exactly one is shown
  (green, on the IK's joints: the autonomous IK solves the current pose; red, on the measured joints: it
  does not, with the reason as a label at the TCP), as the ghost's own rviz markers;
- the cell: each visualization_msgs/Marker of /salamander/cell/markers (cubes, cylinders, text, in
  base_link = the scene's world) as a viser primitive, replaced only when its shape, pose or colour
  changed.

Update cost: a frame sends a message per URDF joint frame whose pose changed (none while the arm
rests), the ghost the same, and a marker only when the cell changed (docs/design/operator_view.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

GHOST_OK_RGBA = (0.15, 0.85, 0.25, 0.3)  # light: the arm's orange shows through where they coincide
GHOST_BAD_RGBA = (0.95, 0.12, 0.12, 0.6)  # stronger: a red ghost must be seen
CAMERA_POSITION = (0.95, -0.85, 0.75)
CAMERA_LOOK_AT = (0.25, 0.05, 0.1)
"""m, base_link: where a new page's camera starts (the operator can orbit it)."""
EPS = 1e-4
"""rad; a joint that moved less than this since the last frame is not resent."""


@dataclass(frozen=True)
class Shape:
    """One cell marker as the scene draws it (see `shape_of` in the node)."""

    kind: str  # "cube", "cylinder", "text"
    position: tuple[float, float, float]
    wxyz: tuple[float, float, float, float]
    size: tuple[float, float, float]
    rgba: tuple[float, float, float, float]
    text: str = ""


def _rgb255(rgba: Sequence[float]) -> tuple[int, int, int]:
    return tuple(int(round(255 * min(1.0, max(0.0, c)))) for c in rgba[:3])  # type: ignore[return-value]


class Scene:
    """The scene of one viser server; call the setters from one thread (the node's frame timer)."""

    def __init__(self, server: Any, urdf_path: Path) -> None:
        import yourdfpy
        from viser.extras import ViserUrdf

        self._server = server
        scene = server.scene
        # viser's default lighting: its environment map is bundled in the wheel (nothing is fetched).
        camera = server.initial_camera  # the cell from the front right, the arm in the middle
        camera.position = CAMERA_POSITION
        camera.look_at = CAMERA_LOOK_AT
        scene.add_grid("/floor", width=1.4, height=1.4, cell_size=0.1, position=(0.2, 0.0, 0.0))
        urdf = yourdfpy.URDF.load(str(urdf_path))
        self.arm = ViserUrdf(server, urdf, root_node_name="/arm")
        self._ghost_frames = {
            ok: scene.add_frame(f"/ghost_{'ok' if ok else 'bad'}", show_axes=False, visible=False)
            for ok in (True, False)
        }
        self.ghosts = {
            ok: ViserUrdf(server, urdf, root_node_name=f"/ghost_{'ok' if ok else 'bad'}",
                          mesh_color_override=GHOST_OK_RGBA if ok else GHOST_BAD_RGBA)
            for ok in (True, False)
        }  # fmt: skip
        self._label = scene.add_label("/ghost_reason", "", visible=False)
        self.joint_names: tuple[str, ...] = tuple(self.arm.get_actuated_joint_names())
        self._sent: dict[str, np.ndarray] = {}
        self._ghost_ok: bool | None = None
        self._label_text = ""
        self._shapes: dict[tuple[str, int], tuple[Shape, Any]] = {}

    def _cfg(self, q: Mapping[str, float]) -> np.ndarray:
        return np.array([q.get(name, 0.0) for name in self.joint_names], dtype=float)

    def _update(self, key: str, target: Any, q: Mapping[str, float]) -> None:
        cfg = self._cfg(q)
        last = self._sent.get(key)
        if last is not None and np.all(np.abs(cfg - last) < EPS):
            return
        self._sent[key] = cfg
        target.update_cfg(cfg)

    def set_arm(self, q: Mapping[str, float]) -> None:
        """The measured joints by name (missing ones stay at 0)."""
        self._update("arm", self.arm, q)

    def set_ghost(self, q: Mapping[str, float] | None, ok: bool | None, reason: str,
                  tcp: tuple[float, float, float] | None) -> None:
        """The ghost's joints and status; `ok` None hides it (no ghost yet)."""
        if ok != self._ghost_ok:
            for which, frame in self._ghost_frames.items():
                frame.visible = ok is which
            self._ghost_ok = ok
        if q is not None and ok is not None:
            self._update(f"ghost_{ok}", self.ghosts[ok], q)
        text = "" if ok in (True, None) else f"IK: {reason}"
        if text != self._label_text:
            self._label.text = text or " "
            self._label.visible = bool(text)
            self._label_text = text
        if text and tcp is not None:
            self._label.position = (tcp[0], tcp[1], tcp[2] + 0.05)

    def set_shapes(self, shapes: Mapping[tuple[str, int], Shape]) -> int:
        """The cell's shapes by (ns, id); returns how many were (re)drawn."""
        scene = self._server.scene
        drawn = 0
        for key in [k for k in self._shapes if k not in shapes]:
            self._shapes.pop(key)[1].remove()
        for key, shape in shapes.items():
            old = self._shapes.get(key)
            if old is not None and old[0] == shape:
                continue
            if old is not None:
                old[1].remove()
            self._shapes[key] = (shape, self._draw(scene, f"/cell/{key[0]}_{key[1]}", shape))
            drawn += 1
        return drawn

    @staticmethod
    def _draw(scene: Any, name: str, shape: Shape) -> Any:
        opacity = shape.rgba[3] if shape.rgba[3] < 1.0 else None
        if shape.kind == "cube":
            return scene.add_box(name, color=_rgb255(shape.rgba), dimensions=shape.size, opacity=opacity,
                                 wxyz=shape.wxyz, position=shape.position)
        if shape.kind == "cylinder":  # a ROS cylinder's axis is its z: build it so (trimesh's is z too)
            import trimesh

            mesh = trimesh.creation.cylinder(radius=shape.size[0] / 2.0, height=shape.size[2], sections=24)
            return scene.add_mesh_simple(name, mesh.vertices, mesh.faces, color=_rgb255(shape.rgba),
                                         opacity=opacity, wxyz=shape.wxyz, position=shape.position)
        return scene.add_label(name, shape.text or " ", position=shape.position)


def quat_yaw(wxyz: Sequence[float]) -> float:
    """The yaw of a unit quaternion (for tests and labels)."""
    w, x, y, z = wxyz
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
