"""Sparse polynomials at many points (mpvi.analysis.horner): the program of Horner's rule on
the trie of the exponents, run on numpy arrays of the context's numbers and by the compiled
module (mpvi_poly.h), against an independent reference -- the evaluation on numpy object
arrays that reproductions/bea used before the program existed -- bit for bit; and every
malformed program or argument refused by the module with a message naming it."""
import random
from array import array
from fractions import Fraction

import numpy as np
import pytest

import mpvi
from mpvi.analysis.horner import ADD, MUL, horner_program, run_program
from mpvi.compiled import cbackend

needs_toolchain = pytest.mark.skipif("error" in cbackend.toolchain(),
                                     reason="no toolchain for compiled kernels")


def reference(monomials, values, ctx, n):
    """Horner's rule on the trie of the exponents, every operation on all points at once
    (numpy object arrays), the powers x^e as x^(e-1) x."""
    powers = [[None] for _ in values]

    def power(i, e):
        row = powers[i]
        while len(row) <= e:
            row.append(values[i] if len(row) == 1 else row[-1] * values[i])
        return row[e]

    def level(terms, i):
        if i == len(values):
            return ctx.num(sum(c for _, c in terms))
        groups = {}
        for m, c in terms:
            groups.setdefault(m[i], []).append((m, c))
        total = None
        for e in sorted(groups):
            part = level(groups[e], i + 1)
            part = power(i, e) * part if e else part
            total = part if total is None else (
                part + total if isinstance(part, np.ndarray) else total + part)
        return total

    total = level(monomials, 0) if monomials else ctx.num(0)
    return list(total) if isinstance(total, np.ndarray) else [total] * n


def same_bits(a, b):
    return len(a) == len(b) and all(x == y and x.precision == y.precision for x, y in zip(a, b))


def random_case(rng, ctx):
    nv, count, n = rng.randint(0, 5), rng.randint(0, 200), rng.randint(1, 12)
    monomials = [(tuple(rng.randint(0, 6) for _ in range(nv)),
                  Fraction(rng.randint(-50, 50), rng.randint(1, 40))) for _ in range(count)]
    with ctx.active():
        values = [np.array([ctx.num(Fraction(rng.randint(-300, 300), 97)) for _ in range(n)],
                           dtype=object) for _ in range(nv)]
    return monomials, values, n


@pytest.mark.parametrize("compiled", ["0", "1"])
def test_the_program_gives_the_bits_of_the_reference_at_every_point(compiled, monkeypatch):
    """Repeated exponents, constants alone, no variable, no monomial: both runs, the bits of
    the reference (which the committed bea energies were computed with)."""
    monkeypatch.setenv(cbackend.ENV_SWITCH, compiled)
    rng = random.Random(7)
    for digits in (20, 74):
        ctx = mpvi.GMPContext(digits)
        for _ in range(25):
            monomials, values, n = random_case(rng, ctx)
            with ctx.active():
                want = reference(monomials, values, ctx, n)
            got = run_program(horner_program(monomials, len(values)), values, ctx, n)
            assert same_bits(got, want), (digits, monomials[:3])


def test_the_mp_context_runs_the_same_program():
    ctx = mpvi.MPContext(30)
    rng = random.Random(3)
    monomials, _, n = random_case(rng, mpvi.GMPContext(30))
    nv = len(monomials[0][0]) if monomials else 0
    values = [np.array([ctx.num(Fraction(k + 3 * i, 7)) for k in range(n)], dtype=object)
              for i in range(nv)]
    with ctx.active():
        want = reference(monomials, values, ctx, n)
    assert run_program(horner_program(monomials, nv), values, ctx, n) == want


