"""Scheme metadata, the registry, and the step-function protocol.

A scheme is a pure one-step map.  ``scheme.step(system, state, h, ctx)`` returns
``(new_state, info)``.  Because everything that depends only on (system, h) -- a matrix
factorization for the linear schemes -- must not be redone at every step,
``scheme.prepare(system, h, ctx)`` returns the same map as a callable
``stepper(q, p, t) -> (q_new, p_new, stage)`` with that work hoisted out; the driver uses it
(t, the time of (q, p), matters only for time-dependent forces).
``stage`` is the internal state the scheme keeps (Simpson's midpoint q_{j+1/2}) or None.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import numpy as np


class StabilityError(ValueError):
    """The step size violates a scheme's stability bound."""


class State(NamedTuple):
    q: np.ndarray
    p: np.ndarray


@dataclass(frozen=True)
class Scheme:
    name: str
    label: str
    order: int
    symplectic: bool
    implicit: bool
    reference: str
    prepare: Callable = field(repr=False)
    stage_name: str | None = None
    doc: str = field(default="", repr=False)

    def step(self, system, state, h, ctx, t=None, **options):
        """One step from ``state`` (a :class:`State` or a (q, p) pair) at time ``t``."""
        q, p = state
        q1, p1, stage = self.prepare(system, h, ctx, **options)(ctx.asarray(q), ctx.asarray(p), t)
        info = {} if stage is None else {self.stage_name: stage}
        return State(q1, p1), info


SCHEMES: dict[str, Scheme] = {}


def register(scheme: Scheme) -> Scheme:
    if scheme.name in SCHEMES:
        raise ValueError(f"scheme {scheme.name!r} registered twice")
    SCHEMES[scheme.name] = scheme
    return scheme


def get_scheme(name) -> Scheme:
    if isinstance(name, Scheme):
        return name
    try:
        return SCHEMES[name]
    except KeyError:
        raise ValueError(f"unknown scheme {name!r}; known schemes: {', '.join(sorted(SCHEMES))}") from None


def check_step(h, ctx):
    """Validate a step size; returns it as a context number."""
    h = ctx.num(h)
    if not h > 0:
        raise ValueError(f"the step size h must be positive, got {ctx.to_str(h, 10)}")
    return h


def require_linear(system, scheme_name):
    if not getattr(system, "is_linear", False):
        raise TypeError(f"scheme {scheme_name!r} is the linear (constant M, K) form; "
                        f"{getattr(system, 'name', system)!r} is not a LinearSystem")


def pq_block_stepper(phi, n):
    """Stepper for a linear one-step map (p', q') = phi (p, q), phi a 2n x 2n array."""
    pp, pq, qp, qq = phi[:n, :n], phi[:n, n:], phi[n:, :n], phi[n:, n:]

    def stepper(q, p, t=None):
        return qp @ p + qq @ q, pp @ p + pq @ q, None
    stepper.phi = phi
    return stepper


def prop1_matrices(X, Y, ctx):
    """A, B of axioms2024 eq. (34): A = [[I, -X], [I, Y]], B = [[-I, -X], [I, -Y]]
    acting on eta = (p, q)."""
    eye = ctx.eye(X.shape[0])
    A = np.block([[eye, -X], [eye, Y]])
    B = np.block([[-eye, -X], [eye, -Y]])
    return A, B
