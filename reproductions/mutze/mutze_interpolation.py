"""mutze Sec. 2 and footnote 3: the C-infinity partition-of-unity interpolation and the
parameter p* that minimises the L2 norm of r''.

The smooth step r(x) = rho(x, p) = 1 / (1 + exp((1/x + 1/(x - 1)) p)) on ]0, 1[ (0 left,
1 right) and the interpolant f = sum_i w_i f_i of mutze Sec. 2 are
:mod:`mpvi_papers.mutze._mutze_interpolation`.  This script checks the claims of the section:

* footnote 3, "the L2-norm of the second derivative of r is minimal for p = 0.810747...":
  J(p) = int_0^1 r''(x)^2 dx on a grid of p (main table), p* from J'(p) = 0
  (differentiated under the integral sign, mpmath ``quad``, secant ``findroot``) in the
  run's context and at 80 and 100 digits with the tanh-sinh and the Gauss-Legendre rule
  (table ``pstar``); their largest difference is the error estimate.  J' changes sign
  once on the grid and J''(p*) > 0 (a single minimum);
* r is C-infinity: r^(k)(x) and r^(k)(1 - x), k = 1..8, at x = 10^-1 .. 10^-6 tend to 0
  (table ``rderiv``, Taylor arithmetic, exact up to rounding; they first grow, the peak
  of r^(8) is near x = 0.05, then fall like exp(-p/x)); the column
  ``symmetry_defect_relative`` checks r^(k)(1 - x) = (-1)^(k+1) r^(k)(x) and is the
  rounding of 1 - x amplified by ~p/x^2 (1e-52 at x = 1e-6);
* f(x_i) = y_i, only two weights w_i are nonzero at any x and they sum to 1 (sample data,
  seeded random scalar data, random data in R^3);
* f is C-infinity at the knots: |f^(k)(x_i + d) - f^(k)(x_i - d)| -> 0 for k = 0..6 as
  d -> 0, and mpmath's one-sided differences at the knots agree; a natural cubic spline
  through the same data (written here, no scipy) keeps a third-derivative jump (table
  ``knots``);
* the interpolant and the spline on a fine grid (table ``curve``).

Run: ``mpvi run mutze_interpolation`` or ``python reproductions/mutze/mutze_interpolation.py``.
"""
import math
import random
import time
from fractions import Fraction
from itertools import pairwise

import pandas as pd

from mpvi.numbers.context import MPContext
from mpvi.repro.declare import needs_mp, Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr

from mpvi_papers.mutze._mutze import PAPER
from mpvi_papers.mutze._mutze_interpolation import (  # noqa: I001
    P_OPT,
    SmoothInterpolant,
    optimal_p,
    second_derivative_norm_squared,
    smooth_step,
    smooth_step_derivatives,
)

PARAMS = {
    "p_grid": {"first": "1/5", "last": "3", "points": 57},
    "check_dps": [80, 100],
    "methods": ["tanh-sinh", "gauss-legendre"],
    "r_orders": 8,
    "r_exponents": [1, 2, 3, 4, 5, 6],
    "data_x": ["0", "0.5", "1.2", "1.8", "2.4", "2.9", "3.5", "4.4", "5.1", "6"],
    "data_y": ["0.2", "0.25", "0.2", "0.3", "0.3", "1.3", "2.4", "2.6", "2.5", "2.6"],
    "curve_points": 601,
    "knot_orders": 6,
    "delta_exponents": [1, 2, 4, 8, 16, 32],
    "random_points": 12,
    "seed": 2024,
}
FLOOR = -70
"""log10 floor of panel (c): smooth-interpolant jumps of order >= 3 are ~exp(-p h/delta)."""
QUICK = {"p_grid": {"first": "1/5", "last": "3", "points": 8}, "check_dps": [],
         "curve_points": 121, "r_exponents": [1, 3, 6]}


