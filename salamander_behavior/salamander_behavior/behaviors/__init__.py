"""The leaves of the pick-and-place tree (py_trees behaviours; ROS only through the ports of `base`)."""
