"""The tiers of the adaptive Taylor steps (issue 49, item 2): order k of a substep computed
at the precision its contribution needs (:func:`mpvi.engines.taylor.precision_schedule`),
checked after the substep size is known and recomputed at the context's precision where the
schedule's assumption fails (an entire solution), the compiled steps bit for bit the Python
ones, the run pausing the tiers after a failure."""
import importlib
import math

import pytest
import sympy as sp

import mpvi
from mpvi.compiled import cbackend
from mpvi.engines import kernels
from mpvi.engines import taylor as T

method = importlib.import_module("mpvi.methods.taylor")

x, y, vx, vy, q, th = sp.symbols("x y vx vy q theta")


def kepler(ctx):
    L = (vx ** 2 + vy ** 2) / 2 + 1 / sp.sqrt(x ** 2 + y ** 2)     # a general Lagrangian: (q, v)
    system = mpvi.Lagrangian(L, [x, y], [vx, vy], ctx=ctx, name="kepler")
    with ctx.active():
        return system, [ctx.num("0.1"), ctx.zero, ctx.zero, ctx.sqrt(ctx.num(19))]


def double_pendulum(ctx):
    from mpvi.systems.double_pendulum import nonlinear_double_pendulum
    prob = nonlinear_double_pendulum(ctx)
    return prob.system, [*prob.q0, *prob.p0]


def weighted(ctx):
    """A pendulum with a position-dependent mass and exp, sqrt in its potential."""
    system = mpvi.LagrangianSystem("weighted", [th], sp.Matrix([[1 + sp.Rational(1, 4) * sp.cos(th)]]),
                                   -sp.cos(th) + sp.sqrt(2 + sp.sin(th)) / 8 + sp.exp(sp.sin(th) / 3) / 5,
                                   {}, ctx)
    return system, [ctx.num("1/2"), ctx.num("1/3")]


def driven(ctx):
    """A forced oscillator with sin of the time, exp and log in its Lagrangian (the (q, v)
    form, the time a series of the tape)."""
    L = (vx ** 2 / 2 - x ** 2 / 2 + x * sp.sin(2 * mpvi.TIME) + sp.exp(-x ** 2) / 3
         + sp.log(2 + sp.cos(x)) / 5)
    return mpvi.Lagrangian(L, [x], [vx], ctx=ctx, name="driven"), [ctx.num("0.3"), ctx.num("-0.2")]


def oscillator(ctx):
    """q'' = -4 q: an entire solution, its coefficients falling faster than any radius."""
    system = mpvi.LagrangianSystem("oscillator", [q], sp.Matrix([[1]]), 2 * q ** 2, {}, ctx)
    return system, [ctx.one, ctx.zero]


SYSTEMS = {"kepler": kepler, "double pendulum": double_pendulum, "weighted": weighted,
           "driven": driven}


def steps_of(system):
    return kernels.taylor_steps(system)


def order_and_factor(ctx, tol):
    tol = ctx.num(tol)
    order = T.jorba_zou_order(tol, ctx)
    return order, T.step_factor(order, tol, ctx)


@pytest.mark.parametrize("dps", [64, 128, 300])
def test_the_schedule_gives_each_order_the_bits_its_term_needs(dps):
    ctx = mpvi.GMPContext(dps)
    order, factor = order_and_factor(ctx, ctx.eps * 10 ** 8)
    bits = T.precision_schedule(ctx.prec, order, factor)
    decay = -math.log2(float(factor))
    assert len(bits) == order + 1 and bits[0] == ctx.prec
    assert all(a >= b for a, b in zip(bits, bits[1:]))
    assert bits[-1] <= 127                          # the last orders need a limb or two
    for k, p in enumerate(bits):
        need = ctx.prec + T.TIER_GUARD - math.floor(k * decay)
        assert p == ctx.prec or (p % T.LIMB_BITS == T.LIMB_BITS - 1 and need <= p < need + T.LIMB_BITS)
        assert p >= min(need, ctx.prec)


def test_no_tiers_where_the_context_has_none_or_needs_none():
    """mpmath, Arb and floats compute every order at their precision; so does a gmp
    substep whose schedule never goes below it (a low order: few bits lost)."""
    gmp = mpvi.GMPContext(64)
    order, factor = order_and_factor(gmp, gmp.eps * 10 ** 8)
    assert T.TaylorEvaluator(None, gmp).schedule(order, factor)[0] == gmp.prec
    for ctx in (mpvi.MPContext(64), mpvi.FPContext()):
        assert T.TaylorEvaluator(None, ctx).schedule(order, factor) is None
    assert T.TaylorEvaluator(None, gmp).schedule(3, gmp.num("1/2")) is None


CASES = [(64, "double pendulum"), (64, "kepler"), (64, "weighted"), (64, "driven"),
         (120, "kepler"), (120, "weighted"), (120, "driven")]
"""(digits, system): the double pendulum's field (the inverse of M(q) written out) is
the costliest in Python, so it runs at 64 digits only."""


