"""The library API: Problem -> solve -> Solution (issue 20).

Systems the papers never use: a central-force (Kepler) orbit, free fall, a pendulum, an
oscillator written as a general Lagrangian, non-quadratic Lagrangians, a mass matrix that
becomes singular mid-run.  Each check is against an independent computation (closed-form
solutions, elliptic integrals, a second precision) or a property that must hold (time
reversibility of a symmetric method, a Noether momentum).
"""
import gzip
import json
import pickle
import tracemalloc
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp

import mpvi
from mpvi import (Event, IntegrationError, LagrangianSystem, NewtonError, PrecisionError, Problem,
                  StabilityError, load_solution, solve)

G64 = mpvi.GMPContext(64)


@pytest.fixture(autouse=True)
def _arithmetic_at_64_digits():
    """The tests' own bare arithmetic on gmpy2 numbers (errors, exact values) at 64
    digits, as a user writes ``with ctx.active():`` (mpvi itself restores the caller's
    gmpy2 context after every call: tests/test_guards.py)."""
    with G64.active():
        yield
X, Y = sp.symbols("x y")
Q, V = sp.symbols("q v")


def kepler(ctx, mu=1):
    """L = |v|^2/2 + mu/r: angular momentum x vy - y vx is the Noether momentum of the
    rotation symmetry."""
    m = sp.Symbol("mu")
    return LagrangianSystem("Kepler", [X, Y], sp.eye(2), -m / sp.sqrt(X ** 2 + Y ** 2),
                            {m: mu}, ctx)


def orbit(ctx):
    """An eccentric orbit (e = 0.6) from the periapsis x = 0.4 with v = sqrt(1.6/0.4) = 2."""
    return Problem(kepler(ctx), ["2/5", 0], p0=[0, 2])


def pendulum(ctx):
    return LagrangianSystem("pendulum", [Q], sp.Matrix([[1]]), -sp.cos(Q), {}, ctx)


def oscillator(ctx):
    """q'' = -q as a general Lagrangian system (so every method takes its nonlinear path),
    with the exact solution q = cos t, p = v = -sin t."""
    S = LagrangianSystem("oscillator", [Q], sp.Matrix([[1]]), Q ** 2 / 2, {}, ctx)
    return Problem(S, [1], p0=[0], exact=lambda t: (ctx.vector([ctx.cos(t)]),
                                                     ctx.vector([-ctx.sin(t)])))


def free_fall(ctx):
    """q'' = -1 from q = 1 at rest: q = 1 - t^2/2 hits 0 at t = sqrt 2."""
    S = LagrangianSystem("free fall", [Q], sp.Matrix([[1]]), Q, {}, ctx)
    return Problem(S, [1], v0=[0])


# ----- Problem: conversions and validation -------------------------------------------------

def test_problem_converts_once_and_computes_the_other_momentum():
    pb = orbit(G64)
    assert all(G64.is_number(x) for x in pb.q0) and pb.given == "p"
    assert pb.v0[1] == 2 and pb.p0[1] == 2
    top_like = Problem(pendulum(G64), [sp.Rational(1, 3)], v0=[sp.Integer(2)])
    assert top_like.q0[0] == G64.num(Fraction(1, 3))       # sympy numbers exactly
    assert top_like.p0[0] == 2
    pi6 = Problem(pendulum(G64), [sp.pi / 6], v0=[0]).q0[0]
    assert abs(pi6 - G64.pi / 6) <= G64.eps                 # evaluated to the precision


@pytest.mark.parametrize("bad,match", [
    (0.1, r"q0\[0\].*float"),
    (mpmath.mpf("0.1"), r"q0\[0\].*mpmath number 0.1 of another context"),
    (mpvi.GMPContext(30).num("0.1"), r"q0\[0\].*30-digit context"),
    (mpvi.MPContext(30).num("0.1"), r"q0\[0\].*30-digit context"),
    (sp.Float(0.1), r"q0\[0\].*sympy Float.*53 bits"),
])
def test_a_number_of_lower_precision_is_refused_naming_the_quantity(bad, match):
    with pytest.raises(PrecisionError, match=match):
        Problem(pendulum(G64), [bad], v0=[0])


