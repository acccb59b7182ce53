"""Published numbers as data, and the diff against reproduced values.

Every reproduction package (:func:`mpvi.repro.reproduction_packages`; this project's is
``reproductions/``) holds in ``published/<paper>_<item>.csv`` what a paper printed,
exactly:

    id,key,quantity,printed,compare,tolerance,source

* ``id``: the reproduction that produces the value; ``key``: the value's name in that
  reproduction's JSON sidecar; ``quantity``: human description;
* ``printed``: the number as printed (decimal string, no thin spaces);
* ``compare``: ``digit`` (match within one unit in the last printed digit; the
  default for printed tables), ``abs`` (|reproduced - printed| <= tolerance),
  ``log10`` (|log10 reproduced - log10 printed| <= tolerance, for "about 1e-3" claims),
  ``magnitude`` (same decade: floor(log10 reproduced) = floor(log10 printed), for "in the
  order of 1e-3"), ``max`` (reproduced <= printed + tolerance), ``min`` (reproduced >=
  printed - tolerance), ``symbolic`` (a printed formula: ``printed`` and the reproduced
  value are sympy expressions, e.g. ``(7*z**4-192*z**2+420)/(2*z**4+18*z**2+420)``,
  with every symbol positive; equal when their difference cancels to 0, or, for
  expressions with radicals, when it vanishes to 40 digits at 12 rational sample
  points -- :func:`formulas_equal`);
* ``tolerance``: required except for ``digit``, ``magnitude`` and ``symbolic``;
  ``source``: where it is printed.

The package's ``discrepancies.csv`` (``id,key,errata,reason``) lists the published values
we do not reproduce and why; each ``errata`` tag (e.g. ``[E4]``) must appear in the
package's ``ERRATA.md``.  A mismatch listed there is ``known``; any other is
``MISMATCH``.  A value absent from a ``--quick`` run is ``skipped`` (reported, not a
failure); absent otherwise it is ``MISSING`` (a failure).
"""
from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

COLUMNS = ["id", "key", "quantity", "printed", "compare", "tolerance", "source"]
COMPARES = {"digit", "abs", "log10", "magnitude", "max", "min", "symbolic"}
UNTOLERANCED = {"digit", "magnitude", "symbolic"}
HOW = {"magnitude": "(same decade as printed)", "symbolic": "(same formula as printed)"}
"""What a match means, printed after it, for the comparisons that are not numeric differences."""
KNOWN_COLUMNS = ["id", "key", "errata", "reason"]
STATUSES = ("match", "known", "MISMATCH", "MISSING", "skipped")
"""Every status of a compared value, in the order they are counted and shown."""
RECORD_FIELDS = ["id", "paper", "item", "key", "quantity", "printed", "reproduced",
                 "compare", "tolerance", "rel_diff", "status", "reason", "errata", "source"]
"""The fields of one compared value in ``mpvi diff --format json|csv`` (:func:`records`)."""
_TAG = re.compile(r"\[E\d+\]")


def errata_tags(text):
    """The ERRATA tags (``[E4]``) in ``text``, without their brackets, in order."""
    return [t[1:-1] for t in _TAG.findall(text or "")]


class PublishedDataError(ValueError):
    """A published-values or discrepancies file is malformed."""


def _decimal(text, where):
    try:
        d = Decimal(text.strip())
    except (InvalidOperation, AttributeError):
        raise PublishedDataError(f"{where}: {text!r} is not a number") from None
    if not d.is_finite():
        raise PublishedDataError(f"{where}: {text!r} is not a finite number")
    return d


@dataclass
class PublishedValue:
    id: str
    key: str
    quantity: str
    printed: str
    compare: str
    tolerance: str
    source: str
    where: str

    def check(self, reproduced: str):
        """(ok, relative difference) for a reproduced number string (for ``symbolic``:
        (ok, None) for a reproduced formula)."""
        if self.compare == "symbolic":
            return formulas_equal(self.printed, reproduced), None
        p = Decimal(self.printed)
        r = Decimal(reproduced)
        rel = abs(r - p) / abs(p) if p != 0 else abs(r - p)
        if self.compare == "digit":
            unit = Decimal(1).scaleb(p.as_tuple().exponent)
            ok = abs(r - p) <= unit
        elif self.compare == "magnitude":
            ok = r > 0 and p > 0 and r.adjusted() == p.adjusted()
        else:
            tol = Decimal(self.tolerance)
            if self.compare == "abs":
                ok = abs(r - p) <= tol
            elif self.compare == "log10":
                ok = r > 0 and abs(math.log10(r) - math.log10(p)) <= float(tol)
            elif self.compare == "max":
                ok = r <= p + tol
            else:
                ok = r >= p - tol
        return ok, rel


