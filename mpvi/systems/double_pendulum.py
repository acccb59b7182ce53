"""The linearized double pendulum of axioms2024, Sec. 5 (eqs. 44-51, Table 1).

Two point masses m1, m2 on massless rods of length l1 = l2 = l; small oscillations
about the downward equilibrium give  M q'' + K q = 0  with (eq. 48)

    M = [[(m1 + m2) l^2, m2 l^2], [m2 l^2, m2 l^2]],   K = [[(m1 + m2) g l, 0], [0, m2 g l]].

Table 1 fixes only mu_r = m2/m1 = 1 and omega0 = sqrt(g/l) = 2 pi s^-1.  The conventions
that the paper leaves implicit were determined from its Table 2 (see
reproductions/ERRATA.md, "axioms2024: conventions behind Table 2"):

* m1 = 1 kg and g = 9.81 m s^-2, hence l = g / omega0^2 = 0.2485 m.  q (and so the
  q-errors) do not depend on these, but p = M q' scales with m1 g^2; the p-errors of
  Table 2 pin m1 g^2 to [96.234, 96.268], which g = 9.81, m1 = 1 gives (96.236).
* the time unit  t_bar = 2 pi / omega0 = 1 s  (one period of omega0), not 1/omega0 as
  printed: with t_bar = 1/omega0 every error of Table 2 would be 100 to 10^4 times smaller.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mpvi.model.problem import Problem
from mpvi.systems.linear import LinearSystem
from mpvi.ground.precision import entry, entry_class

if TYPE_CHECKING:
    from mpvi.ground.types import ForceFunction, NumberLike, Real, Vector, VectorLike
    from mpvi.numbers.context import Context
    from mpvi.model.mechanics import LagrangianSystem


@entry_class
class LinearDoublePendulum(Problem):
    """The axioms2024 test problem: a :class:`mpvi.Problem` (system, Table 1 initial data,
    the exact modal solution as ``exact``) with the time unit ``tbar``, ``omega0``,
    ``mu_r`` and the paper's closed-form solution."""

    def __init__(self, system: LinearSystem, q0: VectorLike, p0: VectorLike, tbar: Real,
                 omega0: Real, mu_r: Real) -> None:
        self.tbar, self.omega0, self.mu_r = tbar, omega0, mu_r
        super().__init__(system, q0, p0=p0, exact=system.exact(q0, p0), name=system.name)

    def frequencies(self) -> tuple[Real, Real]:
        """(omega1, omega2) of eq. (49): omega0 sqrt(1 + mu_r +- sqrt(mu_r (1 + mu_r)))."""
        ctx = self.system.ctx
        r = ctx.sqrt(self.mu_r * (1 + self.mu_r))
        return (self.omega0 * ctx.sqrt(1 + self.mu_r + r), self.omega0 * ctx.sqrt(1 + self.mu_r - r))

    def closed_form_q(self, t: NumberLike) -> Vector:
        """q(t) from eqs. (49)-(51) for p0 = 0 (null initial phases), any q0.

        Mode shapes x1 = (1, -s), x2 = (1, s) with s = sqrt((1 + mu_r)/mu_r) (eq. 50);
        q(t) = c1 x1 cos(omega1 t) + c2 x2 cos(omega2 t) with c1 + c2 = q1(0),
        s (c2 - c1) = q2(0).  For Table 1 this is the paper's
        q_ex = (pi/12) ((-cos w1 t + cos w2 t)/sqrt 2, cos w1 t + cos w2 t).
        """
        ctx = self.system.ctx
        if any(x != 0 for x in self.p0):
            raise ValueError("closed_form_q covers the null-initial-phase case p0 = 0 only")
        s = ctx.sqrt((1 + self.mu_r) / self.mu_r)
        c2 = (self.q0[0] + self.q0[1] / s) / 2
        c1 = self.q0[0] - c2
        w1, w2 = self.frequencies()
        t = ctx.num(t)
        a, b = c1 * ctx.cos(w1 * t), c2 * ctx.cos(w2 * t)
        return np.array([a + b, s * (b - a)], dtype=ctx.dtype)