def test_precision_errors_name_h_t1_saveat_and_parameters():
    pb = Problem(pendulum(G64), ["1/2"], v0=[0])
    with pytest.raises(PrecisionError, match="step size h"):
        solve(pb, "rk4", h=0.1, n=2)
    with pytest.raises(PrecisionError, match="final time t1"):
        solve(pb, "rk4", h="1/10", t1=mpmath.mpf(1))
    with pytest.raises(PrecisionError, match=r"saveat\[1\]"):
        solve(pb, "rk4", h="1/10", n=10, saveat=["1/10", 0.2])
    k = sp.Symbol("k")
    with pytest.raises(PrecisionError, match="parameter k"):
        LagrangianSystem("osc", [Q], sp.Matrix([[1]]), k * Q ** 2, {k: mpmath.mpf(2)}, G64)


def test_a_higher_precision_number_is_rounded_and_a_64_digit_system_cannot_run_at_100():
    g100 = mpvi.GMPContext(100)           # bare arithmetic now at 100 digits (the precision rule)
    x = g100.num(1) / 3
    pb = Problem(pendulum(G64), [x], v0=[0])
    with G64.active():
        third64 = G64.num(1) / 3
    assert pb.q0[0] == third64
    # "a system built at 64 digits used in a 100-digit run": the context is the system's;
    # its numbers cannot enter a 100-digit problem
    with pytest.raises(PrecisionError, match="64-digit context"):
        Problem(pendulum(g100), [third64], v0=[0])


def test_problem_refuses_bad_initial_data():
    S = pendulum(G64)
    with pytest.raises(ValueError, match="exactly one of"):
        Problem(S, [0], p0=[0], v0=[0])
    with pytest.raises(ValueError, match="exactly one of"):
        Problem(S, [0])
    with pytest.raises(ValueError, match="vector of 1 numbers"):
        Problem(S, [0, 1], v0=[0])
    with pytest.raises(ValueError, match="non-finite"):
        Problem(S, ["nan"], v0=[0])
    singular = LagrangianSystem("s", [X, Y], sp.Matrix([[1 - X, 0], [0, 1]]), 0, {}, G64)
    with pytest.raises(ValueError, match="not positive definite"):
        Problem(singular, [2, 0], v0=[0, 0])


def test_problem_checks_the_exact_solution_against_the_initial_data():
    ctx = G64
    S = pendulum(ctx)
    with pytest.raises(ValueError, match="does not match the initial data"):
        Problem(S, [1], v0=[0], exact=lambda t: (ctx.vector([0]), ctx.vector([0])))
    with pytest.raises(ValueError, match=r"\(t -> \(q, v\)\) at t = 0.0: q returned 2 values, expected 1"):
        Problem(S, [1], v0=[0], exact=lambda t: (ctx.vector([1, 0]), ctx.vector([0])))


# ----- solve: arguments ----------------------------------------------------------------------

def test_solve_refuses_bad_arguments_naming_the_cause():
    pb = Problem(pendulum(G64), ["1/2"], v0=[0])
    with pytest.raises(ValueError, match="unknown method 'simpsn'"):
        solve(pb, "simpsn", h="1/10", n=2)
    with pytest.raises(ValueError, match="no parameter.*'point'.*points"):
        solve(pb, "lobatto", h="1/10", n=2, point=3)
    with pytest.raises(ValueError, match="solves no Newton equations"):
        solve(pb, "rk4", h="1/10", n=2, newton={"max_iter": 3})
    with pytest.raises(ValueError, match="unknown Newton option"):
        solve(pb, "simpson", h="1/10", n=2, newton={"tol": 3})
    with pytest.raises(ValueError, match="either the number of steps n or the final time t1"):
        solve(pb, "rk4", h="1/10", n=2, t1=1)
    with pytest.raises(ValueError, match="give the number of steps n or the final time t1"):
        solve(pb, "rk4", h="1/10")
    with pytest.raises(ValueError, match="nonzero"):
        solve(pb, "rk4", h=0, n=2)
    with pytest.raises(ValueError, match="positive integer"):
        solve(pb, "rk4", h="1/10", n=0)
    with pytest.raises(TypeError, match="mpvi.Problem"):
        solve(pendulum(G64), "rk4", h="1/10", n=2)


