"""The Weierstrass elliptic function ℘ at the precision of an mpvi context.

Only the case needed by the exact Lagrange-top nutation (top2025, eq. 18aa) is covered:
real invariants ``g2, g3`` with positive discriminant ``Δ = g2³ − 27 g3² > 0``, i.e. three
real distinct roots ``e1 > e2 > e3`` of ``4x³ − g2 x − g3`` (``e1 + e2 + e3 = 0``).  The
period lattice is then rectangular: a real half-period ``ω1`` and a purely imaginary one
``ω3``, and ``℘(z) = ℘(z; g2, g3)`` satisfies

    ℘'(z)² = 4 ℘(z)³ − g2 ℘(z) − g3,    ℘(ω1) = e1,  ℘(ω1 + ω3) = e2,  ℘(ω3) = e3.

Formulas (NIST DLMF, §23.6 "Relations to other functions"; checked numerically in
tests/test_lagrange_top_exact.py, including against Arb's ``acb_elliptic_p``):

* Jacobi parameter and half-periods (§23.6(ii)): ``k² = (e2 − e3)/(e1 − e3)``,
  ``ω1 = K(k²)/√(e1 − e3)``, ``ω3 = i K(1 − k²)/√(e1 − e3)``; ``K`` is mpmath's
  ``ellipk``, whose argument is the parameter k².
* Jacobi form (§23.6(ii)): ``℘(z) = e3 + (e1 − e3) ns²(z √(e1 − e3), k)``.  With
  ``sn(u + iK') = 1/(k sn u)`` (§22.4(iii)) this gives on the line ``t + ω3``, t real,
  ``℘(t + ω3) = e3 + (e2 − e3) sn²(t √(e1 − e3), k)``: real, between ``e3`` and ``e2``,
  of period ``2ω1`` in ``t``.
* Theta form, used for evaluation (§23.6(i), θ_j as in §20.2): with the nome
  ``q = exp(iπτ) = exp(−π K'/K)``, ``τ = ω3/ω1``, ``v = π z/(2ω1)`` and
  ``θ_j = θ_j(0, q)``,

      ℘(z)  = e3 + (π/(2ω1))² θ2² θ3² θ4(v)² / θ1(v)²,
      ℘'(z) = −2 (π/(2ω1))³ θ2² θ3² θ4² θ2(v) θ3(v) θ4(v) / θ1(v)³;

  the half-period translation ``v → v + πτ/2`` (§20.2(ii)) maps θ1 ↔ θ4 and θ2 ↔ θ3 up to
  a common factor, so that on the real line ``t + ω3``

      ℘(t + ω3)  = e3 + (π/(2ω1))² θ2² θ3² θ1(v)² / θ4(v)²,
      ℘'(t + ω3) = 2 (π/(2ω1))³ θ2² θ3² θ4² θ1(v) θ2(v) θ3(v) / θ4(v)³.

Every number and function comes from the context (``ctx.jtheta``, ``ctx.ellipk``,
``ctx.mpc``, ``ctx.sqrt``, ``ctx.pi``, ``ctx.workdps``, ...), evaluated at its precision;
nothing reads or changes the global ``mpmath.mp``.
"""
from __future__ import annotations

from mpvi.numbers.context import PrecisionError

GUARD_DIGITS = 15
"""Extra digits used for the roots of the cubic (they lose digits when roots are close)."""


def _require_mp(ctx):
    if not getattr(ctx, "is_mp", False):
        raise TypeError(f"the Weierstrass function needs an MPContext, got {type(ctx).__name__}")


def _complex_arg(ctx, z):
    """``z`` as a number of ``ctx`` (an ``mpc`` stays complex); floats are refused."""
    if ctx.is_complex(z):
        return z
    if isinstance(z, complex):
        raise PrecisionError(f"refusing complex float {z!r} in a {ctx.dps}-digit context: "
                             "build it from context numbers, e.g. ctx.mpc('0.1', '0.2')")
    return ctx.num(z)