@pytest.mark.parametrize("dps, name", CASES)
def test_tiered_substeps_agree_with_exact_ones_to_a_few_eps(name, dps):
    """One step of several substeps, tiered and exact (Python): the same substeps, the
    states within 2^10 eps of each other (each substep's error stays below eps s)."""
    ctx = mpvi.GMPContext(dps)
    system, state = SYSTEMS[name](ctx)
    order, factor = order_and_factor(ctx, ctx.eps * 10 ** 8)
    py = steps_of(system).python
    h = ctx.num(2)
    t0 = ctx.num("1/3")                           # a time the lower tiers round
    tiered = py.adaptive(t0, state, h, order, factor, False, True)
    exact = py.adaptive(t0, state, h, order, factor, False, False)
    assert tiered[1] == exact[1] >= 3 and tiered[3] and exact[3]
    scale = max(max(abs(v) for v in exact[0]), ctx.one)
    diff = max(abs(a - b) for a, b in zip(tiered[0], exact[0])) / scale
    assert diff <= ctx.eps * 2 ** 10
    assert tiered[0] != exact[0]                   # the tiers did compute something else


def test_an_entire_solution_is_recomputed_at_the_contexts_precision():
    """q'' = -4 q over a step of many radii: the lower orders are far above the schedule's
    envelope, the check refuses the first substep, and the step is the exact one bit for
    bit."""
    ctx = mpvi.GMPContext(64)
    system, state = oscillator(ctx)
    order, factor = order_and_factor(ctx, ctx.eps * 10 ** 8)
    py = steps_of(system).python
    tiered = py.adaptive(ctx.zero, state, ctx.num(20), order, factor, False, True)
    exact = py.adaptive(ctx.zero, state, ctx.num(20), order, factor, False, False)
    assert tiered[3] is False and exact[3] is True
    assert tiered[0] == exact[0] and tiered[1] == exact[1] > 3


def test_the_check_refuses_errors_beyond_the_allowance():
    """series_tiers_hold on hand-made coefficients: an order whose estimated error is just
    within 2^-8 eps s holds, twice that does not."""
    from mpvi.numbers.series import series_tiers_hold
    ctx = mpvi.GMPContext(64)
    one, zero, eps = ctx.one, ctx.zero, ctx.eps
    allowed = eps / 256
    c = [[ctx.num(3), one, ctx.num(2) ** -10]]      # s = 3; order 2 lost 2^-p
    hs = ctx.num("1/2")
    # order 2's estimated error: 2^-10 (1/2)^2 lost = allowed * 3 exactly
    lost_ok = [zero, zero, allowed * 3 / (ctx.num(2) ** -10 * hs * hs)]
    assert series_tiers_hold(1, 2, c, hs, lost_ok, allowed, one, zero) == 1
    lost_bad = [zero, zero, lost_ok[2] * 2]
    assert series_tiers_hold(1, 2, c, hs, lost_bad, allowed, one, zero) == 0
    assert series_tiers_hold(1, 2, c, -hs, lost_bad, allowed, one, zero) == 0


def _compiled(system):
    steps = steps_of(system)
    if steps.compiled is None:
        pytest.skip("no compiled kernels here")
    return steps


@pytest.fixture
def built(monkeypatch):
    if "error" in cbackend.toolchain():
        pytest.skip("no toolchain for compiled kernels")
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    monkeypatch.setenv(cbackend.ENV_SWITCH, "1")
    monkeypatch.setattr(kernels, "_KERNELS", {})


@pytest.mark.parametrize("dps, name", CASES + [(64, "oscillator"), (120, "oscillator")])
def test_the_compiled_tiers_are_the_python_ones_bit_for_bit(name, dps, built):
    ctx = mpvi.GMPContext(dps)
    system, state = ({**SYSTEMS, "oscillator": oscillator})[name](ctx)
    steps = _compiled(system)
    order, factor = order_and_factor(ctx, ctx.eps * 10 ** 8)
    h = ctx.num(20) if name == "oscillator" else ctx.num(2)
    for tiers in (True, False):
        c = steps.compiled.adaptive(ctx.num("1/3"), state, h, order, factor, True, tiers)
        p = steps.python.adaptive(ctx.num("1/3"), state, h, order, factor, True, tiers)
        assert c is not None
        assert c[0] == p[0] and [z.precision for z in c[0]] == [z.precision for z in p[0]]
        assert c[1] == p[1] and c[2] == p[2] and c[3] == p[3]


