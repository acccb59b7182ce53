"""top2025 Table 4: Nutation error norms ||e_theta||_inf and convergence orders for simulation
lengths T = 1, 10, 100, 1000 nutation periods, h = 0.05, 0.025, 0.0125 t_bar, for implicit
midpoint, RK4 and Simpson (Table 3 top, exact nutation of eq. (18aa)).

The table image did not survive the text extraction; the step sizes are those of Sec. 4.2
(h = 0.05 t_bar, "very high" RK4 error at h = 0.05) halved twice, as for the paper's
Table 2.  Orders: log2 of successive error ratios, and the least-squares slope over the
three h.  Both Tables 4 and 5 come from the same runs: one study per span, method and
step, ``top_long_run`` of reproductions/top2025/_top2025_top.py, computed by the first of the two
to run and read from the cache by the other (``mpvi run --jobs N`` computes the 36 runs side by side).

Run: ``mpvi run top2025_tab04`` or ``python reproductions/top2025/top2025_tab04.py``.
"""
from mpvi.repro.run import script_main

from mpvi_papers.top2025._top2025_top import long_run_reproduction

REPRODUCTION = long_run_reproduction(4, "theta", "nutation error norms")

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
