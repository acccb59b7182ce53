"""Compiled MPFR kernels for the gmp context: the generated Python kernels, translated to C.

:func:`mpvi.compiled.codegen.generate` prints a kernel as straight-line Python on a context's
numbers.  In the gmp context those numbers are gmpy2 ``mpfr`` objects, and every
operation of the Python function is one correctly rounded MPFR operation at the context's
precision.  :func:`compile_function` translates the same source, statement by statement
and operation by operation in Python's evaluation order, into C against MPFR, compiles
it with the system's C compiler into a CPython extension module, and loads it in-process.
MPFR rounds every operation correctly, so the same operations in the same order give the
same bits: the compiled function is **bit-identical** to the Python one
(``tests/test_cbackend.py`` checks it), only faster.

Newton in C.  :func:`newton_function` compiles a whole Newton iteration of
:class:`mpvi.engines.kernels.Kernel` (:func:`translate_newton`): the residual-and-Jacobian kernel,
the elimination of :func:`mpvi.numbers.linalg.solve_dense` (its C generated from the Python of
:func:`mpvi.numbers.linalg.gauss_eliminate`), the stopping rule and the residual
check of :func:`mpvi.numbers.newton.solve_info`, the step's outputs and the extrapolated first
guess, operation by operation -- no Python object is made inside the loop.  Three
rewrites lower the cost and keep the bits: ``sin`` and ``cos`` of one operand are one
``mpfr_sin_cos``; operations on the step's fixed inputs (the trigonometry of the known
positions, products of table coefficients) run once per solve instead of once per
iteration; the residual and the outputs of the converged step share the values they
both compute.  Wherever the Python iteration would raise (a singular pivot, a non-finite
number, the iteration limit) the compiled one returns None and the Python one runs, and
raises its own error.

Explicit steps and checks.  :func:`explicit_steps` compiles the RK4 and GBS steps of
:mod:`mpvi.engines.ode` whole on a mechanical system's generated Hamiltonian field
(:func:`translate_explicit`; the steps are the C generated from
:mod:`mpvi.numbers.explicit`), and :func:`step_check` the checks :func:`mpvi.solve` runs
after every step (:func:`translate_check`; the LDL^T generated from
:func:`mpvi.numbers.linalg.ldl_positive`); both return None or False where the Python path
would go another way, which then runs.

Routines written once.  A routine that Python and C both run is written once, in Python
(:mod:`mpvi.compiled.croutine` translates its source to C when a module is built:
:data:`mpvi.compiled.cmodules.ROUTINES`); the C runtime holds its glue only.

The C runtime.  Everything else fixed in a compiled module -- the glue of the generated
routines, the Newton loop, the checks after a step, the Taylor driver, reading and returning
numbers, the module definitions -- is C in real files, ``mpvi/compiled/csrc/*.h`` (package data,
:func:`runtime_files`).  Python writes only the generated part of a module
(:mod:`mpvi.compiled.cmodules`): its sizes and name as macros, ``#include`` of the runtime's header
of its kind, and the translated statements of its kernels (:mod:`mpvi.compiled.ctranslate`) as the
few static functions (hooks) that header declares.  This module builds, caches and loads
them, compiled with ``-Wall -Wextra`` (``tests/test_csrc.py`` builds every kind with
``-Werror``).

Binding and libraries.  The module uses the CPython C-API with gmpy2's own C-API
(``gmpy2.h``, shipped in the gmpy2 wheel): it reads the ``mpfr_t`` inside the caller's
``mpfr`` objects and returns new ``mpfr`` objects without converting numbers through
strings or Python floats (cffi or ctypes would have to, at microseconds per number).  It
links against the MPFR and GMP that gmpy2 itself loaded (the wheel's ``gmpy2.libs/``, or
the system's when gmpy2 was built against them), so the two share one library instance.

Cache.  A compiled module is stored under :func:`cache_dir` (``MPVI_KERNEL_CACHE``,
default ``~/.cache/mpvi/kernels``) keyed by the SHA-256 of the generated C source, the
runtime's files (:func:`runtime_digest` of the installed ``mpvi/compiled/csrc``, read once per
process; the module is compiled against a copy of exactly the bytes hashed), the
compiler's version, the MPFR version and the Python ABI; it is written atomically (a
temporary file, then a rename), so concurrent processes can share the directory.

The cache is a trusted store: loading a module runs its code, so mpvi loads only modules
it built, from a directory nobody else can write.

* The directory (created with mode 0700) must be writable, owned by this user and not
  writable by group or others, and every directory above it owned by this user or root
  and not writable by group or others unless sticky (``/tmp``); otherwise it is not used
  (one line on stderr, once per process) and the modules are built into a private
  temporary directory of the process (mode 0700, removed at exit): compiled speed, no
  reuse.
* Next to each module ``<file>`` mpvi writes its digest record ``<file>.sha256`` (after
  the module, each by an atomic rename): the module's file name (its module name, cache
  key and ABI), its size, its SHA-256 and the SHA-256 of its generating C source, sealed
  by an HMAC-SHA256 under the store's secret key (``.mpvi-store-key``, mode 0600, made once
  per store: :func:`_store_key`), so that a module planted with a record computed from
  this public format, or copied with its record from another store, is refused.  Whatever
  runs as this user can read the key and forge a record -- and could run code as the
  user anyway: the key stops files copied in, not the user's own processes.  Before a module is loaded, ``lstat`` checks
  that it and its record are regular files (not a symbolic link, FIFO, device or
  directory) of this user that group and others cannot write -- so a FIFO is never
  opened, and nothing hangs -- and then its bytes are read (without following a link, on
  the file that was checked) and must match the record.  A module that fails (no record:
  not built by this mpvi or an interrupted build; another size: truncated; another
  digest: flipped bytes or a planted file) is never loaded: it is removed and rebuilt,
  in one line on stderr.  A truncated module would otherwise kill the process with
  SIGBUS, a corrupted one with SIGSEGV, a planted one run its code.
* The window between the check and ``dlopen``: the module is loaded from the path just
  checked, in a directory only this user can write and whose parents nobody else can
  rename, and mpvi never rewrites a module in place (a rebuild renames a new file over
  it; the old inode, if loaded, is untouched), so only this user (or root) can change
  what is loaded after it was checked -- who could run code as this user anyway.  A
  module mpvi builds is loaded from the private directory it was compiled in, before it
  is stored, so another process removing or replacing the stored copy cannot affect it.
* The check reads each module once, when it is loaded (once per process): the cost of a
  step does not change.

Programs.  :func:`program_runner` is the one module whose C is all fixed (``mpvi_poly.h``): a
program of products and sums of :mod:`mpvi.analysis.horner` (a sparse polynomial by Horner's
rule) run at many points, one module per precision, the program an argument checked
before it runs.

Balls.  The kernels an :class:`mpvi.ArbContext` runs on Arb balls are compiled by
:mod:`mpvi.compiled.carb` (against the libflint python-flint loaded, the same balls bit for bit),
with this module's build, store and trust rules.

Trigonometry.  Where python-flint is installed, the modules are also linked to the
libflint it loaded and compute sin and cos by Arb where Arb's ball decides the correctly rounded
value (``mpvi_trig.h``: Ziv's test on a ball 32 bits wider, else MPFR): MPFR's bits at
about a fifth of its cost (0.49 against 2.26 us at 216 bits).  ``MPVI_ARB_TRIG=0`` keeps every sin and cos in MPFR.

Fallback.  Without a C compiler or MPFR headers, or with
``MPVI_COMPILED=0`` in the environment, :func:`compile_function` returns None and mpvi
computes with the Python kernels; the reason is reported once per process on stderr.
A construct the translator does not know (it knows what :mod:`mpvi.compiled.codegen` prints)
also falls back to Python, for that kernel only.
"""
from __future__ import annotations

