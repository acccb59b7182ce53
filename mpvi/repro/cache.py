"""The on-disk cache of studies (:mod:`mpvi.repro.studies`).

A study is a pure function of its parameters and the number context.  Its result is
stored as one JSON file per (function name, parameters, context name and digits, mpvi
version, a fingerprint of the package's source code, cache format version), named by
the SHA-256 of that identity::

    <cache>/<sha256>.json   {"format": 2, "identity": {...}, "computed_utc": ...,
                             "wall_time_s": ..., "newton": [[scheme, summary], ...],
                             "value": ..., "git_commit": ..., "digest": <sha256>}

``format`` is the version of this layout (:data:`FORMAT`); ``digest`` is the SHA-256 of
the canonical JSON (sorted keys, no spaces) of every other field (:func:`digest`).
Numbers of the context are stored losslessly as ``{"$num": ctx.dump(x)}`` (read back
with ``ctx.num``; :func:`encode` refuses a number that would not come back bit for bit),
numpy arrays as ``{"$array": [...]}``; strings, ints, lists and dicts as themselves.
Files are written atomically (:func:`mpvi.ground.io.atomic_path`).

A read checks the entry (:meth:`DiskCache.load`: a regular file -- ``lstat`` first: a
symbolic link, FIFO, device or directory is never opened, so a read cannot hang -- of at
most :data:`MAX_ENTRY_BYTES`; valid JSON nested at most :data:`MAX_ENTRY_DEPTH` deep, an
object of this format with every field of its type (:func:`check_entry`), the identity
asked for, the digest of its content) and the study decodes its value (:func:`decode`
refuses a ``$num`` that is not a number of the context or longer than a number of its
precision, and a malformed ``$array``).  An absent file is a miss; a file that fails a
check is a *bad entry*, reported in one line on stderr (``mpvi: cache entry <file>: <what
is wrong>; recomputing``) and treated as a miss: the study is recomputed and the file
replaced (a directory in its place cannot be: that is said in one more line).  A bad
entry is never used and never fatal.  The digest guards against corruption and
edits (one changed digit), not against someone who recomputes it.

A cache directory that cannot be written is still read: :func:`mpvi.repro.options.open_cache`
opens a directory it cannot write to as read-only, and the first write that fails
(:meth:`DiskCache.store`) is reported once and ends the writing for the run.  Computed
results are never lost to the cache: they are returned (and written to the outputs)
whether or not their entry could be stored.

In a parallel run (:mod:`mpvi.repro.parallel`) only the parent process writes to the cache: a
reproduction computed in a worker process sees a :class:`TaskCache` (the entries of its
parallel tasks, the cache directory to read, and the entries it computes, sent back).

The default directory is ``.mpvi-cache/`` at the root of a source checkout, else
``~/.cache/mpvi`` (:func:`default_directory`).  The key includes the SHA-256 of every
source file of the ``mpvi`` package (:func:`source_fingerprint`), so a change of the
numerical code never reuses a result computed by other code; each entry also records
the git commit it was computed at.
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

from mpvi import __version__
from mpvi.ground import io

FORMAT = 2
"""Version of the layout of cache entries; bump it when the layout changes."""

FIELDS = ("format", "identity", "computed_utc", "wall_time_s", "newton", "value", "digest")
"""The fields every entry has (``git_commit`` may be absent)."""

NUM, ARRAY = "$num", "$array"

MAX_ENTRY_BYTES = 1 << 30
"""The largest cache entry :meth:`DiskCache.load` reads (a larger file is a bad entry)."""
MAX_ENTRY_DEPTH = 32
"""How deep arrays and objects may nest in a cache entry."""
_HEX64 = re.compile(r"[0-9a-f]{64}")
_NEWTON_FIELDS = ("solves", "total_iterations", "max_iterations", "max_residual")


class CacheError(RuntimeError):
    """A value cannot be stored in the cache as it is, or an entry read from it is bad."""


def warn(message):
    """One line ``mpvi: <message>`` on stderr (a bad entry, a cache that cannot be written)."""
    print(f"mpvi: {message}", file=sys.stderr, flush=True)


def bad_entry(path, what):
    """Report the bad entry in ``path`` (``what`` is wrong with it); it is recomputed."""
    warn(f"cache entry {path}: {what}; recomputing")


def default_directory():
    """``.mpvi-cache/`` at the root of the source checkout, else ``~/.cache/mpvi``."""
    root = io.project_root()
    return root / ".mpvi-cache" if root is not None else Path.home() / ".cache" / "mpvi"


def plain(params):
    """``params`` as JSON data (tuples become lists), the form used in cache identities."""
    try:
        return json.loads(json.dumps(params))
    except TypeError as exc:
        raise CacheError(f"study parameters must be JSON data (str, int, lists, dicts): {exc}") \
            from None


@lru_cache(maxsize=1)
def source_fingerprint():
    """SHA-256 over the paths and contents of the ``mpvi`` package's .py files."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@lru_cache(maxsize=None)
