"""Tests of the nonlinear Lagrangian systems (mpvi.model.mechanics) and the systems built on them.

Every generated derivative is compared with a central finite difference of the function
one order lower, evaluated in a *separate* 120-digit system built from the same
parameters (step 1e-30: truncation error ~1e-60, round-off ~1e-90), against the 64-digit
system under test.
"""
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

import mpvi
from mpvi import LinearSystem, MPContext, fp
from mpvi.analysis.measures import central_differences
from mpvi.numbers.context import PrecisionError
from mpvi.numbers.linalg import SingularMatrixError
from mpvi.model.mechanics import LagrangianSystem
from mpvi.systems.double_pendulum import linearized_double_pendulum, nonlinear_double_pendulum
from mpvi.systems.lagrange_top import table3_top, table6_top

F = Fraction
M3 = [[4, 1, F(1, 2)], [1, 3, F(1, 3)], [F(1, 2), F(1, 3), 2]]
K3 = [[5, -1, 0], [-1, 4, F(1, 7)], [0, F(1, 7), 3]]

C64 = MPContext(64)
HI = MPContext(120)           # finite differences are taken here
DELTA = HI.num(10) ** -30
TOL = 1e-50                   # required relative agreement


# ----- the systems under test ----------------------------------------------------------

DAMPING = sp.Rational(3, 10)


def forced_oscillator(ctx):
    """A 1-dof nonlinear forced, damped oscillator with every kind of force dependence:
    L = 1/2 m (1 + q^2/4) v^2 - k (1 - cos q),  F = -c v + A cos(w t) - b q v^2."""
    q = sp.Symbol("q")
    m, k, c, A, w, b = sp.symbols("m k c A w b", positive=True)
    return LagrangianSystem(
        "forced oscillator", [q], sp.Matrix([[m * (1 + q ** 2 / 4)]]), k * (1 - sp.cos(q)),
        {m: F(3, 2), k: 4, c: "0.3", A: "0.7", w: "1.3", b: F(1, 5)}, ctx,
        force=lambda t, x, v: sp.Matrix([-c * v[0] + A * sp.cos(w * t) - b * x[0] * v[0] ** 2]))


def coupled_force(t, q, v):
    """A force with non-symmetric dF/dq and dF/dv (gyroscopic coupling, drive, damping)."""
    R = sp.Rational
    return sp.Matrix([-R(3, 10) * v[0] + R(1, 2) * v[1] + sp.cos(t) * q[1],
                      -R(1, 2) * v[0] * q[0] - R(1, 5) * v[1] + sp.sin(q[0]) * v[0] ** 2])


SYSTEMS = {
    "double_pendulum": lambda ctx: nonlinear_double_pendulum(ctx).system,
    "top_table3": lambda ctx: table3_top(ctx).system,
    "top_table6": lambda ctx: table6_top(ctx).system,
    "from_linear_3dof": lambda ctx: (LinearSystem(M3, K3, ctx, name="3-dof")),
    "from_linear_double_pendulum": lambda ctx: (linearized_double_pendulum(ctx).system),
    "damped_double_pendulum": lambda ctx: nonlinear_double_pendulum(
        ctx, force=lambda t, q, v: -DAMPING * v).system,
    "forced_oscillator": forced_oscillator,
    "forced_double_pendulum":
        lambda ctx: nonlinear_double_pendulum(ctx, force=coupled_force).system,
}

# two generic (non-special) points (q, v) per number of degrees of freedom
POINTS = {
    1: [(["0.3"], ["-1.7"]), (["-2.1"], ["0.45"])],
    2: [(["0.3", "-0.7"], ["1.1", "-0.4"]), (["1.9", "0.45"], ["-2.3", "0.8"])],
    3: [(["0.2", "1.1", "-0.5"], ["9.2", "-0.3", "25.2"]),
        (["-1.3", "2.2", "0.9"], ["0.7", "1.4", "-3.1"])],
}

_cache = {}


def system(name, ctx):
    key = (name, ctx.name)
    if key not in _cache:
        _cache[key] = SYSTEMS[name](ctx)
    return _cache[key]


def points(name):
    return POINTS[system(name, C64).dof]


# ----- helpers ---------------------------------------------------------------------------

def fd(f, x):
    """Central differences at 120 digits: ``out[g, ...] = d f(x)[...] / d x^g``."""
    return central_differences(f, x, HI, DELTA)


