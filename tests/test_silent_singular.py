"""Issue 47, silent class "singularities still crossed": every case ran through on main
before issue 47 and returned a number; each now raises IntegrationError naming the step,
the time and the singularity (or, for a function mpvi cannot differentiate, is refused
when the system is built), and a run that stays on one side is left alone.
"""
import pytest
import sympy as sp

import mpvi
from mpvi import IntegrationError, LagrangianSystem, Problem, solve

CROSSED = "crossed a singularity"


def one_dof(V, ctx):
    q = sp.Symbol("q")
    return LagrangianSystem("s", [q], sp.Matrix([[1]]), V(q), {}, ctx)


# ----- jumps: floor, ceiling, Piecewise switches (Max, Min: their derivatives' Heaviside) ---

JUMPS = {
    "floor": lambda q: q ** 2 / 2 + 4 * sp.floor(q),
    "floor of an expression": lambda q: q ** 2 / 2 + 4 * sp.floor(2 * q + sp.Rational(1, 3)),
    "ceiling": lambda q: q ** 2 / 2 + 4 * sp.ceiling(q),
    "Piecewise": lambda q: q ** 2 / 2 + sp.Piecewise((0, q < 1), (1, True)),
}


@pytest.mark.parametrize("method", ["rk4", "simpson", "midpoint", "gbs", "mutze_variation"])
@pytest.mark.parametrize("name", sorted(JUMPS))
def test_a_jump_or_kink_of_the_potential_is_not_run_through(name, method):
    """floor(q) in V ran through its jump (the energy 0.5 -> 4.5): the force of a jump is a
    Dirac comb, 0 off the integers, so nothing in a step saw it."""
    ctx = mpvi.GMPContext(32)
    S = one_dof(JUMPS[name], ctx)
    with pytest.raises(IntegrationError, match=CROSSED) as info:
        solve(Problem(S, ["1/2"], v0=["3"]), method, h="1/20", n=40, check_stability=False)
    assert "step" in str(info.value) and "t = " in str(info.value)


@pytest.mark.parametrize("method", ["rk4", "simpson"])
def test_a_run_inside_one_cell_of_floor_is_left_alone(method, monkeypatch):
    """The same bits as the run without floor: both kernels without Newton's start in
    doubles (floor's has none: ``MPVI_NEWTON_START=0`` for the other)."""
    from mpvi.engines import kernels
    monkeypatch.setenv(kernels.ENV_START, "0")
    monkeypatch.setattr(kernels, "_KERNELS", {})
    monkeypatch.setattr(kernels, "_ANY_CONTEXT", {})
    ctx = mpvi.GMPContext(32)
    S = one_dof(JUMPS["floor"], ctx)
    plain = one_dof(lambda q: q ** 2 / 2, ctx)
    a = solve(Problem(S, ["1/2"], v0=["1/10"]), method, h="1/20", n=10)
    b = solve(Problem(plain, ["1/2"], v0=["1/10"]), method, h="1/20", n=10)
    assert list(a.q[-1]) == list(b.q[-1])


# ----- gamma's poles at the negative integers --------------------------------------------------

@pytest.mark.parametrize("method", ["rk4", "simpson", "gbs", "hermite_variational"])
@pytest.mark.parametrize("f", [sp.gamma, sp.digamma])
def test_the_poles_of_gamma_at_the_negative_integers_are_guarded(f, method):
    """V = q^2/2 - gamma(q) from q = -3/2 falls into the pole at -1 (only the pole at 0
    was guarded); digamma has the same poles."""
    ctx = mpvi.GMPContext(32)
    S = one_dof(lambda q: q ** 2 / 2 - f(q), ctx)
    with pytest.raises(IntegrationError, match="poles of"):
        solve(Problem(S, ["-3/2"], v0=["3"]), method, h="1/20", n=40, check_stability=False)


def test_gamma_away_from_its_poles_runs():
    ctx = mpvi.GMPContext(32)
    S = one_dof(lambda q: q ** 2 / 2 + sp.gamma(q), ctx)
    sol = solve(Problem(S, ["1"], v0=["1/10"]), "rk4", h="1/20", n=10)
    assert sol.steps == 10