def _read_csv(path, columns):
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except OSError as exc:
        raise PublishedDataError(f"cannot read {path}: {exc}") from None
    if not rows or rows[0] != columns:
        raise PublishedDataError(f"{path}: the header must be {','.join(columns)}, "
                                 f"found {','.join(rows[0]) if rows else 'an empty file'}")
    out = []
    for n, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(columns):
            raise PublishedDataError(f"{path}, line {n}: expected {len(columns)} fields, "
                                     f"found {len(row)}")
        out.append((f"{path.name}, line {n}", dict(zip(columns, row))))
    return out


def load_published(path):
    values = []
    seen = set()
    for where, r in _read_csv(path, COLUMNS):
        if r["compare"] not in COMPARES:
            raise PublishedDataError(f"{where}: compare must be one of {sorted(COMPARES)}, "
                                     f"found {r['compare']!r}")
        if r["compare"] == "symbolic":
            parse_formula(r["printed"], where)
        else:
            printed = _decimal(r["printed"], where)
            if r["compare"] in ("log10", "magnitude") and not printed > 0:
                raise PublishedDataError(f"{where}: compare {r['compare']} needs a positive printed value")
        if r["compare"] not in UNTOLERANCED:
            if _decimal(r["tolerance"], where) < 0:
                raise PublishedDataError(f"{where}: negative tolerance")
        if (r["id"], r["key"]) in seen:
            raise PublishedDataError(f"{where}: duplicate key {r['key']!r} for {r['id']}")
        seen.add((r["id"], r["key"]))
        values.append(PublishedValue(where=where, **r))
    return values


def load_all_published(directory=None):
    """Every published value in ``directory`` (``*.csv``), by default in the ``published/``
    directories of all reproduction packages."""
    if directory is not None:
        directories = [Path(directory)]
    else:
        from .run import reproduction_packages
        directories = [pkg.published for pkg in reproduction_packages()]
    values, seen = [], set()
    for d in directories:
        for path in sorted(d.glob("*.csv")):
            for v in load_published(path):
                if (v.id, v.key) in seen:
                    raise PublishedDataError(f"{v.where}: duplicate key {v.key!r} for {v.id}")
                seen.add((v.id, v.key))
                values.append(v)
    return values


def load_known(path=None, errata=None):
    """``{(id, key): row}`` of the known discrepancies in ``path`` (tags checked against
    ``errata``), by default those of all reproduction packages (each checked against its
    own ERRATA.md)."""
    if path is not None:
        return _load_known(Path(path), Path(errata) if errata else Path(path).parent / "ERRATA.md")
    from .run import reproduction_packages
    known = {}
    for pkg in reproduction_packages():
        known.update(_load_known(pkg.discrepancies, pkg.errata))
    return known


def _load_known(path, errata):
    if not path.exists():
        return {}
    text = errata.read_text(encoding="utf-8") if errata.exists() else ""
    known = {}
    for where, r in _read_csv(path, KNOWN_COLUMNS):
        if r["errata"] not in text:
            raise PublishedDataError(f"{where}: errata tag {r['errata']!r} does not appear "
                                     f"in {errata}")
        known[(r["id"], r["key"])] = r
    return known


@dataclass
class DiffRow:
    value: PublishedValue
    reproduced: str | None
    rel: Decimal | None
    status: str
    reason: str = ""


