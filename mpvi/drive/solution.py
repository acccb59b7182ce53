"""What :func:`mpvi.solve` returns: the saved states, with dense output, observables,
errors against the exact solution, tables, and a lossless file format.

``Solution.save(path)`` writes JSON (gzip-compressed when the name ends in ``.gz``):
every number as a decimal string with enough digits to read back to the same bits
(:meth:`mpvi.numbers.context.Context.dump`), the context (kind and digits), the method and its
parameters, the problem's initial data, the system's coordinates, Lagrangian and
parameters as text, the Newton statistics and the events.  JSON because it is portable (any
language reads it, a person can too), exact (decimal strings, not binary floats), and
needs nothing beyond the standard library; a 64-digit number costs about 70 bytes.
:func:`load_solution` reads it back digit for digit; pass ``system=`` to attach the system
again (checked against the stored coordinates and Lagrangian) for observables and the
Legendre map.  ``pickle`` works too (numbers travel as the same strings).

Version 3 also carries the problem and the certificate.  The system is saved as text --
its Lagrangian, force, mass matrix and potential as sympy prints them, its parameters as
the context's numbers and, where they were given exactly, as those values (``sources``)
-- and :func:`load_solution` reads it back with :func:`mpvi.ground.expressions.parse_expression`
(nothing read runs as code), rebuilds the system (a :class:`mpvi.LagrangianSystem` or
:class:`mpvi.LinearSystem`) and checks that it prints back to the same text, then rebuilds
the :class:`mpvi.Problem` from the saved initial data (its q0 must be the run's state at
node 0): so ``mpvi.certify(load_solution(path))`` works.  A system that cannot be rebuilt
(a first-order system, whose field is code; a text outside the grammar) leaves the
solution without its problem, and :func:`mpvi.certify` says why.  The certificate
(:class:`mpvi.Certificate`) is saved ball for ball as the exact integers of each midpoint
and radius and is checked when read: its method and saved nodes the run's, as many points
as it certified, each ball finite, each time ball holding t0 + k h.  Its claims are not
proven again on reading: :func:`mpvi.verify` does that.

A saved file is untrusted when it is read back (it may be damaged, truncated or edited).
The format (version 2 on, :data:`FORMAT_VERSION`) carries ``digest``: ``sha256:<hex>`` of the
canonical JSON (sorted keys, no spaces) of every other field
(:func:`mpvi.ground.io.content_digest`).  :func:`load_solution` checks, in this order and before
any number is converted: a regular file (no FIFO, device or directory) of at most
:data:`MAX_FILE_BYTES` (also decompressed), valid UTF-8 JSON nested at most
:data:`MAX_DEPTH` deep without ``NaN``/``Infinity``; the format and its version; every
field with its type and bounds -- the context's digits from 1 to
:data:`mpvi.numbers.context.MAX_DPS`, each number a finite decimal literal of no more digits than
that context writes (so a 64-digit file relabelled as 1 digit is refused, and a ``"1/0"``
or ``"nan"`` never reaches a number constructor), a registered method with its own
parameters, ``0 <= steps <= steps_planned``, the shapes (t, q, p, v rows; the number of
coordinates; the per-step internal and dense-output data) --; the digest; then the
consistency of the run: finite numbers, t strictly monotone in the direction of h (non-
decreasing for requested times), the nodes exactly ``t0 + k h`` as the run computes them in
its context (every k-th node for ``saveat=k``, as many points as the steps save),
``stats.steps`` the steps, every saved time and event inside the run
``[t0, t0 + steps h]``; then, where the system is known (rebuilt or passed), the states
against the method itself (:meth:`_Reader.restep`): a run of at most :data:`RESTEP_ALL`
steps is stepped again in full, as the run stepped it, and must give back every saved
state, internal datum, trial coefficient and p or v bit for bit; a longer one is
re-stepped at its first, last and :data:`RESTEP_SAMPLE` seeded-random steps, within the
run's Newton tolerance for an implicit method.  Any failure is one
:class:`SolutionFileError` naming the file and what is wrong.  A file of version 1
(before the digest) passes the same checks (an edited value is refused) and is read with
a ``UserWarning`` that it could not be verified against corruption; saving it again
writes version 3.  The Newton options of a run that was given them are saved
(``newton``) so that it is re-stepped with them.
"""
from __future__ import annotations

import gzip
import io
import json
import math
import pickle
import random
import re
import warnings
import zlib
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

import numpy as np

from mpvi._version import __version__
from mpvi.ground.io import DIGEST_PREFIX, content_digest, parse_json, read_regular
from mpvi.model.first_order import FirstOrderSystem
from mpvi.model.mechanics import LagrangianSystem
from mpvi.model.problem import dump_numbers, load_numbers
from mpvi.numbers.context import PrecisionError
from mpvi.numbers.linalg import NotPositiveDefiniteError, SingularMatrixError
from mpvi.numbers.newton import OPTIONS as NEWTON_OPTIONS, NewtonError, tolerance
from mpvi.ground.precision import entry, entry_class
from mpvi.methods.base import State as State            # re-exported: mpvi.State

if TYPE_CHECKING:                       # annotations only: importing mpvi loads no pandas
    import pandas
    import sympy

    from mpvi.ground.types import Array, ExactSolution, NumberLike, Real, Vector
    from mpvi.proof.certify import Certificate
    from mpvi.numbers.context import Context
    from mpvi.model.problem import Problem

FORMAT = "mpvi.Solution"
"""The ``format`` field of a saved solution."""
FORMAT_VERSION = 3
"""The version :meth:`Solution.save` writes: 3 carries the certificate and the system's
mass matrix, potential and exact parameter values as text (what rebuilds the problem);
2 carries the SHA-256 ``digest`` of the content (both are read; 1, without a digest, is
still read, with a warning)."""
READ_VERSIONS = (1, 2, 3)
"""The versions :func:`load_solution` reads."""
MAX_BALL_DIGITS = 100_000
"""The most decimal digits of a mantissa of a saved certificate's ball."""
MAX_FILE_BYTES = 1 << 30
"""The largest saved solution :func:`load_solution` reads (bytes, also after gzip)."""
MAX_DEPTH = 12
"""How deep arrays and objects may nest in a saved solution (the format needs 6)."""


class SolutionFileError(ValueError):
    """A file that :func:`mpvi.load_solution` cannot use.

    Unreadable, not a saved solution, malformed, changed since it was written (its
    digest), or inconsistent.  The message is one line naming the file and what is
    wrong.  A ``ValueError``.
    """


class EventRecord(NamedTuple):
    """One event located by :func:`mpvi.solve` (an entry of ``Solution.events``).

    Parameters
    ----------
    index : int
        Which event function (index into the ``events`` given to :func:`mpvi.solve`).
    name : str
        The event's name.
    t : number
        The time of the sign change, to context precision.
    q : numpy.ndarray
        Positions there (the state y for a first-order system).
    p : numpy.ndarray or None
        Momenta there (None for a first-order system).
    v : numpy.ndarray
        Velocities there (y' for a first-order system).
    direction : int
        +1 for a sign change from negative to positive, -1 for the reverse.
    """

    index: int
    name: str
    t: Real
    q: Vector
    p: Vector | None
    v: Vector
    direction: int


