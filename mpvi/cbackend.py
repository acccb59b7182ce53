"""Compiled MPFR kernels for the gmp context: the generated Python kernels, translated to C.

:func:`mpvi.codegen.generate` prints a kernel as straight-line Python on a context's
numbers.  In the gmp context those numbers are gmpy2 ``mpfr`` objects, and every
operation of the Python function is one correctly rounded MPFR operation at the context's
precision.  :func:`compile_function` translates the same source, statement by statement
and operation by operation in Python's evaluation order, into C against MPFR, compiles
it with the system's C compiler into a CPython extension module, and loads it in-process.
MPFR rounds every operation correctly, so the same operations in the same order give the
same bits: the compiled function is **bit-identical** to the Python one
(``tests/test_cbackend.py`` checks it), only faster.

Newton in C.  :func:`newton_function` compiles a whole Newton iteration of
:class:`mpvi.kernels.Kernel` (:func:`translate_newton`): the residual-and-Jacobian kernel,
the elimination of :func:`mpvi.linalg.solve_dense`, the stopping rule and the residual
check of :func:`mpvi.newton.solve_info`, the step's outputs and the extrapolated first
guess, operation by operation -- no Python object is made inside the loop.  Three
rewrites lower the cost and keep the bits: ``sin`` and ``cos`` of one operand are one
``mpfr_sin_cos``; operations on the step's fixed inputs (the trigonometry of the known
positions, products of table coefficients) run once per solve instead of once per
iteration; the residual and the outputs of the converged step share the values they
both compute.  Wherever the Python iteration would raise (a singular pivot, a non-finite
number, the iteration limit) the compiled one returns None and the Python one runs, and
raises its own error.

Explicit steps and checks.  :func:`explicit_steps` compiles the RK4 and GBS steps of
:mod:`mpvi.ode` whole on a mechanical system's generated Hamiltonian field
(:func:`translate_explicit`), and :func:`step_check` the checks :func:`mpvi.solve` runs
after every step (:func:`translate_check`); both return None or False where the Python
path would go another way, which then runs.

The C runtime.  Everything fixed in a compiled module -- the dense solve, the Newton loop,
the RK4 and GBS drivers, the checks after a step, the Taylor driver, reading and returning
numbers, the module definitions -- is C in real files, ``mpvi/csrc/*.h`` (package data,
:func:`runtime_files`).  Python writes only the generated part of a module: its sizes and
name as macros, ``#include`` of the runtime's header of its kind, and the translated
statements of its kernels as the few static functions (hooks) that header declares.  The
modules are compiled with ``-Wall -Wextra`` (``tests/test_csrc.py`` builds every kind with
``-Werror``).

Binding and libraries.  The module uses the CPython C-API with gmpy2's own C-API
(``gmpy2.h``, shipped in the gmpy2 wheel): it reads the ``mpfr_t`` inside the caller's
``mpfr`` objects and returns new ``mpfr`` objects without converting numbers through
strings or Python floats (cffi or ctypes would have to, at microseconds per number).  It
links against the MPFR and GMP that gmpy2 itself loaded (the wheel's ``gmpy2.libs/``, or
the system's when gmpy2 was built against them), so the two share one library instance.

Cache.  A compiled module is stored under :func:`cache_dir` (``MPVI_KERNEL_CACHE``,
default ``~/.cache/mpvi/kernels``) keyed by the SHA-256 of the generated C source, the
runtime's files (:func:`runtime_digest` of the installed ``mpvi/csrc``, read once per
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
  key and ABI), its size and its SHA-256.  Before a module is loaded, ``lstat`` checks
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

Fallback.  Without a C compiler or MPFR headers, or with
``MPVI_COMPILED=0`` in the environment, :func:`compile_function` returns None and mpvi
computes with the Python kernels; the reason is reported once per process on stderr.
A construct the translator does not know (it knows what :mod:`mpvi.codegen` prints)
also falls back to Python, for that kernel only.
"""
from __future__ import annotations

import ast
import atexit
import contextlib
import hashlib
import importlib.machinery
import importlib.resources
import importlib.util
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

from .io import file_kind

ENV_SWITCH = "MPVI_COMPILED"
"""``MPVI_COMPILED=0`` turns the compiled kernels off (the Python kernels are used)."""
ENV_CACHE = "MPVI_KERNEL_CACHE"
"""The directory of compiled kernels (default ``~/.cache/mpvi/kernels``)."""

_FUNCTIONS = {"sin": "mpfr_sin", "cos": "mpfr_cos", "tan": "mpfr_tan", "exp": "mpfr_exp",
              "log": "mpfr_log", "sqrt": "mpfr_sqrt", "atan": "mpfr_atan",
              "sinh": "mpfr_sinh", "cosh": "mpfr_cosh", "tanh": "mpfr_tanh",
              "asin": "mpfr_asin", "acos": "mpfr_acos", "fabs": "mpfr_abs", "abs": "mpfr_abs",
              "erf": "mpfr_erf", "erfc": "mpfr_erfc", "gamma": "mpfr_gamma", "zeta": "mpfr_zeta",
              "atanh": "mpfr_atanh", "asinh": "mpfr_asinh", "acosh": "mpfr_acosh",
              "floor": "mpfr_rint_floor", "ceil": "mpfr_rint_ceil", "ei": "mpfr_eint",
              "airyai": "mpfr_ai"}
"""The one-argument functions of generated code and their MPFR counterparts (the context's
``namespace``: the same MPFR functions, through gmpy2)."""
_NAN_UNLESS_POSITIVE = {"loggamma": "mpfr_lngamma({out}, {x}, MPFR_RNDN)",
                        "bessely": "mpfr_yn({out}, {n}L, {x}, MPFR_RNDN)"}
"""Functions of generated code that are nan for x <= 0 (the context's loggamma, and bessely
of an integer order), with their MPFR call elsewhere."""
_PERIODIC = {"sin", "cos", "tan"}
"""Functions that return nan for |x| >= 2^prec, as the context's (``Context._periodic``)."""
_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}

_lock = threading.Lock()
_status: dict = {}


class Unsupported(ValueError):
    """A construct of the generated source that the translator does not know."""


_TWO_ARGUMENTS = ("atan2", "heaviside", "besselj", "bessely", "polygamma")
"""Functions of generated code translated with two arguments."""

_USER_NAMES = {"lambertw": "LambertW", "ei": "Ei", "si": "Si", "ci": "Ci", "shi": "Shi",
               "chi": "Chi", "ellipk": "elliptic_k", "ellipe": "elliptic_e",
               "ellipf": "elliptic_f", "heaviside": "Heaviside", "airyai": "airyai",
               "zetaderiv": "the derivative of zeta", "diracdelta": "DiracDelta",
               "fabs": "Abs", "ceil": "ceiling"}
"""The sympy names of the functions of generated code whose printed names differ (the
others are the same), for the messages."""


def _user_name(name: str) -> str:
    """The sympy name of the generated code's function ``name`` (:data:`_USER_NAMES`)."""
    return _USER_NAMES.get(name, name)


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


def _literal_int(node) -> int | None:
    """The integer a literal ``node`` is (``3``, ``-3``), or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        n = _literal_int(node.operand)
        return None if n is None else (-n if isinstance(node.op, ast.USub) else n)
    return None


PW_MAX_NUMERATOR = 2 ** 20
"""The largest |p| of an exponent p/2^m computed by roots and a power (:func:`_dyadic_exponent`);
beyond, ``mpfr_pow`` itself."""
PW_MAX_ROOTS = 8
"""The most square roots (m of p/2^m) taken for an exponent; beyond, ``mpfr_pow`` itself."""


def _dyadic_exponent(node) -> tuple[int, int] | None:
    """(p, m) if ``node`` is the exponent ``mpf(p)/mpf(2**m)`` that :mod:`mpvi.codegen`
    prints for the rational p/2^m (m >= 1, p odd, |p| <= :data:`PW_MAX_NUMERATOR`, m <=
    :data:`PW_MAX_ROOTS`): its value is exact at every precision, so x**e is x^(p/2^m)
    correctly rounded, computable by square roots (``pw_dyadic``); else None."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return None
    parts = []
    for side in (node.left, node.right):
        if not (isinstance(side, ast.Call) and isinstance(side.func, ast.Name)
                and side.func.id == "mpf" and len(side.args) == 1 and not side.keywords):
            return None
        parts.append(_literal_int(side.args[0]))
    p, q = parts
    if p is None or q is None or q < 2 or q & (q - 1) or p % 2 == 0:
        return None
    m = q.bit_length() - 1
    if abs(p) > PW_MAX_NUMERATOR or m > PW_MAX_ROOTS:
        return None
    return p, m


def _pw_margin(p: int) -> int:
    """Bits lost by ``pw_dyadic`` at its working precision: its error is below 2|p| + 2 ulps,
    and the result's exponent may be one above the exact value's."""
    return (2 * abs(p) + 2 - 1).bit_length() + 1


def enabled() -> bool:
    """Whether compiled kernels may be used (``MPVI_COMPILED`` is not ``0``)."""
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "no", "false", "off")


