"""The Taylor recurrences of mpvi on truncated series, written once.

A series is a list of its coefficients a_0, a_1, ...; each recurrence sets the k-th
coefficient of its result from the coefficients 0 .. k of its operands (and 0 .. k - 1 of
the result), so a Taylor step computes the coefficients order by order
(:mod:`mpvi.engines.taylor`; Jorba & Zou, *Experimental Mathematics* 14 (2005) 99-117,
Sec. 2; Moore, *Interval Analysis*, 1966).  Each function is the one implementation: run
by :class:`mpvi.engines.taylor.TaylorEvaluator` in every context, and translated,
operation by operation, to the MPFR C of the compiled Taylor module
(:mod:`mpvi.compiled.croutine`), so the two give the same bits.  The coefficient 0 of an
elementary function (sin, exp, ...) is the context's function at a point; its
recurrence is here.  The return value of a recurrence is 0 (the translator's subset
returns an int).

The recurrences (sums from j = 1 unless stated):

* a * b: d_k = sum_{j=0..k} a_j b_{k-j};  a^2: the same sum folded (2 sum_{j<k/2} plus
  the middle square);
* a / b: d_k = (a_k - sum_{j=1..k} b_j d_{k-j}) / b_0;
* sin, cos of a (one pair): s_k = sum j a_j c_{k-j} / k,  c_k = -sum j a_j s_{k-j} / k;
* exp a: e_k = sum j a_j e_{k-j} / k;  log a: l_k = (a_k - sum_{j<k} j l_j a_{k-j} / k) / a_0;
* sqrt a: r_k = (a_k - sum_{j=1..k-1} r_j r_{k-j}) / (2 r_0);
* a^alpha (alpha fixed): d_k = sum (alpha j - (k - j)) a_j d_{k-j} / (k a_0), summed
  as ((alpha + 1) sum j a_j d_{k-j} - k sum a_j d_{k-j}) / (k a_0);
* x from M x = b: M_0 x_k = b_k - sum_{j=1..k} M_j x_{k-j} (the right-hand side here, the
  solve by :func:`mpvi.numbers.linalg.gauss_eliminate`).

And the step's use of the coefficients: :func:`series_horner` (the polynomial at h),
:func:`series_radius` (Jorba & Zou's radius of convergence) and :func:`series_adaptive`
(their adaptive substeps across a step).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from mpvi.ground.types import Real


def series_mul(d: list[Real], a: list[Real], b: list[Real], k: int) -> int:
    """d = a b: d_k = sum_{j=0..k} a_j b_{k-j}, summed from j = 0 up."""
    acc = a[0] * b[k]
    for j in range(1, k + 1):
        acc = acc + a[j] * b[k - j]
    d[k] = acc
    return 0


def series_div(d: list[Real], ak: Real, b: list[Real], k: int) -> int:
    """d = a / b (``ak``: the k-th coefficient of a, a series' or a constant's):
    d_k = (a_k - sum_{j=1..k} b_j d_{k-j}) / b_0."""
    acc = ak
    for j in range(1, k + 1):
        acc = acc - b[j] * d[k - j]
    d[k] = acc / b[0]
    return 0


def series_sqr(d: list[Real], a: list[Real], k: int) -> int:
    """d = a^2: twice the products below the middle, plus the middle square."""
    if k == 0:
        d[0] = a[0] * a[0]
        return 0
    acc = a[0] * a[k]
    for j in range(1, (k + 1) // 2):
        acc = acc + a[j] * a[k - j]
    acc = acc + acc
    if k % 2 == 0:
        acc = acc + a[k // 2] * a[k // 2]
    d[k] = acc
    return 0


def series_convolve(d: list[Real], da: list[Real], other: list[Real], k: int, div: int) -> int:
    """d_k = sum_{j=1..k} da_j other_{k-j} / div (da_j = j a_j), summed from j = 1 up."""
    acc = da[1] * other[k - 1]
    for j in range(2, k + 1):
        acc = acc + da[j] * other[k - j]
    d[k] = acc / div
    return 0


def series_sincos(s: list[Real], c: list[Real], a: list[Real], da: list[Real], k: int) -> int:
    """s = sin a, c = cos a at k >= 1 (``da``: the series j a_j, its k-th set here): sin
    from cos, then cos from sin, negated."""
    da[k] = a[k] * k
    series_convolve(s, da, c, k, k)
    series_convolve(c, da, s, k, -k)
    return 0


def series_exp(d: list[Real], a: list[Real], da: list[Real], k: int) -> int:
    """d = exp a at k >= 1 (``da``: the series j a_j, its k-th set here)."""
    da[k] = a[k] * k
    series_convolve(d, da, d, k, k)
    return 0


def series_log(d: list[Real], a: list[Real], k: int) -> int:
    """d = log a at k >= 1: d_k = (a_k - sum_{j=1..k-1} j d_j a_{k-j} / k) / a_0."""
    acc = a[k]
    if k > 1:
        w = d[1] * a[k - 1]
        for j in range(2, k):
            w = w + (d[j] * j) * a[k - j]
        acc = acc - w / k
    d[k] = acc / a[0]
    return 0


def series_sqrt(d: list[Real], a: list[Real], k: int) -> int:
    """d = sqrt a at k >= 1: d_k = (a_k - sum_{j=1..k-1} d_j d_{k-j}) / (2 d_0)."""
    acc = a[k]
    for j in range(1, k):
        acc = acc - d[j] * d[k - j]
    d[k] = acc / (d[0] * 2)
    return 0


def series_powc(d: list[Real], a: list[Real], da: list[Real], alpha: Real, k: int) -> int:
    """d = a^alpha, alpha a constant, at k >= 1 (``da``: the series j a_j, its k-th set
    here): d_k = sum_{j=1..k} (alpha j - (k - j)) a_j d_{k-j} / (k a_0), summed as
    ((alpha + 1) sum_j j a_j d_{k-j} - k sum_j a_j d_{k-j}) / (k a_0) -- two sums of
    products, each term a multiplication and an addition, where the weight alpha j - (k -
    j) of each term cost two more operations."""
    da[k] = a[k] * k
    acc = da[1] * d[k - 1]
    plain = a[1] * d[k - 1]
    for j in range(2, k + 1):
        acc = acc + da[j] * d[k - j]
        plain = plain + a[j] * d[k - j]
    d[k] = ((alpha + 1) * acc - plain * k) / (a[0] * k)
    return 0


def series_solve_row(k: int, count: int, ms: list[list[Real]], vs: list[list[Real]],
                     bk: Real, out: list[Real], i: int) -> int:
    """Row i of the right-hand side of M_0 x_k = b_k - sum_{j=1..k} M_j x_{k-j} (x from
    M x = b order by order; ``bk`` = b_k): ``out[i]`` = b_k - sum_{j=1..k} sum_{t <
    count} ms_t,j vs_t,k-j over the ``count`` entries of row i of M that are series
    (``ms``; a constant entry has no term j >= 1) and the series of the unknowns they
    multiply (``vs``), summed over j, then t."""
    acc = bk
    for j in range(1, k + 1):
        for t in range(count):
            acc = acc - ms[t][j] * vs[t][k - j]
    out[i] = acc
    return 0


def series_horner(ny: int, order: int, c: list[list[Real]], h: Real, out: list[Real]) -> int:
    """out_i = sum_{k=0..order} c_i,k h^k by Horner's rule, for the ``ny`` series c_i."""
    for i in range(ny):
        ci = c[i]
        acc = ci[order]
        for k in range(order - 1, -1, -1):
            acc = acc * h + ci[k]
        out[i] = acc
    return 0


