"""One initial-value problem: a system, its initial state, a time span and optionally the
exact solution.

``Problem(system, q0, p0=... | v0=..., t0=0, t1=None, exact=None, name=None)``.  Every
number is converted once, in the system's context, with errors that name the quantity
(a float, an mpmath number of another context or a number of fewer bits than the context
raises :class:`mpvi.PrecisionError`; sympy numbers are read exactly).  The initial point
is validated: finite, of the right dimension, with a positive-definite mass matrix.

**The exact-solution protocol** (the one every exact solution in mpvi follows): ``exact``
is a callable ``t -> (q(t), p(t))`` when the problem is given with ``p0``, ``t -> (q(t),
v(t))`` when given with ``v0`` (for a first-order system ``t -> y(t)``), taking and
returning numbers of the system's context.  The problem checks it against the initial
data once (a mismatch beyond sqrt(eps) raises ``ValueError``: a wrong exact solution is a
silent wrong error curve).
"""
from __future__ import annotations

import pickle
import warnings
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from mpvi.model.callables import check_literals, returned_vector
from mpvi.model.first_order import FirstOrderSystem
from mpvi.model.mechanics import LagrangianSystem
from mpvi.ground.precision import entry_class

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mpvi.ground.types import ExactSolution, NumberLike, ProblemChanges, Vector, VectorLike
    from mpvi.numbers.context import Context

__all__ = ["Problem"]


def posed_value(x: Any) -> Any:
    """``x`` as the user wrote it where that is its exact value, else None.

    An int, a ``Fraction``, a ``Decimal`` (as its text), a string (a decimal or ``'p/q'``:
    ``"9.81"`` is 981/100), a sympy number without a Float in it (``Rational(1, 10)``,
    ``pi/6``, ``sqrt(2)/3``).  A float, a sympy Float or a number of a context is its
    rounded binary value, not what the user meant: None (the run's number is then the
    input, and a certificate says so).  Read once, when the value is converted; the value
    itself is validated by the context's ``num``.
    """
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, Fraction):
        return x
    if isinstance(x, Decimal):
        return str(x) if x.is_finite() else None
    if isinstance(x, str):
        return x.strip()
    import sympy
    if isinstance(x, sympy.Basic) and x.is_number and not x.has(sympy.Float):
        return x
    return None


def posed_vector(values: Any, n: int) -> list[Any] | None:
    """Per component :func:`posed_value` of a vector of ``n`` initial data (None for a
    vector that is not a sequence of n values)."""
    try:
        flat = list(np.ravel(np.array(values, dtype=object)))
    except (TypeError, ValueError):
        return None
    return [posed_value(x) for x in flat] if len(flat) == n else None


def posed_text(x: Any) -> str:
    """A posed exact value as plain text (``1/10``, ``9.81``, ``pi/6``)."""
    if isinstance(x, Fraction):
        return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)
    if isinstance(x, (int, str)):
        return str(x)
    import sympy
    return str(sympy.sstr(x))


