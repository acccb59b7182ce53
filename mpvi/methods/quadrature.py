"""Trial bases and quadrature rules on one step, exact, converted at context precision.

On a step [t_j, t_j + h] with t = t_j + tau h, tau in [0, 1], a trial function is

    x(t_j + tau h) = sum_i phi_i(tau) h^(d_i) c_i,

with one coefficient vector c_i per *slot* (tau_i, d_i): the d_i-th derivative of x at
t_j + tau_i h.  Lagrange bases have slots (tau_i, 0) (positions at points);  Hermite
bases of degree 2n - 1 have slots (0, d), (1, d), d = 0..n-1 (position, velocity, ...
at both ends; the factor h^d keeps the polynomials free of h).  The polynomials phi_i
have exact rational coefficients.

Quadrature rules on [0, 1] (Gauss-Legendre, Gauss-Lobatto with any number of nodes) are
exact sympy numbers: rationals where they are rational (the midpoint and Simpson rules),
algebraic numbers otherwise.  :func:`to_context` turns an exact number into a context
number, correctly rounded (rationals exactly as ``ctx.num(Fraction)``, irrationals from
``ctx.dps + GUARD_DIGITS`` digits) -- never a typed decimal.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

import sympy as sp

GUARD_DIGITS = 20
_TAU = sp.Symbol("tau")


class Slot(NamedTuple):
    tau: Fraction        # where on the step, as a fraction of h
    derivative: int      # which derivative of x the coefficient is (0: position)


@dataclass(frozen=True)
class Basis:
    """Polynomials phi_i(tau) (exact rational coefficients, lowest degree first) and the
    slot each coefficient stands for."""

    name: str
    coeffs: tuple
    slots: tuple

    def poly(self, i):
        return sum(sp.Rational(c) * _TAU ** k for k, c in enumerate(self.coeffs[i]))

    def value(self, i, tau, derivative=0):
        """phi_i^(derivative)(tau), exact (tau exact)."""
        return sp.diff(self.poly(i), _TAU, derivative).subs(_TAU, tau)

    def values(self, tau, derivative=0):
        """[phi_i^(derivative)(tau) for every slot i], exact and in a form where a zero is
        literally 0: at a node that is a polynomial in one algebraic root r, as
        :func:`reduce_algebraic` writes it (polynomials composed and reduced in Q[r], no
        expression trees), else expanded (radicals multiplied out)."""
        found = _in_root(sp.sympify(tau, strict=True))
        if found is None:
            return [sp.expand(self.value(i, tau, derivative)) for i in range(len(self))]
        node, root = found
        modulus = _minimal(root)
        out = []
        for i in range(len(self)):
            phi = sp.Poly.from_list([sp.Rational(c.numerator, c.denominator)
                                     for c in reversed(self.coeffs[i])], _ROOT, domain="QQ")
            g = phi.diff((_ROOT, derivative)).compose(node).rem(modulus)
            out.append(sp.Add(*[c * root ** m for (m,), c in g.terms()]))
        return out

    def __len__(self):
        return len(self.slots)


def _coeffs(poly):
    p = sp.Poly(sp.expand(poly), _TAU)
    return tuple(Fraction(int(c.p), int(c.q)) for c in reversed(p.all_coeffs()))


@lru_cache(maxsize=None)
def lagrange_basis(points):
    """Lagrange polynomials through ``points`` (fractions of h, increasing, first 0 and
    last 1): slots (tau_i, 0)."""
    pts = [sp.Rational(Fraction(p)) for p in points]
    if len(pts) < 2 or pts[0] != 0 or pts[-1] != 1 or any(b <= a for a, b in zip(pts, pts[1:])):
        raise ValueError(f"Lagrange points must increase from 0 to 1, got {points!r}")
    coeffs = []
    for i, ti in enumerate(pts):
        li = sp.Integer(1)
        for m, tm in enumerate(pts):
            if m != i:
                li *= (_TAU - tm) / (ti - tm)
        coeffs.append(_coeffs(li))
    name = "lagrange(" + ", ".join(str(p) for p in pts) + ")"
    return Basis(name, tuple(coeffs), tuple(Slot(Fraction(str(p)), 0) for p in pts))


@lru_cache(maxsize=None)
def hermite_basis(n):
    """Hermite polynomials of degree 2n - 1: phi for slots (0, d) and (1, d), d < n, with
    phi_(e, d)^(k)(e') = [e = e'][k = d] for k < n (n = 2: the cubic Hermite basis)."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"the Hermite order n must be a positive integer, got {n!r}")
    deg = 2 * n - 1
    cs = sp.symbols(f"c0:{deg + 1}")
    generic = sum(c * _TAU ** k for k, c in enumerate(cs))
    slots = [Slot(Fraction(e), d) for e in (0, 1) for d in range(n)]
    coeffs = []
    for target in slots:
        eqs = [sp.diff(generic, _TAU, s.derivative).subs(_TAU, s.tau) - (1 if s == target else 0)
               for s in slots]
        sol = sp.solve(eqs, cs, dict=True)[0]
        coeffs.append(_coeffs(generic.subs(sol)))
    return Basis(f"hermite{deg}", tuple(coeffs), tuple(slots))