def series_radius(ny: int, order: int, c: list[list[Real]], one: Real, zero: Real,
                  inv1: Real, inv2: Real, out: list[Real]) -> bool:
    """Jorba & Zou's estimate of the radius of convergence from the ``ny`` series c_i of
    order ``order``: min over k in {order - 1, order} of (s / |c_k|)^(1/k), s = max(1,
    |c_0|) (max norms; ``inv1``, ``inv2`` = 1/(order - 1), 1/order) into ``out[0]``.
    False when both coefficients vanish (or are nan): nothing bounds the step."""
    scale = one
    for i in range(ny):
        if abs(c[i][0]) > scale:
            scale = abs(c[i][0])
    have = 0
    for which in range(2):
        k = order - 1 + which
        m = zero
        for i in range(ny):
            if abs(c[i][k]) > m:
                m = abs(c[i][k])
        if m > 0:
            if which == 0:
                x = (scale / m) ** inv1
            else:
                x = (scale / m) ** inv2
            if have == 0 or x < out[0]:
                out[0] = x
            have = 1
    return have == 1


def series_tiers_hold(ny: int, order: int, c: list[list[Real]], hs: Real, lost: list[Real],
                      allowed: Real, one: Real, zero: Real) -> int:
    """1 where the coefficients c (``ny`` series of ``order + 1``), order k computed to
    the relative accuracy ``lost[k]`` (2^-p_k for an order computed at p_k bits below the
    context's precision, 0 at its precision), err by at most ``allowed`` s in the
    substep ``hs``: sum_k max_i |c_i,k| |hs|^k lost[k] <= allowed s, s = max(1,
    max_i |c_i,0|); else 0 (the coefficients grow faster than the schedule of the
    precisions assumed: :func:`mpvi.engines.taylor.precision_schedule`)."""
    scale = one
    for i in range(ny):
        if abs(c[i][0]) > scale:
            scale = abs(c[i][0])
    a = abs(hs)
    power = one
    err = zero
    for k in range(1, order + 1):
        power = power * a
        if lost[k] > 0:
            m = zero
            for i in range(ny):
                if abs(c[i][k]) > m:
                    m = abs(c[i][k])
            err = err + m * power * lost[k]
    if err <= allowed * scale:
        return 1
    return 0


