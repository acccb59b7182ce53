"""Every special function a system may use is evaluated in every path -- the mp reference,
the gmp context (Python and compiled to C, bit-identical), float64 -- with its derivatives,
real-valued (nan outside the real domain); a function no path can evaluate is refused
when the system is built, naming it (issue 35, item 10)."""
from fractions import Fraction

import mpmath
import pytest
import sympy as sp

import mpvi
from mpvi.compiled import cbackend
from mpvi.compiled import codegen
from mpvi.compiled.codegen import evaluable
from mpvi.analysis.jets import UnsupportedExpression
from mpvi.analysis.modified import modified_equation
from mpvi.engines.taylor import TaylorUnsupported

q, r = sp.symbols("q r")
HALF = sp.Rational(1, 2)
M70 = mpmath.MPContext()
M70.dps = 70
h = M70.mpf(1) / 2

# name: (V(q) or V(q, r), its mpmath form, point, whether the C kernels of V, grad V and
# hess V compile (False: a function MPFR lacks; that kernel stays in Python))
CASES = {
    "erf": (sp.erf(q), lambda m, x: m.erf(x), ["3/10"], (True, True, True)),
    "erfc": (sp.erfc(2 * q), lambda m, x: m.erfc(2 * x), ["3/10"], (True, True, True)),
    "gamma": (sp.gamma(q), lambda m, x: m.gamma(x), ["13/10"], (True, True, False)),
    "loggamma": (sp.loggamma(q), lambda m, x: m.loggamma(x), ["13/10"], (True, True, False)),
    "digamma": (sp.digamma(q), lambda m, x: m.digamma(x), ["13/10"], (True, False, False)),
    "zeta": (sp.zeta(q), lambda m, x: m.zeta(x), ["5/2"], (True, False, False)),
    "zeta of a function": (sp.zeta(q**2 + 2), lambda m, x: m.zeta(x**2 + 2), ["1/2"],
                           (True, False, False)),
    "besselj": (sp.besselj(2, q), lambda m, x: m.besselj(2, x), ["7/10"], (True, True, True)),
    "besselj of order 1/2": (sp.besselj(HALF, q), lambda m, x: m.besselj(h, x), ["7/10"],
                             (False, False, False)),
    "bessely": (sp.bessely(1, q), lambda m, x: m.bessely(1, x), ["7/10"], (True, True, True)),
    "atanh": (sp.atanh(q), lambda m, x: m.atanh(x), ["3/10"], (True, True, True)),
    "asinh": (sp.asinh(q), lambda m, x: m.asinh(x), ["3/10"], (True, True, True)),
    "acosh": (sp.acosh(q), lambda m, x: m.acosh(x), ["3/2"], (True, True, True)),
    "Abs": (sp.Abs(q - HALF)**3, lambda m, x: abs(x - h)**3, ["3/10"], (True, True, True)),
    "sign": (sp.sign(q) * q**2, lambda m, x: m.sign(x) * x**2, ["-3/10"], (True, True, True)),
    "Heaviside": (sp.Heaviside(q - HALF) * q**3,
                  lambda m, x: (1 if x > h else 0) * x**3, ["7/10"], (True, True, True)),
    "floor": (sp.floor(3 * q) * q**2, lambda m, x: m.floor(3 * x) * x**2, ["7/10"],
              (True, True, True)),
    "ceiling": (sp.ceiling(q) * q**2, lambda m, x: m.ceil(x) * x**2, ["-7/10"],
                (True, True, True)),
    "LambertW": (sp.LambertW(q), lambda m, x: m.lambertw(x), ["3/10"], (False, False, False)),
    "erfi": (sp.erfi(q), lambda m, x: m.erfi(x), ["3/10"], (False, True, True)),
    "Ei": (sp.Ei(q), lambda m, x: m.ei(x), ["3/10"], (True, True, True)),
    "expint": (sp.expint(2, q), lambda m, x: m.expint(2, x), ["7/10"], (False, False, True)),
    "li": (sp.li(q), lambda m, x: m.li(x), ["5/2"], (False, True, True)),
    "Si": (sp.Si(q), lambda m, x: m.si(x), ["7/10"], (False, True, True)),
    "Ci": (sp.Ci(q), lambda m, x: m.ci(x), ["7/10"], (False, True, True)),
    "Shi": (sp.Shi(q), lambda m, x: m.shi(x), ["7/10"], (False, True, True)),
    "Chi": (sp.Chi(q), lambda m, x: m.chi(x), ["7/10"], (False, True, True)),
    "fresnels": (sp.fresnels(q), lambda m, x: m.fresnels(x), ["7/10"], (False, True, True)),
    "fresnelc": (sp.fresnelc(q), lambda m, x: m.fresnelc(x), ["7/10"], (False, True, True)),
    "airyai": (sp.airyai(q), lambda m, x: m.airyai(x), ["7/10"], (True, False, True)),
    "airybi": (sp.airybi(q), lambda m, x: m.airybi(x), ["7/10"], (False, False, False)),
    "besseli": (sp.besseli(1, q), lambda m, x: m.besseli(1, x), ["7/10"],
                (False, False, False)),
    "besselk": (sp.besselk(0, q), lambda m, x: m.besselk(0, x), ["7/10"],
                (False, False, False)),
    "elliptic_k": (sp.elliptic_k(q), lambda m, x: m.ellipk(x), ["3/10"], (False, False, False)),
    "elliptic_e": (sp.elliptic_e(q), lambda m, x: m.ellipe(x), ["3/10"], (False, False, False)),
    "incomplete elliptic": (sp.elliptic_e(q, sp.Rational(1, 3)) + sp.elliptic_f(q, HALF),
                            lambda m, x: m.ellipe(x, m.mpf(1) / 3) + m.ellipf(x, h), ["7/10"],
                            (False, True, True)),
    "factorial": (sp.factorial(q), lambda m, x: m.factorial(x), ["13/10"], (False, True, False)),
    "beta": (sp.beta(q, 2), lambda m, x: m.beta(x, 2), ["13/10"], (False, False, False)),
    "two dof": (sp.erf(q * r) + sp.besselj(0, q - r) + sp.Abs(r)**3,
                lambda m, x, y: m.erf(x * y) + m.besselj(0, x - y) + abs(y)**3,
                ["3/10", "-1/5"], (True, True, True)),
}