def _jsonable(value):
    """Method parameters as JSON data (Fractions and context numbers as strings)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)                # JSON has no nan/inf: a string
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


@entry_class
class Solution:
    """The result of :func:`mpvi.solve`: the saved states, with dense output and analysis.

    Made by :func:`mpvi.solve` and :func:`load_solution`, not by its constructor.
    ``sol(t)`` evaluates the dense output between the nodes; ``len(sol)`` is the number
    of saved points.  A solution pickles (numbers as lossless decimal strings) and saves
    to JSON (:meth:`save`).

    Attributes
    ----------
    t : numpy.ndarray
        The saved times (context numbers).
    q : numpy.ndarray
        Positions, saved points x dof (for a first-order system: the state y).
    p : numpy.ndarray
        Momenta, saved points x dof; computed through the system's Legendre map when
        first asked for if the method carries v (raises for a first-order system).
    v : numpy.ndarray
        Velocities, likewise.
    y : numpy.ndarray or None
        The method's own second state variable (p for a (q, p) method, v for (q, v)).
    state : {"qp", "qv", "y"}
        The method's state kind ("y": a first-order system).
    method : str
        The method's name.
    params : dict
        Its parameters.
    h : number
        The step.
    steps : int
        Steps taken.
    stats : dict
        Wall time, steps, Newton statistics (solves, mean/max/min iterations, largest
        final residual); for a step chosen from a tolerance (``solve(..., tol=...)``),
        ``tolerance``: the tolerance, the order, the steps N, the step h, the error
        estimate, the first run's steps and the runs taken.
    events : list of EventRecord
        The events located (time, state, direction).
    stopped : str or None
        Why the run ended before its last step (a terminal event, the callback, a
        failure), or None.
    internal : numpy.ndarray or None
        Per-step internal data (Simpson's midpoint, Lobatto's internal points, Newmark's
        acceleration, ...) when every node was saved, else None.
    problem : Problem or None
        The problem (after :func:`load_solution`: rebuilt from the file's text, or None
        where it cannot be, e.g. a first-order system's field).
    system : system or None
        The system (None after :func:`load_solution` without ``system=``).
    ctx : Context
        The number context.
    certificate : Certificate or None
        The proven enclosures of the saved states (``solve(..., certify=True)``:
        :func:`mpvi.certify`), else None.
    posed : dict or None
        ``h`` and ``times`` (the saveat times) as the user wrote them where exact
        (:func:`mpvi.model.problem.posed_value`; with ``Problem.posed``, what
        :func:`mpvi.certify` starts from), else None.
    """

    certificate: Certificate | None = None
    posed: dict[str, Any] | None = None
    _unproven: str | None = None
    """Why a loaded solution has no problem (what :func:`mpvi.certify` says), or None."""

    if TYPE_CHECKING:
        # The attributes above, set by _from_run and load_solution (declared for the type
        # checker only), and the private ones of the dense output.
        t: Vector
        q: Array
        y: Array | None
        state: str | None
        method: str
        params: dict[str, Any]
        h: Real
        t0: Real
        steps: int
        steps_planned: int
        saveat: Any
        stats: dict[str, Any]
        events: list[EventRecord]
        stopped: str | None
        internal: Array | None
        problem: Problem | None
        system: LagrangianSystem | FirstOrderSystem | None
        ctx: Context
        _dense: list[Array] | None
        _dense_kind: str | None
        _tail: Any
        _prepare_args: dict[str, Any]
        _trial: Any
        _converted: dict[str, Array]
        _system_record: dict[str, Any]
        _problem_record: dict[str, Any]
        _names: list[str]

    # ----- construction -----------------------------------------------------------------
    @classmethod
    def _from_run(cls, *, problem, method, params, h, steps_planned, steps, t, q, y, state,
                  internal, dense, dense_kind, stats, events, stopped, saveat, tail,
                  prepare_args, trial):
        self = cls.__new__(cls)
        ctx = problem.ctx
        self.problem, self.system, self.ctx = problem, problem.system, ctx
        self.method, self.params = method.name, dict(params)
        self.h, self.t0, self.steps, self.steps_planned = h, problem.t0, steps, steps_planned
        self.state, self.saveat = state, saveat
        dof = problem.system.dof
        self.t = np.array(t, dtype=ctx.dtype)
        self.q = _matrix(q, len(t), dof, ctx)
        self.y = None if state == "y" else _matrix(y, len(t), dof, ctx)
        self.internal = None
        if internal:
            self.internal = np.empty((len(internal),) + np.shape(internal[0]), dtype=ctx.dtype)
            for j, x in enumerate(internal):
                self.internal[j] = x
        self._dense = None if dense is None else [np.asarray(c, dtype=ctx.dtype) for c in dense]
        self._dense_kind, self._tail, self._prepare_args = dense_kind, tail, prepare_args
        self._trial = trial                   # (polynomials, powers) of a trial basis
        self.stats, self.events, self.stopped = stats, list(events), stopped
        self._converted = {}
        return self

    # ----- the saved states -----------------------------------------------------------------
    def __len__(self):
        return len(self.t)

    @property
    def n(self) -> int:
        """Number of steps taken (as ``steps``)."""
        return self.steps

    def _other(self, kind):
        if self.state == "y":
            raise AttributeError("a first-order solution has its state in .q (no p, no v)")
        if kind not in self._converted:
            if self.system is None:
                raise ValueError(f"this solution carries {self.state[1]}, not {kind}; its "
                                 "system is needed for the Legendre map (load_solution(path, "
                                 "system=...))")
            S, dtype = self.system, self.ctx.dtype
            rows, prev = [], None
            for t, q, y in zip(self.t, self.q, self.y):
                if kind == "p":
                    rows.append(S.momentum(q, y, t))
                else:
                    prev = S.velocity(q, y, t) if S.mass_expr is not None or S.quadratic_in_velocity \
                        else S.velocity(q, y, t, guess=prev)
                    rows.append(prev)
            self._converted[kind] = np.array(rows, dtype=dtype).reshape(self.q.shape)
        return self._converted[kind]

    @property
    def p(self) -> Array:
        """Momenta at the saved points (saved points x dof).

        Computed through the system's Legendre map when first asked for if the method
        carries v; an ``AttributeError`` for a first-order solution, a ``ValueError`` for a
        loaded one without its system.
        """
        return self.y if self.state == "qp" else self._other("p")

    @property
    def v(self) -> Array:
        """Velocities at the saved points (saved points x dof).

        Computed through the system's Legendre map when first asked for if the method
        carries p; an ``AttributeError`` for a first-order solution, a ``ValueError`` for a
        loaded one without its system.
        """
        return self.y if self.state == "qv" else self._other("v")

    # ----- dense output -------------------------------------------------------------------------
    @property
    def dense(self) -> bool:
        """Whether ``sol(t)`` can evaluate between the nodes: every node was saved.

        After :func:`load_solution`, ``sol(t)`` also needs the system attached.
        """
        return self.saveat is None and self.state is not None

    def __call__(self, t: NumberLike | Sequence[NumberLike]) -> State:
        """Evaluate the state at time ``t`` by the method's dense output.

        :mod:`mpvi.engines.dense`: q, p and v of the order p of the method's nodes -- Hermite
        interpolation through the node values and the exact flow's derivatives to order
        max(1, p // 2) at both nodes, the method's trial function where its degree is at
        least p, a GBS substep, or the Taylor polynomial of the Taylor method's substep
        holding t --; at a node, the node itself.  Needs every node saved
        (``saveat=None``).

        Parameters
        ----------
        t : number or sequence of numbers
            A time in the solution's interval (anything the context's ``num`` reads), or
            several.

        Returns
        -------
        State
            (q, p, v) at ``t`` (arrays of rows for a sequence of times; p None for a
            first-order system).

        Raises
        ------
        ValueError
            Not every node saved, no step taken, an empty sequence, a time that is not a
            number (or nan) or outside the interval, or no system attached.
        TypeError
            A time of a type the context does not read (None, a bool, a float in an mp
            context, ...).
        """
        if isinstance(t, np.ndarray) and t.ndim == 0:
            t = t.item()
        if isinstance(t, (list, tuple, np.ndarray)):
            if len(t) == 0:
                raise ValueError("sol(t): an empty sequence of times (give a time or a "
                                 "non-empty sequence of them)")
            pts = [self(s) for s in t]
            stack = (lambda xs: None if xs[0] is None else np.array(xs, dtype=self.ctx.dtype))
            return State(*(stack([getattr(p, f) for p in pts]) for f in ("q", "p", "v")))
        from mpvi.numbers.context import floor
        from mpvi.engines.dense import Segment, StepData
        from mpvi.methods import get_method
        ctx = self.ctx
        if self.saveat is not None:
            raise ValueError(f"dense output needs every node saved (solve with saveat=None); "
                             f"this solution saved saveat={self.saveat!r}")
        t = ctx.number(t, "time t")
        if not ctx.isfinite(t):
            raise ValueError(f"time t = {ctx.to_str(t, 12)} is not a finite number")
        if self.steps == 0:
            raise ValueError("this solution took no step: there is no interval to evaluate in")
        h, t0 = self.h, self.t0
        t_end = self.t[-1]
        lo, hi = (t0, t_end) if h > 0 else (t_end, t0)
        tol = 4 * ctx.eps * (abs(t0) + abs(t_end))
        if not lo - tol <= t <= hi + tol:
            raise ValueError(f"t = {ctx.to_str(t, 12)} is outside the solution's interval "
                             f"[{ctx.to_str(lo, 12)}, {ctx.to_str(hi, 12)}]")
        nsteps = self.steps
        j = min(max(floor((t - t0) / h), 0), nsteps - 1)
        tj = self.t[j]
        theta = (t - tj) / h
        if self._tail is not None and j == nsteps - 1:      # the step cut by a terminal event
            q1, y1 = self._tail
        else:
            q1, y1 = self.q[j + 1], (None if self.y is None else self.y[j + 1])
        if self.system is None:
            raise ValueError("dense output needs the system: load_solution(path, system=...)")
        method = get_method(self.method)
        if self._dense_kind == "trial" and self._dense is None:
            raise ValueError("this solution does not hold the trial coefficients of its steps")
        run = StepData(method, _StepperView(self._dense_kind, self._trial, ctx), self.system, ctx, h,
                   self._prepare_args)
        carry = self._dense[j] if self._dense is not None else None
        seg = Segment(run, tj, self.q[j], None if self.y is None else self.y[j], q1, y1,
                      list(carry) if carry is not None else None)
        q, v = seg.at(theta)
        if self.state == "y":
            return State(q, None, v)
        return State(q, run.momentum(t, q, v), v)

    # ----- analysis along the run ------------------------------------------------------------
    def observable(self, expr: sympy.Basic | str | Sequence[sympy.Basic | str]) -> Array:
        """Evaluate a sympy expression (or a list of them) at every saved point.

        The expressions are in the time symbol :data:`mpvi.TIME` and the system's
        coordinate, velocity and parameter symbols, e.g. an angular momentum
        ``m * (x * vy - y * vx)``; they are compiled against the context.

        Parameters
        ----------
        expr : sympy expression or str, list of them or sympy Matrix
            The observable(s); text is read by :func:`mpvi.ground.expressions.parse_expression`,
            in the names of those symbols as they print (the default velocities of a
            system are private symbols printed ``_v0``, ``_v1``, ...; nothing in the text
            runs as code).

        Returns
        -------
        numpy.ndarray
            Shape (saved points,) for one expression, (saved points, len(expr)) for a
            list.

        Raises
        ------
        ValueError
            Unknown symbols, a first-order system, or no system attached; text that is
            not an expression in the names above
            (:class:`mpvi.ground.expressions.ExpressionError`); what is not a sympy
            expression (a dict, a set, a relation); ``nan``, ``oo``, ``zoo`` (``log(0)``);
            a sum, product or integral (write it out: ``.doit()``); a derivative by t of
            the coordinates or velocities (they are independent symbols: write ``v`` for
            dq/dt); a function mpvi cannot evaluate; a value that is complex, nan or
            infinite (or a division by zero) at a saved point, naming its time.
        PrecisionError
            A float literal (``0.1``, even ``1.0``) in an mp context, as in the system's
            V: it would cap the digits at 53 bits.
        """
        f, exprs, many = self._observable_function(expr)
        rows = [self._observable_row(f, exprs, t, q, v)
                for t, q, v in zip(self.t, self.q, self.v)]
        out = np.array(rows, dtype=self.ctx.dtype)
        return out if many else out[:, 0]

    def _observable_function(self, expr):
        """(the compiled function of the observable(s), the expressions, whether a list was
        given): the checks of :meth:`observable`."""
        import sympy as sp                          # heavy: loaded with the first observable
        from mpvi.compiled.codegen import TIME, compile_exprs
        from mpvi.ground.expressions import as_expression
        S = self.system
        if S is None:
            raise ValueError("observables need the system: load_solution(path, system=...)")
        if S.first_order:
            raise ValueError("observable() is for mechanical systems (sympy symbols of q and v)")
        many = isinstance(expr, (list, tuple)) or (isinstance(expr, sp.MatrixBase))
        allowed = {TIME, *S.coords, *S.velocity_symbols, *S.param_symbols}
        names = {str(s): s for s in [TIME, *S.coords, *S.velocity_symbols, *S.param_symbols]
                 if isinstance(s, sp.Symbol)}          # as printed: the velocities are _v0, ...
        exprs = [as_expression(e, names, what="observable")
                 for e in (list(expr) if many else [expr])]
        for e in exprs:
            _check_observable(e, S, self.ctx)
        if not self.ctx.is_mp:          # float64: a Float is its number (exact as a ratio)
            exprs = [e.xreplace({f: sp.Rational(f) for f in e.atoms(sp.Float)}) for e in exprs]
        free = set().union(*(e.free_symbols for e in exprs)) - allowed
        if free:
            raise ValueError(f"observable: symbols {sorted(map(str, free))} are neither t, the "
                             f"coordinates {S.coord_names}, the velocities "
                             f"{[str(v) for v in S.velocity_symbols]} nor parameters")
        try:
            f = compile_exprs([TIME, S.coords, S.velocity_symbols, S.param_symbols], exprs,
                              self.ctx, "observable")
        except (KeyError, NameError, AttributeError, TypeError, NotImplementedError) as exc:
            raise ValueError(f"observable {_short(exprs)}: mpvi cannot evaluate it in "
                             f"{self.ctx.name} ({type(exc).__name__}: {exc}); write it with "
                             "the functions of the system's V") from None
        return f, exprs, many

    def _observable_row(self, f, exprs, t, q, v):
        """The observables ``f`` at one state, checked (:meth:`observable`)."""
        try:
            row = f(t, q, v, self.system.param_values)
        except NameError as exc:            # a constant the context lacks (EulerGamma)
            raise ValueError(f"observable {_short(exprs)}: mpvi cannot evaluate it in "
                             f"{self.ctx.name} ({exc})") from None
        except (ArithmeticError, ValueError, TypeError) as exc:
            raise ValueError(f"observable {_short(exprs)} cannot be evaluated at t = "
                             f"{self.ctx.to_str(t, 8)} ({type(exc).__name__}: {exc}): it "
                             "must be real and finite on the run") from None
        for e, x in zip(exprs, row):
            _check_value(self.ctx, e, x, t)
        return row

    def _initial_point(self, what):
        """(t0, q0, p0, v0): the saved point 0 when it is the initial time, else the
        problem's initial state; ValueError naming ``what`` where neither is known."""
        if len(self.t) and self.t[0] == self.t0:
            return self.t[0], self.q[0], self.p[0], self.v[0]
        P = self.problem
        if P is None:
            raise ValueError(f"{what}: this solution saved no point at t0 and has no problem "
                             "to take the initial state from")
        return P.t0, P.q0, P.p0, P.v0

    def drift(self, expr: sympy.Basic | str | Sequence[sympy.Basic | str]) -> Real | Vector:
        """Compute the largest change of an observable from its initial value.

        ``max_j |expr(t_j, q_j, v_j) - expr(t0, q0, v0)|`` over the saved points, the
        value at t0 taken from the initial state (a conserved quantity drifts by the
        method's error and the rounding).

        Parameters
        ----------
        expr : sympy expression or str, or a list of them
            Any observable :meth:`observable` accepts.

        Returns
        -------
        number or numpy.ndarray
            A context number (one per expression for a list).

        Raises
        ------
        ValueError
            As :meth:`observable`; a solution whose initial state is unknown (no point
            saved at t0 and no problem).
        PrecisionError
            As :meth:`observable`.
        """
        f, exprs, many = self._observable_function(expr)
        t0, q0, _, v0 = self._initial_point("drift")
        start = self._observable_row(f, exprs, t0, q0, v0)
        values = self.observable(list(exprs))
        out = [max(abs(row[i] - start[i]) for row in values) for i in range(len(exprs))]
        return np.array(out, dtype=self.ctx.dtype) if many else out[0]

    def energy_drift(self) -> Real:
        """Compute the largest change of the energy from its initial value.

        ``max_j |H(q_j, p_j) - H(q0, p0)|`` over the saved points, H = p.v - L the
        system's energy (:meth:`mpvi.LagrangianSystem.energy`, as :func:`mpvi.energy`
        computes it): for a system that has one, an autonomous Lagrangian with no force
        (:meth:`mpvi.LagrangianSystem.energy_obstacle`, the one rule).

        Returns
        -------
        number
            A context number.

        Raises
        ------
        ValueError
            A system without a conserved energy (a force, a time-dependent L: the message
            says which), a first-order system, no system attached (``load_solution(path,
            system=...)``).
        """
        S = self.system
        if S is None:
            raise ValueError("energy_drift needs the system: load_solution(path, system=...)")
        if S.first_order:
            raise ValueError(f"energy_drift: {S.name} is a first-order system y' = f(t, y): "
                             "it has no Lagrangian energy; use drift(expr) of a quantity of "
                             "your own")
        why = S.energy_obstacle()
        if why is not None:
            raise ValueError(f"energy_drift: {why}; use drift(expr) for a quantity that is")
        _, q0, p0, _ = self._initial_point("energy_drift")
        H0 = S.energy(q0, p0)
        energies = getattr(S, "energies", None)
        H = energies(self.q, self.p) if energies is not None else \
            [S.energy(q, p) for q, p in zip(self.q, self.p)]
        return max(abs(x - H0) for x in H)

    def error(self, exact: ExactSolution | None = None) -> dict[str, Vector]:
        """Compute the errors at the saved points against the exact solution.

        Parameters
        ----------
        exact : callable, optional
            The exact solution in the problem's protocol (``t -> (q, p)`` or
            ``t -> (q, v)`` as the problem was given); default: the problem's.

        Returns
        -------
        dict
            ``{"q": e_q, "p": e_p, "v": e_v}`` (first order: ``{"y": e_y}``), each an
            array of Euclidean norms ``|x_j - x_exact(t_j)|_2``.

        Raises
        ------
        ValueError
            No exact solution, an ``exact`` that does not match the initial data, an
            ``exact`` that is nan or infinite at a saved point (named), or no
            problem attached (a solution read by :func:`load_solution`, even with
            ``exact`` given).

        See Also
        --------
        mpvi.error_norms : The largest of these errors.
        """
        ctx = self.ctx
        problem = self.problem
        if problem is None:
            raise ValueError("this solution has no problem attached (load_solution): pass exact=")
        if exact is not None and exact is not problem.exact:
            problem = problem.replace(exact=exact)
        out = {k: [] for k in (("y",) if self.state == "y" else ("q", "p", "v"))}
        values = {"q": self.q} if self.state == "y" else {"q": self.q, "p": self.p, "v": self.v}
        for j, t in enumerate(self.t):
            qe, pe, ve = problem.exact_state(t)
            if not ctx.all_finite([qe] if self.state == "y" else [qe, pe, ve]):
                raise ValueError(f"the exact solution is not finite at t = {ctx.to_str(t, 8)} "
                                 f"(saved point {j}): its errors are undefined there; pass an "
                                 "exact solution defined on the whole run")
            if self.state == "y":
                out["y"].append(ctx.norm2(values["q"][j] - qe))
                continue
            for k, ref in (("q", qe), ("p", pe), ("v", ve)):
                out[k].append(ctx.norm2(values[k][j] - ref))
        return {k: np.array(v, dtype=ctx.dtype) for k, v in out.items()}

    # ----- leaving mpvi -----------------------------------------------------------------------
    def columns(self) -> list[str]:
        """Return the column names of :meth:`to_frame`.

        Returns
        -------
        list of str
            The time "t", then the coordinates, p_<coordinate>, v_<coordinate> (first
            order: "t" and the state's labels).
        """
        names = list(self.system.coord_names) if self.system is not None else list(self._names)
        if self.state == "y":
            return ["t"] + names
        return ["t"] + names + [f"p_{c}" for c in names] + [f"v_{c}" for c in names]

    def to_frame(self, numbers: str = "str") -> pandas.DataFrame:
        """Tabulate the saved points as a pandas DataFrame (imports pandas).

        Parameters
        ----------
        numbers : {"str", "float"}, default "str"
            "str": lossless decimal strings (read back with ``ctx.num``); "float":
            float64 (for plotting).

        Returns
        -------
        pandas.DataFrame
            One row per saved point, columns :meth:`columns`.

        Raises
        ------
        ValueError
            Another ``numbers``.
        """
        import pandas as pd
        if numbers not in ("str", "float"):
            raise ValueError(f"numbers must be 'str' (lossless) or 'float', got {numbers!r}")
        ctx = self.ctx
        conv = ctx.dump if numbers == "str" else (lambda x: float(x))
        blocks = [self.t.reshape(-1, 1), self.q] + ([] if self.state == "y" else [self.p, self.v])
        data = np.hstack(blocks) if len(self.t) else np.empty((0, len(self.columns())))
        return pd.DataFrame([[conv(x) for x in row] for row in data], columns=self.columns())

    def _record(self):
        """The JSON record of :meth:`save`."""
        ctx = self.ctx
        d = ctx.dump
        S = self.system
        rec = {"format": FORMAT, "version": FORMAT_VERSION}
        rec["mpvi_version"] = __version__
        rec["context"] = {"kind": _context_kind(ctx), "dps": ctx.dps}
        if S is not None:
            rec["system"] = _system_record(S)
        else:
            rec["system"] = self._system_record
        p = self.problem
        if p is not None:
            rec["problem"] = {"name": p.name, "given": p.given, "t0": d(p.t0),
                              "t1": None if p.t1 is None else d(p.t1),
                              "q0": [d(x) for x in p.q0],
                              "p0": None if p.given != "p" else [d(x) for x in p.p0],
                              "v0": None if p.given != "v" else [d(x) for x in p.v0]}
        else:
            rec["problem"] = self._problem_record
        rec.update({"method": self.method, "params": _jsonable(self.params), "h": d(self.h),
                    "t0": d(self.t0), "steps": self.steps, "steps_planned": self.steps_planned,
                    "saveat": _jsonable(self.saveat), "state": self.state,
                    "t": [d(x) for x in self.t], "q": _rows(self.q, d)})
        if self.state != "y":
            rec["p"] = _rows(self.p, d)
            rec["v"] = _rows(self.v, d)
        rec["internal"] = None if self.internal is None else {
            "shape": list(self.internal.shape), "values": [d(x) for x in np.ravel(self.internal)]}
        rec["dense"] = {"kind": self._dense_kind,
                        "trial": None if self._trial is None else
                        {"polynomials": [[str(c) for c in p] for p in self._trial[0]],
                         "powers": list(self._trial[1])},
                        "coefficients": None if self._dense is None else
                        [_rows(c, d) for c in self._dense],
                        "tail": None if self._tail is None else
                        [[d(x) for x in self._tail[0]],
                         None if self._tail[1] is None else [d(x) for x in self._tail[1]]]}
        rec["stats"] = _jsonable(self.stats)
        rec["events"] = [{"index": e.index, "name": e.name, "t": d(e.t), "q": [d(x) for x in e.q],
                          "p": None if e.p is None else [d(x) for x in e.p],
                          "v": None if e.v is None else [d(x) for x in e.v],
                          "direction": e.direction} for e in self.events]
        rec["stopped"] = self.stopped
        rec["certificate"] = _certificate_record(self.certificate)
        rec["posed"] = self._posed_record_of()
        newton = (getattr(self, "_prepare_args", None) or {}).get("newton")
        if newton:                       # only where given: what re-steps the run on loading
            rec["newton"] = {k: v if k == "max_iter" else d(ctx.number(v, f"Newton option {k}"))
                             for k, v in newton.items()}
        return rec

    def _posed_record_of(self):
        """The inputs as the user wrote them where exact (``Solution.posed``: h and the
        saveat times; ``Problem.posed``: t0, t1, q0, p0, v0), as text, or None where none
        is kept: what :func:`mpvi.certify` walks from, saved so that a loaded solution is
        certified as the problem was posed."""
        own = getattr(self, "posed", None) or {}
        problem = getattr(self.problem, "posed", None) if self.problem is not None else None
        if not own and not problem:
            return getattr(self, "_posed_record", None)
        rec = {"h": _posed_text(own.get("h")),
               "times": None if own.get("times") is None else
               [_posed_text(x) for x in own["times"]]}
        for key in ("t0", "t1", "q0", "p0", "v0"):
            x = (problem or {}).get(key)
            rec[key] = [_posed_text(v) for v in x] if isinstance(x, list) else _posed_text(x)
        return rec

    def save(self, path: str | Path) -> Path:
        """Write the solution to a JSON file, every number with all its digits.

        Atomically (a temporary file renamed into place); gzip-compressed when the name
        ends in ``.gz``.  The file holds the context, the method and its parameters, the
        problem's initial data, the system's coordinates, Lagrangian, force, mass matrix,
        potential and parameters (their numbers and the exact values given) as text, the
        saved points, the dense-output data, the statistics, the events and the
        certificate (``certificate``, ball for ball), so that :func:`load_solution` gives
        back a solution that :func:`mpvi.certify` and :func:`mpvi.verify` take.

        Parameters
        ----------
        path : str or pathlib.Path
            The file (``.json`` or ``.json.gz``).

        Returns
        -------
        pathlib.Path
            The path written.

        See Also
        --------
        load_solution : Read it back, digit for digit.
        """
        from mpvi.ground.io import atomic_path
        path = Path(path)
        rec = self._record()
        rec["digest"] = content_digest(rec)
        text = json.dumps(rec, separators=(",", ":"), allow_nan=False)
        with atomic_path(path) as tmp:
            if path.suffix == ".gz":
                with gzip.open(tmp, "wt", encoding="utf-8") as f:
                    f.write(text)
            else:
                tmp.write_text(text, encoding="utf-8")
        return path

    # ----- pickling and display ---------------------------------------------------------------
    def __getstate__(self):
        ctx = self.ctx
        state = {k: v for k, v in self.__dict__.items() if k not in ("_converted", "ctx")}
        state["events"] = [tuple(e) for e in self.events]
        if state.get("_event_functions"):
            try:                                  # a lambda, a closure: not picklable
                pickle.dumps(state["_event_functions"])
            except Exception:
                del state["_event_functions"]     # certify then says the event functions are not kept
        return {"ctx": ctx, **{k: dump_numbers(ctx, v) for k, v in state.items()}}

    def __setstate__(self, state):
        ctx = state.pop("ctx")
        self.__dict__.update({k: load_numbers(ctx, v) for k, v in state.items()})
        self.ctx, self._converted = ctx, {}
        self.events = [EventRecord(*e) for e in self.events]

    def __repr__(self):
        ctx = self.ctx
        span = (f"t = {ctx.to_str(self.t[0], 6)} .. {ctx.to_str(self.t[-1], 6)}"
                if len(self.t) else "no saved points")
        newton = self.stats.get("newton") if isinstance(self.stats, dict) else None
        parts = [f"method={self.method!r}"]
        if self.params:
            parts.append("params=" + ", ".join(f"{k}={v}" for k, v in self.params.items()))
        name = self.problem.name if self.problem is not None else self._problem_record.get("name")
        parts += [f"problem={name!r}", f"{len(self.t)} saved points of {self.steps} steps",
                  span, f"context {ctx.name}"]
        if newton:
            parts.append(f"Newton {newton['mean_iterations']:.2f} iterations/step")
        if self.events:
            parts.append(f"{len(self.events)} events")
        if self.stopped:
            parts.append(f"stopped: {self.stopped}")
        return f"<Solution {', '.join(parts)}>"


def _check_observable(e, S, ctx) -> None:
    """Refuse an observable that is not a real expression mpvi evaluates in ``ctx``: not a
    sympy expression, a float literal in an mp context (the rule of V,
    :meth:`mpvi.model.derivation.Model.check_context`), ``nan``/``oo``/``zoo``, a sum,
    product or integral, a derivative by t of the state, a function ``ctx`` lacks."""
    # sympy and the code generator (which imports it) are heavy: loaded with the first
    # observable, as in Solution.observable
    import sympy as sp
    from sympy.concrete.expr_with_limits import ExprWithLimits
    from mpvi.compiled.codegen import TIME, check_functions
    if not isinstance(e, sp.Expr):
        raise ValueError(f"observable: {_short(e)} is a {type(e).__name__}, not an "
                         "expression; give a sympy expression in t, the coordinates, the "
                         "velocities and the parameters (or a list of them)")
    floats = sorted({str(x) for x in e.atoms(sp.Float)})
    if floats and ctx.is_mp:
        raise PrecisionError(f"observable: float literal(s) {', '.join(floats)} would cap a "
                             f"{ctx.dps}-digit computation at 53 bits; write sp.Rational(1, 10)"
                             " or the text '0.1' (read exactly)")
    infinite = [str(x) for x in (sp.nan, sp.oo, sp.zoo) if e.has(x)] + (
        ["-oo"] if e.has(sp.S.NegativeInfinity) else [])
    if infinite:
        raise ValueError(f"observable {_short(e)}: {', '.join(infinite)} is not a finite "
                         "real number (log(0) is zoo); an observable must be real and finite")
    limits = [a for a in sp.preorder_traversal(e) if isinstance(a, (ExprWithLimits, sp.Limit))]
    if limits:
        raise ValueError(f"observable: {_short(limits[0])} ({type(limits[0]).__name__}) is not "
                         "evaluated by mpvi; write it out (e.g. with .doit())")
    state = set(S.coords) | set(S.velocity_symbols)
    for d in e.atoms(sp.Derivative):
        if TIME in d.variables and d.expr.free_symbols & state:
            raise ValueError(f"observable: {d} would be the partial derivative by t, 0 for "
                             "the coordinates and velocities (independent symbols), not the "
                             "rate along the run; write the velocities for dq/dt")
    check_functions([e], "observable", ctx, order=0)


def _check_value(ctx, e, x, t) -> None:
    """Refuse a value of observable ``e`` at time ``t`` that is complex, nan or infinite."""
    if ctx.is_complex(x) or isinstance(x, complex):
        raise ValueError(f"observable {_short(e)} is complex ({x}) at t = {ctx.to_str(t, 8)}: "
                         "it must be real on the run")
    if not ctx.isfinite(x):
        raise ValueError(f"observable {_short(e)} is {x} at t = {ctx.to_str(t, 8)} (outside "
                         "its domain or at a pole): it must be finite on the run")


class _StepperView:
    """What a Segment needs from the stepper after the run: its dense kind and trial basis."""

    def __init__(self, kind, trial, ctx):
        from mpvi.engines.dense import TrialBasis
        self.dense = kind
        self.trial_basis = None if trial is None else TrialBasis(*trial, ctx)


def _matrix(rows, m, dof, ctx):
    out = np.empty((m, dof), dtype=ctx.dtype)
    for i, r in enumerate(rows):
        out[i] = r
    return out


def _rows(a, d):
    return [[d(x) for x in row] for row in a]


def _context_kind(ctx):
    from mpvi.numbers.context import FPContext, GMPContext
    return "fp" if isinstance(ctx, FPContext) else ("gmp" if isinstance(ctx, GMPContext) else "mp")


def _system_record(S):
    """The system as text: its coordinates, velocities, Lagrangian, force, mass matrix and
    potential (where it is given by them) as sympy prints them, which
    :func:`mpvi.ground.expressions.parse_expression` reads back; its parameters as the context's
    numbers and, where every one was given exactly (a decimal or fraction text, an int, a
    Fraction, a sympy rational), those values (``sources``, what the system reads again in
    a context of other digits)."""
    ctx = S.ctx
    if S.first_order:
        return {"name": S.name, "kind": "first_order", "coordinates": list(S.labels)}
    return {"name": S.name, "kind": "mechanical", "class": type(S).__name__,
            "coordinates": list(S.coord_names),
            "velocities": [str(v) for v in S.velocity_symbols],
            "lagrangian": str(S.lagrangian_expr),
            "force": [str(f) for f in S.force_expr] if S.has_force else None,
            "parameters": {str(s): ctx.dump(x) for s, x in zip(S.param_symbols, S.param_values)},
            "mass": None if S.mass_expr is None else
            [[str(x) for x in row] for row in S.mass_expr.tolist()],
            "potential": None if S.potential_expr is None else str(S.potential_expr),
            "sources": _sources(S)}


_EXACT_SOURCE = re.compile(r"[+-]?(?:\d{1,200}(?:/\d{1,200})?|(?:\d{1,200}\.?\d{0,200}|\.\d{1,200})"
                           r"(?:[eE][+-]?\d{1,6})?)")
"""An exact parameter value as text: an integer, a fraction p/q or a decimal."""


def _sources(S):
    """``{parameter: text}`` of the exact values a system's parameters were given, or None
    where one was not given exactly (then its number is what it is)."""
    import sympy as sp
    from mpvi.systems.linear import LinearSystem
    if isinstance(S, LinearSystem):
        given = {}
        for letter, m in zip("mk", S._matrices):
            a = np.array(m, dtype=object)
            for i in range(S.dof):
                for j in range(i, S.dof):
                    given[f"{letter}{i}_{j}"] = a[i, j]
    else:
        given = {str(k): v for k, v in S._params.items()}
    out = {}
    for name, x in given.items():
        if not (isinstance(x, (str, int, Fraction, sp.Rational)) and not isinstance(x, bool)):
            return None
        text = str(x).strip()
        if not _EXACT_SOURCE.fullmatch(text):
            return None
        out[name] = text
    return out


def _posed_text(x):
    """An exact input as text (None for none): an int, a ``Fraction`` as ``p/q``, a string
    as written, a sympy number as sympy prints it (read back by
    :func:`mpvi.ground.expressions.parse_expression`)."""
    if x is None or isinstance(x, bool):
        return None
    if isinstance(x, Fraction):
        return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)
    if isinstance(x, (int, str)):
        return str(x).strip()
    import sympy
    return sympy.sstr(x) if isinstance(x, sympy.Basic) else None