@dataclass(frozen=True)
class Quadrature:
    """Nodes tau_k in [0, 1] and weights w_k (sum 1), exact sympy numbers."""

    name: str
    nodes: tuple
    weights: tuple
    degree: int          # polynomials up to this degree are integrated exactly


def _legendre(k):
    x = sp.Symbol("x")
    return sp.legendre(k, x), x


def _roots(poly, x):
    return sorted(sp.Poly(poly, x).all_roots(), key=lambda r: sp.N(r, 30))


@lru_cache(maxsize=None)
def gauss_legendre(k):
    """k-point Gauss-Legendre rule on [0, 1] (exact for degree 2k - 1)."""
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"Gauss-Legendre needs a positive number of nodes, got {k!r}")
    P, x = _legendre(k)
    dP = sp.diff(P, x)
    # the weight on [0, 1], 1 / ((1 - r^2) P'(r)^2) (half the weight on [-1, 1]), as a
    # polynomial in the root r of degree < k (exact; much faster than simplifying a root
    # expression)
    w = _reciprocal_mod((1 - x ** 2) * dP ** 2, P, x)
    nodes, weights = [], []
    for r in _roots(P, x):
        nodes.append((r + 1) / 2)
        weights.append(w.subs(x, r))
    return Quadrature(f"gauss-legendre{k}", tuple(nodes), tuple(weights), 2 * k - 1)


def _reciprocal_mod(d, p, x):
    """The polynomial q of degree < deg p with q d = 1 modulo p (p squarefree, d prime to
    p): 1/d(r) = q(r) at every root r of p."""
    return sp.rem(sp.invert(sp.expand(d), p, x), p, x)


@lru_cache(maxsize=None)
def gauss_lobatto(k):
    """k-point Gauss-Lobatto rule on [0, 1] with both ends as nodes (exact for degree
    2k - 3); k = 3 is Simpson's rule."""
    if not isinstance(k, int) or k < 2:
        raise ValueError(f"Gauss-Lobatto needs at least two nodes, got {k!r}")
    P, x = _legendre(k - 1)
    dP = sp.diff(P, x)
    inner = _roots(dP, x) if k > 2 else []
    # the weight on [0, 1], 1 / (k (k - 1) P(r)^2) (half the weight on [-1, 1]): at the
    # ends P(+-1)^2 = 1, at the inner nodes (roots of P') a polynomial in r (_reciprocal_mod)
    w = _reciprocal_mod(k * (k - 1) * P ** 2, dP, x) if k > 2 else None
    end = sp.Rational(1, k * (k - 1))
    xs = [sp.Integer(-1)] + inner + [sp.Integer(1)]
    nodes = [(r + 1) / 2 for r in xs]
    weights = [end] + [w.subs(x, r) for r in inner] + [end]
    return Quadrature(f"gauss-lobatto{k}", tuple(nodes), tuple(weights), 2 * k - 3)


_ROOT = sp.Dummy("r")


def _minimal(root):
    """The defining polynomial of the ``CRootOf`` ``root`` (irreducible: sympy keeps the
    factor the root belongs to) in the variable of :func:`_in_root`."""
    return sp.Poly(root.poly.as_expr().subs(root.poly.gens[0], _ROOT), _ROOT, domain="QQ")


