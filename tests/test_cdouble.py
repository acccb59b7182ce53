"""Kernels in doubles (:mod:`mpvi.compiled.cdouble`): the Python function on floats and the
C statements give the same bits, and fail (raise, return 0) on the same inputs; Newton's
start in doubles (:func:`mpvi.numbers.newton.double_start`) keeps the compiled iteration
bit-identical to the Python one and the solution the same to the context's precision."""
import ctypes
import math
import random
from fractions import Fraction

import pytest
import sympy as sp

import mpvi
from mpvi.compiled import cbackend, cdouble, codegen
from mpvi.compiled.ctranslate import Unsupported
from mpvi.numbers.newton import solve_info

needs_toolchain = pytest.mark.skipif(
    "error" in cbackend.toolchain(),
    reason=f"no toolchain for compiled kernels: {cbackend.toolchain().get('error')}")

G = mpvi.GMPContext(64)
x, y, a, b = sp.symbols("x y a b")
EXPRESSIONS = [sp.sin(x) * sp.cos(y) + a * x ** 2, sp.exp(x / 3) - sp.log(y) * b,
               sp.sqrt(y) / (x - a) + x ** -3, x ** sp.Rational(3, 2) + sp.Rational(1, 3) * y,
               sp.tan(x) * sp.atan(y) - sp.cosh(x / 7) + sp.asin(y / 5), 2 * x * y - b ** 3,
               sp.tanh(y) * sp.sinh(x / 9) + sp.acos(a / 4) + sp.Abs(x - y) + sp.pi * x]


def _source():
    """(source, {constant: value}, constant names) of the expressions in the gmp context."""
    source, table = codegen.generate_source([[x, y], [a], [b]], EXPRESSIONS, G)
    return source, table, sorted(table)


def _c_library(tmp_path, lines):
    """The C statements ``lines`` as ``int kernel(x, d_kp, d_pp, d_k, d_out)``, loaded by
    ctypes."""
    c = tmp_path / "kernel.c"
    body = "\n    ".join(lines)
    c.write_text('#include "mpvi_double.h"\n'
                 "int kernel(const double *x, const double *d_kp, const double *d_pp,\n"
                 "           const double *d_k, double *d_out) {\n"
                 f"    {body}\n    return 1;\n}}\n")
    out = tmp_path / "kernel.so"
    cbackend.compile_c(cbackend.toolchain(), c, out, cbackend._CFLAGS)   # the modules' flags
    lib = ctypes.CDLL(str(out))
    lib.kernel.restype = ctypes.c_int
    return lib.kernel


@needs_toolchain
def test_python_and_c_kernels_in_doubles_give_the_same_bits_and_fail_alike(tmp_path):
    """On 400 random points (some outside the domains: log and sqrt of negatives, asin
    beyond 1, a division by zero, exp and powers that overflow) the Python kernel on
    floats and its C statements give the same doubles where the Python one returns, and
    the C one returns 0 exactly where the Python one raises."""
    source, table, names = _source()
    constants = {k: float(v) for k, v in table.items()}
    python = cdouble.python_kernel(source, constants)
    kernel = _c_library(tmp_path, cdouble.c_kernel(source, names, ["x", "d_kp", "d_pp"]))
    dk = (ctypes.c_double * max(len(names), 1))(*[constants[k] for k in names])
    out = (ctypes.c_double * len(EXPRESSIONS))()
    rng = random.Random(5)
    points = [[rng.uniform(-3, 3), rng.uniform(-6, 6), rng.uniform(-5, 5), rng.uniform(-3, 3)]
              for _ in range(400)]
    points += [[1.0, 2.0, 1.0, 1.0], [800.0, 2.0, 0.5, 1.0], [0.0, 2.0, 0.5, 1.0],
               [1e-120, 2.0, 0.5, 1e110], [2.0, 4.0, 0.5, -1e103], [math.inf, 2.0, 0.5, 1.0],
               [math.nan, 2.0, 0.5, 1.0]]
    failed = 0
    for px, py, pa, pb in points:
        try:
            want = python([px, py], [pa], [pb])
        except (ArithmeticError, ValueError):
            want = None
        got = kernel((ctypes.c_double * 2)(px, py), (ctypes.c_double * 1)(pa),
                     (ctypes.c_double * 1)(pb), dk, out)
        if want is None:
            failed += 1
            assert got == 0, (px, py, pa, pb)
        else:
            assert got == 1, (px, py, pa, pb)
            assert [float(v).hex() for v in want] == [v.hex() for v in out], (px, py, pa, pb)
    assert 50 < failed < len(points) - 50


