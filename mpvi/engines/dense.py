"""Dense output between the nodes of a step, and the location of sign changes on it.

Between the nodes t_j and t_j + h, q and p (or v) keep the order p of the method's nodes:
the error of ``sol(t)`` is O(h^p) in q, p and v, as at the nodes (measured for every
registered method by tests/test_dense_order.py), and events are located to that accuracy.
At theta = 0 and 1 the interpolant returns the nodes themselves, bit for bit.  Four kinds
of interpolant (:class:`StepData` ``dense``):

``"hermite"``
    Hermite interpolation of degree 2m + 1 through the Taylor coefficients q^(k) h^k / k!,
    k = 0 .. m, of the exact flow through each of the two nodes (:func:`hermite_basis`):
    q and v at the node, q'' = a(t, q, v) and the higher ones by the Taylor recurrences of
    :mod:`mpvi.engines.taylor` on the system's equations of motion (M, V systems on (q, p), a
    general L(t, q, v) on (q, v), forcing and time dependence included).  The
    interpolation error is O(h^(2m+2)) in q and O(h^(2m+1)) in v; with m = max(1, p // 2)
    (:func:`hermite_derivatives`) both are below the nodes' O(h^p), which the interpolant
    inherits (the node derivatives are those of the exact flow through the numerical node:
    their error is the node's).  The interpolant of every registered method but the three
    below: midpoint, implicit midpoint, Newmark and its family, RK2, Mutze's three methods
    (p = 2: m = 1, the cubic of hermite eq. (17)); Simpson (both variants), RK4, cubic
    Hermite-Galerkin (p = 4: m = 2); Lobatto with s points (p = 2s - 2: m = s - 1); Gauss
    with s points (p = 2s: m = s).  A field with a function the Taylor recurrences lack
    (:class:`mpvi.engines.taylor.TaylorUnsupported`) gets q'' alone from
    :meth:`mpvi.LagrangianSystem.acceleration`: m <= 2, order min(p, 5) in v.  On a
    first-order system y' = f(t, y), m = 1 in y (order min(p, 4)), y' = f(t, y) at the
    interpolated y.
``"trial"``
    the method's own trial function on the step: x(t_j + theta h) = sum_i phi_i(theta)
    h^(d_i) c_i with the step's solved coefficients c_i, kept where its degree k is at
    least p (its order is min(p, k + 1) in q, min(p, k) in v): the order-2 Hermite
    variational integrator (a cubic).  A trial function of lower degree (midpoint: 1,
    Simpson: 2, Lobatto with s points: s - 1, Gauss with s points: s, cubic
    Hermite-Galerkin of order 4: 3) gives way to ``"hermite"``.
``"substep"``
    one step of the method itself from the node t_j to t_j + theta h (GBS): order p in q
    and p, the method's own (its local error is O((theta h)^(p+1))).
``"taylor"``
    the Taylor polynomial of the substep holding the time (:mod:`mpvi.methods.taylor`: the
    step is recomputed once, recording its substeps, and each substep's coefficients are
    kept): order p in q and p, the method's own.

:func:`locate_root` finds a sign change of a function of theta in [0, 1] to the
precision of the context (Illinois regula falsi with bisection whenever it stalls).
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb
from typing import Any, Callable

import numpy as np


def hermite_derivatives(order: int) -> int:
    """The number m of derivatives at each node for dense output of order ``order`` in q
    and v: the smallest m >= 1 with 2m + 1 >= order (the interpolant of degree 2m + 1 errs
    by O(h^(2m+2)) in q and O(h^(2m+1)) in v)."""
    return max(1, int(order) // 2)


@lru_cache(maxsize=None)
def hermite_basis(m: int) -> tuple:
    """The two-point Hermite basis of degree 2m + 1 on [0, 1], exactly: (H0, H1), each a
    tuple over k = 0..m of the coefficients (Fractions, lowest degree first) of the
    polynomial whose Taylor coefficients of order 0..m are delta_(jk) at its own end and 0
    at the other.  H0_k(theta) = theta^k (1 - theta)^(m+1) sum_(j=0..m-k) C(m+j, j)
    theta^j (the truncated series of (1 - theta)^-(m+1)), and H1_k(theta) = (-1)^k
    H0_k(1 - theta) (Hermite's two-point formula; e.g. Davis, *Interpolation and
    Approximation*, 1963, Sec. 2.5); m = 1 is the cubic of hermite eq. (17)."""
    def mul(a, b):
        out = [Fraction(0)] * (len(a) + len(b) - 1)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                out[i + j] += x * y
        return out

    one_minus = [Fraction(1)]
    for _ in range(m + 1):
        one_minus = mul(one_minus, [Fraction(1), Fraction(-1)])
    h0 = []
    for k in range(m + 1):
        series = [Fraction(0)] * k + [Fraction(comb(m + j, j)) for j in range(m - k + 1)]
        h0.append(tuple(mul(one_minus, series)))

    def reflect(c, k):                 # (-1)^k c(1 - theta), by the binomial expansion
        out = [Fraction(0)] * len(c)
        for i, x in enumerate(c):
            for j in range(i + 1):
                out[j] += x * comb(i, j) * (-1) ** j
        return tuple((-1) ** k * x for x in out)
    return tuple(h0), tuple(reflect(c, k) for k, c in enumerate(h0))


class HermiteBasis:
    """The basis of :func:`hermite_basis` with context coefficients: ``value(a, b, h,
    theta)`` -> (x, x') of sum_k a_k H0_k(theta) + b_k H1_k(theta), for the Taylor
    coefficients a_k = x^(k)(t_j) h^k / k! at the step's start and b_k at its end."""

    def __init__(self, m, ctx):
        self.m, self.ctx = m, ctx
        h0, h1 = hermite_basis(m)
        self.coeffs = [[ctx.num(c) for c in p] for p in (*h0, *h1)]

    def value(self, a, b, h, theta):
        zero = self.ctx.zero
        x = dx = None
        for c, cs in zip((*a, *b), self.coeffs):
            v = dv = zero
            for k in reversed(cs):              # Horner, with the derivative alongside
                dv = dv * theta + v
                v = v * theta + k
            x = c * v if x is None else x + c * v
            dx = c * dv if dx is None else dx + c * dv
        return x, dx / h


@lru_cache(maxsize=None)
def max_abs_on_unit(coeffs: tuple, levels: int = 4) -> Fraction:
    """An upper bound of max |p(theta)| on [0, 1], p = sum_k coeffs[k] theta^k (exact
    rationals): the largest |Bernstein coefficient| over 2^levels halves of [0, 1] (the
    convex hull property; de Casteljau's subdivision, exact)."""
    a = [Fraction(c) for c in coeffs] or [Fraction(0)]
    n = len(a) - 1
    pieces = [[sum((Fraction(comb(j, k), comb(n, k)) * a[k] for k in range(j + 1)), Fraction(0))
               for j in range(n + 1)]]
    for _ in range(levels):
        halves = []
        for b in pieces:
            left, right, row = [], [], list(b)
            for _ in range(n + 1):
                left.append(row[0])
                right.append(row[-1])
                row = [(x + y) / 2 for x, y in zip(row, row[1:])]
            halves += [left, right[::-1]]
        pieces = halves
    return max(abs(x) for b in pieces for x in b)


_TRIAL_BASES: dict = {}
"""(id of a basis, context key) -> (the basis, its :class:`TrialBasis`): :meth:`TrialBasis.of`."""


class TrialBasis:
    """A trial basis as polynomials in theta with context coefficients:
    ``value(coeffs, h, theta)`` -> (x, x') of sum_i phi_i(theta) h^(d_i) c_i.

    ``polynomials``: per slot i the exact coefficients of phi_i (Fractions, lowest degree
    first); ``powers``: the d_i (which derivative the slot's coefficient is)."""

    def __init__(self, polynomials, powers, ctx):
        self.ctx = ctx
        self.polynomials = [tuple(Fraction(c) for c in p) for p in polynomials]
        self.powers = [int(d) for d in powers]
        self.coeffs = [[ctx.num(c) for c in p] for p in self.polynomials]
        self.degree = max((i for p in self.polynomials for i, c in enumerate(p) if c), default=0)

    @classmethod
    def of(cls, basis, ctx):
        """The :class:`mpvi.methods.quadrature.Basis` of a discretization, made once per
        basis and context (a solve's fixed cost: its numbers are not changed after)."""
        key = (id(basis), ctx.key)
        kept = _TRIAL_BASES.get(key)
        if kept is None or kept[0] is not basis:     # kept with the basis: its id stays its own
            kept = _TRIAL_BASES[key] = (basis, cls(basis.coeffs, [s.derivative for s in basis.slots],
                                                   ctx))
        return kept[1]

    def weights(self, h, theta):
        """(phi_i(theta) h^(d_i), phi_i'(theta) h^(d_i - 1)) for every slot i."""
        vals, ders = [], []
        for cs, d in zip(self.coeffs, self.powers):
            v = dv = self.ctx.zero
            for c in reversed(cs):              # Horner, with the derivative alongside
                dv = dv * theta + v
                v = v * theta + c
            vals.append(v * h ** d if d else v)
            ders.append(dv * h ** (d - 1) if d != 1 else dv)
        return vals, ders

    def value(self, coeffs, h, theta):
        vals, ders = self.weights(h, theta)
        x = sum((c * w for c, w in zip(coeffs, vals)), self.ctx.zeros(len(coeffs[0])))
        v = sum((c * w for c, w in zip(coeffs, ders)), self.ctx.zeros(len(coeffs[0])))
        return x, v


def locate_root(phi: Callable, a: Any, b: Any, fa: Any, fb: Any, ctx: Any, tol: Any,
                max_iter: int | None = None) -> Any:
    """A sign change of ``phi`` on [a, b], given fa = phi(a) and fb = phi(b) of opposite
    signs (or one of them zero): a point of a bracket of width <= ``tol`` (or where phi is
    exactly 0).  Illinois-modified regula falsi (the retained end's value is halved, so the
    bracket shrinks superlinearly), with a bisection whenever two iterations in a row fail
    to halve the bracket.  ``ArithmeticError`` if ``max_iter`` (default 4 prec) iterations
    do not get there."""
    if fa == 0:
        return a
    if fb == 0:
        return b
    side = stalls = 0
    max_iter = max_iter or 4 * getattr(ctx, "prec", 53)
    for _ in range(max_iter):
        width = b - a
        if width <= tol:
            return (a + b) / 2
        c = (a * fb - b * fa) / (fb - fa)
        if stalls >= 2 or not (a < c < b):
            c, stalls = (a + b) / 2, 0
        fc = phi(c)
        if fc == 0:
            return c
        if (fc > 0) == (fb > 0):               # the root is in [a, c]
            b, fb = c, fc
            if side == -1:
                fa = fa / 2
            side = -1
        else:
            a, fa = c, fc
            if side == 1:
                fb = fb / 2
            side = 1
        stalls = stalls + 1 if (b - a) > width / 2 else 0
    if b - a <= tol:
        return (a + b) / 2
    raise ArithmeticError(f"no root to the tolerance {ctx.to_str(tol, 3)} in {max_iter} "
                          f"iterations (bracket [{ctx.to_str(a, 12)}, {ctx.to_str(b, 12)}])")


class Segment:
    """The dense output of one step [t, t + h]: ``at(theta)`` -> (q, v) (first order: (y, y'))
    by the run's interpolant (:mod:`mpvi.engines.dense`); the nodes themselves at theta = 0 and 1."""

    __slots__ = ("run", "t", "q0", "y0", "q1", "y1", "carry", "_v", "_jet")

    def __init__(self, run, t, q0, y0, q1, y1, carry, v0=None, v1=None):
        self.run, self.t, self.q0, self.y0, self.q1, self.y1 = run, t, q0, y0, q1, y1
        self.carry, self._v, self._jet = carry, [v0, v1], [None, None]

    def velocity(self, end):
        """v (first order: y') at the start (0) or the end (1) of the step."""
        if self._v[end] is None:
            t = self.t + (self.run.h if end else 0)
            q, y = (self.q1, self.y1) if end else (self.q0, self.y0)
            self._v[end] = self.run.velocity(t, q, y)
        return self._v[end]

    def jet(self, end):
        """The scaled Taylor coefficients q^(k) h^k / k!, k = 0 .. m, of the exact flow
        through the node at the start (0) or the end (1) of the step."""
        if self._jet[end] is None:
            t = self.t + (self.run.h if end else 0)
            q, y = (self.q1, self.y1) if end else (self.q0, self.y0)
            self._jet[end] = self.run.jet(t, q, y, self.velocity(end))
        return self._jet[end]

    def at(self, theta):
        run = self.run
        kind = run.dense
        if theta == 0:
            return self.q0, self.velocity(0)
        if theta == 1:
            return self.q1, self.velocity(1)
        if kind == "trial":
            return run.stepper.trial_basis.value(self.carry, run.h, theta)
        if kind == "substep":
            stepper = run.method.prepare(run.system, theta * run.h, run.ctx, **run.prepare_args)
            r = stepper(self.t, self.q0, self.y0)
            return r.q, run.velocity(self.t + theta * run.h, r.q, r.y)
        if kind == "taylor":
            if self.carry is None:
                self.carry = run.substeps(self.t, self.q0, self.y0)
            return self.carry.at(theta)
        a, b = self.jet(0), self.jet(1)
        q, v = run.hermite.value(a, b, run.h, theta)
        if run.state == "y":                  # y' = f(t, y): the order of y, not one less
            v = run.velocity(self.t + theta * run.h, q, None)
        return q, v


class StepData:
    """What the dense output of a run needs: the method, its stepper (or a view with its
    ``dense`` kind and trial basis), the system, h, and the Legendre map.

    ``dense`` is the interpolant used: the stepper's own kind, except a trial function of
    degree below the method's order p, which gives way to ``"hermite"`` (module doc);
    ``m`` the node derivatives of the Hermite interpolant (:func:`hermite_derivatives`),
    from the Taylor recurrences of :mod:`mpvi.engines.taylor` -- or, for a field they do not
    cover, q'' alone from :meth:`mpvi.LagrangianSystem.acceleration` (m <= 2)."""

    def __init__(self, method, stepper, system, ctx, h, prepare_args):
        self.method, self.stepper, self.system, self.ctx, self.h = method, stepper, system, ctx, h
        self.prepare_args = prepare_args
        self.order = method.order_for(**{k: v for k, v in prepare_args.items()
                                         if k in method.params})
        kind = getattr(stepper, "dense", "hermite")
        if kind == "trial" and stepper.trial_basis.degree < self.order:
            kind = "hermite"
        self.dense = kind
        self.m = 1 if system.first_order else hermite_derivatives(self.order)
        self._prepared = self._hermite = self._flow = None
        self.state = "y" if system.first_order else method.state
        if system.first_order:
            self._field = system.field()

    def velocity(self, t, q, y):
        if self.state == "qv":
            return y
        if self.state == "y":
            return np.array(self._field(t, list(q)), dtype=self.ctx.dtype)
        return self.system.velocity(q, y, t)

    @property
    def hermite(self):
        """The :class:`HermiteBasis` of the run's m (after the source of the derivatives
        is known: it may lower m)."""
        if self._hermite is None:
            self._derivative_source()
            self._hermite = HermiteBasis(self.m, self.ctx)
        return self._hermite

    def _derivative_source(self):
        """The Taylor steps of the system's equations of motion (:func:`mpvi.engines.kernels.taylor_steps`),
        or False where its field has an operation without a Taylor recurrence (then m <= 2)."""
        if self._flow is None:
            self._flow = False
            if self.m > 1:
                from mpvi.engines.kernels import taylor_steps
                from mpvi.engines.taylor import TaylorUnsupported
                try:
                    self._flow = taylor_steps(self.system)
                except TaylorUnsupported:
                    self.m = 2
        return self._flow

    def jet(self, t, q, y, v):
        """[q, v h, q'' h^2 / 2, ..., q^(m) h^m / m!] at the node (t, q, y) with velocity v:
        the Taylor coefficients of the exact flow through it, scaled by h^k."""
        h, m = self.h, self.m
        jet = [q, v * h]
        if m == 1:
            return jet
        flow = self._derivative_source()
        m = self.m
        if flow is False:
            return jet + [self.system.acceleration(t, q, v) * (h * h / 2)]
        self.ctx.activate()
        n, system = len(q), self.system
        if flow.form == "qp":
            second = y if self.state == "qp" else system.momentum(q, v, t)
        else:
            second = v
        start = [*q, *second]
        coefficients = (flow.compiled.coefficients(t, start, m) if flow.compiled is not None
                        else None)
        if coefficients is None:
            coefficients = flow.python.coefficients(t, start, m)
        hk = h
        for k in range(2, m + 1):
            hk = hk * h
            jet.append(np.array(coefficients[k][:n], dtype=self.ctx.dtype) * hk)
        return jet

    def substeps(self, t, q, y):
        """The substeps of the step from (t, q, y) (dense kind "taylor"): the run's stepper
        records them, or after the run one prepared again from the run's parameters."""
        stepper = self.stepper
        if not hasattr(stepper, "substeps_of"):
            if self._prepared is None:
                args = {k: v for k, v in self.prepare_args.items() if k != "newton"}
                self._prepared = self.method.prepare(self.system, self.h, self.ctx, **args)
            stepper = self._prepared
        return stepper.substeps_of(t, q, y)

    def momentum(self, t, q, v):
        return None if self.state == "y" else self.system.momentum(q, v, t)

    def y_of(self, t, q, v):
        """The method's state variable from an interpolated (q, v)."""
        if self.state == "qv":
            return v
        if self.state == "y":
            return None
        return self.system.momentum(q, v, t)
