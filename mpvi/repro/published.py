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
  points -- :func:`formulas_equal`; ``mpvi diff --certify`` proves it only from a
  certify hook's exact decision, :func:`proof`);
* ``tolerance``: required except for ``digit``, ``magnitude`` and ``symbolic``;
  ``source``: where it is printed.

The package's ``discrepancies.csv`` (``id,key,errata,reason``) lists the published values
we do not reproduce and why; each ``errata`` tag (e.g. ``[E4]``) must appear in the
package's ``ERRATA.md``.  A mismatch listed there is ``known``; any other is
``MISMATCH`` (so is a reproduced value that is not a number or formula).  A value of an
id that has not run is ``MISSING`` (a failure).  A value absent from a ``--quick`` run is
``skipped`` (reported, not a failure) if the full run computes it, or if there is no full
run to tell (the reason says which).

The data is checked before anything is compared (:func:`check_published`, :func:`diff`);
each of these is a :class:`PublishedDataError` naming the file and line (``mpvi`` exit
status 2): a file that is not a regular file or has more than :data:`MAX_DATA_BYTES`, a
malformed row (wrong columns, a field longer than the ``csv`` module's limit, a NUL or
other control character), a byte that is not UTF-8, a number beyond 1e+-1000, an ``id``
that is not a
reproduction, a reproduction that declares published values
(``Reproduction.published``) with none listed (a deleted file or directory) or declares
none with some listed, and a ``key`` that the reproduction does not compute (its full
run has no such value: a misspelt key).
"""
from __future__ import annotations

import csv
import difflib
import io
import math
import re
import textwrap
from dataclasses import dataclass
from decimal import Decimal, Inexact, InvalidOperation, localcontext
from pathlib import Path

from flint import arb

from mpvi.ground import io as _io
from mpvi.ground.expressions import ExpressionError, parse_expression
from mpvi.numbers.arbref import arb_precision
from mpvi.repro.declare import (NO_CERTIFY_HOOK, NOT_DECLARED, all_reproductions, default_out_dir,
                                unknown_id)
from mpvi.repro.digits import proven_digits
from mpvi.repro.packages import all_folders, folder_of, reproduction_packages
from mpvi.repro.records import OutputError, read_provenance, read_records

COLUMNS = ["id", "key", "quantity", "printed", "compare", "tolerance", "source"]
COMPARES = {"digit", "abs", "log10", "magnitude", "max", "min", "symbolic"}
UNTOLERANCED = {"digit", "magnitude", "symbolic"}
HOW = {"magnitude": "(same decade as printed)", "symbolic": "(same formula as printed)"}
"""What a match means, printed after it, for the comparisons that are not numeric differences."""
KNOWN_COLUMNS = ["id", "key", "errata", "reason"]
STATUSES = ("match", "known", "MISMATCH", "MISSING", "skipped")
"""Every status of a compared value, in the order they are counted and shown."""
RECORD_FIELDS = ["id", "paper", "item", "key", "quantity", "printed", "reproduced",
                 "correct_digits", "proven_digits", "proof", "not_proven", "compare",
                 "tolerance", "rel_diff", "status", "reason", "errata", "source"]
"""The fields of one compared value in ``mpvi diff --format json|csv`` (:func:`records`);
``correct_digits``: how many digits of ``reproduced`` a run with more digits confirmed
(``mpvi run --check-digits``), null if not checked; ``proven_digits``: how many digits
of ``reproduced`` its enclosure proves (``mpvi run --certify``), null if not certified;
``proof``: ``"proven match"`` or ``"proven misprint"`` where the enclosure decides the
comparison (:func:`proof`), else null; ``not_proven``: why not (:func:`not_proven`), null
where ``proof`` is set."""
PROOFS = ("proven match", "proven misprint")
"""What a recorded enclosure can prove of a published value (:func:`proof`), in the order
``mpvi diff --certify`` counts them."""
_TAG = re.compile(r"\[E\d+\]")
MAX_DATA_BYTES = 16 << 20
"""The largest published-values, discrepancies or errata file read (the largest
published CSV has 13 kB)."""
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""Characters no data file holds (NUL and the other C0 controls but tab and line ends)."""


def errata_tags(text):
    """The ERRATA tags (``[E4]``) in ``text``, without their brackets, in order."""
    return [t[1:-1] for t in _TAG.findall(text or "")]


class PublishedDataError(ValueError):
    """A published-values or discrepancies file is malformed, or does not fit the
    reproductions; one line per problem, naming the file and line."""


