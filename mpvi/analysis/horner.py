"""Sparse polynomials at many points: Horner's rule on the trie of their exponents, as a
program of products and sums run once per point.

:func:`horner_program` turns a polynomial -- a list of monomials (exponents, Fraction) in
``variables`` variables -- into a :class:`Program`: the monomials are grouped variable by
variable (the trie of their exponents), each group's sum multiplied by the power of its
variable, the powers x^e taken once each as x^(e-1) x, the coefficients of the monomials
that share all exponents summed exactly (one constant).  So a product shared by monomials
is taken once.  :func:`run_program` runs a program at ``n`` points: in the gmp context by
the compiled module ``mpvi_poly.h`` (:func:`mpvi.compiled.cbackend.program_runner`), else
on numpy arrays of the context's numbers (every operation on all points at once); the
same operations in the same order, each one correctly rounded operation of the context,
so the two give the same bits.  (A modified Hamiltonian of ``reproductions/bea`` has
thousands of monomials, evaluated at the sampled states of every run.)
"""
from __future__ import annotations

from array import array
from fractions import Fraction
from typing import Any, NamedTuple, Sequence

import numpy as np

from mpvi.compiled import cbackend

MUL, ADD = 0, 1
"""The two operations of a program."""


class Program(NamedTuple):
    """Products and sums of registers: the ``variables`` (registers 0 ..), then the
    ``constants`` (exact, converted into the context when run), then the temporaries that
    the ``operations`` (op, destination, left, right) write, in order; the value is
    register ``output``."""
    operations: bytes
    registers: int
    variables: int
    constants: tuple[Fraction, ...]
    output: int


def horner_program(monomials: Sequence[tuple[Sequence[int], Fraction]], variables: int
                   ) -> Program:
    """The :class:`Program` of the polynomial sum c x^m over ``monomials`` [(exponents,
    Fraction)] (exponents: ``variables`` non-negative ints): Horner's rule on the trie of
    the exponents (module doc).  No monomial: the constant 0.

    Parameters
    ----------
    monomials : sequence of (exponents, Fraction)
        The polynomial's monomials; equal exponents may repeat (their coefficients are
        summed exactly).
    variables : int
        The number of variables.

    Returns
    -------
    Program
    """
    constants: list[Fraction] = []
    ops: list[int] = []
    temps = [0]
    # while building, a constant k is _CONSTANT + k and a temporary k is -(k + 1)
    powers: list[list[int]] = [[-1, i] for i in range(variables)]

    def constant(value: Fraction | int) -> int:
        constants.append(Fraction(value))
        return _CONSTANT + len(constants) - 1

    def temp(op: int, a: int, b: int) -> int:
        temps[0] += 1
        ops.extend((op, -temps[0], a, b))
        return -temps[0]

    def power(i: int, e: int) -> int:
        row = powers[i]
        while len(row) <= e:
            row.append(temp(MUL, row[-1], i))
        return row[e]

    def level(terms: list[tuple[Sequence[int], Fraction]], i: int) -> int:
        if i == variables:
            return constant(sum((c for _, c in terms), Fraction(0)))
        groups: dict[int, list[tuple[Sequence[int], Fraction]]] = {}
        for m, c in terms:
            groups.setdefault(m[i], []).append((m, c))
        total = None
        for e in sorted(groups):
            part = level(groups[e], i + 1)
            if e:
                part = temp(MUL, power(i, e), part)
            total = part if total is None else temp(ADD, part, total)
        assert total is not None
        return total

    out = level(list(monomials), 0) if monomials else constant(0)
    first, nc = variables, len(constants)

    def index(r: int) -> int:
        return first + nc - r - 1 if r < 0 else first + r - _CONSTANT if r >= _CONSTANT else r
    code = array("i", (x if k % 4 == 0 else index(x) for k, x in enumerate(ops)))
    return Program(code.tobytes(), first + nc + temps[0], variables, tuple(constants),
                   index(out))


_CONSTANT = 1 << 40
"""While a program is built, constant k is this plus k (above any variable's index)."""


def run_program(program: Program, values: Sequence[Sequence[Any]], ctx: Any, n: int
                ) -> list[Any]:
    """The value of ``program`` at ``n`` points, computed by the compiled module in the
    gmp context (where compiled kernels are on), else on numpy arrays of the context's
    numbers: the same bits.

    Parameters
    ----------
    program : Program
        From :func:`horner_program`.
    values : sequence of sequences
        One sequence of ``n`` numbers of ``ctx`` per variable of the program.
    ctx : number context
    n : int
        The number of points.

    Returns
    -------
    list
        ``n`` numbers of ``ctx``.

    Raises
    ------
    ValueError
        ``values`` is not one sequence of ``n`` numbers per variable.
    """
    if len(values) != program.variables or any(len(v) != n for v in values):
        raise ValueError(f"run_program: {program.variables} sequences of {n} numbers "
                         f"expected, got {[len(v) for v in values]}")
    with ctx.active():
        constants = [ctx.num(c) for c in program.constants]
        runner = cbackend.program_runner(ctx.prec) if cbackend.active(ctx) and n else None
        if runner is not None:
            inputs = [x for point in zip(*values) for x in point]
            try:
                result: list[Any] = runner(program.operations, program.registers, constants,
                                           inputs, program.variables, n, program.output)
                return result
            except TypeError:               # a value that is not an mpfr (a Python int)
                pass
        regs: list[Any] = [np.array(list(v), dtype=object) for v in values] + constants
        regs += [None] * (program.registers - len(regs))
        code = array("i")
        code.frombytes(program.operations)
        for j in range(0, len(code), 4):
            op, d, a, b = code[j:j + 4]
            x, y = regs[a], regs[b]
            if isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
                regs[d] = x * y if op == MUL else x + y
            else:                           # (an array on the left)
                regs[d] = y * x if op == MUL else y + x
        total = regs[program.output]
    return list(total) if isinstance(total, np.ndarray) else [total] * n
