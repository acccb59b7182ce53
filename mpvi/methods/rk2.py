"""Explicit second-order Runge-Kutta methods on (x, v)' = (v, A(t, x, v)) (mutze eqs.
81-82, Sec. 7 "the Runge Kutta method of second order").

``variant="midpoint"`` (default; the explicit midpoint rule, Hairer, Norsett & Wanner
II.1 (1.7)):  y_new = y + h f(t + h/2, y + (h/2) f(t, y));
``variant="heun"`` (Heun's method, the trapezoidal predictor-corrector):
y_new = y + (h/2) (f(t, y) + f(t + h, y + h f(t, y))).

The paper does not say which second-order Runge-Kutta method it used; both are here and
the mutze reproductions report both (reproductions/ERRATA.md).
"""

import numpy as np
import sympy as sp

from mpvi.methods.declarations import ButcherTableau
from mpvi.methods.base import Method, StepResult, register

VARIANTS = ("midpoint", "heun")


def prepare(system, h, ctx, variant="midpoint"):
    """Prepare an explicit second-order Runge-Kutta step (mutze Sec. 7, eqs. (81)-(82)).

    No a-priori stability bound."""
    if variant not in VARIANTS:
        raise ValueError(f"rk2: unknown variant {variant!r}; use one of {', '.join(VARIANTS)}")
    half = h / 2
    if system.first_order:
        return _first_order(system, h, ctx, variant)

    def f(t, x, v):
        return v, system.acceleration(t, x, v)

    def stepper(t, x, v, carry=None):
        dx, dv = f(t, x, v)
        if variant == "midpoint":
            mx, mv = f(t + half, x + dx * half, v + dv * half)
            return StepResult(x + mx * h, v + mv * h)
        ex, ev = f(t + h, x + dx * h, v + dv * h)
        return StepResult(x + (dx + ex) * half, v + (dv + ev) * half)
    return stepper


def _first_order(system, h, ctx, variant):
    """The same two variants on y' = f(t, y) of a first-order system."""
    f, half, dtype = system.field(), h / 2, ctx.dtype

    def stepper(t, y, _=None, carry=None):
        y = list(y)
        k1 = f(t, y)
        if variant == "midpoint":
            k2 = f(t + half, [a + b * half for a, b in zip(y, k1)])
            return StepResult(np.array([a + b * h for a, b in zip(y, k2)], dtype=dtype), None)
        k2 = f(t + h, [a + b * h for a, b in zip(y, k1)])
        return StepResult(np.array([a + (b + c) * half for a, b, c in zip(y, k1, k2)],
                                   dtype=dtype), None)
    return stepper


def _declaration(params):
    """The tableau of the variant on (x, v), for mpvi.analysis.modified."""
    half = sp.Rational(1, 2)
    if params["variant"] == "heun":
        return ButcherTableau(a=((0, 0), (1, 0)), b=(half, half), form="qv")
    return ButcherTableau(a=((0, 0), (half, 0)), b=(0, 1), form="qv")


rk2 = register(Method(
    name="rk2", label="RK2", state="qv", order=2, symplectic=False, implicit=False,
    params={"variant": "midpoint"},
    reference="mutze Sec. 7 (second-order Runge-Kutta; explicit midpoint or Heun)",
    prepare=prepare, doc=__doc__, first_order=True, declaration=_declaration))
