"""The Lagrange (heavy symmetric) top of top2025 Sec. 4, complete and reduced.

Complete system (eqs. (16)-(18s)), ZXZ Euler angles q = (phi, theta, psi):

    T = 1/2 I3 (psi' + phi' cos theta)^2 + 1/2 I (phi'^2 sin^2 theta + theta'^2),
    M(q) = [[I sin^2 th + I3 cos^2 th, 0, I3 cos th], [0, I, 0], [I3 cos th, 0, I3]],
    V = m_top g l cos theta,

with the conserved momenta p_phi = p[0], p_psi = p[2] (phi and psi are cyclic).

Reduced system (eqs. (18ad)-(18af), (18aq)), y = (phi, theta, xi = theta'):

    phi' = (p_phi - p_psi cos th) / (I sin^2 th),   theta' = xi,
    xi'  = (A + phi'^2 cos th - (p_psi / I) phi') sin th,    A = m_top g l / I.

Parameter sets: :func:`table3_top` (looping motion, Sec. 4.2) and :func:`table6_top`
(cusps, Sec. 4.3).  The exact nutation (eq. (18aa)) is in
:mod:`mpvi.systems.lagrange_top_exact`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import numpy as np
import sympy as sp

from mpvi.model.mechanics import LagrangianSystem
from mpvi.model.first_order import FirstOrderSystem
from mpvi.model.problem import Problem
from mpvi.ground.precision import entry, entry_class

if TYPE_CHECKING:
    from mpvi.ground.types import ForceFunction, Number, NumberLike, Real, Vector, VectorLike
    from mpvi.numbers.context import Context
    from mpvi.systems.lagrange_top_exact import LagrangeTopNutation

PHI, THETA, PSI = sp.symbols("phi theta psi")
_I, _I3, _M, _G, _L = sp.symbols("I I3 m_top g ell", positive=True)


@entry
def top_system(ctx: Context, m_top: NumberLike, I: NumberLike, I3: NumberLike, ell: NumberLike,
               g: NumberLike, force: ForceFunction | None = None) -> LagrangianSystem:
    """The complete Lagrange top as a :class:`LagrangianSystem` (parameters via ctx.num)."""
    c, s = sp.cos(THETA), sp.sin(THETA)
    M = sp.Matrix([[_I * s ** 2 + _I3 * c ** 2, 0, _I3 * c], [0, _I, 0], [_I3 * c, 0, _I3]])
    V = _M * _G * _L * c
    params = {_M: m_top, _I: I, _I3: I3, _G: g, _L: ell}
    return LagrangianSystem("Lagrange top", [PHI, THETA, PSI], M, V, params, ctx, force=force)


@entry_class
class LagrangeTop(Problem):
    """A top: a :class:`mpvi.Problem` given with the initial angular velocities q'0
    (``qdot0``, = ``v0``; ``p0`` follows), with the top's constants ``params`` (context
    numbers m_top, I, I3, ell, g)."""

    def __init__(self, system: LagrangianSystem, q0: VectorLike, qdot0: VectorLike,
                 params: Mapping[str, Real]) -> None:
        self.params = params
        super().__init__(system, q0, v0=qdot0, name=system.name)

    @property
    def qdot0(self) -> Vector | None:
        return self.v0

    def conserved_momenta(self, p: Vector) -> tuple[Number, Number]:
        """(p_phi, p_psi) of a momentum vector (eq. (18s))."""
        return p[0], p[2]

    def reduced(self) -> FirstOrderSystem:
        """The reduced first-order system (18ad)-(18af) with this top's constants."""
        return reduced_top(self.ctx, self.params, self.p0[0], self.p0[2])

    def reduced_state0(self) -> Vector:
        """(phi0, theta0, xi0 = theta'0)."""
        return np.array([self.q0[0], self.q0[1], self.qdot0[1]], dtype=self.ctx.dtype)

    def nutation(self) -> LagrangeTopNutation:
        """The exact nutation (Weierstrass p solution of eq. (18aa))."""
        from mpvi.systems.lagrange_top_exact import LagrangeTopNutation
        P = self.params
        return LagrangeTopNutation(self.ctx, m_top=P["m_top"], I=P["I"], I3=P["I3"],
                                   ell=P["ell"], g=P["g"], theta0=self.q0[1],
                                   phi_dot0=self.qdot0[0], theta_dot0=self.qdot0[1],
                                   psi_dot0=self.qdot0[2])


