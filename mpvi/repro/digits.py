"""How many printed digits are right: ``mpvi run --check-digits``.

A reproduction's CSVs print the numbers of its context in full: at ``--dps 64`` every
number has 64 significant digits, and the values ``mpvi diff`` compares as many.  Not all
of them are right.  Round-off accumulates over a run, a difference of nearly equal
numbers (an error against a reference, a convergence order) loses the digits the two
have in common, and a number that *is* round-off (an error at the floor of a
convergence plot, a symplecticity defect of a symplectic method) has no correct digit at
all, only a correct magnitude.

``--check-digits`` measures this.  It reruns the reproduction with ``check_extra`` (20)
more digits and the same parameters, and compares the two runs number by number: a
number printed as ``a`` that the longer run gives as ``b`` has

    floor(-log10(|a - b| / |b|))

correct digits (as far as the longer run can tell), at most as many as ``a`` shows and
at least 0; equal numbers have all the digits ``a`` shows, and a number the longer run
gives as 0 has none unless it is 0 too.  Per output column (and per compared value) the
*agreement* is the smallest of these over the rows, with the row where it occurs.  The
provenance JSON records it under ``digits_check`` (:func:`agreement`); ``mpvi diff`` and
``mpvi report`` show it.

What it does not measure: the error of the discretisation, or of a reference solution
computed to a tolerance that is a parameter (both are the same in the two runs, so they
agree); digits that both runs get wrong in the same way (rare, as 20 more digits change
every rounding).  A column whose rows are all equal in the two runs is ``identical``
(exact numbers such as step counts and step sizes, and outputs computed exactly).
"""
from __future__ import annotations

import csv
import io
import math
import re
import statistics
from decimal import Decimal, InvalidOperation, localcontext
from fractions import Fraction

from flint import arb

from mpvi.numbers.arbref import MAX_EXACT_EXPONENT

CHECK_EXTRA = 20
"""How many more digits the checking run carries (``--check-digits``)."""


def _number(text):
    """``text`` as a finite Decimal, or None if it is not a finite number."""
    try:
        d = Decimal(text.strip())
    except (InvalidOperation, AttributeError, ValueError):
        return None
    return d if d.is_finite() else None


def shown_digits(d):
    """The significant digits a finite Decimal shows (``0.00120`` shows 3; ``0`` shows 1)."""
    digits = d.as_tuple().digits
    k = 0
    while k < len(digits) - 1 and digits[k] == 0:
        k += 1
    return len(digits) - k


def compare(a, b):
    """``(digits, identical)`` of the number printed as ``a`` if the more precise run prints
    ``b`` (both strings): its correct digits (module docstring) and whether the two are
    equal; None if ``a`` is not a finite number (a label, an empty cell, nan).  A finite
    ``a`` against a ``b`` that is not a finite number has 0."""
    x = _number(a)
    if x is None:
        return None
    y = _number(b)
    if y is None:
        return 0, False
    shown = shown_digits(x)
    if x == y:
        return shown, True
    if y == 0:
        return 0, False
    with localcontext() as c:
        c.prec = max(len(x.as_tuple().digits), len(y.as_tuple().digits)) + 10
        rel = abs(x - y) / abs(y)
    return max(0, min(shown, math.floor(-rel.log10()))), False


def cell_digits(a, b):
    """The correct digits of :func:`compare`, or None if ``a`` is not a finite number."""
    found = compare(a, b)
    return None if found is None else found[0]


def column_agreement(a, b):
    """The agreement of one column (lists of strings of equal length): ``{"min": digits,
    "row": index of the smallest (0 = first data row), "median": the median over the
    rows, "identical": all equal}``, or None if no cell of ``a`` is a finite number.  The
    smallest and the median are taken over the cells that differ between the two runs (a
    cell they agree on is exact as far as the check can tell, however few digits it
    shows); over all cells if none differ."""
    cells = [(k, *found) for k, (x, y) in enumerate(zip(a, b))
             if (found := compare(x, y)) is not None]
    if not cells:
        return None
    differ = [c for c in cells if not c[2]]
    pool = differ or cells
    row, worst, _ = min(pool, key=lambda c: c[1])
    return {"min": worst, "row": row, "median": statistics.median_low(c[1] for c in pool),
            "identical": not differ}


def _rows(data):
    """A CSV file's bytes as (header, rows) of strings."""
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    return (rows[0], rows[1:]) if rows else ([], [])


