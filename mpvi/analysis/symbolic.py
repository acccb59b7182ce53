"""Exact linear analysis of trial-function methods: the one-step map of a method on the
harmonic oscillator, derived with sympy from the method's own declaration.

For L = 1/2 v^2 - 1/2 omega^2 q^2 (hermite eq. (32)) every method of
:mod:`mpvi.methods.variational` is linear: its equations, written with the method's trial
basis (exact rational polynomials, :mod:`mpvi.methods.quadrature`), its equation slots or test
functions, and its quadrature rule, are linear in the unknown coefficients.  This module
writes them symbolically and solves them exactly, giving the map

    (y_(j+1), q_(j+1)) = Phi(h, omega) (y_j, q_j),       y = v (state "qv") or p (= v here)

and, with omega = 1 and h = z = omega dt, the amplification matrix A(z) of hermite
eq. (35) acting on (v, omega q) (Phi depends on h and omega only through z: a test
checks it).  The integrals are the method's quadrature rule; when that rule is exact for
the integrand (the Hermite methods: degree <= 2 (2n - 1)), the integral is taken exactly
instead, which is the same number without summing over algebraic nodes.

:func:`stable_intervals` gives the complete set of z > 0 where A(z) is power bounded
(eigenvalues on the unit circle and distinct), with exact endpoints.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy as sp

from mpvi.methods.declarations import GalerkinMethod
from mpvi.methods.quadrature import _TAU
from mpvi.ground.precision import entry

if TYPE_CHECKING:
    import sympy

    from mpvi.methods.declarations import VariationalMethod

Z = sp.Symbol("z", positive=True)
DT = sp.Symbol("Delta_t", positive=True)
OMEGA = sp.Symbol("omega", positive=True)


def _integrate(expr, quad):
    """int_0^1 expr(tau) dtau by the quadrature rule, exactly (the exact integral when
    the rule is exact for this polynomial, the weighted sum over the exact nodes otherwise)."""
    poly = sp.Poly(sp.expand(expr), _TAU)
    if poly.degree() <= quad.degree:         # int_0^1 tau^m dtau = 1/(m + 1), term by term
        return sp.Add(*[coeff / (m + 1) for (m,), coeff in poly.terms()])
    # the weighted sum over the exact nodes, power by power: sum_k w_k tau_k^m is a number
    # (rational for the symmetric rules), so the node arithmetic never meets the symbols
    total = sp.Integer(0)
    for (m,), coeff in poly.terms():
        moment = sp.radsimp(sp.expand(sum(w * x ** m for x, w in zip(quad.nodes, quad.weights))))
        total += coeff * moment
    return total


@entry
def oscillator_map(spec: VariationalMethod | GalerkinMethod, h: sympy.Expr | int = DT,
                   omega: sympy.Expr | int = OMEGA) -> sympy.Matrix:
    """Derive the exact one-step map of a trial-function method on the harmonic oscillator.

    For L = v^2/2 - omega^2 q^2/2 (hermite eq. (32)), from the method's own declaration:
    its trial basis, its equation slots or test functions, and its quadrature rule
    (the exact integral where the rule is exact for the integrand).

    Parameters
    ----------
    spec : VariationalMethod or GalerkinMethod
        The method's declaration (:mod:`mpvi.methods.declarations`), e.g.
        ``mpvi.methods.hermite.galerkin_spec(2)``.
    h : sympy expression, default Delta_t
        The step (a positive symbol, or a value).
    omega : sympy expression, default omega
        The frequency (a positive symbol, or a value).

    Returns
    -------
    sympy.Matrix
        The 2 x 2 map Phi(h, omega) on (y, q), y = v or p (equal for this Lagrangian):
        (y_(j+1), q_(j+1)) = Phi (y_j, q_j).

    Raises
    ------
    ArithmeticError
        Step equations without a unique solution.
    """
    basis, quad = spec.disc.basis, spec.disc.quadrature
    slots = basis.slots
    c = sp.symbols(f"c0:{len(slots)}")
    x = sum(basis.poly(i) * h ** s.derivative * c[i] for i, s in enumerate(slots))
    xdot = sp.diff(x, _TAU) / h
    q0, y0 = sp.symbols("q0 y0")
    known = {i: (q0 if s.derivative == 0 else y0) for i, s in enumerate(slots)
             if s.tau == 0 and s.derivative <= spec.known_derivative}
    if isinstance(spec, GalerkinMethod):
        residual = sp.diff(x, _TAU, 2) / h ** 2 + omega ** 2 * x
        eqs = [h * _integrate(residual * psi(_TAU), quad) for psi in spec.tests]
    else:
        S = h * _integrate(xdot ** 2 / 2 - omega ** 2 * x ** 2 / 2, quad)
        eqs = [sp.diff(S, c[e]) + (y0 if momentum else 0) for e, momentum in spec.equations]
    unknown = [c[i] for i in range(len(slots)) if i not in known]
    eqs = [e.subs({c[i]: v for i, v in known.items()}) for e in eqs]
    sol = sp.solve(eqs, unknown, dict=True)
    if len(sol) != 1:
        raise ArithmeticError(f"{spec.disc.name}: the step equations have no unique solution")
    sol = {**sol[0], **{c[i]: v for i, v in known.items()}}
    q1 = sol[c[slots.index((1, 0))]]
    if spec.state == "qv":
        y1 = sol[c[slots.index((1, 1))]]
    else:
        S_q1 = sp.diff(S, c[slots.index((1, 0))])
        y1 = S_q1.subs(sol)
    # the step equations are linear and homogeneous in (c, y0, q0), so y1 and q1 are linear
    # forms in (y0, q0): their coefficients are their values at the unit vectors
    units = ({y0: 1, q0: 0}, {y0: 0, q0: 1})
    return sp.Matrix([[sp.factor(sp.cancel(r.xreplace(u))) for u in units] for r in (y1, q1)])


@entry
def amplification_matrix(spec: VariationalMethod | GalerkinMethod) -> sympy.Matrix:
    """Derive the amplification matrix A(z) of hermite eq. (35), z = omega dt.

    The map of :func:`oscillator_map` on (v, omega q), with omega = 1 and h = z.

    Parameters
    ----------
    spec : VariationalMethod or GalerkinMethod
        The method's declaration, as for :func:`oscillator_map`.

    Returns
    -------
    sympy.Matrix
        A(z), 2 x 2, in the positive symbol ``z`` (:data:`Z`).

    Raises
    ------
    ArithmeticError
        Step equations without a unique solution.
    """
    return oscillator_map(spec, h=Z, omega=sp.Integer(1))


def _acos_squared(terms):
    """arccos(1 - u)^2 = 2 u + u^2/3 + 4 u^3/45 + ... (analytic at u = 0) through
    u^(terms - 1), as {k: coefficient}: arccos(1 - u) = 2 arcsin(sqrt(u/2)) and
    arcsin(x)^2 = sum_(k >= 1) (2x)^(2k) / (2 k^2 binomial(2k, k)), so the coefficient of
    u^k is 2^(k+1) / (k^2 binomial(2k, k))."""
    return {k: sp.Rational(2 ** (k + 1), k * k * sp.binomial(2 * k, k)) for k in range(1, terms)}


@entry
def amplification_frequency(A: sympy.Matrix, order: int) -> tuple[sympy.Expr, sympy.Expr]:
    """The frequency and damping of an amplification matrix, as series in z.

    A(z) has eigenvalues e^((a +- i Omega) z) for a method on the oscillator (omega = 1):
    Omega z = arccos(tr A / (2 sqrt(det A))) (arccos(tr A / 2) when det A = 1) and
    e^(2 a z) = det A.  The arccos is taken through the series of arccos(1 - u)^2 in u,
    which is analytic at u = 0; the series are truncated power series with rational
    coefficients (sympy's ``ring_series``), exact.

    Parameters
    ----------
    A : sympy.Matrix
        A 2 x 2 amplification matrix in ``z`` (:data:`Z`), entries rational functions with
        rational coefficients (:func:`amplification_matrix`).
    order : int
        The highest power of z kept.

    Returns
    -------
    tuple of sympy expressions
        (Omega, a): polynomials in ``z`` (:data:`Z`) through z^order.
    """
    from sympy.polys import ring_series as rs
    from sympy.polys.domains import QQ
    from sympy.polys.rings import ring
    R, z = ring("z", QQ)
    n = order + 3

    def series(e):                       # a rational function of Z as a series to z^n
        num, den = sp.fraction(sp.cancel(sp.together(e)))
        num, den = R(sp.Poly(num, Z).as_expr().subs(Z, sp.Symbol("z"))), \
            R(sp.Poly(den, Z).as_expr().subs(Z, sp.Symbol("z")))
        return rs.rs_mul(num, rs.rs_series_inversion(den, z, n), z, n)
    tr, det = series(A.trace()), series(A.det())
    c = rs.rs_mul(tr, rs.rs_series_inversion(2 * rs.rs_nth_root(det, 2, z, n), z, n), z, n)
    u = 1 - c                                           # O(z^2)
    theta2 = R(0)
    for k, coeff in _acos_squared(n // 2 + 2).items():
        theta2 += rs.rs_pow(u, k, z, n) * QQ(int(coeff.p), int(coeff.q))
    omega2 = R({(m - 2,): v for (m,), v in theta2.items() if m >= 2})   # / z^2
    omega = rs.rs_nth_root(omega2, 2, z, order + 1)
    damping = R({(m - 1,): v / 2 for (m,), v in rs.rs_log(det, z, order + 2).items() if m >= 1})
    to_expr = {sp.Symbol("z"): Z}
    return (omega.as_expr().xreplace(to_expr) if omega else sp.Integer(0),
            damping.as_expr().xreplace(to_expr) if damping else sp.Integer(0))


@dataclass(frozen=True)
class Interval:
    """An open interval (lo, hi) of z, hi = sympy oo for an unbounded one."""

    lo: sp.Expr
    hi: sp.Expr

    def exact(self):
        return f"{sp.sstr(self.lo)} .. {sp.sstr(self.hi)}"


def _positive_roots(expr):
    """Exact positive real roots of the numerator of a rational function of Z, as
    radicals where sympy finds them (factors even in Z are solved for w = Z^2 first)."""
    num = sp.numer(sp.together(expr))
    w = sp.Dummy("w", positive=True)
    roots = set()
    for factor, _ in sp.factor_list(num, Z)[1]:
        if not factor.has(Z):
            continue
        even = sp.expand(factor.subs(Z, -Z) - factor) == 0
        poly = sp.Poly(factor.subs(Z, sp.sqrt(w)) if even else factor, w if even else Z)
        found = sp.roots(poly)
        if sum(found.values()) < poly.degree():
            found = dict.fromkeys(poly.real_roots(), 1)
        for r in found:
            if r.is_real and r.is_positive:
                roots.add(sp.radsimp(sp.sqrtdenest(sp.sqrt(r) if even else r)))
    return roots


@entry
def stable_intervals(A: sympy.Matrix) -> list[Interval]:
    """Find the complete set of z > 0 where A(z) (det A = 1) is stable, with exact ends.

    Stable: ``|tr A| < 2`` (distinct eigenvalues on the unit circle).  The maximal open
    intervals lie between the exact roots of tr A = +-2 and the poles of A, each tested
    at an exact interior point.  An endpoint with tr A = +-2 is a double eigenvalue; it
    is stable only if A = +-I there (:func:`endpoint_is_identity`), and then the two
    intervals it separates are joined.

    Parameters
    ----------
    A : sympy.Matrix
        A 2 x 2 amplification matrix in ``z`` (:func:`amplification_matrix`).

    Returns
    -------
    list of Interval
        The stable intervals, ascending; ``Interval.exact()`` writes one as
        ``'0 .. sqrt(10)'`` (``hi`` is sympy ``oo`` for an unbounded one).
    """
    tr = sp.cancel(A.trace())
    cuts = _positive_roots(tr - 2) | _positive_roots(tr + 2)
    for a_ij in A:
        cuts |= _positive_roots(1 / a_ij) if a_ij != 0 else set()
    cuts = sorted(cuts, key=lambda r: sp.N(r, 50))
    edges = [sp.Integer(0)] + cuts + [sp.oo]
    out = []
    for lo, hi in zip(edges, edges[1:]):
        mid = (lo + hi) / 2 if hi != sp.oo else lo + 1
        mid = sp.nsimplify(sp.N(mid, 30), rational=True)
        if abs(tr.subs(Z, mid)) < 2:
            if out and out[-1].hi == lo and endpoint_is_identity(A, lo):
                out[-1] = Interval(out[-1].lo, hi)
            else:
                out.append(Interval(lo, hi))
    return out


def endpoint_is_identity(A, z):
    """Whether A(z) = +-I (a double eigenvalue that is not a Jordan block)."""
    Az = A.subs(Z, z).applyfunc(sp.simplify)
    return Az == sp.eye(2) or Az == -sp.eye(2)


def eigenvalues(A):
    """(lambda_+, lambda_-) = tr/2 +- sqrt(tr^2/4 - det), simplified."""
    tr, det = sp.cancel(A.trace()), sp.cancel(A.det())
    disc = sp.factor(sp.cancel(tr ** 2 / 4 - det))
    return tuple(sp.together(tr / 2 + s * sp.sqrt(disc)) for s in (1, -1))
