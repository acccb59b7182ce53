"""Simpson's variational integrator (axioms2024 Sec. 3 for M q'' + K q = 0; top2025 Sec. 2).

For a nonlinear :class:`mpvi.model.mechanics.LagrangianSystem` the ``simpson`` scheme solves the
discrete Euler-Lagrange equations of top2025 eqs. (6), (8), (13), (14) by Newton's method
(see :mod:`mpvi.methods.variational`); the rest of this docstring is the linear form.

Quadratic finite-element interpolation on [t_j, t_j+1] through (q_l, q_m, q_r) =
(q_j, q_j+1/2, q_j+1) (eqs. 13-14), Gear's derivatives g_l, g_m, g_r (eq. 15), and
Simpson's rule for the action (eq. 1):

    L_h(q_l, q_m, q_r) = h/2 [1/6 g_l^T M g_l + 2/3 g_m^T M g_m + 1/6 g_r^T M g_r]
                       - h/2 [1/6 q_l^T K q_l + 2/3 q_m^T K q_m + 1/6 q_r^T K q_r].

Discrete Euler-Lagrange equations: dL_h/dq_m = 0 (eq. 18), p_j = -dL_h/dq_l (eq. 22),
p_j+1 = dL_h/dq_r (eq. 24), equivalently (eq. 25)

    M 4 (q_j - 2 q_j+1/2 + q_j+1)/h^2 + K q_j+1/2 = 0,
    (p_j+1 - p_j)/h = -K (q_j/6 + 2/3 q_j+1/2 + q_j+1/6),
    (p_j + p_j+1)/2 = (M - h^2 K/12) (q_j+1 - q_j)/h.

Variant 1 (``simpson_v1``, eqs. 26-29) solves for (q_j+1/2, p_j+1, q_j+1) with
A_sigma, B_sigma of eq. (28) and keeps the midpoint.  Variant 2 (``simpson``, eqs.
30-32) eliminates q_j+1/2 = 1/2 L^-1 (q_j + q_j+1), L = I - h^2/8 M^-1 K, and reads
A_s eta_j+1 = B_s eta_j with X_s = 2M/h - hK/6, Y_s = h/3 (K L^-1 + K/2) (eq. 31).
Both give the same nodes.  Order 4, symplectic for omega_max h < 2 sqrt 2 (eq. 40, a
sufficient condition; the exact stability set of the scalar oscillator is
(0, 2 sqrt 2) U (2 sqrt 3, 2 sqrt 6), see ``mpvi.analysis.measures.stability_scan``).

The internal data of a step (``sol.internal[j]``, shape (1, dof)) is q_{j+1/2}.
Preparing a Simpson step checks eq. (40) and raises :class:`StabilityError` when
omega_max h >= 2 sqrt 2, unless ``check_stability=False``.
"""
import numpy as np
import sympy as sp

from mpvi.methods.declarations import LinearOnly
from mpvi.methods.base import (Method, StabilityError, StepResult, pq_block_stepper, prop1_matrices,
                   quadratic_form_matrices, register, require_linear)
from mpvi.methods.variational import SIMPSON, lagrange_variational, prepare_rule


def check_simpson_stability(system, h, ctx):
    """Raise :class:`StabilityError` if omega_max h >= 2 sqrt 2 (axioms2024 eq. 40)."""
    wh = system.omega_max() * abs(h)
    bound = 2 * ctx.sqrt(ctx.num(2))
    if not wh < bound:
        raise StabilityError(
            f"Simpson's scheme needs omega_max h < 2 sqrt(2) = {ctx.to_str(bound, 8)} "
            f"(axioms2024 eq. 40); here omega_max = {ctx.to_str(system.omega_max(), 8)}, "
            f"h = {ctx.to_str(h, 8)}, omega_max h = {ctx.to_str(wh, 8)}.  Reduce h below "
            f"{ctx.to_str(bound / system.omega_max(), 8)}, or pass check_stability=False "
            "to study the scheme beyond its proven bound.")


def simpson_L(system, h, ctx):
    """L = I - h^2/8 M^-1 K (eq. 26)."""
    return ctx.eye(system.dof) - h * h / 8 * (system.Minv @ system.K)


def simpson_XY(system, h, ctx):
    """X_s = 2M/h - hK/6 and Y_s = h/3 (K L^-1 + K/2) of eq. (31)."""
    K = system.K
    KLinv = ctx.solve(simpson_L(system, h, ctx).T, K.T).T     # K L^-1
    return 2 * system.M / h - h * K / 6, h / 3 * (KLinv + K / 2)


def _setup(system, h, ctx, check_stability, name):
    require_linear(system, name)
    if check_stability:
        check_simpson_stability(system, h, ctx)


