"""mpvi_papers.mutze._mutze_series: Mutze's small step action principle (eq. 60) as power
series in tau.

* DIFF = LHS - RHS has no tau^0 and tau^1 term for general L, F and symbolic g;
* the harmonic oscillator (with and without damping) singles out g = 3/5;
* the chain rule of D_tau: the series agree exactly with sympy's integral of K over
  [0, 2 tau] for polynomial L, F (n = 1 and n = 2);
* an independent quadrature check at 64 digits approaches the series' tau^2, tau^3
  coefficients;
* the parsers of the FORM output and of the grad-notation transliteration, and the word-
  by-word agreement with the printed Appendix and eqs. (69), (70).
"""
from fractions import Fraction

import pytest
import sympy as sp

from mpvi import MPContext
from mpvi.compiled.codegen import compile_exprs

from mpvi_papers.mutze import _mutze_printed as printed
from mpvi_papers.mutze import _mutze_series as ser
from mpvi_papers.mutze._mutze_series import Word
from mpvi_papers.mutze.mutze_theorem60 import (
    chain_rule_check,
    nonlinear_1d,
    nonlinear_2d,
    oscillator,
    oscillator_claims,
)

# ----- the theorem -----------------------------------------------------------------------

def test_diff_has_no_tau0_tau1_terms_for_general_L_F_and_any_g():
    D = ser.diff(3)
    assert D.words(0) == {} and D.words(1) == {}
    assert D.coefficient(0) == 0 and D.coefficient(1) == 0
    c2 = D.words(2)
    assert len(c2) == 31 and any(c.has(ser.G) for c in c2.values())
    assert D.term_count(2) == 36                      # the printed DIFF has 36 terms
    # the g-dependence of DIFF enters only through the x-shift a tau^2 g: -dG/dx at tau^2
    assert sp.expand(sp.diff(D.coefficient(2), ser.G)
                     - ser.A * (ser.one_d_symbol("L", 1, 1, 1) + ser.V * ser.one_d_symbol("L", 0, 2, 1)
                                + ser.A * ser.one_d_symbol("L", 0, 1, 2)
                                - ser.one_d_symbol("L", 0, 2, 0) - ser.one_d_symbol("F", 0, 1, 0))) == 0


def test_lhs_starts_with_minus_G():
    """eq. (71): D_tau S = -G(t, x, v, a) + O(tau)."""
    G0 = {w: -c for w, c in ser.guiding_force_words().items()}
    assert ser.lhs(0).words(0) == {w: sp.Integer(c.numerator) / c.denominator for w, c in G0.items()}


def test_oscillator_singles_out_three_fifths():
    out = oscillator_claims(4)
    for label in ("F=0", "F=-bv"):
        assert out[f"oscillator {label} g"] == [sp.Rational(3, 5)]
        assert out[f"oscillator {label} DIFF at g=3/5 through tau^4"] == 0
    assert out["oscillator n=2 g"] == [sp.Rational(3, 5)]
    g = ser.G
    K11, K12, K22 = sp.symbols("K11 K12 K22")
    a1, a2, e1, e2 = sp.symbols("a1 a2 e1 e2")
    exact = (g - sp.Rational(3, 5)) * ser.TAU ** 2 * (K11 * a1 * e1 + K12 * (a1 * e2 + a2 * e1) + K22 * a2 * e2)
    assert sp.expand(out["oscillator n=2 DIFF exact"] - exact) == 0


def test_T_minus_V_remaining_terms():
    rem = ser.restrict_T_minus_V(ser.diff(2).words(2))
    expected = ser.nabla_words(ser.parse_nabla("1/10 v.dx^2 e.dx L - 1/10 a.dv^3 e.dv L "
                                               "+ 3/5 a.dx e.dx L - g a.dx e.dx L"))
    assert rem == expected


# ----- chain rule: exact comparison with sympy integrals -------------------------------

def test_series_equal_exact_integral_for_polynomial_L_F():
    res = chain_rule_check(4)
    assert set(res) == {f"n={n} {o}" for n in (1, 2) for o in ("S", "LHS", "RHS")}
    for key, val in res.items():
        assert val == 0, key


