"""Tests of mpvi.analysis.measures: order fits, linear stability, mp/fp agreement."""
import numpy as np
import pytest

import mpvi
from mpvi import MPContext, fp, solve
from mpvi.systems.double_pendulum import linearized_double_pendulum


@pytest.fixture(scope="module")
def c64():
    return MPContext(64)


# ----- fit_order --------------------------------------------------------------------------

def test_fit_order_exact_slope(c64):
    C = c64.num(7)
    hs = ["0.1", "0.05", "0.025", "0.0125", "0.003"]
    errs = [C * c64.num(h) ** 3 for h in hs]
    order = mpvi.fit_order(c64, hs, errs)
    assert abs(order - 3) < 1000 * c64.eps
    # non-integer slope, irregular h, two points only
    errs = [c64.num("0.2") * c64.num(h) ** c64.num("2.5") for h in hs[:2]]
    assert abs(mpvi.fit_order(c64, hs[:2], errs) - c64.num("2.5")) < 1000 * c64.eps
    # float context
    hsf = [0.1, 0.05, 0.025]
    assert abs(mpvi.fit_order(fp, hsf, [7 * h ** 3 for h in hsf]) - 3) < 1000 * fp.eps


def test_fit_order_least_squares_not_endpoints(c64):
    """With noise the slope is the least-squares fit, not the two-endpoint slope."""
    hs = [c64.num(1), c64.num(2), c64.num(8)]
    errs = [c64.num(1), c64.num(8), c64.num(16)]      # log2: y = 0, 3, 4 at x = 0, 1, 3
    # least squares: Sxy / Sxx = (51/9) / (42/9) = 17/14 (the endpoint slope is 4/3)
    assert abs(mpvi.fit_order(c64, hs, errs) - c64.num(17) / 14) < 1000 * c64.eps


def test_fit_order_rejects_bad_input(c64):
    with pytest.raises(ValueError, match="positive"):
        mpvi.fit_order(c64, ["0.1", "0.05"], [c64.num("0.01"), c64.zero])
    with pytest.raises(ValueError):
        mpvi.fit_order(c64, ["0.1", "0.05"], [c64.num("0.01"), c64.num("-1e-3")])
    with pytest.raises(ValueError):
        mpvi.fit_order(c64, ["0.1"], [c64.num("0.01")])
    with pytest.raises(ValueError):
        mpvi.fit_order(c64, ["0.1", "0.05", "0.025"], [c64.num("0.01"), c64.num("0.001")])
    with pytest.raises(ValueError):
        mpvi.fit_order(fp, [0.1, 0.05], [1e-3, 0.0])


# ----- linear stability on the scalar oscillator -----------------------------------------

def _points(ctx):
    s2, s3, s6 = 2 * ctx.sqrt(2), 2 * ctx.sqrt(3), 2 * ctx.sqrt(6)
    d = ctx.num("1e-10")
    stable = [ctx.num(x) for x in ("0.01", "0.5", "1", "2", "2.8", "3.5", "4", "4.5", "4.89")]
    stable += [s2 - d, s3 + d, s6 - d]
    unstable = [ctx.num(x) for x in ("2.83", "3", "3.3", "3.46", "4.9", "5.5", "8", "100")]
    unstable += [s2 + d, s3 - d, s6 + d]
    return stable, unstable


def test_simpson_stability_set(c64):
    """Exact stability set (0, 2 sqrt 2) U (2 sqrt 3, 2 sqrt 6)."""
    stable, unstable = _points(c64)
    rows = mpvi.stability_scan("simpson", stable + unstable, c64)
    flags = [r[3] for r in rows]
    assert flags == [True] * len(stable) + [False] * len(unstable)
    for wh, rho, half_trace, ok in rows:
        if ok:
            assert abs(rho - 1) < 100 * c64.eps        # symplectic + stable: on the circle
        else:
            assert rho > 1 + 1e-6
        # independent formula: half trace = (X - Y)/(X + Y) with
        # X = 2/x - x/6, Y = x/3 (1/(1 - x^2/8) + 1/2), x = omega h (M = K = 1)
        X = 2 / wh - wh / 6
        Y = wh / 3 * (1 / (1 - wh * wh / 8) + c64.num(1) / 2)
        assert abs(half_trace - (X - Y) / (X + Y)) < 1e-40 * (1 + abs(half_trace))


def test_simpson_v1_stability_matches_v2(c64):
    stable, unstable = _points(c64)
    a = mpvi.stability_scan("simpson", stable + unstable, c64)
    b = mpvi.stability_scan("simpson_v1", stable + unstable, c64)
    assert [r[3] for r in a] == [r[3] for r in b]
    for ra, rb in zip(a, b):
        assert abs(ra[2] - rb[2]) < 1e-40 * (1 + abs(ra[2]))


