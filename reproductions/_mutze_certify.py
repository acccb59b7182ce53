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
    return walk(sp.sympify(expr, strict=True))


def counted(printed, count):
    """(proven digits, enclosure) of an exact count ``count`` (an int) against its
    printed string: every printed digit when they agree (radius 0), else 0."""
    from flint import arb

    from mpvi.repro.digits import proven_digits
    return proven_digits(printed, arb(int(count)))
