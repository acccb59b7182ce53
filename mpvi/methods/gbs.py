"""Gragg-Bulirsch-Stoer extrapolation as a reference scheme (order 2 * levels, default 32;
see :mod:`mpvi.engines.ode` for the levels and steps a 1e-55 reference needs).

One step of size h is the extrapolated explicit midpoint rule of :func:`mpvi.engines.ode.gbs_step`
on y = (q, p) (or on the state of a first-order system).  Not symplectic; used where no
exact solution exists (the double pendulum of top2025 Sec. 3, the reduced top), with
levels and h such that its error is below 1e-50 (checked by halving h in the tests and in
the reproductions).  Dense output: one GBS step of size theta h from the node (order
2 levels, the method's own).
"""
from mpvi.methods.declarations import EXACT, StepFunction
from mpvi.engines.ode import gbs_step
from mpvi.methods.base import Method, check_count, register
from mpvi.methods.rk4 import explicit_stepper

MAX_LEVELS = 64
"""The most extrapolation levels (order 128)."""


def prepare(system, h, ctx, levels=16):
    """Prepare a Gragg-Bulirsch-Stoer step of order 2 levels (Hairer, Norsett & Wanner, Sec. II.9).

    ``levels``: extrapolation levels (order 2 levels)."""
    levels = check_count(levels, "levels", 1, MAX_LEVELS, "a step costs 1 + levels^2 field evaluations, "
                         "and rounding grows with the extrapolation's Lebesgue constant (2.3e10 "
                         "at 32 levels): beyond 64 nothing is gained at any precision")
    stepper = explicit_stepper(system, ctx, lambda f, t, y: gbs_step(f, t, y, h, levels, ctx),
                               lambda steps, t, y, signs: steps[1](t, y, h, levels, signs))
    stepper.dense = "substep"
    return stepper


def _declaration(params):
    """GBS's own step code on (q, p) with exact rationals, for mpvi.analysis.modified."""
    levels = params["levels"]
    return StepFunction(lambda f, t, y, h: gbs_step(f, t, y, h, levels, EXACT), form="qp")


gbs = register(Method(
    name="gbs", label="GBS reference", state="qp", order=lambda p: 2 * p["levels"],
    symplectic=False, implicit=False, params={"levels": 16},
    reference="Hairer-Norsett-Wanner, Solving ODEs I, Sec. II.9 (reference solutions)",
    prepare=prepare, doc=__doc__, first_order=True, declaration=_declaration,
    order_parameter=("levels", 1, MAX_LEVELS)))
