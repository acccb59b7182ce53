"""Mutze's C-infinity interpolation by a partition of unity (mutze Sec. 2, "On the
ubiquity of smooth functions", and footnote 3).

The building block is the smooth step of mutze Sec. 2,

    rho(z, p) = 1 / (1 + exp((1/z + 1/(z - 1)) p)),        0 < z < 1,
    r(x)      = 0 for x <= 0,  rho(x, p) for 0 < x < 1,  1 for x >= 1,

strictly increasing from (0, 0) to (1, 1), with r(1 - x) = 1 - r(x), and C-infinity on
the real line for every p > 0: every derivative of r tends to 0 at x -> 0+ and x -> 1-
(like exp(-p/x) and exp(-p/(1 - x))).  :func:`smooth_step` is r, :func:`rho` is rho and
:func:`smooth_step_derivatives` gives r, r', ..., r^(n) at a point (Taylor arithmetic,
exact up to rounding).

:class:`SmoothInterpolant` is the interpolant of mutze Sec. 2 for points (x_i, y_i),
i = 1..m, x strictly increasing:

    f(x) = sum_i w_i(x) f_i(x),    w_i = r_(i-1) - r_i,    r_0 = 1,  r_m = 0,
    r_i(x) = r((x - x_i) / (x_(i+1) - x_i)),  i = 1..m-1,

f_1 the line through points 1, 2, f_i the parabola through i-1, i, i+1 and f_m the line
through m-1, m.  On [x_i, x_(i+1)] only w_i = 1 - r_i and w_(i+1) = r_i are nonzero, so
f = (1 - r_i) f_i + r_i f_(i+1) there (two terms, as the paper says); left of x_1 it is
the line f_1, right of x_m the line f_m.  The interval is found by bisection and only
those two terms are evaluated; :meth:`SmoothInterpolant.weights` and
:meth:`SmoothInterpolant.evaluate_all_terms` evaluate the paper's sum over all m terms
literally, for checks.

Footnote 3: the L2 norm of r'' over [0, 1] (r'' vanishes elsewhere) is minimal at
p* = 0.810747...  :func:`second_derivative_norm_squared` is J(p) = int_0^1 r''(x)^2 dx
and its p-derivative (differentiated under the integral sign), :func:`optimal_p` solves
J'(p) = 0 with mpmath quadrature in an mp context.  :data:`P_OPT` is p* to 90 digits (the
reproduction ``mutze_interpolation`` recomputes it at 64, 80 and 100 digits with two
quadrature rules; the tests recompute it at 50 and 70 digits); it is the default p of
:class:`SmoothInterpolant`.

Every function takes a number context ``ctx`` (default: mpvi's 64-digit ``mp``); the
float64 context ``fp`` works for everything except the quadratures of J (they need
mpmath's ``quad``).  Large exponents never overflow: exp is only taken of -|s|, so in
float64 the step underflows cleanly to exactly 0 or 1 near the ends of [0, 1].
"""
from __future__ import annotations

import bisect
from fractions import Fraction
from math import comb, factorial

import numpy as np

from mpvi.numbers.context import mp as _MP

P_OPT = ("0.81074692407519168513020808442785074019356606350723094579566704754707000364717429"
         "5416343513")
"""p* of mutze footnote 3 (minimiser of int_0^1 r''(x)^2 dx) to 90 significant digits,
computed by :func:`optimal_p` at 100 digits with the tanh-sinh and the Gauss-Legendre rule
(they agree to all 100 digits).  Stored rather than computed at construction time of an
interpolant: any p > 0 gives a C-infinity interpolant, so p only needs to be a fixed,
reproducible number; a stored constant makes :class:`SmoothInterpolant` cheap and
identical in every context.  In a context of more than 90 digits it is still a valid p
(then optimal to 90 digits only)."""

SPLIT = (Fraction(0), Fraction(1, 16), Fraction(1, 8), Fraction(1, 4), Fraction(1, 2))
"""Subintervals of [0, 1/2] for the quadratures of J (J is twice the integral over
[0, 1/2] by the symmetry r(1 - x) = 1 - r(x)); the integrand is flat near x = 0."""


