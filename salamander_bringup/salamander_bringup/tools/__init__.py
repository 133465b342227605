"""Operator tools of salamander_control (no rclpy): e.g. `workspace_plot`, the reachable-workspace map."""
