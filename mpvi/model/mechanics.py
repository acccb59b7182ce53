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

sympy generates every derivative from those expressions and :mod:`mpvi.compiled.codegen` compiles
them (common subexpressions eliminated) into plain Python calling the context's own
functions, so nothing is typed by hand and nothing runs at a precision other than the
context's.  Parameter values enter as context numbers at call time, never as floats.
The derivation is a context-free :class:`mpvi.model.derivation.Model`, made once per process for
every system with the same expressions; a system is that model, a context and its
parameter values, and :meth:`LagrangianSystem.with_context` binds it to another context
(no sympy work; the printed code is shared, only its constants are converted).
Compilation is lazy (a function is generated the first time it is asked for).

What a system gives (numeric methods take and return context arrays; ``t`` defaults to 0):

* Legendre map: ``momentum(q, v, t)`` p = dL/dv, ``velocity(q, p, t)`` its inverse (a
  linear solve when L is quadratic in v, damped Newton otherwise); ``acceleration(t, q, v)``
  (solves L_vv a = L_q + F - L_vq v - L_vt); ``hamiltonian(q, p)`` (= ``energy``) and
  ``hamiltonian_rhs(q, p, t)``;
* per quadrature node, the derivatives of L the variational schemes use
  (``node_gradient``, ``node_derivatives``: P = dL/dv, G = dL/dq, L_vv, B = d2L/dq dv,
  A = d2L/dq dq) and the force with its derivatives (``force``, ``force_derivatives``);
* the residual of the equations of motion and its derivatives for Galerkin schemes
  (``residual_derivatives(t, x, v, a)``: R, dR/dx, dR/dv, dR/da);
* raw pieces of the M, V form for users and tests: ``mass``, ``dmass``, ``d2mass``,
  ``potential``, ``grad_potential``, ``hess_potential``;
* validation: ``check_vector``, ``check_state`` (a positive-definite mass matrix at the
  initial point (t, q, v)), ``irregularity`` (the cheap test the driver runs after every
  step: V or L finite, the mass matrix positive definite), ``diagnose`` (what is not finite or singular at a point), with
  messages naming the quantity.

Hamiltonian view (top2025 eq. (15)): p = M(q) v,  H = 1/2 p^T M^-1 p + V,
q' = M^-1 p,  p' = G(q, M^-1 p) + F   (since dH/dq = -dL/dq at v = M^-1 p).