import atexit
import contextlib
import ctypes
import hashlib
import hmac
import importlib.machinery
import importlib.resources
import importlib.util
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import types
from pathlib import Path
from typing import Any, Callable, Sequence

from mpvi.compiled.cmodules import (COUNTED_OPERATIONS, ENV_COUNT, counting, translate,  # noqa: F401
                       translate_check, translate_energy, translate_explicit, translate_newton,
                       translate_taylor)
from mpvi.compiled.cdouble import MATH_1
from mpvi.compiled.ctranslate import Unsupported
from mpvi.ground import environment
from mpvi.ground.io import file_kind

ENV_SWITCH = "MPVI_COMPILED"
"""``MPVI_COMPILED=0`` turns the compiled kernels off (the Python kernels are used)."""
ENV_TRIG = "MPVI_ARB_TRIG"
"""``MPVI_ARB_TRIG=0`` builds the modules without Arb's sin and cos (``mpvi_trig.h``): every
sin and cos by MPFR, the same values (a benchmark's baseline)."""
ENV_CACHE = "MPVI_KERNEL_CACHE"
"""The directory of compiled kernels (default ``~/.cache/mpvi/kernels``)."""

_lock = threading.Lock()
_status: dict = {}


_owner = threading.local()


@contextlib.contextmanager
def kernels_of(name: str):
    """Within the block, a kernel that stays in Python is said to be ``name``'s (a
    system's name), once per system and reason: "mpvi: the kernels of Kepler stay in
    Python (...): LambertW has no counterpart in MPFR".

    Parameters
    ----------
    name : str
        Whose kernels are built in the block (e.g. ``system.name``).

    Yields
    ------
    None
    """
    saved = getattr(_owner, "name", None)
    _owner.name = name
    try:
        yield
    finally:
        _owner.name = saved


def _stays_in_python(what: str, exc: "Unsupported") -> None:
    """Say once per system (:func:`kernels_of`) and reason that its kernels stay in Python
    (outside :func:`kernels_of`: that a ``what``, e.g. "Newton iteration", does), and why."""
    owner = getattr(_owner, "name", None)
    subject = f"the kernels of {owner} stay" if owner else f"a {what} stays"
    _report_once(f"unsupported-{owner}-{exc}",
                 f"{subject} in Python (the same numbers, computed more slowly): {exc}")




def enabled() -> bool:
    """Whether compiled kernels may be used (``MPVI_COMPILED`` is not ``0``)."""
    return environment.flag(ENV_SWITCH, True)


def active(ctx: Any) -> bool:
    """Whether kernels generated for ``ctx`` are compiled: a gmp context, and the switch
    on.  Part of the keys of the per-process kernel caches, so that switching
    ``MPVI_COMPILED`` within a process builds the other kind."""
    return bool(getattr(ctx, "compiles_kernels", False)) and enabled()


ENV_BALLS = "MPVI_COMPILED_BALLS"
"""``MPVI_COMPILED_BALLS=0`` turns the compiled Arb ball kernels (:mod:`mpvi.compiled.carb`) off
alone (``MPVI_COMPILED=0`` turns every compiled kernel off)."""


def balls_enabled() -> bool:
    """Whether compiled Arb ball kernels may be used (neither ``MPVI_COMPILED`` nor
    ``MPVI_COMPILED_BALLS`` is ``0``)."""
    return enabled() and environment.flag(ENV_BALLS, True)


def balls_active(ctx: Any) -> bool:
    """Whether kernels generated for ``ctx`` are compiled against Arb (:mod:`mpvi.compiled.carb`):
    a ball context, and the switches on.  Part of the keys of the per-process kernel
    caches, as :func:`active`."""
    return bool(getattr(ctx, "compiles_ball_kernels", False)) and balls_enabled()


def cache_dir() -> Path:
    """The directory of compiled kernels: ``$MPVI_KERNEL_CACHE`` or ``~/.cache/mpvi/kernels``."""
    return environment.directory(ENV_CACHE, Path.home() / ".cache" / "mpvi" / "kernels")


# ----- the toolchain -------------------------------------------------------------------------

def _gmpy2_paths():
    """(include directories, libraries to link) of the MPFR and GMP gmpy2 uses."""
    import gmpy2
    pkg = Path(gmpy2.__file__).resolve().parent
    includes = [pkg] if (pkg / "gmpy2.h").exists() and (pkg / "mpfr.h").exists() else []
    libs_dir = pkg.parent / "gmpy2.libs"
    libs = []
    for stem in ("libmpfr", "libgmp"):
        found = sorted(libs_dir.glob(f"{stem}-*.so*")) if libs_dir.is_dir() else []
        if found:
            libs.append(found[0])
    return includes, libs, libs_dir


def toolchain() -> dict:
    """The compiler and MPFR to build with, or ``{"error": reason}``: checked once per
    process."""
    with _lock:
        if "toolchain" in _status:
            return _status["toolchain"]
    info = _find_toolchain()        # not under the lock: the layout probe builds a module
    with _lock:
        return _status.setdefault("toolchain", info)


