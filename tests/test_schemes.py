"""Tests of the integration schemes and the driver."""
from fractions import Fraction

import numpy as np
import pytest

import mpvi
from mpvi import (SCHEMES, LinearSystem, MPContext, StabilityError, State, fp, integrate,
                  linearized_double_pendulum)
from mpvi.context import PrecisionError

F = Fraction
M3 = [[4, 1, F(1, 2)], [1, 3, F(1, 3)], [F(1, 2), F(1, 3), 2]]
K3 = [[5, -1, 0], [-1, 4, F(1, 7)], [0, F(1, 7), 3]]


@pytest.fixture(scope="module")
def c64():
    return MPContext(64)


@pytest.fixture(scope="module")
def dp64(c64):
    return linearized_double_pendulum(c64)


def test_registry():
    assert set(SCHEMES) >= {"newmark", "simpson", "simpson_v1", "rk4"}
    expected = {"newmark": (2, True), "simpson": (4, True), "simpson_v1": (4, True),
                "rk4": (4, False)}
    for name, (order, symplectic) in expected.items():
        s = mpvi.get_scheme(name)
        assert s.name == name and s.order == order and s.symplectic == symplectic
        assert mpvi.get_scheme(s) is s
    assert SCHEMES["simpson_v1"].internal == "q_mid"


# ----- convergence orders --------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(n for n in SCHEMES if n != "gbs"))
def test_convergence_order(name):
    """(The order-32 GBS reference reaches round-off at these h; tested in test_ode.)"""
    ctx = MPContext(30)
    dp = linearized_double_pendulum(ctx)
    ex = dp.exact()
    hs, errs = [], []
    for N in (40, 80, 160):
        h = dp.tbar / N
        traj = integrate(dp.system, name, dp.q0, dp.p0, h, N, ctx)
        assert abs(traj.t[-1] - dp.tbar) < 10 * N * ctx.eps
        hs.append(h)
        errs.append(mpvi.error_norms(traj, ex)["q"])
    assert errs[0] > errs[1] > errs[2] > 0
    order = mpvi.fit_order(ctx, hs, errs)
    assert abs(order - SCHEMES[name].order_for()) < 0.15, (name, order)


# ----- Simpson's two variants ------------------------------------------------------------

def test_simpson_variants_give_the_same_nodes(c64, dp64):
    h = dp64.tbar / 10
    a = integrate(dp64.system, "simpson", dp64.q0, dp64.p0, h, 100, c64)
    b = integrate(dp64.system, "simpson_v1", dp64.q0, dp64.p0, h, 100, c64)
    assert c64.norm_inf(a.q - b.q) < 1e-60
    assert c64.norm_inf(a.p - b.p) < 1e-60
    assert a.internal is None
    assert b.internal.shape == (100, 1, 2)


def test_simpson_variants_agree_on_3dof_system(c64):
    s = LinearSystem(M3, K3, c64)
    q0, p0 = c64.asarray(["0.3", "-0.2", "0.5"]), c64.asarray(["0.1", "0.4", "-0.3"])
    h = c64.num("0.2")
    a = integrate(s, "simpson", q0, p0, h, 50, c64)
    b = integrate(s, "simpson_v1", q0, p0, h, 50, c64)
    assert c64.norm_inf(a.q - b.q) < 1e-60
    assert c64.norm_inf(a.p - b.p) < 1e-60
    # the kept midpoint satisfies q_mid = 1/2 L^-1 (q_j + q_j+1), L = I - h^2/8 M^-1 K
    L = c64.eye(3) - h * h / 8 * (s.Minv @ s.K)
    for j in range(50):
        assert c64.norm_inf(L @ b.internal[j, 0] - (b.q[j] + b.q[j + 1]) / 2) < 1e-60


# ----- independent check of the variational derivation ---------------------------------

def simpson_Lh(M, K, h, ql, qm, qr):
    """Sec. 3.2: Simpson's rule on L = 1/2 q'^T M q' - 1/2 q^T K q over the quadratic
    element (13)-(14) with Gear's derivatives (15)."""
    gl = (-3 * ql + 4 * qm - qr) / h
    gm = (qr - ql) / h
    gr = (ql - 4 * qm + 3 * qr) / h
    kin = (gl @ M @ gl) / 6 + 2 * (gm @ M @ gm) / 3 + (gr @ M @ gr) / 6
    pot = (ql @ K @ ql) / 6 + 2 * (qm @ K @ qm) / 3 + (qr @ K @ qr) / 6
    return h / 2 * (kin - pot)


