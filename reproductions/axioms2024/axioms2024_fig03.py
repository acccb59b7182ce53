"""axioms2024 Fig. 3: q(t) over ten periods.

Exact, Newmark, RK4 and Simpson over T = 10 t_bar with h = 0.1 t_bar.
Run: ``mpvi run axioms2024_fig03`` or ``python reproductions/axioms2024/axioms2024_fig03.py`` (``--help`` for options).
"""
from mpvi.repro.run import script_main

from mpvi_papers.axioms2024._axioms2024 import time_series_reproduction

PARAMS = {"T_tbar": "10", "h_tbar": "1/10", "methods": ["newmark", "rk4", "simpson"]}

REPRODUCTION = time_series_reproduction(
    "axioms2024_fig03", "Fig. 3", "q(t) over ten periods", PARAMS,
    columns=["q1", "q2"], ylabels=[r"$q_1$ [rad]", r"$q_2$ [rad]"])

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
