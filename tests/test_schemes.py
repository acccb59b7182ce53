"""Tests of the integration schemes and the driver."""
from fractions import Fraction

import numpy as np
import pytest

import mpvi
from mpvi import METHODS, LinearSystem, MPContext, Problem, StabilityError, fp, solve
from mpvi.numbers.context import PrecisionError
from mpvi.methods import State
from mpvi.methods.simpson import simpson_phi
from mpvi.systems.double_pendulum import linearized_double_pendulum

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
    assert set(METHODS) >= {"newmark", "simpson", "simpson_v1", "rk4"}
    expected = {"newmark": (2, True), "simpson": (4, True), "simpson_v1": (4, True),
                "rk4": (4, False)}
    for name, (order, symplectic) in expected.items():
        s = mpvi.get_method(name)
        assert s.name == name and s.order == order and s.symplectic == symplectic
        assert mpvi.get_method(s) is s
        assert isinstance(s, mpvi.Method)
    assert METHODS["simpson_v1"].internal == "q_mid"


# ----- convergence orders --------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(n for n in METHODS if n not in ("gbs", "taylor")))
def test_convergence_order(name):
    """(The order-32 GBS and Taylor references reach round-off at these h; tested in
    test_ode and test_taylor.)"""
    ctx = MPContext(30)
    dp = linearized_double_pendulum(ctx)          # a Problem with the exact modal solution
    hs, errs = [], []
    for N in (40, 80, 160):
        h = dp.tbar / N
        sol = solve(dp, name, h=h, n=N)
        assert abs(sol.t[-1] - dp.tbar) < 10 * N * ctx.eps
        hs.append(h)
        errs.append(mpvi.error_norms(sol)["q"])
    assert errs[0] > errs[1] > errs[2] > 0
    order = mpvi.fit_order(ctx, hs, errs)
    assert abs(order - METHODS[name].order_for()) < 0.15, (name, order)


# ----- Simpson's two variants ------------------------------------------------------------

def test_simpson_variants_give_the_same_nodes(c64, dp64):
    h = dp64.tbar / 10
    a = solve(dp64, "simpson", h=h, n=100)
    b = solve(dp64, "simpson_v1", h=h, n=100)
    assert c64.norm_inf(a.q - b.q) < 1e-60
    assert c64.norm_inf(a.p - b.p) < 1e-60
    assert a.internal is None
    assert b.internal.shape == (100, 1, 2)


def test_simpson_variants_agree_on_3dof_system(c64):
    s = LinearSystem(M3, K3, c64)
    q0, p0 = c64.asarray(["0.3", "-0.2", "0.5"]), c64.asarray(["0.1", "0.4", "-0.3"])
    h = c64.num("0.2")
    problem = Problem(s, q0, p0=p0)
    a = solve(problem, "simpson", h=h, n=50)
    b = solve(problem, "simpson_v1", h=h, n=50)
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
        (q1, p1, _), info = METHODS["simpson_v1"].step(system, (q, p), h, c64)
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
        (q1, p1, _), _ = METHODS["simpson"].step(system, (q, p), h, c64)
        L = system.ctx.eye(system.dof) - h * h / 8 * (system.Minv @ system.K)
        qm = c64.solve(L, (q + q1) / 2)
        f = lambda ql, qmid, qr: simpson_Lh(system.M, system.K, h, ql, qmid, qr)
        args = (q, qm, q1)
        assert c64.norm_inf(fd_grad(c64, f, args, 1)) < 1e-50
        assert c64.norm_inf(p + fd_grad(c64, f, args, 0)) < 1e-50
        assert c64.norm_inf(p1 - fd_grad(c64, f, args, 2)) < 1e-50


def test_newmark_step_is_variational(c64):
    for system, h, q, p in _test_problems(c64):
        (q1, p1, _), info = METHODS["newmark"].step(system, (q, p), h, c64)
        assert info == {}
        L = lambda ql, qr: newmark_Ld(system.M, system.K, h, ql, qr)
        assert c64.norm_inf(p + fd_grad(c64, L, (q, q1), 0)) < 1e-50     # eq. 7
        assert c64.norm_inf(p1 - fd_grad(c64, L, (q, q1), 1)) < 1e-50    # eq. 8
        assert c64.norm_inf(q1 - q) > 1e-3


# ----- invariants ----------------------------------------------------------------------

