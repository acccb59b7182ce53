"""Tests of the first-order ODE tools (mpvi.engines.ode): RK4, the Gragg-Bulirsch-Stoer reference
and the "gbs" scheme built on them, through mpvi.solve on first-order and mechanical
problems."""
import numpy as np
import pytest

from mpvi import MPContext, Problem, error_norms, fit_order, fp, solve
from mpvi.model.first_order import FirstOrderSystem
from mpvi.engines.ode import gbs_step, hamiltonian_field, rk4_step
from mpvi.systems.double_pendulum import linearized_double_pendulum, nonlinear_double_pendulum

C64 = MPContext(64)
C40 = MPContext(40)


def oscillator(ctx):
    """y = (q, q'), y' = (q', -q): q = cos t for y(0) = (1, 0)."""
    return FirstOrderSystem("harmonic oscillator",
                            lambda t, y: np.array([y[1], -y[0]], dtype=ctx.dtype), 2, ctx,
                            labels=("q", "v"))


def oscillator_error(sol):
    """max_j |y_j - (cos t_j, -sin t_j)| (a first-order solution has its state in .q)."""
    ctx = sol.ctx
    return max(abs(y[0] - ctx.cos(t)) + abs(y[1] + ctx.sin(t)) for t, y in zip(sol.t, sol.q))


def assert_order(ctx, hs, errs, expected, tol):
    """The least-squares order and every pairwise order are within ``tol`` of ``expected``."""
    pairwise = [ctx.log(errs[i] / errs[i + 1]) / ctx.log(hs[i] / hs[i + 1])
                for i in range(len(hs) - 1)]
    for o in pairwise + [fit_order(ctx, hs, errs)]:
        assert abs(o - expected) < tol, (pairwise, errs)


def gaussian(ctx):
    """y' = -2 t y (time-dependent): y = exp(-t^2) for y(0) = 1."""
    return FirstOrderSystem("gaussian", lambda t, y: np.array([-2 * t * y[0]], dtype=ctx.dtype),
                            1, ctx)


# ----- RK4 ---------------------------------------------------------------------------------

def test_rk4_step_order_4():
    ctx = MPContext(30)
    system = gaussian(ctx)
    f = system.field()                     # the right-hand side on lists
    # local error O(h^5): one step from t = 1/2
    t0 = ctx.num(1) / 2
    y0 = [ctx.exp(-t0 * t0)]
    local = [abs(rk4_step(f, t0, y0, h)[0] - ctx.exp(-(t0 + h) ** 2))
             for h in (ctx.num(1) / 10, ctx.num(1) / 20)]
    assert 4.8 < ctx.log(local[0] / local[1]) / ctx.log(2) < 5.2
    # global error O(h^4)
    problem = Problem(system, [1])
    T, hs, errs = ctx.num(2), [], []
    for N in (20, 40, 80):
        sol = solve(problem, "rk4", h=T / N, n=N)
        assert sol.state == "y" and sol.q.shape == (N + 1, 1)
        errs.append(max(abs(y[0] - ctx.exp(-t * t)) for t, y in zip(sol.t, sol.q)))
        hs.append(T / N)
    assert_order(ctx, hs, errs, 4, 0.2)


def test_rk4_step_is_the_classical_tableau():
    """On y' = t^3 (y-independent) RK4 is Simpson's rule: exact for cubics."""
    ctx = C64
    f = lambda t, y: [t ** 3]
    y1 = rk4_step(f, ctx.num(1), [ctx.zero], ctx.num(2))
    assert isinstance(y1, list)
    assert abs(y1[0] - (ctx.num(3) ** 4 - 1) / 4) < 1e-62


# ----- GBS ----------------------------------------------------------------------------------

@pytest.mark.parametrize("levels,ctx", [(2, fp), (3, fp), (4, C40)], ids=["2-fp", "3-fp", "4-mp40"])
def test_gbs_order_is_twice_the_levels(levels, ctx):
    """y'' = -y over [0, 2] with N = 8, 16, 32 steps (levels 4 in float64 would hit
    round-off at N = 32, hence 40 digits)."""
    problem = Problem(oscillator(ctx), [1, 0])
    T, hs, errs = ctx.num(2), [], []
    for N in (8, 16, 32):
        sol = solve(problem, "gbs", h=T / N, n=N, levels=levels)
        assert sol.params["levels"] == levels
        errs.append(oscillator_error(sol))
        hs.append(T / N)
    assert_order(ctx, hs, errs, 2 * levels, 0.1)


