"""What :func:`mpvi.solve` returns: the saved states, with dense output, observables,
errors against the exact solution, tables, and a lossless file format.

``Solution.save(path)`` writes JSON (gzip-compressed when the name ends in ``.gz``):
every number as a decimal string with enough digits to read back to the same bits
(:meth:`mpvi.context.Context.dump`), the context (kind and digits), the method and its
parameters, the problem's initial data, the system's coordinates, Lagrangian and
parameters as text, the Newton statistics and the events.  JSON because it is portable (any
language reads it, a person can too), exact (decimal strings, not binary floats), and
needs nothing beyond the standard library; a 64-digit number costs about 70 bytes.
:func:`load_solution` reads it back digit for digit; pass ``system=`` to attach the system
again (checked against the stored coordinates and Lagrangian) for observables and the
Legendre map.  ``pickle`` works too (numbers travel as the same strings).
"""
from __future__ import annotations

import gzip
import json
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

import numpy as np

from .problem import dump_numbers, load_numbers

if TYPE_CHECKING:                       # annotations only: importing mpvi loads no pandas
    import pandas

FORMAT = "mpvi.Solution"
FORMAT_VERSION = 1


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
    t: Any
    q: Any
    p: Any
    v: Any
    direction: int


class State(NamedTuple):
    """A state at one time (what ``sol(t)`` returns).

    Parameters
    ----------
    q : numpy.ndarray
        Positions (the state y for a first-order system).
    p : numpy.ndarray or None
        Momenta (None for a first-order system).
    v : numpy.ndarray
        Velocities (y' for a first-order system).
    """

    q: Any
    p: Any
    v: Any


