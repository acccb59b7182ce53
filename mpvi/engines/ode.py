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
a numpy array is wrapped): one implementation for every path, written once in
:mod:`mpvi.numbers.explicit` (the compiled explicit module runs its C translation).
"""
from __future__ import annotations

import numpy as np

from mpvi.engines.kernels import hamiltonian_field as generated_field
from mpvi.numbers.explicit import gbs_core, rk4_core


def _writing(f):
    """The field ``f(t, y) -> list`` as the ``f(t, y, out)`` of :mod:`mpvi.numbers.explicit`."""
    def write(t, y, out):
        out[:] = f(t, y)
        return True
    return write


def rk4_step(f, t, y, h):
    """One classical RK4 step of y' = f(t, y) on lists (:func:`mpvi.numbers.explicit.rk4_core`)."""
    ny = len(y)
    k1, k2, k3, k4, z, out = ([None] * ny for _ in range(6))
    rk4_core(ny, _writing(f), t, list(y), h, k1, k2, k3, k4, z, out)
    return out


def gbs_step(f, t, y, H, levels, ctx):
    """One Gragg-Bulirsch-Stoer step of size H, order 2 * levels (module doc), on lists
    (:func:`mpvi.numbers.explicit.gbs_core`)."""
    ny = len(y)
    f0, za, zb, zc, fz, out = ([None] * ny for _ in range(6))
    prev = [[None] * ny for _ in range(levels)]
    cur = [[None] * ny for _ in range(levels)]
    gbs_core(ny, _writing(f), t, list(y), H, levels, ctx.num(1), f0, za, zb, zc, fz, prev, cur,
             out)
    return out


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
