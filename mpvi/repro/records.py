"""The records of a reproduction's outputs: written (:func:`write_outputs`) and read back
(:func:`read_provenance`), verified before any use.

A run writes, into the directory of :func:`mpvi.repro.declare.output_paths`,

    <out>/<paper>/<id>.csv    the main table (64-digit numbers as full-precision strings)
    <out>/<paper>/<id>_<name>.csv   further tables, if any
    <out>/<paper>/<id>.png    the plot
    <out>/<paper>/<id>.json   provenance (version, git commit, context, digits, parameters,
                              wall time, studies and whether they came from the cache),
                              the values compared by ``mpvi diff``, the SHA-256 of
                              each file above (``files``) and, with ``--check-digits``,
                              the correct digits of every column and value
                              (``digits_check``, :mod:`mpvi.repro.digits`) and,
                              with ``--certify``, the proven digits of every column
                              and value the reproduction can certify (``certified``,
                              :func:`mpvi.repro.run.certified_block`); a later run without
                              ``--check-digits`` or ``--certify`` keeps either
                              block if its outputs are byte-identical
                              (:func:`carry_digits_check`, :func:`carry_certified`;
                              a certified block of other outputs is dropped with
                              one line on stderr), and ``mpvi verify``
                              (:func:`mpvi.repro.run.verify_results`) proves it again

The JSON is the *commit record* of an id's outputs (:func:`write_outputs`): each file is
atomic (:func:`mpvi.ground.io.atomic_path`), the JSON is written last, and an id's outputs are
those its JSON lists, with those digests.  A run killed between two renames leaves files
that do not match the JSON; every reader (``mpvi diff``, ``list``, ``report``) goes
through :func:`read_provenance`, which checks the record's shape and the digests and
raises :class:`OutputError` (one line naming the file, ``rerun mpvi run <id>``) instead
of reporting old values.

The JSON is itself covered: its last field ``digest`` is ``sha256:<hex>`` of the canonical
JSON (sorted keys, no spaces) of every other field, ``values`` and ``files`` included
(:func:`stamp_record`, :func:`mpvi.ground.io.content_digest`), so that one changed value (a known
discrepancy edited into a "match") or file digest makes the record invalid, never a
result.  :func:`read_provenance` reads the JSON only if it is a regular file (not a
symbolic link, FIFO or device) of at most :data:`MAX_RECORD_BYTES`, nested at most
:data:`MAX_RECORD_DEPTH` deep, and hashes a listed file only if it is a regular file.  A
JSON without a digest (written by an mpvi before it) is invalid: rerun the reproduction.
The digest guards against corruption and edits, not against someone who recomputes it.
"""
from __future__ import annotations

import contextlib
import copy
import csv
import hashlib
import io as _io
import json
import re
import sys
import time
from dataclasses import dataclass, field

from mpvi.ground import io
from mpvi.numbers.context import get_context
from mpvi.repro.declare import output_paths

MAX_RECORD_BYTES = 64 << 20
"""The largest provenance JSON :func:`read_provenance` reads (the committed ones have
at most 61 kB)."""


MAX_RECORD_DEPTH = 16
"""How deep arrays and objects may nest in a provenance JSON (:data:`PROVENANCE` needs 6)."""


MAX_OUTPUT_BYTES = 1 << 30
"""The largest output file (CSV, PNG) whose digest :func:`read_provenance` checks."""


class OutputError(ValueError):
    """An id's outputs cannot be used: its provenance JSON is unreadable or of the wrong
    shape, or a file it lists is missing or does not match its digest (an interrupted
    run).  One line per id, naming the file and ``mpvi run <id>``."""


_SHA256 = re.compile(r"[0-9a-f]{64}")


_STUDY = {"study": str, "from_cache": bool, "wall_time_s": float,
          "computed_utc": (str, None), "computed_at_commit": (str, None)}


_NEWTON = {"steps": int, "mean_iterations_per_step": float, "max_iterations": int,
           "max_final_residual": float, "context_eps": float}


_AGREEMENT = {"min": int, "row": int, "median": int, "identical": bool}


