"""The fast paths of certify (issue 39: the certified run at most 5x the plain run) prove
what the general one does: a step Jacobian enclosed once over a hull of the run and reused
(an affine step map), and a dual step whose Krawczyk test runs on balls.  Every enclosure
is checked against a 200-digit rerun of the same run (exact data and h: the 64- and the
200-digit runs are the same computation); the hull is refused where it must be
(nonlinear, time-dependent or implicit steps) and made again when the state leaves it."""
import importlib
from fractions import Fraction

import flint
import pytest
import sympy as sp

import mpvi
from mpvi.proof.certify import certify

REF = 200
STEPS = 120


def exact(x):
    """A gmpy2 number or an exact ball as the Fraction it is."""
    if isinstance(x, flint.arb):
        man, exp = x.man_exp()
        return Fraction(int(man)) * Fraction(2) ** int(exp)
    return Fraction(*x.as_integer_ratio())


def contains(ball, value):
    return abs(exact(ball.mid()) - exact(value)) <= exact(ball.rad())


def two_masses(ctx):
    """Two masses on springs, exact data: M q'' + K q = 0."""
    system = mpvi.LinearSystem([[2, 0], [0, 1]], [[3, -1], [-1, 1]], ctx)
    return mpvi.Problem(system, ["1/2", 0], p0=[0, "1/4"])


def pendulum(ctx):
    q = sp.Symbol("q")
    system = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
    return mpvi.Problem(system, ["1/2"], v0=[0])


def driven(ctx):
    """A linear oscillator driven by cos t: an affine step map that depends on the time."""
    q, v, t = sp.Symbol("q"), sp.Symbol("v"), sp.Symbol("t")
    system = mpvi.LagrangianSystem.from_lagrangian(
        "driven", [q], [v], v ** 2 / 2 - q ** 2 / 2 + q * sp.cos(t) / 4, {}, ctx)
    return mpvi.Problem(system, ["1/2"], v0=[0])


def runs(make, method, **kw):
    """The 64-digit run and its 200-digit rerun (same data, same h)."""
    opts = {"check_stability": False} if (method == "simpson" and make is two_masses) else {}
    return [mpvi.solve(make(mpvi.GMPContext(d)), method, h="1/16", n=STEPS, **opts, **kw)
            for d in (64, REF)]


def assert_encloses(cert, rerun):
    """Every certified saved state contains the 200-digit rerun's state at its node."""
    assert cert.complete, cert
    y = rerun.y
    for i, k in enumerate(cert.nodes):
        j = rerun_index(rerun, k)
        for ball, value in zip(list(cert.q[i]) + list(cert.y[i]), list(rerun.q[j]) + list(y[j])):
            assert contains(ball, value), (k, ball, value)


def rerun_index(rerun, k):
    return k if rerun.saveat is None else k // rerun.saveat


@pytest.mark.parametrize("method", ["newmark", "simpson", "rk4", "midpoint", "gauss"])
def test_the_hull_jacobian_encloses_the_200_digit_rerun(method):
    """Every method on a linear system is an affine step: closed forms (Newmark, Simpson),
    explicit (RK4) or implicit (midpoint, Gauss: the hull's equations proven by one
    Krawczyk test over the hull, holding the root of its centre's)."""
    sol, rerun = runs(two_masses, method)
    cert = certify(sol)
    hulls, by_hull, by_own = cert.jacobians
    # one hull, made after the first step (its own), serves every other step
    assert (hulls, by_hull, by_own) == (1, STEPS - 1, 1)
    assert_encloses(cert, rerun)


@pytest.mark.parametrize("method", ["newmark", "simpson", "rk4"])
def test_the_hull_and_the_general_path_agree(method):
    """The same sets proven both ways: the balls overlap, and the hull's are no wider than
    3 times the general path's, ball by ball (measured on the two masses: at most 1.1
    times for Newmark and Simpson, 2.0 for RK4, in the first five nodes, where the general
    path's intersection with its box image still tightens some components; at the last
    node Newmark's and Simpson's hull balls are 17 and 34 times narrower, RK4's 1.6 times
    wider), with the same proven digits (to 1e-8)."""
    sol, _ = runs(two_masses, method)
    fast, general = certify(sol), certify(sol, reuse=False)
    assert general.jacobians == [0, 0, STEPS]
    worst = Fraction(0)
    for a_state, b_state in zip(fast.q + fast.y, general.q + general.y):
        for a, b in zip(a_state, b_state):
            assert a.overlaps(b)
            if exact(b.rad()):
                worst = max(worst, exact(a.rad()) / exact(b.rad()))
    assert worst <= 3, float(worst)
    assert min(fast.min_digits) >= min(general.min_digits) - Fraction(1, 10)