def test_t1_must_be_a_whole_number_of_steps():
    pb = Problem(pendulum(G64), ["1/2"], v0=[0], t0="1/2")
    sol = solve(pb, "rk4", h="1/10", t1="3/2")
    assert sol.steps == 10 and abs(sol.t[-1] - G64.num("1.5")) < 1e-60
    with pytest.raises(ValueError, match=r"t1 = 1\.33.* is not a whole number of steps h = 1\.0+e-1"):
        solve(pb, "rk4", h="1/10", t1="4/3")
    with pytest.raises(ValueError, match="cannot be reached"):
        solve(pb, "rk4", h="1/10", t1=0)
    back = solve(pb, "rk4", h="-1/10", t1=0)            # backwards: 5 steps
    assert back.steps == 5
    assert solve(Problem(pendulum(G64), [1], v0=[0], t1=2), "rk4", h="1/4").steps == 8


# ----- backward integration --------------------------------------------------------------------

@pytest.mark.parametrize("method,params", [("simpson", {}), ("midpoint", {}), ("lobatto", {"points": 5}),
                                           ("implicit_midpoint", {}), ("mutze", {}),
                                           ("newmark_family", {})])
def test_a_symmetric_method_integrated_back_returns_to_the_initial_state(method, params):
    pb = orbit(G64)
    fwd = solve(pb, method, h="1/50", n=40, **params)
    kind = "p" if fwd.state == "qp" else "v"
    back_pb = pb.replace(q0=fwd.q[-1], t0=fwd.t[-1], **{f"{kind}0": fwd.y[-1]})
    back = solve(back_pb, method, h="-1/50", n=40, **params)
    assert abs(back.t[-1]) < 1e-62
    err = max(G64.norm_inf(back.q[-1] - pb.q0), G64.norm_inf(back.y[-1] - fwd.y[0]))
    assert err < 1e-55, float(err)


def test_rk4_is_not_symmetric_so_the_round_trip_does_not_return():
    pb = orbit(G64)
    fwd = solve(pb, "rk4", h="1/50", n=40)
    back = solve(pb.replace(q0=fwd.q[-1], p0=fwd.p[-1], t0=fwd.t[-1]), "rk4", h="-1/50", n=40)
    assert G64.norm_inf(back.q[-1] - pb.q0) > 1e-12


# ----- saveat and memory ---------------------------------------------------------------------------

def test_saveat_every_kth_node_and_the_last():
    pb = orbit(G64)
    full = solve(pb, "simpson", h="1/20", n=23)
    sparse = solve(pb, "simpson", h="1/20", n=23, saveat=5)
    assert [float(t * 20) for t in sparse.t] == [0, 5, 10, 15, 20, 23]
    for i, j in enumerate([0, 5, 10, 15, 20, 23]):
        assert (sparse.q[i] == full.q[j]).all() and (sparse.p[i] == full.p[j]).all()
    assert sparse.internal is None and full.internal.shape == (23, 1, 2)
    assert sparse.stats["newton"] == full.stats["newton"]


def test_saveat_times_between_nodes_use_the_dense_output():
    pb = orbit(G64)
    full = solve(pb, "lobatto", h="1/20", n=20)
    times = ["0", "1/40", "1/20", "0.33", "1"]
    some = solve(pb, "lobatto", h="1/20", n=20, saveat=times)
    assert len(some.t) == 5 and some.t[3] == G64.num("0.33")
    assert (some.q[2] == full.q[1]).all() and (some.q[4] == full.q[-1]).all()
    dense = full(G64.num("0.33"))
    assert G64.norm_inf(dense.q - some.q[3]) < 1e-60
    with pytest.raises(ValueError, match=r"saveat\[0\] = 2\.0+ is outside"):
        solve(pb, "lobatto", h="1/20", n=20, saveat=["2"])
    with pytest.raises(ValueError, match="dense output needs every node"):
        some(G64.num("0.5"))


