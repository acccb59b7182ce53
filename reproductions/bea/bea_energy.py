"""Backward error analysis, modified energies (beyond the four papers): the energy error of
the truncated modified Hamiltonian H~_k along the numerical solution of the pendulum falls
as h^(p + k), k = 0, 2, 4, ..., down to round-off at 64 digits, and below 1e-100 at 128.

For the midpoint variational integrator (order p = 2), Simpson's (4), the 4-point Lobatto
variational integrator (6) and Mutze's direct midpoint method (g = 0, order 2; position
Verlet for this Lagrangian) on H = p^2/2 - cos q from (q, p) = (1, 0):

* H~ is derived exactly through h^order by :func:`mpvi.modified_hamiltonian` from each
  method's own declaration (its trial basis and quadrature, or Mutze's parabolic path);
* each method runs over [0, T] at each step h, its states sampled (``samples`` + 1
  nodes); the error of H~_k (H~ through h^(p + k - 2); H~_0 = H) is
  max_j |H~_k(y_j) - H~_k(y_0)|, evaluated with 10 guard digits;
* the fitted order of each curve is the least-squares slope over the three finest steps
  whose error lies above the round-off threshold 10^(4 - digits) (an error below it is
  round-off: the floor of the plot).

Backward error analysis (Hairer, Lubich & Wanner, *Geometric Numerical Integration*,
Thm. IX.8.1) predicts the orders p, p + 2, p + 4, ...: each term of H~ lowers the error by
another h^2 until the method's round-off, or, at large h, the exponentially small
remainder of the divergent series, is reached.  The 128-digit groups run the midpoint
rule and Mutze's method to smaller steps with H~ through h^32.

Run: ``mpvi run bea_energy`` or ``python reproductions/bea/bea_energy.py``.
"""
from mpvi.repro.declare import Reproduction
from mpvi.repro.run import script_main

from mpvi_papers.bea._bea import METHODS, PAPER, energy_figure, energy_output, energy_tasks

STEPS64 = ["1/5", "1/10", "1/20", "1/40", "1/80", "1/160", "1/320"]
STEPS128 = ["1/10", "1/20", "1/40", "1/80", "1/160", "1/320", "1/640", "1/1280"]
PARAMS = {
    "q0": "1", "p0": "0", "T": "20", "samples": 400,
    "groups": [{"method": m, "digits": None, "order": 24, "steps": STEPS64} for m in METHODS]
    + [{"method": "midpoint", "digits": 128, "order": 32, "steps": STEPS128},
       {"method": "mutze", "digits": 128, "order": 32, "steps": STEPS128},
       {"method": "simpson", "digits": 128, "order": 24, "steps": STEPS128[:6]},
       {"method": "lobatto", "digits": 128, "order": 24, "steps": STEPS128[:6]}],
}
QUICK = {
    "T": "10", "samples": 100,
    "groups": [{"method": m, "digits": None, "order": METHODS[m][1] + 4, "steps": STEPS64[:4]}
               for m in METHODS]
    + [{"method": "midpoint", "digits": 128, "order": 12, "steps": STEPS128[2:6]}],
}


def plot(out, p):
    return energy_figure(out, f"Pendulum, T = {p['T']}")


REPRODUCTION = Reproduction(
    id="bea_energy", paper=PAPER, item="modified energies",
    title="energy errors of the truncated modified Hamiltonians H~_k fall as h^(p+k) to "
          "round-off (64 and 128 digits)",
    params=PARAMS, quick=QUICK, compute=energy_output, plot=plot,
    tasks=energy_tasks, published=False)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
