"""Dense output between the nodes of a step, and the location of sign changes on it.

Four kinds of interpolant, chosen by the method (the stepper's ``dense`` attribute):

``"trial"``
    the method's own trial function on the step (Simpson, midpoint, Lobatto, the Hermite
    methods): x(t_j + theta h) = sum_i phi_i(theta) h^(d_i) c_i with the step's solved
    coefficients c_i.  Its order in q is min(p, k + 1) for a method of order p and a
    trial space of degree k (Simpson: 3, midpoint: 2, Lobatto with s points: min(2s - 2,
    s), Hermite of degree 2n - 1: min(p, 2n)); the velocity (its derivative) is one order
    lower.
``"hermite"``
    cubic Hermite interpolation of (q, v) at both ends of the step (for the methods
    without a trial function of their own: RK4, RK2, Newmark, Mutze's methods, the
    implicit midpoint rule): order min(p, 4) in q, min(p, 3) in v -- which matches the
    order p <= 4 of every such method.
``"substep"``
    one step of the method itself from the node t_j to t_j + theta h (for GBS, whose
    order 2 levels no Hermite interpolant of two nodes matches): order p, the method's own.
``"taylor"``
    the Taylor polynomial of the substep holding the time (:mod:`mpvi.schemes.taylor`: the
    step is recomputed once, recording its substeps, and each substep's coefficients are
    kept): the method's own accuracy, and the step's end bit for bit at theta = 1.

:func:`locate_root` finds a sign change of a function of theta in [0, 1] to the
precision of the context (Illinois regula falsi with bisection whenever it stalls).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

import numpy as np


def hermite_cubic(q0, v0, q1, v1, h, theta):
    """(q, v) at t_j + theta h of the cubic Hermite interpolant of (q0, v0) at theta = 0
    and (q1, v1) at theta = 1 (hermite eq. (17): N1..N4), vectors of context numbers."""
    th2 = theta * theta
    th3 = th2 * theta
    n1 = 2 * th3 - 3 * th2 + 1
    n2 = th3 - 2 * th2 + theta
    n3 = 3 * th2 - 2 * th3
    n4 = th3 - th2
    d1 = 6 * th2 - 6 * theta
    d2 = 3 * th2 - 4 * theta + 1
    d4 = 3 * th2 - 2 * theta
    q = q0 * n1 + v0 * (h * n2) + q1 * n3 + v1 * (h * n4)
    v = (q0 - q1) * (d1 / h) + v0 * d2 + v1 * d4
    return q, v


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

    @classmethod
    def of(cls, basis, ctx):
        """The :class:`mpvi.quadrature.Basis` of a discretization."""
        return cls(basis.coeffs, [s.derivative for s in basis.slots], ctx)

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


def floor(x) -> int:
    """The largest integer <= x for a number of any context (``int()`` of a gmpy2 number
    rounds to nearest, of an mpmath number truncates)."""
    k = int(x)
    while k > x:
        k -= 1
    while k + 1 <= x:
        k += 1
    return k


class Segment:
    """The dense output of one step [t, t + h]: ``at(theta)`` -> (q, v) (first order: (y, y'))
    by the method's own interpolant (:mod:`mpvi.dense`)."""

    __slots__ = ("run", "t", "q0", "y0", "q1", "y1", "carry", "_v")

    def __init__(self, run, t, q0, y0, q1, y1, carry, v0=None, v1=None):
        self.run, self.t, self.q0, self.y0, self.q1, self.y1 = run, t, q0, y0, q1, y1
        self.carry, self._v = carry, [v0, v1]

    def velocity(self, end):
        """v (first order: y') at the start (0) or the end (1) of the step."""
        if self._v[end] is None:
            t = self.t + (self.run.h if end else 0)
            q, y = (self.q1, self.y1) if end else (self.q0, self.y0)
            self._v[end] = self.run.velocity(t, q, y)
        return self._v[end]

    def at(self, theta):
        run = self.run
        kind = run.dense
        if kind == "trial":
            return run.stepper.trial_basis.value(self.carry, run.h, theta)
        if kind == "substep":
            if theta == 0:
                return self.q0, self.velocity(0)
            stepper = run.method.prepare(run.system, theta * run.h, run.ctx, **run.prepare_args)
            r = stepper(self.t, self.q0, self.y0)
            return r.q, run.velocity(self.t + theta * run.h, r.q, r.y)
        if kind == "taylor":
            if theta == 0:
                return self.q0, self.velocity(0)
            if self.carry is None:
                self.carry = run.substeps(self.t, self.q0, self.y0)
            return self.carry.at(theta)
        return hermite_cubic(self.q0, self.velocity(0), self.q1, self.velocity(1), run.h, theta)


class StepData:
    """What the dense output of a run needs: the method, its stepper (or a view with its
    ``dense`` kind and trial basis), the system, h, and the Legendre map."""

    def __init__(self, method, stepper, system, ctx, h, prepare_args):
        self.method, self.stepper, self.system, self.ctx, self.h = method, stepper, system, ctx, h
        self.prepare_args = prepare_args
        self.dense = getattr(stepper, "dense", "hermite")
        self._prepared = None
        self.state = "y" if system.first_order else method.state
        if system.first_order:
            self._field = system.field()

    def velocity(self, t, q, y):
        if self.state == "qv":
            return y
        if self.state == "y":
            return np.array(self._field(t, list(q)), dtype=self.ctx.dtype)
        return self.system.velocity(q, y, t)

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
