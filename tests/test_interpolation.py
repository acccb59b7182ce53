"""mpvi_papers.mutze._mutze_interpolation: Mutze's C-infinity partition-of-unity interpolation
(mutze Sec. 2) and the p* of footnote 3, checked against independent references (sympy derivatives,
mpmath finite differences, direct sums over all m terms, a natural cubic spline)."""
import json
import random
import warnings
from decimal import Decimal
from fractions import Fraction
from itertools import pairwise

import numpy as np
import pytest
import sympy as sp

from mpvi import GMPContext, MPContext, fp
from mpvi.numbers.context import PrecisionError
from mpvi.repro.declare import get_reproduction
from mpvi.repro.run import execute

from mpvi_papers.mutze._mutze_interpolation import (
    P_OPT,
    SmoothInterpolant,
    optimal_p,
    rho,
    second_derivative_norm_squared,
    second_derivative_terms,
    smooth_step,
    smooth_step_derivatives,
    smooth_step_pair,
)
from mpvi_papers.mutze.mutze_interpolation import random_data

MP = MPContext(64)
TOL = MP.num(10) ** -60


# ----------------------------------------------------------------------- the smooth step
def test_rho_shape_symmetry_and_monotonicity():
    assert rho(Fraction(1, 2), ctx=MP) == MP.num(Fraction(1, 2))
    zs = [MP.num(Fraction(k, 97)) for k in range(1, 97)]
    vals = [rho(z, ctx=MP) for z in zs]
    assert all(b > a for a, b in pairwise(vals))                 # strictly increasing
    assert all(abs(rho(1 - z, ctx=MP) - (1 - v)) <= 4 * MP.eps for z, v in zip(zs, vals))
    # the definition, typed independently
    for z in zs[::7]:
        p = MP.num(P_OPT)
        direct = 1 / (1 + MP.exp((1 / z + 1 / (z - 1)) * p))
        assert abs(direct - rho(z, ctx=MP)) <= 8 * MP.eps
    assert smooth_step(-3, ctx=MP) == 0 and smooth_step(0, ctx=MP) == 0
    assert smooth_step(1, ctx=MP) == 1 and smooth_step(7, ctx=MP) == 1
    x = MP.num(Fraction(999999, 1000000))
    r, c = smooth_step_pair(x, ctx=MP)                                 # 1 - r to full accuracy:
    e = MP.exp((1 / x + 1 / (x - 1)) * MP.num(P_OPT))                  # e^s, s ~ -810000
    assert r == 1 and 0 < c < MP.num(10) ** -300
    assert abs(c - e / (1 + e)) <= 8 * MP.eps * c


def test_float64_underflows_cleanly_near_the_ends():
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        warnings.simplefilter("error")
        assert smooth_step(1e-300, ctx=fp) == 0.0
        assert smooth_step(5e-324, ctx=fp) == 0.0                    # 1/x overflows to inf
        assert smooth_step_derivatives(5e-324, 3, ctx=fp) == [0.0] * 4
        assert smooth_step(1e-3, ctx=fp) == 0.0                      # e^-810 underflows
        assert smooth_step(1 - 1e-16, ctx=fp) == 1.0
        assert 0 < smooth_step(0.01, ctx=fp) < 1e-30
        assert smooth_step_derivatives(1e-200, 8, ctx=fp) == [0.0] * 9
        assert rho(0.5, ctx=fp) == 0.5


def test_derivatives_against_sympy_and_mpmath_diff():
    x = sp.Symbol("x")
    p = sp.Rational(81, 100)
    ds = [1 / (1 + sp.exp(p * (1 / x + 1 / (x - 1))))]
    for _ in range(5):
        ds.append(sp.diff(ds[-1], x))
    for pt in (sp.Rational(1, 20), sp.Rational(9, 10)):
        ours = smooth_step_derivatives(MP.num(Fraction(pt.p, pt.q)), 5, "0.81", MP)
        for k, d in enumerate(ds):
            exact = MP.num(str(d.subs(x, pt).evalf(80)))
            assert abs(ours[k] - exact) <= MP.num(10) ** -60 * max(1, abs(exact)), (pt, k)
    hi = MPContext(100)
    for pt in ("1/7", "1/2", "5/6"):
        ours = smooth_step_derivatives(MP.num(Fraction(pt)), 8, None, MP)
        for k in range(1, 9):
            ref = hi.diff(lambda t: smooth_step(t, None, hi), hi.num(Fraction(pt)), k)
            assert abs(ours[k] - MP.num(ref)) <= MP.num(10) ** -55 * max(1, abs(ours[k])), (pt, k)


