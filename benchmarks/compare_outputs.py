"""Compare two directories of reproduction outputs number by number.

    python benchmarks/compare_outputs.py figures /tmp/gmp-figures
    python benchmarks/compare_outputs.py figures /tmp/gmp-figures --rtol 1e-40 --atol 1e-50

Used to check that the fast context (gmpy2 numbers, generated kernels) reproduces the
committed reference-context (mpmath) outputs: for every CSV present in both directories
(``<paper>/<id>*.csv``) the two tables must have the same shape, the same columns and
the same non-numeric cells, and every pair of numbers (a, b) must satisfy

    |a - b| <= rtol * max(|a|, |b|) + atol.

The default rtol = 1e-40 allows the round-off of two differently ordered 64-digit
computations to grow by 24 orders of magnitude along a trajectory (sensitive problems:
the chaotic double pendulum over 10 s, the top over 1000 nutation periods); atol = 1e-50
covers quantities that are themselves round-off at 64 digits (conservation defects of
symplectic schemes, residuals, ~1e-60), whose two values need not share a digit.  The
values that ``mpvi diff`` compares (the JSONs' ``values``) are checked the same way.
Timing columns (:data:`TIMING_COLUMNS`) are skipped.  Rows that say they are float64
results (a ``context`` column reading ``fp``, as in axioms2024_fig07) carry 16 digits, not
64: they (and the values whose key starts with ``fp ``) are compared with ``--fp-rtol``
1e-12 and ``--fp-atol`` 1e-13, the float64
analogues (round-off of two differently ordered float64 computations grown by four
orders; quantities that are themselves float64 round-off, ~1e-16).  Prints one line per reproduction
(numbers compared, the largest relative difference -- numbers below 1e10 atol measured
against that floor -- and the digits it leaves) and exits 1 on any disagreement, naming
the file, row and column.
"""
import argparse
import json
import sys
from pathlib import Path

import mpmath
import pandas as pd

TIMING_COLUMNS = ("wall_s", "ms_per_step", "ratio_vs_simpson", "seconds")
"""Columns that record how long something took: they differ between any two runs."""

REF = mpmath.MPContext()
REF.dps = 100


