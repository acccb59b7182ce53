"""The particle in a double-well potential and the damped Duffing oscillator of the hermite
paper (Sharma, Patil, Woolsey), Secs. 5.1-5.2, with the exact solution of the double well.

Double well (eq. 38), one coordinate q, mass m (m = 1 in the paper):

    L(q, q') = 1/2 m q'^2 - 1/2 (q^4 - q^2),    m q'' - q + 2 q^3 = 0        (eq. 39)

with the energy E = 1/2 m q'^2 + 1/2 (q^4 - q^2): wells at q = +-1/sqrt(2) (E = -1/8), the
hump at q = 0 (E = 0).

Damped Duffing oscillator (eqs. 40-41), coordinate x:

    L(x, x') = 1/2 x'^2 - 1/2 alpha x^2 - 1/4 beta x^4,   f(x', t) = -delta x',
    x'' + delta x' + alpha x + beta x^3 = 0.

With alpha = -1, beta = 2 and delta = 0 this is eq. (39) with m = 1 (the potential
1/2 alpha x^2 + 1/4 beta x^4 = -1/2 x^2 + 1/2 x^4): the double well with dissipation.

Exact solution of the double well (beyond the paper; the elliptic-function solution of the
unforced Duffing equation).  In the time tau = t / sqrt(m) the equation is
Q'' = Q - 2 Q^3 for Q(tau) = q(t), with the same energy E; let A > 0 be the outer turning
point, A^2 = (1 + sqrt(1 + 8 E)) / 2.  With Jacobi's functions of parameter k^2
(mpmath's ``ellipfun(kind, u, m=k^2)``; d dn/du = -k^2 sn cn, d cn/du = -sn dn):

* E <= 0 (motion inside the well of sign s = sign q(0); E = 0 is the homoclinic orbit):
  Q(tau) = s A dn(A (tau - tau1), k),  k^2 = 2 - 1/A^2 in [0, 1].  Indeed
  dn'' = (2 - k^2) dn - 2 dn^3, so Q'' = A^2 (2 - k^2) Q - 2 Q^3 = Q - 2 Q^3.  For
  q'(0) = 0 and ``|q(0)| >= 1/sqrt(2)``, tau1 = 0 and ``A = |q(0)|``: q(t) = A dn(A t, k),
  k^2 = 2 - 1/A^2 (m = 1).  Period 2 K(k^2) sqrt(m) / A.
* E > 0 (motion over both wells): Q(tau) = A cn(w (tau - tau1), k),
  w^2 = 2 A^2 - 1, k^2 = A^2 / (2 A^2 - 1) in (1/2, 1): cn'' = (2 k^2 - 1) cn - 2 k^2 cn^3
  gives Q'' = w^2 (2 k^2 - 1) Q - 2 (k w / A)^2 Q^3 = Q - 2 Q^3.  Period 4 K(k^2) sqrt(m) / w.

The phase u0 = -A tau1 (or -w tau1) comes from the initial data through the incomplete
elliptic integral F (``ellipf``): dn(u0) = ``|q0|/A``, sign u0 = -s sign q'(0)  (E <= 0, u0
in [-K, K]);  cn(u0) = q0/A, sign u0 = -sign q'(0)  (E > 0, u0 in [-2K, 2K]).  The setup
runs at twice the context's digits (the phase near a turning point is a square root of a
difference).  q(t) = Q(t/sqrt m), q'(t) = Q'(t/sqrt m)/sqrt m.  Checked at 64 digits in
tests/test_double_well.py (the ODE by numerical differentiation, initial data, energy).
"""
from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import sympy as sp

from mpvi.numbers.context import MPContext
from mpvi.model.mechanics import LagrangianSystem
from mpvi.model.problem import Problem
from mpvi.ground.precision import entry, entry_class

if TYPE_CHECKING:
    from flint import arb

    from mpvi.ground.types import Array, NumberLike, Real
    from mpvi.numbers.context import Context


@entry
def double_well(ctx: Context, m: NumberLike = 1) -> LagrangianSystem:
    """The particle in a double-well potential, eq. (38): L = 1/2 m q'^2 - 1/2 (q^4 - q^2),
    coordinate ``q``, parameter ``m`` (a string, int or Fraction; the paper's m = 1).  Its
    equation of motion is eq. (39), m q'' - q + 2 q^3 = 0."""
    q, M = sp.Symbol("q"), sp.Symbol("m", positive=True)
    if not ctx.num(m) > 0:
        raise ValueError(f"double well: the mass m must be positive, got {m!r}")
    return LagrangianSystem("double well", [q], sp.Matrix([[M]]), (q ** 4 - q ** 2) / 2,
                            {M: m}, ctx)