def _ctx(ctx):
    return _MP if ctx is None else ctx


def _parameter(p, ctx):
    """p as a number of ``ctx`` (default :data:`P_OPT`), checked p > 0."""
    p = ctx.num(P_OPT if p is None else p)
    if not p > 0:
        raise ValueError(f"the parameter p of the smooth step must be > 0 (mutze Sec. 2: r is "
                         f"C-infinity for p > 0), got p = {ctx.to_str(p, 10)}")
    return p


def _exponent(z, p):
    """s = (1/z + 1/(z - 1)) p, written (2z - 1) p / (z (z - 1)) (exact 0 at z = 1/2)."""
    return (2 * z - 1) * p / (z * (z - 1))


def _logistic_pair(s, ctx):
    """(1 / (1 + e^s), 1 / (1 + e^-s)) = (rho, 1 - rho) without overflow: only e^(-|s|)
    is taken, which underflows to 0 for huge |s|."""
    e = ctx.exp(-abs(s))
    small = e / (1 + e)
    large = 1 / (1 + e)
    return (small, large) if s > 0 else (large, small)


def rho(z, p=None, ctx=None):
    """rho(z, p) = 1 / (1 + exp((1/z + 1/(z - 1)) p)) of mutze Sec. 2 for 0 < z < 1
    (``p`` defaults to :data:`P_OPT`; numbers are converted by ``ctx``)."""
    ctx = _ctx(ctx)
    z, p = ctx.num(z), _parameter(p, ctx)
    if not 0 < z < 1:
        raise ValueError(f"rho(z, p) is defined for 0 < z < 1 (mutze Sec. 2), got z = "
                         f"{ctx.to_str(z, 10)}; use smooth_step for all real x")
    return _logistic_pair(_exponent(z, p), ctx)[0]


def smooth_step_pair(x, p=None, ctx=None):
    """(r(x), 1 - r(x)), both to full relative accuracy (mutze Sec. 2)."""
    ctx = _ctx(ctx)
    x, p = ctx.num(x), _parameter(p, ctx)
    if x <= 0:
        return ctx.zero, ctx.one
    if x >= 1:
        return ctx.one, ctx.zero
    return _logistic_pair(_exponent(x, p), ctx)


def smooth_step(x, p=None, ctx=None):
    """r(x) of mutze Sec. 2: 0 for x <= 0, rho(x, p) for 0 < x < 1, 1 for x >= 1."""
    return smooth_step_pair(x, p, ctx)[0]


def _exp_series(g, ctx):
    """Taylor coefficients of exp(g(e)) for a series g with g[0] = 0."""
    h = [ctx.one]
    for k in range(1, len(g)):
        h.append(ctx.fsum(j * g[j] * h[k - j] for j in range(1, k + 1)) / k)
    return h


def smooth_step_derivatives(x, n, p=None, ctx=None):
    """[r(x), r'(x), ..., r^(n)(x)] (mutze Sec. 2) by truncated Taylor arithmetic.

    With a(x + e) = sum_k (-1)^k (x^-(k+1) + (x - 1)^-(k+1)) e^k and s = p a, the series
    G = e^(-|s(x)|) exp(-sign(s(x)) (s(x + e) - s(x))) and Q = G / (1 + G) give
    r(x + e) = Q (s(x) > 0) or 1 - Q (s(x) <= 0); r^(k)(x) = k! [e^k] r(x + e).  Only
    e^(-|s|) is formed, so nothing overflows; all derivatives are exactly 0 outside
    ]0, 1[ (r is constant there), which is the value of their limits at 0 and 1."""
    ctx = _ctx(ctx)
    x, p = ctx.num(x), _parameter(p, ctx)
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"the derivative order n must be an integer >= 0, got {n!r}")
    if x <= 0 or x >= 1:
        return [ctx.zero if x <= 0 else ctx.one] + [ctx.zero] * n
    s0 = _exponent(x, p)
    sign = 1 if s0 > 0 else -1
    scale = ctx.exp(-abs(s0))
    if scale == 0:                       # float64 underflow: r is 0 or 1 to the last bit
        q = [ctx.zero] * (n + 1)
    else:
        xm = x - 1
        s = [p * (-1) ** k * (1 / x ** (k + 1) + 1 / xm ** (k + 1)) for k in range(n + 1)]
        h = _exp_series([ctx.zero] + [-sign * s[k] for k in range(1, n + 1)], ctx)
        g = [scale * hk for hk in h]
        d0 = 1 + g[0]
        q = []
        for k in range(n + 1):
            q.append((g[k] - ctx.fsum(g[j] * q[k - j] for j in range(1, k + 1))) / d0)
    if sign > 0:
        coeffs = q
    else:
        coeffs = [1 / (1 + scale)] + [-c for c in q[1:]]
    return [factorial(k) * c for k, c in enumerate(coeffs)]


