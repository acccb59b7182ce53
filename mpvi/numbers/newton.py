"""Newton's method for the implicit schemes, with tolerances from the number context.

One implementation: :func:`newton_core` iterates  x <- x - J(x)^-1 F(x)  on plain lists
with the elimination of :mod:`mpvi.numbers.linalg`; :func:`solve_info` runs it for the
generated-kernel path and the assembled reference path alike (numpy arrays are accepted
and returned as such), and the compiled Newton of :mod:`mpvi.compiled` is its
translation to MPFR C (:mod:`mpvi.compiled.croutine`: the same operations, so the same
bits and iteration counts).  Each update J^-1 F is solved in doubles and refined at the
context's precision as far as the iteration needs it (:func:`refined_update`: mixed-
precision iterative refinement), so the elimination costs O(n^3) double operations and
O(n^2) of the context's per refinement instead of O(n^3) of the context's; where doubles
cannot give the update (J outside their range, too ill conditioned, singular) the
context's elimination does.  The iterates are the same to the context's precision and
the iteration counts those of Newton's method.  It stops when the update is at the
round-off level of the context:

    ||dx||_inf <= tol,    tol = rtol * max(||x||_inf, scale),    rtol = 2^10 * ctx.eps

(about 2e-61 at 64 digits, 2e-13 in float64), or -- saving one iteration -- when the
iteration is contracting (||dx_k|| <= ||dx_k-1|| / 2) and the quadratic model predicts
the next update ||dx_k||^3 / ||dx_k-1||^2 <= eps * max(||x||_inf, scale); an update
that the model says is the last one reuses the previous Jacobian, and the first after a
start in doubles uses the start's Jacobian (:func:`newton_core`).  The residual
at the returned point is evaluated (one more F call), returned, and compared with the
bound that an update at that tolerance allows,

    ||F(x)||_inf <= n * rtol * ||J||_inf * max(||x||_inf, scale) * RESIDUAL_SLACK

(J the last Jacobian, ||J||_inf its largest row sum: F(x) ~ J (x - x*)): a point that
passed the update test but misses it (a stalled or falsely "converged" iteration) raises
:class:`NewtonError` naming the residual and the bound.  So the claim is checked, not
assumed.  Nothing here is a fixed ``1e-14``.  :data:`RESIDUAL_SLACK` allows for a residual
whose own round-off exceeds ||J|| ||x|| eps because it sums terms much larger than J x
(see there); a falsely converged iterate misses the bound by many orders of magnitude.

On failure (iteration limit, a non-finite value, a singular Jacobian) a
:class:`NewtonError` names the residual norm, the iteration count, the likely cause where
the caller can tell (``diagnose``) and -- once the driver has added them -- the step
index and time.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from mpvi.numbers.linalg import SingularMatrixError, gauss_eliminate, max_norm, solve_dense

if TYPE_CHECKING:
    from mpvi.ground.types import Real

DEFAULT_MAX_ITER = 50

OPTIONS = ("max_iter", "rtol", "scale")
"""The Newton options an implicit method accepts (``mpvi.solve(..., newton={...})``)."""


class NewtonError(ArithmeticError):
    """Newton's method did not converge.

    On an iteration limit, a non-finite value, a singular Jacobian, or a "converged"
    iterate whose residual misses the bound of :mod:`mpvi.numbers.newton`.  Raised by
    :func:`mpvi.solve` with the step index and time, the points saved before the failing
    step as ``exc.solution``, and the likely cause where the method can tell (a
    non-finite potential or a singular mass matrix at the iterate).  An
    ``ArithmeticError``; it pickles.

    Parameters
    ----------
    message : str
        What failed.
    residual : number, optional
        Norm of the residual at the last iterate (None if not finite).
    iterations : int, optional
        Iterations made.
    step : int, optional
        Index j of the step j -> j+1 (set by the driver).
    t : number, optional
        The time of that step.
    what : str, default ""
        Which equation.
    cause : str, optional
        The likely cause, when the caller could tell.
    """

    def __init__(self, message: str, residual: Any = None, iterations: int | None = None,
                 step: int | None = None, t: Any = None, what: str = "",
                 cause: str | None = None):
        self.message, self.residual, self.iterations = message, residual, iterations
        self.step, self.t, self.what, self.cause = step, t, what, cause
        super().__init__(self._text())

    def _text(self):
        where = [self.what] if self.what else []
        if self.step is not None:
            where.append(f"step {self.step}")
        if self.t is not None:
            where.append(f"t = {_short(self.t)}")
        head = "Newton failed" + (f" ({', '.join(where)})" if where else "")
        tail = []
        if self.iterations is not None:
            tail.append(f"after {self.iterations} iterations")
        if self.residual is not None:
            tail.append(f"residual {_short(self.residual)}")
        text = f"{head}: {self.message}" + (f" [{', '.join(tail)}]" if tail else "")
        return text + (f"; likely cause: {self.cause}" if self.cause else "")

    def at(self, step: int, t: Any) -> NewtonError:
        """Locate the error at a step and time (the message is updated).

        Parameters
        ----------
        step : int
            Index j of the step j -> j+1.
        t : number
            Its time t_j.

        Returns
        -------
        NewtonError
            The same error object.
        """
        self.step, self.t = step, t
        self.args = (self._text(),)
        return self

    def __reduce__(self):
        return (_rebuild_newton_error, (self.message, self.residual, self.iterations, self.step,
                                        self.t, self.what, self.cause))


def _rebuild_newton_error(*args):
    return NewtonError(*args)


def _short(x):
    try:
        return f"{float(x):.3e}"
    except (TypeError, ValueError, OverflowError):
        return str(x)


class NewtonStats:
    """Running statistics of Newton solves: count, total / min / max iterations and the
    largest final residual norm, in O(1) memory however many solves are recorded."""

    __slots__ = ("solves", "total", "min", "max", "max_residual")

    def __init__(self):
        self.solves, self.total, self.min, self.max, self.max_residual = 0, 0, None, None, None

    def record(self, iterations, residual):
        self.solves += 1
        self.total += iterations
        self.min = iterations if self.min is None else min(self.min, iterations)
        self.max = iterations if self.max is None else max(self.max, iterations)
        r = abs(residual)
        if self.max_residual is None or r > self.max_residual:
            self.max_residual = r

    def record_all(self, iterations, residuals):
        """:meth:`record` of each (iterations, residual) in turn, the counts in bulk."""
        if not iterations:
            return
        self.solves += len(iterations)
        self.total += sum(iterations)
        lo, hi = min(iterations), max(iterations)
        self.min = lo if self.min is None else min(self.min, lo)
        self.max = hi if self.max is None else max(self.max, hi)
        largest = self.max_residual
        for r in map(abs, residuals):             # record's comparison, so a nan alike
            if largest is None or r > largest:
                largest = r
        self.max_residual = largest

    def summary(self):
        """``{"solves": 0}``, or solves, total/mean/max/min iterations, max final residual."""
        if not self.solves:
            return {"solves": 0}
        return {"solves": self.solves, "total_iterations": self.total,
                "mean_iterations": self.total / self.solves, "max_iterations": self.max,
                "min_iterations": self.min, "max_residual": float(self.max_residual)}


def summarize(iterations, residuals):
    """:meth:`NewtonStats.summary` of sequences of iteration counts and final residuals."""
    stats = NewtonStats()
    stats.record_all(iterations, residuals)
    return stats.summary()


RESIDUAL_SLACK = 2 ** 10
"""How far the final residual may exceed n rtol ||J|| max(||x||, scale): the residual of an
equation that sums terms much larger than J x carries their round-off.  Mutze's midpoint
variation method (eq. 54) sums terms of size ||x|| / tau^2 that cancel to D_tau S, so its
residual at the solution is about 1e3 eps ||J|| ||x|| at tau = T/64 (measured: 1.2 times
the bound without slack in mutze Fig. 2, at 64 and at 84 digits alike; the iterate is
still right to about 61 of 64 digits, which ``mpvi run --check-digits`` measures).  A
falsely converged iterate misses the bound by far more (0.5 against 1e-58, 1e42)."""


DOUBLES_FROM = 6
"""The fewest unknowns whose Newton updates are solved in doubles (:func:`refined_update`).
Below, the context's elimination is cheaper than converting J to doubles and refining:
measured alternately against the elimination in the context (``benchmarks/
against_revision.py``, compiled, 64 digits), 4 unknowns (Kepler's Simpson step) took 1.07
times as long in doubles, 6 (the Lagrange top) 0.86 times, 8 (a chain of 4 pendulums,
Simpson and Gauss-Legendre) 0.88-0.93 times, 32 (16 pendulums) 0.42-0.47 times."""


def doubles_for(n: int) -> int:
    """1 where the updates of n unknowns are solved in doubles (:data:`DOUBLES_FROM`), else
    0: the ``doubles`` of :func:`newton_core`, the same in Python and in its C."""
    return 1 if n >= DOUBLES_FROM else 0


def tolerance(ctx):
    """Relative update tolerance 2^10 eps of the context."""
    return ctx.eps * 1024


def check_options(newton, ctx=None):
    """The Newton options dict, validated: ``ValueError`` naming unknown keys or a bad
    ``max_iter``; with ``ctx``, ``rtol`` and ``scale`` read as positive numbers of the
    context (a float refused as everywhere in mpvi; errors name the option)."""
    if newton is not None and not isinstance(newton, dict):
        raise TypeError(f"newton options must be a dict with keys among {', '.join(OPTIONS)}, "
                        f"got {type(newton).__name__}")
    newton = dict(newton or {})
    unknown = set(newton) - set(OPTIONS)
    if unknown:
        raise ValueError(f"unknown Newton option(s) {sorted(unknown)}; use {', '.join(OPTIONS)}")
    m = newton.get("max_iter", DEFAULT_MAX_ITER)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"Newton option max_iter must be a positive integer, got {m!r}")
    for name in ("rtol", "scale") if ctx is not None else ():
        if name in newton:
            value = ctx.number(newton[name], f"Newton option {name}")
            if not (ctx.isfinite(value) and value > 0) or (name == "rtol" and not value < 1):
                raise ValueError(f"Newton option {name} must be a positive number"
                                 f"{' below 1' if name == 'rtol' else ''}, got {newton[name]!r}")
            newton[name] = value
    return newton


def solve(fun, x0, ctx, *, stats=None, **options):
    """Solve F(x) = 0 by Newton's method from ``x0``; returns x (see :func:`solve_info`).
    ``stats`` (a :class:`NewtonStats`) receives (iterations, final residual norm)."""
    x, iterations, residual = solve_info(fun, x0, ctx, **options)
    if stats is not None:
        stats.record(iterations, residual)
    return x


def _norm(values):
    """max_i |v_i|, or a nan among the v_i: ``max`` alone passes over a nan that is not
    first (nan > x is false), and a nan update would then pass the stopping rule."""
    m = max(map(abs, values))
    return m if all(v == v for v in values) else next(v for v in values if v != v)


def scaled_solve(n: int, jd: list[list[float]], v: list[Real], scale: Real,
                 ad: list[list[float]], bd: list[list[float]], xd: list[list[float]],
                 feps: float, fo: list[float]) -> int:
    """Solve ``jd`` x = ``v`` ``scale`` in doubles into ``xd`` (n x 1): jd (n x n floats)
    copied into ``ad`` and eliminated there (:func:`mpvi.numbers.linalg.gauss_eliminate`
    on floats), each v_i ``scale`` rounded to a double once into ``bd``; ``feps``, ``fo``
    as gauss_eliminate, whose rank it returns.  The right-hand side is scaled before it is
    rounded (``scale`` the reciprocal of its norm), so no precision or exponent range of
    the context is lost: the one solve in doubles of :func:`refined_update` and
    :func:`start_update`."""
    for i in range(n):
        ai = ad[i]
        di = jd[i]
        for j in range(n):
            ai[j] = di[j]
        bd[i][0] = float(v[i] * scale)
    return gauss_eliminate(n, 1, ad, bd, xd, feps, fo)


def refined_update(n: int, r: list[Real], jac: list[list[Real]], fresh: int, prior: Real,
                   floor: Real, feps: float, step: list[Real], res: list[Real],
                   jd: list[list[float]], ad: list[list[float]], bd: list[list[float]],
                   xd: list[list[float]], fo: list[float], out: list[Real]) -> int:
    """The Newton update ``step`` = -J^-1 r solved in doubles and refined in the context
    (mixed-precision iterative refinement): J rounded to doubles once (``jd``), each
    solve an elimination of doubles (:func:`mpvi.numbers.linalg.gauss_eliminate` run on
    floats, O(n^3) double operations), each refinement the residual -r - J step at the
    context's precision (n^2 of its operations, where an elimination at that precision
    costs n^3 / 3).  The right-hand side is scaled by its norm before it is rounded to
    doubles, so no precision or exponent range of the context is lost.

    The update is refined until its estimated error is below the accuracy the iteration
    needs: Newton's next error, ||step||^3 / ``prior``^2 for the previous update norm
    ``prior`` (the quadratic model of :func:`newton_core`), and never below ``floor``
    (eps max(||x||, scale)); a first update (``prior`` 0) is not refined.  The error of
    the first solve is estimated as ``feps`` ||step|| times the condition number estimated
    from the elimination (max |J_ij| / min |pivot|), that of a refined one from the last
    two corrections.
    With ``fresh`` 1, ``jac`` is rounded to doubles into ``jd``; with ``fresh`` 0, ``jd``
    already holds it (the last call's: :func:`newton_core`'s last update reuses the
    Jacobian of the one before).
    ``res`` (n numbers) and ``ad``, ``bd``, ``xd`` (n x n, n x 1, n x 1
    floats), ``fo`` (2 floats) are storage.  Returns 1 with the update in ``step``, or 0
    where doubles cannot give it: J not finite in doubles, singular or too ill conditioned
    for doubles (that estimate above 2^-10 feps^-1), a residual that is not finite, or
    corrections that stop shrinking: the caller then eliminates at the context's
    precision.
    """
    top = feps * 0
    for i in range(n):
        ji = jac[i]
        di = jd[i]
        for j in range(n):
            if fresh == 1:
                di[j] = float(ji[j])
            v = di[j]
            if not v - v == 0:
                return 0
            if abs(v) > top:
                top = abs(v)
    for i in range(n):
        res[i] = -r[i]
    k = 0
    first = floor
    last = floor
    target = floor
    rounding = feps
    while k < 64:
        if not max_norm(n, res, out):
            return 0
        s = out[0]
        if s == 0:
            if k > 0:                         # the refined update is exact
                return 1
            s = s + 1                         # F = 0: the elimination still finds a singular J
        if scaled_solve(n, jd, res, 1 / s, ad, bd, xd, feps, fo) != n:
            return 0
        if k == 0:                            # max |J| / min |pivot|: a condition number
            low = abs(ad[0][0])               # of J (a lower bound for U's)
            for i in range(n):
                if abs(ad[i][i]) < low:
                    low = abs(ad[i][i])
            rounding = feps * (top / low)
            if not rounding * 1024 <= 1:      # doubles would give under 3 digits
                return 0
        big = abs(xd[0][0])
        for i in range(n):
            w = abs(xd[i][0])
            if w > big:
                big = w
            c = s * xd[i][0]
            if k == 0:
                step[i] = c
            else:
                step[i] = step[i] + c
        cn = s * big
        if k == 0:
            first = cn
            if prior > 0:
                target = cn * cn * cn / (prior * prior)
                if target < floor:
                    target = floor
            else:
                return 1
            estimate = cn * rounding
        else:
            if not 2 * cn <= last:
                return 0
            estimate = cn * cn / last
        if estimate <= target or not first > floor:
            return 1
        last = cn
        for i in range(n):
            ji = jac[i]
            acc = -r[i]
            for j in range(n):
                acc = acc - ji[j] * step[j]
            res[i] = acc
        k += 1
    return 0


def newton_update(n: int, jac: list[list[Real]], r: list[Real], a: list[list[Real]],
                  b: list[list[Real]], dx: list[list[Real]], eps: Real, out: list[Real]) -> int:
    """Newton's update -J^-1 r into ``dx`` (n x 1) by the elimination of a copy of ``jac``
    (``a``, ``b``: n x n and n x 1 storage; ``eps``, ``out`` as
    :func:`mpvi.numbers.linalg.gauss_eliminate`, whose rank it returns): in the context's
    numbers for :func:`newton_core`, on floats for :func:`double_start`."""
    for i in range(n):
        ai = a[i]
        ji = jac[i]
        for j in range(n):
            ai[j] = ji[j]
        b[i][0] = -r[i]
    return gauss_eliminate(n, 1, a, b, dx, eps, out)


def start_update(n: int, r: list[Real], js: list[list[float]], feps: float,
                 step: list[Real], ad: list[list[float]], bd: list[list[float]],
                 xd: list[list[float]], fo: list[float], out: list[Real]) -> int:
    """The update ``step`` = -Js^-1 r by the Jacobian in doubles ``js`` of Newton's start
    (:func:`double_start`'s last, at a point within its last update of the iterate): r
    scaled by its norm, rounded to doubles and eliminated in doubles
    (:func:`mpvi.numbers.linalg.gauss_eliminate` on floats), then scaled back.  A chord
    update: Js is J to about the doubles' precision, so the update takes an iterate from
    the start's error e to about 1e-16 e (from the start's 1e-16: 1e-32), without the
    Jacobian at the context's precision (:func:`newton_core` says where it is taken).
    ``ad``, ``bd``, ``xd``, ``fo``:
    storage (n x n, n x 1, n x 1, 2 floats).  Returns 1 with the update in ``step``, or 0
    where doubles cannot give it (r not finite, Js singular)."""
    if not max_norm(n, r, out):
        return 0
    s = out[0]
    if s == 0:
        s = s + 1                             # F = 0: the update is 0
    if scaled_solve(n, js, r, -1 / s, ad, bd, xd, feps, fo) != n:
        return 0
    for i in range(n):
        step[i] = s * xd[i][0]
    return 1


def double_start(n: int, start: Callable[[list[float], list[float], list[list[float]]], bool],
                 x: list[Real], one: Real, feps: float, xs: list[float], rs: list[float],
                 js: list[list[float]], ad: list[list[float]], bd: list[list[float]],
                 xd: list[list[float]], fo: list[float], dq: list[float]) -> int:
    """Newton's first iterations in doubles: ``start(xs, rs, js)`` writes the kernel's
    residual and Jacobian at ``xs`` in doubles (:mod:`mpvi.compiled.cdouble`; false where
    it cannot be evaluated there), each update an elimination of doubles
    (:func:`newton_update` run on floats), from ``x`` rounded to
    doubles, while the updates at least halve, at most 12 times.
    Where the last update is within 2^10 ``feps`` of the iterate (Newton has converged in
    doubles), ``x`` becomes that iterate (each double exactly, times the context's
    ``one``) and the count of iterations is returned; otherwise (the updates stop
    shrinking first, a value is not finite, the kernel or the elimination fails) ``x`` is
    left as it was and 0 is returned.  ``xs``, ``rs`` (n floats), ``js``, ``ad`` (n x n),
    ``bd``, ``xd`` (n x 1) and ``fo`` (2) are storage; ``dq`` (2 floats) receives the
    iteration's quadratic constant C (u_k = C u_{k-1}^2 for the last two updates u both
    above 2^20 ``feps`` of the iterate, 0 where no such pair) and its last update."""
    dq[0] = feps * 0
    dq[1] = feps * 0
    for i in range(n):
        v = float(x[i])
        if not v - v == 0:
            return 0
        xs[i] = v
    last = feps * 0
    k = 0
    while k < 12:
        if not start(xs, rs, js):
            return 0
        if newton_update(n, js, rs, ad, bd, xd, feps, fo) != n:
            return 0
        dn = feps * 0
        xn = feps * 0 + 1
        for i in range(n):
            v = xs[i] + xd[i][0]
            if not v - v == 0:
                return 0
            xs[i] = v
            if abs(xd[i][0]) > dn:
                dn = abs(xd[i][0])
            if abs(v) > xn:
                xn = abs(v)
        k += 1
        if k > 1 and dn > 1048576 * feps * xn:      # both updates above the doubles' noise
            dq[0] = dn / (last * last)
        dq[1] = dn
        if dn <= 1024 * feps * xn:
            for i in range(n):
                x[i] = one * xs[i]
            return k
        if k > 1 and not 2 * dn <= last:
            return 0
        last = dn
    return 0


def newton_core(n: int, both: Callable[[list[Real], list[Real], list[list[Real]]], bool],
                residual: Callable[[list[Real], list[Real]], bool],
                probe: Callable[[list[Real], list[Real]], bool], x: list[Real], eps: Real,
                rtol: Real, scale: Real, max_iter: int, slack: int, damped: int, one: Real,
                r: list[Real], jac: list[list[Real]], a: list[list[Real]],
                b: list[list[Real]], dx: list[list[Real]], step: list[Real],
                trial: list[Real], fr: list[Real], out: list[Real], doubles: int,
                feps: float, res: list[Real], jd: list[list[float]], ad: list[list[float]],
                bd: list[list[float]], xd: list[list[float]], fo: list[float],
                start: Callable[[list[float], list[float], list[list[float]]], bool],
                starting: int, xs: list[float], rs: list[float],
                js: list[list[float]], dq: list[float]) -> int:
    """Newton's method on F(x) = 0 from ``x`` (n numbers, updated in place): the one
    iteration of mpvi, run by :func:`solve_info` in every context and translated to MPFR
    C for the compiled modules (:mod:`mpvi.compiled.croutine`).

    ``both(x, r, jac)`` writes F(x) into r and dF/dx into the rows of jac,
    ``residual(x, r)`` F(x) alone; ``probe(x, r)`` is ``residual`` for a trial point of
    the damping (false where F cannot be evaluated there).  Each returns false where it
    declines (the compiled callbacks: a value the C does not take).  ``damped`` (0 or 1)
    halves the update until the residual norm decreases (:func:`solve_info`); ``one`` is
    the context's 1.  a, b, dx (n x n, n x 1, n x 1), step, trial and fr (n) are storage;
    ``out`` (3 numbers) receives the results.

    With ``doubles`` 1 each update is solved in doubles and refined to the accuracy the
    iteration needs (:func:`refined_update`, ``feps`` the doubles' epsilon 2^-52, ``res``,
    ``jd``, ``ad``, ``bd``, ``xd``, ``fo`` its storage), so that the elimination costs
    double operations instead of the context's; where doubles cannot give the update
    the iteration eliminates at the context's precision from then on.  The iterates are
    the same to the context's precision, and the stopping rule and residual check below
    are unchanged.

    With ``starting`` 1 (and no damping) the iteration first runs in doubles on the
    kernel ``start`` (:func:`double_start`, ``xs``, ``rs``, ``js`` its storage): where
    that converges, the iteration at the context's precision starts from its result and
    needs only its last iterations (the iterations counted are those at the context's
    precision).  Its first update is by the start's Jacobian in doubles
    (:func:`start_update`), J to about a double's precision at a point within the
    start's last update: from the start's error e (about 1e-16) that update gives about
    1e-16 e, with the residual alone at the context's precision, one evaluation of J
    saved.  It is taken where Newton's own first update would be solved in doubles
    unrefined (``low`` 1: no more accurate), and with fewer unknowns (the context's exact
    elimination, C e^2 for the quadratic constant C the start measured in ``dq``) unless
    Newton's update would end the iteration one update earlier: C^3 e^4 within the
    stopping target below while (64 ``feps``)^3 e is not (e the start's last update, an
    upper bound of its error, so that the doubt goes to the start's J, which costs at
    most one evaluation of the residual).  Where it cannot be taken (``js`` singular, a
    residual not finite) J is evaluated.  Where that update already passes the stopping
    rule (a root the doubles found exactly) no J is evaluated, and the residual bound
    takes the norm of ``js``.  The
    quadratic model then stops only with the next update predicted
    below 2^-20 eps ||x||: from a start in doubles (1e-16, 1e-32, 1e-64 at 64 digits) the
    model alone would stop with it predicted at eps ||x||, an iterate right to eps ||x||
    only -- an error the steps of a long run accumulate (the momenta of top2025 Table 5
    over 80,000 midpoint steps drifted to 3e-53 relative) -- where the iteration without
    the start overshoots eps by chance.

    The last update needs no new Jacobian.  Where the iteration contracts and the
    update ``dn`` after ``previous`` predicts that an update by this same J (about
    ``dn``^5 / ``previous``^4 off Newton's: the error of J's point, ``dn``, times that
    of the next iterate, ``dn``^3 / ``previous``^2, over ``previous``^2) ends within the
    stopping rule's target, the next iteration evaluates the residual alone and reuses
    J (its factors in doubles, or the context's elimination of it), and it stops on the
    model of such an update, the next one about ``dn``^2 / ``previous``: from a start in
    doubles at 64 digits (1e-16, 1e-32, then 1e-64 by the J of the 1e-32 iterate) one
    evaluation of J in three is saved; the final iterate is Newton's to about
    ``dn``^5 / ``previous``^4, far below eps ||x||.  Where that update does not pass the
    stopping rule the next one evaluates J again.

    Returns the iterations made when converged, with the final residual norm in
    ``out[0]`` and its bound in ``out[1]``; otherwise 0 (no convergence in ``max_iter``:
    the last update norm in ``out[0]``), -1 (a callback declined), -2 (no update: the
    elimination failed), -3 (a non-finite update or iterate) or -4 (converged, but the
    residual is not finite or exceeds its bound ``out[1]``); ``out[2]`` the iteration.
    """
    have = 0
    dn = one
    xn = one                                # max(||x||, scale) after the first update
    low = doubles
    if damped != 0:
        low = 0
    model = one                             # the quadratic model's margin
    reuse = 0                               # 1: this update by the last Jacobian
    started = 0                             # 1: the first update by the start's J
    fresh = 0                               # 1: jac holds a Jacobian of this solve
    wn = one
    if starting == 1 and damped == 0:
        if double_start(n, start, x, one, feps, xs, rs, js, ad, bd, xd, fo, dq) > 0:
            model = one / 1048576
            if low == 1:                    # Newton's first update, unrefined in doubles,
                started = 1                 # would be no more accurate than the start's
            elif max_norm(n, x, out):       # the start's J unless Newton's exact first
                wn = out[0]                 # update would end the iteration one update
                if scale > wn:              # earlier: the next update predicted below
                    wn = scale              # the stopping target after it (C^3 e^4), but
                cq = dq[0]                  # not after the start's (about (64 feps)^3 e)
                eq = dq[1]
                rq = 64 * feps
                target = eps * wn * model
                if one * (rq * rq * rq * eq) <= target:
                    started = 1
                elif one * (cq * cq * cq * (eq * eq) * (eq * eq)) > target:
                    started = 1
    for it in range(1, max_iter + 1):
        out[2] = it
        chord = 0                           # 1: this update by a Jacobian of another point
        if started == 1:
            started = 0
            if not residual(x, r):
                return -1
            chord = start_update(n, r, js, feps, step, ad, bd, xd, fo, out)
        elif reuse == 1:
            if not residual(x, r):
                return -1
            if low == 1:                    # jd is the last J in doubles
                chord = refined_update(n, r, jac, 0, dn, eps * xn, feps, step, res, jd, ad, bd,
                                       xd, fo, out)
            elif newton_update(n, jac, r, a, b, dx, eps, out) == n:
                for i in range(n):
                    step[i] = dx[i][0]
                chord = 1
        solved = chord
        if solved == 0:
            if not both(x, r, jac):
                return -1
            fresh = 1
            if low == 1:
                if have == 0:                 # else xn is the last iteration's
                    if not max_norm(n, x, out):
                        return -3
                    xn = out[0]
                    if scale > xn:
                        xn = scale
                prior = dn * have
                if refined_update(n, r, jac, 1, prior, eps * xn, feps, step, res, jd, ad, bd,
                                  xd, fo, out) == 1:
                    solved = 1
                else:
                    low = 0
        if solved == 0:
            if newton_update(n, jac, r, a, b, dx, eps, out) != n:
                return -2
            for i in range(n):
                step[i] = dx[i][0]
        if damped != 0 and max_norm(n, r, out):
            rn = out[0]                     # the first of 1, 1/2, ... that lowers ||F||
            lam = one
            half = one / 2
            h = 0
            while h < 64:
                for i in range(n):
                    trial[i] = x[i] + step[i] * lam
                if probe(trial, fr) and max_norm(n, fr, out) and out[0] < rn:
                    for i in range(n):
                        step[i] = step[i] * lam
                    break
                lam = lam * half
                h += 1
        for i in range(n):
            x[i] = x[i] + step[i]
        if not max_norm(n, step, out):
            return -3
        previous = dn
        dn = out[0]
        if not max_norm(n, x, out):
            return -3
        xn = out[0]
        if scale > xn:
            xn = scale
        converged = 0
        if dn <= rtol * xn:
            converged = 1
        elif have == 1:                     # quadratic convergence: the next update would
            if 2 * dn <= previous:          # be about dn^3 / previous^2; after an update
                if chord == 1:              # by an older J about dn^2 / previous
                    if dn * dn <= eps * xn * previous * model:
                        converged = 1
                elif dn ** 3 <= eps * xn * previous ** 2 * model:
                    converged = 1
        if converged == 1:
            if not residual(x, r):
                return -1
            jn = one                        # ||J||_inf, the largest row sum (from 0)
            if fresh == 1:
                for i in range(n):
                    ji = jac[i]
                    s = abs(ji[0])
                    for j in range(1, n):
                        s = s + abs(ji[j])
                    if i == 0 or s > jn:
                        jn = s
            else:                           # converged by the start's J alone: its norm
                big = feps * 0
                for i in range(n):
                    di = js[i]
                    w = abs(di[0])
                    for j in range(1, n):
                        w = w + abs(di[j])
                    if w > big:
                        big = w
                jn = one * big
            bound = n * rtol * jn * xn * slack
            out[1] = bound
            if not max_norm(n, r, out):
                return -4
            if not out[0] <= bound:
                return -4
            return it
        reuse = 0                           # the next update by this J (about
        if chord == 0 and damped == 0 and have == 1:    # dn^5 / previous^4 off Newton's)
            if 2 * dn <= previous:
                if dn ** 5 <= eps * xn * previous ** 4 * model:
                    reuse = 1
        have = 1
    out[0] = dn
    return 0


def _no_start(xs: list[float], rs: list[float], js: list[list[float]]) -> bool:
    """The ``start`` of :func:`newton_core` where there is no kernel in doubles."""
    return False


def solve_info(fun: Callable, x0, ctx, *, scale=None, rtol=None, max_iter=DEFAULT_MAX_ITER,
               what: str = "", diagnose: Callable | None = None, damped: bool = False,
               start: Callable | None = None):
    """Solve F(x) = 0 by Newton's method from ``x0`` (:func:`newton_core`).

    Parameters
    ----------
    fun : callable
        ``fun(x, True)`` returns (F(x), dF/dx) and ``fun(x, False)`` returns F(x); x, F
        are sequences of n numbers, dF/dx a sequence of n rows (lists or numpy arrays).
        ``x`` is passed as a list, or as a numpy array when ``x0`` is one.
    x0 : sequence
        The first guess.
    ctx : number context
    scale : number, optional
        The magnitude below which ||x|| is not used to relativize the update (default 1).
    rtol : number, optional
        Relative update tolerance (default 2^10 eps).
    max_iter : int
    what : str
        Names the equation in errors.
    diagnose : callable, optional
        ``diagnose(x)`` -> a sentence naming the likely cause of a failure at the
        iterate x (e.g. a non-finite potential there), or None.
    damped : bool
        Halve the update until the residual at the new iterate is finite and smaller in
        norm (at most 64 halvings, else the full update: near convergence the residual
        stalls at round-off and the stopping rule decides); for equations whose Newton
        iteration can leave the domain (a Legendre map near |v| = c).
    start : callable, optional
        ``start(xs)`` -> (residual, Jacobian rows) of the equations in doubles at the list
        of floats ``xs`` (a kernel's, :meth:`mpvi.engines.kernels.Kernel.solve`), raising
        ArithmeticError or ValueError where they cannot be evaluated: Newton's first
        iterations then run in doubles (:func:`double_start`).

    Returns
    -------
    (x, iterations, final residual norm)
        x of the type of ``x0``.  In a ball context (:class:`mpvi.ArbContext`) x is the
        enclosure proven by :func:`mpvi.numbers.arb.krawczyk` (whose error is a
        :class:`mpvi.numbers.arb.KrawczykError`).
    """
    if getattr(ctx, "verified", False):         # ball arithmetic: a proof, not an iteration
        return ctx.verified_solve(fun, x0, what=what)
    rtol = tolerance(ctx) if rtol is None else ctx.num(rtol)
    scale = ctx.one if scale is None else scale
    as_array = isinstance(x0, np.ndarray)
    dtype, zero = ctx.dtype, ctx.zero
    x = list(x0)
    n = len(x)

    def call(x, jacobian):
        return fun(np.array(x, dtype=dtype) if as_array else list(x), jacobian)

    def into(values, row, what_):
        if len(values) != n:
            raise ValueError(f"Newton: {what_} has {len(values)} entries for {n} unknowns")
        for i, v in enumerate(values):          # an int entry becomes the context's number
            row[i] = zero + v if type(v) is int else v

    def both(x, r, jac):
        res, J = call(x, True)
        into(res, r, "the residual")
        rows = J.tolist() if isinstance(J, np.ndarray) else J
        if len(rows) != n:
            raise ValueError(f"Newton: the Jacobian has {len(rows)} rows for {n} unknowns")
        for row, values in zip(jac, rows):       # into the core's rows: the caller's J is
            into(values, row, "a Jacobian row")  # neither kept nor changed
        return True

    def residual(x, r):
        into(call(x, False), r, "the residual")
        return True

    def probe(x, r):
        try:
            return residual(x, r)
        except (ArithmeticError, ValueError):
            return False

    def storage(rows, m):
        return [[None] * m for _ in range(rows)]

    def doubles(rows, m):
        return [[float(0)] * m for _ in range(rows)]

    def started(xs, rs, js):
        try:
            res, J = start(xs)
        except (ArithmeticError, ValueError):
            return False
        for i in range(n):
            rs[i] = float(res[i])
            row = js[i]
            for j, v in enumerate(J[i]):
                row[j] = float(v)
        return True

    r, jac, out = [None] * n, storage(n, n), [None] * 3
    code = newton_core(n, both, residual, probe, x, ctx.eps, rtol, scale, max_iter,
                       RESIDUAL_SLACK, 1 if damped else 0, ctx.one, r, jac, storage(n, n),
                       storage(n, 1), storage(n, 1), [None] * n, [None] * n, [None] * n, out,
                       doubles_for(n), sys.float_info.epsilon, [None] * n, doubles(n, n),
                       doubles(n, n),
                       doubles(n, 1), doubles(n, 1), [float(0)] * 2,
                       started if start is not None else _no_start,
                       1 if start is not None else 0, [float(0)] * n, [float(0)] * n,
                       doubles(n, n), [float(0)] * 2)

    def failure(message, residual_norm, iterations):
        cause = diagnose(np.array(x, dtype=dtype) if as_array else x) if diagnose else None
        return NewtonError(message, residual=residual_norm, iterations=iterations, what=what,
                           cause=cause)

    if code > 0:
        return (np.array(x, dtype=dtype) if as_array else x), code, out[0]
    it = out[2]
    if code == -2:
        raise failure(_update(jac, r, ctx)[1], _norm(r), it)
    if code == -3:
        raise failure("the residual is not finite at the iterate"
                      if not all(map(ctx.isfinite, r)) else
                      "the iteration produced a non-finite value", None, it)
    if code == -4:
        rn = _norm(r)
        raise failure(f"the update converged but the residual {_short(rn)} exceeds its "
                      f"bound {_short(out[1])} (n rtol ||J|| max(||x||, scale) "
                      f"{RESIDUAL_SLACK}): the iterate does not solve the equations", rn, it)
    if code == 0:
        error = failure(f"no convergence to the relative tolerance {_short(rtol)} "
                        f"(last update {_short(out[0])})", _norm(call(x, False)), max_iter)
        if error.cause is None:
            error.cause = _no_contraction(call, x0, out[0], max_iter, ctx)
            error.args = (error._text(),)
        raise error
    raise AssertionError(f"newton_core: status {code}")   # pragma: no cover (no decline here)


def _no_contraction(call, x0, last, max_iter, ctx):
    """The likely cause of an iteration that used its ``max_iter`` iterations: from the
    first update (recomputed at ``x0``, on the failure path only) against the ``last``.
    Updates that did not shrink by half per iteration on average (a contraction at least
    as fast as bisection) are an iteration that diverges or wanders -- the step is too
    large for the local dynamics; updates that did, but not to the tolerance, ask for more
    iterations or a looser tolerance."""
    try:
        res, J = call(list(x0), True)
        first, why = _update(J, res, ctx)
    except (ArithmeticError, ValueError, TypeError):
        first, why = None, "no first update"
    first_norm = None if why is not None else _norm(first)
    if first_norm is not None and ctx.isfinite(first_norm) and \
            last * 2 ** (max_iter - 1) <= first_norm:
        return (f"the Newton updates shrink (first {_short(first_norm)}, last {_short(last)}) "
                f"but not to the tolerance in {max_iter} iterations: raise max_iter or rtol "
                f"(newton={{'max_iter': ..., 'rtol': ...}}), or take a smaller step h")
    shown = "" if first_norm is None else f" (first {_short(first_norm)}, last {_short(last)})"
    verb = "grow" if first_norm is not None and last > first_norm else "do not contract"
    return (f"the Newton updates {verb}{shown}: the iteration diverges, the step h is too "
            f"large for the local dynamics (a fast local frequency, a stiff direction, a "
            f"singularity approached, or an orbit that escapes); take a smaller h")


def _update(J, r, ctx):
    """(the Newton update -J^-1 r, None), or (None, why there is none)."""
    rows = J.tolist() if isinstance(J, np.ndarray) else [list(row) for row in J]
    try:
        return solve_dense(rows, [-v for v in r], ctx), None
    except SingularMatrixError as e:
        if not all(ctx.isfinite(v) for row in J for v in row):
            return None, "the Jacobian is not finite at the iterate"
        return None, f"singular Jacobian ({e})"