def system(case, ctx):
    V, _, point, _ = CASES[case]
    coords = [q, r][:len(point)]
    return mpvi.LagrangianSystem(case, coords, sp.eye(len(coords)), V, {}, ctx)


def exact(x):
    """A context number as an mpf of M70, exactly."""
    if isinstance(x, float):
        return M70.mpf(x)
    if hasattr(x, "as_mantissa_exp"):                    # gmpy2
        if x != x:
            return M70.nan
        man, e = x.as_mantissa_exp()
        return M70.mpf((int(man), int(e)))
    return M70.mpf(x)                                   # mpmath: its bits


def reference(case):
    """V, grad V and hess V of the case by mpmath at 70 digits (numerical differentiation)."""
    _, f, point, _ = CASES[case]
    x = [M70.mpf(Fraction(p).numerator) / Fraction(p).denominator for p in point]
    n = len(x)

    def V(*y):
        return f(M70, *y)
    unit = [tuple(int(i == j) for j in range(n)) for i in range(n)]
    grad = [M70.diff(V, x, unit[i]) for i in range(n)]
    hess = [M70.diff(V, x, tuple(a + b for a, b in zip(unit[i], unit[j])))
            for i in range(n) for j in range(n)]
    return [V(*x)] + grad + hess


def evaluate(case, ctx):
    """V, grad V and hess V of the case's system in ``ctx`` at the case's point."""
    s = system(case, ctx)
    x = [ctx.num(p) for p in CASES[case][2]]
    return [s.potential(x)] + list(s.grad_potential(x)) + list(s.hess_potential(x).ravel())