# --------------------------------------------------------------------- the interpolant
class SmoothInterpolant:
    """The C-infinity interpolant f of mutze Sec. 2 through (x_i, y_i), i = 1..m.

    ``xs``: m >= 2 strictly increasing abscissae; ``ys``: m values, each a scalar or a
    vector of R^n (an (m, n) array-like), the same n for all: f maps R to R^n
    componentwise.  That is how "it is straightforward to extend the method from R to
    R^n" is read here (vector-valued data); interpolation of scattered data over x in R^n
    is not provided.  ``p`` (> 0, default :data:`P_OPT`) is the parameter of the smooth
    step; numbers are converted by ``ctx`` (default mpvi's 64-digit ``mp``; ``fp`` works).

    ``f(x)`` (:meth:`__call__`) locates x by bisection and evaluates only the two
    contributing terms; nothing is precomputed (the paper: "unlike splines, it requires no
    initializing run").  Each local polynomial f_i is written in Newton form from its own
    node x_i, so f(x_i) = y_i holds exactly.  :meth:`derivatives` gives f, f', ..., f^(n)
    (Leibniz rule with :func:`smooth_step_derivatives`), :meth:`weights` the m weights
    w_i(x) of the paper and :meth:`evaluate_all_terms` the paper's full sum.
    """

    def __init__(self, xs, ys, p=None, ctx=None):
        ctx = _ctx(ctx)
        self.ctx = ctx
        if np.ndim(xs) != 1:
            raise ValueError(f"xs must be a one-dimensional sequence of abscissae, got an "
                             f"array of shape {np.shape(xs)}")
        self.xs = [ctx.num(x) for x in xs]
        self.m = len(self.xs)
        if self.m < 2:
            raise ValueError(f"interpolation needs at least 2 points (mutze Sec. 2: f_1 is the "
                             f"line through points 1 and 2), got {self.m}")
        ys = ctx.asarray(ys)
        if ys.ndim not in (1, 2) or ys.shape[0] != self.m:
            raise ValueError(f"ys must hold one value (scalar or vector) per abscissa: "
                             f"{self.m} abscissae but ys has shape {ys.shape}")
        self.ys = ys
        for i in range(self.m - 1):
            if not self.xs[i + 1] > self.xs[i]:
                raise ValueError(f"the abscissae must be strictly increasing (mutze Sec. 2): "
                                 f"x[{i}] = {ctx.to_str(self.xs[i], 10)} >= x[{i + 1}] = "
                                 f"{ctx.to_str(self.xs[i + 1], 10)}")
        self.p = _parameter(p, ctx)

    def __len__(self):
        return self.m

    @property
    def dim(self):
        """n for values in R^n, None for scalar values."""
        return None if self.ys.ndim == 1 else self.ys.shape[1]

    def interval(self, x):
        """j with x_j <= x < x_(j+1) (0-based, by bisection); -1 left of x_1 (0-based
        x[0]) and m - 1 at or right of the last abscissa."""
        return bisect.bisect_right(self.xs, self.ctx.num(x)) - 1

    def _nodes(self, i):
        """Nodes of the local polynomial f_i (0-based i), its own node first."""
        m = self.m
        if i == 0:
            return (0, 1)
        if i == m - 1:
            return (m - 1, m - 2)
        return (i, i - 1, i + 1)

    def local_polynomial(self, i, x, derivative=0):
        """f_i^(derivative)(x) for the 0-based index i: the line through points 0, 1
        (i = 0), the parabola through i-1, i, i+1, the line through m-2, m-1 (i = m-1);
        Newton form from x_i, so f_i(x_i) = y_i exactly."""
        nodes = self._nodes(i)
        x = self.ctx.num(x)
        xa, xb = self.xs[nodes[0]], self.xs[nodes[1]]
        ya, yb = self.ys[nodes[0]], self.ys[nodes[1]]
        d1 = (yb - ya) / (xb - xa)
        if len(nodes) == 3:
            xc, yc = self.xs[nodes[2]], self.ys[nodes[2]]
            d2 = ((yc - yb) / (xc - xb) - d1) / (xc - xa)
        else:
            d2 = d1 * 0
        if derivative == 0:
            return ya + (x - xa) * (d1 + d2 * (x - xb))
        if derivative == 1:
            return d1 + d2 * (2 * x - xa - xb)
        if derivative == 2:
            return 2 * d2
        return d1 * 0

    def __call__(self, x):
        """f(x): (1 - r_j) f_j + r_j f_(j+1) on [x_j, x_(j+1)], the end lines outside."""
        x = self.ctx.num(x)
        j = self.interval(x)
        if j < 0:
            return self.local_polynomial(0, x)
        if j >= self.m - 1:
            return self.local_polynomial(self.m - 1, x)
        t = (x - self.xs[j]) / (self.xs[j + 1] - self.xs[j])
        r, one_minus_r = smooth_step_pair(t, self.p, self.ctx)
        if r == 0:
            return self.local_polynomial(j, x)
        return one_minus_r * self.local_polynomial(j, x) + r * self.local_polynomial(j + 1, x)

    def derivatives(self, x, n):
        """[f(x), f'(x), ..., f^(n)(x)]: on [x_j, x_(j+1)], f = f_j + r_j (f_(j+1) - f_j)
        and f^(k) = f_j^(k) + sum_l C(k, l) r^(l)(t) / h^l (f_(j+1) - f_j)^(k-l)."""
        x = self.ctx.num(x)
        j = self.interval(x)
        out = [self(x)]
        if j < 0 or j >= self.m - 1:
            i = 0 if j < 0 else self.m - 1
            return out + [self.local_polynomial(i, x, k) for k in range(1, n + 1)]
        h = self.xs[j + 1] - self.xs[j]
        r = smooth_step_derivatives((x - self.xs[j]) / h, n, self.p, self.ctx)
        diff = [self.local_polynomial(j + 1, x, k) - self.local_polynomial(j, x, k)
                for k in range(n + 1)]
        for k in range(1, n + 1):
            total = self.local_polynomial(j, x, k)
            for l in range(k + 1):
                total = total + comb(k, l) * (r[l] / h ** l) * diff[k - l]
            out.append(total)
        return out

    def weights(self, x):
        """The m weights w_i(x) = r_(i-1)(x) - r_i(x) of mutze Sec. 2, all of them
        (r_0 = 1, r_m = 0): the paper's definition, for checks."""
        x = self.ctx.num(x)
        r = [self.ctx.one]
        r += [smooth_step((x - self.xs[i]) / (self.xs[i + 1] - self.xs[i]), self.p, self.ctx)
              for i in range(self.m - 1)]
        r.append(self.ctx.zero)
        return [r[i] - r[i + 1] for i in range(self.m)]

    def evaluate_all_terms(self, x):
        """f(x) = sum_(i=1..m) w_i(x) f_i(x) summed over all m terms, as the paper writes
        it (for checks of :meth:`__call__`)."""
        x = self.ctx.num(x)
        w = self.weights(x)
        total = w[0] * self.local_polynomial(0, x)
        for i in range(1, self.m):
            total = total + w[i] * self.local_polynomial(i, x)
        return total


