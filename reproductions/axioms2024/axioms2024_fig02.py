"""axioms2024 Fig. 2: q(t) over one period.

Exact, Newmark, RK4 and Simpson (variant 2) over T = 1 t_bar with h = 0.1 t_bar.
Run: ``mpvi run axioms2024_fig02`` or ``python reproductions/axioms2024/axioms2024_fig02.py`` (``--help`` for options).
"""
from mpvi.repro.run import script_main

from mpvi_papers.axioms2024._axioms2024 import time_series_reproduction

PARAMS = {"T_tbar": "1", "h_tbar": "1/10", "methods": ["newmark", "rk4", "simpson"]}

REPRODUCTION = time_series_reproduction(
    "axioms2024_fig02", "Fig. 2", "q(t) over one period", PARAMS,
    columns=["q1", "q2"], ylabels=[r"$q_1$ [rad]", r"$q_2$ [rad]"])

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
