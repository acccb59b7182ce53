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

Fallback.  Without a C compiler, MPFR headers or a writable cache, or with
``MPVI_COMPILED=0`` in the environment, :func:`compile_function` returns None and mpvi
computes with the Python kernels; the reason is reported once per process on stderr.
A construct the translator does not know (it knows what :mod:`mpvi.codegen` prints)
also falls back to Python, for that kernel only.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

ENV_SWITCH = "MPVI_COMPILED"
"""``MPVI_COMPILED=0`` turns the compiled kernels off (the Python kernels are used)."""
ENV_CACHE = "MPVI_KERNEL_CACHE"
"""The directory of compiled kernels (default ``~/.cache/mpvi/kernels``)."""

_FUNCTIONS = {"sin": "mpfr_sin", "cos": "mpfr_cos", "tan": "mpfr_tan", "exp": "mpfr_exp",
              "log": "mpfr_log", "sqrt": "mpfr_sqrt", "atan": "mpfr_atan",
              "sinh": "mpfr_sinh", "cosh": "mpfr_cosh", "tanh": "mpfr_tanh",
              "asin": "mpfr_asin", "acos": "mpfr_acos", "fabs": "mpfr_abs", "abs": "mpfr_abs"}
"""The one-argument functions of generated code and their MPFR counterparts (the context's
``namespace``: the same MPFR functions, through gmpy2)."""
_PERIODIC = {"sin", "cos", "tan"}
"""Functions that return nan for |x| >= 2^prec, as the context's (``Context._periodic``)."""
_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}

_lock = threading.Lock()
_status: dict = {}