# ------------------------------------------------------------------- footnote 3: p*
def second_derivative_terms(x, p, ctx=None):
    """(r''(x), d r''(x) / dp) for 0 < x < 1 (0, 0 outside), from r = 1 / (1 + e^s),
    s = p a(x), a = 1/x + 1/(x - 1):  with u = r (1 - r), v = 1 - 2 r, A = a', B = a'',

        r''       = u (v p^2 A^2 - p B),
        dr''/dp   = -v u a (v p^2 A^2 - p B) + u (2 u a p^2 A^2 + 2 v p A^2 - B)

    (dr/dp = -u a, du/dp = -v u a, dv/dp = 2 u a)."""
    ctx = _ctx(ctx)
    x, p = ctx.num(x), ctx.num(p)
    if x <= 0 or x >= 1:
        return ctx.zero, ctx.zero
    xm = x - 1
    a = (2 * x - 1) / (x * xm)
    A = -1 / x ** 2 - 1 / xm ** 2
    B = 2 / x ** 3 + 2 / xm ** 3
    r, rc = _logistic_pair(p * a, ctx)
    u, v = r * rc, rc - r
    core = v * p * p * A * A - p * B
    r2 = u * core
    dr2 = -v * u * a * core + u * (2 * u * a * p * p * A * A + 2 * v * p * A * A - B)
    return r2, dr2


