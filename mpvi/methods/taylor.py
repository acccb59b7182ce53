"""The Taylor-series method as a reference scheme: Jorba & Zou's adaptive Taylor steps to a
tolerance ``tol`` (default: the context's eps), or a fixed step of degree ``degree``
(``tol=None``): the reference that wins at high precision.

Each step sums Taylor polynomials of the solution of the equations of motion, their
coefficients computed by automatic differentiation of the generated field in Taylor mode
(:mod:`mpvi.engines.taylor`; Jorba & Zou, *Exp. Math.* 14 (2005) 99-117, the method of heyoka.py
and TIDES).  With a tolerance, a step of :func:`mpvi.solve` (its h stays the spacing of the
nodes) is crossed in as many substeps as the solution needs: each substep's size comes
from the last two coefficients (an estimate rho of the radius of convergence in complex
time: tau = rho tol^(1/P) e^(-0.7/(P-1))), the last one lands exactly on t + h, and the
order is P = ceil(-ln(tol)/2 + 1) -- the cheapest per unit time -- unless ``degree`` fixes
it.  The error of a substep is then below tol times max(1, |y|); the substeps taken are
``sol.stats["substeps"]``.  With ``tol=None`` one step of size h is one polynomial of
degree ``degree`` (default 32): local error O(h^(degree+1)), to be checked by halving h
like GBS.  A step's cost grows as P^2 (each product of two series is a convolution) but
needs no more special-function calls than one field evaluation, so at 64 digits and beyond
it overtakes GBS.  Not symplectic.

M, V systems are integrated on (q, p) with Hamilton's equations; a general Lagrangian
(:meth:`mpvi.LagrangianSystem.from_lagrangian`) on (q, v) with its equations of motion
L_vv v' = L_q + F - L_vq v - L_vt, v from p at the start of a step (the inverse Legendre
map) and p from v at its end.  The functions of the field that depend on the state must
be sin, cos, exp, log, sqrt or powers (:class:`mpvi.engines.taylor.TaylorUnsupported` names any
other).  In the gmp context the steps run compiled to MPFR
(:func:`mpvi.compiled.cbackend.translate_taylor`), bit-identical to the Python ones.  A singular
M(q) or L_vv at a node raises :class:`mpvi.numbers.linalg.SingularMatrixError` as for RK4; the
singular factors of the system (:mod:`mpvi.model.singular`) are checked at every substep end.
Dense output and events: the Taylor polynomial of the substep holding the time.
"""
import numpy as np

from mpvi.methods.declarations import TaylorSeries
from mpvi.engines.kernels import hamiltonian_field, taylor_steps
from mpvi.model.singular import SingularityCrossed, singularities
from mpvi.engines.taylor import TaylorEvaluator, jorba_zou_order, step_factor, substep_limit
from mpvi.methods.base import Method, StepResult, check_count, register

FIXED_DEGREE = 32
"""The degree of a fixed step (``tol=None``) when ``degree`` is not given."""

SLOWEST = 10
"""A given degree P must keep tol^(1/P) >= e^-SLOWEST (the substep over the radius of
convergence; Jorba & Zou's order makes it about e^-2): a lower degree is refused."""

MAX_DEGREE = 1000
"""The largest degree: a step costs about degree^2 products of series coefficients (1000:
a few seconds per step)."""


def tolerance(tol, ctx):
    """``tol`` as a context number in (0, 1): "eps" is the context's eps.

    Parameters
    ----------
    tol : "eps" or number
        The tolerance (a string such as "1e-50", an int, a Fraction, a context number).
    ctx : context
        The number context.

    Returns
    -------
    number
        The tolerance in ``ctx``.

    Raises
    ------
    ValueError
        Not a number between 0 and 1 (exclusive).
    """
    if isinstance(tol, str) and tol.strip() == "eps":
        return ctx.eps
    value = ctx.number(tol, "tol")
    if not (ctx.isfinite(value) and 0 < value < 1):
        raise ValueError(f"taylor: tol must be a number between 0 and 1 (or None for fixed "
                         f"steps of the given degree), got {tol!r}")
    return value


