"""Tests of Newton's method (mpvi.numbers.newton) and of its use by the implicit schemes."""
import numpy as np
import pytest
import sympy as sp
from mpmath import mp

import mpvi
import mpvi.numbers.newton
from mpvi import MPContext, Problem, StabilityError, fp
from mpvi.model.mechanics import LagrangianSystem
from mpvi.numbers.newton import NewtonError, NewtonStats, solve, solve_info, tolerance
from mpvi.systems.double_pendulum import nonlinear_double_pendulum
from mpvi.systems.lagrange_top import table3_top

C64 = MPContext(64)
CONTEXTS = [C64, fp]
IDS = ["mp64", "fp"]


def circle_hyperbola(ctx, calls=None):
    """F(x, y) = (x^2 + y^2 - 4, x y - 1); root x = (sqrt 6 + sqrt 2)/2, y = 1/x."""
    def fun(X, jacobian):
        x, y = X
        r = np.array([x * x + y * y - 4, x * y - 1], dtype=ctx.dtype)
        if calls is not None and jacobian:
            calls.append(X.copy())
        if not jacobian:
            return r
        return r, np.array([[2 * x, 2 * y], [y, x]], dtype=ctx.dtype)
    s6, s2 = ctx.sqrt(ctx.num(6)), ctx.sqrt(ctx.num(2))
    root = np.array([(s6 + s2) / 2, (s6 - s2) / 2], dtype=ctx.dtype)
    return fun, root


def test_tolerance_is_1024_eps():
    assert tolerance(C64) == 1024 * C64.eps
    assert 1e-62 < tolerance(C64) < 1e-61
    assert tolerance(fp) == 1024 * fp.eps
    assert 2e-13 < tolerance(fp) < 3e-13


@pytest.mark.parametrize("ctx", CONTEXTS, ids=IDS)
def test_converges_to_round_off(ctx):
    fun, root = circle_hyperbola(ctx)
    stats = NewtonStats()
    x = solve(fun, ctx.asarray([2, "0.5"]), ctx, stats=stats)
    assert isinstance(x, np.ndarray)                # the type of x0
    res = ctx.norm_inf(fun(x, False))
    err = ctx.norm_inf(x - root)
    if ctx.is_mp:
        assert res <= 1e-60 and err <= 1e-60
    else:
        assert res <= 1e-13 and err <= 1e-13
    # solve_info: the same iterate, a small iteration count, and the residual *at the
    # returned point*
    x2, iterations, residual = solve_info(fun, ctx.asarray([2, "0.5"]), ctx)
    assert ctx.norm_inf(x2 - x) == 0
    assert 1 <= iterations <= (8 if ctx.is_mp else 6)
    assert residual == res
    # stats: one solve with those iterations and that residual
    assert stats.solves == 1
    assert stats.total == stats.min == stats.max == iterations
    assert stats.max_residual == res
    summary = stats.summary()
    assert summary["solves"] == 1
    assert summary["total_iterations"] == summary["max_iterations"] == iterations
    assert summary["min_iterations"] == iterations and summary["mean_iterations"] == iterations
    assert summary["max_residual"] == float(res)


def test_newton_statistics_accumulate_in_constant_memory():
    stats = NewtonStats()
    assert stats.summary() == {"solves": 0}
    for it, r in ((3, C64.num("1e-70")), (5, C64.num("-2e-65")), (4, C64.zero)):
        stats.record(it, r)
    assert (stats.solves, stats.total, stats.min, stats.max) == (3, 12, 3, 5)
    assert stats.max_residual == C64.num("2e-65")            # the largest |residual|
    summary = stats.summary()
    assert summary["mean_iterations"] == 4 and summary["max_residual"] == float(C64.num("2e-65"))
    assert mpvi.numbers.newton.summarize([3, 5, 4], [C64.num("1e-70"), C64.num("-2e-65"), C64.zero]) == summary
    assert not hasattr(stats, "__dict__")                   # O(1): no per-solve lists


