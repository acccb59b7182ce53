"""Newmark's variational scheme for M q'' + K q = 0  (axioms2024, Sec. 2, eqs. 10-12).

Discrete Lagrangian (midpoint quadrature, centred difference):

    L_d(q_l, q_r) = h/2 ((q_r - q_l)/h)^T M ((q_r - q_l)/h) - h/2 ((q_l + q_r)/2)^T K ((q_l + q_r)/2).

Discrete Euler-Lagrange equations with p_j = -dL_d/dq_l(q_j, q_j+1), p_j+1 = dL_d/dq_r
(eqs. 7-9):

    (p_j+1 - p_j)/h = -K (q_j + q_j+1)/2,     (p_j + p_j+1)/2 = M (q_j+1 - q_j)/h,

i.e. A_n eta_j+1 = B_n eta_j with eta = (p, q), X_n = 2M/h, Y_n = hK/2 (eq. 11), and
eta_j+1 = Phi_n eta_j, Phi_n = A_n^-1 B_n (eq. 12).  Second order, symplectic,
unconditionally stable, and it conserves H exactly (it is the implicit midpoint rule
for a linear system).
"""
from fractions import Fraction

from mpvi.methods.declarations import LinearOnly, NewmarkScheme
from mpvi.methods.base import Method, pq_block_stepper, prop1_matrices, register, require_linear


def newmark_XY(system, h):
    """X_n = 2M/h, Y_n = hK/2 of eq. (11)."""
    return 2 * system.M / h, h * system.K / 2


def prepare(system, h, ctx):
    """Prepare a step of Newmark's variational scheme for M q'' + K q = 0 (axioms2024 eqs. (10)-(12)).

    There is no stability bound to check."""
    require_linear(system, "newmark")
    X, Y = newmark_XY(system, h)
    A, B = prop1_matrices(X, Y, ctx)
    return pq_block_stepper(ctx.solve(A, B), system.dof)


def _declaration(params):
    """beta = 1/4, gamma = 1/2 on (q, p = M v), linear systems only, for mpvi.analysis.modified."""
    return LinearOnly(NewmarkScheme(Fraction(1, 4), Fraction(1, 2), form="qp"))


newmark = register(Method(
    name="newmark", label="Newmark", state="qp", order=2, symplectic=True, implicit=True,
    reference="axioms2024 eqs. (10)-(12)", prepare=prepare, doc=__doc__,
    declaration=_declaration, takes_newton_options=False))