def compiler() -> dict:
    """The C compiler (``CC``, else cc or gcc on PATH) with its version line and the
    Python headers' directory: ``{"cc", "version", "python_include"}``, or ``{"error":
    why}`` (shared by the MPFR and the Arb kernels, :mod:`mpvi.compiled.carb`)."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return {"error": "no C compiler (cc or gcc) on PATH"}
    try:
        version = subprocess.run([cc, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        return {"error": f"the C compiler {cc} does not run: {exc}"}
    python_include = sysconfig.get_paths()["include"]
    if not Path(python_include, "Python.h").exists():
        return {"error": f"no Python.h in {python_include} (install the Python headers)"}
    return {"cc": cc, "version": version, "python_include": python_include}


def _find_toolchain() -> dict:
    found = compiler()
    if "error" in found:
        return found
    cc, version, python_include = found["cc"], found["version"], found["python_include"]
    includes, libs, libs_dir = _gmpy2_paths()
    if not includes:
        return {"error": "gmpy2 ships no gmpy2.h/mpfr.h (a gmpy2 built without its headers)"}
    link = [str(p) for p in libs] if len(libs) == 2 else ["-lmpfr", "-lgmp"]
    import gmpy2
    tc = {"cc": cc, "version": version, "includes": [str(p) for p in includes] + [python_include],
          "link": link, "rpath": str(libs_dir) if libs else None,
          "mpfr": gmpy2.mpfr_version(), "abi": sysconfig.get_config_var("EXT_SUFFIX"),
          "defines": []}
    flint = _arb_trig()
    if flint is not None:                     # after MPFR's: the modules' mpfr_* are gmpy2's
        tc["link"] = link + flint["link"]
        tc["rpath"] = ":".join(filter(None, [tc["rpath"], flint["rpath"]]))
        tc["defines"] = ["-DMPVI_ARB_TRIG=1"]
        tc["mpfr"] += f" + {flint['mpfr']} sin_cos"
    return tc


def _arb_trig() -> dict | None:
    """The libflint python-flint loaded, to link for Arb's sin and cos in the MPFR modules
    (``mpvi_trig.h``, which reaches balls through FLINT's functions only, so no layout of
    FLINT's types is assumed), or None: ``MPVI_ARB_TRIG=0``, python-flint not installed,
    or its libflint not found (then MPFR computes every sin and cos, the same values)."""
    if not environment.flag(ENV_TRIG, True):
        return None
    try:
        import flint  # noqa: F401  (python-flint loads its libflint)
    except ImportError:
        return None
    lib = _libflint()
    if lib is None:
        return None
    return {"link": [str(lib)], "rpath": str(lib.parent),
            "mpfr": f"FLINT {_library_version(lib)}"}


def _libflint() -> Path | None:
    """The libflint file python-flint loaded: from ``/proc/self/maps`` (Linux), else the
    one bundled in python-flint's wheel; None if neither is found."""
    import flint
    maps = Path("/proc/self/maps")
    if maps.exists():
        for line in maps.read_text(errors="replace").splitlines():
            path = line.split(None, 5)[-1] if line.count(" ") >= 5 else ""
            name = Path(path).name
            if name.startswith("libflint") and ".so" in name and Path(path).is_file():
                return Path(path)
    libs = Path(flint.__file__).resolve().parent.parent / "python_flint.libs"
    found = sorted(libs.glob("libflint*.so*")) if libs.is_dir() else []
    return found[0] if len(found) == 1 else None


def _library_version(lib: Path) -> str:
    """The version string ``flint_version`` of the library file ``lib`` (already loaded by
    python-flint: the same instance), or "unknown"."""
    try:
        text = (ctypes.c_char * 64).in_dll(ctypes.CDLL(str(lib)), "flint_version").value
    except (OSError, ValueError):
        return "unknown"
    return text.decode("ascii", "replace")




def _report_once(key: str, message: str) -> None:
    with _lock:
        if key in _status:
            return
        _status[key] = message
    print(f"mpvi: {message}", file=sys.stderr)


# ----- the translator ------------------------------------------------------------------------



def operation_counts(reset: bool = False) -> dict:
    """The MPFR calls made by the operation-counting modules loaded in this process
    (built with ``MPVI_COUNT_OPERATIONS=1``), summed over the modules.

    Parameters
    ----------
    reset : bool, default False
        Set every counter to 0 after reading it.

    Returns
    -------
    dict
        MPFR function name (:data:`COUNTED_OPERATIONS`) -> calls since the last reset;
        empty when no counting module is loaded.
    """
    total: dict = {}
    with _lock:
        modules = list(_MODULES.values())
    for module in modules:
        counts = getattr(module, "operation_counts", None)
        if counts is not None:
            for name, n in counts(reset).items():
                total[name] = total.get(name, 0) + n
    return total




RUNTIME_PACKAGE = "mpvi.compiled"
RUNTIME_DIRECTORY = "csrc"
"""The C runtime every compiled module includes: the files of ``mpvi/compiled/csrc`` (shipped as
package data), read as C by a reader and by the compiler (``-I``)."""




def step_check(source: str, table: dict, prec: int, n: int, guard: tuple | None = None):
    """The checks after a step of an M, V system compiled (:func:`translate_check`):
    ``check(t, q, y, params, bound)`` (with ``guard`` = (source, table) of the singular
    factors: ``check(t, q, y, params, bound, signs, qprev)``) -> True when all pass (False:
    run the Python checks), or None when compiled kernels are off or unavailable.  Compiled
    when its :class:`Rental` says so unless in the disk cache (False meanwhile)."""
    tables = [table] if guard is None else [table, guard[1]]
    plan = _tables_plan("mpvi_c", "step check", tables, lambda names, note, exact:
                        translate_check("mpvi_module", source, names[0], prec, n, note,
                                        None if guard is None else (guard[0], names[1]), exact))
    return None if plan is None else _lazy(plan, "check", _not_checked)


def _not_checked(*args):
    return False

# ----- the trusted store of compiled modules --------------------------------------------------

_MISSING = "is missing"
"""The verdict of :func:`_module_problem` on a module not in the store yet."""

_RECORD_SUFFIX = ".sha256"
"""The digest record of a module ``<file>`` is ``<file>.sha256``, next to it."""

_RECORD_HEADER = "mpvi compiled kernel record 2"
_RECORD_MAX_BYTES = 1024

_KEY_NAME = ".mpvi-store-key"
"""The store's secret key (32 random bytes in hex, mode 0600, made once by the first
process that stores a module): every digest record carries an HMAC under it, so a module
and a record copied from elsewhere (another cache, another machine, a record written by
hand from the public format) do not vouch for each other here."""
_KEY_BYTES = 32

_store_lock = threading.Lock()
_stores: dict = {}        # configured cache directory -> the directory used, or None: private
_private: dict = {}       # "dir" -> (this process's private directory, the pid that made it)


def _euid() -> int | None:
    return os.geteuid() if hasattr(os, "geteuid") else None


def _untrusted(st: os.stat_result) -> str | None:
    """Why a file or directory of status ``st`` may have been written by someone else, or
    None: it must be owned by this user and not writable by group or others."""
    uid = _euid()
    if uid is not None and st.st_uid != uid:
        return f"is owned by uid {st.st_uid}, not by this user (uid {uid})"
    if st.st_mode & 0o022:
        return f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _directory_problem(directory: Path) -> str | None:
    """Why ``directory`` (symbolic links resolved) cannot hold modules this process loads, or
    None: it is a directory owned by this user and writable by nobody else, and every
    directory above it is owned by this user or root and not writable by group or others
    unless sticky (as ``/tmp``), so that nobody else can replace a module or its directory
    between its check and its loading."""
    real = Path(os.path.realpath(directory))
    try:
        st = os.stat(real)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    problem = _untrusted(st)
    if problem:
        return problem
    uid = _euid()
    for parent in real.parents:
        try:
            pst = os.stat(parent)
        except OSError as exc:
            return f"is in {parent}, which cannot be read ({exc.strerror})"
        if uid is not None and pst.st_uid not in (0, uid):
            return f"is in {parent}, owned by uid {pst.st_uid}"
        if pst.st_mode & 0o022 and not pst.st_mode & stat.S_ISVTX:
            return (f"is in {parent}, writable by group or others "
                    f"(mode {stat.S_IMODE(pst.st_mode):04o})")
    return None


def _open_cache(directory: Path) -> tuple[Path | None, str | None]:
    """(the resolved ``directory``, None) if it can hold trusted modules and be written
    (created with mode 0700 if missing), else (None, why not)."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        return None, f"cannot be created ({exc.strerror or exc})"
    problem = _directory_problem(directory)
    if problem is None and not os.access(directory, os.W_OK | os.X_OK):
        problem = "cannot be written"
    return (None, problem) if problem else (Path(os.path.realpath(directory)), None)


def _store(create: bool = True) -> Path | None:
    """The directory this process stores compiled modules in and loads them from: the
    cache directory (:func:`cache_dir`) if it can be trusted, else (said once on stderr)
    a private temporary directory of this process, mode 0700, removed at exit -- or None
    if that one does not exist yet and not ``create``."""
    configured = cache_dir()
    with _store_lock:
        known = configured in _stores
        if not known:
            _stores[configured], problem = _open_cache(configured)
        used = _stores[configured]
    if used is not None:
        return used
    if not known:
        _report_once(f"untrusted-cache-{configured}",
                     f"the kernel cache {configured} {problem}: not used; compiled kernels "
                     f"are built in a private temporary directory for this process")
    return _private_dir(create)


def _private_dir(create: bool = True) -> Path | None:
    """This process's private directory of compiled modules (made on first use, mode 0700;
    removed at exit by the process that made it -- a forked worker shares it)."""
    with _store_lock:
        made = _private.get("dir")
        if made is None and create:
            made = Path(tempfile.mkdtemp(prefix="mpvi-kernels-")), os.getpid()
            _private["dir"] = made
            atexit.register(_remove_private, *made)
            if "multiprocessing" in sys.modules:   # a pool worker ends with os._exit
                import multiprocessing.util
                multiprocessing.util.Finalize(None, _remove_private, args=made, exitpriority=0)
    return None if made is None else made[0]


def _remove_private(directory: Path, pid: int) -> None:
    if os.getpid() == pid:
        shutil.rmtree(directory, ignore_errors=True)


def _regular(path: Path) -> os.stat_result:
    """``lstat`` of ``path``, if it is a regular file of this user that nobody else can
    write; else :class:`_Rejected`.  FileNotFoundError if it does not exist."""
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _Rejected(f"is {file_kind(st.st_mode)}, not a regular file")
    problem = _untrusted(st)
    if problem:
        raise _Rejected(problem)
    return st


class _Rejected(Exception):
    """A module or digest record that must not be used (the reason)."""


def _read_checked(path: Path, st: os.stat_result, chunk: Callable[[bytes], None]) -> None:
    """Feed the bytes of ``path`` to ``chunk``, if it is still the file ``st`` describes
    (:func:`_regular`): opened without following a symbolic link and without blocking
    (never a FIFO: the type was checked first, and again on the open file)."""
    flags = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0))
    fd = os.open(path, flags)
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(now.st_mode):
            raise _Rejected("was replaced while it was checked")
        size = 0
        while True:
            data = os.read(fd, 1 << 20)
            if not data:
                break
            size += len(data)
            chunk(data)
        if size != now.st_size:
            raise _Rejected("changed size while it was read")
    finally:
        os.close(fd)


def _store_key(directory: Path, create: bool) -> bytes | None:
    """The secret key of the store ``directory`` (:data:`_KEY_NAME`): read if it is a
    regular file of this user that nobody else can read or write, made (atomically: a new
    file linked to the name, so that two processes agree on one key) if it is missing and
    ``create``; None if it is missing and not ``create``.  :class:`_Rejected` for a key
    file that cannot be trusted or read."""
    path = directory / _KEY_NAME
    for _ in range(2):
        try:
            st = _regular(path)
        except FileNotFoundError:
            if not create:
                return None
            _make_key(path)
            continue
        if st.st_mode & 0o077:
            raise _Rejected(f"{path} is readable by group or others "
                            f"(mode {stat.S_IMODE(st.st_mode):04o})")
        data = bytearray()
        _read_checked(path, st, data.extend)
        text = bytes(data).decode("ascii", "replace").strip()
        if not re.fullmatch(r"[0-9a-f]{%d}" % (2 * _KEY_BYTES), text):
            raise _Rejected(f"{path} is not a key mpvi wrote")
        return bytes.fromhex(text)
    raise _Rejected(f"{path} cannot be made")    # pragma: no cover - removed while made


def _make_key(path: Path) -> None:
    """Write a new random key at ``path`` unless one is there: a file of mode 0600 made
    under another name, then hard-linked to ``path`` (which fails if another process made
    it first: its key is then used)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.write(fd, (secrets.token_hex(_KEY_BYTES) + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)


def _record_text(file_name: str, size: int, digest: str, source: str, key: bytes) -> str:
    """The digest record of a module: it binds the module's file name (its module name,
    cache key and ABI), its size, its SHA-256 and the SHA-256 of the C source it was
    generated from, under an HMAC-SHA256 with the store's key (:func:`_store_key`)."""
    body = (f"{_RECORD_HEADER}\nfile {file_name}\nsize {size}\nsha256 {digest}\n"
            f"source {source}\n")
    return body + f"hmac {hmac.new(key, body.encode('ascii'), hashlib.sha256).hexdigest()}\n"


def _source_digest(csource: str) -> str:
    """The SHA-256 of a module's generating C source, as its record holds it."""
    return hashlib.sha256(csource.encode("utf-8")).hexdigest()


def _module_problem(path: Path, source: str | None = None) -> str | None:
    """Why the module at ``path`` must not be loaded (:data:`_MISSING` if there is none),
    or None: it and its digest record are regular files of this user that nobody else
    can write, and the record names this file, its size, its SHA-256 and (if given) the
    SHA-256 ``source`` of its generating C source, under the HMAC of the store's key."""
    try:
        st = _regular(path)
    except FileNotFoundError:
        return _MISSING
    except _Rejected as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    record = path.with_name(path.name + _RECORD_SUFFIX)
    try:
        rst = _regular(record)
        if rst.st_size > _RECORD_MAX_BYTES:
            raise _Rejected(f"is {rst.st_size} bytes, not a record mpvi wrote")
        data = bytearray()
        _read_checked(record, rst, data.extend)
    except FileNotFoundError:
        return "has no digest record (not built by this mpvi, or its build was interrupted)"
    except _Rejected as exc:
        return f"has a digest record that {exc}"
    except OSError as exc:
        return f"has a digest record that cannot be read ({exc.strerror})"
    if st.st_size == 0:
        return "is empty"
    digest = hashlib.sha256()
    try:
        _read_checked(path, st, digest.update)
    except _Rejected as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    try:
        key = _store_key(path.parent, create=False)
    except _Rejected as exc:
        return f"cannot be checked: the store's key {exc}"
    except OSError as exc:
        return f"cannot be checked: the store's key cannot be read ({exc.strerror})"
    if key is None:
        return "has a digest record but the store has no key (not written by this mpvi)"
    return _record_problem(bytes(data), path.name, st.st_size, digest.hexdigest(), key, source)


def _record_problem(data: bytes, file_name: str, size: int, digest: str, key: bytes,
                    source: str | None = None) -> str | None:
    """Why the digest record ``data`` does not vouch for the module ``file_name`` of
    ``size`` bytes and SHA-256 ``digest`` generated from the source of SHA-256 ``source``
    (None: any) in the store of ``key``, or None."""
    try:
        lines = data.decode("ascii").split("\n")
    except UnicodeDecodeError:
        lines = []
    fields = dict(line.split(" ", 1) for line in lines[1:] if " " in line)
    if (not lines or lines[0] != _RECORD_HEADER
            or set(fields) != {"file", "size", "sha256", "source", "hmac"}):
        return "has a malformed digest record"
    expected = _record_text(fields["file"], fields["size"], fields["sha256"], fields["source"],
                            key)
    if not hmac.compare_digest(data.decode("ascii"), expected):
        return ("has a digest record this store did not write (its HMAC does not match the "
                "store's key: copied from elsewhere or written by hand)")
    if source is not None and fields["source"] != source:
        return "has the digest record of a module of another source"
    if fields["file"] != file_name:
        return f"has the digest record of another module ({fields['file']})"
    if fields["size"] != str(size):
        return (f"is {size} bytes, not the {fields['size']} bytes mpvi built "
                f"(truncated or replaced)")
    if fields["sha256"] != digest:
        return "has not the SHA-256 mpvi recorded when it built it (corrupted or replaced)"
    return None


def _discard(path: Path) -> bool:
    """Remove a rejected module and its digest record, whatever they are except
    directories (left alone: storing the rebuilt module then fails).  Whether the module
    is gone."""
    for p in (path, path.with_name(path.name + _RECORD_SUFFIX)):
        try:
            if not stat.S_ISDIR(os.lstat(p).st_mode):
                os.unlink(p)
        except FileNotFoundError:
            pass
    return not os.path.lexists(path)


# ----- building and loading ------------------------------------------------------------------

MATH_BUILTINS_OFF = tuple(f"-fno-builtin-{f}" for f in (*MATH_1, "pow"))
"""The math functions of the kernels in doubles (:mod:`mpvi.compiled.cdouble`) the compiler
must call as they are written, each the C library's function that Python's :mod:`math` and
float power call.  As a builtin GCC folds ``pow(x, 2.0)`` into ``x * x``, which differs
from the library's ``pow`` in the last bit at about one argument in 1,200: the start of
Newton's iteration in doubles then differed from Python's, and so, in the last digits,
did the step (Mutze's method on the double pendulum at h = 1/50: 2 of 1,000 steps), and a
run's numbers depended on when its kernels were compiled.  It may likewise join a sin
and a cos of one argument into one ``sincos``."""

_CFLAGS = ("-O2", "-fno-plt", "-ffp-contract=off", *MATH_BUILTINS_OFF, "-shared", "-fPIC",
           "-std=c99", "-Wall", "-Wextra")
"""The compiler's flags (part of a module's cache key).  ``-fno-plt`` calls MPFR through
the GOT directly: the modules make thousands of MPFR calls per step (1-2 % faster).
``-ffp-contract=off`` and :data:`MATH_BUILTINS_OFF` keep every operation in doubles the
one IEEE operation or library call Python makes.
Warnings are on (the runtime and the generated code compile without any under ``-Wall
-Wextra -Werror``, ``tests/test_csrc.py``) but not errors: a newer compiler's new warning
must not stop a build.  The headers of Python, GMP, MPFR and gmpy2 are included as system
headers (``-isystem``): their warnings are not ours to fix."""


def runtime_files(directory: Path | None = None) -> dict:
    """The C runtime's files: ``{file name: contents}`` of the ``.h`` files of ``directory``
    (default: ``mpvi/compiled/csrc`` of the installed package, :data:`RUNTIME_DIRECTORY`).

    Parameters
    ----------
    directory : Path, optional
        Where to read them (a copy, in the tests); default the installed package's.

    Returns
    -------
    dict
        File name -> bytes, sorted by name: what every module is compiled against and
        keyed on (:func:`runtime_digest`).

    Raises
    ------
    RuntimeError
        The directory holds no runtime file (an installation without the package data).
    """
    if directory is None:
        root = importlib.resources.files(RUNTIME_PACKAGE).joinpath(RUNTIME_DIRECTORY)
        entries = [e for e in root.iterdir() if e.name.endswith(".h")]
    else:
        entries = [e for e in Path(directory).iterdir() if e.name.endswith(".h")]
    files = {e.name: e.read_bytes() for e in sorted(entries, key=lambda e: e.name)}
    if "mpvi_runtime.h" not in files:
        raise RuntimeError(f"the C runtime of mpvi is missing (no mpvi_runtime.h in "
                           f"{directory or RUNTIME_PACKAGE + '/' + RUNTIME_DIRECTORY})")
    return files


def runtime_digest(files: dict) -> str:
    """The SHA-256 of the runtime ``files`` (:func:`runtime_files`): their names and
    contents, so that any change of a byte, a file added or removed, changes it.

    Parameters
    ----------
    files : dict
        File name -> bytes.

    Returns
    -------
    str
        The hexadecimal digest.
    """
    h = hashlib.sha256()
    for name, data in sorted(files.items()):
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _runtime() -> tuple[dict, str]:
    """(files, digest) of the installed runtime, read once per process: the modules are
    keyed on these bytes and compiled against a copy of them."""
    with _lock:
        if "runtime" not in _status:
            files = runtime_files()
            _status["runtime"] = (files, runtime_digest(files))
        return _status["runtime"]




def taylor_step(tape, prec: int):
    """The Taylor steps on ``tape`` (:class:`mpvi.engines.taylor.Tape`), compiled
    (:func:`translate_taylor`), or None when compiled kernels are off or unavailable or
    the tape has an operation the translator does not know (said once).

    Returns
    -------
    (step, adaptive, coefficients) or None
        ``step(t, y, h, order, params, eps)`` -> the new y as a list,
        ``adaptive(t, y, h, order, params, eps, factor, record)`` -> (the new y, the
        number of substeps, the interior substep ends or None) and ``coefficients(t, y,
        order, params, eps)`` -> the flat list of the coefficients, bit-identical to
        :meth:`mpvi.engines.taylor.TaylorEvaluator.step`, ``adaptive`` and ``coefficients``, or
        None where the caller must run the Python step (which then raises its error);
        before the module is built (when its :class:`Rental` says so; calls weighted by the
        order, unless it is in the disk cache) they return None too.
    """
    exact = {f"c{i:06d}": c for i, c in enumerate(tape.constants)}   # sorted = tape order
    plan = _tables_plan("mpvi_t", "Taylor step", [exact], lambda names, note, _:
                        translate_taylor("mpvi_module", tape, prec, note))
    if plan is None:
        return None
    per = 4 * FIELD_EVALUATIONS_PER_CALL
    return (_lazy(plan, "step", _not_compiled, lambda t, y, h, order, *a: order ** 2 / per),
            _lazy(plan, "adaptive", _not_compiled, lambda t, y, h, order, *a: order ** 2 / per),
            _lazy(plan, "coefficients", _not_compiled, lambda t, y, order, *a: order ** 2 / per))


def _file_name(name: str, csource: str, tc: dict, runtime: str | None = None) -> str:
    """The file name of the module of ``csource``: keyed by the source, the runtime it
    includes (``runtime``: its :func:`runtime_digest`; default the installed runtime's),
    the compiler, MPFR, the Python ABI, the libraries linked and the flags."""
    if runtime is None:
        runtime = _runtime()[1]
    key = hashlib.sha256("\0".join([csource, runtime, tc["version"], tc["mpfr"], tc["abi"],
                                    " ".join(tc["link"]), " ".join(tc.get("defines", ())),
                                    " ".join(_CFLAGS)]).encode()).hexdigest()[:24]
    return f"{name}_{key}{tc['abi']}"


def _cached_path(name: str, csource: str, tc: dict, create: bool = True) -> Path | None:
    """Where the module of ``csource`` is stored (:func:`_store`), or None if the private
    directory it would be in does not exist yet and not ``create``."""
    store = _store(create)
    return None if store is None else store / _file_name(name, csource, tc)


def _build(name: str, csource: str, tc: dict, target: Path):
    """Compile ``csource`` and load the module from where it was built (a directory of this
    process, mode 0700, in the store: nobody else can write it), then store it at
    ``target`` and its digest record next to it, each by an atomic rename, the record
    last.  Returns the module; a module that cannot be stored is said once."""
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
        c = Path(tmp) / f"{name}.c"
        c.write_text(csource, encoding="utf-8")
        out = Path(tmp) / target.name
        start = time.perf_counter()
        compile_c(tc, c, out, _CFLAGS)
        with _lock:
            _built["seconds"] += time.perf_counter() - start
            _built["kb"] += len(csource) / 1024
            _built["count"] += 1
        os.chmod(out, 0o755)                      # whatever the umask: writable by us alone
        st = _regular(out)
        digest = hashlib.sha256()
        _read_checked(out, st, digest.update)
        module = _load(name, out)
        record = Path(tmp) / (target.name + _RECORD_SUFFIX)
        try:
            key = _store_key(target.parent, create=True)
        except (_Rejected, OSError) as exc:
            _report_once(f"store-key-{target.parent}", f"the kernel store {target.parent} "
                         f"has no usable key ({exc}); compiled kernels are used by this "
                         f"process only")
            return module
        record.write_text(_record_text(target.name, st.st_size, digest.hexdigest(),
                                       _source_digest(csource), key), encoding="ascii")
        os.chmod(record, 0o644)
        try:
            os.replace(out, target)               # atomic: another process may race us
            os.replace(record, target.with_name(record.name))
        except OSError as exc:
            _report_once(f"store-error-{target}", f"the compiled kernel {target} cannot be "
                         f"stored ({exc.strerror or exc}); it is used by this process only")
    return module


def compile_c(tc: dict, c: Path, out: Path, flags: Sequence[str], what: str = "") -> None:
    """Compile the C file ``c`` into ``out`` with the toolchain ``tc`` and ``flags``, the
    runtime's headers copied beside it (:func:`_copy_runtime`); RuntimeError with the
    compiler's message (``what``: which build, for that message) if it fails."""
    cmd = [tc["cc"], *flags, *tc.get("defines", ()), str(c), "-o", str(out),
           f"-I{_copy_runtime(c.parent)}"]
    cmd += [f"-isystem{d}" for d in tc["includes"]] + tc["link"]
    if tc["rpath"]:
        cmd.append(f"-Wl,-rpath,{tc['rpath']}")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"{tc['cc']} failed{what} ({r.returncode}): "
                           f"{(r.stderr or r.stdout).strip()[:2000]}")


