"""The reproduction framework.

Reproductions live in installed *reproduction packages*: packages that declare an entry
point in the group ``mpvi.reproductions`` (this project's ``reproductions/``, installed as
the package ``mpvi_papers``, does so in pyproject.toml: ``mpvi-papers = "mpvi_papers"``).  mpvi never imports such a package by
name; :func:`reproduction_packages` finds them through the entry points.  A package holds
one script per figure or table, ``<paper>_<item>.py``, and next to them (at the
package's ``ROOT``, default its directory) ``published/*.csv``, ``ERRATA.md`` and
``discrepancies.csv`` (see :mod:`mpvi.repro.published`).

A script defines ``REPRODUCTION``, a :class:`Reproduction`: a parameter set (``params``,
with smaller ``quick`` overrides), a ``compute(run)`` function that calls the library and
returns an :class:`Output`, a ``plot(output, params)`` function that returns a matplotlib
figure and, optionally, ``refuse(ctx)``: the reason it cannot run in a number context
(checked before any computation), and ``tasks(params)``: the independent studies
``compute`` will ask for (:class:`mpvi.repro.studies.Task`), which ``mpvi run --jobs N`` /
``--scheduler`` (:mod:`mpvi.repro.parallel`) computes side by side before ``compute`` runs.
:func:`execute` does the rest: number context, progress, timing, studies from the
cache, and the atomic writing of

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
                              :func:`certified_block`); a later run without
                              ``--check-digits`` or ``--certify`` keeps either
                              block if its outputs are byte-identical
                              (:func:`carry_digits_check`, :func:`carry_certified`;
                              a certified block of other outputs is dropped with
                              one line on stderr), and ``mpvi verify``
                              (:func:`verify_results`) proves it again

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

``<out>`` is ``figures/`` of the source checkout for full runs and ``quick-figures/`` for
``--quick`` runs, so quick runs never overwrite the committed full results.  Each script
also runs on its own: ``python reproductions/axioms2024_fig02.py --help``.

:func:`execute` is :func:`render` (compute and plot: the files as bytes, the values and
provenance entries as JSON data) followed by :func:`write_outputs`; a parallel run calls
:func:`render` in a worker process and :func:`write_outputs` in the parent, so its files
are the same bytes as those of a serial run.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import difflib
import hashlib
import importlib
import io as _io
import json
import pkgutil
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mpvi.repro import cache as _cache
from mpvi.repro import digits as _digits
from mpvi.ground import io
from mpvi.numbers.context import MAX_DPS, get_context
from mpvi.repro.packages import (ENTRY_POINT_GROUP, PluginError, ReproductionPackage,  # noqa: F401
                       package_of, reproduction_packages)
from mpvi.repro.studies import Recorder, Task

DEFAULT_CONTEXT = "gmp"
"""The number context of the reproductions: gmpy2 numbers with generated kernels.  Every
committed output also agrees with the mpmath reference context (``--context mp``) to the
tolerance of ``benchmarks/compare_outputs.py``."""


class Refused(Exception):
    """A reproduction declared that it cannot run in the requested number context."""

    def __init__(self, rid, context, reason):
        super().__init__(f"{rid}: refused in {context}: {reason}")
        self.rid, self.context, self.reason = rid, context, reason


@dataclass
class Output:
    """What a reproduction computed: ``tables`` (name -> DataFrame; '' is the main
    table), ``values`` (key -> number string, compared by ``mpvi diff``), ``extra``
    provenance entries (e.g. the T used), and ``unchecked``: the columns and value keys
    that are not computed numbers, name -> why (a wall time, the digits of a row's own
    run), which ``--check-digits`` (:mod:`mpvi.repro.digits`) leaves out."""

    tables: dict
    values: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    unchecked: dict = field(default_factory=dict)


NO_CERTIFY_HOOK = "it declares no certified computation (no certify hook)"
"""The default ``Reproduction.not_certifiable``: no more said than that there is no hook."""


@dataclass
class Reproduction:
    """One figure or table: ``params`` (with ``quick`` overrides), ``compute(run)`` ->
    :class:`Output`, ``plot(output, params)`` -> figure, ``refuse(ctx)`` -> the reason
    it cannot run in context ``ctx`` (None: it can; see :func:`needs_mp`), and
    ``tasks(params)`` -> the :class:`mpvi.repro.studies.Task` list of the studies ``compute``
    will ask for through ``run.study`` (see :meth:`declared_tasks`), ``certify(run, output)``
    -> the proven digits of the columns and values it can certify (``mpvi run --certify``,
    :func:`certified_block`; None, the default: ``not_certifiable`` says why none are).
    ``published``: whether
    the paper prints numbers of this item, listed in its package's ``published/*.csv``
    (default True: ``mpvi diff`` reports an error if none are, e.g. a deleted file; False
    for a figure with nothing to compare, and then none may be).  ``module`` is the
    importable module that defines ``REPRODUCTION`` (set by :func:`all_reproductions`;
    a worker process finds the reproduction through it)."""

    id: str
    paper: str
    item: str
    title: str
    params: dict
    compute: Callable
    plot: Callable
    quick: dict = field(default_factory=dict)
    refuse: Callable | None = None
    tasks: Callable | None = None
    published: bool = True
    certify: Callable | None = None
    not_certifiable: str = NO_CERTIFY_HOOK
    module: str | None = field(default=None, compare=False)

    def parameters(self, quick=False):
        p = copy.deepcopy(self.params)
        if quick:
            p.update(copy.deepcopy(self.quick))
        return p

    def refusal(self, ctx):
        """Why this reproduction cannot run in ``ctx``, or None."""
        return self.refuse(ctx) if self.refuse is not None else None

    def declared_tasks(self, params):
        """The studies ``compute`` will ask for with ``params``, as a list of
        :class:`mpvi.repro.studies.Task`: from ``tasks``, or else from ``compute.tasks`` (a
        compute function made by a helper shared by several scripts carries the tasks for
        all of them).  Declaring a task is an optimisation only: a study that is not
        declared is computed by ``compute`` itself, and one that is declared but not
        asked for is wasted work."""
        declare = self.tasks if self.tasks is not None else getattr(self.compute, "tasks", None)
        if declare is None:
            return []
        tasks = list(declare(params))
        for t in tasks:
            if not isinstance(t, Task):
                raise TypeError(f"{self.id}: tasks() must return mpvi.repro.studies.Task objects, "
                                f"not {type(t).__name__}")
        return tasks


def needs_mp(reason):
    """A ``refuse`` hook for a reproduction that cannot run in float64: it refuses every
    context that is not an mp context, giving ``reason``."""
    return lambda ctx: None if ctx.is_mp else reason


class Run(Recorder):
    """Handed to ``compute``: the context, the parameters, progress lines,
    :meth:`solve` (Newton statistics pooled into the provenance) and :meth:`study`
    (a study of :mod:`mpvi.repro.studies`, through the cache if one is given).  ``kept``:
    what ``compute`` hands to the reproduction's ``certify`` hook, which gets this run
    (e.g. the solutions it certifies, rather than solving them again)."""

    def __init__(self, ctx, params, quick, stream=None, cache=None):
        super().__init__(ctx, stream=stream)
        self.params = params
        self.quick = quick
        self.cache = cache
        self.studies = []
        self.kept = {}
        self._t0 = time.perf_counter()

    def progress(self, message):
        print(f"  [{time.perf_counter() - self._t0:7.1f} s] {message}", file=self.stream, flush=True)

    def study(self, study, params):
        """``study(params, ctx)`` through this run's cache; its Newton statistics are pooled
        into this run's and its provenance (wall time of the original computation,
        ``from_cache``) recorded.  Returns the study's value."""
        result = study(params, self.ctx, cache=self.cache, progress=self.progress,
                       stream=self.stream)
        self.newton.extend(result.newton)
        self.studies.append(result.provenance())
        return result.value

    def newton_summary(self):
        """Per scheme: Newton solves (= steps), mean and max iterations per step, and the
        largest final residual norm over all steps of this reproduction."""
        pool = {}
        for scheme, s in self.newton:
            p = pool.setdefault(scheme, {"solves": 0, "iterations": 0, "max_iterations": 0,
                                         "max_residual": 0.0})
            p["solves"] += s["solves"]
            p["iterations"] += s["total_iterations"]
            p["max_iterations"] = max(p["max_iterations"], s["max_iterations"])
            p["max_residual"] = max(p["max_residual"], s["max_residual"])
        return {m: {"steps": s["solves"], "mean_iterations_per_step": s["iterations"] / s["solves"],
                    "max_iterations": s["max_iterations"], "max_final_residual": s["max_residual"],
                    "context_eps": float(self.ctx.eps)}
                for m, s in pool.items()}