def close(a, b, tol):
    return all(abs(exact(x) - y) <= tol * max(1, abs(y)) for x, y in zip(a, b))


@pytest.mark.parametrize("case", CASES)
def test_derivatives_in_the_mp_context_are_those_of_mpmath(case):
    values, want = evaluate(case, mpvi.MPContext(50)), reference(case)
    assert close(values, want, M70.mpf(10) ** -45), (values, want)


@pytest.mark.parametrize("case", CASES)
def test_the_gmp_and_fp_contexts_agree_with_the_mp_context(case, monkeypatch):
    monkeypatch.setenv("MPVI_COMPILED", "0")
    G = mpvi.GMPContext(50)
    reference_values = [exact(x) for x in evaluate(case, mpvi.MPContext(50))]
    assert close(evaluate(case, G), reference_values, 64 * exact(G.eps))
    fp_values = evaluate(case, mpvi.fp)
    assert all(isinstance(x, float) for x in fp_values)
    assert close(fp_values, reference_values, M70.mpf(10) ** -13)


def bits_equal(a, b):
    return len(a) == len(b) and all((x == y and x.precision == y.precision)
                                    or (x != x and y != y) for x, y in zip(a, b))


needs_compiler = pytest.mark.skipif("error" in cbackend.toolchain(),
                                    reason="no toolchain for compiled kernels")


@needs_compiler
@pytest.mark.parametrize("case", CASES)
def test_the_compiled_kernels_are_bit_identical_where_mpfr_has_the_function(case, monkeypatch,
                                                                            tmp_path):
    """V, grad V and hess V compile to C exactly where MPFR has every function they use,
    and give the bits of the Python kernels (on gmpy2, the same MPFR functions) at the
    case's point and at points on and outside the functions' domains."""
    monkeypatch.setenv("MPVI_KERNEL_CACHE", str(tmp_path))
    G = mpvi.GMPContext(50)
    V, _, point, compiles = CASES[case]
    coords = [q, r][:len(point)]
    pieces = [[V], [sp.diff(V, c) for c in coords],
              [sp.diff(V, a, b) for a in coords for b in coords]]
    points = [point] + [[p] * len(point) for p in ("-1", "0", "1", "2", "1/2", "nan", "inf")]
    for exprs, compiled_expected in zip(pieces, compiles):
        python = codegen.generate([coords], exprs, G, compiled=False)
        compiled = codegen.generate([coords], exprs, G, compiled=True)
        is_c = type(compiled).__name__ == "builtin_function_or_method"
        assert is_c == compiled_expected, exprs
        with G.active():
            for p in points:
                x = [G.num(v) for v in p]
                assert bits_equal(python(x), compiled(x)), (exprs, p)


