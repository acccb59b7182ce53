"""mutze Sec. 6, eq. (86): the quantum direct midpoint rule on a grid
(reproductions/mutze/_mutze_quantum.py, reproductions/mutze/mutze_quantum.py)."""
import mpmath
import numpy as np
import pytest
import sympy as sp

from mpvi.numbers.context import MPContext, fp
from mpvi_papers.mutze import _mutze_quantum as mq
from mpvi_papers.mutze.mutze_quantum import REPRODUCTION

W, T = mq.OMEGA, mq.TAU


# ---- the scalar test equation -----------------------------------------------------------
def test_amplification_matrix_is_the_g0_step():
    M = mq.amplification_matrix()
    z = W ** 2 * T ** 2
    assert sp.simplify(M - sp.Matrix([[1 - 2 * z, 2 * T * (1 - z)],
                                      [-2 * T * W ** 2, 1 - 2 * z]])) == sp.zeros(2, 2)
    assert sp.simplify(M.det()) == 1


def test_stability_bound_is_omega_tau_below_one():
    sup, interval = mq.stability_bound()
    assert sup == 1
    assert interval == sp.Interval.open(0, 1)
    M = mq.amplification_matrix()
    # at omega tau = 1: a Jordan block at -1 (not -I): the powers grow linearly
    M1 = M.subs(W, 1 / T)
    assert M1 != -sp.eye(2) and sp.simplify((M1 + sp.eye(2)) ** 2) == sp.zeros(2, 2)
    grow = sp.simplify((M1 ** 10)[1, 0])
    assert sp.simplify(grow - 10 * (M1[1, 0] * (-1) ** 9)) == 0
    # just inside: eigenvalues on the unit circle; just outside: one beyond it
    for r, inside in ((sp.Rational(99, 100), True), (sp.Rational(101, 100), False)):
        ev = [abs(complex(e)) for e in M.subs(W, r / T).subs(T, 1).eigenvals()]
        assert (max(ev) < 1 + 1e-12) == inside


def test_invariant_form():
    M = mq.amplification_matrix()
    Q = mq.invariant_form()
    assert Q == sp.diag(W ** 2, 1 - W ** 2 * T ** 2)
    assert sp.simplify(M.T * Q * M - Q) == sp.zeros(2, 2)


def _dense_h(ctx, p, guard_bits):
    """H as a dense mpmath matrix from the particle's stencil, in a private context of
    the number context's precision plus ``guard_bits``."""
    m = mpmath.MPContext()
    m.prec = ctx.prec + guard_bits
    H = m.matrix(p.n, p.n)
    for i in range(p.n):
        H[i, i] = m.mpf(p.diag[i])
        if i + 1 < p.n:
            H[i, i + 1] = H[i + 1, i] = m.mpf(p.off)
    return m, H


# ---- eq. (86) against an independent dense-matrix implementation ------------------------
def _dense_reference(ctx, particle, psi0, tau, steps):
    """Eq. (86) literally with complex vectors and a dense H built from its definition."""
    m = mpmath.MPContext()
    m.prec = ctx.prec
    n, hb, ms, dx = particle.n, m.mpf(particle.hbar), m.mpf(particle.mass), m.mpf(particle.dx)
    H = m.matrix(n, n)
    for i in range(n):
        H[i, i] = hb ** 2 / (ms * dx ** 2) + m.mpf(particle.V[i])
        if i + 1 < n:
            H[i, i + 1] = H[i + 1, i] = -hb ** 2 / (2 * ms * dx ** 2)
    psi = m.matrix([m.mpc(m.mpf(psi0[0, j]), m.mpf(psi0[1, j])) for j in range(n)])
    t = m.mpf(tau)
    dpsi = (H * psi) / (m.mpc(0, 1) * hb)
    out = []
    for _ in range(steps):
        a = -(H * (H * (psi + t * dpsi))) / hb ** 2
        psi, dpsi = psi + 2 * t * dpsi + 2 * t ** 2 * a, dpsi + 2 * t * a
        out.append((psi, dpsi))
    return out