def prepare(system, h, ctx, degree=None, tol="eps", schedule=None):
    """Prepare Taylor steps on a mechanical system (Jorba & Zou 2005).

    ``tol``: the tolerance of the adaptive substeps ("eps": the context's eps; None: one
    fixed step of degree ``degree`` per step, 32 by default).  ``degree``: the order of
    the Taylor polynomials (named so that it does not collide with the ``order`` of
    :func:`mpvi.modified_equation`); with a tolerance and no degree, Jorba & Zou's
    ceil(-ln(tol)/2 + 1).  ``schedule`` (with ``tol=None``; :func:`mpvi.certify`'s walk
    of an adaptive run): ``schedule(t)`` gives the interior substep ends (exact numbers)
    of the step from t, the run's own choices; each substep is one polynomial of degree
    ``degree`` (no choice is made on balls)."""
    degree, factor = _degree_and_factor(degree, tol, ctx)
    if system.first_order:
        raise ValueError(f"taylor: {system.name} is a first-order system with a Python "
                         "right-hand side; the Taylor method needs a mechanical system's "
                         "generated field (use rk4 or gbs)")
    if schedule is not None and factor is not None:
        raise ValueError("taylor: a substep schedule replaces the adaptive choice: give "
                         "tol=None with it")
    stepper = _TaylorStepper(system, h, ctx, degree, factor)
    stepper.schedule = schedule
    return stepper


def _degree_and_factor(degree, tol, ctx):
    """(the degree of the Taylor polynomials, the substep factor of Jorba & Zou or None for
    one fixed step per step), checked."""
    why = "a step costs about degree^2 products of series coefficients (1000: a few seconds)"
    if tol is None:
        return (FIXED_DEGREE if degree is None else check_count(degree, "degree", 1,
                                                                MAX_DEGREE, why)), None
    tol = tolerance(tol, ctx)
    if degree is None:
        degree = jorba_zou_order(tol, ctx)
        if degree > MAX_DEGREE:
            raise ValueError(f"taylor: tol = {ctx.to_str(tol, 5)} needs Taylor polynomials "
                             f"of degree {degree}, beyond {MAX_DEGREE}: {why}")
    else:
        degree = check_count(degree, "degree", 1, MAX_DEGREE, why)
        low = jorba_zou_order(tol, ctx, SLOWEST)
        if degree < low:
            raise ValueError(
                f"taylor: degree {degree} is too low for tol = {ctx.to_str(tol, 5)}: each "
                f"substep would be below e^-{SLOWEST} of the solution's radius of "
                f"convergence (tol^(1/degree)), millions of substeps; give degree >= {low}, "
                f"no degree for Jorba & Zou's {jorba_zou_order(tol, ctx)}, or tol=None for "
                f"one fixed step of degree {degree} per step h (no substeps, no tolerance)")
    return degree, step_factor(degree, tol, ctx)


TIER_PAUSE = 8
"""Steps of a run computed at the context's precision after a step whose tiered
coefficients did not hold (:meth:`mpvi.engines.taylor.TaylorEvaluator.adaptive`): a
solution growing faster than the schedule assumes (an entire one) would otherwise pay the
tiered coefficients and the exact ones at every substep.  Doubled at each such step in a
row, up to :data:`TIER_PAUSE_MAX`; back to 8 after a step whose tiers held."""

TIER_PAUSE_MAX = 1024