def _in_root(value):
    """(g, r) with ``value`` = g(r) exactly, r its one ``CRootOf`` and g a polynomial with
    rational coefficients of degree below r's (irreducible) defining polynomial P, or None
    when ``value`` is not a polynomial in one such root."""
    roots = value.atoms(sp.CRootOf)
    if len(roots) != 1:
        return None
    (root,) = roots
    expr = value.xreplace({root: _ROOT})
    if not expr.is_polynomial(_ROOT):
        return None
    try:
        g = sp.Poly(sp.expand(expr), _ROOT, domain="QQ")
    except sp.polys.polyerrors.PolynomialError:
        return None
    return g.rem(_minimal(root)), root


def reduce_algebraic(value):
    """``value`` with the powers of its one algebraic root reduced, as an exact sympy number.

    A polynomial with rational coefficients in one ``CRootOf`` r (a node or weight of
    :func:`gauss_legendre` or :func:`gauss_lobatto`, or a basis polynomial at such a node)
    is returned as sum_(j < deg P) g_j r^j, g = the polynomial modulo r's defining
    polynomial P (irreducible: sympy keeps the factor r is a root of).  The same number;
    it is zero exactly when g is the zero polynomial (a nonzero g of lower degree than the
    minimal polynomial cannot vanish at r), and compact, so that a zero test and
    :func:`to_context` need not expand a product of sums of roots.  Anything else is
    returned unchanged."""
    value = sp.sympify(value, strict=True)            # a sympy number, never text
    found = _in_root(value)
    if found is None:
        return value
    g, root = found
    return sp.Add(*[c * root ** m for (m,), c in g.terms()])


@lru_cache(maxsize=None)
def _real_roots(poly_coeffs, prec):
    """The real roots, ascending, of the rational polynomial with ``poly_coeffs`` (highest
    degree first), as Arb balls at ``prec`` bits; None if flint cannot separate them."""
    import flint
    old = flint.ctx.prec
    try:
        flint.ctx.prec = prec
        poly = flint.fmpq_poly([flint.fmpq(int(c.p), int(c.q)) for c in reversed(poly_coeffs)])
        roots = [r for r, _ in poly.complex_roots()]
    finally:
        flint.ctx.prec = old
    if not all(r.imag == 0 or not r.imag.contains(0) for r in roots):
        return None
    return sorted((r.real for r in roots if r.imag == 0), key=lambda x: x.mid())


def _arb_digits(value, digits):
    """``value`` (a polynomial in one real ``CRootOf``) to ``digits`` significant digits,
    from an Arb enclosure whose radius is below a hundredth of the last digit (the
    precision doubled until it is), or None where this does not apply."""
    found = _in_root(value)
    if found is None or not found[1].is_real:
        return None
    import flint
    g, root = found
    coeffs = tuple(root.poly.all_coeffs())
    prec = 4 * digits + 64
    for _ in range(6):
        roots = _real_roots(coeffs, prec)
        if roots is None or len(roots) <= root.index:
            return None
        old = flint.ctx.prec
        try:
            flint.ctx.prec = prec
            r, total = roots[root.index], flint.arb(0)
            for c in g.all_coeffs():                          # Horner, highest first
                total = total * r + flint.arb(flint.fmpq(int(c.p), int(c.q)))
            if not total.contains(0) and total.rad() < abs(total.mid()) * flint.arb(10) ** -(digits + 2):
                return total.mid().str(digits, radius=False)
            if total.is_exact() and total == 0:
                return "0"
        finally:
            flint.ctx.prec = old
        prec *= 2
    return None


@lru_cache(maxsize=4096)
def _digits(value, digits):
    text = _arb_digits(value, digits)
    return str(sp.N(value, digits)) if text is None else text


def to_context(value, ctx):
    """An exact sympy number as a number of ``ctx`` (rationals exactly as fractions)."""
    value = (sp.Rational(value.numerator, value.denominator) if isinstance(value, Fraction)
             else sp.sympify(value, strict=True))
    if value.is_Rational:
        return ctx.num(Fraction(int(value.p), int(value.q)))
    if getattr(ctx, "verified", False):        # balls: an enclosure, never rounded digits
        return ctx.num(value)
    return ctx.num(_digits(value, ctx.dps + GUARD_DIGITS))