def table_agreement(a, b, unchecked=()):
    """The agreement of two CSV files (bytes) of the same output: ``({column: agreement},
    problem)``, where a column with no number or named in ``unchecked`` is left out and
    ``problem`` is a phrase if the two do not have the same columns and rows (then the
    columns are compared on the rows they share), else None."""
    head_a, rows_a = _rows(a)
    head_b, rows_b = _rows(b)
    problem = None
    if head_a != head_b:
        problem = "the more precise run has other columns"
    elif len(rows_a) != len(rows_b):
        problem = (f"the more precise run has {len(rows_b)} rows, not {len(rows_a)} (a "
                   f"run that stops or branches on round-off)")
    out = {}
    for name in head_a:
        if name not in head_b or name in unchecked:
            continue
        i, j = head_a.index(name), head_b.index(name)
        col = column_agreement([r[i] if i < len(r) else "" for r in rows_a],
                               [r[j] if j < len(r) else "" for r in rows_b])
        if col is not None:
            out[name] = col
    return out, problem


def paired_key(key, dps, check_dps, check_values):
    """The key of ``check_values`` that value ``key`` of the ``dps``-digit run is compared
    with: the same key, or the key naming the check's digits where ``key`` names the
    run's (``mp64 max error`` -> ``mp84 max error``); None if there is neither."""
    if key in check_values:
        return key
    other = re.sub(rf"(?<!\d){dps}(?!\d)", str(check_dps), key)
    return other if other in check_values else None


def agreement(files, values, check_files, check_values, dps, check_dps, wall_time_s,
              unchecked=None):
    """The ``digits_check`` record of a ``dps``-digit run (``files``: name -> bytes,
    ``values``: key -> string) against the run with more digits (``check_*``, at
    ``check_dps`` digits, taking ``wall_time_s``): the agreement of every CSV column
    (:func:`column_agreement`) and every value (``{"digits", "identical"}``; paired by
    :func:`paired_key`), the smallest over all of them that are not identical and where it
    is (``smallest``, ``where``; None if all are), and the problems (outputs the two runs
    do not share).  ``unchecked``: column names and value keys -> why they are not
    computed numbers (a wall time, the digits of the run itself), left out and recorded
    as such."""
    unchecked = dict(unchecked or {})
    tables, problems = {}, []
    for name, data in files.items():
        if not name.endswith(".csv"):
            continue
        if name not in check_files:
            problems.append(f"{name}: not written by the more precise run")
            continue
        tables[name], problem = table_agreement(data, check_files[name], unchecked)
        if problem:
            problems.append(f"{name}: {problem}")
    vals = {}
    for key, text in values.items():
        if key in unchecked:
            continue
        other = paired_key(key, dps, check_dps, check_values)
        if other is None:
            problems.append(f"value {key}: not computed by the more precise run")
            continue
        found = compare(str(text), str(check_values[other]))
        if found is not None:
            vals[key] = {"digits": found[0], "identical": found[1]}
    places = [(c["min"], f"{name} column {col!r}, row {c['row'] + 1}")
              for name, cols in tables.items() for col, c in cols.items() if not c["identical"]]
    places += [(v["digits"], f"value {key}") for key, v in vals.items() if not v["identical"]]
    smallest = min(places, key=lambda p: p[0]) if places else (None, None)
    return {"check_digits": check_dps, "wall_time_s": round(wall_time_s, 3),
            "tables": tables, "values": vals, "smallest": smallest[0], "where": smallest[1],
            "unchecked": unchecked, "problems": problems}


def summary(check):
    """One line: the smallest agreement of a ``digits_check`` record and where, or that
    it is stale (kept from a run whose outputs differ: ``reason``)."""
    if check.get("stale"):
        return f"stale, of an earlier run: {check.get('reason', '')}"
    if check["smallest"] is None:
        return f"checked at {check['check_digits']} digits: every number identical"
    return (f"checked at {check['check_digits']} digits: at least {check['smallest']} "
            f"correct digits ({check['where']})")


def proven_digits(printed, ball):
    """The proven digits of the number string ``printed`` against the enclosure ``ball``
    of its exact value: ``-log10(|printed - ball|_upper / |printed|)`` rounded down (0
    if the ball is wider than the number; its significant digits if the ball is exactly
    it -- for a printed zero, its printed digits when the ball is exactly 0, else 0: a
    zero has no relative digits), and the ball as a string.  At flint's current
    precision."""

    text = ball.str(len(printed), radius=True)
    try:
        number = Decimal(printed)
    except InvalidOperation:
        return 0, text
    if number.is_finite() and number == 0:
        exactly_zero = ball.is_exact() and ball == 0
        return (len(printed.lstrip("-").split("e")[0].replace(".", "")) if exactly_zero
                else 0), text
    if (not number.is_finite()
            or abs(number.as_tuple().exponent) > MAX_EXACT_EXPONENT):
        return 0, text                    # no relative digits, or far beyond any enclosure
    value = Fraction(number)
    exact = arb(value.numerator) / arb(value.denominator)
    gap = (abs(exact - ball) / abs(exact)).upper()
    if gap == 0:
        return len(printed.lstrip("-").split("e")[0].replace(".", "").lstrip("0")), text
    lower = (-(gap.log() / arb(10).log())).lower()
    k = math.floor(float(lower))
    while arb(k) > lower:                 # the float rounded up across an integer
        k -= 1
    return max(0, k), text
