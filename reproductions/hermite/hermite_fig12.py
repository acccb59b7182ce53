"""hermite Fig. 12: energy error of the one-step methods on the aeroelastic section
(Sec. 5.3): E_method(t_j) - E_benchmark(t_j) (absolute, in J) at every node.

Same runs as Figs. 9-11 (the shared study of :mod:`mpvi_papers.hermite._hermite_aeroelastic`).
Paper: "The one-step variational method has energy error magnitude around 10^-4 whereas
the Galerkin method has energy error around 10^-6"; recorded: each method's max |error|
over the whole run and over the established LCO (t >= the onset of the benchmark's
LCO), their ratio, and the benchmark's own error estimate E_gbs(dt) - E_gbs(dt/2).  The
difference grows slowly along the LCO because each method's phase drifts from the
benchmark's while E oscillates over a cycle.

Run: ``mpvi run hermite_fig12`` or ``python reproductions/hermite/hermite_fig12.py``.
"""
from mpvi.repro.declare import Reproduction
from mpvi.repro.run import script_main

from mpvi_papers.hermite._hermite import METHODS
from mpvi_papers.hermite._hermite_aeroelastic import (PAPER, PARAMS, QUICK, certify_aeroelastic,
                                                compute_for, energy_error_plot)

REPRODUCTION = Reproduction(
    id="hermite_fig12", paper=PAPER, item="Fig. 12",
    title="energy error of both one-step methods on the aeroelastic section against time",
    params=PARAMS, quick=QUICK, compute=compute_for(METHODS),
    certify=certify_aeroelastic, plot=energy_error_plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
