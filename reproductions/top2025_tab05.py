"""top2025 Table 5: Energy error norms ||e_H||_inf and convergence orders for simulation
lengths T = 1, 10, 100, 1000 nutation periods, h = 0.05, 0.025, 0.0125 t_bar, for implicit
midpoint, RK4 and Simpson (Table 3 top, exact nutation of eq. (18aa)).

The table image did not survive the text extraction; the step sizes are those of Sec. 4.2
(h = 0.05 t_bar, "very high" RK4 error at h = 0.05) halved twice, as for the paper's
Table 2.  Orders: log2 of successive error ratios, and the least-squares slope over the
three h.  Both Tables 4 and 5 come from the same runs (computed once per process:
``mpvi run top2025_tab04 top2025_tab05``). The CSV also carries the sup relative errors of
p_phi and p_psi over each run (the variational schemes conserve them to round-off).

Run: ``mpvi run top2025_tab05`` or ``python reproductions/top2025_tab05.py``.
"""
from mpvi.repro import Output, Reproduction, script_main

from reproductions._top2025 import METHODS, PAPER, long_run_table, plot_long_run_table

PARAMS = {"T_tbar": [1, 10, 100, 1000], "N_per_period": [20, 40, 80], "methods": METHODS}
QUICK = {"T_tbar": [1, 10]}


def compute(run):
    df, values, extra = long_run_table(run, "H")
    return Output(tables={"": df}, values=values, extra=extra)


def plot(out, p):
    return plot_long_run_table(out, p, "H", "top2025 Table 5: energy error norms against simulation length")


REPRODUCTION = Reproduction(
    id="top2025_tab05", paper=PAPER, item="Table 5", title="energy error norms for T = 1..1000 nutation periods",
    runtime="~25 min (shared with Table 4)", params=PARAMS, quick=QUICK, compute=compute, plot=plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