# ----- a mass matrix singular between nodes, any number of degrees of freedom -------------------

def mass_system(ctx, dof, coupled):
    """dof coordinates, the last w: M = 1 but for the w block, w^2 (coupled: the block of the
    last two coordinates is [[1, x], [x, w^2 + x^2]], det w^2 still); V = x^2/2 for the others."""
    qs = sp.symbols(f"x0:{dof - 1}") + (sp.Symbol("w"),)
    M = sp.eye(dof)
    w, x = qs[-1], qs[-2]
    M[dof - 1, dof - 1] = w ** 2
    if coupled:
        M[dof - 2, dof - 1] = M[dof - 1, dof - 2] = x
        M[dof - 1, dof - 1] = w ** 2 + x ** 2
    V = sum(s ** 2 for s in qs[:-1]) / 2
    return LagrangianSystem(f"m{dof}{coupled}", list(qs), M, V, {}, ctx)


@pytest.mark.parametrize("method", ["rk4", "simpson", "gbs"])
@pytest.mark.parametrize("dof, coupled", [(4, False), (6, False), (5, True)])
def test_a_mass_matrix_singular_between_nodes_is_seen_beyond_three_dof(dof, coupled, method):
    """M = diag(1, 1, 1, w^2) with w running through 0: M is positive definite at every node
    (w^2 > 0 on both sides), and det M was factored only up to three degrees of freedom."""
    ctx = mpvi.GMPContext(32)
    S = mass_system(ctx, dof, coupled)
    q0 = ["1/2"] + ["0"] * (dof - 2) + ["1"]
    v0 = ["0"] * (dof - 1) + ["-1"]
    with pytest.raises(IntegrationError, match=r"crossed a singularity") as info:
        solve(Problem(S, q0, v0=v0), method, h="1/20", n=60, check_stability=False)
    assert "det M" in str(info.value)


def test_a_mass_matrix_that_stays_regular_runs():
    ctx = mpvi.GMPContext(32)
    S = mass_system(ctx, 4, False)
    sol = solve(Problem(S, ["1/2", "0", "0", "1"], v0=["0", "0", "0", "1"]), "rk4", h="1/20",
                n=20)
    assert sol.steps == 20


def rotated_mass_system(ctx, d2, n=4):
    """n coordinates, the last d; M = R diag(1, ..., 1, d2) R^T with R a product of plane
    rotations (3/5, 4/5) mixing each coordinate with the next: one dense n x n block,
    det M = d2."""
    qs = sp.symbols("a b c d") if n == 4 else sp.symbols(f"q0:{n}")
    R = sp.eye(n)
    for i in range(n - 1):
        G = sp.eye(n)
        G[i, i] = G[i + 1, i + 1] = sp.Rational(3, 5)
        G[i, i + 1], G[i + 1, i] = -sp.Rational(4, 5), sp.Rational(4, 5)
        R = R * G
    M = (R * sp.diag(*[1] * (n - 1), d2(qs[-1])) * R.T).applyfunc(sp.expand)
    return LagrangianSystem(f"dense{n}", list(qs), M, sum(x ** 2 for x in qs[:-1]) / 2, {}, ctx)


def from_d(n, d0, v0):
    return [["0"] * (n - 1) + [d0], ["0"] * (n - 1) + [v0]]


@pytest.mark.parametrize("method", ["rk4", "simpson", "midpoint"])
def test_a_dense_block_of_four_whose_determinant_touches_zero_is_seen(method):
    """Every entry of the block moves with d and det M = d^2 only touches zero: the block
    was tested for positive definiteness at the nodes only, and rk4, simpson and midpoint
    ran through d = 0 (d = -12.1 after 20 RK4 steps)."""
    ctx = mpvi.GMPContext(32)
    S = rotated_mass_system(ctx, lambda d: d ** 2)
    with pytest.raises(IntegrationError, match=r"d \(from the denominator d\*\*2 in det M "
                       r"\(its block of a, b, c, d\)\) changed sign"):
        solve(Problem(S, ["0", "0", "0", "1/2"], v0=["0", "0", "0", "-1"]), method, h="1/10",
              n=20, check_stability=False)