def _decimal(text, where):
    try:
        d = Decimal(text.strip())
    except (InvalidOperation, AttributeError):
        raise PublishedDataError(f"{where}: {text!r} is not a number") from None
    if not d.is_finite():
        raise PublishedDataError(f"{where}: {text!r} is not a finite number")
    if d and abs(d.adjusted()) > 1000:
        raise PublishedDataError(f"{where}: {text[:40]!r} is beyond 1e+-1000, no printed value")
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
        (ok, None) for a reproduced formula).  Raises ValueError if ``reproduced`` is not
        a finite number (for ``symbolic``: not a formula)."""
        if self.compare == "symbolic":
            return formulas_equal(self.printed, reproduced), None
        p = Decimal(self.printed)
        try:
            r = Decimal(reproduced)
        except InvalidOperation:
            raise ValueError(f"the reproduced value {reproduced!r} is not a number") from None
        if not r.is_finite():
            raise ValueError(f"the reproduced value {reproduced!r} is not a finite number")
        try:
            return self._check(p, r)
        except ArithmeticError as exc:       # a Decimal overflow, a float out of range
            raise ValueError(f"the reproduced value {reproduced[:40]!r} cannot be compared "
                             f"({type(exc).__name__})") from None

    def _check(self, p, r):
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


def read_utf8(path):
    """The text of a data file; a :class:`PublishedDataError` naming the file and line of
    a byte that is not UTF-8 or of a NUL or other control character, or the OS error, or
    saying that it is not a regular file of at most :data:`MAX_DATA_BYTES`."""
    path = Path(path)
    try:
        data = _io.read_regular(path, MAX_DATA_BYTES)
    except OSError as exc:
        raise PublishedDataError(f"cannot read {path}: {exc}") from None
    except ValueError as exc:
        raise PublishedDataError(f"{path} {exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PublishedDataError(f"{path}, line {line}: byte 0x{data[exc.start]:02x} is not "
                                 f"UTF-8 (save the file as UTF-8)") from None
    bad = _CONTROL.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise PublishedDataError(f"{path}, line {line}: control character "
                                 f"{bad.group()!r} (no text file holds one)")
    return text


def _read_csv(path, columns):
    path = Path(path)
    reader = csv.reader(io.StringIO(read_utf8(path), newline=""))
    try:
        rows = list(reader)
    except csv.Error as exc:                # a field longer than the csv module's limit
        raise PublishedDataError(f"{path}, line {reader.line_num}: {exc}") from None
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
    directories of every folder of all reproduction packages (each paper folder's own)."""
    if directory is not None:
        directories = [Path(directory)]
    else:
        directories = [f.published for f in all_folders(reproduction_packages())]
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
    ``errata``), by default those of every folder of all reproduction packages (each
    checked against its own ERRATA.md: a paper folder's tags are explained in its folder)."""
    if path is not None:
        return _load_known(Path(path), Path(errata) if errata else Path(path).parent / "ERRATA.md")
    known = {}
    for folder in all_folders(reproduction_packages()):
        known.update(_load_known(folder.discrepancies, folder.errata))
    return known


def _load_known(path, errata):
    if not path.exists():
        return {}
    text = read_utf8(errata) if errata.exists() else ""
    known = {}
    for where, r in _read_csv(path, KNOWN_COLUMNS):
        if r["errata"] not in text:
            raise PublishedDataError(f"{where}: errata tag {r['errata']!r} does not appear "
                                     f"in {errata}")
        known[(r["id"], r["key"])] = r
    return known


ERRATA_INDEX_HEAD = """# Errata, ambiguities and conventions: the index

What the papers printed, what mpvi uses, and the evidence are written in each paper's folder,
`reproductions/<paper>/ERRATA.md`, beside the printed values (`published/`) and the
`discrepancies.csv` whose tags `[En]` they explain (`mpvi diff` marks a published value as
`known` only when its tag is explained in its own folder). Nothing in a `published/` folder has
been changed: it holds what the papers printed. This index is generated from the papers'
files (`mpvi.repro.published.errata_index`; tests/test_published.py checks that it is
current); the tags are numbered across the papers.
"""
"""The opening of ``reproductions/ERRATA.md`` (:func:`errata_index`)."""
_TAGGED_HEADING = re.compile(r"^### (\[E\d+\]) (.*)$", re.M)


def errata_index(packages, base):
    """The text of the errata index (``reproductions/ERRATA.md``): :data:`ERRATA_INDEX_HEAD`,
    then, for every folder of ``packages`` with an ERRATA.md other than ``base``'s own, a
    link to it (relative to the directory ``base``) and its tagged headings, one line each
    (``### [En] title``), in the order written.  Nothing but the links and the headings is
    repeated: the entries are in the papers' files."""
    parts = [ERRATA_INDEX_HEAD]
    for folder in all_folders(packages):
        path = folder.errata
        if path.resolve() == (Path(base) / "ERRATA.md").resolve() or not path.exists():
            continue
        rel = path.resolve().relative_to(Path(base).resolve()).as_posix()
        parts.append(f"\n## [{folder.name.rpartition('/')[2]}]({rel})\n\n")
        parts.extend(f"- {tag} {title.strip()}\n"
                     for tag, title in _TAGGED_HEADING.findall(read_utf8(path)))
    return "".join(parts)


def write_errata_index(packages=None):
    """Write the errata index (:func:`errata_index`) of each reproduction package into its
    ``ERRATA.md`` (atomically); returns the paths written."""
    written = []
    for pkg in reproduction_packages() if packages is None else packages:
        _io.write_text(pkg.errata, errata_index([pkg], pkg.root))
        written.append(pkg.errata)
    return written


@dataclass
class DiffRow:
    value: PublishedValue
    reproduced: str | None
    rel: Decimal | None
    status: str
    reason: str = ""
    digits: int | None = None
    """How many digits of ``reproduced`` agree with a run with more digits
    (``mpvi run --check-digits``, :mod:`mpvi.repro.digits`); None if not checked."""
    proven: int | None = None
    """How many digits of ``reproduced`` its enclosure proves (``mpvi run --certify``);
    None if not certified."""
    proof: str | None = None
    """``"proven match"`` or ``"proven misprint"`` (:func:`proof`), or None."""
    not_proven: str | None = None
    """Why ``proof`` is None (:func:`not_proven`); None where it is set."""


def check_published(published, reps, ids):
    """Check the published values against the reproductions ``reps`` (id ->
    Reproduction): every value's ``id`` must be a reproduction, and each of ``ids`` must
    have published values if it declares some (``Reproduction.published``; a file or the
    directory deleted) and none if it does not.  Raises one :class:`PublishedDataError`
    with a line per problem."""
    problems = []
    for v in published:
        if v.id not in reps:
            close = difflib.get_close_matches(v.id, list(reps), n=1)
            problems.append(f"{v.where}: {v.id!r} is not a reproduction id"
                            + (f" (did you mean {close[0]!r}?)" if close else ""))
    listed = {v.id: v.where for v in reversed(published)}
    for rid in ids:
        rep = reps[rid]
        if rep.published and rid not in listed:
            directory = folder_of(rep, reproduction_packages()).published
            problems.append(f"{rid}: no published values in {directory}/*.csv"
                            f"{'' if directory.is_dir() else ' (no such directory)'}, though "
                            f"it declares some (a deleted file?); restore them, or set "
                            f"published=False in its Reproduction if the paper prints none")
        elif not rep.published and rid in listed:
            problems.append(f"{listed[rid]}: a published value of {rid}, which declares "
                            f"none (published=False in its Reproduction)")
    if problems:
        raise PublishedDataError("\n".join(problems))


def diff(ids, out_dir, published=None, known=None, records=None):
    """Compare every published value of the reproductions ``ids`` with the values in
    ``<out_dir>/<paper>/<id>.json`` (``records``: those already read by
    :func:`mpvi.repro.records.read_records`).  Raises :class:`PublishedDataError` for published
    data that does not fit the reproductions (:func:`check_published`, and a key that
    the reproduction does not compute: its full run has no such value) and
    :class:`mpvi.repro.records.OutputError` for outputs that cannot be used."""
    published = load_all_published() if published is None else published
    known = load_known() if known is None else known
    reps = all_reproductions()
    unknown = [rid for rid in ids if rid not in reps]
    if unknown:
        raise KeyError(unknown_id(unknown[0], reps))
    check_published(published, reps, ids)
    if records is None:
        records = read_records([reps[rid] for rid in ids], out_dir)
    rows, problems, full = [], [], {}
    for rid in ids:
        record = records[rid]
        for v in (v for v in published if v.id == rid):
            rep_value = None if record is None else record["values"].get(v.key)
            if rep_value is not None:
                row = _compare(v, rep_value, known)
                row.digits = checked_digits(record, v.key)
                entry = record.get("certified", {}).get("values", {}).get(v.key)
                if entry is not None:
                    _certified(row, rep_value, entry)
                rows.append(row)
            elif record is None:
                rows.append(DiffRow(v, None, None, "MISSING",
                                    f"not run in {out_dir}: `mpvi run {rid}`"))
            else:
                if rid not in full:
                    full[rid] = _full_record(reps[rid]) if record["quick"] else (None, None)
                row = _absent(v, rid, record, out_dir, *full[rid])
                if isinstance(row, DiffRow):
                    rows.append(row)
                else:
                    problems.append(row)
    if problems:
        raise PublishedDataError("\n".join(problems))
    for row in rows:
        row.not_proven = not_proven(row, records[row.value.id], reps[row.value.id])
    return rows


def not_proven(row, record, rep):
    """Why the recorded enclosure of ``row``'s value (:func:`diff`) proves neither a match
    nor a misprint, for ``mpvi diff --certify``; None if it proves one (``row.proof``).
    ``record``: the provenance record of ``rep``'s run (None: not run).  It reads what
    ``mpvi run --certify`` recorded (the ``certified`` block); it proves nothing itself."""
    if row.proof is not None:
        return None
    rid, v = rep.id, row.value
    if record is None:
        return f"not run: `mpvi run {rid}`"
    if row.reproduced is None:
        return "not computed by the --quick run"
    block = record.get("certified")
    if block is None and rep.certify is not None:
        return (f"no certified run recorded: run `mpvi run {rid}"
                f"{' --quick' if record['quick'] else ''} --certify`")
    if block is None or "*" in block["not_certified"]:
        why = rep.not_certifiable if block is None else block["not_certified"]["*"]
        return ("reproduction declares no certify hook"
                + ("" if why == NO_CERTIFY_HOOK else f": {why}"))
    if v.key not in block["values"]:
        why = block["not_certified"].get(v.key, NOT_DECLARED)
        return "value " + (why if why == NOT_DECLARED else f"not declared certifiable: {why}")
    if row.proven is None:
        return ("recorded value outside its enclosure (or the enclosure wider than it): no "
                "digit proven")
    if v.compare == "symbolic":
        return (f"its comparison ({rule(v)}) is a formula: the recorded difference "
                "printed - reproduced is neither proven 0 nor proven nonzero")
    return "its enclosure straddles a bound of what the printed digits allow"


def _certified(row, reproduced, entry):
    """Put the certified ``entry`` of a value on its row: the proven digits of the
    recorded ``reproduced`` string against the entry's enclosure, recomputed (a recorded
    value outside its enclosure has none, and then nothing is claimed: the row's reason
    says so), and what the enclosure proves of the published value (:func:`proof`)."""

    if row.value.compare == "symbolic":     # a formula: its entry decides it (proof())
        row.proven = entry["digits"]
        row.proof = proof(row.value, entry["enclosure"])
        return
    with arb_precision(len(entry["enclosure"]) + len(reproduced) + 10):
        digits, _ = proven_digits(reproduced, arb(entry["enclosure"]))
    if digits == 0:
        note = (f"the recorded value is outside its certified enclosure {entry['enclosure']}: "
                "no digit is proven")
        row.reason = f"{row.reason}; {note}" if row.reason else note
        return
    row.proven = min(digits, entry["digits"])
    row.proof = proof(row.value, entry["enclosure"])


def checked_digits(record, key):
    """The correct digits of value ``key`` that the record's ``digits_check`` measured
    (:mod:`mpvi.repro.digits`), or None if the run did not check them or its check is
    stale (:func:`mpvi.repro.records.carry_digits_check`)."""
    check = record.get("digits_check", {})
    if check.get("stale"):                   # of other numbers than these
        return None
    entry = check.get("values", {}).get(key)
    return None if entry is None else entry["digits"]


def allowed(v):
    """The numbers the printed value ``v`` allows (what its comparison accepts), as a
    closed Arb ball at flint's current precision, or None where that set is not an
    interval this function knows (``symbolic``; ``log10``, ``max``, ``min``: half-lines
    or logarithmic, not decided here).  ``digit``: printed +- one unit of the last printed
    digit; ``abs``: printed +- tolerance; ``magnitude``: the decade [10^e, 10^(e+1)]."""
    if v.compare not in ("digit", "abs", "magnitude"):
        return None
    p = Decimal(v.printed)
    if v.compare == "magnitude":
        if p <= 0:
            return None
        lo, hi = Decimal(1).scaleb(p.adjusted()), Decimal(1).scaleb(p.adjusted() + 1)
    else:
        half = (Decimal(1).scaleb(p.as_tuple().exponent) if v.compare == "digit"
                else Decimal(v.tolerance))
        # exactly: Decimal's default 28 significant digits would round p +- half (a
        # 30-digit printed value, a tolerance 1e-60 around 1) and move the bounds
        with localcontext() as exact:
            exact.prec = (max(len(p.as_tuple().digits), len(half.as_tuple().digits))
                          + abs(p.adjusted() - half.adjusted()) + 2)
            exact.traps[Inexact] = True
            lo, hi = p - half, p + half
    return arb(str(lo)).union(arb(str(hi)))


def proof(v, enclosure):
    """What a proven ``enclosure`` (a ball string ``[m +/- r]`` of the exact reproduced
    value) says of the published value ``v``: ``"proven match"`` if every number in it is
    allowed by the printed digits (:func:`allowed`), ``"proven misprint"`` if none is
    (the printed digits contradict the proof), None if it straddles the bound or the
    comparison is not an interval.  Decided in ball arithmetic at a precision that holds
    both numbers (the caller's flint precision is restored).

    A ``symbolic`` value (a printed formula) is decided by its certify hook in exact
    arithmetic, and its enclosure is of the difference printed - reproduced: exactly
    ``[0 +/- 0]`` when the two formulas are proven identical (``"proven match"``), a ball
    without 0 (their difference at a point where they are proven to differ) for
    ``"proven misprint"``; anything else decides nothing."""

    digits = max(len(enclosure), len(v.printed), len(v.tolerance or "")) + 10
    with arb_precision(digits):
        ball = arb(enclosure)
        if not ball.is_finite():
            return None
        if v.compare == "symbolic":
            if ball.is_exact() and ball == 0:
                return "proven match"
            return "proven misprint" if not ball.contains(0) else None
        if v.compare in ("max", "min", "log10"):
            return _proof_by_bounds(v, ball)
        bound = allowed(v)
        if bound is None:
            return None
        if bound.contains(ball):
            return "proven match"
        if not bound.overlaps(ball):
            return "proven misprint"
    return None


def _proof_by_bounds(v, ball):
    """:func:`proof` for the comparisons whose allowed set has bounds that are balls
    themselves or no upper/lower bound: ``max`` (r <= printed + tol), ``min`` (r >=
    printed - tol), ``log10`` (r in [p 10^-tol, p 10^tol], p > 0).  Arb's comparisons are
    true only when certain, so each answer is proven; None where the ball straddles a
    bound."""
    p, tol = arb(v.printed), arb(v.tolerance)
    if v.compare == "max":
        lo, hi = None, p + tol
    elif v.compare == "min":
        lo, hi = p - tol, None
    else:
        if not p > 0:
            return None
        lo, hi = p / arb(10) ** tol, p * arb(10) ** tol
    if (lo is None or ball >= lo) and (hi is None or ball <= hi):
        return "proven match"
    if (lo is not None and ball < lo) or (hi is not None and ball > hi):
        return "proven misprint"
    return None


def _compare(v, reproduced, known):
    """The :class:`DiffRow` of the published value ``v`` and its reproduced value."""
    try:
        ok, rel = v.check(reproduced)
        reason = HOW.get(v.compare, "")
    except ValueError as exc:               # not a number, not a formula
        ok, rel, reason = False, None, " ".join(str(exc).split())
    if ok:
        return DiffRow(v, reproduced, rel, "match", reason)
    if (v.id, v.key) in known:
        k = known[(v.id, v.key)]
        return DiffRow(v, reproduced, rel, "known", f"{k['errata']} {k['reason']}")
    return DiffRow(v, reproduced, rel, "MISMATCH", reason)


def _full_record(rep):
    """(record of ``rep``'s full run in ``figures/``, or None if there is no valid one;
    that directory)."""
    full_dir = default_out_dir(False)
    try:
        full = read_provenance(rep, full_dir)
    except OutputError:
        full = None
    return (full if full is not None and not full["quick"] else None), full_dir


def _absent(v, rid, record, out_dir, full, full_dir):
    """A published value that ``record`` (of ``rid``, in ``out_dir``) does not have: a
    ``skipped`` :class:`DiffRow` if the record is of a --quick run and the ``full`` run
    record (:func:`_full_record`) has the value or there is none to tell, else the
    one-line problem of a key the reproduction does not compute."""
    if not record["quick"]:
        return (f"{v.where}: {rid} computes no value {v.key!r} (its full run in {out_dir} "
                f"has none: a misspelt key, or rerun `mpvi run {rid}`)")
    if full is None:
        return DiffRow(v, None, None, "skipped", f"not computed by the --quick run (no full "
                                                 f"run in {full_dir} to confirm the key): "
                                                 f"`mpvi run {rid}`")
    if v.key in full["values"]:
        return DiffRow(v, None, None, "skipped", f"computed by the full run only: "
                                                 f"`mpvi run {rid}`")
    return (f"{v.where}: {rid} computes no value {v.key!r} (neither its --quick run in "
            f"{out_dir} nor its full run in {full_dir} has it: a misspelt key?)")


def describe_outputs(ids, out_dir):
    """What ``<out_dir>`` holds for ``ids``: e.g. '24 of full runs' or '3 of quick runs,
    1 of full runs, 2 missing, 1 invalid' (from the ``quick`` flag of each JSON record;
    invalid: :func:`mpvi.repro.records.read_provenance` refuses it)."""
    reps = all_reproductions()
    counts = {"of full runs": 0, "of quick runs": 0, "missing": 0, "invalid": 0}
    for rid in ids:
        try:
            record = read_provenance(reps[rid], out_dir)
        except OutputError:
            counts["invalid"] += 1
            continue
        if record is None:
            counts["missing"] += 1
        else:
            counts["of quick runs" if record["quick"] else "of full runs"] += 1
    return ", ".join(f"{n} {what}" for what, n in counts.items() if n) or "nothing"


def rule(v):
    """The comparison of the published value ``v`` as a short phrase for a table cell:
    ``±0.001`` (within one unit of the last printed digit, or within an absolute
    tolerance), ``>= 10`` (at least), ``<= 1e-10`` (at most), ``log10 ±0.5``, ``same
    decade``, ``same formula``."""
    if v.compare == "symbolic":
        return "same formula"
    if v.compare == "magnitude":
        return "same decade"
    if v.compare == "digit":
        return "±" + _unit(Decimal(v.printed).as_tuple().exponent)
    tol = Decimal(v.tolerance)
    if v.compare == "abs":
        return f"±{_plain(tol)}"
    if v.compare == "log10":
        return f"log10 ±{_plain(tol)}"
    bound = Decimal(v.printed) + (tol if v.compare == "max" else -tol)
    return f"{'<=' if v.compare == 'max' else '>='} {_plain(bound)}"


def _unit(exponent):
    """``10**exponent`` written short: ``1``, ``0.001``, ``1e-8``, ``1e4``."""
    if exponent == 0:
        return "1"
    if -4 <= exponent < 0:
        return "0." + "0" * (-exponent - 1) + "1"
    return f"1e{exponent}"


def _plain(d):
    """A Decimal written short: positional from 1e-4 to 1e6 (``10``, ``0.5``), else with
    an exponent (``1e-50``, ``2.5e7``)."""
    if d == 0:
        return "0"
    d = d.normalize()
    text = f"{d:f}" if -4 <= d.adjusted() <= 6 else f"{d:e}"
    return text.replace("e+", "e")


NOTE_LINES = 2
"""The lines an explanation (the reason of a known discrepancy) may take under its
table in ``mpvi diff``; a longer one is cut and points to the ERRATA file."""


def format_diff(rows, reps, width, stale=None):
    """The rows of :func:`diff` as text at most ``width`` columns wide (rich tables): a
    heading per reproduction, then a table of its values with the comparison rule
    (:func:`rule`), the correct digits (``--check-digits``; ``stale`` if the id is in
    ``stale``, id -> reason, a check of outputs that have changed since; where some are
    certified, ``estimated/proven`` with the proven digits of ``--certify``) and the
    status, then the explanations (a known discrepancy's, cut to :data:`NOTE_LINES` lines
    with a pointer to ERRATA.md, its key marked ``(proven misprint)`` where the enclosure
    excludes the printed value, :func:`proof`; why a value is missing or skipped, in
    full)."""
    # rich (terminal tables) loaded lazily: heavy, and only for a table on a terminal
    from rich.box import Box
    from rich.console import Console
    from rich.table import Table
    stale = stale or {}
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, markup=False,
                      highlight=False, emoji=False, soft_wrap=False)
    rule_under_head = Box("    \n    \n----\n    \n    \n    \n    \n    \n", ascii=True)

    def say(text, indent=""):
        console.out("\n".join(textwrap.wrap(text, width, initial_indent=indent,
                                            subsequent_indent=indent + "  ",
                                            break_on_hyphens=False)) or "")

    groups = {}
    for r in rows:
        groups.setdefault(r.value.id, []).append(r)
    for rid, group in groups.items():
        rep = reps.get(rid)
        console.out("")
        say(rid if rep is None else f"{rid}: {rep.item} of {rep.paper}, {rep.title}")
        if rid in stale:
            say(f"correct digits: stale, {stale[rid]}", "  ")
        table = Table(box=rule_under_head, show_edge=False, pad_edge=False, padding=0)
        table.add_column("key", overflow="fold", ratio=1)
        proven = any(r.proven is not None for r in group)
        if proven:
            say("digits: estimated (--check-digits) / proven (--certify)", "  ")
        for name in ("printed", "rule", "reproduced", "digits"):
            table.add_column(name, justify="left" if name == "rule" else "right",
                             no_wrap=True, overflow="ellipsis")
        table.add_column("status", no_wrap=True, overflow="ellipsis")
        notes = []
        for r in group:
            tags = errata_tags(r.reason) if r.status == "known" else []
            status = r.status + (f" [{', '.join(tags)}]" if tags else "")
            digits = "stale" if rid in stale else "-" if r.digits is None else str(r.digits)
            if proven:
                digits += "/" + ("-" if r.proven is None else str(r.proven))
            cells = [r.value.key, short_number(r.value.printed), rule(r.value),
                     "-" if r.reproduced is None else short_number(r.reproduced), digits]
            table.add_row(*cells, status)
            key = r.value.key + (" (proven misprint)" if r.proof == "proven misprint" else "")
            if r.status == "known":
                notes.append(_cut(f"{key}: {r.reason}", width, "ERRATA.md"))
            elif r.reason and r.status != "match":
                notes.append(f"{key}: {r.reason}")
        with console.capture() as capture:
            console.print(table)
        console.out("\n".join(line.rstrip() for line in capture.get().splitlines()))
        for note in notes:
            say(note, "  ")
    return buffer.getvalue().rstrip("\n")


