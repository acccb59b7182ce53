"""Implicit midpoint variational integrator for nonlinear systems (top2025 App. B).

Discrete Lagrangian (one midpoint node):

    L_d(q_l, q) = h L((q_l + q)/2, (q - q_l)/h)
                = h/2 g^T M(q_m) g - h V(q_m),   q_m = (q_l + q)/2,  g = (q - q_l)/h,

discrete Euler-Lagrange equations p_j = -dL_d/dq_l, p_j+1 = dL_d/dq, i.e. (eqs. 18as)

    (p_j+1 - p_j)/h = 1/2 g^T dM(q_m) g - grad V(q_m),   (p_j+1 + p_j)/2 = M(q_m) g.

(The printed App. B gives p_j+1 = -dL_d/dq with the wrong sign and an F_q without the
M(q_m)(q - q_j) term: reproductions/ERRATA.md [E25].)  Order 2, symplectic, symmetric.
Newton's method solves for q_j+1 (:mod:`mpvi.methods.variational`); p_j+1 is explicit.
For a linear system M q'' + K q = 0 it coincides with Newmark's average-acceleration
scheme.
"""
from mpvi.methods.base import Method, register
from mpvi.methods.variational import MIDPOINT, lagrange_variational, prepare_rule


def prepare(system, h, ctx, newton=None):
    """Prepare an implicit midpoint variational step (top2025 App. B, eqs. (18as)).

    ``newton``: options for :func:`mpvi.numbers.newton.solve` (max_iter, rtol, scale); no
    a-priori stability bound."""
    return prepare_rule(MIDPOINT, system, h, ctx, newton)


midpoint = register(Method(
    name="midpoint", label="Implicit midpoint", state="qp", order=2, symplectic=True,
    implicit=True, reference="top2025 App. B, eqs. (18as)", prepare=prepare, doc=__doc__,
    declaration=lambda p: lagrange_variational(MIDPOINT)))
