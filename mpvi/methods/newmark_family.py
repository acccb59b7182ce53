"""Newmark's family with parameters beta and gamma, for any system (nonlinear, forced,
time-dependent), carrying (q, v) (Newmark 1959; Kane, Marsden, Ortiz & West 2000).

    q_{j+1} = q_j + h v_j + h^2 ((1/2 - beta) a_j + beta a_{j+1}),
    v_{j+1} = v_j + h ((1 - gamma) a_j + gamma a_{j+1}),
    R(t_{j+1}, q_{j+1}, v_{j+1}, a_{j+1}) = 0,

R the residual of the equations of motion L_vv a + L_vq v + L_vt - L_q - F
(:meth:`mpvi.model.mechanics.LagrangianSystem.residual_derivatives`), solved for a_{j+1} by
Newton with the exact Jacobian  beta h^2 dR/dq + gamma h dR/dv + dR/da.  The first a_0 is
the system's acceleration at (t_0, q_0, v_0); later steps carry a_j from the previous
step (the internal data of a step is a_{j+1}).

Order 2 for gamma = 1/2, else 1.  For gamma = 1/2 the scheme is variational; it preserves
the canonical symplectic form for beta = 0 (Stormer-Verlet); for other beta (e.g. the
average-acceleration beta = 1/4, the trapezoidal rule) only a non-canonical one (Kane et
al. 2000) -- ``symplectic`` reports canonical symplecticity.  On a linear system with
beta = 1/4, gamma = 1/2 it gives axioms2024's Newmark scheme (``newmark``, eqs. 10-12).
"""
from fractions import Fraction

import numpy as np
import sympy as sp

from mpvi.numbers.context import PrecisionError
from mpvi.methods.declarations import NewmarkScheme
from mpvi.numbers.newton import check_options, solve_info
from mpvi.methods.base import Method, StepResult, register


def _exact(x, name):
    if isinstance(x, (float, np.floating, bool)):
        raise PrecisionError(f"Newmark's {name} = {x!r} is a float, refused as everywhere in "
                             f"mpvi (it is not the number it prints); give it exactly, e.g. "
                             f"{name}='1/4' or Fraction(1, 4)")
    try:
        return Fraction(str(x)) if not isinstance(x, Fraction) else x
    except ValueError:
        raise ValueError(f"Newmark's {name} must be an exact number (int, string, Fraction), "
                         f"got {x!r}") from None


def prepare(system, h, ctx, beta=Fraction(1, 4), gamma=Fraction(1, 2), newton=None):
    """Prepare a step of Newmark's (beta, gamma) family (Newmark 1959; axioms2024 eqs. (10)-(12) at 1/4, 1/2).

    ``beta``, ``gamma``: exact numbers (strings or Fractions); ``newton``: options for
    :func:`mpvi.numbers.newton.solve`."""
    newton = check_options(newton, ctx)
    b, g = ctx.num(_exact(beta, "beta")), ctx.num(_exact(gamma, "gamma"))
    bh2, gh = b * h * h, g * h
    half = ctx.one / 2

    def stepper(t, q, v, carry=None):
        a0 = system.acceleration(t, q, v) if carry is None else carry
        q_pred = q + v * h + a0 * ((half - b) * h * h)
        v_pred = v + a0 * ((1 - g) * h)
        t1 = t + h

        def fun(a1, jacobian):
            R, Rq, Rv, Ra = system.residual_derivatives(t1, q_pred + a1 * bh2, v_pred + a1 * gh, a1)
            return (R, Rq * bh2 + Rv * gh + Ra) if jacobian else R
        a1, iterations, residual = solve_info(
            fun, a0, ctx, what="newmark_family", **newton,
            diagnose=lambda a1: system.diagnose(t1, q_pred + a1 * bh2, v_pred + a1 * gh))
        return StepResult(q_pred + a1 * bh2, v_pred + a1 * gh, a1, iterations, residual, a1)
    return stepper


def _params(p):
    return _exact(p["beta"], "beta"), _exact(p["gamma"], "gamma")


def _stability_bound(p):
    """omega h < 1/sqrt(gamma/2 - beta) on the undamped oscillator for gamma >= 1/2 and
    beta < gamma/2 (2 for Stormer-Verlet); unconditional (None) for beta >= gamma/2."""
    beta, gamma = _params(p)
    if gamma < Fraction(1, 2) or 2 * beta >= gamma:
        return None
    return 1 / sp.sqrt(sp.Rational(gamma) / 2 - sp.Rational(beta))


def _declaration(params):
    """The family on (q, v), for mpvi.analysis.modified."""
    beta, gamma = _params(params)
    return NewmarkScheme(sp.Rational(beta), sp.Rational(gamma))


newmark_family = register(Method(
    name="newmark_family", label="Newmark (beta, gamma)", state="qv",
    params={"beta": Fraction(1, 4), "gamma": Fraction(1, 2)},
    order=lambda p: 2 if _params(p)[1] == Fraction(1, 2) else 1,
    symplectic=lambda p: _params(p) == (0, Fraction(1, 2)), implicit=True,
    reference="Newmark 1959; Kane, Marsden, Ortiz & West 2000 (axioms2024 eqs. 10-12 for "
              "beta = 1/4, gamma = 1/2 on linear systems)",
    prepare=prepare, internal="acceleration", doc=__doc__, stability_bound=_stability_bound,
    declaration=_declaration))