def _cut(text, width, pointer):
    """``text`` if it fits in :data:`NOTE_LINES` lines of ``width`` (less an indent of 2),
    else cut at a word with ``... (see <pointer>)``."""
    room = NOTE_LINES * (width - 4) - 10 * NOTE_LINES    # the lines break at words
    if len(text) <= room:
        return text
    tail = f" ... (see {pointer})"
    return text[:max(0, room - len(tail))].rsplit(" ", 1)[0] + tail


def count_line(rows, every):
    """The last line of ``mpvi diff``: ``all 409 values compared: 346 match, 63 known, 0
    mismatch`` (``every``: all reproductions were asked for; else ``12 values
    compared: ...``), with the values missing and skipped when there are any."""
    counts = {s: 0 for s in STATUSES}
    for r in rows:
        counts[r.status] += 1
    parts = [f"{counts['match']} match", f"{counts['known']} known",
             f"{counts['MISMATCH']} mismatch"]
    parts += [f"{counts[s]} {s.lower()}" for s in ("MISSING", "skipped") if counts[s]]
    n = len(rows)
    return (f"{'all ' if every else ''}{n} value{'s' if n != 1 else ''} compared: "
            + ", ".join(parts))


def format_certified(rows, reps, width, every=True):
    """``mpvi diff --certify``: per paper, how many of its published values (the rows of
    :func:`diff`) their recorded enclosures prove matched or misprinted (:func:`proof`),
    and how many are not certifiable, as a table of at most ``width`` columns (rich) whose
    last row is ``all papers`` (``every``: all reproductions were asked for; else
    ``total``); then, per paper, why not: the reasons of
    :func:`not_proven`, grouped (the id in a reason written ``<id>``), each with its count
    and the items it concerns (ids without their paper's prefix)."""
    # rich (terminal tables) loaded lazily: heavy, and only for a table on a terminal
    from rich.box import Box
    from rich.console import Console
    from rich.table import Table
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, markup=False,
                      highlight=False, emoji=False, soft_wrap=False)
    papers = {}
    for r in rows:
        rep = reps.get(r.value.id)
        papers.setdefault(rep.paper if rep is not None else r.value.id, []).append(r)
    table = Table(box=Box("    \n    \n----\n    \n----\n    \n    \n    \n", ascii=True),
                  show_edge=False, pad_edge=False, padding=(0, 1), show_footer=False)
    table.add_column("paper", overflow="fold")
    for name in ("values", *PROOFS, "not certifiable"):
        table.add_column(name, justify="right", no_wrap=True)

    def counts(group):
        proven = [sum(r.proof == p for r in group) for p in PROOFS]
        return [str(len(group)), *map(str, proven), str(len(group) - sum(proven))]

    for paper, group in papers.items():
        table.add_row(paper, *counts(group))
    table.add_section()
    table.add_row("all papers" if every else "total", *counts(rows))
    console.out("\n".join(textwrap.wrap(
        "proven (mpvi run --certify): the published values whose recorded enclosure "
        "proves the comparison", width, subsequent_indent="  ")))
    with console.capture() as capture:
        console.print(table)
    console.out("\n".join(line.rstrip() for line in capture.get().splitlines()))
    for paper, group in papers.items():
        reasons = {}
        for r in group:
            if r.proof is None:
                reason = (r.not_proven or "").replace(r.value.id, "<id>")
                reasons.setdefault(reason, []).append(r.value.id)
        if not reasons:
            continue
        console.out("")
        console.out(f"{paper}: {sum(map(len, reasons.values()))} not certifiable")
        for reason, ids in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            items = ", ".join(rid.removeprefix(f"{paper}_") for rid in dict.fromkeys(ids))
            console.out("\n".join(textwrap.wrap(f"{len(ids):>5}  {reason} ({items})", width,
                                                subsequent_indent=" " * 7,
                                                break_on_hyphens=False)))
    return buffer.getvalue().rstrip("\n")