def test_a_long_run_with_saveat_keeps_memory_flat():
    """2 x 10^5 steps saving 1001 points: the traced peak stays far below what storing
    every step would take (about 0.5 KB per node at 64 digits, 100 MB here, five times the
    bound).  Newmark's closed form on the oscillator is the cheapest step, so the run
    measures the driver (under tracemalloc every allocation is traced: ~8 s)."""
    ctx = G64
    pb = Problem(mpvi.LinearSystem([[1]], [[1]], ctx, name="oscillator"), [1], p0=[0])
    n = 2 * 10 ** 5
    tracemalloc.start()
    try:
        sol = solve(pb, "newmark", h="1/1000", n=n, saveat=n // 1000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(sol.t) == 1001 and sol.steps == n and abs(sol.t[-1] - 200) < 1e-60
    assert peak < 20e6, peak
    # and the run is right: Newmark's phase error at t = 200 is t h^2 / 12 ~ 1.7e-5
    assert abs(sol.q[-1][0] - ctx.cos(ctx.num(200))) < 4e-5
    assert abs(sol.q[-1][0] ** 2 + sol.p[-1][0] ** 2 - 1) < 1e-55     # it conserves H exactly


# ----- events ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["simpson", "rk4", "gbs", "lobatto", "mutze"])
def test_an_event_is_located_to_context_precision(method):
    """Free fall from q = 1: q = 1 - t^2/2 is reproduced exactly by every method here (a
    quadratic), so the dense output is exact up to the rounding the run accumulates at the
    nodes, and the event q = 0 must be at sqrt 2 to that rounding plus a few eps (GBS's
    extrapolation amplifies rounding to ~1e-60 at the nodes; the others stay near 1e-64)."""
    ctx = G64
    sol = solve(free_fall(ctx), method, h="1/10", n=20, events=Event(lambda t, q, v: q[0]))
    (ev,) = sol.events
    rounding = max(abs(q[0] - (1 - t * t / 2)) for t, q in zip(sol.t, sol.q))
    assert rounding < (1e-59 if method == "gbs" else 1e-62)
    tol = 2 * rounding + 10 * ctx.eps
    assert abs(ev.t - ctx.sqrt(ctx.num(2))) < tol, float(ev.t - ctx.sqrt(ctx.num(2)))
    assert abs(ev.q[0]) < tol and abs(sol(ev.t).q[0]) < tol and ev.direction == -1
    assert abs(ev.v[0] + ctx.sqrt(ctx.num(2))) < 1e-58 and sol.stopped is None
    assert len(sol.t) == 21


def test_a_terminal_event_stops_the_run_and_direction_filters():
    ctx = G64
    ground = Event(lambda t, q, v: q[0], terminal=True, name="ground")
    sol = solve(free_fall(ctx), "simpson", h="1/10", n=40, events=[ground])
    assert "terminal event 0 (ground)" in sol.stopped
    assert abs(sol.t[-1] - ctx.sqrt(ctx.num(2))) < 1e-62 and abs(sol.q[-1][0]) < 1e-62
    assert len(sol.t) == 16                               # nodes 0..14 and the event
    # dense output works up to the event, including on the cut step
    assert abs(sol(ctx.num("1.41")).q[0] - (1 - ctx.num("1.41") ** 2 / 2)) < 1e-60
    rising = Event(lambda t, q, v: q[0], direction=1)
    assert solve(free_fall(ctx), "simpson", h="1/10", n=20, events=rising).events == []
    with pytest.raises(ValueError, match="direction must be -1, 0 or"):
        Event(lambda t, q, v: q[0], direction=True)        # a bool is not a direction


def test_pendulum_turning_point_against_the_elliptic_quarter_period():
    """A pendulum released from rest at q0 = 1 reaches q = 0 (v < 0 there) after a quarter
    period K(sin^2(q0/2)); the event v = 0 afterwards is the half period.  Located on the
    GBS dense output (a GBS substep of order 48)."""
    ctx = G64
    m = mpmath.MPContext()
    m.dps = 70
    quarter = m.ellipk(m.sin(m.mpf(1) / 2) ** 2)
    pb = Problem(pendulum(ctx), [1], v0=[0])
    sol = solve(pb, "gbs", h="1/20", n=80, levels=24, saveat=80,
                events=[Event(lambda t, q, v: q[0], name="bottom"),
                        Event(lambda t, q, v: v[0], name="turn")])
    bottom = [e for e in sol.events if e.name == "bottom"][0]
    turn = [e for e in sol.events if e.name == "turn"][0]
    assert abs(ctx.lift(bottom.t) - ctx.lift(quarter)) < 1e-45
    assert abs(turn.t - 2 * ctx.lift(quarter)) < 1e-45
    assert abs(turn.q[0] + 1) < 1e-45                    # the other turning point


def test_callback_stops_and_progress_is_called():
    seen, calls = [], []

    def cb(t, q, y):
        seen.append(t)
        return len(seen) == 3
    sol = solve(orbit(G64), "rk4", h="1/10", n=1000, saveat=2, callback=cb,
                progress=lambda k, total: calls.append((k, total)))
    assert len(seen) == 3 and sol.steps == 3 and "callback" in sol.stopped
    assert len(sol.t) == 3 and sol.t[-1] == seen[-1]      # nodes 0, 2 and the last one
    assert calls[0] == (1, 1000)


# ----- dense output order ----------------------------------------------------------------------

@pytest.mark.parametrize("method,params,order", [
    ("simpson", {}, 4), ("midpoint", {}, 2), ("lobatto", {"points": 4}, 6),
    ("hermite_galerkin", {}, 4), ("rk4", {}, 4), ("implicit_midpoint", {}, 2),
    ("mutze", {}, 2), ("gbs", {"levels": 2}, 4)])
def test_dense_output_order_is_measured(method, params, order):
    """The largest error of sol(t) at t_j + h/3 (between every pair of nodes) against the
    exact solution, as h halves: the order the docstring of mpvi.engines.dense states."""
    ctx = G64
    pb = oscillator(ctx)
    hs, errs = [], []
    for N in (16, 32, 64):
        h = ctx.num(1) / N
        sol = solve(pb, method, h=h, n=N, **params)
        e = max(abs(sol(t + h / 3).q[0] - ctx.cos(t + h / 3)) for t in sol.t[:-1])
        hs.append(h)
        errs.append(e)
    assert abs(mpvi.fit_order(ctx, hs, errs) - order) < 0.25, [float(e) for e in errs]


# ----- Solution: observables, errors, tables, files ------------------------------------------

def test_the_angular_momentum_is_conserved_to_round_off_by_a_variational_method():
    ctx = G64
    pb = orbit(ctx)
    vx, vy = pb.system.velocity_symbols
    L = X * vy - Y * vx
    simpson = solve(pb, "simpson", h="1/50", n=300).observable(L)
    rk4 = solve(pb, "rk4", h="1/50", n=300).observable(L)
    assert simpson.shape == (301,) and simpson[0] == ctx.num("0.8")
    assert max(abs(x - simpson[0]) for x in simpson) < 1e-60
    assert max(abs(x - rk4[0]) for x in rk4) > 1e-12
    both = solve(pb, "simpson", h="1/50", n=3).observable([L, X ** 2 + Y ** 2])
    assert both.shape == (4, 2)
    with pytest.raises(ValueError, match=r"\['z'\]"):
        solve(pb, "simpson", h="1/50", n=3).observable(sp.Symbol("z"))


def test_error_against_the_exact_solution_and_error_norms():
    ctx = G64
    pb = oscillator(ctx)
    sol = solve(pb, "lobatto", h="1/10", n=20, points=3)
    err = sol.error()
    assert set(err) == {"q", "p", "v"} and err["q"][0] == 0
    assert abs(err["q"][5] - abs(sol.q[5][0] - ctx.cos(sol.t[5]))) == 0
    norms = mpvi.error_norms(sol)
    assert norms["q"] == max(err["q"]) and 1e-10 < norms["q"] < 1e-6


def test_to_frame_is_lossless_as_strings(tmp_path):
    ctx = G64
    sol = solve(orbit(ctx), "simpson", h="1/20", n=5)
    df = sol.to_frame()
    assert list(df.columns) == ["t", "x", "y", "p_x", "p_y", "v_x", "v_y"]
    assert all(ctx.num(s) == x for s, x in zip(df["x"], sol.q[:, 0]))
    assert sol.to_frame("float")["p_y"].dtype == float
    with pytest.raises(ValueError, match="numbers must be"):
        sol.to_frame("decimal")


@pytest.mark.parametrize("ctx", [G64, mpvi.MPContext(40), mpvi.fp], ids=["gmp64", "mp40", "fp"])
@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_save_load_and_pickle_round_trip_digit_for_digit(ctx, suffix, tmp_path):
    pb = orbit(ctx)
    sol = solve(pb, "simpson", h="1/20", n=12, events=lambda t, q, v: q[1] - ctx.num("0.1"))
    path = sol.save(tmp_path / f"orbit{suffix}")
    for other in (load_solution(path), pickle.loads(pickle.dumps(sol))):
        for name in ("t", "q", "p", "v"):
            a, b = getattr(sol, name), getattr(other, name)
            assert a.shape == b.shape and all(x == y for x, y in zip(np.ravel(a), np.ravel(b)))
        assert (other.internal == sol.internal).all() and other.h == sol.h
        assert other.stats == sol.stats and other.method == "simpson"
        assert [e.t for e in other.events] == [e.t for e in sol.events] and len(sol.events) == 1
    loaded = load_solution(path, system=pb.system)
    t = ctx.num("0.33")
    assert loaded(t).q[0] == sol(t).q[0]                 # dense output after loading
    vx, vy = pb.system.velocity_symbols
    assert (loaded.observable(X * vy - Y * vx) == sol.observable(X * vy - Y * vx)).all()
    rebuilt = load_solution(path)          # its system read back from the file's text
    if ctx is not mpvi.fp:
        assert rebuilt.system is not None and rebuilt.problem is not None
    if rebuilt.system is not None:
        assert (rebuilt.observable(X) == sol.observable(X)).all()
    else:
        with pytest.raises(ValueError, match="observables need the system"):
            rebuilt.observable(X)
    with pytest.raises(ValueError, match="does not match"):
        load_solution(path, system=pendulum(ctx))


def test_load_solution_names_a_bad_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not a readable saved solution"):
        load_solution(bad)
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ValueError, match="not an mpvi solution file"):
        load_solution(bad)
    sol = solve(orbit(G64), "rk4", h="1/20", n=2)
    rec = json.loads(sol.save(tmp_path / "ok.json").read_text())
    del rec["q"]
    bad.write_text(json.dumps(rec))
    with pytest.raises(ValueError, match="malformed saved solution.*'q'"):
        load_solution(bad)
    with gzip.open(tmp_path / "x.json.gz", "wt") as f:
        f.write("[]")
    with pytest.raises(ValueError, match="not an mpvi solution"):
        load_solution(tmp_path / "x.json.gz")


