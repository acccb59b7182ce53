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

Binding and libraries.  The module uses the CPython C-API with gmpy2's own C-API
(``gmpy2.h``, shipped in the gmpy2 wheel): it reads the ``mpfr_t`` inside the caller's
``mpfr`` objects and returns new ``mpfr`` objects without converting numbers through
strings or Python floats (cffi or ctypes would have to, at microseconds per number).  It
links against the MPFR and GMP that gmpy2 itself loaded (the wheel's ``gmpy2.libs/``, or
the system's when gmpy2 was built against them), so the two share one library instance.

Cache.  A compiled module is stored under :func:`cache_dir` (``MPVI_KERNEL_CACHE``,
default ``~/.cache/mpvi/kernels``) keyed by the SHA-256 of the generated C source, the
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
        self.names.update(g for g in groups if g not in unpacked)     # scalar arguments
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


def _counting_source() -> str:
    lines = ["#ifdef MPVI_COUNT",
             f"static unsigned long long mpvi_counts[{len(COUNTED_OPERATIONS)}];",
             "static const char *mpvi_counted[] = {"
             + ", ".join(f'"{f}"' for f in COUNTED_OPERATIONS) + "};"]
    for i, f in enumerate(COUNTED_OPERATIONS):
        lines += [f"#undef {f}", f"#define {f}(...) (mpvi_counts[{i}]++, ({f})(__VA_ARGS__))"]
    lines += [r"""/* operation_counts(reset): {function: calls} since the last reset */
static PyObject *operation_counts(PyObject *self, PyObject *reset) {
    PyObject *d = PyDict_New();
    for (int i = 0; d != NULL && i < (int)(sizeof mpvi_counts / sizeof mpvi_counts[0]); i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(mpvi_counts[i]);
        if (v == NULL || PyDict_SetItemString(d, mpvi_counted[i], v) < 0) { Py_XDECREF(v); Py_CLEAR(d); break; }
        Py_DECREF(v);
    }
    if (d != NULL && PyObject_IsTrue(reset))
        for (int i = 0; i < (int)(sizeof mpvi_counts / sizeof mpvi_counts[0]); i++) mpvi_counts[i] = 0;
    return d;
}
#define MPVI_COUNT_METHOD {"operation_counts", (PyCFunction)operation_counts, METH_O, "MPFR calls"},
#else
#define MPVI_COUNT_METHOD
#endif"""]
    return "\n".join(lines) + "\n"


_COUNTING = _counting_source()
"""C of the operation-counting build (``#define MPVI_COUNT``, :data:`ENV_COUNT`): every
function of :data:`COUNTED_OPERATIONS` counted; nothing in a normal build."""


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


_POWERS = r"""
/* x**e for the exponent e = p / 2^m that mpvi.codegen prints as mpf(p)/mpf(2^m): Python
   computes mpfr_pow(x, e), the correctly rounded x^(p/2^m).  The same value by square roots,
   faster: mpfr_sqrt or mpfr_rec_sqrt for p = +-1, m = 1 (correctly rounded themselves); else
   the m roots and the power |p| at PREC + 32 bits (error below 2|p| + 2 units of that
   precision), rounded once when mpfr_can_round proves that rounding is the correctly
   rounded value (never on an exact or half-way case: the RNDZ test at PREC + 1 bits).
   Everything else -- x zero, negative, infinite or nan, e not exactly p/2^m (a precision
   below the bits of p), a result near the ends of the exponent range, a value too close
   to a rounding boundary -- is mpfr_pow itself. */
static mpfr_t pw_work;
static int pw_ready = 0;

static void pw_dyadic(mpfr_ptr out, mpfr_srcptr x, mpfr_srcptr e, long p, int m, int margin) {
    if (mpfr_regular_p(x) && mpfr_sgn(x) > 0 && mpfr_cmp_si_2exp(e, p, -m) == 0) {
        if (m == 1 && p == 1) { mpfr_sqrt(out, x, MPFR_RNDN); return; }
        if (m == 1 && p == -1) { mpfr_rec_sqrt(out, x, MPFR_RNDN); return; }
        if (!pw_ready) { mpfr_init2(pw_work, PREC + 32); pw_ready = 1; }
        mpfr_srcptr a = x;
        for (int i = 1; i < m; i++) { mpfr_sqrt(pw_work, a, MPFR_RNDN); a = pw_work; }
        if (p > 0) mpfr_sqrt(pw_work, a, MPFR_RNDN); else mpfr_rec_sqrt(pw_work, a, MPFR_RNDN);
        if (p > 1 || p < -1) mpfr_pow_ui(pw_work, pw_work, (unsigned long)(p > 0 ? p : -p), MPFR_RNDN);
        if (mpfr_regular_p(pw_work) && mpfr_get_exp(pw_work) < mpfr_get_emax() - 1
            && mpfr_get_exp(pw_work) > mpfr_get_emin() + 1
            && mpfr_can_round(pw_work, PREC + 32 - margin, MPFR_RNDN, MPFR_RNDZ, PREC + 1)) {
            mpfr_set(out, pw_work, MPFR_RNDN);
            return;
        }
    }
    mpfr_pow(out, x, e, MPFR_RNDN);
}
"""
"""C of the rational powers x**(mpf(p)/mpf(2^m)), shared by every translated module."""


def translate(name: str, source: str, prec: int, constants: Sequence[str],
              note: str = "", values: dict | None = None) -> str:
    """The C source of an extension module ``name`` whose function ``f(*groups)`` computes
    what the Python ``source`` (printed by :func:`mpvi.codegen.generate`) computes, bit for
    bit, at ``prec`` bits; ``constants`` are the names of the constant table given to
    ``setup`` once (the hoisted rationals, pi, E), ``values`` their exact values as
    (numerator, denominator) if known."""
    tr = _Translator(constants, values=values)
    info = tr.function(source)
    groups, unpack, results = info["groups"], info["unpack"], info["results"]
    names = sorted(tr.names)
    read, nslots = [], 0          # slots: exact copies of arguments given as Python ints
    for i, g in enumerate(groups):
        if g in unpack:
            members = unpack[g]
            read.append(f"    seq = PySequence_Fast(args[{i}], \"argument {i} must be a sequence\");")
            read.append("    if (seq == NULL) goto fail;")
            read.append(f"    if (PySequence_Fast_GET_SIZE(seq) != {len(members)}) {{ "
                        f"PyErr_Format(PyExc_ValueError, \"argument {i} must have {len(members)} "
                        f"items, got %zd\", PySequence_Fast_GET_SIZE(seq)); goto fail; }}")
            for j, m in enumerate(members):
                read.append(f"    if (!(v_{m} = arg(PySequence_Fast_GET_ITEM(seq, {j}), {i}, "
                            f"{j}, &slots[{nslots}]))) goto fail;")
                nslots += 1
            read.append("    Py_DECREF(seq); seq = NULL;")
        elif g in tr.used:   # a scalar argument; one never read (an empty group) is not checked
            read.append(f"    if (!(v_{g} = arg(args[{i}], {i}, -1, &slots[{nslots}]))) goto fail;")
            nslots += 1
    body = "\n".join(f"    {line}" for line in tr.lines)
    outs = "\n".join(
        f"    o = PyLong_FromString(\"{r}\", NULL, 10); if (o == NULL) goto fail;\n"
        f"    PyList_SET_ITEM(result, {i}, o);" if kind == "int" else
        f"    o = (PyObject *)GMPy_MPFR_New(mpfr_get_prec({r}), NULL); if (o == NULL) goto fail;\n"
        f"    mpfr_set(MPFR(o), {r}, MPFR_RNDN); PyList_SET_ITEM(result, {i}, o);"
        for i, (kind, r) in enumerate(results))
    zinit = "\n".join([f"    mpfr_init2({z}, 64); mpfr_set_si({z}, {n}L, MPFR_RNDN);"
                       for n, z in tr.ints.items()] + [f"    {line}" for line in tr.init])
    decls = "\n".join(f"    mpfr_ptr v_{n} = NULL;" for n in names) or ""
    return _TEMPLATE.format(
        shared=_COUNTING + _POWERS,
        name=name, prec=prec, ntemps=max(tr.temps, 1), nconst=max(len(constants), 1),
        nconst_real=len(constants), ngroups=len(groups), nslots=max(nslots, 1), decls=decls,
        read="\n".join(read), body=body, nresults=len(results), outs=outs, zinit=zinit,
        nz=max(len(tr.ints), 1), note=note.replace("*/", "* /"))


_TEMPLATE = r"""
/* generated by mpvi.cbackend: a kernel of mpvi.codegen translated to MPFR
   {note} */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <gmp.h>
#include <mpfr.h>
#include <mpc.h>
#include "gmpy2.h"

#define PREC {prec}
static mpfr_t t[{ntemps}];
static mpfr_t k[{nconst}];
static mpfr_t z[{nz}];
static mpfr_t limit;
static int ready = 0;
{shared}

/* an argument: the mpfr_t of a gmpy2 mpfr, or an exact copy of a Python int */
static mpfr_ptr arg(PyObject *x, int group, int index, mpfr_t *slot) {{
    if (MPFR_Check(x)) return MPFR(x);
    if (PyLong_Check(x)) {{
        int overflow = 0;
        long n = PyLong_AsLongAndOverflow(x, &overflow);
        if (!overflow && !(n == -1 && PyErr_Occurred())) {{
            mpfr_set_si(*slot, n, MPFR_RNDN);
            return *slot;
        }}
    }}
    PyErr_Format(PyExc_TypeError, "compiled kernel: argument %d[%d] must be a gmpy2 mpfr "
                 "(or a small int), got %s", group, index, Py_TYPE(x)->tp_name);
    return NULL;
}}

static mpfr_t slots[{nslots}];

static PyObject *setup(PyObject *self, PyObject *constants) {{
    PyObject *seq = PySequence_Fast(constants, "setup needs a sequence of mpfr");
    if (seq == NULL) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != {nconst_real}) {{
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "setup: wrong number of constants");
        return NULL;
    }}
    for (Py_ssize_t i = 0; i < {nconst_real}; i++) {{
        PyObject *c = PySequence_Fast_GET_ITEM(seq, i);
        if (!MPFR_Check(c)) {{
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "setup: constants must be mpfr");
            return NULL;
        }}
        mpfr_set_prec(k[i], mpfr_get_prec(MPFR(c)));
        mpfr_set(k[i], MPFR(c), MPFR_RNDN);
    }}
    Py_DECREF(seq);
    ready = 1;
    Py_RETURN_NONE;
}}

static PyObject *f(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
    PyObject *seq = NULL, *result = NULL, *o;
{decls}
    if (!ready) {{ PyErr_SetString(PyExc_RuntimeError, "compiled kernel used before setup"); return NULL; }}
    if (nargs != {ngroups}) {{
        PyErr_Format(PyExc_TypeError, "compiled kernel takes {ngroups} arguments, got %zd", nargs);
        return NULL;
    }}
{read}
{body}
    result = PyList_New({nresults});
    if (result == NULL) goto fail;
{outs}
    return result;
fail:
    Py_XDECREF(seq);
    Py_XDECREF(result);
    return NULL;
}}

static PyMethodDef methods[] = {{
    {{"f", (PyCFunction)(void (*)(void))f, METH_FASTCALL, "the compiled kernel"}},
    {{"setup", (PyCFunction)setup, METH_O, "the constant table (hoisted rationals, pi, E)"}},
    MPVI_COUNT_METHOD
    {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{name}", NULL, -1, methods}};

PyMODINIT_FUNC PyInit_{name}(void) {{
    if (import_gmpy2() < 0) return NULL;
    mpfr_init2(limit, 2);
    mpfr_set_ui_2exp(limit, 1, PREC, MPFR_RNDN);
    for (int i = 0; i < {ntemps}; i++) mpfr_init2(t[i], PREC);
    for (int i = 0; i < {nconst}; i++) mpfr_init2(k[i], PREC);
    for (int i = 0; i < {nslots}; i++) mpfr_init2(slots[i], 64);
{zinit}
    return PyModule_Create(&module);
}}
"""


def _storage(tr: "_Translator") -> tuple[list[str], list[str]]:
    """(C declarations, module-init lines) of a translated function's storage: its
    temporaries, constant table and exact integers (``prefix``t/k/z) and its named
    values (``prefix``v_*); the init lines end with the operations on literals alone."""
    p, nt, nc, nz = tr.prefix, max(tr.temps, 1), max(len(tr.constants), 1), max(len(tr.ints), 1)
    decls = [f"static mpfr_t {p}t[{nt}], {p}k[{nc}], {p}z[{nz}];"]
    decls += [f"static mpfr_ptr {p}v_{m};" for m in sorted(tr.names)]
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
        setups.append(f"    if (!nw_set_table(tables, {c}, {p}k, {nc})) return NULL;")
        X, K, P = (info["unpack"].get(g, ()) for g in info["groups"])
        pres += [f"{p}v_{m} = kp[{j}];" for j, m in enumerate(K)]
        pres += [f"{p}v_{m} = pp[{j}];" for j, m in enumerate(P)] + tr.pre
        evaluate.append("\n".join(f"        {line}" for line in
                                  [f"{p}v_{m} = xp[{j}];" for j, m in enumerate(X)] + tr.lines))
    both, res = results[0], results[1]
    fill = [f"        rp[{i}] = {r};" for i, r in enumerate(both[:n])]
    fill += [f"        Jp[{i}][{j}] = {both[n + i * n + j]};" for i in range(n) for j in range(n)]
    rfill = [f"        rr[{i}] = {r};" for i, r in enumerate(res)]
    outputs = ""
    if len(parts) > 2:
        outputs = evaluate[2] + "\n" + "\n".join(f"        oo[{i}] = {r};"
                                                  for i, r in enumerate(results[2]))
    return _NEWTON_TEMPLATE.format(
        shared=_COUNTING + _POWERS,
        name=name, prec=prec, n=n, nk=max(nk, 1), np=max(np_, 1), nkr=nk, npr=np_,
        nout=max(len(results[2]) if len(parts) > 2 else 0, 1),
        has_outputs=int(len(parts) > 2), ntables=len(parts), decls="\n".join(decls),
        inits="\n".join(f"    {x}" for x in inits), setup="\n".join(setups),
        pre="\n".join(f"    {x}" for x in pres), both=evaluate[0], fill="\n".join(fill),
        residual=evaluate[1], rfill="\n".join(rfill), outputs=outputs,
        note=note.replace("*/", "* /"), solve=_SOLVE, number=_NUMBER)


_SOLVE = r"""
/* mpvi.linalg.solve_dense(a, b): Gaussian elimination with partial pivoting, the same
   operations in the same order (the rows swapped through perm).  a: n x n pointers, row
   by row, and b: n pointers, both consumed (new values go to ao and bo); x gets the
   solution.  0 where Python raises (a zero or non-finite matrix, a pivot at most
   n eps max|a|) or could go another way (a non-finite multiplier): the caller falls back */
static int dense_solve(int n, mpfr_ptr *a, mpfr_t *ao, mpfr_ptr *b, mpfr_t *bo, mpfr_t *x,
                       mpfr_srcptr eps, int *perm, mpfr_ptr w, mpfr_ptr f, mpfr_ptr s,
                       mpfr_ptr tiny) {
    for (int i = 0; i < n; i++) perm[i] = i;
    mpfr_ptr big = a[0];
    for (int i = 0; i < n * n; i++) {
        if (!mpfr_number_p(a[i])) return 0;
        if (mpfr_cmpabs(a[i], big) > 0) big = a[i];
    }
    if (mpfr_zero_p(big)) return 0;
    mpfr_abs(w, big, MPFR_RNDN);
    mpfr_set_si(tiny, n, MPFR_RNDN);
    mpfr_mul(tiny, tiny, eps, MPFR_RNDN);                 /* n * eps, then * max|a| */
    mpfr_mul(tiny, tiny, w, MPFR_RNDN);
    for (int k = 0; k < n; k++) {
        int piv = k;
        for (int i = k + 1; i < n; i++)
            if (mpfr_cmpabs(a[perm[i] * n + k], a[perm[piv] * n + k]) > 0) piv = i;
        mpfr_abs(w, a[perm[piv] * n + k], MPFR_RNDN);
        if (!mpfr_number_p(w) || !(mpfr_cmp(w, tiny) > 0)) return 0;
        int tmp = perm[k]; perm[k] = perm[piv]; perm[piv] = tmp;
        int rk = perm[k];
        mpfr_ptr pk = a[rk * n + k];
        for (int i = k + 1; i < n; i++) {
            int ri = perm[i];
            mpfr_div(f, a[ri * n + k], pk, MPFR_RNDN);
            if (!mpfr_number_p(f)) return 0;
            if (mpfr_zero_p(f)) continue;
            for (int j = k + 1; j < n; j++) {
                mpfr_mul(w, f, a[rk * n + j], MPFR_RNDN);
                mpfr_sub(ao[ri * n + j], a[ri * n + j], w, MPFR_RNDN);
                a[ri * n + j] = ao[ri * n + j];
            }
            mpfr_mul(w, f, b[rk], MPFR_RNDN);
            mpfr_sub(bo[ri], b[ri], w, MPFR_RNDN);
            b[ri] = bo[ri];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        int ri = perm[i];
        mpfr_ptr r = b[ri];
        for (int j = i + 1; j < n; j++) {
            mpfr_mul(w, a[ri * n + j], x[j], MPFR_RNDN);
            mpfr_sub(s, r, w, MPFR_RNDN);
            r = s;
        }
        mpfr_div(x[i], r, a[ri * n + i], MPFR_RNDN);
    }
    return 1;
}
"""
"""C of :func:`mpvi.linalg.solve_dense`, shared by the Newton and the explicit modules."""


_NEWTON_TEMPLATE = r"""
/* generated by mpvi.cbackend: Newton's method of mpvi.newton.solve_info on a kernel of
   mpvi.kernels, with the elimination of mpvi.linalg.solve_dense, in MPFR
   {note} */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <gmp.h>
#include <mpfr.h>
#include <mpc.h>
#include "gmpy2.h"

#define PREC {prec}
#define N {n}
#define NK {nkr}
#define NP {npr}
#define NOUT {nout}
{decls}
static mpfr_t limit;
static int ready = 0;
{shared}
static mpfr_t xo[N], Ao[N][N], bo[N], dx[N], S, F, W1, W2, W3, TINY, DN1, DN2, XN, JN, RN;
static mpfr_ptr dxp[N], xp[N], ap[N][N], bp[N], rp[N], Jp[N][N], rr[N], oo[NOUT];
static mpfr_ptr kp[{nk}], pp[{np}], xin[N];
static mpfr_t kslot[{nk}], pslot[{np}], xslot[N];
static int perm[N];
{solve}
{number}
static PyObject *setup(PyObject *self, PyObject *tables) {{
    if (!PyTuple_Check(tables) || PyTuple_GET_SIZE(tables) != {ntables}) {{
        PyErr_SetString(PyExc_TypeError, "setup needs a tuple of {ntables} constant tables");
        return NULL;
    }}
{setup}
    ready = 1;
    Py_RETURN_NONE;
}}

/* max_i |v_i| (the first largest, as Python's max), 0 if a value is not finite */
static int nw_norm(mpfr_ptr *v, int count, mpfr_t out) {{
    int best = 0;
    for (int i = 0; i < count; i++) {{
        if (!mpfr_number_p(v[i])) return 0;
        if (i > 0 && mpfr_cmpabs(v[i], v[best]) > 0) best = i;
    }}
    mpfr_abs(out, v[best], MPFR_RNDN);
    return 1;
}}

/* mpvi.linalg.solve_dense(J, -r) */
static int nw_solve(mpfr_srcptr eps) {{
    for (int i = 0; i < N; i++) {{
        for (int j = 0; j < N; j++) ap[i][j] = Jp[i][j];
        mpfr_neg(bo[i], rp[i], MPFR_RNDN);
        bp[i] = bo[i];
    }}
    return dense_solve(N, &ap[0][0], &Ao[0][0], bp, bo, dx, eps, perm, W1, F, S, TINY);
}}

/* the first guess extrapolated from the previous step, as Python's
   x_{{u,d}} = sum(c_i * e_{{u,i}} for i), c_i the m vectors of C, e the U x m table E:
   0 + c_0 e_0 is c_0 e_0 exactly, then one rounded product and sum per term */
static int nw_extrapolate(PyObject *cs, PyObject *es, long m) {{
    PyObject *C = PySequence_Fast(cs, "a sequence"), *E = C ? PySequence_Fast(es, "a sequence") : NULL;
    int ok = C && E && m > 0;
    Py_ssize_t lc = ok ? PySequence_Fast_GET_SIZE(C) : 0, le = ok ? PySequence_Fast_GET_SIZE(E) : 0;
    ok = ok && lc % m == 0 && le % m == 0 && (lc / m) * (le / m) == N;
    Py_ssize_t nd = ok ? lc / m : 0;
    for (Py_ssize_t k = 0; ok && k < N; k++) {{
        Py_ssize_t u = k / nd, d = k % nd;
        for (Py_ssize_t i = 0; ok && i < m; i++) {{
            PyObject *x = PySequence_Fast_GET_ITEM(C, i * nd + d), *e = PySequence_Fast_GET_ITEM(E, u * m + i);
            ok = MPFR_Check(x) && MPFR_Check(e) && mpfr_get_prec(MPFR(x)) <= PREC
                 && mpfr_get_prec(MPFR(e)) <= PREC;
            if (!ok) break;
            if (i == 0) mpfr_mul(xo[k], MPFR(x), MPFR(e), MPFR_RNDN);
            else {{
                mpfr_mul(W1, MPFR(x), MPFR(e), MPFR_RNDN);
                mpfr_add(xo[k], xo[k], W1, MPFR_RNDN);
            }}
        }}
        xp[k] = xo[k];
    }}
    Py_XDECREF(C); Py_XDECREF(E);
    if (PyErr_Occurred()) PyErr_Clear();
    return ok;
}}

/* newton(X0, K, P, eps, rtol, scale, max_iter, slack[, C, E, m]): X0 None and the
   extrapolation C, E, m given, the first guess is extrapolated here */
static PyObject *newton(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
    mpfr_t es, rs, ss;
    if (!ready) {{ PyErr_SetString(PyExc_RuntimeError, "compiled Newton used before setup"); return NULL; }}
    if (nargs != 8 && nargs != 11) {{
        PyErr_Format(PyExc_TypeError, "newton takes 8 or 11 arguments, got %zd", nargs);
        return NULL;
    }}
    long max_iter = PyLong_AsLong(args[6]), slack = PyLong_AsLong(args[7]);
    long m = nargs == 11 ? PyLong_AsLong(args[10]) : 0;
    if (PyErr_Occurred()) return NULL;
    mpfr_init2(es, 64); mpfr_init2(rs, 64); mpfr_init2(ss, 64);
    mpfr_ptr eps = nw_number(args[3], es), rtol = nw_number(args[4], rs), scale = nw_number(args[5], ss);
    int ok = eps && rtol && scale && nw_read(args[1], NK, kp, kslot) && nw_read(args[2], NP, pp, pslot);
    PyObject *out = NULL;
    if (ok && args[0] == Py_None)
        ok = nargs == 11 && nw_extrapolate(args[8], args[9], m);
    else if (ok) {{
        ok = nw_read(args[0], N, xin, xslot);
        for (int i = 0; ok && i < N; i++) xp[i] = xin[i];
    }}
    if (!ok) goto fallback;
{pre}
    mpfr_ptr dn = NULL, previous = NULL;
    for (long it = 1; it <= max_iter; it++) {{
{both}
{fill}
        for (int i = 0; i < N; i++) if (!mpfr_number_p(rp[i])) goto fallback;
        if (!nw_solve(eps)) goto fallback;
        for (int i = 0; i < N; i++) {{
            mpfr_add(xo[i], xp[i], dx[i], MPFR_RNDN);
            xp[i] = xo[i];
        }}
        mpfr_ptr fresh = (dn == DN1) ? DN2 : DN1;    /* previous, dn = dn, ||dx|| */
        for (int i = 0; i < N; i++) dxp[i] = dx[i];
        if (!nw_norm(dxp, N, fresh)) goto fallback;
        previous = dn;
        dn = fresh;
        if (!nw_norm(xp, N, XN)) goto fallback;
        if (mpfr_greater_p(scale, XN)) mpfr_set(XN, scale, MPFR_RNDN);
        mpfr_mul(W1, rtol, XN, MPFR_RNDN);
        int converged = mpfr_lessequal_p(dn, W1);
        if (!converged && previous != NULL) {{
            mpfr_mul_2ui(W1, dn, 1, MPFR_RNDN);
            if (mpfr_lessequal_p(W1, previous)) {{
                mpfr_pow_ui(W1, dn, 3, MPFR_RNDN);
                mpfr_mul(W2, eps, XN, MPFR_RNDN);
                mpfr_sqr(W3, previous, MPFR_RNDN);
                mpfr_mul(W2, W2, W3, MPFR_RNDN);
                converged = mpfr_lessequal_p(W1, W2);
            }}
        }}
        if (!converged) continue;
{residual}
{rfill}
        if (!nw_norm(rr, N, RN)) goto fallback;
        for (int i = 0; i < N; i++) {{          /* ||J||_inf: row sums, from 0 as Python's sum */
            mpfr_abs(S, Jp[i][0], MPFR_RNDN);
            for (int j = 1; j < N; j++) {{
                mpfr_abs(W1, Jp[i][j], MPFR_RNDN);
                mpfr_add(S, S, W1, MPFR_RNDN);
            }}
            if (i == 0 || mpfr_greater_p(S, JN)) mpfr_set(JN, S, MPFR_RNDN);
        }}
        mpfr_mul_si(W1, rtol, N, MPFR_RNDN);      /* n rtol ||J|| max(||x||, scale) slack */
        mpfr_mul(W1, W1, JN, MPFR_RNDN);
        mpfr_mul(W1, W1, XN, MPFR_RNDN);
        mpfr_mul_si(W1, W1, slack, MPFR_RNDN);
        if (!mpfr_lessequal_p(RN, W1)) goto fallback;
#if {has_outputs}
{outputs}
#endif
        mpfr_ptr rn = RN;
        PyObject *x = nw_result(xp, N), *r = x ? nw_result(&rn, 1) : NULL, *o = NULL;
#if {has_outputs}
        o = r ? nw_result(oo, NOUT) : NULL;
        if (o != NULL) out = Py_BuildValue("(OlOO)", x, it, PyList_GET_ITEM(r, 0), o);
#else
        if (r != NULL) out = Py_BuildValue("(OlO)", x, it, PyList_GET_ITEM(r, 0));
#endif
        Py_XDECREF(x); Py_XDECREF(r); Py_XDECREF(o);
        mpfr_clear(es); mpfr_clear(rs); mpfr_clear(ss);
        return out;
    }}
fallback:
    mpfr_clear(es); mpfr_clear(rs); mpfr_clear(ss);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}}

static PyMethodDef methods[] = {{
    {{"newton", (PyCFunction)(void (*)(void))newton, METH_FASTCALL, "Newton's method in MPFR"}},
    {{"setup", (PyCFunction)setup, METH_O, "the constant tables of the kernels"}},
    MPVI_COUNT_METHOD
    {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{name}", NULL, -1, methods}};

PyMODINIT_FUNC PyInit_{name}(void) {{
    if (import_gmpy2() < 0) return NULL;
    mpfr_init2(limit, 2);
    mpfr_set_ui_2exp(limit, 1, PREC, MPFR_RNDN);
{inits}
    for (int i = 0; i < N; i++) {{
        mpfr_init2(xo[i], PREC); mpfr_init2(bo[i], PREC); mpfr_init2(dx[i], PREC);
        mpfr_init2(xslot[i], 64);
        for (int j = 0; j < N; j++) mpfr_init2(Ao[i][j], PREC);
    }}
    for (int i = 0; i < {nk}; i++) mpfr_init2(kslot[i], 64);
    for (int i = 0; i < {np}; i++) mpfr_init2(pslot[i], 64);
    mpfr_inits2(PREC, S, F, W1, W2, W3, TINY, DN1, DN2, XN, JN, RN, (mpfr_ptr)0);
    return PyModule_Create(&module);
}}
"""


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
        binds.append(f"    if (!nw_set_table(tables, {c}, {p}k, {nc})) return NULL;")
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
    return _EXPLICIT_TEMPLATE.format(
        shared=_COUNTING + _POWERS,
        name=name, prec=prec, n=n, npar=max(npar, 1), nparr=npar,
        ntables=len(parts), ng=ng, ngr=max(ng, 1),
        guards="\n".join(f"    {x}" for x in guards),
        decls="\n".join(decls), inits="\n".join(f"    {x}" for x in inits),
        setup="\n".join(binds), fixed="\n".join(f"    {x}" for x in fixed),
        body="\n".join(f"    {x}" for x in body), solve=_SOLVE, signs=_SIGNS,
        number=_NUMBER, note=note.replace("*/", "* /"))


_SIGNS = r"""
/* the signs the singular factors of the system must keep (mpvi.singular), set from the
   call's ``signs`` argument: gon = 0 (None: no check) or 1 (a tuple of NG ints) */
static int gsign[NGR], gon = 0;

static int sg_read(PyObject *signs) {
    gon = 0;
    if (signs == Py_None) return 1;
    if (!PyTuple_Check(signs) || PyTuple_GET_SIZE(signs) != NG) return 0;
    for (int j = 0; j < NG; j++) {
        long s = PyLong_AsLong(PyTuple_GET_ITEM(signs, j));
        if (s == -1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
        gsign[j] = s > 0 ? 1 : (s < 0 ? -1 : 0);
    }
    gon = 1;
    return 1;
}

/* a singular factor x_j keeps the sign the caller gave (a 0 sign or a nan: the caller's
   Python path decides) */
static int sg_ok(mpfr_srcptr x, int j) {
    if (mpfr_nan_p(x)) return 0;
    return gsign[j] > 0 ? mpfr_sgn(x) > 0 : (gsign[j] < 0 ? mpfr_sgn(x) < 0 : 0);
}
"""

_NUMBER = r"""
/* a number of an argument: the mpfr_t of a gmpy2 mpfr of at most PREC bits, or an exact
   copy of a small Python int; NULL (no error set) for anything else */
static mpfr_ptr nw_number(PyObject *x, mpfr_t slot) {
    if (MPFR_Check(x)) return mpfr_get_prec(MPFR(x)) <= PREC ? MPFR(x) : NULL;
    if (PyLong_Check(x)) {
        int overflow = 0;
        long v = PyLong_AsLongAndOverflow(x, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) { PyErr_Clear(); return NULL; }
        mpfr_set_si(slot, v, MPFR_RNDN);
        return slot;
    }
    return NULL;
}

static int nw_read(PyObject *obj, Py_ssize_t count, mpfr_ptr *out, mpfr_t *slots) {
    PyObject *seq = PySequence_Fast(obj, "a sequence");
    if (seq == NULL) { PyErr_Clear(); return 0; }
    int ok = PySequence_Fast_GET_SIZE(seq) == count;
    for (Py_ssize_t i = 0; ok && i < count; i++)
        ok = (out[i] = nw_number(PySequence_Fast_GET_ITEM(seq, i), slots[i])) != NULL;
    Py_DECREF(seq);
    return ok;
}

static int nw_set_table(PyObject *tables, int which, mpfr_t *k, Py_ssize_t count) {
    PyObject *seq = PySequence_Fast(PyTuple_GET_ITEM(tables, which), "setup: a sequence");
    if (seq == NULL) return 0;
    if (PySequence_Fast_GET_SIZE(seq) != count) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "setup: wrong number of constants");
        return 0;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *c = PySequence_Fast_GET_ITEM(seq, i);
        if (!MPFR_Check(c)) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "setup: constants must be mpfr");
            return 0;
        }
        mpfr_set_prec(k[i], mpfr_get_prec(MPFR(c)));
        mpfr_set(k[i], MPFR(c), MPFR_RNDN);
    }
    Py_DECREF(seq);
    return 1;
}

static PyObject *nw_result(mpfr_ptr *v, int count) {
    PyObject *list = PyList_New(count), *o;
    if (list == NULL) return NULL;
    for (int i = 0; i < count; i++) {
        o = (PyObject *)GMPy_MPFR_New(mpfr_get_prec(v[i]), NULL);
        if (o == NULL) { Py_DECREF(list); return NULL; }
        mpfr_set(MPFR(o), v[i], MPFR_RNDN);
        PyList_SET_ITEM(list, i, o);
    }
    return list;
}
"""
"""C reading and returning numbers, shared by the Newton and the explicit modules."""


_EXPLICIT_TEMPLATE = r"""
/* generated by mpvi.cbackend: the RK4 and GBS steps of mpvi.ode on a Hamiltonian field of
   mpvi.kernels, in MPFR
   {note} */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <gmp.h>
#include <mpfr.h>
#include <mpc.h>
#include "gmpy2.h"

#define PREC {prec}
#define N {n}
#define NY (2 * N)
#define NPAR {nparr}
#define NG {ng}
#define NA (NG > 0)                 /* one more argument: the signs of the singular factors */
{decls}
static mpfr_t limit;
static int ready = 0;
{shared}
static mpfr_ptr ft_[1], fy[NY], parp[{npar}], mp[N * N], bp[N], vxp[N], yin[NY];
static mpfr_t fo[NY], vx[N], Ao[N * N], bo[N], W, SF, SS, STINY, BOUND, SUM, T1, T2, H0, H1, H2;
static mpfr_t tslot, yslot[NY], hslot, eslot, parslot[{npar}];
static int perm[N];
#define NGR {ngr}
{number}
{solve}
{signs}
static PyObject *setup(PyObject *self, PyObject *tables) {{
    if (!PyTuple_Check(tables) || PyTuple_GET_SIZE(tables) != {ntables}) {{
        PyErr_SetString(PyExc_TypeError, "setup needs a tuple of {ntables} constant tables");
        return NULL;
    }}
{setup}
    ready = 1;
    Py_RETURN_NONE;
}}

/* |det M| > n eps prod_i sum_j |M_ij| (Hadamard's bound), as mpvi.kernels.hamiltonian_field
   checks it: sums from Python's 0, one rounded product per row; false for a nan */
static int ex_regular(mpfr_srcptr det, mpfr_srcptr eps) {{
    mpfr_mul_si(BOUND, eps, N, MPFR_RNDN);
    for (int i = 0; i < N; i++) {{
        mpfr_abs(SUM, mp[i * N], MPFR_RNDN);
        for (int j = 1; j < N; j++) {{
            mpfr_abs(W, mp[i * N + j], MPFR_RNDN);
            mpfr_add(SUM, SUM, W, MPFR_RNDN);
        }}
        mpfr_mul(BOUND, BOUND, SUM, MPFR_RNDN);
    }}
    mpfr_abs(W, det, MPFR_RNDN);
    return mpfr_greater_p(W, BOUND);
}}

/* the fixed inputs: the parameters, and the operations on them alone (once per step) */
static void ex_fixed(void) {{
{fixed}
}}

/* fo = f(ft_[0], fy): 0 where the Python field takes its other path, or (signs given) a
   singular factor at (ft_[0], fy, v = fo) has left its sign */
static int ex_field(mpfr_srcptr eps) {{
{body}
    for (int i = 0; i < NY; i++) if (!mpfr_number_p(fo[i])) return 0;
{guards}
    return 1;
}}

/* the common arguments: t, y, params, eps; 0 (fallback) if one is not a number we take */
static int ex_read(PyObject *t, PyObject *y, PyObject *params, PyObject *eps, mpfr_ptr *e) {{
    if (!ready) {{ PyErr_SetString(PyExc_RuntimeError, "compiled field used before setup"); return 0; }}
    if (!(ft_[0] = nw_number(t, tslot)) || !(*e = nw_number(eps, eslot))) return 0;
    if (!nw_read(y, NY, yin, yslot) || !nw_read(params, NPAR, parp, parslot)) return 0;
    ex_fixed();
    return 1;
}}

static PyObject *field(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
    mpfr_ptr eps;
    if (nargs != 4 + NA) {{ PyErr_Format(PyExc_TypeError, "field takes %d arguments, got %zd", 4 + NA, nargs); return NULL; }}
    if (!ex_read(args[0], args[1], args[2], args[3], &eps) || (NA && !sg_read(args[4]))) goto fallback;
    for (int i = 0; i < NY; i++) fy[i] = yin[i];
    if (!ex_field(eps)) goto fallback;
    mpfr_ptr out[NY];
    for (int i = 0; i < NY; i++) out[i] = fo[i];
    return nw_result(out, NY);
fallback:
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}}

/* z_i = a_i + b_i * h, as Python's [a + b * h for a, b in zip(y, k)] */
static void ex_axpy(mpfr_t *z, mpfr_ptr *a, mpfr_t *b, mpfr_srcptr h) {{
    for (int i = 0; i < NY; i++) {{
        mpfr_mul(W, b[i], h, MPFR_RNDN);
        mpfr_add(z[i], a[i], W, MPFR_RNDN);
    }}
}}

static mpfr_t K[4][NY], Z[3][NY];
static mpfr_ptr zp[3][NY];

/* rk4(t, y, h, params, eps): mpvi.ode.rk4_step */
static PyObject *rk4(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
    mpfr_ptr eps, h;
    if (nargs != 5 + NA) {{ PyErr_Format(PyExc_TypeError, "rk4 takes %d arguments, got %zd", 5 + NA, nargs); return NULL; }}
    if (!ex_read(args[0], args[1], args[3], args[4], &eps) || !(h = nw_number(args[2], hslot))
        || (NA && !sg_read(args[5]))) goto fallback;
    mpfr_ptr t = ft_[0];
    mpfr_div_si(H0, h, 2, MPFR_RNDN);                       /* half = h / 2 */
    mpfr_add(T1, t, H0, MPFR_RNDN);                         /* t + half */
    mpfr_add(T2, t, h, MPFR_RNDN);                          /* t + h */
    mpfr_ptr tk[4] = {{t, T1, T1, T2}}, hk[3] = {{H0, H0, h}};
    for (int s = 0; s < 4; s++) {{
        if (s == 0) for (int i = 0; i < NY; i++) fy[i] = yin[i];
        else {{
            ex_axpy(Z[0], yin, K[s - 1], hk[s - 1]);
            for (int i = 0; i < NY; i++) fy[i] = Z[0][i];
        }}
        ft_[0] = tk[s];
        if (!ex_field(eps)) goto fallback;
        for (int i = 0; i < NY; i++) mpfr_set(K[s][i], fo[i], MPFR_RNDN);
    }}
    mpfr_div_si(H1, h, 6, MPFR_RNDN);                       /* h6 = h / 6 */
    mpfr_ptr out[NY];
    for (int i = 0; i < NY; i++) {{   /* a + (b1 + 2 * (b2 + b3) + b4) * h6 */
        mpfr_add(W, K[1][i], K[2][i], MPFR_RNDN);
        mpfr_mul_si(W, W, 2, MPFR_RNDN);
        mpfr_add(W, K[0][i], W, MPFR_RNDN);
        mpfr_add(W, W, K[3][i], MPFR_RNDN);
        mpfr_mul(W, W, H1, MPFR_RNDN);
        mpfr_add(Z[1][i], yin[i], W, MPFR_RNDN);
        out[i] = Z[1][i];
    }}
    return nw_result(out, NY);
fallback:
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}}

static mpfr_t *rows[2];         /* two rows of the extrapolation tableau: levels x NY each */
static long capacity = 0;

static int ex_reserve(long levels) {{
    if (levels <= capacity) return 1;
    for (int r = 0; r < 2; r++) {{
        mpfr_t *grown = (mpfr_t *)realloc(rows[r], sizeof(mpfr_t) * levels * NY);
        if (grown == NULL) {{ PyErr_NoMemory(); return 0; }}
        rows[r] = grown;
        for (long i = capacity * NY; i < levels * NY; i++) mpfr_init2(rows[r][i], PREC);
    }}
    capacity = levels;
    return 1;
}}

/* gbs(t, y, H, levels, params, eps): mpvi.ode.gbs_step, the explicit midpoint rule with
   n_i = 2, 4, ..., 2 levels substeps and the Aitken-Neville tableau in h^2 */
static PyObject *gbs(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
    mpfr_ptr eps, H;
    if (nargs != 6 + NA) {{ PyErr_Format(PyExc_TypeError, "gbs takes %d arguments, got %zd", 6 + NA, nargs); return NULL; }}
    long levels = PyLong_AsLong(args[3]);
    if (PyErr_Occurred()) return NULL;
    if (levels < 1 || levels > 4096) {{
        PyErr_Format(PyExc_ValueError, "gbs: levels must be 1 to 4096, got %ld", levels);
        return NULL;
    }}
    if (!ex_read(args[0], args[1], args[4], args[5], &eps) || !(H = nw_number(args[2], hslot))
        || (NA && !sg_read(args[6]))) goto fallback;
    if (!ex_reserve(levels)) return NULL;
    mpfr_ptr t = ft_[0];
    for (int i = 0; i < NY; i++) fy[i] = yin[i];
    if (!ex_field(eps)) goto fallback;                       /* f0 = f(t, y) */
    for (int i = 0; i < NY; i++) mpfr_set(K[0][i], fo[i], MPFR_RNDN);
    mpfr_t *prev = rows[0], *cur = rows[1];
    for (long i = 0; i < levels; i++) {{
        long ni = 2 * (i + 1);
        mpfr_div_si(H0, H, ni, MPFR_RNDN);                  /* h = H / n_i */
        ex_axpy(Z[0], yin, K[0], H0);                       /* z = y + h f0 */
        mpfr_mul_si(H1, H0, 2, MPFR_RNDN);                  /* two_h = 2 h */
        int a = -1, b = 0;                                  /* z_prev = y (-1), z = Z[0] */
        for (long m = 1; m < ni; m++) {{
            mpfr_mul_si(W, H0, m, MPFR_RNDN);               /* t + m h */
            mpfr_add(T1, t, W, MPFR_RNDN);
            ft_[0] = T1;
            for (int k = 0; k < NY; k++) fy[k] = Z[b][k];
            if (!ex_field(eps)) goto fallback;
            int c = (a != 0 && b != 0) ? 0 : (a != 1 && b != 1) ? 1 : 2;
            ex_axpy(Z[c], a < 0 ? yin : zp[a], fo, H1);     /* z_prev + f(t + m h, z) 2h */
            a = b; b = c;
        }}
        ft_[0] = t;
        for (int k = 0; k < NY; k++) mpfr_set(cur[k], Z[b][k], MPFR_RNDN);   /* row = [z] */
        for (long j = 0; j < i; j++) {{
            long d = 2 * (i - j);                           /* seq[i - j - 1] */
            mpfr_set_si(H2, ni * ni, MPFR_RNDN);            /* ctx.num(n_i^2) / d^2 - 1 */
            mpfr_div_si(H2, H2, d * d, MPFR_RNDN);
            mpfr_sub_si(H2, H2, 1, MPFR_RNDN);
            for (int k = 0; k < NY; k++) {{                 /* a + (a - b) / ratio */
                mpfr_ptr x = cur[j * NY + k];
                mpfr_sub(W, x, prev[j * NY + k], MPFR_RNDN);
                mpfr_div(W, W, H2, MPFR_RNDN);
                mpfr_add(cur[(j + 1) * NY + k], x, W, MPFR_RNDN);
            }}
        }}
        mpfr_t *swap = prev; prev = cur; cur = swap;
    }}
    mpfr_ptr out[NY];
    for (int k = 0; k < NY; k++) out[k] = prev[(levels - 1) * NY + k];
    return nw_result(out, NY);
fallback:
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}}

static PyMethodDef methods[] = {{
    {{"field", (PyCFunction)(void (*)(void))field, METH_FASTCALL, "the Hamiltonian field"}},
    {{"rk4", (PyCFunction)(void (*)(void))rk4, METH_FASTCALL, "one RK4 step"}},
    {{"gbs", (PyCFunction)(void (*)(void))gbs, METH_FASTCALL, "one GBS step"}},
    {{"setup", (PyCFunction)setup, METH_O, "the constant tables of the field's functions"}},
    MPVI_COUNT_METHOD
    {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{name}", NULL, -1, methods}};

PyMODINIT_FUNC PyInit_{name}(void) {{
    if (import_gmpy2() < 0) return NULL;
    mpfr_init2(limit, 2);
    mpfr_set_ui_2exp(limit, 1, PREC, MPFR_RNDN);
{inits}
    for (int i = 0; i < NY; i++) {{
        mpfr_init2(fo[i], PREC); mpfr_init2(yslot[i], 64);
        for (int s = 0; s < 4; s++) mpfr_init2(K[s][i], PREC);
        for (int s = 0; s < 3; s++) {{ mpfr_init2(Z[s][i], PREC); zp[s][i] = Z[s][i]; }}
    }}
    for (int i = 0; i < N; i++) {{ mpfr_init2(vx[i], PREC); mpfr_init2(bo[i], PREC); vxp[i] = vx[i]; }}
    for (int i = 0; i < N * N; i++) mpfr_init2(Ao[i], PREC);
    for (int i = 0; i < {npar}; i++) mpfr_init2(parslot[i], 64);
    mpfr_inits2(PREC, W, SF, SS, STINY, BOUND, SUM, T1, T2, H0, H1, H2, (mpfr_ptr)0);
    mpfr_init2(tslot, 64); mpfr_init2(hslot, 64); mpfr_init2(eslot, 64);
    return PyModule_Create(&module);
}}
"""

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
    guards, gtable = [], ""
    if guard is not None:
        d, i = _storage(gt)
        decls, inits = decls + d, inits + i
        guards = ["if (gon) {"] + [f"    if (!sg_ok({r}, {j})) Py_RETURN_FALSE;"
                                   for j, r in enumerate(res[1 + n * n:])] + ["}"]
        guards += ["if (gon && qmid) {"] + [f"    {x}" for x in _bind(gt, ginfo, ("tp", "qm", "qm", "parp"))]
        guards += [f"    {x}" for x in gt.lines]
        guards += [f"    if (!sg_ok({r}, {j})) Py_RETURN_FALSE;" for j, r in enumerate(gres)]
        guards += ["}"]
        gtable = f"    if (!nw_set_table(tables, 1, g_k, {len(guard[1])})) return NULL;"
    return _CHECK_TEMPLATE.format(
        shared=_COUNTING + _POWERS,
        name=name, prec=prec, n=n, npar=npar, nparr=max(npar, 1), ng=ng, ngr=max(ng, 1),
        ntables=2 if guard is not None else 1, gtable=gtable,
        nconst_real=len(constants), decls="\n".join(decls),
        inits="\n".join(f"    {x}" for x in inits), binds="\n".join(f"    {x}" for x in binds),
        body="\n".join(f"    {x}" for x in body), potential=res[0], number=_NUMBER,
        signs=_SIGNS, guards="\n".join(f"    {x}" for x in guards),
        note=note.replace("*/", "* /"))


_CHECK_TEMPLATE = r"""
/* generated by mpvi.cbackend: the checks after a step of mpvi.solve, in MPFR
   {note} */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <gmp.h>
#include <mpfr.h>
#include <mpc.h>
#include "gmpy2.h"

#define PREC {prec}
#define N {n}
{decls}
static mpfr_t limit;
static int ready = 0;
{shared}
#define NPAR {npar}
#define NG {ng}
static mpfr_ptr tp[1], yp[2 * N], parp[{nparr}], mp[N * N], qm[N], qprev[N];
static mpfr_t tslot, yslot[2 * N], bslot, parslot[{nparr}], D[N], L[N * N], S, W, QM[N], pslot[N];
#define NGR {ngr}
{number}
static PyObject *setup(PyObject *self, PyObject *tables) {{
    if (!PyTuple_Check(tables) || PyTuple_GET_SIZE(tables) != {ntables}) {{
        PyErr_SetString(PyExc_TypeError, "setup needs a tuple of {ntables} constant table(s)");
        return NULL;
    }}
    if (!nw_set_table(tables, 0, r_k, {nconst_real})) return NULL;
{gtable}
    ready = 1;
    Py_RETURN_NONE;
}}

/* mpvi.linalg.is_positive_definite on mp: s -= (l_jk l_jk) d_k, l_ij = s / d_j */
static int ck_positive_definite(void) {{
    for (int j = 0; j < N; j++) {{
        mpfr_set(S, mp[j * N + j], MPFR_RNDN);
        for (int k = 0; k < j; k++) {{
            mpfr_sqr(W, L[j * N + k], MPFR_RNDN);
            mpfr_mul(W, W, D[k], MPFR_RNDN);
            mpfr_sub(S, S, W, MPFR_RNDN);
        }}
        if (!(mpfr_sgn(S) > 0) || mpfr_nan_p(S)) return 0;
        mpfr_set(D[j], S, MPFR_RNDN);
        for (int i = j + 1; i < N; i++) {{
            mpfr_set(S, mp[i * N + j], MPFR_RNDN);
            for (int k = 0; k < j; k++) {{
                mpfr_mul(W, L[i * N + k], L[j * N + k], MPFR_RNDN);
                mpfr_mul(W, W, D[k], MPFR_RNDN);
                mpfr_sub(S, S, W, MPFR_RNDN);
            }}
            mpfr_div(L[i * N + j], S, D[j], MPFR_RNDN);
        }}
    }}
    return 1;
}}

{signs}
/* check(t, q, y, params, bound[, signs, qprev]): True if every check after the step passes */
static PyObject *check(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
    if (!ready) {{ PyErr_SetString(PyExc_RuntimeError, "compiled check used before setup"); return NULL; }}
    if (nargs != (NG ? 7 : 5)) {{ PyErr_Format(PyExc_TypeError, "check takes %d arguments, got %zd", NG ? 7 : 5, nargs); return NULL; }}
    int qmid = 0;
    if (NG) {{
        if (!sg_read(args[5])) Py_RETURN_FALSE;
        if (args[6] != Py_None) {{
            if (!nw_read(args[6], N, qprev, pslot)) Py_RETURN_FALSE;
            qmid = 1;
        }}
    }}
    mpfr_ptr bound = args[4] == Py_None ? NULL : nw_number(args[4], bslot);
    if (!(tp[0] = nw_number(args[0], tslot)) || (args[4] != Py_None && bound == NULL)
        || !nw_read(args[1], N, yp, yslot) || !nw_read(args[3], NPAR, parp, parslot))
        Py_RETURN_FALSE;
    int ny = N;
    if (args[2] != Py_None) {{
        if (!nw_read(args[2], N, yp + N, yslot + N)) Py_RETURN_FALSE;
        ny = 2 * N;
    }}
    for (int i = 0; i < ny; i++) {{
        if (!mpfr_number_p(yp[i])) Py_RETURN_FALSE;
        if (bound != NULL && mpfr_cmpabs(yp[i], bound) > 0) Py_RETURN_FALSE;
    }}
{binds}
{body}
    if (!mpfr_number_p({potential})) Py_RETURN_FALSE;
    for (int i = 0; i < N * N; i++) if (!mpfr_number_p(mp[i])) Py_RETURN_FALSE;
    if (!ck_positive_definite()) Py_RETURN_FALSE;
    if (qmid) for (int i = 0; i < N; i++) {{         /* the chord midpoint (q + qprev) / 2 */
        mpfr_add(QM[i], yp[i], qprev[i], MPFR_RNDN);
        mpfr_div_2ui(QM[i], QM[i], 1, MPFR_RNDN);
    }}
{guards}
    Py_RETURN_TRUE;
}}

static PyMethodDef methods[] = {{
    {{"check", (PyCFunction)(void (*)(void))check, METH_FASTCALL, "the checks after a step"}},
    {{"setup", (PyCFunction)setup, METH_O, "the constant table of the regularity kernel"}},
    MPVI_COUNT_METHOD
    {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{name}", NULL, -1, methods}};

PyMODINIT_FUNC PyInit_{name}(void) {{
    if (import_gmpy2() < 0) return NULL;
    mpfr_init2(limit, 2);
    mpfr_set_ui_2exp(limit, 1, PREC, MPFR_RNDN);
{inits}
    for (int i = 0; i < 2 * N; i++) mpfr_init2(yslot[i], 64);
    for (int i = 0; i < {nparr}; i++) mpfr_init2(parslot[i], 64);
    for (int i = 0; i < N; i++) {{
        mpfr_init2(D[i], PREC); mpfr_init2(QM[i], PREC); mpfr_init2(pslot[i], 64); qm[i] = QM[i];
    }}
    for (int i = 0; i < N * N; i++) mpfr_init2(L[i], PREC);
    mpfr_inits2(PREC, S, W, (mpfr_ptr)0);
    mpfr_init2(tslot, 64); mpfr_init2(bslot, 64);
    return PyModule_Create(&module);
}}
"""


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

_CFLAGS = ("-O2", "-fno-plt", "-shared", "-fPIC", "-std=c99", "-w")
"""The compiler's flags (part of a module's cache key).  ``-fno-plt`` calls MPFR through
the GOT directly: the modules make thousands of MPFR calls per step (1-2 % faster)."""

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
                emit(f"if (k > 0) mpfr_{'set' if op == 'add' else 'neg'}({D}, {S(b, 'k')}, MPFR_RNDN);")
                emit(f"else mpfr_{op}({D}, {F(a)}, {S(b, 0)}, MPFR_RNDN);")
            elif b[0] == "f":
                emit(f"if (k > 0) mpfr_set({D}, {S(a, 'k')}, MPFR_RNDN);")
                emit(f"else mpfr_{op}({D}, {S(a, 0)}, {F(b)}, MPFR_RNDN);")
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
                emit(f"mpfr_mul({D}, {S(a, 0)}, {S(b, 'k')}, MPFR_RNDN);")
                emit("for (long j = 1; j <= k; j++) {")
                emit(f"    mpfr_mul(W, {S(a, 'j')}, {S(b, 'k - j')}, MPFR_RNDN);")
                emit(f"    mpfr_add({D}, {D}, W, MPFR_RNDN);")
                emit("}")
        elif op == "div":
            b = ins[3]
            if b[0] == "f":
                emit(f"mpfr_div({D}, {S(a, 'k')}, {F(b)}, MPFR_RNDN);")
            else:
                emit(f"mpfr_set(ACC, {coef(a, 'k')}, MPFR_RNDN);")
                emit("for (long j = 1; j <= k; j++) {")
                emit(f"    mpfr_mul(W, {S(b, 'j')}, {S(d, 'k - j')}, MPFR_RNDN);")
                emit("    mpfr_sub(ACC, ACC, W, MPFR_RNDN);")
                emit("}")
                emit(f"mpfr_div({D}, ACC, {S(b, 0)}, MPFR_RNDN);")
        elif op == "sqr":
            emit(f"if (k == 0) mpfr_sqr({D}, {S(a, 0)}, MPFR_RNDN);")
            emit("else {")
            emit(f"    mpfr_mul(ACC, {S(a, 0)}, {S(a, 'k')}, MPFR_RNDN);")
            emit("    for (long j = 1; j < (k + 1) / 2; j++) {")
            emit(f"        mpfr_mul(W, {S(a, 'j')}, {S(a, 'k - j')}, MPFR_RNDN);")
            emit("        mpfr_add(ACC, ACC, W, MPFR_RNDN);")
            emit("    }")
            emit("    mpfr_add(ACC, ACC, ACC, MPFR_RNDN);")
            emit(f"    if (k % 2 == 0) {{ mpfr_sqr(W, {S(a, 'k / 2')}, MPFR_RNDN); "
                 f"mpfr_add(ACC, ACC, W, MPFR_RNDN); }}")
            emit(f"    mpfr_set({D}, ACC, MPFR_RNDN);")
            emit("}")
        elif op in ("sincos", "exp"):
            outs = [d, ins[2]] if op == "sincos" else [d]
            a, da = (ins[3], ins[4]) if op == "sincos" else (ins[2], ins[3])
            x = S(a, 0)
            if op == "sincos":
                emit(f"if (k == 0) {{ if (mpfr_nan_p({x}) || mpfr_cmpabs({x}, limit) >= 0) "
                     f"{{ mpfr_set_nan({S(d, 0)}); mpfr_set_nan({S(ins[2], 0)}); }} "
                     f"else mpfr_sin_cos({S(d, 0)}, {S(ins[2], 0)}, {x}, MPFR_RNDN); }}")
            else:
                emit(f"if (k == 0) mpfr_exp({D}, {x}, MPFR_RNDN);")
            emit("else {")
            emit(f"    mpfr_mul_si({S(da, 'k')}, {S(a, 'k')}, k, MPFR_RNDN);")
            # sin from cos, then cos from sin (negated); exp from itself
            pairs = [(d, ins[2], "k"), (ins[2], d, "-k")] if op == "sincos" else [(d, d, "k")]
            for target, other, div in pairs:
                emit(f"    mpfr_mul(ACC, {S(da, 1)}, {S(other, 'k - 1')}, MPFR_RNDN);")
                emit("    for (long j = 2; j <= k; j++) {")
                emit(f"        mpfr_mul(W, {S(da, 'j')}, {S(other, 'k - j')}, MPFR_RNDN);")
                emit("        mpfr_add(ACC, ACC, W, MPFR_RNDN);")
                emit("    }")
                emit(f"    mpfr_div_si({S(target, 'k')}, ACC, {div}, MPFR_RNDN);")
            emit("}")
        elif op == "log":
            emit(f"if (k == 0) mpfr_log({D}, {S(a, 0)}, MPFR_RNDN);")
            emit("else {")
            emit(f"    mpfr_set(ACC, {S(a, 'k')}, MPFR_RNDN);")
            emit("    if (k > 1) {")
            emit(f"        mpfr_mul(W2, {S(d, 1)}, {S(a, 'k - 1')}, MPFR_RNDN);")
            emit("        for (long j = 2; j < k; j++) {")
            emit(f"            mpfr_mul_si(W, {S(d, 'j')}, j, MPFR_RNDN);")
            emit(f"            mpfr_mul(W, W, {S(a, 'k - j')}, MPFR_RNDN);")
            emit("            mpfr_add(W2, W2, W, MPFR_RNDN);")
            emit("        }")
            emit("        mpfr_div_si(W2, W2, k, MPFR_RNDN);")
            emit("        mpfr_sub(ACC, ACC, W2, MPFR_RNDN);")
            emit("    }")
            emit(f"    mpfr_div({D}, ACC, {S(a, 0)}, MPFR_RNDN);")
            emit("}")
        elif op == "sqrt":
            emit(f"if (k == 0) mpfr_sqrt({D}, {S(a, 0)}, MPFR_RNDN);")
            emit("else {")
            emit(f"    mpfr_set(ACC, {S(a, 'k')}, MPFR_RNDN);")
            emit("    for (long j = 1; j < k; j++) {")
            emit(f"        mpfr_mul(W, {S(d, 'j')}, {S(d, 'k - j')}, MPFR_RNDN);")
            emit("        mpfr_sub(ACC, ACC, W, MPFR_RNDN);")
            emit("    }")
            emit(f"    mpfr_mul_si(W, {S(d, 0)}, 2, MPFR_RNDN);")
            emit(f"    mpfr_div({D}, ACC, W, MPFR_RNDN);")
            emit("}")
        elif op == "powc":
            alpha = F(ins[3])
            emit(f"if (k == 0) mpfr_pow({D}, {S(a, 0)}, {alpha}, MPFR_RNDN);")
            emit("else {")
            emit("    for (long j = 1; j <= k; j++) {")
            emit(f"        mpfr_mul_si(W, {alpha}, j, MPFR_RNDN);")
            emit("        mpfr_sub_si(W, W, k - j, MPFR_RNDN);")
            emit(f"        mpfr_mul(W, W, {S(a, 'j')}, MPFR_RNDN);")
            emit(f"        mpfr_mul(W, W, {S(d, 'k - j')}, MPFR_RNDN);")
            emit("        if (j == 1) mpfr_set(ACC, W, MPFR_RNDN); else mpfr_add(ACC, ACC, W, MPFR_RNDN);")
            emit("    }")
            emit(f"    mpfr_mul_si(W, {S(a, 0)}, k, MPFR_RNDN);")
            emit(f"    mpfr_div({D}, ACC, W, MPFR_RNDN);")
            emit("}")
        else:
            raise Unsupported(f"series tape operation {op}")
    outputs = []
    for i, (st, o) in enumerate(zip(tape.state, tape.outputs)):
        outputs.append(f"mpfr_div_si(S[{st}][k + 1], {coef(o, 'k')}, k + 1, MPFR_RNDN);")
    time = ("" if tape.time is None else
            f"mpfr_set(S[{tape.time}][0], t, MPFR_RNDN);\n"
            f"    for (long k = 1; k <= order; k++) mpfr_set_si(S[{tape.time}][k], k == 1, MPFR_RNDN);")
    n = tape.n
    return _TAYLOR_TEMPLATE.format(
        name=name, prec=prec, n=n, ns=max(tape.nseries, 1), nf=max(tape.nfixed, 1),
        nc=max(len(tape.constants), 1), ncr=len(tape.constants),
        npar=max(sum(1 for i in tape.fixed if i[0] == "param"), 1),
        nparr=sum(1 for i in tape.fixed if i[0] == "param"),
        state=", ".join(map(str, tape.state)), fixed="\n".join(f"    {x}" for x in fixed),
        body="\n".join(f"    {x}" for x in body), outputs="\n".join(f"        {x}" for x in outputs),
        time=time, solve=_SOLVE, number=_NUMBER, note=note.replace("*/", "* /"),
        max_substeps=tape.max_substeps)


_TAYLOR_TEMPLATE = r"""
/* generated by mpvi.cbackend: one Taylor step of mpvi.taylor on a Hamiltonian field of
   mpvi.kernels, in MPFR
   {note} */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <gmp.h>
#include <mpfr.h>
#include <mpc.h>
#include "gmpy2.h"

#define PREC {prec}
#define N {n}
#define NY (2 * N)
#define NS {ns}
#define NF {nf}
#define NC {ncr}
#define NPAR {nparr}
#define MAX_SUBSTEPS {max_substeps}L
static mpfr_t limit, ZERO, W, W2, ACC, SF, SS, STINY, KS[{nc}], RHS[N], Ao[N * N], bo[N], vx[N];
static mpfr_t FS[NF], Y[NY], yslot[NY], tslot, hslot, eslot, fslot, parslot[{npar}];
static mpfr_t TAU, TEND, REM, HS, SC, NM, R, X, INV1, INV2;
static mpfr_ptr F[NF], KC[{nc}], par[{npar}], yin[NY], mp[N * N], rp[N];
static mpfr_t *S[NS];
static long capacity = 0;
static int perm[N], ready = 0;
static const int state[NY] = {{{state}}};
{number}
{solve}
static PyObject *setup(PyObject *self, PyObject *tables) {{
    if (!PyTuple_Check(tables) || PyTuple_GET_SIZE(tables) != 1) {{
        PyErr_SetString(PyExc_TypeError, "setup needs a tuple of one constant table");
        return NULL;
    }}
    if (!nw_set_table(tables, 0, KS, NC)) return NULL;
    ready = 1;
    Py_RETURN_NONE;
}}

static int tp_reserve(long size) {{
    if (size <= capacity) return 1;
    for (int i = 0; i < NS; i++) {{
        mpfr_t *grown = (mpfr_t *)realloc(S[i], sizeof(mpfr_t) * size);
        if (grown == NULL) {{ PyErr_NoMemory(); return 0; }}
        S[i] = grown;
        for (long k = capacity; k < size; k++) mpfr_init2(S[i][k], PREC);
    }}
    capacity = size;
    return 1;
}}

/* the fixed slots: parameters, constants and the operations on them alone */
static void tp_fixed(void) {{
{fixed}
}}

/* the k-th coefficient of every series of the tape; 0 where Python raises */
static int tp_order(long k, mpfr_srcptr eps) {{
{body}
    return 1;
}}

/* the coefficients y_0 .. y_order of the solution through (t, y) into S (the fixed slots
   set): mpvi.taylor.TaylorEvaluator.coefficients; 0 where Python raises */
static int tp_coefficients(mpfr_srcptr t, mpfr_ptr *y, long order, mpfr_srcptr eps) {{
    {time}
    for (int i = 0; i < NY; i++) mpfr_set(S[state[i]][0], y[i], MPFR_RNDN);
    for (long k = 0; k < order; k++) {{
        if (!tp_order(k, eps)) return 0;
{outputs}
    }}
    return 1;
}}

/* Horner: out = sum_k y_k h^k (out may be the state the coefficients started from) */
static void tp_horner(mpfr_t *out, long order, mpfr_srcptr h) {{
    for (int i = 0; i < NY; i++) {{
        mpfr_set(out[i], S[state[i]][order], MPFR_RNDN);
        for (long k = order - 1; k >= 0; k--) {{
            mpfr_mul(out[i], out[i], h, MPFR_RNDN);
            mpfr_add(out[i], out[i], S[state[i]][k], MPFR_RNDN);
        }}
    }}
}}

/* the arguments every function reads: t, y, order, params, eps; 0 to decline, -1 error */
static int tp_args(PyObject *const *args, int it, int iy, int io, int ipar, int ieps,
                   mpfr_ptr *t, long *order, mpfr_ptr *eps, long low) {{
    if (!ready) {{ PyErr_SetString(PyExc_RuntimeError, "compiled Taylor step used before setup"); return -1; }}
    *order = PyLong_AsLong(args[io]);
    if (PyErr_Occurred()) return -1;
    if (*order < low || *order > 100000) {{
        PyErr_Format(PyExc_ValueError, "taylor: order must be %ld to 100000, got %ld", low, *order);
        return -1;
    }}
    if (!(*t = nw_number(args[it], tslot)) || !(*eps = nw_number(args[ieps], eslot))
        || !nw_read(args[iy], NY, yin, yslot) || !nw_read(args[ipar], NPAR, par, parslot)) return 0;
    if (!tp_reserve(*order + 1)) return -1;
    tp_fixed();
    return 1;
}}

/* step(t, y, h, order, params, eps): mpvi.taylor.TaylorEvaluator.step */
static PyObject *step(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
    mpfr_ptr t, h, eps;
    long order;
    if (nargs != 6) {{ PyErr_Format(PyExc_TypeError, "step takes 6 arguments, got %zd", nargs); return NULL; }}
    int ok = tp_args(args, 0, 1, 3, 4, 5, &t, &order, &eps, 1);
    if (ok < 0) return NULL;
    if (!ok || !(h = nw_number(args[2], hslot))) goto fallback;
    if (!tp_coefficients(t, yin, order, eps)) goto fallback;
    tp_horner(Y, order, h);
    mpfr_ptr out[NY];
    for (int i = 0; i < NY; i++) out[i] = Y[i];
    return nw_result(out, NY);
fallback:
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}}

/* coefficients(t, y, order, params, eps): mpvi.taylor.TaylorEvaluator.coefficients, flat */
static PyObject *coefficients(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
    mpfr_ptr t, eps;
    long order;
    if (nargs != 5) {{ PyErr_Format(PyExc_TypeError, "coefficients takes 5 arguments, got %zd", nargs); return NULL; }}
    int ok = tp_args(args, 0, 1, 2, 3, 4, &t, &order, &eps, 1);
    if (ok < 0) return NULL;
    if (!ok || !tp_coefficients(t, yin, order, eps)) goto fallback;
    PyObject *list = PyList_New((order + 1) * NY), *o;
    if (list == NULL) return NULL;
    for (long k = 0; k <= order; k++)
        for (int i = 0; i < NY; i++) {{
            mpfr_srcptr x = S[state[i]][k];
            o = (PyObject *)GMPy_MPFR_New(mpfr_get_prec(x), NULL);
            if (o == NULL) {{ Py_DECREF(list); return NULL; }}
            mpfr_set(MPFR(o), x, MPFR_RNDN);
            PyList_SET_ITEM(list, k * NY + i, o);
        }}
    return list;
fallback:
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}}

/* Jorba & Zou's radius of convergence from the coefficients in S:
   mpvi.taylor.TaylorEvaluator.radius into R; 0 when nothing bounds the step */
static int tp_radius(long order) {{
    int have = 0;
    mpfr_set_si(SC, 1, MPFR_RNDN);
    for (int i = 0; i < NY; i++)
        if (mpfr_cmpabs(S[state[i]][0], SC) > 0) mpfr_abs(SC, S[state[i]][0], MPFR_RNDN);
    for (int which = 0; which < 2; which++) {{
        long k = order - 1 + which;
        mpfr_set_zero(NM, 1);
        for (int i = 0; i < NY; i++)
            if (mpfr_cmpabs(S[state[i]][k], NM) > 0) mpfr_abs(NM, S[state[i]][k], MPFR_RNDN);
        if (mpfr_sgn(NM) > 0) {{
            mpfr_div(X, SC, NM, MPFR_RNDN);
            mpfr_pow(X, X, which ? INV2 : INV1, MPFR_RNDN);
            if (!have || mpfr_less_p(X, R)) mpfr_set(R, X, MPFR_RNDN);
            have = 1;
        }}
    }}
    return have;
}}

static int tp_append(PyObject *list, mpfr_srcptr x) {{
    PyObject *o = (PyObject *)GMPy_MPFR_New(mpfr_get_prec(x), NULL);
    if (o == NULL) return 0;
    mpfr_set(MPFR(o), x, MPFR_RNDN);
    int bad = PyList_Append(list, o);
    Py_DECREF(o);
    return !bad;
}}

/* adaptive(t, y, h, order, params, eps, factor, record):
   mpvi.taylor.TaylorEvaluator.adaptive */
static PyObject *adaptive(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
    mpfr_ptr t, h, eps, factor;
    long order, nsub = 0;
    PyObject *bounds = NULL;
    if (nargs != 8) {{ PyErr_Format(PyExc_TypeError, "adaptive takes 8 arguments, got %zd", nargs); return NULL; }}
    int record = PyObject_IsTrue(args[7]);
    if (record < 0) return NULL;
    int ok = tp_args(args, 0, 1, 3, 4, 5, &t, &order, &eps, 2);
    if (ok < 0) return NULL;
    if (!ok || !(h = nw_number(args[2], hslot)) || !(factor = nw_number(args[6], fslot))) goto fallback;
    if (record && (bounds = PyList_New(0)) == NULL) return NULL;
    mpfr_set_si(INV1, 1, MPFR_RNDN);
    mpfr_div_si(INV1, INV1, order - 1, MPFR_RNDN);
    mpfr_set_si(INV2, 1, MPFR_RNDN);
    mpfr_div_si(INV2, INV2, order, MPFR_RNDN);
    mpfr_add(TEND, t, h, MPFR_RNDN);
    mpfr_set(TAU, t, MPFR_RNDN);
    int forward = mpfr_sgn(h) > 0;
    mpfr_ptr cur[NY];
    for (int i = 0; i < NY; i++) {{ mpfr_set(Y[i], yin[i], MPFR_RNDN); cur[i] = Y[i]; }}
    for (;;) {{
        if (!tp_coefficients(TAU, cur, order, eps)) goto fallback;
        mpfr_sub(REM, TEND, TAU, MPFR_RNDN);
        int last = !tp_radius(order);
        if (!last) {{
            mpfr_mul(HS, R, factor, MPFR_RNDN);
            last = !(mpfr_cmpabs(HS, REM) < 0);
        }}
        if (last) mpfr_set(HS, REM, MPFR_RNDN);
        else {{
            mpfr_mul_si(X, HS, MAX_SUBSTEPS - nsub, MPFR_RNDN);
            if (mpfr_cmpabs(REM, X) > 0) {{                /* Python raises substep_limit */
                Py_XDECREF(bounds);
                mpfr_ptr where[2] = {{TAU, HS}};
                PyObject *pair = nw_result(where, 2);
                if (pair == NULL) return NULL;
                return Py_BuildValue("(OlN)", Py_None, nsub, pair);
            }}
            if (!forward) mpfr_neg(HS, HS, MPFR_RNDN);
            mpfr_add(X, TAU, HS, MPFR_RNDN);
            if (mpfr_equal_p(X, TAU)) goto fallback;      /* Python raises StepSizeCollapse */
        }}
        tp_horner(Y, order, HS);
        nsub++;
        if (last) break;
        mpfr_add(TAU, TAU, HS, MPFR_RNDN);
        if (record) {{
            if (!tp_append(bounds, TAU)) goto error;
            for (int i = 0; i < NY; i++) if (!tp_append(bounds, Y[i])) goto error;
        }}
    }}
    PyObject *ys = nw_result(cur, NY);
    if (ys == NULL) goto error;
    if (!record) {{ Py_INCREF(Py_None); bounds = Py_None; }}
    return Py_BuildValue("(NlN)", ys, nsub, bounds);
error:
    Py_XDECREF(bounds);
    return NULL;
fallback:
    Py_XDECREF(bounds);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}}

static PyMethodDef methods[] = {{
    {{"step", (PyCFunction)(void (*)(void))step, METH_FASTCALL, "one Taylor step"}},
    {{"adaptive", (PyCFunction)(void (*)(void))adaptive, METH_FASTCALL, "adaptive Taylor substeps"}},
    {{"coefficients", (PyCFunction)(void (*)(void))coefficients, METH_FASTCALL, "Taylor coefficients"}},
    {{"setup", (PyCFunction)setup, METH_O, "the tape's constants"}},
    {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{name}", NULL, -1, methods}};

PyMODINIT_FUNC PyInit_{name}(void) {{
    if (import_gmpy2() < 0) return NULL;
    for (int i = 0; i < NF; i++) {{ mpfr_init2(FS[i], PREC); F[i] = FS[i]; }}
    for (int i = 0; i < {nc}; i++) {{ mpfr_init2(KS[i], PREC); KC[i] = KS[i]; }}
    for (int i = 0; i < NY; i++) {{ mpfr_init2(Y[i], PREC); mpfr_init2(yslot[i], 64); }}
    for (int i = 0; i < N; i++) {{ mpfr_init2(RHS[i], PREC); mpfr_init2(bo[i], PREC); mpfr_init2(vx[i], PREC); }}
    for (int i = 0; i < N * N; i++) mpfr_init2(Ao[i], PREC);
    for (int i = 0; i < {npar}; i++) mpfr_init2(parslot[i], 64);
    mpfr_inits2(PREC, ZERO, W, W2, ACC, SF, SS, STINY, (mpfr_ptr)0);
    mpfr_inits2(PREC, TAU, TEND, REM, HS, SC, NM, R, X, INV1, INV2, (mpfr_ptr)0);
    mpfr_init2(fslot, 64);
    mpfr_set_zero(ZERO, 1);
    mpfr_init2(tslot, 64); mpfr_init2(hslot, 64); mpfr_init2(eslot, 64);
    mpfr_init2(limit, 2);
    mpfr_set_ui_2exp(limit, 1, PREC, MPFR_RNDN);
    return PyModule_Create(&module);
}}
"""


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


def _file_name(name: str, csource: str, tc: dict) -> str:
    """The file name of the module of ``csource``: keyed by the source, the compiler, MPFR,
    the Python ABI, the libraries linked and the flags."""
    key = hashlib.sha256("\0".join([csource, tc["version"], tc["mpfr"], tc["abi"],
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
        cmd = [tc["cc"], *_CFLAGS, str(c), "-o", str(out)]
        cmd += [f"-I{d}" for d in tc["includes"]] + tc["link"]
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
    if counting():
        body = "#define MPVI_COUNT 1\n" + body
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
    if counting():
        body = "#define MPVI_COUNT 1\n" + body
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