def test_newmark_conserves_energy(c64, dp64):
    sol = solve(dp64, "newmark", h=dp64.tbar / 10, n=1000)
    err = mpvi.relative_energy_error(dp64.system, sol)
    assert err[0] == 0
    assert max(err) < 1e-60
    # the energy of the run is the exact energy of the initial data
    H = mpvi.energy(dp64.system, sol)
    assert abs(H[0] - dp64.system.energy(dp64.q0, dp64.p0)) == 0


def test_simpson_conserves_phi_not_energy(c64, dp64):
    h = dp64.tbar / 10
    sol = solve(dp64, "simpson", h=h, n=10000)
    phi = simpson_phi(dp64.system, h, c64)
    vals = [phi(q, p) for q, p in zip(sol.q, sol.p)]
    assert vals[0] > 0
    assert max(abs(v - vals[0]) for v in vals) / vals[0] < 1e-55
    # H itself is not conserved (Sec. 6.3), only bounded: its error is O(h^2)-ish, not 0
    herr = max(mpvi.relative_energy_error(dp64.system, sol))
    assert 1e-6 < herr < 1e-1
    # phi is a scaled energy: X_s ~ 2M/h gives xi ~ h/2 M^-1, zeta ~ h/2 K, so
    # (2/h) phi -> H as h -> 0, with an O(h^2) gap
    H0 = dp64.system.energy(dp64.q0, dp64.p0)

    def gap(N):
        hN = dp64.tbar / N
        return abs(2 / hN * simpson_phi(dp64.system, hN, c64)(dp64.q0, dp64.p0) - H0) / H0
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
    q, p = c64.asarray(["0.1", "0.4"]), c64.asarray(["0.03", "-0.02"])
    problem = Problem(dp64.system, q, p0=p)
    for name in METHODS:
        phi = mpvi.one_step_matrix(name, dp64.system, h, c64)
        sol = solve(problem, name, h=h, n=1)     # p -> v -> p for (q, v) methods
        q1, p1 = sol.q[1], sol.p[1]
        eta1 = phi @ np.concatenate([p, q])
        assert c64.norm_inf(eta1[:2] - p1) < 1e-60, name
        assert c64.norm_inf(eta1[2:] - q1) < 1e-60, name


# ----- bad input -------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(METHODS))
def test_bad_step_size_and_count(c64, dp64, name):
    s = dp64.system
    for h in (0, "0", "-0"):
        with pytest.raises(ValueError, match="nonzero"):
            solve(dp64, name, h=h, n=10)
        with pytest.raises(ValueError, match="nonzero"):
            METHODS[name].step(s, (dp64.q0, dp64.p0), h, c64)
    for n in (0, -5, 2.0):
        with pytest.raises(ValueError, match="number of steps"):
            solve(dp64, name, h=dp64.tbar / 10, n=n)
    with pytest.raises(PrecisionError):
        solve(dp64, name, h=0.1, n=10)
    with pytest.raises(PrecisionError):
        solve(dp64, name, h=-0.1, n=10)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_negative_step_integrates_backwards(c64, dp64, name):
    """A negative h integrates backwards in time.  The system is time-reversible, (q(t),
    p(t)) -> (q(-t), -p(-t)), and every method commutes with that reversal, so n steps of
    -h from (q0, p0) are n steps of +h from (q0, -p0) with p negated: the same numbers up
    to round-off, at times -t_j."""
    h = dp64.tbar / 10
    q0, p0 = c64.asarray(["0.1", "0.4"]), c64.asarray(["0.03", "-0.02"])
    back = solve(Problem(dp64.system, q0, p0=p0), name, h=-h, n=10)
    fwd = solve(Problem(dp64.system, q0, p0=-p0), name, h=h, n=10)
    assert back.steps == 10 and back.h == -h
    assert all(back.t[j] == -fwd.t[j] for j in range(11))
    assert back.t[-1] < back.t[0] == 0
    assert c64.norm_inf(back.q - fwd.q) < 1e-60, name
    assert c64.norm_inf(back.p + fwd.p) < 1e-60, name
    # and it moved: a stepper ignoring the sign of h would not pass the check above
    assert c64.norm_inf(back.q[-1] - back.q[0]) > 1e-3


def test_unknown_scheme(c64, dp64):
    with pytest.raises(ValueError) as info:
        solve(dp64, "euler", h=dp64.tbar / 10, n=10)
    msg = str(info.value)
    assert "euler" in msg
    for name in METHODS:
        assert name in msg
    with pytest.raises(ValueError):
        mpvi.get_method("Simpson")