def test_repr_is_short():
    sol = solve(orbit(G64), "simpson", h="1/20", n=200)
    text = repr(sol)
    assert len(text) < 300 and "simpson" in text and "201 saved points of 200 steps" in text


# ----- the bad inputs of issue 20 (items 1-3 and 7) -----------------------------------------

def test_rk4_and_gbs_beyond_three_degrees_of_freedom_in_the_gmp_context():
    """Item 1: a chain of 5 coupled pendulums (q-dependent dense mass matrix beyond the
    symbolic-inverse size): the generated field equals the mp reference field."""
    n = 5
    results = {}
    for ctx in (G64, mpvi.MPContext(64)):
        q = sp.symbols(f"q0:{n}")
        M = sp.Matrix(n, n, lambda i, j: (n - max(i, j)) * sp.cos(q[i] - q[j]))
        S = LagrangianSystem("5-link pendulum", q, M, -sum((n - i) * sp.cos(q[i]) for i in range(n)),
                             {}, ctx)
        pb = Problem(S, ["1/10"] * n, p0=[0] * n)
        results[ctx.name] = [solve(pb, m, h="1/50", n=4) for m in ("rk4", "gbs")]
    for a, b in zip(results["gmp64"], results["mp64"]):
        assert max(abs(G64.lift(x) - G64.lift(y)) for x, y in zip(np.ravel(a.q), np.ravel(b.q))) < 1e-60