def test_gbs_reaches_1e55_at_64_digits():
    ctx = C64
    N = 32
    problem = Problem(oscillator(ctx), [1, 0])
    sol = solve(problem, "gbs", h=2 * ctx.pi / N, n=N, levels=16)
    assert oscillator_error(sol) <= 1e-55
    # while the order-8 extrapolation at the same step is far off
    low = solve(problem, "gbs", h=2 * ctx.pi / N, n=N, levels=4)
    assert oscillator_error(low) > 1e-15


def test_gbs_passes_the_time():
    """y' = cos t: the extrapolated value is sin(t0 + H) only if the substeps see t."""
    ctx = C64
    t0, H = ctx.num("0.3"), ctx.num("0.2")
    y1 = gbs_step(lambda t, y: [ctx.cos(t)], t0, [ctx.sin(t0)], H, 16, ctx)
    assert abs(y1[0] - ctx.sin(t0 + H)) < 1e-60
    system = FirstOrderSystem("sin", lambda t, y: np.array([ctx.cos(t)], dtype=object), 1, ctx)
    sol = solve(Problem(system, [ctx.sin(t0)], t0=t0), "gbs", h=H, n=5)
    assert sol.t[0] == t0 and abs(sol.t[-1] - (t0 + 5 * H)) < 1e-63
    assert max(abs(y[0] - ctx.sin(t)) for t, y in zip(sol.t, sol.q)) < 1e-60


# ----- first-order problems: errors and backward integration ----------------------------------

def test_first_order_problems_reject_bad_input():
    s = oscillator(C64)
    problem = Problem(s, [1, 0])
    with pytest.raises(ValueError, match="unknown method 'euler'"):
        solve(problem, "euler", h="0.1", n=3)
    with pytest.raises(ValueError, match="method 'simpson' integrates mechanical systems; "
                                         "'harmonic oscillator' is a first-order system"):
        solve(problem, "simpson", h="0.1", n=3)
    for n in (0, -2, 2.5, True, "3"):
        with pytest.raises(ValueError, match="positive integer"):
            solve(problem, "rk4", h="0.1", n=n)
    with pytest.raises(ValueError, match=r"harmonic oscillator: initial state y0 must be a "
                                         r"vector of 2 numbers \(q, v\)"):
        Problem(s, [1, 0, 0])
    with pytest.raises(ValueError, match="harmonic oscillator"):
        Problem(s, [[1, 0]])
    for given in ({"p0": [0, 0]}, {"v0": [0, 0]}):
        with pytest.raises(ValueError, match="a first-order system has one state y0"):
            Problem(s, [1, 0], **given)
    for h in ("0", 0):
        with pytest.raises(ValueError, match="nonzero"):
            solve(problem, "rk4", h=h, n=3)
    sol = solve(problem, "rk4", h="0.1", n=np.int64(3))
    assert sol.q.shape == (4, 2) and sol.stats["steps"] == sol.steps == 3
    assert sol.params == {} and "newton" not in sol.stats
    with pytest.raises(AttributeError, match="first-order"):
        sol.p


@pytest.mark.parametrize("method", ["rk4", "gbs", "rk2"])
def test_a_negative_step_integrates_a_first_order_problem_backwards(method):
    """The oscillator is reversible under (q, v) -> (q, -v), t -> -t, and so is every
    Runge-Kutta/extrapolation step: from y0 = (1, 0) (its own mirror image) n steps of
    -h give the forward run with v negated, at times -t_j, to round-off."""
    problem = Problem(oscillator(C64), [1, 0])
    h = C64.num("0.1")
    back = solve(problem, method, h=-h, n=6)
    fwd = solve(problem, method, h=h, n=6)
    assert all(b == -f for b, f in zip(back.t, fwd.t)) and back.t[-1] < 0
    assert C64.norm_inf(back.q[:, 0] - fwd.q[:, 0]) <= 1e-60
    assert C64.norm_inf(back.q[:, 1] + fwd.q[:, 1]) <= 1e-60
    assert C64.norm_inf(back.q[-1] - back.q[0]) > 0.1           # it moved
    assert oscillator_error(back) < 1e-2                          # along cos t, backwards