def test_derivatives_vanish_at_both_ends():
    """r^(k)(x) -> 0 as x -> 0+ and x -> 1- for k = 1..8 (r is C-infinity, mutze Sec. 2)."""
    previous = None
    for e in (10, 14, 20, 34):                                         # x = 2^-e: 1 - x exact
        x = MP.num(Fraction(1, 2 ** e))
        left = smooth_step_derivatives(x, 8, None, MP)
        right = smooth_step_derivatives(1 - x, 8, None, MP)
        biggest = max(max(abs(a), abs(b)) for a, b in zip(left[1:], right[1:]))
        assert biggest < MP.num(10) ** -300
        assert 0 < abs(left[8])                                      # tiny, not a shortcut 0
        for k in range(1, 9):
            assert abs(right[k] - (-1) ** (k + 1) * left[k]) <= MP.num(10) ** -55 * abs(left[k])
        if previous is not None:
            assert biggest < previous
        previous = biggest


# ------------------------------------------------------------------------- footnote 3
def test_second_derivative_terms_against_sympy():
    x, p = sp.symbols("x p", positive=True)
    r = 1 / (1 + sp.exp(p * (1 / x + 1 / (x - 1))))
    r2 = sp.diff(r, x, 2)
    dr2 = sp.diff(r2, p)
    for xv, pv in ((sp.Rational(1, 10), sp.Rational(4, 5)), (sp.Rational(2, 3), sp.Rational(3, 2))):
        a, b = second_derivative_terms(MP.num(Fraction(xv.p, xv.q)), MP.num(Fraction(pv.p, pv.q)), MP)
        ea = MP.num(str(r2.subs({x: xv, p: pv}).evalf(80)))
        eb = MP.num(str(dr2.subs({x: xv, p: pv}).evalf(80)))
        assert abs(a - ea) <= MP.num(10) ** -60 * abs(ea)
        assert abs(b - eb) <= MP.num(10) ** -60 * abs(eb)


def test_J_prime_is_the_derivative_of_J_and_J_has_its_minimum_between():
    c = MPContext(30)
    p1 = c.num(1)
    numeric = c.diff(lambda q: second_derivative_norm_squared(q, c), p1)
    assert abs(second_derivative_norm_squared(p1, c, derivative=True) - numeric) <= \
        c.num(10) ** -25 * abs(numeric)
    assert second_derivative_norm_squared(c.num(Fraction(1, 2)), c, derivative=True) < 0
    assert second_derivative_norm_squared(c.num(Fraction(6, 5)), c, derivative=True) > 0


def test_p_star_to_30_digits_stable_under_precision_and_printed_value():
    a = optimal_p(MPContext(50))
    b = optimal_p(MPContext(70), method="gauss-legendre")
    c = MPContext(70)
    assert abs(c.lift(a) - b) <= c.num(10) ** -45          # a: the 50-digit p*, its bits kept
    assert abs(c.num(P_OPT) - b) <= c.num(10) ** -65
    # footnote 3 prints 0.810747...: p* rounded to 6 digits; truncated it would be 0.810746
    assert Decimal(c.to_str(b, 6)) == Decimal("0.810747")
    assert Decimal(c.to_str(b, 7)) == Decimal("0.8107469")
    J = second_derivative_norm_squared(b, c)
    assert abs(J - c.num("25.04088592805657930109646569543611119")) <= c.num(10) ** -35


def test_quadrature_refuses_float64():
    with pytest.raises(TypeError, match="need mpmath's quad"):
        second_derivative_norm_squared(0.8, fp)
    with pytest.raises(TypeError, match="mp context"):
        optimal_p(fp)


# ----------------------------------------------------------------------- the interpolant
def test_reproduces_data_and_two_term_sum_equals_the_papers_full_sum():
    xs, ys = random_data(7, 15)
    f = SmoothInterpolant(xs, ys, ctx=MP)
    for x, y in zip(xs, ys):
        assert abs(f(x) - MP.num(y)) <= TOL
        assert abs(f.evaluate_all_terms(x) - MP.num(y)) <= TOL
    rng = random.Random(3)
    lo, hi = xs[0] - 2, xs[-1] + 2
    for _ in range(60):
        x = MP.num(lo + (hi - lo) * Fraction(rng.randint(0, 10 ** 6), 10 ** 6))
        w = f.weights(x)
        nonzero = sum(1 for v in w if v != 0)
        j = f.interval(x)
        inside = 0 <= j < len(xs) - 1 and x != MP.num(xs[j])
        assert nonzero == (2 if inside else 1)
        assert abs(MP.fsum(w) - 1) <= 4 * MP.eps
        assert all(v >= 0 for v in w)
        assert abs(f(x) - f.evaluate_all_terms(x)) <= TOL