def lifted(a, ctx):
    """``a`` as an array of ``ctx`` numbers, each keeping its bits (``ctx.lift``): the
    results of a 64-digit or a float64 computation are compared here with a 120-digit
    reference on purpose, so their fewer bits are wanted, not a precision loss."""
    a = np.array(a, dtype=object)
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        out[idx] = ctx.lift(a[idx])
    return out


def rel_err(value, reference, ctx=HI):
    """max |value - reference| / max |reference|, evaluated in ``ctx`` (numbers of other
    contexts and floats keep their bits exactly: ``lifted``).  An all-zero reference
    demands an exact zero."""
    v = lifted(value, ctx)
    r = lifted(reference, ctx)
    assert v.shape == r.shape, (v.shape, r.shape)
    diff = ctx.norm_inf(v - r)
    scale = ctx.norm_inf(r)
    return diff / scale if scale != 0 else (0 if diff == 0 else ctx.num(10) ** 10)


def both(name, q, v):
    """(64-digit system, 120-digit system, q and v in each)."""
    lo, hi = system(name, C64), system(name, HI)
    return lo, hi, C64.asarray(q), C64.asarray(v), HI.asarray(q), HI.asarray(v)


ALL = sorted(SYSTEMS)


# ----- the base functions against hand-written formulas ------------------------------------

def test_double_pendulum_mass_and_potential_match_the_formulas():
    dp = nonlinear_double_pendulum(C64)
    s, ell, g = dp.system, dp.length, dp.g
    for q, _ in POINTS[2]:
        q = C64.asarray(q)
        c = C64.cos(q[0] - q[1])
        M = C64.matrix([[2 * ell ** 2, ell ** 2 * c], [ell ** 2 * c, ell ** 2]])
        V = -2 * g * ell * C64.cos(q[0]) - g * ell * C64.cos(q[1])
        assert rel_err(s.mass(q), M, C64) < 1e-62
        assert abs(s.potential(q) - V) < 1e-62 * abs(V)
    # l = g / omega0^2 with omega0 = 2 pi
    assert abs(dp.length - C64.num("9.81") / (4 * C64.pi ** 2)) < 1e-63


def test_top_mass_potential_and_momenta_match_the_formulas():
    top = table3_top(C64)
    s, P = top.system, top.params
    I, I3, mgl = P["I"], P["I3"], P["m_top"] * P["g"] * P["ell"]
    for q, v in POINTS[3]:
        q, v = C64.asarray(q), C64.asarray(v)
        st, ct = C64.sin(q[1]), C64.cos(q[1])
        M = C64.matrix([[I * st ** 2 + I3 * ct ** 2, 0, I3 * ct], [0, I, 0], [I3 * ct, 0, I3]])
        assert rel_err(s.mass(q), M, C64) < 1e-62
        assert abs(s.potential(q) - mgl * ct) < 1e-62 * abs(mgl)
        # eq. (18s): p_psi = I3 (psi' + phi' cos theta),
        #            p_phi = p_psi cos theta + I phi' sin^2 theta
        p = s.momentum(q, v)
        p_psi = I3 * (v[2] + v[0] * ct)
        assert abs(p[2] - p_psi) < 1e-62 * abs(p_psi)
        assert abs(p[0] - (p_psi * ct + I * v[0] * st ** 2)) < 1e-62 * abs(p[0])
        assert abs(p[1] - I * v[1]) < 1e-62 * abs(p[1])
    # the initial momenta of Table 3 (q' = (9.2, 0, 252), theta = pi/3)
    p0 = top.p0
    assert abs(p0[2] - I3 * (252 + C64.num("9.2") / 2)) < 1e-64
    assert p0[1] == 0


# ----- generated derivatives against finite differences ----------------------------------

@pytest.mark.parametrize("name", ALL)
def test_mass_derivatives(name):
    for q, v in points(name):
        lo, hi, ql, _, qh, _ = both(name, q, v)
        assert rel_err(lo.dmass(ql), fd(hi.mass, qh)) < TOL
        assert rel_err(lo.d2mass(ql), fd(hi.dmass, qh)) < TOL
        # symmetry of the generated tensors: dM[g] and d2M[g, d] symmetric, d2M[g, d] = d2M[d, g]
        dM, d2M = lo.dmass(ql), lo.d2mass(ql)
        assert C64.norm_inf(dM - np.transpose(dM, (0, 2, 1))) == 0
        assert C64.norm_inf(d2M - np.transpose(d2M, (1, 0, 2, 3))) <= 1e-62 * max(
            C64.norm_inf(d2M), 1)