def test_convergence_is_quadratic():
    """The error at least squares (up to a modest constant) from one iterate to the next,
    down to round-off: 64 digits from an error of 0.1 in at most 8 iterations."""
    calls = []
    fun, root = circle_hyperbola(C64, calls)
    x = solve(fun, C64.asarray([2, "0.5"]), C64)
    errs = [C64.norm_inf(X - root) for X in calls] + [C64.norm_inf(x - root)]
    assert errs[0] > 0.01
    assert len(calls) <= 8
    big = [e for e in errs if e > 1e-30]
    assert len(big) >= 4
    for e0, e1 in zip(big, big[1:] + [errs[len(big)]]):
        assert e1 <= 2 * e0 ** 2, (e0, e1)           # quadratic, with constant <= 2
    assert errs[-1] <= 1e-62


def test_the_convergence_test_is_relative_to_rtol():
    fun, root = circle_hyperbola(C64)
    stats = NewtonStats()
    x = solve(fun, C64.asarray([2, "0.5"]), C64, rtol="1e-20", stats=stats)
    err = C64.norm_inf(x - root)
    assert err < 1e-20
    full = NewtonStats()
    solve(fun, C64.asarray([2, "0.5"]), C64, stats=full)
    assert stats.total < full.total


@pytest.mark.parametrize("ctx", CONTEXTS, ids=IDS)
def test_no_real_root_raises_with_iterations_and_residual(ctx):
    def fun(x, jacobian):
        r = x * x + 1
        return (r, np.array([[2 * x[0]]], dtype=ctx.dtype)) if jacobian else r
    with pytest.raises(NewtonError) as info:
        solve(fun, ctx.asarray(["0.5"]), ctx, what="x^2 + 1")
    e = info.value
    assert e.iterations == mpvi.numbers.newton.DEFAULT_MAX_ITER == 50
    assert e.residual >= 1                     # |x^2 + 1| >= 1 for every real x
    msg = str(e)
    assert "after 50 iterations" in msg
    assert f"residual {float(e.residual):.3e}" in msg
    assert "x^2 + 1" in msg and "no convergence" in msg
    assert e.step is None and e.t is None
    with pytest.raises(NewtonError, match="after 7 iterations"):
        solve(fun, ctx.asarray(["0.5"]), ctx, max_iter=7)


@pytest.mark.parametrize("ctx", CONTEXTS, ids=IDS)
def test_singular_jacobian_raises(ctx):
    def fun(x, jacobian):                       # J = 0 at the start x = 0
        r = x * x - 1
        return (r, np.array([[2 * x[0]]], dtype=ctx.dtype)) if jacobian else r
    with pytest.raises(NewtonError, match="singular") as info:
        solve(fun, ctx.asarray([0]), ctx)
    assert info.value.iterations == 1
    assert info.value.residual == 1
    assert "after 1 iterations" in str(info.value)

    def rank_one(X, jacobian):                  # the two equations coincide
        r = np.array([X[0] * X[1] - 1, X[0] * X[1] - 1], dtype=ctx.dtype)
        return (r, np.array([[X[1], X[0]], [X[1], X[0]]], dtype=ctx.dtype)) if jacobian else r
    with pytest.raises(NewtonError, match="singular Jacobian"):
        solve(rank_one, ctx.asarray([2, 3]), ctx)


def test_non_finite_update_raises():
    def fun(x, jacobian):
        r = C64.asarray([C64.num("inf")])
        return (r, C64.asarray([[1]])) if jacobian else r
    with pytest.raises(NewtonError) as info:
        solve(fun, C64.asarray([0]), C64, what="F")
    assert str(info.value) == ("Newton failed (F): the residual is not finite at the iterate "
                               "[after 1 iterations]")
    assert info.value.what == "F" and info.value.iterations == 1

    def bad_jacobian(x, jacobian):
        r = C64.asarray([x[0] - 1])
        return (r, C64.asarray([["nan"]])) if jacobian else r
    with pytest.raises(NewtonError, match=r"Newton failed \(G\): the Jacobian is not finite at the "
                                          r"iterate \[after 1 iterations, residual 1\.000e\+00\]"):
        solve(bad_jacobian, C64.asarray([0]), C64, what="G")