class Unsupported(ValueError):
    """A construct of the generated source that the translator does not know."""


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
    64-bit temporary)."""

    def __init__(self, constants: Sequence[str]):
        self.constants = list(constants)          # names read from the constant table
        self.temps = 0
        self.lines: list[str] = []
        self.names: set[str] = set()
        self.ints: dict = {}
        self.used: set[str] = set()
        self.int_names: dict = {}

    def temp(self) -> str:
        self.temps += 1
        return f"t[{self.temps - 1}]"

    def value(self, node) -> tuple[str, Any]:
        """``("mpfr", c_expression)`` for an mpfr operand, ``("int", n)`` for an integer."""
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return "int", node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            kind, v = self.value(node.operand)
            if kind == "int":
                return "int", -v
            out = self.temp()
            self.lines.append(f"mpfr_neg({out}, {v}, MPFR_RNDN);")
            return "mpfr", out
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
            return self.value(node.operand)
        if isinstance(node, ast.Name):
            if node.id in self.int_names:         # a name bound to an int stays an int
                return "int", self.int_names[node.id]
            if node.id in self.names:
                self.used.add(node.id)
                return "mpfr", f"v_{node.id}"
            if node.id in self.constants:
                return "mpfr", f"k[{self.constants.index(node.id)}]"
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
            raise Unsupported(f"integer literal {n} beyond 64 bits")
        if n not in self.ints:
            self.ints[n] = f"z[{len(self.ints)}]"
        return self.ints[n]

    def binop(self, node) -> tuple[str, Any]:
        lk, lv = self.value(node.left)
        rk, rv = self.value(node.right)
        if lk == "int" and rk == "int":
            raise Unsupported(f"integer arithmetic {ast.unparse(node)!r} (Python would not "
                              "round it)")
        out = self.temp()
        if isinstance(node.op, ast.Pow):
            if rk == "int":
                self.lines.append(f"mpfr_pow_si({out}, {lv}, {rv}L, MPFR_RNDN);")
            elif lk == "int":
                self.lines.append(f"mpfr_pow({out}, {self.exact_int(lv)}, {rv}, MPFR_RNDN);")
            else:
                self.lines.append(f"mpfr_pow({out}, {lv}, {rv}, MPFR_RNDN);")
            return "mpfr", out
        op = _BINARY.get(type(node.op))
        if op is None:
            raise Unsupported(f"operator {type(node.op).__name__}")
        if rk == "int" and -2 ** 62 < rv < 2 ** 62:
            self.lines.append(f"mpfr_{op}_si({out}, {lv}, {rv}L, MPFR_RNDN);")
        elif lk == "int" and -2 ** 62 < lv < 2 ** 62:
            if op in ("add", "mul"):
                self.lines.append(f"mpfr_{op}_si({out}, {rv}, {lv}L, MPFR_RNDN);")
            else:
                self.lines.append(f"mpfr_si_{op}({out}, {lv}L, {rv}, MPFR_RNDN);")
        else:
            a = lv if lk == "mpfr" else self.exact_int(lv)
            b = rv if rk == "mpfr" else self.exact_int(rv)
            self.lines.append(f"mpfr_{op}({out}, {a}, {b}, MPFR_RNDN);")
        return "mpfr", out

    def call(self, node) -> tuple[str, Any]:
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise Unsupported(f"call {ast.unparse(node)[:60]}")
        name, args = node.func.id, node.args
        out = self.temp()
        if name == "mpf" and len(args) == 1:
            a = args[0]
            if isinstance(a, ast.Constant) and type(a.value) is int:
                self.lines.append(f"mpfr_set_si({out}, {a.value}L, MPFR_RNDN);")
                return "mpfr", out
            if isinstance(a, ast.Constant) and isinstance(a.value, str):
                text = a.value
                if not all(ch in "0123456789.eE+-" for ch in text):
                    raise Unsupported(f"mpf({text!r})")
                self.lines.append(f'mpfr_set_str({out}, "{text}", 10, MPFR_RNDN);')
                return "mpfr", out
            raise Unsupported(f"mpf of {ast.unparse(a)[:40]}")
        if name == "atan2" and len(args) == 2:
            y, x = self.mpfr(args[0]), self.mpfr(args[1])
            self.lines.append(f"mpfr_atan2({out}, {y}, {x}, MPFR_RNDN);")
            return "mpfr", out
        if name == "sign" and len(args) == 1:
            x = self.mpfr(args[0])
            self.lines.append(f"mpfr_set_si({out}, mpfr_nan_p({x}) ? 0 : mpfr_sgn({x}), "
                              f"MPFR_RNDN);")
            return "mpfr", out
        if name in _FUNCTIONS and len(args) == 1:
            x = self.mpfr(args[0])
            call = f"{_FUNCTIONS[name]}({out}, {x}, MPFR_RNDN);"
            if name in _PERIODIC:                 # nan beyond 2^prec, as the context's
                call = (f"if (mpfr_nan_p({x}) || mpfr_cmpabs({x}, limit) >= 0) "
                        f"mpfr_set_nan({out}); else {call}")
            self.lines.append(call)
            return "mpfr", out
        raise Unsupported(f"function {name}/{len(args)}")

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
        unpacked = {stmt.value.id for stmt in body if isinstance(stmt, ast.Assign)
                    and isinstance(stmt.value, ast.Name) and stmt.value.id in groups}
        self.names.update(g for g in groups if g not in unpacked)     # scalar arguments
        for stmt in body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                raise Unsupported(f"statement {ast.unparse(stmt)[:60]}")
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.List) and isinstance(value, ast.Name) \
                    and value.id in groups:
                unpack[value.id] = [t.id for t in target.elts]
                self.names.update(t.id for t in target.elts)
                continue
            if not isinstance(target, ast.Name):
                raise Unsupported(f"assignment to {ast.unparse(target)}")
            kind, v = self.value(value)
            if kind == "int":                     # Python keeps an int: so do we
                self.int_names[target.id] = v
                continue
            self.int_names.pop(target.id, None)
            self.lines.append(f"v_{target.id} = {v};")
            self.names.add(target.id)
        results = []
        for e in returns.value.elts:              # an int result is returned as an int,
            kind, v = self.value(e)               # as the Python function returns it
            results.append(("int", v) if kind == "int" else ("mpfr", v))
        return {"groups": groups, "unpack": unpack, "results": results}


def translate(name: str, source: str, prec: int, constants: Sequence[str],
              note: str = "") -> str:
    """The C source of an extension module ``name`` whose function ``f(*groups)`` computes
    what the Python ``source`` (printed by :func:`mpvi.codegen.generate`) computes, bit for
    bit, at ``prec`` bits; ``constants`` are the names of the constant table given to
    ``setup`` once (the hoisted rationals, pi, E)."""
    tr = _Translator(constants)
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
    zinit = "\n".join(f"    mpfr_init2({z}, 64); mpfr_set_si({z}, {n}L, MPFR_RNDN);"
                      for n, z in tr.ints.items())
    decls = "\n".join(f"    mpfr_ptr v_{n} = NULL;" for n in names) or ""
    return _TEMPLATE.format(
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
    {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "{name}", NULL, -1, methods}};

PyMODINIT_FUNC PyInit_{name}(void) {{
    if (import_gmpy2() < 0) return NULL;
    for (int i = 0; i < {ntemps}; i++) mpfr_init2(t[i], PREC);
    for (int i = 0; i < {nconst}; i++) mpfr_init2(k[i], PREC);
    for (int i = 0; i < {nslots}; i++) mpfr_init2(slots[i], 64);
{zinit}
    mpfr_init2(limit, 2);
    mpfr_set_ui_2exp(limit, 1, PREC, MPFR_RNDN);
    return PyModule_Create(&module);
}}
"""