@pytest.mark.parametrize("extra", [1, 3])
@pytest.mark.parametrize("method", ["rk4", "simpson", "midpoint", "hermite_variational"])
def test_a_larger_dense_block_whose_determinant_touches_zero_is_seen(method, extra):
    """Beyond DETERMINANT_DOF coordinates det M is not factored; the block is shown positive
    definite along each step's path instead.  Before, these runs went through d = 0 with an
    UnguardedSingularityWarning only.  The singularity is real: RK4 at h = 1/1000 stops
    at t = 0.293, h = 1/10 between t = 0.2 and 0.3."""
    n = mpvi.model.singular.DETERMINANT_DOF + extra
    ctx = mpvi.GMPContext(32)
    S = rotated_mass_system(ctx, lambda d: d ** 2, n)
    q0, v0 = from_d(n, "1/2", "-1")
    with pytest.raises(IntegrationError, match=r"step [23] at t = 0\.[23]: the mass matrix's "
                       rf"block of q0, q1, \.\.\., q{n - 1} \({n} coordinates\) is not shown "
                       "positive definite on the step's path"):
        solve(Problem(S, q0, v0=v0), method, h="1/10", n=20, check_stability=False)


def test_a_dense_block_that_stays_regular_runs():
    """det M = 1 + d^2 cannot vanish: nothing guarded, the run goes on; beyond
    DETERMINANT_DOF coordinates the block is checked along the path and the run is the same
    to the bit as without the check."""
    ctx = mpvi.GMPContext(32)
    S = rotated_mass_system(ctx, lambda d: 1 + d ** 2)
    sol = solve(Problem(S, ["0", "0", "0", "1/2"], v0=["0", "0", "0", "-1"]), "rk4", h="1/10",
                n=20)
    assert sol.steps == 20 and len(mpvi.model.singular.singularities(S)) == 0
    n = mpvi.model.singular.DETERMINANT_DOF + 1
    big = rotated_mass_system(ctx, lambda d: 1 + d ** 2, n)
    q0, v0 = from_d(n, "1/2", "-1")
    sing = mpvi.model.singular.singularities(big)
    assert sing.blocks == [list(range(n))]
    sol = solve(Problem(big, q0, v0=v0), "simpson", h="1/10", n=20)
    sing.blocks = []
    try:
        plain = solve(Problem(big, q0, v0=v0), "simpson", h="1/10", n=20)
    finally:
        sing.blocks = [list(range(n))]
    assert sol.steps == 20 and list(sol.q[-1]) == list(plain.q[-1])


@pytest.mark.parametrize("method, h", [("rk4", "1/10"), ("simpson", "1/20"), ("midpoint", "1/10")])
def test_a_chain_of_six_pendulums_runs_without_a_false_alarm(method, h):
    """A planar chain of six pendulums (M_ik = (6 - max(i, k)) cos(q_i - q_k), a Gram
    matrix, positive definite everywhere) from a large displacement: its 6 x 6 block is
    checked at every step and never refused."""
    q = sp.symbols("q1:7")
    M = sp.Matrix(6, 6, lambda i, k: (6 - max(i, k)) * sp.cos(q[i] - q[k]))
    ctx = mpvi.GMPContext(32)
    S = LagrangianSystem("chain6", list(q), M, -sum((6 - i) * sp.cos(q[i]) for i in range(6)),
                         {}, ctx)
    assert mpvi.model.singular.singularities(S).blocks == [list(range(6))]
    sol = solve(Problem(S, ["1", "-1/2", "1/3", "1", "-1", "1/2"], v0=["0"] * 6), method, h=h,
                n=40)
    assert sol.steps == 40