@pytest.mark.parametrize("name", ALL)
def test_potential_derivatives(name):
    for q, v in points(name):
        lo, hi, ql, _, qh, _ = both(name, q, v)
        assert rel_err(lo.grad_potential(ql), fd(lambda x: [hi.potential(x)], qh)[:, 0]) < TOL
        assert rel_err(lo.hess_potential(ql), fd(hi.grad_potential, qh).T) < TOL


@pytest.mark.parametrize("name", ALL)
def test_node_derivatives(name):
    """(P, G, L_vv, B, A) = (dL/dv, dL/dq, d2L/dv dv, B[g, d] = d2L/dq^g dv^d, d2L/dq dq)."""
    for q, v in points(name):
        lo, hi, ql, vl, qh, vh = both(name, q, v)
        P, G, Lvv, B, A = lo.node_derivatives(ql, vl)
        P1, G1 = lo.node_gradient(ql, vl)
        # same quantities from the two compiled functions (different CSE: round-off only)
        assert rel_err(P1, P, C64) < 1e-62 and rel_err(G1, G, C64) < 1e-62
        fd_v_L = fd(lambda w: [hi.lagrangian(qh, w)], vh)[:, 0]
        fd_q_L = fd(lambda x: [hi.lagrangian(x, vh)], qh)[:, 0]
        assert rel_err(P, fd_v_L) < TOL
        assert rel_err(G, fd_q_L) < TOL
        fd_v_P = fd(lambda w: hi.node_gradient(qh, w)[0], vh)      # [d, g] = dP_g/dv^d
        fd_v_G = fd(lambda w: hi.node_gradient(qh, w)[1], vh)      # [d, g] = dG_g/dv^d
        fd_q_G = fd(lambda x: hi.node_gradient(x, vh)[1], qh)      # [d, g] = dG_g/dq^d
        assert rel_err(Lvv, fd_v_P.T) < TOL
        assert rel_err(B, fd_v_G.T) < TOL
        assert rel_err(A, fd_q_G.T) < TOL
        # and the first derivatives in the 120-digit system are consistent with L itself
        assert rel_err(hi.node_gradient(qh, vh)[0], fd_v_L) < 1e-55
        # L_vv is M(q); P = M v
        assert rel_err(Lvv, lo.mass(ql), C64) < 1e-62
        assert rel_err(P, lo.mass(ql) @ vl, C64) < 1e-62


@pytest.mark.parametrize("name", ["damped_double_pendulum", "forced_oscillator",
                                  "forced_double_pendulum"])
def test_force_derivatives(name):
    t = "0.7"
    for q, v in points(name):
        lo, hi, ql, vl, qh, vh = both(name, q, v)
        tl, th = C64.num(t), HI.num(t)
        Fv, Fq, Fvv = lo.force_derivatives(tl, ql, vl)
        assert rel_err(Fv, lo.force(tl, ql, vl), C64) < 1e-62
        assert rel_err(Fq, fd(lambda x: hi.force(th, x, vh), qh).T) < TOL
        assert rel_err(Fvv, fd(lambda w: hi.force(th, qh, w), vh).T) < TOL
    # the damping force is exactly -c v
    lo = system("damped_double_pendulum", C64)
    q, v = (C64.asarray(x) for x in points("damped_double_pendulum")[0])
    assert rel_err(lo.force(C64.zero, q, v), -C64.num("0.3") * v, C64) < 1e-63


def test_forced_oscillator_force_depends_on_time():
    s = system("forced_oscillator", C64)
    q, v = C64.asarray(["0"]), C64.asarray(["0"])
    for t in ("0", "0.5", "2.25"):
        t = C64.num(t)
        expected = C64.num("0.7") * C64.cos(C64.num("1.3") * t)
        assert abs(s.force(t, q, v)[0] - expected) < 1e-63


def test_conservative_system_has_zero_force():
    s = system("double_pendulum", C64)
    q, v = (C64.asarray(x) for x in POINTS[2][0])
    assert not s.has_force
    f = s.force(C64.zero, q, v)
    assert f.shape == (2,) and all(x == 0 for x in f)


