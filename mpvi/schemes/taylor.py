"""The Taylor-series method as a reference scheme (order ``degree``, default 32): the
reference that wins at high precision.

One step of size h sums the Taylor polynomial of degree ``degree`` of the solution of the
Hamiltonian system y' = f(t, y), y = (q, p), through the node, its coefficients computed
by automatic differentiation of the generated field in Taylor mode (:mod:`mpvi.taylor`;
Jorba & Zou, *Exp. Math.* 14 (2005) 99-117, the method of heyoka.py and TIDES).  Local
error O(h^(degree+1)); the cost of a step grows as degree^2 (each product of two series is
a convolution) but needs no more special-function calls than one field evaluation, so at
64 digits and beyond it overtakes GBS, whose order-2L step costs about L^2 field
evaluations.  Error per step about (h / rho)^order for rho the radius of convergence of
the solution in complex time: the most economical order for a tolerance tol is about
-ln(tol) / 2 with h about rho e^-2 (Jorba & Zou, Sec. 3.2).  Not symplectic; a reference
for systems without an exact solution, to be checked by halving h like GBS.

Mechanical systems of the M, V form only (the field must be generated code); the
functions of the field that depend on the state must be sin, cos, exp, log or sqrt
(:class:`mpvi.taylor.TaylorUnsupported` names any other).  In the gmp context the step
runs compiled to MPFR (:func:`mpvi.cbackend.translate_taylor`), bit-identical to the
Python step.  M(q) singular at a node raises :class:`mpvi.linalg.SingularMatrixError` as
for RK4.  Dense output: one Taylor step of size theta h from the node (order ``degree``).
"""
import numpy as np

from ..kernels import hamiltonian_field, taylor_steps
from .base import Method, StepResult, check_count, check_step, register


def prepare(system, h, ctx, check_stability=True, degree=32):
    """Prepare a Taylor-series step of degree ``degree`` (Jorba & Zou 2005) on (q, p).

    ``degree``: the degree of the Taylor polynomial (the method's order; named so that
    it does not collide with the ``order`` of :func:`mpvi.modified_equation`)."""
    h = check_step(h, ctx)
    degree = check_count(degree, "degree", 1, 1000, "a step costs about degree^2 products of "
                         "series coefficients (1000: a few seconds per step)")
    if system.first_order:
        raise ValueError(f"taylor: {system.name} is a first-order system with a Python "
                         "right-hand side; the Taylor method needs a mechanical system's "
                         "generated field (use rk4 or gbs)")
    steps = taylor_steps(system)
    if steps is None:
        raise ValueError(f"taylor: {system.name} has no mass-matrix expression (not of "
                         "the M, V form); the Taylor method needs its generated field")
    python, compiled = steps
    f, n, dtype = hamiltonian_field(system), system.dof, ctx.dtype

    def stepper(t, q, p, carry=None):
        ctx.activate()
        y = [*q, *p]
        f(t, y)            # M(q) singular at the node: SingularMatrixError naming q
        out = compiled(t, y, h, degree) if compiled is not None else None
        if out is None:
            out = python(t, y, h, degree)
        return StepResult(np.array(out[:n], dtype=dtype), np.array(out[n:], dtype=dtype))
    stepper.dense = "substep"
    return stepper


def _declaration(params):
    """The Taylor polynomial of the exact flow, for mpvi.modified."""
    from ..modified import TaylorSeries
    return TaylorSeries(params["degree"], form="qp")


taylor = register(Method(
    name="taylor", label="Taylor reference", state="qp", order=lambda p: p["degree"],
    symplectic=False, implicit=False, params={"degree": 32},
    reference="Jorba & Zou, Exp. Math. 14 (2005) 99-117 (Taylor series by automatic "
              "differentiation)", prepare=prepare, doc=__doc__, declaration=_declaration))


from ..precision import boundary_module  # noqa: E402  (last: wraps the names above)

boundary_module(globals())
