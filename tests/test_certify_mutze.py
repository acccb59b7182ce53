"""The mutze reproductions' certify hooks (issue 45): their enclosures against independent
computations -- exact values and 200-digit mpmath reruns."""
from fractions import Fraction

import mpmath
import pytest
import sympy as sp

from mpvi.numbers.arbref import arb_precision

pytest.importorskip("flint")

from mpvi_papers.mutze import _mutze_series as ser  # noqa: E402
from mpvi_papers.mutze import mutze_theorem60 as t60  # noqa: E402
from mpvi_papers.mutze._mutze_certify import ball_eval, exact  # noqa: E402
from mpvi_papers.mutze._mutze_oscillator import (METHODS, PARAMS, BallOscillator,  # noqa: E402
                                             errors, run_method, setup, zero_phase_enclosure)


def _contains(ball, value, digits=200):
    """|value - mid(ball)| <= rad(ball) + 10^-(digits - 10), ``value`` an mpf or a
    decimal string."""
    with mpmath.workdps(digits):
        value = mpmath.mpf(value)
        mid = mpmath.mpf(ball.mid().str(digits + 10, radius=False))
        rad = mpmath.mpf(ball.rad().str(10, radius=False))
        return abs(value - mid) <= rad + mpmath.mpf(10) ** (10 - digits)


def test_ball_eval_is_exact_and_refuses_unknown_nodes():
    from flint import arb
    x = sp.Symbol("x")
    with arb_precision(50):
        b = ball_eval(x ** 2 / 3 - sp.Rational(1, 7) + sp.cos(x), {x: arb(2)})
        assert b.contains(arb(4) / 3 - arb(1) / 7 + arb(2).cos())
        with pytest.raises(TypeError, match="cannot enclose"):
            ball_eval(sp.gamma(x), {x: arb(2)})
        with pytest.raises(ValueError):
            exact(0.5)


def test_g_count_is_the_number_of_roots_of_the_gcd():
    g, a, k, m = ser.G, sp.Symbol("a"), sp.Symbol("k"), sp.Symbol("m")
    assert t60._g_roots_count(a * k * (5 * g - 3) / 5, [a, k]) == 1
    assert t60._g_roots_count(a * (g - 1) * (g + 2) + k * (g - 1) * (g + 2) ** 2, [a, k]) == 2
    assert t60._g_roots_count(a * (g ** 2 + 1), [a]) == 0    # no real root
    # the oscillator's tau^2 coefficient of DIFF (Fractions on words): the one g = 3/5
    c2 = ser.to_concrete(ser.diff(2).coefficient(2), m * ser.V ** 2 / 2 - k * ser.X ** 2 / 2, 0)
    assert sp.solve(sp.Poly(sp.expand(c2), ser.X, ser.V, ser.A, m, k).coeffs(), g,
                    dict=True) == [{g: sp.Rational(3, 5)}]
    assert t60._g_roots_count(c2, sorted(c2.free_symbols - {g}, key=str)) == 1


def test_term_counts_are_exact():
    S = ser.action(5)
    assert all(isinstance(c, Fraction) for c in S.terms.values())
    assert [S.term_count(k) for k in range(1, 6)] == [1, 3, 8, 16, 29]