Systems pickle (by their expressions and parameter values; compiled functions are made
again on first use), so a :class:`mpvi.Solution` holding one can be pickled too.
"""
from __future__ import annotations

from collections.abc import Mapping, Set as AbstractSet
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import sympy as sp


from mpvi.compiled import cbackend
from mpvi.compiled.codegen import TIME, compile_exprs, generate_source
from mpvi.numbers.context import GMPContext, PrecisionError, require_context
from mpvi.ground.expressions import as_expression, as_matrix
from mpvi.numbers.linalg import (NotPositiveDefiniteError, SingularMatrixError, is_positive_definite,
                                 solve_dense)
from mpvi.model.derivation import lagrangian_model, mass_model
from mpvi.ground.precision import entry, entry_class

if TYPE_CHECKING:
    import sympy

    from mpvi.ground.types import (Array, ExprLike, ForceFunction, Matrix, MatrixLike, Real,
                         NumberLike, Vector, VectorLike)
    from mpvi.numbers.context import Context

__all__ = ["LagrangianSystem", "Lagrangian", "TIME", "DEFAULT_DPS"]

DEFAULT_DPS = 64
"""The digits of the context :func:`Lagrangian` builds a system in when given none
(``mpvi.GMPContext(64)``)."""


def _flat(m):
    return [e for row in m for e in row]


_PRIVATE_BASE = 0x6D7076690000
"""The dummy index of mpvi's first private velocity symbol: a fixed number far above the
indices sympy gives its own Dummies (a random base below 10**7 plus a counter), so the
symbols are the same in every process (systems built again share their generated code,
and pickles rebuild them equal) and equal to no symbol a user can make."""


def private_symbols(stem: str, n: int, offset: int) -> list[sympy.Dummy]:
    """``n`` private symbols ``stem0 .. stem{n-1}`` (sympy Dummies, printed ``_stem0``):
    equal to nothing a user writes, the same in every process.  ``offset`` (a multiple of
    2**16) keeps the kinds apart."""
    return [sp.Dummy(f"{stem}{i}", dummy_index=_PRIVATE_BASE + offset + i) for i in range(n)]


def check_symbols(name: str, coords: Sequence[sympy.Symbol], params: Sequence[sympy.Symbol],
                  velocities: Sequence[sympy.Symbol] = ()) -> None:
    """Refuse a system whose symbols clash: a coordinate, velocity or parameter that is not
    a sympy Symbol, two of them equal or printed alike, or one named like the time symbol
    :data:`mpvi.TIME` (``t``).  Names label outputs, saved files and messages, so two
    different symbols with one name (``Symbol('x')`` and ``Symbol('x', positive=True)``)
    are a clash too.

    Raises
    ------
    ValueError
        Naming the clashing symbols and their roles.
    """
    seen = {}
    for role, group in (("coordinate", coords), ("velocity", velocities), ("parameter", params)):
        for s in group:
            if not isinstance(s, sp.Symbol):
                raise ValueError(f"{name}: the {role} {s!r} is not a sympy Symbol")
            key = str(s)
            if key == str(TIME) or s == TIME:
                raise ValueError(f"{name}: the {role} {key!r} collides with the time symbol "
                                 f"mpvi.TIME ({TIME}); give it another name")
            if key in seen:
                raise ValueError(f"{name}: the {role} {key!r} is also a {seen[key]}: every "
                                 "coordinate, velocity and parameter needs its own name")
            seen[key] = role


def _names(*groups):
    """Name (as printed) -> symbol of the symbols in ``groups``: the names a potential, mass
    matrix or Lagrangian given as text may use (:func:`mpvi.ground.expressions.parse_expression`)."""
    return {str(s): s for group in groups for s in group if isinstance(s, sp.Symbol)}


@entry_class
class LagrangianSystem:
    """A mechanical system with Lagrangian L(t, q, v) and generalized force F(t, q, v).

    ``LagrangianSystem(name, coords, mass, potential, params, ctx, force=None)`` builds
    L = 1/2 v^T M(q) v - V(q) (top2025 eq. (1)); :meth:`from_lagrangian` takes a general
    L(t, q, v).  The equations of motion are d/dt dL/dv - dL/dq = F (the
    Lagrange-d'Alembert principle).  sympy generates every derivative and
    :mod:`mpvi.compiled.codegen` compiles them against the context, lazily, on first use.  The
    numeric methods take and return arrays of the context's numbers; ``t`` defaults to 0.
    Systems pickle (by their expressions and parameter values).

    Parameters
    ----------
    name : str
        The system's name (in messages and outputs).
    coords : sequence of sympy.Symbol
        The coordinates q^1..q^n (their names label the output).
    mass : sympy.Matrix or sequence of rows
        M(q), n x n and symmetric; positive definite where it is used (checked at the
        initial point by :class:`mpvi.Problem` and after every step of
        :func:`mpvi.solve`).  An entry given as text is read by
        :func:`mpvi.ground.expressions.parse_expression`, in the names of the coordinates and
        parameters.
    potential : sympy expression or str
        V(q); text is read as the mass matrix's entries are.
    params : dict
        Maps the sympy symbols of parameters in M, V and F to values: strings, ints,
        Fractions, sympy numbers or context numbers, converted by ``ctx.num`` (floats
        are refused in the mp contexts).
    ctx : Context
        The number context of every computation.
    force : callable or sequence, optional
        The generalized force F(t, q, v): a callable ``force(t, q, v) -> sympy.Matrix``
        (n x 1), called once with the symbols of time, coordinates and velocities (e.g.
        ``lambda t, q, v: -c * v`` for damping), or the n components themselves (a
        sequence or an n x 1 matrix of sympy expressions, numbers or texts, e.g.
        ``["a*cos(w*t)"]``) in ``t`` (:data:`TIME`), the coordinates and the parameters;
        a force that depends on the velocities is given as a callable here (their
        symbols are internal).  Text is read as the mass matrix's entries are.

    Raises
    ------
    ValueError
        No coordinates, a mass matrix of the wrong shape or not symmetric, a force of the
        wrong shape, or symbols that are neither coordinates, velocities, time nor
        parameters; a function mpvi cannot evaluate in M, V, F or their derivatives (an
        undefined ``sympy.Function('f')(q)``; :func:`mpvi.compiled.codegen.check_functions`);
        text that is not an expression in those names
        (:class:`mpvi.ground.expressions.ExpressionError`).
    TypeError
        A force that is neither a callable nor a sequence or matrix of expressions (a
        single expression, say: give ``[expr]``).
    PrecisionError
        A float literal in M, V or F (or a float parameter value) in an mp context.

    See Also
    --------
    mpvi.Problem : An initial-value problem on the system.
    mpvi.LinearSystem : The linear case M q'' + K q = 0, with its exact solution.
    """

    is_linear = False
    first_order = False

    def __init__(self, name: str, coords: Sequence[sympy.Symbol], mass: MatrixLike,
                 potential: ExprLike, params: dict[sympy.Symbol, NumberLike], ctx: Context,
                 force: ForceFunction | Sequence[ExprLike] | MatrixLike | None = None) -> None:
        self._init_common(name, coords, None, params, ctx)
        names = _names(self.coords, self.param_symbols)
        M = as_matrix(mass, names, what=f"{name}: mass matrix")
        V = as_expression(potential, names, what=f"{name}: potential")
        self._bind(mass_model(name, self.coords, self.velocity_symbols, self.param_symbols,
                              M, V, self._force_expr(force)))

    @classmethod
    def from_lagrangian(cls, name: str, coords: Sequence[sympy.Symbol],
                        velocities: Sequence[sympy.Symbol], lagrangian: ExprLike,
                        params: dict[sympy.Symbol, NumberLike], ctx: Context,
                        force: ForceFunction | Sequence[ExprLike] | MatrixLike | None = None,
                        ) -> LagrangianSystem:
        """Build a system from a general Lagrangian L(t, q, v) (Mutze's setting).

        L_vv must be positive definite along the motion (checked at the initial point
        (t0, q0, v0) and after every step of :func:`mpvi.solve`).  The M, V pieces
        (:meth:`potential`, :meth:`dmass`, ...) do not exist for such a system.

        Parameters
        ----------
        name : str
            The system's name.
        coords : sequence of sympy.Symbol
            The coordinates q^1..q^n.
        velocities : sequence of sympy.Symbol
            The symbols standing for q' in ``lagrangian``.
        lagrangian : sympy expression or str
            L(t, q, v), with time :data:`TIME`; text is read by
            :func:`mpvi.ground.expressions.parse_expression`, in the names of the coordinates,
            velocities, parameters and ``t``.
        params : dict
            Parameter symbols to values, as for the constructor.
        ctx : Context
            The number context.
        force : callable or sequence, optional
            F(t, q, v): a callable ``force(t, q, v) -> sympy.Matrix`` (n x 1), as for the
            constructor, or the n components in ``t``, the coordinates, the velocities
            (``velocities``) and the parameters.

        Returns
        -------
        LagrangianSystem
            The system (of the class it is called on).

        Raises
        ------
        ValueError
            As the constructor; also a number of velocity symbols other than n.
        TypeError
            A force that is neither a callable nor a sequence or matrix of expressions; a
            Lagrangian that is not one scalar expression (a matrix, a relation).
        PrecisionError
            A float literal in L or F in an mp context.
        """
        self = cls.__new__(cls)
        self._init_common(name, coords, velocities, params, ctx)
        L = as_expression(lagrangian, _names(self.coords, self.velocity_symbols,
                                             self.param_symbols, [TIME]),
                          what=f"{name}: Lagrangian")
        if not isinstance(L, sp.Expr) or isinstance(L, sp.MatrixBase):
            raise TypeError(f"{name}: the Lagrangian must be one sympy expression L(t, q, v) "
                            f"(a scalar), got {type(lagrangian).__name__} {_short(lagrangian)}; "
                            "write it as one expression in the coordinates and velocities")
        self._bind(lagrangian_model(name, self.coords, self.velocity_symbols,
                                    self.param_symbols, L,
                                    self._force_expr(force, velocities=True)))
        return self

    # ----- construction ------------------------------------------------------------
    def _init_common(self, name, coords, velocities, params, ctx):
        self.name = name
        self.ctx = require_context(ctx, name)
        self.coords = list(coords)
        n = self.dof = len(self.coords)
        if n < 1:
            raise ValueError(f"{name}: a system needs at least one coordinate")
        self.coord_names = [str(c) for c in self.coords]
        if not isinstance(params, dict):
            raise TypeError(f"{name}: params must be a dict of sympy symbols to values, got "
                            f"{type(params).__name__}")
        self.velocity_symbols = (list(velocities) if velocities is not None
                                 else private_symbols("v", n, 0))
        if len(self.velocity_symbols) != n:
            raise ValueError(f"{name}: {len(self.velocity_symbols)} velocity symbols for {n} coordinates")
        check_symbols(name, self.coords, list(params),
                      self.velocity_symbols if velocities is not None else ())
        self.time_symbol = TIME
        self.param_symbols = list(params)
        self.param_values = tuple(ctx.number(params[s], f"{name}: parameter {s}")
                                  for s in self.param_symbols)
        self._params = dict(params)

    def _force_expr(self, force, velocities=False):
        """F(t, q, v) as an n x 1 sympy Matrix, or None: ``force`` called with the symbols
        of time, coordinates and velocities, or its n components given as expressions (or
        texts) in t, the coordinates, the parameters and, if the user named them
        (``velocities``: :meth:`from_lagrangian`), the velocities."""
        if force is None:
            return None
        n = self.dof
        known = [[TIME], self.coords] + ([self.velocity_symbols] if velocities else [])
        known.append(self.param_symbols)
        allowed = ", ".join(str(s) for group in known for s in group)
        expressions = isinstance(force, (sp.MatrixBase, np.ndarray)) or (
            isinstance(force, Sequence) and not isinstance(force, (str, bytes)))
        if expressions:
            F = as_matrix(force, _names(*known), what=f"{self.name}: force")
            extra = F.free_symbols - {s for group in known for s in group}
            if extra:
                hint = ("" if velocities else "; a force that depends on the velocities is a "
                        "callable force(t, q, v)")
                raise ValueError(f"{self.name}: force: symbols {sorted(map(str, extra))} are "
                                 f"not among {allowed}{hint}")
        elif callable(force) and not isinstance(force, sp.Basic):
            F = sp.Matrix(force(TIME, sp.Matrix(self.coords), sp.Matrix(self.velocity_symbols)))
        else:
            shown = repr(force)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise TypeError(f"{self.name}: force must be a callable force(t, q, v) returning "
                            f"F as a {n}x1 sympy.Matrix, or a sequence of {n} expression(s) in "
                            f"{allowed}; got {type(force).__name__} {shown}"
                            + (" (a single expression: give it as [expr])"
                               if isinstance(force, (str, sp.Basic)) else ""))
        if F.shape != (n, 1):
            raise ValueError(f"{self.name}: force must be an {n}x1 column, got {F.shape}")
        return F

    def _bind(self, model):
        """Make this system ``model`` in its context: the model's expressions and
        derivatives are shared, not copied; the context is checked against them
        (:meth:`mpvi.model.derivation.Model.check_context`)."""
        model.check_context(self.ctx, self.name)
        self.model = model
        self.mass_expr, self.potential_expr = model.mass_expr, model.potential_expr
        self.lagrangian_expr, self.force_expr = model.lagrangian_expr, model.force_expr
        self.time_dependent, self.has_force = model.time_dependent, model.has_force
        self._P, self._G, self._Lvv = model._P, model._G, model._Lvv
        self.quadratic_in_velocity = model.quadratic_in_velocity
        self.constant_mass = model.constant_mass
        """True when M (or L_vv) depends on neither q, v nor t: checked once, not after
        every step."""
        self._bindings = {self.ctx.key: self}

    def with_context(self, ctx: Context, params: dict[sympy.Symbol, NumberLike] | None = None
                     ) -> LagrangianSystem:
        """Return this system in the number context ``ctx``, sharing its symbolic model.

        No sympy derivation and no code generation: the model (L, M, V, F and their
        derivatives, :class:`mpvi.model.derivation.Model`) and the code it printed are shared; only
        the parameter values are read in ``ctx``: from ``params`` where given, else from
        the values the system was given (strings, ints, Fractions and sympy numbers give
        the numbers a system built in ``ctx`` has; a number of a less precise context is
        refused, as everywhere).  Without ``params``, cached: the same system for the same
        context.

        Parameters
        ----------
        ctx : Context
            The number context.
        params : dict, optional
            Parameter symbols to values (as for the constructor) replacing the system's.

        Returns
        -------
        LagrangianSystem
            The system in ``ctx`` (this one if ``ctx`` is its context and no ``params``).

        Raises
        ------
        PrecisionError
            A float literal in L, M, V or F, or a parameter value that would lose
            precision, in an mp context.
        ValueError
            A function ``ctx`` cannot evaluate; a symbol in ``params`` that is not a
            parameter.
        """
        if params is not None:
            unknown = [s for s in params if s not in self._params]
            if unknown:
                raise ValueError(f"{self.name}: {', '.join(map(str, unknown))} in params "
                                 f"are not parameters ({', '.join(map(str, self._params))})")
            return self._rebind(ctx, {**self._params, **params})
        found = self._bindings.get(ctx.key)
        if found is None:
            try:
                found = self._rebind(ctx, self._params)
            except PrecisionError as exc:
                raise PrecisionError(f"{exc}; pass its value in {ctx.name} as "
                                     "with_context(ctx, params={...})") from None
            found._bindings = self._bindings
            self._bindings[ctx.key] = found
        return found

    def _rebind(self, ctx, params):
        """A new system of this class: this one's model, ``params`` read in ``ctx``."""
        new = type(self).__new__(type(self))
        model = self.model
        new._init_common(self.name, model.coords,
                         None if model.mass_expr is not None else model.velocity_symbols,
                         params, ctx)
        new._bind(model)
        return new

    # ----- pickling ------------------------------------------------------------------
    def __reduce__(self):
        ctx = self.ctx
        params = {s: ctx.dump(x) for s, x in zip(self.param_symbols, self.param_values)}
        force = self.force_expr if self.has_force else None
        exact = all(isinstance(x, (str, int, Fraction, sp.Rational)) for x in self._params.values())
        return (_rebuild_system, (type(self), self.name, self.coords, self.velocity_symbols,
                                  self.mass_expr, self.potential_expr, self.lagrangian_expr,
                                  params, ctx, force, dict(self._params) if exact else None))

    @cached_property
    def signature(self) -> tuple[Any, ...]:
        """What the generated code depends on: L, F, the symbols, the parameter symbols.

        Not the parameter values: systems that differ only in them share their code.
        (Computed once: a system's expressions are set when it is built.)
        """
        return self.model.signature

    def __repr__(self):
        return (f"<{type(self).__name__} {self.name!r}: {self.dof} dof "
                f"({', '.join(self.coord_names)}), context {self.ctx.name}>")

    # ----- symbolic pieces (shared by every system with the same expressions) -----------
    def symbolic(self, what: str) -> tuple[Any, ...]:
        """Return symbolic derivative blocks, computed once per system :attr:`signature`.

        Parameters
        ----------
        what : {"node", "residual", "motion"}
            Which blocks.

        Returns
        -------
        tuple
            For ``"node"``: (P, G + F, dG/dq, dG/dv, dP/dq, dP/dv) with P = dL/dv,
            G = dL/dq, G + F the generalized force at a node and the blocks n x n lists
            (rows index the component); for ``"residual"``: (R, dR/dq, dR/dv, dR/da) of
            R = L_vv a - (L_q + F - L_vq v - L_vt) in the acceleration symbols
            :attr:`acceleration_symbols`; for ``"motion"``: (L_vv, r) with L_vv a = r the
            equations of motion.

        Raises
        ------
        ValueError
            Another ``what``.
        """
        return self.model.symbolic(what)

    @property
    def acceleration_symbols(self) -> list[sympy.Symbol]:
        """The symbols a^1..a^n of the accelerations in :meth:`symbolic` ("residual").

        The same sympy Dummies in every call (they never collide with a user's own
        symbols).
        """
        return self.model.acceleration_symbols

    def _motion_exprs(self):
        return self.symbolic("motion")

    # ----- compiled functions ------------------------------------------------------------
    def _compile(self, args, exprs, name="system"):
        with cbackend.kernels_of(self.name):        # a kernel that stays in Python names it
            return compile_exprs(args, exprs, self.ctx, name)

    @property
    def _txvp(self):
        return [TIME, self.coords, self.velocity_symbols, self.param_symbols]

    @cached_property
    def _node_grad(self):
        return self._compile(self._txvp, self._P + self._G, "node_gradient")

    @cached_property
    def _node_full(self):
        n, x, v = self.dof, self.coords, self.velocity_symbols
        B = [[sp.diff(self._G[g], v[d]) for d in range(n)] for g in range(n)]
        A = [[sp.diff(self._G[g], x[d]) for d in range(n)] for g in range(n)]
        return self._compile(self._txvp, self._P + self._G + _flat(self._Lvv) + _flat(B) + _flat(A),
                             "node_derivatives")

    @cached_property
    def _lagrangian(self):
        return self._compile(self._txvp, [self.lagrangian_expr], "lagrangian")

    @cached_property
    def _force_full(self):
        n, F = self.dof, self.force_expr
        Fq = [sp.diff(F[g], self.coords[d]) for g in range(n) for d in range(n)]
        Fv = [sp.diff(F[g], self.velocity_symbols[d]) for g in range(n) for d in range(n)]
        return self._compile(self._txvp, list(F) + Fq + Fv, "force_derivatives")

    @cached_property
    def _force(self):
        return self._compile(self._txvp, list(self.force_expr), "force")

    @cached_property
    def _acceleration_parts(self):
        Lvv, r = self.symbolic("motion")
        return self._compile(self._txvp, _flat(Lvv) + r, "acceleration_parts")

    @cached_property
    def _residual_full(self):
        R, Rq, Rv, Ra = self.symbolic("residual")
        return self._compile([TIME, self.coords, self.velocity_symbols, self.acceleration_symbols,
                              self.param_symbols], R + _flat(Rq) + _flat(Rv) + _flat(Ra),
                             "residual_derivatives")

    @cached_property
    def _mass_txv(self):
        """M(q) (M, V form) or L_vv(t, q, v) as a function of (t, q, v, params) -> flat list."""
        mass = self._Lvv if self.mass_expr is None else self.mass_expr.tolist()
        return self._compile(self._txvp, _flat(mass), "mass")

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
        return self._compile([self.coords, self.param_symbols], list(self.mass_expr), "M")

    def mass(self, q: VectorLike, v: VectorLike | None = None,
             t: NumberLike | None = None) -> Matrix:
        """Evaluate the mass matrix M(q) (for a general Lagrangian: L_vv(t, q, v)).

        Parameters
        ----------
        q : array_like
            Positions.
        v : array_like, optional
            Velocities (general Lagrangian only; default 0).
        t : number, optional
            Time (general Lagrangian only; default 0).

        Returns
        -------
        numpy.ndarray
            The n x n matrix.
        """
        n = self.dof
        if self.mass_expr is not None:
            return self._arr(self._mass(q, self.param_values), (n, n))
        v = self.ctx.zeros(n) if v is None else v
        return self._arr(self._mass_txv(self._t(t), q, v, self.param_values), (n, n))

    def potential(self, q: VectorLike) -> Real:
        """Evaluate the potential V(q).

        Parameters
        ----------
        q : array_like
            Positions.

        Returns
        -------
        number
            V(q).

        Raises
        ------
        TypeError
            For a system given by a general Lagrangian (no V).
        """
        return self._mv_piece("potential", lambda: [self.potential_expr])(q, self.param_values)[0]

    def _mv_piece(self, key, exprs):
        """The generated function ``key`` of (q, params) returning ``exprs()``, made once per
        system and kind of kernel (:func:`mpvi.compiled.cbackend.active`): an energy at every
        node of a long run looks it up, where making its cache key (hashing the
        expressions) cost more than evaluating it."""
        self._mv_form(key)
        return self._kept(key, lambda: self._compile([self.coords, self.param_symbols],
                                                     exprs(), key))

    def _kept(self, key, build):
        """``build()`` made once per system and kind of kernel (compiled or not, on balls
        or not: :func:`mpvi.compiled.cbackend.active`, ``balls_active``) and kept."""
        ctx = self.ctx
        memo = (key, cbackend.active(ctx), cbackend.balls_active(ctx))
        kept = self.__dict__.setdefault("_kept_pieces", {})
        if memo not in kept:
            kept[memo] = build()
        return kept[memo]

    def dmass(self, q: VectorLike) -> Array:
        """Evaluate the first derivatives of the mass matrix.

        Parameters
        ----------
        q : array_like
            Positions.

        Returns
        -------
        numpy.ndarray
            ``dM[g, a, b] = d M_ab / d q^g`` (n x n x n).

        Raises
        ------
        TypeError
            For a system given by a general Lagrangian (no M).
        """
        n, M = self.dof, self.mass_expr
        self._mv_form("dM")
        f = self._mv_piece("dmass", lambda: [e for xg in self.coords for e in sp.diff(M, xg)])
        return self._arr(f(q, self.param_values), (n, n, n))

    def d2mass(self, q: VectorLike) -> Array:
        """Evaluate the second derivatives of the mass matrix.

        Parameters
        ----------
        q : array_like
            Positions.

        Returns
        -------
        numpy.ndarray
            ``d2M[g, d, a, b] = d^2 M_ab / d q^g d q^d`` (n x n x n x n).

        Raises
        ------
        TypeError
            For a system given by a general Lagrangian (no M).
        """
        n, M, x = self.dof, self.mass_expr, self.coords
        self._mv_form("d2M")
        f = self._mv_piece("d2mass",
                           lambda: [e for xg in x for xd in x for e in sp.diff(M, xd, xg)])
        return self._arr(f(q, self.param_values), (n, n, n, n))

    def grad_potential(self, q: VectorLike) -> Vector:
        """Evaluate the gradient of the potential, dV/dq.

        Parameters
        ----------
        q : array_like
            Positions.

        Returns
        -------
        numpy.ndarray
            ``dV/dq^g`` (length n).

        Raises
        ------
        TypeError
            For a system given by a general Lagrangian (no V).
        """
        self._mv_form("grad V")
        f = self._mv_piece("grad_potential",
                           lambda: [sp.diff(self.potential_expr, xi) for xi in self.coords])
        return self._arr(f(q, self.param_values), (self.dof,))

    def hess_potential(self, q: VectorLike) -> Matrix:
        """Evaluate the Hessian of the potential, d2V/dq dq.

        Parameters
        ----------
        q : array_like
            Positions.

        Returns
        -------
        numpy.ndarray
            ``d^2 V / d q^a d q^b`` (n x n).

        Raises
        ------
        TypeError
            For a system given by a general Lagrangian (no V).
        """
        self._mv_form("hess V")
        V, x = self.potential_expr, self.coords
        f = self._mv_piece("hess_potential", lambda: [sp.diff(V, a, b) for a in x for b in x])
        n = self.dof
        return self._arr(f(q, self.param_values), (n, n))

    # ----- force ------------------------------------------------------------------------
    def _t(self, t):
        return self.ctx.zero if t is None else t

    def force(self, t: NumberLike | None, q: VectorLike, v: VectorLike) -> Vector:
        """Evaluate the generalized force F(t, q, v).

        Parameters
        ----------
        t : number or None
            Time (None: 0).
        q : array_like
            Positions.
        v : array_like
            Velocities.

        Returns
        -------
        numpy.ndarray
            F (length n), zero for a conservative system.
        """
        if not self.has_force:
            return self.ctx.zeros(self.dof)
        return self._arr(self._force(self._t(t), q, v, self.param_values), (self.dof,))

    def force_derivatives(self, t: NumberLike | None, q: VectorLike,
                          v: VectorLike) -> tuple[Array, ...]:
        """Evaluate the force and its derivatives, (F, dF/dq, dF/dv), at (t, q, v).

        Parameters
        ----------
        t : number or None
            Time (None: 0).
        q : array_like
            Positions.
        v : array_like
            Velocities.

        Returns
        -------
        tuple of numpy.ndarray
            F (length n) and the n x n matrices dF/dq, dF/dv (rows index F, columns q or
            v).
        """
        n = self.dof
        vals = self._force_full(self._t(t), q, v, self.param_values)
        return (self._arr(vals[:n], (n,)), self._arr(vals[n:n + n * n], (n, n)),
                self._arr(vals[n + n * n:], (n, n)))

    # ----- Lagrangian derivatives at a point (what the variational schemes use) ----------------
    def lagrangian(self, q: VectorLike, v: VectorLike, t: NumberLike | None = None) -> Real:
        """Evaluate the Lagrangian L(t, q, v).

        Parameters
        ----------
        q : array_like
            Positions.
        v : array_like
            Velocities.
        t : number, optional
            Time (default 0; not read for the M, V form).

        Returns
        -------
        number
            L.
        """
        if self.mass_expr is not None:
            return (v @ self.mass(q) @ v) / 2 - self.potential(q)
        return self._lagrangian(self._t(t), q, v, self.param_values)[0]

    def node_gradient(self, x: VectorLike, v: VectorLike,
                      t: NumberLike | None = None) -> tuple[Array, ...]:
        """Evaluate (P, G) = (dL/dv, dL/dq) at (t, x, v).

        Parameters
        ----------
        x : array_like
            Positions.
        v : array_like
            Velocities.
        t : number, optional
            Time (default 0).

        Returns
        -------
        tuple of numpy.ndarray
            P and G, each of length n.
        """
        n = self.dof
        vals = self._node_grad(self._t(t), x, v, self.param_values)
        return self._arr(vals[:n], (n,)), self._arr(vals[n:], (n,))

    def node_derivatives(self, x: VectorLike, v: VectorLike,
                         t: NumberLike | None = None) -> tuple[Array, ...]:
        """Evaluate the first and second derivatives of L at (t, x, v).

        What the variational schemes use at a quadrature node.

        Parameters
        ----------
        x : array_like
            Positions.
        v : array_like
            Velocities.
        t : number, optional
            Time (default 0).

        Returns
        -------
        tuple of numpy.ndarray
            (P, G, L_vv, B, A): P = dL/dv and G = dL/dq (length n), the n x n matrices
            L_vv, ``B[g, d] = d2L/dq^g dv^d`` and ``A[g, d] = d2L/dq^g dq^d``.
        """
        n = self.dof
        vals = self._node_full(self._t(t), x, v, self.param_values)
        k = 2 * n
        return (self._arr(vals[:n], (n,)), self._arr(vals[n:k], (n,)),
                self._arr(vals[k:k + n * n], (n, n)), self._arr(vals[k + n * n:k + 2 * n * n], (n, n)),
                self._arr(vals[k + 2 * n * n:], (n, n)))

    def residual_derivatives(self, t: NumberLike | None, x: VectorLike, v: VectorLike,
                             a: VectorLike) -> tuple[Array, ...]:
        """Evaluate the residual of the equations of motion and its derivatives.

        R = L_vv a + L_vq v + L_vt - L_q - F, zero along a motion; the weighted-residual
        (Galerkin) equations use it.  R is Mutze's guiding force G(t, x, v, a) (mutze
        eqs. 10-11), the equation of the g-family (eq. 72).

        Parameters
        ----------
        t : number or None
            Time (None: 0).
        x : array_like
            Positions.
        v : array_like
            Velocities.
        a : array_like
            Accelerations.

        Returns
        -------
        tuple of numpy.ndarray
            R (length n) and the n x n matrices dR/dx, dR/dv, dR/da.
        """
        n = self.dof
        vals = self._residual_full(self._t(t), x, v, a, self.param_values)
        m = n * n
        return (self._arr(vals[:n], (n,)), self._arr(vals[n:n + m], (n, n)),
                self._arr(vals[n + m:n + 2 * m], (n, n)), self._arr(vals[n + 2 * m:], (n, n)))

    # ----- Legendre map, acceleration, energy -------------------------------------------
    def _point(self, q):
        return ", ".join(self.ctx.to_str(x, 8) for x in q)

    def _solve_mass(self, matrix, rhs, q):
        try:
            return self.ctx.solve(matrix, rhs)
        except SingularMatrixError as exc:
            raise SingularMatrixError(f"{self.name}: the mass matrix is singular at "
                                      f"q = ({self._point(q)}): {exc}") from None

    def momentum(self, q: VectorLike, v: VectorLike, t: NumberLike | None = None) -> Vector:
        """Compute the momentum p = dL/dv (= M(q) v for the M, V form): the Legendre map.

        Parameters
        ----------
        q : array_like
            Positions.
        v : array_like
            Velocities.
        t : number, optional
            Time (default 0).

        Returns
        -------
        numpy.ndarray
            The momentum p (length n).
        """
        if self.mass_expr is not None:
            return self.mass(q) @ v
        return self.node_gradient(q, v, t)[0]

    def velocity(self, q: VectorLike, p: VectorLike, t: NumberLike | None = None,
                 guess: VectorLike | None = None) -> Vector:
        """Compute the velocity v with dL/dv(t, q, v) = p: the inverse Legendre map.

        v = M(q)^-1 p for the M, V form; a linear solve when L is quadratic in v.  For a
        Lagrangian that is not quadratic in v this is damped Newton (the step is halved
        until the residual is finite and smaller), from ``guess``, then v = 0, then
        v = p.

        Parameters
        ----------
        q : array_like
            Positions.
        p : array_like
            Momenta.
        t : number, optional
            Time (default 0).
        guess : array_like, optional
            A first Newton start (a Lagrangian not quadratic in v only).

        Returns
        -------
        numpy.ndarray
            The velocity v (length n).

        Raises
        ------
        SingularMatrixError
            A mass matrix singular at q (naming the point).
        NewtonError
            No Newton start converges.
        """
        if self.mass_expr is not None:
            return self._solve_mass(self.mass(q), p, q)
        ctx = self.ctx
        zero = ctx.zeros(self.dof)
        if self.quadratic_in_velocity:      # p = L_vv (t, q) v + dL/dv(t, q, 0)
            return self._solve_mass(self.mass(q, zero, t), p - self.momentum(q, zero, t), q)
        from mpvi.numbers.newton import NewtonError, solve_info

        def fun(v, jacobian):
            r = self.momentum(q, v, t) - p
            return (r, self.mass(q, v, t)) if jacobian else r
        starts = [np.asarray(guess, dtype=ctx.dtype)] if guess is not None else []
        starts += [zero, ctx.asarray(p)]
        what = f"{self.name}: velocity from momentum at q = ({self._point(q)})"
        for k, start in enumerate(starts):
            try:
                return solve_info(fun, start, ctx, what=what, damped=True)[0]
            except NewtonError:
                if k == len(starts) - 1:
                    raise

    def acceleration(self, t: NumberLike | None, q: VectorLike, v: VectorLike) -> Vector:
        """Compute the acceleration a = q'' at (t, q, v) from the equations of motion.

        L_vv a = L_q + F - L_vq v - L_vt (mutze eq. 15), solved at context precision.

        Parameters
        ----------
        t : number or None
            Time (None: 0).
        q : array_like
            Positions.
        v : array_like
            Velocities.

        Returns
        -------
        numpy.ndarray
            The acceleration a (length n).

        Raises
        ------
        SingularMatrixError
            A singular L_vv (naming the point).
        """
        n = self.dof
        vals = self._acceleration_parts(self._t(t), q, v, self.param_values)
        return self._solve_mass(self._arr(vals[:n * n], (n, n)), self._arr(vals[n * n:], (n,)), q)

    def acceleration_derivatives(self, t: NumberLike | None, q: VectorLike,
                                 v: VectorLike) -> tuple[Array, ...]:
        """Compute the acceleration and its derivatives (A, dA/dq, dA/dv) at (t, q, v).

        A as :meth:`acceleration`; its derivatives from G(t, q, v, A(t, q, v)) = 0 by
        implicit differentiation, dA/dq = -G_a^-1 G_q and dA/dv = -G_a^-1 G_v, with G the
        residual of :meth:`residual_derivatives`.

        Parameters
        ----------
        t : number or None
            Time (None: 0).
        q : array_like
            Positions.
        v : array_like
            Velocities.

        Returns
        -------
        tuple of numpy.ndarray
            A (length n) and the n x n matrices dA/dq, dA/dv (rows index A).

        Raises
        ------
        SingularMatrixError
            A singular L_vv (naming the point).
        """
        a = self.acceleration(t, q, v)
        _, Gq, Gv, Ga = self.residual_derivatives(t, q, v, a)
        return a, -self._solve_mass(Ga, Gq, q), -self._solve_mass(Ga, Gv, q)

    def hamiltonian(self, q: VectorLike, p: VectorLike, t: NumberLike | None = None) -> Real:
        """Compute the Hamiltonian (the energy) H = p^T v - L at v = velocity(q, p).

        For the M, V form, H = 1/2 p^T M(q)^-1 p + V(q) (top2025 eq. (15)).
        ``energy`` is the same method.

        Parameters
        ----------
        q : array_like
            Positions.
        p : array_like
            Momenta.
        t : number, optional
            Time (default 0).

        Returns
        -------
        number
            H.

        Raises
        ------
        SingularMatrixError, NewtonError
            As :meth:`velocity`.
        """
        v = self.velocity(q, p, t)
        if self.mass_expr is not None:
            return (p @ v) / 2 + self.potential(q)
        return p @ v - self.lagrangian(q, v, t)

    energy = hamiltonian

    def energies(self, q: Matrix, p: Matrix, t: NumberLike | None = None) -> Vector:
        """Compute the Hamiltonian at many points: row j of ``q`` and ``p``.

        The numbers of :meth:`hamiltonian` at each point, by the same operations (for the
        M, V form v = M(q)^-1 p by :func:`mpvi.numbers.linalg.solve_dense`, then
        p^T v / 2 + V(q)); the generated functions are looked up once, not at every point
        (an energy error along a run of 80,000 nodes).

        Parameters
        ----------
        q : array_like
            Positions, one point per row.
        p : array_like
            Momenta, one point per row.
        t : number, optional
            Time (default 0), the same at every point.

        Returns
        -------
        numpy.ndarray
            H at each point.

        Raises
        ------
        SingularMatrixError, NewtonError
            As :meth:`hamiltonian`, at the first point where it raises.
        ValueError
            ``q`` and ``p`` with different numbers of points.
        """
        if len(q) != len(p):
            raise ValueError(f"{self.name}: energies of {len(q)} positions and {len(p)} momenta")
        ctx, dtype = self.ctx, self.ctx.dtype
        own = type(self).hamiltonian is LagrangianSystem.hamiltonian and \
            type(self).energy is LagrangianSystem.energy          # not a subclass's own
        if self.mass_expr is None or not own:
            return np.array([self.hamiltonian(x, y, t) for x, y in zip(q, p)], dtype=dtype)
        mass, params, n = self._mass, self.param_values, self.dof
        potential = self._mv_piece("potential", lambda: [self.potential_expr])
        compiled = self._energy_kernel()
        out = []
        if compiled is not None:            # the rows the C takes, the same bits
            out = compiled(np.asarray(q).tolist(), np.asarray(p).tolist(), list(params),
                           ctx.eps) or []
        for x, y in zip(q[len(out):], p[len(out):]):
            y = np.asarray(y, dtype=dtype)
            m = mass(x, params)
            try:
                v = solve_dense([m[i * n:(i + 1) * n] for i in range(n)], y.tolist(), ctx)
            except SingularMatrixError:
                self.hamiltonian(x, y, t)               # raises, naming the point
                raise
            out.append((y @ np.array(v, dtype=dtype)) / 2 + potential(x, params)[0])
        return np.array(out, dtype=dtype)

    def _energy_kernel(self):
        """The compiled :meth:`energies` of an M, V system in a gmp context
        (:func:`mpvi.compiled.cbackend.energy_function`, from the sources of the M and V
        functions :meth:`mass` and :meth:`potential` run), made once per system and kind of
        kernel; None where there is none."""
        ctx = self.ctx
        if not cbackend.active(ctx):
            return None

        def build():
            args = [self.coords, self.param_symbols]
            parts = [generate_source(args, list(self.mass_expr), ctx, "M"),
                     generate_source(args, [self.potential_expr], ctx, "potential")]
            with cbackend.kernels_of(self.name):
                return cbackend.energy_function(
                    [src for src, _ in parts], [table for _, table in parts], ctx.prec,
                    self.dof, len(self.param_symbols))
        return self._kept("energies", build)

    def energy_obstacle(self) -> str | None:
        """Tell why the energy H = p^T v - L is not conserved along the motion, or None.

        The one rule of which systems have an energy (:meth:`mpvi.Solution.energy_drift`):
        an autonomous Lagrangian (no :data:`TIME` in L) and no force.  A force (damping, a
        drive) or a time-dependent L exchanges energy with the outside.

        Returns
        -------
        str or None
            The reason, naming the system, or None when H is a constant of the motion.
        """
        if self.has_force:
            return (f"{self.name} has a generalized force F(t, q, v), which does work: its "
                    "energy H = p.v - L is not conserved")
        if self.time_dependent:
            return (f"{self.name} has a Lagrangian that depends on the time t: its energy "
                    "H = p.v - L is not conserved")
        return None

    def hamiltonian_rhs(self, q: VectorLike, p: VectorLike,
                        t: NumberLike | None = None) -> tuple[Array, ...]:
        """Evaluate Hamilton's equations: (q', p') = (v, dL/dq + F) at v = velocity(q, p).

        Parameters
        ----------
        q : array_like
            Positions.
        p : array_like
            Momenta.
        t : number, optional
            Time (default 0).

        Returns
        -------
        tuple of numpy.ndarray
            The derivatives q' and p', each of length n.

        Raises
        ------
        SingularMatrixError, NewtonError
            As :meth:`velocity`.
        """
        v = self.velocity(q, p, t)
        _, G = self.node_gradient(q, v, t)
        if self.has_force:
            G = G + self.force(t, q, v)
        return v, G

    # ----- validation ----------------------------------------------------------------------
    def check_vector(self, values: VectorLike, label: str) -> Vector:
        """Convert and validate a vector of initial data (length dof, finite).

        Parameters
        ----------
        values : sequence of numbers
            Anything the context's ``num`` reads.
        label : str
            What the vector is, for the error message (e.g. "initial position q0").

        Returns
        -------
        numpy.ndarray
            The vector of context numbers.

        Raises
        ------
        ValueError
            Not a sequence of dof numbers, or a non-finite entry.
        PrecisionError
            An entry that would lose precision (naming ``label[i]``).
        TypeError
            An entry the context cannot read.
        """
        ctx = self.ctx
        if isinstance(values, (str, bytes, Mapping, AbstractSet)) or not hasattr(values, "__len__"):
            raise ValueError(f"{self.name}: {label} must be a sequence of {self.dof} numbers "
                             f"({', '.join(self.coord_names)}) in order, got {values!r}")
        items = list(values) if not isinstance(values, np.ndarray) or values.ndim == 1 else None
        if items is None or len(items) != self.dof:
            shape = np.shape(values) if items is None else (len(items),)
            raise ValueError(f"{self.name}: {label} must be a vector of {self.dof} numbers "
                             f"({', '.join(self.coord_names)}), got shape {shape}")
        x = np.array([ctx.number(v, f"{self.name}: {label}[{i}]") for i, v in enumerate(items)],
                     dtype=ctx.dtype)
        if not ctx.all_finite(x):
            raise ValueError(f"{self.name}: {label} has a non-finite entry (nan or inf): "
                             f"({', '.join(ctx.to_str(e, 8) for e in x)})")
        return x

    def mass_rows(self, t: NumberLike | None, q: VectorLike, v: VectorLike) -> list[list[Real]]:
        """Evaluate M(q) (or L_vv(t, q, v)) as a list of rows, for the checks.

        Parameters
        ----------
        t : number or None
            Time (None: 0).
        q : array_like
            Positions.
        v : array_like
            Velocities (not read for the M, V form).

        Returns
        -------
        list of list
            The n rows of the mass matrix.
        """
        n = self.dof
        flat = self._mass_txv(self._t(t), q, v, self.param_values)
        return [flat[i * n:(i + 1) * n] for i in range(n)]

    def check_state(self, t: NumberLike | None, q: VectorLike,
                    v: VectorLike | None = None) -> None:
        """Validate the initial point of an integration.

        The mass matrix (L_vv for a general Lagrangian) must be positive definite at
        (t, q, v).

        Parameters
        ----------
        t : number or None
            Time (None: 0).
        q : array_like
            Positions.
        v : array_like, optional
            Velocities (default 0).

        Raises
        ------
        ValueError
            A mass matrix that is not positive definite (naming the point and the pivot).
        """
        ctx = self.ctx
        v = ctx.zeros(self.dof) if v is None else v
        try:
            ctx.cholesky(self.mass_rows(t, q, v), f"{self.name}: the mass matrix at the "
                         f"initial point q = ({self._point(q)})")
        except NotPositiveDefiniteError as exc:
            raise ValueError(str(exc)) from None

    @cached_property
    def needs_regularity_check(self) -> bool:
        """Whether a node can be irregular (what :func:`mpvi.solve` checks after a step).

        False when the mass matrix is constant (checked once) and V (or L) is a
        polynomial, finite everywhere.
        """
        return self.model.needs_regularity_check

    @property
    def _regularity_exprs(self) -> tuple[list, list]:
        """(argument groups, expressions) of the regularity kernel: [V or L, M or L_vv
        entries] at (t, q, v, params) (also compiled by :func:`mpvi.engines.kernels.step_check`)."""
        mass = self._Lvv if self.mass_expr is None else self.mass_expr.tolist()
        first = self.lagrangian_expr if self.mass_expr is None else self.potential_expr
        return self._txvp, [first] + _flat(mass)

    @cached_property
    def _regularity(self):
        """[V or L, M or L_vv entries] at (t, q, v): one generated function for the check
        after every step."""
        return self._compile(*self._regularity_exprs, "regularity")

    def irregularity(self, t: NumberLike | None, q: VectorLike, v: VectorLike) -> str | None:
        """Tell what, if anything, makes the system irregular at (t, q, v).

        Regular: V (L for a general Lagrangian) finite, the mass matrix (L_vv) finite and
        positive definite (an LDL^T test without square roots, n^3/6 multiplications).
        The check the driver runs after every step.

        Parameters
        ----------
        t : number or None
            Time (None: 0).
        q : array_like
            Positions.
        v : array_like
            Velocities (not read for the M, V form).

        Returns
        -------
        str or None
            None if the system is regular there, else what is wrong.
        """
        ctx, n = self.ctx, self.dof
        vals = self._regularity(self._t(t), q, v, self.param_values)
        if not ctx.isfinite(vals[0]):
            what = "potential V" if self.mass_expr is not None else "Lagrangian"
            return f"the {what} is not finite"
        if not all(map(ctx.isfinite, vals[1:])):
            return "the mass matrix is not finite"
        num = ctx.num                   # an int entry: int / int would be a float division
        rows = [[num(x) if type(x) is int else x for x in vals[1 + i * n:1 + (i + 1) * n]]
                for i in range(n)]
        if not is_positive_definite(rows):
            return "the mass matrix is not positive definite"
        return None

    def diagnose(self, t: NumberLike | None, q: VectorLike, v: VectorLike) -> str | None:
        """Tell in a sentence what is wrong with the system at (t, q, v), if anything.

        A non-finite state, potential, Lagrangian or mass matrix, a mass matrix that is
        not positive definite, or a system that cannot be evaluated there.  Used to name
        the likely cause of a failed step.

        Parameters
        ----------
        t : number or None
            Time (None: 0).
        q : array_like
            Positions.
        v : array_like
            Velocities.

        Returns
        -------
        str or None
            The sentence, or None if nothing is wrong.
        """
        ctx = self.ctx
        where = f"q = ({self._point(q)})"
        if not (ctx.all_finite(q) and ctx.all_finite(v)):
            return f"the state is not finite at {where}"
        try:
            if self.mass_expr is not None and not ctx.isfinite(self.potential(q)):
                return f"the potential V is not finite at {where}"
            if not ctx.isfinite(self.lagrangian(q, v, self._t(t))):
                return f"the Lagrangian is not finite at {where}"
            rows = self.mass_rows(t, q, v)
        except (ArithmeticError, ValueError, TypeError) as exc:
            return f"the system cannot be evaluated at {where} ({exc})"
        if not ctx.all_finite(rows):
            return f"the mass matrix is not finite at {where}"
        if not is_positive_definite(rows):
            return f"the mass matrix is not positive definite at {where}"
        return None


def _short(value, width=60):
    shown = repr(value)
    return shown if len(shown) <= width else shown[:width - 3] + "..."


@entry
def Lagrangian(L: ExprLike, q: Sequence[sympy.Symbol] | sympy.Symbol,
               v: Sequence[sympy.Symbol] | sympy.Symbol,
               params: Mapping[sympy.Symbol, NumberLike] | None = None,
               ctx: Context | None = None, name: str | None = None) -> LagrangianSystem:
    """Build a mechanical system from its Lagrangian in one line.

    ``mpvi.Lagrangian(L, [x, y], [vx, vy])`` is
    :meth:`LagrangianSystem.from_lagrangian` with the arguments in the order one writes
    them and defaults for the rest: any L(t, q, v) written as one sympy expression in the
    coordinates ``q``, the velocity symbols ``v`` (the symbols you wrote q' as), the
    parameters and the time :data:`mpvi.TIME`.  Without ``ctx`` the system computes in a
    64-digit MPFR context, ``mpvi.GMPContext(64)`` (:data:`DEFAULT_DPS`).

    Parameters
    ----------
    L : sympy expression or str
        The Lagrangian L(t, q, v); text is read by
        :func:`mpvi.ground.expressions.parse_expression` (nothing in it runs as code).
    q : sequence of sympy.Symbol, or one Symbol
        The coordinates (their names label the outputs).
    v : sequence of sympy.Symbol, or one Symbol
        The velocity symbols, one per coordinate, in the same order.
    params : mapping, optional
        Parameter symbols to values (strings, ints, Fractions, sympy numbers or context
        numbers; floats are refused in the mp contexts).
    ctx : Context, optional
        The number context; default ``mpvi.GMPContext(64)``.
    name : str, optional
        The system's name; default ``L(q1, q2, ...)`` from the coordinates.

    Returns
    -------
    LagrangianSystem
        The system (its equations of motion d/dt dL/dv - dL/dq = 0).

    Raises
    ------
    TypeError
        ``L`` that is not one expression (a list, a matrix, a function), ``q`` or ``v``
        not a sequence of symbols, ``params`` not a mapping.
    ValueError
        A velocity or coordinate that is not a sympy Symbol, as many velocities as
        coordinates not given, symbols that clash, symbols in L that are neither
        coordinates, velocities, parameters nor ``t``.
    PrecisionError
        A float literal in L (or a float parameter value) in an mp context: write
        ``sympy.Rational(1, 10)`` or ``"1/10"``.

    See Also
    --------
    LagrangianSystem.from_lagrangian : The same, with every argument explicit.
    """
    coords, velocities = _symbol_list(q, "q (the coordinates)"), _symbol_list(v, "v (the velocities)")
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise TypeError(f"Lagrangian: params must be a mapping of sympy symbols to values, got "
                        f"{type(params).__name__}")
    if name is None:
        name = f"L({', '.join(str(c) for c in coords)})"
    if ctx is None:
        ctx = GMPContext(DEFAULT_DPS)
    return LagrangianSystem.from_lagrangian(name, coords, velocities, L, dict(params), ctx)


def _symbol_list(value, what):
    """One symbol as a list of it; a sequence as a list; else TypeError naming ``what``."""
    if isinstance(value, sp.Symbol):
        return [value]
    if isinstance(value, (str, bytes, sp.Basic)) or not isinstance(value, (Sequence, sp.MatrixBase)):
        raise TypeError(f"Lagrangian: {what} must be a list of sympy Symbols, got "
                        f"{type(value).__name__} {_short(value)}")
    return list(value)


def _rebuild_system(cls, name, coords, velocities, mass, potential, lagrangian, params, ctx,
                    force, sources=None):
    """Unpickle a :class:`LagrangianSystem` (see ``__reduce__``): the model is found again
    in this process's cache, or derived once.  ``sources`` are the exact values the
    parameters were given (what :meth:`LagrangianSystem.with_context` reads), if any."""
    self = cls.__new__(cls)
    self._init_common(name, coords, velocities, params, ctx)
    if mass is not None:
        model = mass_model(name, self.coords, self.velocity_symbols, self.param_symbols,
                           mass, potential, force)
    else:
        model = lagrangian_model(name, self.coords, self.velocity_symbols, self.param_symbols,
                                 lagrangian, force)
    self._bind(model)
    # what with_context reads: the exact values given, else the numbers themselves (a
    # dump read at more digits would pass for a more precise value than it is)
    self._params = (sources if sources is not None
                    else dict(zip(self.param_symbols, self.param_values)))
    return self