@needs_toolchain
def test_a_square_and_a_sine_cosine_pair_keep_the_bits_of_pythons(tmp_path):
    """x ** 2 as a kernel in doubles has it: where the compiler inlines ``mpvi_dpow`` it
    sees ``pow(x, 2.0)`` and, as a builtin, folds it into ``x * x``, which differs from
    the C library's ``pow`` (Python's float power) in the last bit at about one argument
    in 1,200 (a kernel of one power is inlined; the modules' flags keep the library's
    call).  A sin and a cos of one argument likewise stay two calls.  20,000 arguments in
    [-40, 40] each."""
    for k, exprs in enumerate([[x ** 2], [sp.sin(x) * a + sp.cos(x) * b]]):
        source, table = codegen.generate_source([[x], [a], [b]], exprs, G)
        names = sorted(table)
        python = cdouble.python_kernel(source, {k: float(v) for k, v in table.items()})
        directory = tmp_path / str(k)
        directory.mkdir()
        kernel = _c_library(directory, cdouble.c_kernel(source, names, ["x", "d_kp", "d_pp"]))
        dk = (ctypes.c_double * max(len(names), 1))(*[float(table[k]) for k in names])
        out = (ctypes.c_double * 1)()
        rng = random.Random(11)
        differ = 0
        for _ in range(20000):
            px, pa, pb = rng.uniform(-40, 40), rng.uniform(-2, 2), rng.uniform(-2, 2)
            want = python([px], [pa], [pb])
            assert kernel((ctypes.c_double * 1)(px), (ctypes.c_double * 1)(pa),
                          (ctypes.c_double * 1)(pb), dk, out) == 1
            differ += float(want[0]).hex() != out[0].hex()
        assert differ == 0, (exprs, differ)


def test_a_source_outside_the_subset_has_no_kernel_in_doubles():
    """atan2, Heaviside and a comparison have no kernel in doubles: ``supported`` is false
    and both translations refuse it, so neither iteration starts in doubles."""
    for expr in (sp.atan2(y, x), sp.Heaviside(x) * y, sp.Max(x, y)):
        source, table = codegen.generate_source([[x, y], [a], [b]], [expr], G)
        assert not cdouble.supported(source), expr
        with pytest.raises(Unsupported):
            cdouble.c_kernel(source, sorted(table), ["x", "d_kp", "d_pp"])
        with pytest.raises(Unsupported):
            cdouble.python_kernel(source, {k: 1.0 for k in table})


def _powers(x_, y_):
    """``x ** y`` as the generated Python kernel in doubles computes it, or None where it
    raises."""
    try:
        return cdouble._power(x_, y_)
    except (ArithmeticError, ValueError):
        return None


def test_a_power_in_doubles_is_pythons_float_power_or_refused():
    """0 to a negative power, a negative number to a non-integer power (Python: a complex
    number), non-finite operands and overflow are refused; otherwise Python's own float
    power, signs of zeros and of odd powers of negatives included."""
    assert _powers(0.0, -1.0) is None and _powers(-8.0, 1 / 3) is None
    assert _powers(math.inf, 2.0) is None and _powers(10.0, 400.0) is None
    assert _powers(-0.0, 3.0) == 0.0 and math.copysign(1, _powers(-0.0, 3.0)) == -1
    assert _powers(-2.0, 3.0) == -8.0 and _powers(-1.0, 5.0) == -1.0
    assert _powers(2.0, 0.5) == math.sqrt(2.0) and _powers(1e-200, 2.0) == 0.0