def _certificate_record(cert):
    """A :class:`mpvi.Certificate` as JSON data (None for none): every ball as the exact
    integers of its midpoint and radius (mantissa, exponent, radius mantissa, radius
    exponent) in decimal text, the proven digits (``"inf"`` for an exact value), the
    widths, the failed step and why, the Jacobian counts."""
    if cert is None:
        return None
    from mpvi.proof.certify import _pack

    def ball(b):
        return [str(x) for x in _pack(b)]

    return {"method": cert.method, "dps": cert.context.dps, "nodes": list(cert.nodes),
            "t": [ball(b) for b in cert.t], "q": [[ball(b) for b in v] for v in cert.q],
            "y": [None if v is None else [ball(b) for b in v] for v in cert.y],
            "digits": [["inf" if math.isinf(d) else float(d) for d in row]
                       for row in cert.digits],
            "widths": [float(w) for w in cert.widths], "failed_step": cert.failed_step,
            "why": cert.why, "jacobians": [int(j) for j in cert.jacobians],
            "statement": getattr(cert, "statement", None)}


@entry
def load_solution(path: str | Path, system: LagrangianSystem | FirstOrderSystem | None = None
                  ) -> Solution:
    """Read a solution written by :meth:`Solution.save`, digit for digit, after checking it.

    The file is untrusted data, checked before it is used (the module docstring lists
    the checks): a regular file of at most :data:`MAX_FILE_BYTES`, valid JSON nested at
    most :data:`MAX_DEPTH` deep, every field of the format with its type and bounds
    (precision at most :data:`mpvi.numbers.context.MAX_DPS` digits, each number a finite decimal
    of no more digits than the context writes), the SHA-256 digest of the whole content,
    and the consistency of the run (shapes, the node times ``t0 + k h``, steps, events,
    dense-output data, the certificate's nodes and time balls, the rebuilt problem's
    t0 and q0).  A file of format version 1 (before the digest) is read with a
    ``UserWarning`` if it passes every other check.

    Parameters
    ----------
    path : str or pathlib.Path
        The file (``.json`` or ``.json.gz``).
    system : LagrangianSystem or FirstOrderSystem, optional
        The system the solution was computed for: attached (after checking its
        coordinates, Lagrangian and parameters against the file).  Without it, the system
        is rebuilt from the file's text (format version 3 and 2, a mechanical system; the
        module docstring), or else ``t``, ``q``, ``p``, ``v``, ``internal``, ``stats``,
        ``events`` are all there.

    Returns
    -------
    Solution
        The solution, in a context of the saved kind and digits, with its problem
        (rebuilt from the saved initial data, where its system is known) and its
        certificate (``certificate``, if it was saved with one), both checked.

    Raises
    ------
    SolutionFileError
        A file that is not a valid saved mpvi solution: one line naming the file and
        what is wrong (a ``ValueError``).
    ValueError
        A system that does not match the file (its text, its context's kind or digits).
    TypeError
        A ``system`` that is not a :class:`mpvi.LagrangianSystem` or
        :class:`mpvi.FirstOrderSystem`.
    """
    if system is not None and not isinstance(system, (LagrangianSystem, FirstOrderSystem)):
        raise TypeError(f"load_solution: system should be the LagrangianSystem or "
                        f"FirstOrderSystem the solution was computed for (or None), not "
                        f"{type(system).__name__} {_short(repr(system))}")
    path = Path(path)
    return _Reader(path).solution(system)