# ----- Hamiltonian view --------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_hamiltonian_rhs_is_the_hamiltonian_vector_field(name):
    t = "0.7"
    for q, v in points(name):
        lo, hi, ql, vl, qh, vh = both(name, q, v)
        pl, ph = lo.momentum(ql, vl), hi.momentum(qh, vh)
        dq, dp = lo.hamiltonian_rhs(ql, pl, C64.num(t))
        dH_dp = fd(lambda y: [hi.hamiltonian(qh, y)], ph)[:, 0]
        dH_dq = fd(lambda x: [hi.hamiltonian(x, ph)], qh)[:, 0]
        assert rel_err(dq, dH_dp) < TOL
        # p' = -dH/dq + F(t, q, q')
        force = hi.force(HI.num(t), qh, vh)
        assert rel_err(dp, -dH_dq + force) < TOL
        # H = T + V with T = 1/2 v^T M v
        H = lo.hamiltonian(ql, pl)
        assert abs(H - (vl @ lo.mass(ql) @ vl / 2 + lo.potential(ql))) < 1e-62 * max(abs(H), 1)
        assert lo.energy(ql, pl) == H


@pytest.mark.parametrize("name", ALL)
def test_momentum_and_velocity_are_inverse(name):
    for q, v in points(name):
        s = system(name, C64)
        q, v = C64.asarray(q), C64.asarray(v)
        p = s.momentum(q, v)
        assert rel_err(s.velocity(q, p), v, C64) < 1e-60
        assert rel_err(s.momentum(q, s.velocity(q, v)), v, C64) < 1e-60   # v read as a p


def test_hamiltonian_rhs_uses_time_zero_by_default():
    s = system("forced_oscillator", C64)
    q, p = C64.asarray(["0.3"]), C64.asarray(["0.2"])
    a = s.hamiltonian_rhs(q, p)
    b = s.hamiltonian_rhs(q, p, C64.zero)
    c = s.hamiltonian_rhs(q, p, C64.num("1.1"))
    assert a[1][0] == b[1][0] != c[1][0]


# ----- clear errors ----------------------------------------------------------------------

Q1, Q2 = sp.symbols("q1 q2")


def test_rejects_a_non_symmetric_mass_matrix():
    with pytest.raises(ValueError, match="not symmetric"):
        LagrangianSystem("bad", [Q1, Q2], sp.Matrix([[1, Q1], [0, 1]]), Q1 ** 2, {}, C64)
    # symmetric only after simplification is accepted
    LagrangianSystem("ok", [Q1, Q2],
                     sp.Matrix([[1, sp.sin(Q1) ** 2], [1 - sp.cos(Q1) ** 2, 2]]), Q1 ** 2, {}, C64)


def test_rejects_a_mass_matrix_of_the_wrong_shape():
    with pytest.raises(ValueError, match="2x2"):
        LagrangianSystem("bad", [Q1, Q2], sp.Matrix([[1, 0, 0], [0, 1, 0], [0, 0, 1]]), 0, {}, C64)


def test_rejects_unknown_symbols():
    a, b = sp.symbols("a b")
    with pytest.raises(ValueError, match=r"\['a'\]"):
        LagrangianSystem("bad", [Q1], sp.Matrix([[a]]), Q1 ** 2, {}, C64)
    with pytest.raises(ValueError, match=r"\['b'\]"):
        LagrangianSystem("bad", [Q1], sp.Matrix([[a]]), b * Q1 ** 2, {a: 1}, C64)
    with pytest.raises(ValueError, match=r"\['b'\].*in F"):
        LagrangianSystem("bad", [Q1], sp.Matrix([[a]]), Q1 ** 2, {a: 1}, C64,
                         force=lambda t, q, v: sp.Matrix([-b * v[0]]))


def test_a_symbolic_damping_constant_needs_to_be_a_parameter():
    """nonlinear_double_pendulum takes no extra parameters, so a force -c v with a sympy
    *symbol* c is refused (clearly); a sympy number works, and a LagrangianSystem built
    directly can carry c as a parameter."""
    c = sp.Symbol("c")
    with pytest.raises(ValueError, match=r"\['c'\] in F"):
        nonlinear_double_pendulum(C64, force=lambda t, q, v: -c * v)
    s = LagrangianSystem("damped", [Q1], sp.Matrix([[1]]), Q1 ** 2 / 2, {c: "0.3"}, C64,
                         force=lambda t, q, v: -c * v)
    assert abs(s.force(C64.zero, C64.asarray([0]), C64.asarray([2]))[0] + C64.num("0.6")) < 1e-63


