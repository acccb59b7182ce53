"""Truncated power series in the step h with sympy coefficients ("jets"), and sympy
expressions evaluated on them: the arithmetic of :mod:`mpvi.modified`.

A :class:`Jet` is sum_{k < hi} c_k h^k + O(h^hi), the c_k sympy expressions (in the state
symbols of a derivation) kept expanded; negative powers are allowed (a velocity
(x_1 - x_0) / h of a trial function).  Sums, products, quotients by a jet whose leading
coefficient is not zero, and any sympy function of a jet whose lowest power is >= 0
(f(a_0 + d) = sum_k f^(k)(a_0) d^k / k!, d = O(h)) keep track of the order to which
they are known.  :func:`evaluate` takes a sympy expression with jets for some of its
symbols; every other symbol (a parameter) stays a symbol.  The methods' own step code
(:func:`mpvi.ode.rk4_step`, :func:`mpvi.ode.gbs_step`) runs on lists of jets unchanged.
"""
from __future__ import annotations

from math import factorial
from typing import Any, Mapping

import sympy as sp

_X = sp.Dummy("x")


def _simplify(e):
    return sp.expand(e, power_exp=False, power_base=False, log=False)


class Jet:
    """sum_{k < hi} c_k h^k + O(h^hi); ``terms``: power -> coefficient (zeros omitted)."""

    __slots__ = ("terms", "hi")

    def __init__(self, terms: Mapping[int, Any], hi: int):
        self.hi = hi
        self.terms = {k: v for k, v in terms.items() if k < hi and v != 0}

    @classmethod
    def constant(cls, value, hi: int) -> "Jet":
        return cls({0: sp.sympify(value)}, hi)

    @classmethod
    def step(cls, hi: int) -> "Jet":
        """h itself."""
        return cls({1: sp.Integer(1)}, hi)

    @property
    def lo(self) -> int:
        """The lowest power present (``hi`` for a jet known to be O(h^hi))."""
        return min(self.terms) if self.terms else self.hi

    def coeff(self, k: int):
        if k >= self.hi:
            raise ArithmeticError(f"the coefficient of h^{k} of a jet known to O(h^{self.hi})")
        return self.terms.get(k, sp.Integer(0))

    def __repr__(self):
        return " + ".join(f"({v})*h^{k}" for k, v in sorted(self.terms.items())) + f" + O(h^{self.hi})"

    # ----- arithmetic ---------------------------------------------------------------------
    @staticmethod
    def _lift(x, hi):
        return x if isinstance(x, Jet) else Jet.constant(x, hi)

    def __add__(self, other):
        if not isinstance(other, Jet):
            other = sp.sympify(other)
            terms = dict(self.terms)
            if 0 < self.hi:
                terms[0] = _simplify(terms.get(0, 0) + other)
            return Jet(terms, self.hi)
        hi = min(self.hi, other.hi)
        terms = dict((k, v) for k, v in self.terms.items() if k < hi)
        for k, v in other.terms.items():
            if k < hi:
                terms[k] = _simplify(terms[k] + v) if k in terms else v
        return Jet(terms, hi)

    __radd__ = __add__

    def __neg__(self):
        return Jet({k: -v for k, v in self.terms.items()}, self.hi)

    def __sub__(self, other):
        return self + (-other if isinstance(other, Jet) else -sp.sympify(other))

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        if not isinstance(other, Jet):
            other = sp.sympify(other)
            if other == 0:
                return Jet({}, self.hi)
            return Jet({k: _simplify(v * other) for k, v in self.terms.items()}, self.hi)
        hi = min(self.lo + other.hi, other.lo + self.hi)
        terms: dict = {}
        for i, a in self.terms.items():
            for j, b in other.terms.items():
                if i + j < hi:
                    terms.setdefault(i + j, []).append(a * b)
        return Jet({k: _simplify(sp.Add(*v)) for k, v in terms.items()}, hi)

    __rmul__ = __mul__

    def inverse(self) -> "Jet":
        """1 / self (its lowest coefficient must not be zero)."""
        lo = self.lo
        if lo >= self.hi:
            raise ZeroDivisionError("the inverse of a jet that is O(h^hi) with no known term")
        b0 = self.terms[lo]
        n = self.hi - lo                          # relative precision
        b = [self.terms.get(lo + k, 0) for k in range(n)]
        e = [1 / b0]
        for k in range(1, n):
            e.append(_simplify(-sum(b[j] * e[k - j] for j in range(1, k + 1)) / b0))
        return Jet({k - lo: v for k, v in enumerate(e)}, n - lo)

    def __truediv__(self, other):
        if not isinstance(other, Jet):
            return self * (1 / sp.sympify(other))
        return self * other.inverse()

    def __rtruediv__(self, other):
        return self.inverse() * other

    def __pow__(self, e):
        if isinstance(e, (int, sp.Integer)):
            e = int(e)
            if e < 0:
                return (self ** (-e)).inverse()
            result, base = Jet.constant(1, self.hi), self
            while e:
                if e & 1:
                    result = result * base
                e >>= 1
                if e:
                    base = base * base
            return result
        return apply(lambda x: x ** e, self)

    def diff(self, symbol) -> "Jet":
        """d/d symbol, coefficient by coefficient."""
        return Jet({k: _simplify(sp.diff(v, symbol)) for k, v in self.terms.items()}, self.hi)

    def subs(self, mapping) -> "Jet":
        return Jet({k: _simplify(v.subs(mapping)) for k, v in self.terms.items()}, self.hi)

    def truncate(self, hi: int) -> "Jet":
        return Jet(self.terms, min(hi, self.hi))


