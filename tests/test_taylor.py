"""The Taylor-series scheme (mpvi/engines/taylor.py, mpvi/methods/taylor.py): its recurrences
against independent references (exact solutions, GBS), its order, its errors, and the
compiled step (mpvi.compiled.cbackend.translate_taylor) bit for bit against the Python one."""
import sys
import types

import gmpy2
import pytest
import sympy as sp

import mpvi
from mpvi.compiled import cbackend
from mpvi.engines import kernels
from mpvi.engines.taylor import TaylorUnsupported

G64 = mpvi.GMPContext(64)
a, b, c, d, k, w = sp.symbols("a b c d k w")


def oscillator(ctx):
    """q'' = -4 q, q(0) = 1, v(0) = 0: q = cos 2t (M = 1 as an integer: the fixed slots)."""
    system = mpvi.LagrangianSystem("oscillator", [a], sp.Matrix([[1]]), 2 * a ** 2, {}, ctx)
    return mpvi.Problem(system, ["1"], v0=["0"])


def every_recurrence(ctx):
    """A system whose field takes every recurrence of the tape: sin/cos, exp, log, sqrt,
    a fractional power, squares, integer and negative powers, a division by a varying
    mass matrix, a time-dependent force with parameters."""
    M = sp.Matrix([[2 + sp.sin(b) ** 2, sp.cos(a - b) / 3], [sp.cos(a - b) / 3, 1 + a ** 2 / 4]])
    V = (-k * sp.cos(a) + sp.exp(b / 3) + sp.log(2 + a ** 2) / 2 + sp.sqrt(3 + b ** 2)
         + (2 + sp.cos(a)) ** sp.Rational(1, 3) + a ** 3 * b / 7 + 1 / (2 + b ** 2))
    system = mpvi.LagrangianSystem(
        "every recurrence", [a, b], M, V, {k: "3/2", w: "2/3", c: "1/10"}, ctx,
        force=lambda t, q, v: sp.Matrix([-c * v[0] + sp.exp(-t / 2) * sp.cos(w * t),
                                         -c * v[1] * (1 + t ** 2)]))
    return mpvi.Problem(system, ["1/2", "-1/3"], v0=["1/4", "1/5"])


def bits_equal(x, y):
    return len(x) == len(y) and all(u == v and u.precision == v.precision for u, v in zip(x, y))


def test_the_oscillator_at_64_digits_is_exact_to_the_last_digits():
    """Order 40 with h = 1/10 on q = cos 2t: the error after 20 steps is a few eps, so
    the 64 digits are carried end to end (a double-precision leak would show 1e-16)."""
    prob = oscillator(G64)
    sol = mpvi.solve(prob, "taylor", h="1/10", n=20, degree=40, tol=None)
    with G64.active():
        err = max(abs(q - G64.cos(2 * t)) for q, t in zip(sol.q[:, 0], sol.t))
    assert err < 1e-62


@pytest.mark.parametrize("order", [2, 3, 5, 8])
def test_the_global_error_falls_as_h_to_the_order(order):
    """Halving h divides the error at t = 1 by about 2^order (the stated order; for odd
    orders the next term is still visible at h = 1/16, so from h = 1/32 on)."""
    prob = oscillator(G64)
    errs = []
    for n in (32, 64, 128):
        sol = mpvi.solve(prob, "taylor", h=f"1/{n}", n=n, degree=order, tol=None)
        with G64.active():
            errs.append(abs(sol.q[-1, 0] - G64.cos(G64.num(2))))
    for e1, e2 in zip(errs, errs[1:]):
        assert 2 ** (order - 0.5) < e1 / e2 < 2 ** (order + 0.7)


@pytest.mark.parametrize("context", [G64, mpvi.MPContext(40)], ids=["gmp64", "mp40"])
def test_every_recurrence_against_gbs(context):
    """The Taylor method (order 30) and GBS (order 24), independent constructions, agree
    on a field using every recurrence, in both contexts."""
    prob = every_recurrence(context)
    h, n = context.num("1/20"), 20
    ty = mpvi.solve(prob, "taylor", h=h, n=n, degree=30, tol=None)
    gb = mpvi.solve(prob, "gbs", h=h, n=n, levels=12)
    with context.active():
        diff = max(abs(x - y) for x, y in zip(list(ty.q.ravel()) + list(ty.p.ravel()),
                                               list(gb.q.ravel()) + list(gb.p.ravel())))
    assert diff < (1e-45 if context is G64 else 1e-36)


def test_more_than_three_degrees_of_freedom_solve_for_the_velocity():
    """Beyond three degrees of freedom v comes from M_0 v_k = p_k - sum M_j v_(k-j): the
    4-link pendulum (dense M(q)) against GBS."""
    from mpvi.systems import n_link_pendulum
    prob = n_link_pendulum(G64, 4)
    ty = mpvi.solve(prob, "taylor", h="1/80", n=16, degree=40, tol=None)
    gb = mpvi.solve(prob, "gbs", h="1/80", n=16, levels=12)
    with G64.active():
        assert max(abs(x - y) for x, y in zip(ty.q.ravel(), gb.q.ravel())) < 1e-45


def _systems():
    from mpvi.systems import n_link_pendulum, pendulum_chain
    from mpvi.systems.double_pendulum import nonlinear_double_pendulum
    free = mpvi.LagrangianSystem("free particle", [a, b], sp.diag(1, 2), 0, {}, G64)
    return {"double pendulum": nonlinear_double_pendulum(G64),
            "every recurrence": every_recurrence(G64),
            "oscillator": oscillator(G64),
            "free": mpvi.Problem(free, ["1/2", "1"], p0=["1/3", "-1/4"]),
            "4-link": n_link_pendulum(G64, 4),
            "chain of 5": pendulum_chain(G64, 5)}