def test_newmark_unconditionally_stable(c64):
    stable, unstable = _points(c64)
    pts = stable + unstable + [c64.num(10) ** 6]
    rows = mpvi.stability_scan("newmark", pts, c64)
    assert all(r[3] for r in rows)
    for wh, rho, half_trace, _ in rows:
        assert abs(rho - 1) < 100 * c64.eps
        # implicit midpoint: half trace = (1 - x^2/4)/(1 + x^2/4)
        assert abs(half_trace - (1 - wh * wh / 4) / (1 + wh * wh / 4)) < 100 * c64.eps


def test_rk4_stability_limit(c64):
    """|R(ix)|^2 = 1 - x^6/72 + x^8/576 = 1 + x^6 (x^2 - 8)/576: stable iff x <= 2 sqrt 2."""
    s2 = 2 * c64.sqrt(2)
    d = c64.num("1e-10")
    stable = [c64.num(x) for x in ("0.1", "1", "2", "2.8")] + [s2 - d]
    unstable = [s2 + d] + [c64.num(x) for x in ("2.9", "3", "3.5", "4", "5", "10")]
    rows = mpvi.stability_scan("rk4", stable + unstable, c64)
    assert [r[3] for r in rows] == [True] * len(stable) + [False] * len(unstable)
    for wh, rho, _, _ in rows:
        x2 = wh * wh
        assert abs(rho ** 2 - (1 + x2 ** 3 * (x2 - 8) / 576)) < 1e-50 * (1 + rho ** 2)
    # RK4 is dissipative inside its interval: rho < 1 strictly
    assert all(r[1] < 1 for r in rows[:len(stable)])


def test_stability_scan_in_fp():
    """The float context reaches the same verdicts away from the boundaries."""
    pts = [0.5, 2.0, 2.8, 3.0, 3.3, 4.0, 4.5, 5.5, 8.0]
    expected = [True, True, True, False, False, True, True, False, False]
    assert [r[3] for r in mpvi.stability_scan("simpson", pts, fp)] == expected


# ----- mp and fp agree -------------------------------------------------------------------

def test_error_norms_mp_and_fp_agree(c64):
    n = 40
    res = {}
    for ctx in (c64, fp):
        dp = linearized_double_pendulum(ctx)
        res[ctx.name] = mpvi.error_norms(solve(dp, "simpson", h=dp.tbar / 20, n=n))
    qscale = float(c64.pi / 6)           # |q| <= |q0| ~ pi/6 along this motion
    tol = 4 * n * fp.eps * qscale
    for key in ("q", "p"):
        e_mp, e_fp = res["mp64"][key], res["fp"][key]
        assert e_mp > 1e-6                    # a real, not-tiny discretization error
        assert abs(float(e_mp) - e_fp) < tol, key
    # the relative agreement is much better than the errors themselves
    assert abs(float(res["mp64"]["q"]) - res["fp"]["q"]) / res["fp"]["q"] < 1e-9


def test_error_norms_zero_for_exact_data(c64):
    """error_norms is the max over the nodes of the Euclidean norm of the error, and 0 for
    an 'exact solution' that is the solution's own nodes (the nodes are compared at their
    own times)."""
    dp = linearized_double_pendulum(c64)
    ex = dp.exact
    sol = solve(dp, "simpson", h=dp.tbar / 20, n=20)
    err = mpvi.error_norms(sol)                       # against the problem's exact solution
    manual = max(c64.sqrt(sum((a - b) ** 2 for a, b in zip(q, ex.q(t))))
                 for q, t in zip(sol.q, sol.t))
    assert err["q"] > 1e-6 and abs(err["q"] - manual) < 100 * c64.eps * manual
    assert mpvi.error_norms(sol, ex) == err
    nodes = {t: (q, p) for t, q, p in zip(sol.t, sol.q, sol.p)}
    err = mpvi.error_norms(sol, lambda t: nodes[t])
    assert err["q"] == 0 and err["p"] == 0 and err["v"] == 0


def test_energy_functions(c64):
    dp = linearized_double_pendulum(c64)
    sol = solve(dp, "rk4", h=dp.tbar / 10, n=30)
    H = mpvi.energy(dp.system, sol)
    rel = mpvi.relative_energy_error(dp.system, sol)
    assert len(H) == 31 and rel[0] == 0
    for j in (5, 30):
        assert abs(rel[j] - abs(H[j] - H[0]) / H[0]) < 10 * c64.eps
    # RK4 is dissipative at this step: the energy decays monotonically
    assert all(H[j + 1] < H[j] for j in range(30))
    assert np.all(np.array([float(x) for x in rel[1:]]) > 0)