def _small(ctx, n=7, dx="0.5", hbar="0.7", mass="1.3"):
    h = ctx.num("0.9")
    return mq.Particle(ctx, n, dx, hbar, mass,
                       potential=lambda x: h if abs(x - ctx.num(2)) <= ctx.num("0.6") else ctx.zero)


def test_scheme_equals_eq86_step_by_step():
    ctx = MPContext(64)
    p = _small(ctx)
    tau = p.check_tau("0.05")
    X = p.gaussian("1.8", "0.6", "1.1")
    ref = _dense_reference(ctx, p, X, tau, 6)
    V = p.schroedinger_velocity(X)
    tol = 100 * ctx.eps
    for psi, dpsi in ref:
        X, V = p.step(X, V, tau)
        for j in range(p.n):
            # the reference is computed in an mpmath context of ctx's precision: lift keeps its bits
            x, v = psi[j], dpsi[j]
            assert abs(X[0, j] - ctx.lift(x.real)) < tol and abs(X[1, j] - ctx.lift(x.imag)) < tol
            assert abs(V[0, j] - ctx.lift(v.real)) < tol and abs(V[1, j] - ctx.lift(v.imag)) < tol


def test_bad_tau_refused():
    ctx = MPContext(64)
    p = _small(ctx)
    bound = 1 / p.omega_max()
    p.check_tau(bound * ctx.num("0.999"))
    for bad in (bound, bound * ctx.num("1.01"), ctx.zero, -ctx.one):
        with pytest.raises(ValueError, match="tau"):
            p.check_tau(bad)
    with pytest.raises(ValueError, match="stability bound"):
        p.check_tau(bound * 2)


def test_gershgorin_bounds_the_spectrum():
    ctx = MPContext(30)
    p = _small(ctx, n=9)
    X = p.gaussian("2", "0.7", "0.4")
    lam, w = mq.spectral_data(p, X)
    lo, hi = p.gershgorin()
    assert lo <= min(lam) and max(lam) <= hi
    assert abs(ctx.fsum(w) - p.norm2(X)) < 10 * ctx.eps
    # eigenvalues against mpmath's dense eigsy
    m, H = _dense_h(ctx, p, 0)
    E = sorted(m.eigsy(H, eigvals_only=True))
    assert max(abs(a - ctx.lift(b)) for a, b in zip(lam, E)) < 100 * ctx.eps   # E: ctx.prec bits


# ---- invariants, closed form, precision -----------------------------------------------------
def test_quadratic_forms_conserved_to_roundoff_and_norm_is_not():
    ctx = MPContext(64)
    p = _small(ctx, n=16)
    tau = p.check_tau("0.08")
    X = p.gaussian("3", "0.8", "1.5")
    V = p.schroedinger_velocity(X)
    o0 = p.observe(X, V, tau)
    lam, w = mq.spectral_data(p, X)
    worst = ctx.zero
    for n in range(1, 61):
        X, V = p.step(X, V, tau)
        o = p.observe(X, V, tau)
        worst = max(worst, abs(o["Q"] / o0["Q"] - 1), abs(o["Nbar"] / o0["Nbar"] - 1))
        if n % 20 == 0:
            cn, ce = mq.closed_form(p, lam, w, tau, n)
            assert abs(o["norm"] - cn) < 1000 * ctx.eps
            assert abs(o["energy_unnorm"] - ce) < 1000 * ctx.eps * abs(ce)
    assert worst < 1000 * ctx.eps
    # Nbar = N0 - tau^2 ||H psi_0||^2 / (2 hbar^2) is below N0 by O(tau^2), not by round-off
    assert o0["Nbar"] < o0["norm"] * (1 - 10 ** 6 * ctx.eps)