class NaturalCubicSpline:
    """The natural cubic spline (S'' = 0 at both ends) through (xs, ys), in ``ctx``: second
    derivatives M from the tridiagonal system, solved densely (m is small)."""

    def __init__(self, xs, ys, ctx):
        self.ctx, self.xs, self.ys = ctx, list(xs), list(ys)
        m = len(xs)
        h = [xs[i + 1] - xs[i] for i in range(m - 1)]
        a, b = ctx.zeros((m, m)), ctx.zeros(m)
        a[0, 0] = a[m - 1, m - 1] = ctx.one
        for i in range(1, m - 1):
            a[i, i - 1], a[i, i], a[i, i + 1] = h[i - 1] / 6, (h[i - 1] + h[i]) / 3, h[i] / 6
            b[i] = (ys[i + 1] - ys[i]) / h[i] - (ys[i] - ys[i - 1]) / h[i - 1]
        self.M = list(ctx.solve(a, b))

    def derivatives(self, x, n):
        """[S(x), S'(x), ..., S^(n)(x)] (S''' is constant on each interval, S'''' = 0); x
        in [x_j, x_(j+1)[ uses that interval's cubic, outside the end cubics."""
        xs, ys, M = self.xs, self.ys, self.M
        j = min(max(sum(1 for xi in xs if xi <= x) - 1, 0), len(xs) - 2)
        h = xs[j + 1] - xs[j]
        u, v = xs[j + 1] - x, x - xs[j]
        c0, c1 = ys[j] / h - M[j] * h / 6, ys[j + 1] / h - M[j + 1] * h / 6
        out = [M[j] * u ** 3 / (6 * h) + M[j + 1] * v ** 3 / (6 * h) + c0 * u + c1 * v,
               -M[j] * u ** 2 / (2 * h) + M[j + 1] * v ** 2 / (2 * h) - c0 + c1,
               M[j] * u / h + M[j + 1] * v / h,
               (M[j + 1] - M[j]) / h]
        out += [self.ctx.zero] * max(0, n - 3)
        return out[:n + 1]

    def __call__(self, x):
        return self.derivatives(x, 0)[0]


def random_data(seed, m, dim=None):
    """Seeded random rational data: strictly increasing xs, ys scalars (or vectors in R^dim)."""
    rng = random.Random(seed)
    xs, x = [], Fraction(rng.randint(-50, 50), 7)
    for _ in range(m):
        xs.append(x)
        x += Fraction(rng.randint(1, 100), 37)
    if dim is None:
        ys = [Fraction(rng.randint(-1000, 1000), 313) for _ in range(m)]
    else:
        ys = [[Fraction(rng.randint(-1000, 1000), 313) for _ in range(dim)] for _ in range(m)]
    return xs, ys


def p_star_study(run):
    """p* in the run's context (tanh-sinh), then with the other rule and at the check
    precisions; rows of table ``pstar`` and the largest difference to the run's value."""
    ctx, p = run.ctx, run.params
    variants = [(ctx.dps, m) for m in p["methods"]]
    variants += [(d, m) for d in p["check_dps"] for m in p["methods"] if d != ctx.dps]
    rows, results = [], {}

    def lifted(x, c):
        # a number of another context in the run's: through its decimal digits, as a
        # number of fewer digits may not enter a context of more (PrecisionError)
        return x if c is ctx else ctx.num(c.to_str(x))

    for dps, method in variants:
        c = ctx if dps == ctx.dps else MPContext(dps)
        t0 = time.perf_counter()
        ps = optimal_p(c, method)
        J = second_derivative_norm_squared(ps, c, method)
        results[(dps, method)] = (ps, J, c)
        run.progress(f"p* at {dps} digits, {method}: {c.to_str(ps, 20)} "
                     f"({time.perf_counter() - t0:.1f} s)")
        rows.append({"dps": dps, "method": method, "p_star": c.to_str(ps), "J_p_star": c.to_str(J),
                     "seconds": f"{time.perf_counter() - t0:.2f}"})
    ref, Jref, _ = results[(ctx.dps, p["methods"][0])]
    err = max(abs(lifted(ps, c) - ref) for (ps, _, c) in results.values())
    errJ = max(abs(lifted(J, c) - Jref) for (_, J, c) in results.values())
    for row, (ps, J, c) in zip(rows, results.values()):
        row["p_star_minus_run_value"] = numstr(ctx, lifted(ps, c) - ref)
    return ref, Jref, max(err, ctx.eps * ref), max(errJ, ctx.eps * Jref), rows, results


