"""The context-free symbolic model of a mechanical system: its one sympy derivation.

A :class:`Model` holds what a :class:`mpvi.LagrangianSystem` is made of before any number
is chosen: the symbols (coordinates, velocities, parameters), L (and M, V for the M, V
form), the force F, and every derivative derived from them once (P = dL/dv, G = dL/dq,
L_vv, the blocks of :meth:`Model.symbolic`), the calls the code will evaluate
(:func:`mpvi.compiled.codegen.function_calls`) and the float literals an mp context refuses.  It
holds no number and no context.

Models are cached per process by their expressions (:func:`mass_model`,
:func:`lagrangian_model`): a system built again with the same expressions -- in another
context, at other digits, with other parameter values -- reuses its model, and the
generated code, printed once per model (:func:`mpvi.compiled.codegen.printed_source`), is only
bound to the context's numbers.  :data:`DERIVATIONS` counts the models derived.
"""
from __future__ import annotations

from functools import cached_property

import sympy as sp

from mpvi.compiled.codegen import TIME, check_expressions, function_calls

__all__ = ["Model", "mass_model", "lagrangian_model", "DERIVATIONS"]

DERIVATIONS = [0]
"""How many models this process has derived (cache misses of :func:`mass_model` and
:func:`lagrangian_model`): binding a system to another context derives none."""

_MODELS: dict = {}

_SYMBOLIC: dict = {}
"""Symbolic derivative blocks per model signature (:meth:`Model.symbolic`)."""

_ACCELERATIONS: list = []


def _flat(m):
    return [e for row in m for e in row]


def _key(e):
    """A hashable form of an expression, a matrix or None."""
    if e is None:
        return None
    if isinstance(e, sp.MatrixBase):
        return (e.shape, tuple(e))
    return e


def mass_model(name, coords, velocities, params, M, V, F):
    """The model of L = 1/2 v^T M(q) v - V(q) with force F (a column or None), cached.

    Raises
    ------
    ValueError
        As :class:`mpvi.LagrangianSystem` (shape, symmetry, stray symbols).
    """
    key = ("M, V", name, tuple(coords), tuple(velocities), tuple(params), _key(M), V, _key(F))
    model = _MODELS.get(key)
    if model is None:
        model = _MODELS[key] = Model(name, coords, velocities, params, M, V, None, F)
    return model


def lagrangian_model(name, coords, velocities, params, L, F):
    """The model of a general Lagrangian L(t, q, v) with force F (a column or None), cached.

    Raises
    ------
    ValueError
        As :meth:`mpvi.LagrangianSystem.from_lagrangian`.
    """
    key = ("L", name, tuple(coords), tuple(velocities), tuple(params), L, _key(F))
    model = _MODELS.get(key)
    if model is None:
        model = _MODELS[key] = Model(name, coords, velocities, params, None, None, L, F)
    return model


