"""Tests of LinearSystem, ModalSolution and the linearized double pendulum."""
from fractions import Fraction

import numpy as np
import pytest

from mpvi import LinearSystem, MPContext, fp
from mpvi.numbers.context import PrecisionError
from mpvi.systems.double_pendulum import linearized_double_pendulum

F = Fraction
M3 = [[4, 1, F(1, 2)], [1, 3, F(1, 3)], [F(1, 2), F(1, 3), 2]]
K3 = [[5, -1, 0], [-1, 4, F(1, 7)], [0, F(1, 7), 3]]
Q0_3 = [F(1, 3), F(-2, 5), F(7, 11)]
P0_3 = [F(1, 2), F(1, 9), F(-3, 4)]


@pytest.fixture(scope="module")
def c64():
    return MPContext(64)


def sys3(ctx):
    return LinearSystem(M3, K3, ctx, name="3-dof test")


# ----- validation --------------------------------------------------------------------

@pytest.mark.parametrize("ctx", [MPContext(64), fp], ids=["mp64", "fp"])
def test_rejects_bad_matrices(ctx):
    good = [[2, 1], [1, 2]]
    nonsym = [[2, 1], [0, 2]]
    indefinite = [[1, 2], [2, 1]]
    semidefinite = [[1, 1], [1, 1]]
    cases = [
        (nonsym, good, "mass matrix M", "symmetric"),
        (good, nonsym, "stiffness matrix K", "symmetric"),
        (indefinite, good, "mass matrix M", "positive definite"),
        (good, indefinite, "stiffness matrix K", "positive definite"),
        (semidefinite, good, "mass matrix M", "positive definite"),
        (good, semidefinite, "stiffness matrix K", "positive definite"),
        ([[1, 2, 3], [2, 1, 0]], good, "mass matrix M", "square"),
        (good, [[1, 2, 3], [2, 1, 0]], "stiffness matrix K", "square"),
    ]
    for M, K, who, what in cases:
        with pytest.raises(ValueError) as info:
            LinearSystem(M, K, ctx)
        msg = str(info.value)
        assert who in msg and what in msg, msg
    with pytest.raises(ValueError) as info:
        LinearSystem(good, [[3, 0, 0], [0, 3, 0], [0, 0, 3]], ctx)
    msg = str(info.value)
    assert "M" in msg and "K" in msg and "(2, 2)" in msg and "(3, 3)" in msg


def test_accepts_good_matrices(c64):
    s = sys3(c64)
    assert s.dof == 3
    assert c64.norm_inf(s.Minv @ s.M - c64.eye(3)) < 100 * c64.eps
    omega, V = s.modes()
    assert omega[0] < omega[1] < omega[2]
    assert s.omega_max() == omega[2]
    with pytest.raises(PrecisionError):
        LinearSystem([[0.5]], [[1]], c64)      # a float would cap the precision


def test_energy_and_rhs(c64):
    s = sys3(c64)
    q = c64.asarray(Q0_3)
    p = c64.asarray(P0_3)
    Kf = [[F(x) for x in r] for r in K3]
    # exact energy with rationals: 1/2 p^T M^-1 p + 1/2 q^T K q
    qK = sum(Q0_3[i] * Kf[i][j] * Q0_3[j] for i in range(3) for j in range(3))
    v = c64.solve(s.M, p)
    H = s.energy(q, p)
    expected = c64.num(qK) / 2 + (p @ v) / 2
    assert abs(H - expected) < 100 * c64.eps
    qd, pd = s.hamiltonian_rhs(q, p)
    assert c64.norm_inf(s.M @ qd - p) < 100 * c64.eps
    assert c64.norm_inf(pd + s.K @ q) == 0
    assert c64.norm_inf(s.force(c64.zero, q, qd)) == 0          # no non-conservative force


# ----- the modal (exact) solution ----------------------------------------------------

