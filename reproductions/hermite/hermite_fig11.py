"""hermite Fig. 11: total energy of the aeroelastic section against time (Sec. 5.3), both
one-step methods and the benchmark.

E = 1/2 v^T M v + V(q), kinetic plus potential energy of the corrected Lagrangian (42)
(ERRATA [E50]); the aerodynamic and damping forces change it.  Same runs as Figs. 9-10
(the shared study of :mod:`mpvi_papers.hermite._hermite_aeroelastic`).  Paper: "Initially there
is a sharp decrease in energy followed by an increase, and eventually when the system
exhibits periodic motion with constant amplitude the total energy oscillates around a
fixed value"; recorded: the relative initial drop (E0 - min E)/E0 before the LCO is
established and the rise after it, (max E - min E)/E0.

Run: ``mpvi run hermite_fig11`` or ``python reproductions/hermite/hermite_fig11.py``.
"""
from mpvi.repro.declare import Reproduction
from mpvi.repro.run import script_main

from mpvi_papers.hermite._hermite import METHODS
from mpvi_papers.hermite._hermite_aeroelastic import (PAPER, PARAMS, QUICK, certify_aeroelastic,
                                                compute_for, energy_plot)

REPRODUCTION = Reproduction(
    id="hermite_fig11", paper=PAPER, item="Fig. 11",
    title="energy of the aeroelastic section against time, both one-step methods and the benchmark",
    params=PARAMS, quick=QUICK, compute=compute_for(METHODS),
    certify=certify_aeroelastic, plot=energy_plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
