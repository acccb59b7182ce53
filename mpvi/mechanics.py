"""Mechanical systems described symbolically, with every derivative generated.

One protocol for every system mpvi integrates (linear or nonlinear, forced or not): a
:class:`LagrangianSystem` is given either

* by a mass matrix M(q) and a potential V(q):  L = 1/2 v^T M(q) v - V(q)
  (top2025 eq. (1); the form of every system of the four papers), or
* by a general Lagrangian L(t, q, v) (:meth:`LagrangianSystem.from_lagrangian`; Mutze's
  setting),

plus an optional generalized non-conservative force F(t, q, v) (the Lagrange-d'Alembert
principle), named parameters and a number context.  The equations of motion are

    d/dt dL/dv - dL/dq = F   <=>   L_vv a + L_vq v + L_vt - L_q - F = 0   (a = q'').

sympy generates every derivative from those expressions and ``lambdify`` compiles them
(with common subexpressions eliminated) into plain Python calling the context's own
functions (:meth:`mpvi.context.Context.namespace`), so nothing is typed by hand and nothing
runs at a precision other than the context's.  Parameter values enter as context numbers
at call time, never as floats.  Compilation is lazy: a function is generated the first
time a scheme asks for it.

What a system gives (numeric methods take and return context arrays; ``t`` defaults to 0):

* Legendre map: ``momentum(q, v, t)`` p = dL/dv, ``velocity(q, p, t)`` its inverse (a
  linear solve when L is quadratic in v, Newton otherwise); ``acceleration(t, q, v)``
  (solves L_vv a = L_q + F - L_vq v - L_vt); ``hamiltonian(q, p)`` (= ``energy``) and
  ``hamiltonian_rhs(q, p, t)``;
* per quadrature node, the derivatives of L the variational schemes use
  (``node_gradient``, ``node_derivatives``: P = dL/dv, G = dL/dq, L_vv, B = d2L/dq dv,
  A = d2L/dq dq) and the force with its derivatives (``force``, ``force_derivatives``);
* the residual of the equations of motion and its derivatives for Galerkin schemes
  (``residual_derivatives(t, x, v, a)``: R, dR/dx, dR/dv, dR/da);
* raw pieces of the M, V form for users and tests: ``mass``, ``dmass``, ``d2mass``,
  ``potential``, ``grad_potential``, ``hess_potential``;
* validation: ``check_state`` (dimension, finiteness, a positive-definite mass matrix at
  the initial point), with messages naming the quantity.

Hamiltonian view (top2025 eq. (15)): p = M(q) v,  H = 1/2 p^T M^-1 p + V,
q' = M^-1 p,  p' = G(q, M^-1 p) + F   (since dH/dq = -dL/dq at v = M^-1 p).
"""
from __future__ import annotations

from functools import cached_property

import numpy as np
import sympy as sp
from sympy.printing.pycode import MpmathPrinter

from .context import NotPositiveDefiniteError, PrecisionError, SingularMatrixError

TIME = sp.Symbol("t")
"""The time symbol of generated expressions (use it in L(t, q, v) and F(t, q, v))."""


class _ContextPrinter(MpmathPrinter):
    """Prints ``sin(x)``, ``mpf(1)/mpf(3)`` with bare names, bound later to a context."""

    def _module_format(self, fqn, register=True):
        return fqn.split(".")[-1]


def compile_exprs(args, exprs, ctx):
    """``lambdify`` a flat list of sympy expressions into a function of ``args`` (nested
    lists of symbols are unpacked) evaluated with ``ctx``'s functions; returns a list."""
    return sp.lambdify(args, list(exprs), modules=[ctx.namespace()],
                       printer=_ContextPrinter, cse=True)


def _refuse_floats(name, ctx, *exprs):
    """A float literal (sympy Float) in an expression carries 53 bits: refuse it in mp."""
    if not ctx.is_mp:
        return
    floats = sorted({str(f) for e in exprs for f in sp.sympify(e).atoms(sp.Float)})
    if floats:
        raise PrecisionError(
            f"{name}: float literal(s) {', '.join(floats)} in L, M, V or F would cap a "
            f"{ctx.dps}-digit computation at 53 bits; write sp.Rational(1, 10) or make it a "
            "parameter with a string value ('0.1')")


def _flat(m):
    return [e for row in m for e in row]


