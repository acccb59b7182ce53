"""axioms2024 Fig. 4: p(t) over ten periods.

Generalized momenta, exact, Newmark, RK4 and Simpson over T = 10 t_bar with h = 0.1 t_bar.
Run: ``mpvi run axioms2024_fig04`` or ``python reproductions/axioms2024/axioms2024_fig04.py`` (``--help`` for options).
"""
from mpvi.repro.run import script_main

from mpvi_papers.axioms2024._axioms2024 import time_series_reproduction

PARAMS = {"T_tbar": "10", "h_tbar": "1/10", "methods": ["newmark", "rk4", "simpson"]}

REPRODUCTION = time_series_reproduction(
    "axioms2024_fig04", "Fig. 4", "p(t) over ten periods", PARAMS,
    columns=["p1", "p2"], ylabels=[r"$p_1$ [kg m$^2$/s]", r"$p_2$ [kg m$^2$/s]"])

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
