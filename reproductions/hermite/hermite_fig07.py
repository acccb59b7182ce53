"""hermite Fig. 7: energy error of the damped Duffing oscillator (eqs. 40-41) for
delta = 0.025, 0.05, 0.1 with Delta t = 0.1, both one-step methods.

The energy decays, so the error is taken against the benchmark at the same time:
E_method(t) - E_benchmark(t) (absolute).  Parameters as for Fig. 6 (alpha = -1, beta = 2,
x(0) = 0, x'(0) = 1, T = 100; ERRATA [E41]).  Paper (Sec. 5.2): the variational method's
error "starts around 1e-4", the Galerkin method's "around 1e-6"; both decrease over time,
faster for larger delta.  Recorded per delta and method: the level (mean |.|) and peak
(max |.|) over the start window 0 < t <= 10, the peak over the last 10 time units, the
growth (second half / first half) and the decay (end peak / start peak).  The runs are
shared with hermite_fig06 (cached study).

Run: ``mpvi run hermite_fig07`` or ``python reproductions/hermite/hermite_fig07.py``.
"""
from mpvi.repro.run import script_main

from mpvi_papers.hermite._hermite_duffing import duffing_reproduction, energy_output, energy_plot

REPRODUCTION = duffing_reproduction(
    "hermite_fig07", "Fig. 7", "damped Duffing oscillator: energy error for three dampings",
    energy_output, energy_plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
