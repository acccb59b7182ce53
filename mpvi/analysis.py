"""Errors, convergence orders, invariants, symplecticity and linear stability.

Norm convention (axioms2024 Sec. 6.4, as Table 2 supports it): the error of a trajectory
in q (or p) is  ||e||_inf = max_j |q_j - q_ex(t_j)|_2, the largest *Euclidean* norm of
the error vector over all nodes j = 0..N.
"""
from __future__ import annotations

import numpy as np

from .schemes import get_scheme


def node_errors(ctx, values, reference):
    """Euclidean norm of ``values[j] - reference[j]`` for every row j."""
    return np.array([ctx.norm2(v - r) for v, r in zip(values, reference)], dtype=ctx.dtype)


def error_norms(traj, exact):
    """``{'q': max_j |q_j - q_ex(t_j)|_2, 'p': ...}`` against an exact solution object with
    ``q(t)`` and ``p(t)`` taking an array of times."""
    return sup_errors(traj, exact.q(traj.t), exact.p(traj.t))


def sup_errors(traj, q_ref, p_ref):
    """``{'q': max_j |q_j - q_ref[j]|_2, 'p': ...}`` against reference values already
    sampled on the trajectory's nodes (e.g. one exact evaluation shared by several schemes)."""
    ctx = traj.ctx
    return {"q": max(node_errors(ctx, traj.q, q_ref)), "p": max(node_errors(ctx, traj.p, p_ref))}


def fit_order(ctx, hs, errors):
    """Least-squares slope of log(error) against log(h): the convergence order."""
    if len(hs) != len(errors) or len(hs) < 2:
        raise ValueError("fit_order needs at least two (h, error) pairs of equal count")
    if any(not e > 0 for e in errors):
        raise ValueError("fit_order needs positive errors (an error of 0 has no logarithm)")
    x = [ctx.log(ctx.num(h)) for h in hs]
    y = [ctx.log(e) for e in errors]
    xm = ctx.fsum(x) / len(x)
    ym = ctx.fsum(y) / len(y)
    return ctx.fsum((a - xm) * (b - ym) for a, b in zip(x, y)) / ctx.fsum((a - xm) ** 2 for a in x)


def central_differences(f, x, ctx, delta):
    """Central differences ``out[g, ...] = (f(x + delta e_g) - f(x - delta e_g))[...] / (2 delta)``
    of an array-valued f, for checking generated derivatives (evaluate f in a context with
    more digits than the one being checked)."""
    out = []
    for g in range(len(x)):
        e = ctx.zeros(len(x))
        e[g] = delta
        out.append((np.asarray(f(x + e), dtype=object) - np.asarray(f(x - e), dtype=object))
                   / (2 * delta))
    return np.array(out, dtype=object)


def energy(system, traj):
    """H(q_j, p_j) at every node."""
    return np.array([system.energy(q, p) for q, p in zip(traj.q, traj.p)], dtype=traj.ctx.dtype)


def relative_energy_error(system, traj):
    """|H_j - H_0| / |H_0| at every node."""
    H = energy(system, traj)
    return np.array([abs(x - H[0]) / abs(H[0]) for x in H], dtype=traj.ctx.dtype)


# ----- Proposition 7: the conserved quadratic form ---------------------------------------

def quadratic_form_matrices(X, Y, ctx):
    """xi = (X + Y)^-1 and zeta = (X^-1 + Y^-1)^-1 (axioms2024 Prop. 7, eq. 42)."""
    return ctx.inv(X + Y), ctx.inv(ctx.inv(X) + ctx.inv(Y))


def simpson_phi(system, h, ctx):
    """The quadratic form phi(p, q) = 1/2 p^T xi_s p + 1/2 q^T zeta_s q conserved by
    Simpson's scheme (Prop. 7 with X_s, Y_s of eq. 31; Sec. 6.3).  Returns a function
    ``phi(q, p)``.  Note xi_s ~ (h/2) M^-1, so phi ~ (h/2) H: (2/h) phi -> H as h -> 0."""
    from .schemes.simpson import simpson_XY
    xi, zeta = quadratic_form_matrices(*simpson_XY(system, ctx.num(h), ctx), ctx)

    def phi(q, p):
        return (p @ (xi @ p) + q @ (zeta @ q)) / 2
    return phi


# ----- symplecticity -------------------------------------------------------------------

