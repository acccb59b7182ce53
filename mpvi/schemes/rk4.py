"""Classical fourth-order Runge-Kutta on the first-order Hamiltonian system.

    y = (q, p),  y' = f(t, y) = (dH/dp, -dH/dq)   (for M q'' + K q = 0: (M^-1 p, -K q)),
    k1 = f(y), k2 = f(y + h/2 k1), k3 = f(y + h/2 k2), k4 = f(y + h k3),
    y_j+1 = y_j + h/6 (k1 + 2 k2 + 2 k3 + k4)

(axioms2024 Sec. 6 and top2025 Secs. 3-4, "RK4").  Explicit, order 4, not symplectic.
The system provides ``hamiltonian_rhs(q, p, t) -> (q', p')`` (t matters only for forces);
the step itself is :func:`mpvi.ode.rk4_step`.
"""
import numpy as np

from .. import kernels
from ..ode import hamiltonian_field, rk4_step
from .base import Method, StepResult, check_step, register


def prepare(system, h, ctx, check_stability=True):
    """``check_stability`` is accepted for a uniform interface; there is no bound to check."""
    h = check_step(h, ctx)
    g = kernels.hamiltonian_field(system) if ctx.kernels else None
    if g is not None:                 # the generated field, on lists (mpvi.kernels)
        n = system.dof

        def stepper(t, q, p, carry=None):
            ctx.activate()
            y = kernels.rk4_step(g, t, [*q, *p], h)
            return StepResult(np.array(y[:n], dtype=object), np.array(y[n:], dtype=object))
        return stepper
    f, n = hamiltonian_field(system)

    def stepper(t, q, p, carry=None):
        y = rk4_step(f, t, np.concatenate([q, p]), h)
        return StepResult(y[:n], y[n:])
    return stepper


rk4 = register(Method(
    name="rk4", label="RK4", state="qp", order=4, symplectic=False, implicit=False,
    reference="axioms2024 Sec. 6; top2025 Secs. 3-4 (classical RK4)", prepare=prepare, doc=__doc__))
