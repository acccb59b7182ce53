"""First-order systems y' = f(t, y), and the one RK4 step and the one GBS step of mpvi.

:class:`FirstOrderSystem` is a system kind like :class:`mpvi.LagrangianSystem`: a
:class:`mpvi.Problem` on it is solved by :func:`mpvi.solve` with the explicit methods
that work on a first-order form (``rk4``, ``gbs``, ``rk2``).  (The reduced Lagrange top of
top2025 eqs. (18aq) is one.)  A mechanical system's Hamiltonian form (q, p)' is
:func:`hamiltonian_field`.

``rk4_step``  -- the classical Runge-Kutta method of order 4.
``gbs_step``  -- Gragg-Bulirsch-Stoer extrapolation (Hairer, Norsett & Wanner, *Solving
ODEs I*, Sec. II.9): the explicit midpoint rule with n_i = 2, 4, ..., 2k substeps,
extrapolated in h^2 by the Aitken-Neville tableau

    T_{i,j+1} = T_{i,j} + (T_{i,j} - T_{i-1,j}) / ((n_i / n_{i-j})^2 - 1),

of order 2k.  All coefficients are rational, so the method runs at any precision.  How
small H and how many levels a 1e-55 reference needs depends on the system: levels = 16
at H = 1/200 s for the reduced top; for the double pendulum levels = 24 at H = 0.02 s
(error 1.4e-56 against a 400-bit heyoka.py Taylor run, ``benchmarks/pendulum_reference.py``),
while levels = 32 at H = 0.05 s, which top2025's Figs. 2-3 use, is accurate to 3.4e-53
and levels = 16 at H = 0.025 s to 6e-37.  More levels do not help at a fixed precision:
rounding is amplified by the Lebesgue constant of the extrapolation (3.6e7 at 24 levels,
2.3e10 at 32, 5.7e11 at 36), so 36 levels at H = 0.05 s give 1.2e-52 at 64 digits but
1.2e-59 at 90.  Always check by halving H, as the reproductions do.  It is the reference
for systems without an exact solution.

Both steps work on plain lists of context numbers (the generated field of
:func:`mpvi.kernels.hamiltonian_field` returns lists; a user's right-hand side returning
a numpy array is wrapped): one implementation for every path.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence, cast

import numpy as np

from .callables import check_literals, returned_vector
from .precision import entry_class

if TYPE_CHECKING:
    import sympy as sp

    from ._types import FirstOrderField, Real, Vector, VectorLike
    from .context import Context


@entry_class
@dataclass
class FirstOrderSystem:
    """A first-order system y' = rhs(t, y), a system kind for :func:`mpvi.solve`.

    Solved by the explicit methods that work on a first-order form (``rk4``, ``gbs``,
    ``rk2``); a :class:`mpvi.Problem` on it takes the initial state as ``q0`` and its
    exact solution (if any) as ``t -> y``.  The reduced Lagrange top of top2025 eqs.
    (18aq) is one.

    Parameters
    ----------
    name : str
        The system's name.
    rhs : callable
        ``rhs(t, y)`` takes a time and a numpy array of ``dim`` context numbers and returns
        a sequence of ``dim`` context numbers; ``rhs(t, y, ctx)`` (a parameter named
        ``ctx``) is given the number context too and computes with its operations, so
        the same system runs in another context (:meth:`with_context`; the balls of
        :func:`mpvi.certify`).  :meth:`from_expressions` builds one from expressions.
    dim : int
        The dimension of the state.
    ctx : Context
        The number context.
    labels : tuple of str, optional
        Names of the components (default y1, y2, ...).

    Raises
    ------
    ValueError
        A ``dim`` that is not a positive integer, or labels of another length.
    TypeError
        An ``rhs`` that is not callable.
    """

    name: str
    rhs: FirstOrderField
    dim: int
    ctx: Context
    labels: tuple[str, ...] = ()

    first_order = True
    is_linear = False

    def __post_init__(self):
        if isinstance(self.dim, bool) or not isinstance(self.dim, (int, np.integer)) or self.dim < 1:
            raise ValueError(f"{self.name}: dim must be a positive integer, got {self.dim!r}")
        if not callable(self.rhs):
            raise TypeError(f"{self.name}: rhs must be callable rhs(t, y)")
        self.labels = tuple(self.labels) or tuple(f"y{i + 1}" for i in range(self.dim))
        if len(self.labels) != self.dim:
            raise ValueError(f"{self.name}: {len(self.labels)} labels for dim = {self.dim}")
        check_literals(self.rhs, self.ctx, f"{self.name}: the right-hand side")
        try:
            self._takes_ctx = "ctx" in inspect.signature(self.rhs).parameters
        except (TypeError, ValueError):          # a builtin without a signature
            self._takes_ctx = False
        self._model: tuple[Any, Any] | None = None
        self._params: dict[Any, Any] = {}

    @classmethod
    def from_expressions(cls, name: str, variables: Sequence[sp.Symbol | str],
                         rhs: Sequence[sp.Expr | str], ctx: Context,
                         params: dict[sp.Symbol | str, object] | None = None,
                         labels: Sequence[str] = ()) -> FirstOrderSystem:
        """A first-order system y' = f(t, y) given as expressions.

        The field is generated code computing with ``ctx``'s own functions
        (:func:`mpvi.codegen.compile_exprs`), so the system can be bound to any context
        (:meth:`with_context`), Arb balls included: :func:`mpvi.certify` evaluates the
        field on balls.

        Parameters
        ----------
        name : str
            The system's name.
        variables : sequence of sympy.Symbol or str
            The state's symbols (names: plain identifiers), in order.
        rhs : sequence of sympy expressions or str
            The components of f in the variables, the parameters and the time
            :data:`mpvi.TIME` (``t``); a text is read by mpvi's own parser
            (:func:`mpvi.expressions.as_expression`), never evaluated.
        ctx : Context
            The number context.
        params : dict, optional
            Parameter symbols (or names) to values (ints, strings, Fractions, sympy
            numbers, numbers of the context: read exactly as the context reads them).
        labels : sequence of str, optional
            Names of the components (default the variables' names).

        Returns
        -------
        FirstOrderSystem

        Raises
        ------
        ValueError
            As many components as variables not given, a symbol that is neither a variable,
            a parameter nor t, or a function ``ctx`` cannot evaluate (naming it).
        """
        import sympy as sp

        from .codegen import TIME, check_functions
        from .expressions import as_expression
        symbols = [v if isinstance(v, sp.Symbol) else sp.Symbol(_identifier(v, name))
                   for v in variables]
        values = {}
        for k, v in (params or {}).items():
            sym = k if isinstance(k, sp.Symbol) else sp.Symbol(_identifier(k, name))
            values[sym] = ctx.number(v, f"{name}: parameter {sym}")
        clash = [str(x) for x in [*symbols, *values] if str(x) == str(TIME)]
        if clash or len({str(x) for x in [*symbols, *values]}) != len(symbols) + len(values):
            raise ValueError(f"{name}: the names of the variables and parameters must differ "
                             f"from each other and from the time {TIME}")
        names = {str(x): x for x in [*symbols, *values, TIME]}
        exprs = [as_expression(e, names, what=f"{name}: component {i} of the field")
                 for i, e in enumerate(rhs)]
        if len(exprs) != len(symbols):
            raise ValueError(f"{name}: {len(exprs)} components of the field for "
                             f"{len(symbols)} variables")
        known = {*symbols, *values, TIME}
        unknown = sorted({str(x) for e in exprs for x in e.free_symbols} - {str(x) for x in known})
        if unknown:
            raise ValueError(f"{name}: the field uses {', '.join(unknown)}, which are neither "
                             "variables, parameters nor the time t")
        check_functions(exprs, f"{name}: the field", ctx)
        return cls._bound(name, (tuple(symbols), tuple(exprs)), values, ctx,
                          tuple(labels) or tuple(str(x) for x in symbols))

    @classmethod
    def _bound(cls, name: str, model: tuple[Any, Any], values: dict[Any, Any], ctx: Context,
               labels: tuple[str, ...]) -> FirstOrderSystem:
        from .codegen import TIME, compile_exprs
        symbols, exprs = model
        order = list(values)
        f = compile_exprs([TIME, list(symbols), order], list(exprs), ctx, name="first_order_field")
        numbers = [values[k] for k in order]

        def rhs(t, y):
            return f(t, y, numbers)
        system = cls(name=name, rhs=rhs, dim=len(symbols), ctx=ctx, labels=labels)
        system._model, system._params = model, dict(values)
        return system

    @property
    def rebinds(self) -> bool:
        """Whether the system can be bound to another context (:meth:`with_context`).

        True for a system given as expressions, or by an ``rhs(t, y, ctx)``.
        """
        return self._model is not None or self._takes_ctx

    def with_context(self, ctx: Context, params: dict[sp.Symbol, object] | None = None
                     ) -> FirstOrderSystem:
        """Return this system in the number context ``ctx``.

        Its expressions compiled there (the parameters' values from ``params`` where
        given, else the system's, as numbers of ``ctx``), or its ``rhs(t, y, ctx)`` given
        ``ctx``.

        Parameters
        ----------
        ctx : Context
            The number context.
        params : dict, optional
            Parameter symbols to values replacing the system's.

        Returns
        -------
        FirstOrderSystem
            The system in ``ctx``.

        Raises
        ------
        TypeError
            An ``rhs(t, y)`` without ``ctx``: a Python function of the run's numbers, which
            no other context can evaluate (give the field as expressions, or as
            ``rhs(t, y, ctx)`` computing with ``ctx``'s operations).
        ValueError
            A symbol in ``params`` that is not a parameter.
        """
        if not self.rebinds:
            raise TypeError(
                f"{self.name}: the right-hand side {getattr(self.rhs, '__name__', 'rhs')}(t, y) "
                f"is a Python function of the {self.ctx.name} context's numbers, which "
                f"{ctx.name} cannot evaluate: give the field as expressions "
                "(FirstOrderSystem.from_expressions) or as rhs(t, y, ctx) computing with "
                "ctx's operations")
        if self._model is None:
            return FirstOrderSystem(self.name, self.rhs, self.dim, ctx, self.labels)
        unknown = [str(k) for k in params or {} if k not in self._params]
        if unknown:
            raise ValueError(f"{self.name}: {', '.join(unknown)} in params are not parameters")
        values = {k: ctx.num(v) for k, v in {**self._params, **(params or {})}.items()}
        return FirstOrderSystem._bound(self.name, self._model, values, ctx, self.labels)

    @property
    def dof(self) -> int:
        """The dimension of the state (as ``dim``; the name mechanical systems use)."""
        return self.dim

    @property
    def coord_names(self) -> list[str]:
        """The names of the components (the labels), as mechanical systems name theirs."""
        return list(self.labels)

    def field(self) -> Callable[[Real, Sequence[Real]], list[Real]]:
        """Return the right-hand side on lists, as the RK4 and GBS steps use it.

        Every value ``rhs`` returns is checked like initial data
        (:func:`mpvi.callables.returned`): a float or a number of fewer bits than the
        context raises :class:`mpvi.PrecisionError` naming the system.

        Returns
        -------
        callable
            ``f(t, y_list) -> list``.
        """
        rhs, ctx, dtype, n = self.rhs, self.ctx, self.ctx.dtype, self.dim
        what = f"{self.name}: the right-hand side"
        if self._takes_ctx:
            given = cast("Callable[..., Any]", rhs)
            return lambda t, y: returned_vector(ctx, given(t, np.array(y, dtype=dtype), ctx=ctx),
                                                n, what)
        return lambda t, y: returned_vector(ctx, rhs(t, np.array(y, dtype=dtype)), n, what)

    def check_vector(self, values: VectorLike, label: str) -> Vector:
        """Convert and validate a state vector (length dim, finite).

        Parameters
        ----------
        values : sequence of numbers
            Anything the context's ``num`` reads.
        label : str
            What the vector is, for the error message.

        Returns
        -------
        numpy.ndarray
            The vector of context numbers.

        Raises
        ------
        ValueError
            Not a vector of dim numbers, or a non-finite entry.
        PrecisionError
            An entry that would lose precision.
        TypeError
            An entry the context cannot read.
        """
        ctx = self.ctx
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or \
                np.ndim(values) != 1 or len(values) != self.dim:
            raise ValueError(f"{self.name}: {label} must be a vector of {self.dim} numbers "
                             f"({', '.join(self.labels)}), got {values!r}")
        x = np.array([ctx.number(v, f"{self.name}: {label}[{i}]") for i, v in enumerate(values)],
                     dtype=ctx.dtype)
        if not ctx.all_finite(x):
            raise ValueError(f"{self.name}: {label} has a non-finite entry (nan or inf)")
        return x


def _identifier(text, name):
    """A variable's or parameter's name: a plain identifier (ValueError otherwise)."""
    if not isinstance(text, str) or not text.isidentifier():
        raise ValueError(f"{name}: {text!r} is not a name (a plain identifier) of a variable "
                         "or a parameter")
    return text


def rk4_step(f, t, y, h):
    """One classical RK4 step of y' = f(t, y) on lists."""
    half = h / 2
    k1 = f(t, y)
    k2 = f(t + half, [a + b * half for a, b in zip(y, k1)])
    k3 = f(t + half, [a + b * half for a, b in zip(y, k2)])
    k4 = f(t + h, [a + b * h for a, b in zip(y, k3)])
    h6 = h / 6
    return [a + (b1 + 2 * (b2 + b3) + b4) * h6 for a, b1, b2, b3, b4 in zip(y, k1, k2, k3, k4)]


def gbs_step(f, t, y, H, levels, ctx):
    """One Gragg-Bulirsch-Stoer step of size H, order 2 * levels (module doc), on lists."""
    f0 = f(t, y)
    table = []
    seq = [2 * (i + 1) for i in range(levels)]
    for i, n_i in enumerate(seq):
        h = H / n_i
        z_prev, z = y, [a + b * h for a, b in zip(y, f0)]
        two_h = 2 * h
        for m in range(1, n_i):
            z_prev, z = z, [a + b * two_h for a, b in zip(z_prev, f(t + m * h, z))]
        row = [z]
        for j in range(i):
            ratio = ctx.num(n_i * n_i) / (seq[i - j - 1] * seq[i - j - 1]) - 1
            row.append([a + (a - b) / ratio for a, b in zip(row[j], table[i - 1][j])])
        table.append(row)
    return table[-1][-1]


def field_with_factors(system):
    """f(t, y) -> ((q', p'), the singular factors of the system at (t, q) or None) on lists:
    the generated field of :func:`mpvi.kernels.hamiltonian_field` with the factors it
    computes alongside (gmp context), else :func:`hamiltonian_field` and None (the caller
    evaluates the factors apart: :mod:`mpvi.singular`)."""
    if getattr(system.ctx, "kernels", False):
        from .kernels import hamiltonian_field as generated
        g = generated(system, factors=True)
        if g is not None:
            return g
    f = hamiltonian_field(system)
    return lambda t, y: (f(t, y), None)


def hamiltonian_field(system):
    """f(t, y) = (q', p') of a mechanical system for y = (q, p) concatenated, on lists.
    In a context with ``kernels`` (the gmp context) the generated field of
    :func:`mpvi.kernels.hamiltonian_field` (one generated function), otherwise the
    system's reference ``hamiltonian_rhs``."""
    n = system.dof
    if getattr(system.ctx, "kernels", False):
        from .kernels import hamiltonian_field as generated
        g = generated(system)
        if g is not None:
            return g
    dtype = system.ctx.dtype

    def f(t, y):
        dq, dp = system.hamiltonian_rhs(np.array(y[:n], dtype=dtype), np.array(y[n:], dtype=dtype), t)
        return [*dq, *dp]
    return f
