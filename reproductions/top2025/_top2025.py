"""Paper-wide pieces of the top2025 reproductions ("Simpson variational integrator for
nonlinear systems: a tutorial on the Lagrange top", Rojas-Quintero, Dubois, Jourdan 2025):
the three methods compared throughout the paper and their plot styles.

The systems have their own modules: ``_top2025_pendulum`` (the nonlinear double
pendulum, Sec. 3: Figs. 2-5, Table 2), ``_top2025_top`` (the looping Table 3 top,
Sec. 4.2: Figs. 7-11, Tables 4-5) and ``_top2025_reduced`` (the cusp motion of the
Table 6 top and its reduced system, Sec. 4.3: Figs. 12-14).
"""
PAPER = "top2025"
METHODS = ["midpoint", "rk4", "simpson"]

STEP_SECONDS = {
    "pendulum": {"midpoint": 2.0e-3, "rk4": 0.45e-3, "simpson": 3.6e-3},
    "top": {"midpoint": 2.4e-3, "rk4": 0.9e-3, "simpson": 5.8e-3},
}
"""Seconds per step of each method at 64 digits on one core of the development machine
(mpmath with gmpy2; for the top including the exact nutation at every node): the cost
hints of the parallel tasks (:class:`mpvi.repro.studies.Task`), which only order them."""

STYLE = {
    "midpoint": {"color": "tab:blue", "ls": "--", "label": "Implicit midpoint"},
    "rk4": {"color": "tab:orange", "ls": "-.", "label": "RK4"},
    "simpson": {"color": "tab:green", "ls": "-", "label": "Simpson"},
    "reference": {"color": "0.6", "ls": "-", "lw": 3, "alpha": 0.6, "label": "reference"},
    "exact": {"color": "0.6", "ls": "-", "lw": 3, "alpha": 0.6, "label": "exact"},
}