class _TaylorStepper:
    """The stepper :func:`prepare` returns: ``stepper(t, q, y)`` is one step of h (in
    substeps of Jorba & Zou's size when ``factor`` is not None), ``substeps_of`` its dense
    output; ``guard_signs`` (set by :func:`mpvi.solve`) the signs the singular factors
    keep, checked at the interior substep ends."""

    dense = "taylor"

    def __init__(self, system, h, ctx, degree, factor):
        self.system, self.h, self.ctx, self.degree, self.factor = system, h, ctx, degree, factor
        steps = taylor_steps(system)
        self.python, self.compiled = steps.python, steps.compiled
        self.general = steps.form == "qv"
        self.n, self.dtype = system.dof, ctx.dtype
        self.f = None if self.general else hamiltonian_field(system)
        self.sing = singularities(system)
        self.guard_signs = None
        self.substeps = 0
        self.schedule = None
        self.tier_skip, self.tier_pause = 0, TIER_PAUSE

    def stats(self):
        return {"substeps": self.substeps}

    def start(self, t, q, y):
        """The Taylor state at the node: (q, p), or (q, v) of a general Lagrangian."""
        if self.general:          # SingularMatrixError or NewtonError naming q
            return [*q, *self.system.velocity(q, y, t)]
        state = [*q, *y]
        self.f(t, state)          # M(q) singular at the node: SingularMatrixError naming q
        return state

    def advance(self, t, y0, record):
        """(the state at t + h, substeps, interior substep ends or None)."""
        h, degree, factor, compiled, python = (self.h, self.degree, self.factor,
                                                self.compiled, self.python)
        if self.schedule is not None:
            return self._scheduled(t, y0, record)
        if factor is None:
            out = compiled.step(t, y0, h, degree) if compiled is not None else None
            return (python.step(t, y0, h, degree) if out is None else out), 1, None
        tiers = self.tier_skip == 0
        out = (compiled.adaptive(t, y0, h, degree, factor, record, tiers)
               if compiled is not None else None)
        if out is None:
            out = python.adaptive(t, y0, h, degree, factor, record, tiers)
        elif out[0] is None:                    # the compiled steps' substep limit
            raise substep_limit(self.ctx, h, *out[2])
        y, nsub, bounds, held = out
        if not tiers:
            self.tier_skip -= 1
        elif held:
            self.tier_pause = TIER_PAUSE
        else:                                   # the next steps at the context's precision
            self.tier_skip = self.tier_pause
            self.tier_pause = min(2 * self.tier_pause, TIER_PAUSE_MAX)
        return y, nsub, bounds

    def _scheduled(self, t, y, record):
        """The step from t along the given substep ends (``schedule``), the last landing
        on t + h: (the state, substeps, interior ends or None) as :meth:`advance`."""
        ctx, compiled, python = self.ctx, self.compiled, self.python
        ends = [ctx.num(tau) for tau in self.schedule(t)] + [t + self.h]
        tau, bounds = t, []
        for i, end in enumerate(ends):
            size = end - tau
            out = compiled.step(tau, y, size, self.degree) if compiled is not None else None
            y = python.step(tau, y, size, self.degree) if out is None else out
            tau = end
            if record and i + 1 < len(ends):
                bounds.append(tau)
                bounds.extend(y)
        return y, len(ends), (bounds if record else None)

    def check(self, bounds, nsub, signs):
        """The singular factors at the interior substep ends keep their signs."""
        n, sing, system = self.n, self.sing, self.system
        w = 2 * n + 1
        for i in range(nsub - 1):
            tau, y = bounds[i * w], bounds[i * w + 1:(i + 1) * w]
            q = y[:n]
            v = y[n:] if self.general else (system.velocity(q, y[n:], tau)
                                           if sing.uses_velocity else q)
            values = sing.values(tau, q, v)
            j = sing.crossed(values, signs)
            if j is not None:
                raise SingularityCrossed(f"at the end of substep {i + 1} of {nsub}, t = "
                                         f"{self.ctx.to_str(tau, 10)}: "
                                         f"{sing.describe(j, values[j])}")

    def __call__(self, t, q, y, carry=None):
        self.ctx.activate()
        signs = self.guard_signs
        y1, nsub, bounds = self.advance(t, self.start(t, q, y),
                                        signs is not None and len(self.sing) > 0)
        self.substeps += nsub
        if bounds:
            self.check(bounds, nsub, signs)
        return self._result(t, y1)

    def _result(self, t, y1):
        n, dtype = self.n, self.dtype
        q1 = np.array(y1[:n], dtype=dtype)
        if self.general:
            return StepResult(q1, self.system.momentum(q1, np.array(y1[n:], dtype=dtype),
                                                       t + self.h))
        return StepResult(q1, np.array(y1[n:], dtype=dtype))

    def substep_ends(self, t, q, y):
        """The step from (t, q, y) as :meth:`__call__` takes it, and the interior substep
        ends it chose (a list; empty for a fixed step): what :func:`mpvi.certify` walks
        again on balls (``schedule``)."""
        self.ctx.activate()
        y1, nsub, bounds = self.advance(t, self.start(t, q, y), True)
        w = 2 * self.n + 1
        return self._result(t, y1), [] if not bounds else bounds[0::w][:nsub - 1]

    def coefficients(self, tau, y):
        compiled = self.compiled
        out = compiled.coefficients(tau, y, self.degree) if compiled is not None else None
        return self.python.coefficients(tau, y, self.degree) if out is None else out

    def substeps_of(self, t, q, y):
        """The dense output of the step from (t, q, y): its substeps' polynomials."""
        self.ctx.activate()
        y0 = self.start(t, q, y)
        _, nsub, bounds = self.advance(t, y0, True)
        w = 2 * self.n + 1
        starts = [(t, y0)] + [(bounds[i * w], bounds[i * w + 1:(i + 1) * w])
                              for i in range(nsub - 1)]
        return Substeps(t, self.h, starts, self.coefficients, self.system, self.general,
                        self.ctx, self.factor is None)


