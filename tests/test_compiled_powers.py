"""Rational powers in the compiled kernels (mpvi/compiled/cbackend.py): x**(p/q) compiled, bit for
bit what the Python kernel computes (one correctly rounded mpfr_pow of the same exponent,
or the same value by square roots), the Kepler step compiled, and a kernel that stays in
Python saying why, once, in words a user understands."""
import random
from fractions import Fraction

import gmpy2
import pytest
import sympy as sp

import mpvi
from mpvi.compiled import cbackend
from mpvi.compiled import codegen

pytestmark = pytest.mark.skipif(
    "error" in cbackend.toolchain(),
    reason=f"no toolchain for compiled kernels: {cbackend.toolchain().get('error')}")

R = sp.Rational
x = sp.Symbol("x")
POWERS = [x ** R(-3, 2), x ** R(3, 2), sp.sqrt(x), 1 / sp.sqrt(x), x ** R(-1, 2),
          x ** R(5, 2), x ** R(-7, 2), x ** R(1, 4), x ** R(-5, 4), x ** R(7, 8),
          x ** R(-3, 64), x ** R(1001, 2), x ** R(1, 3), sp.cbrt(x), x ** R(-2, 3),
          x ** R(5, 7), x ** -3, x ** -1, (1 + x ** 2) ** R(-3, 2), x ** R(-3, 2) * sp.sin(2)]
"""Every form sympy prints a rational power in: sqrt, 1/sqrt, mpf(p)/mpf(q) exponents of
denominator 2^m (by roots in C) and others (mpfr_pow in C), negative integer powers."""


def same(a, b):
    """The same number bit for bit (sign of zero and precision included), or both nan."""
    if a != a or b != b:
        return a != a and b != b
    return a == b and a.precision == b.precision and gmpy2.is_signed(a) == gmpy2.is_signed(b)


def points(ctx, rng):
    """Full-precision numbers over 60 decades, values next to exact powers (k^4 (1 +- ulp):
    the cases where a root must not round twice), and the special values."""
    pts = [ctx.num(Fraction(rng.getrandbits(ctx.prec + 40) + 1, 2 ** (ctx.prec + 40))
                   * Fraction(10) ** rng.randint(-30, 30)) for _ in range(400)]
    with ctx.active():
        for k in (1, 2, 3, 7, 12, 4096):
            exact = ctx.num(k) ** 4
            pts += [exact, gmpy2.next_above(exact), gmpy2.next_below(exact), exact / 2 ** 20]
        pts += [ctx.num(v) for v in ("0", "-0", "-1", "-2.5", "inf", "-inf", "nan", "1/4")]
        pts += [ctx.num(2) ** 100000, ctx.num(2) ** -100000]
    return pts


@pytest.mark.parametrize("dps", [15, 30, 64, 100])
def test_every_rational_power_is_compiled_bit_for_bit(dps):
    """Each form compiles (the compiled function is the C one, not the Python fallback) and
    returns the Python kernel's bits at 440 points, at four precisions."""
    ctx = mpvi.GMPContext(dps)
    python = codegen.generate([[x]], POWERS, ctx, compiled=False)
    compiled = codegen.generate([[x]], POWERS, ctx, compiled=True)
    assert type(compiled).__name__ == "builtin_function_or_method", "stayed in Python"
    rng = random.Random(dps)
    with ctx.active():
        for v in points(ctx, rng):
            p, c = python([v]), compiled([v])
            wrong = [str(e) for e, a, b in zip(POWERS, p, c) if not same(a, b)]
            assert not wrong, (str(v), wrong)


def test_a_wider_argument_is_read_exactly_by_the_roots():
    """An argument of more bits than the context (Python binds it unrounded): the roots
    start from the exact argument, as mpfr_pow does."""
    ctx = mpvi.GMPContext(20)
    exprs = [x ** R(-3, 2), x ** R(5, 4), sp.sqrt(x)]
    python = codegen.generate([[x]], exprs, ctx, compiled=False)
    compiled = codegen.generate([[x]], exprs, ctx, compiled=True)
    assert type(compiled).__name__ == "builtin_function_or_method", "stayed in Python"
    wide = mpvi.GMPContext(200)
    with ctx.active():
        for text in ("1/3", "2/7", "12345.678901234567890123456789"):
            v = wide.num(text)
            assert all(same(a, b) for a, b in zip(python([v]), compiled([v]))), text


