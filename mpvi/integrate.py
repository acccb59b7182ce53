"""The driver: ``integrate(system, method, q0, p0, h, n, ctx, t0=...) -> Trajectory``."""
from __future__ import annotations

import inspect
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from .context import SingularMatrixError
from .newton import NewtonError, summarize
from .schemes import get_scheme
from .schemes.base import check_step


class IntegrationError(ArithmeticError):
    """A step failed (singular mass matrix, non-finite state); the message names the
    method, the step index j (of the step j -> j+1) and its time t_j."""


@dataclass
class Trajectory:
    """Nodes t_j = t_0 + j h, j = 0..n, with q[j] and the method's second state
    variable (p or v: ``state``), arrays of shape (n+1, dof).  ``p`` and ``v`` are both
    available: the one the method does not carry is computed through the system's
    Legendre map when first asked for.  ``internal[j]`` is the internal data of the step
    j -> j+1 (Simpson's midpoint, Lobatto's internal points, Newmark's acceleration), of
    the method's own shape, or None."""

    scheme: str
    ctx: object
    h: object
    t: np.ndarray
    q: np.ndarray
    state: str
    y: np.ndarray
    system: object = None
    internal: np.ndarray | None = None
    stats: dict = field(default_factory=dict)

    @property
    def steps(self):
        return len(self.t) - 1

    def _converted(self, kind):
        cache = self.__dict__.setdefault("_legendre", {})
        if kind not in cache:
            S = self.system
            f = S.velocity if kind == "v" else S.momentum
            cache[kind] = np.array([f(q, y, t) for q, y, t in zip(self.q, self.y, self.t)],
                                   dtype=self.ctx.dtype).reshape(self.y.shape)
        return cache[kind]

    @property
    def p(self):
        return self.y if self.state == "qp" else self._converted("p")

    @property
    def v(self):
        return self.y if self.state == "qv" else self._converted("v")


class Progress:
    """Prints ``label: k/n`` about every ``every`` seconds to ``stream`` (stderr)."""

    def __init__(self, label, total, stream=None, every=5.0):
        self.label, self.total, self.every = label, total, every
        self.stream = stream if stream is not None else sys.stderr
        self._last = time.monotonic()

    def __call__(self, k):
        now = time.monotonic()
        if now - self._last >= self.every:
            self._last = now
            print(f"  {self.label}: step {k}/{self.total} ({100 * k // self.total}%)",
                  file=self.stream, flush=True)


def _check_options(method, options):
    accepted = set(inspect.signature(method.prepare).parameters) - {"system", "h", "ctx"}
    unknown = set(options) - accepted
    if unknown:
        raise ValueError(f"method {method.name!r} takes no option(s) {sorted(unknown)}; "
                         f"it takes: {', '.join(sorted(accepted)) or 'none'}")
    method.parameters(**{k: v for k, v in options.items() if k in method.params})


def initial_state(system, method, q0, p0, v0, t0, ctx):
    """(q0, y0) in the method's state kind, validated (dimension, finiteness, mass matrix)."""
    q = system.check_vector(q0, "initial position q0")
    if (p0 is None) == (v0 is None):
        raise ValueError("give exactly one of the initial momentum p0 and velocity v0")
    given, kind = (p0, "p") if p0 is not None else (v0, "v")
    y = system.check_vector(given, f"initial {'momentum p0' if kind == 'p' else 'velocity v0'}")
    system.check_state(t0, q)
    want = "p" if method.state == "qp" else "v"
    if kind != want:
        y = system.momentum(q, y, t0) if want == "p" else system.velocity(q, y, t0)
    return q, y


def integrate(system, scheme, q0, p0, h, n, ctx, progress=None, *, t0=None, v0=None,
              **options):
    """Apply ``scheme`` (a name of the registry or a :class:`Method`) ``n`` times with
    step ``h`` from (q0, p0) -- or (q0, v0): pass ``p0=None, v0=...`` -- at time ``t0``
    (default 0).

    ``options`` are the method's parameters (e.g. ``points=4`` for ``lobatto``, ``beta``
    and ``gamma`` for ``newmark_family``) and ``newton={...}`` (max_iter, rtol, scale),
    ``check_stability=False`` (Simpson beyond eq. 40).  Implicit methods record Newton
    statistics in ``stats["newton"]`` (solves, mean/max iterations, max final residual).
    A failing step raises :class:`mpvi.newton.NewtonError` or :class:`IntegrationError`
    naming the step index j and time t_j.  ``progress`` is called with the step index now
    and then (see :class:`Progress`).
    """
    method = get_scheme(scheme)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"the number of steps must be a positive integer, got {n!r}")
    h = check_step(h, ctx)
    t0 = ctx.zero if t0 is None else ctx.num(t0)
    if not ctx.isfinite(t0):
        raise ValueError(f"the initial time t0 must be finite, got {t0}")
    _check_options(method, options)
    start = time.perf_counter()
    q, y = initial_state(system, method, q0, p0, v0, t0, ctx)
    stepper = method.prepare(system, h, ctx, **options)
    dof = q.shape[0]
    Q = np.empty((n + 1, dof), dtype=ctx.dtype)
    Y = np.empty((n + 1, dof), dtype=ctx.dtype)
    Q[0], Y[0] = q, y
    internal, iterations, residuals = [], [], []
    carry = None
    for j in range(n):
        t = t0 + j * h
        try:
            r = stepper(t, q, y, carry)
        except NewtonError as e:
            raise e.at(j, t) from None
        except SingularMatrixError as e:
            raise IntegrationError(f"{method.name}: step {j} at t = {float(t):.10g}: {e}") from None
        q, y, carry = r.q, r.y, r.carry
        if not (ctx.all_finite(q) and ctx.all_finite(y)):
            raise IntegrationError(f"{method.name}: step {j} at t = {float(t):.10g} produced "
                                   f"a non-finite state (h = {float(h):.10g} too large?)")
        Q[j + 1], Y[j + 1] = q, y
        if r.internal is not None:
            internal.append(r.internal)
        if r.iterations is not None:
            iterations.append(r.iterations)
            residuals.append(r.residual)
        if progress is not None and j % 256 == 0:
            progress(j)
    times = np.array([t0 + j * h for j in range(n + 1)], dtype=ctx.dtype)
    stats = {"wall_time_s": time.perf_counter() - start, "steps": n}
    if iterations:
        stats["newton"] = summarize(iterations, residuals)
    inner = None
    if internal:
        inner = np.empty((n,) + np.shape(internal[0]), dtype=ctx.dtype)
        for j, x in enumerate(internal):
            inner[j] = x
    return Trajectory(scheme=method.name, ctx=ctx, h=h, t=times, q=Q, state=method.state, y=Y,
                      system=system, internal=inner, stats=stats)

