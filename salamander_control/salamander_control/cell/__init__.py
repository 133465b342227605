"""The work cell as the arm stack sees it: the layout (`layout`) and the pick and place targets (`targets`).

The one cell description that the behaviour tree, the simulator and the operator view share; it imports
nothing of either. docs/architecture.md, "One cell description".
"""