class Weierstrass:
    """℘(z; g2, g3) for real invariants with three real distinct roots.

    Give either the invariants ``g2, g3`` or the three ``roots`` (any order; they must
    sum to zero to working precision).  Numbers may be ints, strings, ``Fraction`` or
    numbers of ``ctx``; a Python float is refused.

    Attributes: ``g2, g3``; ``e1 > e2 > e3``; ``k2`` (Jacobi parameter k²); ``omega1``
    (real half-period, an ``mpf``); ``omega3`` (imaginary half-period, an ``mpc``);
    ``tau = ω3/ω1``; ``nome`` (``q = exp(iπτ)``, real, in (0, 1)); ``period = 2 ω1``.

    Raises ``ValueError`` when the discriminant ``g2³ − 27 g3²`` is not positive beyond
    rounding (``16 eps (|g2|³ + 27 g3²)``: the roots are not real and distinct to working
    precision) or when given roots are not distinct or do not sum to zero.
    """

    def __init__(self, ctx, g2=None, g3=None, roots=None):
        _require_mp(ctx)
        self.ctx = ctx
        if roots is not None:
            if g2 is not None or g3 is not None:
                raise ValueError("give either the invariants (g2, g3) or the roots, not both")
            e1, e2, e3 = self._check_roots([ctx.num(e) for e in roots])
            g2 = 2 * (e1 * e1 + e2 * e2 + e3 * e3)      # -4 (e1 e2 + e1 e3 + e2 e3)
            g3 = 4 * e1 * e2 * e3
        elif g2 is None or g3 is None:
            raise ValueError("give both invariants g2 and g3, or the three roots")
        else:
            g2, g3 = ctx.num(g2), ctx.num(g3)
            e1, e2, e3 = self._roots_from_invariants(g2, g3)
        self.g2, self.g3 = g2, g3
        self.e1, self.e2, self.e3 = e1, e2, e3

        # half-periods (DLMF §23.6(ii))
        sqrt_e13 = ctx.sqrt(e1 - e3)
        self.k2 = (e2 - e3) / (e1 - e3)
        kk = ctx.ellipk(self.k2)
        kp = ctx.ellipk(1 - self.k2)
        self.omega1 = kk / sqrt_e13
        self.omega3 = ctx.mpc(0, kp / sqrt_e13)
        self.tau = ctx.mpc(0, kp / kk)
        self.nome = ctx.exp(-ctx.pi * kp / kk)
        self.period = 2 * self.omega1

        # theta constants and the prefactors of the theta forms (module docstring)
        q = self.nome
        th2, th3, th4 = (ctx.jtheta(j, 0, q) for j in (2, 3, 4))
        self._v_scale = ctx.pi / (2 * self.omega1)         # v = π z / (2 ω1)
        self._c_p = (self._v_scale * th2 * th3) ** 2
        self._c_dp = 2 * self._v_scale ** 3 * (th2 * th3 * th4) ** 2

    # ----- construction helpers ----------------------------------------------------
    def _check_roots(self, roots):
        ctx = self.ctx
        if len(roots) != 3:
            raise ValueError(f"need three roots e1, e2, e3, got {len(roots)}")
        e1, e2, e3 = sorted(roots, reverse=True)
        scale = max(abs(e) for e in roots)
        if not e1 > e2 > e3:
            raise ValueError(f"the roots must be real and distinct, got "
                             f"{[ctx.to_str(e, 10) for e in roots]}")
        if abs(e1 + e2 + e3) > 16 * ctx.eps * scale:
            raise ValueError(f"the roots of 4x^3 - g2 x - g3 sum to zero; these sum to "
                             f"{ctx.to_str(e1 + e2 + e3, 5)}")
        return e1, e2, e3

    def _roots_from_invariants(self, g2, g3):
        """Roots of ``4x³ − g2 x − g3`` by the trigonometric (Viète) form of Cardano:
        ``e_j = √(g2/3) cos((φ − 2πj)/3)``, ``φ = acos(3√3 g3 / g2^(3/2))``, j = 0, 1, 2,
        evaluated with ``GUARD_DIGITS`` extra digits."""
        ctx = self.ctx
        disc = g2 ** 3 - 27 * g3 ** 2
        resolution = 16 * ctx.eps * (abs(g2) ** 3 + 27 * g3 ** 2)
        if not disc > resolution:
            kind = ("one real root and a complex-conjugate pair" if disc < -resolution
                    else "a repeated root (to working precision)")
            raise ValueError(
                f"the discriminant g2^3 - 27 g3^2 = {ctx.to_str(disc, 10)} is not positive "
                f"beyond rounding: "
                f"4x^3 - g2 x - g3 has {kind}, not three real distinct roots "
                f"(g2 = {ctx.to_str(g2, 10)}, g3 = {ctx.to_str(g3, 10)})")
        with ctx.workdps(ctx.dps + GUARD_DIGITS):
            r = ctx.sqrt(g2 / 3)
            phi = ctx.acos(3 * ctx.sqrt(3) * g3 / (g2 * ctx.sqrt(g2)))
            roots = [r * ctx.cos((phi - 2 * ctx.pi * j) / 3) for j in (0, 1, 2)]
        return tuple(+e for e in roots)                   # round to working precision

    # ----- evaluation ----------------------------------------------------------------
    def _reduce(self, z):
        """``z`` moved into the period cell ``|Re z| ≤ ω1, |Im z| ≤ |ω3|``."""
        ctx = self.ctx
        n1 = ctx.nint(ctx.re(z) / self.period)
        n3 = ctx.nint(ctx.im(z) / (2 * ctx.im(self.omega3)))
        return z - 2 * (n1 * self.omega1 + n3 * self.omega3)

    def _v(self, z):
        z = self._reduce(_complex_arg(self.ctx, z))
        if z == 0:
            raise ZeroDivisionError("℘ has a pole at the lattice points 2 m ω1 + 2 n ω3")
        return self._v_scale * z

    def p(self, z):
        """``℘(z)`` for real or complex ``z`` (theta form, module docstring)."""
        jtheta = self.ctx.jtheta
        v, q = self._v(z), self.nome
        return self.e3 + self._c_p * (jtheta(4, v, q) / jtheta(1, v, q)) ** 2

    def dp(self, z):
        """``℘'(z)`` for real or complex ``z``."""
        jtheta = self.ctx.jtheta
        v, q = self._v(z), self.nome
        num = jtheta(2, v, q) * jtheta(3, v, q) * jtheta(4, v, q)
        return -self._c_dp * num / jtheta(1, v, q) ** 3

    def p_shifted(self, t):
        """``℘(t + ω3)`` for real ``t``: real, in ``[e3, e2]``, period ``2ω1``;
        ``℘(ω3) = e3`` and ``℘(ω1 + ω3) = e2``.  Equal to
        ``e3 + (e2 − e3) sn²(t √(e1 − e3), k²)`` (module docstring)."""
        jtheta = self.ctx.jtheta
        v, q = self._v_scale * self.ctx.num(t), self.nome
        return self.e3 + self._c_p * (jtheta(1, v, q) / jtheta(4, v, q)) ** 2

    def p_dp_shifted(self, t):
        """``(℘(t + ω3), ℘'(t + ω3))`` for real ``t``, both real, from one set of four
        theta values."""
        jtheta = self.ctx.jtheta
        v, q = self._v_scale * self.ctx.num(t), self.nome
        th1, th2, th3, th4 = (jtheta(j, v, q) for j in (1, 2, 3, 4))
        ratio = th1 / th4
        return (self.e3 + self._c_p * ratio ** 2,
                self._c_dp * ratio * th2 * th3 / th4 ** 2)

    def __repr__(self):
        s = self.ctx.to_str
        return (f"Weierstrass(g2={s(self.g2, 12)}, g3={s(self.g3, 12)}, "
                f"omega1={s(self.omega1, 12)}, dps={self.ctx.dps})")