def test_exact_for_lines_everywhere_and_for_parabolas_inside():
    xs = [Fraction(k * k + k, 3) for k in range(8)]
    f = SmoothInterpolant(xs, [3 * x - 2 for x in xs], ctx=MP)
    g = SmoothInterpolant(xs, [x * x - 5 * x + 1 for x in xs], ctx=MP)
    for k in range(-20, 81):
        x = MP.num(Fraction(k, 3))
        assert abs(f(x) - (3 * x - 2)) <= TOL * 100
        if MP.num(xs[1]) <= x <= MP.num(xs[-2]):
            assert abs(g(x) - (x * x - 5 * x + 1)) <= TOL * 1000


def test_locality_no_initializing_run():
    """Changing y_j changes f only on ]x_(j-2), x_(j+2)[ (only f_(j-1), f_j, f_(j+1) use it)."""
    xs, ys = random_data(11, 12)
    j = 6
    ys2 = list(ys)
    ys2[j] += 5
    f, g = SmoothInterpolant(xs, ys, ctx=MP), SmoothInterpolant(xs, ys2, ctx=MP)
    inside = changed = 0
    for k in range(400):
        x = MP.num(xs[0] - 1 + (xs[-1] - xs[0] + 2) * Fraction(k, 399))
        if MP.num(xs[j - 2]) < x < MP.num(xs[j + 2]):
            inside += 1
            changed += f(x) != g(x)
        else:
            assert f(x) == g(x), x
    assert inside > 10 and changed == inside


def test_vector_values_are_componentwise():
    xs, ys = random_data(5, 9, dim=3)
    f = SmoothInterpolant(xs, ys, ctx=MP)
    assert f.dim == 3
    comps = [SmoothInterpolant(xs, [y[i] for y in ys], ctx=MP) for i in range(3)]
    for k in range(50):
        x = MP.num(xs[0] - 1 + (xs[-1] - xs[0] + 2) * Fraction(k, 49))
        v = f(x)
        assert v.shape == (3,)
        assert all(abs(v[i] - comps[i](x)) <= TOL for i in range(3))
        d = f.derivatives(x, 3)
        for i in range(3):
            di = comps[i].derivatives(x, 3)
            assert all(abs(d[k][i] - di[k]) <= TOL * max(1, abs(di[k])) for k in range(4))
    for x, y in zip(xs, ys):
        assert MP.norm_inf(f(x) - MP.asarray(y)) <= TOL


def test_one_sided_derivatives_match_at_knots_unlike_a_cubic_spline():
    from mpvi_papers.mutze.mutze_interpolation import NaturalCubicSpline
    xs, ys = random_data(13, 8)
    f = SmoothInterpolant(xs, ys, ctx=MP)
    s = NaturalCubicSpline([MP.num(x) for x in xs], [MP.num(y) for y in ys], MP)
    d = MP.num(10) ** -30
    spline_jump3 = MP.zero
    for xi in xs[1:-1]:
        xi = MP.num(xi)
        lo, hi = f.derivatives(xi - d, 6), f.derivatives(xi + d, 6)
        at = f.derivatives(xi, 6)
        for k in range(7):
            scale = max(1, abs(at[k]), abs(at[min(k + 1, 6)]))
            assert abs(hi[k] - lo[k]) <= MP.num(10) ** -28 * scale, k
        # mpmath's one-sided finite differences, independent of the Taylor arithmetic
        for k in range(1, 5):
            right = MP.diff(f, xi, k, direction=1)
            left = MP.diff(f, xi, k, direction=-1)
            assert abs(right - left) <= MP.num(10) ** -30 * max(1, abs(at[k]))
            assert abs(right - at[k]) <= MP.num(10) ** -30 * max(1, abs(at[k]))
        sl, sh = s.derivatives(xi - d, 3), s.derivatives(xi + d, 3)
        assert abs(sh[2] - sl[2]) <= MP.num(10) ** -25            # spline: C2 ...
        spline_jump3 = max(spline_jump3, abs(sh[3] - sl[3]))
    assert spline_jump3 > MP.num(Fraction(1, 10))                   # ... but not C3


