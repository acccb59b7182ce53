"""Linear mechanical systems  M q'' + K q = 0  (axioms2024, eqs. 3 and 48).

Lagrangian  L = 1/2 q'^T M q' - 1/2 q^T K q  with constant symmetric positive-definite
M and K; momentum p = M q'; Hamiltonian  H(p, q) = 1/2 p^T M^-1 p + 1/2 q^T K q
(axioms2024, Sec. 6.3).  A :class:`LinearSystem` is a
:class:`mpvi.mechanics.LagrangianSystem` (M and K enter as its parameters), so every
scheme runs on it; the linear schemes (Newmark, Simpson's closed forms) use M and K
directly, and the Legendre map, energy and Hamiltonian field use the matrix formulas.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import sympy as sp

from ..mechanics import LagrangianSystem


class LinearSystem(LagrangianSystem):
    """``M q'' + K q = 0`` in a number context.

    Parameters
    ----------
    M, K : nested sequences of numbers the context reads exactly (ints, strings,
        Fractions, sympy numbers, the context's own numbers); both are validated: square,
        same size, symmetric, positive definite (``ValueError`` naming the matrix).
    ctx : number context
    name : str
    """

    is_linear = True

    def __init__(self, M: Sequence, K: Sequence, ctx: Any, name: str = "linear system"):
        self.ctx = ctx
        self.name = name
        self.M = ctx.asarray(M)
        self.K = ctx.asarray(K)
        for label, a in (("mass matrix M", self.M), ("stiffness matrix K", self.K)):
            if not ctx.all_finite(a):
                raise ValueError(f"{name}: {label} has a non-finite entry")
        for label, a in (("mass matrix M", self.M), ("stiffness matrix K", self.K)):
            ctx.check_symmetric(a, label)
        if self.M.shape != self.K.shape:
            raise ValueError(f"M has shape {self.M.shape} but K has shape {self.K.shape}")
        for label, a in (("mass matrix M", self.M), ("stiffness matrix K", self.K)):
            try:
                ctx.cholesky(a, label)
            except ArithmeticError as exc:
                raise ValueError(str(exc)) from None
        n = self.M.shape[0]
        self.Minv = ctx.inv(self.M)
        self._modes = None
        q = sp.symbols(f"q0:{n}")
        params = {}

        def entries(mat, letter):
            sym = sp.zeros(n, n)
            for i in range(n):
                for j in range(i, n):
                    s = sp.Symbol(f"{letter}{i}_{j}")
                    params[s] = mat[i, j]
                    sym[i, j] = sym[j, i] = s
            return sym
        Ms, Ks = entries(self.M, "m"), entries(self.K, "k")
        qv = sp.Matrix(q)
        super().__init__(name, q, Ms, (qv.T * Ks * qv)[0, 0] / 2, params, ctx)

    # ----- modal data ---------------------------------------------------------------
    def modes(self):
        """``(omega, V)``: eigenfrequencies ascending and M-orthonormal mode shapes,
        ``K V = M V diag(omega^2)``, ``V^T M V = I``."""
        if self._modes is None:
            w2, v = self.ctx.eigh_generalized(self.K, self.M)
            self._modes = (self.ctx.sqrt(w2), v)
        return self._modes

    def omega_max(self):
        """Largest eigenfrequency, the omega_max of axioms2024 eq. (40)."""
        return self.modes()[0][-1]

    # ----- mechanics (matrix formulas) --------------------------------------------------
    def mass(self, q=None, v=None, t=None):
        return self.M

    def velocity(self, q, p, t=None):
        """v = M^-1 p."""
        return self.Minv @ p

    def hamiltonian_rhs(self, q, p, t=None):
        """First-order system (q', p') = (M^-1 p, -K q); autonomous, t is ignored."""
        return self.Minv @ p, -(self.K @ q)

    def acceleration(self, t, q, v):
        """a = -M^-1 K q."""
        return -(self.Minv @ (self.K @ q))

    def hamiltonian(self, q, p, t=None):
        """H(p, q) = 1/2 p^T M^-1 p + 1/2 q^T K q  (axioms2024, Sec. 6.3)."""
        return (p @ (self.Minv @ p) + q @ (self.K @ q)) / 2

    energy = hamiltonian

    def check_state(self, t, q, v=None):
        """M is constant and was checked positive definite at construction."""

    def __reduce__(self):
        d = self.ctx.dump
        return (_linear_system, ([[d(x) for x in r] for r in self.M], [[d(x) for x in r] for r in self.K],
                                 self.ctx, self.name))

    def exact(self, q0, p0):
        """The exact solution through (q0, p0) at context precision."""
        return ModalSolution(self, q0, p0)


class ModalSolution:
    """Exact solution of ``M q'' + K q = 0`` by modal decomposition.

    With ``K V = M V diag(w^2)`` and ``V^T M V = I``, modal coordinates
    ``a = V^T M q0`` and ``b = diag(1/w) V^T p0`` give
    ``q(t) = V (a cos wt + b sin wt)`` and ``p(t) = M q'(t) = M V diag(w)(-a sin wt + b cos wt)``.
    This is the general form of axioms2024 eq. (51) for any (M, K, q0, p0).

    The instance is the exact solution in mpvi's protocol: ``sol(t)`` -> (q(t), p(t)) for a
    problem given with p0 (:class:`mpvi.Problem`).
    """

    def __init__(self, system, q0, p0):
        ctx = system.ctx
        self.system = system
        self.ctx = ctx
        self.omega, self.V = system.modes()
        q0 = self.q0 = ctx.asarray(q0)
        p0 = self.p0 = ctx.asarray(p0)
        self.a = self.V.T @ (system.M @ q0)
        self.b = (self.V.T @ p0) / self.omega
        self.MV = system.M @ self.V

    def __call__(self, t):
        """(q(t), p(t)) at one time ``t``."""
        return self.q(t), self.p(t)

    def __reduce__(self):
        d = self.ctx.dump
        return _modal_solution, (self.system, [d(x) for x in self.q0], [d(x) for x in self.p0])

    def _cs(self, t):
        if isinstance(t, (list, tuple)):
            t = self.ctx.asarray(t)
        wt = self.omega * self.ctx.num(t) if not isinstance(t, np.ndarray) else np.outer(t, self.omega)
        return self.ctx.cos(wt), self.ctx.sin(wt)

    def q(self, t):
        """q(t); ``t`` a number or a 1-D array (then one row per time)."""
        c, s = self._cs(t)
        return (self.a * c + self.b * s) @ self.V.T

    def p(self, t):
        """p(t) = M q'(t); ``t`` a number or a 1-D array."""
        c, s = self._cs(t)
        return ((self.b * c - self.a * s) * self.omega) @ self.MV.T

    def qddot(self, t):
        """q''(t), for checking the ODE."""
        c, s = self._cs(t)
        return (-(self.a * c + self.b * s) * self.omega ** 2) @ self.V.T


def _linear_system(M, K, ctx, name):
    return LinearSystem(M, K, ctx, name)


def _modal_solution(system, q0, p0):
    return ModalSolution(system, q0, p0)


from ..precision import boundary_module  # noqa: E402  (last: wraps the names above)

boundary_module(globals())