class Substeps:
    """The dense output of one Taylor step [t, t + h]: the starts (tau_i, y_i) of its
    substeps and their Taylor polynomials (computed when first needed, then kept).

    ``at(theta)`` -> (q, v) at t + theta h from the polynomial of the substep holding it
    (``fixed``: the one polynomial of a fixed step, at theta h); at theta = 1 the step's
    own end, bit for bit."""

    def __init__(self, t, h, starts, coefficients, system, general, ctx, fixed=False):
        self.t, self.h, self.starts, self.fixed = t, h, starts, fixed
        self._coefficients, self._system, self._general, self._ctx = (coefficients, system,
                                                                      general, ctx)
        self._cache = {}

    def at(self, theta):
        """(q, v) at t + theta h.

        Parameters
        ----------
        theta : number
            The fraction of the step, in [0, 1].

        Returns
        -------
        tuple of numpy.ndarray
            Positions and velocities.
        """
        ctx = self._ctx
        ctx.activate()
        s = self.t + theta * self.h
        forward = self.h > 0
        i = 0
        for j, (tau, _) in enumerate(self.starts):
            if (tau <= s) if forward else (tau >= s):
                i = j
        tau, y = self.starts[i]
        if i not in self._cache:
            self._cache[i] = self._coefficients(tau, y)
        out = TaylorEvaluator.horner(self._cache[i], theta * self.h if self.fixed else s - tau)
        n, dtype = self._system.dof, ctx.dtype
        q = np.array(out[:n], dtype=dtype)
        rest = np.array(out[n:], dtype=dtype)
        return q, (rest if self._general else self._system.velocity(q, rest, s))


def _declaration(params):
    """The Taylor polynomial of the exact flow, for mpvi.analysis.modified."""
    return TaylorSeries(FIXED_DEGREE if params["degree"] is None else params["degree"],
                        form="qp")


taylor = register(Method(
    name="taylor", label="Taylor reference", state="qp",
    order=lambda p: FIXED_DEGREE if p["degree"] is None else p["degree"],
    symplectic=False, implicit=False, params={"degree": None, "tol": "eps"},
    reference="Jorba & Zou, Exp. Math. 14 (2005) 99-117 (Taylor series by automatic "
              "differentiation, adaptive step and order)", prepare=prepare, doc=__doc__,
    declaration=_declaration, order_parameter=("degree", 1, MAX_DEGREE)))