def test_float64_invariants_and_norm_offset():
    ctx = MPContext(64)
    pm = _small(ctx, n=16)
    p = mq.to_fp(pm)
    tau = p.check_tau("0.08")
    X = pm.gaussian("3", "0.8", "1.5").astype(float)
    V = p.schroedinger_velocity(X)
    o0 = p.observe(X, V, tau)
    devs = []
    for n in range(400):
        X, V = p.step(X, V, tau)
        o = p.observe(X, V, tau)
        assert abs(o["Q"] / o0["Q"] - 1) < 1e3 * fp.eps
        devs.append(o["norm"] / o0["norm"] - 1)
    # the norm does not come back to round-off: after dephasing it stays well below N0
    assert max(devs[200:]) < -1e6 * fp.eps


def test_64_digits_carry_64_digits():
    res = {}
    for dps in (64, 80):
        ctx = MPContext(dps)
        p = _small(ctx, n=12)
        tau = p.check_tau("0.07")
        X = p.gaussian("2.5", "0.7", "1.2")
        V = p.schroedinger_velocity(X)
        for _ in range(150):
            X, V = p.step(X, V, tau)
        res[dps] = (ctx, X, p.observe(X, V, tau)["norm"])
    c64, X64, n64 = res[64]
    c80, X80, n80 = res[80]
    # the 64-digit results compared in the 80-digit context: lift keeps their bits
    diff = max(abs(c80.lift(a) - b) for a, b in zip(np.ravel(X64), np.ravel(X80)))
    assert diff < 10 ** 4 * c64.eps
    assert abs(c80.lift(n64) - n80) < 10 ** 4 * c64.eps
    assert diff > 0                     # the two runs are not accidentally the same computation


def test_chebyshev_reference_against_dense_expm():
    ctx = MPContext(40)
    p = _small(ctx, n=8)
    X = p.gaussian("2", "0.6", "0.9")
    t = ctx.num("1.7")
    Y = mq.ChebyshevPropagator(p, t)(X)
    m, H = _dense_h(ctx, p, 20)
    U = m.expm(-m.mpc(0, 1) * H * m.mpf(t) / m.mpf(p.hbar))
    psi = U * m.matrix([m.mpc(m.mpf(X[0, j]), m.mpf(X[1, j])) for j in range(p.n)])
    err = max(abs(m.mpc(m.mpf(Y[0, j]), m.mpf(Y[1, j])) - psi[j]) for j in range(p.n))
    assert err < 10 ** 4 * m.mpf(ctx.eps)
    assert abs(p.norm2(Y) - p.norm2(X)) < 10 ** 3 * ctx.eps


def test_negative_potential_and_tiny_grid_refused():
    ctx = MPContext(20)
    with pytest.raises(ValueError, match="potential"):
        mq.Particle(ctx, 5, potential=lambda x: -ctx.one)
    with pytest.raises(ValueError, match="n >= 3"):
        mq.Particle(ctx, 2)


def test_reproduction_refuses_float64_context():
    assert REPRODUCTION.refusal(fp)
    assert REPRODUCTION.refusal(MPContext(64)) is None


def test_forward_eigenvector_start_conserves_norm_exactly():
    """The remedy named in ERRATA [E78]: starting from the discrete forward eigenvector,
    psi'_0 = H (1 - tau^2 H^2/hbar^2)^(-1/2) psi_0 / (i hbar) instead of H psi_0/(i hbar),
    eq. (86) conserves norm and energy to round-off (each mode is multiplied by
    exp(-i theta_k) per step); with the paper's start it does not."""
    ctx = MPContext(50)
    p = _small(ctx, n=8)
    tau = p.check_tau("0.1")
    X = p.gaussian("2", "0.6", "1.3")
    m, H = _dense_h(ctx, p, 20)
    E, U = m.eigsy(H)
    hb, t = m.mpf(p.hbar), m.mpf(tau)
    F = U * m.diag([E[k] / hb / m.sqrt(1 - (t * E[k] / hb) ** 2) for k in range(p.n)]) * U.T
    Fu = F * m.matrix([m.mpf(v) for v in X[0]])
    Fw = F * m.matrix([m.mpf(v) for v in X[1]])
    # F is computed in the private context m of ctx.prec + 20 bits: lift keeps them
    V_fwd = ctx.asarray([[ctx.lift(Fw[j]) for j in range(p.n)],
                         [ctx.lift(-Fu[j]) for j in range(p.n)]])
    runs = {}
    for name, V in (("forward", V_fwd), ("paper", p.schroedinger_velocity(X))):
        Y, W = X, V
        o0 = p.observe(Y, W, tau)
        worst = ctx.zero
        for _ in range(200):
            Y, W = p.step(Y, W, tau)
            o = p.observe(Y, W, tau)
            worst = max(worst, abs(o["norm"] / o0["norm"] - 1), abs(o["energy"] / o0["energy"] - 1))
        runs[name] = worst
    assert runs["forward"] < 1000 * ctx.eps
    assert runs["paper"] > 10 ** 6 * ctx.eps