def test_the_trie_shares_the_powers_and_sums_equal_exponents_exactly():
    x = [((2, 0), Fraction(1, 3)), ((2, 0), Fraction(2, 3)), ((2, 1), Fraction(1)),
         ((0, 3), Fraction(-1, 2))]
    p = horner_program(x, 2)
    ops = array("i")
    ops.frombytes(p.operations)
    assert Fraction(1) in p.constants and Fraction(1, 3) not in p.constants
    quads = [tuple(ops[j:j + 4]) for j in range(0, len(ops), 4)]
    squares = [q for q in quads if q[0] == MUL and q[2:] == (0, 0)]
    assert len(squares) == 1                     # x0^2 once, shared by two groups
    cube = next(q for q in quads if q[0] == MUL and q[3] == 1 and q[2] >= 2 + len(p.constants))
    assert [q for q in quads if q[1] == cube[2]] == [(MUL, cube[2], 1, 1)]   # x1^3 = x1^2 x1
    assert set(ops[0::4]) <= {MUL, ADD}


@needs_toolchain
def test_the_module_refuses_a_malformed_program_or_argument(monkeypatch, tmp_path):
    monkeypatch.setenv(cbackend.ENV_CACHE, str(tmp_path))
    monkeypatch.setenv(cbackend.ENV_SWITCH, "1")
    monkeypatch.setattr(cbackend, "_MODULES", {})
    monkeypatch.setattr(cbackend, "_CFLAGS", (*cbackend._CFLAGS, "-Werror"))
    ctx = mpvi.GMPContext(30)
    run = cbackend.program_runner(ctx.prec)
    assert run is not None
    with ctx.active():
        one, two = ctx.num(1), ctx.num(2)

    def code(*quads):
        return array("i", [x for q in quads for x in q]).tobytes()
    good = code((MUL, 2, 0, 1), (ADD, 3, 2, 1))      # (x c) + c, one variable, one constant
    assert run(good, 4, [two], [one, two], 1, 2, 3) == [4, 6]
    cases = [
        ((code((2, 2, 0, 1)), 4, [two], [one], 1, 1, 3), ValueError, "not a product or sum"),
        ((code((MUL, 1, 0, 0)), 4, [two], [one], 1, 1, 3), ValueError, "into a temporary"),
        ((code((MUL, 2, 0, 9)), 4, [two], [one], 1, 1, 2), ValueError, "registers set before"),
        ((code((MUL, 2, 0, 3), (ADD, 3, 2, 1)), 4, [two], [one], 1, 1, 3), ValueError,
         "registers set before"),
        ((good, 4, [two], [one], 1, 1, 0 + 5), ValueError, "register counts"),
        ((code((MUL, 2, 0, 1)), 4, [two], [one], 1, 1, 3), ValueError, "output register"),
        ((good[:-1], 4, [two], [one], 1, 1, 3), ValueError, "whole quadruples"),
        ((good, 4, [two], [one, two], 1, 1, 3), ValueError, "1 inputs expected"),
        ((good, 4, [two], [one, 2], 1, 2, 3), TypeError, "item 1 is int"),
        ((good, 4, [2], [one], 1, 1, 3), TypeError, "constants must be gmpy2 mpfr"),
        (("x", 4, [two], [one], 1, 1, 3), TypeError, "program must be bytes"),
        ((good, 4, [two], [one], 1, 1), TypeError, "7 arguments"),
    ]
    for args, error, words in cases:
        with pytest.raises(error, match=words):
            run(*args)
    assert run(good, 4, [two], [one], 1, 1, 3) == [4]   # still usable afterwards


def test_values_of_the_wrong_shape_are_refused():
    ctx = mpvi.GMPContext(20)
    p = horner_program([((1, 1), Fraction(1))], 2)
    with ctx.active():
        x = [ctx.num(1)] * 3
    with pytest.raises(ValueError, match="2 sequences of 3 numbers expected"):
        run_program(p, [x], ctx, 3)
    with pytest.raises(ValueError, match="2 sequences of 3 numbers expected"):
        run_program(p, [x, x[:2]], ctx, 3)