def _need_quad(ctx):
    if not ctx.is_mp:
        raise TypeError(f"the quadratures of mutze footnote 3 need mpmath's quad: use an mp "
                        f"context, not {ctx.name}")


def second_derivative_norm_squared(p, ctx=None, method="tanh-sinh", derivative=False):
    """J(p) = int_0^1 r''(x)^2 dx (mutze footnote 3: ||r''||_2^2), or with
    ``derivative=True`` J'(p) = 2 int_0^1 r'' dr''/dp dx, computed as 2 (resp. 4) times
    the integral over [0, 1/2] (r''(1 - x) = -r''(x)), split at :data:`SPLIT`, with
    mpmath's ``quad`` (``method`` 'tanh-sinh' or 'gauss-legendre') at the context's
    precision.  mp contexts only."""
    ctx = _ctx(ctx)
    _need_quad(ctx)
    p = _parameter(p, ctx)
    points = [ctx.num(s) for s in SPLIT]
    if derivative:
        def integrand(x):
            r2, dr2 = second_derivative_terms(x, p, ctx)
            return r2 * dr2
        return 4 * ctx.quad(integrand, points, method=method)
    return 2 * ctx.quad(lambda x: second_derivative_terms(x, p, ctx)[0] ** 2, points,
                        method=method)


def optimal_p(ctx=None, method="tanh-sinh", start=("4/5", "41/50")):
    """p* of mutze footnote 3: the root of J'(p) = 0 (:func:`second_derivative_norm_squared`
    with ``derivative=True``) by mpmath's secant ``findroot`` from ``start``, to the
    context's precision.  mp contexts only; see :data:`P_OPT` for the value."""
    ctx = _ctx(ctx)
    _need_quad(ctx)
    x0 = tuple(ctx.num(Fraction(s)) for s in start)
    p = ctx.findroot(lambda q: second_derivative_norm_squared(q, ctx, method, derivative=True), x0)
    if not p > 0:
        raise ArithmeticError(f"findroot left p > 0 (p = {ctx.to_str(p, 10)}); try other "
                              f"starting values than {start}")
    return p


# ----- certified (mpvi run --certify) ------------------------------------------------------

def _ball_integrand(z, P, square):
    """r''(z)^2 (``square``) or 2 r''(z) dr''/dp (z) at p = ``P`` on complex balls, with
    r = R(u), R(u) = 1/(1 + e^u), u = p phi, phi = 1/z + 1/(z - 1): R' = -s(1 - s),
    R'' = s(1 - s)(1 - 2s), R''' = -s(1 - s)(1 - 6s + 6s^2) (s = R(u)), so
    r'' = R'' p^2 phi'^2 + R' p phi'' and d/dp r'' = R''' phi p^2 phi'^2 + 2 R'' p phi'^2
    + R'' p phi phi'' + R' phi''."""
    zm = z - 1
    phi = 1 / z + 1 / zm
    d1 = -1 / (z * z) - 1 / (zm * zm)
    d2 = 2 / (z * z * z) + 2 / (zm * zm * zm)
    s = 1 / (1 + (P * phi).exp())
    q = s * (1 - s)
    R1, R2 = -q, q * (1 - 2 * s)
    r2 = R2 * P * P * d1 * d1 + R1 * P * d2
    if square:
        return r2 * r2
    R3 = -q * (1 - 6 * s + 6 * s * s)
    return 2 * r2 * (R3 * phi * P * P * d1 * d1 + 2 * R2 * P * d1 * d1 + R2 * P * phi * d2
                     + R1 * d2)


