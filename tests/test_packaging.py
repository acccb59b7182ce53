"""What pyproject.toml promises a user and a package index, and that CI tests it.

* LICENSE (MIT) exists and is pyproject's ``license-files``; classifiers and project URLs
  (the wheel's METADATA: tests/test_wheel.py).
* Extras that each do something: every extra installs a distribution the core
  dependencies do not; no ``fast`` extra (gmpy2 is a core dependency) and no command in
  the README, the docs, tox.ini or .ci/run asks for one; no exact pin in pyproject: the
  development pins live in constraints/dev.txt, which .ci/run and tox.ini install with.
* ``requires-python``: every module parses with Python 3.10's grammar and uses no API
  newer than 3.10 (a call of ``BaseException.add_note`` goes through
  ``mpvi.repro.options.add_note``); .ci/python-versions, the CI step that installs the
  wheel on 3.10 and the newest Python, fails when an interpreter is absent under CI=true,
  when the wheel does not install and when it does not run.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from mpvi.repro import options

try:
    import tomllib
except ImportError:                     # Python 3.10: mypy's own TOML reader (as test_typing)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
SCRIPT = ROOT / ".ci" / "python-versions"


def _name(requirement):
    """The normalized distribution name of a requirement string."""
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_the_license_file_is_mit_and_declared():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "Copyright (c) 2026 the mpvi developers" in text
    assert "THE SOFTWARE IS PROVIDED \"AS IS\"" in text
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]


def test_classifiers_and_project_urls():
    classifiers = set(PROJECT["classifiers"])
    low, high = 10, 13
    assert PROJECT["requires-python"] == f">=3.{low}"
    assert {f"Programming Language :: Python :: 3.{m}" for m in range(low, high + 1)} <= classifiers
    assert {"Intended Audience :: Science/Research", "Typing :: Typed",
            "Topic :: Scientific/Engineering :: Mathematics",
            "Topic :: Scientific/Engineering :: Physics"} <= classifiers
    assert any(c.startswith("Development Status :: ") for c in classifiers)
    # setuptools >= 77 refuses a license classifier beside the license expression (PEP 639)
    assert not any(c.startswith("License :: ") for c in classifiers)
    urls = PROJECT["urls"]
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues"}
    repo = "https://github.com/mpvi-project/mpvi"
    assert urls["Homepage"] == urls["Source"] == repo
    assert urls["Issues"] == f"{repo}/issues"
    assert urls["Documentation"].startswith(f"{repo}/")


def test_every_extra_installs_something_the_core_does_not():
    extras = PROJECT["optional-dependencies"]
    assert set(extras) == {"dask", "docs", "test", "bench"}
    core = {_name(r) for r in PROJECT["dependencies"]}
    for extra, requirements in extras.items():
        assert requirements and {_name(r) for r in requirements} - core, extra
    for requirement in PROJECT["dependencies"] + sum(extras.values(), []):
        assert "==" not in requirement, f"an exact pin in pyproject.toml: {requirement}"


def test_the_development_pins_are_in_constraints_and_ci_and_tox_use_them():
    lines = [line.strip() for line in
             (ROOT / "constraints" / "dev.txt").read_text(encoding="utf-8").splitlines()]
    pins = dict(line.split("==") for line in lines if line and not line.startswith("#"))
    assert "mypy" in pins and re.fullmatch(r"\d+(\.\d+)+", pins["mypy"])
    wanted = {_name(r): r for r in PROJECT["optional-dependencies"]["test"]}
    for name, version in pins.items():        # a pin of a tool an extra asks for, within its bound
        assert name in wanted, name
        bound = re.search(r">=([\d.]+)", wanted[name])
        assert bound and tuple(map(int, version.split("."))) >= \
            tuple(map(int, bound.group(1).split("."))), (name, version)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    (install,) = [line for line in ci.splitlines() if "pip install" in line]
    assert "-c constraints/dev.txt" in install and '".[test,docs]"' in install
    tox = (ROOT / "tox.ini").read_text(encoding="utf-8")
    assert re.search(r"^install_command = .*pip install -c \{toxinidir\}/constraints/dev\.txt "
                     r"\{opts\} \{packages\}$", tox, re.M)
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    assert "include constraints/dev.txt" in manifest     # tox from the sdist finds it


def test_no_command_asks_for_the_fast_extra():
    files = [ROOT / "README.md", ROOT / "tox.ini", ROOT / ".ci" / "run",
             *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "docs").rglob("*.ipynb"))]
    files = [f for f in files if "_build" not in f.parts]
    for path in files:
        text = path.read_text(encoding="utf-8")
        for extras in re.findall(r"\.\[([^\]]*)\]", text) + re.findall(r"^extras *=(.*)$", text, re.M):
            assert "fast" not in re.split(r"[\s,]+", extras), f"{path}: [{extras}]"
    source = (ROOT / "mpvi" / "numbers" / "context.py").read_text(encoding="utf-8")
    assert ".[fast]" not in source


# ---------------------------------------------------------------- requires-python >= 3.10

NEWER_THAN_310 = {          # attributes added after Python 3.10, by module
    "typing": {"Self", "Never", "LiteralString", "NotRequired", "Required", "TypeVarTuple",
               "Unpack", "assert_never", "assert_type", "reveal_type", "dataclass_transform"},
    "enum": {"StrEnum", "ReprEnum", "verify", "EnumCheck", "member", "nonmember"},
    "datetime": {"UTC"}, "math": {"cbrt", "exp2"}, "operator": {"call"},
    "contextlib": {"chdir"}, "hashlib": {"file_digest"}, "sys": {"exception"},
    "asyncio": {"TaskGroup", "timeout", "Runner"}, "logging": {"getLevelNamesMapping"},
}
NEW_MODULES = {"tomllib", "wsgiref.types"}


def _sources():
    for top in ("mpvi", "reproductions", "benchmarks"):
        yield from sorted((ROOT / top).rglob("*.py"))


def _newer_than_310(tree):
    """The uses of Python > 3.10 APIs in a module's syntax tree, as strings."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in NEWER_THAN_310:
            found += [f"from {node.module} import {a.name}" for a in node.names
                      if a.name in NEWER_THAN_310[node.module]]
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            found += [f"import {n}" for n in names if n in NEW_MODULES]
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.attr in NEWER_THAN_310.get(node.value.id, ())):
            found.append(f"{node.value.id}.{node.attr}")
        if isinstance(node, ast.Attribute) and node.attr in ("add_note", "add_notes"):
            found.append(".add_note (use mpvi.repro.options.add_note)")
    return found