_DECIMAL = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,18})?"
_ENCLOSURE = re.compile(rf"{_DECIMAL}|[+-]?inf|nan|\[(?:(?:{_DECIMAL}|nan) )?\+/- "
                        rf"(?:{_DECIMAL}|inf)\]")
"""A ball as Arb prints it (``[1.25 +/- 3.1e-20]``, ``[+/- 1e-5]``, ``0.5``, ``nan``): what a
certified ``enclosure`` must be, checked when the record is read so that a malformed one
is refused naming its file and field, never an Arb parse error later."""


_PROVEN = {"digits": int, "enclosure": _ENCLOSURE}


_GROWTH = {"t": [float], "digits": [float], "dps": int, "note": str}


_CERTIFIED = {"dps": int, "wall_time_s": float, "statement": str,
              "columns": {str: {str: {"min": int, "median": int}}}, "values": {str: _PROVEN},
              "not_certified": {str: str}, "growth?": {str: _GROWTH},
              "certified_utc?": str, "certified_commit?": str}


_DIGITS = {"check_digits": int, "wall_time_s": float, "tables": {str: {str: _AGREEMENT}},
           "values": {str: {"digits": int, "identical": bool}}, "smallest": (int, None),
           "where": (str, None), "unchecked": {str: str}, "problems": [str],
           "stale?": bool, "reason?": str, "checked_utc?": str, "checked_commit?": str}


PROVENANCE = {"reproduction": str, "paper": str, "item": str, "quick": bool,
              "mpvi_version": str, "git_commit": str, "context": str, "digits": int,
              "parameters": dict, "created_utc": str, "python": str, "mpmath": str,
              "mpmath_backend": str, "numpy": str, "machine": str, "wall_time_s": float,
              "from_cache": bool, "values": {str: str}, "executor?": str,
              "cached_wall_time_s?": float, "newton?": {str: _NEWTON}, "studies?": [_STUDY],
              "files?": {str: _SHA256}, "digits_check?": _DIGITS,
              "certified?": _CERTIFIED,
              "digest?": re.compile(r"sha256:[0-9a-f]{64}")}
"""The shape of a provenance record, as :func:`read_provenance` checks it: field -> kind,
where a kind is a JSON type (``str``, ``bool``, ``int``, ``float`` for any number --
numbers of at most 1e300 in magnitude, which a float holds --, ``dict``, ``list``,
``None`` for null), a tuple of kinds (any of them), ``{str: kind}``
(an object whose every entry is of that kind), ``[kind]`` (a list of that kind), a dict
of fields (an object with these fields; ``name?``: optional) or a pattern (a string
matching it).  Fields not listed (a reproduction's ``extra`` entries, later additions)
may be anything."""


_KIND_NAMES = {str: "a string", bool: "true or false", int: "an integer", float: "a number",
               dict: "an object", list: "a list", None: "null"}


def _kind_name(kind):
    if kind is _ENCLOSURE:
        return "a ball as Arb prints it ([midpoint +/- radius] or a decimal)"
    if isinstance(kind, re.Pattern):
        return f"a string matching {kind.pattern}"
    return _KIND_NAMES.get(kind if isinstance(kind, type) or kind is None else type(kind))