def newmark_Ld(M, K, h, ql, qr):
    """Sec. 2.1: centred difference and midpoint quadrature."""
    v = (qr - ql) / h
    m = (ql + qr) / 2
    return h / 2 * (v @ M @ v) - h / 2 * (m @ K @ m)


def fd_grad(ctx, f, args, k):
    """Central-difference gradient of f with respect to args[k].  f is quadratic, so the
    difference quotient is exact up to rounding for any step; 2^-20 keeps the rounding
    error near eps * |f| * 2^20 ~ 1e-58 at 64 digits."""
    d = ctx.num(2) ** -20
    x = args[k]
    g = ctx.zeros(x.shape)
    for i in range(x.shape[0]):
        e = ctx.zeros(x.shape)
        e[i] = d
        plus = list(args)
        minus = list(args)
        plus[k] = x + e
        minus[k] = x - e
        g[i] = (f(*plus) - f(*minus)) / (2 * d)
    return g


def _test_problems(ctx):
    dp = linearized_double_pendulum(ctx)
    s3 = LinearSystem(M3, K3, ctx)
    return [(dp.system, dp.tbar / 10, ctx.asarray(["0.1", "0.4"]), ctx.asarray(["0.03", "-0.02"])),
            (dp.system, dp.tbar / 10, dp.q0, dp.p0),
            (s3, ctx.num("0.25"), ctx.asarray(["0.3", "-0.2", "0.5"]),
             ctx.asarray(["0.1", "0.4", "-0.3"]))]


def test_discrete_lagrangians_approximate_the_action(c64):
    """The printed prefactor h/2 is the right one: for q(t) = a + b t Simpson's rule and
    Gear's derivatives are exact, so L_h equals the action integral exactly; the same
    holds for Newmark's L_d when K = 0 (centred difference exact, integrand constant)."""
    M, K = c64.asarray(M3), c64.asarray(K3)
    a, b = c64.asarray(["0.3", "-1.2", "0.7"]), c64.asarray(["2.5", "0.4", "-1.1"])
    h = c64.num("0.3")
    exact = h / 2 * (b @ M @ b) - (h * (a @ K @ a) + h * h * (a @ K @ b)
                                   + h ** 3 / 3 * (b @ K @ b)) / 2
    Lh = simpson_Lh(M, K, h, a, a + b * h / 2, a + b * h)
    assert abs(Lh - exact) < 100 * c64.eps * abs(exact)
    # kinetic part exact for a quadratic q(t) = a + b t + c t^2 (q' linear, q'Mq' quadratic)
    cq = c64.asarray(["1.5", "-0.5", "0.25"])
    Z = c64.zeros((3, 3))
    q = lambda t: a + b * t + cq * t * t
    kin_exact = h / 2 * (b @ M @ b + h * (b @ M @ cq) * 2 + 4 * h * h / 3 * (cq @ M @ cq))
    assert abs(simpson_Lh(M, Z, h, q(0), q(h / 2), q(h)) - kin_exact) < 100 * c64.eps * kin_exact
    Ld = newmark_Ld(M, Z, h, a, a + b * h)
    assert abs(Ld - h / 2 * (b @ M @ b)) < 100 * c64.eps * abs(Ld)


def test_simpson_v1_step_is_variational(c64):
    for system, h, q, p in _test_problems(c64):
        (q1, p1), info = SCHEMES["simpson_v1"].step(system, (q, p), h, c64)
        qm = info["q_mid"][0]
        L = lambda ql, qmid, qr: simpson_Lh(system.M, system.K, h, ql, qmid, qr)
        args = (q, qm, q1)
        assert c64.norm_inf(p + fd_grad(c64, L, args, 0)) < 1e-50        # eq. 22
        assert c64.norm_inf(fd_grad(c64, L, args, 1)) < 1e-50            # eq. 18
        assert c64.norm_inf(p1 - fd_grad(c64, L, args, 2)) < 1e-50       # eq. 24
        # the step did move (a trivial map would not be caught otherwise)
        assert c64.norm_inf(q1 - q) > 1e-3


def test_simpson_v2_step_is_variational(c64):
    """Variant 2 has no midpoint output; it is the one that makes dL_h/dq_m = 0."""
    for system, h, q, p in _test_problems(c64):
        (q1, p1), _ = SCHEMES["simpson"].step(system, (q, p), h, c64)
        L = system.ctx.eye(system.dof) - h * h / 8 * (system.Minv @ system.K)
        qm = c64.solve(L, (q + q1) / 2)
        f = lambda ql, qmid, qr: simpson_Lh(system.M, system.K, h, ql, qmid, qr)
        args = (q, qm, q1)
        assert c64.norm_inf(fd_grad(c64, f, args, 1)) < 1e-50
        assert c64.norm_inf(p + fd_grad(c64, f, args, 0)) < 1e-50
        assert c64.norm_inf(p1 - fd_grad(c64, f, args, 2)) < 1e-50