def test_damped_newton_converges_where_plain_newton_diverges():
    """F(x) = atan x from x0 = 2: each plain Newton update overshoots farther (|x| grows
    without bound); halving the update until |F| decreases (damped=True, as the Legendre
    map uses) converges to the root 0."""
    ctx = C64
    def fun(x, jacobian):
        r = [ctx.atan(x[0])]
        return (r, [[1 / (1 + x[0] ** 2)]]) if jacobian else r
    with pytest.raises(NewtonError, match="no convergence"):
        solve_info(fun, [ctx.num(2)], ctx)
    x, iterations, residual = solve_info(fun, [ctx.num(2)], ctx, damped=True)
    assert isinstance(x, list) and abs(x[0]) <= 1e-60 and residual <= 1e-60
    assert iterations <= 10


def test_error_location_is_added_by_at():
    e = NewtonError("boom", residual=C64.num("0.25"), iterations=3, what="simpson")
    assert str(e) == "Newton failed (simpson): boom [after 3 iterations, residual 2.500e-01]"
    assert e.at(7, C64.num("1.5")) is e
    assert (e.step, e.t) == (7, C64.num("1.5"))
    assert str(e) == ("Newton failed (simpson, step 7, t = 1.500e+00): boom "
                      "[after 3 iterations, residual 2.500e-01]")


# ----- inside solve ---------------------------------------------------------------------

def blow_up_system(ctx):
    """A free particle (M = 1, V = 0) pushed by F = t v^2.  The midpoint step j reads
    p_j - g + (h/2) tau g^2 = 0 (tau = t_j + h/2, g = (q_j+1 - q_j)/h): it has a real
    solution iff 1 - 2 h tau p_j >= 0, which fails once t p has grown enough, i.e. at a
    known step j > 0."""
    q = sp.Symbol("q")
    return LagrangianSystem("blow-up", [q], sp.Matrix([[1]]), 0, {}, ctx,
                            force=lambda t, x, v: sp.Matrix([t * v[0] ** 2]))


def test_solve_reports_the_failing_step_and_time():
    ctx = C64
    problem = Problem(blow_up_system(ctx), [0], p0=[1])
    h = ctx.num(1) / 4
    with pytest.raises(NewtonError) as info:
        mpvi.solve(problem, "midpoint", h=h, n=40)
    e = info.value
    j = e.step
    assert j is not None and j > 0
    assert e.t == j * h
    assert f"step {j}, t = {float(j * h):.3e}" in str(e)
    assert "midpoint" in str(e) and f"after {e.iterations} iterations" in str(e)
    # the steps before j succeed, and at step j the equation really has no real root
    sol = mpvi.solve(problem, "midpoint", h=h, n=j)
    disc = [1 - 2 * h * (t + h / 2) * p[0] for t, p in zip(sol.t, sol.p)]
    assert all(d > 0 for d in disc[:-1])
    assert disc[-1] < 0
    # Simpson meets the same wall, also at a step > 0 (its index and time are reported)
    with pytest.raises(NewtonError, match=r"simpson, step [1-9]\d*, t = ") as info:
        mpvi.solve(problem, "simpson", h=h, n=40)
    assert info.value.t == info.value.step * h


def test_solve_reports_a_failure_at_the_first_step():
    """An absurd step (h = 50 s) for the double pendulum: solve refuses it, and when made
    to try, Simpson's Newton iteration fails at step 0."""
    dp = nonlinear_double_pendulum(C64)
    with pytest.raises(StabilityError, match=r"simpson: the step \|h\| = 5\.0+e\+1 is beyond"):
        mpvi.solve(dp, "simpson", h=50, n=3)
    with pytest.raises(NewtonError) as info:
        # check_stability=False: the test provokes Newton's failure with an absurd step
        mpvi.solve(dp, "simpson", h=50, n=3, check_stability=False)
    e = info.value
    assert (e.step, e.t) == (0, 0)
    assert "simpson, step 0, t = 0.000e+00" in str(e)


@pytest.mark.parametrize("scheme", ["simpson", "midpoint"])
def test_newton_statistics_of_a_top_run(scheme):
    """Table 3 top, h = t_bar / 20 over one nutation period t_bar = 1.84671 s."""
    top = table3_top(C64)
    h = C64.num("1.84671") / 20
    sol = mpvi.solve(top, scheme, h=h, n=20)
    st = sol.stats["newton"]
    assert st["solves"] == sol.stats["steps"] == sol.steps == 20
    assert 1 <= st["mean_iterations"] <= 10
    assert st["min_iterations"] >= 1 and st["max_iterations"] <= 10
    assert st["total_iterations"] == round(st["mean_iterations"] * 20)
    assert st["max_residual"] <= 1e-58


