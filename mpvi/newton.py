"""Newton's method for the implicit schemes, with tolerances from the number context.

``solve(residual, jacobian, x0, ctx)`` iterates  x <- x - J(x)^-1 F(x)  and stops when the
update is at the round-off level of the context:

    ||dx||_inf <= tol,    tol = rtol * max(||x||_inf, scale),    rtol = 2^10 * ctx.eps

(about 2e-61 at 64 digits, 2e-13 in float64), or -- saving one iteration -- when the
iteration is contracting (||dx_k|| <= ||dx_k-1|| / 2) and the quadratic model predicts
the next update ||dx_k||^3 / ||dx_k-1||^2 <= eps * max(||x||_inf, scale).  The residual at the returned point is
evaluated (one more F call) and recorded, so the claim is checked, not assumed.  Nothing here is a fixed ``1e-14``.

On failure (iteration limit, a non-finite value, a singular Jacobian) a
:class:`NewtonError` names the residual norm, the iteration count and -- once the driver
has added them -- the step index and time.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .context import SingularMatrixError

DEFAULT_MAX_ITER = 50


class NewtonError(ArithmeticError):
    """Newton's method did not converge.  Attributes: residual, iterations, step, t."""

    def __init__(self, message, residual=None, iterations=None, step=None, t=None, what=""):
        self.message, self.residual, self.iterations = message, residual, iterations
        self.step, self.t, self.what = step, t, what
        super().__init__(self._text())

    def _text(self):
        where = []
        if self.what:
            where.append(self.what)
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
        return f"{head}: {self.message}" + (f" [{', '.join(tail)}]" if tail else "")

    def at(self, step, t):
        """The same error, located at ``step`` (index j of the step j -> j+1) and time t."""
        self.step, self.t = step, t
        self.args = (self._text(),)
        return self


def _short(x):
    try:
        return f"{float(x):.3e}"
    except (TypeError, ValueError, OverflowError):
        return str(x)


@dataclass
class NewtonStats:
    """Per-solve iteration counts and final residuals (kept in ``Trajectory.stats``)."""

    iterations: list = field(default_factory=list)
    residuals: list = field(default_factory=list)

    def record(self, iterations, residual):
        self.iterations.append(iterations)
        self.residuals.append(residual)

    def summary(self):
        return summarize(self.iterations, self.residuals)


def summarize(iterations, residuals):
    """Solves, total/mean/max/min iterations and the largest final residual norm of a
    sequence of Newton solves (``{"solves": 0}`` for none)."""
    if not iterations:
        return {"solves": 0}
    n = len(iterations)
    return {
        "solves": n,
        "total_iterations": sum(iterations),
        "mean_iterations": sum(iterations) / n,
        "max_iterations": max(iterations),
        "min_iterations": min(iterations),
        "max_residual": float(max(abs(r) for r in residuals)),
    }


def tolerance(ctx):
    """Relative update tolerance 2^10 eps of the context."""
    return ctx.eps * 1024


OPTIONS = ("max_iter", "rtol", "scale")
"""The Newton options a scheme accepts (``integrate(..., newton={...})``)."""


def check_options(newton):
    """The Newton options dict, validated (``ValueError`` naming unknown keys)."""
    newton = dict(newton or {})
    unknown = set(newton) - set(OPTIONS)
    if unknown:
        raise ValueError(f"unknown Newton option(s) {sorted(unknown)}; use {', '.join(OPTIONS)}")
    return newton


def solve(fun, x0, ctx, *, stats=None, **options):
    """Solve F(x) = 0 by Newton's method from ``x0``; returns x (see :func:`solve_info`).
    ``stats`` (a :class:`NewtonStats`) receives (iterations, final residual norm)."""
    x, iterations, residual = solve_info(fun, x0, ctx, **options)
    if stats is not None:
        stats.record(iterations, residual)
    return x


def solve_info(fun, x0, ctx, *, scale=None, rtol=None, max_iter=DEFAULT_MAX_ITER, what=""):
    """Solve F(x) = 0 by Newton's method from ``x0``; returns (x, iterations, final
    residual norm).

    ``fun(x, True)`` returns (F(x), dF/dx) and ``fun(x, False)`` returns F(x) (context
    arrays; one call gives both because the schemes share the work).  ``scale`` is the
    magnitude below which ||x|| is not used to relativize the update (default 1).
    """
    rtol = tolerance(ctx) if rtol is None else ctx.num(rtol)
    scale = ctx.one if scale is None else scale
    x = x0
    dn = None
    for it in range(1, max_iter + 1):
        r, J = fun(x, True)
        try:
            dx = ctx.solve(J, -r)
        except SingularMatrixError as e:
            raise NewtonError(f"singular Jacobian ({e})", residual=ctx.norm_inf(r),
                              iterations=it, what=what) from None
        x = x + dx
        previous, dn = dn, ctx.norm_inf(dx)
        if not ctx.isfinite(dn):
            raise NewtonError("the iteration produced a non-finite value", iterations=it, what=what)
        xn = max(ctx.norm_inf(x), scale)
        bound = rtol * xn
        # quadratic convergence: the next update would be about dn^3 / previous^2
        if dn <= bound or (previous is not None and 2 * dn <= previous
                           and dn ** 3 <= ctx.eps * xn * previous ** 2):
            return x, it, ctx.norm_inf(fun(x, False))
    raise NewtonError(f"no convergence to the relative tolerance {_short(rtol)} "
                      f"(last update {_short(dn)})", residual=ctx.norm_inf(fun(x, False)),
                      iterations=max_iter, what=what)