def diff(ids, out_dir, published=None, known=None):
    """Compare every published value of the reproductions ``ids`` with the values in
    ``<out_dir>/<paper>/<id>.json``."""
    published = load_all_published() if published is None else published
    known = load_known() if known is None else known
    from .run import all_reproductions, output_paths
    reps = all_reproductions()
    rows = []
    for rid in ids:
        if rid not in reps:
            raise KeyError(f"unknown reproduction id {rid!r}; known ids: {', '.join(reps)}")
        rep = reps[rid]
        mine = [v for v in published if v.id == rid]
        jpath = output_paths(rep, out_dir)["json"]
        record = {}
        if jpath.exists():
            try:
                record = json.loads(jpath.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise PublishedDataError(f"{jpath} is not valid JSON ({exc}); rerun "
                                         f"`mpvi run {rid}`") from None
        values = record.get("values", {})
        for v in mine:
            rep_value = values.get(v.key)
            if rep_value is None:
                if record.get("quick"):
                    rows.append(DiffRow(v, None, None, "skipped",
                                        f"not computed by the --quick run: `mpvi run {rid}`"))
                else:
                    rows.append(DiffRow(v, None, None, "MISSING",
                                        f"no value in {jpath}: run `mpvi run {rid}`"))
                continue
            ok, rel = v.check(rep_value)
            if ok:
                rows.append(DiffRow(v, rep_value, rel, "match", HOW.get(v.compare, "")))
            elif (rid, v.key) in known:
                k = known[(rid, v.key)]
                rows.append(DiffRow(v, rep_value, rel, "known", f"{k['errata']} {k['reason']}"))
            else:
                rows.append(DiffRow(v, rep_value, rel, "MISMATCH"))
    return rows


def describe_outputs(ids, out_dir):
    """What ``<out_dir>`` holds for ``ids``: e.g. '24 of full runs' or '3 of quick runs,
    1 of full runs, 2 missing' (from the ``quick`` flag of each JSON record)."""
    from .run import all_reproductions, output_paths
    reps = all_reproductions()
    counts = {"of full runs": 0, "of quick runs": 0, "unreadable": 0, "missing": 0}
    for rid in ids:
        jpath = output_paths(reps[rid], out_dir)["json"]
        if not jpath.exists():
            counts["missing"] += 1
            continue
        try:
            quick = json.loads(jpath.read_text(encoding="utf-8")).get("quick")
        except (OSError, ValueError, AttributeError):
            counts["unreadable"] += 1
            continue
        counts["of quick runs" if quick else "of full runs"] += 1
    return ", ".join(f"{n} {what}" for what, n in counts.items() if n) or "nothing"


def format_rows(rows):
    """The rows of :func:`diff` as an aligned text table (:func:`aligned`)."""
    head = ("id", "key", "printed", "reproduced", "rel.diff", "status")
    cells = [(r.value.id, r.value.key, _short(r.value.printed),
              "-" if r.reproduced is None else _short(r.reproduced),
              "-" if r.rel is None else f"{float(r.rel):.1e}",
              r.status + (f"  {r.reason}" if r.reason else "")) for r in rows]
    return aligned([head, *cells], right={2, 3, 4})


def aligned(rows, right=()):
    """Rows of strings as text columns as wide as their widest entry, right-justified for
    the column indices in ``right``; the last column is not padded."""
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]) - 1)]
    return "\n".join(" ".join(c.rjust(w) if k in right else c.ljust(w)
                               for k, (c, w) in enumerate(zip(row, widths))) + " " + row[-1]
                      for row in rows)


def records(rows, reps=None):
    """The rows of :func:`diff` as plain dicts (:data:`RECORD_FIELDS`), one per compared
    value, for ``mpvi diff --format json|csv``: numbers stay the exact strings of the
    published CSV and the JSON sidecar; ``rel_diff`` is a float or None."""
    if reps is None:
        from .run import all_reproductions
        reps = all_reproductions()
    out = []
    for r in rows:
        v, rep = r.value, reps.get(r.value.id)
        out.append({"id": v.id, "paper": rep.paper if rep else None,
                    "item": rep.item if rep else None, "key": v.key, "quantity": v.quantity,
                    "printed": v.printed, "reproduced": r.reproduced, "compare": v.compare,
                    "tolerance": v.tolerance or None,
                    "rel_diff": None if r.rel is None else float(r.rel), "status": r.status,
                    "reason": r.reason, "errata": errata_tags(r.reason) if r.status == "known"
                    else [], "source": v.source})
    return out


def _short(text):
    try:
        d = Decimal(text)
    except InvalidOperation:                 # a formula
        return text if len(text) <= 12 else text[:9] + "..."
    return f"{d:.6g}" if d != 0 else "0"


def parse_formula(text, where="formula"):
    """A printed or reproduced formula as a sympy expression with positive symbols."""
    import sympy as sp
    try:
        expr = sp.sympify(text, rational=True)
    except (sp.SympifyError, SyntaxError, TypeError) as exc:
        raise PublishedDataError(f"{where}: {text!r} is not a formula sympy can read ({exc})") from None
    return expr.subs({s: sp.Symbol(s.name, positive=True) for s in expr.free_symbols})


def formulas_equal(printed, reproduced, samples=12, digits=40):
    """Whether two formulas are the same function of their (positive) symbols: the
    difference cancels to 0 (rational functions: a proof), or it vanishes to ``digits``
    digits at ``samples`` rational points (radicals)."""
    import sympy as sp
    p, r = parse_formula(printed, "printed"), parse_formula(reproduced, "reproduced")
    if p == r:                               # also oo, which has no difference
        return True
    d = sp.cancel(sp.together(p - r))
    if d == 0:
        return True
    if not any(not e.exp.is_Integer for e in (p - r).atoms(sp.Pow)):
        return False                         # a nonzero rational function
    syms = sorted(d.free_symbols, key=lambda s: s.name)
    for k in range(1, samples + 1):
        point = {s: sp.Rational(37 * k + 5 * j, 29) for j, s in enumerate(syms)}
        scale = max(1, abs(sp.N(p.subs(point), digits + 10)))
        if abs(sp.N(d.subs(point), digits + 10)) > scale * sp.Rational(1, 10 ** digits):
            return False
    return True