def test_a_larger_block_that_reads_the_velocities_is_named():
    """A block of L_vv beyond DETERMINANT_DOF coordinates whose entries read the velocities
    cannot be checked along a path of positions: a warning naming it when the singularities
    are found."""
    n = mpvi.model.singular.DETERMINANT_DOF + 1
    qs, vs = sp.symbols(f"q0:{n}"), sp.symbols(f"v0:{n}")
    L = sum(v ** 2 for v in vs) / 2 + sum(vs) ** 4 / 12 - sum(x ** 2 for x in qs) / 2
    S = LagrangianSystem.from_lagrangian("vdense", list(qs), list(vs), L, {}, mpvi.GMPContext(32))
    with pytest.warns(mpvi.model.singular.UnguardedSingularityWarning,
                      match=f"block of q0, .*, q{n - 1} \\({n} coordinates, more than "
                      f"{n - 1}, reading the velocities"):
        mpvi.model.singular.singularities(S)


def test_the_definiteness_test_is_a_bound():
    """_indefinite_block: a ball matrix whose midpoint minus the Frobenius norm of its radii
    is positive definite passes; the same midpoint with radii past its least eigenvalue, or
    an indefinite midpoint, fails; blocks are told apart by index."""
    from flint import arb

    from mpvi.model.singular import _indefinite_block
    two = [arb(2), arb(1), arb(2)]             # [[2, 1], [1, 2]]: eigenvalues 1 and 3
    assert _indefinite_block([[0, 1]], two) is None
    assert _indefinite_block([[0, 1]], [arb(2, "0.3"), arb(1, "0.3"), arb(2, "0.3")]) is None
    assert _indefinite_block([[0, 1]], [arb(2, "0.6"), arb(1, "0.6"), arb(2, "0.6")]) == 0
    assert _indefinite_block([[0, 1], [2, 3]], two + [arb(1), arb(2), arb(1)]) == 1
    assert _indefinite_block([[0]], [arb("nan")]) == 0


# ----- a collision: a squared distance reaches zero without changing sign -------------------------

def kepler(ctx, dim=2, centre=0):
    qs = sp.symbols("x y z")[:dim]
    r2 = (qs[0] - centre) ** 2 + sum(s ** 2 for s in qs[1:])
    return LagrangianSystem(f"kepler{dim}{centre}", list(qs), sp.eye(dim), -1 / sp.sqrt(r2), {},
                            ctx)


@pytest.mark.parametrize("method", ["rk4", "rk2", "hermite_variational", "hermite_galerkin",
                                    "mutze_variation", "mutze", "gbs"])
def test_kepler_from_rest_does_not_pass_through_the_centre(method):
    """Kepler started at rest falls into r = 0 at t = pi/(2 sqrt 2); x^2 + y^2 only touches
    zero, so no sign changed and the runs went through (x = 5.8 after 40 RK4 steps) or
    jumped back with a hundredfold momentum (mutze, GBS, the Hermite VI)."""
    ctx = mpvi.GMPContext(32)
    with pytest.raises(IntegrationError, match="(passed through|heads through) its zero|"
                       "heads through the zero") as info:
        solve(Problem(kepler(ctx), [1, 0], p0=[0, 0]), method, h="1/20", n=40,
              check_stability=False)
    assert "x**2 + y**2" in str(info.value) and "step 2" in str(info.value)


@pytest.mark.parametrize("q0", [["1", "1e-12"], ["1/2", "-3/4"]])
def test_a_collision_off_the_axes_and_in_three_dimensions(q0):
    ctx = mpvi.GMPContext(32)
    with pytest.raises(IntegrationError, match="passed through its zero"):
        solve(Problem(kepler(ctx), q0, p0=[0, 0]), "rk4", h="1/20", n=40)
    with pytest.raises(IntegrationError, match="passed through its zero"):
        solve(Problem(kepler(ctx, 3), q0 + ["1/3"], p0=[0, 0, 0]), "rk4", h="1/20", n=40)