@entry
def duffing(ctx: Context, alpha: NumberLike, beta: NumberLike, delta: NumberLike
            ) -> LagrangianSystem:
    """The Duffing oscillator with linear damping, eqs. (40)-(41): coordinate ``x``,
    L = 1/2 x'^2 - 1/2 alpha x^2 - 1/4 beta x^4 and the force f = -delta x', so that
    x'' + delta x' + alpha x + beta x^3 = 0.  ``alpha``, ``beta``, ``delta``: strings, ints
    or Fractions (no default: the paper prints two different sets, see
    reproductions/ERRATA.md [E41]).  The system's ``energy`` is the mechanical energy
    1/2 x'^2 + 1/2 alpha x^2 + 1/4 beta x^4, which the damping dissipates."""
    x = sp.Symbol("x")
    a, b, d = sp.symbols("alpha beta delta")
    if ctx.num(delta) < 0:
        raise ValueError(f"Duffing oscillator: the damping delta must be >= 0, got {delta!r}")
    return LagrangianSystem("Duffing oscillator", [x], sp.Matrix([[1]]),
                            a * x ** 2 / 2 + b * x ** 4 / 4,
                            {a: alpha, b: beta, d: delta}, ctx,
                            force=lambda t, q, v: sp.Matrix([-d * v[0]]))