_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,9})?")
"""A number as :meth:`mpvi.numbers.context.Context.dump` writes it: a finite decimal literal."""
_FRACTION = re.compile(r"[+-]?\d{1,60}(?:/\d{1,60})?")
"""An exact coefficient of a trial basis, as :class:`fractions.Fraction` writes it."""
_FIELDS = {"format", "version", "mpvi_version", "context", "system", "problem", "method",
           "params", "h", "t0", "steps", "steps_planned", "saveat", "state", "t", "q", "p", "v",
           "internal", "dense", "stats", "events", "stopped", "certificate", "posed",
           "digest", "newton"}
_OPTIONAL = {"newton"}
"""The fields a file may omit: the Newton options, written only where a run was given
them."""
RESTEP_ALL = 64
"""Up to this many steps (or stretches between saved nodes), :func:`load_solution`
re-steps every one; beyond, the first, the last and :data:`RESTEP_SAMPLE` others drawn
by a generator seeded with the file's digest."""
RESTEP_SAMPLE = 16
"""How many steps besides the first and the last a long run re-steps on loading."""
RESTEP_NODES = 1024
"""The most steps a stretch between two saved nodes (``saveat=k``) is re-stepped over."""
_MAX_TEXT = 1 << 20
"""The longest text field (a Lagrangian as text)."""


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


