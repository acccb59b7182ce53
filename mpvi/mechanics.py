"""Nonlinear Lagrangian systems  L(q, v) = 1/2 v^T M(q) v - V(q)  with generated derivatives.

top2025 eq. (1): the schemes integrate  M(q) q'' + (dM/dt) q' - 1/2 q'^T (grad M) q' + grad V = F
(eq. (2), with a generalized force F(t, q, q') added for the Lagrange-d'Alembert
principle).  A :class:`LagrangianSystem` is described *symbolically* (sympy) by M(q),
V(q), optional F(t, q, v) and named parameters; every derivative the schemes need is
generated from those expressions by sympy, compiled by ``lambdify`` into plain Python that
calls the context's own functions (``ctx._m.sin`` at the context precision, or ``math`` in
float64), so nothing is typed by hand and nothing runs at a precision other than the
context's.  Parameter values enter as context numbers at call time, never as floats.

What the schemes use (per quadrature node, see :mod:`mpvi.schemes.variational`) are the
derivatives of the Lagrangian at a point (x, v):

    P = dL/dv = M(x) v,                 G = dL/dq = 1/2 v^T dM(x) v - grad V(x),
    L_vv = M(x),   B[g, d] = d2L/dq^g dv^d = d_g M_{d a}(x) v^a,
    A = d2L/dq dq = 1/2 v^T d2M(x) v - hess V(x),

and of the force: F, dF/dq, dF/dv.  The raw pieces dM (``dM[g, a, b] = d_g M_ab``),
d2M (``d2M[g, d, a, b]``), grad V and hess V are generated too, for users and for the
finite-difference tests.

Hamiltonian view (top2025 eq. (15)): p = M(q) v,  H = 1/2 p^T M^-1 p + V,
q' = M^-1 p,  p' = G(q, M^-1 p) + F   (since dH/dq = -dL/dq at v = M^-1 p).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
from sympy.printing.pycode import MpmathPrinter

from .context import PrecisionError


class _ContextPrinter(MpmathPrinter):
    """Prints ``sin(x)``, ``mpf(1)/mpf(3)`` with bare names, bound later to a context."""

    def _module_format(self, fqn, register=True):
        return fqn.split(".")[-1]


_FUNCTIONS = ("sin", "cos", "tan", "exp", "log", "sqrt", "atan", "atan2", "sinh", "cosh",
              "tanh", "asin", "acos")


def context_namespace(ctx):
    """Names the generated code may call, bound to ``ctx`` (no global precision)."""
    if ctx.is_mp:
        m = ctx._m
        ns = {name: getattr(m, name) for name in _FUNCTIONS}
        ns.update(mpf=m.mpf, pi=+m.pi, E=+m.e, fabs=m.fabs, sign=m.sign)
    else:
        ns = {name: getattr(math, name) for name in _FUNCTIONS}
        ns.update(mpf=float, pi=math.pi, E=math.e, fabs=math.fabs,
                  sign=lambda x: math.copysign(1.0, x) if x else 0.0)
    return ns


def compile_exprs(args, exprs, ctx):
    """``lambdify`` a flat list of sympy expressions into a function of ``args`` (nested
    lists of symbols are unpacked) evaluated with ``ctx``'s functions; returns a list."""
    return sp.lambdify(args, list(exprs), modules=[context_namespace(ctx)],
                       printer=_ContextPrinter, cse=True)


def _refuse_floats(name, ctx, *exprs):
    """A float literal (sympy Float) in an expression carries 53 bits: refuse it in mp."""
    if not ctx.is_mp:
        return
    floats = sorted({str(f) for e in exprs for f in sp.sympify(e).atoms(sp.Float)})
    if floats:
        raise PrecisionError(
            f"{name}: float literal(s) {', '.join(floats)} in M, V or F would cap a "
            f"{ctx.dps}-digit computation at 53 bits; write sp.Rational(1, 10) or make it a "
            "parameter with a string value ('0.1')")


