"""The C runtime of the compiled modules lives in real C files (mpvi/compiled/csrc), shipped with the
package, compiled with warnings on and without a single one under -Wall -Wextra -Werror;
every module is keyed on the runtime's bytes and compiled against exactly those bytes."""
import re
import shutil
from pathlib import Path

import pytest
import sympy as sp

import mpvi
from mpvi.compiled import cbackend
from mpvi.compiled import codegen
from mpvi.engines import kernels

needs_toolchain = pytest.mark.skipif(
    "error" in cbackend.toolchain(),
    reason=f"no toolchain for compiled kernels: {cbackend.toolchain().get('error')}")

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "mpvi" / "compiled" / "csrc"


def test_normal_builds_have_warnings_on():
    """-Wall -Wextra in every build (not -w, which hid every warning), and not -Werror (a
    newer compiler's new warning must not stop a user's build)."""
    assert {"-Wall", "-Wextra"} <= set(cbackend._CFLAGS)
    assert "-w" not in cbackend._CFLAGS and "-Werror" not in cbackend._CFLAGS


def _system(name, V, ctx):
    X, Y = sp.symbols("X Y")
    return mpvi.LagrangianSystem(name, [X, Y], sp.eye(2), V(X, Y), {}, ctx)


@needs_toolchain
def test_every_kind_of_module_compiles_without_a_warning(monkeypatch, tmp_path):
    """The kernels, Newton (with the step's outputs), RK4 and GBS (the symbolic inverse of M,
    the dense solve, singular factors), the checks after a step (with singular factors) and
    the Taylor steps (with a solve), of the Lagrange top, Kepler (rational powers), a well of
    special functions and a 4-link pendulum: every module is built under -Wall -Wextra
    -Werror, none fails, and each feature appears in a module that was built."""
    from mpvi.systems import n_link_pendulum
    from mpvi.systems.lagrange_top import table3_top
    monkeypatch.setenv(cbackend.ENV_CACHE, str(tmp_path / "kernels"))
    monkeypatch.setenv(cbackend.ENV_COMPILE_AFTER, "0")
    monkeypatch.setenv(cbackend.ENV_SWITCH, "1")
    monkeypatch.setattr(cbackend, "_MODULES", {})
    monkeypatch.setattr(kernels, "_KERNELS", {})     # kernels of earlier tests are not built
    monkeypatch.setattr(kernels, "_ANY_CONTEXT", {})
    monkeypatch.setattr(cbackend, "_status", {})
    monkeypatch.setattr(cbackend, "_CFLAGS", (*cbackend._CFLAGS, "-Werror"))
    reports, built = [], {}
    monkeypatch.setattr(cbackend, "_report_once", lambda key, message: reports.append(message))
    real_build = cbackend._build

    def build(name, csource, tc, target):
        built[name] = csource
        return real_build(name, csource, tc, target)
    monkeypatch.setattr(cbackend, "_build", build)
    ctx = mpvi.GMPContext(64)
    kepler = mpvi.Problem(_system("Kepler", lambda x, y: -1 / sp.sqrt(x ** 2 + y ** 2), ctx),
                          ["1", "0"], p0=["0", "6/5"])
    special = mpvi.Problem(_system("special well", lambda x, y: sp.erf(x) * sp.besselj(1, y)
                                   + sp.cos(x * y) + sp.atan(y) * sp.exp(x), ctx),
                           ["1/2", "1/3"], p0=["0", "1/5"])
    runs = [(table3_top(ctx), ["simpson", "midpoint", "rk4", "gbs", "taylor"]),
            (kepler, ["simpson", "rk4", "gbs", "taylor"]),
            (special, ["simpson", "rk4"]),
            (n_link_pendulum(ctx, 4), ["rk4", "taylor"])]
    for problem, methods in runs:
        for method in methods:
            options = {"tol": "1e-30"} if method == "taylor" else {}
            mpvi.solve(problem, method, h="1/20", n=3, **options)
    assert reports == [], reports
    kinds = {name[:6] for name in built}
    assert kinds == {"mpvi_k", "mpvi_n", "mpvi_e", "mpvi_c", "mpvi_t"}, kinds
    sources = {kind: [s for n, s in built.items() if n.startswith(kind)] for kind in kinds}
    assert any("#define HAS_OUTPUTS 1" in s for s in sources["mpvi_n"])
    assert any(re.search(r"#define NG [1-9]", s) for s in sources["mpvi_e"])
    assert any("dense_solve(mp," in s for s in sources["mpvi_e"])         # M v = p solved
    assert any("ex_regular(" in s for s in sources["mpvi_e"])             # M inverted
    assert any(re.search(r"#define NG [1-9]", s) for s in sources["mpvi_c"])
    assert any("dense_solve(" in s for s in sources["mpvi_t"])
    for kind in ("mpvi_n", "mpvi_e", "mpvi_t"):       # the elimination generated from Python
        assert all("static int mpvi_gauss_eliminate(" in s for s in sources[kind]), kind
    assert all("static int mpvi_ldl_positive(" in s for s in sources["mpvi_c"])
    assert all("static int mpvi_rk4_core(" in s and "static int mpvi_gbs_core(" in s
               for s in sources["mpvi_e"])
    everything = "\n".join(built.values())
    for call in ("pw_dyadic(", "mpfr_erf(", "mpfr_jn(", "mpfr_atan(", "mpvi_sin_cos("):
        assert call in everything, call


