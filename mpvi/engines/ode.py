"""The one RK4 step and the one GBS step of mpvi, and the Hamiltonian form (q, p)' of a
mechanical system (:func:`hamiltonian_field`) they run on.  First-order systems given by
the user are :class:`mpvi.FirstOrderSystem` (:mod:`mpvi.model.first_order`).

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

Both steps work on plain lists of context numbers (the generated field of
:func:`mpvi.engines.kernels.hamiltonian_field` returns lists; a user's right-hand side returning
a numpy array is wrapped): one implementation for every path.
"""
from __future__ import annotations

import numpy as np

from mpvi.engines.kernels import hamiltonian_field as generated_field


def rk4_step(f, t, y, h):
    """One classical RK4 step of y' = f(t, y) on lists."""
    half = h / 2
    k1 = f(t, y)
    k2 = f(t + half, [a + b * half for a, b in zip(y, k1)])
    k3 = f(t + half, [a + b * half for a, b in zip(y, k2)])
    k4 = f(t + h, [a + b * h for a, b in zip(y, k3)])
    h6 = h / 6
    return [a + (b1 + 2 * (b2 + b3) + b4) * h6 for a, b1, b2, b3, b4 in zip(y, k1, k2, k3, k4)]


def gbs_step(f, t, y, H, levels, ctx):
    """One Gragg-Bulirsch-Stoer step of size H, order 2 * levels (module doc), on lists."""
    f0 = f(t, y)
    table = []
    seq = [2 * (i + 1) for i in range(levels)]
    for i, n_i in enumerate(seq):
        h = H / n_i
        z_prev, z = y, [a + b * h for a, b in zip(y, f0)]
        two_h = 2 * h
        for m in range(1, n_i):
            z_prev, z = z, [a + b * two_h for a, b in zip(z_prev, f(t + m * h, z))]
        row = [z]
        for j in range(i):
            ratio = ctx.num(n_i * n_i) / (seq[i - j - 1] * seq[i - j - 1]) - 1
            row.append([a + (a - b) / ratio for a, b in zip(row[j], table[i - 1][j])])
        table.append(row)
    return table[-1][-1]


def field_with_factors(system):
    """f(t, y) -> ((q', p'), the singular factors of the system at (t, q) or None) on lists:
    the generated field of :func:`mpvi.engines.kernels.hamiltonian_field` with the factors it
    computes alongside (gmp context), else :func:`hamiltonian_field` and None (the caller
    evaluates the factors apart: :mod:`mpvi.model.singular`)."""
    if getattr(system.ctx, "kernels", False):
        g = generated_field(system, factors=True)
        if g is not None:
            return g
    f = hamiltonian_field(system)
    return lambda t, y: (f(t, y), None)


def hamiltonian_field(system):
    """f(t, y) = (q', p') of a mechanical system for y = (q, p) concatenated, on lists.
    In a context with ``kernels`` (the gmp context) the generated field of
    :func:`mpvi.engines.kernels.hamiltonian_field` (one generated function), otherwise the
    system's reference ``hamiltonian_rhs``."""
    n = system.dof
    if getattr(system.ctx, "kernels", False):
        g = generated_field(system)
        if g is not None:
            return g
    dtype = system.ctx.dtype

    def f(t, y):
        dq, dp = system.hamiltonian_rhs(np.array(y[:n], dtype=dtype), np.array(y[n:], dtype=dtype), t)
        return [*dq, *dp]
    return f
