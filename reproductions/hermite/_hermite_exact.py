"""Exact proofs of the hermite formulas (``mpvi run --certify`` of hermite_fig01,
hermite_stability and hermite_symplecticity): every printed formula decided against the
derived one in FLINT's exact arithmetic, with Arb root isolation where an algebraic number
is involved.

A ``symbolic`` published value is proven by an enclosure of the difference printed -
reproduced (:func:`mpvi.repro.published.proof`): ``[0 +/- 0]`` when the two are proven
the same function, a ball without 0 when they are proven to differ (their difference at
a rational point).  The kinds of formula, and how each is decided:

* rational functions of one symbol (A(z) of Sec. 4.1, the Jacobians of Sec. 4.2, the
  Hermite polynomials of eqs. 17, 27-28, det A = 1): numerator and denominator as
  ``fmpq_poly``; equal iff n1 d2 - n2 d1 = 0 exactly; otherwise their difference at the
  first positive integer point where it is nonzero (an exact rational);
* real algebraic numbers (the stability limits z*): the derived limit is a positive root
  of (tr A - 2) or (tr A + 2) (numerators as ``fmpq_poly``), isolated by FLINT
  (``fmpz_poly.complex_roots``); the printed number r (e.g. sqrt(28/3)) equals it iff its
  minimal polynomial (exact, sympy) divides that polynomial and its Arb enclosure lies in
  the root's isolating ball (which holds no other root); it differs if the two balls are
  disjoint;
* eigenvalues lambda = a + u sqrt(c) (a, u, c rational functions): equal iff a1 = a2 and
  c1 = s^2 c2, u1 s = u2 for a positive rational s (exact); otherwise their difference at a
  rational point where both radicands are positive, in Arb.  The derived lambda is also
  checked to be a root of lambda^2 - tr A lambda + det A (exact, both parts of a + b sqrt c).

Printed formulas are read from the published data by :func:`mpvi.repro.published.parse_formula`
(a closed grammar: nothing runs as code).  flint is imported inside the functions.
"""
from __future__ import annotations

from math import isqrt

import sympy as sp

class NotDecided(ValueError):
    """A printed formula of a kind the exact comparison does not handle."""


def printed_formulas(rid):
    """{key: printed sympy expression} of the ``symbolic`` published values of ``rid``."""
    from mpvi.repro.published import load_all_published, parse_formula
    return {v.key: parse_formula(v.printed, f"{rid} {v.key}").doit()
            for v in load_all_published() if v.id == rid and v.compare == "symbolic"}


def _single_symbol(*exprs):
    names = {s.name for e in exprs for s in e.free_symbols}
    if len(names) > 1:
        raise NotDecided(f"more than one symbol ({', '.join(sorted(names))})")
    return next(iter(names), None)


def _poly(expr, name):
    """An exact polynomial (sympy) in the symbol ``name`` as an fmpq_poly."""
    from flint import fmpq, fmpq_poly
    x = sp.Symbol(name or "x_")
    expr = expr.subs({s: x for s in expr.free_symbols})
    P = sp.Poly(sp.expand(expr), x, domain="QQ")
    return fmpq_poly([fmpq(int(c.p), int(c.q)) for c in reversed(P.all_coeffs())])


def ratfunc(expr, name=None):
    """(numerator, denominator) as fmpq_poly of a rational function of one symbol.
    NotDecided if ``expr`` is not one (a radical, another symbol)."""
    name = name or _single_symbol(expr)
    if any(not a.exp.is_Integer for a in expr.atoms(sp.Pow)):
        raise NotDecided(f"{expr} is not a rational function")
    num, den = sp.fraction(sp.cancel(sp.together(expr)))
    return _poly(num, name), _poly(den, name)


def _at(nd, x):
    """A rational function (num, den) at the fmpq x (None at a pole)."""
    n, d = nd
    dx = d(x)
    return None if dx == 0 else n(x) / dx


def rational_difference(p, r):
    """The difference p - r of two rational functions (num, den): arb 0 (exact) if it is
    identically zero, else an Arb ball of it at the first positive integer point where
    both are defined and differ (exact rational, so the ball excludes 0)."""
    from flint import arb, fmpq
    if p[0] * r[1] - r[0] * p[1] == 0:
        return arb(0)
    for k in range(1, 10 ** 4):
        x = fmpq(k)
        a, b = _at(p, x), _at(r, x)
        if a is not None and b is not None and a != b:
            return arb(a - b)
    raise NotDecided("no point found where two different rational functions differ")


def decide_rational(printed, derived):
    """The difference ball of a printed and a derived rational function (sympy)."""
    name = _single_symbol(printed, derived)
    return rational_difference(ratfunc(printed, name), ratfunc(derived, name))


# ----- algebraic numbers ------------------------------------------------------------------------

