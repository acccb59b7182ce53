"""top2025 Fig. 3: momenta p(t) = (p_1, p_2) of the nonlinear double pendulum over
10 s, implicit midpoint, RK4 and Simpson at h = 0.1 s against a reference.

What the paper shows (Sec. 3.2.1, Fig. 3 caption): the three methods at h = 0.1 s with
the reference curve in light gray, RK4 at h = 1e-5 s.  "Early on, the Implicit midpoint
and RK4 (at h = 1e-1) deviate from the reference curve", while "the Simpson curves
correctly follow the reference curve across the simulation time window of 10 s".

Parameters (``STATES_PARAMS`` of reproductions/top2025/_top2025_pendulum.py, shared with Fig. 2
so the references are one study, computed once and read from the cache by the other): Table 1 data with l = g/omega0^2 (ERRATA
[E13]), T = 10 s, h = 0.1 s, 64 digits.  Two references:
* GBS extrapolation of order 64 (levels = 32) at H = 0.05 s.  Its error is measured by a
  second run at H/2: max |GBS(H) - GBS(H/2)| is ~1e-52 (recorded as
  ``reference gbs halving difference p``); every deviation below is taken against it.
* the paper's reference, RK4 at h = 1e-5 s (10^6 steps, ~10 min), drawn as the gray
  curve (kept every 0.01 s) and compared with GBS on the nodes of h = 0.1 s
  (``reference rk4 h=1e-5 vs gbs p``, ~1e-17: RK4's own global error at that step).
Quick set: GBS of order 24 at H = 0.1 s (error ~1e-15) and RK4 at h = 2e-3 s instead
of 1e-5 s (error ~1e-9); the claims are unaffected (deviation threshold 1e-2).

Compared (reproductions/top2025/published/top2025_pendulum.csv): the deviation of each method,
max_j |p_j - p_ref(t_j)|_2 over [0, 10] s divided by max_j |p_ref(t_j)|_2 -- Simpson's
stays below 1e-2 (about a line width of the figure: "follows the reference"), midpoint's
and RK4's exceed it, first within the first half of the window ("early on"), and both
are larger than Simpson's.

Run: ``mpvi run top2025_fig03`` or ``python reproductions/top2025/top2025_fig03.py``.
"""
from mpvi.repro.run import script_main

from mpvi_papers.top2025._top2025_pendulum import STATES_PARAMS, STATES_QUICK, states_reproduction

PARAMS = dict(STATES_PARAMS)
QUICK = dict(STATES_QUICK)

REPRODUCTION = states_reproduction(
    "top2025_fig03", "Fig. 3", "p", "double pendulum momenta p(t) over 10 s, h = 0.1 s",
    params=PARAMS, quick=QUICK)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
