"""The exact linear analysis of hermite Sec. 4 shared by hermite_stability, hermite_fig02
and hermite_symplecticity: the one-step maps of the analysed methods on the harmonic
oscillator, derived by :mod:`mpvi.analysis.symbolic` from each method's own declaration (trial
basis, equations or test functions, quadrature), once per process.
"""
from functools import lru_cache

import sympy as sp

from mpvi.methods.hermite import galerkin_spec, variational_spec
from mpvi.methods.variational import MIDPOINT, SIMPSON, lagrange_variational
from mpvi.analysis.symbolic import Z, amplification_matrix, eigenvalues, stable_intervals

# name -> (method spec, registered scheme, its options, label)
ANALYSED = {
    "hermite_variational": (lambda: variational_spec(2), "hermite_variational", {}, "One-step variational (n = 2)"),
    "hermite_galerkin": (lambda: galerkin_spec(2), "hermite_galerkin", {}, "One-step Galerkin (n = 2)"),
    "hermite_variational_n3": (lambda: variational_spec(3), "hermite_variational", {"hermite_n": 3},
                               "One-step variational, n = 3"),
    "hermite_galerkin_n3": (lambda: galerkin_spec(3), "hermite_galerkin", {"hermite_n": 3},
                            "One-step Galerkin, n = 3"),
    "midpoint": (lambda: lagrange_variational(MIDPOINT), "midpoint", {}, "Midpoint variational integrator"),
    "simpson": (lambda: lagrange_variational(SIMPSON), "simpson", {},
                "VI, quadratic with one interior point (Simpson)"),
}


@lru_cache(maxsize=None)
def derived(name):
    """(A(z), (lambda_+, lambda_-), stable intervals) of an analysed method."""
    A = amplification_matrix(ANALYSED[name][0]())
    return A, eigenvalues(A), stable_intervals(A)


def formula(expr):
    """A derived formula as the string kept in CSV/JSON (sympy syntax, factored)."""
    return sp.sstr(sp.factor(expr) if not expr.has(sp.sqrt(Z)) else expr)


def trace_det(name):
    A = derived(name)[0]
    return sp.cancel(A.trace()), sp.cancel(A.det())