def project_path(name):
    """``name`` at the root of the source checkout, or in the working directory outside
    one."""
    return (io.project_root() or Path.cwd()) / name


def default_out_dir(quick=False):
    """``figures/`` (full runs) or ``quick-figures/`` (``--quick``) at the root of the
    source checkout, or of the working directory outside one."""
    return project_path("quick-figures" if quick else "figures")


def all_reproductions():
    """``{id: Reproduction}`` for every script of every installed reproduction package."""
    found = {}
    for pkg in reproduction_packages():
        module = importlib.import_module(pkg.module)
        for mod in sorted(pkgutil.iter_modules(module.__path__), key=lambda m: m.name):
            if mod.name.startswith("_"):
                continue
            script = importlib.import_module(f"{pkg.module}.{mod.name}")
            rep = getattr(script, "REPRODUCTION", None)
            if not isinstance(rep, Reproduction):
                continue
            if rep.id != mod.name:
                raise PluginError(f"{pkg.module}/{mod.name}.py declares id {rep.id!r}")
            if rep.id in found:
                raise PluginError(f"reproduction id {rep.id!r} is defined twice (package "
                                  f"{pkg.name!r} and an earlier one)")
            rep.module = script.__name__
            found[rep.id] = rep
    return found


def get_reproduction(rid):
    reps = all_reproductions()
    if rid not in reps:
        raise KeyError(unknown_id(rid, reps))
    return reps[rid]