def _copy_runtime(directory: Path) -> Path:
    """Write the runtime's bytes that the module is keyed on (:func:`_runtime`) into
    ``directory``/csrc, the include directory of the build: what is compiled is what was
    hashed, whatever happens to the installed files meanwhile."""
    csrc = directory / RUNTIME_DIRECTORY
    csrc.mkdir()
    for file_name, data in _runtime()[0].items():
        (csrc / file_name).write_bytes(data)
    return csrc


def _load(name: str, path: Path):
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _load_or_build(name: str, csource: str, tc: dict):
    """The module of ``csource``: loaded from the store if it passes
    :func:`_module_problem` (checked just before it is loaded), else built
    (:func:`_build`).  A module that fails the check is never loaded: it is removed and
    rebuilt, in one line on stderr."""
    target = _cached_path(name, csource, tc)
    problem = _module_problem(target, _source_digest(csource))
    if problem is None:
        return _load(name, target)
    if problem != _MISSING:
        done = "removed and rebuilt" if _discard(target) else "rebuilt (it cannot be removed)"
        _report_once(f"rejected-{target}", f"the compiled kernel {target} {problem}: not "
                     f"loaded; {done}")
    return _build(name, csource, tc, target)


_MODULES: dict = {}

COMPILE_AFTER: int | None = None
"""Calls of a kernel after which it is compiled when its module is not yet in the disk
cache, or None (the default): compile once the time the kernel has spent in Python
reaches the time its compilation is expected to take (:class:`Rental`).
``MPVI_COMPILE_AFTER`` sets a number of calls instead (0: compiled at the first call).  A
kernel whose module is already cached is loaded at once."""

