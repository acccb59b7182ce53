"""Atomic output files and provenance.

Every file mpvi writes goes to a temporary file in the target directory first and is
then renamed over the target (``os.replace``), so a crash never leaves a half-written
CSV, PNG or JSON behind.  The temporary of ``<name>`` is ``.<name>.mpvi-<random>.tmp``
(:func:`atomic_path`); a process killed while writing leaves it behind, and
:func:`remove_stale_temporaries` removes such leftovers (and nothing else).

One file is atomic; a set of files is not.  The outputs of a reproduction (CSVs, PNG,
JSON) are made consistent by a *commit record*: the JSON is written last and lists the
SHA-256 of every other file (:func:`mpvi.repro.records.write_outputs`), so that a run killed
between two renames is detected when the outputs are read
(:func:`mpvi.repro.records.read_provenance`).

Every file mpvi reads back (a saved solution, a provenance JSON, a study cache entry, a
published CSV) is untrusted data: :func:`read_regular` reads it only if it is a regular
file of bounded size (``lstat`` first: a FIFO, a device or a directory is never opened,
so a read cannot hang), :func:`parse_json` parses it with bounded nesting and no
``NaN``/``Infinity``, and :func:`content_digest` is the SHA-256 that covers a JSON
record's whole content (the canonical JSON of every field but the digest itself).
"""
from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import math
import os
import platform
import re
import secrets
import stat
import subprocess
import tempfile
from pathlib import Path

from mpvi._version import __version__


def _create(directory, prefix, suffix, make):
    """Create a new file or directory of a random name ``<prefix><random><suffix>`` in
    ``directory`` with ``make(path)`` (which must fail with FileExistsError if the name is
    taken), and return its path.  The mode is the one given to ``os.open``/``os.mkdir``
    there, filtered by the umask by the kernel at creation: never changed after, and the
    process umask is never read nor set (``os.umask`` is process-wide, so reading it by
    setting it races with every other thread creating a file)."""
    for _ in range(100):
        path = os.path.join(directory, f"{prefix}{secrets.token_hex(6)}{suffix}")
        try:
            make(path)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free temporary name in {directory}")  # pragma: no cover


def create_file(directory, prefix, suffix, mode=0o666):
    """A new empty regular file ``<prefix><random><suffix>`` in ``directory``, created
    with ``mode`` (less the umask, applied by the kernel): see :func:`_create`."""
    def make(path):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                         | getattr(os, "O_NOFOLLOW", 0), mode))
    return _create(directory, prefix, suffix, make)


def create_directory(directory, prefix, suffix="", mode=0o777):
    """A new empty directory ``<prefix><random><suffix>`` in ``directory``, created with
    ``mode`` (less the umask, applied by the kernel): see :func:`_create`."""
    return _create(directory, prefix, suffix, lambda path: os.mkdir(path, mode))


TEMPORARY = re.compile(r"\..+\.mpvi-[a-z0-9_]+\.tmp")
"""The names of the temporaries of :func:`atomic_path`: ``.<name>.mpvi-<random>.tmp``."""


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path next to ``path`` (``.<name>.mpvi-<random>.tmp``, see
    :data:`TEMPORARY`); on success rename it to ``path``, on failure delete it and leave
    ``path`` untouched.  A killed process cannot delete it:
    :func:`remove_stale_temporaries`.  The temporary is created with mode 0666 less the
    umask (:func:`create_file`), the mode of any new file, and is never chmod-ed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = create_file(path.parent, f".{path.name}.mpvi-", ".tmp")   # 0666 less the umask
    try:
        yield Path(tmp)
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


def file_kind(mode):
    """What a file of ``st_mode`` ``mode`` is, for a message: "a directory", "a FIFO", "a
    symbolic link", ... ("not a regular file" for another kind)."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISLNK, "a symbolic link"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path, limit, follow_symlinks=True):
    """The bytes of the file ``path``, read only if it is a regular file of at most
    ``limit`` bytes.

    The file's type is taken with ``lstat`` (``stat`` with ``follow_symlinks``) before
    it is opened: a directory, FIFO, socket or device is refused unopened (a FIFO would
    block the read until a writer comes), and so is a symbolic link unless
    ``follow_symlinks``.  The open itself does not block and does not follow a link
    (without ``follow_symlinks``), and the opened file is checked again, so that a file
    swapped in between is refused too.  ``FileNotFoundError`` and other ``OSError`` as
    the OS raises them; ``ValueError`` for a file that is not regular or is too large,
    its message a phrase to follow the path ("is a FIFO, not a regular file")."""
    st = os.stat(path) if follow_symlinks else os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"is {file_kind(st.st_mode)}, not a regular file")
    if st.st_size > limit:
        raise ValueError(f"has {st.st_size} bytes, more than the {limit} such a file may have")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow_symlinks and os.path.islink(path):
            raise ValueError("is a symbolic link, not a regular file") from None
        raise exc from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"is {file_kind(mode)}, not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"has more than the {limit} bytes such a file may have")
    return data


def _no_constant(name):
    raise ValueError(f"{name} is not a number of a JSON file mpvi reads")


def _finite_float(text):
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(f"{text} is beyond the range of a float")
    return x


def parse_json(data, max_depth):
    """The JSON value of ``data`` (UTF-8 bytes or text), with arrays and objects nested
    at most ``max_depth`` deep and no ``NaN``, ``Infinity`` or out-of-range float.
    ``ValueError`` (never a ``RecursionError``) whose message is a phrase to follow the
    path ("is not valid JSON (...)")."""
    try:
        text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    except UnicodeDecodeError as exc:
        raise ValueError(f"is not valid JSON: not UTF-8 text (byte 0x{data[exc.start]:02x} "
                         f"at offset {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError(f"is not valid JSON: nested more than {max_depth} deep") from None
    except ValueError as exc:
        raise ValueError(f"is not valid JSON ({exc})") from None
    level, depth = [value], 0
    while level:                            # breadth first: no recursion
        depth += 1
        if depth > max_depth:
            raise ValueError(f"is nested more than {max_depth} deep")
        level = [v for x in level if isinstance(x, (list, dict))
                 for v in (x.values() if isinstance(x, dict) else x)
                 if isinstance(v, (list, dict))]
    return value


def canonical_json(data):
    """The canonical JSON text of the JSON data ``data``: sorted keys, no spaces, ASCII."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)


DIGEST_PREFIX = "sha256:"
"""The prefix of a digest of :func:`content_digest`: ``sha256:<64 hex digits>``."""


def content_digest(record, field="digest"):
    """``sha256:<hex>``: the SHA-256 of the canonical JSON (:func:`canonical_json`) of the
    JSON object ``record`` without its entry ``field``."""
    body = {k: v for k, v in record.items() if k != field}
    return DIGEST_PREFIX + hashlib.sha256(canonical_json(body).encode("ascii")).hexdigest()


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
    here = Path(__file__).resolve().parents[2]
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