def test_non_quadratic_lagrangians():
    """Item 2: L = v^4/12 - q^2/2 from v0 = 1 (L_vv = v^2 vanishes at v = 0 but not along
    the motion), and the relativistic L = -sqrt(1 - v^2) - q^2/2 from p = 1.1, whose
    Legendre map v = p / sqrt(1 + p^2) undamped Newton from v = 0 cannot invert."""
    ctx = G64
    quartic = LagrangianSystem.from_lagrangian("quartic", [Q], [V], V ** 4 / 12 - Q ** 2 / 2, {}, ctx)
    pb = Problem(quartic, [0], v0=[1])
    assert pb.p0[0] == ctx.num(1) / 3
    runs = [solve(pb, m, h="1/100", n=10) for m in ("simpson", "rk4", "mutze", "gbs")]
    # energy E = p v - L = v^4/4 + q^2/2 is conserved by the reference
    E = [v[0] ** 4 / 4 + q[0] ** 2 / 2 for q, v in zip(runs[3].q, runs[3].v)]
    assert max(abs(e - ctx.num(1) / 4) for e in E) < 1e-55
    for r in runs[:3]:
        assert abs(r.v[-1][0] - runs[3].v[-1][0]) < 1e-6
    rel = LagrangianSystem.from_lagrangian("relativistic", [Q], [V], -sp.sqrt(1 - V ** 2) - Q ** 2 / 2,
                                           {}, ctx)
    pr = Problem(rel, [0], p0=["1.1"])
    p = ctx.num("1.1")
    assert abs(pr.v0[0] - p / ctx.sqrt(1 + p * p)) < 1e-62
    for m in ("rk4", "gbs", "simpson"):
        sol = solve(pr, m, h="1/100", n=10)
        for q_, p_, v_ in zip(sol.q, sol.p, sol.v):       # traj.v: the Legendre map
            assert abs(v_[0] - p_[0] / ctx.sqrt(1 + p_[0] ** 2)) < 1e-60