ENV_COMPILE_AFTER = "MPVI_COMPILE_AFTER"
"""The environment variable that sets :data:`COMPILE_AFTER` (a non-negative integer)."""

COMPILE_SECONDS_PER_KB = 0.01
"""The prior of the expected compile time of a module per kB of generated C, before this
process has built one (a least-squares fit over the 42 modules of three quick
reproductions, 1-60 kB of C at -O2: 0.23 s + 0.008 s per kB, on 2 busy cores)."""

COMPILE_SECONDS_FIXED = 0.2
"""The part of the prior compile time that does not grow with the source (the compiler's
start and the runtime headers every module includes)."""

_built = {"seconds": 0.0, "kb": 0.0, "count": 0}     # this process's builds, for the estimate


def expected_compile_seconds(csource: str) -> float:
    """How long compiling the module of ``csource`` is expected to take: the prior
    (:data:`COMPILE_SECONDS_FIXED` + :data:`COMPILE_SECONDS_PER_KB` per kB) scaled by what
    this process's builds so far took against the same prior."""
    kb = len(csource) / 1024
    prior = COMPILE_SECONDS_FIXED + COMPILE_SECONDS_PER_KB * kb
    with _lock:
        if not _built["count"]:
            return prior
        expected = COMPILE_SECONDS_FIXED * _built["count"] + COMPILE_SECONDS_PER_KB * _built["kb"]
        return prior * _built["seconds"] / expected