def test_a_collision_with_a_centre_off_the_origin():
    """(x - 1)^2 + y^2 is expanded by factoring into x^2 - 2x + y^2 + 1, which an interval
    cannot tell from a factor that changes sign: the quadratic is classified exactly."""
    ctx = mpvi.GMPContext(32)
    S = kepler(ctx, 2, 1)
    assert [str(f) for f in mpvi.model.singular.singularities(S).touching] == \
        ["x**2 - 2*x + y**2 + 1"]
    with pytest.raises(IntegrationError, match="passed through its zero"):
        solve(Problem(S, [2, 0], p0=[0, 0]), "rk4", h="1/20", n=40)


@pytest.mark.parametrize("method", ["rk4", "simpson", "hermite_variational"])
def test_an_eccentric_orbit_close_to_the_centre_runs(method):
    """e = 0.98 (pericentre 0.0099): the step passes close to r = 0 but not through it."""
    ctx = mpvi.GMPContext(32)
    sol = solve(Problem(kepler(ctx), [1, 0], p0=[0, "1/7"]), method, h="1/400", n=600,
                check_stability=False)
    assert sol.steps == 600


def test_a_near_collision_the_step_cannot_resolve_is_refused():
    """Angular momentum 1e-12: the true orbit turns 1e-25 from the centre and comes back;
    RK4 with h = 1/20 passed straight through (x = 5.8).  Near a collision the step must
    still resolve the motion (|h| rho below the method's bound, as before the run)."""
    ctx = mpvi.GMPContext(32)
    with pytest.raises(IntegrationError, match="no longer resolves the motion") as info:
        solve(Problem(kepler(ctx), [1, 0], p0=[0, "1e-12"]), "rk4", h="1/20", n=40)
    assert "check_stability=False" in str(info.value) and "take |h| <" in str(info.value)


@pytest.mark.parametrize("method", ["rk4", "simpson", "mutze"])
def test_a_resolved_pericentre_passage_runs_with_the_resolution_check_on(method):
    """e = 0.98 with h = 1/1000 (|h| rho about 1.4 at the pericentre): through the
    pericentre to the end, nothing refused."""
    ctx = mpvi.GMPContext(32)
    sol = solve(Problem(kepler(ctx), [1, 0], p0=[0, "1/7"]), method, h="1/1000", n=1300)
    assert sol.steps == 1300
    assert min(abs(q[0]) + abs(q[1]) for q in sol.q) < ctx.num("0.012")


# ----- a touching factor that is not quadratic: 1 - cos q ----------------------------------------

@pytest.mark.parametrize("method", ["rk4", "simpson", "gbs", "mutze_variation",
                                    "hermite_variational"])
def test_a_touching_factor_that_is_not_quadratic_is_guarded_along_the_path(method):
    """V = -1/(1 - cos q) attracts q into 0, where 1 - cos q touches zero without changing
    sign (its interval is [0, 2]): the factor was dropped as one that cannot change sign and
    every method ran through the collision."""
    ctx = mpvi.GMPContext(32)
    S = one_dof(lambda q: -1 / (1 - sp.cos(q)), ctx)
    assert [str(f) for f in mpvi.model.singular.singularities(S).touching] == ["cos(q) - 1"]
    with pytest.raises(IntegrationError, match=r"cos\(q\) - 1 \(from the denominator"):
        solve(Problem(S, ["1/2"], v0=["-1"]), method, h="1/20", n=60, check_stability=False)


@pytest.mark.parametrize("V", [lambda q: 1 / (1 - sp.cos(q)),
                               lambda q: q ** 2 / 2 - sp.log(1 - sp.cos(q))], ids=["pole", "log"])
def test_a_barrier_that_touches_zero_is_left_alone(V):
    """Repelled by q = 0 (and 2 pi), the orbit turns before it (at q = 0.554 and 0.0789,
    h = 1/200): every step runs, the guard refuses nothing."""
    ctx = mpvi.GMPContext(32)
    S = one_dof(V, ctx)
    for method in ["rk4", "simpson"]:
        sol = solve(Problem(S, ["1"], v0=["-3"]), method, h="1/20", n=60)
        assert sol.steps == 60 and min(x[0] for x in sol.q) > ctx.num("0.05")   # turns at 0.079, 0.554