def _sin_cos(a: Jet) -> tuple:
    """(sin a, cos a) by the recurrences of Taylor-mode differentiation:
    s_k = sum_j j a_j c_(k-j) / k, c_k = -sum_j j a_j s_(k-j) / k (O(N^2) products)."""
    n = a.hi
    A = [a.terms.get(k, sp.Integer(0)) for k in range(n)]
    S, C = [sp.sin(A[0])], [sp.cos(A[0])]
    for k in range(1, n):
        S.append(_simplify(sp.Add(*[j * A[j] * C[k - j] for j in range(1, k + 1) if A[j] != 0]) / k))
        C.append(_simplify(-sp.Add(*[j * A[j] * S[k - j] for j in range(1, k + 1) if A[j] != 0]) / k))
    return Jet(dict(enumerate(S)), n), Jet(dict(enumerate(C)), n)


def _exp(a: Jet) -> Jet:
    """exp a by e_k = sum_j j a_j e_(k-j) / k."""
    n = a.hi
    A = [a.terms.get(k, sp.Integer(0)) for k in range(n)]
    E = [sp.exp(A[0])]
    for k in range(1, n):
        E.append(_simplify(sp.Add(*[j * A[j] * E[k - j] for j in range(1, k + 1) if A[j] != 0]) / k))
    return Jet(dict(enumerate(E)), n)


def apply(f, a: Jet) -> Jet:
    """f(a) for a sympy function ``f`` of one argument (a lambda on a sympy expression),
    by Taylor's formula at the constant term of ``a`` (whose lowest power must be >= 0);
    sin, cos and exp by their recurrences."""
    if a.lo < 0:
        raise ArithmeticError("a function of a jet with negative powers of h")
    if f in (sp.sin, sp.cos):
        return _sin_cos(a)[0 if f is sp.sin else 1]
    if f is sp.exp:
        return _exp(a)
    a0 = a.terms.get(0, sp.Integer(0))
    d = a - a0                                    # O(h)
    hi = a.hi
    result = Jet.constant(_simplify(f(a0)), hi)
    fx = f(_X)
    power = Jet.constant(1, hi)
    for k in range(1, hi):
        if d.lo * k >= hi:
            break
        power = power * d
        fx = sp.diff(fx, _X)
        c = _simplify(fx.subs(_X, a0) / factorial(k))
        if c != 0:
            result = result + power * c
    return result


def evaluate(expr, env: Mapping, hi: int):
    """``expr`` (sympy) with the jets (or sympy values) of ``env`` for its symbols, as a
    jet to O(h^hi) (a sympy value when no jet enters)."""
    cache: dict = {}

    def ev(e):
        if e in cache:
            return cache[e]
        if e in env:
            r = env[e]
        elif e.is_Atom:
            r = e
        elif e.is_Add:
            r = sp.Integer(0)
            for a in e.args:
                r = r + ev(a)
        elif e.is_Mul:
            r = sp.Integer(1)
            for a in e.args:
                r = r * ev(a)
        elif e.is_Pow:
            base, ex = ev(e.args[0]), e.args[1]
            if isinstance(ex, sp.Basic) and ex.free_symbols & set(env):
                raise NotImplementedError(f"a power with a varying exponent: {e}")
            r = base ** ex
        elif isinstance(e, sp.Function) and len(e.args) == 1:
            a = ev(e.args[0])
            r = apply(e.func, a) if isinstance(a, Jet) else e.func(a)
        else:
            args = [ev(a) for a in e.args]
            if any(isinstance(a, Jet) for a in args):
                raise NotImplementedError(f"jets through {type(e).__name__}: {e}")
            r = e.func(*args)
        if isinstance(r, Jet):
            r = r.truncate(hi)
        cache[e] = r
        return r
    return ev(sp.sympify(expr))



from .precision import boundary_module  # noqa: E402  (last: wraps the names above)

boundary_module(globals())
