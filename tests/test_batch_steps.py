"""Steps taken in C in batches (``steps`` of ``mpvi_newton.h``, called by
``_TrialStepper.many``, and ``rk4_steps`` of ``mpvi_explicit.h``, called by RK4's stepper,
from :func:`mpvi.solve`): the same numbers, saved points, Newton statistics, progress
reports and errors as the steps taken one by one."""
from fractions import Fraction
from unittest import mock

import numpy as np
import pytest
import sympy as sp

from mpvi import LagrangianSystem, Problem, get_context, solve
from mpvi.drive import solve as driver
from mpvi.methods.variational import _TrialStepper
from mpvi.systems.lagrange_top import table3_top

T_BAR = Fraction("1.8472389815089258840562322083988766")


@pytest.fixture
def compiled(monkeypatch):
    """Compiled kernels from their first call: kernels made anew (one made earlier in this
    process, under the default rule, would compile only after its Python calls took about
    the compile time)."""
    from mpvi.compiled import cbackend
    from mpvi.engines import kernels
    if "error" in cbackend.toolchain():
        pytest.skip("no C toolchain")
    monkeypatch.setenv(cbackend.ENV_SWITCH, "1")
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "1")
    monkeypatch.setattr(kernels, "_KERNELS", {})
    monkeypatch.setattr(kernels, "_ANY_CONTEXT", {})


def _run(problem, scheme, batched, **kw):
    """(solution or the error's partial one, the error's text, progress calls, steps taken
    in C) of a run with steps in batches or one by one."""
    taken, calls = [], []
    original = driver._Run._steps_in_c

    def steps_in_c(self, j, *args):
        got = original(self, j, *args)
        if got is not None:
            taken.append(got[0] - j)
        return got
    with mock.patch.object(driver._Run, "_steps_in_c", steps_in_c):
        with mock.patch.object(driver._Run, "_batchable", driver._Run._batchable if batched
                               else (lambda *a: False)):
            try:
                sol, err = solve(problem, scheme, progress=lambda i, n: calls.append((i, n)),
                                 **kw), None
            except Exception as exc:            # the partial solution travels with it
                sol, err = getattr(exc, "solution", None), f"{type(exc).__name__}: {exc}"
    return sol, err, calls, sum(taken)


def _same(a, b):
    for name in ("t", "q", "p", "v"):
        x, y = getattr(a, name, None), getattr(b, name, None)
        if (x is None) != (y is None):
            return False
        if x is not None and not (x.shape == y.shape and all(
                u == v and u.precision == v.precision for u, v in zip(x.ravel(), y.ravel()))):
            return False
    return True


def _both(problem, scheme, **kw):
    a, ea, ca, taken = _run(problem, scheme, True, **kw)
    b, eb, cb, none = _run(problem, scheme, False, **kw)
    assert none == 0
    assert ea == eb and ca == cb
    assert (a is None) == (b is None)
    if a is not None:
        assert _same(a, b)
        sa, sb = dict(a.stats), dict(b.stats)
        sa.pop("wall_time_s", None), sb.pop("wall_time_s", None)
        assert sa == sb
    return a, ea, taken


@pytest.mark.parametrize("scheme, params", [("simpson", {}), ("midpoint", {}),
                                            ("hermite_galerkin", {})])
def test_steps_in_c_are_the_steps_one_by_one(compiled, scheme, params):
    """The top (singular factors checked at the quadrature nodes), variational and
    Galerkin (node times as inputs): every node, the internal points, the Newton
    statistics and the progress reports, with saveat too; most steps taken in C."""
    ctx = get_context("gmp", 64)
    problem = table3_top(ctx)
    h = ctx.num(T_BAR / 20)
    for kw in ({"n": 300}, {"n": 300, "saveat": 7}):
        sol, err, taken = _both(problem, scheme, h=h, **kw, **params)
        assert err is None and taken >= 290
        if "saveat" not in kw:
            a = solve(problem, scheme, h=h, **kw, **params)
            with mock.patch.object(driver._Run, "_batchable", lambda *a: False):
                b = solve(problem, scheme, h=h, **kw, **params)
            assert (a.internal is None) == (b.internal is None)
            if b.internal is not None:
                assert len(a.internal) == len(b.internal) == 300
                assert all(np.array_equal(u, v) for u, v in zip(a.internal, b.internal))
            if b._dense is not None:             # the trial function kept (dense output)
                assert len(a._dense) == len(b._dense) == 300
                assert all(np.array_equal(u, v) for u, v in zip(a._dense, b._dense))
            mid = ctx.num(h) * 150 + ctx.num(h) / 3
            assert all(x == y for x, y in zip(a(mid).q, b(mid).q))


