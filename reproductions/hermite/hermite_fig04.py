"""hermite Fig. 4: the particle in a double-well potential (eq. 38), q(0) = 0.995,
q'(0) = 0 (close to the separatrix E = 0), m = 1, Delta t = 0.1: (a) phase portrait of
the one-step variational and Galerkin methods against the benchmark, (b) their energy
error E(t) - E(0).

The span plotted in the paper is not printed; T = 100 here (ERRATA [E40]).  The benchmark
is mpvi's GBS reference (order 32, 64 digits); the exact solution A dn(A t, k) is in the
CSV too.  Paper (Sec. 5.1): the variational method's energy error is "around 1e-5", the
Galerkin method's "around 1e-8", both bounded (ERRATA [E42] on the Galerkin peak).  Setup
and study: reproductions/hermite/_hermite_double_well.py.

Run: ``mpvi run hermite_fig04`` or ``python reproductions/hermite/hermite_fig04.py``.
"""
from mpvi.repro.run import script_main

from mpvi_papers.hermite._hermite_double_well import double_well_reproduction

REPRODUCTION = double_well_reproduction(4, "0.995")

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
