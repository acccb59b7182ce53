"""First-order systems y' = f(t, y): a system kind like :class:`mpvi.LagrangianSystem`.

A :class:`mpvi.Problem` on a :class:`FirstOrderSystem` is solved by :func:`mpvi.solve` with
the explicit methods that work on a first-order form (``rk4``, ``gbs``, ``rk2``), whose
steps are those of :mod:`mpvi.engines.ode`.  (The reduced Lagrange top of top2025
eqs. (18aq) is one.)
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence, cast

import numpy as np

from mpvi.model.callables import check_literals, returned_vector
from mpvi.numbers.context import require_context
from mpvi.ground.precision import entry_class

if TYPE_CHECKING:
    import sympy as sp

    from mpvi.ground.types import FirstOrderField, Real, Vector, VectorLike
    from mpvi.numbers.context import Context


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
        require_context(self.ctx, str(self.name))
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
        (:func:`mpvi.compiled.codegen.compile_exprs`), so the system can be bound to any context
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
            (:func:`mpvi.ground.expressions.as_expression`), never evaluated.
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

        from mpvi.compiled.codegen import TIME, check_expressions, check_functions
        from mpvi.ground.expressions import as_expression
        require_context(ctx, str(name))
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
        check_expressions(exprs, f"{name}: the field")
        check_functions(exprs, f"{name}: the field", ctx)
        return cls._bound(name, (tuple(symbols), tuple(exprs)), values, ctx,
                          tuple(labels) or tuple(str(x) for x in symbols))

    @classmethod
    def _bound(cls, name: str, model: tuple[Any, Any], values: dict[Any, Any], ctx: Context,
               labels: tuple[str, ...]) -> FirstOrderSystem:
        from mpvi.compiled.codegen import TIME, compile_exprs
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
    def parameters(self) -> dict[Any, Any]:
        """The parameters of a system given as expressions.

        {symbol: number of the context}, a copy (:meth:`with_context` takes replacements);
        empty for a system given by an ``rhs``.
        """
        return dict(self._params) if self._model is not None else {}

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

        Every value a user's ``rhs`` returns is checked like initial data
        (:func:`mpvi.model.callables.returned`): a float or a number of fewer bits than the
        context raises :class:`mpvi.PrecisionError` naming the system.  A field given as
        expressions (:meth:`from_expressions`) is generated code computing with the
        context's own operations: its values are the context's numbers, and the
        constants it returns as they are (the integer 0 of a zero component) are made
        numbers of the context, without the checks.

        Returns
        -------
        callable
            ``f(t, y_list) -> list``.
        """
        rhs, ctx, dtype, n = self.rhs, self.ctx, self.ctx.dtype, self.dim
        what = f"{self.name}: the right-hand side"
        if self._model is not None:
            number, num = ctx.is_number, ctx.num
            return lambda t, y: [x if number(x) else num(x) for x in rhs(t, y)]
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