def test_newmark_step_is_variational(c64):
    for system, h, q, p in _test_problems(c64):
        (q1, p1), info = SCHEMES["newmark"].step(system, (q, p), h, c64)
        assert info == {}
        L = lambda ql, qr: newmark_Ld(system.M, system.K, h, ql, qr)
        assert c64.norm_inf(p + fd_grad(c64, L, (q, q1), 0)) < 1e-50     # eq. 7
        assert c64.norm_inf(p1 - fd_grad(c64, L, (q, q1), 1)) < 1e-50    # eq. 8
        assert c64.norm_inf(q1 - q) > 1e-3


# ----- invariants ----------------------------------------------------------------------

def test_newmark_conserves_energy(c64, dp64):
    traj = integrate(dp64.system, "newmark", dp64.q0, dp64.p0, dp64.tbar / 10, 1000, c64)
    err = mpvi.relative_energy_error(dp64.system, traj)
    assert err[0] == 0
    assert max(err) < 1e-60
    # the energy of the run is the exact energy of the initial data
    H = mpvi.energy(dp64.system, traj)
    assert abs(H[0] - dp64.system.energy(dp64.q0, dp64.p0)) == 0


def test_simpson_conserves_phi_not_energy(c64, dp64):
    h = dp64.tbar / 10
    traj = integrate(dp64.system, "simpson", dp64.q0, dp64.p0, h, 10000, c64)
    phi = mpvi.simpson_phi(dp64.system, h, c64)
    vals = [phi(q, p) for q, p in zip(traj.q, traj.p)]
    assert vals[0] > 0
    assert max(abs(v - vals[0]) for v in vals) / vals[0] < 1e-55
    # H itself is not conserved (Sec. 6.3), only bounded: its error is O(h^2)-ish, not 0
    herr = max(mpvi.relative_energy_error(dp64.system, traj))
    assert 1e-6 < herr < 1e-1
    # phi is a scaled energy: X_s ~ 2M/h gives xi ~ h/2 M^-1, zeta ~ h/2 K, so
    # (2/h) phi -> H as h -> 0, with an O(h^2) gap
    H0 = dp64.system.energy(dp64.q0, dp64.p0)

    def gap(N):
        hN = dp64.tbar / N
        return abs(2 / hN * mpvi.simpson_phi(dp64.system, hN, c64)(dp64.q0, dp64.p0) - H0) / H0
    assert 0 < gap(10) < 0.2
    assert 3.8 < gap(40) / gap(80) < 4.2


@pytest.mark.parametrize("name", ["newmark", "simpson", "simpson_v1"])
def test_symplectic_schemes(c64, dp64, name):
    d = mpvi.symplecticity_defect(name, dp64.system, dp64.tbar / 10, c64)
    assert d < 1e-60
    s3 = LinearSystem(M3, K3, c64)
    assert mpvi.symplecticity_defect(name, s3, c64.num("0.3"), c64) < 1e-60


def test_rk4_is_not_symplectic(c64, dp64):
    d = mpvi.symplecticity_defect("rk4", dp64.system, dp64.tbar / 10, c64)
    assert d > 1e-10


def test_one_step_matrix_matches_stepper(c64, dp64):
    h = dp64.tbar / 10
    for name in SCHEMES:
        phi = mpvi.one_step_matrix(name, dp64.system, h, c64)
        q, p = c64.asarray(["0.1", "0.4"]), c64.asarray(["0.03", "-0.02"])
        traj = mpvi.integrate(dp64.system, name, q, p, h, 1, c64)     # p -> v -> p for (q, v) methods
        q1, p1 = traj.q[1], traj.p[1]
        eta1 = phi @ np.concatenate([p, q])
        assert c64.norm_inf(eta1[:2] - p1) < 1e-60, name
        assert c64.norm_inf(eta1[2:] - q1) < 1e-60, name


# ----- bad input -------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_bad_step_size_and_count(c64, dp64, name):
    s = dp64.system
    for h in (0, "-0.1", -1):
        with pytest.raises(ValueError, match="positive"):
            integrate(s, name, dp64.q0, dp64.p0, h, 10, c64)
        with pytest.raises(ValueError):
            SCHEMES[name].step(s, (dp64.q0, dp64.p0), h, c64)
    for n in (0, -5, 2.0):
        with pytest.raises(ValueError):
            integrate(s, name, dp64.q0, dp64.p0, dp64.tbar / 10, n, c64)
    with pytest.raises(PrecisionError):
        integrate(s, name, dp64.q0, dp64.p0, 0.1, 10, c64)


