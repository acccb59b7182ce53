"""The Lobatto variational integrator with any number of points (the demonstration that
a new Galerkin-quadrature scheme is a few lines of data on the engine).

Discrete Lagrangian (Marsden & West 2001, Sec. 2.6; Hairer, Lubich & Wanner, *Geometric
Numerical Integration*, Sec. VI.6.4): on [t_j, t_j + h] the trajectory is the polynomial
of degree s - 1 through s equispaced points q_j = q^0, q^1, ..., q^(s-1) = q_{j+1}, and
the action is taken with the s-point Gauss-Lobatto rule (nodes and weights computed at
the context precision):

    L_d = h sum_k w_k L(t_k, x(t_k), x'(t_k)).

The discrete Lagrange-d'Alembert equations of :mod:`mpvi.methods.variational` (internal
points: dL_d/dq^i + f_i = 0; p_j + dL_d/dq^0 + f_0 = 0; p_{j+1} = dL_d/dq^(s-1) + f_(s-1))
are solved by Newton.  The scheme is the partitioned Lobatto IIIA-IIIB method: order
2 s - 2, symplectic, symmetric.  s = 3 is Simpson's scheme (top2025 App. A); s = 4 (the
default) is of order 6.  Internal data of a step: the s - 2 internal points.
"""
import sympy as sp

from mpvi.methods.base import Method, register
from mpvi.methods.variational import (MAX_LOBATTO_POINTS, lagrange_variational,
                                      lobatto as lobatto_discretization, prepare_rule)


def prepare(system, h, ctx, points=4, newton=None):
    """Prepare a Lobatto variational step (Marsden & West 2001, Sec. 2.6; not in the four papers).

    ``points``: number of Lobatto points s >= 2 (order 2 s - 2); ``newton``: options
    for :func:`mpvi.numbers.newton.solve`."""
    return prepare_rule(lobatto_discretization(points), system, h, ctx, newton)


def _stability_bound(p):
    """omega h bounds on the oscillator: 2 for two points (Stormer-Verlet), 2 sqrt 2 for
    three (Simpson, eq. 40); none known below pi for more."""
    return {2: sp.Integer(2), 3: 2 * sp.sqrt(2)}.get(p["points"])


lobatto = register(Method(
    name="lobatto", label="Lobatto", state="qp", params={"points": 4},
    order=lambda p: 2 * p["points"] - 2, symplectic=True, implicit=True,
    reference="Marsden & West 2001 Sec. 2.6 (not in the four papers); points = 3 is top2025 App. A",
    prepare=prepare, internal="internal points", doc=__doc__, stability_bound=_stability_bound,
    declaration=lambda p: lagrange_variational(lobatto_discretization(p["points"])),
    order_parameter=("points", 2, MAX_LOBATTO_POINTS)))
