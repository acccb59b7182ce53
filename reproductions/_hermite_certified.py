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
* the GBS benchmark of the paper's figures is not certified by the library
  (:func:`mpvi.certify` refuses ``gbs`` runs with WrongStepError today): where a value
  compares a method with it, the benchmark enters as the numbers the run computed
  (exact binary values, the recorded data), so the proof is of the method's distance to
  those numbers; values of the benchmark alone are not certified (said per value).

flint is imported inside the functions.
"""
from __future__ import annotations

from mpvi_papers._hermite import METHODS

GBS_NOT_CERTIFIED = (
    "a value of the GBS benchmark alone: mpvi.certify refuses gbs runs today (its rounding "
    "allowance is exceeded at step 0, WrongStepError), so the benchmark's trajectory has "
    "no enclosure")


def arb_of(x):
    """The exact value of a number of the run's context (a binary number) as an Arb ball
    of radius 0 (at flint's precision, which holds it: the callers work at the run's digits
    plus guard digits)."""
    from flint import arb, fmpq

    from mpvi.arbref import exact_rational
    f = exact_rational(x, "a computed number")
    return arb(fmpq(f.numerator, f.denominator))


def rational(x, what):
    """An exact input (decimal string, int, Fraction) as an Arb ball of radius 0."""
    from flint import arb, fmpq

    from mpvi.arbref import exact_rational
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
    cert = certify(sol)
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
    """:func:`mpvi_papers._hermite_double_well.growth` on balls: max |.| over the second
    half of the nodes / max |.| over the first half (after t = 0)."""
    k = len(balls) // 2
    return sup_abs(balls[k:]) / sup_abs(balls[1:k + 1])


def digits_of(out, key, ball):
    """(proven digits of the recorded value ``key`` of ``out``, enclosure)."""
    from mpvi.repro.digits import proven_digits
    return proven_digits(out.values[key], ball)


__all__ = ["GBS_NOT_CERTIFIED", "METHODS", "arb_of", "certified_run", "digits_of", "growth",
           "mean_abs", "rational", "sup_abs", "velocities"]