def _circle_kernel(ctx):
    """A kernel of 6 unknowns: x_i - c_i sin(x_{i+1}) - exp(-x_i^2) r_i = 0 (coupled)."""
    X = sp.symbols("u0:6")
    K = sp.symbols("k0:6")
    P = [sp.Symbol("p")]
    residual = [X[i] - K[i] * sp.sin(X[(i + 1) % 6]) - P[0] * sp.exp(-X[i] ** 2)
                for i in range(6)]
    from mpvi.engines.kernels import Kernel
    return Kernel(X, K, P, residual, ctx)


@pytest.mark.parametrize("dps", [30, 64, 200])
def test_the_start_in_doubles_gives_the_same_root_in_fewer_iterations(dps):
    """Python kernels: from a poor first guess, with the start in doubles the iteration
    at the context's precision takes at least three fewer iterations (6 -> 2 at 30
    digits, 9 -> 4 at 200) and ends at the same root (to a few eps) as without it."""
    ctx = mpvi.GMPContext(dps)
    kernel = _circle_kernel(ctx)
    K = [ctx.num(Fraction(i + 1, 7)) for i in range(6)]
    P = [ctx.num("1/3")]
    x0 = [ctx.num(0)] * 6
    with ctx.active():
        plain = solve_info(kernel.equations(K, P), x0, ctx)
        started = solve_info(kernel.equations(K, P), x0, ctx, start=kernel.start(K, P))
    assert started[1] <= plain[1] - 3, (plain[1], started[1])      # 6 -> 2, 7 -> 3, 9 -> 4
    assert max(abs(u - v) for u, v in zip(plain[0], started[0])) <= 8 * ctx.eps


@needs_toolchain
def test_the_compiled_start_keeps_the_python_bits(monkeypatch, tmp_path):
    """The compiled Newton with its start in doubles gives the Python iteration's bits
    and iteration count, where the start converges and where the kernel in doubles cannot
    be evaluated (a parameter of 1e400, infinite in doubles: the start abandoned in both)."""
    monkeypatch.setenv(cbackend.ENV_CACHE, str(tmp_path / "kernels"))
    monkeypatch.setenv(cbackend.ENV_COMPILE_AFTER, "0")
    monkeypatch.setattr(cbackend, "_MODULES", {})
    ctx = mpvi.GMPContext(64)
    kernel = _circle_kernel(ctx)
    assert kernel.newton is not None and kernel.double is not None
    K = [ctx.num(Fraction(i + 1, 7)) for i in range(6)]
    with ctx.active():
        for p, guess in (("1/3", [ctx.num(0)] * 6), ("1e400", [ctx.num(30)] * 6)):
            P = [ctx.num(p)]
            python = solve_info(kernel.equations(K, P), guess, ctx, start=kernel.start(K, P))
            compiled = kernel.solve(guess, K, P, ctx)
            assert compiled[1] == python[1]
            assert [v.hex() if hasattr(v, "hex") else str(v) for v in compiled[0]] == \
                [v.hex() if hasattr(v, "hex") else str(v) for v in python[0]]


@needs_toolchain
def test_a_run_is_the_same_compiled_and_in_python(monkeypatch, tmp_path):
    """Mutze's method on the double pendulum (h = 1/50, 800 steps) compiled from its first
    step and in Python: the same numbers, bit for bit, at every node.  Its kernel's start
    in doubles squares numbers; before the modules kept the library's ``pow``, the two runs
    parted at node 727 in the last digits (and a run's numbers depended on when its
    kernels were compiled)."""
    from mpvi.systems.double_pendulum import nonlinear_double_pendulum
    monkeypatch.setenv(cbackend.ENV_CACHE, str(tmp_path / "kernels"))
    monkeypatch.setenv(cbackend.ENV_COMPILE_AFTER, "0")
    monkeypatch.setattr(cbackend, "_MODULES", {})
    runs = []
    for compiled in ("1", "0"):
        monkeypatch.setenv(cbackend.ENV_SWITCH, compiled)
        ctx = mpvi.GMPContext(64)
        sol = mpvi.solve(nonlinear_double_pendulum(ctx), "mutze", h=ctx.num(1) / 50, n=800,
                         g=0, solver="newton")
        runs.append([[repr(v) for v in row] for row in (*sol.q, *sol.p)])
    assert runs[0] == runs[1]