def kepler(ctx, name="Kepler"):
    X, Y = sp.symbols("X Y")
    return mpvi.LagrangianSystem(name, [X, Y], sp.eye(2), -1 / sp.sqrt(X ** 2 + Y ** 2), {}, ctx)


@pytest.mark.parametrize("method", ["simpson", "midpoint", "rk4"])
def test_the_kepler_step_is_compiled_and_bit_identical(method, monkeypatch, capsys):
    """The potential -1/r has the Jacobian's (x^2 + y^2)^(-3/2) and (x^2 + y^2)^(-5/2): the
    Newton iteration (or the RK4 step) is compiled -- every solve of the run is the compiled
    one --, nothing stays in Python, and the states equal those of the Python kernels."""
    monkeypatch.setattr(cbackend, "_status", {})
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    ctx = mpvi.GMPContext(64)
    runs = []
    for switch in ("0", "1"):
        monkeypatch.setenv(cbackend.ENV_SWITCH, switch)
        problem = mpvi.Problem(kepler(ctx, f"Kepler {switch}"), ["1", "0"], p0=["0", "6/5"])
        runs.append(mpvi.solve(problem, method, h="1/16", n=20))
    python, compiled = runs
    for k in ("q", "p"):
        assert all(same(a, b) for a, b in zip(getattr(python, k).ravel(),
                                              getattr(compiled, k).ravel())), k
    assert "stays in Python" not in capsys.readouterr().err
    if method != "rk4":
        assert python.stats["newton"] == compiled.stats["newton"]
    if method == "simpson":                  # the compiled Newton never hands over
        calls = []
        original = mpvi.engines.kernels.solve_info
        monkeypatch.setattr(mpvi.engines.kernels, "solve_info",
                            lambda *a, **k: calls.append(1) or original(*a, **k))
        again = mpvi.solve(mpvi.Problem(kepler(ctx, "Kepler 1"), ["1", "0"], p0=["0", "6/5"]),
                           method, h="1/16", n=20)
        assert again.stats["newton"]["solves"] == 20 and not calls


def test_a_kernel_that_stays_in_python_says_why_once_by_name(monkeypatch, capsys):
    """LambertW has no MPFR function: every kernel of the system stays in Python (the same
    numbers), and one line names the system and the function, for three methods."""
    monkeypatch.setattr(cbackend, "_status", {})
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    monkeypatch.setenv(cbackend.ENV_SWITCH, "1")
    ctx = mpvi.GMPContext(30)
    X, Y = sp.symbols("X Y")
    system = mpvi.LagrangianSystem("Lambert well", [X, Y], sp.eye(2),
                                   sp.LambertW(X ** 2 + Y ** 2 + 1), {}, ctx)
    for method in ("simpson", "rk4", "midpoint"):
        mpvi.solve(mpvi.Problem(system, ["1/2", "0"], p0=["0", "1"]), method, h="1/10", n=2)
    lines = [line for line in capsys.readouterr().err.splitlines() if "stays" in line or
             "stay in" in line]
    assert lines == ["mpvi: the kernels of Lambert well stay in Python (the same numbers, "
                     "computed more slowly): LambertW has no counterpart in MPFR"]


def test_an_order_mpfr_lacks_is_named_in_words(monkeypatch, capsys):
    monkeypatch.setattr(cbackend, "_status", {})
    ctx = mpvi.GMPContext(30)
    f = codegen.generate([[x]], [sp.besselj(R(1, 3), x), sp.polygamma(1, x)], ctx,
                         compiled=True)
    assert f.__name__ == "kernel"                    # the Python function
    err = capsys.readouterr().err
    assert ("a kernel stays in Python (the same numbers, computed more slowly): besselj of a "
            "non-integer order has no counterpart in MPFR (only integer orders)") in err
