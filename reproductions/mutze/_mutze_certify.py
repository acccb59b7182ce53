"""Ball helpers shared by the mutze reproductions' ``certify`` hooks (``mpvi run
--certify``, issue 45).

* :func:`ball_eval`: a sympy expression (sums, products, integer powers, rationals,
  sin, cos, exp) evaluated on Arb balls (``arb``, ``acb`` or ``arb_series``) by walking its
  tree -- the expression is the reproduction's own, never text read from a file, and no
  float is made: a rational enters as p/q in the ball type;
* :func:`exact`: an exact rational (int, Fraction, sympy Rational, decimal string) as a
  ball of radius 0 (exact when it is dyadic, else the tightest ball at flint's precision);
* :func:`counted`: an exact count as a ball, with proven digits against its printed
  string.

flint is imported inside the functions.
"""
from __future__ import annotations

from fractions import Fraction

import sympy as sp

_FUNCTIONS = {sp.sin: "sin", sp.cos: "cos", sp.exp: "exp"}


def exact(x):
    """The rational ``x`` as an arb (ValueError if it is not rational: a float or an
    irrational sympy number)."""
    from flint import arb
    if isinstance(x, float):
        raise ValueError(f"exact: a float ({x!r}) is no exact input; give its rational")
    if isinstance(x, sp.Basic):
        if not x.is_Rational:
            raise ValueError(f"exact: {x} is not a rational number")
        x = Fraction(int(x.p), int(x.q))
    q = Fraction(x)
    return arb(q.numerator) / arb(q.denominator)


def ball_eval(expr, env, kind=None):
    """``expr`` (a sympy expression) evaluated with the symbols of ``env`` (``{Symbol:
    ball}``) on balls: sums, products, integer powers, rationals and sin, cos, exp.  The
    ball type is that of ``kind`` (a ball used only for its type; default: of the first
    value in ``env``).  TypeError naming a node it cannot enclose; KeyError naming a
    free symbol not in ``env``."""
    from flint import arb
    if kind is None:
        kind = next(iter(env.values())) if env else arb(0)
    cls = type(kind)

    def num(q):
        return cls(int(q.p)) / cls(int(q.q)) if q.q != 1 else cls(int(q.p))

    def walk(e):
        if e.is_Rational:
            return num(e)
        if e.is_Symbol:
            if e not in env:
                raise KeyError(f"ball_eval: the symbol {e} has no value")
            return env[e]
        if e.is_Add:
            parts = [walk(a) for a in e.args]
            total = parts[0]
            for p in parts[1:]:
                total = total + p
            return total
        if e.is_Mul:
            parts = [walk(a) for a in e.args]
            total = parts[0]
            for p in parts[1:]:
                total = total * p
            return total
        if e.is_Pow and e.exp.is_Integer:
            base, n = walk(e.base), int(e.exp)
            power = cls(1)
            for _ in range(abs(n)):
                power = power * base
            return power if n >= 0 else cls(1) / power
        if e.func in _FUNCTIONS and len(e.args) == 1:
            return getattr(walk(e.args[0]), _FUNCTIONS[e.func])()
        raise TypeError(f"ball_eval: cannot enclose the sympy node {e.func.__name__} ({e})")
    return walk(as_sympy(expr))


def as_sympy(x):
    """A sympy expression as it is, an int or a Fraction as the sympy rational it is;
    TypeError for anything else (no text is parsed)."""
    if isinstance(x, sp.Basic):
        return x
    if isinstance(x, (int, Fraction)) and not isinstance(x, bool):
        return sp.Rational(x.numerator, x.denominator)
    raise TypeError(f"as_sympy: a sympy expression, an int or a Fraction, not {type(x).__name__}")


def counted(printed, count):
    """(proven digits, enclosure) of an exact count ``count`` (an int) against its
    printed string: every printed digit when they agree (radius 0), else 0."""
    from flint import arb

    from mpvi.repro.digits import proven_digits
    return proven_digits(printed, arb(int(count)))


def _pendulum_taylor(x0, v0, t0, order, w0, c, f, W):
    """Taylor coefficients (arb_series in s, to s^order) of the solution of x'' = -w0^2
    sin x - c x' + f cos(W t) through (x0, v0) at t = t0 (balls; a ball base point
    encloses the coefficients of every solution through it): Picard iteration on series,
    exact in one more coefficient per round."""
    import flint
    n = order + 1
    cap = flint.ctx.cap                             # series operations truncate at cap
    flint.ctx.cap = n
    try:
        return _pendulum_picard(x0, v0, t0, n, w0, c, f, W)
    finally:
        flint.ctx.cap = cap


