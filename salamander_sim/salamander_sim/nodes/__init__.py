"""The nodes of the arm stack: thin ROS shells around the pure modules of salamander_control."""
