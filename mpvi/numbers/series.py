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

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from mpvi.ground.types import Real


def series_dot(out: list[Real], i: int, start: Real, a: list[Real], b: list[Real], lo: int,
               hi: int, k: int, s: int) -> int:
    """``out[i]`` = start + s sum_{j=lo..hi} a_j b_{k-j} (s = 1 or -1), or the sum alone
    (s = 0: ``start`` not read), rounded once: the exact value rounded to nearest, ties to
    even, at the context's precision; an exact zero is +0.  Every sum of products of the
    recurrences is one such rounding, not one per product and one per addition.

    A correctly rounded sum is one number whoever computes it: the gmp context computes
    it here as MPFR's ``mpfr_sum`` of the exact products, the mp context with integers
    (the products of the significands shifted to a common exponent, added, rounded once),
    the compiled Taylor modules with GMP's mpn functions (``mpvi_dot.h``: this
    function's C is written by hand, :data:`mpvi.compiled.croutine.NATIVE_ROUTINES`), and
    they give the same bits (with a nan or an infinity among the terms, both give what
    ``mpfr_sum`` gives).  Numbers of another kind (floats, Arb balls), and mpmath's with
    a nan or an infinity, are summed in order, one operation at a time, as the
    recurrences did before."""
    out[i] = _dot(start, a, b, lo, hi, k, s)
    return 0


def _dot(start: Any, a: Any, b: Any, lo: int, hi: int, k: int, s: int) -> Any:
    """The value :func:`series_dot` stores."""
    first = start if s != 0 else (a[lo] if lo <= hi else None)
    if first is None:
        return _loop_dot(start, a, b, lo, hi, k, 0)
    kind = type(first)
    if kind not in _SPLITTERS:
        _SPLITTERS[kind] = _splitter(first)
    split = _SPLITTERS[kind]
    if split is not None:
        try:
            exact = split(start, a, b, lo, hi, k, s)
        except (AttributeError, TypeError):           # a number of another kind among them
            exact = None
        if exact is not None:
            return exact
    return _loop_dot(start, a, b, lo, hi, k, s)


def _loop_dot(start: Any, a: Any, b: Any, lo: int, hi: int, k: int, s: int) -> Any:
    """The sum in order, an operation at a time (floats, balls, nans and infinities)."""
    if lo > hi:
        return start if s != 0 else abs(start) * 0
    acc = a[lo] * b[k - lo]
    for j in range(lo + 1, hi + 1):
        acc = acc + a[j] * b[k - j]
    if s == 0:
        return acc
    return start + acc if s > 0 else start - acc


def _gmpy2_dot(start: Any, a: Any, b: Any, lo: int, hi: int, k: int, s: int) -> Any:
    """The products exact (each at the sum of its factors' precisions), summed by
    ``fsum`` (MPFR's ``mpfr_sum``: rounded once at the context's precision), as the
    compiled sum's slow path does; an exact zero +0."""
    import gmpy2
    pairs = [(a[j], b[k - j]) for j in range(lo, hi + 1)]
    outer = gmpy2.get_context()
    terms = []
    if pairs:
        wide = max(x.precision + y.precision for x, y in pairs)
        with gmpy2.context(outer, precision=wide):
            terms = [x * y for x, y in pairs] if s >= 0 else [-(x * y) for x, y in pairs]
    if s != 0:
        terms.append(start)
    total = gmpy2.fsum(terms)
    return total if total else gmpy2.mpfr(0)


def _mpmath_dot(start: Any, a: Any, b: Any, lo: int, hi: int, k: int, s: int) -> Any:
    """The products of the integer significands shifted to a common exponent and added,
    then rounded once (``from_man_exp`` at the context's precision, to nearest); None
    where a number is not finite."""
    from mpmath.libmp import from_man_exp
    terms = []
    values = [(start, None)] if s != 0 else []
    values += [(a[j], b[k - j]) for j in range(lo, hi + 1)]
    for x, y in values:
        m, e = 1, 0
        for z in (x, y) if y is not None else (x,):
            sign, man, exp, _ = z._mpf_
            if not man:
                if exp:                               # an infinity or a nan
                    return None
                m = 0
                break
            m, e = m * (-man if sign else man), e + exp
        if m:
            terms.append((-m if s < 0 and y is not None else m, e))
    ctx = (start if s != 0 else a[lo]).context
    if not terms:
        return ctx.zero
    low = min(e for _, e in terms)
    return ctx.make_mpf(from_man_exp(sum(m << (e - low) for m, e in terms), low, ctx.prec,
                                     "n"))


