"""hermite Fig. 6: trajectories x(t) of the damped Duffing oscillator (eqs. 40-41) for
delta = 0.025, 0.05, 0.1 with Delta t = 0.1: both one-step methods against the benchmark.

alpha = -1, beta = 2 (the captions; the text prints alpha = 1, beta = 0.5), x(0) = 0,
x'(0) = 1 and T = 100 (not printed): see reproductions/hermite/_hermite_duffing.py and ERRATA
[E41].  Paper (Sec. 5.2): "the discrete trajectories are indistinguishable from the
benchmark solution for all three cases"; recorded: max |x - x_ref| and its ratio to
max |x_ref| per delta and method.  The runs are shared with hermite_fig07 (cached study).

Run: ``mpvi run hermite_fig06`` or ``python reproductions/hermite/hermite_fig06.py``.
"""
from mpvi.repro.run import script_main

from mpvi_papers.hermite._hermite_duffing import duffing_reproduction, trajectory_output, trajectory_plot

REPRODUCTION = duffing_reproduction(
    "hermite_fig06", "Fig. 6", "damped Duffing oscillator: trajectories for three dampings",
    trajectory_output, trajectory_plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