def test_rejects_a_force_of_the_wrong_shape():
    with pytest.raises(ValueError, match="2x1"):
        LagrangianSystem("bad", [Q1, Q2], sp.eye(2), Q1 ** 2, {}, C64,
                         force=lambda t, q, v: sp.Matrix([-v[0]]))
    with pytest.raises(ValueError, match="force"):
        LagrangianSystem("bad", [Q1, Q2], sp.eye(2), Q1 ** 2, {}, C64,
                         force=lambda t, q, v: v.T)


def test_refuses_a_float_parameter_in_an_mp_context():
    k = sp.Symbol("k")
    with pytest.raises(PrecisionError, match="float"):
        LagrangianSystem("osc", [Q1], sp.Matrix([[1]]), k * Q1 ** 2 / 2, {k: 0.1}, C64)
    with pytest.raises(PrecisionError):
        nonlinear_double_pendulum(C64, g=9.81)
    # strings are exact at the context precision; floats are fine in float64
    s = LagrangianSystem("osc", [Q1], sp.Matrix([[1]]), k * Q1 ** 2 / 2, {k: "0.1"}, C64)
    assert abs(s.param_values[0] - C64.num(1) / 10) < 1e-64
    s = LagrangianSystem("osc", [Q1], sp.Matrix([[1]]), k * Q1 ** 2 / 2, {k: 0.1}, fp)
    assert s.param_values[0] == 0.1


def test_refuses_a_float_literal_in_the_expressions():
    """A float literal inside M, V or F would be compiled as a 53-bit mpf."""
    with pytest.raises(PrecisionError, match="0.1"):
        LagrangianSystem("osc", [Q1], sp.Matrix([[1]]), Q1 ** 2 / 2, {}, C64,
                         force=lambda t, q, v: -0.1 * v)
    with pytest.raises(PrecisionError):
        LagrangianSystem("osc", [Q1], sp.Matrix([[sp.Float("1.5")]]), Q1 ** 2 / 2, {}, C64)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("ctx", [C64, mpvi.GMPContext(64)], ids=["mp", "gmp"])
def test_energies_are_the_hamiltonian_at_every_point_bit_for_bit(name, ctx):
    """LagrangianSystem.energies (every row at once) gives hamiltonian's numbers, the same
    bits, on each kind of system (M, V form; a general Lagrangian); a singular point among
    them raises as hamiltonian does; rows of another count are refused."""
    S = system(name, ctx) if ctx is C64 else SYSTEMS[name](ctx)
    q = np.array([ctx.asarray(x) for x, _ in points(name)] * 2, dtype=object)
    p = np.array([ctx.asarray(v) for _, v in points(name)] * 2, dtype=object)
    p[2] = p[2] * 3
    expected = [S.hamiltonian(x, y) for x, y in zip(q, p)]
    got = S.energies(q, p)
    assert len(got) == 4 and all(a == b and repr(a) == repr(b) for a, b in zip(got, expected))
    with pytest.raises(ValueError, match="3 momenta"):
        S.energies(q, p[:3])


@pytest.mark.parametrize("name", ["double_pendulum", "top_table3", "damped_double_pendulum",
                                  "forced_oscillator"])
def test_compiled_energies_are_the_python_ones_bit_for_bit(name, monkeypatch):
    """The compiled energies (mpvi_energy.h: M, the elimination of solve_dense, p^T v / 2 +
    V in MPFR) give, on generic rows, the numbers of the Python ones bit for bit; a row
    the C does not take (a number wider than the context) is computed by Python from
    there on, the same numbers again."""
    import gmpy2

    from mpvi.compiled import cbackend
    ctx = mpvi.GMPContext(64)
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    S = SYSTEMS[name](ctx)
    if not cbackend.active(ctx) or S.mass_expr is None:
        pytest.skip("no compiled kernels here")
    kernel = LagrangianSystem._energy_kernel(S)
    q = np.array([ctx.asarray(x) for x, _ in points(name)] * 3, dtype=object)
    p = np.array([ctx.asarray(v) for _, v in points(name)] * 3, dtype=object)
    p[3] = p[3] * ctx.num("-2.5")
    expected = [S.hamiltonian(x, y) for x, y in zip(q, p)]
    assert kernel is not None
    rows = kernel(q.tolist(), p.tolist(), list(S.param_values), ctx.eps)
    assert len(rows) == 6 and [repr(v) for v in rows] == [repr(v) for v in expected]
    wide = q.copy()
    wide[4] = np.array([gmpy2.mpfr(x, 300) for x in q[4]], dtype=object)
    assert len(kernel(wide.tolist(), p.tolist(), list(S.param_values), ctx.eps)) == 4
    got = S.energies(wide, p)
    assert [repr(v) for v in got] == [repr(S.hamiltonian(x, y)) for x, y in zip(wide, p)]


