"""Tests of the first-order ODE tools (mpvi.ode): RK4, the Gragg-Bulirsch-Stoer reference
and the "gbs" scheme built on them."""
import numpy as np
import pytest

from mpvi import MPContext, error_norms, fit_order, fp, integrate, linearized_double_pendulum
from mpvi.ode import FirstOrderSystem, gbs_step, hamiltonian_ode, integrate_ode, rk4_step
from mpvi.systems.double_pendulum import nonlinear_double_pendulum

C64 = MPContext(64)
C40 = MPContext(40)


def oscillator(ctx):
    """y = (q, q'), y' = (q', -q): q = cos t for y(0) = (1, 0)."""
    return FirstOrderSystem("harmonic oscillator",
                            lambda t, y: np.array([y[1], -y[0]], dtype=ctx.dtype), 2, ctx,
                            labels=("q", "v"))


def oscillator_error(traj):
    ctx = traj.ctx
    return max(abs(y[0] - ctx.cos(t)) + abs(y[1] + ctx.sin(t)) for t, y in zip(traj.t, traj.y))


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
    f = gaussian(ctx).rhs
    # local error O(h^5): one step from t = 1/2
    t0 = ctx.num(1) / 2
    y0 = ctx.asarray([ctx.exp(-t0 * t0)])
    local = [abs(rk4_step(f, t0, y0, h)[0] - ctx.exp(-(t0 + h) ** 2))
             for h in (ctx.num(1) / 10, ctx.num(1) / 20)]
    assert 4.8 < ctx.log(local[0] / local[1]) / ctx.log(2) < 5.2
    # global error O(h^4)
    T, hs, errs = ctx.num(2), [], []
    for N in (20, 40, 80):
        traj = integrate_ode(gaussian(ctx), "rk4", [1], T / N, N, ctx)
        errs.append(max(abs(y[0] - ctx.exp(-t * t)) for t, y in zip(traj.t, traj.y)))
        hs.append(T / N)
    assert_order(ctx, hs, errs, 4, 0.2)


def test_rk4_step_is_the_classical_tableau():
    """On y' = t^3 (y-independent) RK4 is Simpson's rule: exact for cubics."""
    ctx = C64
    f = lambda t, y: np.array([t ** 3], dtype=object)
    y1 = rk4_step(f, ctx.num(1), ctx.asarray([0]), ctx.num(2))
    assert abs(y1[0] - (ctx.num(3) ** 4 - 1) / 4) < 1e-62


# ----- GBS ----------------------------------------------------------------------------------

@pytest.mark.parametrize("levels,ctx", [(2, fp), (3, fp), (4, C40)], ids=["2-fp", "3-fp", "4-mp40"])
def test_gbs_order_is_twice_the_levels(levels, ctx):
    """y'' = -y over [0, 2] with N = 8, 16, 32 steps (levels 4 in float64 would hit
    round-off at N = 32, hence 40 digits)."""
    T, hs, errs = ctx.num(2), [], []
    for N in (8, 16, 32):
        traj = integrate_ode(oscillator(ctx), "gbs", [1, 0], T / N, N, ctx, levels=levels)
        assert traj.stats["levels"] == levels
        errs.append(oscillator_error(traj))
        hs.append(T / N)
    assert_order(ctx, hs, errs, 2 * levels, 0.1)


def test_gbs_reaches_1e55_at_64_digits():
    ctx = C64
    N = 32
    traj = integrate_ode(oscillator(ctx), "gbs", [1, 0], 2 * ctx.pi / N, N, ctx, levels=16)
    assert oscillator_error(traj) <= 1e-55
    # while the order-8 extrapolation at the same step is far off
    low = integrate_ode(oscillator(ctx), "gbs", [1, 0], 2 * ctx.pi / N, N, ctx, levels=4)
    assert oscillator_error(low) > 1e-15


def test_gbs_passes_the_time():
    """y' = cos t: the extrapolated value is sin(t0 + H) only if the substeps see t."""
    ctx = C64
    f = lambda t, y: np.array([ctx.cos(t)], dtype=object)
    t0, H = ctx.num("0.3"), ctx.num("0.2")
    y1 = gbs_step(f, t0, ctx.asarray([ctx.sin(t0)]), H, 16, ctx)
    assert abs(y1[0] - ctx.sin(t0 + H)) < 1e-60
    traj = integrate_ode(FirstOrderSystem("sin", f, 1, ctx), "gbs", [ctx.sin(t0)], H, 5, ctx,
                         t0=t0)
    assert traj.t[0] == t0 and abs(traj.t[-1] - (t0 + 5 * H)) < 1e-63
    assert max(abs(y[0] - ctx.sin(t)) for t, y in zip(traj.t, traj.y)) < 1e-60


