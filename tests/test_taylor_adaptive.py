"""The adaptive Taylor reference (issue 36): Jorba & Zou's substeps meet their tolerance
against exact solutions (the pendulum by Jacobi's elliptic functions, Kepler's problem by
Kepler's equation, a relativistic particle given by a general Lagrangian), the substeps
are counted, dense output and events use the substeps' polynomials, singular factors are
checked at every substep end, a collision is reported, and the compiled steps are the
Python ones bit for bit."""
import importlib
import types

import mpmath
import numpy as np
import pytest
import sympy as sp

import mpvi
from mpvi.compiled import cbackend
from mpvi.engines import kernels

G64 = mpvi.GMPContext(64)
taylor_module = importlib.import_module("mpvi.methods.taylor")
th, x, y, q, v = sp.symbols("theta x y q v")

Q0 = "2"
"""The pendulum's initial angle (at rest): a large swing, strongly nonlinear."""
ECC = "3/5"
"""The eccentricity of the Kepler orbit (pericentre 1 at t = 0)."""
FORCE = sp.Rational(1, 2)
"""The constant force on the relativistic particle."""


def pendulum(ctx):
    system = mpvi.LagrangianSystem("pendulum", [th], sp.Matrix([[1]]), -sp.cos(th), {}, ctx)
    return mpvi.Problem(system, [Q0], p0=["0"])


def pendulum_exact(ctx, t):
    """(q, p) at t of q'' = -sin q from rest at Q0: sin(q/2) = k sn(K - t; k),
    p = -2 k cn(K - t; k), k = sin(Q0/2) (mpmath, 20 digits beyond the context)."""
    with mpmath.workdps(ctx.dps + 20):
        k = mpmath.sin(mpmath.mpf(Q0) / 2)
        m = k * k
        u = mpmath.ellipk(m) - mpmath.mpf(ctx.to_str(t, ctx.dps + 15))
        qq = 2 * mpmath.asin(k * mpmath.ellipfun("sn", u, m=m))
        pp = -2 * k * mpmath.ellipfun("cn", u, m=m)
        return [ctx.num(mpmath.nstr(z, ctx.dps + 15)) for z in (qq, pp)]


def pendulum_quarter_period(ctx):
    """K(k): the time at which the pendulum passes q = 0."""
    with mpmath.workdps(ctx.dps + 20):
        k = mpmath.sin(mpmath.mpf(Q0) / 2)
        return ctx.num(mpmath.nstr(mpmath.ellipk(k * k), ctx.dps + 15))


def kepler(ctx):
    system = mpvi.LagrangianSystem("kepler", [x, y], sp.eye(2), -1 / sp.sqrt(x ** 2 + y ** 2),
                                   {}, ctx)
    with ctx.active():
        v0 = ctx.sqrt(1 + ctx.num(ECC))
    return mpvi.Problem(system, ["1", "0"], p0=["0", v0])


def kepler_exact(ctx, t):
    """(x, y, p_x, p_y) at t on the orbit of eccentricity ECC with pericentre 1 at t = 0
    (mu = 1): E - e sin E = n t by Newton, then the conic."""
    with ctx.active():
        e = ctx.num(ECC)
        a = 1 / (1 - e)
        n = 1 / (a * ctx.sqrt(a))
        M = n * t
        E = M
        for _ in range(500):
            E1 = E - (E - e * ctx.sin(E) - M) / (1 - e * ctx.cos(E))
            if abs(E1 - E) <= 4 * ctx.eps * (1 + abs(E)):
                E = E1
                break
            E = E1
        c, s = ctx.cos(E), ctx.sin(E)
        b, d = ctx.sqrt(1 - e * e), 1 - e * ctx.cos(E)
        return [a * (c - e), a * b * s, -a * n * s / d, a * n * b * c / d]


def relativistic(ctx):
    """L = -sqrt(1 - v^2) + F q (c = m = 1): not quadratic in v, so a general Lagrangian."""
    system = mpvi.LagrangianSystem.from_lagrangian("relativistic particle", [q], [v],
                                                   -sp.sqrt(1 - v ** 2) + FORCE * q, {}, ctx)
    return mpvi.Problem(system, ["0"], v0=["1/2"])


def relativistic_exact(ctx, t):
    """p = p0 + F t, q = (sqrt(1 + p^2) - sqrt(1 + p0^2)) / F, p0 = v0 / sqrt(1 - v0^2)."""
    with ctx.active():
        F, v0 = ctx.num(FORCE), ctx.num("1/2")
        p0 = v0 / ctx.sqrt(1 - v0 * v0)
        p = p0 + F * t
        return [(ctx.sqrt(1 + p * p) - ctx.sqrt(1 + p0 * p0)) / F, p]