@pytest.mark.parametrize("name", ["double pendulum", "every recurrence", "oscillator", "free",
                                  "4-link", "chain of 5"])
def test_the_compiled_step_is_the_python_step_bit_for_bit(name, monkeypatch):
    """solve with the compiled Taylor step and with the Python one: the same bits, and the
    compiled step never declines on these regular runs."""
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    monkeypatch.setattr(kernels, "_KERNELS", {})      # not the lazy steps of earlier tests
    declined = []
    real = kernels.taylor_steps

    def watching(system):
        steps = real(system)
        if steps.compiled is None:
            return steps
        step = steps.compiled.step
        watched = types.SimpleNamespace(**vars(steps.compiled))
        watched.step = lambda *args: step(*args) or declined.append(args) or None
        return steps._replace(compiled=watched)
    monkeypatch.setattr(sys.modules["mpvi.methods.taylor"], "taylor_steps", watching)
    runs = []
    for switch in ("0", "1"):
        monkeypatch.setenv(cbackend.ENV_SWITCH, switch)
        runs.append(mpvi.solve(_systems()[name], "taylor", h="1/50", n=6, degree=17, tol=None))
    if "error" in cbackend.toolchain():
        pytest.skip("no toolchain for compiled kernels")
    python, compiled = runs
    for part in ("q", "p"):
        assert bits_equal(list(getattr(python, part).ravel()), list(getattr(compiled, part).ravel()))
    assert kernels.taylor_steps(_systems()[name].system).compiled is not None and declined == []


@pytest.mark.skipif("error" in cbackend.toolchain(), reason="no toolchain for compiled kernels")
def test_the_compiled_step_declines_where_python_raises(monkeypatch):
    """A mass matrix singular at the node, beyond three degrees of freedom: the compiled
    step returns None, the Python step raises SingularMatrixError; a nan goes through
    both alike; a wider input is declined; a bad order is an error."""
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    monkeypatch.setenv(cbackend.ENV_SWITCH, "1")
    monkeypatch.setattr(kernels, "_KERNELS", {})
    qs = sp.symbols("x0:4")
    system = mpvi.LagrangianSystem("singular at x3 = 0", list(qs),
                                   sp.diag(1, 1, 1, qs[3] ** 2), -sp.cos(qs[0]), {}, G64)
    steps = kernels.taylor_steps(system)
    python, compiled = steps.python.step, steps.compiled.step
    wider = mpvi.GMPContext(80).num(1)          # made before the block: a new context sets the precision
    with G64.active():
        h = G64.num("1/100")
        y = [G64.num(j + 1) / 7 for j in range(8)]
        assert bits_equal(compiled(0, y, h, 5), python(0, y, h, 5))
        singular = y[:3] + [G64.zero] + y[4:]
        assert compiled(0, singular, h, 5) is None
        with pytest.raises(mpvi.SingularMatrixError):
            python(0, singular, h, 5)
        assert compiled(0, y[:-1] + [wider], h, 5) is None
        nan = [gmpy2.nan()] + y[1:]
        out_c, out_p = compiled(0, nan, h, 5), python(0, nan, h, 5)
        assert out_c[0] != out_c[0] and all((x != x and z != z) or (x == z and not x != x)
                                            for x, z in zip(out_c, out_p))
        with pytest.raises(ValueError, match="order must be 1 to 100000"):
            compiled(0, y, h, 0)


def test_errors_name_their_cause():
    """An order that is not a positive integer, a function without a recurrence here, a
    first-order system: ValueErrors naming the cause."""
    prob = oscillator(G64)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="degree must be an integer"):
            mpvi.solve(prob, "taylor", h="1/10", n=1, degree=bad)
    odd = mpvi.LagrangianSystem("tanh well", [a], sp.Matrix([[1]]), sp.log(sp.cosh(a)) + a * sp.tanh(a), {}, G64)
    with pytest.raises(TaylorUnsupported, match="tanh"):
        mpvi.solve(mpvi.Problem(odd, ["1/2"], v0=["0"]), "taylor", h="1/10", n=1)
    first = mpvi.FirstOrderSystem("decay", lambda t, y: [-y[0]], 1, G64)
    with pytest.raises(ValueError, match="first-order system"):
        mpvi.solve(mpvi.Problem(first, ["1"]), "taylor", h="1/10", n=1)


def test_a_singular_mass_matrix_at_a_node_names_the_point():
    """As for RK4: SingularMatrixError naming q, from the field at the node."""
    system = mpvi.LagrangianSystem("singular at b = 0", [a, b], sp.diag(1, b ** 2),
                                   -sp.cos(a), {}, G64)
    stepper = mpvi.get_method("taylor").prepare(system, G64.num("1/100"), G64, degree=5,
                                                  tol=None)
    with G64.active(), pytest.raises(mpvi.SingularMatrixError, match="singular at q"):
        stepper(G64.zero, [G64.num(1), G64.zero], [G64.zero, G64.num(1)])


def test_dense_output_is_a_taylor_substep():
    """Between nodes sol(t) is one Taylor step of theta h: q(0.05) of the oscillator to
    about eps, and its velocity too."""
    sol = mpvi.solve(oscillator(G64), "taylor", h="1/10", n=2, degree=40, tol=None)
    s = sol("1/20")
    with G64.active():
        assert abs(s.q[0] - G64.cos(G64.num("1/10"))) < 1e-62
        assert abs(s.v[0] + 2 * G64.sin(G64.num("1/10"))) < 1e-62
