"""The driver: ``integrate(system, scheme, q0, p0, h, n, ctx) -> Trajectory``."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np

from .newton import NewtonError
from .schemes import get_scheme
from .schemes.base import check_step


@dataclass
class Trajectory:
    """Nodes t_j = j h, j = 0..n, with q[j], p[j] (arrays of shape (n+1, dof)) and, for
    schemes with an internal stage, ``stage[j]`` on [t_j, t_j+1] (shape (n, dof))."""

    scheme: str
    ctx: object
    h: object
    t: np.ndarray
    q: np.ndarray
    p: np.ndarray
    stage: np.ndarray | None = None
    stats: dict = field(default_factory=dict)

    @property
    def steps(self):
        return len(self.t) - 1


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


def integrate(system, scheme, q0, p0, h, n, ctx, progress=None, **options):
    """Apply ``scheme`` ``n`` times with step ``h`` from (q0, p0).

    Implicit nonlinear schemes record Newton statistics in ``stats["newton"]``
    (solves, mean/max iterations, max final residual); a step whose Newton iteration
    fails raises :class:`mpvi.newton.NewtonError` naming the step index j and time t_j.
    ``options`` go to the scheme's ``prepare`` (e.g. ``check_stability=False`` for
    Simpson).  ``progress`` is called with the step index now and then (see
    :class:`Progress`).
    """
    scheme = get_scheme(scheme)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"the number of steps must be a positive integer, got {n!r}")
    h = check_step(h, ctx)
    t0 = time.perf_counter()
    stepper = scheme.prepare(system, h, ctx, **options)
    q = ctx.asarray(q0)
    p = ctx.asarray(p0)
    dof = q.shape[0]
    Q = np.empty((n + 1, dof), dtype=ctx.dtype)
    P = np.empty((n + 1, dof), dtype=ctx.dtype)
    Q[0], P[0] = q, p
    S = None
    for j in range(n):
        t = j * h
        try:
            q, p, stage = stepper(q, p, t)
        except NewtonError as e:
            raise e.at(j, t) from None
        Q[j + 1], P[j + 1] = q, p
        if stage is not None:
            if S is None:
                S = np.empty((n, dof), dtype=ctx.dtype)
            S[j] = stage
        if progress is not None and j % 256 == 0:
            progress(j)
    t = np.array([j * h for j in range(n + 1)], dtype=ctx.dtype)
    stats = {"wall_time_s": time.perf_counter() - t0, "steps": n}
    newton = getattr(stepper, "newton_stats", None)
    if newton is not None:
        stats["newton"] = newton.summary()
    return Trajectory(scheme=scheme.name, ctx=ctx, h=h, t=t, q=Q, p=P, stage=S, stats=stats)