CASES = {"pendulum": (pendulum, pendulum_exact), "kepler": (kepler, kepler_exact),
         "relativistic": (relativistic, relativistic_exact)}


def state_error(ctx, sol, j, exact):
    return max(abs(a - b) for a, b in zip(list(sol.q[j]) + list(sol.p[j]), exact(ctx, sol.t[j])))


def scale(ctx, values):
    return max([ctx.one] + [abs(z) for z in values])


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("tol", ["1e-30", "1e-45"])
def test_each_step_from_exact_data_meets_tol(name, tol):
    """A step from the exact state at t_j to t_j + h (h = 1/2, several substeps) errs by at
    most (its substeps) x tol x max(1, |y|): each substep's error is below tol times the
    state's scale (measured: 5 % of it on Kepler's orbit)."""
    make, exact = CASES[name]
    prob = make(G64)
    h = G64.num("1/2")
    stepper = mpvi.get_method("taylor").prepare(prob.system, h, G64, tol=tol)
    most = 0
    for j in range(12):
        t = j * h
        y0, y1 = exact(G64, t), exact(G64, t + h)
        n = prob.system.dof
        before = stepper.substeps
        r = stepper(t, np.array(y0[:n], dtype=object), np.array(y0[n:], dtype=object))
        nsub = stepper.substeps - before
        most = max(most, nsub)
        with G64.active():
            err = max(abs(a - b) for a, b in zip(list(r.q) + list(r.y), y1))
            assert err <= nsub * G64.num(tol) * scale(G64, y0 + y1), (j, G64.to_str(err, 3))
    assert most >= 2                          # the steps are crossed in substeps


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_global_error_is_the_sum_of_the_substeps_tolerances(name):
    """Over 20 nodes of h = 1 the error stays below (substeps) x tol x max(1, |y|), and it
    follows tol: 1e-45 gives an error 1e13 to 1e17 times smaller than 1e-30."""
    make, exact = CASES[name]
    prob = make(G64)
    errs = {}
    for tol in ("1e-30", "1e-45"):
        sol = mpvi.solve(prob, "taylor", h=1, n=20, tol=tol, check_stability=False)
        worst = max(state_error(G64, sol, j, exact) for j in range(len(sol.t)))
        top = max(scale(G64, list(sol.q[j]) + list(sol.p[j])) for j in range(len(sol.t)))
        assert worst <= sol.stats["substeps"] * G64.num(tol) * top
        errs[tol] = worst
    assert 1e13 < errs["1e-30"] / errs["1e-45"] < 1e17


def test_the_default_tolerance_is_the_context_eps():
    """No tol: eps, at Jorba & Zou's order (76 at 64 digits, as heyoka.py's): the
    pendulum to about 1e-63."""
    prob = pendulum(G64)
    sol = mpvi.solve(prob, "taylor", h=1, n=10, check_stability=False)
    assert mpvi.get_method("taylor").parameters()["tol"] == "eps"
    order = mpvi.engines.taylor.jorba_zou_order
    assert [order(G64.num(t), G64) for t in ("1e-28", "1e-64", "1e-128")] == [34, 75, 149]
    assert order(G64.eps, G64) == 76
    assert max(state_error(G64, sol, j, pendulum_exact) for j in range(11)) < 1e-62


def test_substeps_are_counted():
    """stats["substeps"]: one per step when h is below the adaptive substep; about the same
    number whether the nodes are 1 s or 10 s apart (each node cuts one substep more at
    most); fewer when the pendulum swings less (a larger radius of convergence)."""
    prob = pendulum(G64)
    tiny = mpvi.solve(prob, "taylor", h="1/100", n=5)
    assert tiny.stats["substeps"] == tiny.stats["steps"] == 5
    ten = mpvi.solve(prob, "taylor", h=1, n=10, check_stability=False).stats["substeps"]
    one = mpvi.solve(prob, "taylor", h=10, n=1, check_stability=False).stats["substeps"]
    assert one < ten <= one + 10 and one >= 20
    small = mpvi.Problem(prob.system, ["1/10"], p0=["0"])
    assert mpvi.solve(small, "taylor", h=10, n=1, check_stability=False).stats["substeps"] < one
    fixed = mpvi.solve(prob, "taylor", h="1/10", n=3, tol=None)
    assert fixed.stats["substeps"] == 3