def test_ball_lhs_contains_a_200_digit_quadrature():
    """The rigorous LHS (acb.integral) of the nonlinear n = 1 case against mpmath's
    200-digit quadrature of the same integrand built here from L and F."""
    t, xs, vs, L, F = t60.nonlinear_1d()
    pt = t60.PARAMS["point_1d"]
    tau = Fraction(1, 16)
    with arb_precision(90):
        check = t60.BallCheck(L, F, t, xs, vs, pt)
        ball = check.lhs(tau)
        rhs = check.rhs(tau, "3/5")
    assert ball.rad() < 1e-60
    (x,), (v,) = xs, vs
    a, e = Fraction(pt["a"][0]), Fraction(pt["e"][0])
    h = sp.Symbol("h")
    T = sp.Rational(tau.numerator, tau.denominator)
    q = sp.Rational(pt["x"][0]) + sp.Rational(pt["v"][0]) * h + sp.Rational(a) * h ** 2 / 2
    qd = sp.Rational(pt["v"][0]) + sp.Rational(a) * h
    at = {t: sp.Rational(pt["t"]) + h, x: q, v: qd}
    aF = sp.Rational(a) * F[0]
    parts = [sp.diff(L, x), sp.diff(L, v), sp.diff(aF, x), sp.diff(aF, v), F[0]]
    Lx, Lv, aFx, aFv, eF = (sp.Rational(e) * u.subs(at) for u in parts)
    c3 = sp.Rational(3, 2) / T ** 3
    sig, dsig, w = c3 * h * (2 * T - h) / 2, c3 * (T - h), h * (h - 2 * T) / 2
    integrand = sp.lambdify(h, sig * Lx + dsig * Lv + w * (sig * aFx + dsig * aFv)
                            - c3 * w * eF, "mpmath")
    with mpmath.workdps(200):
        value = mpmath.quad(integrand, [0, 2 * mpmath.mpf(tau.numerator) / tau.denominator])
        assert _contains(ball, value, 150)
        # RHS: -e.G at the shifted point, from sympy exactly
        G = (sp.diff(L, v, v) * a + sp.diff(L, v, x) * v + sp.diff(L, v, t) - sp.diff(L, x)
             - F[0])
        g = sp.Rational(3, 5)
        shift = {t: sp.Rational(pt["t"]) + T,
                 x: sp.Rational(pt["x"][0]) + sp.Rational(pt["v"][0]) * T + sp.Rational(a) * T ** 2 * g,
                 v: sp.Rational(pt["v"][0]) + sp.Rational(a) * T}
        assert _contains(rhs, str(sp.N(-e * G.subs(shift), 200)), 150)


QUICK = dict(PARAMS, periods=2)


@pytest.fixture(scope="module")
def rerun_200():
    """Every method's run of the Sec. 7 experiment (2 periods) at 200 digits, its errors
    by the reproduction's own (independent, non-ball) code."""
    from mpvi.numbers.context import MPContext
    from mpvi.repro.studies import Recorder
    ctx = MPContext(200)
    rec = Recorder(ctx)
    problem, exact_flow, h, n, x0, v0 = setup(ctx, QUICK)
    out = {}
    with ctx.active():
        for name in METHODS:
            t, x, v = run_method(rec, problem, name, h, n)
            out[name] = errors(ctx, exact_flow, t, x, v, x0, v0)
    return out


