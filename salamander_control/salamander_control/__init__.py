"""Salamander arm control: kinematics library, trajectory generation, nodes and simulated hardware."""
