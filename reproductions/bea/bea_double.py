"""Backward error analysis, modified energies on the double pendulum (beyond the four
papers): the position-dependent mass matrix M(q) = [[2, cos(q1 - q2)], [cos(q1 - q2), 1]].

The study of :mod:`mpvi_papers.bea.bea_energy` on the double pendulum with unit masses, rods
and gravity, V = -2 cos q1 - cos q2, from q = (1/2, 1/2), p = 0, over [0, T]:

* H~ is derived exactly by :func:`mpvi.modified_hamiltonian` (in (q, p) = (q, M(q) v);
  its terms are polynomials in p, the sines and cosines of q1, q2 and
  1/(2 - cos^2(q1 - q2)), the potentials found in that ring by
  :func:`mpvi.analysis.modified._gradient_potential`);
* the error of H~_k (H~ through h^(p + k - 2)) is max_j |H~_k(y_j) - H~_k(y_0)| over the
  sampled states of each run, the fitted orders as in ``bea_energy``.

What the run derives here (the terms are large: H_5 has 8 047 monomials for the midpoint
VI, 37 894 for Simpson's): the midpoint VI's and Simpson's H~ through h^4 (the midpoint
VI's H~_0, H~_2, H~_4: orders 2, 4, 6; Simpson's H~_0, H~_2: 4, 6), about 2 and 15 s
on FLINT's ring; the 4-point Lobatto VI's H~_0 = H only (order 6).  The terms stay in
the ring's form from the derivation to the energies: the study cache keeps their
monomials as data (:meth:`mpvi.ModifiedHamiltonian.polynomials`), and they are summed by
Horner's rule on the trie of their exponents (:func:`mpvi.analysis.horner.horner_program`,
run on all sampled states at once, compiled in the gmp context),
with no sympy expression, no printed text and no code generated from them.  The next
terms are beyond the run's time: Simpson's H~ through h^6 takes 200 s to derive and its
H_7 has 128 276 monomials.  Mutze's direct
midpoint method (g = 0) is not symplectic for a q-dependent mass matrix: its h^2 term in
(q, M(q) v) is not Hamiltonian, the value "mutze: H~ beyond H" gives the check's message,
and only H~_0 = H is drawn (order 2).

Run: ``mpvi run bea_double`` or ``python reproductions/bea/bea_double.py``.
"""
from mpvi.repro.declare import Reproduction
from mpvi.repro.run import script_main

from mpvi_papers.bea._bea import PAPER, energy_figure, energy_output, energy_tasks

STEPS = ["1/5", "1/10", "1/20", "1/40", "1/80", "1/160"]
PARAMS = {
    "system": "double_pendulum", "q0": ["1/2", "1/2"], "p0": ["0", "0"], "T": "10",
    "samples": 200,
    "groups": [{"method": "midpoint", "digits": None, "order": 4, "steps": STEPS},
               {"method": "simpson", "digits": None, "order": 4, "steps": STEPS},
               {"method": "lobatto", "digits": None, "order": 0, "steps": STEPS[:5]},
               {"method": "mutze", "digits": None, "order": 2, "steps": STEPS}],
}
QUICK = {
    "T": "5", "samples": 50,
    "groups": [{"method": "midpoint", "digits": None, "order": 2, "steps": STEPS[1:4]},
               {"method": "mutze", "digits": None, "order": 2, "steps": STEPS[1:4]}],
}


def plot(out, p):
    return energy_figure(out, f"Double pendulum, T = {p['T']}")


REPRODUCTION = Reproduction(
    id="bea_double", paper=PAPER, item="modified energies, double pendulum",
    title="energy errors of the truncated modified Hamiltonians H~_k on the double pendulum "
          "(M(q)) fall as h^(p+k); Mutze's method has no H~ there",
    params=PARAMS, quick=QUICK, compute=energy_output,
    plot=plot,
    tasks=energy_tasks, published=False)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