def test_gbs_scheme_rejects_bad_levels():
    dp = nonlinear_double_pendulum(C64)
    for levels in (0, -1, "4", 2.0):
        with pytest.raises(ValueError, match="levels"):
            solve(dp, "gbs", h="0.1", n=1, levels=levels)


# ----- the "gbs" scheme -------------------------------------------------------------------------

def test_gbs_scheme_on_a_linear_system_against_the_exact_solution():
    dp = linearized_double_pendulum(C64)
    N = 80
    sol = solve(dp, "gbs", h=dp.tbar / N, n=N)
    err = error_norms(sol)                       # against the problem's exact solution
    assert err["q"] <= 1e-55 and err["p"] <= 1e-55


@pytest.fixture(scope="module")
def dp_gbs():
    """The nonlinear double pendulum over 1 s by the order-32 GBS scheme, h = 1/80 and 1/160.
    (Measured: successive halvings from h = 1/10 change q(1) by 2.5e-20, 8.1e-29, 6.4e-38,
    then < 1e-45: the asymptotic order-32 regime starts only near h = 1/40 s.)"""
    dp = nonlinear_double_pendulum(C64)
    runs = {N: solve(dp, "gbs", h=C64.num(1) / N, n=N) for N in (80, 160)}
    return dp, runs


def test_gbs_scheme_converges_on_the_double_pendulum(dp_gbs):
    _, runs = dp_gbs
    a, b = runs[80], runs[160]
    assert a.stats.get("newton") is None
    diff = max(max(C64.norm_inf(a.q[j] - b.q[2 * j]), C64.norm_inf(a.p[j] - b.p[2 * j]))
               for j in range(81))
    assert diff <= 1e-45
    assert C64.norm_inf(a.q[-1] - a.q[0]) > 0.1


def test_gbs_scheme_is_the_hamiltonian_field_plus_the_ode_steps(dp_gbs):
    """A mechanical problem solved by gbs (rk4) is gbs_step (rk4_step) on the Hamiltonian
    field y = (q, p) -> (q', p'), stepped by hand or solved as a first-order problem."""
    dp, runs = dp_gbs
    f = hamiltonian_field(dp.system)
    n = 10
    h = C64.num(1) / 80
    y = [*dp.q0, *dp.p0]
    for j in range(n):
        y = gbs_step(f, j * h, y, h, 16, C64)
        assert C64.norm_inf(C64.asarray(y[:2]) - runs[80].q[j + 1]) <= 1e-60
        assert C64.norm_inf(C64.asarray(y[2:]) - runs[80].p[j + 1]) <= 1e-60
    form = FirstOrderSystem("double pendulum (Hamiltonian form)", lambda t, y: f(t, list(y)), 4,
                            C64, labels=("q1", "q2", "p_q1", "p_q2"))
    hform = Problem(form, np.concatenate([dp.q0, dp.p0]))
    direct = solve(hform, "gbs", h=h, n=n, levels=16)
    assert C64.norm_inf(direct.q[:, :2] - runs[80].q[:n + 1]) <= 1e-60
    assert C64.norm_inf(direct.q[:, 2:] - runs[80].p[:n + 1]) <= 1e-60
    # the same holds for RK4
    h = C64.num(1) / 50
    rk = solve(dp, "rk4", h=h, n=n)
    direct = solve(hform, "rk4", h=h, n=n)
    assert C64.norm_inf(direct.q[:, :2] - rk.q) <= 1e-60
    assert C64.norm_inf(direct.q[:, 2:] - rk.p) <= 1e-60


def test_a_field_given_as_expressions_returns_the_contexts_numbers():
    """The field of a system given as expressions skips the checks of a user's callable:
    its constant components (generated code returns the integer 0 for a zero component)
    still come back as numbers of the context, and the values are those of the checked
    path."""
    from mpvi import GMPContext
    from mpvi.model.callables import returned_vector
    for ctx in (C40, GMPContext(40)):
        system = FirstOrderSystem.from_expressions("drift", ["x", "y"], ["0", "-sin(x) + 1/3"], ctx)
        y = [ctx.num(1), ctx.num(2)]
        out = system.field()(ctx.num(0), y)
        assert all(ctx.is_number(v) for v in out) and out[0] == 0
        assert out == returned_vector(ctx, system.rhs(ctx.num(0), y), 2, "drift")
        assert out[1] == -ctx.sin(y[0]) + ctx.num(1) / 3