@entry
def linearized_double_pendulum(ctx: Context, m1: NumberLike = 1, mu_r: NumberLike = 1,
                               omega0: NumberLike | None = None, g: NumberLike = "9.81",
                               q0: VectorLike | None = None, p0: VectorLike = (0, 0)
                               ) -> LinearDoublePendulum:
    """The linearized double pendulum with axioms2024 Table 1 values by default.

    ``omega0`` defaults to 2 pi s^-1; ``l = g / omega0^2``; ``q0`` defaults to
    (0, pi/6) rad and ``p0`` to (0, 0).  All numbers enter through ``ctx``.
    """
    m1 = ctx.num(m1)
    mu_r = ctx.num(mu_r)
    g = ctx.num(g)
    omega0 = 2 * ctx.pi if omega0 is None else ctx.num(omega0)
    length = g / omega0 ** 2
    m2 = mu_r * m1
    M = [[(m1 + m2) * length ** 2, m2 * length ** 2], [m2 * length ** 2, m2 * length ** 2]]
    K = [[(m1 + m2) * g * length, 0], [0, m2 * g * length]]
    system = LinearSystem(M, K, ctx, name="linearized double pendulum")
    q0 = np.array([ctx.zero, ctx.pi / 6], dtype=ctx.dtype) if q0 is None else ctx.asarray(q0)
    return LinearDoublePendulum(system, q0, ctx.asarray(p0), 2 * ctx.pi / omega0, omega0, mu_r)



@entry_class
class NonlinearDoublePendulum(Problem):
    """top2025 Sec. 3: a :class:`mpvi.Problem` (system, Table 1 initial data) with the
    constants used (``length``, ``g``, ``omega0``)."""

    def __init__(self, system: LagrangianSystem, q0: VectorLike, p0: VectorLike, length: Real,
                 g: Real, omega0: Real) -> None:
        self.length, self.g, self.omega0 = length, g, omega0
        super().__init__(system, q0, p0=p0, name=system.name)


@entry
def nonlinear_double_pendulum(ctx: Context, m1: NumberLike = 1, m2: NumberLike = 1,
                              g: NumberLike = "9.81", omega0: NumberLike | None = None,
                              length: NumberLike | None = None, q0: VectorLike | None = None,
                              p0: VectorLike = (0, 0), force: ForceFunction | None = None
                              ) -> NonlinearDoublePendulum:
    """The nonlinear double pendulum of top2025 Sec. 3 (Table 1 values by default).

    q = (q1, q2) are the absolute rod angles from the downward vertical:

        M(q) = [[(m1 + m2) l1^2, m2 l1 l2 cos(q1 - q2)], [m2 l1 l2 cos(q1 - q2), m2 l2^2]],
        V(q) = -(m1 + m2) g l1 cos q1 - m2 g l2 cos q2.

    Table 1 prints l1 = l2 = l = g/omega0, which has the unit m/s, not m.  We take
    l = g / omega0^2 (omega0 = sqrt(g/l) = 2 pi s^-1 is then the pendulum frequency, as in
    axioms2024 whose linearization this is; reproductions/ERRATA.md [E13]); pass
    ``length`` to override.  q(0) = (pi/4, pi/3), p(0) = 0.  ``force(t, q, v)`` is an
    optional sympy generalized force (see :class:`mpvi.model.mechanics.LagrangianSystem`).
    """
    import sympy as sp
    from mpvi.model.mechanics import LagrangianSystem

    g_ = ctx.num(g)
    w0 = 2 * ctx.pi if omega0 is None else ctx.num(omega0)
    ell = g_ / w0 ** 2 if length is None else ctx.num(length)
    q1, q2 = sp.symbols("q1 q2")
    M1, M2, G, L1, L2 = sp.symbols("m1 m2 g l1 l2", positive=True)
    c = M2 * L1 * L2 * sp.cos(q1 - q2)
    M = sp.Matrix([[(M1 + M2) * L1 ** 2, c], [c, M2 * L2 ** 2]])
    V = -M1 * G * L1 * sp.cos(q1) - M2 * G * (L1 * sp.cos(q1) + L2 * sp.cos(q2))
    params = {M1: ctx.num(m1), M2: ctx.num(m2), G: g_, L1: ell, L2: ell}
    system = LagrangianSystem("double pendulum", [q1, q2], M, V, params, ctx, force=force)
    q0 = np.array([ctx.pi / 4, ctx.pi / 3], dtype=ctx.dtype) if q0 is None else ctx.asarray(q0)
    return NonlinearDoublePendulum(system, q0, ctx.asarray(p0), ell, g_, w0)


__all__ = ["LinearDoublePendulum", "linearized_double_pendulum", "NonlinearDoublePendulum",
           "nonlinear_double_pendulum"]