def _pendulum_picard(x0, v0, t0, n, w0, c, f, W):
    """:func:`_pendulum_taylor`'s iteration, series truncated at s^(n-1)."""
    from flint import arb_series
    S = arb_series([t0, 1], prec=n)                # t0 + s
    drive = (S * W).cos() * f
    X = arb_series([x0], prec=n)
    V = arb_series([v0], prec=n)
    for _ in range(n):
        acc = -(X.sin()) * (w0 * w0) - V * c + drive
        X, V = arb_series([x0], prec=n) + V.integral(), arb_series([v0], prec=n) + acc.integral()
    return X, V


def enclose_pendulum(T, x0, v0, H, order=24, w0=1, c=Fraction(1, 5), f=Fraction(1, 2),
                     W=Fraction(2, 3)):
    """An enclosure (x(T), v(T)) of the exact solution of the damped driven pendulum
    x'' = -w0^2 sin x - c x' + f cos(W t), x(0) = x0, v(0) = v0 (exact rationals), by a
    validated Taylor method: steps of ``H`` (T/H an integer); per step the Taylor
    polynomial of degree ``order`` from the current box and the Lagrange remainder, the
    (order+1)-th coefficient enclosed over an a-priori box B of the solution on the step
    (proven: Y + [0, H] f([t, t + H], B) inside B, Picard-Lindelof).  Balls at flint's
    precision.  ArithmeticError if an a-priori box is not proven."""
    from flint import arb
    T, H = Fraction(T), Fraction(H)
    steps = T / H
    if steps.denominator != 1 or steps <= 0:
        raise ValueError(f"enclose_pendulum: T/H must be a positive integer, got {steps}")
    w0, c, f, W = (exact(Fraction(u)) for u in (w0, c, f, W))
    h = exact(H)
    span = arb(0).union(h)
    X, V = exact(Fraction(x0)), exact(Fraction(v0))
    for k in range(int(steps)):
        t0 = exact(k * H)
        # a-priori box: grow until Y + [0, h] f(tt, B) lies inside B
        tt = t0 + span
        beta = h * 4
        for _ in range(20):
            BX, BV = X + arb(0, beta.upper()), V + arb(0, beta.upper())
            nX = X + span * BV
            nV = V + span * (-(BX.sin()) * (w0 * w0) - BV * c + (tt * W).cos() * f)
            if (BX.contains(nX) and BV.contains(nV)
                    and not (nX.rad() >= BX.rad() or nV.rad() >= BV.rad())):
                break
            beta = beta * 2
        else:
            raise ArithmeticError(f"enclose_pendulum: no a-priori box proven on step {k}")
        PX, PV = _pendulum_taylor(X, V, t0, order, w0, c, f, W)
        RX, RV = _pendulum_taylor(BX, BV, tt, order + 1, w0, c, f, W)
        hp = h ** (order + 1)
        X = (sum((_coefficient(PX, i) * h ** i for i in range(order + 1)), arb(0))
             + _coefficient(RX, order + 1) * hp)
        V = (sum((_coefficient(PV, i) * h ** i for i in range(order + 1)), arb(0))
             + _coefficient(RV, order + 1) * hp)
    return X, V


def _coefficient(series, i):
    """The s^i coefficient of an arb_series known to s^i (trailing zeros are trimmed)."""
    from flint import arb
    if series.prec <= i:
        raise ValueError(f"the series is known to s^{series.prec - 1}, not s^{i}")
    c = series.coeffs()
    return c[i] if i < len(c) else arb(0)


def published_formulas(rid):
    """{key: printed text} of the ``symbolic`` published values of the reproduction
    ``rid``."""
    from mpvi.repro.published import load_all_published
    return {v.key: v.printed for v in load_all_published()
            if v.id == rid and v.compare == "symbolic"}


def formula_difference(printed, reproduced, where):
    """The difference printed - reproduced of two formulas, decided in exact rational
    arithmetic, as a ball for :func:`mpvi.repro.published.proof`: exactly 0 when they
    are the same rational function (sympy's cancel over Q: a proof), else the difference
    at a rational point where it is nonzero (exact rationals, no float; a ball without
    0).  Both texts are read by mpvi's closed grammar
    (:func:`mpvi.repro.published.parse_formula`: nothing runs as code).  ValueError for a
    formula with radicals or functions (not decided here)."""
    from mpvi.repro.published import parse_formula
    p, r = parse_formula(printed, f"{where} (printed)"), parse_formula(reproduced,
                                                                      f"{where} (reproduced)")
    d = sp.cancel(sp.together(p - r))
    if any(not e.exp.is_Integer for e in d.atoms(sp.Pow)) or d.atoms(sp.Function):
        raise ValueError(f"{where}: the difference is not a rational function")
    if d == 0:
        return exact(0)
    syms = sorted(d.free_symbols, key=lambda s: s.name)
    for k in range(1, 50):
        point = {s: sp.Rational(37 * k + 5 * j + 1, 29 + j) for j, s in enumerate(syms)}
        value = d.subs(point)
        if value.is_Rational and value != 0:
            return exact(value)
    raise ArithmeticError(f"{where}: a nonzero difference vanished at every point tried")