def test_every_module_parses_as_python_310_and_uses_no_newer_api():
    bad = {}
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path), feature_version=(3, 10))
        found = _newer_than_310(tree)
        if path == ROOT / "mpvi" / "repro" / "options.py":   # the one guarded call
            found.remove(".add_note (use mpvi.repro.options.add_note)")
        if found:
            bad[str(path.relative_to(ROOT))] = found
    assert not bad


def test_the_scan_finds_what_it_looks_for():
    for code in ("from typing import Self", "import tomllib", "exc.add_note('x')",
                 "import datetime\ndatetime.UTC", "from enum import StrEnum"):
        assert _newer_than_310(ast.parse(code)), code
    with pytest.raises(SyntaxError):
        ast.parse("try:\n    pass\nexcept* ValueError:\n    pass", feature_version=(3, 10))


@pytest.mark.parametrize("version", [(3, 10, 13), sys.version_info])
def test_add_note_is_read_by_one_line_on_310_and_later(monkeypatch, version):
    monkeypatch.setattr(options.sys, "version_info", version)
    exc = KeyError("rk4")
    options.add_note(exc, "(used the cache; --no-cache recomputes)")
    options.add_note(exc, "second")
    assert exc.__notes__ == ["(used the cache; --no-cache recomputes)", "second"]
    assert options.one_line(exc) == "'rk4' (used the cache; --no-cache recomputes) second"