# ----- building and loading ------------------------------------------------------------------

def _cached_path(name: str, csource: str, tc: dict) -> Path:
    """Where the module of ``csource`` is cached: keyed by the source, the compiler, MPFR,
    the Python ABI and the libraries linked."""
    key = hashlib.sha256("\0".join([csource, tc["version"], tc["mpfr"], tc["abi"],
                                    " ".join(tc["link"])]).encode()).hexdigest()[:24]
    return cache_dir() / f"{name}_{key}{tc['abi']}"


def _build(name: str, csource: str, tc: dict) -> Path:
    target = _cached_path(name, csource, tc)
    if target.exists():
        return target
    directory = target.parent
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as tmp:
        c = Path(tmp) / f"{name}.c"
        c.write_text(csource, encoding="utf-8")
        out = Path(tmp) / target.name
        cmd = [tc["cc"], "-O2", "-shared", "-fPIC", "-std=c99", "-w", str(c), "-o", str(out)]
        cmd += [f"-I{d}" for d in tc["includes"]] + tc["link"]
        if tc["rpath"]:
            cmd.append(f"-Wl,-rpath,{tc['rpath']}")
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"{tc['cc']} failed ({r.returncode}): "
                               f"{(r.stderr or r.stdout).strip()[:2000]}")
        os.replace(out, target)                   # atomic: another process may race us
    return target


def _load(name: str, path: Path):
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


_MODULES: dict = {}

COMPILE_AFTER = 1000
"""Calls of a kernel after which it is compiled when its module is not yet in the disk
cache (``MPVI_COMPILE_AFTER`` overrides): compiling takes 0.1-3 s, a compiled call saves
about 0.1 ms, so a kernel used for a few steps stays in Python.  A kernel whose module is
already cached is loaded at once."""


def _plan(source: str, prec: int, constants: dict):
    """(module name, C source, toolchain) of a kernel, or None (said once on stderr)."""
    if not enabled():
        return None
    tc = toolchain()
    if "error" in tc:
        _report_once("toolchain-error", f"compiled kernels unavailable ({tc['error']}); "
                     f"computing with the Python kernels")
        return None
    names = sorted(constants)
    # the constants' values are part of the module's identity (two kernels may differ
    # only in a hoisted rational): their exact binary values go into the source
    note = "constants: " + ", ".join(f"{n} = {constants[n].as_integer_ratio()}" for n in names)
    try:
        body = translate("mpvi_kernel", source, prec, names, note)
    except Unsupported as exc:
        _report_once(f"unsupported-{exc}", f"a kernel stays in Python: {exc}")
        return None
    name = f"mpvi_k{hashlib.sha256(body.encode()).hexdigest()[:16]}"
    return name, body.replace("mpvi_kernel", name), tc, [constants[n] for n in names]


def _module(plan):
    """The loaded module of a plan (built if needed), or None (said once)."""
    name, csource, tc, table = plan
    with _lock:
        module = _MODULES.get(name)
    if module is not None:
        return module
    try:
        module = _load(name, _build(name, csource, tc))
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


def accelerated(python: Callable, source: str, prec: int, constants: dict) -> Callable:
    """``python`` or its compiled counterpart, bit-identical either way: the compiled one at
    once when its module is in the disk cache, else after :data:`COMPILE_AFTER` calls (the
    Python function meanwhile); ``python`` itself when compiled kernels are unavailable."""
    plan = _plan(source, prec, constants)
    if plan is None:
        return python
    name, _, tc, _ = plan
    with _lock:
        loaded = name in _MODULES
    if loaded or _cached_path(name, plan[1], tc).exists():
        module = _module(plan)
        return module.f if module is not None else python
    after = int(os.environ.get("MPVI_COMPILE_AFTER", COMPILE_AFTER))
    state = {"calls": 0, "f": None}

    def kernel(*args):
        f = state["f"]
        if f is not None:
            return f(*args)
        state["calls"] += 1
        if state["calls"] >= after:
            module = _module(plan)
            state["f"] = f = module.f if module is not None else python
            return f(*args)
        return python(*args)
    kernel.__name__ = python.__name__
    return kernel