def compute(run):
    ctx, p = run.ctx, run.params
    values, extra = {}, {}

    # ---- footnote 3: p* --------------------------------------------------------------
    ps, Jps, err, errJ, prow, results = p_star_study(run)
    digits = int(-ctx.log10(err / ps))
    values["p_star"] = numstr(ctx, ps)
    values["p_star error estimate"] = ctx.to_str(err, 3)
    values["p_star agreeing digits"] = str(digits)
    values["J(p_star)"] = numstr(ctx, Jps)
    values["J(p_star) error estimate"] = ctx.to_str(errJ, 3)
    values["||r''||_2 at p_star"] = numstr(ctx, ctx.sqrt(Jps))
    values["p_star printed 6 digits rounded"] = ctx.to_str(ps, 6)
    values["P_OPT minus p_star"] = ctx.to_str(ctx.num(P_OPT) - ps, 3)
    top = max(results, key=lambda k: k[0])
    if top[0] > ctx.dps:
        values[f"p_star {top[0]} digits"] = MPContext(top[0]).to_str(results[top][0])
    d2 = ctx.diff(lambda q: second_derivative_norm_squared(q, ctx, derivative=True), ps)
    values["J''(p_star)"] = ctx.to_str(d2, 20)
    run.progress(f"J''(p*) = {ctx.to_str(d2, 10)}")

    g = p["p_grid"]
    first, last = ctx.num(Fraction(g["first"])), ctx.num(Fraction(g["last"]))
    grid = [first + (last - first) * k / (g["points"] - 1) for k in range(g["points"])]
    rows = []
    for q in grid:
        J = second_derivative_norm_squared(q, ctx)
        dJ = second_derivative_norm_squared(q, ctx, derivative=True)
        rows.append({"p": numstr(ctx, q), "J": numstr(ctx, J), "norm_r2": numstr(ctx, ctx.sqrt(J)),
                     "dJ_dp": numstr(ctx, dJ), "_dJ": dJ})
    signs = [r.pop("_dJ") > 0 for r in rows]
    changes = sum(1 for a, b in pairwise(signs) if a != b)
    values["J' sign changes on the p grid"] = str(changes)
    values["J' < 0 below p_star and > 0 above on the grid"] = str(
        all(s == (ctx.num(r["p"]) > ps) for s, r in zip(signs, rows)))
    run.progress(f"J on {len(grid)} values of p: J' changes sign {changes} time(s)")

    # ---- r is C-infinity: derivatives at the ends -------------------------------------
    K = p["r_orders"]
    rrows, maxima = [], {}
    for e in p["r_exponents"]:
        x = ctx.num(Fraction(1, 10 ** e))
        left = smooth_step_derivatives(x, K, None, ctx)
        right = smooth_step_derivatives(1 - x, K, None, ctx)
        for k in range(1, K + 1):
            sym = abs(right[k] - (-1) ** (k + 1) * left[k]) / abs(left[k])
            rrows.append({"x": f"1e-{e}", "k": k, "r_k_at_x": numstr(ctx, left[k]),
                          "r_k_at_1_minus_x": numstr(ctx, right[k]),
                          "symmetry_defect_relative": ctx.to_str(sym, 3)})
        maxima[e] = max(max(abs(left[k]), abs(right[k])) for k in range(1, K + 1))
        values[f"max |r^(k)| at 1e-{e} and 1-1e-{e}, k=1..{K}"] = ctx.to_str(maxima[e], 5)
    run.progress("r^(k) near 0 and 1: " + ", ".join(f"1e-{e}: {ctx.to_str(v, 3)}"
                                                    for e, v in maxima.items()))

    # ---- the interpolant: data, weights, residuals --------------------------------------
    xs = [ctx.num(s) for s in p["data_x"]]
    ys = [ctx.num(s) for s in p["data_y"]]
    f = SmoothInterpolant(xs, ys, ctx=ctx)
    spline = NaturalCubicSpline(xs, ys, ctx)
    rx, ry = random_data(p["seed"], p["random_points"])
    vx, vy = random_data(p["seed"] + 1, p["random_points"], dim=3)
    fr, fv = SmoothInterpolant(rx, ry, ctx=ctx), SmoothInterpolant(vx, vy, ctx=ctx)
    res = max([abs(f(x) - y) for x, y in zip(xs, ys)]
              + [abs(fr(x) - ctx.num(y)) for x, y in zip(rx, ry)]
              + [ctx.norm_inf(fv(x) - ctx.asarray(y)) for x, y in zip(vx, vy)])
    values["interpolation residual max |f(x_i) - y_i|"] = ctx.to_str(res, 5)
    # f at the knots through the paper's full sum as well (no exact-node shortcut)
    res_all = max([abs(f.evaluate_all_terms(x) - y) for x, y in zip(xs, ys)]
                  + [abs(fr.evaluate_all_terms(x) - ctx.num(y)) for x, y in zip(rx, ry)])
    values["interpolation residual of the full sum"] = ctx.to_str(res_all, 5)

    a, b = xs[0] - 1, xs[-1] + 1
    n = p["curve_points"]
    crow, nz, wsum, twoall = [], 0, ctx.zero, ctx.zero
    tests = [a + (b - a) * k / (n - 1) for k in range(n)] + xs
    for k, x in enumerate(tests):
        w = f.weights(x)
        count = sum(1 for wi in w if wi != 0)
        nz = max(nz, count)
        wsum = max(wsum, abs(ctx.fsum(w) - 1))
        fx = f(x)
        twoall = max(twoall, abs(fx - f.evaluate_all_terms(x)))
        if k < n:
            crow.append({"x": numstr(ctx, x), "f": numstr(ctx, fx), "spline": numstr(ctx, spline(x)),
                         "nonzero_weights": count})
    for i in range(len(rx)):                       # and on the random data, between knots
        for x in (ctx.num(rx[i]), ctx.num(rx[i]) + ctx.num(Fraction(1, 3)),):
            w = fr.weights(x)
            nz = max(nz, sum(1 for wi in w if wi != 0))
            wsum = max(wsum, abs(ctx.fsum(w) - 1))
            twoall = max(twoall, abs(fr(x) - fr.evaluate_all_terms(x)))
    values["max number of nonzero weights w_i"] = str(nz)
    values["max |sum_i w_i - 1|"] = ctx.to_str(wsum, 5)
    values["max |two-term f - full sum|"] = ctx.to_str(twoall, 5)
    run.progress(f"interpolant: residual {ctx.to_str(res, 3)}, <= {nz} nonzero weights, "
                 f"|sum w - 1| <= {ctx.to_str(wsum, 3)}")

    # cost: f against one local parabola (the paper: 'twice as expensive')
    sample = tests[:200]
    t0 = time.perf_counter()
    for x in sample:
        f(x)
    t_f = time.perf_counter() - t0
    t0 = time.perf_counter()
    for x in sample:
        f.local_polynomial(max(0, min(f.interval(x), len(xs) - 1)), x)
    t_q = time.perf_counter() - t0
    extra["cost f / one local parabola (wall time)"] = round(t_f / t_q, 2)

    # ---- smoothness at the knots: smooth interpolant vs natural cubic spline ------------
    KK = p["knot_orders"]
    krows = []
    exps = [e for e in p["delta_exponents"] if 2 * e <= ctx.dps]
    for name, fun in (("smooth", f.derivatives), ("spline", spline.derivatives)):
        for e in exps:
            d = ctx.num(Fraction(1, 10 ** e))
            jumps = [ctx.zero] * (KK + 1)
            for xi in xs[1:-1]:
                lo, hi = fun(xi - d, KK), fun(xi + d, KK)
                jumps = [max(j, abs(u - v)) for j, u, v in zip(jumps, hi, lo)]
            for k in range(KK + 1):
                krows.append({"function": name, "delta": f"1e-{e}", "k": k,
                              "max_jump": ctx.to_str(jumps[k], 10)})
    dmin = exps[-1]
    kdf = pd.DataFrame(krows)
    sel = kdf[(kdf.delta == f"1e-{dmin}")]
    sm = sel[sel.function == "smooth"]
    sp = sel[sel.function == "spline"]
    values[f"smooth max knot jump k<=4, delta=1e-{dmin}"] = max(
        sm[sm.k <= 4].max_jump, key=lambda s: ctx.num(s))
    values[f"smooth max knot jump k<={KK}, delta=1e-{dmin}"] = max(
        sm.max_jump, key=lambda s: ctx.num(s))
    values[f"spline max knot jump k=3, delta=1e-{dmin}"] = sp[sp.k == 3].max_jump.iloc[0]
    values[f"spline max knot jump k<=2, delta=1e-{dmin}"] = max(
        sp[sp.k <= 2].max_jump, key=lambda s: ctx.num(s))
    # mpmath's one-sided finite differences at the knots (independent of the Taylor code)
    worst = ctx.zero
    drows = []
    for i, xi in enumerate(xs[1:-1], start=2):
        exact = f.derivatives(xi, 4)
        for k in range(1, 5):
            right = ctx.diff(f, xi, k, direction=1)
            left = ctx.diff(f, xi, k, direction=-1)
            worst = max(worst, abs(right - left))
            drows.append({"knot": i, "k": k, "right": ctx.to_str(right, 20),
                          "left": ctx.to_str(left, 20), "f_i_k": ctx.to_str(exact[k], 20),
                          "right_minus_left": ctx.to_str(right - left, 3)})
    values["smooth max |right - left| one-sided derivatives at knots, k=1..4"] = ctx.to_str(worst, 3)
    run.progress(f"knots: smooth jumps -> 0, spline third-derivative jump "
                 f"{values[f'spline max knot jump k=3, delta=1e-{dmin}'][:12]}; one-sided "
                 f"derivative mismatch {ctx.to_str(worst, 3)}")

    data = pd.DataFrame({"x": [numstr(ctx, x) for x in xs], "y": [numstr(ctx, y) for y in ys],
                         "f_minus_y": [ctx.to_str(f(x) - y, 3) for x, y in zip(xs, ys)]})
    # the smooth step and its first two derivatives at p* (for the plot)
    steps = []
    for k in range(101):
        x = ctx.num(Fraction(k, 100))
        r = smooth_step_derivatives(x, 2, None, ctx)
        steps.append({"x": numstr(ctx, x), "r": numstr(ctx, smooth_step(x, None, ctx)),
                      "r1": numstr(ctx, r[1]), "r2": numstr(ctx, r[2])})
    extra["p_star variants"] = [f"{d} digits {m}" for d, m in results]
    tables = {"": pd.DataFrame(rows), "pstar": pd.DataFrame(prow), "rderiv": pd.DataFrame(rrows),
              "knots": kdf, "onesided": pd.DataFrame(drows), "curve": pd.DataFrame(crow),
              "data": data, "step": pd.DataFrame(steps)}
    return Output(tables=tables, values=values, extra=extra,
                  unchecked={"seconds": "a measured wall time",
                             "dps": "the digits of the row's own computation",
                             "p_star agreeing digits": "a count of digits, which grows with "
                                                       "the run's own"})