_SPLITTERS: dict[type, Callable[..., Any] | None] = {}
"""The exact dot of each number type met (None: summed in order)."""


def _splitter(x: Any) -> Callable[..., Any] | None:
    """The exact dot of numbers of the type of ``x``: gmpy2's mpfr, mpmath's mpf, or None."""
    kind = type(x)
    if getattr(kind, "__module__", "").startswith("gmpy2") and kind.__name__ == "mpfr":
        return _gmpy2_dot
    if hasattr(x, "_mpf_") and hasattr(x, "context"):
        return _mpmath_dot
    return None


def series_mul(d: list[Real], a: list[Real], b: list[Real], k: int) -> int:
    """d = a b: d_k = sum_{j=0..k} a_j b_{k-j}, rounded once (:func:`series_dot`)."""
    series_dot(d, k, a[0], a, b, 0, k, k, 0)
    return 0


def series_div(d: list[Real], ak: Real, b: list[Real], k: int) -> int:
    """d = a / b (``ak``: the k-th coefficient of a, a series' or a constant's):
    d_k = (a_k - sum_{j=1..k} b_j d_{k-j}) / b_0, the numerator rounded once."""
    series_dot(d, k, ak, b, d, 1, k, k, -1)
    d[k] = d[k] / b[0]
    return 0


def series_sqr(d: list[Real], a: list[Real], k: int) -> int:
    """d = a^2: d_k = sum_{j=0..k} a_j a_{k-j}, rounded once (the compiled sum folds the
    pairs j, k - j into one product counted twice)."""
    series_dot(d, k, a[0], a, a, 0, k, k, 0)
    return 0


def series_convolve(d: list[Real], da: list[Real], other: list[Real], k: int, div: int) -> int:
    """d_k = sum_{j=1..k} da_j other_{k-j} / div (da_j = j a_j), the sum rounded once."""
    series_dot(d, k, da[1], da, other, 1, k, k, 0)
    d[k] = d[k] / div
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
    """d = sqrt a at k >= 1: d_k = (a_k - sum_{j=1..k-1} d_j d_{k-j}) / (2 d_0), the
    numerator rounded once."""
    series_dot(d, k, a[k], d, d, 1, k - 1, k, -1)
    d[k] = d[k] / (d[0] * 2)
    return 0


def series_powc(d: list[Real], a: list[Real], da: list[Real], alpha: Real, k: int) -> int:
    """d = a^alpha, alpha a constant, at k >= 1 (``da``: the series j a_j, its k-th set
    here): d_k = sum_{j=1..k} (alpha j - (k - j)) a_j d_{k-j} / (k a_0), summed as
    ((alpha + 1) sum_j j a_j d_{k-j} - k sum_j a_j d_{k-j}) / (k a_0) -- two sums of
    products (each rounded once, :func:`series_dot`), where the weight alpha j - (k - j)
    of each term cost two more operations."""
    da[k] = a[k] * k
    series_dot(d, k, da[1], da, d, 1, k, k, 0)
    acc = d[k]
    series_dot(d, k, a[1], a, d, 1, k, k, 0)
    plain = d[k]
    d[k] = ((alpha + 1) * acc - plain * k) / (a[0] * k)
    return 0


def series_solve_row(k: int, count: int, ms: list[list[Real]], vs: list[list[Real]],
                     bk: Real, out: list[Real], i: int) -> int:
    """Row i of the right-hand side of M_0 x_k = b_k - sum_{j=1..k} M_j x_{k-j} (x from
    M x = b order by order; ``bk`` = b_k): ``out[i]`` = b_k - sum_{j=1..k} sum_{t <
    count} ms_t,j vs_t,k-j over the ``count`` entries of row i of M that are series
    (``ms``; a constant entry has no term j >= 1) and the series of the unknowns they
    multiply (``vs``): the sum over j of each entry t rounded once (:func:`series_dot`),
    the entries in turn."""
    out[i] = bk
    for t in range(count):
        series_dot(out, i, out[i], ms[t], vs[t], 1, k, k, -1)
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