class _Reader:
    """The checks of :func:`load_solution`, in order: the file, its JSON, the fields and
    their bounds, the digest, the consistency of the run; then the numbers."""

    def __init__(self, path):
        self.path = path

    def fail(self, what):
        raise SolutionFileError(f"{self.path}: {what}") from None

    def solution(self, system=None):
        rec = self.record()
        version = rec.get("version")
        ctx = self.context(rec.get("context"))
        self.ctx = ctx
        self.fields(rec, version)
        if version >= 2:
            if rec["digest"] != content_digest(rec):
                self.fail("its content does not match its SHA-256 digest (the file was changed "
                          "or damaged after it was written)")
        with ctx.active():
            sol = self.build(rec)
            sol.problem, sol.system, sol._unproven = None, None, None
            if system is not None:
                attach(sol, system)
            self.restore_problem(sol, rec)
            if sol.system is not None:
                self.restep(sol, rec.get("digest"))
            elif sol.steps:
                warnings.warn(f"{self.path}: read without its system ({sol._unproven}): "
                              f"its states are not checked against the method's steps",
                              UserWarning, stacklevel=3)
            sol.certificate = self.certificate(rec.get("certificate"), sol,
                                               self.posed(rec.get("posed"), self.dof))
        if version == 1:
            warnings.warn(f"{self.path}: a saved solution of format version {version}, which "
                          f"carries no digest: read unverified against corruption (every other "
                          f"check passed); save it again to write version {FORMAT_VERSION}",
                          UserWarning, stacklevel=3)
        return sol

    # ----- the file and its JSON ------------------------------------------------------------
    def record(self):
        try:
            data = read_regular(self.path, MAX_FILE_BYTES)
        except FileNotFoundError:
            self.fail("no such file")
        except OSError as exc:
            self.fail(f"cannot read it ({exc.strerror or exc})")
        except ValueError as exc:
            self.fail(f"not a saved solution: it {exc}")
        if self.path.suffix == ".gz":
            try:
                with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
                    data = f.read(MAX_FILE_BYTES + 1)
            except (OSError, EOFError, zlib.error) as exc:
                self.fail(f"not a readable gzip file ({exc})")
            if len(data) > MAX_FILE_BYTES:
                self.fail(f"it decompresses to more than {MAX_FILE_BYTES} bytes")
        try:
            rec = parse_json(data, MAX_DEPTH)
        except ValueError as exc:
            self.fail(f"not a readable saved solution: it {exc}")
        if not isinstance(rec, dict) or rec.get("format") != FORMAT:
            self.fail(f"not an mpvi solution file (no format {FORMAT!r})")
        if rec.get("version") not in READ_VERSIONS or isinstance(rec.get("version"), bool):
            self.fail(f"solution format version {_short(rec.get('version'))}; this mpvi reads "
                      f"versions {', '.join(map(str, READ_VERSIONS[1:]))} (and 1, without a "
                      f"digest)")
        return rec

    def context(self, c):
        from mpvi.numbers.context import MAX_DPS, get_context
        if not isinstance(c, dict) or set(c) != {"kind", "dps"}:
            self.fail(f"malformed saved solution: context should be {{\"kind\": ..., \"dps\": "
                      f"...}}, not {_short(c)}")
        kind, dps = c["kind"], c["dps"]
        if kind not in ("gmp", "mp", "fp"):
            self.fail(f"malformed saved solution: unknown context kind {_short(kind)}")
        if not _is_int(dps) or not 1 <= dps <= MAX_DPS:
            self.fail(f"malformed saved solution: context digits {_short(dps)} (from 1 to "
                      f"{MAX_DPS})")
        try:
            ctx = get_context(kind, dps)
        except ImportError as exc:
            self.fail(f"its context {kind!r} needs a package that is not installed ({exc})")
        if ctx.dps != dps:
            self.fail(f"malformed saved solution: a {kind} context has {ctx.dps} digits, "
                      f"not {dps}")
        return ctx

    # ----- the fields -------------------------------------------------------------------------
    def malformed(self, where, what):
        self.fail(f"malformed saved solution: {where} {what}")

    def need(self, rec, key, where="record"):
        if not isinstance(rec, dict):
            self.malformed(where, f"should be an object, not {_short(rec)}")
        if key not in rec:
            self.fail(f"malformed saved solution (KeyError: {key!r})")
        return rec[key]

    def text(self, x, where, none=False, limit=_MAX_TEXT):
        if x is None and none:
            return x
        if not isinstance(x, str) or len(x) > limit:
            self.malformed(where, f"should be a text of at most {limit} characters, not "
                                  f"{_short(x)}")
        return x

    def integer(self, x, where, lo, hi):
        if not _is_int(x) or not lo <= x <= hi:
            self.malformed(where, f"should be an integer from {lo} to {hi}, not {_short(x)}")
        return x

    def number(self, x, where):
        """A number string of the context: a finite decimal of no more digits than the
        context writes (a file of more digits is not of this precision)."""
        if not isinstance(x, str) or len(x) > 4 * self.max_len or not _NUMBER.fullmatch(x):
            self.malformed(where, f"should be a finite decimal number of the context, not "
                                  f"{_short(x)}")
        mantissa = x.partition("e")[0].partition("E")[0]
        if len(x) > self.max_len or sum(ch.isdigit() for ch in mantissa) > self.max_digits:
            self.malformed(where, f"has more digits than a {self.ctx.dps}-digit context "
                                  f"writes ({_short(x)}): not a number of this precision")
        return x

    def vector(self, x, where, n, none=False):
        if x is None and none:
            return x
        if not isinstance(x, list) or len(x) != n:
            self.malformed(where, f"should be a list of {n} numbers, not {_short(x)}")
        for i, s in enumerate(x):
            self.number(s, f"{where}[{i}]")
        return x

    def matrix(self, x, where, m, n):
        if not isinstance(x, list) or len(x) != m:
            self.malformed(where, f"should be a list of {m} rows, not {_short(x)}")
        for i, row in enumerate(x):
            self.vector(row, f"{where}[{i}]", n)
        return x

    def fields(self, rec, version):
        need = self.need
        self.max_digits = self.ctx.repr_digits + 1
        self.max_len = self.ctx.repr_digits + 16
        required = _FIELDS - _OPTIONAL - ({"p", "v"} if rec.get("state") == "y" else set()) \
            - ({"digest"} if version == 1 else set()) \
            - ({"certificate", "posed"} if version < 3 else set())
        if version < 3 and (rec.get("certificate") is not None or rec.get("posed") is not None):
            self.malformed("record", f"of format version {version} has a certificate or posed "
                                     f"inputs, which only version 3 has: the file was changed")
        if version == 1 and "digest" in rec:     # version 2 with its version changed
            self.malformed("record", "of format version 1 has a digest, which only version "
                                     f"{FORMAT_VERSION} has: the file was changed")
        for key in sorted(required):
            need(rec, key)
        extra = set(rec) - _FIELDS
        if extra:
            self.malformed("record", f"has an unknown field {sorted(extra)[0]!r}")
        if version >= 2:
            d = rec["digest"]
            if not (isinstance(d, str) and d.startswith(DIGEST_PREFIX)
                    and re.fullmatch(r"[0-9a-f]{64}", d[len(DIGEST_PREFIX):])):
                self.malformed("digest", f"should be {DIGEST_PREFIX}<64 hex digits>, not "
                                         f"{_short(d)}")
        self.text(rec["mpvi_version"], "mpvi_version", limit=100)
        kind = self.system_fields(rec["system"])
        state = self.method_fields(rec, kind)
        self.run_fields(rec, state)
        self.problem(rec["problem"], kind)
        self.internal(rec["internal"], rec["steps"], rec["saveat"])
        self.dense(rec["dense"], rec["steps"], rec["saveat"], state)
        self.stats(rec["stats"])
        self.events(rec["events"], state)
        self.text(rec["stopped"], "stopped", none=True, limit=10_000)
        self.system_text(rec["system"])

    def system_fields(self, S):
        """The system: its coordinates give the number of degrees of freedom; its kind."""
        need = self.need
        kind = need(S, "kind", "system")
        if kind not in ("mechanical", "first_order"):
            self.malformed("system.kind", f"should be mechanical or first_order, not "
                                          f"{_short(kind)}")
        self.text(need(S, "name", "system"), "system.name", limit=10_000)
        names = need(S, "coordinates", "system")
        if not isinstance(names, list) or not names or \
                any(not isinstance(c, str) or len(c) > 1000 for c in names):
            self.malformed("system.coordinates", f"should be a list of names, not {_short(names)}")
        dof = self.dof = len(names)
        if kind == "mechanical":
            self.text(need(S, "class", "system"), "system.class", limit=1000)
            vel = need(S, "velocities", "system")
            if not isinstance(vel, list) or len(vel) != dof or \
                    any(not isinstance(c, str) or len(c) > 1000 for c in vel):
                self.malformed("system.velocities", f"should be a list of {dof} names")
            self.text(need(S, "lagrangian", "system"), "system.lagrangian")
            force = need(S, "force", "system")
            if force is not None and (not isinstance(force, list) or len(force) != dof or any(
                    not isinstance(f, str) or len(f) > _MAX_TEXT for f in force)):
                self.malformed("system.force", f"should be null or a list of {dof} texts")
            par = need(S, "parameters", "system")
            if not isinstance(par, dict):
                self.malformed("system.parameters", f"should be an object, not {_short(par)}")
            for k, x in par.items():
                self.number(x, f"system.parameters[{k!r}]")
        return kind

    def system_text(self, S):
        """The system's optional text of format version 3: its mass matrix, potential and
        exact parameter values (checked after the run's shapes)."""
        if S["kind"] != "mechanical":
            return
        dof = self.dof
        mass = S.get("mass")
        if mass is not None and (not isinstance(mass, list) or len(mass) != dof or any(
                not isinstance(r, list) or len(r) != dof or any(
                    not isinstance(x, str) or len(x) > _MAX_TEXT for x in r) for r in mass)):
            self.malformed("system.mass", f"should be null or {dof} rows of {dof} texts")
        self.text(S.get("potential"), "system.potential", none=True)
        sources = S.get("sources")
        if sources is not None and (not isinstance(sources, dict)
                                    or set(sources) != set(S["parameters"])
                                    or any(not isinstance(x, str) or
                                           not _EXACT_SOURCE.fullmatch(x)
                                           for x in sources.values())):
            self.malformed("system.sources", "should be null or the exact value of every "
                                             "parameter as a decimal or fraction text")

    def method_fields(self, rec, kind):
        """The method, its state (returned) and its parameters."""
        from mpvi.methods import get_method
        method = self.text(rec["method"], "method", limit=100)
        try:
            m = get_method(method)
        except ValueError:
            self.malformed("method", f"{method!r} is not a registered method")
        state = rec["state"]
        want = "y" if kind == "first_order" else m.state
        if state != want:
            self.malformed("state", f"should be {want!r} for method {method!r} on a {kind} "
                                    f"system, not {_short(state)}")
        params = rec["params"]
        if not isinstance(params, dict):
            self.malformed("params", f"should be an object, not {_short(params)}")
        for k, x in params.items():
            if k not in m.params:
                self.malformed("params", f"name a parameter {k!r} that method {method!r} "
                                         f"does not have")
            if not (x is None or isinstance(x, bool) or (_is_int(x) and abs(x) <= 10 ** 9)
                    or (isinstance(x, str) and len(x) <= 100)):
                self.malformed(f"params[{k!r}]", f"should be an integer, a name or null, "
                                                 f"not {_short(x)}")
            if isinstance(m.params[k], Fraction):
                if not isinstance(x, (int, str)) or not _FRACTION.fullmatch(str(x)) or \
                        str(x).endswith("/0") or re.search(r"/0+$", str(x)):
                    self.malformed(f"params[{k!r}]", f"should be a fraction p/q, not {_short(x)}")
        newton = rec.get("newton")
        if newton is not None:
            if not m.takes_newton_options or not isinstance(newton, dict) or not newton \
                    or not set(newton) <= set(NEWTON_OPTIONS):
                names = ", ".join(NEWTON_OPTIONS)
                self.malformed("newton", f"should be the Newton options ({names}) of an "
                                         f"implicit method, not {_short(newton)}")
            if "max_iter" in newton:
                self.integer(newton["max_iter"], "newton.max_iter", 1, 10 ** 6)
            for k in ("rtol", "scale"):
                if k in newton:
                    self.number(newton[k], f"newton.{k}")
        return state

    def run_fields(self, rec, state):
        """The step, the step counts, the saved times and points."""
        self.number(rec["h"], "h")
        self.number(rec["t0"], "t0")
        steps_planned = self.integer(rec["steps_planned"], "steps_planned", 0, 10 ** 15)
        steps = self.integer(rec["steps"], "steps", 0, steps_planned)
        saveat = rec["saveat"]
        if not (saveat is None or saveat == "times" or (_is_int(saveat) and saveat >= 1)):
            self.malformed("saveat", f"should be null, an integer >= 1 or \"times\", not "
                                     f"{_short(saveat)}")
        t = rec["t"]
        if not isinstance(t, list) or not t:
            self.malformed("t", f"should be a non-empty list of times, not {_short(t)}")
        n = len(t)
        if saveat is None and n != steps + 1:
            self.malformed("t", f"has {n} times; every node saved after {steps} steps makes "
                                f"{steps + 1}")
        if _is_int(saveat) and n > steps // saveat + 3:
            self.malformed("t", f"has {n} times, more than every {saveat}-th node of {steps} "
                                f"steps makes")
        self.vector(t, "t", n)
        for key in ("q",) if state == "y" else ("q", "p", "v"):
            self.matrix(rec[key], key, n, self.dof)

    def problem(self, P, kind):
        if P is None:
            return
        for key in ("name", "given", "t0", "t1", "q0", "p0", "v0"):
            self.need(P, key, "problem")
        self.text(P["name"], "problem.name", limit=10_000)
        given = P["given"]
        if given not in (("y",) if kind == "first_order" else ("p", "v")):
            self.malformed("problem.given", f"cannot be {_short(given)} for a {kind} system")
        self.number(P["t0"], "problem.t0")
        if P["t1"] is not None:
            self.number(P["t1"], "problem.t1")
        self.vector(P["q0"], "problem.q0", self.dof)
        self.vector(P["p0"], "problem.p0", self.dof, none=given != "p")
        self.vector(P["v0"], "problem.v0", self.dof, none=given != "v")

    def internal(self, x, steps, saveat):
        if x is None:
            return
        if saveat is not None:
            self.malformed("internal", "is only saved when every node is saved (saveat null)")
        shape = self.need(x, "shape", "internal")
        values = self.need(x, "values", "internal")
        if not isinstance(shape, list) or not 1 <= len(shape) <= 4 or \
                any(not _is_int(k) or k < 0 for k in shape) or shape[0] != steps:
            self.malformed("internal.shape", f"should be a list of 1 to 4 sizes, the first "
                                             f"the {steps} steps, not {_short(shape)}")
        size = math.prod(shape)
        if not isinstance(values, list) or len(values) != size:
            self.malformed("internal.values", f"should be a list of {size} numbers (shape "
                                              f"{shape})")
        for i, s in enumerate(values):
            self.number(s, f"internal.values[{i}]")

    def dense(self, d, steps, saveat, state):
        for key in ("kind", "trial", "coefficients", "tail"):
            self.need(d, key, "dense")
        kind, trial, coefficients, tail = d["kind"], d["trial"], d["coefficients"], d["tail"]
        if kind not in ("trial", "hermite", "substep", "taylor"):
            self.malformed("dense.kind", f"should be trial, hermite, substep or taylor, not "
                                         f"{_short(kind)}")
        if (trial is None) != (kind != "trial"):
            self.malformed("dense.trial", "should be given exactly for dense kind 'trial'")
        slots = 0
        if trial is not None:
            polys = self.need(trial, "polynomials", "dense.trial")
            powers = self.need(trial, "powers", "dense.trial")
            if not isinstance(polys, list) or not 1 <= len(polys) <= 64:
                self.malformed("dense.trial.polynomials", f"should be a list of 1 to 64 "
                                                          f"polynomials, not {_short(polys)}")
            for i, p in enumerate(polys):
                if not isinstance(p, list) or not 1 <= len(p) <= 64 or any(
                        not isinstance(c, str) or not _FRACTION.fullmatch(c)
                        or re.search(r"/0+$", c) for c in p):
                    self.malformed(f"dense.trial.polynomials[{i}]",
                                   f"should be a list of fractions p/q, not {_short(p)}")
            if not isinstance(powers, list) or len(powers) != len(polys) or \
                    any(not _is_int(k) or not 0 <= k <= 64 for k in powers):
                self.malformed("dense.trial.powers", f"should be {len(polys)} integers from "
                                                     f"0 to 64, not {_short(powers)}")
            slots = len(polys)
        if coefficients is not None:
            if kind != "trial" or saveat is not None:
                self.malformed("dense.coefficients", "are only saved for dense kind 'trial' "
                                                     "with every node saved")
            if not isinstance(coefficients, list) or len(coefficients) != steps:
                self.malformed("dense.coefficients", f"should be a list of {steps} steps, "
                                                     f"not {_short(coefficients)}")
            for j, c in enumerate(coefficients):
                self.matrix(c, f"dense.coefficients[{j}]", slots, self.dof)
        if tail is not None:
            if saveat is not None or steps == 0:
                self.malformed("dense.tail", "is only saved for a run cut by a terminal event "
                                             "with every node saved")
            if not isinstance(tail, list) or len(tail) != 2:
                self.malformed("dense.tail", f"should be [q, y], not {_short(tail)}")
            self.vector(tail[0], "dense.tail[0]", self.dof)
            self.vector(tail[1], "dense.tail[1]", self.dof, none=state == "y")
            if (tail[1] is None) != (state == "y"):
                self.malformed("dense.tail[1]", "should be null exactly for a first-order state")

    def stats(self, st):
        if not isinstance(st, dict):
            self.malformed("stats", f"should be an object, not {_short(st)}")
        newton = st.get("newton")
        if newton is not None:
            if not isinstance(newton, dict):
                self.malformed("stats.newton", f"should be an object, not {_short(newton)}")
            mean = newton.get("mean_iterations")
            if not isinstance(mean, (int, float)) or isinstance(mean, bool):
                self.malformed("stats.newton.mean_iterations", f"should be a number, not "
                                                               f"{_short(mean)}")

    def events(self, evs, state):
        if not isinstance(evs, list):
            self.malformed("events", f"should be a list, not {_short(evs)}")
        for k, e in enumerate(evs):
            where = f"events[{k}]"
            for key in ("index", "name", "t", "q", "p", "v", "direction"):
                self.need(e, key, where)
            self.integer(e["index"], f"{where}.index", 0, 10 ** 6)
            self.text(e["name"], f"{where}.name", limit=10_000)
            self.number(e["t"], f"{where}.t")
            self.vector(e["q"], f"{where}.q", self.dof)
            self.vector(e["p"], f"{where}.p", self.dof, none=state == "y")
            if (e["p"] is None) != (state == "y"):
                self.malformed(f"{where}.p", "should be null exactly for a first-order state")
            self.vector(e["v"], f"{where}.v", self.dof)
            if e["direction"] not in (1, -1) or isinstance(e["direction"], bool):
                self.malformed(f"{where}.direction", f"should be 1 or -1, not "
                                                     f"{_short(e['direction'])}")

    # ----- the problem and the certificate ------------------------------------------------------
    def restore_problem(self, sol, rec):
        """The solution's problem, rebuilt from the file: its system from its text
        (:meth:`rebuild_system`, unless one was attached) and its initial data, checked
        against the run (t0, and q at node 0).  Where the system cannot be rebuilt the
        solution has no problem and ``_unproven`` says why (what :func:`mpvi.certify`
        reports)."""
        from mpvi.model.problem import Problem
        P = rec["problem"]
        system = sol.system
        if system is None:
            system, why = self.rebuild_system(rec["system"])
            if system is None:
                sol._unproven = why
                return
        if P is None:
            sol._unproven = "the file carries no problem"
            sol.system = system                  # its states are still checked (restep)
            return
        num = self.ctx.num
        posed = self.posed(rec.get("posed"), self.dof)
        sol._posed_record = rec.get("posed")

        def value(key):
            """The input as posed where the file keeps it, else the run's number."""
            x, exact = P[key], posed.get(key)
            if isinstance(x, list):
                return [e if e is not None else num(v)
                        for v, e in zip(x, exact or [None] * len(x))]
            return None if x is None else (exact if exact is not None else num(x))

        given = {"p": {"p0": value("p0")}, "v": {"v0": value("v0")}}
        try:
            problem = Problem(system, value("q0"), t0=value("t0"), t1=value("t1"),
                              name=P["name"], **given.get(P["given"], {}))
        except (ValueError, TypeError, ArithmeticError) as exc:
            self.malformed("problem", f"is not a problem of its system ({exc})")
        for key, have in (("t0", [problem.t0]), ("t1", [problem.t1]), ("q0", problem.q0),
                          ("p0", problem._p0), ("v0", problem._v0)):
            want = P[key] if isinstance(P[key], list) else [P[key]]
            if want != [None] and have is not None and \
                    [self.ctx.dump(x) for x in have] != want:
                self.malformed(f"problem.{key}", "is not what its inputs as posed give")
        if problem.t0 != sol.t0:
            self.malformed("problem.t0", "is not the run's t0")
        if sol.saveat != "times" and any(a != b for a, b in zip(sol.q[0], problem.q0)):
            self.malformed("problem.q0", "is not the run's state at node 0")
        if posed.get("h") is not None:
            if self.ctx.number(posed["h"], "posed h") != sol.h:
                self.malformed("posed.h", "is not the run's step h")
            sol.posed = {"h": posed["h"], "times": posed.get("times")}
        elif posed.get("times") is not None:
            sol.posed = {"h": None, "times": posed["times"]}
        sol.problem, sol.system = problem, system

    def posed(self, P, dof):
        """The inputs as posed (the ``posed`` record), each text read back as the exact
        value it writes: a decimal or fraction as the text (the context reads it), any
        other as a sympy number by :func:`mpvi.ground.expressions.parse_expression` (no symbol,
        no float); ``{}`` for none."""
        if P is None:
            return {}
        import sympy as sp

        from mpvi.ground.expressions import ExpressionError, parse_expression
        keys = {"h", "times", "t0", "t1", "q0", "p0", "v0"}
        if not isinstance(P, dict) or not set(P) <= keys:
            self.malformed("posed", f"should be null or an object of {', '.join(sorted(keys))}")

        def one(x, where):
            if x is None:
                return None
            self.text(x, where, limit=10_000)
            if _EXACT_SOURCE.fullmatch(x):
                return x
            try:
                v = parse_expression(x, {}, what=f"{self.path}: {where}")
            except ExpressionError as exc:
                self.malformed(where, f"is not an exact number ({exc})")
            if not (v.is_number and v.is_real and not v.has(sp.Float)):
                self.malformed(where, f"is not an exact real number: {_short(x)}")
            return v

        out = {}
        for key, x in P.items():
            if key in ("q0", "p0", "v0", "times") and x is not None:
                size = dof if key != "times" else None
                if not isinstance(x, list) or (size is not None and len(x) != size):
                    self.malformed(f"posed.{key}", "should be null or a list of exact values")
                out[key] = [one(v, f"posed.{key}[{i}]") for i, v in enumerate(x)]
            else:
                out[key] = one(x, f"posed.{key}")
        return out

    def rebuild_system(self, S):
        """(system, None) rebuilt from the text of the file's system record, read by
        :func:`mpvi.ground.expressions.parse_expression` (nothing read runs as code) and checked
        to print back to the same record; or (None, why not)."""
        import sympy as sp

        from mpvi.compiled.codegen import TIME
        from mpvi.ground.expressions import ExpressionError, parse_expression
        from mpvi.model.mechanics import LagrangianSystem, _rebuild_system, private_symbols
        from mpvi.systems.linear import LinearSystem
        if S["kind"] != "mechanical":
            return None, ("a first-order system's field is not saved as text: pass system= "
                          "to load_solution")
        ctx, n, cls = self.ctx, self.dof, S["class"]
        par, sources = S["parameters"], S.get("sources")
        given = {k: (sources[k] if sources is not None else ctx.num(x)) for k, x in par.items()}
        try:
            if cls == "LinearSystem":
                def matrix(letter):
                    return [[given[f"{letter}{min(i, j)}_{max(i, j)}"] for j in range(n)]
                            for i in range(n)]
                system = LinearSystem(matrix("m"), matrix("k"), ctx, S["name"])
            elif cls == "LagrangianSystem":
                mass_form = S.get("mass") is not None and S.get("potential") is not None
                coords = [sp.Symbol(c) for c in S["coordinates"]]
                velocities = (private_symbols("v", n, 0) if mass_form else
                              [sp.Symbol(v) for v in S["velocities"]])
                symbols = [sp.Symbol(k) for k in par]
                names = {str(x): x for x in [*coords, *velocities, *symbols, TIME]}
                if len(names) != 2 * n + len(symbols) + 1:
                    return None, "its system's names are not distinct"

                def read(text, what):
                    return parse_expression(text, names, what=f"{self.path}: system {what}")

                force = None if S["force"] is None else sp.Matrix(
                    [read(f, "force") for f in S["force"]])
                params = {y: ctx.num(par[k]) for y, k in zip(symbols, par)}
                exact = None if sources is None else {y: given[k] for y, k in zip(symbols, par)}
                if mass_form:
                    M = sp.Matrix([[read(x, "mass matrix") for x in row] for row in S["mass"]])
                    system = _rebuild_system(LagrangianSystem, S["name"], coords, velocities, M,
                                             read(S["potential"], "potential"), None, params,
                                             ctx, force, exact)
                else:
                    system = _rebuild_system(LagrangianSystem, S["name"], coords, velocities,
                                             None, None, read(S["lagrangian"], "Lagrangian"),
                                             params, ctx, force, exact)
            else:
                return None, (f"its system is of class {cls!r}, which is not rebuilt from text: "
                              f"pass system= to load_solution")
        except ExpressionError as exc:
            return None, f"its system's text does not read back ({exc})"
        except (ValueError, TypeError, ArithmeticError) as exc:
            return None, f"its system cannot be rebuilt ({type(exc).__name__}: {exc})"
        have = _system_record(system)
        for key in ("coordinates", "velocities", "lagrangian", "force", "parameters", "mass",
                    "potential", "sources"):
            if key in S and have.get(key) != S[key]:
                return None, (f"its system does not read back to the same {key} (saved "
                              f"{_short(S[key])}, read {_short(have.get(key))})")
        return system, None

    def certificate(self, c, sol, posed):
        """The saved :class:`mpvi.Certificate`, checked before use: its fields, types and
        bounds; its method and saved nodes those of the run; as many points as nodes
        (or, where a step's proof failed, as nodes up to that step); each ball finite and
        each time ball holding the node time t0 + k h exactly."""
        if c is None:
            return None
        from mpvi.numbers.arb import ArbContext
        from mpvi.numbers.arbref import arb_precision
        from mpvi.proof.certify import Certificate, _saved_nodes
        from mpvi.numbers.context import MAX_DPS
        keys = {"method", "dps", "nodes", "t", "q", "y", "digits", "widths", "failed_step",
                "why", "jacobians"}
        if not isinstance(c, dict) or not keys <= set(c) <= keys | {"statement"}:
            self.malformed("certificate", f"should be null or an object with the fields "
                                          f"{', '.join(sorted(keys))}")
        if c["method"] != sol.method:
            self.malformed("certificate.method", f"is {_short(c['method'])}, the run's method "
                                                 f"{sol.method!r}")
        dps = self.integer(c["dps"], "certificate.dps", 1, MAX_DPS)
        try:
            nodes = _saved_nodes(sol)
        except ValueError:
            self.malformed("certificate", "is of a run saved between nodes, which is not "
                                          "certified")
        nodes, between = nodes if isinstance(nodes, tuple) else (nodes, set())
        if c["nodes"] != nodes:
            self.malformed("certificate.nodes", "are not the run's saved nodes")
        failed = c["failed_step"]
        if failed is not None:
            self.integer(failed, "certificate.failed_step", 0, max(sol.steps - 1, 0))
        self.text(c["why"], "certificate.why", none=True, limit=10_000)
        if (failed is None) != (c["why"] is None):
            self.malformed("certificate.why", "should be given exactly with a failed step")
        m = len(nodes) if failed is None else sum(k <= failed for k in nodes)
        width = self.dof * (1 if sol.state == "y" else 2)
        for key in ("t", "q", "y", "digits", "widths"):
            if not isinstance(c[key], list) or len(c[key]) != m:
                self.malformed(f"certificate.{key}", f"should be a list of the {m} points "
                                                     f"certified")
        jac = c["jacobians"]
        if not isinstance(jac, list) or len(jac) != 3 or any(
                not _is_int(j) or not 0 <= j <= 10 ** 15 for j in jac):
            self.malformed("certificate.jacobians", "should be 3 counts")
        ball, number = self.certificate_ball, self.certificate_number
        actx = ArbContext(dps)
        cert = Certificate(sol.method, actx, nodes)
        cert.failed_step, cert.why, cert.jacobians = failed, c["why"], list(jac)
        if c.get("statement") is not None:
            setattr(cert, "statement", self.text(c["statement"], "certificate.statement"))
        for i in range(m):
            where = f"certificate[{i}]"
            qs, ys = c["q"][i], c["y"][i]
            if not isinstance(qs, list) or len(qs) != self.dof:
                self.malformed(f"{where}.q", f"should be {self.dof} balls")
            if (ys is None) != (sol.state == "y") or (ys is not None and (
                    not isinstance(ys, list) or len(ys) != self.dof)):
                self.malformed(f"{where}.y", f"should be {self.dof} balls (null exactly for a "
                                             f"first-order state)")
            digits = c["digits"][i]
            if not isinstance(digits, list) or len(digits) != width:
                self.malformed(f"{where}.digits", f"should be {width} numbers")
            cert.t.append(ball(c["t"][i], f"{where}.t"))
            cert.q.append(np.array([ball(x, f"{where}.q") for x in qs], dtype=object))
            cert.y.append(None if ys is None else
                          np.array([ball(x, f"{where}.y") for x in ys], dtype=object))
            cert.digits.append(np.array([number(d, f"{where}.digits") for d in digits],
                                        dtype=float))
            cert.widths.append(number(c["widths"][i], f"{where}.widths"))
            if math.isinf(cert.widths[-1]):
                self.malformed(f"{where}.widths", "should be finite")
        with arb_precision(2 * max(dps, self.ctx.dps) + 40):
            self.node_times(cert, sol, nodes, between, posed, actx)
        return cert

    # ----- the states against the method's own steps ----------------------------------------
    @staticmethod
    def stretches(sol):
        """[(a, b, j, k)]: the stretches from saved point a to saved point b (None: the
        dense tail of a run cut by a terminal event) over the k steps from node j that
        :meth:`restep` can step again (every step of a run saving every node; the strides
        of ``saveat`` = k of at most :data:`RESTEP_NODES` steps; none for requested
        times)."""
        steps, t, saveat, h, t0 = sol.steps, sol.t, sol.saveat, sol.h, sol.t0
        if saveat == "times" or steps == 0:
            return []
        if saveat is None:
            last = steps if sol._tail is None else steps - 1
            stretches = [(j, j + 1, j, 1) for j in range(last)]
            if sol._tail is not None:
                stretches.append((steps - 1, None, steps - 1, 1))
            return stretches
        stretches = [(i, i + 1, i * saveat, saveat) for i in range(len(t) - 1)
                     if (i + 1) * saveat <= steps and t[i + 1] == t0 + (i + 1) * saveat * h
                     and saveat <= RESTEP_NODES]
        i = len(t) - 2                           # the last node, after fewer than k steps
        if i >= 0 and i * saveat < steps < (i + 1) * saveat and \
                t[i + 1] == t0 + steps * h and steps - i * saveat <= RESTEP_NODES:
            stretches.append((i, i + 1, i * saveat, steps - i * saveat))
        return stretches

    def restep(self, sol, seed):
        """The saved states satisfy the method's own step equations.  A run of at most
        :data:`RESTEP_ALL` steps (or stretches between saved nodes) is stepped again in
        full, each step from the saved state with the carry of the step before, as the
        run took it: every saved state, internal datum, trial coefficient and p or v must
        be the very number the run computed.  A longer run re-steps its first, its last
        and :data:`RESTEP_SAMPLE` stretches drawn with ``seed``, each from the saved
        state without a carry: an explicit method lands on the same bits, an implicit one
        within the Newton tolerance the run used (``newton.rtol``, else 2^10 eps) scaled
        by the state, 1/|h| and the number of unknowns (two solutions of the same
        equations from other first guesses); p or v is then checked at those nodes."""
        from mpvi.methods import get_method
        ctx, S, h, t0 = self.ctx, sol.system, sol.h, sol.t0
        m = get_method(sol.method)
        args = dict(sol._prepare_args)
        if m.checks_stability:
            args["check_stability"] = False      # the run's precondition, not the step map
        rtol = (ctx.num(args["newton"]["rtol"]) if "rtol" in args.get("newton", {})
                else tolerance(ctx))
        try:
            stepper = m.prepare(S, h, ctx, **args)
        except (ValueError, TypeError, ArithmeticError) as exc:
            self.malformed("method", f"{sol.method!r} cannot step its system again "
                                     f"({type(exc).__name__}: {exc})")
        t, saveat, y = sol.t, sol.saveat, sol.y
        width = S.dof * (1 if y is None else 2)

        def state(i):
            return sol.q[i], None if y is None else y[i]

        stretches = self.stretches(sol)
        whole = len(stretches) <= RESTEP_ALL
        if not whole:
            rng = random.Random(seed or len(stretches))     # a private generator
            middle = rng.sample(range(1, len(stretches) - 1), RESTEP_SAMPLE)
            stretches = [stretches[0], *(stretches[i] for i in sorted(middle)), stretches[-1]]
        inv_h = max(ctx.one, 1 / abs(h))

        def bound(k, scale):
            return 0 if whole or not m.takes_newton_options else \
                k * width * rtol * inv_h * scale

        carry = None
        for a, b, j0, k in stretches:       # from saved node a, k steps from node j0, to b
            q, yy = state(a)
            internal = dense = None
            if not whole:
                carry = None
            try:
                for j in range(j0, j0 + k):
                    r = stepper(t0 + j * h, q, yy, carry)
                    q, yy, carry = r.q, r.y, r.carry
                    internal, dense = r.internal, r.carry
            except (NewtonError, SingularMatrixError, NotPositiveDefiniteError,
                    ArithmeticError, ValueError) as exc:
                self.malformed(f"q[{a}]", f"is not a state the method {sol.method!r} steps "
                                          f"from ({type(exc).__name__}: {exc}): the states "
                                          f"were changed")
            if b is None:
                want_q, want_y = sol._tail
                where = "dense.tail"
            else:
                want_q, want_y = state(b)
                where = f"point {b} (t = {ctx.to_str(t[b], 12)})"
            checks = [("state", [*q, *([] if want_y is None else yy)],
                       [*want_q, *([] if want_y is None else want_y)])]
            if saveat is None and k == 1:
                if sol.internal is not None and internal is not None:
                    checks.append((f"internal[{j0}]",
                                   np.ravel(np.asarray(internal, dtype=object)),
                                   np.ravel(sol.internal[j0])))
                if sol._dense is not None and dense is not None:
                    checks.append((f"dense.coefficients[{j0}]",
                                   np.ravel(np.asarray(dense, dtype=object)),
                                   np.ravel(sol._dense[j0])))
            for name, got, saved in checks:
                self.same_step(sol, where if name == "state" else name, got, saved, k,
                               lambda scale: bound(k, scale))
        if whole:
            self.legendre(sol, range(len(t)), 0)
        else:
            self.legendre(sol, sorted({i for a, b, _, _ in stretches for i in (a, b)
                                       if i is not None}), rtol)

    def same_step(self, sol, where, got, saved, k, bound):
        """The numbers ``got`` by stepping again are the ``saved`` ones, within
        ``bound(scale)`` (scale: the largest of 1 and their magnitudes), else the file is
        refused naming ``where``."""
        ctx = self.ctx
        if len(got) != len(saved):
            self.malformed(where, f"has {len(saved)} numbers, the method's step {len(got)}")
        scale = max([ctx.one] + [abs(x) for x in got] + [abs(x) for x in saved])
        worst = max([abs(x - w) for x, w in zip(got, saved)], default=0)
        if not worst <= bound(scale):
            self.malformed(where, f"is not what the method {sol.method!r} computes from the "
                                  f"saved state {k} step(s) before (off by "
                                  f"{ctx.to_str(worst, 3)}, beyond "
                                  f"{ctx.to_str(bound(scale), 3)}): the states were changed")

    def legendre(self, sol, points, rtol):
        """The saved other of p and v at ``points`` is the system's Legendre map of the
        saved state: exactly as :meth:`Solution.p` and :meth:`Solution.v` compute it
        (``rtol`` 0, every point in order), or within the Newton tolerance ``rtol``
        where the map is an iteration (a Lagrangian not quadratic in the velocities)."""
        if sol.y is None:
            return
        ctx, S = self.ctx, sol.system
        other = "v" if sol.state == "qp" else "p"
        saved = sol._converted[other]
        explicit = other == "p" or S.mass_expr is not None or S.quadratic_in_velocity
        prev = None
        for i in points:
            q, y, t = sol.q[i], sol.y[i], sol.t[i]
            try:
                got = S.momentum(q, y, t) if other == "p" else \
                    S.velocity(q, y, t) if explicit else S.velocity(q, y, t, guess=prev)
            except (NewtonError, SingularMatrixError, NotPositiveDefiniteError,
                    ArithmeticError, ValueError) as exc:
                self.malformed(f"{sol.state[1]}[{i}]", f"has no Legendre map "
                                                        f"({type(exc).__name__}: {exc})")
            prev = got
            scale = max([ctx.one] + [abs(x) for x in got] + [abs(x) for x in saved[i]])
            worst = max(abs(x - w) for x, w in zip(got, saved[i]))
            if not worst <= (0 if explicit else S.dof * rtol * scale):
                self.malformed(f"{other}[{i}]", f"is not the Legendre map of the saved "
                                                f"{sol.state[1]} (off by "
                                                f"{ctx.to_str(worst, 3)}): the states were "
                                                f"changed")

    def certificate_ball(self, x, where):
        """A saved ball [mantissa, exponent, radius mantissa, radius exponent] of integers,
        checked, as a finite flint.arb."""
        from mpvi.proof.certify import _unpack
        if not (isinstance(x, list) and len(x) == 4 and all(
                isinstance(v, str) and re.fullmatch(r"-?\d{1,%d}" % MAX_BALL_DIGITS, v)
                for v in x)) or abs(int(x[1])) > 10 ** 9 or abs(int(x[3])) > 10 ** 9 \
                or x[2].startswith("-"):
            self.malformed(where, f"should be a ball [mantissa, exponent, radius "
                                  f"mantissa, radius exponent] of integers, not {_short(x)}")
        b = _unpack([int(v) for v in x])
        if not b.is_finite():
            self.malformed(where, "is not a finite ball")
        return b

    def certificate_number(self, x, where):
        """A saved count of digits or width: a number >= 0, or "inf"."""
        ok = x == "inf" or (isinstance(x, (int, float)) and not isinstance(x, bool)
                            and math.isfinite(x) and x >= 0)
        if not ok:
            self.malformed(where, f"should be a number >= 0 or \"inf\", not {_short(x)}")
        return math.inf if x == "inf" else float(x)

    def node_times(self, cert, sol, nodes, between, posed, actx):
        """Each time ball of the certificate holds its node's time t0 + k h: that of the
        exact h and t0 where the certificate is of the problem as posed (h = 1/10, not the
        run's rounded h: its balls meet theirs), else the run's own, exactly."""
        from mpvi.proof.certify import _exact
        given_h, given_t0 = posed.get("h"), posed.get("t0")
        as_posed = given_h is not None
        t0 = actx.num(given_t0) if as_posed and given_t0 is not None else _exact(sol.t0, actx)
        h = actx.num(given_h) if as_posed else _exact(sol.h, actx)
        for i, (k, b) in enumerate(zip(nodes, cert.t)):
            node = t0 + int(k) * h
            if i not in between and not (b.overlaps(node) if as_posed else b.contains(node)):
                self.malformed(f"certificate[{i}].t", f"does not hold the node time t0 + {k} h")

    # ----- the numbers and the consistency of the run ----------------------------------------
    def build(self, rec):
        ctx = self.ctx
        num, dtype = ctx.num, ctx.dtype

        def vec(xs):
            return np.array([num(x) for x in xs], dtype=dtype)

        def arr(rows, n):
            out = np.empty((len(rows), n), dtype=dtype)
            for i, row in enumerate(rows):
                out[i] = [num(x) for x in row]
            return out

        dof = self.dof
        sol = Solution.__new__(Solution)
        sol.ctx = ctx
        sol.method, sol.params = rec["method"], dict(rec["params"])
        sol.h, sol.t0 = num(rec["h"]), num(rec["t0"])
        sol.steps, sol.steps_planned = rec["steps"], rec["steps_planned"]
        sol.saveat, sol.state = rec["saveat"], rec["state"]
        sol.t = vec(rec["t"])
        sol.q = arr(rec["q"], dof)
        sol._converted = {}
        if sol.state == "y":
            sol.y = None
        else:
            p, v = arr(rec["p"], dof), arr(rec["v"], dof)
            sol.y = p if sol.state == "qp" else v
            sol._converted = {"p": p, "v": v}
        internal = rec["internal"]
        sol.internal = None if internal is None else vec(internal["values"]).reshape(
            internal["shape"])
        dense = rec["dense"]
        sol._dense_kind = dense["kind"]
        trial = dense["trial"]
        sol._trial = None if trial is None else (
            [[Fraction(c) for c in p] for p in trial["polynomials"]], list(trial["powers"]))
        sol._dense = None if dense["coefficients"] is None else [
            arr(c, dof) for c in dense["coefficients"]]
        tail = dense["tail"]
        sol._tail = None if tail is None else (
            vec(tail[0]), None if tail[1] is None else vec(tail[1]))
        sol._prepare_args = dict(sol.params)
        if rec.get("newton") is not None:
            sol._prepare_args["newton"] = {k: v if k == "max_iter" else num(v)
                                           for k, v in rec["newton"].items()}
        sol.stats = rec["stats"]
        sol.events = [EventRecord(e["index"], e["name"], num(e["t"]), vec(e["q"]),
                                  None if e["p"] is None else vec(e["p"]), vec(e["v"]),
                                  e["direction"]) for e in rec["events"]]
        sol.stopped = rec["stopped"]
        sol._system_record, sol._problem_record = rec["system"], rec["problem"]
        sol._names = rec["system"]["coordinates"]
        self.consistent(sol)
        return sol

    def consistent(self, sol):
        """The run's numbers agree with each other: finite, h nonzero, the saved times
        in the run and strictly monotone in the direction of h (non-decreasing for
        requested times), the nodes at t0 + k h, the events inside the run."""
        ctx = self.ctx
        arrays = [("t", sol.t), ("q", sol.q), ("h", [sol.h]), ("t0", [sol.t0])]
        if sol.y is not None:
            arrays += [("p", sol._converted["p"]), ("v", sol._converted["v"])]
        if sol.internal is not None:
            arrays.append(("internal", sol.internal))
        for name, a in arrays:
            if not ctx.all_finite(np.asarray(a, dtype=ctx.dtype)):
                self.malformed(name, "holds a number beyond the range of the context")
        h, t0, t, steps = sol.h, sol.t0, sol.t, sol.steps
        if h == 0:
            self.malformed("h", "is 0")

        def show(x):
            return ctx.to_str(x, 12)

        def tol(k):
            return 4 * ctx.eps * (abs(t0) + abs(k) * abs(h))

        def after(a, b):                       # a at or after b, in the direction of h
            return a >= b if h > 0 else a <= b

        if t[0] != t0 and sol.saveat != "times":
            self.malformed("t[0]", f"= {show(t[0])} is not t0 = {show(t0)}")
        end = t0 + steps * h
        strict = sol.saveat != "times"
        for i in range(1, len(t)):
            if not (after(t[i], t[i - 1]) and (t[i] != t[i - 1] or not strict)):
                self.malformed("t", f"is not {'strictly ' if strict else ''}monotone in the "
                                    f"direction of h = {show(h)}: t[{i - 1}] = "
                                    f"{show(t[i - 1])}, t[{i}] = {show(t[i])}")
        for i in (0, len(t) - 1):
            if not (after(t[i], t0 - (tol(0) if h > 0 else -tol(0)))
                    and after(end + (tol(steps) if h > 0 else -tol(steps)), t[i])):
                self.malformed(f"t[{i}]", f"= {show(t[i])} is outside the run [{show(t0)}, "
                                          f"{show(end)}] of {steps} steps of h = {show(h)}")
        if sol.saveat != "times":
            self.nodes(sol)
        cut = sol.stopped is not None and sol.stopped.startswith("terminal event")
        if sol._tail is not None and not cut:
            self.malformed("dense.tail", "is only saved for a run cut by a terminal event")
        if cut and sol.saveat != "times" and not (
                sol.events and sol.events[-1].t == t[-1]
                and all(a == b for a, b in zip(sol.events[-1].q, sol.q[-1]))):
            self.malformed("stopped", f"says {_short(sol.stopped)}, but the last saved point "
                                      f"is not that event's")
        if steps < sol.steps_planned and sol.stopped is None:
            self.malformed("steps", f"= {steps} of {sol.steps_planned} planned, but nothing "
                                    f"stopped the run (stopped is null)")
        if isinstance(sol.stats, dict) and "steps" in sol.stats and sol.stats["steps"] != steps:
            self.malformed("stats.steps", f"= {_short(sol.stats['steps'])} is not the run's "
                                          f"{steps} steps")
        for k, e in enumerate(sol.events):
            if not ctx.all_finite(np.asarray([e.t, *e.q, *e.v], dtype=ctx.dtype)):
                self.malformed(f"events[{k}]", "holds a number beyond the range of the context")
            if not (after(e.t, t0 - (tol(0) if h > 0 else -tol(0)))
                    and after(end + (tol(steps) if h > 0 else -tol(steps)), e.t)):
                self.malformed(f"events[{k}].t", f"= {show(e.t)} is outside the run "
                                                 f"[{show(t0)}, {show(end)}]")
        for name, block in (("dense.coefficients", sol._dense or []),
                            ("dense.tail", [x for x in sol._tail or () if x is not None])):
            for c in block:
                if not ctx.all_finite(np.asarray(c, dtype=ctx.dtype)):
                    self.malformed(name, "holds a number beyond the range of the context")


    def nodes(self, sol):
        """Every saved time of a run that saves nodes is a node t0 + i k h, exactly (the
        last may be where a terminal event, the callback or a failure ended it); with
        ``saveat`` = k, every k-th node up to the last step is held, then the last node
        (or, after a terminal event, the event's point): no fewer, no more."""
        ctx, t, t0, h, steps = self.ctx, sol.t, sol.t0, sol.h, sol.steps
        stride = 1 if sol.saveat is None else sol.saveat
        nodes = len(t) - 1 if sol.saveat is not None or sol._tail is not None \
            else len(t)
        for i in range(nodes):
            k = i * stride
            if t[i] != t0 + k * h:         # exactly: the run computes it so, in the context
                self.malformed(f"t[{i}]", f"= {ctx.dump(t[i])} is not the node t0 + {k} h "
                                          f"= {ctx.dump(t0 + k * h)} (t0 = {ctx.dump(t0)}, "
                                          f"h = {ctx.dump(h)}) exactly: the step or the "
                                          f"times were changed")
        if sol.saveat is not None:
            cut = sol.stopped is not None and sol.stopped.startswith("terminal event")
            if not cut and t[-1] != t0 + steps * h:
                self.malformed(f"t[{len(t) - 1}]", f"= {ctx.dump(t[-1])} is not the last "
                                                   f"node t0 + {steps} h = "
                                                   f"{ctx.dump(t0 + steps * h)} exactly: "
                                                   f"the step or the times were changed")
            want = (steps - (1 if cut else 0)) // stride + 1
            if not want <= len(t) <= want + 1:
                self.malformed("t", f"has {len(t)} points; the nodes every {stride} "
                                    f"steps of {steps} steps make {want} (or one more, "
                                    f"the end)")