CERTIFIED_STATEMENT = (
    "p*: J'(p) = 2 int_0^1 r'' dr''/dp dx enclosed by Arb's rigorous quadrature "
    "(acb.integral on [1/200, 1/2], the integrand even about 1/2) plus an analytic bound "
    "of the tail (0, 1/200] (mpvi_papers.mutze._mutze_interpolation.enclose_J); J' is proven "
    "negative and positive at two rationals around the run's p*, so a zero of J' where J "
    "turns from decreasing to increasing (a local minimum) lies between: the enclosure.  "
    "That it is the global minimiser is not proven; the sign of J' is proven at every p of "
    "the grid (one change).  J and ||r''||_2 at p* are enclosed over the p* ball the same "
    "way.  r^(k) near the ends: arb_series Taylor arithmetic at the exact points.  The "
    "number of nonzero weights is exact: on ]x_j, x_j+1[ exactly w_j = 1 - r_j and w_j+1 "
    "= r_j are nonzero (r_i = 1 for i < j, 0 for i > j, r_j in ]0, 1[), at a knot or "
    "outside one; each test point is placed among the knots by exact rational comparison "
    "of the binary numbers the run used.  The residuals f(x_i) - y_i and sum_i w_i - 1 are "
    "exactly 0 for the exact interpolant: at a knot r_j is exactly 0 or 1 (rho's plateaus), "
    "so w_i(x_i) = 1 and every other weight 0, and the weights telescope, sum_i w_i = "
    "(1 - r_0) + sum (r_(i-1) - r_i) + r_(m-1) = 1 for every x; the enclosure is exactly 0, "
    "and a printed 0 is proven by it.")