def _systems(ctx):
    dp = linearized_double_pendulum(ctx)
    s3 = sys3(ctx)
    return [("double pendulum", dp.system, dp.q0, ctx.asarray(["0.3", "-0.7"])),
            ("double pendulum p0=0", dp.system, dp.q0, dp.p0),
            ("3-dof", s3, ctx.asarray(Q0_3), ctx.asarray(P0_3))]


TIMES = ["0", "0.1", "0.37", "1", "2.5", "13.75"]


def test_modal_solution_initial_values_and_ode(c64):
    tol = c64.num("1e-60")
    for label, system, q0, p0 in _systems(c64):
        ex = system.exact(q0, p0)
        assert c64.norm_inf(ex.q(0) - q0) < tol, label
        assert c64.norm_inf(ex.p(0) - p0) < tol, label
        for t in TIMES:
            r = system.M @ ex.qddot(t) + system.K @ ex.q(t)
            assert c64.norm_inf(r) < tol, (label, t)
        # vectorized evaluation matches scalar evaluation
        ts = np.array([c64.num(t) for t in TIMES], dtype=object)
        Q, P = ex.q(ts), ex.p(ts)
        for k, t in enumerate(TIMES):
            assert c64.norm_inf(Q[k] - ex.q(t)) < tol
            assert c64.norm_inf(P[k] - ex.p(t)) < tol


def test_modal_solution_is_a_solution_by_finite_differences(c64):
    """p = M q' and p' = -K q, checked by central differences at 130 working digits
    (step 1e-30: truncation ~1e-57, rounding ~1e-100), independent of qddot()."""
    for label, system, q0, p0 in _systems(c64):
        ex = system.exact(q0, p0)
        for t in TIMES:
            p_t = ex.p(t)
            q_t = ex.q(t)
            with c64.workdps(130):
                d = c64.num("1e-30")
                tt = c64.num(t)
                dq = (ex.q(tt + d) - ex.q(tt - d)) / (2 * d)
                dp = (ex.p(tt + d) - ex.p(tt - d)) / (2 * d)
                r1 = system.M @ dq
                r2 = dp
            assert c64.norm_inf(r1 - p_t) < 1e-50, (label, t)
            assert c64.norm_inf(r2 + system.K @ q_t) < 1e-50, (label, t)
        # and the same at plain 64 digits with a 1e-20 step
        d = c64.num("1e-20")
        tt = c64.num("0.37")
        dq = (ex.q(tt + d) - ex.q(tt - d)) / (2 * d)
        assert c64.norm_inf(system.M @ dq - ex.p(tt)) < 1e-30


def test_modal_solution_in_fp_agrees_with_mp():
    c = MPContext(64)
    for (label, s_mp, q_mp, p_mp), (_, s_fp, q_fp, p_fp) in zip(_systems(c), _systems(fp)):
        e_mp, e_fp = s_mp.exact(q_mp, p_mp), s_fp.exact(q_fp, p_fp)
        for t in TIMES:
            scale = 1 + float(c.num(t)) * float(s_mp.omega_max())
            tol = 100 * fp.eps * scale
            assert np.max(np.abs(e_fp.q(float(t)) - e_mp.q(t).astype(float))) < tol, label


# ----- the linearized double pendulum ------------------------------------------------

def test_double_pendulum_table1_data(c64):
    dp = linearized_double_pendulum(c64)
    assert dp.q0[0] == 0
    assert abs(dp.q0[1] - c64.pi / 6) < c64.eps
    assert all(x == 0 for x in dp.p0)
    assert abs(dp.omega0 - 2 * c64.pi) < 4 * c64.eps
    assert abs(dp.tbar - 1) < 4 * c64.eps          # tbar = 2 pi / omega0 = 1 s
    assert dp.mu_r == 1
    # eq. 48 with m1 = 1, g = 9.81, l = g / omega0^2
    g = c64.num("9.81")
    l = g / (2 * c64.pi) ** 2
    M = c64.asarray([[2 * l * l, l * l], [l * l, l * l]])
    K = c64.asarray([[2 * g * l, 0], [0, g * l]])
    assert c64.norm_inf(dp.system.M - M) < 10 * c64.eps
    assert c64.norm_inf(dp.system.K - K) < 10 * c64.eps * 10


