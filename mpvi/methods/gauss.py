"""The Gauss-Legendre variational integrator with any number of points: a method family
in one file (the example of tutorial 4).

Discrete Lagrangian (Marsden & West 2001, Sec. 2.6; Hairer, Lubich & Wanner, *Geometric
Numerical Integration*, Sec. VI.6.4): on [t_j, t_j + h] the trajectory is the polynomial
of degree s through s + 1 equispaced points q_j = q^0, q^1, ..., q^s = q_{j+1}, and the
action is taken with the s-point Gauss-Legendre rule (nodes and weights computed exactly,
rounded at the context precision):

    L_d = h sum_k w_k L(t_k, x(t_k), x'(t_k)).

The discrete Lagrange-d'Alembert equations of :mod:`mpvi.methods.variational` (internal
points: dL_d/dq^i + f_i = 0; p_j + dL_d/dq^0 + f_0 = 0; p_{j+1} = dL_d/dq^s + f_s) are
solved by Newton.  For L = v^T M v / 2 - V(q) the scheme is the s-stage Gauss collocation
method (HLW Theorem VI.6.4): order 2 s, symplectic, symmetric, stable on the oscillator
for every omega h.  s = 1 is the implicit midpoint variational integrator (top2025
App. B).  Internal data of a step: the s - 1 internal points.

The family is this file alone: the declaration (a Lagrange trial basis and a quadrature
rule) and its metadata.  The trial-function engine steps it (reference and generated
kernel, compiled in a ``kernels`` context), :mod:`mpvi.analysis.modified` derives its modified
equation and :mod:`mpvi.analysis.symbolic` its exact one-step map on linear systems from the same
declaration.
"""
from fractions import Fraction

from mpvi.methods.quadrature import gauss_legendre
from mpvi.methods.base import Method, check_count, register
from mpvi.methods.variational import lagrange_discretization, lagrange_variational, prepare_rule

MAX_GAUSS_POINTS = 12
"""The most Gauss points mpvi builds a step for (order 24)."""


def discretization(points):
    """The Gauss-Legendre discretization with ``points`` = s quadrature nodes: P_s trial
    functions through s + 1 equispaced points, the s-point Gauss-Legendre rule."""
    s = check_count(points, "a Gauss scheme's number of points", 1, MAX_GAUSS_POINTS,
                    "building its step grows quickly with s (12 points: about 27 s for one "
                    "degree of freedom on a 2-core machine)")
    return lagrange_discretization(f"gauss{s}", [Fraction(i, s) for i in range(s + 1)],
                                   gauss_legendre(s))


def prepare(system, h, ctx, points=2, newton=None):
    """Prepare a Gauss-Legendre variational step (Marsden & West 2001, Sec. 2.6).

    ``points``: number of Gauss points s >= 1 (order 2 s); ``newton``: options for
    :func:`mpvi.numbers.newton.solve`."""
    return prepare_rule(discretization(points), system, h, ctx, newton)


gauss = register(Method(
    name="gauss", label="Gauss-Legendre", state="qp", params={"points": 2},
    order=lambda p: 2 * p["points"], symplectic=True, implicit=True,
    reference="Marsden & West 2001 Sec. 2.6, HLW Sec. VI.6.4 (not in the four papers); "
              "points = 1 is top2025 App. B",
    prepare=prepare, internal="internal points", doc=__doc__,
    declaration=lambda p: lagrange_variational(discretization(p["points"])),
    order_parameter=("points", 1, MAX_GAUSS_POINTS)))
