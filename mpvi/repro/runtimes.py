"""Measured run times of the reproductions: what ``mpvi list`` shows as the expected run
time, what ``python reproductions/<paper>/<id>.py --help`` states, and the cost hint by which a
parallel run starts the longest reproduction first.

The times are measured, never written by hand: ``python benchmarks/runtimes.py`` runs
``mpvi run --all --jobs 2 --no-cache`` (and its ``--quick`` twin) into a temporary
directory, times each command as a whole, and records into each folder's
``runtimes.json`` (:data:`mpvi.repro.packages.ReproductionFolder.runtimes`: a paper
folder's own), for every reproduction of the folder, the seconds its outputs' provenance records
(:func:`mpvi.repro.report.compute_time`: its own computation plus every study it used,
which is what ``mpvi run <id> --no-cache`` costs when run alone), and its own
computation without the studies a parallel run computes beside it (the scheduling
hint).  A test checks that every registered reproduction has a measured time, so a new
reproduction comes with its measurement.

The file is data mpvi reads back, so it is verified before use (:func:`read_runtimes`):
a bounded regular file, JSON of the shape :data:`SHAPE`, every time a finite
non-negative number, and a SHA-256 digest over its whole content
(:func:`mpvi.ground.io.content_digest`); a file that fails is reported by one line naming the
cause and the times are then unknown ("not measured"), never guessed.
"""
from __future__ import annotations

import datetime
import math
import platform

from mpvi.ground import io
from mpvi.repro.packages import all_folders, folder_of, reproduction_packages

FORMAT = 1
MAX_BYTES = 1 << 20
KINDS = ("full", "quick")

SHAPE = {"format": int, "digest": str, "measured": dict, "full": dict, "quick": dict}
"""The top-level fields of ``runtimes.json``.  ``measured`` maps ``full``/``quick`` to how
that half was measured (``command``, ``wall_s`` of the whole command, ``utc``, ``commit``,
``machine``, ``cores``); ``full`` and ``quick`` map a reproduction id to ``{"seconds":
s, "compute_s": s}``."""


class RuntimesError(ValueError):
    """A ``runtimes.json`` that cannot be used: its message names the file and why."""


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0


def _problem(data):
    if not isinstance(data, dict):
        return "it is not a JSON object"
    for name, kind in SHAPE.items():
        if name not in data:
            return f"it has no field {name!r}"
        if not isinstance(data[name], kind) or isinstance(data[name], bool):
            return f"its field {name!r} is not a {kind.__name__}"
    extra = set(data) - set(SHAPE)
    if extra:
        return f"it has unknown fields {sorted(extra)}"
    if data["format"] != FORMAT:
        return f"it is of format {data['format']}, not {FORMAT}"
    for kind in KINDS:
        how = data["measured"].get(kind)
        if how is not None and (not isinstance(how, dict) or not _number(how.get("wall_s", 0))
                                or not isinstance(how.get("command", ""), str)):
            return f"measured.{kind} is not a record of a command and its wall time"
        for rid, entry in data[kind].items():
            if not isinstance(entry, dict) or set(entry) != {"seconds", "compute_s"} \
                    or not all(_number(v) for v in entry.values()):
                return f"{kind}.{rid} is not {{'seconds': s, 'compute_s': s}} with s >= 0"
    if set(data["measured"]) - set(KINDS):
        return f"measured has unknown entries {sorted(set(data['measured']) - set(KINDS))}"
    if data["digest"] != io.content_digest(data):
        return "it does not match its digest (edited by hand?)"
    return None


def read_runtimes(path):
    """The verified content of the ``runtimes.json`` at ``path`` (module docstring), or
    None if there is none.  :class:`RuntimesError` if it cannot be used."""
    try:
        data = io.parse_json(io.read_regular(path, MAX_BYTES, follow_symlinks=False), 8)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RuntimesError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise RuntimesError(f"{path} {exc}") from None
    problem = _problem(data)
    if problem:
        raise RuntimesError(f"{path} is not a valid record of measured run times: {problem}; "
                            f"measure them again: python benchmarks/runtimes.py")
    return data


class Runtimes:
    """The measured run times of the installed reproduction packages (one read of the
    ``runtimes.json`` of each of their folders).  ``problems`` lists the one-line reasons
    of files that could not be used."""

    def __init__(self, packages=None):
        self.packages = packages if packages is not None else reproduction_packages()
        self.data, self.problems = {}, []
        for folder in all_folders(self.packages):
            try:
                self.data[folder.name] = read_runtimes(folder.runtimes)
            except RuntimesError as exc:
                self.problems.append(str(exc))
                self.data[folder.name] = None

    def entry(self, rep, quick):
        """``{"seconds": ..., "compute_s": ...}`` measured for ``rep`` (in the
        ``runtimes.json`` of its folder), or None."""
        data = self.data.get(folder_of(rep, self.packages).name)
        return data[("quick" if quick else "full")].get(rep.id) if data else None

    def seconds(self, rep, quick):
        """What ``mpvi run <id>`` (``--quick``) cost alone when measured, or None."""
        e = self.entry(rep, quick)
        return e["seconds"] if e else None

    def describe(self, rep):
        """'12 s (quick 1.5 s)', or 'not measured'."""
        full, quick = self.seconds(rep, False), self.seconds(rep, True)
        if full is None and quick is None:
            return "not measured"
        text = format_seconds(full) if full is not None else "full not measured"
        return text + (f" (quick {format_seconds(quick)})" if quick is not None else "")


def format_seconds(s):
    """'0.04 s', '3.2 s', '12 s', '2.4 min'."""
    if s < 1:
        return f"{s:.2f} s"
    if s < 10:
        return f"{s:.1f} s"
    if s < 120:
        return f"{s:.0f} s"
    return f"{s / 60:.1f} min"


def record_runtimes(pkg, kind, times, command, wall_s, cores, commit=None):
    """Replace the ``kind`` ('full' or 'quick') half of the ``runtimes.json`` of ``pkg`` (a
    :class:`mpvi.repro.packages.ReproductionFolder`) by
    ``times`` (``{id: {"seconds": s, "compute_s": s}}``) measured by ``command`` in ``wall_s`` seconds on
    ``cores`` workers; the other half is kept.  Written atomically, with its digest.
    ``commit``: the revision measured (default :func:`mpvi.ground.io.git_commit` now; a
    caller recording several files reads it before writing the first, which would
    otherwise make the tree read as changed)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    try:
        data = read_runtimes(pkg.runtimes)
    except RuntimesError:
        data = None                      # an unusable file is replaced whole
    if data is None:
        data = {"format": FORMAT, "measured": {}, "full": {}, "quick": {}}
    data.pop("digest", None)
    data["measured"][kind] = {
        "command": command, "wall_s": round(wall_s, 1), "cores": cores,
        "utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": io.git_commit() if commit is None else commit,
        "machine": f"{platform.machine()} {platform.system()}, Python {platform.python_version()}"}
    data[kind] = dict(sorted(times.items()))
    data["digest"] = io.content_digest(data)
    io.write_json(data, pkg.runtimes)
    return data