def certified_line(rows, every):
    """The last line of ``mpvi diff --certify``: ``all papers: 409 values, 85
    proven match, 11 proven misprint, 313 not certifiable`` (``every``: all reproductions
    were asked for; else ``the reproductions asked for: ...``)."""
    proven = [sum(r.proof == p for r in rows) for p in PROOFS]
    n = len(rows)
    return (f"{'all papers' if every else 'the reproductions asked for'}: {n} "
            f"value{'s' if n != 1 else ''}, " + ", ".join(
                f"{k} {p}" for k, p in zip(proven, PROOFS))
            + f", {n - sum(proven)} not certifiable")


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
        reps = all_reproductions()
    out = []
    for r in rows:
        v, rep = r.value, reps.get(r.value.id)
        out.append({"id": v.id, "paper": rep.paper if rep else None,
                    "item": rep.item if rep else None, "key": v.key, "quantity": v.quantity,
                    "printed": v.printed, "reproduced": r.reproduced,
                    "correct_digits": r.digits, "proven_digits": r.proven, "proof": r.proof,
                    "not_proven": r.not_proven,
                    "compare": v.compare,
                    "tolerance": v.tolerance or None,
                    "rel_diff": None if r.rel is None else float(r.rel), "status": r.status,
                    "reason": r.reason, "errata": errata_tags(r.reason) if r.status == "known"
                    else [], "source": v.source})
    return out