def test_chain_rule_is_needed():
    """Without the chain rule (the derivative symbols not depending on v) the exact check
    would fail: S's tau^2 term 2 tau^2 (L_t + v L_x + a L_v) gives e.grad_v -> L_x +
    v L_xv + ... and the v L_xv part comes from the base point only."""
    S = ser.action(2)
    grad = ser._grad_v({(w, 0, 2, 0): Fraction(c.p, c.q) for w, c in S.words(2).items()})
    words = {w for (w, _, _, _) in grad}
    assert Word("L", xv=1, ve=1) in words and Word("L", xe=1) in words


def test_one_d_projection_agrees_with_directional_derivatives():
    t, xs, vs, L, F = nonlinear_1d()
    words = ser.diff(3).words(3)
    a, e = [sp.Rational(6, 5)], [sp.Integer(1)]
    nd = ser.evaluate_words(words, L, F, t, xs, vs, a, e)
    sub = {t: ser.T, xs[0]: ser.X, vs[0]: ser.V}
    od = ser.to_concrete(ser.one_d(words), L.xreplace(sub), F[0].xreplace(sub))
    od = od.xreplace({ser.T: t, ser.X: xs[0], ser.V: vs[0], ser.A: a[0]})
    assert sp.simplify(sp.expand(nd - od)) == 0


# ----- independent numeric check -----------------------------------------------------------

def test_gauss_legendre_rule():
    ctx = MPContext(64)
    nodes, weights = ser.gauss_legendre_rule(ctx, 6)
    assert abs(ctx.fsum(weights) - 1) < 10 * ctx.eps
    for deg in range(12):                       # exact through degree 2k - 1 = 11
        q = ctx.fsum(w * z ** deg for z, w in zip(nodes, weights))
        assert abs(q - ctx.num(1) / (deg + 1)) < 100 * ctx.eps
    q = ctx.fsum(w * z ** 12 for z, w in zip(nodes, weights))
    assert abs(q - ctx.num(1) / 13) > 1e-12
    with pytest.raises(ValueError, match="positive integer"):
        ser.gauss_legendre_rule(ctx, 0)


@pytest.mark.parametrize("make, point", [
    (nonlinear_1d, dict(t="3/10", x=["1/2"], v=["-7/10"], a=["6/5"], e=["1"])),
    (nonlinear_2d, dict(t="3/10", x=["1/2", "-1/3"], v=["-7/10", "2/5"], a=["6/5", "-1/2"],
                        e=["1", "-3/4"])),
])
def test_quadrature_check_approaches_series_coefficients(make, point):
    """DIFF (quadrature at 64 digits, no series) at tau = 2^-6, 2^-7: DIFF/tau^2 is near the
    series' c2 and (DIFF/tau^2 - c2)/tau - c3 halves with tau (it is c4 tau + ...)."""
    ctx = MPContext(64)
    t, xs, vs, L, F = make()
    check = ser.DirectCheck(ctx, L, F, t, xs, vs, nodes=24)
    D = ser.diff(3)
    g = "1/2"
    a = [sp.Rational(s) for s in point["a"]]
    e = [sp.Rational(s) for s in point["e"]]
    cs = [ser.evaluate_words(D.words(j), L, F, t, xs, vs, a, e).subs(ser.G, sp.Rational(g))
          for j in (2, 3)]
    f = compile_exprs([t, xs, vs], cs, ctx)
    c2, c3 = f(ctx.num(point["t"]), [ctx.num(s) for s in point["x"]],
               [ctx.num(s) for s in point["v"]])
    errs = []
    for k in (6, 7):
        tau = ctx.num(1) / 2 ** k
        _, _, d = check.diff(point["t"], point["x"], point["v"], point["a"], point["e"], tau, g)
        assert abs(d / tau ** 2 - c2) < abs(c3) * tau * 2 + tau
        errs.append(abs((d / tau ** 2 - c2) / tau - c3))
    assert 1.6 < errs[0] / errs[1] < 2.4


def test_quadrature_check_oscillator_exact_at_three_fifths():
    ctx = MPContext(64)
    t, xs, vs, L, F = oscillator(sp.Rational(3, 2), sp.Rational(5, 2), sp.Rational(-1, 5))
    check = ser.DirectCheck(ctx, L, F, t, xs, vs, nodes=8)
    tau = ctx.num(1) / 16
    _, _, d = check.diff("0", ["1/2"], ["-7/10"], ["6/5"], ["1"], tau, "3/5")
    assert abs(d) < ctx.eps * 100
    _, _, d = check.diff("0", ["1/2"], ["-7/10"], ["6/5"], ["1"], tau, "0")
    exact = (ctx.num(0) - ctx.num(3) / 5) * ctx.num(5) / 2 * ctx.num(6) / 5 * tau ** 2
    assert abs(d - exact) < ctx.eps * 100