def test_a_mass_matrix_that_becomes_singular_mid_run_stops_the_run():
    """Item 7: M = diag(1 - x, 1) from x = 0 moving right: past x = 1 the kinetic energy is
    indefinite; the run stops at the first node beyond, naming step and time."""
    S = LagrangianSystem("shrinking", [X, Y], sp.Matrix([[1 - X, 0], [0, 1]]), 0, {}, G64)
    with pytest.raises(IntegrationError, match=r"simpson: step 6 at t = 0\.6 reached t = 0\.7 where "
                                               r"the mass matrix is not positive definite"):
        solve(Problem(S, [0, 0], v0=[1, 0]), "simpson", h="1/10", n=50)


@pytest.mark.parametrize("method", ["simpson", "rk4", "midpoint", "implicit_midpoint", "mutze",
                                    "hermite_galerkin", "gbs"])
def test_a_step_far_beyond_the_resolution_of_the_orbit_is_refused(method):
    """Item 7: h = 100 on an orbit of period ~2: a StabilityError naming the bound."""
    with pytest.raises(StabilityError, match=rf"{method}: the step \|h\| = 1\.0+e\+2 is beyond"):
        solve(orbit(G64), method, h=100, n=3)


def test_leaving_the_domain_of_the_potential_is_named():
    """V = -log(1 - q^2) is defined for |q| < 1 but its derivatives are finite outside: a
    step that jumps out is caught after the step; V = -sqrt(1 - q^2) makes Newton's
    iterate non-finite, and the error names the likely cause."""
    S = LagrangianSystem("log well", [Q], sp.Matrix([[1]]), -sp.log(1 - Q ** 2), {}, G64)
    with pytest.raises(IntegrationError, match="step 0 at t = 0 reached t = 2 where the potential "
                                               "V is not finite"):
        solve(Problem(S, ["1/2"], v0=[3]), "simpson", h=2, n=3, check_stability=False)
    S = LagrangianSystem("sqrt well", [Q], sp.Matrix([[1]]), -sp.sqrt(1 - Q ** 2), {}, G64)
    with pytest.raises(NewtonError, match=r"step 0, t = 0.*likely cause: at quadrature node 1 of the "
                                          r"step: the potential V is not finite at q = \(3\.5"):
        solve(Problem(S, ["1/2"], v0=[3]), "simpson", h=2, n=3, check_stability=False)