class Rental:
    """When a kernel that is not in the disk cache is compiled: the ski-rental rule.

    Running the Python kernel is renting, compiling is buying.  With ``after`` None the
    kernel is compiled once the time spent in its Python calls reaches the expected
    compile time (:func:`expected_compile_seconds`): whatever the number of calls still to
    come, the kernel then costs at most about twice what the best choice in hindsight
    would have (a short run stays in Python, a long run compiles early).  A kernel whose
    Python side runs in its caller (``python`` is :func:`_not_compiled`: the caller runs
    the Python step when it gets None; or :func:`_not_checked`: the caller runs its Python
    checks when it gets False) is charged, per call, the shortest interval seen between two
    of its calls (a pause between two runs is not charged; for a check that interval holds
    the step too, so it is compiled sooner than the rule asks, never later).  With ``after`` an
    integer (``MPVI_COMPILE_AFTER``), after that many calls, each counted as
    ``weight(*args)`` (default 1).  The result is bit-identical either way; only the time
    differs."""

    def __init__(self, csource: str, after: int | None, weight: Callable | None = None):
        self.after, self.weight, self.spent = after, weight, 0.0
        self.budget = expected_compile_seconds(csource) if after is None else float(after)
        self.last: float | None = None
        self.least: float | None = None

    def call(self, python: Callable, args: tuple) -> tuple[bool, Any]:
        """(True, None) when it is time to compile (``python`` not called), else
        (False, ``python(*args)``), the call's time or weight counted."""
        if self.after is not None:
            self.spent += 1 if self.weight is None else self.weight(*args)
            return (True, None) if self.spent >= self.budget else (False, python(*args))
        if self.spent >= self.budget:
            return True, None
        start = time.perf_counter()
        if python is _not_compiled or python is _not_checked:
            if self.last is not None:
                gap = start - self.last
                self.least = gap if self.least is None else min(self.least, gap)
                self.spent += self.least
            self.last = start
            return False, python(*args)
        value = python(*args)
        self.spent += time.perf_counter() - start
        return False, value