def prepare_v2(system, h, ctx, check_stability=True):
    """Prepare a step of Simpson's scheme, variant 2, for M q'' + K q = 0 (axioms2024 eqs. (30)-(32))."""
    _setup(system, h, ctx, check_stability, "simpson")
    A, B = prop1_matrices(*simpson_XY(system, h, ctx), ctx)
    return pq_block_stepper(ctx.solve(A, B), system.dof)


def prepare(system, h, ctx, check_stability=True, newton=None):
    """Prepare a Simpson step (axioms2024 eqs. (30)-(32) if linear; top2025 Sec. 2, App. A otherwise).

    Linear systems: variant 2 (eqs. 30-32).  Nonlinear :class:`LagrangianSystem`:
    the Newton form of top2025 App. A (:mod:`mpvi.methods.variational`), midpoint kept;
    ``newton`` = options for :func:`mpvi.numbers.newton.solve` (max_iter, rtol, scale)."""
    if getattr(system, "is_linear", False):
        if newton:
            raise ValueError("the linear Simpson scheme is explicit in closed form: no Newton options")
        return prepare_v2(system, h, ctx, check_stability)
    return prepare_rule(SIMPSON, system, h, ctx, newton)


def simpson_phi(system, h, ctx):
    """The quadratic form phi(p, q) = 1/2 p^T xi_s p + 1/2 q^T zeta_s q conserved by
    Simpson's scheme on a linear system (axioms2024 Prop. 7 with X_s, Y_s of eq. 31; Sec.
    6.3).  Returns a function ``phi(q, p)``.  Note xi_s ~ (h/2) M^-1, so phi ~ (h/2) H:
    (2/h) phi -> H as h -> 0."""
    xi, zeta = quadratic_form_matrices(*simpson_XY(system, ctx.num(h), ctx), ctx)

    def phi(q, p):
        return (p @ (xi @ p) + q @ (zeta @ q)) / 2
    return phi


def sigma_matrices(system, h, ctx):
    """A_sigma (3n x 3n) on (q_j+1/2, p_j+1, q_j+1) and B_sigma (3n x 2n) on
    eta_j = (p_j, q_j), eq. (28).  (Eq. 27 prints B_sigma eta_j+1; it acts on eta_j.)"""
    n = system.dof
    eye, zero = ctx.eye(n), ctx.zeros((n, n))
    K = system.K
    X = 2 * system.M / h - h * K / 6
    A = np.block([[simpson_L(system, h, ctx), zero, -eye / 2],
                  [zero, eye, -X],
                  [2 * h / 3 * K, eye, h / 6 * K]])
    B = np.block([[zero, eye / 2],
                  [-eye, -X],
                  [eye, -h / 6 * K]])
    return A, B


def prepare_v1(system, h, ctx, check_stability=True):
    """Prepare a step of Simpson's scheme, variant 1, midpoint kept (axioms2024 eqs. (26)-(29))."""
    _setup(system, h, ctx, check_stability, "simpson_v1")
    n = system.dof
    psi = ctx.solve(*sigma_matrices(system, h, ctx))          # eq. (29)
    mq, mp = psi[:n, :n], psi[:n, n:]
    pp, pq = psi[n:2 * n, :n], psi[n:2 * n, n:]
    qp, qq = psi[2 * n:, :n], psi[2 * n:, n:]

    def stepper(t, q, p, carry=None):
        return StepResult(qp @ p + qq @ q, pp @ p + pq @ q, (mq @ p + mp @ q).reshape(1, n))
    stepper.phi = psi[n:, :]
    return stepper


simpson = register(Method(
    name="simpson", label="Simpson", state="qp", order=4, symplectic=True, implicit=True,
    reference="axioms2024 eqs. (30)-(32) (linear, variant 2); top2025 Sec. 2, App. A (nonlinear)",
    prepare=prepare, internal="q_mid", doc=__doc__, stability_bound=2 * sp.sqrt(2),
    declaration=lambda p: lagrange_variational(SIMPSON), checks_stability=True))

def _v1_declaration(params):
    """Variant 1 gives the nodes of variant 2 (the same discrete Euler-Lagrange equations,
    solved for the midpoint too), on linear systems only, for mpvi.analysis.modified."""
    return LinearOnly(lagrange_variational(SIMPSON))


simpson_v1 = register(Method(
    name="simpson_v1", label="Simpson (variant 1)", state="qp", order=4, symplectic=True,
    implicit=True, reference="axioms2024 eqs. (26)-(29) (variant 1, internal midpoint kept)",
    prepare=prepare_v1, internal="q_mid", doc=__doc__, stability_bound=2 * sp.sqrt(2),
    declaration=_v1_declaration, takes_newton_options=False, checks_stability=True))

__all__ = ["simpson", "simpson_v1", "check_simpson_stability", "simpson_XY", "simpson_phi",
           "StabilityError"]
