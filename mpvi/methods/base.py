"""The method contract, the registry, and the helpers shared by the schemes.

A **method** (:class:`Method`) is metadata plus a ``prepare`` function:

* ``state``: the state it carries between steps, ``"qp"`` (positions, momenta) or
  ``"qv"`` (positions, velocities); :func:`mpvi.solve` converts initial data and results
  through the system's Legendre map;
* ``params``: its parameters with their defaults (Newmark's beta and gamma, the number
  of Lobatto points, ...); ``order`` and ``symplectic`` are values or functions of them;
* ``reference`` (paper and equations), ``implicit``, ``internal`` (the name of the
  internal data a step returns, e.g. Simpson's midpoint ``"q_mid"``);
* ``stability_bound``: the largest omega h for which the method is stable on the
  harmonic oscillator, where one is known and smaller than pi (a number or a function of
  the parameters; None otherwise) -- :func:`mpvi.solve` refuses a step beyond
  min(bound, pi) / rho, rho the spectral radius of the linearized field at the initial
  state;
* ``first_order``: whether it also integrates a first-order system y' = f(t, y).

``method.prepare(system, h, ctx, **params)`` (plus ``newton=`` for a method that
``takes_newton_options``, ``check_stability=`` for one that ``checks_stability``) returns a
**stepper**: a pure function ``stepper(t, q, y, carry=None) -> StepResult`` from the state
(q, y) at time t (y = p or v, as ``state`` says; for a first-order system q is the state
and y is None) to the state at t + h.  ``h`` may be negative (backward integration).
Work that depends only on (system, h) -- a factorization, the coefficients of a
quadrature -- is done once in ``prepare``.  :class:`StepResult` holds the new state, the
step's internal data (any shape, or None), its Newton iterations and final residual (None
for explicit steps), and a ``carry``: what the next step may use to start faster (the
previous step's trial function for an extrapolated Newton guess).  The driver passes each
step's carry to the next; the result does not depend on anything else, so a step can be
recomputed alone.  ``prepare`` is the public door: the :class:`Method` validates ``h``
(:func:`check_step`) and the system's context there, once, so the scheme's own function
receives a nonzero finite context number.  A stepper's ``dense`` attribute names its dense output
(:mod:`mpvi.engines.dense`): ``"trial"`` (the carry holds the trial coefficients; used where the
trial function's degree reaches the method's order, else Hermite interpolation of that
order), ``"substep"``, ``"taylor"`` or ``"hermite"`` (the default: Hermite interpolation
of the method's order through the node values and the exact flow's derivatives).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple

import numpy as np

from mpvi.ground.checks import check_flag, integer
from mpvi.numbers.context import PrecisionError
from mpvi.ground.precision import entry, entry_class

if TYPE_CHECKING:
    import sympy

    from mpvi.ground.types import NumberLike, Vector, VectorLike
    from mpvi.numbers.context import Context
    from mpvi.model.mechanics import LagrangianSystem
    from mpvi.model.first_order import FirstOrderSystem


STATE_KINDS = {"qp": "positions and momenta (q, p)", "qv": "positions and velocities (q, v)"}


class StabilityError(ValueError):
    """The step size violates a scheme's stability bound, or is beyond its resolution.

    Raised by :func:`mpvi.solve` (``check_stability=True``) when ``|h| rho >= min(b, pi)``,
    rho the spectral radius of the linearized equations of motion at the initial state
    and b the method's stability bound on the oscillator, and by the linear Simpson
    schemes beyond their proven bound.  A ``ValueError``.
    """


class State(NamedTuple):
    """A state at one time: what ``sol(t)`` and :meth:`Method.step` return.

    Parameters
    ----------
    q : numpy.ndarray
        Positions (the state y for a first-order system).
    p : numpy.ndarray or None
        Momenta (None for a first-order system, and from :meth:`Method.step` of a method
        that carries velocities).
    v : numpy.ndarray or None
        Velocities (y' for a first-order system; None from :meth:`Method.step` of a method
        that carries momenta).
    """

    q: Vector
    p: Vector | None = None
    v: Vector | None = None


class StepResult(NamedTuple):
    """One step's result: new state (q, y), internal data, Newton statistics, carry, and
    the system's singular factors at the points inside the step where the method evaluated
    the system (one list, point after point, :mod:`mpvi.model.singular`; None when it reports
    none)."""

    q: np.ndarray
    y: np.ndarray
    internal: Any = None
    iterations: int | None = None
    residual: Any = None
    carry: Any = None
    guards: Any = None


@entry_class
@dataclass(frozen=True)
class Method:
    """An integration method: metadata plus a ``prepare`` function (frozen).

    ``prepare(system, h, ctx, **params)`` returns a
    pure stepper ``stepper(t, q, y, carry=None) -> StepResult`` from the state (q, y) at
    time t (y = p or v, as ``state`` says; for a first-order system q is the state and y
    None) to the state at t + h; work that depends only on (system, h) is done once in
    ``prepare``.  The ``prepare`` stored is the public door: it validates ``h`` (nonzero
    and finite, as a number of ``ctx``; ``ValueError``) and refuses (with
    ``PrecisionError``) a system built in a context of another kind or precision than
    ``ctx``, so the function given receives a validated context number.  See :mod:`mpvi.methods.base` for the contract; :func:`register` adds a method
    to :data:`METHODS`.

    Parameters
    ----------
    name : str
        Registry name.
    label : str
        Display label.
    state : {"qp", "qv"}
        The state carried between steps: positions and momenta or positions and
        velocities.
    order : int or callable
        The order, or a function of the parameters dict returning it.
    symplectic : bool or callable
        Symplecticity, or a function of the parameters dict returning it.
    implicit : bool
        Whether a step solves equations (Newton).
    reference : str
        Paper and equations.
    prepare : callable
        ``prepare(system, h, ctx, **params)`` -> stepper, with ``newton=None`` if the
        method takes Newton options and ``check_stability=True`` if it checks a bound of
        its own; ``h`` a validated number of ``ctx``.
    params : dict, optional
        Parameters with their defaults.
    internal : str, optional
        Name of a step's internal data (e.g. Simpson's midpoint ``"q_mid"``).
    doc : str, optional
        A description.
    stability_bound : number, callable or None, optional
        The largest omega h for which the method is stable on the harmonic oscillator,
        where one is known and below pi (an exact sympy number or a function of the
        parameters dict).
    first_order : bool, default False
        Whether it also integrates first-order systems.
    declaration : callable, optional
        ``declaration(params)``: the method as data for the derivation of its modified
        equation (:mod:`mpvi.analysis.modified`), one of the types of :mod:`mpvi.methods.declarations`: a
        trial-function method (:class:`~mpvi.methods.declarations.VariationalMethod`,
        :class:`~mpvi.methods.declarations.GalerkinMethod`), a
        :class:`~mpvi.methods.declarations.ButcherTableau`, a
        :class:`~mpvi.methods.declarations.StepFunction`, a :class:`~mpvi.methods.declarations.ParabolicPath`,
        a :class:`~mpvi.methods.declarations.ParabolicAction`, a
        :class:`~mpvi.methods.declarations.NewmarkScheme` or a
        :class:`~mpvi.methods.declarations.TaylorSeries` (:class:`~mpvi.methods.declarations.LinearOnly`
        around one for linear systems only); None where the method declares none.
    takes_newton_options : bool, optional
        Whether ``prepare`` takes ``newton`` (options of :func:`mpvi.numbers.newton.solve`);
        default: ``implicit``.
    checks_stability : bool, default False
        Whether ``prepare`` takes ``check_stability`` and refuses a step beyond a bound of
        its own (Simpson's linear forms); :func:`mpvi.solve` passes its flag on.
    order_parameter : tuple (str, int, int), optional
        ``(name, low, high)``: the integer parameter that chooses the family member, hence
        the order, and the values it takes (Lobatto's ``points``, Taylor's ``degree``);
        :meth:`parameters_for_order` (``solve(..., order=6)``) reads it.  None for a
        method of one order.

    Raises
    ------
    ValueError
        A ``state`` other than "qp" and "qv".
    """

    name: str
    label: str
    state: str
    order: int | Callable[[Mapping[str, Any]], int]
    symplectic: bool | Callable[[Mapping[str, Any]], bool]
    implicit: bool
    reference: str
    prepare: Callable[..., Callable[..., StepResult]] = field(repr=False)
    params: dict[str, Any] = field(default_factory=dict)
    internal: str | None = None
    doc: str = field(default="", repr=False)
    stability_bound: sympy.Expr | Callable[[Mapping[str, Any]], sympy.Expr | None] | None = None
    first_order: bool = False
    declaration: Callable[[Mapping[str, Any]], object] | None = field(default=None, repr=False)
    takes_newton_options: bool | None = None   # None: as ``implicit``
    checks_stability: bool = False
    order_parameter: tuple[str, int, int] | None = None

    def __post_init__(self):
        if self.state not in STATE_KINDS:
            raise ValueError(f"method {self.name!r}: state must be one of {sorted(STATE_KINDS)}, "
                             f"got {self.state!r}")
        if self.takes_newton_options is None:
            object.__setattr__(self, "takes_newton_options", bool(self.implicit))
        # _prepare: the function as given, for the driver, which validated h and whose
        # system is in the run's context; prepare: the public door that checks both
        given = getattr(self.prepare, "_door_of", self.prepare)
        object.__setattr__(self, "_prepare", given)
        object.__setattr__(self, "prepare", _door(given, self.name))

    def parameters(self, **given: object) -> dict[str, object]:
        """Return the method's parameters: the defaults updated by ``given``.

        Parameters
        ----------
        **given
            Parameter values.

        Returns
        -------
        dict
            Every parameter with its value.

        Raises
        ------
        ValueError
            An unknown parameter name (listing the method's parameters).
        """
        unknown = set(given) - set(self.params)
        if unknown:
            known = ", ".join(sorted(self.params)) or "none"
            raise ValueError(f"method {self.name!r} has no parameter(s) {sorted(unknown)}; "
                             f"its parameters: {known}")
        return {**self.params, **given}

    def order_for(self, **params: object) -> int:
        """Return the method's order for these parameters.

        Parameters
        ----------
        **params
            Parameter values (the defaults for the others).

        Returns
        -------
        int
            The order (as declared: measured by the tests).

        Raises
        ------
        ValueError
            An unknown parameter name.
        """
        return self.order(self.parameters(**params)) if callable(self.order) else self.order

    def orders(self, **params: object) -> list[int]:
        """Return the orders the method gives, ascending.

        Every member's of a family (:attr:`order_parameter`), else its one order for
        these parameters.

        Parameters
        ----------
        **params
            Parameter values (the defaults for the others; the member parameter is
            ignored for a family).

        Returns
        -------
        list of int
            The orders, ascending.
        """
        if self.order_parameter is None:
            return [self.order_for(**params)]
        name, low, high = self.order_parameter
        return sorted({self.order_for(**{**params, name: k}) for k in range(low, high + 1)})

    def parameters_for_order(self, order: object, **given: object) -> dict[str, object]:
        """Return the parameters of the family member of order ``order``.

        The member parameter (:attr:`order_parameter`: Lobatto's ``points``, Gauss's
        ``points``, Hermite's ``hermite_n``, GBS's ``levels``, Taylor's ``degree``) is
        chosen, its smallest value that gives the order; given as well, it must agree.
        A method of one order accepts its own order only.

        Parameters
        ----------
        order : int
            The order wanted.
        **given
            The other parameters (as :meth:`parameters`).

        Returns
        -------
        dict
            Every parameter with its value.

        Raises
        ------
        ValueError
            An order that is not a positive integer, one the method cannot give (listing
            the orders it can, and for a method of one order the families that give it),
            or a member parameter given that contradicts it.
        """
        wanted = integer(order)
        if wanted is None or wanted < 1 or isinstance(order, bool):
            raise ValueError(f"order must be a positive integer, got {order!r}")
        params = self.parameters(**given)
        if self.order_parameter is None:
            own = self.order_for(**params)
            if own != wanted:
                others = [m.name for m in METHODS.values()
                          if m.order_parameter is not None and wanted in m.orders()]
                raise ValueError(
                    f"method {self.name!r} is of order {own}, not order={wanted}"
                    + (f"; methods that give order {wanted}: {', '.join(others)}" if others
                       else "") + f" (solve(problem, name, order={wanted}))")
            return params
        name, low, high = self.order_parameter
        if name in given:
            own = self.order_for(**params)
            if own != wanted:
                raise ValueError(f"method {self.name!r}: {name}={given[name]!r} gives order "
                                 f"{own}, not order={wanted}; give one of the two")
            return params
        for k in range(low, high + 1):
            if self.order_for(**{**params, name: k}) == wanted:
                return {**params, name: k}
        raise ValueError(f"method {self.name!r} gives no order {wanted}: its orders are "
                         f"{_progression(self.orders(**given))} ({name} from {low} to {high})")

    def symplectic_for(self, **params: object) -> bool:
        """Tell whether the method is symplectic for these parameters.

        Parameters
        ----------
        **params
            Parameter values (the defaults for the others).

        Returns
        -------
        bool
            The declared symplecticity.

        Raises
        ------
        ValueError
            An unknown parameter name.
        """
        s = self.symplectic
        return bool(s(self.parameters(**params)) if callable(s) else s)

    def stability_bound_for(self, **params: object) -> sympy.Expr | None:
        """Return the method's omega h stability bound on the oscillator for these parameters.

        Parameters
        ----------
        **params
            Parameter values (the defaults for the others).

        Returns
        -------
        sympy number or None
            The exact bound, or None when none below pi is known.

        Raises
        ------
        ValueError
            An unknown parameter name.
        """
        b = self.stability_bound
        return b(self.parameters(**params)) if callable(b) else b

    def step(self, system: LagrangianSystem | FirstOrderSystem,
             state: State | tuple[VectorLike, VectorLike | None], h: NumberLike, ctx: Context,
             t: NumberLike | None = None, **options: object) -> tuple[State, dict[str, object]]:
        """Take one step (``prepare`` and one call of the stepper), for tests and checks.

        Parameters
        ----------
        system : LagrangianSystem, LinearSystem or FirstOrderSystem
            The system (built in ``ctx``).
        state : State or tuple
            A :class:`State`, or (q, y) in this method's state kind.
        h : number
            The step (a number of ``ctx``).
        ctx : Context
            The number context.
        t : number, optional
            The time (default 0).
        **options
            The method's parameters; ``newton`` if it takes Newton options,
            ``check_stability`` if it checks a bound of its own.

        Returns
        -------
        tuple
            ``(state, info)``: the new :class:`State` (``q`` and the ``p`` or ``v`` the
            method carries, the other None) and a dict with the internal data under
            :attr:`internal` and the Newton iterations and residual.

        Raises
        ------
        ValueError
            A zero or non-finite ``h``.
        PrecisionError
            A system built in a context other than ``ctx``.
        NewtonError
            A Newton solve that fails.
        """
        if isinstance(state, State):
            q, y = state.q, (state.v if self.state == "qv" else state.p)
        else:
            q, y = state
        r = self.prepare(system, h, ctx, **options)(
            ctx.zero if t is None else ctx.num(t), ctx.asarray(q), ctx.asarray(y))
        info = {} if r.internal is None else {self.internal or "internal": r.internal}
        if r.iterations is not None:
            info["newton_iterations"], info["newton_residual"] = r.iterations, r.residual
        return (State(r.q, None, r.y) if self.state == "qv" else State(r.q, r.y)), info


def _progression(values):
    """Ascending integers as text, an arithmetic run of more than four shortened:
    ``2, 4, ..., 46``."""
    if len(values) > 4 and len({b - a for a, b in zip(values, values[1:])}) == 1:
        return f"{values[0]}, {values[1]}, ..., {values[-1]}"
    return ", ".join(map(str, values))


def _door(prepare, name):
    """``prepare`` behind the checks of its public door: ``h`` validated once
    (:func:`check_step`), and a system whose number context is not ``ctx`` refused -- a
    system built at 32 digits and stepped in a 64-digit context would cap the run at 32
    digits (its compiled constants and parameters are 32-digit numbers), and one of
    another backend cannot even be evaluated there."""

    @functools.wraps(prepare)
    def door(system, h, ctx, *args, **kwargs):
        own = getattr(system, "ctx", None)
        if own is not None and own is not ctx and (
                type(own) is not type(ctx) or own.prec != ctx.prec):
            raise PrecisionError(
                f"method {name!r}: the system {getattr(system, 'name', system)!r} was built in "
                f"context {own.name} and cannot be stepped in context {ctx.name}: its numbers "
                f"would {'cap the run at its precision' if own.prec < ctx.prec else 'be rounded'}"
                f" or not evaluate there; build the system in {ctx.name} or bind it there: "
                f"system.with_context(ctx)")
        return prepare(system, check_step(h, ctx), ctx, *args, **kwargs)
    door._door_of = prepare
    return door


METHODS: dict[str, Method] = {}
"""The registry: every method by name (``mpvi.METHODS``)."""


@entry
def register(method: Method) -> Method:
    """Add a method to the registry :data:`METHODS`.

    Parameters
    ----------
    method : Method
        The method, under its ``name``.

    Returns
    -------
    Method
        The same method (so that ``name = register(Method(...))`` reads naturally).

    Raises
    ------
    ValueError
        A name registered twice.
    TypeError
        Not a :class:`Method`.
    """
    if not isinstance(method, Method):
        raise TypeError(f"register takes a Method, got {type(method).__name__}")
    if method.name in METHODS:
        raise ValueError(f"method {method.name!r} registered twice")
    METHODS[method.name] = method
    return method


@entry
def get_method(name: str | Method) -> Method:
    """Look up the :class:`Method` of a registered name.

    Parameters
    ----------
    name : str or Method
        A name of :data:`METHODS`, or a method (returned as it is).

    Returns
    -------
    Method
        The registered method.

    Raises
    ------
    ValueError
        An unknown name, listing the known ones.
    """
    if isinstance(name, Method):
        return name
    try:
        return METHODS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown method {name!r}; known methods: "
                         f"{', '.join(sorted(METHODS))}") from None


def check_count(value: object, name: str, low: int, high: int, why: str) -> int:
    """An integer method parameter from ``low`` to ``high``, or ValueError naming it.

    ``high`` is what mpvi builds or steps in reasonable time on a small machine; ``why``
    (the measured cost that sets it) is part of the message, so a value beyond it is
    refused before any work instead of hanging.
    """
    count = integer(value)
    if count is None:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    value = count
    if not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value}"
                         + (f": {why}" if value > high else ""))
    return int(value)


def check_step(h, ctx):
    """Validate a step size (nonzero and finite; negative integrates backwards); returns it
    as a context number."""
    h = ctx.number(h, "step size h")
    if not (ctx.isfinite(h) and h != 0):
        raise ValueError(f"the step size h must be a nonzero finite number, got {ctx.to_str(h, 10)}")
    return h


def require_linear(system, scheme_name):
    if not getattr(system, "is_linear", False):
        raise TypeError(f"scheme {scheme_name!r} is the linear (constant M, K) form; "
                        f"{getattr(system, 'name', system)!r} is not a LinearSystem")


def pq_block_stepper(phi, n):
    """Stepper for a linear one-step map (p', q') = phi (p, q), phi a 2n x 2n array."""
    pp, pq, qp, qq = phi[:n, :n], phi[:n, n:], phi[n:, :n], phi[n:, n:]

    def stepper(t, q, p, carry=None):
        return StepResult(qp @ p + qq @ q, pp @ p + pq @ q)
    stepper.phi = phi
    return stepper


def prop1_matrices(X, Y, ctx):
    """A, B of axioms2024 eq. (34): A = [[I, -X], [I, Y]], B = [[-I, -X], [I, -Y]]
    acting on eta = (p, q)."""
    eye = ctx.eye(X.shape[0])
    A = np.block([[eye, -X], [eye, Y]])
    B = np.block([[-eye, -X], [eye, -Y]])
    return A, B


def quadratic_form_matrices(X, Y, ctx):
    """xi = (X + Y)^-1 and zeta = (X^-1 + Y^-1)^-1 of the quadratic form conserved by the
    map of :func:`prop1_matrices` (axioms2024 Prop. 7, eq. 42)."""
    return ctx.inv(X + Y), ctx.inv(ctx.inv(X) + ctx.inv(Y))

