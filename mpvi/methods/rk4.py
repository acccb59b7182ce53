"""Classical fourth-order Runge-Kutta on the first-order Hamiltonian system.

    y = (q, p),  y' = f(t, y) = (dH/dp, -dH/dq)   (for M q'' + K q = 0: (M^-1 p, -K q)),
    k1 = f(y), k2 = f(y + h/2 k1), k3 = f(y + h/2 k2), k4 = f(y + h k3),
    y_j+1 = y_j + h/6 (k1 + 2 k2 + 2 k3 + k4)

(axioms2024 Sec. 6 and top2025 Secs. 3-4, "RK4").  Explicit, order 4, not symplectic;
stable on the harmonic oscillator for omega h <= 2 sqrt 2.  The field is the system's
Hamiltonian field (:func:`mpvi.engines.ode.hamiltonian_field`: generated in the gmp context), or
the right-hand side of a first-order system; the step itself is :func:`mpvi.engines.ode.rk4_step`.
Dense output: cubic Hermite interpolation of (q, v) (order 4, as the method).
"""
import numpy as np
import sympy as sp

from mpvi.methods.declarations import StepFunction
from mpvi.engines.kernels import explicit_batch, explicit_steps
from mpvi.engines.ode import field_with_factors, hamiltonian_field, rk4_step
from mpvi.model.singular import SingularityCrossed, singularities
from mpvi.methods.base import Method, StepResult, register


def explicit_stepper(system, ctx, one_step, compiled=None, batched=None):
    """A stepper applying ``one_step(f, t, y)`` (y a list) to the Hamiltonian field of a
    mechanical system on y = (q, p), or to the right-hand side of a first-order system.

    ``compiled(steps, t, y, signs)``: the same step by the compiled steps of
    :func:`mpvi.engines.kernels.explicit_steps` (bit-identical), tried first where they exist;
    its None means the Python step.  ``batched(batch, starts, ends, y, check, head,
    signs)``: the same steps in a batch by :func:`mpvi.engines.kernels.explicit_batch`,
    given to :func:`mpvi.solve` as ``stepper.many`` and ``stepper.batch_ready`` (the
    interface of :meth:`mpvi.methods.variational._TrialStepper.many`).  With
    ``stepper.guard_signs`` set (by :func:`mpvi.solve`: the signs of the system's singular
    factors at the initial point, :mod:`mpvi.model.singular`) every evaluation of the field
    checks them at its stage, and a change raises
    :class:`mpvi.model.singular.SingularityCrossed` naming the factor."""
    dtype = ctx.dtype
    if system.first_order:
        f = system.field()

        def stepper(t, y, _=None, carry=None):
            ctx.activate()
            return StepResult(np.array(one_step(f, t, list(y)), dtype=dtype), None)
        return stepper
    f, n = hamiltonian_field(system), system.dof
    steps = explicit_steps(system) if compiled is not None else None
    sing = singularities(system)
    with_factors = field_with_factors(system)

    def guarded(t, y):
        out, values = with_factors(t, y)
        if values is None:                               # q' = v: the field's first half
            values = sing.values(t, y[:n], out[:n])
        i = sing.crossed(values, stepper.guard_signs)
        if i is not None:
            raise SingularityCrossed(f"at a stage of the step, t = {ctx.to_str(t, 10)}: "
                                     f"{sing.describe(i, values[i])}")
        return out

    def stepper(t, q, p, carry=None):
        ctx.activate()
        y = [*q, *p]
        signs = stepper.guard_signs
        out = compiled(steps, t, y, signs) if steps is not None else None
        if out is None:
            out = one_step(guarded if signs is not None else f, t, y)
        return StepResult(np.array(out[:n], dtype=dtype), np.array(out[n:], dtype=dtype))
    stepper.guard_signs = None
    stepper.checks_inside = True          # every stage, when guard_signs is set
    batch = explicit_batch(system) if steps is not None and batched is not None else None
    if batch is not None:
        def many(starts, ends, q, y, carry, check=None, head=(), signs=None):
            ctx.activate()
            got = batched(batch, starts, ends, [*q, *y], check, head, signs)
            if got is None:
                return None
            done, flat = got
            if not done:
                return 0, None, None, None, None, None, None, None
            Y = np.fromiter(flat, dtype=object, count=len(flat)).reshape(done, 2, n)
            return done, Y[:, 0], Y[:, 1], None, None, None, None, None
        stepper.many = many
        stepper.batch_ready = lambda carry: batch.ready()
    return stepper


def prepare(system, h, ctx):
    """Prepare a classical RK4 step on (q, p) (axioms2024 Sec. 6; top2025 Secs. 3-4).

    Its stability bound (omega h < 2 sqrt 2) is checked by :func:`mpvi.solve`."""
    return explicit_stepper(system, ctx, lambda f, t, y: rk4_step(f, t, y, h),
                            lambda steps, t, y, signs: steps[0](t, y, h, signs),
                            lambda batch, starts, ends, y, check, head, signs:
                            batch(starts, ends, y, h, check, head, signs))


def _declaration():
    """RK4's own step code on (q, p), for mpvi.analysis.modified."""
    return StepFunction(rk4_step, form="qp")


rk4 = register(Method(
    name="rk4", label="RK4", state="qp", order=4, symplectic=False, implicit=False,
    reference="axioms2024 Sec. 6; top2025 Secs. 3-4 (classical RK4)", prepare=prepare,
    doc=__doc__, stability_bound=2 * sp.sqrt(2), first_order=True,
    declaration=lambda p: _declaration()))