def test_explicit_schemes_have_no_newton_statistics():
    dp = nonlinear_double_pendulum(C64)
    sol = mpvi.solve(dp, "rk4", h="0.01", n=3)
    assert "newton" not in sol.stats
    with pytest.raises(ValueError, match="'rk4' solves no Newton equations"):
        mpvi.solve(dp, "rk4", h="0.01", n=3, newton={"max_iter": 5})


def test_newton_options_reach_the_solver_through_solve():
    """``newton=dict(max_iter=...)`` is passed to every Newton solve of the scheme."""
    ctx = MPContext(64)
    top = table3_top(ctx)
    h = ctx.num("1.8472389815") / 20
    with pytest.raises(NewtonError, match=r"step 0.*after 2 iterations"):
        mpvi.solve(top, "simpson", h=h, n=3, newton={"max_iter": 2})
    sol = mpvi.solve(top, "midpoint", h=h, n=3, newton={"max_iter": 20})
    assert sol.stats["newton"]["solves"] == 3
    with pytest.raises(ValueError, match="unknown Newton option"):
        mpvi.solve(top, "simpson", h=h, n=3, newton={"maxiter": 2})


def _linear_system(ctx, a_rows, rhs):
    """F(x) = A x - b with A's rows ``a_rows`` (the context's numbers): Newton's first
    update is the exact solve, so its accuracy is the linear solve's."""
    n = len(a_rows)

    def fun(X, jacobian):
        r = [sum((a_rows[i][j] * X[j] for j in range(n)), ctx.zero) - rhs[i] for i in range(n)]
        return (r, [list(row) for row in a_rows]) if jacobian else r
    return fun


@pytest.mark.parametrize("dps", [30, 64, 300])
def test_updates_solved_in_doubles_reach_the_contexts_precision(dps, monkeypatch):
    """The update is solved in doubles and refined (refined_update): the root is right to
    the context's precision (not to a double's), and the context's elimination is not run
    for a well-conditioned J."""
    ctx = mpvi.get_context("gmp", dps)
    monkeypatch.setattr(mpvi.numbers.newton, "DOUBLES_FROM", 2)
    eliminations = []
    real = mpvi.numbers.newton.gauss_eliminate

    def counted(n, m, a, b, x, eps, out):
        eliminations.append(type(eps) is float)
        return real(n, m, a, b, x, eps, out)
    monkeypatch.setattr(mpvi.numbers.newton, "gauss_eliminate", counted)
    fun, root = circle_hyperbola(ctx)
    x, iterations, _ = solve_info(lambda X, jac: fun(np.array(X, dtype=object), jac),
                                  [ctx.num(2), ctx.num(1) / 2], ctx)
    err = max(abs(a - b) for a, b in zip(x, root))
    assert err <= 8 * ctx.eps, (dps, err)
    assert eliminations and all(eliminations)        # every solve in doubles
    assert iterations <= 6 + dps // 50                # still quadratic


def test_an_ill_conditioned_jacobian_falls_back_to_the_contexts_elimination(monkeypatch):
    """Hilbert's 12 x 12 matrix (condition 1.7e16): doubles cannot solve with it, the
    refinement stops shrinking, and the context's elimination gives the exact solution
    of H x = H 1 (x = 1) to 64 digits."""
    ctx = mpvi.get_context("gmp", 64)
    n = 12
    hilbert = [[ctx.one / (i + j + 1) for j in range(n)] for i in range(n)]
    rhs = [sum(row, ctx.zero) for row in hilbert]
    kinds = []
    real = mpvi.numbers.newton.gauss_eliminate

    def counted(n_, m, a, b, x, eps, out):
        kinds.append("double" if type(eps) is float else "context")
        return real(n_, m, a, b, x, eps, out)
    monkeypatch.setattr(mpvi.numbers.newton, "gauss_eliminate", counted)
    x, _, _ = solve_info(_linear_system(ctx, hilbert, rhs), [ctx.zero] * n, ctx)
    assert "context" in kinds
    assert max(abs(v - 1) for v in x) < ctx.num(10) ** -45     # cond 1.7e16 of 1e-64