def test_a_hull_the_state_leaves_is_made_again():
    """Saved every 40th node, the run's states show little of the oscillation of p: the
    first hull (their range and a margin) is left, a step that leaves it takes its own
    Jacobian and a hull over both is made; the balls still hold the 200-digit rerun."""
    sol, rerun = runs(two_masses, "rk4", saveat=40)
    cert = certify(sol)
    hulls, by_hull, by_own = cert.jacobians
    assert hulls >= 2 and by_own >= hulls and by_hull + by_own == STEPS, cert.jacobians
    assert_encloses(cert, rerun)


@pytest.mark.parametrize("make, method", [(pendulum, "rk4"), (pendulum, "midpoint"),
                                          (driven, "rk4")])
def test_the_hull_is_refused_where_a_steps_own_jacobian_is_needed(make, method):
    """Nonlinear (the hull's Jacobian is wide) or driven by the time (the hull's image of
    its centre over every time of the run is wide): every step its own Jacobian, and the
    rerun enclosed."""
    sol, rerun = runs(make, method)
    cert = certify(sol)
    assert cert.jacobians == [0, 0, STEPS]
    assert_encloses(cert, rerun)


@pytest.mark.parametrize("method", ["midpoint", "simpson"])
def test_the_dual_steps_krawczyk_test_on_balls_encloses_the_rerun(method):
    """The nonlinear implicit step: its Krawczyk test on the balls of the values, F_y from
    one residual on duals (implicit function theorem)."""
    sol, rerun = runs(pendulum, method)
    assert_encloses(certify(sol), rerun)


def test_reuse_must_be_a_bool():
    sol, _ = runs(pendulum, "rk4")
    with pytest.raises(TypeError, match="reuse"):
        certify(sol, reuse=1)


def test_the_dual_division_and_power_fast_paths_give_the_general_derivatives():
    """x / c (c an int, a ball or a constant dual) and x ** k skip the general path
    (_combine); their values and derivatives still enclose those of 1/3 and 2/7."""
    from mpvi.numbers.arb import _Dual, _DualContext
    A = _DualContext(64)
    with A.active():
        one, zero = flint.arb(1), flint.arb(0)
        x = _Dual(flint.arb(1) / 3, (one, zero))
        c = _Dual(flint.arb(5), ())
        general = _Dual(x.v / c.v, _Dual._combine(x, c, 1 / c.v, -(x.v / c.v) / c.v))
        for got in (x / c, x / 5, x / flint.arb(5)):
            assert got.v.overlaps(general.v) and contains(got.v, Fraction(1, 15))
            assert contains(got.d[0], Fraction(1, 5)) and contains(got.d[1], Fraction(0))
            assert got.d[0].rad() < flint.arb(10) ** -60
        for k in (-2, 1, 3):
            got = x ** k
            assert contains(got.v, Fraction(1, 3) ** k)
            assert contains(got.d[0], k * Fraction(1, 3) ** (k - 1))
            assert contains(got.d[1], Fraction(0))
        assert (c / 2).d == () and (x ** 0).d == ()


def inverted(ctx):
    """The pendulum upside down (q'' = sin q near q = 0): its step's Jacobians stretch one
    direction by e^t and shrink another, so the columns of Lohner's parallelepiped basis
    align and its condition grows."""
    q = sp.Symbol("q")
    system = mpvi.LagrangianSystem("inverted", [q], sp.Matrix([[1]]), sp.cos(q), {}, ctx)
    return mpvi.Problem(system, ["1/1024"], v0=[0])


def test_an_ill_conditioned_basis_is_orthonormalized_and_any_basis_proves(monkeypatch):
    """Lohner's basis is the midpoint of B (nothing wraps) until its condition estimate
    passes BASIS_CONDITION, then B's columns are orthonormalized: here it happens (the
    saddle of the inverted pendulum, 7.5 time units), and with the switch off (a basis of
    any condition) the enclosures are proven too: both contain the 200-digit rerun."""
    module = importlib.import_module("mpvi.proof.certify")
    calls = []
    real = module._orthonormal

    def spy(B, d):
        calls.append(1)
        return real(B, d)
    monkeypatch.setattr(module, "_orthonormal", spy)
    sol, rerun = runs(inverted, "rk4")
    assert_encloses(certify(sol), rerun)
    assert calls
    calls.clear()
    monkeypatch.setattr(module, "BASIS_CONDITION", float("inf"))
    assert_encloses(certify(sol), rerun)
    assert not calls


def test_a_point_root_outside_the_box_tests_ball_is_refused(monkeypatch):
    """The mean-value form joins the point step's root and the box step's derivatives:
    the point step's solution must lie in the box test's Krawczyk ball.  A point step
    whose recorded solution is moved away (by 1, far beyond the ball) fails the step,
    naming why."""
    module = importlib.import_module("mpvi.proof.certify")
    real = module._hand_over

    def moved(balls, duals):
        if balls._centres:
            balls._centres = [(c, C, [k + 1 for k in K]) for c, C, K in balls._centres]
        real(balls, duals)
    monkeypatch.setattr(module, "_hand_over", moved)
    sol, _ = runs(pendulum, "midpoint")
    cert = certify(sol, reuse=False)
    assert cert.failed_step == 0 and "point step's root" in cert.why, cert
