"""Issue 47, "State the caller owns" and "Raw" at construction (part 4).

* bare arithmetic after creating a context of lower precision keeps the higher one;
* the repro entry points leave gmpy2, decimal and random as they found them;
* files are created with their final mode (no umask toggling, which races);
* every MPVI_* environment variable is validated;
* a kernel planted in the cache with a copied digest record is not loaded;
* a wrong type or a non-finite / unsupported sympy object at construction is mpvi's own
  named error.
"""
from __future__ import annotations

import decimal
import hashlib
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import gmpy2
import mpmath
import numpy as np
import pytest
import sympy as sp

import mpvi
from mpvi.compiled import cbackend, cmodules
from mpvi.ground import environment, io
from test_trust_cache import mpvi_lines, needs_toolchain, plant, run_kernel


# ----- files are created with the mode decided before --------------------------------------------

def test_atomic_writes_never_touch_the_process_umask(tmp_path, monkeypatch):
    """Reading the umask means setting it (os.umask(0)), and meanwhile another thread's
    file gets mode 0666: atomic writes must never call it."""
    def forbidden(mask):
        raise AssertionError("os.umask called: it races with every thread creating a file")
    mask = os.umask(0o022)
    os.umask(mask)
    monkeypatch.setattr(os, "umask", forbidden)
    io.write_text(tmp_path / "a.txt", "x")
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o666 & ~mask


def test_files_written_while_other_threads_create_files_keep_the_umask(tmp_path):
    mask = os.umask(0o027)
    try:
        stop = threading.Event()

        def writer():
            k = 0
            while not stop.is_set():
                io.write_text(tmp_path / f"w{k % 5}.txt", "x")
                k += 1
        thread = threading.Thread(target=writer)
        thread.start()
        try:
            for k in range(200):
                p = tmp_path / f"other{k}"
                with open(p, "w"):
                    pass
                assert stat.S_IMODE(p.stat().st_mode) == 0o640, k
        finally:
            stop.set()
            thread.join()
        for k in range(5):
            assert stat.S_IMODE((tmp_path / f"w{k}.txt").stat().st_mode) == 0o640
    finally:
        os.umask(mask)


# ----- every MPVI_* environment variable is validated ---------------------------------------------


READERS = {"MPVI_COMPILED": cbackend.enabled, "MPVI_COMPILED_BALLS": cbackend.balls_enabled,
           "MPVI_COUNT_OPERATIONS": cmodules.counting, "MPVI_KERNEL_CACHE": cbackend.cache_dir,
           "MPVI_COMPILE_AFTER": cbackend.compile_after}


@pytest.mark.parametrize("name, value", [
    ("MPVI_COMPILED", "abc"), ("MPVI_COMPILED", "2"), ("MPVI_COMPILED", "of"),
    ("MPVI_COMPILED_BALLS", "abc"), ("MPVI_COUNT_OPERATIONS", "yes please"),
    ("MPVI_COUNT_OPERATIONS", "2"), ("MPVI_KERNEL_CACHE", "relative/dir"),
    ("MPVI_COMPILE_AFTER", "1e3")])
def test_a_value_outside_what_a_variable_accepts_is_refused_naming_it(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(environment.EnvironmentSettingError) as info:
        READERS[name]()
    message = str(info.value)
    assert message.startswith(f"{name}={value!r}") and "\n" not in message
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("value, on", [("1", True), (" On ", True), ("TRUE", True), ("yes", True),
                                       ("0", False), ("off", False), ("False", False),
                                       ("no", False)])
def test_every_flag_reads_the_same_spellings(monkeypatch, value, on):
    for name in ("MPVI_COMPILED", "MPVI_COMPILED_BALLS", "MPVI_COUNT_OPERATIONS"):
        monkeypatch.setenv(name, value)
    assert cbackend.enabled() is on and cmodules.counting() is on
    monkeypatch.setenv("MPVI_COMPILED", "1")
    assert cbackend.balls_enabled() is on


def test_a_bad_switch_stops_a_solve_with_the_named_error(monkeypatch):
    q = sp.Symbol("q")
    ctx = mpvi.GMPContext(32)
    pend = mpvi.LagrangianSystem("pend", [q], [[1]], -sp.cos(q), {}, ctx)
    monkeypatch.setenv("MPVI_COMPILED", "abc")
    with pytest.raises(ValueError, match=r"^MPVI_COMPILED='abc' is not a flag"):
        mpvi.solve(mpvi.Problem(pend, ["1/2"], v0=[0]), "simpson", h="1/10", n=3)


def test_mpvi_reads_its_variables_only_through_the_validating_helper():
    """A new MPVI_* variable read with os.environ directly would be read unvalidated."""
    root = Path(mpvi.__file__).parent
    for path in root.rglob("*.py"):
        if path.name == "environment.py":
            continue
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"(?:os\.environ\.get|os\.getenv|os\.environ\[)\(?\s*([A-Za-z_.\"']+)",
                             text):
            arg = m.group(1)
            assert "MPVI" not in arg and not arg.startswith("ENV_"), (path, m.group(0))