def test_energies_raise_at_a_singular_point_as_hamiltonian_does():
    top = system("top_table3", C64)
    q = np.array([C64.asarray([0, 1, 0]), C64.asarray([0, 0, 0])], dtype=object)
    p = np.array([C64.asarray([1, 0, 1])] * 2, dtype=object)
    with pytest.raises(SingularMatrixError, match="singular at q"):
        top.energies(q, p)
    gmp = table3_top(mpvi.GMPContext(64)).system            # the compiled rows stop there
    q = np.array([gmp.ctx.asarray(x) for x in ([0, 1, 0], [0, 1, 1], [0, 0, 0], [0, 1, 0])],
                 dtype=object)
    with pytest.raises(SingularMatrixError, match="singular at q"):
        gmp.energies(q, np.array([gmp.ctx.asarray([1, 0, 1])] * 4, dtype=object))


def test_singular_mass_matrix_raises_from_velocity():
    top = system("top_table3", C64)
    q = C64.asarray([0, 0, 0])       # theta = 0: the phi and psi axes coincide
    p = C64.asarray([1, 0, 1])
    with pytest.raises(SingularMatrixError, match="singular"):
        top.velocity(q, p)
    with pytest.raises(SingularMatrixError):
        top.hamiltonian(q, p)
    with pytest.raises(SingularMatrixError):
        top.hamiltonian_rhs(q, p)
    # a regular point is fine
    top.velocity(C64.asarray([0, 1, 0]), p)


# ----- float64 against 64 digits ------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_fp_system_agrees_with_mp(name):
    lo, f = system(name, C64), SYSTEMS[name](fp)
    t = "0.7"
    for q, v in points(name):
        qm, vm = C64.asarray(q), C64.asarray(v)
        qf, vf = fp.asarray(q), fp.asarray(v)
        assert isinstance(f.mass(qf)[0, 0], float)
        pairs = [
            (f.mass(qf), lo.mass(qm)), (f.dmass(qf), lo.dmass(qm)),
            (f.d2mass(qf), lo.d2mass(qm)), (f.grad_potential(qf), lo.grad_potential(qm)),
            (f.hess_potential(qf), lo.hess_potential(qm)),
            ([f.potential(qf)], [lo.potential(qm)]),
            *zip(f.node_derivatives(qf, vf), lo.node_derivatives(qm, vm)),
            *zip(f.hamiltonian_rhs(qf, f.momentum(qf, vf), fp.num(t)),
                 lo.hamiltonian_rhs(qm, lo.momentum(qm, vm), C64.num(t))),
            ([f.hamiltonian(qf, vf)], [lo.hamiltonian(qm, vm)]),
        ]
        if lo.has_force:
            pairs += list(zip(f.force_derivatives(fp.num(t), qf, vf),
                              lo.force_derivatives(C64.num(t), qm, vm)))
        for a, b in pairs:
            a = np.asarray(a, dtype=float)
            assert a.dtype == float
            assert rel_err(a, b, C64) < 1e-13


def test_a_64_digit_run_carries_64_digits():
    """Simpson on the double pendulum: 64 vs 80 digits agree to ~1e-60, float64 vs 80
    digits only to ~1e-14, so the mp run is not secretly limited by a float anywhere."""
    runs = {}
    for ctx in (C64, MPContext(80), fp):
        dp = nonlinear_double_pendulum(ctx)
        runs[ctx.name] = mpvi.solve(dp, "simpson", h="0.05", n=8)
    ref = runs["mp80"]

    def diff(sol):
        return max(rel_err(sol.q, ref.q, HI), rel_err(sol.p, ref.p, HI))
    assert diff(runs["mp64"]) < 1e-60
    assert 1e-17 < diff(runs["fp"]) < 1e-12