def test_only_systems_of_six_unknowns_or_more_solve_their_updates_in_doubles(monkeypatch):
    """Below DOUBLES_FROM unknowns the context's elimination is the cheaper one; from it on
    the updates are solved in doubles, in Python and in the compiled C alike (the C's
    DOUBLES is doubles_for(N))."""
    from mpvi.compiled import cmodules
    assert [mpvi.numbers.newton.doubles_for(n) for n in (1, 4, 5, 6, 32)] == [0, 0, 0, 1, 1]
    for n in (5, 6):
        source = cmodules.translate_newton("probe", *_kernel_sources(n), 216, n, 0, 0)
        assert f"#define DOUBLES {int(n >= 6)}" in source
    kinds = []
    real = mpvi.numbers.newton.gauss_eliminate

    def counted(n, m, a, b, x, eps, out):
        kinds.append((n, type(eps) is float))
        return real(n, m, a, b, x, eps, out)
    monkeypatch.setattr(mpvi.numbers.newton, "gauss_eliminate", counted)
    ctx = mpvi.get_context("gmp", 30)
    for n in (5, 6):
        a_rows = [[ctx.num(n + 1 if i == j else 1) for j in range(n)] for i in range(n)]
        rhs = [sum(row, ctx.zero) for row in a_rows]
        x, _, _ = solve_info(_linear_system(ctx, a_rows, rhs), [ctx.zero] * n, ctx)
        assert max(abs(v - 1) for v in x) <= 8 * ctx.eps
    assert {k for k in kinds if k[0] == 5} == {(5, False)}
    assert {k for k in kinds if k[0] == 6} == {(6, True)}


def _kernel_sources(n):
    """(sources, constant names) of the Newton kernel of x_i^2 = 2, i < n."""
    xs = sp.symbols(f"x0:{n}")
    kernel = mpvi.engines.kernels.Kernel(list(xs), [], [], [x ** 2 - 2 for x in xs],
                                         mpvi.GMPContext(64))
    return kernel.sources, kernel.constant_names


@pytest.mark.parametrize("scale, j_out_of_range", [("1e-400", True), ("1e400", True),
                                              ("1e-400", False), ("1e400", False)])
def test_updates_in_doubles_keep_the_contexts_exponent_range(scale, j_out_of_range, monkeypatch):
    """Residuals far outside a double's range (1e-400, 1e400): with J of order 1 the
    right-hand side is scaled by its norm before it is rounded to doubles (unscaled, 1e-400
    would round to 0 and "converge" at once); with J itself out of range, the context
    eliminates.  Either way the root s (1, 1) is found to the context's precision."""
    monkeypatch.setattr(mpvi.numbers.newton, "DOUBLES_FROM", 2)
    ctx = mpvi.get_context("gmp", 64)
    s = ctx.num(scale)
    k = s if j_out_of_range else ctx.one
    a_rows = [[2 * k, k], [k, 3 * k]]
    rhs = [3 * k * s, 4 * k * s]                  # root (s, s)
    x, _, _ = solve_info(_linear_system(ctx, a_rows, rhs), [ctx.zero, ctx.zero], ctx)
    assert max(abs(v / s - 1) for v in x) <= 8 * ctx.eps


@pytest.mark.parametrize("n", [3, 6])
@pytest.mark.parametrize("dps", [30, 64])
def test_the_last_update_reuses_the_jacobian_and_keeps_the_root(n, dps):
    """Newton's last update is by the Jacobian of the iteration before (newton_core's
    reuse): on x_i^3 + x_i = c_i (coupled to the next unknown) from a first guess 5 %
    off, each solve evaluates J one time fewer than it iterates and the residual alone
    twice (the last update, the final check), with the context's elimination (3 unknowns)
    and with the updates in doubles (6); the root is mpmath's findroot at twice the digits
    to within a few eps."""
    ctx = mpvi.get_context("gmp", dps)
    c = [ctx.num(2 + i) / 3 for i in range(n)]
    calls = {True: 0, False: 0}

    def fun(X, jacobian):
        calls[bool(jacobian)] += 1
        r = [X[i] ** 3 + X[i] + X[(i + 1) % n] / 4 - c[i] for i in range(n)]
        if not jacobian:
            return r
        J = [[ctx.zero] * n for _ in range(n)]
        for i in range(n):
            J[i][i] = 3 * X[i] ** 2 + 1
            J[i][(i + 1) % n] += ctx.num(1) / 4
        return r, J
    x, iterations, _ = solve_info(fun, [ctx.num("1.05") * v for v in c], ctx)
    assert iterations >= 4
    assert calls == {True: iterations - 1, False: 2}
    with mp.workdps(2 * dps):
        exact = mp.findroot(lambda *X: [X[i] ** 3 + X[i] + X[(i + 1) % n] / 4
                                        - mp.mpf(2 + i) / 3 for i in range(n)],
                            [mp.mpf(1)] * n)
        got = [mp.mpf(v.as_integer_ratio()[0]) / v.as_integer_ratio()[1] for v in x]
        assert max(abs(got[i] - exact[i]) / abs(exact[i]) for i in range(n)) \
            <= 4 * mp.mpf(2) ** -ctx.prec