# ----- raw at construction: a wrong type, a non-finite constant, an object mpvi cannot evaluate ---


Q = sp.Symbol("q")
K = sp.Symbol("k")
CTX32 = mpvi.GMPContext(32)


def pendulum(ctx=CTX32):
    return mpvi.LagrangianSystem("pend", [Q], [[1]], -sp.cos(Q), {}, ctx)


def test_a_problem_of_something_else_than_a_system_is_a_named_type_error():
    for system in (object(), 3, "pend", None):
        with pytest.raises(TypeError, match=r"^Problem: system must be a mpvi.LagrangianSystem "
                                            r"or a mpvi.FirstOrderSystem"):
            mpvi.Problem(system, ["1/2"], v0=[0])


@pytest.mark.parametrize("build", [
    lambda ctx: mpvi.FirstOrderSystem("f", lambda t, y: y, 1, ctx),
    lambda ctx: mpvi.FirstOrderSystem.from_expressions("f", ["y"], ["-y"], ctx),
    lambda ctx: mpvi.LagrangianSystem("f", [Q], [[1]], Q**2 / 2, {}, ctx),
    lambda ctx: mpvi.LagrangianSystem.from_lagrangian("f", [Q], [K], K**2 / 2 - Q**2 / 2, {},
                                                      ctx),
], ids=["FirstOrderSystem", "from_expressions", "LagrangianSystem", "from_lagrangian"])
@pytest.mark.parametrize("ctx", ["gmp", 64, None, __import__("mpmath").mp],
                         ids=["str", "int", "None", "mpmath"])
def test_something_else_than_a_context_is_a_named_type_error(build, ctx):
    with pytest.raises(TypeError, match=r"^f: ctx must be an mpvi number context") as info:
        build(ctx)
    assert "\n" not in str(info.value)
    if ctx == "gmp":
        assert "mpvi.get_context('gmp', dps)" in str(info.value)


NON_FINITE = {"nan*q": sp.nan * Q, "nan": sp.nan, "oo*q": sp.oo * Q, "q + oo": Q + sp.oo,
              "-oo*q**2": -sp.oo * Q**2, "zoo*q": sp.zoo * Q, "log(0)*q": sp.log(0) * Q,
              "cos(q) + 1/0": sp.cos(Q) + sp.Integer(1) / 0}
UNSUPPORTED = {"Sum": sp.Sum(Q**K, (K, 0, 3)), "Product": sp.Product(Q + K, (K, 1, 2)),
               "Integral": sp.Integral(Q, Q), "Limit": sp.Limit(sp.sin(Q * K) / K, K, 0),
               "MatrixSymbol": sp.MatrixSymbol("A", 1, 1)[0, 0] * Q}


@pytest.mark.parametrize("V", list(NON_FINITE.values()) + list(UNSUPPORTED.values()),
                         ids=list(NON_FINITE) + list(UNSUPPORTED))
def test_a_potential_with_a_non_finite_constant_or_an_unsupported_object_is_refused(V):
    """nan * q was integrated by rk4 as if V were 0; zoo, Sum were a KeyError or NameError
    at the first step."""
    with pytest.raises(ValueError, match=r"^s: M or V: ") as info:
        system = mpvi.LagrangianSystem("s", [Q], [[1]], V, {}, CTX32)
        mpvi.solve(mpvi.Problem(system, ["1"], v0=[0]), "rk4", h="1/10", n=3)
    message = str(info.value)
    assert "\n" not in message and ("finite" in message or "cannot be evaluated" in message)