def test_the_compiled_step_declines_a_schedule_it_cannot_take(built):
    """The module's adaptive step takes the list of precisions as given (the schedule is
    computed once, in Python) and declines one it cannot run: the caller then runs the
    Python step."""
    ctx = mpvi.GMPContext(64)
    system, state = SYSTEMS["double pendulum"](ctx)
    _compiled(system)

    def unbuilt():
        raise AssertionError("the Taylor steps should be cached")
    _, compiled = kernels.cached_kernel(system, ("taylor", "qp"), unbuilt)
    adaptive = compiled[1]
    order, factor = order_and_factor(ctx, ctx.eps * 10 ** 8)
    good = T.precision_schedule(ctx.prec, order, factor)
    args = (ctx.zero, state, ctx.num("1/2"), order, list(system.param_values), ctx.eps, factor,
            False)
    allowed = ctx.eps / 2 ** T.TIER_ALLOWED
    low = next(k for k, p in enumerate(good) if p < ctx.prec)
    assert adaptive(*args, good, allowed) is not None
    assert adaptive(*args, None, allowed) is not None
    for bad in ([ctx.prec - 1] + good[1:],                 # not the context's at order 0
                good[:low + 1] + [ctx.prec] + good[low + 2:],   # rising again
                good[:-1],                                 # one order short
                good[:-1] + [1],                           # below MPFR's least precision
                "not a list"):
        assert adaptive(*args, bad, allowed) is None


def test_a_run_pauses_the_tiers_after_a_step_whose_tiers_failed():
    """After a step whose tiers did not hold the run takes the next 8 steps without them,
    16 after a second failure in a row, and 8 again once a step's tiers held."""
    ctx = mpvi.GMPContext(30)
    system, state = double_pendulum(ctx)
    stepper = method._TaylorStepper(system, ctx.num("1/10"), ctx, 20, ctx.num("1/10"))
    stepper.compiled = None
    asked, plan = [], [False, True, False, False, True, False, True]

    def fake(t, y, h, degree, factor, record, tiers):
        asked.append(tiers)
        return y, 1, None, plan.pop(0) if tiers else True
    stepper.python = type("P", (), {"adaptive": staticmethod(fake)})
    for _ in range(47):
        stepper.advance(ctx.zero, state, False)
    assert plan == []
    no = [False]
    assert asked[:37] == [True] + no * 8 + [True, True] + no * 8 + [True] + no * 16 + [True]
    assert asked[37:47] == [True] + no * 8 + [True]


def three_bodies(ctx):
    """Three bodies in the plane, L = sum m_i |v_i|^2 / 2 + G sum_(i<j) m_i m_j / |q_i - q_j|
    (a general Lagrangian: the (q, v) form), as an N-body potential prints."""
    qs = sp.symbols("x0 y0 x1 y1 x2 y2")
    vs = sp.symbols("u0 w0 u1 w1 u2 w2")
    m = sp.symbols("m0 m1 m2")
    G = sp.Symbol("G")
    kinetic = sum(m[i] * (vs[2 * i] ** 2 + vs[2 * i + 1] ** 2) for i in range(3)) / 2
    potential = sum(m[i] * m[j] / sp.sqrt((qs[2 * i] - qs[2 * j]) ** 2
                                          + (qs[2 * i + 1] - qs[2 * j + 1]) ** 2)
                    for i in range(3) for j in range(i + 1, 3))
    params = {G: ctx.num("0.7"), m[0]: ctx.num(3), m[1]: ctx.num("1/2"), m[2]: ctx.num("1/7")}
    system = mpvi.Lagrangian(kinetic + G * potential, list(qs), list(vs), params=params, ctx=ctx,
                             name="three bodies")
    state = [ctx.num(x) for x in ("0", "0", "1", "0.2", "-0.4", "1.3",
                                  "0", "0.01", "0.1", "1.1", "-0.8", "-0.3")]
    return system, state


def test_the_tape_computes_each_pair_force_once_and_gives_the_field():
    """The N-body forces print (x_i - x_j) r_ij^-3 for body i and (x_j - x_i) r_ij^-3 for
    body j, and c / (r_ij^2)^(3/2): the tape keeps one product per pair and component, no
    quotient of series, and divides by the masses instead of solving with their diagonal
    matrix at every order; its first coefficients are the field (q' = v, v' = the acceleration
    solved from the equations of motion), at 64 digits to a few eps."""
    ctx = mpvi.GMPContext(64)
    system, state = three_bodies(ctx)
    steps = steps_of(system)

    def unbuilt():
        raise AssertionError("the Taylor steps should be cached")
    evaluator, _ = kernels.cached_kernel(system, ("taylor", "qv"), unbuilt)
    ops = [ins[0] + ("_" + ins[2][0] + ins[3][0] if ins[0] in ("mul", "div") else "")
           for ins in evaluator.tape.series]
    assert ops.count("mul_ss") == 3 * 2 and ops.count("powc") == 3 and "div_ss" not in ops
    assert ops.count("sqr") == 3 * 2
    assert "solve" not in ops and ops.count("div_sf") == 6     # the masses' diagonal
    y1 = steps.python.coefficients(ctx.zero, state, 1)[1]
    q, v = state[:6], state[6:]
    a = kernels.acceleration(system, ctx.zero, q, v)
    scale = max(abs(x) for x in a)
    assert y1[:6] == v
    assert max(abs(x - y) for x, y in zip(y1[6:], a)) <= 16 * ctx.eps * scale