def _squarefree(P):
    """The squarefree part of the numerator of the fmpq_poly P, an fmpz_poly."""
    from flint import fmpz_poly
    if P == 0:
        raise NotDecided("the zero polynomial has no isolated roots")
    sq = fmpz_poly(P.numer())
    g = sq.gcd(sq.derivative())
    return sq // g if g.degree() > 0 else sq


def all_roots(P):
    """Every complex root of P (squarefree part), as FLINT's disjoint isolating acb balls."""
    sq = _squarefree(P)
    return [r for r, _ in sq.complex_roots()] if sq.degree() >= 1 else []


def positive_roots(P):
    """The positive real roots of the fmpq_poly P, each an Arb ball from FLINT's root
    isolation (disjoint balls, each holding exactly one root), increasing."""
    roots = []
    for r in all_roots(P):
        if r.imag == 0 and r.real > 0:
            roots.append(r.real)
        elif r.imag == 0 and r.real.contains(0) and not r.real == 0:
            raise NotDecided("a real root is not separated from 0")
    return sorted(roots, key=lambda b: b.mid())


def _rational_between(a, b):
    """An exact rational strictly between the disjoint balls a < b (a may be None: 0)."""
    from flint import fmpq
    lo = fmpq(0) if a is None else _fmpq_of(a.upper())
    hi = _fmpq_of(b.lower())
    if not lo < hi:
        raise NotDecided("two isolating balls overlap")
    return (lo + hi) / 2


def _fmpq_of(x):
    """The exact value of an exact arb (an endpoint) as an fmpq."""
    from flint import fmpq
    man, exp = x.mid().man_exp()
    man, exp = int(man), int(exp)
    return fmpq(man * 2 ** exp) if exp >= 0 else fmpq(man, 2 ** -exp)


def stable_set(tr):
    """The open intervals of z > 0 where |tr A(z)| < 2 (tr a rational function
    (num, den), its denominator without positive roots): a list of (lo, hi) with lo, hi
    None (0 resp. infinity) or (ball, polynomial) -- an isolated root of the numerator of
    tr - 2 or tr + 2 -- decided exactly at a rational point between consecutive roots."""
    from flint import fmpq
    n, d = tr
    if positive_roots(d):
        raise NotDecided("tr A has a pole at some z > 0")
    ends = [(b, n - 2 * d) for b in positive_roots(n - 2 * d)]
    ends += [(b, n + 2 * d) for b in positive_roots(n + 2 * d)]
    ends.sort(key=lambda e: e[0].mid())
    for (a, _), (b, _) in zip(ends, ends[1:]):
        if a.overlaps(b):
            raise NotDecided("tr A = 2 and tr A = -2 at roots not separated")
    cuts = [None] + ends + [None]
    out = []
    for left, right in zip(cuts[:-1], cuts[1:]):
        if right is None:
            x = (fmpq(1) if left is None else _fmpq_of(left[0].upper())) + 1
        else:
            x = _rational_between(None if left is None else left[0], right[0])
        value = _at(tr, x)
        if value * value < 4:
            if out and out[-1][1] is left and left is not None:
                raise NotDecided("two stable intervals touch at a root")
            out.append((left, right))
    return out


def algebraic_ball(expr, digits):
    """An Arb enclosure of a real algebraic sympy number built of rationals and radicals."""
    from mpvi.numbers.arb import ArbContext
    return ArbContext(digits).num(expr)


def decide_endpoint(printed, end, digits):
    """The difference ball printed - end for a printed real number (sympy: a rational or
    radical expression, or oo) and a derived stability limit ``end`` (None for infinity,
    else (isolating ball, polynomial))."""
    from flint import acb, arb
    if end is None or printed == sp.oo:
        if end is None and printed == sp.oo:
            return arb(0)
        if end is None:
            raise NotDecided("a finite printed limit against an unbounded interval")
        return arb("inf")
    ball, P = end
    x = sp.Symbol("x")
    mp = _poly(sp.minimal_polynomial(printed, x), "x")
    value = algebraic_ball(printed, digits)
    near = [r for r in all_roots(P) if r.overlaps(acb(value))]
    if (P % mp) == 0 and len(near) == 1 and near[0].real.overlaps(ball):
        # printed is a root of P (its minimal polynomial divides P) lying in the isolating
        # ball of the limit and in no other root's ball: it is the limit
        return arb(0)
    if not ball.overlaps(value):
        return value - ball
    raise NotDecided(f"{printed} is neither proven equal to nor apart from the limit {ball}")


# ----- eigenvalues a + u sqrt(c) ----------------------------------------------------------------