def short_number(text):
    try:
        d = Decimal(text)
    except InvalidOperation:                 # a formula
        return text if len(text) <= 10 else text[:7] + "..."
    return f"{d:.6g}" if d != 0 else "0"


def parse_formula(text, where="formula"):
    """A printed or reproduced formula as a sympy expression with positive symbols, read
    by the closed grammar of :func:`mpvi.ground.expressions.parse_expression` (nothing in the
    text runs as code; a name that is not a function or constant is a symbol)."""
    # sympy loaded lazily: heavy (0.5 s), and only formulas need it
    import sympy as sp
    text = str(text)
    try:
        expr = parse_expression(text, what=where, free_symbols=True)
    except ExpressionError as exc:
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise PublishedDataError(f"{where}: {shown!r} is not a formula mpvi can read "
                                 f"({exc.reason})") from None
    return expr.xreplace({s: sp.Symbol(s.name, positive=True) for s in expr.free_symbols})


def formulas_equal(printed, reproduced, samples=12, digits=40):
    """Whether two formulas are the same function of their (positive) symbols: the
    difference cancels to 0 (rational functions: a proof), or it vanishes to ``digits``
    digits at ``samples`` rational points (radicals)."""
    # sympy loaded lazily: heavy (0.5 s), and only formulas need it
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