def test_unknown_scheme(c64, dp64):
    with pytest.raises(ValueError) as info:
        integrate(dp64.system, "euler", dp64.q0, dp64.p0, dp64.tbar / 10, 10, c64)
    msg = str(info.value)
    assert "euler" in msg
    for name in SCHEMES:
        assert name in msg
    with pytest.raises(ValueError):
        mpvi.get_scheme("Simpson")


@pytest.mark.parametrize("name", ["simpson", "simpson_v1"])
def test_simpson_stability_bound(c64, dp64, name):
    s = dp64.system
    bound = 2 * c64.sqrt(2)
    wmax = s.omega_max()
    for wh in ("2.9", "3.3", "4", "10"):
        h = c64.num(wh) / wmax
        with pytest.raises(StabilityError) as info:
            integrate(s, name, dp64.q0, dp64.p0, h, 3, c64)
        assert "2 sqrt(2)" in str(info.value)
        assert isinstance(info.value, ValueError)
        with pytest.raises(StabilityError):
            SCHEMES[name].step(s, (dp64.q0, dp64.p0), h, c64)
    # just above and just below the bound
    with pytest.raises(StabilityError):
        integrate(s, name, dp64.q0, dp64.p0, bound * (1 + c64.num("1e-50")) / wmax, 3, c64)
    integrate(s, name, dp64.q0, dp64.p0, bound * (1 - c64.num("1e-50")) / wmax, 3, c64)
    # check_stability=False lets it run; wh = 4 lies in the stable band (2 sqrt 3, 2 sqrt 6)
    h = c64.num(4) / wmax
    traj = integrate(s, name, dp64.q0, dp64.p0, h, 50, c64, check_stability=False)
    assert traj.steps == 50
    (q1, p1), _ = SCHEMES[name].step(s, (dp64.q0, dp64.p0), h, c64, check_stability=False)
    assert c64.norm_inf(q1 - traj.q[1]) == 0
    # and the other schemes have no bound
    for other in ("newmark", "rk4"):
        integrate(s, other, dp64.q0, dp64.p0, h, 3, c64)


# ----- Scheme.step vs integrate ------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(m for m in SCHEMES if SCHEMES[m].state == "qp"))
def test_step_equals_one_integrate_step(c64, dp64, name):
    s = dp64.system
    h = dp64.tbar / 10
    q, p = c64.asarray(["0.1", "0.4"]), c64.asarray(["0.03", "-0.02"])
    state, info = SCHEMES[name].step(s, State(q, p), h, c64)
    assert isinstance(state, State)
    traj = integrate(s, name, q, p, h, 1, c64)
    assert c64.norm_inf(state.q - traj.q[1]) == 0
    assert c64.norm_inf(state.p - traj.p[1]) == 0
    newton = {"newton_iterations", "newton_residual"} if "newton" in traj.stats else set()
    if name == "simpson_v1":
        assert set(info) == {"q_mid"}
        assert c64.norm_inf(info["q_mid"][0] - traj.internal[0, 0]) == 0
        # the midpoint is close to q(h/2) of the exact solution
        ex = s.exact(q, p)
        assert c64.norm_inf(info["q_mid"][0] - ex.q(h / 2)) < 1e-3
    elif SCHEMES[name].internal is None:
        assert set(info) == newton
        assert traj.internal is None
    else:
        assert set(info) == ({SCHEMES[name].internal} if traj.internal is not None else set()) | newton
    # a plain tuple and string inputs work too
    state2, _ = SCHEMES[name].step(s, (["0.1", "0.4"], ["0.03", "-0.02"]), h, c64)
    assert c64.norm_inf(state2.q - state.q) == 0


def test_fp_and_mp_runs_agree():
    """The same Simpson run in float64 and at 64 digits agrees to float precision."""
    c = MPContext(64)
    dpm, dpf = linearized_double_pendulum(c), linearized_double_pendulum(fp)
    n = 100
    a = integrate(dpm.system, "simpson", dpm.q0, dpm.p0, dpm.tbar / 10, n, c)
    b = integrate(dpf.system, "simpson", dpf.q0, dpf.p0, dpf.tbar / 10, n, fp)
    assert b.q.dtype == float
    diff = np.max(np.abs(a.q.astype(float) - b.q))
    assert diff < 10 * n * fp.eps
    assert diff > 0
