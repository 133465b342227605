"""The simulated operator: a person at the cell who does the ManualAdjust placement, pure Python.

A stand-in for the human with the gamepad, for demos, tests and the placement benchmark
(bench/bench_placement.py). It watches what a person at the cell would watch and acts only through
the operator topics the gamepad uses (`/salamander/operator/jog`, `/salamander/operator/confirm`):

- `perception`: what it sees: the ManualAdjust wait in the tree snapshot (the line the operator view
  shows), and from the simulated cell's ground truth the true box and the held can, as the offset from
  the can to the centre of the compartment it hangs over;
- `core`: `SimOperator`, the person: reaction time, a noisy look, a stick stroke toward the centre within
  the stick's limits, wait for the can to stop, look again, confirm when it looks centred;
- `params`: the node's parameters (`/salamander/sim_operator`) and their snapshot.

The node is `salamander_sim.nodes.sim_operator` (launch argument ``sim_operator:=true``). Simulation
only: on the robot a person does this, and nothing here reads anything but the simulator's ground truth.
"""