@pytest.mark.parametrize("name", ["simpson", "simpson_v1"])
def test_simpson_stability_bound(c64, dp64, name):
    s = dp64.system
    bound = 2 * c64.sqrt(2)
    wmax = s.omega_max()
    for wh in ("2.9", "3.3", "4", "10"):
        h = c64.num(wh) / wmax
        with pytest.raises(StabilityError) as info:
            solve(dp64, name, h=h, n=3)
        # solve names the method's own bound 2 sqrt(2) (below pi), the way out
        assert "omega h < 2.8284271" in str(info.value)
        assert "check_stability=False" in str(info.value)
        assert isinstance(info.value, ValueError)
        # and so does the method itself (axioms2024 eq. 40)
        with pytest.raises(StabilityError, match="2 sqrt.2."):
            METHODS[name].step(s, (dp64.q0, dp64.p0), h, c64)
        with pytest.raises(StabilityError, match=r"omega h < 2\.8284271"):
            solve(dp64, name, h=-h, n=3)          # |h| counts, backwards too
    # just above and just below the bound
    with pytest.raises(StabilityError):
        solve(dp64, name, h=bound * (1 + c64.num("1e-50")) / wmax, n=3)
    solve(dp64, name, h=bound * (1 - c64.num("1e-50")) / wmax, n=3)
    # check_stability=False lets it run; wh = 4 lies in the stable band (2 sqrt 3, 2 sqrt 6)
    h = c64.num(4) / wmax
    sol = solve(dp64, name, h=h, n=50, check_stability=False)
    assert sol.steps == 50
    (q1, p1, _), _ = METHODS[name].step(s, (dp64.q0, dp64.p0), h, c64, check_stability=False)
    assert c64.norm_inf(q1 - sol.q[1]) == 0
    # newmark has no bound of its own: it runs beyond Simpson's (and RK4's) 2 sqrt(2) ...
    h29 = c64.num("2.9") / wmax
    solve(dp64, "newmark", h=h29, n=3)
    with pytest.raises(StabilityError, match=r"omega h < 2\.8284271"):
        solve(dp64, "rk4", h=h29, n=3)
    # ... but no method resolves omega h >= pi: fewer than two steps per period
    with pytest.raises(StabilityError, match="pi: fewer than two steps per period"):
        solve(dp64, "newmark", h=h, n=3)
    # the flag under test: the refusal is a check, not a limit of the method
    assert solve(dp64, "newmark", h=h, n=3, check_stability=False).steps == 3


# ----- Method.step vs solve ------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(m for m in METHODS if METHODS[m].state == "qp"))
def test_step_equals_one_solve_step(c64, dp64, name):
    s = dp64.system
    h = dp64.tbar / 10
    q, p = c64.asarray(["0.1", "0.4"]), c64.asarray(["0.03", "-0.02"])
    state, info = METHODS[name].step(s, State(q, p), h, c64)
    assert isinstance(state, State)
    sol = solve(Problem(s, q, p0=p), name, h=h, n=1)
    assert c64.norm_inf(state.q - sol.q[1]) == 0
    assert c64.norm_inf(state.p - sol.p[1]) == 0
    newton = {"newton_iterations", "newton_residual"} if "newton" in sol.stats else set()
    if name == "simpson_v1":
        assert set(info) == {"q_mid"}
        assert c64.norm_inf(info["q_mid"][0] - sol.internal[0, 0]) == 0
        # the midpoint is close to q(h/2) of the exact solution
        ex = s.exact(q, p)
        assert c64.norm_inf(info["q_mid"][0] - ex.q(h / 2)) < 1e-3
    elif METHODS[name].internal is None:
        assert set(info) == newton
        assert sol.internal is None
    else:
        assert set(info) == ({METHODS[name].internal} if sol.internal is not None else set()) | newton
    # a plain tuple and string inputs work too
    state2, _ = METHODS[name].step(s, (["0.1", "0.4"], ["0.03", "-0.02"]), h, c64)
    assert c64.norm_inf(state2.q - state.q) == 0


def test_fp_and_mp_runs_agree():
    """The same Simpson run in float64 and at 64 digits agrees to float precision."""
    c = MPContext(64)
    dpm, dpf = linearized_double_pendulum(c), linearized_double_pendulum(fp)
    n = 100
    a = solve(dpm, "simpson", h=dpm.tbar / 10, n=n)
    b = solve(dpf, "simpson", h=dpf.tbar / 10, n=n)
    assert b.q.dtype == float
    diff = np.max(np.abs(a.q.astype(float) - b.q))
    assert diff < 10 * n * fp.eps
    assert diff > 0