def _cubic_chain(ctx, n, calls, d=1):
    """x_i^3 / d + x_i + x_{i+1} / 4 = (2 + i) / 3 (indices mod n) in the context ``ctx``,
    as ``fun(X, jacobian)``, and in doubles as a ``start``, each counting its calls into
    ``calls`` (True: with J, False: the residual alone, "start": in doubles)."""
    c = [ctx.num(2 + i) / 3 for i in range(n)]

    def fun(X, jacobian):
        calls[bool(jacobian)] += 1
        r = [X[i] ** 3 / d + X[i] + X[(i + 1) % n] / 4 - c[i] for i in range(n)]
        if not jacobian:
            return r
        J = [[ctx.zero] * n for _ in range(n)]
        for i in range(n):
            J[i][i] = 3 * X[i] ** 2 / d + 1
            J[i][(i + 1) % n] += ctx.num(1) / 4
        return r, J

    def start(xs):
        calls["start"] += 1
        r = [xs[i] ** 3 / d + xs[i] + xs[(i + 1) % n] / 4 - (2 + i) / 3 for i in range(n)]
        J = [[0.0] * n for _ in range(n)]
        for i in range(n):
            J[i][i] = 3 * xs[i] ** 2 / d + 1
            J[i][(i + 1) % n] += 0.25
        return r, J
    return fun, start


def _cubic_root(n, dps, d=1):
    """The root of :func:`_cubic_chain` by mpmath's findroot at ``dps`` digits."""
    with mp.workdps(dps):
        return mp.findroot(lambda *X: [X[i] ** 3 / d + X[i] + X[(i + 1) % n] / 4
                                       - mp.mpf(2 + i) / 3 for i in range(n)],
                           [mp.mpf(1) / 2] * n)


def _near(ctx, exact):
    """A first guess 0.1 % to 0.6 % off ``exact``."""
    return [ctx.num(str(v * (1 + mp.mpf(i + 1) / 1000))) for i, v in enumerate(exact)]


@pytest.mark.parametrize("dps", [30, 64, 150])
def test_the_first_update_after_a_start_in_doubles_is_by_the_starts_jacobian(dps):
    """After Newton's start in doubles (double_start) the first update at the context's
    precision is by the start's Jacobian in doubles (start_update) where Newton's own
    first update would be solved in doubles unrefined (6 unknowns): one evaluation per
    iteration (J, or the residual alone) and the final check, J at most iterations - 1
    times; at 64 digits J once in three iterations (1e-16 by the start, 1e-32 by its J,
    1e-64 by J, the last update by that J).  The root is mpmath's findroot at twice the
    digits to within a few eps, as from Newton's own updates."""
    n, ctx = 6, mpvi.get_context("gmp", dps)
    exact = _cubic_root(n, 2 * dps)
    calls = {True: 0, False: 0, "start": 0}
    fun, start = _cubic_chain(ctx, n, calls)
    x, iterations, _ = solve_info(fun, _near(ctx, exact), ctx, start=start)
    assert calls["start"] >= 2                     # the start converged in doubles
    assert calls[True] + calls[False] == iterations + 1
    assert 1 <= calls[True] <= iterations - 1
    if dps == 64:
        assert (iterations, calls[True], calls[False]) == (3, 1, 3)
    with mp.workdps(2 * dps):
        got = [mp.mpf(v.as_integer_ratio()[0]) / v.as_integer_ratio()[1] for v in x]
        assert max(abs(got[i] - exact[i]) / abs(exact[i]) for i in range(n)) \
            <= 4 * mp.mpf(2) ** -ctx.prec