class LagrangianSystem:
    """A mechanical system L = 1/2 v^T M(q) v - V(q) with generalized force F(t, q, v).

    Parameters
    ----------
    name : str
    coords : list of sympy symbols q^1..q^n (their names label the output).
    mass : sympy Matrix M(q) (n x n, symmetric positive definite where used).
    potential : sympy expression V(q).
    params : dict mapping sympy symbols appearing in M, V, F to values (strings, ints,
        Fractions or context numbers -- converted by ``ctx.num``, floats refused in mp).
    ctx : number context.
    force : optional callable ``force(t, q, v) -> sympy Matrix`` (n x 1) receiving the
        symbols for time, coordinates and velocities; the generalized non-conservative
        force of the Lagrange-d'Alembert principle (e.g. ``-c * v`` for damping).

    Numeric methods take context arrays and return context arrays.
    """

    def __init__(self, name, coords, mass, potential, params, ctx, force=None):
        self.name = name
        self.ctx = ctx
        self.coords = list(coords)
        n = self.dof = len(self.coords)
        self.coord_names = [str(c) for c in self.coords]
        M = sp.Matrix(mass)
        if M.shape != (n, n):
            raise ValueError(f"{name}: mass matrix is {M.shape[0]}x{M.shape[1]}, expected {n}x{n}")
        if sp.simplify(M - M.T) != sp.zeros(n, n):
            raise ValueError(f"{name}: mass matrix M(q) is not symmetric")
        V = sp.sympify(potential)
        _refuse_floats(name, ctx, M, V)
        self.mass_expr, self.potential_expr = M, V
        self.param_symbols = list(params)
        self.param_values = tuple(ctx.num(params[s]) for s in self.param_symbols)
        free = (M.free_symbols | V.free_symbols) - set(self.coords) - set(self.param_symbols)
        if free:
            raise ValueError(f"{name}: symbols {sorted(map(str, free))} in M or V are neither "
                             "coordinates nor parameters")
        x = self.coords
        v = self.velocity_symbols = list(sp.symbols(f"v0:{n}"))
        t = self.time_symbol = sp.Symbol("t")
        par = self.param_symbols
        vv = sp.Matrix(v)
        L = (vv.T * M * vv)[0, 0] / 2 - V
        self.lagrangian_expr = L
        P = [sp.diff(L, vi) for vi in v]
        G = [sp.diff(L, xi) for xi in x]
        Lvv = [[sp.diff(P[g], v[d]) for d in range(n)] for g in range(n)]
        B = [[sp.diff(G[g], v[d]) for d in range(n)] for g in range(n)]
        A = [[sp.diff(G[g], x[d]) for d in range(n)] for g in range(n)]
        flat2 = lambda m: [e for row in m for e in row]
        self._node_grad = compile_exprs([x, v, par], P + G, ctx)
        self._node_full = compile_exprs([x, v, par], P + G + flat2(Lvv) + flat2(B) + flat2(A), ctx)
        dM = [sp.diff(M, xg) for xg in x]
        self._mass = compile_exprs([x, par], list(M), ctx)
        self._potential = compile_exprs([x, par], [V], ctx)
        self._dmass = compile_exprs([x, par], [e for d in dM for e in d], ctx)
        self._d2mass = compile_exprs([x, par], [e for xg in x for d in dM for e in sp.diff(d, xg)], ctx)
        gradV = [sp.diff(V, xi) for xi in x]
        self._grad_potential = compile_exprs([x, par], gradV, ctx)
        self._hess_potential = compile_exprs([x, par], [sp.diff(gv, xd) for gv in gradV for xd in x], ctx)
        self.has_force = force is not None
        if force is not None:
            F = sp.Matrix(force(t, sp.Matrix(x), vv))
            if F.shape != (n, 1):
                raise ValueError(f"{name}: force must be an {n}x1 column, got {F.shape}")
            extra = F.free_symbols - set(x) - set(v) - {t} - set(par)
            if extra:
                raise ValueError(f"{name}: symbols {sorted(map(str, extra))} in F are not "
                                 "t, coordinates, velocities or parameters")
            self.force_expr = F
            _refuse_floats(name, ctx, F)
            Fq = [sp.diff(F[g], x[d]) for g in range(n) for d in range(n)]
            Fv = [sp.diff(F[g], v[d]) for g in range(n) for d in range(n)]
            self._force = compile_exprs([t, x, v, par], list(F), ctx)
            self._force_full = compile_exprs([t, x, v, par], list(F) + Fq + Fv, ctx)

    # ----- raw pieces ----------------------------------------------------------------
    def _arr(self, values, shape):
        return np.array(values, dtype=self.ctx.dtype).reshape(shape)

    def mass(self, q):
        """M(q)."""
        n = self.dof
        return self._arr(self._mass(q, self.param_values), (n, n))

    def potential(self, q):
        """V(q)."""
        return self._potential(q, self.param_values)[0]

    def dmass(self, q):
        """``dM[g, a, b] = d M_ab / d q^g``."""
        n = self.dof
        return self._arr(self._dmass(q, self.param_values), (n, n, n))

    def d2mass(self, q):
        """``d2M[g, d, a, b] = d^2 M_ab / d q^g d q^d``."""
        n = self.dof
        return self._arr(self._d2mass(q, self.param_values), (n, n, n, n))

    def grad_potential(self, q):
        return self._arr(self._grad_potential(q, self.param_values), (self.dof,))

    def hess_potential(self, q):
        n = self.dof
        return self._arr(self._hess_potential(q, self.param_values), (n, n))

    def force(self, t, q, v):
        """F(t, q, v), zero for a conservative system."""
        if not self.has_force:
            return self.ctx.zeros(self.dof)
        return self._arr(self._force(t, q, v, self.param_values), (self.dof,))

    def force_derivatives(self, t, q, v):
        """(F, dF/dq, dF/dv) at (t, q, v); rows index F, columns q or v."""
        n = self.dof
        vals = self._force_full(t, q, v, self.param_values)
        return (self._arr(vals[:n], (n,)), self._arr(vals[n:n + n * n], (n, n)),
                self._arr(vals[n + n * n:], (n, n)))

    # ----- Lagrangian derivatives at a point (what the schemes use) -------------------
    def lagrangian(self, q, v):
        return (v @ self.mass(q) @ v) / 2 - self.potential(q)

    def node_gradient(self, x, v):
        """(P, G) = (dL/dv, dL/dq) at (x, v)."""
        n = self.dof
        vals = self._node_grad(x, v, self.param_values)
        return self._arr(vals[:n], (n,)), self._arr(vals[n:], (n,))

    def node_derivatives(self, x, v):
        """(P, G, L_vv, B, A): first and second derivatives of L at (x, v); see module doc."""
        n = self.dof
        vals = self._node_full(x, v, self.param_values)
        k = 2 * n
        return (self._arr(vals[:n], (n,)), self._arr(vals[n:k], (n,)),
                self._arr(vals[k:k + n * n], (n, n)), self._arr(vals[k + n * n:k + 2 * n * n], (n, n)),
                self._arr(vals[k + 2 * n * n:], (n, n)))

    # ----- Hamiltonian view ------------------------------------------------------------
    def velocity(self, q, p):
        """v = M(q)^-1 p (raises SingularMatrixError naming the cause if M(q) is singular)."""
        return self.ctx.solve(self.mass(q), p)

    def momentum(self, q, v):
        """p = M(q) v."""
        return self.mass(q) @ v

    def hamiltonian(self, q, p):
        """H = 1/2 p^T M(q)^-1 p + V(q)  (top2025 eq. (15))."""
        return (p @ self.velocity(q, p)) / 2 + self.potential(q)

    energy = hamiltonian

    def hamiltonian_rhs(self, q, p, t=None):
        """(q', p') = (M^-1 p, dL/dq(q, M^-1 p) + F(t, q, M^-1 p))."""
        v = self.velocity(q, p)
        _, G = self.node_gradient(q, v)
        if self.has_force:
            G = G + self.force(t if t is not None else self.ctx.zero, q, v)
        return v, G


def from_linear(system):
    """The :class:`LagrangianSystem` of a linear system M q'' + K q = 0 (constant M, K
    enter as parameters), so the nonlinear schemes run on it too.  Cached on ``system``."""
    cached = getattr(system, "_lagrangian", None)
    if cached is not None:
        return cached
    n, ctx = system.n, system.ctx
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
    M, K = entries(system.M, "m"), entries(system.K, "k")
    qv = sp.Matrix(q)
    lag = LagrangianSystem(getattr(system, "name", "linear"), q, M, (qv.T * K * qv)[0, 0] / 2,
                           params, ctx)
    system._lagrangian = lag
    return lag
