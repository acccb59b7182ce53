"""Layering of the package.

* ``mpvi/`` is the library, ``mpvi/repro/`` the reproduction framework on top of it: no
  library module imports ``mpvi.repro`` (neither at module level nor inside a function).
* Importing the library -- ``mpvi`` and every library module -- loads none of the
  framework's heavy dependencies (matplotlib, pandas, jinja2, rich, markdown_it); a
  function that needs one (``Solution.to_frame``) imports it when called.
* No private number-context access outside mpvi/numbers/context.py.
"""
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORK_ONLY = ("matplotlib", "pandas", "jinja2", "rich", "markdown_it")


def library_modules():
    """Dotted names of every module of mpvi/ outside mpvi/repro/, with their paths."""
    out = {}
    for p in sorted((ROOT / "mpvi").rglob("*.py")):
        rel = p.relative_to(ROOT).with_suffix("")
        if rel.parts[:2] == ("mpvi", "repro") or rel.parts == ("mpvi", "__main__"):
            continue                 # the framework, and `python -m mpvi` (the command)
        name = ".".join(rel.parts)
        out[name[:-len(".__init__")] if name.endswith(".__init__") else name] = p
    return out


def imported_modules(name, path):
    """The absolute names of everything ``path`` imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module
            found.add(target)
            found.update(f"{target}.{a.name}" for a in node.names)
    return found


def test_the_module_scan_sees_the_library_and_resolves_relative_imports():
    mods = library_modules()
    assert {"mpvi", "mpvi.drive.solve", "mpvi.methods.simpson", "mpvi.systems.lagrange_top"} <= set(mods)
    assert not any(m.startswith("mpvi.repro") for m in mods)
    # relative imports are resolved against the right package
    assert "mpvi.model.problem" in imported_modules("mpvi.drive.solve", mods["mpvi.drive.solve"])
    assert "mpvi.methods.base" in imported_modules("mpvi.methods.simpson", mods["mpvi.methods.simpson"])
    assert "mpvi.model.problem" in imported_modules("mpvi.systems.double_pendulum",
                                              mods["mpvi.systems.double_pendulum"])
    # and the framework, scanned the same way, does import the library
    run = ROOT / "mpvi" / "repro" / "run.py"
    assert any(m == "mpvi" or (m.startswith("mpvi.") and not m.startswith("mpvi.repro"))
               for m in imported_modules("mpvi.repro.run", run))


def test_the_library_never_imports_the_framework():
    bad = []
    for name, path in library_modules().items():
        for target in imported_modules(name, path):
            if target == "mpvi.repro" or target.startswith("mpvi.repro."):
                bad.append(f"{path.relative_to(ROOT)} imports {target}")
    assert not bad, "\n".join(bad)


def test_importing_the_library_loads_no_framework_dependency():
    """In a fresh interpreter: import mpvi and every library module, then look at
    sys.modules.  (The same interpreter then imports mpvi.repro.studies, which does load
    pandas: the check sees what it looks for.)"""
    mods = sorted(library_modules())
    code = (
        "import importlib, json, sys\n"
        f"mods = {mods!r}\n"
        f"heavy = {FRAMEWORK_ONLY!r}\n"
        "for m in mods:\n"
        "    importlib.import_module(m)\n"
        "loaded = lambda: sorted(k for k in sys.modules if k.split('.')[0] in heavy"
        " or k == 'mpvi.repro' or k.startswith('mpvi.repro.'))\n"
        "before = loaded()\n"
        "import mpvi.repro.studies\n"
        "print(json.dumps({'library': before, 'framework': loaded()}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["library"] == [], result["library"]
    assert {"mpvi.repro", "mpvi.repro.studies", "pandas"} <= set(result["framework"])


def test_no_private_context_access_outside_context_py():
    bad = []
    for d in ("mpvi", "tests", "reproductions", "benchmarks"):
        for p in (ROOT / d).rglob("*.py"):
            if (p.name == "context.py" and p.parent.name == "numbers") or p.name == "test_layering.py":
                continue
            for i, line in enumerate(p.read_text().splitlines(), 1):
                if re.search(r"\bctx\._|\._m\b", line):
                    bad.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not bad, "\n".join(bad)