def test_oscillator_walk_contains_the_200_digit_runs(rerun_200):
    with arb_precision(90):
        osc = BallOscillator(QUICK)
        for name in METHODS:
            amp, phase = osc.errors(osc.matrix(name))
            ramp, rphase = rerun_200[name]
            assert len(amp) == len(ramp) == QUICK["steps_per_period"] * 2 + 1
            for j in (1, len(amp) // 2, len(amp) - 1):
                assert amp[j].rad() < 1e-60 and phase[j].rad() < 1e-60
                assert _contains(amp[j], str(ramp[j]), 150), (name, j)
                assert _contains(phase[j], str(rphase[j]), 150), (name, j)


def test_zero_phase_g_is_a_sign_change():
    with arb_precision(90):
        osc = BallOscillator(PARAMS)                           # the paper's 20 periods
        enclosure = zero_phase_enclosure(osc, "0.340035998110961496", 24)   # widened
        lo, hi = enclosure.lower(), enclosure.upper()
        assert (osc.final_phase(lo) < 0) != (osc.final_phase(hi) < 0)
        with pytest.raises(ArithmeticError, match="no sign change"):
            zero_phase_enclosure(osc, "0.9", 12)


def test_p_star_enclosure_contains_the_100_digit_value():
    """p* of footnote 3 enclosed by a proven sign change of J' (rigorous quadrature and
    tail bound) holds the 100-digit mpmath value (tanh-sinh and Gauss-Legendre agree),
    and J(p*) the 100-digit J."""
    from mpvi_papers.mutze._mutze_interpolation import enclose_J, enclose_p_star
    p100 = ("0.8107469240751916851302080844278507401935660635072309457956670475470700036471"
            "742954163435125761667893")
    J100 = ("25.04088592805657930109646569543611119241336850420867277762998470336157043845"
            "230128794205455614231906")
    with arb_precision(70):
        ps = enclose_p_star(p100[:40], 36)
        assert ps.rad() < 1e-30
        assert _contains(ps, p100, 100)
        assert _contains(enclose_J(ps), J100, 100)
        with pytest.raises(ArithmeticError, match="no sign change"):
            enclose_p_star("0.9", 8)


def test_pendulum_enclosure_contains_mpmath_odefun():
    from mpvi_papers.mutze._mutze_certify import enclose_pendulum
    with arb_precision(60):
        X, V = enclose_pendulum(1, 1, 0, Fraction(1, 8), order=20)
    assert X.rad() < 1e-20 and V.rad() < 1e-20
    with mpmath.workdps(45):
        sol = mpmath.odefun(lambda t, y: [y[1], -mpmath.sin(y[0]) - y[1] / 5
                                          + mpmath.cos(2 * t / 3) / 2], 0, [1, 0])
        x, v = sol(1)
        assert _contains(X, x, 40) and _contains(V, v, 40)


def test_quantum_enclosure_contains_a_200_digit_rerun():
    """Norm and energy deviations of eq. (86) on a small grid, enclosed from the exact
    problem, against the step rewritten here in mpmath at 200 digits."""
    from mpvi_papers.mutze._mutze_quantum import certified_outputs
    p = {"n": 24, "dx": "1", "hbar": "1", "mass": "1", "zone": "3", "calm_mass": "0.01",
         "barrier": {"center": "12", "halfwidth": "1", "height": "0.12"}}
    sc = {"name": "gauss", "kind": "gauss", "x0": "7", "sigma": "2", "k0": "1/2",
          "steps": 40, "out_every": 10}
    with arb_precision(80):
        recs = certified_outputs(p, sc, "2/5")
    with mpmath.workdps(200):
        n, tau = 24, mpmath.mpf(2) / 5
        xs = [mpmath.mpf(j) for j in range(1, n + 1)]
        diag = [1 + (mpmath.mpf(12) / 100 if abs(x - 12) <= 1 else 0) for x in xs]

        def H(u):
            return [diag[i] * u[i] - (u[i - 1] if i else 0) / 2 - (u[i + 1] if i < n - 1 else 0) / 2
                    for i in range(n)]
        env = [mpmath.exp(-(x - 7) ** 2 / 16) for x in xs]
        X = [[e * mpmath.cos(x / 2) for e, x in zip(env, xs)],
             [e * mpmath.sin(x / 2) for e, x in zip(env, xs)]]
        s = mpmath.sqrt(mpmath.fsum(u * u for row in X for u in row))
        X = [[u / s for u in row] for row in X]
        V = [H(X[1]), [-u for u in H(X[0])]]

        def observe(X):
            norm = mpmath.fsum(u * u for row in X for u in row)
            return norm, mpmath.fsum(a * b for row in X for a, b in zip(row, H(row))) / norm
        n0, e0 = observe(X)
        for step in range(sc["steps"] + 1):
            if step % sc["out_every"] == 0:
                norm, energy = observe(X)
                rec = recs[step // sc["out_every"]]
                assert rec["step"] == step
                assert _contains(rec["norm_dev"], (norm - n0) / n0, 150)
                assert _contains(rec["energy_dev"], (energy - e0) / e0, 150)
                assert rec["norm_dev"].rad() < 1e-40
            acc = [[-u for u in H(H([a + tau * b for a, b in zip(ra, rv)]))]
                   for ra, rv in zip(X, V)]
            X, V = ([[a + 2 * tau * b + 2 * tau * tau * c for a, b, c in zip(ra, rv, rc)]
                     for ra, rv, rc in zip(X, V, acc)],
                    [[b + 2 * tau * c for b, c in zip(rv, rc)] for rv, rc in zip(V, acc)])


def test_formula_difference_decides_exactly():
    from mpvi_papers.mutze._mutze_certify import formula_difference
    same = formula_difference("-(b*v + k*(x + v*tau))/(m + tau*(b + 3*k*tau/5))",
                              "-5*(b*v + k*tau*v + k*x)/(5*b*tau + 3*k*tau**2 + 5*m)", "eq90")
    assert same.is_exact() and same == 0
    # a word printed without its function (ERRATA [E70]) is another symbol: nonzero
    other = formula_difference("2/3*(3*Dt_aDv_aDv)", "2*Dt_aDv_aDv_L", "E70")
    assert not other.contains(0)
    assert formula_difference("3/5", "3/5", "g") == 0
    assert not formula_difference("3/5", "6/5", "g").contains(0)


def test_long_trend_enclosure_contains_a_100_digit_rerun():
    """The trend / range statistics of a small long run, enclosed by the M^(block/10)
    walk, against the statistic recomputed here in mpmath at 100 digits step by step."""
    from mpvi_papers.mutze._mutze_quantum import certified_long_trend
    p = {"n": 12, "dx": "1", "hbar": "1", "mass": "1",
         "barrier": {"center": "6", "halfwidth": "1", "height": "0.12"}}
    sc = {"name": "gauss", "kind": "gauss", "x0": "4", "sigma": "2", "k0": "1/2"}
    steps, block = 200, 20
    with arb_precision(70):
        norm_trend, energy_trend = certified_long_trend(p, sc, "2/5", steps, block)
    with mpmath.workdps(100):
        n, tau = 12, mpmath.mpf(2) / 5
        xs = [mpmath.mpf(j) for j in range(1, n + 1)]
        diag = [1 + (mpmath.mpf(12) / 100 if abs(x - 6) <= 1 else 0) for x in xs]

        def H(u):
            return [diag[i] * u[i] - (u[i - 1] if i else 0) / 2 - (u[i + 1] if i < n - 1 else 0) / 2
                    for i in range(n)]
        env = [mpmath.exp(-(x - 4) ** 2 / 16) for x in xs]
        X = [[e * mpmath.cos(x / 2) for e, x in zip(env, xs)],
             [e * mpmath.sin(x / 2) for e, x in zip(env, xs)]]
        V = [H(X[1]), [-u for u in H(X[0])]]

        def observe(X):
            norm = mpmath.fsum(u * u for row in X for u in row)
            return norm, mpmath.fsum(a * b for row in X for a, b in zip(row, H(row))) / norm
        n0, e0 = observe(X)
        samples = []
        for k in range(1, steps + 1):
            acc = [[-u for u in H(H([a + tau * b for a, b in zip(ra, rv)]))]
                   for ra, rv in zip(X, V)]
            X, V = ([[a + 2 * tau * b + 2 * tau * tau * c for a, b, c in zip(ra, rv, rc)]
                     for ra, rv, rc in zip(X, V, acc)],
                    [[b + 2 * tau * c for b, c in zip(rv, rc)] for rv, rc in zip(V, acc)])
            if k % (block // 10) == 0:
                nm, en = observe(X)
                samples.append((nm / n0 - 1, en / e0 - 1))
        for col, ball in ((0, norm_trend), (1, energy_trend)):
            means = [mpmath.fsum(s[col] for s in samples[i:i + 10]) / 10
                     for i in range(0, len(samples), 10)]
            ts = [2 * tau * block * (k + 1) for k in range(len(means))]
            tm, ym = mpmath.fsum(ts) / len(ts), mpmath.fsum(means) / len(means)
            slope = (mpmath.fsum((t - tm) * (y - ym) for t, y in zip(ts, means))
                     / mpmath.fsum((t - tm) ** 2 for t in ts))
            col_values = [s[col] for s in samples]
            value = abs(slope * (ts[-1] - ts[0])) / (max(col_values) - min(col_values))
            assert ball.rad() < 1e-40
            assert _contains(ball, value, 90)


def test_monotone_phase_and_its_sign_against_the_scan():
    """The final phase error proven strictly decreasing in g on [0, 1]; a proven
    increase is refused: the committed scan (reproduction's own 64-digit runs) decreases."""
    import csv
    from pathlib import Path

    from mpvi_papers.mutze._mutze_oscillator import monotone_phase
    with arb_precision(90):
        osc = BallOscillator(PARAMS)
        assert monotone_phase(osc, 0, 1) == -1
    scan = Path(__file__).resolve().parents[1] / "figures/mutze/mutze_fig03_g_scan.csv"
    with open(scan, newline="") as fh:
        phases = [mpmath.mpf(r["final_phase_error_deg"]) for r in csv.DictReader(fh)]
    assert all(a > b for a, b in zip(phases, phases[1:]))