@needs_compiler
@pytest.mark.parametrize("case", ["erf", "gamma", "bessely", "Heaviside", "two dof", "zeta"])
def test_a_system_with_compiled_kernels_gives_the_bits_of_the_python_path(case, monkeypatch,
                                                                          tmp_path):
    monkeypatch.setenv("MPVI_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    monkeypatch.setenv("MPVI_COMPILED", "0")
    G = mpvi.GMPContext(50)
    python = evaluate(case, G)
    monkeypatch.setenv("MPVI_COMPILED", "1")
    assert bits_equal(python, evaluate(case, G))


SOLVED = ["erf", "gamma", "loggamma", "zeta", "besselj", "bessely", "besselj of order 1/2",
          "acosh", "Abs", "sign", "Heaviside", "floor", "LambertW", "Ei", "airyai",
          "incomplete elliptic", "two dof"]


def solve(case, ctx):
    """A few Simpson steps on V + 4 |q - q0|^2 (a well around the case's point), with a mass
    matrix that uses erf for the two-dof case."""
    V, _, point, _ = CASES[case]
    coords = [q, r][:len(point)]
    q0 = [sp.Rational(p) for p in point]
    well = V + 4 * sum((c - c0)**2 for c, c0 in zip(coords, q0))
    mass = sp.eye(len(coords))
    if len(coords) == 2:
        mass[0, 0] = 2 + sp.erf(q)
    s = mpvi.LagrangianSystem(case, coords, mass, well, {}, ctx)
    problem = mpvi.Problem(s, [str(p) for p in point], v0=["1/50"] * len(point))
    sol = mpvi.solve(problem, "simpson", h="1/64", n=4)
    return [exact(x) for x in list(sol.q[-1]) + list(sol.p[-1])]


@pytest.mark.parametrize("case", SOLVED)
def test_a_short_simpson_solve_runs_in_every_context(case, monkeypatch, tmp_path):
    """mp, gmp with the Python kernels, gmp with the compiled ones (compiled at once; the
    same bits), fp."""
    monkeypatch.setenv("MPVI_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setenv("MPVI_COMPILE_AFTER", "0")
    reference_state = solve(case, mpvi.MPContext(50))
    G = mpvi.GMPContext(50)
    monkeypatch.setenv("MPVI_COMPILED", "0")
    python = solve(case, G)
    assert close(python, reference_state, M70.mpf(10) ** -45)
    monkeypatch.setenv("MPVI_COMPILED", "1")
    assert solve(case, G) == python
    assert close(solve(case, mpvi.fp), reference_state, M70.mpf(10) ** -12)


@pytest.mark.parametrize("ctx", [mpvi.MPContext(30), mpvi.GMPContext(30), mpvi.fp],
                         ids=lambda c: c.name)
def test_outside_the_real_domain_the_value_is_nan_and_steps_are_exact(ctx, monkeypatch):
    """nan (never a complex number nor an exception) outside the real domain, so that the
    driver catches a non-finite value; sign, Heaviside, floor, DiracDelta exact."""
    monkeypatch.setenv("MPVI_COMPILED", "0")
    x = sp.Symbol("x")
    nan_cases = [(sp.atanh(x), "2"), (sp.acosh(x), "0"), (sp.loggamma(x), "-1/2"),
                 (sp.loggamma(x), "0"), (sp.bessely(0, x), "-1"), (sp.bessely(0, x), "0"),
                 (sp.bessely(HALF, x), "-1"), (sp.besselj(HALF, x), "-1"),
                 (sp.LambertW(x), "-1"), (sp.polygamma(1, x), "-2"), (sp.zeta(x), "nan"),
                 (sp.DiracDelta(x), "0"), (sp.diff(sp.Abs(x), x, 2), "0"),
                 (sp.diff(sp.floor(x), x), "2"), (sp.sign(x), "nan"), (sp.Heaviside(x), "nan"),
                 (sp.Ci(x), "-1"), (sp.besselk(0, x), "-1"), (sp.elliptic_k(x), "2"),
                 (sp.li(x), "-1"), (sp.expint(2, x), "-1"), (sp.Ei(x), "nan")]
    for e, at in nan_cases:
        f = codegen.generate([[x]], [e], ctx, compiled=False)
        value = f([ctx.num(at)])[0]
        assert not ctx.is_complex(value) and value != value, (e, at, value)
    for e in (sp.gamma(x), sp.zeta(x)):                     # poles: not finite
        value = codegen.generate([[x]], [e], ctx, compiled=False)([ctx.num(1 if e.func == sp.zeta
                                                                           else 0)])[0]
        assert not ctx.isfinite(value)
    exact_cases = [(sp.sign(x), "0", 0), (sp.sign(x), "-1/3", -1), (sp.Heaviside(x), "0", "1/2"),
                   (sp.Heaviside(x, 1), "0", 1), (sp.Heaviside(x), "-1/3", 0),
                   (sp.floor(x), "-3/2", -2), (sp.ceiling(x), "-3/2", -1),
                   (sp.DiracDelta(x), "1/3", 0), (sp.DiracDelta(x, 2), "-1/3", 0),
                   (sp.diff(sp.floor(x), x), "1/3", 0), (sp.diff(sp.Abs(x), x), "-1/3", -1)]
    for e, at, want in exact_cases:
        value = codegen.generate([[x]], [e], ctx, compiled=False)([ctx.num(at)])[0]
        assert ctx.is_number(value) and value == ctx.num(want), (e, at, value)


def test_a_run_that_leaves_the_domain_stops_with_a_named_error():
    """V = -atanh(q) pulls q towards 1 where atanh ends: beyond, V is nan and Newton says
    so (no complex number, no math domain error)."""
    s = mpvi.LagrangianSystem("atanh well", [q], sp.eye(1), -sp.atanh(q), {}, mpvi.MPContext(30))
    problem = mpvi.Problem(s, ["9/10"], v0=["1"])
    with pytest.raises(mpvi.NewtonError, match=r"simpson.*the potential V is not finite"):
        mpvi.solve(problem, "simpson", h="1/8", n=40, check_stability=False)


@pytest.mark.parametrize("ctx", [mpvi.MPContext(30), mpvi.GMPContext(30), mpvi.fp],
                         ids=lambda c: c.name)
def test_an_undefined_function_is_refused_when_the_system_is_built(ctx):
    f = sp.Function("f")
    with pytest.raises(ValueError, match=r"spring: f is an undefined function \(f\(q\)\)"):
        mpvi.LagrangianSystem("spring", [q], sp.eye(1), q**2 + f(q), {}, ctx)
    with pytest.raises(ValueError, match=r"spring: f is an undefined function"):
        mpvi.LagrangianSystem("spring", [q], sp.Matrix([[1 + f(q)**2]]), q**2, {}, ctx)
    with pytest.raises(ValueError, match=r"damped: f is an undefined function"):
        mpvi.LagrangianSystem("damped", [q], sp.eye(1), q**2, {}, ctx,
                              force=lambda t, x, v: sp.Matrix([-f(v[0])]))
    v = sp.Symbol("v")
    with pytest.raises(ValueError, match=r"lagrangian: g is an undefined function"):
        mpvi.LagrangianSystem.from_lagrangian("lagrangian", [q], [v],
                                              v**2 / 2 - sp.Function("g")(q, v), {}, ctx)


def test_a_function_no_path_evaluates_is_refused_naming_it():
    ctx = mpvi.MPContext(30)
    with pytest.raises(ValueError, match=r"s: the function hankel1 \(hankel1\(0, q\)\) has "
                                         "no evaluation"):
        mpvi.LagrangianSystem("s", [q], sp.eye(1), sp.hankel1(0, q), {}, ctx)
    with pytest.raises(ValueError, match=r"s: the function frac \(frac\(q\)\) has no evaluation "
                                         r"in mpvi \(frac\)"):
        mpvi.LagrangianSystem("s", [q], sp.eye(1), sp.frac(q) * q, {}, ctx)
    # a Bessel function whose order moves: sympy leaves d/dq besselj(q, 2) unevaluated
    with pytest.raises(ValueError, match=r"s: Derivative\(besselj\(q, 2\), q\) cannot be "
                                         r"evaluated"):
        mpvi.LagrangianSystem("s", [q], sp.eye(1), sp.besselj(q, 2), {}, ctx)


@pytest.mark.parametrize("ctx", [mpvi.MPContext(30), mpvi.GMPContext(30), mpvi.fp],
                         ids=lambda c: c.name)
def test_a_function_of_a_parameter_is_not_differentiated_by_it(ctx):
    """besselj(nu, q) with a parameter nu: sympy cannot differentiate it by nu, and no path
    needs to (the systems differentiate by coordinates, velocities and time)."""
    nu = sp.Symbol("nu")
    s = mpvi.LagrangianSystem("s", [q], sp.eye(1), sp.besselj(nu, q), {nu: "1/3"}, ctx)
    g = M70.diff(lambda x: M70.besselj(M70.mpf(1) / 3, x), M70.mpf(7) / 10)
    assert close(s.grad_potential([ctx.num("7/10")]), [g], exact(ctx.eps) * 64)


def test_generated_code_never_calls_a_name_the_context_lacks():
    """Even outside a system (codegen.generate on its own): a clear error, not a NameError
    at the first call."""
    x = sp.Symbol("x")
    with pytest.raises(ValueError, match="generate kernel: f is an undefined function"):
        codegen.generate([[x]], [sp.Function("f")(x)], mpvi.MPContext(30))
    with pytest.raises(ValueError, match="generate kernel: no function frac in the mp30"):
        codegen.generate([[x]], [sp.frac(x)], mpvi.MPContext(30))


def test_every_context_binds_the_special_functions_of_generated_code():
    for ctx in (mpvi.MPContext(30), mpvi.GMPContext(30), mpvi.fp):
        assert set(ctx.SPECIAL_FUNCTIONS_OF_CODE) <= set(ctx.namespace())


def test_derivatives_are_written_in_functions_the_printers_know():
    x = sp.Symbol("x")
    assert evaluable(sp.diff(sp.Abs(x), x)) == sp.sign(x)
    assert evaluable(sp.diff(sp.sign(x), x)) == 2 * sp.DiracDelta(x)
    assert evaluable(sp.diff(sp.zeta(x), x, 2)) == codegen._ZetaDerivative(2, x)
    assert evaluable(sp.diff(sp.floor(x**2), x)) == 2 * x * codegen._DiracComb(x**2, 0)
    untouched = sp.sin(x) * x**2
    assert evaluable(untouched) is untouched        # no derivative: the same object


def test_taylor_refuses_a_function_without_a_recurrence_naming_it():
    """The Taylor method differentiates the field, which has V's derivative: erf' is exp,
    which has a recurrence; LambertW and besselj keep functions that have none."""
    ctx = mpvi.MPContext(30)
    for V, name in ((sp.LambertW(q), r"lambertw\(\) of a varying quantity"),
                    (sp.besselj(0, q), r"besselj\(\) of 2 arguments")):
        s = mpvi.LagrangianSystem("s", [q], sp.eye(1), V + q**2, {}, ctx)
        with pytest.raises(TaylorUnsupported, match=name):
            mpvi.solve(mpvi.Problem(s, ["3/10"], v0=["0"]), "taylor", h="1/16", n=2)
    s = mpvi.LagrangianSystem("s", [q], sp.eye(1), sp.erf(q) + q**2, {}, ctx)
    sol = mpvi.solve(mpvi.Problem(s, ["3/10"], v0=["0"]), "taylor", h="1/16", n=2, degree=8,
                     tol=None)
    assert ctx.all_finite(sol.q[-1])


def test_backward_error_analysis_names_what_it_cannot_differentiate():
    ctx = mpvi.MPContext(30)
    for V, what in ((sp.besselj(0, q), "do not close"), (sp.gamma(q), "do not close"),
                    (sp.zeta(q), r"Derivative\(zeta\(q\), q\)")):
        s = mpvi.LagrangianSystem("s", [q], sp.eye(1), V, {}, ctx)
        with pytest.raises(UnsupportedExpression, match=what):
            modified_equation("midpoint", s, 2)
    s = mpvi.LagrangianSystem("s", [q], sp.eye(1), sp.erf(q), {}, ctx)
    assert modified_equation("midpoint", s, 2).order == 2        # exp closes: it works

