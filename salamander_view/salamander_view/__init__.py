"""salamander_view: the browser operator view of the Salamander arm.

A separate package so the control packages and the robot computer never need its dependencies
(viser, yourdfpy, trimesh). Concept folders: `params.py` (the node's parameters), `snapshot.py`
(reading the behaviour server's tree snapshot), `gauges.py` (joints against their limits, the coupled
margins), `controls.py` (which operator control applies now and why not; the nudge train),
`access.py` (who may use the controls), `scene.py` and `page.py` (the viser scene and panel), and
`nodes/operator_view.py` (the ROS shell). docs/interfaces.md ("The operator view") and
docs/design/operator_view.md say what it shows and why it is built this way.
"""
