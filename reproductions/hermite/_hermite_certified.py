"""The certified runs of the hermite reproductions (``mpvi run --certify``): the Hermite
methods' runs of Secs. 5.1-5.3 solved again, checked equal to the study's (the runs the
reproduction reported) and certified (:func:`mpvi.certify`: Krawczyk/Lohner on Arb
balls), and the quantities of the double well (38), the Duffing oscillator (40) and the
aeroelastic section (42) evaluated on the enclosures.

What is proven, in words (the statements of the hooks say the same):

* a method's states are Arb enclosures of its exact discrete trajectory from the run's
  data as the binary numbers the run used (q(0) = 0.74 and Delta t = 0.1 rounded to the
  run's digits; the rounding of every step excluded);
* energies E = 1/2 m v^2 + V(q) (eqs. 38, 40, 42) are evaluated on those balls, with
  the parameters (m, alpha, beta, delta) entered as exact rationals;
* a GBS benchmark is certified the same way where a published value depends on it (its
  extrapolation tableau on balls); it is the benchmark's exact discrete trajectory that
  is enclosed, not the exact solution of the problem (the benchmark's own error, estimated
  by its halving check, is not proven).

flint is imported inside the functions.
"""
from __future__ import annotations

import numpy as np

BENCHMARK_NOT_NEEDED = (
    "a value of the GBS benchmark alone, not a published one: its run is not certified here "
    "(the published values of this figure depend only on the methods' runs)")


def arb_of(x):
    """The exact value of a number of the run's context (a binary number) as an Arb ball
    of radius 0 (at flint's precision, which holds it: the callers work at the run's digits
    plus guard digits)."""
    from flint import arb, fmpq

    from mpvi.numbers.arbref import exact_rational
    f = exact_rational(x, "a computed number")
    return arb(fmpq(f.numerator, f.denominator))


def rational(x, what):
    """An exact input (decimal string, int, Fraction) as an Arb ball of radius 0."""
    from flint import arb, fmpq

    from mpvi.numbers.arbref import exact_rational
    f = exact_rational(x, what)
    return arb(fmpq(f.numerator, f.denominator))


def certified_run(problem, method, h, n, expect, what, **options):
    """The run ``method`` of ``problem`` (n steps of h) solved again with
    :func:`mpvi.solve`, checked to be the one the study reported (``expect``: {"q": first
    coordinate's array or the matrix, "v": likewise}; equal number for number) and
    certified: returns (solution, certificate).  ArithmeticError naming ``what`` if the
    solve differs from the study's or a step is not proven."""
    import numpy as np

    from mpvi import certify, solve
    sol = solve(problem, method, h=h, n=n, **options)
    for k in ("q", "v"):
        mine = getattr(sol, k)
        want = np.asarray(expect[k])
        mine = mine[:, 0] if want.ndim == 1 else mine
        if mine.shape != want.shape or any(a != b for a, b in zip(mine.ravel(), want.ravel())):
            raise ArithmeticError(f"{what}: the run solved again differs from the study's "
                                  f"({k}): the certified run would not be the one reported")
    cert = certify(sol, posed=False)      # the run's binary numbers (the statement)
    if not cert.complete:
        raise ArithmeticError(f"{what}: step {cert.failed_step} not proven: {cert.why}")
    return sol, cert


def velocities(sol, cert, mass):
    """The enclosures of v at the saved points: the certificate's y if the method carries
    v, y / m for a method carrying p of a one-coordinate system with the exact mass ``mass``
    (a ball)."""
    if sol.state == "qv":
        return [y for y in cert.y]
    if sol.state == "qp" and len(cert.y[0]) == 1:
        return [[y[0] / mass] for y in cert.y]
    raise ValueError(f"{sol.method}: state {sol.state!r} of a system with "
                     f"{len(cert.y[0])} coordinates: no velocity enclosure here")


def sup_abs(balls):
    """An enclosure of max |b| over ``balls`` (:func:`mpvi.repro.certified.ball_max`)."""
    from mpvi.repro.certified import ball_max
    return ball_max(balls)


def mean_abs(balls):
    """An enclosure of the mean of |b| over ``balls``."""
    from flint import arb
    return sum((abs(b) for b in balls), arb(0)) / len(balls)


def growth(balls):
    """:func:`mpvi_papers.hermite._hermite_double_well.growth` on balls: max |.| over the second
    half of the nodes / max |.| over the first half (after t = 0)."""
    k = len(balls) // 2
    return sup_abs(balls[k:]) / sup_abs(balls[1:k + 1])


def digits_of(out, key, ball):
    """(proven digits of the recorded value ``key`` of ``out``, enclosure)."""
    from mpvi.repro.digits import proven_digits
    return proven_digits(out.values[key], ball)


__all__ = ["BENCHMARK_NOT_NEEDED", "arb_of", "certified_run", "digits_of", "growth",
           "mean_abs", "rational", "sup_abs", "velocities"]


def step_jacobian(method_name, system, h, q, v, ctx, **options):
    """An Arb enclosure of the Jacobian d(q_1, v_1)/d(q_0, v_0) of one step of a (q, v)
    method from the exact point (q, v) (balls of radius 0), t = 0: the step on balls from
    the point (its implicit equations proven by Krawczyk's test), then the same step on
    dual numbers over those balls (forward differentiation; an implicit step by the
    implicit function theorem) -- the step and Jacobian of :func:`mpvi.certify`'s Lohner
    walk (``mpvi.proof.certify._lohner``), at one point.  ``system``: the LagrangianSystem of the
    run's context; ``ctx``: the :class:`mpvi.numbers.arb.ArbContext` of the enclosure; h, q, v:
    exact inputs as strings (enclosed at ``ctx``'s precision: the problem as posed) or
    numbers of a context (their binary values).  Returns
    a flint ``arb_mat`` (rows q_1, v_1; columns q_0, v_0)."""
    from flint import arb, arb_mat

    from mpvi import get_method
    from mpvi.numbers.arb import _Dual, _DualContext, _hand_over, _watch
    from mpvi.proof.certify import _exact_params
    def ball(x):                      # an exact input (string) or a binary number, exactly
        return ctx.num(x) if isinstance(x, str) else ctx.lift(x)

    method = get_method(method_name)
    if method.state != "qv":
        raise ValueError(f"{method_name} carries {method.state}, not (q, v)")
    dctx = _DualContext(ctx.dps)
    ctx.activate()
    try:
        hb = ball(h)
        stepper = method.prepare(_exact_params(system, ctx), hb, ctx, **options)
        dstepper = method.prepare(_exact_params(system, ctx, dctx), dctx.num(hb), dctx, **options)
        n = len(q)
        cs = [ball(x) for x in list(q) + list(v)]
        seeds = [_Dual(b, tuple(arb(1) if i == k else arb(0) for i in range(2 * n)))
                 for k, b in enumerate(cs)]
        _watch(ctx, None)
        stepper(ctx.zero, np.array(cs[:n], dtype=object), np.array(cs[n:], dtype=object), None)
        _hand_over(ctx, dctx)
        r = dstepper(dctx.num(0), np.array(seeds[:n], dtype=object),
                     np.array(seeds[n:], dtype=object), None)
    finally:
        _hand_over(ctx, None)
    duals = [dctx.num(x) for x in list(r.q) + list(r.y)]
    return arb_mat([[u.d[i] if u.d else arb(0) for i in range(2 * n)] for u in duals])