def test_a_failing_step_inside_a_batch_raises_as_one_by_one(compiled):
    """Where a step fails its checks inside a batch (the growth guard, a mass matrix that
    stops being positive definite, a run that blows up), the run raises the same error
    after the same saved points."""
    ctx = get_context("gmp", 40)
    x = sp.symbols("x")
    unstable = LagrangianSystem("unstable", [x], sp.eye(1), -x ** 2 / 2 - x ** 4 / 100, {}, ctx)
    _, err, taken = _both(Problem(unstable, ["1/1000"], v0=["0"]), "simpson", h="1/10", n=400,
                          max_growth="1000")
    assert "step 101 at t = 10.1: the run diverged" in err and taken >= 100
    blowup = LagrangianSystem("blowup", [x], sp.eye(1), -x ** 4 / 4, {}, ctx)
    _, err, taken = _both(Problem(blowup, ["1"], v0=["0"]), "simpson", h="1/100", n=400)
    assert "step 187" in err and taken >= 180
    mass = LagrangianSystem("mass x", [x], sp.Matrix([[x]]), x, {}, ctx)
    _, err, taken = _both(Problem(mass, ["1"], v0=["0"]), "simpson", h="1/100", n=400)
    assert "mass matrix is not positive definite" in err and taken >= 100


def test_the_signs_at_the_nodes_are_checked_in_c(compiled):
    """The compiled steps stop at a step whose singular factors at its quadrature nodes
    have other signs than those kept: with every sign turned, no step is taken in C."""
    ctx = get_context("gmp", 64)
    problem = table3_top(ctx)
    h = ctx.num(T_BAR / 20)
    seen = []
    original = _TrialStepper.many

    def many(self, starts, ends, q, y, carry, check=None, head=(), signs=None):
        if signs is not None and carry is not None:      # none to extrapolate: no batch
            turned = tuple(-s for s in signs)
            seen.append((original(self, starts, ends, q, y, carry, check, head, turned)[0],
                         original(self, starts, ends, q, y, carry, check, head, signs)[0]))
        return None
    with mock.patch.object(_TrialStepper, "many", many):
        solve(problem, "simpson", h=h, n=20)
    assert seen and all(turned == 0 and kept > 0 for turned, kept in seen)


def test_malformed_layout_is_refused(compiled):
    """The compiled steps check their arguments' shapes: a layout that does not fit the
    module raises, naming it."""
    ctx = get_context("gmp", 64)
    problem = table3_top(ctx)
    seen = []
    original = _TrialStepper.many

    def many(self, *args):
        seen.append(self)
        return original(self, *args)
    with mock.patch.object(_TrialStepper, "many", many):
        solve(problem, "simpson", h=ctx.num(T_BAR / 20), n=5)
    steps = seen[-1].kernel.batch({})
    assert steps is not None
    with pytest.raises(TypeError, match="22 arguments"):
        steps(1)
    one = ctx.one
    with pytest.raises(ValueError, match="inconsistent layout"):
        steps(1, [], [], one, one, one, 5, 2, [one] * 5, [one] * 4, 2, (), (0,) * 4, (0,),
              0, [], 0, [one], None, (), None, 0)


def test_the_table_numbers_are_computed_from_once_per_batch(compiled):
    """What depends on a step's table numbers and the parameters alone is the module's
    ``nw_steady``, run once per batch; a layout whose per-step inputs reach into those
    entries is refused (its values would be stale)."""
    ctx = get_context("gmp", 64)
    problem = table3_top(ctx)
    h = ctx.num(T_BAR / 20)
    seen = []
    original = _TrialStepper.many

    def many(self, *args):
        seen.append((self, args))
        return original(self, *args)
    with mock.patch.object(_TrialStepper, "many", many):
        solve(problem, "simpson", h=h, n=5)
    stepper, (starts, ends, q, y, carry, check, head, signs) = seen[-1]
    kernel = stepper.kernel
    assert 0 < kernel.steady == len(stepper._K_tail) < kernel.nk
    from mpvi.compiled import cmodules
    source = cmodules.translate_newton("m", kernel.sources, kernel.constant_names, ctx.prec,
                                       kernel.n, kernel.nk, kernel.np, steady=kernel.steady)
    steady = source[source.index("void nw_steady(void)"):source.index("void nw_pre(void)")]
    assert steady.count("mpfr_mul(") > 10
    steps = kernel.batch({})
    ksrc, fsrc, ysrc, goff = stepper._batch_layout
    E, m = stepper._extrapolation
    known = [list(c) for c in stepper.known_values(q, y)]
    K = stepper.kernel_inputs(starts[0], q, y, known)
    args = [1, K, stepper.system.param_values,
            *kernel.iteration_options(ctx, stepper.newton), stepper._carried[1] + list(y), E, m,
            ksrc, fsrc, ysrc, stepper.q1, [], 0, ends[:1], None, (), None, goff]
    assert steps(*args)[0] == 1
    args[11] = ksrc + (0,) * (kernel.nk - kernel.steady - len(ksrc) + 1)
    with pytest.raises(ValueError, match="inconsistent layout"):
        steps(*args)