def number(text):
    """The cell as a 100-digit mpf, or None when it is not a number."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    if not s or s.lower() in ("nan", "inf", "-inf", "true", "false"):
        return None
    try:
        return REF.mpf(s)
    except (ValueError, TypeError):
        return None


def compare_cells(a, b, rtol, atol, where, report):
    """Compare two cells; appends a problem to ``report['bad']``; tracks the worst."""
    x, y = number(a), number(b)
    if x is None or y is None:
        if (x is None) != (y is None) or str(a) != str(b):
            report["bad"].append(f"{where}: {a!r} != {b!r}")
        return
    report["cells"] += 1
    d = abs(x - y)
    big = max(abs(x), abs(y))
    if d > rtol * big + atol:
        report["bad"].append(f"{where}: {a} vs {b} (|diff| {mpmath.nstr(d, 3)})")
    # agreement statistic: relative, with numbers below atol * 1e10 measured against that
    # floor (a round-off-level quantity has no significant digits to agree on)
    if d:                                   # (with --atol 0, two zeros agree exactly)
        report["max_rel"] = max(report["max_rel"], d / max(big, atol * 10 ** 10))


def fp_report(rep):
    """The part of a reproduction's report that counts its float64 numbers (its problems
    go to the same list)."""
    return rep.setdefault("fp", {"cells": 0, "max_rel": REF.zero, "bad": rep["bad"]})


def compare_dirs(left, right, rtol, atol, fp_tol=None):
    reports = {}
    for path in sorted(Path(left).glob("*/*.csv")):
        other = Path(right) / path.parent.name / path.name
        rid = path.stem
        base = rid if (path.parent / f"{rid}.json").exists() else rid.rsplit("_", 1)[0]
        rep = reports.setdefault(base, {"cells": 0, "max_rel": REF.zero, "bad": [], "files": 0})
        if not other.exists():
            rep["bad"].append(f"{other}: missing")
            continue
        rep["files"] += 1
        A = pd.read_csv(path, dtype=str, keep_default_na=False)
        B = pd.read_csv(other, dtype=str, keep_default_na=False)
        if list(A.columns) != list(B.columns) or A.shape != B.shape:
            rep["bad"].append(f"{path.name}: shape/columns {A.shape} {list(A.columns)} vs "
                              f"{B.shape} {list(B.columns)}")
            continue
        fp_rows = (set(i for i, c in enumerate(A["context"]) if c == "fp")
                   if "context" in A.columns and fp_tol is not None else set())
        for col in A.columns:
            if col in TIMING_COLUMNS:
                continue
            for i, (a, b) in enumerate(zip(A[col], B[col])):
                r, t = fp_tol if i in fp_rows else (rtol, atol)
                compare_cells(a, b, r, t, f"{path.name} row {i} column {col}",
                              fp_report(rep) if i in fp_rows else rep)
    for path in sorted(Path(left).glob("*/*.json")):
        other = Path(right) / path.parent.name / path.name
        rep = reports.setdefault(path.stem, {"cells": 0, "max_rel": REF.zero, "bad": [], "files": 0})
        if not other.exists():
            rep["bad"].append(f"{other}: missing")
            continue
        va = json.loads(path.read_text()).get("values", {})
        vb = json.loads(other.read_text()).get("values", {})
        if set(va) != set(vb):
            rep["bad"].append(f"{path.name}: value keys differ: {sorted(set(va) ^ set(vb))}")
        for key in sorted(set(va) & set(vb)):
            fp = fp_tol is not None and key.startswith("fp ")      # a float64 result
            compare_cells(str(va[key]), str(vb[key]), *(fp_tol if fp else (rtol, atol)),
                          f"{path.name} value {key}", fp_report(rep) if fp else rep)
    return reports


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="Exit status 0: every number agrees; 1: some do not.")
    ap.add_argument("left", type=Path, help="output directory (e.g. figures/)")
    ap.add_argument("right", type=Path, help="output directory to compare with")
    ap.add_argument("--rtol", default="1e-40", help="relative tolerance (default 1e-40)")
    ap.add_argument("--atol", default="1e-50", help="absolute tolerance (default 1e-50)")
    ap.add_argument("--fp-rtol", default="1e-12",
                    help="relative tolerance of float64 rows (context column 'fp'; default 1e-12)")
    ap.add_argument("--fp-atol", default="1e-13",
                    help="absolute tolerance of float64 rows (default 1e-13)")
    args = ap.parse_args(argv)
    for d in (args.left, args.right):
        if not d.is_dir():
            ap.error(f"{d} is not a directory")
    try:
        rtol, atol = REF.mpf(args.rtol), REF.mpf(args.atol)
        fp_tol = REF.mpf(args.fp_rtol), REF.mpf(args.fp_atol)
    except ValueError as exc:
        ap.error(f"bad tolerance: {exc}")
    reports = compare_dirs(args.left, args.right, rtol, atol, fp_tol)
    bad = 0
    print(f"{'reproduction':<28} {'numbers':>8} {'max rel diff':>13} {'digits':>7}  status")
    for rid, r in reports.items():
        digits = "-" if r["max_rel"] == 0 else f"{float(-mpmath.log10(r['max_rel'])):.1f}"
        status = "ok" if not r["bad"] else f"{len(r['bad'])} DIFFER"
        fp = r.get("fp")
        extra = (f"  (and {fp['cells']} float64 numbers: max rel diff "
                 f"{mpmath.nstr(fp['max_rel'], 3)})" if fp else "")
        print(f"{rid:<28} {r['cells']:>8} {mpmath.nstr(r['max_rel'], 3):>13} {digits:>7}  {status}{extra}")
        for line in r["bad"][:5]:
            print(f"    {line}")
        bad += bool(r["bad"])
    print(f"\n{len(reports)} reproductions, {bad} with differences beyond rtol={args.rtol}, "
          f"atol={args.atol}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
