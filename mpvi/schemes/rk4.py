"""Classical fourth-order Runge-Kutta on the first-order Hamiltonian system.

    y = (q, p),  y' = f(y) = (dH/dp, -dH/dq)   (for M q'' + K q = 0: (M^-1 p, -K q)),
    k1 = f(y), k2 = f(y + h/2 k1), k3 = f(y + h/2 k2), k4 = f(y + h k3),
    y_j+1 = y_j + h/6 (k1 + 2 k2 + 2 k3 + k4)

(axioms2024 Sec. 6, "RK4", after its ref. [3]).  Explicit, order 4, not symplectic.
The system provides ``hamiltonian_rhs(q, p) -> (q', p')``.
"""
from .base import Scheme, check_step, register


def prepare(system, h, ctx, check_stability=True):
    """``check_stability`` is accepted for a uniform interface; there is no bound to check."""
    h = check_step(h, ctx)
    f = system.hamiltonian_rhs
    half = h / 2
    sixth = h / 6

    def stepper(q, p):
        a1, b1 = f(q, p)
        a2, b2 = f(q + half * a1, p + half * b1)
        a3, b3 = f(q + half * a2, p + half * b2)
        a4, b4 = f(q + h * a3, p + h * b3)
        return (q + sixth * (a1 + 2 * (a2 + a3) + a4),
                p + sixth * (b1 + 2 * (b2 + b3) + b4), None)
    return stepper


rk4 = register(Scheme(
    name="rk4", label="RK4", order=4, symplectic=False, implicit=False,
    reference="axioms2024 Sec. 6 (classical RK4)", prepare=prepare, doc=__doc__))