def test_quadrature_and_derivatives_run_in_the_gmp_context():
    """The reproduction's default context: inside quad and diff the gmp context works at a
    raised precision, where the parameters the integrand and the interpolant captured (p,
    the data) are numbers of its own nominal precision and must be taken as they are.
    The results agree with the mp context's."""
    g, m = GMPContext(30), MPContext(30)
    one = [c.num(1) for c in (g, m)]
    J = [second_derivative_norm_squared(x, c, derivative=True) for x, c in zip(one, (g, m))]
    assert abs(m.num(J[0]) - J[1]) <= m.num(10) ** -25 * abs(J[1])
    xs, ys = random_data(13, 8)
    d = []
    for c in (g, m):
        f = SmoothInterpolant(xs, ys, ctx=c)
        with c.active():                # the test's own sum at the context's precision
            x = c.num(xs[3]) + c.num("0.1")
        d.append(c.diff(f, x, 2))
    assert abs(m.num(d[0]) - d[1]) <= m.num(10) ** -25 * max(1, abs(d[1]))


def test_two_points_give_the_line_and_default_p():
    f = SmoothInterpolant(["1", "3"], ["2", "6"], ctx=MP)
    assert f.p == MP.num(P_OPT)
    for x in ("-4", "1.5", "2", "2.9", "11"):
        assert abs(f(x) - 2 * MP.num(x)) <= TOL


def test_float64_context_agrees_with_mp():
    xs, ys = random_data(17, 10)
    f = SmoothInterpolant([float(x) for x in xs], [float(y) for y in ys], ctx=fp)
    g = SmoothInterpolant(xs, ys, ctx=MP)
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        warnings.simplefilter("error")
        for k in range(200):
            x = Fraction(xs[0]) - 1 + (xs[-1] - xs[0] + 2) * Fraction(k, 199)
            v = f(float(x))
            assert isinstance(v, float)
            assert abs(v - float(g(x))) <= 1e-12 * max(1.0, abs(v))
            dv = f.derivatives(float(x), 3)
            dg = g.derivatives(x, 3)
            assert all(abs(a - float(b)) <= 1e-8 * max(1.0, abs(float(b))) for a, b in zip(dv, dg))
    for x, y in zip(xs, ys):
        assert abs(f(float(x)) - float(y)) <= 1e-13 * max(1.0, abs(float(y)))


def test_bad_input_is_refused_with_its_cause():
    with pytest.raises(ValueError, match="strictly increasing"):
        SmoothInterpolant(["0", "2", "1"], ["0", "1", "2"], ctx=MP)
    with pytest.raises(ValueError, match="strictly increasing"):
        SmoothInterpolant(["0", "1", "1"], ["0", "1", "2"], ctx=MP)
    with pytest.raises(ValueError, match="at least 2 points"):
        SmoothInterpolant(["0"], ["1"], ctx=MP)
    with pytest.raises(ValueError, match="3 abscissae but ys has shape"):
        SmoothInterpolant(["0", "1", "2"], ["0", "1"], ctx=MP)
    with pytest.raises(ValueError, match="must be > 0"):
        SmoothInterpolant(["0", "1"], ["0", "1"], p=0, ctx=MP)
    with pytest.raises(ValueError, match="must be > 0"):
        smooth_step("1/2", p="-1", ctx=MP)
    with pytest.raises(ValueError, match="one-dimensional"):
        SmoothInterpolant([["0", "1"]], ["0", "1"], ctx=MP)
    with pytest.raises(ValueError, match="0 < z < 1"):
        rho(0, ctx=MP)
    with pytest.raises(PrecisionError):
        SmoothInterpolant([0.0, 1.0], ["0", "1"], ctx=MP)
    with pytest.raises(ValueError, match="derivative order"):
        smooth_step_derivatives("1/2", -1, ctx=MP)


def test_quick_reproduction_writes_its_outputs(tmp_path):
    rep = get_reproduction("mutze_interpolation")
    rep = type(rep)(**{**rep.__dict__, "quick": {**rep.quick, "p_grid": {
        "first": "1/2", "last": "3/2", "points": 3}, "methods": ["tanh-sinh"],
        "curve_points": 41, "delta_exponents": [2, 16]}})
    paths = execute(rep, "mp", 40, True, tmp_path)
    values = json.loads(paths["json"].read_text())["values"]
    assert abs(MP.num(values["p_star"]) - MP.num(P_OPT)) <= MP.num(10) ** -38
    assert values["max number of nonzero weights w_i"] == "2"
    assert values["J' sign changes on the p grid"] == "1"
    assert float(values["spline max knot jump k=3, delta=1e-16"]) > 1
    assert paths["png"].stat().st_size > 10_000
