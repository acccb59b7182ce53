"""Shared pieces of the top2025 reproductions ("Simpson variational integrator for
nonlinear systems: a tutorial on the Lagrange top", Rojas-Quintero, Dubois, Jourdan 2025).

The three methods compared throughout the paper, their plot styles, and the two
problems: the nonlinear double pendulum (Sec. 3, Table 1) and the Lagrange top (Sec. 4,
Tables 3 and 6).
"""
from mpvi.systems.double_pendulum import nonlinear_double_pendulum
from mpvi.systems.lagrange_top import table3_top, table6_top

PAPER = "top2025"
METHODS = ["midpoint", "rk4", "simpson"]

STYLE = {
    "midpoint": {"color": "tab:blue", "ls": "--", "label": "Implicit midpoint"},
    "rk4": {"color": "tab:orange", "ls": "-.", "label": "RK4"},
    "simpson": {"color": "tab:green", "ls": "-", "label": "Simpson"},
    "reference": {"color": "0.6", "ls": "-", "lw": 3, "alpha": 0.6, "label": "reference"},
    "exact": {"color": "0.6", "ls": "-", "lw": 3, "alpha": 0.6, "label": "exact"},
}


def double_pendulum(ctx):
    """Table 1 double pendulum (l = g / omega0^2, see ERRATA [E13])."""
    return nonlinear_double_pendulum(ctx)


def loop_top(ctx):
    """Table 3 top (looping motion)."""
    return table3_top(ctx)


def cusp_top(ctx):
    """Table 6 top (cusps) -- complete system; ``.reduced()`` gives eqs. (18aq)."""
    return table6_top(ctx)