def test_no_python_file_of_the_library_holds_the_c_runtime():
    """The fixed C -- module definitions, the dense solve, the Newton loop, the steps, the
    argument readers -- is in mpvi/compiled/csrc; the Python files only write the generated part."""
    runtime_marks = ("PyMODINIT_FUNC", "PyModuleDef", "static PyObject *", "PyArg_",
                     "PySequence_Fast(", "int dense_solve(", "mpfr_init2(limit")
    for path in sorted((ROOT / "mpvi").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found = [m for m in runtime_marks if m in text]
        assert not found, f"{path.relative_to(ROOT)} holds C of the runtime: {found}"


def test_the_runtime_is_package_data_read_from_the_installed_package():
    """Every runtime file is shipped (pyproject's package data) and read as it is on disk."""
    files = cbackend.runtime_files()
    on_disk = {p.name: p.read_bytes() for p in CSRC.iterdir() if p.is_file()}
    assert files == on_disk and "mpvi_runtime.h" in files and len(files) >= 5
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^"mpvi.compiled" = \[.*"csrc/\*\.h"', pyproject, re.M)
    for name in files:
        assert re.fullmatch(r"mpvi_[a-z]+\.h", name), name


def test_a_changed_byte_of_the_runtime_changes_every_key(tmp_path):
    """A copy of the runtime has the installed runtime's digest; one byte changed, a file
    added or removed, and the digest -- and so the cache key of every module -- changes."""
    copy = tmp_path / "csrc"
    shutil.copytree(CSRC, copy)
    installed = cbackend.runtime_digest(cbackend.runtime_files())
    assert cbackend.runtime_digest(cbackend.runtime_files(copy)) == installed
    tc = {"version": "cc 1", "mpfr": "4", "abi": ".so", "link": ["-lmpfr"]}
    key = cbackend._file_name("mpvi_kx", "int x;", tc, installed)
    assert cbackend._file_name("mpvi_kx", "int x;", tc) == key     # the installed runtime's
    solve = copy / "mpvi_solve.h"
    data = bytearray(solve.read_bytes())
    data[data.index(b"n eps")] ^= 0x01                             # one bit of one byte
    solve.write_bytes(bytes(data))
    changed = cbackend.runtime_digest(cbackend.runtime_files(copy))
    assert changed != installed
    assert cbackend._file_name("mpvi_kx", "int x;", tc, changed) != key
    (copy / "mpvi_extra.h").write_text("/* more */\n")
    added = cbackend.runtime_digest(cbackend.runtime_files(copy))
    assert added not in (installed, changed)
    (copy / "mpvi_extra.h").unlink()
    (copy / "mpvi_signs.h").unlink()
    assert cbackend.runtime_digest(cbackend.runtime_files(copy)) not in (installed, changed, added)
    (copy / "mpvi_runtime.h").unlink()
    with pytest.raises(RuntimeError, match="C runtime of mpvi is missing"):
        cbackend.runtime_files(copy)


@needs_toolchain
def test_a_module_is_compiled_against_the_runtime_bytes_it_is_keyed_on(monkeypatch, tmp_path,
                                                                        capsys):
    """The build compiles a copy of the bytes the key was made of, not whatever the
    installed files hold by then: a runtime whose bytes say #error fails the build (the
    kernel stays in Python, said once), under another key than the installed runtime's."""
    files, digest = cbackend.runtime_files(), None
    files = dict(files, **{"mpvi_runtime.h": b'#error "the runtime that was keyed"\n'
                           + files["mpvi_runtime.h"]})
    digest = cbackend.runtime_digest(files)
    monkeypatch.setenv(cbackend.ENV_CACHE, str(tmp_path / "kernels"))
    monkeypatch.setenv(cbackend.ENV_SWITCH, "1")
    monkeypatch.setattr(cbackend, "_MODULES", {})
    monkeypatch.setattr(cbackend, "_status", {"runtime": (files, digest)})
    x = sp.Symbol("x")
    ctx = mpvi.GMPContext(64)
    f = codegen.generate([[x]], [sp.sin(x) * x + 3], ctx, compiled=True)
    assert f.__name__ == "kernel"                                  # the Python function
    err = capsys.readouterr().err
    assert "building one failed" in err and "the runtime that was keyed" in err
    monkeypatch.setattr(cbackend, "_status", {})
    assert cbackend._file_name("m", "s", cbackend.toolchain()) != \
        cbackend._file_name("m", "s", cbackend.toolchain(), digest)


@needs_toolchain
def test_a_missing_runtime_falls_back_to_python_and_says_so(monkeypatch, tmp_path, capsys):
    """An installation without the runtime files: the kernels stay in Python (the same
    numbers) and one line says why, naming the missing runtime -- no traceback."""
    monkeypatch.setenv(cbackend.ENV_SWITCH, "1")
    monkeypatch.setattr(cbackend, "_MODULES", {})
    monkeypatch.setattr(cbackend, "_status", {})
    real = cbackend.runtime_files                                  # read an empty directory
    monkeypatch.setattr(cbackend, "runtime_files", lambda directory=None: real(tmp_path))
    x = sp.Symbol("x")
    f = codegen.generate([[x]], [sp.cos(x) * x], mpvi.GMPContext(64), compiled=True)
    assert f.__name__ == "kernel"                                  # the Python function
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("mpvi:")]
    assert lines == [f"mpvi: compiled kernels unavailable (the C runtime of mpvi is missing (no "
                     f"mpvi_runtime.h in {tmp_path})); computing with the Python kernels"]