# ----- RK4 (rk4_steps of mpvi_explicit.h) --------------------------------------------------------

@pytest.mark.parametrize("system", ["top", "double pendulum"])
def test_rk4_steps_in_c_are_the_steps_one_by_one(compiled, system):
    """RK4 on the top (its singular factors checked at every stage) and on the double
    pendulum: every node, with saveat too, and the progress reports; most steps in C."""
    from mpvi.systems.double_pendulum import nonlinear_double_pendulum
    ctx = get_context("gmp", 64)
    problem = table3_top(ctx) if system == "top" else nonlinear_double_pendulum(ctx)
    h = ctx.num(T_BAR / 40) if system == "top" else ctx.num("1/100")
    for kw in ({"n": 300}, {"n": 300, "saveat": 7}):
        sol, err, taken = _both(problem, "rk4", h=h, **kw)
        assert err is None and taken >= 290


def test_a_failing_rk4_step_inside_a_batch_raises_as_one_by_one(compiled):
    """The growth guard, a blow-up (which the guard meets first) and a singular factor (x in
    det M = x) that changes sign at a stage, met inside a batch: the same error after the
    same saved points."""
    ctx = get_context("gmp", 40)
    x = sp.symbols("x")
    unstable = LagrangianSystem("unstable", [x], sp.eye(1), -x ** 2 / 2 - x ** 4 / 100, {}, ctx)
    _, err, taken = _both(Problem(unstable, ["1/1000"], v0=["0"]), "rk4", h="1/10", n=400,
                          max_growth="1000")
    # (the first steps, before the RK4 module is compiled, are Python's)
    assert "step 101 at t = 10.1: the run diverged" in err and taken >= 95
    blowup = LagrangianSystem("blowup", [x], sp.eye(1), -x ** 4 / 4, {}, ctx)
    _, err, taken = _both(Problem(blowup, ["1"], v0=["0"]), "rk4", h="1/100", n=400)
    assert "step 186 at t = 1.86: the run diverged" in err and taken >= 180
    mass = LagrangianSystem("mass x", [x], sp.Matrix([[x]]), x, {}, ctx)
    _, err, taken = _both(Problem(mass, ["1"], v0=["0"]), "rk4", h="1/100", n=400)
    assert "step 111 at t = 1.11: at a stage of the step" in err and "changed sign" in err
    assert taken >= 100


def test_rk4_steps_refuse_malformed_arguments(compiled):
    """The compiled RK4 steps check their arguments: a wrong count or shape raises, naming
    it; numbers they do not take (wider than the module) take no step."""
    from mpvi.compiled import cbackend
    from mpvi.engines import kernels
    from mpvi.systems.double_pendulum import nonlinear_double_pendulum
    ctx = get_context("gmp", 64)
    problem = nonlinear_double_pendulum(ctx)
    solve(problem, "rk4", h="1/100", n=3)
    batch = kernels.explicit_batch(problem.system)
    one, y = ctx.one, [ctx.one] * 4
    h = ctx.num("1/100")
    done, ys = batch([0, one], [one, 2 * one], y, h, None, (), None)
    assert done == 2 and len(ys) == 8
    wide = get_context("gmp", 80).num(1)
    ctx.activate()
    assert batch([wide], [one], y, h, None, (), None) == (0, [])
    with pytest.raises(TypeError, match="malformed"):
        batch([one], [one, one], y, h, None, (), None)
    steps = cbackend.module_function(kernels._explicit_module(problem.system)[0][0], "rk4_steps")
    with pytest.raises(TypeError, match="8 arguments"):
        steps(1)


def test_a_stepper_not_ready_to_batch_costs_no_step_times(compiled):
    """Until the batch module is loaded (or with no carry to extrapolate) the run asks the
    stepper first and builds no step times: ``many`` is not called, and the run's numbers
    are those of the steps one by one."""
    from mpvi.engines import kernels
    ctx = get_context("gmp", 64)
    problem = table3_top(ctx)
    h = ctx.num(T_BAR / 20)
    calls = []
    original = _TrialStepper.many

    def many(self, *args):
        calls.append(args)
        return original(self, *args)
    with mock.patch.object(_TrialStepper, "many", many):
        a = solve(problem, "simpson", h=h, n=40)
        assert calls and all(args[4] is not None for args in calls)     # a carry each time
        calls.clear()
        with mock.patch.object(kernels.Kernel, "batch", lambda self, newton: None):
            b = solve(problem, "simpson", h=h, n=40)
    assert calls == [] and _same(a, b)