# ------------------------------------------------------------ .ci/python-versions

def _run_step(wheel, versions, tmp_path, ci, path_dirs=()):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CI")}
    env.update(MPVI_CI_PYTHONS=versions, TMPDIR=str(tmp_path),
               PATH=os.pathsep.join([*map(str, path_dirs), env.get("PATH", "")]))
    if ci:
        env["CI"] = "true"
    return subprocess.run(["bash", SCRIPT, wheel], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp_path)


def _this_python(tmp_path):
    """(version X.Y, a directory holding pythonX.Y: this interpreter)."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / f"python{version}").symlink_to(sys.executable)
    return version, bindir


def _wheel(path, init):
    """A wheel of a distribution ``mpvi`` 0.0.1 whose ``mpvi/__init__.py`` is ``init``."""
    info = "mpvi-0.0.1.dist-info"
    files = {"mpvi/__init__.py": init,
             f"{info}/METADATA": "Metadata-Version: 2.1\nName: mpvi\nVersion: 0.0.1\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                              "Tag: py3-none-any\n"}
    files[f"{info}/RECORD"] = "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


def test_an_absent_interpreter_fails_under_ci_and_is_one_line_otherwise(tmp_path):
    wheel = _wheel(tmp_path / "mpvi-0.0.1-py3-none-any.whl", "")
    failed = _run_step(wheel, "3.99", tmp_path, ci=True)
    assert failed.returncode == 1
    assert "FAILED: no Python 3.99" in failed.stderr
    skipped = _run_step(wheel, "3.99", tmp_path, ci=False)
    assert skipped.returncode == 0 and "skipped Python 3.99" in skipped.stdout


def test_a_wheel_that_does_not_install_or_does_not_run_fails_the_step(tmp_path):
    version, bindir = _this_python(tmp_path)
    broken = tmp_path / "mpvi-0.0.1-py3-none-any.whl"
    broken.write_bytes(b"not a zip file")
    out = _run_step(broken, version, tmp_path, ci=True, path_dirs=[bindir])
    assert out.returncode == 1
    assert f"FAILED: the wheel does not install on Python {version}" in out.stderr
    _wheel(broken, "raise ImportError('this mpvi is broken')\n")
    out = _run_step(broken, version, tmp_path, ci=True, path_dirs=[bindir])
    assert out.returncode == 1, out.stdout
    assert "this mpvi is broken" in out.stderr
    assert f"FAILED: the wheel does not run on Python {version}" in out.stderr
    assert not list(tmp_path.glob("mpvi-py*")), "the step leaves its environments behind"


def test_ci_builds_the_wheel_and_runs_the_step_and_fails_with_it_before_the_tests():
    # the step runs in the background while the documentation builds; CI waits for it,
    # prints its lines and stops on its failure before the tests start
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    line = {key: next(i for i, text in enumerate(ci) if key in text)
            for key in ("python -m build --wheel", "bash .ci/python-versions",
                        "wheel_step >", "sphinx-build", 'wait "$wheel_pid"',
                        '[ "$wheel_ok" = 0 ] || {', "python -m pytest")}
    order = sorted(line, key=line.get)
    assert order == ["python -m build --wheel", "bash .ci/python-versions", "wheel_step >",
                     "sphinx-build", 'wait "$wheel_pid"', '[ "$wheel_ok" = 0 ] || {',
                     "python -m pytest"], order
    assert "exit 1" in ci[line['[ "$wheel_ok" = 0 ] || {']]
    assert re.search(r"^MPVI_CI_PYTHONS:-3\.10 3\.13|versions=\$\{MPVI_CI_PYTHONS:-3\.10 3\.13\}",
                     SCRIPT.read_text(encoding="utf-8"), re.M)
