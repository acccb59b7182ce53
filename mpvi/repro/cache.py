"""The on-disk cache of studies (:mod:`mpvi.repro.studies`).

A study is a pure function of its parameters and the number context.  Its result is
stored as one JSON file per (function name, parameters, context name and digits, mpvi
version, a fingerprint of the package's source code, cache format version), named by
the SHA-256 of that identity::

    <cache>/<sha256>.json   {"identity": {...}, "computed_utc": ..., "git_commit": ...,
                             "wall_time_s": ..., "newton": [[scheme, summary], ...],
                             "value": ...}

Numbers of the context are stored losslessly as ``{"$num": ctx.dump(x)}`` (read back
with ``ctx.num``; :func:`encode` refuses a number that would not come back bit for bit),
numpy arrays as ``{"$array": [...]}``; strings, ints, lists and dicts as themselves.
Files are written atomically (:func:`mpvi.io.atomic_path`).  A file that cannot be read
or whose identity differs from the one asked for is a miss: the study is recomputed and
the file replaced.

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
from functools import lru_cache
from pathlib import Path

import numpy as np

from .. import io

FORMAT = 1
"""Version of the layout of cache entries; bump it when the layout changes."""

NUM, ARRAY = "$num", "$array"


class CacheError(RuntimeError):
    """A value cannot be stored in (or read from) the cache as it is."""


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
    from .. import __version__
    ident = {"function": name, "parameters": plain(params), "context": ctx.name,
             "digits": ctx.dps, "mpvi_version": __version__, "source": source_fingerprint(),
             "format": FORMAT}
    if module_file is not None:
        ident["module_source"] = directory_fingerprint(str(Path(module_file).resolve().parent))
    return ident


def key(ident):
    """SHA-256 (hex) of an identity."""
    text = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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


def decode(ctx, x):
    """The inverse of :func:`encode` (lists come back as lists, arrays as arrays)."""
    if isinstance(x, list):
        return [decode(ctx, v) for v in x]
    if isinstance(x, dict):
        if set(x) == {NUM}:
            return ctx.num(x[NUM])
        if set(x) == {ARRAY}:
            return np.array([decode(ctx, v) for v in x[ARRAY]], dtype=ctx.dtype)
        return {k: decode(ctx, v) for k, v in x.items()}
    return x


class DiskCache:
    """Cache entries in one directory (see the module docstring)."""

    def __init__(self, directory):
        self.directory = Path(directory)

    def __repr__(self):
        return f"DiskCache({str(self.directory)!r})"

    def path(self, ident):
        return self.directory / f"{key(ident)}.json"

    def load(self, ident):
        """The entry stored for ``ident``, or None (absent, unreadable or another identity)."""
        path = self.path(ident)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("identity") != ident:
            return None
        return entry

    def store(self, ident, entry):
        """Write ``entry`` (JSON data) for ``ident`` atomically; returns the path."""
        path = self.path(ident)
        io.write_json(dict(entry, identity=ident), path)
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