@pytest.mark.parametrize("kw", [{}, {"mu_r": 3, "m1": 2}, {"mu_r": "0.25", "omega0": 3}],
                         ids=["table1", "mu3", "mu_quarter"])
def test_frequencies_solve_characteristic_equation(c64, kw):
    dp = linearized_double_pendulum(c64, **kw)
    M, K = dp.system.M, dp.system.K
    w1, w2 = dp.frequencies()
    assert w1 > w2 > 0
    scale = c64.norm_inf(K) * (c64.norm_inf(K) + w1 ** 2 * c64.norm_inf(M))
    for w in (w1, w2):
        D = K - w * w * M
        det = D[0, 0] * D[1, 1] - D[0, 1] * D[1, 0]
        assert abs(det) < 100 * c64.eps * scale
    omega, _ = dp.system.modes()
    assert abs(omega[0] - w2) < 100 * c64.eps * w1
    assert abs(omega[1] - w1) < 100 * c64.eps * w1
    # Table 1: omega_{1,2} = omega0 sqrt(2 +- sqrt 2) for mu_r = 1
    if not kw:
        w0 = 2 * c64.pi
        assert abs(w1 - w0 * c64.sqrt(2 + c64.sqrt(2))) < 100 * c64.eps * w1
        assert abs(w2 - w0 * c64.sqrt(2 - c64.sqrt(2))) < 100 * c64.eps * w1


@pytest.mark.parametrize("kw", [{}, {"mu_r": 3, "m1": 2}, {"mu_r": "0.25", "omega0": 3},
                                {"q0": ["0.2", "-0.1"]}],
                         ids=["table1", "mu3", "mu_quarter", "other_q0"])
def test_closed_form_matches_modal_solution(c64, kw):
    dp = linearized_double_pendulum(c64, **kw)
    ex = dp.exact
    assert c64.norm_inf(dp.closed_form_q(0) - dp.q0) < 1e-60
    for k in range(41):
        t = c64.num(k) / 7 + c64.num("0.013") * k * k
        assert c64.norm_inf(dp.closed_form_q(t) - ex.q(t)) < 1e-60, t


def test_closed_form_is_the_papers_formula(c64):
    """Table 1: q_ex = pi/12 ((-cos w1 t + cos w2 t)/sqrt 2, cos w1 t + cos w2 t)."""
    dp = linearized_double_pendulum(c64)
    w1, w2 = dp.frequencies()
    for t in ["0.05", "0.5", "1", "7.3"]:
        t = c64.num(t)
        c1, c2 = c64.cos(w1 * t), c64.cos(w2 * t)
        ref = [c64.pi / 12 * (-c1 + c2) / c64.sqrt(2), c64.pi / 12 * (c1 + c2)]
        got = dp.closed_form_q(t)
        assert max(abs(a - b) for a, b in zip(got, ref)) < 1e-60


def test_closed_form_requires_zero_p0(c64):
    dp = linearized_double_pendulum(c64, p0=("0.1", 0))
    with pytest.raises(ValueError):
        dp.closed_form_q("0.5")
    # the modal solution handles it
    assert c64.norm_inf(dp.exact.p(0) - dp.p0) < 1e-60


def test_double_pendulum_in_fp():
    dp = linearized_double_pendulum(fp)
    assert abs(dp.tbar - 1) < 4 * fp.eps
    assert dp.system.M.dtype == float
    ex = dp.exact
    for t in (0.1, 0.5, 2.0):
        assert np.max(np.abs(dp.closed_form_q(t) - ex.q(t))) < 1e3 * fp.eps
