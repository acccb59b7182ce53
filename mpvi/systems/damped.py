"""The damped harmonic oscillator of the mutze paper (Sec. 7) with its exact flow, and a
damped, driven pendulum (a nonlinear forced system for measured orders).

Damped oscillator (mutze eqs. 87-91), coordinate x:

    L = m v^2/2 - k x^2/2,   F = -b v,   G = m a + b v + k x,   A = -(k x + b v)/m,

m x'' + b x' + k x = 0.  With rho = b/(2m) and omega = sqrt(k/m - rho^2) (k/m > rho^2:
oscillating; b < 0 is anti-damping) the general solution is e^(-rho t) cos(omega t +
phi), and the exact flow from (x0, v0) is

    x(t) = e^(-rho t) (x0 cos omega t + (v0 + rho x0)/omega sin omega t),
    v(t) = e^(-rho t) (v0 cos omega t - (omega x0 + rho (v0 + rho x0)/omega) sin omega t).

The complex amplitude s_c = x - i (v + rho x)/omega (Sec. 7) evolves as
s_c(t) = e^((-rho + i omega) t) s_c(0), which makes the interaction picture (eq. 92)
one multiplication: :meth:`DampedOscillatorExact.interaction`.

Damped driven pendulum: L = v^2/2 + w0^2 cos x, F = -c v + f cos(W t), so that
x'' = -w0^2 sin x - c x' + f cos(W t): A depends on v and t.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import sympy as sp

from mpvi.model.mechanics import LagrangianSystem
from mpvi.ground.precision import entry, entry_class

if TYPE_CHECKING:
    from flint import arb

    from mpvi.ground.types import NumberLike, Real, Vector
    from mpvi.numbers.context import Context


@entry
def damped_oscillator(ctx: Context, m: NumberLike = 1, k: NumberLike = 1, b: NumberLike = 0
                      ) -> LagrangianSystem:
    """The damped harmonic oscillator (eq. 87) with mass ``m``, stiffness ``k`` and
    damping ``b`` (negative: anti-damping); numbers the context reads exactly or context
    numbers.  ``energy`` is the mechanical energy m v^2/2 + k x^2/2."""
    x = sp.Symbol("x")
    ms, ks, bs = sp.symbols("m k b")
    if not ctx.num(m) > 0 or not ctx.num(k) > 0:
        raise ValueError(f"damped oscillator: m and k must be positive, got m = {m!r}, k = {k!r}")
    return LagrangianSystem("damped oscillator", [x], sp.Matrix([[ms]]), ks * x ** 2 / 2,
                            {ms: m, ks: k, bs: b}, ctx,
                            force=lambda t, q, v: sp.Matrix([-bs * v[0]]))


@entry_class
class DampedOscillatorExact:
    """Exact flow of m x'' + b x' + k x = 0 (module doc); ``rho``, ``omega``."""

    def __init__(self, ctx: Context, m: NumberLike = 1, k: NumberLike = 1,
                 b: NumberLike = 0) -> None:
        self.ctx = ctx
        self._inputs = (m, k, b)
        m, k, b = ctx.num(m), ctx.num(k), ctx.num(b)
        self.rho = b / (2 * m)
        w2 = k / m - self.rho ** 2
        if not w2 > 0:
            raise ValueError("damped oscillator: k/m <= (b/2m)^2, the motion does not oscillate")
        self.omega = ctx.sqrt(w2)

    def flow(self, t: Real, x0: Real, v0: Real) -> tuple[Real, Real]:
        """(x(t), v(t)) from (x0, v0) at time 0."""
        ctx, r, w = self.ctx, self.rho, self.omega
        e, c, s = ctx.exp(-r * t), ctx.cos(w * t), ctx.sin(w * t)
        y0 = (v0 + r * x0) / w
        return e * (x0 * c + y0 * s), e * (v0 * c - (w * x0 + r * y0) * s)

    def enclose(self, t: NumberLike | arb, x0: NumberLike | arb, v0: NumberLike | arb,
                dps: int) -> tuple[arb, arb]:
        """Enclose the exact flow (x(t), v(t)) from (x0, v0) at time 0 in Arb balls.

        The closed form of :meth:`flow` (mutze eqs. 87-91) evaluated in ball arithmetic
        (Arb: Johansson 2017) from the exact m, k, b the instance was given, with
        ``dps + GUARD_DIGITS`` digits plus the digits ``omega |t|`` costs; flint's
        precision is restored after.

        Parameters
        ----------
        t : int, str, Fraction, context number or flint.arb
            The time (exact, or a ball: the enclosure then holds for every time in it).
        x0, v0 : int, str, Fraction, context number or flint.arb
            The initial position and velocity, likewise.
        dps : int
            The digits wanted.

        Returns
        -------
        tuple of flint.arb
            Balls containing x(t) and v(t).

        Raises
        ------
        ArithmeticError
            k/m - rho^2 not proven positive (the motion is not proven to oscillate).
        TypeError, ValueError
            An input that is not an exact number (a float, a non-finite number).
        """
        from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision, ball, lost_digits, magnitude
        size = magnitude(self.omega) * magnitude(t)
        with arb_precision(dps + GUARD_DIGITS + lost_digits(size)):
            m, k, b = (ball(v, name) for v, name in zip(self._inputs, ("m", "k", "b")))
            rho = b / (2 * m)
            w2 = k / m - rho ** 2
            if not w2 > 0:
                raise ArithmeticError(f"damped oscillator: k/m - rho^2 = {w2} is not proven "
                                      "positive: the motion is not proven to oscillate")
            w = w2.sqrt()
            tt, x, v = ball(t, "t"), ball(x0, "x0"), ball(v0, "v0")
            e, c, s = (-rho * tt).exp(), (w * tt).cos(), (w * tt).sin()
            y0 = (v + rho * x) / w
            return e * (x * c + y0 * s), e * (v * c - (w * x + rho * y0) * s)

    def solution(self, x0: NumberLike, v0: NumberLike, t0: NumberLike = 0
                 ) -> Callable[[NumberLike], tuple[Vector, Vector]]:
        """The exact solution through (x0, v0) at time t0 in mpvi's protocol: a callable
        t -> (x(t), v(t)) (vectors of one entry) for a problem given with v0."""
        ctx = self.ctx
        x0, v0, t0 = ctx.num(x0), ctx.num(v0), ctx.num(t0)

        def exact(t):
            x, v = self.flow(ctx.num(t) - t0, x0, v0)
            return ctx.vector([x]), ctx.vector([v])
        return exact

    def amplitude(self, x: Real, v: Real) -> tuple[Real, Real]:
        """The complex amplitude s_c = x - i (v + rho x)/omega (mutze Sec. 7) as its real
        and imaginary parts."""
        return x, -(v + self.rho * x) / self.omega

    def interaction(self, t: Real, x: Real, v: Real) -> tuple[Real, Real]:
        """s_int(t)_c for the state (x, v) reached at time t (eq. 92): the complex amplitude
        of Phi_exact(-t)(x, v), which is e^((rho - i omega) t) s_c; (real, imaginary)."""
        ctx = self.ctx
        re, im = self.amplitude(x, v)
        e, c, s = ctx.exp(self.rho * t), ctx.cos(self.omega * t), ctx.sin(self.omega * t)
        return e * (re * c + im * s), e * (im * c - re * s)

    def polar(self, re: Real, im: Real) -> tuple[Real, Real]:
        """(``|s|``, arg s) of a complex amplitude given as (real, imaginary)."""
        return self.ctx.sqrt(re * re + im * im), self.ctx.atan2(im, re)


@entry
def damped_pendulum(ctx: Context, w0: NumberLike = 1, damping: NumberLike = "1/5",
                    force: NumberLike = "1/2", drive: NumberLike = "2/3") -> LagrangianSystem:
    """The damped driven pendulum x'' = -w0^2 sin x - c x' + f cos(W t) (module doc)."""
    x = sp.Symbol("x")
    v = sp.Symbol("v")
    w, c, f, W = sp.symbols("w0 c f W")
    return LagrangianSystem.from_lagrangian(
        "damped driven pendulum", [x], [v], v ** 2 / 2 + w ** 2 * sp.cos(x),
        {w: w0, c: damping, f: force, W: drive}, ctx,
        force=lambda t, q, vv: sp.Matrix([-c * vv[0] + f * sp.cos(W * t)]))


__all__ = ["damped_oscillator", "DampedOscillatorExact", "damped_pendulum"]