TAIL = Fraction(1, 200)
"""The integrals of :func:`enclose_J` are taken by acb.integral on [TAIL, 1/2]; (0, TAIL]
is bounded analytically."""


def enclose_J(P, derivative=False):
    """An enclosure of J(p) = int_0^1 r''^2 dx or (``derivative``) J'(p) = 2 int_0^1 r''
    dr''/dp dx for p in the arb ball ``P`` (0 < p, p < 5).

    Both integrands are even about x = 1/2 (r''(1 - x) = -r''(x)), so the integral is
    twice that over [0, 1/2]: acb.integral (Arb's rigorous adaptive quadrature) on
    [TAIL, 1/2] and the tail (0, TAIL] bounded: for x <= TAIL, s = 1/x, |phi'| <= 2 s^2,
    |phi''| <= 3 s^3, 0 < phi <= s, u = p phi >= p (s - 2), |R'|, |R''|, |R'''| <=
    e^-u, so |r''| <= e^-u (4 p^2 s^4 + 3 p s^3) and |dr''/dp| <= e^-u (4 p^2 s^5 + 11 p
    s^4 + 3 s^3); each term e^(-2ps) s^k (k <= 9) decreases for s > k/(2p), so the
    integrand is bounded on (0, TAIL] by its bound at s = 1/TAIL."""
    from flint import acb, arb

    from mpvi_papers.mutze._mutze_certify import exact
    if not (P > 0 and P < 5):
        raise ValueError(f"enclose_J: p = {P} is not proven in (0, 5)")
    s = 1 / exact(TAIL)
    if not s > 9 / (2 * P):
        raise ValueError("enclose_J: the tail bound needs 1/TAIL > 9/(2p)")
    Pu = arb(P.upper())
    e = (-2 * arb(P.lower()) * (s - 2)).exp()
    a = 4 * Pu * Pu * s ** 4 + 3 * Pu * s ** 3
    b = 4 * Pu * Pu * s ** 5 + 11 * Pu * s ** 4 + 3 * s ** 3
    bound = e * (a * a if not derivative else 2 * a * b) * exact(TAIL)
    Pc = acb(P)
    body = acb.integral(lambda z, analytic: _ball_integrand(z, Pc, not derivative),
                        exact(TAIL), exact(Fraction(1, 2))).real
    return 2 * (body + arb(0, bound.upper()))


def enclose_p_star(p_run, digits):
    """An enclosure of a zero of J' with J' < 0 left of it and > 0 right of it (a local
    minimum of J) near the run's p* ``p_run`` (a decimal string): J' proven negative at
    p_run - delta and positive at p_run + delta (delta = 10^-digits, widened tenfold up to
    10^-6 until proven); J' is continuous in p (the integrand is smooth in (x, p) and
    dominated), so a zero lies between.  ArithmeticError if no such sign change is
    proven."""
    from mpvi_papers.mutze._mutze_certify import exact
    centre = Fraction(p_run)
    for d in range(digits, 5, -1):
        delta = Fraction(1, 10 ** d)
        lo, hi = exact(centre - delta), exact(centre + delta)
        if enclose_J(lo, True) < 0 < enclose_J(hi, True):
            return lo.union(hi)
    raise ArithmeticError(f"no sign change of J' proven around p = {p_run}")


def smooth_step_ball_derivatives(x, n, P):
    """[r'(x), ..., r^(n)(x)] for x in ]0, 1[ (an arb) and p = ``P`` (an arb), by
    arb_series: r(x + t) = 1/(1 + exp(p (1/(x + t) + 1/(x + t - 1)))) to order n."""
    import math

    from flint import arb, arb_series
    X = arb_series([x, 1], prec=n + 1)
    u = (1 / X + 1 / (X - 1)) * P
    r = 1 / (1 + u.exp())
    c = r.coeffs()
    return [c[k] * math.factorial(k) if k < len(c) else arb(0) for k in range(1, n + 1)]