# ----- integrate_ode: errors ------------------------------------------------------------------

def test_integrate_ode_rejects_bad_input():
    s = oscillator(C64)
    with pytest.raises(ValueError, match="unknown ODE method 'euler'"):
        integrate_ode(s, "euler", [1, 0], "0.1", 3, C64)
    for n in (0, -2, 2.5, True, "3"):
        with pytest.raises(ValueError, match="positive integer"):
            integrate_ode(s, "rk4", [1, 0], "0.1", n, C64)
    with pytest.raises(ValueError, match=r"shape \(3,\), expected \(2,\)"):
        integrate_ode(s, "rk4", [1, 0, 0], "0.1", 3, C64)
    with pytest.raises(ValueError, match="harmonic oscillator"):
        integrate_ode(s, "gbs", [[1, 0]], "0.1", 3, C64)
    for h in ("0", "-0.1"):
        with pytest.raises(ValueError, match="positive"):
            integrate_ode(s, "rk4", [1, 0], h, 3, C64)
    traj = integrate_ode(s, "rk4", [1, 0], "0.1", np.int64(3), C64)
    assert traj.y.shape == (4, 2) and traj.stats["steps"] == 3 and "levels" not in traj.stats


def test_gbs_scheme_rejects_bad_levels():
    dp = nonlinear_double_pendulum(C64)
    for levels in (0, -1, "4", 2.0):
        with pytest.raises(ValueError, match="levels"):
            integrate(dp.system, "gbs", dp.q0, dp.p0, "0.1", 1, C64, levels=levels)


# ----- the "gbs" scheme -------------------------------------------------------------------------

def test_gbs_scheme_on_a_linear_system_against_the_exact_solution():
    ctx = C64
    dp = linearized_double_pendulum(ctx)
    N = 80
    traj = integrate(dp.system, "gbs", dp.q0, dp.p0, dp.tbar / N, N, ctx)
    err = error_norms(traj, dp.exact())
    assert err["q"] <= 1e-55 and err["p"] <= 1e-55


@pytest.fixture(scope="module")
def dp_gbs():
    """The nonlinear double pendulum over 1 s by the order-32 GBS scheme, h = 1/80 and 1/160.
    (Measured: successive halvings from h = 1/10 change q(1) by 2.5e-20, 8.1e-29, 6.4e-38,
    then < 1e-45: the asymptotic order-32 regime starts only near h = 1/40 s.)"""
    dp = nonlinear_double_pendulum(C64)
    runs = {N: integrate(dp.system, "gbs", dp.q0, dp.p0, C64.num(1) / N, N, C64)
            for N in (80, 160)}
    return dp, runs


def test_gbs_scheme_converges_on_the_double_pendulum(dp_gbs):
    _, runs = dp_gbs
    a, b = runs[80], runs[160]
    assert a.stats.get("newton") is None
    diff = max(max(C64.norm_inf(a.q[j] - b.q[2 * j]), C64.norm_inf(a.p[j] - b.p[2 * j]))
               for j in range(81))
    assert diff <= 1e-45
    assert C64.norm_inf(a.q[-1] - a.q[0]) > 0.1


def test_gbs_scheme_is_hamiltonian_ode_plus_integrate_ode(dp_gbs):
    dp, runs = dp_gbs
    ode = hamiltonian_ode(dp.system)
    assert ode.dim == 4 and ode.labels == ("q1", "q2", "p_q1", "p_q2")
    n = 10
    y0 = np.concatenate([dp.q0, dp.p0])
    direct = integrate_ode(ode, "gbs", y0, C64.num(1) / 80, n, C64, levels=16)
    assert C64.norm_inf(direct.y[:, :2] - runs[80].q[:n + 1]) <= 1e-60
    assert C64.norm_inf(direct.y[:, 2:] - runs[80].p[:n + 1]) <= 1e-60
    # the same holds for RK4
    h = C64.num(1) / 50
    rk = integrate(dp.system, "rk4", dp.q0, dp.p0, h, n, C64)
    direct = integrate_ode(ode, "rk4", y0, h, n, C64)
    assert C64.norm_inf(direct.y[:, :2] - rk.q) <= 1e-60
    assert C64.norm_inf(direct.y[:, 2:] - rk.p) <= 1e-60