def directory_fingerprint(directory):
    """SHA-256 over the .py files of one directory (the package of a study defined
    outside mpvi, so that a change of any helper it imports from there counts)."""
    digest = hashlib.sha256()
    for path in sorted(Path(directory).glob("*.py")):
        digest.update(path.name.encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def identity(name, params, ctx, module_file=None):
    """What a cache entry is keyed on: the study's name and parameters, the context, mpvi's
    version and source, and the source files next to the module that defines the study (a
    study in a reproduction package is recomputed when that package's code changes)."""
    ident = {"function": name, "parameters": plain(params), "context": ctx.name,
             "digits": ctx.dps, "mpvi_version": __version__, "source": source_fingerprint(),
             "format": FORMAT}
    if module_file is not None:
        ident["module_source"] = directory_fingerprint(str(Path(module_file).resolve().parent))
    return ident


def canonical(data):
    """The canonical JSON text of ``data``: sorted keys, no spaces (objects that are not
    JSON data as their ``str``, as :func:`mpvi.ground.io.write_json` writes them)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)


def key(ident):
    """SHA-256 (hex) of an identity."""
    return hashlib.sha256(canonical(ident).encode("utf-8")).hexdigest()


def digest(record):
    """SHA-256 (hex) of the canonical JSON of a cache entry without its ``digest`` field."""
    body = {k: v for k, v in record.items() if k != "digest"}
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


def check_entry(text, ident):
    """The cache entry for ``ident`` in ``text`` (the contents of its file, bytes or str),
    checked: valid JSON nested at most :data:`MAX_ENTRY_DEPTH` deep, an object of format
    :data:`FORMAT` with all :data:`FIELDS` of their types, the identity ``ident`` and a
    matching digest.  Raises :class:`CacheError` saying what is wrong."""
    try:
        entry = io.parse_json(text, MAX_ENTRY_DEPTH)
    except ValueError as exc:
        raise CacheError(str(exc).removeprefix("is ")) from None
    if not isinstance(entry, dict):
        raise CacheError(f"not a JSON object but a {type(entry).__name__}")
    if entry.get("format") != FORMAT:
        found = ("no cache format" if "format" not in entry
                 else f"cache format {canonical(entry['format'])[:40]}")
        raise CacheError(f"{found} (this mpvi reads format {FORMAT})")
    missing = [f for f in FIELDS if f not in entry]
    if missing:
        raise CacheError(f"missing field(s) {', '.join(missing)}")
    problem = _field_problem(entry)
    if problem:
        raise CacheError(problem)
    if entry["identity"] != ident:
        raise CacheError("it holds the entry of another identity (study, parameters, context "
                         "or source)")
    if entry["digest"] != digest(entry):
        raise CacheError("its content does not match its digest (it was changed after it was "
                         "written)")
    return entry


def _number(x, integer=False):
    """Whether ``x`` is a non-negative JSON number (an integer if ``integer``) that a float
    holds (not 10**400, which ``float`` refuses)."""
    if isinstance(x, bool) or not isinstance(x, int if integer else (int, float)):
        return False
    return 0 <= x <= 1e300


def _field_problem(entry):
    """What is wrong with the types of an entry's fields (:data:`FIELDS`), or None."""
    if not isinstance(entry["identity"], dict):
        return "identity is not an object"
    if not isinstance(entry["computed_utc"], str) or len(entry["computed_utc"]) > 100:
        return "computed_utc is not a date"
    if not _number(entry["wall_time_s"]):
        return "wall_time_s is not a non-negative number"
    if not isinstance(entry.get("git_commit", ""), str):
        return "git_commit is not a text"
    if not isinstance(entry["digest"], str) or not _HEX64.fullmatch(entry["digest"]):
        return "digest is not 64 hexadecimal digits"
    newton = entry["newton"]
    if not isinstance(newton, list):
        return "newton is not a list"
    for k, item in enumerate(newton):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], dict)
                and all(_number(item[1].get(f), f != "max_residual") for f in _NEWTON_FIELDS)
                and item[1]["solves"] >= 1):
            return (f"newton[{k}] is not [scheme, summary] with the summary's "
                    f"{', '.join(_NEWTON_FIELDS)}")
    return None