def test_reproduction_end_to_end_on_a_tiny_grid():
    """compute + plot with a tiny parameter set (30 digits): tables, invariants, values."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mpvi.repro.run import Run
    params = REPRODUCTION.parameters(quick=True)
    params.update({"n": 40, "barrier": {"center": "21", "halfwidth": "1", "height": "0.12"},
                   "scenarios": [{"name": "gauss", "kind": "gauss", "x0": "10", "sigma": "3",
                                  "k0": "0.5", "steps": 60, "out_every": 5, "exact_every": 6},
                                 {"name": "sharp", "kind": "box", "x0": "10", "width": "6",
                                  "k0": "0.5", "steps": 20, "out_every": 5}],
                   "exact_every": 4, "zone": "4", "long_steps": 400, "long_block": 100,
                   "tau_scan": ["0.4", "0.2"], "scan_time": "40", "beyond_steps": 300})
    ctx = MPContext(30)
    with open("/dev/null", "w") as devnull:
        out = REPRODUCTION.compute(Run(ctx, params, True, stream=devnull))
    df = out.tables[""]
    assert set(df["context"]) == {"mp30", "fp"} and set(df["scenario"]) == {"gauss", "sharp"}
    mp_rows = df[df["context"] == "mp30"]
    assert max(abs(float(x)) for x in mp_rows["Q_dev"]) < 1e3 * float(ctx.eps)
    assert float(out.values["gauss mp30 max |norm - closed form| / N0"]) < 1e3 * float(ctx.eps)
    assert float(out.values["gauss mp30 max |norm dev|"]) > 1e-5      # the finding of [E78]
    assert out.values["fp tau rho(H) = 0.99: steps until norm > 2"].startswith("none")
    assert int(out.values["fp tau rho(H) = 1.05: steps until norm > 2"]) <= 300
    fig = REPRODUCTION.plot(out, params)
    plt.close(fig)


@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_tridiag_eigen_is_mpmaths_bit_for_bit(n):
    """The MPFR port of mpmath's implicit QL gives mpmath's eigenvalues and rotated rows
    bit for bit (signs of both kinds, a zero off-diagonal entry that splits the matrix)."""
    import random
    from mpmath.matrices import eigen_symmetric
    m = mpmath.MPContext()
    m.prec = 237
    rng = random.Random(n)
    d = [m.mpf(rng.randint(-10 ** 6, 10 ** 6)) / 7 ** 5 for _ in range(n)]
    e = [m.mpf(rng.randint(-10 ** 6, 10 ** 6)) / 3 ** 7 for _ in range(n - 1)] + [m.zero]
    if n > 4:
        e[n // 2] = m.zero
    rows = [[m.mpf(rng.random()) - m.mpf(1) / 2 for _ in range(n)] for _ in range(2)]
    d1, e1, z1 = list(d), list(e), m.matrix(rows)
    eigen_symmetric.tridiag_eigen(m, d1, e1, z1)
    d2, z2 = mq.tridiag_eigen(m, list(d), list(e), [list(r) for r in rows])
    assert d2 == d1
    assert all(z2[r][j] == z1[r, j] for r in range(2) for j in range(n))
    assert all(d2[i] <= d2[i + 1] for i in range(n - 1))
