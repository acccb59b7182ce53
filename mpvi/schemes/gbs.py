"""Gragg-Bulirsch-Stoer extrapolation as a reference scheme (order 2 * levels, default 32;
see :mod:`mpvi.ode` for the levels and steps a 1e-55 reference needs).

One step of size h is the extrapolated explicit midpoint rule of :func:`mpvi.ode.gbs_step`
on y = (q, p).  Not symplectic; used where no exact solution exists (the double
pendulum of top2025 Sec. 3, the reduced top), with levels and h such that its error is
below 1e-50 (checked by halving h in the tests and in the reproductions).
"""
import numpy as np

from .. import kernels
from ..ode import gbs_step, hamiltonian_field
from .base import Method, StepResult, check_step, register


def prepare(system, h, ctx, check_stability=True, levels=16):
    h = check_step(h, ctx)
    if not isinstance(levels, int) or levels < 1:
        raise ValueError(f"levels must be a positive integer, got {levels!r}")
    g = kernels.hamiltonian_field(system) if ctx.kernels else None
    if g is not None:                 # the generated field, on lists (mpvi.kernels)
        n = system.dof

        def stepper(t, q, p, carry=None):
            ctx.activate()
            y = kernels.gbs_step(g, t, [*q, *p], h, levels, ctx)
            return StepResult(np.array(y[:n], dtype=object), np.array(y[n:], dtype=object))
        return stepper
    f, n = hamiltonian_field(system)

    def stepper(t, q, p, carry=None):
        y = gbs_step(f, t, np.concatenate([q, p]), h, levels, ctx)
        return StepResult(y[:n], y[n:])
    return stepper


gbs = register(Method(
    name="gbs", label="GBS reference", state="qp", order=lambda p: 2 * p["levels"],
    symplectic=False, implicit=False, params={"levels": 16},
    reference="Hairer-Norsett-Wanner, Solving ODEs I, Sec. II.9 (reference solutions)",
    prepare=prepare, doc=__doc__))
