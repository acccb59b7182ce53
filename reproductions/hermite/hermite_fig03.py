"""hermite Fig. 3: the particle in a double-well potential (eq. 38), q(0) = 0.74,
q'(0) = 0, m = 1, Delta t = 0.1: (a) phase portrait of the one-step variational and
Galerkin methods against the benchmark, (b) their energy error E(t) - E(0).

The span plotted in the paper is not printed; T = 100 here (ERRATA [E40]).  The benchmark
is mpvi's GBS reference (order 32, 64 digits); the exact solution A dn(A t, k),
k^2 = 2 - 1/A^2, is in the CSV too (method ``exact``) and every error is also measured
against it.  Paper (Sec. 5.1): the variational method's energy error is "around 1e-7",
the Galerkin method's "around 1e-10", both bounded.  Setup and study:
reproductions/hermite/_hermite_double_well.py.

Run: ``mpvi run hermite_fig03`` or ``python reproductions/hermite/hermite_fig03.py``.
"""
from mpvi.repro.run import script_main

from mpvi_papers.hermite._hermite_double_well import double_well_reproduction

REPRODUCTION = double_well_reproduction(3, "0.74")

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