@entry
def make_top(ctx: Context, m_top: NumberLike, I: NumberLike, I3: NumberLike, ell: NumberLike,
             g: NumberLike, q0: VectorLike, qdot0: VectorLike,
             force: ForceFunction | None = None) -> LagrangeTop:
    P = {"m_top": ctx.num(m_top), "I": ctx.num(I), "I3": ctx.num(I3), "ell": ctx.num(ell),
         "g": ctx.num(g)}
    system = top_system(ctx, P["m_top"], P["I"], P["I3"], P["ell"], P["g"], force=force)
    return LagrangeTop(system, ctx.asarray(q0), ctx.asarray(qdot0), P)


@entry
def table3_top(ctx: Context, g: NumberLike = "9.81", I: NumberLike = "0.002329969592394382"
               ) -> LagrangeTop:
    """Table 3 (looping motion): m_top = 0.1 kg, I = 0.002329969592394382 kg m^2,
    I3 = 0.000125 kg m^2, l = 0.15 m, q0 = (0, pi/3, 0), q'0 = (9.2, 0, 252) rad/s.
    g is not printed in Sec. 4; 9.81 (Sec. 3's value) reproduces the printed nutation
    period 1.84671 s to 4 digits (1.847239 s); ``I = "0.00233"`` gives 1.846708 s, which
    rounds to the printed value (reproductions/ERRATA.md [E12])."""
    return make_top(ctx, "0.1", I, "0.000125", "0.15", g,
                    (0, ctx.pi / 3, 0), ("9.2", 0, 252))


@entry
def table6_top(ctx: Context, g: NumberLike = "9.81") -> LagrangeTop:
    """Table 6 (cusps): m_top = 1, I = 1, I3 = 2, l = 4 pi^2 / g (so A = m g l / I =
    4 pi^2 for any g), q0 = (0, pi/6, 0), q'0 = (0, 0, 2 pi)."""
    g_ = ctx.num(g)
    return make_top(ctx, 1, 1, 2, 4 * ctx.pi ** 2 / g_, g_, (0, ctx.pi / 6, 0),
                    (0, 0, 2 * ctx.pi))


@entry
def reduced_top(ctx: Context, params: Mapping[str, Real], p_phi: Real, p_psi: Real
                ) -> FirstOrderSystem:
    """First-order reduced top (eqs. (18ad)-(18af); (18aq) for Table 6): y = (phi, theta,
    xi = theta'),

        phi' = (p_phi - p_psi cos theta) / (I sin^2 theta),   theta' = xi,
        xi'  = (A + phi'^2 cos theta - k phi') sin theta,      A = m g l / I,  k = p_psi / I.

    Given as expressions (:meth:`mpvi.FirstOrderSystem.from_expressions`), its constants
    the run's numbers: the field is generated code (compiled to MPFR in the gmp context),
    and the same system runs on Arb balls (:meth:`mpvi.FirstOrderSystem.with_context`,
    :func:`mpvi.certify`), the constants taken there exactly."""
    phi, theta, xi = sp.symbols("phi theta xi")
    inertia, A, k, pphi, ppsi = sp.symbols("inertia A k p_phi p_psi")
    phidot = (pphi - ppsi * sp.cos(theta)) / (inertia * sp.sin(theta) ** 2)
    field = [phidot, xi, (A + phidot ** 2 * sp.cos(theta) - k * phidot) * sp.sin(theta)]
    I = params["I"]
    values = {inertia: I, A: params["m_top"] * params["g"] * params["ell"] / I, k: p_psi / I,
              pphi: p_phi, ppsi: p_psi}
    return FirstOrderSystem.from_expressions("reduced Lagrange top", [phi, theta, xi], field,
                                             ctx, params=values, labels=("phi", "theta", "xi"))
