"""Certified quantities on Arb balls, shared by the reproductions' ``certify`` hooks
(``mpvi run --certify``, issue 39).

* error norms on balls: :func:`ball_norm` (Euclidean norm of a ball vector),
  :func:`relative_error` (|x - x_ex| / |x_ex|), :func:`ball_max` (a sup norm over nodes);
* :func:`least_squares_order`: the least-squares slope of log(error) against log(h)
  (:func:`mpvi.fit_order`) on balls, from exact steps;
* :func:`growth_series`: a certificate's proven digits against time, thinned to
  :data:`GROWTH_POINTS` points -- the provenance entry ``certified.growth[label]``
  (:data:`mpvi.repro.records.PROVENANCE`), drawn by the report;
* width control (:func:`certify_controlled`): a run certified, and where the wrapping
  of the enclosures (Lohner 1987: widths growing like exp(lambda t) on a chaotic orbit)
  leaves fewer proven digits than wanted or the proof fails, the run solved and certified
  again at a higher working precision a bounded number of times, else the span actually
  certified recorded; :attr:`ControlledCertificate.statement` says which.

Everything that is proven stays a ball (Arb: Johansson 2017); floats appear only in the
growth series, which is drawn, not computed with.  flint is imported inside the
functions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

from flint import arb

from mpvi import certify
from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision, exact_rational
from mpvi.proof.certify import WrongStepError, _exact_params

REPRO_INPUTS = ("the reproductions' certified runs enclose the exact discrete trajectory of "
                "the inputs as the binary numbers the run used (``certify(..., posed="
                "False)``), as their statements say; a run of the library certifies the "
                "problem as posed (issue 45)")
"""What the shared certified runs here take as inputs (:func:`certify_controlled`,
:func:`certified_run`)."""

GROWTH_POINTS = 200
"""The most points of a growth series in the provenance record."""

PROVEN_SHARE = Fraction(5, 8)
"""The proven digits a long certified run should keep, as a share of its working digits
(40 of 64: issue 39's acceptance), the default target of the width control of the
reproductions' certified runs."""


def rows_not_enclosed(out, why):
    """``not_certified`` entries for every column of ``out``'s tables (``table.column``, or
    the column of the unnamed table), each with ``why``: a reproduction whose published
    values are certified as values, not row by row."""
    return {column if table == "" else f"{table}.{column}": why
            for table, df in out.tables.items() for column in df.columns}


def ball_norm(d):
    """An enclosure of the Euclidean norm of the ball vector ``d`` (a sum of squares that
    may contain 0 gives [0, sqrt(its upper bound)])."""
    s = sum((x * x for x in d), arb(0))
    return s.sqrt() if s > 0 else arb(0).union(s.upper().sqrt())


def ball_max(balls):
    """An enclosure of max_n |b_n| over the balls ``balls`` (a sup norm over nodes)."""
    largest = arb(0)
    for b in balls:
        largest = largest.max(abs(b))
    return largest


def relative_error(x, exact, what):
    """An enclosure of |x - exact| / |exact| for balls ``x`` and ``exact``.
    ArithmeticError, naming ``what``, if ``exact`` is not proven nonzero."""
    if exact.contains(0):
        raise ArithmeticError(f"{what}: the exact value {exact.str(5)} is not proven nonzero: "
                              "no relative error")
    return abs(x - exact) / abs(exact)


def least_squares_order(hs, errors):
    """The least-squares slope of log(error) against log(h) (:func:`mpvi.fit_order`) on
    balls: ``hs`` exact positive rationals (the steps the runs took), ``errors`` balls
    proven positive; an enclosure of the order.  ValueError for fewer than two pairs,
    ArithmeticError for an error not proven positive."""
    if len(hs) != len(errors) or len(hs) < 2:
        raise ValueError("least_squares_order needs at least two (h, error) pairs of equal count")
    for h, e in zip(hs, errors):
        if not e > 0:
            raise ArithmeticError(f"the error enclosure {e.str(5)} at h = {h} is not proven "
                                  "positive: its logarithm (the order) is not enclosed")
    x = [arb(Fraction(h).numerator).log() - arb(Fraction(h).denominator).log() for h in hs]
    y = [e.log() for e in errors]
    xm = sum(x, arb(0)) / len(x)
    ym = sum(y, arb(0)) / len(y)
    return (sum(((a - xm) * (b - ym) for a, b in zip(x, y)), arb(0))
            / sum(((a - xm) * (a - xm) for a in x), arb(0)))


def growth_series(cert, note, points=GROWTH_POINTS):
    """The provenance entry ``certified.growth[label]`` of a certificate: ``{"t":
    [times], "digits": [proven digits], "dps": the working digits, "note": note}``.

    ``digits`` are the certificate's smallest proven digits per saved point
    (:attr:`mpvi.Certificate.min_digits`: those of the computed state against its
    enclosure).  Saved points whose state is exact (infinitely many digits: the initial
    data) are left out; the rest are cut into at most ``points`` consecutive groups and
    each group is represented by its point with the fewest digits (the series is a lower
    envelope: thinning never shows more digits than a point has).  Times are the balls'
    midpoints as floats (drawn only)."""
    pairs = [(float(t.mid()), d) for t, d in zip(cert.t, cert.min_digits) if math.isfinite(d)]
    size = max(1, -(-len(pairs) // points))
    kept = [min(pairs[i:i + size], key=lambda p: p[1]) for i in range(0, len(pairs), size)]
    return {"t": [t for t, _ in kept], "digits": [round(d, 2) for _, d in kept],
            "dps": int(cert.context.dps), "note": note}


@dataclass
class ControlledCertificate:
    """The result of :func:`certify_controlled`.

    ``certificate`` and ``solution``: the last run tried and its certificate; ``dps``:
    their working digits; ``span``: the number of saved points, from the first, proven to
    ``target`` digits (all of them when ``met``); ``met``: every saved point certified
    to ``target`` digits; ``statement``: the precision chosen or the span certified, and
    why, in words (for the certified block's statement or not_certified text);
    ``tried``: ``(dps, smallest proven digits or None, why it did not suffice)`` per
    attempt."""

    certificate: Any
    solution: Any
    dps: int
    span: int
    met: bool
    statement: str
    tried: list


def certify_controlled(solve_at: Callable[[int], Any], dps: int, target: float, *,
                       attempts: int = 2, factor: int = 2) -> ControlledCertificate:
    """Certify a run and control its widths: ``solve_at(d)`` solves the run in a context
    of ``d`` digits (the same problem, method and step); the run at ``dps`` digits is
    certified (:func:`mpvi.certify`).  If its certificate fails or a saved point has
    fewer than ``target`` proven digits, the run is solved and certified again at
    ``factor`` times the digits, at most ``attempts`` more times.  If no precision tried
    suffices, the last run's span proven to ``target`` digits (its saved points from the
    first up to the first one below the target or not certified) is what is certified,
    and the statement says so.

    A run refused by :class:`mpvi.WrongStepError` (a step whose computed state is
    outside its enclosure and, judged alone, outside its own step's: a wrong step, e.g.
    a Newton iteration that stopped short at this precision) is not claimed either: the
    run is solved again at the higher precision, and the refusal is said in the
    statement; the last attempt's refusal is raised.  (A chaotic run's rounding, grown
    like exp(lambda t), is no refusal: its proven digits fall, and are controlled as
    above.)

    Raises ValueError for ``attempts`` < 0, ``factor`` < 2 or ``dps`` < 1, and the last
    attempt's :class:`mpvi.WrongStepError`."""
    if attempts < 0 or factor < 2 or dps < 1:
        raise ValueError(f"certify_controlled: attempts >= 0, factor >= 2 and dps >= 1 needed, "
                         f"got attempts={attempts}, factor={factor}, dps={dps}")
    tried = []
    d = dps
    for attempt in range(attempts + 1):
        sol = solve_at(d)
        try:
            with arb_precision(d + GUARD_DIGITS):  # certify sets flint's precision: restored
                cert = certify(sol, posed=False)   # the run's numbers: REPRO_INPUTS
        except WrongStepError as exc:
            if attempt == attempts:
                raise
            tried.append((d, None, f"step {exc.step} of the computed run was refused as a "
                                   "wrong step (outside its proven enclosure and its own "
                                   "step's)"))
            d *= factor
            continue
        digits = cert.min_digits
        span = 0
        while span < len(digits) and digits[span] >= target:
            span += 1
        least = min(digits) if digits else None
        if cert.complete and span == len(cert.nodes):
            if not tried:
                text = (f"certified at the run's {d} digits: every saved point proven to "
                        f"{_down(least)} digits or more (target {target:g})")
            else:
                text = (f"working precision raised to {d} digits: "
                        + "; ".join(f"at {pd} digits {why}" for pd, _, why in tried)
                        + f"; at {d} digits every saved point is proven to {_down(least)} digits "
                        f"or more (target {target:g})")
            return ControlledCertificate(cert, sol, d, span, True, text, tried)
        why = (f"step {cert.failed_step} was not proven ({cert.why})" if not cert.complete
               and span == len(cert.t) else
               f"the proven digits fell below {target:g} at saved point {span} "
               f"(t = {_when(cert, span)}: {_down(digits[span])} digits)")
        tried.append((d, least, why))
        if attempt < attempts:
            d *= factor
    t_end = _when(cert, span - 1) if span else None
    text = ("no precision tried suffices: " + "; ".join(f"at {pd} digits {why}"
                                                       for pd, _, why in tried)
            + (f"; certified span at {d} digits: the first {span} saved points, up to t = "
               f"{t_end}, proven to {target:g} digits or more" if span else
               f"; nothing is certified to {target:g} digits"))
    return ControlledCertificate(cert, sol, d, span, False, text, tried)


def _down(x):
    """Digits as text, rounded down to a tenth (never shows more than proven); "all" for
    an exact state."""
    return f"{math.floor(10 * x) / 10:.1f}" if math.isfinite(x) else "all"


def _when(cert, i):
    """The time of saved point ``i`` of a certificate, as text (6 digits)."""
    return cert.t[i].str(6, radius=False)


def ball_system(system, cert):
    """``system`` on the balls of the certificate ``cert`` (:attr:`mpvi.Certificate.context`),
    its parameters exactly as the run had them (a value rounded to the run's digits is that
    binary number), so that a function of the state (the energy, a momentum) evaluated on
    the certificate's enclosures encloses it on the exact discrete trajectory."""
    return _exact_params(system, cert.context)


def energy_balls(system, cert):
    """Enclosures of H(q_n, p_n) at every saved point of the certificate ``cert`` of a run
    of ``system`` (its state (q, p)): the Hamiltonian evaluated on the enclosures with the
    run's parameters exactly (:func:`ball_system`)."""
    on_balls = ball_system(system, cert)
    return [on_balls.hamiltonian(q, p) for q, p in zip(cert.q, cert.y)]


def relative_energy_balls(system, cert, what):
    """Enclosures of the signed relative energy error e_H = (H_n - H_0) / H_0 at every
    saved point of ``cert`` (:func:`energy_balls`; H_0 of the run's exact initial data;
    e_H(0) = 0 exactly).  ArithmeticError, naming ``what``, if H_0 is not proven nonzero."""
    H = energy_balls(system, cert)
    if H[0].contains(0):
        raise ArithmeticError(f"{what}: H_0 = {H[0].str(5)} is not proven nonzero: no "
                              "relative energy error")
    return [arb(0)] + [(x - H[0]) / H[0] for x in H[1:]]


def certified_run(solution, what):
    """The certificate (:func:`mpvi.certify`) of ``solution``, proven complete:
    ArithmeticError naming ``what`` and the step not proven otherwise.  At flint's current
    precision (the caller sets it, e.g. ``arb_precision(dps + GUARD_DIGITS)``)."""
    cert = certify(solution, posed=False)       # the run's numbers: REPRO_INPUTS
    if not cert.complete:
        raise ArithmeticError(f"{what}: step {cert.failed_step} not proven: {cert.why}")
    return cert


def ball_slope(h0, h1, e0, e1):
    """An enclosure of log(e0 / e1) / log(h0 / h1): the convergence order between two
    exact steps ``h0`` > ``h1`` (rationals) from error enclosures ``e0``, ``e1`` proven
    positive (ArithmeticError otherwise)."""
    for h, e in ((h0, e0), (h1, e1)):
        if not e > 0:
            raise ArithmeticError(f"the error enclosure {e.str(5)} at h = {h} is not proven "
                                  "positive: its logarithm (the order) is not enclosed")
    r = Fraction(h0) / Fraction(h1)
    return (e0 / e1).log() / (arb(r.numerator).log() - arb(r.denominator).log())


def rounded_drift(values, start, ctx, what):
    """Enclosures of the relative drifts (x - x_0) / x_0 that a context ``ctx`` computes for
    the numbers ``values`` of a computed run (its stored states: exact binary numbers) and
    ``start`` = x_0: the exact quotient on balls (the binary numbers read exactly, at
    :func:`prec_digits_of` digits), widened by two roundings to nearest of ``ctx.prec``
    bits (the subtraction's and the division's), so that the ball holds the value ``ctx``
    computed.  This is a statement about the computed (rounded) run, not the exact
    discrete trajectory: for a quantity the scheme conserves exactly, the recorded drift
    is the run's round-off, and this encloses it.  ArithmeticError naming ``what`` if x_0
    is 0.  Flint's precision is the caller's after."""


    def exact(x):
        r = exact_rational(x, what)
        return arb(r.numerator) / arb(r.denominator)     # a power of two: exact

    with arb_precision(prec_digits_of(ctx)):
        x0 = exact(start)
        if x0 == 0:
            raise ArithmeticError(f"{what}: the initial value is 0: no relative drift")
        unit = arb(2) ** (1 - ctx.prec)          # relative rounding bound, twice over
        out = []
        for x in values:
            q = (exact(x) - x0) / x0
            out.append(q + arb(0, (abs(q) * (2 * unit + unit * unit)).upper()))
        return out


def prec_digits_of(ctx):
    """Digits enough to hold the binary numbers of ``ctx`` exactly and their quotients far
    below one rounding of ``ctx`` (:func:`rounded_drift`): twice the context's, plus guard
    digits."""
    return 2 * ctx.dps + GUARD_DIGITS
