"""Atomic output files and provenance.

Every file mpvi writes goes to a temporary file in the target directory first and is
then renamed over the target (``os.replace``), so a crash never leaves a half-written
CSV, PNG or JSON behind.  The temporary of ``<name>`` is ``.<name>.mpvi-<random>.tmp``
(:func:`atomic_path`); a process killed while writing leaves it behind, and
:func:`remove_stale_temporaries` removes such leftovers (and nothing else).

One file is atomic; a set of files is not.  The outputs of a reproduction (CSVs, PNG,
JSON) are made consistent by a *commit record*: the JSON is written last and lists the
SHA-256 of every other file (:func:`mpvi.repro.run.write_outputs`), so that a run killed
between two renames is detected when the outputs are read
(:func:`mpvi.repro.run.read_provenance`).
"""
from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import re
import subprocess
import tempfile
from pathlib import Path


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


TEMPORARY = re.compile(r"\..+\.mpvi-[a-z0-9_]+\.tmp")
"""The names of the temporaries of :func:`atomic_path`: ``.<name>.mpvi-<random>.tmp``."""


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path next to ``path`` (``.<name>.mpvi-<random>.tmp``, see
    :data:`TEMPORARY`); on success rename it to ``path``, on failure delete it and leave
    ``path`` untouched.  A killed process cannot delete it:
    :func:`remove_stale_temporaries`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.mpvi-", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())      # mkstemp makes 0600; give the usual mode
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def remove_stale_temporaries(directory, before):
    """Delete the temporaries of :func:`atomic_path` (names matching :data:`TEMPORARY`)
    in ``directory`` last modified before ``before`` (seconds since the epoch): those of a
    process killed while writing.  A temporary lives only while its file is written, so
    one older than the start of a write belongs to no writer any more (unless another
    process is writing into the same directory at that moment: two runs into one output
    directory at once are not supported).  Other files are never touched.  Returns the
    removed paths."""
    removed = []
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return removed
    for entry in entries:
        if not TEMPORARY.fullmatch(entry.name):
            continue
        with contextlib.suppress(FileNotFoundError):
            if entry.is_file(follow_symlinks=False) and \
                    entry.stat(follow_symlinks=False).st_mtime < before:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


class DirectoryError(OSError):
    """An output or cache directory cannot be created or written to."""


def check_writable(directory, what="directory"):
    """Create ``directory`` if needed, then write and remove a probe file in it; raise
    :class:`DirectoryError` naming the directory and the OS error if that fails.  Returns
    the directory as a Path."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".mpvi-probe.", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise DirectoryError(f"cannot write to the {what} {directory}: {exc}") from None
    return directory


def write_text(path, text):
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_csv(df, path):
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def write_json(obj, path):
    write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def save_figure(fig, path, dpi=120):
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format=Path(path).suffix.lstrip(".") or "png",
                    bbox_inches="tight")


def project_root():
    """The source checkout containing this package (with pyproject.toml), or None."""
    here = Path(__file__).resolve().parent.parent
    return here if (here / "pyproject.toml").exists() and (here / "reproductions").is_dir() else None


def git_commit():
    root = project_root()
    if root is None:
        return "unknown (not a source checkout)"
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=10)
        # outputs are not code: a run that rewrites figures/ leaves its commit clean
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude)figures", ":(exclude)quick-figures"],
                               cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown (git not available)"
    if out.returncode != 0:
        return "unknown (not a git checkout)"
    return out.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def provenance(ctx, params, wall_time_s=None, extra=None):
    """A JSON-able record of how a result was produced."""
    import mpmath
    import numpy

    from . import __version__
    rec = {
        "mpvi_version": __version__,
        "git_commit": git_commit(),
        "context": ctx.name,
        "digits": ctx.dps,
        "parameters": params,
        "created_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "mpmath": mpmath.__version__,
        "mpmath_backend": mpmath.libmp.BACKEND,
        "numpy": numpy.__version__,
        "machine": platform.machine(),
    }
    if wall_time_s is not None:
        rec["wall_time_s"] = round(wall_time_s, 3)
    if extra:
        rec.update(extra)
    return rec