@entry_class
class Problem:
    """An initial-value problem for :func:`mpvi.solve`.

    Every number is converted once, in the system's context, with errors that name the
    quantity.  The initial point is validated: finite, of the right dimension, with a
    positive-definite mass matrix at (t0, q0, v0).  The other of p0, v0 is computed by
    the system's Legendre map.

    **The exact-solution protocol** (the one every exact solution in mpvi follows):
    ``exact`` is a callable ``t -> (q(t), p(t))`` when the problem is given with ``p0``,
    ``t -> (q(t), v(t))`` when given with ``v0`` (for a first-order system ``t -> y(t)``),
    taking and returning numbers of the system's context.  It is checked against the
    initial data once: a mismatch beyond sqrt(eps) raises ``ValueError`` (a wrong exact
    solution is a silent wrong error curve).

    A problem pickles (numbers as lossless decimal strings; an exact solution that
    cannot be pickled is dropped with a warning).

    ``posed`` keeps the inputs as the user wrote them where that is their exact value
    (``"1/10"``, ``"9.81"``, ``Fraction``, ``sympy.pi/6``; :func:`posed_value`), per
    component, None for a float or a context number: :func:`mpvi.certify` starts its walk
    from balls of these exact values, so its enclosures are of the problem as posed, not
    of its rounding to the context.

    Parameters
    ----------
    system : LagrangianSystem, LinearSystem or FirstOrderSystem
        Its context is the context of everything computed for the problem.
    q0 : sequence of numbers
        Initial positions (for a first-order system: the initial state y0).
    p0, v0 : sequence of numbers, optional
        Initial momenta or initial velocities: exactly one of them for a mechanical
        system, neither for a first-order system.  The other is computed through the
        system's Legendre map (``problem.p0``, ``problem.v0``).
    t0 : number, default 0
        Initial time.
    t1 : number, optional
        Final time (:func:`mpvi.solve` uses it when given neither ``n`` nor ``t1``).
    exact : callable, optional
        ``t -> (q, p)`` (if ``p0`` was given) or ``t -> (q, v)`` (if ``v0`` was given), or
        ``t -> y`` for a first-order system: the protocol above.
    name : str, optional
        Defaults to the system's name.

    Raises
    ------
    PrecisionError
        A number that would cap the precision (named).
    ValueError
        Wrong dimension, non-finite value, t1 equal to t0, both or neither of p0 and v0
        (p0 or v0 for a first-order system), a mass matrix that is not positive definite
        at the initial point, an exact solution that fails at t0 or does not match the
        initial data.
    TypeError
        An ``exact`` that is not callable, or a value the context cannot read.

    See Also
    --------
    solve : Integrate the problem.
    Problem.replace : A copy with other initial data.
    """

    def __init__(self, system: LagrangianSystem | FirstOrderSystem, q0: VectorLike, *,
                 p0: VectorLike | None = None, v0: VectorLike | None = None,
                 t0: NumberLike = 0, t1: NumberLike | None = None,
                 exact: ExactSolution | None = None, name: str | None = None) -> None:
        if not isinstance(system, (LagrangianSystem, FirstOrderSystem)):
            shown = repr(system)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise TypeError(f"{name or 'Problem'}: system must be a mpvi.LagrangianSystem or a "
                            f"mpvi.FirstOrderSystem (or one of mpvi.systems), got "
                            f"{type(system).__name__} {shown}")
        ctx = system.ctx
        self.system = system
        self.name = name if name is not None else system.name
        n = system.dof
        self.posed = {"t0": posed_value(t0), "t1": None if t1 is None else posed_value(t1),
                      "q0": posed_vector(q0, n),
                      "p0": None if p0 is None else posed_vector(p0, n),
                      "v0": None if v0 is None else posed_vector(v0, n)}
        self.t0 = ctx.number(t0, f"{self.name}: initial time t0")
        if not ctx.isfinite(self.t0):
            raise ValueError(f"{self.name}: the initial time t0 must be finite")
        self.t1 = None if t1 is None else ctx.number(t1, f"{self.name}: final time t1")
        if self.t1 is not None and not (ctx.isfinite(self.t1) and self.t1 != self.t0):
            raise ValueError(f"{self.name}: the final time t1 must be finite and differ from t0")
        if exact is not None and not callable(exact):
            raise TypeError(f"{self.name}: exact must be a callable t -> (q, p) or (q, v)")
        if exact is not None:
            check_literals(exact, ctx, f"{self.name}: the exact solution")
        self.exact = exact
        if system.first_order:
            if p0 is not None or v0 is not None:
                raise ValueError(f"{self.name}: a first-order system has one state y0 (pass "
                                 "it as q0); p0 and v0 do not apply")
            self.given = "y"
            self.q0 = system.check_vector(q0, "initial state y0")
            self._p0 = self._v0 = None
        else:
            if (p0 is None) == (v0 is None):
                raise ValueError(f"{self.name}: give exactly one of the initial momentum p0 "
                                 "and the initial velocity v0")
            self.q0 = system.check_vector(q0, "initial position q0")
            if p0 is not None:
                self.given = "p"
                self._p0 = system.check_vector(p0, "initial momentum p0")
                self._v0 = None
                v = self.v0                       # the Legendre map, validated here
            else:
                self.given = "v"
                self._v0 = v = system.check_vector(v0, "initial velocity v0")
                self._p0 = None
            system.check_state(self.t0, self.q0, v)
        if exact is not None:
            self._check_exact()

    # ----- the state at t0 ------------------------------------------------------------------
    @property
    def ctx(self) -> Context:
        """The number context (the system's)."""
        return self.system.ctx

    @property
    def p0(self) -> Vector | None:
        """Initial momenta (computed from v0 through the Legendre map if v0 was given)."""
        if self._p0 is None and self.given == "v":
            self._p0 = self.system.momentum(self.q0, self._v0, self.t0)
        return self._p0

    @property
    def v0(self) -> Vector | None:
        """Initial velocities (computed from p0 through the Legendre map if p0 was given)."""
        if self._v0 is None and self.given == "p":
            self._v0 = self.system.velocity(self.q0, self._p0, self.t0)
        return self._v0

    def initial_state(self, kind: str) -> tuple[Vector, Vector | None]:
        """Return the initial state in a method's state kind.

        Parameters
        ----------
        kind : {"qp", "qv"}
            The state a method carries (:attr:`mpvi.Method.state`); not read for a
            first-order system.

        Returns
        -------
        tuple
            (q0, p0) for 'qp', (q0, v0) for 'qv', and (y0, None) for a first-order
            system.
        """
        if self.given == "y":
            return self.q0, None
        return self.q0, (self.p0 if kind == "qp" else self.v0)

    def replace(self, **changes: Unpack[ProblemChanges]) -> Problem:
        """Return a copy with some of q0, p0, v0, t0, t1, exact, name changed.

        Giving p0 drops v0 and the reverse.  A new t0 without a new t1 moves the whole
        time span: t1 keeps its distance and direction from t0 (``replace(t0=t1)``
        continues a problem over another span of the same length); give t1 as well to
        set both ends.  The copy is validated anew (an exact solution kept must match the
        new initial data at the new t0: pass ``exact=None`` to drop it).

        Parameters
        ----------
        **changes
            New values of ``q0``, ``p0``, ``v0``, ``t0``, ``t1``, ``exact``, ``name``.

        Returns
        -------
        Problem
            The new problem (the system is the same object).

        Raises
        ------
        TypeError
            An unknown field.
        ValueError, PrecisionError
            As the constructor.
        """
        allowed = {"q0", "p0", "v0", "t0", "t1", "exact", "name"}
        unknown = set(changes) - allowed
        if unknown:
            raise TypeError(f"Problem.replace: unknown field(s) {sorted(unknown)}")
        posed = getattr(self, "posed", {})

        def kept(key, value):
            """A field not changed, as it was posed where that was exact."""
            exact = posed.get(key)
            if exact is None:
                return value
            if isinstance(exact, list):
                return [a if a is not None else b for a, b in zip(exact, value)]
            return exact
        args = {"q0": kept("q0", self.q0), "t0": kept("t0", self.t0),
                "t1": kept("t1", self.t1), "exact": self.exact, "name": self.name}
        if self.given == "p":
            args["p0"] = kept("p0", self._p0)
        elif self.given == "v":
            args["v0"] = kept("v0", self._v0)
        if "p0" in changes:
            args.pop("v0", None)
        if "v0" in changes:
            args.pop("p0", None)
        if "t0" in changes and "t1" not in changes and self.t1 is not None:
            t0 = self.ctx.number(changes["t0"], f"{self.name}: initial time t0")
            changes = {**changes, "t0": t0, "t1": t0 + (self.t1 - self.t0)}
        args.update(changes)
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        Problem.__init__(new, self.system, **args)
        return new

    # ----- the exact solution ------------------------------------------------------------------
    def exact_state(self, t: NumberLike
                    ) -> tuple[Vector, Vector | None, Vector | None]:
        """Evaluate the exact solution at ``t`` as (q, p, v).

        The part the protocol does not return is computed by the Legendre map.

        Parameters
        ----------
        t : number
            The time (a number of the context).

        Returns
        -------
        tuple
            (q, p, v), arrays of context numbers; (y, None, None) for a first-order
            system.

        Raises
        ------
        ValueError
            If the problem has no exact solution.
        """
        if self.exact is None:
            raise ValueError(f"{self.name}: the problem has no exact solution (Problem(..., exact=f))")
        q, y = self._exact_parts(t, self.exact(t))
        if self.given == "y":
            return q, None, None
        S = self.system
        if self.given == "p":
            return q, y, S.velocity(q, y, t)
        return q, S.momentum(q, y, t), y

    def _exact_parts(self, t, value):
        """(q, y) (first order: (y, None)) of what the exact solution returned at ``t``,
        every number checked like initial data (:func:`mpvi.model.callables.returned`)."""
        ctx, n = self.ctx, self.system.dof
        protocol = f"t -> ({'y' if self.given == 'y' else 'q, ' + self.given})"
        what = f"{self.name}: the exact solution ({protocol}) at t = {ctx.to_str(t, 10)}"
        if self.given == "y":
            return np.array(returned_vector(ctx, value, n, what), dtype=ctx.dtype), None
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
            raise ValueError(f"{what} returned {value!r}, not a pair")
        q, y = value
        return (np.array(returned_vector(ctx, q, n, f"{what}: q"), dtype=ctx.dtype),
                np.array(returned_vector(ctx, y, n, f"{what}: {self.given}"), dtype=ctx.dtype))

    def _check_exact(self):
        ctx = self.ctx
        try:
            value = self.exact(self.t0)
        except Exception as exc:              # a user's callable: report whatever it raised
            raise ValueError(f"{self.name}: the exact solution fails at t0: "
                             f"{type(exc).__name__}: {exc}") from None
        parts = [p for p in self._exact_parts(self.t0, value) if p is not None]
        given = [self.q0] if self.given == "y" else [self.q0, self._p0 if self.given == "p" else self._v0]
        labels = ["y0"] if self.given == "y" else ["q0", f"{self.given}0"]
        tol = ctx.sqrt(ctx.eps)
        for label, a, b in zip(labels, parts, given):
            scale = max(ctx.norm_inf(b), ctx.one)
            if not ctx.norm_inf(a - b) <= tol * scale:
                raise ValueError(
                    f"{self.name}: the exact solution does not match the initial data: "
                    f"|{label} - exact(t0)| = {ctx.to_str(ctx.norm_inf(a - b), 5)} (protocol: "
                    f"exact(t) returns (q, {'p' if self.given == 'p' else 'v'}) when the "
                    f"problem is given with {self.given}0)")

    # ----- pickling and display -----------------------------------------------------------------
    def __getstate__(self):
        state = self.__dict__.copy()
        ctx = self.ctx
        exact = state.get("exact")
        if exact is not None:
            try:
                pickle.dumps(exact)
            except Exception:                 # a lambda, a closure: not picklable
                warnings.warn(f"{self.name}: the exact solution {exact!r} cannot be pickled; "
                              "the unpickled problem has exact=None", stacklevel=3)
                state["exact"] = None
        return {k: dump_numbers(ctx, v) for k, v in state.items()}

    def __setstate__(self, state):
        ctx = state["system"].ctx
        self.__dict__.update({k: load_numbers(ctx, v) for k, v in state.items()})

    def __repr__(self):
        ctx = self.ctx
        span = f"t0 = {ctx.to_str(self.t0, 6)}" + (
            f", t1 = {ctx.to_str(self.t1, 6)}" if self.t1 is not None else "")
        return (f"<{type(self).__name__} {self.name!r}: {self.system.dof} "
                f"{'components' if self.given == 'y' else 'dof'}, given (q0, {self.given}0), "
                f"{span}{', exact solution' if self.exact is not None else ''}, "
                f"context {ctx.name}>")


class _Num(str):
    """A context number in a pickled state (its lossless decimal string)."""


def dump_numbers(ctx, value):
    """``value`` with every context number (also inside arrays, lists, tuples and dicts)
    replaced by its lossless decimal string: mpmath numbers of a private context do not
    pickle."""
    if ctx.is_number(value):
        return _Num(ctx.dump(value))
    if isinstance(value, np.ndarray) and value.dtype == object:
        return ("__array__", value.shape, [dump_numbers(ctx, x) for x in value.ravel()])
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(dump_numbers(ctx, x) for x in value)
    if isinstance(value, dict):
        return {k: dump_numbers(ctx, x) for k, x in value.items()}
    return value


def load_numbers(ctx, value):
    """The inverse of :func:`dump_numbers`."""
    if isinstance(value, _Num):
        return ctx.num(str(value))
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "__array__":
        out = np.empty(len(value[2]), dtype=object)
        out[:] = [load_numbers(ctx, x) for x in value[2]]
        return out.reshape(value[1])
    if isinstance(value, (list, tuple)):
        return type(value)(load_numbers(ctx, x) for x in value)
    if isinstance(value, dict):
        return {k: load_numbers(ctx, x) for k, x in value.items()}
    return value