class LagrangianSystem:
    """A mechanical system with Lagrangian L(t, q, v) and generalized force F(t, q, v).

    ``LagrangianSystem(name, coords, mass, potential, params, ctx, force=None)`` builds
    L = 1/2 v^T M(q) v - V(q); :meth:`from_lagrangian` takes a general L.

    Parameters
    ----------
    name : str
    coords : list of sympy symbols q^1..q^n (their names label the output).
    mass : sympy Matrix M(q) (n x n, symmetric; positive definite where it is used --
        checked at the integrator's entry by :meth:`check_state`).
    potential : sympy expression V(q).
    params : dict mapping sympy symbols appearing in M, V, F to values (strings, ints,
        Fractions or context numbers -- converted by ``ctx.num``, floats refused in mp).
    ctx : number context.
    force : optional callable ``force(t, q, v) -> sympy Matrix`` (n x 1) receiving the
        symbols for time, coordinates and velocities (e.g. ``-c * v`` for damping).
    """

    is_linear = False

    def __init__(self, name, coords, mass, potential, params, ctx, force=None):
        self._init_common(name, coords, None, params, ctx)
        n = self.dof
        M = sp.Matrix(mass)
        if M.shape != (n, n):
            raise ValueError(f"{name}: mass matrix is {M.shape[0]}x{M.shape[1]}, expected {n}x{n}")
        if sp.simplify(M - M.T) != sp.zeros(n, n):
            raise ValueError(f"{name}: mass matrix M(q) is not symmetric")
        V = sp.sympify(potential)
        _refuse_floats(name, ctx, M, V)
        self._check_symbols("M or V", M.free_symbols | V.free_symbols, allowed=set(self.coords))
        self.mass_expr, self.potential_expr = M, V
        vv = sp.Matrix(self.velocity_symbols)
        self._finish((vv.T * M * vv)[0, 0] / 2 - V, force)

    @classmethod
    def from_lagrangian(cls, name, coords, velocities, lagrangian, params, ctx, force=None):
        """A system given by a general Lagrangian L(t, q, v): ``velocities`` are the
        symbols standing for q' in ``lagrangian``; time is :data:`TIME`.  L_vv must be
        invertible along the motion (checked at the initial point)."""
        self = cls.__new__(cls)
        self._init_common(name, coords, velocities, params, ctx)
        L = sp.sympify(lagrangian)
        _refuse_floats(name, ctx, L)
        self._check_symbols("L", L.free_symbols,
                            allowed=set(self.coords) | set(self.velocity_symbols) | {TIME})
        self.mass_expr = self.potential_expr = None
        self._finish(L, force)
        return self

    # ----- construction ------------------------------------------------------------
    def _init_common(self, name, coords, velocities, params, ctx):
        self.name = name
        self.ctx = ctx
        self.coords = list(coords)
        n = self.dof = len(self.coords)
        if n < 1:
            raise ValueError(f"{name}: a system needs at least one coordinate")
        self.coord_names = [str(c) for c in self.coords]
        self.velocity_symbols = (list(velocities) if velocities is not None
                                 else list(sp.symbols(f"v0:{n}")))
        if len(self.velocity_symbols) != n:
            raise ValueError(f"{name}: {len(self.velocity_symbols)} velocity symbols for {n} coordinates")
        self.time_symbol = TIME
        self.param_symbols = list(params)
        self.param_values = tuple(ctx.num(params[s]) for s in self.param_symbols)

    def _check_symbols(self, what, symbols, allowed):
        free = symbols - allowed - set(self.param_symbols)
        if free:
            raise ValueError(f"{self.name}: symbols {sorted(map(str, free))} in {what} are "
                             "neither coordinates nor parameters")

    def _finish(self, L, force):
        n, x, v, t = self.dof, self.coords, self.velocity_symbols, TIME
        self.lagrangian_expr = L
        self.time_dependent = L.has(t)
        self.has_force = force is not None
        if force is not None:
            F = sp.Matrix(force(t, sp.Matrix(x), sp.Matrix(v)))
            if F.shape != (n, 1):
                raise ValueError(f"{self.name}: force must be an {n}x1 column, got {F.shape}")
            extra = F.free_symbols - set(x) - set(v) - {t} - set(self.param_symbols)
            if extra:
                raise ValueError(f"{self.name}: symbols {sorted(map(str, extra))} in F are not "
                                 "t, coordinates, velocities or parameters")
            _refuse_floats(self.name, self.ctx, F)
            self.force_expr = F
        else:
            self.force_expr = sp.zeros(n, 1)
        P = [sp.diff(L, vi) for vi in v]
        G = [sp.diff(L, xi) for xi in x]
        self._P, self._G = P, G
        self._Lvv = [[sp.diff(P[g], v[d]) for d in range(n)] for g in range(n)]
        self.quadratic_in_velocity = not any(e.has(*v) for e in _flat(self._Lvv))

    def _compile(self, args, exprs):
        return compile_exprs(args, exprs, self.ctx)

    @property
    def _txvp(self):
        return [TIME, self.coords, self.velocity_symbols, self.param_symbols]

    @cached_property
    def _node_grad(self):
        return self._compile(self._txvp, self._P + self._G)

    @cached_property
    def _node_full(self):
        n, x, v = self.dof, self.coords, self.velocity_symbols
        B = [[sp.diff(self._G[g], v[d]) for d in range(n)] for g in range(n)]
        A = [[sp.diff(self._G[g], x[d]) for d in range(n)] for g in range(n)]
        return self._compile(self._txvp, self._P + self._G + _flat(self._Lvv) + _flat(B) + _flat(A))

    @cached_property
    def _lagrangian(self):
        return self._compile(self._txvp, [self.lagrangian_expr])

    @cached_property
    def _force_full(self):
        n, F = self.dof, self.force_expr
        Fq = [sp.diff(F[g], self.coords[d]) for g in range(n) for d in range(n)]
        Fv = [sp.diff(F[g], self.velocity_symbols[d]) for g in range(n) for d in range(n)]
        return self._compile(self._txvp, list(F) + Fq + Fv)

    @cached_property
    def _force(self):
        return self._compile(self._txvp, list(self.force_expr))

    def _motion_exprs(self):
        """(L_vv, r) with L_vv a = r the equations of motion: r = L_q + F - L_vq v - L_vt."""
        n, x, v = self.dof, self.coords, self.velocity_symbols
        r = [self._G[g] + self.force_expr[g]
             - sum(sp.diff(self._P[g], x[d]) * v[d] for d in range(n))
             - sp.diff(self._P[g], TIME) for g in range(n)]
        return self._Lvv, r

    @cached_property
    def _acceleration_parts(self):
        Lvv, r = self._motion_exprs()
        return self._compile(self._txvp, _flat(Lvv) + r)

    @cached_property
    def _residual_full(self):
        n = self.dof
        a = list(sp.symbols(f"a0:{n}"))
        Lvv, r = self._motion_exprs()
        R = [sum(Lvv[g][d] * a[d] for d in range(n)) - r[g] for g in range(n)]
        jac = [sp.diff(R[g], s[d]) for s in (self.coords, self.velocity_symbols, a)
               for g in range(n) for d in range(n)]
        return self._compile([TIME, self.coords, self.velocity_symbols, a, self.param_symbols],
                             R + jac)

    # ----- raw pieces of the M, V form ------------------------------------------------------
    def _arr(self, values, shape):
        return np.array(values, dtype=self.ctx.dtype).reshape(shape)

    def _mv_form(self, what):
        if self.mass_expr is None:
            raise TypeError(f"{self.name}: {what} exists for systems given by M(q) and V(q); "
                            "this one was given by a general Lagrangian")

    @cached_property
    def _mass(self):
        self._mv_form("M(q)")
        return self._compile([self.coords, self.param_symbols], list(self.mass_expr))

    @cached_property
    def _mass_general(self):
        return self._compile(self._txvp, _flat(self._Lvv))

    def mass(self, q, v=None, t=None):
        """M(q) (for a general Lagrangian: L_vv(t, q, v), velocity and time default 0)."""
        n = self.dof
        if self.mass_expr is not None:
            return self._arr(self._mass(q, self.param_values), (n, n))
        ctx = self.ctx
        v = ctx.zeros(n) if v is None else v
        return self._arr(self._mass_general(self._t(t), q, v, self.param_values), (n, n))

    def potential(self, q):
        """V(q)."""
        return self._mv_piece("_potential", [self.potential_expr])(q, self.param_values)[0]

    def _mv_piece(self, key, exprs):
        cache = self.__dict__.setdefault("_pieces", {})
        if key not in cache:
            self._mv_form(key.strip("_"))
            cache[key] = self._compile([self.coords, self.param_symbols], exprs)
        return cache[key]

    def dmass(self, q):
        """``dM[g, a, b] = d M_ab / d q^g``."""
        n, M = self.dof, self.mass_expr
        f = self._mv_piece("_dmass", [e for xg in self.coords for e in sp.diff(M, xg)])
        return self._arr(f(q, self.param_values), (n, n, n))

    def d2mass(self, q):
        """``d2M[g, d, a, b] = d^2 M_ab / d q^g d q^d``."""
        n, M, x = self.dof, self.mass_expr, self.coords
        f = self._mv_piece("_d2mass", [e for xg in x for xd in x for e in sp.diff(M, xd, xg)])
        return self._arr(f(q, self.param_values), (n, n, n, n))

    def grad_potential(self, q):
        f = self._mv_piece("_grad_potential", [sp.diff(self.potential_expr, xi) for xi in self.coords])
        return self._arr(f(q, self.param_values), (self.dof,))

    def hess_potential(self, q):
        V, x = self.potential_expr, self.coords
        f = self._mv_piece("_hess_potential", [sp.diff(V, a, b) for a in x for b in x])
        n = self.dof
        return self._arr(f(q, self.param_values), (n, n))

    # ----- force ------------------------------------------------------------------------
    def _t(self, t):
        return self.ctx.zero if t is None else t

    def force(self, t, q, v):
        """F(t, q, v), zero for a conservative system."""
        if not self.has_force:
            return self.ctx.zeros(self.dof)
        return self._arr(self._force(self._t(t), q, v, self.param_values), (self.dof,))

    def force_derivatives(self, t, q, v):
        """(F, dF/dq, dF/dv) at (t, q, v); rows index F, columns q or v."""
        n = self.dof
        vals = self._force_full(self._t(t), q, v, self.param_values)
        return (self._arr(vals[:n], (n,)), self._arr(vals[n:n + n * n], (n, n)),
                self._arr(vals[n + n * n:], (n, n)))

    # ----- Lagrangian derivatives at a point (what the variational schemes use) ----------------
    def lagrangian(self, q, v, t=None):
        if self.mass_expr is not None:
            return (v @ self.mass(q) @ v) / 2 - self.potential(q)
        return self._lagrangian(self._t(t), q, v, self.param_values)[0]

    def node_gradient(self, x, v, t=None):
        """(P, G) = (dL/dv, dL/dq) at (t, x, v)."""
        n = self.dof
        vals = self._node_grad(self._t(t), x, v, self.param_values)
        return self._arr(vals[:n], (n,)), self._arr(vals[n:], (n,))

    def node_derivatives(self, x, v, t=None):
        """(P, G, L_vv, B, A): first and second derivatives of L at (t, x, v):
        B[g, d] = d2L/dq^g dv^d, A[g, d] = d2L/dq^g dq^d."""
        n = self.dof
        vals = self._node_full(self._t(t), x, v, self.param_values)
        k = 2 * n
        return (self._arr(vals[:n], (n,)), self._arr(vals[n:k], (n,)),
                self._arr(vals[k:k + n * n], (n, n)), self._arr(vals[k + n * n:k + 2 * n * n], (n, n)),
                self._arr(vals[k + 2 * n * n:], (n, n)))

    def residual_derivatives(self, t, x, v, a):
        """R = L_vv a + L_vq v + L_vt - L_q - F (zero along a motion) and dR/dx, dR/dv,
        dR/da at (t, x, v, a): the weighted-residual (Galerkin) equations use them.  R is
        Mutze's guiding force G(t, x, v, a) (mutze eqs. 10-11), the equation of the
        g-family (eq. 72)."""
        n = self.dof
        vals = self._residual_full(self._t(t), x, v, a, self.param_values)
        m = n * n
        return (self._arr(vals[:n], (n,)), self._arr(vals[n:n + m], (n, n)),
                self._arr(vals[n + m:n + 2 * m], (n, n)), self._arr(vals[n + 2 * m:], (n, n)))

    # ----- Legendre map, acceleration, energy -------------------------------------------
    def _solve_mass(self, matrix, rhs, q):
        try:
            return self.ctx.solve(matrix, rhs)
        except SingularMatrixError as exc:
            point = ", ".join(self.ctx.to_str(x, 8) for x in q)
            raise SingularMatrixError(f"{self.name}: the mass matrix is singular at "
                                      f"q = ({point}): {exc}") from None

    def momentum(self, q, v, t=None):
        """p = dL/dv (= M(q) v for the M, V form)."""
        if self.mass_expr is not None:
            return self.mass(q) @ v
        return self.node_gradient(q, v, t)[0]

    def velocity(self, q, p, t=None):
        """v with dL/dv(t, q, v) = p (v = M(q)^-1 p for the M, V form); raises
        :class:`SingularMatrixError` naming the point if the mass matrix is singular."""
        if self.mass_expr is not None:
            return self._solve_mass(self.mass(q), p, q)
        ctx = self.ctx
        zero = ctx.zeros(self.dof)
        if self.quadratic_in_velocity:      # p = L_vv (t, q) v + dL/dv(t, q, 0)
            return self._solve_mass(self.mass(q, zero, t), p - self.momentum(q, zero, t), q)
        from .newton import solve

        def fun(v, jacobian):
            r = self.momentum(q, v, t) - p
            return (r, self.mass(q, v, t)) if jacobian else r
        return solve(fun, zero, ctx, what=f"{self.name}: velocity from momentum")

    def acceleration(self, t, q, v):
        """a = q'' from L_vv a = L_q + F - L_vq v - L_vt at (t, q, v) (mutze eq. 15), solved
        at context precision; a singular L_vv raises :class:`SingularMatrixError` naming the point."""
        n = self.dof
        vals = self._acceleration_parts(self._t(t), q, v, self.param_values)
        return self._solve_mass(self._arr(vals[:n * n], (n, n)), self._arr(vals[n * n:], (n,)), q)

    def acceleration_derivatives(self, t, q, v):
        """(A, dA/dq, dA/dv) at (t, q, v): A as :meth:`acceleration`, its derivatives from
        G(t, q, v, A(t, q, v)) = 0 by implicit differentiation, dA/dq = -G_a^-1 G_q and
        dA/dv = -G_a^-1 G_v (rows index A)."""
        a = self.acceleration(t, q, v)
        _, Gq, Gv, Ga = self.residual_derivatives(t, q, v, a)
        return a, -self._solve_mass(Ga, Gq, q), -self._solve_mass(Ga, Gv, q)

    def hamiltonian(self, q, p, t=None):
        """H = p^T v - L at v = velocity(q, p); for the M, V form 1/2 p^T M(q)^-1 p + V(q)
        (top2025 eq. (15))."""
        v = self.velocity(q, p, t)
        if self.mass_expr is not None:
            return (p @ v) / 2 + self.potential(q)
        return p @ v - self.lagrangian(q, v, t)

    energy = hamiltonian

    def hamiltonian_rhs(self, q, p, t=None):
        """(q', p') = (v, dL/dq(t, q, v) + F(t, q, v)) at v = velocity(q, p)."""
        v = self.velocity(q, p, t)
        _, G = self.node_gradient(q, v, t)
        if self.has_force:
            G = G + self.force(t, q, v)
        return v, G

    # ----- validation ----------------------------------------------------------------------
    def check_vector(self, values, label):
        """``values`` as a context vector of length dof, finite; else ``ValueError`` naming
        ``label``."""
        ctx = self.ctx
        try:
            x = ctx.asarray(values)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{self.name}: {label}: {exc}") from None
        if x.shape != (self.dof,):
            raise ValueError(f"{self.name}: {label} must be a vector of {self.dof} numbers "
                             f"({', '.join(self.coord_names)}), got shape {x.shape}")
        if not ctx.all_finite(x):
            raise ValueError(f"{self.name}: {label} has a non-finite entry (nan or inf): "
                             f"({', '.join(ctx.to_str(e, 8) for e in x)})")
        return x

    def check_state(self, t, q):
        """Validate the initial point of an integration: a positive-definite mass matrix
        at (t, q) (``ValueError`` naming it otherwise)."""
        M = self.mass(q) if self.mass_expr is not None else self.mass(q, None, t)
        try:
            self.ctx.cholesky(M, f"{self.name}: the mass matrix at the initial point")
        except NotPositiveDefiniteError as exc:
            raise ValueError(str(exc)) from None