def radical_form(expr, name):
    """(a, u, c) with expr = a + u sqrt(c), a, u, c rational functions (num, den) of the
    symbol ``name``; NotDecided for another shape."""
    num, den = sp.fraction(sp.together(expr))
    a_terms, u_terms, radicand = [], [], None
    for term in sp.Add.make_args(sp.expand(num)):
        factors = sp.Mul.make_args(term)
        roots = [f for f in factors if f.is_Pow and f.exp == sp.Rational(1, 2)]
        if not roots:
            a_terms.append(term)
            continue
        rad = sp.expand(sp.Mul(*[f.base for f in roots]))
        if radicand is not None and sp.expand(rad - radicand) != 0:
            raise NotDecided(f"{expr}: more than one radical")
        radicand = rad
        u_terms.append(sp.Mul(*[f for f in factors if f not in roots]))
    if radicand is None:
        raise NotDecided(f"{expr} has no radical")
    if any(not a.exp.is_Integer for a in (sp.Add(*a_terms) + sp.Add(*u_terms) + den).atoms(sp.Pow)):
        raise NotDecided(f"{expr}: nested radicals")
    return (ratfunc(sp.Add(*a_terms) / den, name), ratfunc(sp.Add(*u_terms) / den, name),
            ratfunc(radicand, name))


def _mul(f, g):
    return (f[0] * g[0], f[1] * g[1])


def _add(f, g):
    return (f[0] * g[1] + g[0] * f[1], f[1] * g[1])


def _zero(f):
    return f[0] == 0


def _const(q):
    from flint import fmpq, fmpq_poly
    return (fmpq_poly([fmpq(q)]), fmpq_poly([1]))


def is_eigenvalue(form, tr, det):
    """Whether a + u sqrt(c) is a root of lambda^2 - tr lambda + det (exactly: the rational
    part a^2 + u^2 c - tr a + det and the radical part 2 a u - tr u both vanish)."""
    a, u, c = form
    minus = _const(-1)
    rational = _add(_add(_add(_mul(a, a), _mul(_mul(u, u), c)), _mul(minus, _mul(tr, a))), det)
    radical = _add(_mul(_const(2), _mul(a, u)), _mul(minus, _mul(tr, u)))
    return _zero(rational) and _zero(radical)


def decide_radical(printed, derived, digits):
    """The difference ball printed - derived of two expressions a + u sqrt(c) of one
    symbol: 0 if proven identical (exact: a1 = a2, c1 = s^2 c2 and u1 s = u2 with s > 0
    rational), else their difference at the first rational point k/4 where both radicands
    are positive and both are defined, if the Arb ball excludes 0."""
    from flint import arb, fmpq
    name = _single_symbol(printed, derived)
    (a1, u1, c1), (a2, u2, c2) = radical_form(printed, name), radical_form(derived, name)
    N, D = c1[0] * c2[1], c1[1] * c2[0]        # c1 / c2 = N / D
    k = N[N.degree()] / D[D.degree()] if N != 0 and D != 0 else None
    if k is not None and k > 0 and N == D * k and rational_difference(a1, a2) == 0:
        p, q = int(k.p), int(k.q)
        if isqrt(p) ** 2 == p and isqrt(q) ** 2 == q:       # c1 = s^2 c2, s = sqrt(k)
            if rational_difference(_mul(u1, _const(fmpq(isqrt(p), isqrt(q)))), u2) == 0:
                return arb(0)
    for k in range(1, 400):
        x = fmpq(k, 4)
        vals = []
        for a, u, c in ((a1, u1, c1), (a2, u2, c2)):
            av, uv, cv = _at(a, x), _at(u, x), _at(c, x)
            if av is None or uv is None or cv is None or not cv > 0:
                break
            vals.append(arb(av) + arb(uv) * arb(cv).sqrt())
        if len(vals) == 2:
            d = vals[0] - vals[1]
            if not d.contains(0):
                return d
    raise NotDecided(f"{printed} and {derived}: neither proven identical nor apart")


# ----- the hooks' common part -------------------------------------------------------------------

FORMULA_STATEMENT = (
    "Each printed formula is decided against the derived one in exact arithmetic (FLINT "
    "fmpq_poly; Arb root isolation of fmpz_poly roots for the stability limits): the enclosure "
    "of a formula is that of printed - derived, exactly 0 when they are proven the same "
    "function (or number), or a ball without 0 (their difference at a rational point) when "
    "they are proven to differ.")

NOT_PUBLISHED = ("a formula derived in exact arithmetic, but the paper prints none to compare "
                 "it with (nothing to prove of a published value)")


def formula_block(run, printed, decide, statement):
    """A certify hook's result for formulas: ``decide(key, printed expression)`` gives the
    difference ball of each printed formula (``printed``: :func:`printed_formulas`),
    recorded with the run's digits as its proven digits (the formula is exact;
    :func:`mpvi.repro.published.proof` decides it by the ball)."""
    values, not_certified = {}, {}
    for key, expr in printed.items():
        try:
            values[key] = (run.ctx.dps, decide(key, expr))
        except NotDecided as exc:
            not_certified[key] = f"the exact comparison does not decide it: {exc}"
    return {"statement": statement, "values": values, "not_certified": not_certified}
