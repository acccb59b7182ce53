"""The driver: ``mpvi.solve(problem, method, h=..., n=... | t1=...) -> mpvi.Solution``.

One loop for every method (variational, Galerkin, Mutze, Newmark, Runge-Kutta, GBS) and
for first-order systems.  It keeps O(saved points) in memory, never O(steps): the state
of the current step, the saved points, O(1) Newton statistics and the events found.

It reads as its steps: :func:`_plan` checks every argument before the first step (the
step count, ``h`` -- validated here, once --, the method's options, the resolution at
the initial state, the resolution of the time, ``saveat`` and the memory it needs, the
events and callbacks); a private ``_Run`` prepares the stepper and takes the steps --
each step with its guards (``_check``), the saved nodes and requested times
(``_save_requested``), the events (``_events``: detection and location on the step's
dense output) -- and builds the :class:`mpvi.Solution` (``_finish``), also the partial
one an error carries.  Where nothing between two steps needs Python (a compiled
variational, Galerkin or RK4 step with its compiled check, no events, requested times or
callback), the steps up to the next progress report are taken in C in one call
(``_steps_in_c``), with the same checks after each, and give the same numbers; a step
that fails there is taken again here, which raises its error.

Along the run it checks, and names step and time when something fails:

* the step's result is finite (``IntegrationError``, with what is not finite where);
* the system is regular at every node after the first: the potential (the Lagrangian)
  finite and the mass matrix (L_vv) positive definite -- one generated evaluation and an
  LDL^T test of n^3/6 multiplications, skipped for a constant mass matrix with a
  polynomial potential (``IntegrationError``);
* no singular factor of the system (:mod:`mpvi.model.singular`) changed sign at a point
  a step evaluates, and none that reaches zero without changing sign (a squared distance)
  was passed through along the step's path; near one, with ``check_stability``, the step
  still resolves the motion (``IntegrationError``);
* Newton converged, its final residual within the bound of :func:`mpvi.numbers.newton.solve_info`
  (:class:`mpvi.NewtonError` with the residual, the iterations and the likely cause where
  the method can tell: a non-finite potential or a singular mass matrix at the iterate);
* the run has not diverged: every component of the state stays below ``max_growth``
  times the scale of the initial data (default 1/eps: beyond it a step of the scale of
  the initial data no longer changes the state) (``IntegrationError``).  Checked after
  every step; inside a step, sin, cos and tan of generated code return nan beyond 2^prec
  (:meth:`mpvi.numbers.context.Context.namespace`), so no run hangs in the argument reduction of
  an astronomically large number.

Before the run it also refuses a step below the resolution of the time (t0 + h == t0:
``ValueError`` naming the remedy) and a run whose saved points cannot fit in memory
(:class:`StorageError`, a ``MemoryError``, naming the estimate and the remedy, ``saveat``).

Before the run, ``check_stability`` refuses a step beyond the method's resolution at the
initial state: |h| rho >= min(b, pi), rho the spectral radius of the linearized equations
of motion at (t0, q0, v0) (the fastest local frequency or growth rate; omega_max for a
linear system) and b the method's stability bound on the harmonic oscillator where one
is known (:attr:`mpvi.Method.stability_bound`).  pi is fewer than two steps per period of
the fastest oscillation: no method resolves it.  (:class:`mpvi.StabilityError`.)
"""
from __future__ import annotations

import copy
import sys
from fractions import Fraction
import time
import weakref
from typing import TYPE_CHECKING, Any, Iterable, Mapping, NamedTuple, Sequence, TextIO

import numpy as np

from mpvi.model.callables import check_literals, returned, stop_flag
from mpvi.numbers.context import floor
from mpvi.engines.dense import Segment, StepData, locate_root, max_abs_on_unit
from mpvi.ground.expressions import as_expression
from mpvi.engines.kernels import step_check
from mpvi.numbers.linalg import NotPositiveDefiniteError, SingularMatrixError
from mpvi.numbers.newton import NewtonError, NewtonStats
from mpvi.model.problem import Problem, posed_value
from mpvi.ground.checks import check_flag, integer
from mpvi.methods.base import StabilityError, check_step, get_method
from mpvi.model.singular import SingularityCrossed, singularities
from mpvi.drive.solution import EventRecord, Solution
from mpvi.ground.precision import entry, entry_class

if TYPE_CHECKING:
    from mpvi.ground.types import (EventFunction, NumberLike, ProgressCallback, Real,
                         StepCallback, Vector)
    from mpvi.methods.base import Method

__all__ = ["solve", "Event", "EventRecord", "IntegrationError", "Progress"]

MAX_STEPS = 10 ** 9
"""The most steps one :func:`solve` takes: at the fastest step mpvi has (about 20 us: RK4
compiled on one degree of freedom) a billion steps take more than five hours."""

PROGRESS_EVERY = 256
"""A progress callback is called every this many steps (and after the last)."""

BATCH_MISSES = 3
"""After this many batches in a row that took no step (the compiled steps declined the
first), a run takes its steps one by one."""


class IntegrationError(ArithmeticError):
    """A step of :func:`solve` failed.

    A singular or indefinite mass matrix, a non-finite state, a system leaving its
    regular domain, or a run diverging beyond ``max_growth``; the message names the
    method, the step index j (of the step j -> j+1) and its time t_j.  Raised by
    :func:`solve`, it carries the points saved before the failing step as
    ``exc.solution`` (a :class:`mpvi.Solution` ending at the last good node), as does a
    :class:`mpvi.NewtonError`.  An ``ArithmeticError``.
    """


class StorageError(MemoryError):
    """A run whose saved points cannot fit in the memory of this machine.

    Raised by :func:`solve` before the first step; the message names the estimate, the
    memory available and the remedy (``saveat``).  A ``MemoryError``.
    """


@entry_class
class Event:
    """An event function for :func:`solve`, whose sign changes are located.

    ``g(t, q, v)`` (``g(t, y, y')`` for a first-order system); its sign changes between
    nodes are located to context precision on the dense output and recorded as
    :class:`EventRecord` entries of ``Solution.events``.  Calling the event calls ``g``.

    Parameters
    ----------
    g : callable
        ``g(t, q, v)`` returning a context number.
    terminal : bool, default False
        Stop the integration at the first such event.
    direction : {0, 1, -1}, default 0
        0: every sign change; +1: only from negative to positive; -1: only from positive
        to negative.
    name : str, optional
        The event's name (default: the function's name).

    Raises
    ------
    TypeError
        A ``g`` that is not callable.
    ValueError
        Another ``direction``.
    """

    def __init__(self, g: EventFunction, terminal: bool = False, direction: int = 0,
                 name: str | None = None) -> None:
        if not callable(g):
            raise TypeError("an event needs a callable g(t, q, v)")
        if isinstance(direction, bool) or direction not in (-1, 0, 1):
            raise ValueError(f"an event's direction must be -1, 0 or +1, got {direction!r}")
        if not isinstance(terminal, (bool, np.bool_)):
            raise TypeError(f"an event's terminal must be True or False, got {terminal!r}")
        self.g, self.terminal, self.direction = g, bool(terminal), int(direction)
        self.name = name or getattr(g, "__name__", "event")

    def __call__(self, t: Real, q: Vector, v: Vector) -> Real:
        return self.g(t, q, v)

    def __repr__(self):
        return f"Event({self.name!r}, terminal={self.terminal}, direction={self.direction})"