@pytest.mark.parametrize("build, where", [
    (lambda e: mpvi.LagrangianSystem("s", [Q], [[1 + e]], Q**2, {}, CTX32), "s: M or V"),
    (lambda e: mpvi.LagrangianSystem("s", [Q], [[1]], Q**2, {}, CTX32, force=[e]), "s: F"),
    (lambda e: mpvi.LagrangianSystem.from_lagrangian("s", [Q], [K], K**2 / 2 + e, {}, CTX32),
     "s: L"),
    (lambda e: mpvi.FirstOrderSystem.from_expressions("s", [Q], [e], CTX32), "s: the field"),
    (lambda e: mpvi.LagrangianSystem("s", [Q], [[1]], str(e).replace("zoo", "oo"), {}, CTX32),
     "s: M or V"),
], ids=["M", "force", "L", "field", "text"])
@pytest.mark.parametrize("e", [sp.nan * Q, sp.zoo * Q, sp.oo * Q, sp.Sum(Q**K, (K, 0, 2))],
                         ids=["nan", "zoo", "oo", "Sum"])
def test_every_expression_of_a_system_gets_the_same_rule(build, where, e):
    with pytest.raises(ValueError) as info:
        build(e)
    text = str(info.value)
    assert text.startswith(where) or text.startswith("s: potential"), text
    assert "\n" not in text


def test_finite_expressions_are_still_accepted():
    pw = sp.Piecewise((Q**2, Q > 0), (Q**4, True))
    for V in (-sp.cos(Q), Q**2 / 2 + sp.pi, sp.Max(Q, 0)**2 + sp.Abs(Q)**3, pw,
              sp.Sum(Q**K, (K, 0, 3)).doit()):
        mpvi.LagrangianSystem("s", [Q], [[1]], V, {}, CTX32)


# ----- bare arithmetic never drops below the precision of the contexts made --------------------------


def _error_of_bare_arithmetic(ctx64):
    h = ctx64.num(2) * ctx64.pi / 96
    return abs(ctx64.to_mpmath(h, mpmath.mp.clone()) - mpmath.mpf(2) * mpmath.pi / 96)


@pytest.mark.parametrize("make_low", [lambda: mpvi.GMPContext(30),
                                      lambda: mpvi.get_context("gmp", 10),
                                      lambda: mpvi.GMPContext(64).with_dps(20)],
                         ids=["GMPContext(30)", "get_context", "with_dps"])
def test_a_context_made_later_never_lowers_the_precision_of_bare_arithmetic(make_low):
    """After GMPContext(30), ctx64.num(2) * ctx64.pi / 96 was good to 1e-33 only."""
    caller = gmpy2.get_context()
    gmpy2.set_context(gmpy2.context())
    try:
        ctx64 = mpvi.GMPContext(64)
        make_low()
        assert gmpy2.get_context().precision == ctx64.prec
        with mpmath.workdps(100):
            assert _error_of_bare_arithmetic(ctx64) < mpmath.mpf(10) ** -63
        assert (ctx64.num(1) / 3).precision == ctx64.prec
        low = mpvi.GMPContext(16)
        with low.active():                  # the explicit switch, downwards
            assert (ctx64.num(1) / 3).precision == low.prec
        assert (ctx64.num(1) / 3).precision == ctx64.prec
        high = mpvi.GMPContext(100)           # upwards: a new context raises it
        assert (ctx64.num(1) / 3).precision == high.prec
    finally:
        gmpy2.set_context(caller)


def test_a_callers_own_higher_precision_is_kept_by_a_new_context():
    caller = gmpy2.get_context()
    mine = gmpy2.context(precision=500)
    gmpy2.set_context(mine)
    try:
        mpvi.GMPContext(30)
        assert gmpy2.get_context() is mine and mine.precision == 500
    finally:
        gmpy2.set_context(caller)