def compile_after() -> int | None:
    """The calls of a kernel after which it is compiled: ``$MPVI_COMPILE_AFTER`` if set,
    else :data:`COMPILE_AFTER` (None: by time, :class:`Rental`).

    Returns
    -------
    int or None
        A non-negative number of calls (0: compiled at the first call), or None.

    Raises
    ------
    ValueError
        ``MPVI_COMPILE_AFTER`` is set to something else than a non-negative integer in
        decimal digits; the message names the variable and its value.
    """
    return environment.count(ENV_COMPILE_AFTER, COMPILE_AFTER, "the calls of a kernel "
                             "before it is compiled", "unset: when its time in Python "
                             "reaches its expected compile time")


def _usable() -> dict | None:
    """The toolchain, or None when compiled kernels are off or unavailable (no toolchain,
    or the C runtime cannot be read: said once)."""
    if not enabled():
        return None
    tc = toolchain()
    if "error" in tc:
        _report_once("toolchain-error", f"compiled kernels unavailable ({tc['error']}); "
                     f"computing with the Python kernels")
        return None
    try:
        _runtime()
    except (OSError, RuntimeError) as exc:
        _report_once("runtime-error", f"compiled kernels unavailable ({exc}); computing "
                     f"with the Python kernels")
        return None
    return tc


def _note(names: Sequence[str], constants: dict) -> str:
    """The constants' exact binary values, for the C source: they are part of a module's
    identity (two kernels may differ only in a hoisted rational)."""
    return ", ".join(f"{n} = {constants[n].as_integer_ratio()}" for n in names)


def _plan(source: str, prec: int, constants: dict):
    """(module name, C source, toolchain, setup argument) of a kernel, or None (said once
    on stderr)."""
    tc = _usable()
    if tc is None:
        return None
    names = sorted(constants)
    try:
        body = translate("mpvi_kernel", source, prec, names, "constants: " + _note(names, constants),
                         {k: v.as_integer_ratio() for k, v in constants.items()})
    except Unsupported as exc:
        _stays_in_python("kernel", exc)
        return None
    name = f"mpvi_k{hashlib.sha256(body.encode()).hexdigest()[:16]}"
    return name, body.replace("mpvi_kernel", name), tc, [constants[n] for n in names]


def _tables_plan(stem: str, what: str, tables: Sequence[dict], make: Callable):
    """The plan (as :func:`_plan`) of a module of several generated functions with the
    constant ``tables``: ``make(names, note, exact)`` translates it (module name
    ``mpvi_module``), or None (said once on stderr: the ``what`` -- "Newton iteration"
    -- stays in Python, :func:`_stays_in_python`)."""
    tc = _usable()
    if tc is None:
        return None
    names = [sorted(t) for t in tables]
    note = "; ".join("constants: " + _note(ns, t) for ns, t in zip(names, tables))
    try:
        exact = [{k: v.as_integer_ratio() for k, v in t.items()} for t in tables]
        body = make(names, note, exact)
    except Unsupported as exc:
        _stays_in_python(what, exc)
        return None
    name = f"{stem}{hashlib.sha256(body.encode()).hexdigest()[:16]}"
    return (name, body.replace("mpvi_module", name), tc,
            tuple([t[k] for k in ns] for ns, t in zip(names, tables)))


def _newton_plan(sources: Sequence[str], tables: Sequence[dict], prec: int, n: int, nk: int,
                 np_: int, start: bool, steady: int = 0):
    """The plan (as :func:`_plan`) of a compiled Newton module, or None."""
    return _tables_plan("mpvi_n", "Newton iteration", tables, lambda names, note, exact:
                        translate_newton("mpvi_module", sources, names, prec, n, nk, np_,
                                         note, exact, start, steady))


def _module(plan):
    """The loaded module of a plan (built if needed), or None (said once)."""
    name, csource, tc, table = plan
    with _lock:
        module = _MODULES.get(name)
    if module is not None:
        return module
    try:
        module = _load_or_build(name, csource, tc)
    except (OSError, RuntimeError, ImportError, subprocess.SubprocessError) as exc:
        _report_once("build-error", f"compiled kernels unavailable (building one failed: "
                     f"{exc}); computing with the Python kernels")
        return None
    module.setup(table)
    with _lock:
        return _MODULES.setdefault(name, module)


def compile_function(source: str, prec: int, constants: dict) -> Callable | None:
    """The compiled counterpart of a generated Python function, built now, or None
    (compiled kernels off or unavailable -- said once on stderr --, or a construct the
    translator does not know).

    Parameters
    ----------
    source : str
        The function's Python source, as :func:`mpvi.compiled.codegen.generate` prints it.
    prec : int
        The context's precision in bits (every operation rounds to it).
    constants : dict
        Name -> ``mpfr`` of the names the source reads besides its arguments (hoisted
        rationals, ``pi``, ``E``).

    Returns
    -------
    callable or None
        ``f(*groups)`` -> list of ``mpfr``, bit-identical to the Python function.
    """
    plan = _plan(source, prec, constants)
    module = _module(plan) if plan is not None else None
    return module.f if module is not None else None


def program_runner(prec: int) -> Callable | None:
    """``run`` of the module of programs of products and sums at ``prec`` bits
    (``mpvi_poly.h``: :func:`mpvi.analysis.horner.run_program` in C, the same bits), built
    now if it is not in the store; None where compiled kernels are off or unavailable
    (said once on stderr).  One module per precision: the program is an argument."""
    tc = _usable()
    if tc is None:
        return None
    body = f"#define PREC {int(prec)}\n#define MPVI_MODULE mpvi_module\n#include \"mpvi_poly.h\"\n"
    name = f"mpvi_p{hashlib.sha256(body.encode()).hexdigest()[:16]}"
    module = _module((name, body.replace("mpvi_module", name), tc, ()))
    return module.run if module is not None else None