def unknown_id(rid, reps):
    """One line for an id that is not one of ``reps``: the closest id (:mod:`difflib`), or
    where to find the ids, never the list of all of them."""
    close = difflib.get_close_matches(rid, list(reps), n=1)
    hint = f"did you mean {close[0]!r}?" if close else "`mpvi list` lists the ids"
    return f"unknown reproduction {rid!r}; {hint}"


def output_paths(rep, out_dir):
    base = Path(out_dir) / rep.paper
    return {"dir": base, "csv": base / f"{rep.id}.csv", "png": base / f"{rep.id}.png",
            "json": base / f"{rep.id}.json"}


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
_PROVEN = {"digits": int, "enclosure": str}
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
    if isinstance(kind, re.Pattern):
        return f"a string matching {kind.pattern}"
    return _KIND_NAMES.get(kind if isinstance(kind, type) or kind is None else type(kind))


def _shown(value, width=40):
    text = json.dumps(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def shape_problem(value, kind, where="record"):
    """Where ``value`` (JSON data) is not of ``kind`` (the notation of :data:`PROVENANCE`),
    as a phrase for one line, or None."""
    if isinstance(kind, tuple):
        if any(shape_problem(value, k, where) is None for k in kind):
            return None
        return (f"{where} should be {' or '.join(_kind_name(k) for k in kind)}, not "
                f"{_shown(value)}")
    if isinstance(kind, (dict, list)):
        if not isinstance(value, type(kind)):
            return f"{where} should be {_kind_name(kind)}, not {_shown(value)}"
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
    return None if ok else f"{where} should be {_kind_name(kind)}, not {_shown(value)}"


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


def _compute(rep, ctx, params, quick, stream, cache, label=""):
    """``rep.compute`` in ``ctx``: (its :class:`Run`, its :class:`Output`, wall time)."""
    run = Run(ctx, params, quick, stream, cache)
    run.progress(f"{rep.id}: {rep.item} of {rep.paper} in context {ctx.name}"
                 f"{' (quick)' if quick else ''}{label}")
    t0 = time.perf_counter()
    try:
        with ctx.active():        # the script's own arithmetic at the context's precision
            out = rep.compute(run)
    except Exception as exc:                 # name the cache if compute used values from it
        cached = [s["cache_file"] for s in run.studies if s["from_cache"]]
        if cached:
            exc.add_note(f"({rep.id} used {len(cached)} study result(s) read from the cache, "
                         f"e.g. {cached[0]}; --no-cache recomputes them)")
        raise
    return run, out, time.perf_counter() - t0


def _csv_files(rep, out):
    return {(f"{rep.id}.csv" if name == "" else f"{rep.id}_{name}.csv"):
            df.to_csv(index=False).encode("utf-8") for name, df in out.tables.items()}


def check_context(ctx):
    """The context of ``--check-digits`` for a run in ``ctx``: the same kind with
    :data:`mpvi.repro.digits.CHECK_EXTRA` more digits.  ValueError for float64, whose
    precision is fixed.  The systems the checking run builds find the models of the first
    run (:mod:`mpvi.model.derivation`) and their printed code: no sympy derivation and no code
    generation is done again, only the numbers are read at the new precision."""
    if not ctx.is_mp:
        raise ValueError(f"--check-digits needs a context whose precision can be raised "
                         f"(gmp or mp), not {ctx.name}")
    return type(ctx)(ctx.dps + _digits.CHECK_EXTRA)


NOT_DECLARED = "not declared certifiable by the reproduction"
"""The ``not_certified`` reason of a column or value that the reproduction's certify hook
neither certified nor said why not (:func:`certified_block`)."""


def certified_block(rep, run, out):
    """The provenance entry ``certified`` of a run with ``--certify``: ``rep.certify(run,
    out)`` (the reproduction's certified computation) summarised, or, for a reproduction
    without one, no column certified and ``not_certified["*"]`` = why.

    ``rep.certify`` returns ``{"statement": what is proven, "columns": {table: {column:
    [proven digits per row]}}, "values": {key: (proven digits, enclosure)}, "not_certified":
    {column or key: why}, "growth": {label: {"t": [times], "digits": [proven digits], "dps":
    int, "note": str}}}`` ("growth" optional: the proven digits of the state against time
    of each certified long run, at most :data:`mpvi.repro.certified.GROWTH_POINTS` points,
    :func:`mpvi.repro.certified.growth_series`); here each certified column becomes
    ``{"min", "median"}`` of its rows' digits, and every column of ``out``'s tables and
    every compared value that is neither certified nor declared not certifiable is listed
    in ``not_certified`` as not declared.  Proven digits are whole digits, rounded down."""
    t0 = time.perf_counter()
    block = {"dps": run.ctx.dps, "statement": "", "columns": {}, "values": {},
             "not_certified": {}}
    if rep.certify is None:
        block["not_certified"]["*"] = rep.not_certifiable
        block["wall_time_s"] = 0.0
        return block
    found = rep.certify(run, out)
    block["statement"] = found["statement"]
    block["not_certified"] = dict(found.get("not_certified", {}))
    for table, columns in found.get("columns", {}).items():
        for column, per_row in columns.items():
            rows = sorted(int(d) for d in per_row)
            block["columns"].setdefault(table, {})[column] = {
                "min": rows[0], "median": rows[(len(rows) - 1) // 2]}
    block["values"] = {k: {"digits": int(d), "enclosure": str(e)}
                       for k, (d, e) in found.get("values", {}).items()}
    if found.get("growth"):
        block["growth"] = {label: {"t": [float(t) for t in g["t"]],
                                   "digits": [float(d) for d in g["digits"]],
                                   "dps": int(g["dps"]), "note": str(g["note"])}
                           for label, g in found["growth"].items()}
    for table, df in out.tables.items():
        for column in df.columns:
            name = column if table == "" else f"{table}.{column}"
            if (column not in block["columns"].get(table, {})
                    and name not in block["not_certified"]):
                block["not_certified"][name] = NOT_DECLARED
    for key in out.values:
        if key not in block["values"] and key not in block["not_certified"]:
            block["not_certified"][key] = NOT_DECLARED
    block["wall_time_s"] = round(time.perf_counter() - t0, 3)
    return block


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


def verify_record(rep, record, stream=None, out_dir=None):
    """Prove the ``certified`` block of ``rep``'s provenance ``record`` again from its
    recorded inputs (context, digits, parameters, quick): ``compute`` and the
    reproduction's certify hook are run again (:func:`certified_block`, no study read
    from a cache), and every recorded claim must hold of the recomputation.  Returns the
    failures, one line each naming the value (empty: every claim holds):

    - a recorded value enclosure that does not contain the recomputed enclosure (Arb's
      ``contains``, both read at a precision that holds every digit written), or more
      proven digits recorded than recomputed, or a value no longer certified;
    - a certified column whose recorded fewest or median proven digits exceed the
      recomputed ones (columns record digits, not balls), or one no longer certified;
    - a growth series claiming more digits than recomputed at some time;
    - outputs (CSV files, compared values) that are not those recorded: the proven digits
      are of the recorded numbers, which the inputs no longer give (columns and values the
      reproduction declares unchecked, a wall time, are compared only if ``out_dir``, the
      results directory holding the recorded files, is not given).

    A record without a ``certified`` block has nothing to verify: ValueError."""
    from flint import arb
    from mpvi.numbers.arbref import arb_precision
    old = record.get("certified")
    if old is None:
        raise ValueError(f"{rep.id}: its record has no certified block (run `mpvi run "
                         f"{rep.id} --certify`)")
    ctx = record_context(record)
    reason = rep.refusal(ctx)
    if reason:
        raise Refused(rep.id, ctx.name, reason)
    params = recorded_parameters(rep, record)
    run, out, _ = _compute(rep, ctx, params, record["quick"], stream, None,
                           ", verifying its certified block")
    with ctx.active():
        new = json_data(certified_block(rep, run, out))
    rendered = Rendered(rep.id, _csv_files(rep, out), json_data(out.values), {}, 0.0,
                        dict(out.unchecked))
    old_files = {} if out_dir is None else _old_tables(record, output_paths(rep, out_dir)["dir"],
                                                      rendered)
    failures = [f"{rep.id}: {d}" for d in _differences(record, rendered, ctx, params,
                                                        record["quick"], "recorded", old_files)]
    if old["dps"] != new["dps"]:
        failures.append(f"{rep.id}: certified at {old['dps']} digits, recomputed at "
                        f"{new['dps']}")

    def lost(what, key, table=None):
        why = new["not_certified"].get(key if table in (None, "") else f"{table}.{key}")
        failures.append(f"{rep.id}: {what} {key!r}: not certified by the recomputation"
                        + (f" ({why})" if why else ""))

    for key, entry in old["values"].items():
        got = new["values"].get(key)
        if got is None:
            lost("value", key)
            continue
        with arb_precision(len(entry["enclosure"]) + len(got["enclosure"]) + 20):
            try:
                recorded, recomputed = arb(entry["enclosure"]), arb(got["enclosure"])
            except ValueError:
                failures.append(f"{rep.id}: value {key!r}: its recorded enclosure "
                                f"{_shown(entry['enclosure'])} is not a ball")
                continue
            if not (recorded.is_finite() and recorded.contains(recomputed)):
                failures.append(f"{rep.id}: value {key!r}: the recorded enclosure "
                                f"{entry['enclosure']} does not contain the recomputed "
                                f"{got['enclosure']}")
        if entry["digits"] > got["digits"]:
            failures.append(f"{rep.id}: value {key!r}: {entry['digits']} proven digits "
                            f"recorded, {got['digits']} recomputed")
    for table, columns in old["columns"].items():
        for column, c in columns.items():
            got = new["columns"].get(table, {}).get(column)
            name = column if table == "" else f"{table}.{column}"
            if got is None:
                lost("column", column, table)
            elif c["min"] > got["min"] or c["median"] > got["median"]:
                failures.append(f"{rep.id}: column {name!r}: {c['min']} (median "
                                f"{c['median']}) proven digits recorded, {got['min']} "
                                f"(median {got['median']}) recomputed")
    for label, g in old.get("growth", {}).items():
        got = new.get("growth", {}).get(label)
        if got is None or got["t"] != g["t"]:
            failures.append(f"{rep.id}: growth {label!r}: not recomputed at the recorded "
                            f"times")
        elif any(a > b for a, b in zip(g["digits"], got["digits"])):
            k = next(i for i, (a, b) in enumerate(zip(g["digits"], got["digits"])) if a > b)
            failures.append(f"{rep.id}: growth {label!r}: {g['digits'][k]} proven digits "
                            f"recorded at t = {g['t'][k]}, {got['digits'][k]} recomputed")
    return failures


def _claims(record):
    """How many claims the certified block of a provenance ``record`` makes (its values,
    columns and growth series; 0 without a block: a reproduction without a certify hook
    records none, and has nothing to verify)."""
    block = record.get("certified")
    if block is None:
        return 0
    return (len(block["values"]) + sum(len(c) for c in block["columns"].values())
            + len(block.get("growth", {})))


def verify_results(out_dir, ids=None, stream=None, report=None):
    """:func:`verify_record` for each reproduction ``ids`` (default every installed one)
    whose record in ``out_dir`` has a certified block that claims anything: a
    :class:`mpvi.Verification` (the claims proven again, the failures, the ids refused in
    their context, the ids without such a block).  ``report(event, k, n, rid, detail)`` is called as each id starts
    (``"start"``) and ends (``"done"`` with its failures, ``"refused"`` with why).  Raises
    :class:`OutputError` for records that are unreadable or do not match their digests,
    KeyError for an unknown id.  This is ``mpvi.verify(directory)`` (the entry point
    ``mpvi.verifiers:results``) and ``mpvi verify``."""
    from mpvi.drive.verification import Verification
    reps = all_reproductions()
    chosen = list(reps) if ids is None else list(ids)
    for rid in chosen:
        if rid not in reps:
            raise KeyError(unknown_id(rid, reps))
    records = read_records([reps[rid] for rid in chosen], out_dir)
    todo = [rid for rid in chosen if records[rid] is not None and _claims(records[rid])]
    result = Verification(skipped=[rid for rid in chosen if rid not in todo])
    for k, rid in enumerate(todo, 1):
        if report is not None:
            report("start", k, len(todo), rid, None)
        try:
            failures = verify_record(reps[rid], records[rid], stream, out_dir)
        except Refused as exc:
            result.refused[rid] = str(exc)
            if report is not None:
                report("refused", k, len(todo), rid, str(exc))
            continue
        except Exception as exc:             # one line per id, then the next id
            failures = [f"{rid}: cannot be recomputed: {type(exc).__name__}: {one_line(exc)}"]
        result.checked += _claims(records[rid]) if not failures else 0
        result.failures.extend(failures)
        if report is not None:
            report("done", k, len(todo), rid, failures)
    return result


def render(rep, ctx, params, quick, stream=None, cache=None, check_digits=False,
           certify=False):
    """Compute and plot ``rep`` with ``params`` in ``ctx``: a :class:`Rendered`.  Studies go
    through ``cache`` (a :class:`mpvi.repro.cache.DiskCache`, a :class:`mpvi.repro.cache.TaskCache`
    or None); progress lines go to ``stream`` (stderr).  With ``check_digits``, ``compute``
    runs a second time in :func:`check_context` and the agreement of the two runs
    (:func:`mpvi.repro.digits.agreement`) becomes the provenance entry ``digits_check``;
    with ``certify``, the reproduction's certified computation becomes the entry
    ``certified`` (:func:`certified_block`; a later run without ``--certify`` keeps it
    only if its outputs are byte-identical, :func:`carry_certified`)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run, out, wall = _compute(rep, ctx, params, quick, stream, cache)
    files = _csv_files(rep, out)
    check = None
    if check_digits:
        cctx = check_context(ctx)
        _, cout, cwall = _compute(rep, cctx, params, quick, stream, cache,
                                  f", checking the digits of the {ctx.dps}-digit run")
        check = _digits.agreement(files, json_data(out.values), _csv_files(rep, cout),
                                  json_data(cout.values), ctx.dps, cctx.dps, cwall,
                                  out.unchecked)
        run.progress(f"{rep.id}: {_digits.summary(check)}")
    certified = None
    if certify:
        with ctx.active():
            certified = certified_block(rep, run, out)
        run.progress(f"{rep.id}: certified in {certified['wall_time_s']:.1f} s")
    with ctx.active():
        fig = rep.plot(out, params)
    png = _io.BytesIO()
    fig.savefig(png, dpi=120, format="png", bbox_inches="tight")
    plt.close(fig)
    files[f"{rep.id}.png"] = png.getvalue()
    extra = dict(out.extra)
    if run.newton:
        extra["newton"] = run.newton_summary()
    extra["from_cache"] = any(s["from_cache"] for s in run.studies)
    if check is not None:
        extra["digits_check"] = check
    if certified is not None:
        extra["certified"] = certified
    if run.studies:
        extra["studies"] = run.studies
        cached = [s["wall_time_s"] for s in run.studies if s["from_cache"]]
        if cached:
            extra["cached_wall_time_s"] = round(sum(cached), 3)
    return Rendered(rep.id, files, json_data(out.values), json_data(extra), wall,
                    dict(out.unchecked))


def write_outputs(rep, rendered, ctx, params, quick, out_dir, extra=None):
    """Write the files of a :class:`Rendered` and then its provenance JSON (``extra``:
    further entries) into ``out_dir``; returns the paths (:func:`output_paths`) and, under
    ``digits_check``, the check a run without ``--check-digits`` kept from the previous
    record or None (:func:`carry_digits_check`).

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
        old_files = _old_tables(previous, paths["dir"], rendered)
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
    return paths


def _previous_record(rep, out_dir):
    """The provenance record of ``rep`` in ``out_dir`` before a run replaces it, or None
    if there is none or it cannot be used (:func:`read_provenance`)."""
    try:
        return read_provenance(rep, out_dir)
    except OutputError:
        return None


def _old_tables(previous, directory, rendered):
    """``{name: bytes}`` of the previous record's CSV files in ``directory`` whose digests
    differ from the new ones, read only where the new run declares unchecked columns (a
    wall time: :func:`_differences` compares the rest); empty otherwise or if unreadable."""
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
    import csv
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
    differ = _differences(previous, rendered, ctx, params, quick, "checked", old_files)
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
    :func:`_differences`) (the proven digits are of these very numbers; ``certified_utc`` and
    ``certified_commit`` then say when and where it was proven), ``(block, None)``; else
    the block is dropped, ``(None, why)``, never kept stale (a proof of other numbers
    proves nothing of these).  ``(None, None)`` if the previous record has none."""
    block = None if previous is None else previous.get("certified")
    if block is None:
        return None, None
    differ = _differences(previous, rendered, ctx, params, quick, "certified", old_files)
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


def _differences(previous, rendered, ctx, params, quick, what, old_files=None):
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


CERTIFY_NEEDS_MP = ("--certify needs a multiprecision context (gmp or mp): float64 runs are "
                    "not certified")
"""Why a float64 run refuses ``--certify`` (:func:`execute`, and every id of a parallel
run, :func:`mpvi.repro.parallel.run_parallel`)."""


def execute(rep, context=DEFAULT_CONTEXT, dps=64, quick=False, out_dir=None, stream=None,
            cache=None, check_digits=False, certify=False):
    """Run one reproduction and write its files atomically; returns the paths
    (:func:`output_paths`) and, under ``digits_check``, the check kept from the previous
    run or None (:func:`carry_digits_check`).

    ``out_dir`` defaults to :func:`default_out_dir`; ``cache`` is a
    :class:`mpvi.repro.cache.DiskCache` for the studies, or None (compute them);
    ``check_digits``: also run it with more digits and record how many agree (:func:`render`);
    ``certify``: also record the proven digits (:func:`certified_block`; mp contexts only).
    Raises :class:`Refused` before any computation if the reproduction cannot run in the
    context (or the digits cannot be checked in it), and ``OSError`` if the output
    directory is not writable."""
    t0 = time.perf_counter()
    ctx = get_context(context, dps)
    reason = rep.refusal(ctx)
    if not reason and check_digits:
        reason = rep.refusal(check_context(ctx))
    if not reason and certify and not ctx.is_mp:
        reason = CERTIFY_NEEDS_MP

    if reason:
        raise Refused(rep.id, ctx.name, reason)
    paths = output_paths(rep, out_dir or default_out_dir(quick))
    io.check_writable(paths["dir"], "output directory")
    params = rep.parameters(quick)
    rendered = render(rep, ctx, params, quick, stream, cache, check_digits, certify)
    written = write_outputs(rep, rendered, ctx, params, quick, out_dir or default_out_dir(quick))
    print(f"  [{time.perf_counter() - t0:7.1f} s] {rep.id}: done in {rendered.wall_time_s:.1f} s "
          f"-> {paths['csv'].parent}"
          f"{carried_note(written['digits_check'], written['certified'])}",
          file=stream if stream is not None else sys.stderr, flush=True)
    return written


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


def open_cache(args):
    """The cache of ``--cache DIR`` / ``--no-cache`` (default :func:`mpvi.repro.cache.default_directory`):
    None with ``--no-cache``.  A directory that exists but cannot be written is opened
    read-only, one that cannot be created gives None (no cache); either is reported in one
    line naming the directory and the OS error, and neither stops the run."""
    if args.no_cache:
        return None
    directory = Path(args.cache or _cache.default_directory())
    try:
        return _cache.DiskCache(io.check_writable(directory, "cache directory"))
    except OSError as exc:
        if directory.is_dir():
            _cache.warn(f"{exc}; studies are read from it, new results are not stored")
            return _cache.DiskCache(directory, writable=False)
        _cache.warn(f"{exc}; running without a cache")
        return None


def script_main(rep, argv=None):
    """Command line of a single reproduction script (exit status 0, 1 on an error, 2 on a
    bad option or an unwritable --out, 3 if it refuses the context)."""
    from mpvi.repro.runtimes import Runtimes
    ap = argparse.ArgumentParser(
        prog=f"python reproductions/{rep.id}.py",
        description=f"{rep.item} of {rep.paper}: {rep.title}. Writes <out>/{rep.paper}/{rep.id}"
                    ".csv, .png and .json (provenance). Run time measured alone with "
                    f"--no-cache: {Runtimes().describe(rep)}.",
        epilog="Exit status: 0 done, 1 error, 2 bad option or unwritable --results, "
               "3 refused (the reproduction cannot run in the requested context).")
    add_run_options(ap)
    args = ap.parse_args(argv)
    out = args.results or default_out_dir(args.quick)
    try:
        io.check_writable(out, "output directory")
    except OSError as exc:
        print(f"{ap.prog}: {exc}", file=sys.stderr)
        return 2
    if args.check_digits and args.context == "fp":
        ap.error("--check-digits needs a context whose precision can be raised (gmp or mp), "
                 "not fp")
    if args.certify and args.context == "fp":
        ap.error("--certify needs a multiprecision context (gmp or mp), not fp")
    cache = open_cache(args)
    try:
        execute(rep, args.context, args.dps, args.quick, out, cache=cache,
                check_digits=args.check_digits, certify=args.certify)
    except Refused as exc:
        print(exc, file=sys.stderr)
        return 3
    except Exception as exc:                 # one line, not a traceback
        print(f"{rep.id}: error: {type(exc).__name__}: {one_line(exc)}", file=sys.stderr)
        return 1
    return 0


def one_line(exc):
    """An exception's message and its notes (``add_note``) on one line."""
    text = " ".join([str(exc), *getattr(exc, "__notes__", [])])
    return " ".join(text.split()) or "(no message)"


def add_run_options(ap):
    ap.add_argument("--dps", type=digits, default=64,
                    help=f"significant digits of the gmp and mp contexts (default 64, at "
                         f"least {MIN_DPS}; ignored by fp)")
    ap.add_argument("--context", choices=["gmp", "mp", "fp"], default=DEFAULT_CONTEXT,
                    help="number context: gmp (gmpy2 numbers and generated kernels, --dps "
                         "digits; the default), mp (the mpmath reference, --dps digits) or fp "
                         "(float64).  gmp and mp outputs agree to 1e-40 relative (numbers "
                         "below 1e-50 to 1e-50 absolute): benchmarks/compare_outputs.py")
    ap.add_argument("--quick", action="store_true",
                    help="smaller parameter set (fewer steps) for a fast check; written to "
                         "quick-figures/ unless --results is given")
    add_results_option(ap, "output directory (default: figures/ of the source checkout, "
                           "quick-figures/ with --quick); checked writable before computing")
    ap.add_argument("--check-digits", action="store_true",
                    help=f"also run with {_digits.CHECK_EXTRA} more digits and record, per "
                         f"output column and per compared value, how many digits the two "
                         f"runs agree on (provenance entry digits_check; shown by mpvi diff "
                         f"and mpvi report); about doubles the run time; gmp and mp only")
    ap.add_argument("--certify", action="store_true",
                    help="also prove the digits of every column and compared value the "
                         "reproduction can certify (Arb ball arithmetic: mpvi.certify and "
                         "the enclosed exact references; provenance entry certified, shown "
                         "by mpvi diff); the others are listed with why not; gmp and mp only")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--cache", type=Path, default=None, metavar="DIR",
                       help="cache directory of the shared studies (default: .mpvi-cache/ "
                            "of the source checkout, else ~/.cache/mpvi); one that cannot "
                            "be written is only read, one that cannot be created is not "
                            "used (with a warning)")
    group.add_argument("--no-cache", action="store_true",
                       help="compute every study, neither reading nor writing the cache")


def add_results_option(ap, help, alias=True):
    """``--results DIR``: the one name of the results directory in every command (where
    ``mpvi run`` writes, where ``diff``, ``list`` and ``report`` read); ``alias``: also
    accept ``--out DIR``, its former name for ``run`` and ``diff``, with a notice."""
    ap.add_argument("--results", type=Path, default=None, metavar="DIR", help=help)
    if alias:
        ap.add_argument("--out", type=Path, dest="results", action=DeprecatedAlias,
                        help=argparse.SUPPRESS)


class DeprecatedAlias(argparse.Action):
    """An option's former name: sets the same destination, with a one-line notice on
    stderr naming the option to use."""

    def __call__(self, parser, namespace, values, option_string=None):
        new = "--" + self.dest.replace("_", "-")
        print(f"{parser.prog}: {option_string} is deprecated, use {new} (the same option)",
              file=sys.stderr, flush=True)
        setattr(namespace, self.dest, values)


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v


MIN_DPS = 10
"""The fewest digits ``--dps`` accepts.  The published values have 3-4 digits and the
convergence orders come from differences of errors, so fewer digits give meaningless
outputs (``--dps 1`` wrote ``8.e-2``); float64 is ``--context fp``."""


def digits(text):
    """``--dps``: an integer from :data:`MIN_DPS` to :data:`mpvi.numbers.context.MAX_DPS`."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of digits, got {text!r}") from None
    if v < MIN_DPS:
        raise argparse.ArgumentTypeError(f"expected at least {MIN_DPS} digits, got {v} (for "
                                         f"float64 use --context fp)")
    if v > MAX_DPS:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_DPS} digits, got {v}")
    return v