def one_step_matrix(scheme, system, h, ctx, **options):
    """The 2n x 2n matrix Phi of a linear one-step map acting on eta = (p, q)
    (axioms2024 eq. 12, 32), obtained by stepping the unit vectors (a (q, v) method is
    composed with the Legendre map p = M v at both ends)."""
    method = get_scheme(scheme)
    stepper = method.prepare(system, h, ctx, **options)
    n = system.dof
    phi = ctx.zeros((2 * n, 2 * n))
    eye = ctx.eye(2 * n)
    t = ctx.zero
    for k in range(2 * n):
        phi[:n, k], phi[n:, k] = step_pq(method, stepper, system, t, h, eye[k, n:], eye[k, :n])
    return phi


def step_pq(method, stepper, system, t, h, q, p):
    """One step from (q, p) to (p_1, q_1): a (q, v) method is composed with the Legendre
    map at both ends."""
    if method.state == "qp":
        r = stepper(t, q, p)
        return r.y, r.q
    r = stepper(t, q, system.velocity(q, p, t))
    return system.momentum(r.q, r.y, t + h), r.q


def one_step_jacobian(scheme, make_system, h, q, p, ctx, t=0, **options):
    """The Jacobian d(p_1, q_1)/d(p_0, q_0) of one step of a method on a nonlinear system
    at the point (q, p), by central differences in a context with 2 dps + 10 digits and
    increments 10^-(dps/2 + 5): truncation ~10^-(dps + 10), rounding ~10^-(1.5 dps + 5),
    so the result is correct to the precision of ``ctx``.  ``make_system(context)``
    builds the system in a given context (the same one at two precisions); a (q, v)
    method is composed with the Legendre map at both ends."""
    from .context import MPContext
    if not ctx.is_mp:
        raise ValueError("one_step_jacobian differentiates at a higher precision: it needs an mp context")
    hi = MPContext(2 * ctx.dps + 10)
    system = make_system(hi)
    method = get_scheme(scheme)
    h, t = hi.num(h), hi.num(t)
    stepper = method.prepare(system, h, hi, **options)
    n = system.dof

    def phi(eta):
        return np.concatenate(step_pq(method, stepper, system, t, h, eta[n:], eta[:n]))
    eta = np.concatenate([hi.asarray([hi.num(x) for x in p]), hi.asarray([hi.num(x) for x in q])])
    delta = hi.num(10) ** -(ctx.dps // 2 + 5)
    D = central_differences(phi, eta, hi, delta)          # D[g, i] = d phi_i / d eta_g
    return ctx.asarray([[ctx.num(D[g, i]) for g in range(2 * n)] for i in range(2 * n)])


def canonical_J(n, ctx):
    """J = [[0, -I], [I, 0]] of axioms2024 eq. (33)."""
    eye, zero = ctx.eye(n), ctx.zeros((n, n))
    return np.block([[zero, -eye], [eye, zero]])


def symplecticity_defect(scheme, system, h, ctx, **options):
    """Frobenius norm of Phi^T J Phi - J (eq. 33) of a linear one-step map."""
    return matrix_defect(one_step_matrix(scheme, system, h, ctx, **options), ctx)


def matrix_defect(phi, ctx):
    """||Phi^T J Phi - J||_F for a 2n x 2n Jacobian on (p, q)."""
    J = canonical_J(phi.shape[0] // 2, ctx)
    return ctx.norm_fro(phi.T @ J @ phi - J)


# ----- linear stability ---------------------------------------------------------------

def stability_scan(scheme, omega_h, ctx, **options):
    """Spectral radius of the one-step matrix on the scalar oscillator q'' + q = 0
    (M = 1, K = 1, so h = omega h) for each value of omega h.

    Returns rows ``(omega_h, rho, half_trace, stable)`` where ``stable`` means
    rho <= 1 + sqrt(eps) and the eigenvalues are distinct (a double eigenvalue on the unit
    circle is a Jordan block: linear growth).  Simpson's proven bound is not enforced here.
    ``options`` go to the method (e.g. ``hermite_n=3``).
    """
    from .systems.linear import LinearSystem
    osc = LinearSystem([[1]], [[1]], ctx, name="scalar oscillator")
    tol = ctx.sqrt(ctx.eps)
    rows = []
    for wh in omega_h:
        wh = ctx.num(wh)
        phi = one_step_matrix(scheme, osc, wh, ctx, check_stability=False, **options)
        lam = ctx.eigvals(phi)
        rho = max(abs(z) for z in lam)
        distinct = abs(lam[0] - lam[1]) > tol
        rows.append((wh, rho, (phi[0, 0] + phi[1, 1]) / 2, bool(rho <= 1 + tol and distinct)))
    return rows