def encode(ctx, x, where="value"):
    """``x`` as JSON data; numbers of ``ctx`` as lossless strings (see the module)."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if ctx.is_number(x):
        s = ctx.dump(x)
        back = ctx.num(s)
        if not (back == x or (x != x and back != back)):
            raise CacheError(f"{where}: the number {s} does not read back to the same number "
                             f"in context {ctx.name} (it carries more bits than the context)")
        return {NUM: s}
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, np.ndarray):
        return {ARRAY: [encode(ctx, v, f"{where}[{i}]") for i, v in enumerate(x)]}
    if isinstance(x, (list, tuple)):
        return [encode(ctx, v, f"{where}[{i}]") for i, v in enumerate(x)]
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            if not isinstance(k, str) or k.startswith("$"):
                raise CacheError(f"{where}: dictionary keys must be strings not starting "
                                 f"with '$', found {k!r}")
            out[k] = encode(ctx, v, f"{where}[{k!r}]")
        return out
    raise CacheError(f"{where}: cannot store a {type(x).__name__} ({x!r}) in the cache")


def decode(ctx, x, where="value"):
    """The inverse of :func:`encode` (lists come back as lists, arrays as arrays).  Raises
    :class:`CacheError` naming the place (``value[...]``) of a ``$num`` that is not a
    number of ``ctx`` or of a malformed ``$num`` or ``$array``."""
    if isinstance(x, list):
        return [decode(ctx, v, f"{where}[{i}]") for i, v in enumerate(x)]
    if not isinstance(x, dict):
        return x
    if not any(k.startswith("$") for k in x):
        return {k: decode(ctx, v, f"{where}[{k!r}]") for k, v in x.items()}
    if set(x) == {NUM} and isinstance(x[NUM], str):
        if len(x[NUM]) > 2 * ctx.repr_digits + 40:
            raise CacheError(f"{where}: a number of {len(x[NUM])} characters, more than a "
                             f"number of context {ctx.name} has")
        try:
            return ctx.num(x[NUM])
        except ValueError:
            raise CacheError(f"{where}: {x[NUM]!r} is not a number of context "
                             f"{ctx.name}") from None
    if set(x) == {ARRAY} and isinstance(x[ARRAY], list):
        return np.array([decode(ctx, v, f"{where}[{i}]") for i, v in enumerate(x[ARRAY])],
                        dtype=ctx.dtype)
    raise CacheError(f"{where}: {canonical(x)[:60]} is neither {{{NUM!r}: string}} nor "
                     f"{{{ARRAY!r}: list}}")


class DiskCache:
    """Cache entries in one directory (see the module docstring).  ``writable`` is False
    for a directory that is only read; a write that fails makes it so for the rest of the
    run."""

    def __init__(self, directory, writable=True):
        self.directory = Path(directory)
        self.writable = writable

    def __repr__(self):
        return f"DiskCache({str(self.directory)!r}{'' if self.writable else ', read-only'})"

    def path(self, ident):
        return self.directory / f"{key(ident)}.json"

    def load(self, ident):
        """The entry stored for ``ident`` if it passes :func:`check_entry`, else None:
        absent, or a bad entry (reported, see the module docstring)."""
        path = self.path(ident)
        try:
            data = io.read_regular(path, MAX_ENTRY_BYTES, follow_symlinks=False)
            return check_entry(data, ident)
        except FileNotFoundError:
            return None
        except CacheError as exc:
            what = str(exc)
        except OSError as exc:                   # unreadable
            what = f"cannot read it ({type(exc).__name__}: {exc})"
        except ValueError as exc:                # a FIFO, a link, a directory; too large
            what = f"it {exc}"
        bad_entry(path, what)
        return None

    def store(self, ident, entry):
        """Write ``entry`` (JSON data: what :meth:`mpvi.repro.studies.Study.compute_entry`
        returns, with ``git_commit``) for ``ident`` atomically, with its format, identity
        and digest; returns the path.  If the directory cannot be written, stores nothing
        and returns None: the first failure is reported (one line naming the directory
        and the OS error) and no later entry is tried in this run."""
        if not self.writable:
            return None
        path = self.path(ident)
        record = {"format": FORMAT, "identity": ident, **entry}
        record["digest"] = digest(record)
        if path.is_dir() and not path.is_symlink():    # os.replace cannot replace it
            warn(f"cache entry {path} is a directory: the new result is not stored")
            return None
        try:
            io.write_json(record, path)
        except OSError as exc:
            self.writable = False
            warn(f"cannot write to the cache directory {self.directory} ({type(exc).__name__}: "
                 f"{exc}): new study results are not stored in it in this run")
            return None
        return path

    def origin(self, ident):
        """(from_cache, file) of the entry :meth:`load` returns for ``ident``."""
        return True, str(self.path(ident))


class TaskCache:
    """The cache seen by a reproduction computed in a worker process (:mod:`mpvi.repro.parallel`).

    It holds the entries of the studies computed for the reproduction by parallel tasks
    (or read from the cache by the parent process): ``prefetched`` maps :func:`key` to
    ``(entry, from_cache, cache_file)``.  Other studies are read from ``disk`` (a
    :class:`DiskCache` of the parent's cache directory, if the worker can see it; None
    for none) or computed; the entries computed here are kept in ``new`` (key ->
    ``(identity, entry)``) for the parent process to store: workers never write to the
    cache, so a worker on another machine needs no shared disk."""

    def __init__(self, prefetched, disk=None):
        self.prefetched = dict(prefetched)
        self.disk = disk
        self.new = {}

    def __repr__(self):
        return f"TaskCache({len(self.prefetched)} prefetched, disk={self.disk!r})"

    def load(self, ident):
        k = key(ident)
        if k in self.prefetched:
            return self.prefetched[k][0]
        if k in self.new:
            return self.new[k][1]
        return self.disk.load(ident) if self.disk is not None else None

    def origin(self, ident):
        k = key(ident)
        if k in self.prefetched:
            return self.prefetched[k][1], self.prefetched[k][2]
        return True, (str(self.disk.path(ident)) if self.disk is not None else None)

    def store(self, ident, entry):
        """Keep ``entry`` for the parent process; returns the file it will be stored in
        (None without a cache directory)."""
        self.new[key(ident)] = (ident, entry)
        return self.disk.path(ident) if self.disk is not None else None