def test_dense_output_is_the_substeps_polynomial_at_the_tolerance():
    """Nodes 2 s apart (each step crossed in several substeps): sol(t) between them is the
    polynomial of the substep holding t, exact to the tolerance (a single Taylor step of
    theta h would not converge there); at theta = 1 it is the node bit for bit."""
    prob = pendulum(G64)
    sol = mpvi.solve(prob, "taylor", h=2, n=3, tol="1e-45", check_stability=False)
    assert sol.stats["substeps"] >= 9
    for t in ("1/3", "7/4", "3.1", "5.9"):
        s = sol(t)
        ex = pendulum_exact(G64, G64.num(t))
        assert abs(s.q[0] - ex[0]) < 1e-43 and abs(s.v[0] - ex[1]) < 1e-43
    stepper = mpvi.get_method("taylor").prepare(prob.system, G64.num(2), G64, tol="1e-45")
    dense = stepper.substeps_of(G64.zero, prob.q0, prob.p0)
    end = stepper(G64.zero, prob.q0, prob.p0)
    assert len(dense.starts) >= 3 and dense.at(G64.one)[0][0] == end.q[0]


def test_events_are_located_on_the_substeps_polynomials():
    """q = 0 is crossed at t = K(k), 3 K(k), ...: located to the tolerance (with nodes
    2 s apart) and at the default tolerance to about eps."""
    prob = pendulum(G64)
    K = pendulum_quarter_period(G64)

    def crossing(t, qq, vv):
        return qq[0]
    for tol, bound in (("1e-45", 1e-43), ("eps", 1e-60)):
        sol = mpvi.solve(prob, "taylor", h=2, n=4, tol=tol, events=crossing,
                         check_stability=False)
        times = [e.t for e in sol.events]
        assert len(times) == 2
        assert abs(times[0] - K) < bound and abs(times[1] - 3 * K) < bound
        assert all(abs(e.q[0]) < bound for e in sol.events)


def test_a_general_lagrangian_runs_on_q_and_v():
    """A Lagrangian not quadratic in v (formerly refused: "has no mass-matrix
    expression"): Taylor series of (q, v) from L_vv v' = r, p from the Legendre map at the
    nodes; exact to the tolerance, and at eps by default."""
    prob = relativistic(G64)
    assert kernels.taylor_steps(prob.system).form == "qv"
    sol = mpvi.solve(prob, "taylor", h="1/2", n=8)
    assert max(state_error(G64, sol, j, relativistic_exact) for j in range(9)) < 1e-62
    with G64.active():
        vv = sol.v[-1][0]
        assert abs(sol.p[-1][0] - vv / G64.sqrt(1 - vv * vv)) < 1e-62
    # the fixed step of a given degree works on it too
    fixed = mpvi.solve(prob, "taylor", h="1/8", n=4, tol=None, degree=40)
    assert state_error(G64, fixed, 4, relativistic_exact) < 1e-50


def test_singular_factors_are_checked_at_every_substep_end():
    """V = q^2/2 + 1/(3 + q) has the singular factor 3 + q (positive on this run).  With
    the opposite sign demanded, the first interior substep end raises, naming it; with
    the right one the step passes."""
    S = mpvi.LagrangianSystem("guarded", [q], sp.Matrix([[1]]), q ** 2 / 2 + 1 / (3 + q), {},
                              G64)
    assert len(mpvi.model.singular.singularities(S)) == 1
    stepper = mpvi.get_method("taylor").prepare(S, G64.num(4), G64)
    q0, p0 = np.array([G64.num("1/2")], dtype=object), np.array([G64.zero], dtype=object)
    stepper.guard_signs = (1,)
    stepper(G64.zero, q0, p0)
    assert stepper.substeps >= 2
    stepper.guard_signs = (-1,)
    with pytest.raises(mpvi.model.singular.SingularityCrossed, match=r"end of substep 1 of .*q \+ 3"):
        stepper(G64.zero, q0, p0)


def test_a_collision_is_reported_not_crossed():
    """V = -1/q falling from q = 1 at rest hits q = 0 at t = pi / (2 sqrt 2): the substeps
    shrink with the radius of convergence, and the run stops there, naming the step and
    the time, as soon as the rest of the step would need more than MAX_SUBSTEPS of them
    (a quick refusal, not minutes of substeps), or when they no longer move the time."""
    S = mpvi.LagrangianSystem("fall", [q], sp.Matrix([[1]]), -1 / q, {}, G64)
    prob = mpvi.Problem(S, ["1"], p0=["0"])
    with pytest.raises(mpvi.IntegrationError, match=r"step 0 .*radius of convergence") as info:
        mpvi.solve(prob, "taylor", h=2, n=1, check_stability=False)
    assert "at t = 1.110" in str(info.value)         # pi / (2 sqrt 2) = 1.1107207...
    # a step ending 1e-62 past the collision: the substeps close in on it until they no
    # longer move the time (the pace rule does not fire: 1e-62 is within 10^4 substeps)
    with G64.active():
        end = G64.pi / (2 * G64.sqrt(G64.num(2)))
    with pytest.raises(mpvi.IntegrationError, match=r"shrank to .* at t = 1.11072073454, "
                                                    r"below the resolution"):
        mpvi.solve(prob, "taylor", h=end + G64.num("1e-62"), n=1, check_stability=False)


