"""The implicit midpoint rule on the first-order form of the equations of motion.

With the state y = (x, v) and y' = f(t, y) = (v, A(t, x, v)) (A the acceleration of the
system, mutze eq. 15; eqs. 81-82), one step of length h is (mutze eqs. 83, 85; Hairer,
Lubich & Wanner, *Geometric Numerical Integration*, I.1.3):

    Y = y + (h/2) f(t + h/2, Y),        y_new = y + h f(t + h/2, Y) = 2 Y - y.

Newton solves for the stage Y (2n unknowns) with the Jacobian I - (h/2) [[0, I], [A_x,
A_v]] (:meth:`mpvi.model.mechanics.LagrangianSystem.acceleration_derivatives`), started from
the explicit Euler half step.  Order 2, symmetric; not the variational midpoint rule
``midpoint`` (top2025 App. B) on (q, p), which differs from it when the mass matrix
depends on q.  Mutze's g-family with g = 1 is this method (the tests check it step for
step); it is written here independently, in stage form, to make that check meaningful.
"""
import numpy as np
import sympy as sp

from mpvi.methods.declarations import ButcherTableau
from mpvi.numbers.newton import check_options, solve_info
from mpvi.methods.base import Method, StepResult, register


def prepare(system, h, ctx, newton=None):
    """Prepare an implicit midpoint step on (x, v)' = (v, A) (mutze eqs. (83), (85)).

    ``newton``: options of :func:`mpvi.numbers.newton.solve` (the rule is A-stable)."""
    half = h / 2
    newton = check_options(newton, ctx)
    n = system.dof
    eye = ctx.eye(2 * n)
    half_eye = ctx.eye(n) * half

    def stepper(t, x, v, carry=None):
        tm = t + half
        y = np.concatenate([x, v])

        def fun(Y, jacobian):
            X, V = Y[:n], Y[n:]
            if not jacobian:
                return Y - y - np.concatenate([V, system.acceleration(tm, X, V)]) * half
            a, ax, av = system.acceleration_derivatives(tm, X, V)
            J = eye.copy()
            J[:n, n:] = J[:n, n:] - half_eye
            J[n:, :n] = J[n:, :n] - ax * half
            J[n:, n:] = J[n:, n:] - av * half
            return Y - y - np.concatenate([V, a]) * half, J
        start = y + np.concatenate([v, system.acceleration(t, x, v)]) * half
        Y, its, res = solve_info(fun, start, ctx, what="implicit midpoint stage",
                                 diagnose=lambda Y: system.diagnose(tm, Y[:n], Y[n:]), **newton)
        y1 = Y * 2 - y
        return StepResult(y1[:n], y1[n:], None, its, res)
    return stepper


def _declaration(params):
    """The one-stage Gauss tableau (a = 1/2, b = 1) on (x, v), for mpvi.analysis.modified."""
    return ButcherTableau(a=((sp.Rational(1, 2),),), b=(1,), form="qv")


implicit_midpoint = register(Method(
    name="implicit_midpoint", label="Implicit midpoint rule", state="qv", order=2,
    symplectic=False, implicit=True,
    reference="mutze eqs. (83), (85); the one-stage Gauss method on (x, v)' = (v, A)",
    prepare=prepare, doc=__doc__, declaration=_declaration))
