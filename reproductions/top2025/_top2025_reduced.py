"""top2025 Sec. 4.3, the cusp motion of the Table 6 top (eqs. 18ab-18aq): Figs. 12-14.

The reduced system y = (phi, theta, xi = theta') is a first-order system
(:class:`mpvi.FirstOrderSystem`), not a mechanical one: its :class:`mpvi.Problem`
(:func:`reduced_problem`) is solved with RK4 or GBS, and the solution's ``q`` is the
state y.  Both the complete system (phi, theta, psi) and the reduced one go through
``run.solve`` (Newton statistics of the implicit runs, progress lines of the long ones).
Step sizes are kept as exact fractions in the parameter sets so that the nodes of two
runs are matched by an integer stride (:func:`mpvi.repro.studies.steps`).
"""
from fractions import Fraction

from mpvi import Problem, Progress
from mpvi.engines.ode import gbs_step
from mpvi.repro.studies import PROGRESS_STEPS
from mpvi.systems.lagrange_top import table6_top

from mpvi_papers.top2025._top2025_top import reference_context

GBS_LEVELS = 16
"""GBS extrapolation depth for the references (order 2 * 16 = 32, mpvi.engines.ode)."""

GBS_PROGRESS_STEPS = 100
"""Reduced GBS runs of at least this many steps print progress (a GBS step of order 32
costs about as much as a few hundred RK4 steps)."""


def cusp_top(ctx):
    """Table 6 top (cusps) -- the complete system's :class:`mpvi.Problem`; ``.reduced()``
    gives the system of eqs. (18aq)."""
    return table6_top(ctx)


def reduced_problem(top):
    """The :class:`mpvi.Problem` of the reduced system (18aq) of ``top`` from (phi0,
    theta0, xi0)."""
    return Problem(top.reduced(), top.reduced_state0())


def cusp_exact(ctx):
    """(nutation period 2 omega_1, theta_max) of the Table 6 top from the exact Weierstrass
    solution, as numbers of ``ctx``: computed at the context's precision, or for float64
    in :func:`mpvi_papers.top2025._top2025_top.reference_context` and rounded."""
    mp = reference_context(ctx)
    nut = cusp_top(mp).nutation()
    return ctx.num(+nut.period), ctx.num(mp.acos(nut.roots[0]))


def solve_reduced(run, problem, method, h, n, levels=GBS_LEVELS):
    """``run.solve`` of the reduced problem (:func:`reduced_problem`) with ``method``
    ('rk4' or 'gbs' of order 2 ``levels``), with a progress line for long runs.  ``h`` is
    a Fraction or a context number."""
    ctx = run.ctx
    hh = ctx.num(h) if isinstance(h, Fraction) else h
    heavy = n >= (PROGRESS_STEPS if method == "rk4" else GBS_PROGRESS_STEPS)
    bar = Progress(f"reduced {method} n={n}", run.stream) if heavy else None
    params = {"levels": levels} if method == "gbs" else {}
    return run.solve(problem, method, h=hh, n=n, progress=bar, **params)


def max_abs_diff(a, b):
    """max_j |a_j - b_j| over two equally long sequences."""
    if len(a) != len(b):
        raise ValueError(f"sequences of different length ({len(a)} and {len(b)})")
    return max(abs(x - y) for x, y in zip(a, b))


def tip_path(ctx, phi, theta):
    """Tip of the unit symmetry axis in the fixed frame (ZXZ Euler angles, Fig. 6): the
    body z axis is (sin th sin phi, -sin th cos phi, cos th); returns lists x, y, z."""
    x, y, z = [], [], []
    for f, th in zip(phi, theta):
        s = ctx.sin(th)
        x.append(s * ctx.sin(f))
        y.append(-s * ctx.cos(f))
        z.append(ctx.cos(th))
    return x, y, z