# ----- parsers and the printed Appendix ------------------------------------------------------

def test_form_parser_terms_and_one_d():
    w = ser.parse_form_terms("- 9/5*Dt*Dt*aDv*eDv*L + 1/5*Dt*eDv*aF + aDx*eF*g - 2*\n eDx*L")
    assert w == {Word("L", nt=2, va=1, ve=1): sp.Rational(-9, 5),
                 Word("aF", nt=1, ve=1): sp.Rational(1, 5),
                 Word("eF", xa=1): ser.G, Word("L", xe=1): -2}
    one = ser.one_d(w)
    s = ser.one_d_symbol
    assert sp.expand(one - (-sp.Rational(9, 5) * ser.A * s("L", 2, 0, 2)
                            + sp.Rational(1, 5) * ser.A * s("F", 1, 0, 1)
                            + ser.G * ser.A * s("F", 0, 1, 0) - 2 * s("L", 0, 1, 0))) == 0
    assert str(s("F", 1, 0, 2)) == "F_tvv" and str(s("L", 0, 1, 1)) == "L_xv"
    assert Word("L", nt=1, xv=1, va=1, ve=1).form() == "Dt*vDx*aDv*eDv*L"


@pytest.mark.parametrize("text, match", [
    ("eDv*vDx*L", "normal order"),
    ("Dt*eDa*aF", "unknown operator"),
    ("Dt*vDx", "must end with"),
])
def test_form_word_errors(text, match):
    with pytest.raises(ValueError, match=match):
        ser.form_word(text)


def test_parse_form_groups():
    out = ser.parse_form("+ eF - Dt*eDv*L + tau * ( Dt*eF ) + tau^3 * ( 2/3*\n aF )")
    assert out == {0: {Word("eF"): 1, Word("L", nt=1, ve=1): -1},
                   1: {Word("eF", nt=1): 1}, 3: {Word("aF"): sp.Rational(2, 3)}}


def test_nabla_parser():
    terms = ser.parse_nabla("F - dt dv L - 2 v.dx a.dv dv L + dx a.dv L + 3 dt a.dv^2 ?", "1/2")
    assert [t.coefficient for t in terms] == [sp.Rational(1, 2), -sp.Rational(1, 2), -1,
                                              sp.Rational(1, 2), sp.Rational(3, 2)]
    assert terms[2].word == Word("L", xv=1, va=1, ve=1)
    assert terms[3].word == Word("L", xe=1, va=1)
    assert terms[4].garbled and not terms[0].garbled
    with pytest.raises(ValueError, match="no function"):
        ser.parse_nabla("dt dv")
    with pytest.raises(ValueError, match="unknown factor"):
        ser.parse_nabla("dt q.dx L")


def test_printed_form_output_matches_the_series_word_by_word():
    assert printed.form_repairs_used("DIFF") == ["eDv**L"]
    for name, ex in (("S", ser.action(5)), ("LHS", ser.lhs(2)), ("DIFF", ser.diff(2))):
        form = ser.parse_form(printed.form_expression(name))
        for k in range(ex.order + 1):
            rows = ser.compare_words(ex.words(k), form.get(k, {}))
            assert all(r[3] == "match" for r in rows), (name, k, [r for r in rows if r[3] != "match"])


def test_hand_conversions_69_70_match_except_the_missing_L():
    for entries, ex in ((printed.EQ69, ser.action(4)), (printed.EQ70, ser.lhs(1))):
        by_k = {}
        for _, k, factor, text in entries:
            by_k.setdefault(k, []).extend(ser.parse_nabla(text, factor))
        for k, terms in by_k.items():
            rows = ser.compare_words(ex.words(k), ser.nabla_words(terms))
            assert all(r[3] == "match" for r in rows), (k, rows)
    garbled = [t for _, k, f, text in printed.EQ69 for t in ser.parse_nabla(text, f) if t.garbled]
    assert [t.word.form() for t in garbled] == ["Dt*aDv*aDv*L"]


def test_order_errors():
    with pytest.raises(ValueError, match="order must be"):
        ser.action(0)
    with pytest.raises(ValueError, match="not known"):
        ser.diff(2).words(3)
