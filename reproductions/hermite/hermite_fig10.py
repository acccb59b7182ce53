"""hermite Fig. 10: subcritical limit-cycle oscillation of the aeroelastic section (Sec. 5.3)
with the one-step Galerkin method: phase portraits (a) plunge h against h' and
(b) pitch alpha against alpha', against the benchmark.

U = 0.9 U_f (U_f the linear flutter speed of the corrected eqs. (45)-(46), ERRATA [E51]),
from (h, h', alpha, alpha') = (0.01, 0, 0.1, 0), dt = 0.01 s, 10 s (ERRATA [E54]); the
parameters are the candidate NATA set (ERRATA [E53]).  The runs are the shared study
of :mod:`mpvi_papers.hermite._hermite_aeroelastic` (computed once for Figs. 9-12).  Recorded:
U_f, the flutter frequency, the LCO amplitudes and frequency of the benchmark, the
evidence that the LCO is subcritical (the origin is linearly stable at U, a small
perturbation decays), the energy errors and the Newton statistics.  Paper: "both
one-step methods capture the subcritical limit cycle oscillations (LCOs) accurately".

Run: ``mpvi run hermite_fig10`` or ``python reproductions/hermite/hermite_fig10.py``.
"""
from mpvi.repro.declare import Reproduction
from mpvi.repro.run import script_main

from mpvi_papers.hermite._hermite_aeroelastic import (PAPER, PARAMS, QUICK, compute_for,
                                                phase_portrait_plot)

METHOD = "hermite_galerkin"

REPRODUCTION = Reproduction(
    id="hermite_fig10", paper=PAPER, item="Fig. 10",
    title="subcritical LCO of the aeroelastic section, one-step Galerkin method (phase portraits)",
    params=PARAMS, quick=QUICK, compute=compute_for([METHOD]),
    plot=lambda out, p: phase_portrait_plot(out, p, METHOD, "Fig. 10"), published=False)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