@entry_class
class DoubleWellExact:
    """The exact motion of the double well (38)-(39) from q(0) = ``q0``, q'(0) = ``v0``
    with mass ``m`` (module doc: Jacobi dn inside a well and on the separatrix, cn over
    both wells; the equilibria q = 0 and q = +-1/sqrt(2) at rest are constant).

    ``q(t)``, ``v(t)``, ``p(t)`` take a number or a 1-D array of times and return an array
    of shape (1,) or (len(t), 1), like :class:`mpvi.systems.linear.ModalSolution`.
    Attributes: ``form`` ('dn', 'cn' or 'equilibrium'), ``energy``, ``amplitude`` (the
    outer turning point A), ``k2`` (the parameter k^2), ``period`` (None on the
    separatrix E = 0 and at an equilibrium).  In float64 the solution is computed in an
    mp context of twice float64's round-trip digits and rounded (the context has no
    Jacobi functions)."""

    def __init__(self, ctx: Context, q0: NumberLike, v0: NumberLike = 0, m: NumberLike = 1
                 ) -> None:
        self.ctx = ctx
        R = self.rctx = ctx if ctx.is_mp else MPContext(2 * ctx.repr_digits)
        self._inputs = tuple(Fraction(float(x)) if isinstance(x, (float, np.floating)) and not ctx.is_mp
                             else x for x in (q0, v0, m))
        q0, v0, m = (self._in(x) for x in (q0, v0, m))
        for name, x in (("q0", q0), ("v0", v0), ("m", m)):
            if not R.isfinite(x):
                raise ValueError(f"double-well exact solution: {name} must be finite, got {x}")
        if not m > 0:
            raise ValueError(f"double-well exact solution: the mass m must be positive, got {m}")
        self.q0, self.v0, self.m = q0, v0, m
        with R.workdps(2 * R.dps):
            self._setup(R, q0, v0, m)
        if self.period is not None:
            self.period = ctx.num(+self.period if ctx.is_mp else self.period)

    def _in(self, x):
        """A number in the reference context: floats of the fp context exactly."""
        if not self.ctx.is_mp and isinstance(x, (float, np.floating)):
            x = Fraction(float(x))
        return self.rctx.num(x)

    def _setup(self, R, q0, v0, m):
        rm = R.sqrt(m)
        self.scale = rm                       # tau = t / sqrt(m)
        dQ = v0 * rm                          # Q'(0) = sqrt(m) q'(0)
        E = (dQ ** 2 + q0 ** 4 - q0 ** 2) / 2
        self.energy_exact = E
        self.k2 = self.omega = self.u0 = None
        self.sign = R.one if q0 >= 0 else -R.one
        if q0 == 0 and v0 == 0:
            self.form, self.amplitude, self.period = "equilibrium", R.zero, None
            return
        disc = 1 + 8 * E
        A = R.sqrt((1 + R.sqrt(disc)) / 2) if disc > 0 else 1 / R.sqrt(2)
        if v0 == 0 and q0 ** 2 * 2 >= 1:
            A = abs(q0)                       # started at the outer turning point
        self.amplitude = A
        if E <= 0:
            k2 = 2 - 1 / A ** 2
            if not k2 > 0:                    # the bottom of a well (E = -1/8): at rest
                self.form, self.period, self.k2 = "equilibrium", None, R.zero
                self.amplitude = abs(q0)
                return
            self.form, self.k2, self.omega = "dn", k2, A
            sn2 = min(R.one, max(R.zero, (1 - (q0 / A) ** 2) / k2))
            u = R.ellipf(R.asin(R.sqrt(sn2)), k2)
            direction = -self.sign * dQ
            self.u0 = -u if direction < 0 else u
            self.period = 2 * R.ellipk(k2) * rm / A if k2 < 1 else None
        else:
            w = R.sqrt(2 * A ** 2 - 1)
            k2 = A ** 2 / (2 * A ** 2 - 1)
            self.form, self.k2, self.omega = "cn", k2, w
            c = min(R.one, max(-R.one, q0 / A))
            u = R.ellipf(R.acos(c), k2)
            self.u0 = -u if dQ > 0 else u
            self.period = 4 * R.ellipk(k2) * rm / w

    # ----- evaluation ---------------------------------------------------------------------
    def _state(self, t):
        """(q, q') at one time t of the reference context."""
        R = self.rctx
        if self.form == "equilibrium":
            return self.sign * self.amplitude, R.zero
        u = self.omega * t / self.scale + self.u0
        sn, cn, dn = (R.ellipfun(kind, u, m=self.k2) for kind in ("sn", "cn", "dn"))
        A = self.amplitude
        if self.form == "dn":
            Q, dQ = self.sign * A * dn, -self.sign * A * A * self.k2 * sn * cn
        else:
            Q, dQ = A * cn, -A * self.omega * sn * dn
        return Q, dQ / self.scale

    def _times(self, t):
        if isinstance(t, (list, tuple, np.ndarray)):
            return [self._in(x) for x in t], True
        return [self._in(t)], False

    def _eval(self, t, index, factor=None):
        ts, many = self._times(t)
        vals = []
        for x in ts:
            y = self._state(x)[index]
            vals.append(self.ctx.num(y if factor is None else factor * y))
        out = np.array(vals, dtype=self.ctx.dtype)
        return out.reshape(len(vals), 1) if many else out

    def __call__(self, t: NumberLike | Array) -> tuple[Array, Array]:
        """(q(t), q'(t)) at one time: the exact solution in mpvi's protocol for a problem
        given with v0 (:func:`double_well_problem`)."""
        return self.q(t), self.v(t)

    def q(self, t: NumberLike | Array) -> Array:
        """q(t); ``t`` a number or a 1-D array (then one row per time)."""
        return self._eval(t, 0)

    def v(self, t: NumberLike | Array) -> Array:
        """q'(t)."""
        return self._eval(t, 1)

    def p(self, t: NumberLike | Array) -> Array:
        """p(t) = m q'(t)."""
        return self._eval(t, 1, self.m)

    def enclose(self, t: NumberLike | arb, dps: int) -> tuple[arb, arb]:
        """Enclose (q(t), q'(t)) in Arb balls: a proven enclosure of the exact motion.

        The closed form of the module docstring evaluated in ball arithmetic (Arb:
        Johansson 2017) from the exact q0, v0, m: the energy and the choice of the form
        (dn inside a well, cn over both) are exact rational arithmetic; the amplitude, k^2
        and the phase u0 = F(phi, k^2) are balls (phi by atan2 of the square roots of the
        nonnegative parts of sn^2 and 1 - sn^2, true values in [0, 1]); Jacobi's functions
        come from Arb's theta functions (DLMF 22.2.4-22.2.6: sn = (theta3/theta2)
        theta1(z)/theta4(z), cn = (theta4/theta2) theta2(z)/theta4(z),
        dn = (theta4/theta3) theta3(z)/theta4(z), z = u/(2K), tau = i K'/K).  Computed
        with ``dps + GUARD_DIGITS`` digits plus the digits the number of periods in ``t``
        costs, the constants with twice that (at a turning point the phase is a square
        root of a difference, which halves the digits); flint's precision is restored
        after.

        Parameters
        ----------
        t : int, str, Fraction, context number or flint.arb
            The time, exact (read as a rational), or a ball: then the enclosure holds for
            every time in it.
        dps : int
            The digits wanted.

        Returns
        -------
        tuple of flint.arb
            Balls containing q(t) and q'(t).

        Raises
        ------
        ArithmeticError
            The separatrix E = 0 (k^2 = 1: the theta form does not apply; not enclosed),
            or a ball that is not finite (which one is said).
        TypeError, ValueError
            An input that is not an exact number (a float of an mp context).
        """
        from flint import acb, arb

        from mpvi.numbers.arbref import (GUARD_DIGITS, arb_precision, ball, exact_rational, finite,
                              lost_digits, magnitude, real_part)
        q0, v0, m = (exact_rational(x, name) for x, name in zip(self._inputs, ("q0", "v0", "m")))
        E = (v0 ** 2 * m + q0 ** 4 - q0 ** 2) / 2       # exact: Q'(0) = sqrt(m) v0
        if self.form == "equilibrium":
            with arb_precision(dps + GUARD_DIGITS):
                return ball(q0, "q0"), arb(0)
        if E == 0:
            raise ArithmeticError("double well: the separatrix E = 0 (k^2 = 1) is not enclosed: "
                                  "the theta form of Jacobi's functions needs k^2 < 1")
        periods = magnitude(t) / magnitude(self.period)
        digits = dps + GUARD_DIGITS + lost_digits(periods)
        with arb_precision(2 * digits):      # the phase at a turning point: a square root
            rm, sign = ball(m, "m").sqrt(), (1 if q0 >= 0 else -1)
            if v0 == 0 and 2 * q0 ** 2 >= 1:
                A = ball(abs(q0), "q0")                     # the outer turning point
            else:
                A = ((1 + ball(1 + 8 * E, "1 + 8E").sqrt()) / 2).sqrt()
            if E < 0:
                k2, w = 2 - 1 / A ** 2, A
                sn2 = (1 - (ball(q0, "q0") / A) ** 2) / k2
                phi = arb.atan2(sn2.nonnegative_part().sqrt(), (1 - sn2).nonnegative_part().sqrt())
                u = acb.elliptic_f(acb(phi), acb(k2)).real
                u0 = -u if -sign * v0 < 0 else u
            else:
                w = (2 * A ** 2 - 1).sqrt()
                k2 = A ** 2 / (2 * A ** 2 - 1)
                c = ball(q0, "q0") / A
                phi = arb.atan2((1 - c ** 2).nonnegative_part().sqrt(), c)
                u = acb.elliptic_f(acb(phi), acb(k2)).real
                u0 = -u if v0 > 0 else u
        with arb_precision(digits):
            kk, kp = acb(k2).elliptic_k().real, acb(1 - k2).elliptic_k().real
            tau = acb(0, kp / kk)
            z = (w * ball(t, "t") / rm + u0) / (2 * kk)
            t1, t2, t3, t4 = (real_part(x, "theta(z)") for x in acb.modular_theta(acb(z), tau))
            c2, c3, c4 = (real_part(x, "theta(0)") for x in acb.modular_theta(acb(0), tau)[1:])
            sn, cn, dn = c3 / c2 * t1 / t4, c4 / c2 * t2 / t4, c4 / c3 * t3 / t4
            if E < 0:
                q, v = sign * A * dn, -sign * A * A * k2 * sn * cn / rm
            else:
                q, v = A * cn, -A * w * sn * dn / rm
            out = finite({"u0": u0, "q": q, "v": v}, "double well")
            return out["q"], out["v"]

    @property
    def energy(self) -> Real:
        """E = 1/2 m q'(0)^2 + 1/2 (q(0)^4 - q(0)^2), in the caller's context."""
        return self.ctx.num(self.energy_exact)


@entry
def double_well_exact(ctx: Context, q0: NumberLike, v0: NumberLike = 0, m: NumberLike = 1
                      ) -> DoubleWellExact:
    """:class:`DoubleWellExact` (the exact solution of eq. (39) from q(0) = q0,
    q'(0) = v0)."""
    return DoubleWellExact(ctx, q0, v0, m)


@entry
def double_well_problem(ctx: Context, q0: NumberLike, v0: NumberLike = 0, m: NumberLike = 1
                        ) -> Problem:
    """The double well (38) from q(0) = ``q0``, q'(0) = ``v0`` as a :class:`mpvi.Problem`
    with its exact solution (:class:`DoubleWellExact`)."""
    return Problem(double_well(ctx, m), [q0], v0=[v0], exact=DoubleWellExact(ctx, q0, v0, m),
                   name="double well")


__all__ = ["DoubleWellExact", "double_well", "double_well_exact", "double_well_problem", "duffing"]
