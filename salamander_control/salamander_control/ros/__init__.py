"""The thin ROS shell shared by the nodes: parameter binding, message conversions."""