def _short(value, width=40):
    """A value of a file, shown in one line of at most ``width`` characters."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def attach(sol: Solution, system) -> Solution:
    """Attach ``system`` to a loaded solution after checking that it is the one the file
    was computed for (coordinates, Lagrangian, parameters, context kind and precision)."""
    if not isinstance(system, (LagrangianSystem, FirstOrderSystem)):
        raise TypeError(f"the system to attach should be a LagrangianSystem or "
                        f"FirstOrderSystem, not {type(system).__name__}")
    want = sol._system_record
    have = _system_record(system)
    for key in ("coordinates", "lagrangian", "force", "parameters"):
        if want.get(key) != have.get(key):
            raise ValueError(f"the system {system.name!r} does not match the saved solution's "
                             f"{want.get('name')!r}: {key} differ ({have.get(key)!r} vs "
                             f"{want.get(key)!r})")
    if _context_kind(system.ctx) != _context_kind(sol.ctx):
        raise ValueError(f"the system {system.name!r} is in a context of kind "
                         f"{_context_kind(system.ctx)!r}, the saved solution in one of kind "
                         f"{_context_kind(sol.ctx)!r}: make the system in the solution's "
                         f"context ({sol.ctx.name})")
    if system.ctx.dps != sol.ctx.dps:
        raise ValueError(f"the system's context has {system.ctx.dps} digits, the solution "
                         f"{sol.ctx.dps}")
    sol.system = system
    return sol
