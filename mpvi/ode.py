"""First-order systems y' = f(t, y): classical RK4 and a high-order extrapolation reference.

``FirstOrderSystem`` wraps a right-hand side (the reduced Lagrange top of top2025 eqs.
(18aq), or the Hamiltonian form (q, p)' of a mechanical system via :func:`hamiltonian_ode`).

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
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np


@dataclass
class FirstOrderSystem:
    """y' = rhs(t, y), y of length ``dim``; ``labels`` name the components."""

    name: str
    rhs: object
    dim: int
    ctx: object
    labels: tuple = ()


@dataclass
class OdeTrajectory:
    method: str
    ctx: object
    h: object
    t: np.ndarray
    y: np.ndarray
    stats: dict = field(default_factory=dict)


def rk4_step(f, t, y, h):
    """One classical RK4 step of y' = f(t, y)."""
    half = h / 2
    k1 = f(t, y)
    k2 = f(t + half, y + k1 * half)
    k3 = f(t + half, y + k2 * half)
    k4 = f(t + h, y + k3 * h)
    return y + (k1 + 2 * (k2 + k3) + k4) * (h / 6)


def gbs_step(f, t, y, H, levels, ctx):
    """One Gragg-Bulirsch-Stoer step of size H, order 2 * levels (module doc)."""
    f0 = f(t, y)
    table = []
    seq = [2 * (i + 1) for i in range(levels)]
    for i, n_i in enumerate(seq):
        h = H / n_i
        z_prev, z = y, y + f0 * h
        two_h = 2 * h
        for m in range(1, n_i):
            z_prev, z = z, z_prev + f(t + m * h, z) * two_h
        row = [z]
        for j in range(i):
            ratio = ctx.num(n_i * n_i) / (seq[i - j - 1] * seq[i - j - 1]) - 1
            row.append(row[j] + (row[j] - table[i - 1][j]) / ratio)
        table.append(row)
    return table[-1][-1]


METHODS = ("rk4", "gbs")


def integrate_ode(system, method, y0, h, n, ctx, levels=16, progress=None, t0=None):
    """``n`` steps of ``method`` ('rk4' or 'gbs') with step ``h`` from y(t0) = y0."""
    if method not in METHODS:
        raise ValueError(f"unknown ODE method {method!r}; choose one of {', '.join(METHODS)}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"the number of steps must be a positive integer, got {n!r}")
    h = ctx.num(h)
    if not h > 0:
        raise ValueError("the step size h must be positive")
    t0 = ctx.zero if t0 is None else ctx.num(t0)
    f = system.rhs
    y = ctx.asarray(y0)
    if y.shape != (system.dim,):
        raise ValueError(f"{system.name}: initial state has shape {y.shape}, expected ({system.dim},)")
    Y = np.empty((n + 1, system.dim), dtype=ctx.dtype)
    Y[0] = y
    start = time.perf_counter()
    for j in range(n):
        t = t0 + j * h
        y = rk4_step(f, t, y, h) if method == "rk4" else gbs_step(f, t, y, h, levels, ctx)
        Y[j + 1] = y
        if progress is not None and j % 256 == 0:
            progress(j)
    times = np.array([t0 + j * h for j in range(n + 1)], dtype=ctx.dtype)
    stats = {"wall_time_s": time.perf_counter() - start, "steps": n}
    if method == "gbs":
        stats["levels"] = levels
    return OdeTrajectory(method=method, ctx=ctx, h=h, t=times, y=Y, stats=stats)


def hamiltonian_field(system):
    """f(t, y) = (q', p') of a mechanical system for y = (q, p) concatenated, and dof.
    In a context with ``kernels`` (the gmp context) the field of
    :func:`mpvi.kernels.hamiltonian_field` (lists, one generated function) is used."""
    n = system.dof
    if getattr(getattr(system, "ctx", None), "kernels", False):
        from .kernels import hamiltonian_field as generated
        g = generated(system)
        if g is not None:
            return (lambda t, y: np.array(g(t, list(y)), dtype=object)), n

    def f(t, y):
        dq, dp = system.hamiltonian_rhs(y[:n], y[n:], t)
        return np.concatenate([dq, dp])
    return f, n


def hamiltonian_ode(system):
    """The first-order form y = (q, p), y' = (q', p') of a mechanical system."""
    rhs, n = hamiltonian_field(system)
    names = getattr(system, "coord_names", [f"q{i}" for i in range(n)])
    return FirstOrderSystem(name=f"{getattr(system, 'name', 'system')} (Hamiltonian form)",
                            rhs=rhs, dim=2 * n, ctx=system.ctx,
                            labels=tuple(names) + tuple(f"p_{c}" for c in names))