def _lazy(plan, attribute: str, python: Callable, weight: Callable | None = None) -> Callable:
    """``module.<attribute>`` of ``plan``: at once when its module is loaded or in the disk
    cache, else ``python`` until its :class:`Rental` says to compile (calls counted as
    ``weight(*args)`` under ``MPVI_COMPILE_AFTER``), then the compiled one (``python`` for
    good if building fails)."""
    name, csource, tc, _ = plan
    after = compile_after()
    with _lock:
        loaded = name in _MODULES
    path = None if loaded else _cached_path(name, csource, tc, create=False)
    if loaded or (path is not None and os.path.lexists(path)):
        module = _module(plan)
        return getattr(module, attribute) if module is not None else python
    rental = Rental(csource, after, weight)         # after = 0: due at the first call
    state: dict[str, Any] = {"f": None}

    def lazy(*args):
        f = state["f"]
        if f is not None:
            return f(*args)
        due, value = rental.call(python, args)
        if not due:
            return value
        module = _module(plan)
        state["f"] = f = getattr(module, attribute) if module is not None else python
        return f(*args)
    lazy.__name__ = getattr(python, "__name__", attribute)
    lazy.loaded = lambda: state["f"] if state["f"] is not python else None  # type: ignore[attr-defined]
    return lazy


def module_function(f: Callable | None, attribute: str) -> Callable | None:
    """``attribute`` of the compiled module behind ``f`` (a module's function, or the
    :func:`_lazy` wrapper of one once its module is loaded), or None: a module not loaded
    yet is not built here."""
    probe = getattr(f, "loaded", None)
    if probe is not None:
        f = probe()
    if not isinstance(f, types.BuiltinFunctionType):
        return None
    return getattr(f.__self__, attribute, None)


def accelerated(python: Callable, source: str, prec: int, constants: dict) -> Callable:
    """``python`` or its compiled counterpart, bit-identical either way: the compiled one at
    once when its module is in the disk cache, else when its :class:`Rental` says so (the
    Python function meanwhile); ``python`` itself when compiled kernels are unavailable."""
    plan = _plan(source, prec, constants)
    return python if plan is None else _lazy(plan, "f", python)


def _not_compiled(*args):
    return None


def newton_function(sources: Sequence[str], tables: Sequence[dict], prec: int, n: int,
                    nk: int, np_: int, start: bool = True, steady: int = 0) -> Callable | None:
    """Newton's method on a generated kernel, compiled (:func:`translate_newton`), or None
    when compiled kernels are off or unavailable.

    Parameters
    ----------
    sources : (residual_and_jacobian, residual[, outputs]) Python sources of a
        :class:`mpvi.engines.kernels.Kernel`, arguments (X, K, P).
    tables : their constant tables (name -> ``mpfr``).
    prec : the context's precision in bits.
    n, nk, np_ : the lengths of X, K and P.
    start : whether the iteration starts in doubles where the kernel has a twin in doubles
        (:func:`mpvi.numbers.newton.double_start`; the Python iteration's choice).
    steady : how many of K's last entries stay through a run of steps (computed from once
        per batch of the module's ``steps``).

    Returns
    -------
    callable or None
        ``newton(X0, K, P, eps, rtol, scale, max_iter, slack)`` -> ``(X, iterations,
        residual[, outputs])`` bit-identical to :func:`mpvi.numbers.newton.solve_info` (and the
        outputs function), or None where the caller must run the Python iteration (which
        then raises its error); before the module is built (:class:`Rental`,
        unless it is in the disk cache) it returns None too.
    """
    plan = _newton_plan(sources, tables, prec, n, nk, np_, start, steady)
    return None if plan is None else _lazy(plan, "newton", _not_compiled)


def energy_function(sources: Sequence[str], tables: Sequence[dict], prec: int, n: int,
                    npar: int) -> Callable | None:
    """The energies of an M, V system at many points, compiled (:func:`translate_energy`),
    or None when compiled kernels are off or unavailable.

    Parameters
    ----------
    sources : the Python sources of the generated ``M(q, params)`` and
        ``potential(q, params)``.
    tables : their constant tables (name -> ``mpfr``).
    prec : the context's precision in bits.
    n, npar : degrees of freedom, number of parameters.

    Returns
    -------
    callable or None
        ``energies(q_rows, p_rows, params, eps)`` -> the list of H = p^T M(q)^-1 p / 2 +
        V(q) of the leading rows the C takes, bit-identical to
        :meth:`mpvi.LagrangianSystem.energies` (the caller computes the rest, where Python
        raises), or None before the module is built (:class:`Rental`, unless it is in the
        disk cache): the caller then computes them all.
    """
    plan = _tables_plan("mpvi_h", "energy", tables, lambda names, note, exact:
                        translate_energy("mpvi_module", sources, names, prec, n, npar, note,
                                         exact))
    return None if plan is None else _lazy(plan, "energies", _not_compiled)


FIELD_EVALUATIONS_PER_CALL = 5
"""Field evaluations counted as one call towards ``MPVI_COMPILE_AFTER`` (a Newton solve
evaluates its kernel about five times): an RK4 step weighs 4/5, a GBS step of 24 levels
577/5."""


def explicit_steps(sources: Sequence[str], tables: Sequence[dict], prec: int, n: int,
                   npar: int, ng: int = 0):
    """The RK4 and GBS steps of :mod:`mpvi.engines.ode` on a generated Hamiltonian field, compiled
    (:func:`translate_explicit`), or None when compiled kernels are off or unavailable.

    Parameters
    ----------
    sources : the Python sources of ``hamiltonian_field(t, q, p, params)`` (symbolic
        inverse of M), or of ``M(q, params)`` and ``force(t, q, v, params)``.
    tables : their constant tables (name -> ``mpfr``).
    ng : the number of singular factors the field's last function returns after its
        values (:func:`translate_explicit`: the steps then take a last argument ``signs``).
    prec : the context's precision in bits.
    n, npar : degrees of freedom, number of parameters.

    Returns
    -------
    (rk4, gbs) or None
        ``rk4(t, y, h, params, eps)`` and ``gbs(t, y, H, levels, params, eps)`` -> the new
        y as a list, bit-identical to :func:`mpvi.engines.ode.rk4_step` and
        :func:`mpvi.engines.ode.gbs_step` on the Python field, or None where the caller must run
        the Python step (the field's other path; also before the module is built, after
        its :class:`Rental` (:data:`FIELD_EVALUATIONS_PER_CALL` evaluations a call),
        unless it is in the disk cache).
    """
    plan = _tables_plan("mpvi_e", "explicit field", tables, lambda names, note, exact:
                        translate_explicit("mpvi_module", sources, names, prec, n, npar, note,
                                           ng, exact))
    if plan is None:
        return None
    per = FIELD_EVALUATIONS_PER_CALL
    return (_lazy(plan, "rk4", _not_compiled, lambda *a: 4 / per),
            _lazy(plan, "gbs", _not_compiled, lambda t, y, H, levels, *a: (1 + levels ** 2) / per))