def turning_points(ctx, system, sol, which="min", levels=GBS_LEVELS, max_iter=20):
    """Turning points of the nutation on a solution of the reduced system (its state
    ``sol.q`` is y = (phi, theta, xi)).

    A sign change of xi = theta' between nodes j and j+1 (``which='min'``: - to +, a
    smallest theta, i.e. the highest point of the axis; ``'max'``: + to -) is refined by
    Newton's method on the time offset d: xi(t_j + d) = 0, where y(t_j + d) is one GBS
    step of size d from node j and d xi/dt is the right-hand side.  Returns a list of dicts
    {j, t, y, rhs, iterations}: y and rhs = (phi', theta', xi') at the turning point."""
    f = system.field()
    Y = sol.q
    out = []
    for j in range(len(sol.t) - 1):
        a, b = Y[j][2], Y[j + 1][2]
        hit = (a < 0 <= b) if which == "min" else (a > 0 >= b)
        if not hit:
            continue
        t, y0 = sol.t[j], list(Y[j])
        H = sol.t[j + 1] - t
        d = -a / f(t, y0)[2]
        last = None
        for it in range(1, max_iter + 1):
            y = gbs_step(f, t, y0, d, levels, ctx)
            delta = y[2] / f(t + d, y)[2]
            d -= delta
            # quadratic convergence down to the noise of the GBS step (~1e-57 at 64
            # digits): stop at the round-off level or once the updates stop halving
            if abs(delta) <= 64 * ctx.eps * H or (last is not None and abs(delta) > last / 2):
                break
            last = abs(delta)
        y = gbs_step(f, t, y0, d, levels, ctx)
        fy = f(t + d, y)
        out.append({"j": j, "t": t + d, "y": y, "rhs": fy, "iterations": it})
    return out


# ----- certified runs against the exact nutation (mpvi run --certify) ------------------------

CUSP_STATEMENT = (
    "Each theta deviation is an Arb enclosure of max_n |theta_n - theta_ex(t_n)| with "
    "theta_n a method's exact discrete trajectory on the complete Table 6 top (mpvi.certify, "
    "rounding excluded) and theta_ex the exact Weierstrass-P nutation of the same data "
    "(LagrangeTopNutation.enclose) at the exact nodes t_n = n h: the exact solution backs "
    "the paper's numerical references (RK4 at a small step, GBS), whose recorded deviations "
    "agree with these enclosures to the proven digits.  RK4 on the reduced system (18aq) "
    "is certified as RK4 on the complete system: the two exact discrete trajectories are "
    "the same in (phi, theta) (a Runge-Kutta method conserves the linear invariants p_phi, "
    "p_psi exactly and commutes with the linear change p_theta = I xi, and the (phi, theta, "
    "p_theta) equations do not involve psi), from the same binary data but A = m g l / I, "
    "rounded once in the reduced system (mpvi.certify does not walk first-order systems "
    "yet).  Orders are least-squares or successive slopes of the enclosed log errors.  The "
    "data are those the run used as binary numbers: g = 9.81, l = 4 pi^2/g, theta0 = pi/6, "
    "psi'0 = 2 pi rounded to the run's digits, h rounded.")

_CUSP_RUNS = {}
"""The results of :func:`certified_cusp_run` in this process."""


def certified_cusp_run(ctx, method, h, n):
    """``(h, certificate, [theta_ex(t_j)])``: ``method`` ('midpoint', 'rk4', 'simpson') on
    the complete Table 6 top over ``n`` steps of ``h`` (a Fraction), solved, certified
    complete (:func:`mpvi.repro.certified.certified_run`), and the exact nutation enclosed
    at the exact nodes j h of the step the run took (:data:`CUSP_STATEMENT`).  At the run's
    digits plus guard digits inside.  Kept for the process."""
    from mpvi import solve
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision, exact_rational
    from mpvi.repro.certified import certified_run
    key = (type(ctx).__name__, ctx.dps, method, Fraction(h), n)
    if key not in _CUSP_RUNS:
        with ctx.active(), arb_precision(ctx.dps + GUARD_DIGITS):
            top = cusp_top(ctx)
            sol = solve(top, method, h=ctx.num(Fraction(h)), n=n)
            cert = certified_run(sol, f"top2025 Table 6 top, {method}, h = {h}, {n} steps")
            hq = exact_rational(sol.h, "h")
            nutation = top.nutation()
            exact = [nutation.enclose(j * hq, ctx.dps)["theta"] for j in range(n + 1)]
            _CUSP_RUNS[key] = (hq, cert, exact)
    return _CUSP_RUNS[key]


def cusp_amplitude(ctx):
    """An enclosure of theta_max - theta0 of the Table 6 top (the run's data): the exact
    nutation at half its enclosed period, minus the run's theta0 (exactly)."""
    from mpvi.numbers.arb import ArbContext
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    with ctx.active(), arb_precision(ctx.dps + GUARD_DIGITS):
        top = cusp_top(ctx)
        nutation = top.nutation()
        half = nutation.enclose_period(ctx.dps) / 2
        return (nutation.enclose(half, ctx.dps)["theta"]
                - ArbContext(ctx.dps + GUARD_DIGITS).lift(top.q0[1]))
