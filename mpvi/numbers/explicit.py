"""The one RK4 step and the one GBS step of mpvi on lists, written once.

:func:`rk4_core` and :func:`gbs_core` are the steps of :func:`mpvi.engines.ode.rk4_step`
and :func:`mpvi.engines.ode.gbs_step` (which give them their storage and wrap the field)
in every context, and the C of the compiled explicit module (:mod:`mpvi.compiled.croutine`
translates them, operation by operation, into MPFR: the same bits).  Both are in the
translator's subset: the field is ``f(t, y, out)``, which writes f(t, y) into ``out`` and
returns whether it could (the compiled field returns false where Python takes another
path; the Python field always writes or raises), and all storage is passed in.

RK4 is the classical Runge-Kutta method of order 4; GBS the Gragg-Bulirsch-Stoer
extrapolation (Hairer, Norsett & Wanner, *Solving ODEs I*, Sec. II.9): the explicit midpoint
rule with n_i = 2, 4, ..., 2 levels substeps, extrapolated in h^2 by the Aitken-Neville
tableau T_{i,j+1} = T_{i,j} + (T_{i,j} - T_{i-1,j}) / ((n_i / n_{i-j})^2 - 1).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from mpvi.ground.types import Real


def rk4_core(ny: int, f: Callable[[Real, list[Real], list[Real]], bool], t: Real,
             y: list[Real], h: Real, k1: list[Real], k2: list[Real], k3: list[Real],
             k4: list[Real], z: list[Real], out: list[Real]) -> bool:
    """One classical RK4 step of y' = f(t, y) (``ny`` numbers) into ``out``; k1..k4 and z
    are storage.  False where the field could not be evaluated (``f`` returned false)."""
    half = h / 2
    if not f(t, y, k1):
        return False
    for i in range(ny):
        z[i] = y[i] + k1[i] * half
    if not f(t + half, z, k2):
        return False
    for i in range(ny):
        z[i] = y[i] + k2[i] * half
    if not f(t + half, z, k3):
        return False
    for i in range(ny):
        z[i] = y[i] + k3[i] * h
    if not f(t + h, z, k4):
        return False
    h6 = h / 6
    for i in range(ny):
        out[i] = y[i] + (k1[i] + 2 * (k2[i] + k3[i]) + k4[i]) * h6
    return True


def gbs_core(ny: int, f: Callable[[Real, list[Real], list[Real]], bool], t: Real,
             y: list[Real], big_h: Real, levels: int, one: Real, f0: list[Real],
             za: list[Real], zb: list[Real], zc: list[Real], fz: list[Real],
             prev: list[list[Real]], cur: list[list[Real]], out: list[Real]) -> bool:
    """One Gragg-Bulirsch-Stoer step of size ``big_h``, order 2 ``levels``, into ``out``
    (``one``: the context's 1, which makes n_i^2 a number exactly); f0, za, zb, zc, fz
    (``ny`` numbers) and the two tableau rows prev, cur (``levels`` x ``ny``) are
    storage.  False where the field could not be evaluated."""
    if not f(t, y, f0):
        return False
    for i in range(levels):
        ni = 2 * (i + 1)
        h = big_h / ni
        for q in range(ny):
            za[q] = y[q]                            # z_prev = y
            zb[q] = y[q] + f0[q] * h                # z = y + h f0
        two_h = 2 * h
        for m in range(1, ni):
            if not f(t + m * h, zb, fz):
                return False
            for q in range(ny):
                zc[q] = za[q] + fz[q] * two_h       # z_prev + 2h f(t + m h, z)
            za, zb = zb, za                         # z_prev, z = z, the new z
            zb, zc = zc, zb
        row = cur[0]
        for q in range(ny):
            row[q] = zb[q]
        for j in range(i):
            d = 2 * (i - j)                         # n_{i-j-1}
            ratio = one * (ni * ni) / (d * d) - 1
            rj = cur[j]
            pj = prev[j]
            rn = cur[j + 1]
            for q in range(ny):
                rn[q] = rj[q] + (rj[q] - pj[q]) / ratio
        prev, cur = cur, prev
    last = prev[levels - 1]
    for q in range(ny):
        out[q] = last[q]
    return True