@pytest.mark.parametrize("d, by_start", [(1, True), (100, True), (10 ** 4, False)])
def test_few_unknowns_take_the_starts_jacobian_unless_newtons_update_ends_sooner(
        d, by_start, monkeypatch):
    """With 3 unknowns Newton's first update is exact (the context's elimination): it
    takes an error e to about C e^2, the start's J to about 1e-16 e.  The start's J is
    taken unless Newton's update would end the iteration one update earlier (C^3 e^4
    below the stopping target, C the quadratic constant the start measured): the cubic
    chain (C about 1) and one with the cubic term 100 times smaller take it (Newton from
    the start needs three iterations on both, two of them with J), one with the cubic term
    10^4 times smaller (a nearly linear field, as Kepler's) evaluates J for its first
    update, as before, and converges in two.  Either way the root is findroot's to a few
    eps at 64 digits."""
    n, ctx = 3, mpvi.get_context("gmp", 64)
    exact = _cubic_root(n, 128, d)
    calls = {True: 0, False: 0, "start": 0}
    fun, start = _cubic_chain(ctx, n, calls, d)
    used = []
    real = mpvi.numbers.newton.start_update
    monkeypatch.setattr(mpvi.numbers.newton, "start_update",
                        lambda *a: used.append(1) or real(*a))
    x, iterations, _ = solve_info(fun, _near(ctx, exact), ctx, start=start)
    assert calls["start"] >= 2 and len(used) == int(by_start)
    if by_start:
        assert (iterations, calls[True], calls[False]) == (3, 1, 3)
    else:
        assert (iterations, calls[True], calls[False]) == (2, 2, 1)
    with mp.workdps(128):
        got = [mp.mpf(v.as_integer_ratio()[0]) / v.as_integer_ratio()[1] for v in x]
        assert max(abs(got[i] - exact[i]) / abs(exact[i]) for i in range(n)) \
            <= 4 * mp.mpf(2) ** -ctx.prec


def test_a_root_the_start_in_doubles_finds_exactly_needs_no_jacobian(monkeypatch):
    """A root that doubles represent exactly (A x = b, x = (1, 2), the updates in doubles
    from 2 unknowns): the start finds it, the residual there is 0, the update by the
    start's J is 0, and the solve converges after one iteration without evaluating J at
    the context's precision; the residual bound uses the norm of the start's J (the
    residual 0 meets it)."""
    monkeypatch.setattr(mpvi.numbers.newton, "DOUBLES_FROM", 2)
    ctx = mpvi.get_context("gmp", 64)
    k = ctx.one
    linear = _linear_system(ctx, [[2 * k, k], [k, 3 * k]], [4 * k, 7 * k])
    calls = {True: 0, False: 0}

    def fun(X, jacobian):
        calls[bool(jacobian)] += 1
        return linear(X, jacobian)

    def start(xs):
        return [2 * xs[0] + xs[1] - 4, xs[0] + 3 * xs[1] - 7], [[2.0, 1.0], [1.0, 3.0]]
    x, iterations, residual = solve_info(fun, [ctx.zero, ctx.zero], ctx, start=start)
    assert x == [1, 2] and iterations == 1 and residual == 0
    assert calls == {True: 0, False: 2}


def test_record_all_is_record_in_turn():
    """NewtonStats.record_all (a batch of compiled steps) gives record's summary, a nan
    residual and a larger one after it included."""
    import gmpy2
    from mpvi.numbers.newton import NewtonStats
    nan = gmpy2.mpfr("nan")
    for its, res in [([3, 2, 4], [gmpy2.mpfr(1), nan, gmpy2.mpfr(7)]), ([1], [nan]),
                     ([2, 3], [gmpy2.mpfr(5), gmpy2.mpfr(-9)]), ([], [])]:
        bulk, one = NewtonStats(), NewtonStats()
        for stats in (bulk, one):
            stats.record(5, gmpy2.mpfr(5))
        bulk.record_all(its, res)
        for i, r in zip(its, res):
            one.record(i, r)
        assert bulk.summary() == one.summary()