def _test_points(ctx, p):
    """The points at which ``compute`` counts the nonzero weights, as exact rationals
    (the binary numbers of the run), with each set's knots: [(knots, points)]."""
    from mpvi.numbers.arbref import exact_rational
    xs = [ctx.num(s) for s in p["data_x"]]
    a, b = xs[0] - 1, xs[-1] + 1
    n = p["curve_points"]
    tests = [a + (b - a) * k / (n - 1) for k in range(n)] + xs
    rx, _ = random_data(p["seed"], p["random_points"])
    rxs = [ctx.num(x) for x in rx]
    rtests = [x for x0 in rxs for x in (x0, x0 + ctx.num(Fraction(1, 3)))]
    as_q = lambda vals: [exact_rational(v, "a test point") for v in vals]
    return [(as_q(xs), as_q(tests)), (as_q(rxs), as_q(rtests))]


def _nonzero_weights(knots, x):
    """The number of nonzero w_i(x) (exact; the statement's lemma)."""
    return 2 if knots[0] < x < knots[-1] and x not in knots else 1


def certify(run, out):
    """The proven digits of p*, J(p*), ||r''||_2, the signs of J' on the grid, r^(k) near
    the ends and the number of nonzero weights (``mpvi run --certify``;
    :data:`CERTIFIED_STATEMENT`)."""
    from flint import arb

    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.certified import ball_max, rows_not_enclosed
    from mpvi.repro.digits import proven_digits
    from mpvi_papers.mutze._mutze_certify import exact
    from mpvi_papers.mutze._mutze_interpolation import (enclose_J, enclose_p_star,
                                                    smooth_step_ball_derivatives)
    ctx, p, v = run.ctx, run.params, out.values
    values, not_certified = {}, {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        run.progress("certify: p* (rigorous quadrature of J', sign change)")
        ps = enclose_p_star(v["p_star"], ctx.dps - 4)
        values["p_star"] = proven_digits(v["p_star"], ps)
        values["p_star printed 6 digits rounded"] = proven_digits(
            v["p_star printed 6 digits rounded"], ps)
        for key in v:
            if key.startswith("p_star ") and key.endswith(" digits") and key[7:-7].isdigit():
                values[key] = proven_digits(v[key], ps)
        J = enclose_J(ps)
        values["J(p_star)"] = proven_digits(v["J(p_star)"], J)
        values["||r''||_2 at p_star"] = proven_digits(v["||r''||_2 at p_star"], J.sqrt())
        run.progress("certify: the sign of J' on the p grid")
        g = p["p_grid"]
        first, last = Fraction(g["first"]), Fraction(g["last"])
        signs = []
        for k in range(g["points"]):
            d = enclose_J(exact(first + (last - first) * k / (g["points"] - 1)), True)
            if not (d > 0 or d < 0):
                signs = None
                break
            signs.append(d > 0)
        key = "J' sign changes on the p grid"
        if signs is None:
            not_certified[key] = "J' at a grid point is not proven nonzero"
        else:
            values[key] = proven_digits(v[key], arb(sum(a != b for a, b in zip(signs,
                                                                               signs[1:]))))
        K = p["r_orders"]
        for e in p["r_exponents"]:
            x = exact(Fraction(1, 10 ** e))
            left = smooth_step_ball_derivatives(x, K, exact(Fraction(P_OPT)))
            right = smooth_step_ball_derivatives(1 - x, K, exact(Fraction(P_OPT)))
            key = f"max |r^(k)| at 1e-{e} and 1-1e-{e}, k=1..{K}"
            found = proven_digits(v[key], ball_max(left + right))
            if found[0] > 0:
                values[key] = found
            else:
                not_certified[key] = (f"enclosed as {found[1]}, but its decimal exponent is "
                                      "beyond what proven_digits compares")
        count = max(_nonzero_weights(knots, x) for knots, pts in _test_points(ctx, p)
                    for x in pts)
        values["max number of nonzero weights w_i"] = proven_digits(
            v["max number of nonzero weights w_i"], arb(count))
        for key in ("interpolation residual max |f(x_i) - y_i|", "max |sum_i w_i - 1|",
                    "interpolation residual of the full sum"):
            values[key] = proven_digits(v[key], arb(0))      # exactly 0 (the statement)
            if values[key][0] == 0:                          # the run printed its round-off
                del values[key]
                not_certified[key] = ("exactly 0 for the exact interpolant (the statement), "
                                      "but the run printed its round-off, which no "
                                      "enclosure pins")
    for key in v:
        if key in values or key in not_certified:
            continue
        if "estimate" in key or "agreeing digits" in key:
            why = ("the run's own error estimate of p* (the spread of its quadratures), not "
                   "a quantity with an exact value; p* itself is enclosed")
        elif key == "P_OPT minus p_star" or key == "max |two-term f - full sum|":
            why = ("exactly 0 (the stored p* is the run's, the two-term sum is the full sum "
                   "where the other weights vanish): the run's value is 0 or its round-off, "
                   "which an enclosure of 0 proves no digit of")
        elif key.startswith("J' < 0"):
            why = "a yes/no; the signs of J' on the grid are proven (the sign-change count)"
        else:
            why = ("a supporting number of the run (J'' by numerical differentiation, knot "
                   "jumps at 1e-32, one-sided differences), not a printed value; not enclosed")
        not_certified[key] = why
    not_certified.update(rows_not_enclosed(out, (
        "a per-row number of the run's tables, not enclosed row by row (the "
        "published values are certified as values)")))
    return {"statement": CERTIFIED_STATEMENT, "columns": {}, "values": values,
            "not_certified": not_certified}


def _log10(text):
    """log10 of a nonnegative decimal string whose exponent may be far beyond the range
    of float and of Decimal's default context (-inf for 0)."""
    mantissa, _, exponent = text.strip().lower().partition("e")
    m = abs(float(mantissa))
    return math.log10(m) + int(exponent or 0) if m > 0 else -math.inf


def plot(out, params):
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    df = out.tables[""]
    ps = float(out.values["p_star"])
    ax = axes[0]
    ax.plot(df.p.astype(float), df.norm_r2.astype(float), "-", lw=1.6, label=r"$\|r''\|_2$")
    ax.plot([ps], [float(out.values["||r''||_2 at p_star"])], "o", color="C3",
            label=f"p* = {ps:.10f}")
    ax.axvline(ps, color="C3", lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.set_xlabel("p")
    ax.set_ylabel(r"$\|r''\|_{L^2[0,1]}$")
    ax.set_title("(a) footnote 3: norm of r'' against p", fontsize=10)
    ax.legend(fontsize=9)
    ax.grid(alpha=0.3)

    ax = axes[1]
    c, d = out.tables["curve"], out.tables["data"]
    ax.plot(c.x.astype(float), c.f.astype(float), "-", lw=1.6, label="smooth interpolant (Sec. 2)")
    ax.plot(c.x.astype(float), c.spline.astype(float), "--", lw=1.2, label="natural cubic spline")
    ax.plot(d.x.astype(float), d.y.astype(float), "ko", ms=4, label="data")
    ax.set_xlabel("x")
    ax.set_title(r"(b) $C^\infty$ interpolant and cubic spline", fontsize=10)
    # panels (b) and (c): the legend below the axes (inside, it covered the curves of (b)
    # and the jumps of the smooth interpolant in (c))
    ax.legend(fontsize=9, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.13),
              frameon=False)
    ax.grid(alpha=0.3)

    ax = axes[2]
    k = out.tables["knots"]
    deltas = sorted(set(k.delta), key=lambda s: float(s))
    ld = [_log10(x) for x in deltas]

    def log_jumps(fun, kk):
        s = k[(k.function == fun) & (k.k == kk)].set_index("delta").loc[deltas].max_jump
        return [max(_log10(v), FLOOR) for v in s]
    for kk in (0, 1, 2, 3, 4):
        ax.plot(ld, log_jumps("smooth", kk), "-o", ms=3, label=f"smooth, k = {kk}")
    for kk, ls in ((2, ":"), (3, "--")):
        ax.plot(ld, log_jumps("spline", kk), ls, color="k", marker="s", ms=3,
                label=f"spline, k = {kk}")
    ax.set_ylim(FLOOR - 3, 5)
    ax.set_xlabel(r"$\log_{10}\delta$")
    ax.set_ylabel(r"$\log_{10}\max_i|f^{(k)}(x_i+\delta)-f^{(k)}(x_i-\delta)|$")
    ax.set_title(f"(c) derivative jumps across the inner knots (clipped at 1e{FLOOR})",
                 fontsize=10)
    ax.legend(fontsize=8, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.13),
              frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="mutze_interpolation", paper=PAPER, item="Sec. 2, footnote 3",
    title="C-infinity partition-of-unity interpolation; p* = 0.810747... minimises ||r''||_2",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot,
    refuse=needs_mp("p* is computed with mpmath quadrature (quad, findroot) to 30+ digits"),
    certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