def test_a_64_digit_run_carries_64_digits():
    """The orbit at 30, 64 and 100 digits: differences at the level of each precision."""
    runs = {d: solve(orbit(mpvi.GMPContext(d)), "simpson", h="1/20", n=40).q[-1] for d in (30, 64, 100)}
    hi = mpvi.MPContext(110)
    d30 = max(abs(hi.lift(a) - hi.lift(b)) for a, b in zip(runs[30], runs[100]))
    d64 = max(abs(hi.lift(a) - hi.lift(b)) for a, b in zip(runs[64], runs[100]))
    assert 1e-33 < d30 < 1e-27
    assert 1e-67 < d64 < 1e-60


# ----- first-order systems ------------------------------------------------------------------------

def test_first_order_systems_are_a_system_kind():
    ctx = G64
    fo = mpvi.FirstOrderSystem("rotation", lambda t, y: [-y[1], y[0]], 2, ctx, labels=("a", "b"))
    pb = Problem(fo, [1, 0], exact=lambda t: ctx.vector([ctx.cos(t), ctx.sin(t)]))
    sol = solve(pb, "gbs", h="1/4", n=8, levels=16)
    assert sol.state == "y" and mpvi.error_norms(sol)["y"] < 1e-50
    assert list(sol.to_frame().columns) == ["t", "a", "b"]
    assert solve(pb, "rk4", h="1/4", n=8).q.shape == (9, 2)
    with pytest.raises(ValueError, match="first-order system"):
        solve(pb, "simpson", h="1/4", n=8)
    with pytest.raises(ValueError, match="p0 and v0 do not apply"):
        Problem(fo, [1, 0], v0=[0, 0])
    with pytest.raises(AttributeError, match="first-order"):
        sol.p


@pytest.mark.parametrize("saveat", [None, 4])
def test_a_failing_step_keeps_what_was_computed(saveat):
    """The mass matrix of the shrinking system fails after step 6: the error carries the
    solution up to node 6, the same points an unbroken run saves there."""
    S = LagrangianSystem("shrinking", [X, Y], sp.Matrix([[1 - X, 0], [0, 1]]), 0, {}, G64)
    pb = Problem(S, [0, 0], v0=[1, 0])
    with pytest.raises(IntegrationError) as info:
        solve(pb, "simpson", h="1/10", n=50, saveat=saveat)
    part = info.value.solution
    assert part.steps == 6 and "failed at step 6: IntegrationError" in part.stopped
    good = solve(pb, "simpson", h="1/10", n=6, saveat=saveat)
    assert [x == y for x, y in zip(part.t, good.t)] == [True] * len(good.t)
    assert (part.q == good.q).all() and len(part.t) == (7 if saveat is None else 3)