class Model:
    """The symbolic model of a system (module doc): built once, shared by every system
    with the same expressions, in any context.

    Parameters
    ----------
    name : str
        The system's name (in messages).
    coords, velocities, params : sequence of sympy.Symbol
        The coordinates, the velocity symbols and the parameter symbols.
    mass, potential : sympy.Matrix and expression, or None
        M(q) and V(q) (the M, V form), or None with ``lagrangian`` given.
    lagrangian : sympy expression or None
        L(t, q, v) (a general Lagrangian), or None with M and V given.
    force : sympy.Matrix or None
        F(t, q, v), n x 1.

    Raises
    ------
    ValueError
        A mass matrix of the wrong shape or not symmetric, symbols that are neither
        coordinates, velocities, time nor parameters, a non-finite constant or a sympy
        object generated code cannot evaluate
        (:func:`mpvi.compiled.codegen.check_expressions`).
    """

    def __init__(self, name, coords, velocities, params, mass, potential, lagrangian, force):
        DERIVATIONS[0] += 1
        self.name = name
        self.coords = list(coords)
        self.velocity_symbols = list(velocities)
        self.param_symbols = list(params)
        n = self.dof = len(self.coords)
        x, v, t = self.coords, self.velocity_symbols, TIME
        check_expressions([lagrangian] if mass is None else [*mass, potential],
                          f"{name}: {'L' if mass is None else 'M or V'}")
        if force is not None:
            check_expressions(list(force), f"{name}: F")
        if mass is not None:
            if mass.shape != (n, n):
                raise ValueError(f"{name}: mass matrix is {mass.shape[0]}x{mass.shape[1]}, "
                                 f"expected {n}x{n}")
            if sp.simplify(mass - mass.T) != sp.zeros(n, n):
                raise ValueError(f"{name}: mass matrix M(q) is not symmetric")
            self._check_symbols("M or V", mass.free_symbols | potential.free_symbols, set(x))
            vv = sp.Matrix(v)
            lagrangian = (vv.T * mass * vv)[0, 0] / 2 - potential
            self.float_literals = self._floats(mass, potential)
        else:
            self._check_symbols("L", lagrangian.free_symbols, set(x) | set(v) | {t})
            self.float_literals = self._floats(lagrangian)
        self.mass_expr, self.potential_expr = mass, potential
        self.calls = function_calls([lagrangian] + ([] if force is None else list(force)),
                                    [*x, *v, t])
        self.lagrangian_expr = lagrangian
        self.time_dependent = lagrangian.has(t)
        self.has_force = force is not None
        if force is not None:
            extra = force.free_symbols - set(x) - set(v) - {t} - set(self.param_symbols)
            if extra:
                raise ValueError(f"{name}: symbols {sorted(map(str, extra))} in F are not "
                                 "t, coordinates, velocities or parameters")
            self.force_floats = self._floats(force)
            self.force_expr = force
        else:
            self.force_floats = []
            self.force_expr = sp.zeros(n, 1)
        P = [sp.diff(lagrangian, vi) for vi in v]
        G = [sp.diff(lagrangian, xi) for xi in x]
        self._P, self._G = P, G
        self._Lvv = [[sp.diff(P[g], v[d]) for d in range(n)] for g in range(n)]
        self.quadratic_in_velocity = not any(e.has(*v) for e in _flat(self._Lvv))
        m = self._Lvv if mass is None else mass.tolist()
        self.constant_mass = not any(e.has(*x, *v, t) for e in _flat(m))
        self._checked: set = set()

    def __repr__(self):
        return f"<Model {self.name!r}: {self.dof} dof ({', '.join(map(str, self.coords))})>"

    def _check_symbols(self, what, symbols, allowed):
        free = symbols - allowed - set(self.param_symbols)
        if free:
            raise ValueError(f"{self.name}: symbols {sorted(map(str, free))} in {what} are "
                             "neither coordinates nor parameters")

    @staticmethod
    def _floats(*exprs):
        return sorted({str(f) for e in exprs for f in sp.sympify(e, strict=True).atoms(sp.Float)})

    def check_context(self, ctx, name):
        """Refuse what ``ctx`` cannot evaluate at its precision: a float literal in an mp
        context (it would cap the digits at 53 bits), a function the context does not
        have (:func:`mpvi.compiled.codegen.check_calls`; checked once per kind of context).

        Raises
        ------
        PrecisionError, ValueError
            Naming ``name``.
        """
        from mpvi.compiled.codegen import check_calls
        from mpvi.numbers.context import PrecisionError
        for floats in (self.float_literals, self.force_floats):
            if ctx.is_mp and floats:
                raise PrecisionError(
                    f"{name}: float literal(s) {', '.join(floats)} in L, M, V or F would cap "
                    f"a {ctx.dps}-digit computation at 53 bits; write sp.Rational(1, 10) or "
                    "make it a parameter with a string value ('0.1')")
            if floats is self.float_literals and type(ctx) not in self._checked:
                check_calls(self.calls, name, ctx)
                self._checked.add(type(ctx))

    @cached_property
    def signature(self) -> tuple:
        """What the generated code depends on: L, F, the symbols, the parameter symbols."""
        return (self.lagrangian_expr, tuple(self.force_expr), tuple(self.coords),
                tuple(self.velocity_symbols), tuple(self.param_symbols))

    @cached_property
    def needs_regularity_check(self) -> bool:
        """Whether a node can be irregular: False when M is constant and V (or L) a
        polynomial."""
        x, v = self.coords, self.velocity_symbols
        if self.mass_expr is not None:
            smooth = self.potential_expr.is_polynomial(*x)
        else:
            smooth = self.lagrangian_expr.is_polynomial(*x, *v)
        return not (self.constant_mass and smooth)

    @cached_property
    def inverse_mass(self) -> sp.Matrix:
        """M(q)^-1 (the M, V form), exact."""
        return sp.Matrix(self.mass_expr).inv()

    @cached_property
    def field_qv(self) -> list:
        """The (q, v) field of the M, V form: q' = v, v' = M^-1 r (r of
        :meth:`symbolic` ``"motion"``), expanded."""
        _, r = self.symbolic("motion")
        return self.velocity_symbols + [sp.expand(a) for a in self.inverse_mass * sp.Matrix(r)]

    @property
    def acceleration_symbols(self) -> list:
        """The symbols a^1..a^n of the accelerations in :meth:`symbolic` ("residual")."""
        while len(_ACCELERATIONS) < self.dof:
            _ACCELERATIONS.append(sp.Dummy(f"a{len(_ACCELERATIONS)}"))
        return _ACCELERATIONS[:self.dof]

    def symbolic(self, what: str) -> tuple:
        """Symbolic derivative blocks, computed once per :attr:`signature`
        (:meth:`mpvi.LagrangianSystem.symbolic`).

        Raises
        ------
        ValueError
            Another ``what``.
        """
        key = (self.signature, what)
        if key not in _SYMBOLIC:
            _SYMBOLIC[key] = self._build_symbolic(what)
        return _SYMBOLIC[key]

    def _build_symbolic(self, what):
        n, x, v = self.dof, self.coords, self.velocity_symbols
        if what == "node":
            G = [g + f for g, f in zip(self._G, self.force_expr)]
            jac = [[[sp.diff(e, s) for s in syms] for e in exprs]
                   for exprs, syms in ((G, x), (G, v), (self._P, x))]
            return (self._P, G, *jac, self._Lvv)
        if what == "motion":
            r = [self._G[g] + self.force_expr[g]
                 - sum(sp.diff(self._P[g], x[d]) * v[d] for d in range(n))
                 - sp.diff(self._P[g], TIME) for g in range(n)]
            return self._Lvv, r
        if what == "residual":
            a = self.acceleration_symbols
            Lvv, r = self.symbolic("motion")
            R = [sum(Lvv[g][d] * a[d] for d in range(n)) - r[g] for g in range(n)]
            return (R, *[[[sp.diff(R[g], s[d]) for d in range(n)] for g in range(n)]
                         for s in (x, v, a)])
        raise ValueError(f"unknown symbolic block {what!r}")
