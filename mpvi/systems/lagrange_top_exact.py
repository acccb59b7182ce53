"""Exact nutation of the Lagrange top (top2025, Sec. 4.1-4.2, eqs. 16-18s, 18aa, Table 3).

The heavy symmetric top in ZXZ Euler angles q = (φ, θ, ψ) (paper eqs. 16-17):

    T = ½ I3 (ψ̇ + φ̇ cosθ)² + ½ I (φ̇² sin²θ + θ̇²),   V = m_top g ℓ cosθ ≡ I m cosθ,

m = m_top g ℓ / I.  φ and ψ are cyclic; the conserved momenta (eq. 18s) and energy are

    p_φ = I3 (ψ̇ + φ̇ cosθ) cosθ + I φ̇ sin²θ,   p_ψ = I3 (ψ̇ + φ̇ cosθ),   E = T + V.

Eliminating φ̇ = (p_φ − p_ψ cosθ)/(I sin²θ) (eq. 18af) and ψ̇ + φ̇ cosθ = p_ψ/I3 from E
leaves, with ``c = E − p_ψ²/(2 I3)``,

    c = ½ I θ̇² + (p_φ − p_ψ cosθ)²/(2 I sin²θ) + I m cosθ,

which is the paper's constant c (printed below eq. 18aa with sin²θ; at t = 0 it is
sin²θ0).  For u = cosθ, u̇ = −sinθ θ̇ and 1 − u² = sin²θ give the cubic

    u̇² = f(u) = (2/I)(c − I m u)(1 − u²) − (p_φ − p_ψ u)²/I²
              = 2m u³ − (2c/I + p_ψ²/I²) u² + 2(p_φ p_ψ/I² − m) u + 2c/I − p_φ²/I².

With u = (2/m) P + b and b = (2 I c + p_ψ²)/(6 I² m) (the shift that removes the u²
term) one gets P'² = 4P³ − g2 P − g3, with g2 = −(m/2) f'(b) and g3 = −(m²/4) f(b): P is
the Weierstrass function ℘ of those invariants.  f(±1) = −(p_φ ∓ p_ψ)²/I² ≤ 0 and
f(+∞) = +∞, so the roots are u_min < u_max in [−1, 1] and a third one > 1; they are
(2/m) e_j + b with e3 → u_min, e2 → u_max, e1 → the third.  On the line t + ω3, ℘ is real
and oscillates between e3 and e2, hence (eq. 18aa, corrected; see below)

    cosθ(t) = (2/m) ℘(t + t0 + ω3) + b,    b = (2 I c + p_ψ²)/(6 I² m),

with the phase t0 fixed by θ(0) = θ0 and the sign of θ̇(0) (t0 = 0 when θ̇0 = 0 and θ0
is the largest nutation angle, as for Table 3).  The nutation period is the real period
2ω1 of ℘.

Differences from the printed eq. (18aa) (evidence in tests/test_lagrange_top_exact.py):

* the constant is printed (2Ic + p_ψ²)/(6Im); it must be divided by I once more,
  (2Ic + p_ψ²)/(6I²m).  The printed form has units of kg m² (cosθ is a number) and gives
  cosθ(0) ≈ −0.332 instead of cos(π/3) = 0.5 for Table 3;
* sin²θ in the definition of c is sin²θ0 (with sin²θ(t) the "constant" would vary);
* t + ω3 holds only when θ0 is a turning point with θ0 the largest angle; otherwise a
  phase t0 enters.

Table 3 does not print g (ERRATA [E12]).  g = 9.81 m/s² (the value the same paper prints for its double
pendulum, Table 1) gives the period 2ω1 = 1.847238981508925884056232208398876635488 s,
g = 9.80665 gives 1.827537611090097805648472355157705134436 s; the paper prints
t̄ = 1.84671 s.  Neither g reproduces it.  The period is very sensitive to I
(dt̄/dI ≈ −1.7e4 s per kg m²): with the printed g = 9.81 and I rounded to 0.00233 the
period is 1.846708477 s, which rounds to the printed 1.84671.  We keep the printed
I = 0.002329969592394382 and g = 9.81 (:func:`mpvi.systems.lagrange_top.table3_top`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from mpvi.numbers.elliptic import Weierstrass
from mpvi.ground.precision import entry_class

if TYPE_CHECKING:
    from flint import arb

    from mpvi.ground.types import NumberLike, Real
    from mpvi.numbers.context import Context

_INPUTS = ("m_top", "I", "I3", "ell", "g", "theta0", "phi_dot0", "theta_dot0", "psi_dot0")

SETUP_GUARD_DIGITS = 20
"""Extra digits for the constants (momenta, invariants, roots, half-periods, phase).  The
period is ill-conditioned near looping motions (Table 3: a relative change of 1e-65 in the
coefficients of f moves it by ~1e-61); with the guard the constants are exact to the
context precision for inputs given as strings, ints or fractions."""

QUADRATURE_GUARD_DIGITS = 20
"""Extra digits for :meth:`LagrangeTopNutation.period_quadrature` (f(u) cancels near the
turning points)."""


@entry_class
class LagrangeTopNutation:
    """The exact nutation θ(t) of the Lagrange top for given parameters and initial data.

    Parameters (ints, strings, ``Fraction`` or numbers of ``ctx``; floats are refused):
    ``m_top`` [kg], ``I`` = I1 = I2 and ``I3`` [kg m²], ``ell`` = ℓ [m], ``g`` [m s⁻²],
    ``theta0`` in (0, π) [rad], ``phi_dot0``, ``theta_dot0``, ``psi_dot0`` [rad s⁻¹].
    φ0 and ψ0 do not enter the nutation.

    Attributes: ``m`` (m_top g ℓ / I), ``p_phi``, ``p_psi`` (eq. 18s), ``energy`` (T + V),
    ``c`` (E − p_ψ²/(2 I3), the constant below eq. 18aa), ``coefficients`` of f
    (highest degree first), ``b`` (shift of eq. 18aa), ``g2``, ``g3``, ``wp`` (the
    :class:`~mpvi.numbers.elliptic.Weierstrass` function), ``roots`` = (u_min, u_max, u_3) of f,
    ``t0`` (phase), ``period`` (2ω1, the nutation period).  They are computed and kept
    with ``SETUP_GUARD_DIGITS`` extra digits; the methods return numbers at the context
    precision.  θ̇, φ̇ and ψ̇ divide by sinθ, which vanishes only if u_max = 1
    (p_φ = p_ψ: the axis passes through the vertical).
    """

    def __init__(self, ctx: Context, *, m_top: NumberLike, I: NumberLike, I3: NumberLike,
                 ell: NumberLike, g: NumberLike, theta0: NumberLike, phi_dot0: NumberLike,
                 theta_dot0: NumberLike, psi_dot0: NumberLike) -> None:
        self.ctx = ctx
        # numbers of the context are exact inputs: checked at its precision here (fewer bits
        # are refused), then kept as they are with the guard digits, where ctx.num would
        # refuse them as numbers of fewer bits than the raised precision (gmp context)
        args = [ctx.num(x) if ctx.is_number(x) else x
                for x in (m_top, I, I3, ell, g, theta0, phi_dot0, theta_dot0, psi_dot0)]
        self._inputs = dict(zip(_INPUTS, args))
        self._arb_setups: dict[int, dict[str, arb]] = {}
        with ctx.workdps(ctx.dps + SETUP_GUARD_DIGITS):
            self._setup(*args)

    def _setup(self, m_top, I, I3, ell, g, theta0, phi_dot0, theta_dot0, psi_dot0):
        ctx = self.ctx

        def num(x):
            return ctx.lift(x) if ctx.is_number(x) else ctx.num(x)
        self.m_top, self.I, self.I3, self.ell, self.g = (num(x) for x in (m_top, I, I3, ell, g))
        self.theta0, self.phi_dot0, self.theta_dot0, self.psi_dot0 = (
            num(x) for x in (theta0, phi_dot0, theta_dot0, psi_dot0))
        for name in ("m_top", "I", "I3", "ell", "g"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {ctx.to_str(getattr(self, name), 10)}")
        if not 0 < self.theta0 < ctx.pi:
            raise ValueError(f"theta0 must lie in (0, pi) (Euler angles are singular at 0 and pi), "
                             f"got {ctx.to_str(self.theta0, 10)}")
        I, I3 = self.I, self.I3
        u0, s0 = ctx.cos(self.theta0), ctx.sin(self.theta0)

        self.m = self.m_top * self.g * self.ell / I
        spin = self.psi_dot0 + self.phi_dot0 * u0                       # ψ̇ + φ̇ cosθ
        self.p_psi = I3 * spin
        self.p_phi = self.p_psi * u0 + I * self.phi_dot0 * s0 ** 2
        kinetic = (I3 * spin ** 2 + I * (self.phi_dot0 ** 2 * s0 ** 2 + self.theta_dot0 ** 2)) / 2
        self.energy = kinetic + I * self.m * u0                         # eqs. (16), (17)
        self.c = (I * self.theta_dot0 ** 2 / 2
                  + (self.p_phi - self.p_psi * u0) ** 2 / (2 * I * s0 ** 2) + I * self.m * u0)

        m, c, pp, ps = self.m, self.c, self.p_phi, self.p_psi
        self.coefficients = (2 * m, -(2 * c / I + ps ** 2 / I ** 2),
                             2 * (pp * ps / I ** 2 - m), 2 * c / I - pp ** 2 / I ** 2)
        self.b = (2 * I * c + ps ** 2) / (6 * I ** 2 * m)
        self.g2 = -m * self.f_prime(self.b) / 2
        self.g3 = -m ** 2 * self.f(self.b) / 4
        try:
            self.wp = Weierstrass(ctx, self.g2, self.g3)
        except ValueError as err:
            raise ValueError("f(u) has a double root: the nutation is degenerate (steady "
                             "precession, or the motion that tends to the upright top)") from err
        w = self.wp
        self.roots = tuple(2 * e / m + self.b for e in (w.e3, w.e2, w.e1))
        self.period = w.period
        self.t0 = self._phase(u0, -s0 * self.theta_dot0)

    # ----- the cubic ---------------------------------------------------------------
    def f(self, u: Real) -> Real:
        """f(u) with u̇² = f(u), u = cosθ (module docstring)."""
        a3, a2, a1, a0 = self.coefficients
        return ((a3 * u + a2) * u + a1) * u + a0

    def f_prime(self, u: Real) -> Real:
        """f'(u)."""
        a3, a2, a1, _ = self.coefficients
        return (3 * a3 * u + 2 * a2) * u + a1

    def _phase(self, u0, udot0):
        """t0 with cosθ(0) = u0 and d cosθ/dt(0) = udot0.

        ℘(t + ω3) = e3 + (e2 − e3) sn²(λt), λ = √(e1 − e3), and
        ℘'(t + ω3) = 2 (e2 − e3) λ sn cn dn.  With A = sn² (from u0) and B = sn cn dn
        (from udot0), the amplitude am(λ t0) = atan2(sn, cn) is taken from the better
        conditioned pair: sn = B/(cn dn) when A ≤ ½ (near the turning point u_min, where
        A alone fixes t0 only to √eps), cn = B/(sn dn) otherwise.  λ t0 = F(am | k²).
        """
        ctx, w = self.ctx, self.wp
        lam = ctx.sqrt(w.e1 - w.e3)
        a = (self.m * (u0 - self.b) / 2 - w.e3) / (w.e2 - w.e3)
        a = min(max(a, ctx.zero), ctx.one)                # rounding may leave [0, 1]
        bb = self.m * udot0 / (4 * (w.e2 - w.e3) * lam)   # sn cn dn
        dn = ctx.sqrt(1 - w.k2 * a)
        if 2 * a <= 1:
            cn = ctx.sqrt(1 - a)
            sn = bb / (cn * dn)
        else:
            sn = ctx.sqrt(a)
            cn = bb / (sn * dn)
        return ctx.ellipf(ctx.atan2(sn, cn), w.k2) / lam

    # ----- the solution ----------------------------------------------------------------
    def cos_theta(self, t: NumberLike) -> Real:
        """cosθ(t) = (2/m) ℘(t + t0 + ω3) + b (eq. 18aa, corrected)."""
        return 2 * self.wp.p_shifted(self.ctx.num(t) + self.t0) / self.m + self.b

    def cos_theta_dot(self, t: NumberLike) -> Real:
        """d cosθ/dt = (2/m) ℘'(t + t0 + ω3)."""
        return 2 * self.wp.p_dp_shifted(self.ctx.num(t) + self.t0)[1] / self.m

    def theta(self, t: NumberLike) -> Real:
        """θ(t) = acos(cosθ(t)) in (0, π)."""
        return self.ctx.acos(self.cos_theta(t))

    def theta_dot(self, t: NumberLike) -> Real:
        """θ̇(t) = −(d cosθ/dt)/sinθ."""
        p, dp = self.wp.p_dp_shifted(self.ctx.num(t) + self.t0)
        u = 2 * p / self.m + self.b
        return -2 * dp / (self.m * self.ctx.sqrt(1 - u * u))

    def phi_dot(self, t: NumberLike) -> Real:
        """Precession rate φ̇ = (p_φ − p_ψ cosθ)/(I sin²θ) (eq. 18af)."""
        u = self.cos_theta(t)
        return (self.p_phi - self.p_psi * u) / (self.I * (1 - u * u))

    def psi_dot(self, t: NumberLike) -> Real:
        """Spin rate ψ̇ = p_ψ/I3 − φ̇ cosθ (eq. 18s)."""
        u = self.cos_theta(t)
        return self.p_psi / self.I3 - (self.p_phi - self.p_psi * u) * u / (self.I * (1 - u * u))

    # ----- proven enclosures (Arb) --------------------------------------------------------
    def _arb_setup(self) -> dict[str, arb]:
        """The constants of the solution as balls at flint's current precision, from the
        exact inputs (cached per precision); the steps of :meth:`_setup` and
        :meth:`_phase` in ball arithmetic, the roots of 4x^3 - g2 x - g3 by Viete's
        trigonometric form (e1, e2, e3 in that order by construction)."""
        from flint import acb, arb

        from mpvi.numbers.arbref import ball, finite, prec_digits
        digits = prec_digits()
        if digits in self._arb_setups:
            return self._arb_setups[digits]
        x = {name: ball(v, name) for name, v in self._inputs.items()}
        I, I3 = x["I"], x["I3"]
        u0, s0 = x["theta0"].cos(), x["theta0"].sin()
        m = x["m_top"] * x["g"] * x["ell"] / I
        p_psi = I3 * (x["psi_dot0"] + x["phi_dot0"] * u0)
        p_phi = p_psi * u0 + I * x["phi_dot0"] * s0 ** 2
        d = p_phi - p_psi * u0          # 0 for a cusp (Table 6): squared as d * d, since
        c = (I * x["theta_dot0"] ** 2 / 2 + d * d / (2 * I * s0 ** 2)   # Arb's d ** 2 is nan
             + I * m * u0)                                          # on a ball holding 0
        a3, a2, a1, a0 = (2 * m, -(2 * c / I + p_psi ** 2 / I ** 2),
                          2 * (p_phi * p_psi / I ** 2 - m), 2 * c / I - p_phi ** 2 / I ** 2)
        b = (2 * I * c + p_psi ** 2) / (6 * I ** 2 * m)
        g2 = -m * ((3 * a3 * b + 2 * a2) * b + a1) / 2
        g3 = -m ** 2 * (((a3 * b + a2) * b + a1) * b + a0) / 4
        if not g2 ** 3 - 27 * g3 ** 2 > 0:
            raise ArithmeticError(
                f"Lagrange top: the discriminant g2^3 - 27 g3^2 = {g2 ** 3 - 27 * g3 ** 2} is "
                f"not proven positive at {digits} digits: three distinct real roots of f (a "
                "nutation between two angles) cannot be proven; the motion is degenerate "
                "(steady precession, the upright top) or too close to it")
        r = (g2 / 3).sqrt()
        phi = (3 * arb(3).sqrt() * g3 / (g2 * g2.sqrt())).acos()
        e1, e2, e3 = (r * ((phi - 2 * arb.pi() * j) / 3).cos() for j in (0, 1, 2))
        lam = (e1 - e3).sqrt()
        k2 = (e2 - e3) / (e1 - e3)
        kk, kp = acb(k2).elliptic_k().real, acb(1 - k2).elliptic_k().real
        omega1 = kk / lam
        # phase t0 (_phase): sn^2 = a, sn cn dn = B; either branch is an identity
        a = (m * (u0 - b) / 2 - e3) / (e2 - e3)
        bb = m * (-s0 * x["theta_dot0"]) / (4 * (e2 - e3) * lam)
        dn = (1 - k2 * a).sqrt()
        if 2 * float(a.mid()) <= 1:           # the better conditioned branch (a choice only)
            cn = (1 - a).sqrt()
            sn = bb / (cn * dn)
        else:
            sn = a.sqrt()
            cn = bb / (sn * dn)
        t0 = acb.elliptic_f(acb(arb.atan2(sn, cn)), acb(k2)).real / lam
        out = finite({"m": m, "b": b, "I": I, "I3": I3, "p_phi": p_phi, "p_psi": p_psi,
                      "g2": g2, "g3": g3, "e1": e1, "e2": e2, "e3": e3, "omega1": omega1,
                      "tau": kp / kk, "t0": t0}, "Lagrange top")
        self._arb_setups[digits] = out
        return out

    def enclose_period(self, dps: int) -> arb:
        """Enclose the nutation period 2 omega1 in an Arb ball (proven).

        ``2 omega1 = 2 K(k^2)/sqrt(e1 - e3)`` (DLMF 23.6.(ii)), with the roots e_j of
        4x^3 - g2 x - g3 and the invariants from the exact inputs (top2025 eq. 18aa), all
        in ball arithmetic (Arb: Johansson 2017) at ``dps + GUARD_DIGITS`` digits.

        Parameters
        ----------
        dps : int
            The digits wanted.

        Returns
        -------
        flint.arb
            A ball containing the period.

        Raises
        ------
        ArithmeticError
            The three roots of f cannot be proven real and distinct (degenerate top).
        TypeError, ValueError
            An input that is not an exact number (a float).
        """
        from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
        with arb_precision(dps + GUARD_DIGITS):
            return 2 * self._arb_setup()["omega1"]

    def enclose(self, t: NumberLike | arb, dps: int) -> dict[str, arb]:
        """Enclose theta(t), cos theta(t), phi'(t) and psi'(t) in Arb balls (proven).

        cos theta(t) = (2/m) P(t + t0 + omega3) + b (top2025 eq. 18aa, corrected as in the
        module docstring), with Arb's ``acb_elliptic_p`` on the lattice (1, tau),
        tau = omega3/omega1: P(z) = P_(1,tau)(z/(2 omega1)) / (2 omega1)^2 (the value on
        the line t + omega3 is real; the real part of the complex ball is kept, checked to
        have an imaginary part containing 0).  phi' = (p_phi - p_psi cos theta)/(I sin^2
        theta) (eq. 18af), psi' = p_psi/I3 - phi' cos theta (eq. 18s).  Everything from the
        exact inputs on is ball arithmetic (Arb: Johansson 2017), with
        ``dps + GUARD_DIGITS`` digits plus the digits the number of periods in ``t``
        costs; flint's precision is restored after.

        Parameters
        ----------
        t : int, str, Fraction, context number or flint.arb
            The time, exact (read as a rational), or a ball: then the enclosures hold for
            every time in it.
        dps : int
            The digits wanted.

        Returns
        -------
        dict of str to flint.arb
            Balls for ``"theta"``, ``"cos_theta"``, ``"phi_dot"``, ``"psi_dot"``.

        Raises
        ------
        ArithmeticError
            The three roots of f cannot be proven real and distinct (degenerate top), or
            a step's ball is not finite (which one is said).
        TypeError, ValueError
            An input that is not an exact number (a float).
        """
        from flint import acb

        from mpvi.numbers.arbref import (GUARD_DIGITS, arb_precision, ball, finite, lost_digits, magnitude,
                              real_part)
        periods = magnitude(t) / magnitude(self.period)
        with arb_precision(dps + GUARD_DIGITS + lost_digits(periods)):
            k = self._arb_setup()
            two_w1 = 2 * k["omega1"]
            z = acb((ball(t, "t") + k["t0"]) / two_w1, k["tau"] / 2)
            wp = real_part(z.elliptic_p(acb(0, k["tau"])), "P(t + t0 + omega3)") / two_w1 ** 2
            u = 2 * wp / k["m"] + k["b"]
            phi_dot = (k["p_phi"] - k["p_psi"] * u) / (k["I"] * (1 - u * u))
            return finite({"theta": u.acos(), "cos_theta": u, "phi_dot": phi_dot,
                           "psi_dot": k["p_psi"] / k["I3"] - phi_dot * u}, "Lagrange top")

    # ----- independent check of the period ----------------------------------------------
    def period_quadrature(self) -> Real:
        """2 ∫_{u_min}^{u_max} du / √f(u), computed without ℘.

        The roots of f come from ``polyroots`` and f is evaluated from its coefficients,
        with ``QUADRATURE_GUARD_DIGITS`` extra digits.  The substitution
        u = u_min + (u_max − u_min) sin²s turns the integrand into the smooth
        2 (u_max − u_min) sin s cos s / √f(u(s)) on [0, π/2], integrated by Gauss-Legendre
        on four panels (the integrand has a complex singularity near s = π/2, at the third
        root of f).
        """
        ctx = self.ctx
        with ctx.workdps(ctx.dps + QUADRATURE_GUARD_DIGITS):
            roots = sorted(ctx.re(r) for r in ctx.polyroots(self.coefficients, extraprec=2 * ctx.prec))
            u_min, u_max = roots[0], roots[1]
            width = u_max - u_min

            def integrand(s):
                sn, cs = ctx.sin(s), ctx.cos(s)
                return 2 * width * sn * cs / ctx.sqrt(self.f(u_min + width * sn ** 2))

            value = 2 * ctx.quad(integrand, ctx.linspace(0, ctx.pi / 2, 5), method="gauss-legendre")
        return +value

    def __repr__(self):
        s = self.ctx.to_str
        return (f"LagrangeTopNutation(period={s(self.period, 15)}, u_min={s(self.roots[0], 15)}, "
                f"u_max={s(self.roots[1], 15)}, dps={self.ctx.dps})")