@entry_class
class Progress:
    """A progress callback for :func:`solve` that prints a line every few seconds.

    ``progress(step, total)`` prints ``label: step k/n (x%)`` about every ``every``
    seconds, and after the last step.  ``solve(..., progress=True)`` uses one.

    Parameters
    ----------
    label : str, default "solve"
        The start of each line.
    stream : file, optional
        Where to print (default: ``sys.stderr``).
    every : float, default 5.0
        Seconds between two lines.
    """

    def __init__(self, label: str = "solve", stream: TextIO | None = None,
                 every: float = 5.0) -> None:
        self.label, self.every = label, every
        self.stream = stream if stream is not None else sys.stderr
        self._last = time.monotonic()

    def __call__(self, k: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last >= self.every or k == total:
            self._last = now
            print(f"  {self.label}: step {k}/{total} ({100 * k // max(total, 1)}%)",
                  file=self.stream, flush=True)


# ----- the step count, the events, the saved points ------------------------------------------

def _step_count(problem, h, n, t1):
    ctx = problem.ctx
    if n is not None and t1 is not None:
        raise ValueError("give either the number of steps n or the final time t1, not both")
    if n is not None:
        count = integer(n)
        if count is None or count < 1:
            raise ValueError(f"the number of steps n must be a positive integer, got {n!r}")
        return _bounded_steps(count)
    t1 = problem.t1 if t1 is None else ctx.number(t1, "final time t1")
    if t1 is None:
        raise ValueError("give the number of steps n or the final time t1 (or Problem(..., t1=...))")
    t0 = problem.t0
    span = t1 - t0
    ratio = span / h
    if not ctx.isfinite(ratio) or not ratio > ctx.one / 2:
        raise ValueError(f"t1 = {ctx.to_str(t1, 12)} cannot be reached from t0 = "
                         f"{ctx.to_str(t0, 12)} in steps h = {ctx.to_str(h, 12)} "
                         f"((t1 - t0)/h = {ctx.to_str(ratio, 12)}; a negative h integrates "
                         "backwards)")
    if ratio > MAX_STEPS + 1:
        _bounded_steps(int(ratio), f" ((t1 - t0)/h = {ctx.to_str(ratio, 6)})")
    k = floor(ratio + ctx.one / 2)
    tol = 4 * ctx.eps * (abs(t0) + abs(t1) + abs(span))
    if abs(k * h - span) > tol:
        raise ValueError(f"t1 = {ctx.to_str(t1, 12)} is not a whole number of steps "
                         f"h = {ctx.to_str(h, 12)} from t0 = {ctx.to_str(t0, 12)} "
                         f"((t1 - t0)/h = {ctx.to_str(ratio, 12)}); choose h = (t1 - t0)/N")
    return k


def _check_time_resolution(problem, h, steps):
    """ValueError unless the times of the run, t0 + j h (j = 0 .. steps) and the points a
    step evaluates between them, are resolved in the context: |h| above 4 eps (|t0| +
    |t_end|), the rounding of t0 + j h at the run's largest time (below it t_j+1 can equal
    t_j: a run whose time does not advance, events and saved times unlocatable)."""
    ctx = problem.ctx
    t0 = problem.t0
    t_end = t0 + steps * h
    resolution = 4 * ctx.eps * (abs(t0) + abs(t_end))
    if abs(h) <= resolution:
        raise ValueError(f"the step h = {ctx.to_str(h, 6)} is below the resolution of the time "
                         f"t = {ctx.to_str(t0, 6)} at {ctx.dps} digits (4 eps (|t0| + |t_end|) = "
                         f"{ctx.to_str(resolution, 3)}): t0 + h would not advance the time; shift "
                         "the time origin (t0 = 0), take a larger h, or compute with more digits")


def _check_singular(sing, signs, m, j, t, t_next, q, q1, y1, state, system):
    """The singular factors keep their signs at the new node and, unless ``q`` is None (a
    method that checks the points inside its steps), at the chord midpoint
    (q_j + q_j+1)/2, the internal point of midpoint-type methods (:mod:`mpvi.model.singular`);
    IntegrationError naming the factor, the step and the time."""
    v1 = q1
    if sing.uses_velocity:
        v1 = y1 if state == "qv" else system.velocity(q1, y1, t_next)
    points = [(f"at t = {_t(t_next)}", t_next, q1, v1)]
    if q is not None:
        points.append(("at the chord midpoint of the step", (t + t_next) / 2,
                       [(a + b) / 2 for a, b in zip(q, q1)], v1))
    for where, tt, point, v in points:
        values = sing.values(tt, point, v)
        i = sing.crossed(values, signs)
        if i is not None:
            raise IntegrationError(f"{m.name}: step {j} at t = {_t(t)}: {where}, "
                                   f"{sing.describe(i, values[i])}")


def _bounded_steps(steps, detail=""):
    """``steps`` if at most :data:`MAX_STEPS`, else ValueError with the time it would take."""
    if steps > MAX_STEPS:
        days = steps * 20e-6 / 86400
        raise ValueError(f"{steps} steps{detail} are more than one solve takes ({MAX_STEPS}): "
                         f"even at 20 us per step (RK4 compiled, one degree of freedom) that is "
                         f"{days:.3g} days; take a larger h or split the run")
    return steps


def _events(events, ctx):
    if events is None:
        return []
    if callable(events):
        events = [events]
    out = []
    for e in events:
        if isinstance(e, Event):
            out.append(e)
        elif callable(e):                      # scipy style: attributes on a function
            out.append(Event(e, getattr(e, "terminal", False), getattr(e, "direction", 0)))
        else:
            raise TypeError(f"an event must be callable g(t, q, v), got {e!r}")
    for e in out:
        check_literals(e.g, ctx, f"event {e.name!r}")
    return out


def _saveat(problem, saveat, h, n):
    """None (every node), ('every', k), or ('times', sorted context times)."""
    ctx = problem.ctx
    if saveat is None:
        return None
    every = integer(saveat)
    if every is not None:
        if every < 1:
            raise ValueError(f"saveat = {saveat}: an integer saveat (every k-th node) must be >= 1")
        return ("every", every)
    if isinstance(saveat, (str, bytes)) or not isinstance(saveat, Iterable):
        raise TypeError(f"saveat must be None, an integer k (every k-th node) or a sequence "
                        f"of times, got {saveat!r}")
    t0, t_end = problem.t0, problem.t0 + n * h
    lo, hi = (t0, t_end) if h > 0 else (t_end, t0)
    tol = 4 * ctx.eps * (abs(t0) + abs(t_end))
    times = []
    for i, s in enumerate(saveat):
        s = ctx.number(s, f"saveat[{i}]")
        if not (lo - tol <= s <= hi + tol):
            raise ValueError(f"saveat[{i}] = {ctx.to_str(s, 12)} is outside the integration "
                             f"interval [{ctx.to_str(lo, 12)}, {ctx.to_str(hi, 12)}]")
        times.append(s)
    times.sort(reverse=h < 0)
    return ("times", times)


# ----- the stability/resolution check ----------------------------------------------------------

def spectral_radius(problem) -> Any:
    """rho: the spectral radius of the linearized equations of motion (q, v)' = (v,
    A(t, q, v)) at the initial state, i.e. of [[0, I], [dA/dq, dA/dv]] -- the fastest local
    frequency or growth rate (omega_max for a linear system, exactly).  Estimated in
    float64 (it decides a bound, not a result); None where it cannot be evaluated."""
    system = problem.system
    if system.first_order:
        return None
    if system.is_linear:
        return system.omega_max()
    return _radius_at(system, problem.t0, problem.q0, problem.v0)


def _radius_at(system, t, q, v):
    """:func:`spectral_radius` at the state (t, q, v) of a mechanical system."""
    ctx = system.ctx
    try:
        _, Aq, Av = system.acceleration_derivatives(t, q, v)
        n = system.dof
        J = np.zeros((2 * n, 2 * n))
        J[:n, n:] = np.eye(n)
        J[n:, :n] = np.asarray(ctx.to_float(Aq), dtype=float)
        J[n:, n:] = np.asarray(ctx.to_float(Av), dtype=float)
        if not np.all(np.isfinite(J)):
            return None
        return ctx.lift(float(max(abs(np.linalg.eigvals(J)))))
    except (ArithmeticError, ValueError, OverflowError, np.linalg.LinAlgError):
        return None


_STABILITY_NUMBERS: dict = {}


def _stability_number(method, params, ctx):
    """The method's stability bound on the oscillator for ``params`` as a number of ``ctx``
    (None: no bound), evaluated once per method, parameters and context."""
    try:
        key = (method.name, tuple(sorted(params.items())), ctx.key)
        hash(key)
    except TypeError:                          # an unhashable parameter: not cached
        key = None
    if key is None or key not in _STABILITY_NUMBERS:
        own = method.stability_bound_for(**params)
        own = None if own is None else ctx.num(
            as_expression(own, what=f"{method.name}: stability bound"))
        if key is None:
            return own
        _STABILITY_NUMBERS[key] = own
    return _STABILITY_NUMBERS[key]


_RADII: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _initial_spectral_radius(problem):
    """:func:`spectral_radius` of ``problem``, kept for the initial data it was computed
    from (a sweep solves one problem with many methods and steps)."""
    given = {"p": problem._p0, "v": problem._v0}.get(problem.given)
    key = (problem.system, problem.t0, tuple(problem.q0), problem.given,
           None if given is None else tuple(given))
    kept = _RADII.get(problem)
    if kept is not None and kept[0] == key:
        return kept[1]
    rho = spectral_radius(problem)
    _RADII[problem] = (key, rho)
    return rho


def _check_step_size(problem, method, params, h):
    ctx = problem.ctx
    rho = _initial_spectral_radius(problem)
    if rho is None or not rho > 0:
        return
    own = _stability_number(method, params, ctx)
    if own is not None and own < ctx.pi:
        bound, what = own, f"the method's stability bound on the oscillator, omega h < {ctx.to_str(own, 8)}"
    else:
        bound, what = ctx.pi, "pi: fewer than two steps per period of the fastest local oscillation"
    if abs(h) * rho >= bound:
        raise StabilityError(
            f"{method.name}: the step |h| = {ctx.to_str(abs(h), 8)} is beyond what the method "
            f"resolves at the initial state of {problem.name!r}: |h| rho = "
            f"{ctx.to_str(abs(h) * rho, 8)} >= {what} (rho = {ctx.to_str(rho, 8)}, the spectral "
            f"radius of the linearized equations of motion at t0).  Take |h| < "
            f"{ctx.to_str(bound / rho, 8)}, or pass check_stability=False to integrate anyway.")


# ----- the driver ---------------------------------------------------------------------------------

@entry
def solve(problem: Problem, method: str | Method, *, h: NumberLike | None = None,
          n: int | None = None, t1: NumberLike | None = None, order: int | None = None,
          saveat: int | Sequence[NumberLike] | None = None,
          events: EventFunction | Event | Sequence[EventFunction | Event] | None = None,
          callback: StepCallback | None = None,
          newton: Mapping[str, NumberLike] | None = None,
          progress: bool | ProgressCallback | None = None, check_stability: bool = True,
          max_growth: NumberLike | None = "1/eps", certify: bool = False,
          **method_params: object) -> Solution:
    """Integrate an initial-value problem with one method.

    The one driver, for every method (variational, Galerkin, Mutze, Newmark,
    Runge-Kutta, GBS) and for first-order systems.  Memory is O(saved points), never
    O(steps).

    Before the run, ``check_stability`` refuses a step beyond the method's resolution at
    the initial state: ``|h| rho >= min(b, pi)``, rho the spectral radius of the linearized
    equations of motion at (t0, q0, v0) (omega_max for a linear system) and b the
    method's stability bound on the harmonic oscillator where one is known
    (:meth:`Method.stability_bound_for`); a run whose saved points cannot fit in memory
    is refused too.  After every step the state must be finite, the system regular
    (potential or Lagrangian finite, mass matrix positive definite; skipped for a
    constant mass matrix and a polynomial potential), every Newton solve converged
    within its residual bound, and every state component below ``max_growth`` times the
    scale of the initial data.

    **Steps from a tolerance.**  ``solve(problem, method, tol="1e-40")`` (no ``h``) chooses
    a constant step h = (t1 - t0)/N, a whole number N of steps over the span, so that the
    estimated global error of the run is at most ``tol``, relative to max(1, the largest
    component of the state): runs of M and 2M steps (M from the resolution at the
    initial state, at least :data:`PILOT_STEPS`) give, by step doubling (Richardson
    extrapolation with the method's order p), the error E of the 2M run -- the largest
    difference of the two at their common nodes over (2^p - 1); N = 2M (E/(tol/2))^(1/p),
    and the pair N/2, N estimates the error again, until it is within ``tol`` (at most
    :data:`TOL_ROUNDS` rounds).  The step stays constant, so a symplectic method stays
    symplectic.  ``sol.stats["tolerance"]`` reports the tolerance, the order, the steps N,
    the step h, the error estimate of the run returned and the runs taken; ``sol.h`` is
    h, exact ((t1 - t0)/N as posed) where t0 and t1 are.  ``taylor`` keeps its own
    ``tol`` (its adaptive substeps): give it ``h``.  Without ``h`` and ``tol``, ``n``
    steps over (t0, t1) give h = (t1 - t0)/n.

    Parameters
    ----------
    problem : Problem
        System, initial state, time span, exact solution; its system's context is the
        context of the run.
    method : str or Method
        A name of :data:`mpvi.METHODS` (``"simpson"``, ``"lobatto"``, ``"rk4"``, ...) or a
        :class:`mpvi.Method`.
    h : number, optional
        The step (a string, int, Fraction, sympy number or context number); negative
        integrates backwards.  Without it, ``tol`` chooses it, or ``n`` steps over
        (t0, t1) do.
    n : int, optional
        Number of steps.  Give ``n`` or ``t1`` (default: the problem's ``t1``).
    t1 : number, optional
        Final time; (t1 - t0)/h must be a whole number (else ``ValueError`` naming both).
    order : int, optional
        The order wanted: chooses the member of a method family
        (:meth:`mpvi.Method.parameters_for_order`: ``lobatto`` ``points``, ``gauss``
        ``points``, ``hermite_*`` ``hermite_n``, ``gbs`` ``levels``, ``taylor``
        ``degree``); a method of one order accepts its own only.
    saveat : None, int or sequence of times
        None: every node; an integer k: every k-th node and the last; a sequence of times
        (in the integration interval): those times, between nodes through the dense
        output.  Memory is O(saved points).
    events : callable, Event or sequence of them, optional
        Functions g(t, q, v) (``g(t, y, y')`` for a first-order system) whose sign changes
        between nodes are located to context precision on the dense output (of the
        method's order, :mod:`mpvi.engines.dense`); an :class:`Event` (or a function with a
        ``terminal`` attribute, scipy style) with ``terminal=True`` stops the run there.
    callback : callable, optional
        ``callback(t, q, y)`` after every step with the new node (y = p or v, as the
        method carries; for a first-order system q is the state and y None); returning
        True (a Python or numpy bool) stops the run, False or None goes on, anything else
        raises ``TypeError``.
    newton : dict, optional
        Newton options of an implicit method: ``max_iter``, ``rtol``, ``scale``
        (``ValueError`` for a method that solves no Newton equations).
    progress : None, True or callable, optional
        True prints a line to stderr every 5 s; a callable is called as
        ``progress(step, n)`` every 256 steps and after the last.
    check_stability : bool, default True
        Refuse a step beyond the method's resolution at the initial state (above).
    max_growth : number, "1/eps" or None, default "1/eps"
        The divergence guard: a state component beyond ``max_growth`` times the scale
        of the initial data (``max(1, |q0|, |y0|)``) stops the run with ``IntegrationError``;
        None switches the guard off, for a deliberately growing solution.
    certify : bool, default False
        Walk the run again on Arb balls (:func:`mpvi.certify`) and attach the
        :class:`mpvi.Certificate` as ``solution.certificate``.  A certificate that ends
        before the last saved point (a step it could not prove) is attached as it is: it
        says which step and why (``certificate.failed_step``, ``.why``), the solution is
        returned.  A certification that raises (:class:`mpvi.WrongStepError`: a
        computed state outside its enclosure; a run it refuses) carries the whole run as
        ``exc.solution``, as a failing step does: the run is never lost.
    **method_params
        The method's parameters (``points=6`` for ``lobatto``, ``beta``/``gamma`` for
        ``newmark_family``, ``levels`` for ``gbs``, ...), and ``tol``: for a method with
        no ``tol`` of its own, the tolerance the step is chosen from (above; a number in
        (0, 1) above the context's rounding, with no ``h`` nor ``n``).

    Returns
    -------
    Solution
        The saved points, statistics and events; ``stopped`` says why a run ended early.

    Raises
    ------
    ValueError
        Bad arguments, each naming the cause: both or neither of ``n`` and ``t1``, a
        ``t1`` that is not a whole number of steps, a zero or non-finite ``h``, an ``h``
        below the resolution of the time (t0 + h == t0), an
        unknown method or method parameter, a ``saveat`` time outside the interval, a
        mechanical method for a first-order system, ``newton`` options for an explicit
        method, ``max_growth`` not above 1, an event returning nan; an ``order`` the
        method cannot give (listing those it can) or that its member parameter
        contradicts; ``tol`` outside (0, 1), within 100 eps of the rounding, given with
        ``h`` or ``n``, without a final time, or not reached in :data:`TOL_ROUNDS` rounds.
    TypeError
        Not a :class:`mpvi.Problem`, no ``h`` (nor ``tol`` or ``n``), a ``saveat``, event, callback or progress
        of the wrong type, an event returning something that is not a number.
    PrecisionError
        A number (h, t1, saveat times, max_growth) that would cap the precision.
    StabilityError
        A step beyond the method's resolution (``check_stability``).
    StorageError
        Saved points that cannot fit in memory.
    NewtonError, IntegrationError
        A failing step, with its index j, time t_j and the likely cause; ``exc.solution``
        holds what was saved up to the last good node.
    WrongStepError
        With ``certify``: a computed state outside its proven enclosure; ``exc.solution``
        holds the run (as for every error ``certify`` raises).

    See Also
    --------
    Problem : The initial-value problem.
    METHODS : The registered methods.
    """
    certify = check_flag(certify, "solve: certify")
    check_stability = check_flag(check_stability, "solve: check_stability")
    _check_problem(problem)
    m = get_method(method)
    tol = method_params.pop("tol", None) if "tol" not in m.params else None
    if order is not None:
        method_params = m.parameters_for_order(order, **method_params)
    options = dict(saveat=saveat, events=events, callback=callback, newton=newton,
                   progress=progress, check_stability=check_stability, max_growth=max_growth)
    if tol is not None:
        if h is not None or n is not None:
            raise ValueError("tol chooses the step: give tol with t1 (or Problem(..., t1=...)), "
                             "without h or n")
        solution = _solve_to_tolerance(problem, m, tol, t1, method_params, options)
    else:
        if h is None and n is not None:
            h, t1 = _step_of_count(problem, n, t1), None
        solution = _run_once(problem, m, h, n, t1, method_params, options)
    if certify:
        from mpvi.proof.certify import certify as prove
        try:
            solution.certificate = prove(solution)
        except Exception as exc:              # WrongStepError, a refusal: the run is kept
            exc.solution = solution           # type: ignore[attr-defined]
            raise
    return solution


def _check_problem(problem):
    if not isinstance(problem, Problem):
        raise TypeError(f"solve takes an mpvi.Problem, got {type(problem).__name__} (build one "
                        "with mpvi.Problem(system, q0, p0=... or v0=...))")


def _run_once(problem, m, h, n, t1, method_params, options):
    """One run of :func:`solve` with a given step."""
    o = options
    plan = _plan(problem, m, h, n, t1, o["saveat"], o["events"], o["callback"], o["newton"],
                 o["progress"], o["check_stability"], method_params)
    return _Run(plan, o["max_growth"]).run()


# ----- the step from a tolerance -------------------------------------------------------------------

PILOT_STEPS = 8
"""The fewest steps of the first (coarse) run of a step chosen from a tolerance."""
TOL_ROUNDS = 4
"""The most pairs of runs (step doubling) a step chosen from a tolerance takes."""
TOL_FLOOR = 100
"""A tolerance must exceed this many times the context's eps: below it the rounding of
the runs, not the method's error, would decide the estimate."""
COMPARED_POINTS = 64
"""About how many common nodes two runs of the step doubling are compared at (memory
O(this), not O(steps))."""


def _span_end(problem, t1):
    """(t1 as a context number, t1 as posed or None): the final time given or the
    problem's; ValueError where there is none."""
    if t1 is not None:
        return problem.ctx.number(t1, "final time t1"), posed_value(t1)
    if problem.t1 is None:
        raise ValueError("a step chosen from tol or from n needs the span: give t1 (or "
                         "Problem(..., t1=...))")
    return problem.t1, (getattr(problem, "posed", None) or {}).get("t1")


def _exact(value):
    """A posed value (int, Fraction, decimal or 'p/q' text, sympy number) as a Fraction or
    a sympy number; None where it is not exact."""
    if value is None or isinstance(value, (int, Fraction)):
        return None if value is None else Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(value)
        except ValueError:
            return as_expression(value, what="a time")
    return value


def _step_over(problem, t_end, posed_end, count):
    """h = (t_end - t0)/count, exact (a Fraction or sympy number) where t0 and t_end were
    posed exactly, else a context number."""
    a, b = _exact((getattr(problem, "posed", None) or {}).get("t0")), _exact(posed_end)
    if a is not None and b is not None:
        return (b - a) / count
    return (t_end - problem.t0) / count


def _step_of_count(problem, n, t1):
    """``solve(problem, method, n=N)`` without h: h = (t1 - t0)/N."""
    count = integer(n)
    if count is None or count < 1:
        raise ValueError(f"the number of steps n must be a positive integer, got {n!r}")
    t_end, posed_end = _span_end(problem, t1)
    return _step_over(problem, t_end, posed_end, count)


def _tolerance(tol, ctx):
    """``tol`` as a context number in (TOL_FLOOR eps, 1), or ValueError naming the remedy."""
    value = ctx.number(tol, "tol")
    if not (ctx.isfinite(value) and 0 < value < 1):
        raise ValueError(f"tol must be a number between 0 and 1, got {tol!r}")
    if value <= TOL_FLOOR * ctx.eps:
        raise ValueError(f"tol = {ctx.to_str(value, 5)} is within {TOL_FLOOR} eps of the "
                         f"rounding of {ctx.name} ({ctx.dps} digits): no run can be verified "
                         "to it; compute with more digits (a context of more dps) or take a "
                         "larger tol")
    return value


def _pilot_count(problem, m, params, t_end):
    """The first run's steps: :data:`PILOT_STEPS`, or more where the step would be beyond
    half the method's resolution at the initial state (:func:`_check_step_size`)."""
    ctx = problem.ctx
    rho = _initial_spectral_radius(problem)
    if rho is None or not rho > 0:
        return PILOT_STEPS
    own = _stability_number(m, params, ctx)
    bound = own if own is not None and own < ctx.pi else ctx.pi
    return max(PILOT_STEPS, int(floor(abs(t_end - problem.t0) * rho * 2 / bound)) + 1)


def _difference(coarse, fine, every_node):
    """The largest difference of two runs at their common nodes, relative to max(1, the
    largest component of the finer run's state there)."""
    ctx = coarse.ctx
    rows = zip(coarse.q, fine.q[::2] if every_node else fine.q)
    ys = [] if coarse.y is None else zip(coarse.y, fine.y[::2] if every_node else fine.y)
    diff, scale = ctx.zero, ctx.one
    for pairs in (rows, ys):
        for a, b in pairs:
            for u, w in zip(a, b):
                diff, scale = max(diff, abs(u - w)), max(scale, abs(w))
    return diff / scale


def _doubling(problem, m, t_end, posed_end, coarse_steps, params, options, reuse):
    """Runs of M and 2M steps: (the 2M run, the estimate of its error).
    ``reuse``: the 2M run is made with the caller's options (every node saved), to be
    returned; else both save about :data:`COMPARED_POINTS` common nodes."""
    stride = max(1, coarse_steps // COMPARED_POINTS)
    quiet = dict(options, events=None, callback=None, progress=None)
    coarse_options = dict(quiet, saveat=None if reuse else stride)
    fine_options = options if reuse else dict(quiet, saveat=2 * stride)
    runs = []
    for steps, o in ((coarse_steps, coarse_options), (2 * coarse_steps, fine_options)):
        h = _step_over(problem, t_end, posed_end, steps)
        runs.append(_run_once(problem, m, h, None, t_end if posed_end is None else posed_end,
                              params, o))
    p = m.order_for(**params)
    diff = _difference(runs[0], runs[1], reuse)
    return runs[1], diff / (2 ** p - 1)


def _solve_to_tolerance(problem, m, tol, t1, params, options):
    """:func:`solve` with the step chosen from ``tol`` (the docstring of :func:`solve`)."""
    ctx = problem.ctx
    tol = _tolerance(tol, ctx)
    params = m.parameters(**params)
    t_end, posed_end = _span_end(problem, t1)
    p = m.order_for(**params)
    reuse = options["saveat"] is None and not options["events"] and options["callback"] is None
    coarse = _pilot_count(problem, m, params, t_end)
    target, pilot, runs = tol / 2, coarse, 0
    for round_ in range(TOL_ROUNDS):
        try:
            fine, estimate = _doubling(problem, m, t_end, posed_end, coarse, params, options,
                                       reuse)
        except (NewtonError, IntegrationError):
            if coarse > pilot or round_ + 1 == TOL_ROUNDS:    # not the pilot's: it fails
                raise
            coarse, pilot = 2 * coarse, 2 * pilot      # the pilot's step was too coarse
            continue
        runs, at = runs + 2, 2 * coarse
        if estimate <= tol:
            break
        ratio = ctx.exp(ctx.log(estimate / target) / p)
        steps = int(floor(2 * coarse * ratio)) + 1
        coarse = max(coarse + 1, (steps + 1) // 2)
        _bounded_steps(2 * coarse, f" (order {p} to tol = {ctx.to_str(tol, 5)}: take a higher "
                       "order, order=..., or a larger tol)")
    else:
        raise ValueError(
            f"solve: {m.name} did not reach tol = {ctx.to_str(tol, 5)} in {TOL_ROUNDS} rounds "
            f"of step doubling (the estimate at {at} steps: "
            f"{ctx.to_str(estimate, 5)}); the run's rounding ({ctx.dps} digits) or a solution "
            "that is not smooth may decide it: take a larger tol or more digits")
    if not reuse:
        fine = _run_once(problem, m, _step_over(problem, t_end, posed_end, 2 * coarse), None,
                         t_end if posed_end is None else posed_end, params, options)
        runs += 1
    fine.stats["tolerance"] = {"tol": tol, "order": p, "steps": 2 * coarse, "h": fine.h,
                               "error_estimate": estimate, "pilot_steps": pilot, "runs": runs}
    return fine


# ----- plan: every argument checked before the first step ------------------------------------------

class _Plan(NamedTuple):
    """What :func:`solve` settled before the first step."""

    problem: Problem
    method: Any
    params: dict
    h: Any                     # the step, validated: a nonzero finite context number
    steps: int
    prepare_args: dict         # the method's parameters and options, as ``prepare`` takes them
    saveat: Any                # as given (the Solution records it)
    points: Any                # None (every node), ("every", k) or ("times", sorted times)
    events: list
    callback: Any
    progress: Any
    posed: Any = None          # h and the saveat times as the user wrote them, where exact
    check_stability: bool = True


def _plan(problem, method, h, n, t1, saveat, events, callback, newton, progress, check_stability,
          method_params):
    """The arguments of :func:`solve` checked, in the order of its documented errors: the
    method, the step (validated here, once), the step count, the options, the resolution,
    the saved points and the memory they need, the events and callbacks."""
    _check_problem(problem)
    m = get_method(method)
    params = m.parameters(**method_params)
    ctx = problem.ctx
    if problem.system.first_order and not m.first_order:
        raise ValueError(f"method {m.name!r} integrates mechanical systems; {problem.name!r} is a "
                         "first-order system (use rk4, gbs or rk2)")
    if h is None:
        if "tol" in m.params:
            raise TypeError(f"solve needs the step size h: {m.name}'s tol is its own (the "
                            "tolerance of its adaptive substeps), it does not choose h; or "
                            "give n=... steps over (t0, t1)")
        raise TypeError("solve needs the step size h, or tol=... to choose it from the "
                        "method's order and an error estimate (solve(problem, method, "
                        "tol='1e-20', t1=...)); or n=... steps over (t0, t1)")
    posed = {"h": posed_value(h), "times": None}
    h = check_step(h, ctx)
    steps = _step_count(problem, h, n, t1)
    _check_time_resolution(problem, h, steps)
    prepare_args = _prepare_args(m, params, newton, check_stability)
    if check_stability:
        _check_step_size(problem, m, params, h)
    points = _saveat(problem, saveat, h, steps)
    if points is not None and points[0] == "times":
        pairs = sorted(((ctx.number(x, "saveat"), posed_value(x)) for x in saveat),
                       key=lambda pair: pair[0], reverse=h < 0)
        posed["times"] = [exact for _, exact in pairs]
    _check_storage(problem, points, steps)
    evs = _events(events, ctx)
    if callback is not None and not callable(callback):
        raise TypeError("callback must be callable callback(t, q, y)")
    if progress is True:
        progress = Progress(f"{m.name} {problem.name}")
    elif progress is False:
        progress = None
    elif progress is not None and not callable(progress):
        raise TypeError("progress must be None, True or a callable progress(step, total)")
    return _Plan(problem, m, params, h, steps, prepare_args, saveat, points, evs, callback,
                 progress, posed, bool(check_stability))


def _prepare_args(m, params, newton, check_stability):
    """The keyword arguments of the method's ``prepare``: its parameters, the Newton options
    of a method that declares it takes them, ``check_stability`` for one that declares a
    bound of its own (:class:`mpvi.Method`)."""
    args = dict(params)
    if newton is not None:
        if not m.takes_newton_options:
            raise ValueError(f"method {m.name!r} solves no Newton equations: newton options do "
                             "not apply")
        args["newton"] = newton
    if m.checks_stability:
        args["check_stability"] = bool(check_stability)
    return args


# ----- the run: step, guards, save, events, finish -------------------------------------------------

class _Run:
    """One run of :func:`solve`: the stepper, the guards after each step, the saved points
    and the events found.  :meth:`run` takes the steps; what it needs of the run at every
    step is read into locals there, the rest is in small methods."""

    def __init__(self, plan, max_growth):
        problem, m, h = plan.problem, plan.method, plan.h
        system, ctx = problem.system, problem.ctx
        self.plan, self.problem, self.method, self.system, self.ctx, self.h = \
            plan, problem, m, system, ctx, h
        self.start = time.perf_counter()
        self.stepper = m._prepare(system, h, ctx, **plan.prepare_args)
        self.data = StepData(m, self.stepper, system, ctx, h, plan.prepare_args)
        self.state = self.data.state
        self.q0, self.y0 = problem.initial_state(m.state)
        self.guard = _Divergence(problem, m, self.q0, self.y0, max_growth)
        points = plan.points
        self.every_node = points is None
        self.saves_nodes = points is None or points[0] == "every"
        self.stride = points[1] if points is not None and points[0] == "every" else 1
        self.times = points[1] if points is not None and points[0] == "times" else []
        self.keep_dense = self.every_node and self.data.dense == "trial"
        self.T, self.Q, self.Y, self.internal, self.dense = [], [], [], [], []
        self.ti = 0                                # the next requested time
        self.forward = h > 0
        self._save_start()
        self._singular_signs()
        self.inside = getattr(self.stepper, "checks_inside", False)   # else: the chord midpoint too
        self.stats = NewtonStats()
        self.misses = 0                            # batches in a row that took no step
        self.found, self.tail, self.g_prev = [], None, None
        first_order = system.first_order
        self.check_regular = not first_order and system.needs_regularity_check
        self.fast_check = None if first_order else step_check(system)
        self.bound = self.guard.bound if self.guard.on else None

    def _save(self, t, q, y):
        self.T.append(t)
        self.Q.append(q)
        self.Y.append(y)

    def _save_start(self):
        t0, q, y = self.problem.t0, self.q0, self.y0
        if self.saves_nodes:
            self._save(t0, q, y)
        times = self.times
        while self.ti < len(times) and times[self.ti] == t0:
            self._save(t0, q, y)
            self.ti += 1

    def _singular_signs(self):
        """The signs the system's singular factors must keep (:mod:`mpvi.model.singular`), given
        to the stepper too; a list only while a sign is unknown."""
        system = self.system
        sing = None if system.first_order else singularities(system)
        self.sing = sing if sing is not None and len(sing) else None
        self.signs = None
        if self.sing is not None:
            q0 = self.q0
            signs = sing.signs(sing.values(self.problem.t0, q0,
                                           self.problem.v0 if sing.uses_velocity else q0))
            self.signs = signs if 0 in signs else tuple(signs)
            self.stepper.guard_signs = self.signs
        self.touch = sing if sing is not None and sing.touching else None
        self.blocks = sing if sing is not None and sing.blocks else None
        self.touch_prev = self.touch_path = self.touch_reach = self.resolve_bound = None
        basis = getattr(self.stepper, "trial_basis", None)
        if basis is not None and (self.touch is not None or self.blocks is not None):
            ctx, h, pieces = self.ctx, self.h, 2 * basis.degree    # the trial function's
            self.touch_path = [(k * h / pieces, basis.weights(h, ctx.num(k) / pieces)[0],
                                ctx.zeros(len(self.q0))) for k in range(1, pieces)]  # points
        if self.touch is not None:
            if self.plan.check_stability:
                own = _stability_number(self.method, self.plan.params, self.ctx)
                self.resolve_bound = ((own, "the method's stability bound") if own is not None
                                      and own < self.ctx.pi else
                                      (self.ctx.pi, "pi (fewer than two steps per period)"))
            self.touch_prev = self.touch.touching_values(self.problem.t0, self.q0)[:-1]
            if basis is not None:
                ctx, h = self.ctx, self.h
                # q(theta) - q_j = sum_i phi_i(theta) h^d_i (c_i - [d_i = 0] q_j) where the
                # position slots' phi_i sum to 1: by Cauchy-Schwarz |q(theta) - q_j|^2 <=
                # (sum_i m_i) sum_i m_i |...|^2, m_i = |h|^d_i max |phi_i| on [0, 1]
                ones = [sum(p[k] for p, d in zip(basis.polynomials, basis.powers) if d == 0
                            and k < len(p)) for k in range(basis.degree + 1)]
                if ones == [1] + [0] * basis.degree:
                    reach = [abs(h) ** d * ctx.num(str(max_abs_on_unit(p)))
                             for p, d in zip(basis.polynomials, basis.powers)]
                    total = sum(reach)
                    self.touch_reach = ([total * m for m in reach], [d == 0 for d in basis.powers])

    def run(self):
        """Take the steps: the Solution, or the step's error carrying the points saved
        before it as ``exc.solution``."""
        stepper, data, h, t0, steps = self.stepper, self.data, self.h, self.problem.t0, \
            self.plan.steps
        fast_check, bound, signs, inside, sing, touch, blocks = self.fast_check, self.bound, \
            self.signs, self.inside, self.sing, self.touch, self.blocks
        evs, times, progress, callback = \
            self.plan.events, self.times, self.plan.progress, self.plan.callback
        need_segment, velocity_state = bool(evs) or bool(times), self.state == "qv"
        every_node, keep_dense, stride = self.every_node, self.keep_dense, self.stride
        every_k = self.saves_nodes and not every_node
        record, save, T, Q, Y = self.stats.record, self._save, self.T, self.Q, self.Y
        q, y, t, carry, v_prev, j_done, stopped = self.q0, self.y0, t0, None, None, 0, None
        batch, j = self._batchable(need_segment, touch, blocks, callback), 0
        try:
            while j < steps:
                taken = self._steps_in_c(j, t, q, y, carry) if batch else None
                if taken is not None:              # steps j, j + 1, ... taken in C
                    j = j_done = taken[0]
                    _, t, q, y, carry = taken
                    continue
                batch = batch and self.misses < BATCH_MISSES
                try:
                    r = stepper(t, q, y, carry)
                except (NewtonError, SingularMatrixError, NotPositiveDefiniteError,
                        SingularityCrossed) as e:
                    raise self._step_error(e, j, t) from None
                q1, y1 = r.q, r.y
                t_next = t0 + (j + 1) * h
                v1 = y1 if velocity_state else None
                # the checks after the step; compiled for an M, V system, with the same outcome
                if fast_check is None or not fast_check(t_next, q1, y1, bound, signs,
                                                        None if inside else q):
                    v1 = self._check(j, t, t_next, q, q1, y1, v1)
                if sing is not None and r.guards is not None:
                    self._check_quadrature_nodes(j, t, r.guards)
                if touch is not None:
                    self._check_touching(j, t, t_next, q, q1, r.carry, y, y1)
                if blocks is not None:
                    self._check_blocks(j, t, t_next, q, q1, r.carry, y, y1)
                if r.iterations is not None:
                    record(r.iterations, r.residual)
                segment = Segment(data, t, q, y, q1, y1, r.carry, v_prev, v1) if need_segment \
                    else None
                if evs:
                    stop_at = self._events(t, q, t_next, q1, segment)
                    if stop_at is not None:
                        stopped = self._stop_at_event(stop_at, segment, r)
                        j_done = j + 1
                        break
                if times:
                    self._save_requested(t_next, segment, inclusive=True)
                node_saved = every_node or (every_k and ((j + 1) % stride == 0 or j + 1 == steps))
                if node_saved:                     # self._save, inline: every step
                    T.append(t_next)
                    Q.append(q1)
                    Y.append(y1)
                if every_node:
                    if r.internal is not None:
                        self.internal.append(r.internal)
                    if keep_dense:
                        self.dense.append(r.carry)
                q, y, carry, t = q1, y1, r.carry, t_next
                v_prev = segment._v[1] if segment is not None else v1
                j_done = j + 1
                if progress is not None and (j % PROGRESS_EVERY == 0 or j + 1 == steps):
                    progress(j + 1, steps)
                if callback is not None and stop_flag(callback(t_next, _own(q1), _own(y1)),
                                                      "callback"):
                    stopped = f"callback at t = {_t(t_next)}"
                    if every_k and not node_saved:
                        save(t_next, q1, y1)
                    break
                j += 1
        except (NewtonError, IntegrationError) as exc:
            # nothing computed is lost: the points saved before the failing step travel with
            # the error (exc.solution), ending at the last good node
            if every_k and j_done % stride:
                save(t, q, y)                      # the last good node
            exc.solution = self._finish(j_done, f"failed at step {j_done}: {type(exc).__name__}")
            raise
        return self._finish(j_done, stopped)

    # ----- steps in C: a batch of steps with no Python between them ------------------------------

    def _batchable(self, need_segment, touch, blocks, callback):
        """Whether steps may be taken in batches by the compiled module
        (:meth:`mpvi.methods.variational._TrialStepper.many`, and RK4's of
        :func:`mpvi.methods.rk4.explicit_stepper`): a stepper that has them, the nodes
        saved (all or every k-th), no events, requested times, callback, touching factor or
        block check (what those need runs in Python after each step), and the checks after
        a step compiled with every sign known."""
        return (hasattr(self.stepper, "batch_ready") and self.saves_nodes and not need_segment
                and touch is None and blocks is None and callback is None
                and self.fast_check is not None and not isinstance(self.signs, list))

    def _steps_in_c(self, j, t, q, y, carry):
        """Steps j, j + 1, ... up to the next progress report, taken by the compiled module
        with the checks after each step (the compiled check, the signs at the quadrature
        nodes) and saved as :meth:`run` saves them; (the next j, t, q, y, carry), or None
        where it took none (not compiled yet, or the step j declined or failed: :meth:`run`
        takes it its own way, which raises with the message where it fails)."""
        steps, h, t0 = self.plan.steps, self.h, self.problem.t0
        compiled = getattr(self.fast_check, "compiled", None)   # step_check's, once loaded
        check = None if compiled is None else compiled()
        if check is None or not self.stepper.batch_ready(carry):   # before the step times
            return None
        mark = -(-j // PROGRESS_EVERY) * PROGRESS_EVERY       # the next progress report
        count = min(steps, mark + 1) - j
        ends = [t0 + (j + 1 + i) * h for i in range(count)]
        signs = self.signs
        head: tuple = (self.fast_check.params, self.bound)
        if signs is not None:
            head += (signs, None if self.inside else ...)
        got = self.stepper.many([t] + ends[:-1], ends, q, y, carry, check, head, signs)
        if got is None:
            return None
        done, Qs, Ys, internal, coeffs, iterations, residuals, last = got
        if not done:
            self.misses += 1
            return None
        self.misses = 0
        if iterations is not None:                         # an implicit step's
            self.stats.record_all(iterations, residuals)
        if self.every_node:
            self.T.extend(ends[:done])
            self.Q.extend(Qs)
            self.Y.extend(Ys)
            if internal is not None:
                self.internal.extend(internal)
            if self.keep_dense:
                self.dense.extend(coeffs[:-1])
                self.dense.append(last)
        else:
            for i in range(done):
                if (j + i + 1) % self.stride == 0 or j + i + 1 == steps:
                    self._save(ends[i], Qs[i], Ys[i])
        progress = self.plan.progress
        if progress is not None:
            for k in range(j, j + done):
                if k % PROGRESS_EVERY == 0 or k + 1 == steps:
                    progress(k + 1, steps)
        return j + done, ends[done - 1], Qs[-1], Ys[-1], last

    # ----- step: the errors of a step and the guards after it -------------------------------------

    def _step_error(self, e, j, t):
        """The error of a step that failed inside, naming the step j and its time t_j."""
        if isinstance(e, NewtonError):
            return e.at(j, t)
        return IntegrationError(f"{self.method.name}: step {j} at t = {_t(t)}: {e}")

    def _check(self, j, t, t_next, q, q1, y1, v1):
        """The checks after a step (module doc): a finite state, no divergence, a regular
        system, the singular factors' signs; v1 as the regularity check computed it."""
        m, system, ctx = self.method, self.system, self.ctx
        isfinite = ctx.isfinite
        if not (all(map(isfinite, q1)) and (y1 is None or all(map(isfinite, y1)))):
            cause = "" if system.first_order else _cause(system, t_next, q1, None)
            raise IntegrationError(
                f"{m.name}: step {j} at t = {_t(t)} produced a non-finite state "
                f"(h = {_t(self.h)} too large?){cause}")
        self.guard.check(j, t, t_next, q1, y1)
        if self.check_regular:
            if self.state == "qp" and system.mass_expr is None:     # L and L_vv need v
                v1 = system.velocity(q1, y1, t_next)
            # the M, V form does not read v: q1 stands in for it
            wrong = system.irregularity(t_next, q1, q1 if v1 is None else v1)
            if wrong:
                raise IntegrationError(
                    f"{m.name}: step {j} at t = {_t(t)} reached t = {_t(t_next)} where "
                    f"{wrong} (q = ({', '.join(ctx.to_str(x, 8) for x in q1)})): the "
                    "system leaves its regular domain, the results would be meaningless")
        if self.sing is not None:
            _check_singular(self.sing, self.signs, m, j, t, t_next, None if self.inside else q,
                            q1, y1, self.state, system)
        return v1

    def _check_touching(self, j, t, t_next, q, q1, carry, y, y1):
        """The singular factors that reach zero without changing sign (a squared distance,
        :mod:`mpvi.model.singular`) do not pass through it inside the step: where the step's
        path comes near enough (|f(q_j)| <= bound D^2, D a bound of its distance from q_j),
        their values at the ends and midpoint of each chord of the path
        (:meth:`mpvi.model.singular.Singularities.passes_zero`) -- the chord between the
        nodes, or for a trial-function method the chords between 2 x its degree + 1 points
        of its trial function (the path it computed) --, and the tangents q_j + s h v_j and
        q_j+1 - s h v_j+1, s in [0, 1] (a step that jumps over the zero and back: the
        velocity at a node heads through it within the step)."""
        touch, m = self.touch, len(self.touch_prev)
        f0: Any = self.touch_prev
        values = touch.touching_values(t_next, q1, q)
        self.touch_prev, D2 = values[:m], values[m]      # D^2 >= the squared distance from q_j
        reach = self.touch_reach
        if reach is not None:
            D2 = touch.path_reach(reach[0], reach[1], carry, q)
        if (self.touch_path is None or reach is not None) and \
                all(abs(x) > touch.touching_bound * D2 for x in f0):
            return
        path = self._step_path(t, t_next, q, q1, carry)
        eps, start = self.ctx.eps, f0
        for (ta, qa), (tb, qb) in zip(path, path[1:]):
            values = touch.chord_values(ta, tb, qa, qb)
            chord2 = sum((a - b) ** 2 for a, b in zip(qa, qb))
            for i in range(m):
                if touch.reaches_zero(i, f0[i], values[m + i], values[i], chord2, eps):
                    raise IntegrationError(
                        f"{self.method.name}: step {j} at t = {_t(t)}: "
                        f"{touch.describe_touch(i, (f0[i], values[m + i], values[i]))}")
            f0 = values[:m]
        self._check_resolved_near(j, t, t_next, q1, y1)
        for (tt, qq, tip), fa, where in zip(self._tangents(t, t_next, q, q1, y, y1),
                                            (start, f0), ("start", "end")):
            values = touch.chord_values(tt, tt, qq, tip)
            chord2 = sum((a - b) ** 2 for a, b in zip(qq, tip))
            for i in range(m):
                if touch.reaches_zero(i, fa[i], values[m + i], values[i], chord2, eps):
                    raise IntegrationError(
                        f"{self.method.name}: step {j} at t = {_t(t)}: the velocity at the "
                        f"step's {where} heads through the zero of {touch.touching[i]} (from "
                        f"{touch.touching_origins[i]}) within the step: the step jumped over "
                        "a singularity of the system")

    def _step_path(self, t, t_next, q, q1, carry):
        """The points (t, q) of a step's path: its nodes, and between them, for a
        trial-function method, 2 x its degree - 1 points of its trial function."""
        if self.touch_path is None:
            return [(t, q), (t_next, q1)]
        return [(t, q)] + [(t + dt, sum((c * w for c, w in zip(carry, ws)), zero))
                           for dt, ws, zero in self.touch_path] + [(t_next, q1)]

    def _tangents(self, t, t_next, q, q1, y, y1):
        """The tangents of a step at its nodes, (t, q_j, q_j + h v_j) and (t_j+1, q_j+1,
        q_j+1 - h v_j+1): a step that jumps over a singularity and back has a node velocity
        heading through it."""
        out, h = [], self.h
        for tt, qq, yy, sign in ((t, q, y, 1), (t_next, q1, y1, -1)):
            v = yy if self.state == "qv" else self.system.velocity(qq, yy, tt)
            out.append((tt, qq, [a + sign * h * b for a, b in zip(qq, v)]))
        return out

    def _check_blocks(self, j, t, t_next, q, q1, carry, y, y1):
        """The blocks of M too large to factor (:mod:`mpvi.model.singular`) are positive
        definite along the step's path (its chords) and its tangents at the nodes, else
        IntegrationError naming the block, the step and the time."""
        path = self._step_path(t, t_next, q, q1, carry)
        segments = [(ta, qa, tb, qb) for (ta, qa), (tb, qb) in zip(path, path[1:])]
        segments += [(tt, qq, tt, tip) for tt, qq, tip in self._tangents(t, t_next, q, q1, y, y1)]
        failure = self.blocks.block_failure(segments)
        if failure is not None:
            raise IntegrationError(f"{self.method.name}: step {j} at t = {_t(t)}: {failure}")

    def _check_resolved_near(self, j, t, t_next, q1, y1):
        """With ``check_stability``, a step whose path comes near a touching singular factor
        must still resolve the motion at its end: |h| rho < min(b, pi) as before the run
        (rho the spectral radius of the linearized equations of motion at the node), else
        IntegrationError -- an orbit of angular momentum 1e-12 passes its pericentre, 1e-25
        from the centre, between two RK4 nodes and comes out on the wrong side."""
        if self.resolve_bound is None:
            return
        bound, what = self.resolve_bound
        v1 = y1 if self.state == "qv" else self.system.velocity(q1, y1, t_next)
        rho = _radius_at(self.system, t_next, q1, v1)
        if rho is not None and abs(self.h) * rho >= bound:
            ctx = self.ctx
            raise IntegrationError(
                f"{self.method.name}: step {j} at t = {_t(t)} passes near a singularity of "
                f"the system ({self.touch.touching[0]} = 0) where the step no longer resolves "
                f"the motion: |h| rho = {ctx.to_str(abs(self.h) * rho, 5)} >= {what} at t = "
                f"{_t(t_next)} (rho = {ctx.to_str(rho, 5)}); take |h| < "
                f"{ctx.to_str(bound / rho, 5)}, or pass check_stability=False")

    def _check_quadrature_nodes(self, j, t, guards):
        """The singular factors at the points inside the step the method reported."""
        sing, signs = self.sing, self.signs
        i = sing.crossed(guards, signs)
        if i is not None:
            raise IntegrationError(
                f"{self.method.name}: step {j} at t = {_t(t)}: at quadrature node "
                f"{i // len(signs)} of the step, {sing.describe(i, guards[i])}")

    # ----- save: requested times between the nodes ------------------------------------------------

    def _save_requested(self, t_node, segment, inclusive):
        """Save the requested times before ``t_node`` (and at it if ``inclusive``) on the
        step's dense output."""
        times, h = self.times, self.h
        while self.ti < len(times) and (self._before(times[self.ti], t_node)
                                        or (inclusive and times[self.ti] == t_node)):
            s = times[self.ti]
            if s == segment.t:
                qq, yy = segment.q0, segment.y0
            elif s == t_node and inclusive:
                qq, yy = segment.q1, segment.y1
            else:
                qq, vv = segment.at((s - segment.t) / h)
                yy = self.data.y_of(s, qq, vv) if self.state != "y" else None
            self._save(s, qq, yy)
            self.ti += 1

    def _before(self, a, b):
        """a strictly before b in the direction of h."""
        return a < b if self.forward else a > b

    # ----- events: detection and location ---------------------------------------------------------

    def _events(self, t, q, t_next, q1, segment):
        """Record the sign changes of the events between t and t_next, in time order;
        (te, qe, ve, i) of the first terminal one, or None."""
        evs, ctx, h = self.plan.events, self.ctx, self.h
        if self.g_prev is None:
            self.g_prev = [_event_value(e, t, q, segment.velocity(0), ctx) for e in evs]
        g_next = [_event_value(e, t_next, q1, segment.velocity(1), ctx) for e in evs]
        hits = []
        for i, e in enumerate(evs):
            a, b = self.g_prev[i], g_next[i]
            if (a < 0 < b or a > 0 > b or (b == 0 and a != 0)) and \
                    (e.direction == 0 or (e.direction > 0) == (b > a)):
                hits.append((_locate(e, segment, h, a, b, ctx), i, 1 if b > a else -1))
        hits.sort(key=lambda x: x[0])
        stop_at = None
        for theta, i, direction in hits:
            te = t + theta * h
            qe, ve = segment.at(theta) if theta != 1 else (q1, segment.velocity(1))
            self.found.append(EventRecord(i, evs[i].name, te, qe, self.data.momentum(te, qe, ve),
                                          ve, direction))
            if evs[i].terminal:
                stop_at = (te, qe, ve, i)
                break
        self.g_prev = g_next
        return stop_at

    def _stop_at_event(self, stop_at, segment, r):
        """Save up to a terminal event and the event's point; why the run stopped."""
        te, qe, ve, i = stop_at
        self._save_requested(te, segment, inclusive=False)
        if self.saves_nodes:
            self._save(te, qe, self.data.y_of(te, qe, ve))
        if self.every_node:
            self.tail = (r.q, r.y)             # the dense output of the cut step needs its end
            if r.internal is not None:
                self.internal.append(r.internal)
            if self.keep_dense:
                self.dense.append(r.carry)
        return f"terminal event {i} ({self.plan.events[i].name}) at t = {_t(te)}"

    # ----- finish: the Solution -------------------------------------------------------------------

    def _finish(self, j_done, stopped):
        plan, stepper, data = self.plan, self.stepper, self.data
        stats = {"wall_time_s": time.perf_counter() - self.start, "steps": j_done}
        if hasattr(stepper, "stats"):             # a method's own counts (taylor's substeps)
            stats.update(stepper.stats())
        if self.stats.solves:
            stats["newton"] = self.stats.summary()
        solution = Solution._from_run(
            problem=self.problem, method=self.method, params=plan.params, h=self.h,
            steps_planned=plan.steps, steps=j_done, t=self.T, q=self.Q, y=self.Y,
            state=self.state, internal=self.internal if (self.every_node and self.internal) else None,
            dense=self.dense if self.keep_dense else None, dense_kind=data.dense, stats=stats,
            events=self.found, stopped=stopped,
            saveat=plan.saveat if self.saves_nodes else "times", tail=self.tail,
            prepare_args=plan.prepare_args,
            trial=(stepper.trial_basis.polynomials, stepper.trial_basis.powers)
            if data.dense == "trial" else None)
        solution.posed = plan.posed
        solution._event_functions = list(plan.events)    # what certify encloses events with
        return solution


class _Divergence:
    """The divergence guard of :func:`solve` (module doc)."""

    def __init__(self, problem, method, q0, y0, max_growth):
        ctx = problem.ctx
        self.ctx, self.method = ctx, method
        self.on = max_growth is not None
        if not self.on:
            return
        growth = (1 / ctx.eps if isinstance(max_growth, str) and max_growth == "1/eps"
                  else ctx.number(max_growth, "max_growth"))
        if not growth > 1:
            raise ValueError(f"max_growth must be a number > 1 (or None), got {max_growth!r}")
        values = list(q0) + (list(y0) if y0 is not None else [])
        self.scale = max([ctx.one] + [abs(x) for x in values])
        self.bound = growth * self.scale
        self.growth = growth

    def check(self, j, t, t_next, q, y):
        if not self.on:
            return
        ctx = self.ctx
        big = max(abs(x) for x in (list(q) + (list(y) if y is not None else [])))
        if big > self.bound:
            raise IntegrationError(
                f"{self.method.name}: step {j} at t = {_t(t)}: the run diverged -- a state "
                f"component reached {ctx.to_str(big, 5)} at t = {_t(t_next)}, beyond "
                f"max_growth = {ctx.to_str(self.growth, 5)} times the scale of the initial data "
                f"({ctx.to_str(self.scale, 5)}); the step h is too large for this method or "
                "the solution grows (pass max_growth=None to integrate a growing solution)")


def _check_storage(problem, plan, steps):
    """Refuse a run whose saved points cannot fit in the memory this machine has."""
    ctx = problem.ctx
    points = steps + 1 if plan is None else (
        steps // plan[1] + 2 if plan[0] == "every" else len(plan[1]) + 1)
    per_number = sys.getsizeof(ctx.one) + 8            # the object and its list slot
    numbers = points * (2 * max(problem.system.dof, 1) + 1)
    need = numbers * per_number
    have = _available_memory()
    if have is not None and need > have:
        raise StorageError(
            f"{points} saved points of {problem.name!r} need about {need / 2**30:.3g} GiB "
            f"({ctx.name} numbers of {per_number} bytes), more than the "
            f"{have / 2**30:.3g} GiB available: save fewer points (saveat=k saves every "
            "k-th node; saveat=[t, ...] given times) or take fewer steps")


def _available_memory():
    """Bytes of memory available to this process (MemAvailable on Linux, else the physical
    memory); None where it cannot be told."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import os
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _t(x):
    try:
        return f"{float(x):.10g}"
    except (TypeError, ValueError, OverflowError):
        return str(x)


def _cause(system, t, q, v):
    try:
        found = system.diagnose(t, q, v if v is not None else system.ctx.zeros(system.dof))
    except Exception:                          # the diagnosis must not hide the error
        return ""
    return f"; {found}" if found else ""


def _own(x):
    """A copy of a state for a user's callable: what it writes into the vector it is given
    stays in its copy, never in the run's saved states (the run's arrays are shared with
    them)."""
    return None if x is None else copy.copy(x)


def _event_value(e, t, q, v, ctx):
    value = returned(ctx, e(t, _own(q), _own(v)), f"event {e.name!r} at t = {_t(t)}")
    if value != value:                         # nan
        raise ValueError(f"event {e.name!r} returned nan at t = {_t(t)}")
    return value


def _locate(e, segment, h, a, b, ctx):
    """theta in [0, 1] of the sign change of e on the step's dense output, to context
    precision (the time t + theta h to about eps max(|t|, |h|))."""
    t = segment.t

    def phi(theta):
        q, v = segment.at(theta)
        return _event_value(e, t + theta * h, q, v, ctx)
    f0, f1 = phi(ctx.zero), phi(ctx.one)
    if (f0 > 0) == (f1 > 0) and f0 != 0 and f1 != 0:
        # the interpolant's ends differ from the node values by the interpolation error
        # and hold no sign change: the event is at the end nearer to zero
        return ctx.zero if abs(a) <= abs(b) else ctx.one
    tol = 4 * ctx.eps * max(ctx.one, abs(t) / abs(h))
    return locate_root(phi, ctx.zero, ctx.one, f0, f1, ctx, tol)