def shown(value, width=40):
    text = json.dumps(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def shape_problem(value, kind, where="record"):
    """Where ``value`` (JSON data) is not of ``kind`` (the notation of :data:`PROVENANCE`),
    as a phrase for one line, or None."""
    if isinstance(kind, tuple):
        if any(shape_problem(value, k, where) is None for k in kind):
            return None
        return (f"{where} should be {' or '.join(_kind_name(k) for k in kind)}, not "
                f"{shown(value)}")
    if isinstance(kind, (dict, list)):
        if not isinstance(value, type(kind)):
            return f"{where} should be {_kind_name(kind)}, not {shown(value)}"
        if isinstance(kind, list):
            entries = [(f"{where}[{k}]", v, kind[0]) for k, v in enumerate(value)]
        elif str in kind:
            entries = [(f"{where}[{json.dumps(k)}]", v, kind[str]) for k, v in value.items()]
        else:
            missing = [f for f in kind if not f.endswith("?") and f not in value]
            if missing:
                return f"{where} has no field {missing[0]!r}"
            entries = [(f"{where}.{f.rstrip('?')}", value[f.rstrip("?")], k)
                       for f, k in kind.items() if f.rstrip("?") in value]
        return next(filter(None, (shape_problem(v, k, w) for w, v, k in entries)), None)
    if isinstance(kind, re.Pattern):
        ok = isinstance(value, str) and kind.fullmatch(value) is not None
    elif kind is None:
        ok = value is None
    elif kind in (int, float):         # and within a float's range (not 10**400)
        ok = (isinstance(value, (int, float) if kind is float else int)
              and not isinstance(value, bool) and abs(value) <= 1e300)
    else:
        ok = isinstance(value, kind)
    return None if ok else f"{where} should be {_kind_name(kind)}, not {shown(value)}"


def _own_file(name, rid):
    """Whether ``name`` is the name of a file that reproduction ``rid`` writes (not its
    JSON, not in another directory)."""
    return ("/" not in name and "\\" not in name and name != f"{rid}.json"
            and name.startswith((f"{rid}.", f"{rid}_")))


def _sha256(path):
    """The SHA-256 (hex) of the regular file ``path`` (:func:`mpvi.ground.io.read_regular`: no
    symbolic link, FIFO or device)."""
    return hashlib.sha256(io.read_regular(path, MAX_OUTPUT_BYTES,
                                          follow_symlinks=False)).hexdigest()


def stamp_record(record):
    """``record`` (a provenance record, JSON data) with its ``digest`` field set last:
    the :func:`mpvi.ground.io.content_digest` of every other field (a digest already there is
    replaced)."""
    body = {k: v for k, v in record.items() if k != "digest"}
    return {**body, "digest": io.content_digest(body)}


def _read_record(jpath):
    """The JSON data of the provenance file ``jpath`` (a regular file, bounded in size
    and depth): raises ``FileNotFoundError``, ``OSError`` or ``ValueError`` (a phrase to
    put after the path)."""
    return io.parse_json(io.read_regular(jpath, MAX_RECORD_BYTES, follow_symlinks=False),
                         MAX_RECORD_DEPTH)


def read_provenance(rep, out_dir):
    """The provenance record of ``rep``'s outputs in ``out_dir``, checked: a dict, or None
    if there is no JSON (not run there).  Raises :class:`OutputError` if the JSON is
    unreadable, not of the shape :data:`PROVENANCE`, the record of another id, or if a
    file it lists (``files``) is missing or does not match its SHA-256 (the commit
    record rule of the module docstring).  Every reader of outputs goes through it."""
    paths = output_paths(rep, out_dir)
    jpath = paths["json"]
    rerun = f"rerun `mpvi run {rep.id}`"
    try:
        record = _read_record(jpath)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputError(f"{rep.id}: cannot read {jpath}: {exc.strerror or exc}") from None
    except ValueError as exc:               # not a regular file, too large, not UTF-8 JSON
        raise OutputError(f"{rep.id}: {jpath} {exc}; {rerun}") from None
    problem = shape_problem(record, PROVENANCE)
    if problem is None and record["reproduction"] != rep.id:
        problem = f"it is the record of {record['reproduction']!r}"
    if problem is None:
        problem = next((f"record.files names {n!r}, not a file of {rep.id}"
                        for n in record.get("files", {}) if not _own_file(n, rep.id)), None)
    if problem:
        raise OutputError(f"{rep.id}: {jpath} is not a valid provenance record: {problem}; "
                          f"{rerun}")
    if "digest" not in record:
        raise OutputError(f"{rep.id}: {jpath} carries no digest of its content (written by an "
                          f"older mpvi, or edited): its values cannot be trusted; {rerun}")
    if record["digest"] != io.content_digest(record):
        raise OutputError(f"{rep.id}: {jpath} does not match its digest: it was changed after "
                          f"mpvi wrote it, and its values cannot be trusted; {rerun}")
    for name, digest in record.get("files", {}).items():
        path = paths["dir"] / name
        try:
            same = _sha256(path) == digest
        except FileNotFoundError:
            raise OutputError(f"{rep.id}: {path} is missing, though its provenance {jpath} "
                              f"lists it; {rerun}") from None
        except OSError as exc:
            raise OutputError(f"{rep.id}: cannot read {path}: {exc.strerror or exc}") from None
        except ValueError as exc:           # not a regular file, too large
            raise OutputError(f"{rep.id}: {path}, listed by its provenance {jpath}, {exc}; "
                              f"{rerun}") from None
        if not same:
            raise OutputError(f"{rep.id}: {path} does not match its provenance {jpath} (an "
                              f"interrupted run?); {rerun}")
    return record


def read_records(reps, out_dir):
    """``{id: record or None}`` (:func:`read_provenance`) of the reproductions ``reps`` in
    ``out_dir``; one :class:`OutputError` with a line for each id whose outputs are
    invalid."""
    records, problems = {}, []
    for rep in reps:
        try:
            records[rep.id] = read_provenance(rep, out_dir)
        except OutputError as exc:
            problems.append(str(exc))
    if problems:
        raise OutputError("\n".join(problems))
    return records


def _listed_files(jpath, rid):
    """The names of ``rid``'s files that the JSON at ``jpath`` lists; empty if it lists
    none or cannot be read."""
    try:
        files = _read_record(jpath).get("files")
    except (OSError, ValueError, AttributeError):
        return set()
    if not isinstance(files, dict):
        return set()
    return {n for n in files if isinstance(n, str) and _own_file(n, rid)}


@dataclass
class Rendered:
    """A computed reproduction, ready to be written: ``files`` (file name -> bytes: the
    CSVs and the PNG), ``values`` (compared by ``mpvi diff``) and ``extra`` (provenance
    entries) as JSON data, and the wall time of ``compute``.  Only bytes and JSON data, so
    that it can come back from a worker process unchanged."""

    id: str
    files: dict
    values: dict
    extra: dict
    wall_time_s: float
    unchecked: dict = field(default_factory=dict)
    """``Output.unchecked``: the columns and value keys that are not computed numbers (a
    wall time), which :func:`carry_digits_check` and :func:`carry_certified` do not compare."""


def json_data(x):
    """``x`` as it will read back from its JSON file (numbers of a context become the
    strings :func:`mpvi.ground.io.write_json` writes)."""
    return json.loads(json.dumps(x, default=str))


def record_context(record):
    """The number context a provenance ``record`` was computed in (its ``context`` name,
    e.g. ``gmp64``, and ``digits``); ValueError if the two disagree or name no context."""
    kind = record["context"].rstrip("0123456789")
    try:
        ctx = get_context(kind, record["digits"])
    except (ValueError, ImportError) as exc:
        raise ValueError(f"its context {record['context']!r} cannot be made here ({exc})") \
            from None
    if ctx.name != record["context"]:
        raise ValueError(f"its context {record['context']!r} does not have its {record['digits']} "
                         f"digits")
    return ctx


def recorded_parameters(rep, record):
    """The parameters a ``record`` of ``rep`` was computed with: the reproduction's own
    (with their Python types) where they read back as the recorded ones, else the
    recorded JSON data."""
    own = rep.parameters(record["quick"])
    return own if json_data(own) == record["parameters"] else copy.deepcopy(record["parameters"])


def write_outputs(rep, rendered, ctx, params, quick, out_dir, extra=None):
    """Write the files of a :class:`Rendered` and then its provenance JSON (``extra``:
    further entries) into ``out_dir``; returns the paths (:func:`output_paths`) and, under
    ``digits_check``, the check a run without ``--check-digits`` kept from the previous
    record or None (:func:`carry_digits_check`), and under ``studies`` the provenance
    entries of its studies (where each was computed: ``mpvi run`` says so).

    The commit record rule (module docstring): each file is written atomically, then the
    JSON, listing the SHA-256 of each file under ``files``, replaces the old one; only
    then are the files of the previous run that this one does not write removed.  First,
    temporaries that a killed run left in the directory are removed
    (:func:`mpvi.ground.io.remove_stale_temporaries`)."""
    started = time.time()
    paths = output_paths(rep, out_dir)
    io.remove_stale_temporaries(paths["dir"], started)
    listed = _listed_files(paths["json"], rep.id)
    extra = dict(extra or {})
    carried = certified = None
    previous = None
    old_files = {}
    if "digits_check" not in rendered.extra or "certified" not in rendered.extra:
        previous = _previous_record(rep, out_dir)
        old_files = old_tables(previous, paths["dir"], rendered)
    if "digits_check" not in rendered.extra:
        carried = carry_digits_check(previous, rendered, ctx, params, quick, old_files)
        if carried is not None:
            extra["digits_check"] = carried
    if "certified" not in rendered.extra:
        kept, dropped = carry_certified(previous, rendered, ctx, params, quick, old_files)
        if kept is not None:
            extra["certified"] = kept
            certified = "kept"
        elif dropped is not None:
            certified = "dropped"
            print(dropped_line(rep, previous["certified"], dropped, quick), file=sys.stderr,
                  flush=True)
    for name, data in rendered.files.items():
        with io.atomic_path(paths["dir"] / name) as tmp:
            tmp.write_bytes(data)
    record = io.provenance(ctx, params, rendered.wall_time_s,
                           {"reproduction": rep.id, "paper": rep.paper, "item": rep.item,
                            "quick": quick, **rendered.extra, **extra})
    record["values"] = rendered.values
    record["files"] = {name: hashlib.sha256(data).hexdigest()
                       for name, data in rendered.files.items()}
    io.write_json(stamp_record(json_data(record)), paths["json"])
    for name in listed - set(rendered.files):
        with contextlib.suppress(FileNotFoundError):
            (paths["dir"] / name).unlink()
    paths["digits_check"], paths["certified"] = carried, certified
    paths["studies"] = rendered.extra.get("studies", [])     # where its studies came from
    return paths


def _previous_record(rep, out_dir):
    """The provenance record of ``rep`` in ``out_dir`` before a run replaces it, or None
    if there is none or it cannot be used (:func:`read_provenance`)."""
    try:
        return read_provenance(rep, out_dir)
    except OutputError:
        return None


def old_tables(previous, directory, rendered):
    """``{name: bytes}`` of the previous record's CSV files in ``directory`` whose digests
    differ from the new ones, read only where the new run declares unchecked columns (a
    wall time: :func:`output_differences` compares the rest); empty otherwise or if unreadable."""
    if previous is None or not rendered.unchecked:
        return {}
    new = {n: hashlib.sha256(d).hexdigest() for n, d in rendered.files.items()}
    out = {}
    for name, digest in previous.get("files", {}).items():
        if name.endswith(".csv") and new.get(name) not in (None, digest):
            try:
                out[name] = io.read_regular(directory / name, MAX_OUTPUT_BYTES,
                                            follow_symlinks=False)
            except (OSError, ValueError):
                continue
            if hashlib.sha256(out[name]).hexdigest() != digest:
                del out[name]
    return out


def _equal_but(old, new, unchecked):
    """Whether two CSV tables (bytes) are equal cell for cell but in the columns named in
    ``unchecked``: the same header, the same rows."""
    try:
        a = list(csv.reader(_io.StringIO(old.decode("utf-8"))))
        b = list(csv.reader(_io.StringIO(new.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error):
        return False
    if not a or not b or a[0] != b[0] or len(a) != len(b):
        return False
    keep = [i for i, name in enumerate(a[0]) if name not in unchecked]
    return all(len(r) == len(t) and [r[i] for i in keep if i < len(r)]
               == [t[i] for i in keep if i < len(t)] for r, t in zip(a[1:], b[1:]))


def carry_digits_check(previous, rendered, ctx, params, quick, old_files=None):
    """The ``digits_check`` that a run without ``--check-digits`` keeps from the
    ``previous`` record of its reproduction (None if that has none): the same if the new
    run is in the same context with the same parameters and its CSV files and values are
    equal to those checked (the check is of these very numbers; ``checked_utc`` and
    ``checked_commit`` then say when and where it ran), else marked ``"stale": true`` with
    the ``reason`` (``mpvi diff`` and ``mpvi report`` show it as stale, and count none of
    its digits)."""
    check = None if previous is None else previous.get("digits_check")
    if check is None:
        return None
    check = dict(check)
    check.setdefault("checked_utc", previous["created_utc"])
    check.setdefault("checked_commit", previous["git_commit"])
    if check.get("stale"):
        return check
    differ = output_differences(previous, rendered, ctx, params, quick, "checked", old_files)
    if differ:
        check["stale"] = True
        check["reason"] = "; ".join(differ) + ": rerun with --check-digits"
    return check


def carry_certified(previous, rendered, ctx, params, quick, old_files=None):
    """``(block, why_dropped)``: the ``certified`` block that a run without ``--certify``
    keeps from the ``previous`` record of its reproduction, by the rule of
    :func:`carry_digits_check` -- the same block if the new run is in the same context
    with the same parameters and its CSV files and values are byte for byte those
    certified, but in the columns and values it declares unchecked (a measured wall time,
    :func:`output_differences`) (the proven digits are of these very numbers; ``certified_utc`` and
    ``certified_commit`` then say when and where it was proven), ``(block, None)``; else
    the block is dropped, ``(None, why)``, never kept stale (a proof of other numbers
    proves nothing of these).  ``(None, None)`` if the previous record has none."""
    block = None if previous is None else previous.get("certified")
    if block is None:
        return None, None
    differ = output_differences(previous, rendered, ctx, params, quick, "certified", old_files)
    if differ:
        return None, "; ".join(differ)
    block = dict(block)
    block.setdefault("certified_utc", previous["created_utc"])
    block.setdefault("certified_commit", previous["git_commit"])
    return block, None


def dropped_line(rep, block, why, quick=False):
    """The one line (stderr) of a run that drops the ``certified`` block of the previous
    record (:func:`carry_certified`): what was dropped, why, and the command that
    certifies again."""
    columns = sum(len(c) for c in block.get("columns", {}).values())
    values = len(block.get("values", {}))
    return (f"mpvi: {rep.id}: dropped its certified block (the proven digits of {columns} "
            f"column(s) and {values} value(s)): {why}; `mpvi run {rep.id}"
            f"{' --quick' if quick else ''} --certify` certifies again")


def output_differences(previous, rendered, ctx, params, quick, what, old_files=None):
    """Why the outputs of ``rendered`` (a run in ``ctx`` with ``params``) are not those
    of the ``previous`` record, as phrases (empty: the same context, parameters, CSV files
    and values); ``what``: "checked" or "certified", for the phrases.  The columns and
    value keys the run declares unchecked (``rendered.unchecked``: a measured wall time)
    are not compared: a CSV file whose digest differs is the same if its previous bytes
    (``old_files``, name -> bytes) equal the new ones in every other column."""
    differ = []
    if previous["context"] != ctx.name:
        differ.append(f"this run is in {ctx.name}, the {what} one in {previous['context']}")
    if previous["parameters"] != json_data(params) or previous["quick"] != quick:
        differ.append("this run has other parameters")
    old = {n: d for n, d in previous.get("files", {}).items() if n.endswith(".csv")}
    new = {n: hashlib.sha256(d).hexdigest() for n, d in rendered.files.items()
           if n.endswith(".csv")}
    files = sorted(n for n in old.keys() | new.keys() if old.get(n) != new.get(n)
                   and not (n in (old_files or {}) and n in rendered.files and _equal_but(
                       old_files[n], rendered.files[n], rendered.unchecked)))
    keys = (previous["values"].keys() | rendered.values.keys()) - set(rendered.unchecked)
    values = sum(previous["values"].get(k) != rendered.values.get(k) for k in keys)
    if files or values:
        changed = [", ".join(files)] if files else []
        changed += [f"{values} value(s)"] if values else []
        differ.append(f"its outputs differ from those {what} ({'; '.join(changed)})")
    return differ


def carried_note(check, certified=None):
    """What became of an earlier ``digits_check`` (:func:`carry_digits_check`) and, if
    ``certified`` is given ("kept" or "dropped", :func:`write_outputs`), of an earlier
    ``certified`` block (:func:`carry_certified`), for the line that ends a run: nothing
    if there was neither."""
    notes = []
    if check is not None and check.get("stale"):
        notes.append(f"its digits_check is stale: {check['reason']}")
    elif check is not None:
        notes.append("its digits_check is kept: the outputs are those checked")
    if certified == "kept":
        notes.append("its certified block is kept: the outputs are those certified")
    elif certified == "dropped":
        notes.append("its certified block was dropped: the outputs changed")
    return "".join(f" ({n})" for n in notes)