def _jsonable(value):
    """Method parameters as JSON data (Fractions and context numbers as strings)."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


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
        final residual).
    events : list of EventRecord
        The events located (time, state, direction).
    stopped : str or None
        Why the run ended before its last step (a terminal event, the callback, a
        failure), or None.
    internal : numpy.ndarray or None
        Per-step internal data (Simpson's midpoint, Lobatto's internal points, Newmark's
        acceleration, ...) when every node was saved, else None.
    problem : Problem or None
        The problem (None after :func:`load_solution`).
    system : system or None
        The system (None after :func:`load_solution` without ``system=``).
    ctx : Context
        The number context.
    """

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
        self._dense = None if dense is None else [np.array(c, dtype=ctx.dtype) for c in dense]
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
    def p(self) -> np.ndarray:
        """Momenta at the saved points (saved points x dof).

        Computed through the system's Legendre map when first asked for if the method
        carries v; an ``AttributeError`` for a first-order solution, a ``ValueError`` for a
        loaded one without its system.
        """
        return self.y if self.state == "qp" else self._other("p")

    @property
    def v(self) -> np.ndarray:
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

    def __call__(self, t: Any) -> State:
        """Evaluate the state at time ``t`` by the method's dense output.

        :mod:`mpvi.dense`: the method's trial function -- order min(p, k + 1) in q for a
        trial space of degree k --, cubic Hermite interpolation of (q, v) -- order min(p,
        4) --, or a GBS substep -- order p; the velocity is one order lower for the first
        two.  Needs every node saved (``saveat=None``).

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
            Not every node saved, a time outside the interval, or no system attached.
        """
        if isinstance(t, (list, tuple, np.ndarray)):
            pts = [self(s) for s in t]
            stack = (lambda xs: None if xs[0] is None else np.array(xs, dtype=self.ctx.dtype))
            return State(*(stack([getattr(p, f) for p in pts]) for f in ("q", "p", "v")))
        from .dense import Segment, StepData, floor
        from .schemes import get_method
        ctx = self.ctx
        if self.saveat is not None:
            raise ValueError(f"dense output needs every node saved (solve with saveat=None); "
                             f"this solution saved saveat={self.saveat!r}")
        t = ctx.number(t, "time t")
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
    def observable(self, expr: Any) -> np.ndarray:
        """Evaluate a sympy expression (or a list of them) at every saved point.

        The expressions are in the time symbol :data:`mpvi.TIME` and the system's
        coordinate, velocity and parameter symbols, e.g. an angular momentum
        ``m * (x * vy - y * vx)``; they are compiled against the context.

        Parameters
        ----------
        expr : sympy expression or str, list of them or sympy Matrix
            The observable(s); text is read by :func:`mpvi.expressions.parse_expression`,
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
            (:class:`mpvi.expressions.ExpressionError`).
        """
        import sympy as sp
        from .codegen import TIME, compile_exprs
        from .expressions import as_expression
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
        free = set().union(*(e.free_symbols for e in exprs)) - allowed
        if free:
            raise ValueError(f"observable: symbols {sorted(map(str, free))} are neither t, the "
                             f"coordinates {S.coord_names}, the velocities "
                             f"{[str(v) for v in S.velocity_symbols]} nor parameters")
        f = compile_exprs([TIME, S.coords, S.velocity_symbols, S.param_symbols], exprs, self.ctx,
                          "observable")
        rows = [f(t, q, v, S.param_values) for t, q, v in zip(self.t, self.q, self.v)]
        out = np.array(rows, dtype=self.ctx.dtype)
        return out if many else out[:, 0]

    def error(self, exact: Callable | None = None) -> dict:
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
            No exact solution, an ``exact`` that does not match the initial data, or no
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
            if self.state == "y":
                out["y"].append(ctx.norm2(values["q"][j] - qe))
                continue
            for k, ref in (("q", qe), ("p", pe), ("v", ve)):
                out[k].append(ctx.norm2(values[k][j] - ref))
        return {k: np.array(v, dtype=ctx.dtype) for k, v in out.items()}

    # ----- leaving mpvi -----------------------------------------------------------------------
    def columns(self) -> list:
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
        from . import __version__
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
        return rec

    def save(self, path: str | Path) -> Path:
        """Write the solution to a JSON file, every number with all its digits.

        Atomically (a temporary file renamed into place); gzip-compressed when the name
        ends in ``.gz``.  The file holds the context, the method and its parameters, the
        problem's initial data, the system's coordinates, Lagrangian and parameters as
        text, the saved points, the dense-output data, the statistics and the events.

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
        from .io import atomic_path
        path = Path(path)
        text = json.dumps(self._record(), separators=(",", ":"))
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


class _StepperView:
    """What a Segment needs from the stepper after the run: its dense kind and trial basis."""

    def __init__(self, kind, trial, ctx):
        from .dense import TrialBasis
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
    from .context import FPContext, GMPContext
    return "fp" if isinstance(ctx, FPContext) else ("gmp" if isinstance(ctx, GMPContext) else "mp")


def _system_record(S):
    ctx = S.ctx
    if S.first_order:
        return {"name": S.name, "kind": "first_order", "coordinates": list(S.labels)}
    return {"name": S.name, "kind": "mechanical", "class": type(S).__name__,
            "coordinates": list(S.coord_names),
            "velocities": [str(v) for v in S.velocity_symbols],
            "lagrangian": str(S.lagrangian_expr),
            "force": [str(f) for f in S.force_expr] if S.has_force else None,
            "parameters": {str(s): ctx.dump(x) for s, x in zip(S.param_symbols, S.param_values)}}


def load_solution(path: str | Path, system: Any = None) -> Solution:
    """Read a solution written by :meth:`Solution.save`, digit for digit.

    Parameters
    ----------
    path : str or pathlib.Path
        The file (``.json`` or ``.json.gz``).
    system : LagrangianSystem or FirstOrderSystem, optional
        The system the solution was computed for: attached (after checking its
        coordinates, Lagrangian and parameters against the file) so that observables,
        dense output and the Legendre map work.  Without it, ``t``, ``q``, ``p``, ``v``,
        ``internal``, ``stats``, ``events`` are all there.

    Returns
    -------
    Solution
        The solution, in a context of the saved kind and digits (``problem`` None).

    Raises
    ------
    ValueError
        A file that is not a saved mpvi solution (naming what is wrong), or a system that
        does not match it.
    """
    from .context import get_context
    path = Path(path)
    try:
        raw = (gzip.open(path, "rt", encoding="utf-8").read() if path.suffix == ".gz"
               else path.read_text(encoding="utf-8"))
        rec = json.loads(raw)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable saved solution ({exc})") from None
    if not isinstance(rec, dict) or rec.get("format") != FORMAT:
        raise ValueError(f"{path}: not an mpvi solution file (no format {FORMAT!r})")
    if rec.get("version") != FORMAT_VERSION:
        raise ValueError(f"{path}: solution format version {rec.get('version')!r}; this mpvi "
                         f"reads version {FORMAT_VERSION}")
    try:
        c = rec["context"]
        ctx = get_context(c["kind"], int(c["dps"]))
        num = ctx.num

        def arr(rows):
            return np.array([[num(x) for x in row] for row in rows], dtype=ctx.dtype).reshape(
                len(rows), -1)
        self = Solution.__new__(Solution)
        self.ctx = ctx
        self.method, self.params = rec["method"], dict(rec["params"])
        self.h, self.t0 = num(rec["h"]), num(rec["t0"])
        self.steps, self.steps_planned = int(rec["steps"]), int(rec["steps_planned"])
        self.saveat, self.state = rec["saveat"], rec["state"]
        self.t = np.array([num(x) for x in rec["t"]], dtype=ctx.dtype)
        self.q = arr(rec["q"])
        self._converted = {}
        if self.state == "y":
            self.y = None
        else:
            p, v = arr(rec["p"]), arr(rec["v"])
            self.y = p if self.state == "qp" else v
            self._converted = {"p": p, "v": v}
        internal = rec.get("internal")
        self.internal = None if internal is None else np.array(
            [num(x) for x in internal["values"]], dtype=ctx.dtype).reshape(internal["shape"])
        dense = rec["dense"]
        self._dense_kind = dense["kind"]
        trial = dense.get("trial")
        self._trial = None if trial is None else (
            [[Fraction(c) for c in p] for p in trial["polynomials"]], trial["powers"])
        self._dense = None if dense["coefficients"] is None else [arr(c) for c in dense["coefficients"]]
        tail = dense["tail"]
        self._tail = None if tail is None else (
            np.array([num(x) for x in tail[0]], dtype=ctx.dtype),
            None if tail[1] is None else np.array([num(x) for x in tail[1]], dtype=ctx.dtype))
        self._prepare_args = dict(self.params)
        self.stats = rec["stats"]
        self.events = [EventRecord(e["index"], e["name"], num(e["t"]),
                                   np.array([num(x) for x in e["q"]], dtype=ctx.dtype),
                                   None if e["p"] is None else np.array([num(x) for x in e["p"]], dtype=ctx.dtype),
                                   None if e["v"] is None else np.array([num(x) for x in e["v"]], dtype=ctx.dtype),
                                   e["direction"]) for e in rec["events"]]
        self.stopped = rec["stopped"]
        self._system_record, self._problem_record = rec["system"], rec["problem"]
        self._names = rec["system"]["coordinates"]
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"{path}: malformed saved solution ({type(exc).__name__}: {exc})") from None
    self.problem, self.system = None, None
    if system is not None:
        attach(self, system)
    return self


def attach(sol: Solution, system) -> Solution:
    """Attach ``system`` to a loaded solution after checking that it is the one the file
    was computed for (coordinates, Lagrangian, parameters, context precision)."""
    want = sol._system_record
    have = _system_record(system)
    for key in ("coordinates", "lagrangian", "force", "parameters"):
        if want.get(key) != have.get(key):
            raise ValueError(f"the system {system.name!r} does not match the saved solution's "
                             f"{want.get('name')!r}: {key} differ ({have.get(key)!r} vs "
                             f"{want.get(key)!r})")
    if system.ctx.dps != sol.ctx.dps:
        raise ValueError(f"the system's context has {system.ctx.dps} digits, the solution "
                         f"{sol.ctx.dps}")
    sol.system = system
    return sol


from .precision import boundary_module  # noqa: E402  (last: wraps the names above)

boundary_module(globals())