def series_adaptive(ny: int, order: int,
                    coefficients: Callable[[Real, list[Real]], bool],
                    exact: Callable[[Real, list[Real]], bool], tiered: int,
                    lost: list[Real], allowed: Real, c: list[list[Real]],
                    record: Callable[[Real, list[Real]], bool], t: Real, y: list[Real],
                    h: Real, factor: Real, max_substeps: int, one: Real, zero: Real,
                    inv1: Real, inv2: Real, out: list[Real]) -> int:
    """Jorba & Zou's adaptive substeps of order ``order`` from (t, y) across [t, t + h]
    (:mod:`mpvi.engines.taylor`), the last one landing on t + h; y (``ny`` numbers) is
    updated in place.  ``exact(tau, y)`` computes the series of the solution through
    (tau, y) into the rows c (``ny`` series of ``order + 1``) at the context's precision;
    ``coefficients(tau, y)``, with ``tiered`` 1, the same with order k at the precision
    whose relative accuracy is ``lost[k]`` (0: the context's).  A substep from tiered
    coefficients is taken where :func:`series_tiers_hold` finds their error within
    ``allowed`` s; where it does not, that substep and the rest of the step are computed
    by ``exact``.  ``record(tau, y)`` is called at every interior substep end; each
    callback returns false where it declines.

    Returns the number of substeps (``out[2]`` ``one`` where the tiers did not hold
    for a substep, else ``zero``); -1 where a callback declined; -2 where the rest of the
    step would need more than ``max_substeps`` at the pace of the substep; -3 where a
    substep no longer moves the time (both with the time in ``out[0]`` and the substep in
    ``out[1]``)."""
    out[2] = zero
    tend = t + h
    forward = 0
    if h > 0:
        forward = 1
    tau = t
    nsub = 0
    while True:
        if tiered == 1:
            if not coefficients(tau, y):
                return -1
        elif not exact(tau, y):
            return -1
        rem = tend - tau
        last = 0
        if not series_radius(ny, order, c, one, zero, inv1, inv2, out):
            last = 1
        else:
            hs = out[0] * factor
            if not hs < abs(rem):
                last = 1
        if last == 1:
            hs = rem
        if tiered == 1:
            if series_tiers_hold(ny, order, c, hs, lost, allowed, one, zero) == 0:
                tiered = 0
                out[2] = one
                continue
        if last == 0:
            if abs(rem) > hs * (max_substeps - nsub):
                out[0] = tau
                out[1] = hs
                return -2
            if forward == 0:
                hs = -hs
            if tau + hs == tau:
                out[0] = tau
                out[1] = hs
                return -3
        series_horner(ny, order, c, hs, y)
        nsub += 1
        if last == 1:
            return nsub
        tau = tau + hs
        if not record(tau, y):
            return -1
    return 0
