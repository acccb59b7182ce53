"""Paper-wide pieces of the hermite reproductions (Sharma, Patil, Woolsey, "Hermite-based,
one-step, variational and Galerkin time integrators for mechanical systems"): the methods
compared throughout the paper and their plot styles.

The one-step methods are ``hermite_variational`` (eqs. 18-25) and ``hermite_galerkin``
(eq. 26), both with the cubic Hermite trajectory (n = 2) unless a script says otherwise;
the comparison variational integrator of Sec. 5.1 (quadratic trajectory with one interior
point, ref. [9]) is mpvi's ``simpson`` (see hermite_fig05).
"""
PAPER = "hermite"
METHODS = ["hermite_variational", "hermite_galerkin"]

STYLE = {
    "hermite_variational": {"color": "tab:red", "ls": "--", "label": "One-step variational"},
    "hermite_galerkin": {"color": "tab:blue", "ls": "-", "label": "One-step Galerkin"},
    "simpson": {"color": "tab:green", "ls": "-.", "label": "Variational integrator (quadratic, 1 interior point)"},
    "midpoint": {"color": "tab:purple", "ls": ":", "label": "Midpoint variational integrator"},
    "reference": {"color": "0.6", "ls": "-", "lw": 3, "alpha": 0.6, "label": "benchmark"},
    "exact": {"color": "0.6", "ls": "-", "lw": 3, "alpha": 0.6, "label": "exact"},
}