def test_a_fresh_process_sees_the_same_rule():
    code = ("import gmpy2, mpvi\n"
            "a = mpvi.GMPContext(64); b = mpvi.GMPContext(30)\n"
            "print(gmpy2.get_context().precision, (a.num(1) / 3).precision, a.prec)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["216", "216", "216"]


# ----- the repro entry point leaves the caller's process-wide state alone ----------------------------


def _state():
    context = gmpy2.get_context()
    return (context, context.precision, mpmath.mp.prec, random.getstate(),
            str(np.random.get_state()), decimal.getcontext().flags.copy(),
            decimal.getcontext().prec)


def test_run_and_diff_in_process_leave_gmpy2_decimal_and_random_as_they_were(tmp_path, capsys):
    """main(['run', ...]) left gmpy2 at the run's 216 bits, main(['diff', ...]) set
    decimal's InvalidOperation flag and advanced random."""
    from mpvi.repro.cli import main
    caller = gmpy2.get_context()
    mine = gmpy2.context(precision=70)
    gmpy2.set_context(mine)
    try:
        random.seed(47)
        before = _state()
        assert main(["run", "axioms2024_fig08", "--quick", "--dps", "64", "--out",
                     str(tmp_path), "--no-cache", "-q"]) == 0
        assert _state() == before
        assert main(["diff", "axioms2024_fig08", "--out", str(tmp_path)]) == 0
        assert _state() == before
        assert gmpy2.get_context() is mine and mine.precision == 70
    finally:
        gmpy2.set_context(caller)
        capsys.readouterr()


# ----- a planted kernel with a record it wrote itself is not loaded ------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    cache = tmp_path_factory.mktemp("store") / "kernels"
    r, out = run_kernel(cache)
    assert r.returncode == 0, r.stderr
    name, = [p.name for p in cache.iterdir() if p.name.startswith("mpvi_k")
             and not p.name.endswith(".sha256")]
    return cache, name, out[0].split()[2]


@pytest.fixture
def planted(store, tmp_path):
    """A copy of the store with a planted module at the cached name: (directory, module,
    the value, the marker the planted module would write)."""
    directory = tmp_path / "kernels"
    shutil.copytree(store[0], directory)
    module = directory / store[1]
    marker = tmp_path / "marker"
    plant(module, marker)
    return directory, module, store[2], marker


def _fields(record):
    return dict(line.split(" ", 1) for line in record.read_text().splitlines() if " " in line)


def _record_by_the_public_format(module, key=None, source=None):
    data = module.read_bytes()
    record = module.with_name(module.name + ".sha256")
    old = _fields(record)
    digest = hashlib.sha256(data).hexdigest()
    if key is None:                 # the format of mpvi 0.2 (file, size, sha256): no key
        text = (f"mpvi compiled kernel record 1\nfile {module.name}\nsize {len(data)}\n"
                f"sha256 {digest}\n")
    else:
        text = cbackend._record_text(module.name, len(data), digest,
                                     source or old.get("source", "0" * 64), key)
    record.write_text(text)


def _refused(directory, module, value, marker, why):
    r, out = run_kernel(directory)
    assert r.returncode == 0, r.stderr
    assert not marker.exists(), "the planted module was loaded"
    assert out[0].split() == ["builtin_function_or_method", "True", value]
    lines = mpvi_lines(r.stderr)
    assert len(lines) == 1 and str(module) in lines[0] and why in lines[0], r.stderr
    assert cbackend._module_problem(module) is None          # rebuilt by mpvi


@needs_toolchain
def test_a_planted_module_with_a_record_written_from_the_public_format_is_not_loaded(planted):
    """A module planted in the user's cache with a digest record of the documented format
    (file, size, SHA-256: anyone can compute it) was loaded."""
    directory, module, value, marker = planted
    _record_by_the_public_format(module)
    _refused(directory, module, value, marker, "malformed digest record")


@needs_toolchain
def test_a_record_made_under_another_stores_key_is_not_loaded(planted):
    """A module and its record copied from another cache (another key) vouch for nothing."""
    directory, module, value, marker = planted
    _record_by_the_public_format(module, key=b"\x01" * 32)
    _refused(directory, module, value, marker, "did not write")


@needs_toolchain
def test_a_record_of_another_generating_source_is_not_loaded(planted):
    directory, module, value, marker = planted
    key = cbackend._store_key(directory, create=False)
    _record_by_the_public_format(module, key=key, source="f" * 64)
    _refused(directory, module, value, marker, "another source")


@needs_toolchain
def test_the_store_key_is_private_and_one_per_store(store, tmp_path):
    directory = store[0]
    key = directory / ".mpvi-store-key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert len(cbackend._store_key(directory, create=False)) == 32
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    assert cbackend._store_key(other, create=True) != cbackend._store_key(directory, False)
    os.chmod(other / ".mpvi-store-key", 0o644)
    with pytest.raises(cbackend._Rejected, match="readable by group or others"):
        cbackend._store_key(other, create=False)


@pytest.mark.parametrize("name", sorted(READERS))
def test_an_empty_variable_is_refused_naming_it(monkeypatch, name):
    monkeypatch.setenv(name, " ")
    with pytest.raises(environment.EnvironmentSettingError, match=rf"^{name}=' '"):
        READERS[name]()