def test_a_step_spanning_too_many_radii_is_refused_at_once():
    """h = 10^6 on the pendulum would take about 10^6 substeps: refused after the first,
    naming a smaller h, in every context."""
    for ctx in (G64, mpvi.MPContext(16), mpvi.fp):
        prob = mpvi.Problem(pendulum(ctx).system, ["1/2"], p0=["0"])
        with pytest.raises(mpvi.IntegrationError, match=r"more than 10000 .*smaller h"):
            mpvi.solve(prob, "taylor", h="1e6", n=1, check_stability=False)


def test_bad_tolerances_and_degrees_are_refused():
    prob = pendulum(G64)
    for bad in (0, 2, "-1e-5", "abc", "nan"):
        with pytest.raises((ValueError, TypeError), match="tol"):
            mpvi.solve(prob, "taylor", h="1/10", n=1, tol=bad)
    with pytest.raises(ValueError, match=r"degree 5 is too low for tol .* degree >= 16"):
        mpvi.solve(prob, "taylor", h="1/10", n=1, degree=5)
    with pytest.raises(ValueError, match="needs Taylor polynomials of degree"):
        mpvi.solve(prob, "taylor", h="1/10", n=1, tol="1e-1000")


def test_a_solution_file_keeps_its_dense_output(tmp_path):
    """Saved and loaded (dense kind "taylor"): sol(t) recomputes the step's substeps and
    gives the same bits."""
    prob = pendulum(G64)
    sol = mpvi.solve(prob, "taylor", h=2, n=2, tol="1e-40", check_stability=False)
    path = sol.save(tmp_path / "pendulum.json")
    back = mpvi.load_solution(path, system=prob.system)
    a, b = sol("2.5"), back("2.5")
    assert a.q[0] == b.q[0] and a.p[0] == b.p[0]
    assert back.stats["substeps"] == sol.stats["substeps"]


def _problems():
    from mpvi.systems import n_link_pendulum
    from mpvi.systems.double_pendulum import nonlinear_double_pendulum
    return {"double pendulum": nonlinear_double_pendulum(G64), "kepler": kepler(G64),
            "relativistic": relativistic(G64), "4-link": n_link_pendulum(G64, 4)}


@pytest.mark.parametrize("name", ["double pendulum", "kepler", "relativistic", "4-link"])
def test_the_compiled_adaptive_step_is_the_python_one_bit_for_bit(name, monkeypatch):
    """solve with the compiled adaptive steps and with the Python ones: the same bits, the
    same substeps, the same dense output and events; the compiled steps never decline."""
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    monkeypatch.setattr(kernels, "_KERNELS", {})
    declined = []
    real = kernels.taylor_steps

    def watching(system):
        steps = real(system)
        if steps.compiled is None:
            return steps
        watched = types.SimpleNamespace(**vars(steps.compiled))
        for what in ("adaptive", "coefficients"):
            f = getattr(steps.compiled, what)
            setattr(watched, what, lambda *args, f=f: f(*args) or declined.append(args) or None)
        return steps._replace(compiled=watched)
    monkeypatch.setattr(taylor_module, "taylor_steps", watching)

    def event(t, qq, vv):
        return qq[0] - qq[0] / 2 - G64.num("1/10")
    runs = []
    for switch in ("0", "1"):
        monkeypatch.setenv(cbackend.ENV_SWITCH, switch)
        prob = _problems()[name]
        sol = mpvi.solve(prob, "taylor", h="1/2", n=3, tol="1e-40", events=event,
                         check_stability=False)
        runs.append((sol, sol("0.8")))
    if "error" in cbackend.toolchain():
        pytest.skip("no toolchain for compiled kernels")
    (python, pd), (compiled, cd) = runs
    assert compiled.stats["substeps"] == python.stats["substeps"] > 3
    for a, b in ((python.q, compiled.q), (python.p, compiled.p), (pd.q, cd.q), (pd.v, cd.v)):
        assert [z.precision for z in np.ravel(a)] == [z.precision for z in np.ravel(b)]
        assert list(np.ravel(a)) == list(np.ravel(b))
    assert [e.t for e in python.events] == [e.t for e in compiled.events]
    assert kernels.taylor_steps(_problems()[name].system).compiled is not None
    assert declined == []