def active(ctx: Any) -> bool:
    """Whether kernels generated for ``ctx`` are compiled: a gmp context, and the switch
    on.  Part of the keys of the per-process kernel caches, so that switching
    ``MPVI_COMPILED`` within a process builds the other kind."""
    return bool(getattr(ctx, "compiles_kernels", False)) and enabled()


def cache_dir() -> Path:
    """The directory of compiled kernels: ``$MPVI_KERNEL_CACHE`` or ``~/.cache/mpvi/kernels``."""
    env = os.environ.get(ENV_CACHE)
    return Path(env) if env else Path.home() / ".cache" / "mpvi" / "kernels"


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
        info = _find_toolchain()
        _status["toolchain"] = info
        return info


def _find_toolchain() -> dict:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return {"error": "no C compiler (cc or gcc) on PATH"}
    try:
        version = subprocess.run([cc, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        return {"error": f"the C compiler {cc} does not run: {exc}"}
    includes, libs, libs_dir = _gmpy2_paths()
    if not includes:
        return {"error": "gmpy2 ships no gmpy2.h/mpfr.h (a gmpy2 built without its headers)"}
    python_include = sysconfig.get_paths()["include"]
    if not Path(python_include, "Python.h").exists():
        return {"error": f"no Python.h in {python_include} (install the Python headers)"}
    link = [str(p) for p in libs] if len(libs) == 2 else ["-lmpfr", "-lgmp"]
    import gmpy2
    return {"cc": cc, "version": version, "includes": [str(p) for p in includes] + [python_include],
            "link": link, "rpath": str(libs_dir) if libs else None,
            "mpfr": gmpy2.mpfr_version(), "abi": sysconfig.get_config_var("EXT_SUFFIX")}


def _report_once(key: str, message: str) -> None:
    with _lock:
        if key in _status:
            return
        _status[key] = message
    print(f"mpvi: {message}", file=sys.stderr)


# ----- the translator ------------------------------------------------------------------------

class _Translator:
    """Python source of one generated function -> C statements on ``mpfr_t``.

    Every named variable is an ``mpfr_ptr``: a bare name assigned to another aliases it (as
    Python binds the same object, without rounding); every operation writes a temporary of
    the context's precision.  Integer literals are exact (``mpfr_*_si`` forms, or an exact
    64-bit temporary).  C names carry ``prefix`` (several functions share a module).

    Two rewrites keep the bits and lower the cost.  ``sin(x)`` and ``cos(x)`` of the same
    operand are one ``mpfr_sin_cos`` (both correctly rounded, as the two calls are), and
    ``x**2`` is ``mpfr_sqr``.  With ``varying`` (the argument groups that change between
    calls, e.g. Newton's unknowns), every operation that depends on none of them goes to
    :attr:`pre`, run once per Newton solve instead of at every iteration: the trigonometry
    of the step's known values, the products of table coefficients.  Python computes the
    same operations on the same operands, so the values are the same, only computed once.
    """

    def __init__(self, constants: Sequence[str], prefix: str = "", varying=None,
                 shared: dict | None = None, scope: str | None = None, values: dict | None = None):
        self.shared, self.scope = shared, scope   # values of other functions (see share())
        self.values = values or {}                # constant name -> its exact value
        self.canon: dict = {}                     # name -> canonical id of its value
        self.constants = list(constants)          # names read from the constant table
        self.prefix = prefix
        self.hoisting = varying is not None
        self.varying_groups = set(varying or ())
        self.temps = 0
        self.init: list[str] = []                 # operations on literals alone (module load)
        self.pre: list[str] = []                  # operations on the fixed arguments only
        self.lines: list[str] = []                # the rest (everything without hoisting)
        self.names: set[str] = set()
        self.ints: dict = {}
        self.used: set[str] = set()
        self.int_names: dict = {}
        self.varying: set[str] = set()            # names whose values depend on a varying group
        self.fusable: set[str] = set()
        self.fused: dict = {}
        self.scalars: set[str] = set()            # the arguments that are not unpacked

    def temp(self) -> str:
        self.temps += 1
        return f"{self.prefix}t[{self.temps - 1}]"

    def region(self, node) -> list:
        """Where the operations of ``node`` go: :attr:`init` (run once, when the module is
        loaded) when ``node`` reads no name at all (``mpf(-3)/mpf(2)``, the exponent of a
        rational power), :attr:`pre` when hoisting and ``node`` reads no varying name, else
        :attr:`lines`."""
        called = {id(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)}
        names = [m.id for m in ast.walk(node) if isinstance(m, ast.Name) and id(m) not in called]
        if not names:
            return self.init
        if self.hoisting and not any(n in self.varying for n in names):
            return self.pre
        return self.lines

    def value(self, node) -> tuple[str, Any]:
        """``("mpfr", c_expression)`` for an mpfr operand, ``("int", n)`` for an integer."""
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return "int", node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            kind, v = self.value(node.operand)
            if kind == "int":
                return "int", -v
            out = self.temp()
            self.region(node).append(f"mpfr_neg({out}, {v}, MPFR_RNDN);")
            return "mpfr", out
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
            return self.value(node.operand)
        if isinstance(node, ast.Name):
            if node.id in self.int_names:         # a name bound to an int stays an int
                return "int", self.int_names[node.id]
            if node.id in self.names:
                self.used.add(node.id)
                return "mpfr", f"{self.prefix}v_{node.id}"
            if node.id in self.constants:
                return "mpfr", f"{self.prefix}k[{self.constants.index(node.id)}]"
            raise Unsupported(f"unknown name {node.id!r}")
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise Unsupported(f"{type(node).__name__} ({ast.unparse(node)[:60]})")

    def mpfr(self, node) -> str:
        """An mpfr operand for ``node`` (an integer is converted exactly)."""
        kind, v = self.value(node)
        if kind == "mpfr":
            return v
        return self.exact_int(v)

    def exact_int(self, n: int) -> str:
        """An integer operand as an exact 64-bit constant, set once when the module loads."""
        if not -2 ** 63 < n < 2 ** 63:
            raise Unsupported(f"the integer {n} has more than 64 bits")
        if n not in self.ints:
            self.ints[n] = f"{self.prefix}z[{len(self.ints)}]"
        return self.ints[n]

    def binop(self, node) -> tuple[str, Any]:
        lk, lv = self.value(node.left)
        rk, rv = self.value(node.right)
        if lk == "int" and rk == "int":
            raise Unsupported(f"integer arithmetic {ast.unparse(node)!r} (Python would not "
                              "round it)")
        out, emit = self.temp(), self.region(node).append
        if isinstance(node.op, ast.Pow):
            dyadic = _dyadic_exponent(node.right)
            if lk == "mpfr" and dyadic is not None:    # x**(mpf(-3)/mpf(2)): one mpfr_pow
                p, m = dyadic
                emit(f"pw_dyadic({out}, {lv}, {rv}, {p}L, {m}, {_pw_margin(p)});")
            elif rk == "int" and rv == 2:
                emit(f"mpfr_sqr({out}, {lv}, MPFR_RNDN);")
            elif rk == "int":
                emit(f"mpfr_pow_si({out}, {lv}, {rv}L, MPFR_RNDN);")
            elif lk == "int":
                emit(f"mpfr_pow({out}, {self.exact_int(lv)}, {rv}, MPFR_RNDN);")
            else:
                emit(f"mpfr_pow({out}, {lv}, {rv}, MPFR_RNDN);")
            return "mpfr", out
        op = _BINARY.get(type(node.op))
        if op is None:
            raise Unsupported(f"operator {type(node.op).__name__}")
        scale, x = (self.power_of_two(node.right), lv) if lk == "mpfr" else (None, None)
        if scale is None and op == "mul" and rk == "mpfr":
            scale, x = self.power_of_two(node.left), rv
        if op in ("mul", "div") and scale is not None:
            sign, e = scale                       # x * (+-2^e), x / (+-2^e): x scaled, exactly
            emit(f"mpfr_mul_2si({out}, {x}, {e if op == 'mul' else -e}L, MPFR_RNDN);")
            if sign < 0:
                emit(f"mpfr_neg({out}, {out}, MPFR_RNDN);")
        elif rk == "int" and -2 ** 62 < rv < 2 ** 62:
            emit(f"mpfr_{op}_si({out}, {lv}, {rv}L, MPFR_RNDN);")
        elif lk == "int" and -2 ** 62 < lv < 2 ** 62:
            if op in ("add", "mul"):
                emit(f"mpfr_{op}_si({out}, {rv}, {lv}L, MPFR_RNDN);")
            else:
                emit(f"mpfr_si_{op}({out}, {lv}L, {rv}, MPFR_RNDN);")
        else:
            a = lv if lk == "mpfr" else self.exact_int(lv)
            b = rv if rk == "mpfr" else self.exact_int(rv)
            emit(f"mpfr_{op}({out}, {a}, {b}, MPFR_RNDN);")
        return "mpfr", out

    def power_of_two(self, node) -> tuple[int, int] | None:
        """(sign, e) if ``node`` is +-2^e: an integer literal (e >= 1) or a constant of the
        table whose exact value is one (``_r0`` = 1/2); else None.  x * 2^e is then
        ``mpfr_mul_2si``: the correctly rounded product, exactly as ``mpfr_mul`` or
        ``mpfr_mul_si`` computes it, an eighth of the time."""
        n = _literal_int(node)
        if n is not None:
            m = abs(n)
            return (1 if n > 0 else -1, m.bit_length() - 1) if m >= 2 and not m & (m - 1) else None
        if isinstance(node, ast.Name) and node.id not in self.names and node.id in self.values:
            p, q = self.values[node.id]
            m, d = abs(p), abs(q)
            if m and d and not m & (m - 1) and not d & (d - 1) and m != d:
                return 1 if (p > 0) == (q > 0) else -1, m.bit_length() - d.bit_length()
        return None

    def call(self, node) -> tuple[str, Any]:
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise Unsupported(f"call {ast.unparse(node)[:60]}")
        name, args = node.func.id, node.args
        if name in ("sin", "cos") and len(args) == 1 and ast.unparse(args[0]) in self.fusable:
            return "mpfr", self.sin_cos(node)[name]
        out, emit = self.temp(), self.region(node).append
        if name == "mpf" and len(args) == 1:
            a = args[0]
            n = _literal_int(a)
            if n is not None:                     # mpf(-3): correctly rounded, as gmpy2.mpfr
                emit(f"mpfr_set_si({out}, {n}L, MPFR_RNDN);" if -2 ** 62 < n < 2 ** 62 else
                     f'mpfr_set_str({out}, "{n}", 10, MPFR_RNDN);')
                return "mpfr", out
            if isinstance(a, ast.Constant) and isinstance(a.value, str):
                text = a.value
                if not all(ch in "0123456789.eE+-" for ch in text):
                    raise Unsupported(f"mpf({text!r})")
                emit(f'mpfr_set_str({out}, "{text}", 10, MPFR_RNDN);')
                return "mpfr", out
            raise Unsupported(f"mpf of {ast.unparse(a)[:40]}")
        if name == "atan2" and len(args) == 2:
            y, x = self.mpfr(args[0]), self.mpfr(args[1])
            emit(f"mpfr_atan2({out}, {y}, {x}, MPFR_RNDN);")
            return "mpfr", out
        if name == "sign" and len(args) == 1:
            x = self.mpfr(args[0])
            emit(f"if (mpfr_nan_p({x})) mpfr_set_nan({out}); "
                 f"else mpfr_set_si({out}, mpfr_sgn({x}), MPFR_RNDN);")
            return "mpfr", out
        if name == "heaviside" and len(args) == 2:
            x = self.mpfr(args[0])
            kind, h0 = self.value(args[1])
            at0 = (f"mpfr_set_si({out}, {h0}L, MPFR_RNDN);" if kind == "int" and abs(h0) < 2 ** 62
                   else f"mpfr_set({out}, {h0 if kind == 'mpfr' else self.exact_int(h0)}, "
                        "MPFR_RNDN);")
            emit(f"if (mpfr_nan_p({x})) mpfr_set_nan({out}); "
                 f"else if (mpfr_sgn({x}) < 0) mpfr_set_zero({out}, 1); "
                 f"else if (mpfr_sgn({x}) > 0) mpfr_set_si({out}, 1, MPFR_RNDN); else {at0}")
            return "mpfr", out
        if name in ("diracdelta", "diraccomb") and len(args) == 1:
            x = self.mpfr(args[0])
            support = (f"mpfr_zero_p({x})" if name == "diracdelta" else
                       f"mpfr_inf_p({x}) || mpfr_integer_p({x})")
            emit(f"if (mpfr_nan_p({x}) || {support}) mpfr_set_nan({out}); "
                 f"else mpfr_set_zero({out}, 1);")
            return "mpfr", out
        if name in ("besselj", "bessely", "polygamma") and len(args) == 2:
            kind, n = self.value(args[0])          # an integer order: gmpy2's jn, yn, digamma
            if kind != "int" or not -2 ** 31 < n < 2 ** 31 or (name == "polygamma" and n != 0):
                raise Unsupported(
                    "polygamma of an order other than 0 has no counterpart in MPFR (only "
                    "digamma)" if name == "polygamma" else
                    f"{name} of a non-integer order has no counterpart in MPFR (only integer "
                    "orders)")
            x = self.mpfr(args[1])
            if name == "besselj":
                emit(f"mpfr_jn({out}, {n}L, {x}, MPFR_RNDN);")
            elif name == "polygamma":
                emit(f"mpfr_digamma({out}, {x}, MPFR_RNDN);")
            else:
                emit(f"if (mpfr_nan_p({x}) || mpfr_sgn({x}) <= 0) mpfr_set_nan({out}); "
                     f"else {_NAN_UNLESS_POSITIVE[name].format(out=out, n=n, x=x)};")
            return "mpfr", out
        if name == "loggamma" and len(args) == 1:
            x = self.mpfr(args[0])
            emit(f"if (mpfr_nan_p({x}) || mpfr_sgn({x}) <= 0) mpfr_set_nan({out}); "
                 f"else {_NAN_UNLESS_POSITIVE[name].format(out=out, x=x)};")
            return "mpfr", out
        if name in _FUNCTIONS and len(args) == 1:
            x = self.mpfr(args[0])
            call = f"{_FUNCTIONS[name]}({out}, {x}, MPFR_RNDN);"
            if name in _PERIODIC:                 # nan beyond 2^prec, as the context's
                call = (f"if (mpfr_nan_p({x}) || mpfr_cmpabs({x}, limit) >= 0) "
                        f"mpfr_set_nan({out}); else {call}")
            emit(call)
            return "mpfr", out
        if name in _FUNCTIONS or name in _TWO_ARGUMENTS:
            raise Unsupported(f"{_user_name(name)} of {len(args)} arguments "
                              f"({ast.unparse(node)[:60]}) has no counterpart in MPFR")
        raise Unsupported(f"{_user_name(name)} has no counterpart in MPFR")

    def key(self, node) -> str:
        """The value of ``node`` as text independent of the function's own names: a
        name bound in the function by the canonical id of its value, a constant by its
        exact value (two functions' ``_r0`` may be different rationals)."""
        def token(name):
            if name in self.canon:
                return self.canon[name]
            if name in self.values:
                return f"={self.values[name]}"
            return name                           # an argument: the same in every function
        tree = ast.parse(ast.unparse(node), mode="eval")
        for m in ast.walk(tree):
            if isinstance(m, ast.Name):
                m.id = token(m.id)
        return ast.unparse(tree)

    def share(self, node, region) -> tuple[str, str | None]:
        """(key, C operand) of ``node`` in the shared table of a Newton module: operations on
        the fixed arguments (:attr:`pre`, run once for every function of the module) are
        shared by all its functions; with a ``scope``, operations on the unknowns are shared
        by the functions evaluated at the same point (the residual and the outputs of the
        converged step).  None when not computed yet (or nothing is shared)."""
        if self.shared is None or region is self.init:
            return "", None
        scope = "pre" if region is self.pre else self.scope
        if scope is None:
            return "", None
        ids = self.shared.setdefault("#ids", {})   # keys interned: they stay short
        key = f"{scope}:{self.key(node)}"
        key = f"{scope}#{ids.setdefault(key, len(ids))}"
        return key, self.shared.get(key)

    def sin_cos(self, node) -> dict:
        """{"sin": temp, "cos": temp} of the operand of ``node``: one ``mpfr_sin_cos`` at its
        first use (nan beyond 2^prec, as the context's sin and cos)."""
        key = ast.unparse(node.args[0])
        region = self.region(node)
        skey, _ = self.share(node.args[0], region)
        if key not in self.fused and skey and f"sincos:{skey}" in self.shared:
            self.fused[key] = self.shared[f"sincos:{skey}"]
        if key not in self.fused:
            x = self.mpfr(node.args[0])
            s, c = self.temp(), self.temp()
            self.region(node).append(
                f"if (mpfr_nan_p({x}) || mpfr_cmpabs({x}, limit) >= 0) {{ mpfr_set_nan({s}); "
                f"mpfr_set_nan({c}); }} else mpfr_sin_cos({s}, {c}, {x}, MPFR_RNDN);")
            self.fused[key] = {"sin": s, "cos": c}
            if skey:
                self.shared[f"sincos:{skey}"] = self.fused[key]
        return self.fused[key]

    def function(self, source: str) -> dict:
        """Translate the source of ``def name(_a0, ...): ...; return [...]``."""
        tree = ast.parse(source)
        (fn,) = tree.body
        if not isinstance(fn, ast.FunctionDef):
            raise Unsupported("not a function")
        groups = [a.arg for a in fn.args.args]
        unpack: dict = {}
        body, returns = fn.body[:-1], fn.body[-1]
        if not (isinstance(returns, ast.Return) and isinstance(returns.value, ast.List)):
            raise Unsupported("the function does not end in `return [...]`")
        targets = [t.id for stmt in body if isinstance(stmt, ast.Assign)
                   for t in stmt.targets if isinstance(t, ast.Name)]
        if len(targets) == len(set(targets)):     # each name bound once: an operand's text
            calls = [(c.func.id, ast.unparse(c.args[0])) for c in ast.walk(tree)  # is its value
                     if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                     and c.func.id in ("sin", "cos") and len(c.args) == 1]
            self.fusable = ({a for f, a in calls if f == "sin"}
                            & {a for f, a in calls if f == "cos"})
        unpacked = {stmt.value.id for stmt in body if isinstance(stmt, ast.Assign)
                    and isinstance(stmt.value, ast.Name) and stmt.value.id in groups}
        self.scalars = {g for g in groups if g not in unpacked}
        self.names.update(self.scalars)                               # scalar arguments
        self.varying.update(groups[i] for i in self.varying_groups if i < len(groups))
        for stmt in body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                raise Unsupported(f"statement {ast.unparse(stmt)[:60]}")
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.List) and isinstance(value, ast.Name) \
                    and value.id in groups:
                unpack[value.id] = [t.id for t in target.elts]
                self.names.update(t.id for t in target.elts)
                if value.id in self.varying:
                    self.varying.update(t.id for t in target.elts)
                continue
            if not isinstance(target, ast.Name):
                raise Unsupported(f"assignment to {ast.unparse(target)}")
            region = self.region(value)
            if region is self.init:               # a literal's value, bound where it is used
                region = self.pre if self.hoisting else self.lines
            if region is self.lines:
                self.varying.add(target.id)
            skey, known = self.share(value, region)
            if known is not None:                 # the same value, computed by another function
                self.canon[target.id] = skey
                region.append(f"{self.prefix}v_{target.id} = {known};")
                self.names.add(target.id)
                continue
            kind, v = self.value(value)
            if kind == "int":                     # Python keeps an int: so do we
                self.int_names[target.id] = v
                continue
            self.int_names.pop(target.id, None)
            region.append(f"{self.prefix}v_{target.id} = {v};")
            self.names.add(target.id)
            if skey:
                self.canon[target.id] = skey
                self.shared.setdefault(skey, v)
        results = []
        for e in returns.value.elts:              # an int result is returned as an int,
            kind, v = self.value(e)               # as the Python function returns it
            results.append(("int", v) if kind == "int" else ("mpfr", v))
        return {"groups": groups, "unpack": unpack, "results": results}


COUNTED_OPERATIONS = {
    "mpfr_add": "binary", "mpfr_sub": "binary", "mpfr_mul": "binary", "mpfr_div": "binary",
    "mpfr_sqr": "unary", "mpfr_neg": "unary", "mpfr_abs": "unary",
    "mpfr_add_si": "si", "mpfr_sub_si": "si", "mpfr_mul_si": "si", "mpfr_div_si": "si",
    "mpfr_si_sub": "si_first", "mpfr_si_div": "si_first",
    "mpfr_mul_2ui": "ui", "mpfr_div_2ui": "ui", "mpfr_mul_2si": "si", "mpfr_pow_ui": "ui",
    "mpfr_pow_si": "si",
    "mpfr_sin_cos": "sin_cos", "mpfr_sin": "unary", "mpfr_cos": "unary", "mpfr_tan": "unary",
    "mpfr_exp": "unary", "mpfr_log": "unary", "mpfr_sqrt": "unary", "mpfr_rec_sqrt": "unary",
    "mpfr_cbrt": "unary", "mpfr_pow": "binary", "mpfr_atan": "unary", "mpfr_atan2": "binary",
    "mpfr_sinh": "unary", "mpfr_cosh": "unary", "mpfr_tanh": "unary", "mpfr_asin": "unary",
    "mpfr_acos": "unary", "mpfr_atanh": "unary", "mpfr_asinh": "unary", "mpfr_acosh": "unary",
    "mpfr_erf": "unary", "mpfr_erfc": "unary", "mpfr_gamma": "unary", "mpfr_lngamma": "unary",
    "mpfr_digamma": "unary", "mpfr_zeta": "unary", "mpfr_eint": "unary", "mpfr_ai": "unary",
    "mpfr_set": "copy", "mpfr_set_si": "set_si"}
"""The MPFR functions an operation-counting build counts (:func:`operation_counts`), with
the shape of their arguments: "binary" (out, a, b), "unary" (out, a), "si" (out, a,
long), "si_first" (out, long, a), "ui" (out, a, unsigned long), "sin_cos" (sin, cos, a),
"copy" (out, a) and "set_si" (out, long) -- the copies, not arithmetic."""

ENV_COUNT = "MPVI_COUNT_OPERATIONS"
"""``MPVI_COUNT_OPERATIONS=1`` (set before the first kernel is built) builds the compiled
modules with a counter on every MPFR function of :data:`COUNTED_OPERATIONS`
(:func:`operation_counts`): an instrument of ``benchmarks/step_speed.py --floor``, slower."""


def _counting_lines() -> list[str]:
    """The generated part of an operation-counting build (:data:`ENV_COUNT`; nothing in a
    normal build): ``MPVI_COUNT``, the counters and one macro per function of
    :data:`COUNTED_OPERATIONS` that counts its calls, placed after ``mpvi_runtime.h`` (the
    MPFR header) and before everything that calls MPFR; ``mpvi_count.h`` adds the module's
    ``operation_counts``."""
    if not counting():
        return []
    lines = ["#define MPVI_COUNT 1",
             f"static unsigned long long mpvi_counts[{len(COUNTED_OPERATIONS)}];",
             "static const char *mpvi_counted[] = {"
             + ", ".join(f'"{f}"' for f in COUNTED_OPERATIONS) + "};"]
    for i, f in enumerate(COUNTED_OPERATIONS):
        lines += [f"#undef {f}", f"#define {f}(...) (mpvi_counts[{i}]++, ({f})(__VA_ARGS__))"]
    return lines


def counting() -> bool:
    """Whether the modules built now count their MPFR operations (:data:`ENV_COUNT`)."""
    return os.environ.get(ENV_COUNT, "0").strip() == "1"


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




RUNTIME_PACKAGE = "mpvi"
RUNTIME_DIRECTORY = "csrc"
"""The C runtime every compiled module includes: the files of ``mpvi/csrc`` (shipped as
package data), read as C by a reader and by the compiler (``-I``)."""


def _module_source(what: str, note: str, header: str, defines: dict, hooks: Sequence[str],
                   counted: bool = True) -> str:
    """The C source of a compiled module: a comment (``what``, ``note``), the ``defines``
    (sizes, the module name), the runtime (``mpvi_runtime.h``, the counting macros of an
    operation-counting build if ``counted``, then the kind's ``header``) and the generated
    ``hooks`` the header declares."""
    lines = [f"/* generated by mpvi.cbackend: {what}", f"   {note.replace('*/', '* /')} */"]
    lines += [f"#define {k} {v}" for k, v in defines.items()]
    lines.append('#include "mpvi_runtime.h"')
    lines += _counting_lines() if counted else []
    lines.append(f'#include "{header}"')
    return "\n".join(lines) + "\n\n" + "\n\n".join(hooks) + "\n"


def _hook(signature: str, lines: Sequence[str], result: str | None = None) -> str:
    """A generated static C function ``signature`` of ``lines`` (then ``return result;``)."""
    body = [f"    {x}" for x in lines] + ([f"    return {result};"] if result is not None else [])
    return f"static {signature} {{\n" + "\n".join(body) + "\n}"


def translate(name: str, source: str, prec: int, constants: Sequence[str],
              note: str = "", values: dict | None = None) -> str:
    """The C source of an extension module ``name`` whose function ``f(*groups)`` computes
    what the Python ``source`` (printed by :func:`mpvi.codegen.generate`) computes, bit for
    bit, at ``prec`` bits; ``constants`` are the names of the constant table given to
    ``setup`` once (the hoisted rationals, pi, E), ``values`` their exact values as
    (numerator, denominator) if known.  The module is ``mpvi_function.h`` of the runtime
    with the hooks ``mk_evaluate`` (the arguments read, the statements, the results) and
    ``mk_init``."""
    tr = _Translator(constants, values=values)
    info = tr.function(source)
    groups, unpack, results = info["groups"], info["unpack"], info["results"]
    members = {m for g in unpack.values() for m in g}
    scalars = {g for g in groups if g not in unpack}
    names = sorted(m for m in tr.names if m in tr.used or (m not in members and m not in scalars))
    decls = [f"mpfr_ptr v_{n} = NULL;" for n in names]
    read, nslots = [], 0          # slots: exact copies of arguments given as Python ints
    for i, g in enumerate(groups):
        if g in unpack:
            group = unpack[g]
            decls.append(f"mpfr_ptr g{i}[{max(len(group), 1)}];")
            read.append(f"if (!mk_group(args[{i}], {i}, {len(group)}, g{i}, &slots[{nslots}])) "
                        "return 0;")
            read += [f"v_{m} = g{i}[{j}];" for j, m in enumerate(group) if m in tr.used]
            nslots += len(group)
        elif g in tr.used:   # a scalar argument; one never read (an empty group) is not checked
            read.append(f"if (!(v_{g} = arg(args[{i}], {i}, -1, &slots[{nslots}]))) return 0;")
            nslots += 1
    outs = [f'if (!mk_int(result, {i}, "{r}")) return 0;' if kind == "int" else
            f"if (!mk_mpfr(result, {i}, {r})) return 0;" for i, (kind, r) in enumerate(results)]
    init = [f"mpfr_init2({z}, 64); mpfr_set_si({z}, {n}L, MPFR_RNDN);"
            for n, z in tr.ints.items()] + tr.init
    defines = {"PREC": prec, "MPVI_MODULE": name, "NTEMPS": max(tr.temps, 1),
               "NCONST": max(len(constants), 1), "NCONST_REAL": len(constants),
               "NZ": max(len(tr.ints), 1), "NSLOTS": max(nslots, 1), "NGROUPS": len(groups),
               "NRESULTS": len(results)}
    hooks = [_hook("int mk_evaluate(PyObject *const *args, PyObject *result)",
                   ["(void)args;"] + decls + read + tr.lines + outs, "1"),
             _hook("void mk_init(void)", init)]
    return _module_source("a kernel of mpvi.codegen translated to MPFR", note,
                          "mpvi_function.h", defines, hooks)


def _storage(tr: "_Translator") -> tuple[list[str], list[str]]:
    """(C declarations, module-init lines) of a translated function's storage: its
    temporaries, constant table and exact integers (``prefix``t/k/z) and its named
    values (``prefix``v_*); the init lines end with the operations on literals alone."""
    p, nt, nc, nz = tr.prefix, max(tr.temps, 1), max(len(tr.constants), 1), max(len(tr.ints), 1)
    decls = [f"static mpfr_t {p}t[{nt}], {p}k[{nc}], {p}z[{nz}];"]
    decls += [f"static mpfr_ptr {p}v_{m};" for m in sorted(tr.names)   # an argument never
              if m not in tr.scalars or m in tr.used]                # read is not declared
    inits = [f"for (int i = 0; i < {nt}; i++) mpfr_init2({p}t[i], PREC);",
             f"for (int i = 0; i < {nc}; i++) mpfr_init2({p}k[i], PREC);",
             f"for (int i = 0; i < {nz}; i++) mpfr_init2({p}z[i], 64);"]
    inits += [f"mpfr_set_si({z}, {v}L, MPFR_RNDN);" for v, z in tr.ints.items()]
    return decls, inits + tr.init


def translate_newton(name: str, sources: Sequence[str], constants: Sequence[Sequence[str]],
                     prec: int, n: int, nk: int, np_: int, note: str = "",
                     values: Sequence[dict] | None = None) -> str:
    """The C source of an extension module ``name`` whose ``newton(X0, K, P, eps, rtol,
    scale, max_iter, slack)`` runs :func:`mpvi.newton.solve_info` on a generated kernel
    entirely in C: ``sources`` are the Python sources of (residual_and_jacobian, residual[,
    outputs]) of :class:`mpvi.kernels.Kernel`, ``constants`` their constant names.  The
    same dense elimination (:func:`mpvi.linalg.solve_dense`), stopping rule and residual
    check, operation by operation, so the same bits and iteration counts.  It returns
    ``(X, iterations, residual[, outputs])``, or None wherever the Python iteration would
    raise or could take a path the C one does not follow (a non-finite number, a singular
    pivot, the iteration limit, an argument wider than the context): the caller then runs
    the Python iteration, which raises its own error (or, rarely, succeeds)."""
    parts, shared = [], {}
    for src, consts, prefix, scope in zip(sources, constants, ("b_", "r_", "o_"),
                                         (None, "final", "final")):
        tr = _Translator(consts, prefix, varying=(0,), shared=shared, scope=scope,
                         values=values[len(parts)] if values else None)
        parts.append((tr, tr.function(src)))
    results = [[tr.exact_int(v) if kind == "int" else v for kind, v in info["results"]]
               for tr, info in parts]
    if len(results[0]) != n + n * n or len(results[1]) != n:
        raise Unsupported(f"a Newton kernel of {n} unknowns returns {len(results[0])} and "
                          f"{len(results[1])} values")
    decls, inits, pres, setups, evaluate = [], [], [], [], []
    for c, (tr, info) in enumerate(parts):
        p, nc = tr.prefix, len(tr.constants)
        d, i = _storage(tr)
        decls += d
        inits += i
        setups.append(f"if (!nw_set_table(tables, {c}, {p}k, {nc})) return 0;")
        X, K, P = (info["unpack"].get(g, ()) for g in info["groups"])
        pres += [f"{p}v_{m} = kp[{j}];" for j, m in enumerate(K)]
        pres += [f"{p}v_{m} = pp[{j}];" for j, m in enumerate(P)] + tr.pre
        evaluate.append([f"{p}v_{m} = xp[{j}];" for j, m in enumerate(X)] + tr.lines)
    both, res = results[0], results[1]
    fill = [f"rp[{i}] = {r};" for i, r in enumerate(both[:n])]
    fill += [f"Jp[{i}][{j}] = {both[n + i * n + j]};" for i in range(n) for j in range(n)]
    rfill = [f"rr[{i}] = {r};" for i, r in enumerate(res)]
    outputs = []
    if len(parts) > 2:
        outputs = evaluate[2] + [f"oo[{i}] = {r};" for i, r in enumerate(results[2])]
    defines = {"PREC": prec, "MPVI_MODULE": name, "N": n, "NK": nk, "NP": np_,
               "NKA": max(nk, 1), "NPA": max(np_, 1),
               "NOUT": max(len(results[2]) if len(parts) > 2 else 0, 1),
               "HAS_OUTPUTS": int(len(parts) > 2), "NTABLES": len(parts)}
    hooks = ["\n".join(decls),
             _hook("int nw_tables(PyObject *tables)", setups, "1"),
             _hook("void nw_init(void)", inits),
             _hook("void nw_pre(void)", pres),
             _hook("void nw_both(void)", evaluate[0] + fill),
             _hook("void nw_residual(void)", evaluate[1] + rfill),
             _hook("void nw_outputs(void)", outputs)]
    return _module_source("Newton's method of mpvi.newton.solve_info on a kernel of "
                          "mpvi.kernels, with the elimination of mpvi.linalg.solve_dense, "
                          "in MPFR", note, "mpvi_newton.h", defines, hooks)


def _bind(tr: "_Translator", info: dict, sources: Sequence[str]) -> list[str]:
    """C lines pointing the unpacked arguments of a translated function at ``sources``: one
    C array expression per argument group (``None``: bound elsewhere)."""
    lines = []
    for g, src in zip(info["groups"], sources):
        members = info["unpack"].get(g)
        if members is None:
            if g in tr.used:
                raise Unsupported(f"scalar argument {g} of an explicit field")
            continue
        if src is not None:
            lines += [f"{tr.prefix}v_{m} = {src}[{j}];" for j, m in enumerate(members)]
    return lines


def translate_explicit(name: str, sources: Sequence[str], constants: Sequence[Sequence[str]],
                       prec: int, n: int, npar: int, note: str = "", ng: int = 0,
                       values: Sequence[dict] | None = None) -> str:
    """The C source of an extension module ``name`` with the explicit steps of
    :mod:`mpvi.ode` on a mechanical system's Hamiltonian field y = (q, p), in MPFR:
    ``rk4(t, y, h, params, eps)`` (:func:`mpvi.ode.rk4_step`), ``gbs(t, y, H, levels,
    params, eps)`` (:func:`mpvi.ode.gbs_step`) and ``field(t, y, params, eps)``
    (the field of :func:`mpvi.kernels.hamiltonian_field`), operation by operation, so the
    same bits.  ``sources``: the generated ``hamiltonian_field(t, q, p, params)`` returning
    [det M, M, v, p'] (the symbolic inverse), or ``M(q, params)`` and ``force(t, q, v,
    params)`` (v from M v = p by the elimination of :func:`mpvi.linalg.solve_dense`).
    Each returns a list of 2n numbers, or None wherever the Python field would take
    another path (M singular to working precision, a non-finite pivot, an argument wider
    than the context): the caller then runs the Python step, which gives the same bits
    or raises its error.  With ``ng`` > 0 the field's last function (``hamiltonian_field``
    or ``force``) also returns, after its values, the system's ``ng`` singular factors at
    (t, q) (:mod:`mpvi.singular`; one elimination of common subexpressions with the field,
    so they cost next to nothing); each function then takes one more argument, ``signs``
    (a tuple of -1, 0, +1 per factor, or None: no check), and every evaluation of the field
    also requires each factor to keep its sign at that stage (else None: the Python step
    raises, naming it)."""
    symbolic = len(sources) == 1
    if symbolic:
        specs = [("f_", (0, 1, 2), ("ft_", "fy", "(fy + N)", "parp"))]
    elif len(sources) == 2:
        specs = [("m_", (0,), ("fy", "parp")), ("g_", (0, 1, 2), ("ft_", "fy", "vxp", "parp"))]
    else:
        raise Unsupported(f"an explicit field of {len(sources)} functions")
    parts = []
    for c, (src, consts, (prefix, varying, args)) in enumerate(zip(sources, constants, specs)):
        tr = _Translator(consts, prefix, varying=varying, values=values[c] if values else None)
        info = tr.function(src)
        results = [tr.exact_int(v) if kind == "int" else v for kind, v in info["results"]]
        parts.append((tr, info, args, results))
    decls, inits, binds, fixed, evaluate = [], [], [], [], []
    for c, (tr, info, args, results) in enumerate(parts):
        p, nc = tr.prefix, len(tr.constants)
        d, i = _storage(tr)
        decls += d
        inits += i
        binds.append(f"if (!nw_set_table(tables, {c}, {p}k, {nc})) return 0;")
        varying = {info["groups"][i] for i in (tr.varying_groups or ())}
        fixed_args = [a if g not in varying else None for g, a in zip(info["groups"], args)]
        moving_args = [a if g in varying else None for g, a in zip(info["groups"], args)]
        fixed += _bind(tr, info, fixed_args) + tr.pre
        evaluate.append(_bind(tr, info, moving_args) + tr.lines)
    if symbolic:
        (tr, info, args, res), = parts
        if len(res) != 1 + n * n + 2 * n + ng:
            raise Unsupported(f"a Hamiltonian field of {n} degrees of freedom returns {len(res)} values")
        body = evaluate[0] + [f"mp[{i}] = {r};" for i, r in enumerate(res[1:1 + n * n])]
        body += [f"if (!ex_regular({res[0]}, eps)) return 0;"]
        body += [f"mpfr_set(fo[{i}], {r}, MPFR_RNDN);"
                 for i, r in enumerate(res[1 + n * n:1 + n * n + 2 * n])]
        factors = res[1 + n * n + 2 * n:]
    else:
        (_, _, _, mres), (_, _, _, gres) = parts
        gres, factors = gres[:len(gres) - ng], gres[len(gres) - ng:]
        if len(mres) != n * n or len(gres) != n:
            raise Unsupported(f"a mass matrix of {len(mres)} and a force of {len(gres)} values "
                              f"for {n} degrees of freedom")
        body = evaluate[0] + [f"mp[{i}] = {r};" for i, r in enumerate(mres)]
        body += ["for (int i = 0; i < N; i++) bp[i] = fy[N + i];",
                 "if (!dense_solve(N, mp, Ao, bp, bo, vx, eps, perm, W, SF, SS, STINY)) return 0;"]
        body += evaluate[1]
        body += ["for (int i = 0; i < N; i++) mpfr_set(fo[i], vx[i], MPFR_RNDN);"]
        body += [f"mpfr_set(fo[N + {i}], {r}, MPFR_RNDN);" for i, r in enumerate(gres)]
    guards = []
    if ng:
        guards = ["if (gon) {"] + [f"    if (!sg_ok({r}, {j})) return 0;"
                                   for j, r in enumerate(factors)] + ["}"]
    defines = {"PREC": prec, "MPVI_MODULE": name, "N": n, "NPAR": npar,
               "NPARA": max(npar, 1), "NG": ng, "NGR": max(ng, 1), "NTABLES": len(parts)}
    hooks = ["\n".join(decls),
             _hook("int ex_tables(PyObject *tables)", binds, "1"),
             _hook("void ex_init(void)", inits),
             _hook("void ex_fixed(void)", fixed),
             _hook("int ex_evaluate(mpfr_srcptr eps)", body, "1"),
             _hook("int ex_guards(void)", guards, "1")]
    return _module_source("the RK4 and GBS steps of mpvi.ode on a Hamiltonian field of "
                          "mpvi.kernels, in MPFR", note, "mpvi_explicit.h", defines, hooks)


def translate_check(name: str, source: str, constants: Sequence[str], prec: int, n: int,
                    note: str = "", guard: tuple | None = None,
                    values: Sequence[dict] | None = None) -> str:
    """The C source of an extension module ``name`` whose ``check(t, q, y, params, bound)``
    runs the checks :func:`mpvi.solve` makes after every step of an M, V system, in MPFR:
    every number of q and y finite, max |x| <= ``bound`` (the growth guard; None: off), and
    the system regular at q (:meth:`mpvi.LagrangianSystem.irregularity`: ``source`` is its
    generated ``regularity(t, q, v, params)`` returning [V, M]; V and M finite, M positive
    definite by the LDL^T of :func:`mpvi.linalg.is_positive_definite`, the same operations
    in the same order).  With ``guard`` = (source, constant names) of the generated
    ``singular_factors(t, q, v, params)`` (:mod:`mpvi.singular`), ``source`` returns [V, M,
    the factors] (one elimination of common subexpressions: the factors at the node cost
    next to nothing) and the check takes two more arguments, ``signs`` (a tuple of -1, 0,
    +1, one per factor, or None: not checked) and ``qprev`` (the previous node's
    positions, or None), and also requires every factor to have its sign at q and, with
    ``qprev``, at the chord midpoint (q + qprev)/2 (``guard``'s function; a 0 sign: the
    caller decides).  True when all hold; False otherwise or for an argument it does not
    take: the caller then runs its own checks, which raise with the message."""
    tr = _Translator(constants, "r_", values=values[0] if values else None)
    info = tr.function(source)
    res = [tr.exact_int(v) if kind == "int" else v for kind, v in info["results"]]
    ng = 0
    if guard is not None:
        gt = _Translator(guard[1], "g_", values=values[1] if values and len(values) > 1 else None)
        ginfo = gt.function(guard[0])
        gres = [gt.exact_int(v) if kind == "int" else v for kind, v in ginfo["results"]]
        if len(ginfo["groups"]) != 4:
            raise Unsupported("a singular-factor kernel without the arguments (t, q, v, params)")
        ng = len(gres)
    if len(res) != 1 + n * n + ng or len(info["groups"]) != 4:
        raise Unsupported(f"a regularity kernel of {n} degrees of freedom and {ng} singular "
                          f"factors returns {len(res)} values")
    binds = _bind(tr, info, ("tp", "yp", "yp", "parp"))   # the M, V form: q stands in for v
    body = tr.lines + [f"mp[{i}] = {r};" for i, r in enumerate(res[1:1 + n * n])]
    decls, inits = _storage(tr)
    npar = len(info["unpack"].get(info["groups"][3], ()))
    tables = [f"if (!nw_set_table(tables, 0, r_k, {len(constants)})) return 0;"]
    guards = []
    if guard is not None:
        d, i = _storage(gt)
        decls, inits = decls + d, inits + i
        guards = ["if (gon) {"] + [f"    if (!sg_ok({r}, {j})) return 0;"
                                   for j, r in enumerate(res[1 + n * n:])] + ["}"]
        guards += ["if (gon && qmid) {"] + [f"    {x}" for x in _bind(gt, ginfo, ("tp", "qm", "qm", "parp"))]
        guards += [f"    {x}" for x in gt.lines]
        guards += [f"    if (!sg_ok({r}, {j})) return 0;" for j, r in enumerate(gres)]
        guards += ["}"]
        tables.append(f"if (!nw_set_table(tables, 1, g_k, {len(guard[1])})) return 0;")
    else:
        guards = ["(void)qmid;"]
    defines = {"PREC": prec, "MPVI_MODULE": name, "N": n, "NPAR": npar,
               "NPARA": max(npar, 1), "NG": ng, "NGR": max(ng, 1),
               "NTABLES": 2 if guard is not None else 1}
    hooks = ["\n".join(decls),
             _hook("int ck_tables(PyObject *tables)", tables, "1"),
             _hook("void ck_init(void)", inits),
             _hook("mpfr_srcptr ck_evaluate(void)", binds + body, res[0]),
             _hook("int ck_guards(int qmid)", guards, "1")]
    return _module_source("the checks after a step of mpvi.solve, in MPFR", note,
                          "mpvi_check.h", defines, hooks)


def step_check(source: str, table: dict, prec: int, n: int, guard: tuple | None = None):
    """The checks after a step of an M, V system compiled (:func:`translate_check`):
    ``check(t, q, y, params, bound)`` (with ``guard`` = (source, table) of the singular
    factors: ``check(t, q, y, params, bound, signs, qprev)``) -> True when all pass (False:
    run the Python checks), or None when compiled kernels are off or unavailable.  Compiled
    after :data:`COMPILE_AFTER` calls unless in the disk cache (False meanwhile)."""
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

_RECORD_HEADER = "mpvi compiled kernel record 1"
_RECORD_MAX_BYTES = 1024

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


def _record_text(file_name: str, size: int, digest: str) -> str:
    """The digest record of a module: it binds the module's file name (its module name,
    cache key and ABI), its size and its SHA-256."""
    return f"{_RECORD_HEADER}\nfile {file_name}\nsize {size}\nsha256 {digest}\n"


def _module_problem(path: Path) -> str | None:
    """Why the module at ``path`` must not be loaded (:data:`_MISSING` if there is none),
    or None: it and its digest record are regular files of this user that nobody else
    can write, and the record names this file, its size and its SHA-256."""
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
    return _record_problem(bytes(data), path.name, st.st_size, digest.hexdigest())


def _record_problem(data: bytes, file_name: str, size: int, digest: str) -> str | None:
    """Why the digest record ``data`` does not vouch for the module ``file_name`` of
    ``size`` bytes and SHA-256 ``digest``, or None."""
    try:
        lines = data.decode("ascii").split("\n")
    except UnicodeDecodeError:
        lines = []
    fields = dict(line.split(" ", 1) for line in lines[1:] if " " in line)
    if (not lines or lines[0] != _RECORD_HEADER or set(fields) != {"file", "size", "sha256"}
            or data.decode("ascii") != _record_text(fields["file"], fields["size"],
                                                    fields["sha256"])):
        return "has a malformed digest record"
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

_CFLAGS = ("-O2", "-fno-plt", "-shared", "-fPIC", "-std=c99", "-Wall", "-Wextra")
"""The compiler's flags (part of a module's cache key).  ``-fno-plt`` calls MPFR through
the GOT directly: the modules make thousands of MPFR calls per step (1-2 % faster).
Warnings are on (the runtime and the generated code compile without any under ``-Wall
-Wextra -Werror``, ``tests/test_csrc.py``) but not errors: a newer compiler's new warning
must not stop a build.  The headers of Python, GMP, MPFR and gmpy2 are included as system
headers (``-isystem``): their warnings are not ours to fix."""


def runtime_files(directory: Path | None = None) -> dict:
    """The C runtime's files: ``{file name: contents}`` of the ``.h`` and ``.c`` files of
    ``directory`` (default: ``mpvi/csrc`` of the installed package, :data:`RUNTIME_DIRECTORY`).

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
        entries = [e for e in root.iterdir() if e.name.endswith((".h", ".c"))]
    else:
        entries = [e for e in Path(directory).iterdir() if e.name.endswith((".h", ".c"))]
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


def translate_taylor(name: str, tape, prec: int, note: str = "") -> str:
    """The C source of an extension module ``name`` with the Taylor steps on a
    :class:`mpvi.taylor.Tape`, each bit-identical to its method of
    :class:`mpvi.taylor.TaylorEvaluator` (the same recurrences, operation by operation):
    ``step(t, y, h, order, params, eps)`` -> the new y as a list;
    ``adaptive(t, y, h, order, params, eps, factor, record)`` -> (the new y, the number
    of substeps, the interior substep ends or None), Jorba & Zou's adaptive substeps --
    (None, substeps, [tau, hs]) where Python raises :func:`mpvi.taylor.substep_limit`; and
    ``coefficients(t, y, order, params, eps)`` -> the flat list of the coefficients y_0 ..
    y_order.  Each returns None where Python takes another path (a singular M_0 in a
    solve; a substep that no longer moves the time; an argument wider than the context):
    the caller then runs the Python step, which raises its error.  ``setup`` takes a
    one-element tuple: the list of the tape's constants."""
    F = lambda o: f"F[{o[1]}]"                      # noqa: E731
    S = lambda o, k: f"S[{o[1]}][{k}]"              # noqa: E731
    T = lambda o: f"S[{o[1]}]"                      # noqa: E731  (a whole series)

    def coef(o, k):
        return S(o, k) if o[0] == "s" else f"(({k}) == 0 ? F[{o[1]}] : ZERO)"

    fixed = []
    for ins in tape.fixed:
        op, d = ins[0], f"FS[{ins[1][1]}]"
        ptr = f"F[{ins[1][1]}]"
        if op == "param":
            fixed.append(f"{ptr} = par[{ins[2]}];")
            continue
        if op == "const":
            fixed.append(f"{ptr} = KC[{ins[2]}];")
            continue
        if op == "int":
            if not -2 ** 62 < ins[2] < 2 ** 62:
                raise Unsupported(f"integer literal {ins[2]} beyond 62 bits")
            fixed.append(f"mpfr_set_si({d}, {ins[2]}L, MPFR_RNDN);")
        elif op == "mpf":
            v = ins[2]
            if isinstance(v, int):
                if not -2 ** 62 < v < 2 ** 62:
                    raise Unsupported(f"mpf({v}) beyond 62 bits")
                fixed.append(f"mpfr_set_si({d}, {v}L, MPFR_RNDN);")
            else:
                if not all(ch in "0123456789.eE+-" for ch in v):
                    raise Unsupported(f"mpf({v!r})")
                fixed.append(f'mpfr_set_str({d}, "{v}", 10, MPFR_RNDN);')
        elif op == "fun":
            fn, a = ins[2], F(ins[3])
            if fn not in _FUNCTIONS:
                raise Unsupported(f"function {fn}")
            call = f"{_FUNCTIONS[fn]}({d}, {a}, MPFR_RNDN);"
            if fn in _PERIODIC:
                call = (f"if (mpfr_nan_p({a}) || mpfr_cmpabs({a}, limit) >= 0) "
                        f"mpfr_set_nan({d}); else {call}")
            fixed.append(call)
        elif op == "neg":
            fixed.append(f"mpfr_neg({d}, {F(ins[2])}, MPFR_RNDN);")
        elif op == "pow_i":
            e = ins[3]
            if e == 2:
                fixed.append(f"mpfr_sqr({d}, {F(ins[2])}, MPFR_RNDN);")
            else:
                fixed.append(f"mpfr_pow_si({d}, {F(ins[2])}, {e}L, MPFR_RNDN);")
        elif op in ("add", "sub", "mul", "div", "pow"):
            fixed.append(f"mpfr_{op}({d}, {F(ins[2])}, {F(ins[3])}, MPFR_RNDN);")
        else:
            raise Unsupported(f"fixed tape operation {op}")
        fixed.append(f"{ptr} = {d};")

    body = []
    emit = body.append
    for ins in tape.series:
        op = ins[0]
        emit(f"/* {op} */")
        if op == "solve":
            v, M, p = ins[1], ins[2], ins[3]
            n = len(v)
            for i in range(n):
                emit(f"mpfr_set(RHS[{i}], {coef(p[i], 'k')}, MPFR_RNDN);")
                terms = [(m, M[i * n + m]) for m in range(n) if M[i * n + m][0] == "s"]
                if terms:
                    emit("for (long j = 1; j <= k; j++) {")
                    for m, e in terms:
                        emit(f"    mpfr_mul(W, {S(e, 'j')}, {S(v[m], 'k - j')}, MPFR_RNDN);")
                        emit(f"    mpfr_sub(RHS[{i}], RHS[{i}], W, MPFR_RNDN);")
                    emit("}")
                emit(f"rp[{i}] = RHS[{i}];")
            for i, e in enumerate(M):
                emit(f"mp[{i}] = {S(e, 0) if e[0] == 's' else F(e)};")
            emit("if (!dense_solve(N, mp, Ao, rp, bo, vx, eps, perm, W, SF, SS, STINY)) return 0;")
            for i in range(n):
                emit(f"mpfr_set({S(v[i], 'k')}, vx[{i}], MPFR_RNDN);")
            continue
        d, a = ins[1], ins[2]
        D = S(d, "k")
        if op in ("add", "sub"):
            b = ins[3]
            if a[0] == "f":
                emit(f"ts_{op}_fs({T(d)}, {F(a)}, {T(b)}, k);")
            elif b[0] == "f":
                emit(f"ts_{op}_sf({T(d)}, {T(a)}, {F(b)}, k);")
            else:
                emit(f"mpfr_{op}({D}, {S(a, 'k')}, {S(b, 'k')}, MPFR_RNDN);")
        elif op == "neg":
            emit(f"mpfr_neg({D}, {S(a, 'k')}, MPFR_RNDN);")
        elif op == "mul":
            b = ins[3]
            if a[0] == "f":
                emit(f"mpfr_mul({D}, {F(a)}, {S(b, 'k')}, MPFR_RNDN);")
            elif b[0] == "f":
                emit(f"mpfr_mul({D}, {S(a, 'k')}, {F(b)}, MPFR_RNDN);")
            else:
                emit(f"ts_mul({T(d)}, {T(a)}, {T(b)}, k);")
        elif op == "div":
            b = ins[3]
            if b[0] == "f":
                emit(f"mpfr_div({D}, {S(a, 'k')}, {F(b)}, MPFR_RNDN);")
            else:
                emit(f"ts_div({T(d)}, {coef(a, 'k')}, {T(b)}, k);")
        elif op == "sqr":
            emit(f"ts_sqr({T(d)}, {T(a)}, k);")
        elif op == "sincos":
            emit(f"ts_sincos({T(d)}, {T(ins[2])}, {T(ins[3])}, {T(ins[4])}, k);")
        elif op == "exp":
            emit(f"ts_exp({T(d)}, {T(a)}, {T(ins[3])}, k);")
        elif op in ("log", "sqrt"):
            emit(f"ts_{op}({T(d)}, {T(a)}, k);")
        elif op == "powc":
            emit(f"ts_powc({T(d)}, {T(a)}, {F(ins[3])}, k);")
        else:
            raise Unsupported(f"series tape operation {op}")
    outputs = [f"mpfr_div_si(S[{st}][k + 1], {coef(o, 'k')}, k + 1, MPFR_RNDN);"
               for st, o in zip(tape.state, tape.outputs)]
    nparams = sum(1 for i in tape.fixed if i[0] == "param")
    defines = {"PREC": prec, "MPVI_MODULE": name, "N": tape.n, "NS": max(tape.nseries, 1),
               "NF": max(tape.nfixed, 1), "NC": len(tape.constants),
               "NCA": max(len(tape.constants), 1), "NPAR": nparams,
               "NPARA": max(nparams, 1), "MAX_SUBSTEPS": f"{tape.max_substeps}L",
               "MPVI_STATE": ", ".join(map(str, tape.state)),
               "MPVI_TIME": -1 if tape.time is None else tape.time}
    hooks = [_hook("void tp_fixed(void)", fixed),
             _hook("int tp_order(long k, mpfr_srcptr eps)", ["(void)k;", "(void)eps;"] + body, "1"),
             _hook("void tp_outputs(long k)", ["(void)k;"] + outputs)]
    return _module_source("one Taylor step of mpvi.taylor on a Hamiltonian field of "
                          "mpvi.kernels, in MPFR", note, "mpvi_taylor.h", defines, hooks,
                          counted=False)


def taylor_step(tape, prec: int):
    """The Taylor steps on ``tape`` (:class:`mpvi.taylor.Tape`), compiled
    (:func:`translate_taylor`), or None when compiled kernels are off or unavailable or
    the tape has an operation the translator does not know (said once).

    Returns
    -------
    (step, adaptive, coefficients) or None
        ``step(t, y, h, order, params, eps)`` -> the new y as a list,
        ``adaptive(t, y, h, order, params, eps, factor, record)`` -> (the new y, the
        number of substeps, the interior substep ends or None) and ``coefficients(t, y,
        order, params, eps)`` -> the flat list of the coefficients, bit-identical to
        :meth:`mpvi.taylor.TaylorEvaluator.step`, ``adaptive`` and ``coefficients``, or
        None where the caller must run the Python step (which then raises its error);
        before the module is built (after :data:`COMPILE_AFTER` calls weighted by the
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
                                    " ".join(tc["link"]), " ".join(_CFLAGS)]).encode()).hexdigest()[:24]
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
        cmd = [tc["cc"], *_CFLAGS, str(c), "-o", str(out), f"-I{_copy_runtime(Path(tmp))}"]
        cmd += [f"-isystem{d}" for d in tc["includes"]] + tc["link"]
        if tc["rpath"]:
            cmd.append(f"-Wl,-rpath,{tc['rpath']}")
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"{tc['cc']} failed ({r.returncode}): "
                               f"{(r.stderr or r.stdout).strip()[:2000]}")
        os.chmod(out, 0o755)                      # whatever the umask: writable by us alone
        st = _regular(out)
        digest = hashlib.sha256()
        _read_checked(out, st, digest.update)
        module = _load(name, out)
        record = Path(tmp) / (target.name + _RECORD_SUFFIX)
        record.write_text(_record_text(target.name, st.st_size, digest.hexdigest()),
                          encoding="ascii")
        os.chmod(record, 0o644)
        try:
            os.replace(out, target)               # atomic: another process may race us
            os.replace(record, target.with_name(record.name))
        except OSError as exc:
            _report_once(f"store-error-{target}", f"the compiled kernel {target} cannot be "
                         f"stored ({exc.strerror or exc}); it is used by this process only")
    return module


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
    problem = _module_problem(target)
    if problem is None:
        return _load(name, target)
    if problem != _MISSING:
        done = "removed and rebuilt" if _discard(target) else "rebuilt (it cannot be removed)"
        _report_once(f"rejected-{target}", f"the compiled kernel {target} {problem}: not "
                     f"loaded; {done}")
    return _build(name, csource, tc, target)


_MODULES: dict = {}

COMPILE_AFTER = 1000
"""Calls of a kernel after which it is compiled when its module is not yet in the disk
cache (``MPVI_COMPILE_AFTER`` overrides; 0 compiles at the first call): compiling takes 0.1-3 s, a compiled call saves
about 0.1 ms, so a kernel used for a few steps stays in Python.  A kernel whose module is
already cached is loaded at once."""

ENV_COMPILE_AFTER = "MPVI_COMPILE_AFTER"
"""The environment variable that overrides :data:`COMPILE_AFTER` (a non-negative integer)."""


def compile_after() -> int:
    """The calls of a kernel after which it is compiled: ``$MPVI_COMPILE_AFTER`` if set,
    else :data:`COMPILE_AFTER`.

    Returns
    -------
    int
        A non-negative number of calls (0: compiled at the first call).

    Raises
    ------
    ValueError
        ``MPVI_COMPILE_AFTER`` is set to something else than a non-negative integer in
        decimal digits; the message names the variable and its value.
    """
    raw = os.environ.get(ENV_COMPILE_AFTER)
    if raw is None:
        return COMPILE_AFTER
    if not re.fullmatch(r"[0-9]+", raw.strip()):
        raise ValueError(f"{ENV_COMPILE_AFTER}={raw!r}: must be a non-negative integer (the "
                         f"calls of a kernel before it is compiled; default {COMPILE_AFTER})")
    return int(raw.strip())


def _usable() -> dict | None:
    """The toolchain, or None when compiled kernels are off or unavailable (said once)."""
    if not enabled():
        return None
    tc = toolchain()
    if "error" in tc:
        _report_once("toolchain-error", f"compiled kernels unavailable ({tc['error']}); "
                     f"computing with the Python kernels")
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
                 np_: int):
    """The plan (as :func:`_plan`) of a compiled Newton module, or None."""
    return _tables_plan("mpvi_n", "Newton iteration", tables, lambda names, note, exact:
                        translate_newton("mpvi_module", sources, names, prec, n, nk, np_,
                                         note, exact))


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
        The function's Python source, as :func:`mpvi.codegen.generate` prints it.
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


def _lazy(plan, attribute: str, python: Callable, weight: Callable | None = None) -> Callable:
    """``module.<attribute>`` of ``plan``: at once when its module is loaded or in the disk
    cache, else ``python`` until :data:`COMPILE_AFTER` calls (each counted as ``weight(*args)``
    calls, default 1) and then the compiled one (``python`` for good if building fails)."""
    name, csource, tc, _ = plan
    after = compile_after()
    with _lock:
        loaded = name in _MODULES
    path = None if loaded else _cached_path(name, csource, tc, create=False)
    if loaded or (path is not None and os.path.lexists(path)):
        module = _module(plan)
        return getattr(module, attribute) if module is not None else python
    state = {"calls": 0, "f": None}

    def lazy(*args):
        f = state["f"]
        if f is not None:
            return f(*args)
        state["calls"] += 1 if weight is None else weight(*args)
        if state["calls"] >= after:
            module = _module(plan)
            state["f"] = f = getattr(module, attribute) if module is not None else python
            return f(*args)
        return python(*args)
    lazy.__name__ = getattr(python, "__name__", attribute)
    return lazy


def accelerated(python: Callable, source: str, prec: int, constants: dict) -> Callable:
    """``python`` or its compiled counterpart, bit-identical either way: the compiled one at
    once when its module is in the disk cache, else after :data:`COMPILE_AFTER` calls (the
    Python function meanwhile); ``python`` itself when compiled kernels are unavailable."""
    plan = _plan(source, prec, constants)
    return python if plan is None else _lazy(plan, "f", python)


def _not_compiled(*args):
    return None


def newton_function(sources: Sequence[str], tables: Sequence[dict], prec: int, n: int,
                    nk: int, np_: int) -> Callable | None:
    """Newton's method on a generated kernel, compiled (:func:`translate_newton`), or None
    when compiled kernels are off or unavailable.

    Parameters
    ----------
    sources : (residual_and_jacobian, residual[, outputs]) Python sources of a
        :class:`mpvi.kernels.Kernel`, arguments (X, K, P).
    tables : their constant tables (name -> ``mpfr``).
    prec : the context's precision in bits.
    n, nk, np_ : the lengths of X, K and P.

    Returns
    -------
    callable or None
        ``newton(X0, K, P, eps, rtol, scale, max_iter, slack)`` -> ``(X, iterations,
        residual[, outputs])`` bit-identical to :func:`mpvi.newton.solve_info` (and the
        outputs function), or None where the caller must run the Python iteration (which
        then raises its error); before the module is built (:data:`COMPILE_AFTER` solves,
        unless it is in the disk cache) it returns None too.
    """
    plan = _newton_plan(sources, tables, prec, n, nk, np_)
    return None if plan is None else _lazy(plan, "newton", _not_compiled)


FIELD_EVALUATIONS_PER_CALL = 5
"""Field evaluations counted as one call towards :data:`COMPILE_AFTER` (a Newton solve
evaluates its kernel about five times): an RK4 step weighs 4/5, a GBS step of 24 levels
577/5."""


def explicit_steps(sources: Sequence[str], tables: Sequence[dict], prec: int, n: int,
                   npar: int, ng: int = 0):
    """The RK4 and GBS steps of :mod:`mpvi.ode` on a generated Hamiltonian field, compiled
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
        y as a list, bit-identical to :func:`mpvi.ode.rk4_step` and
        :func:`mpvi.ode.gbs_step` on the Python field, or None where the caller must run
        the Python step (the field's other path; also before the module is built, after
        :data:`COMPILE_AFTER` calls of :data:`FIELD_EVALUATIONS_PER_CALL` evaluations,
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
