"""mpvi as a user installs it: the package names, and the wheel and sdist built, installed
and used outside the repository.

* The papers' scripts (the directory ``reproductions/``) install as ``mpvi_papers``:
  nothing imports a top-level package ``reproductions`` (a generic name a user's own
  package may have), a sub-package per paper folder, and ``python
  reproductions/<paper>/<id>.py`` still runs.
* ``python -m build`` makes the sdist and, from it, the wheel; both carry LICENSE, the
  wheel's metadata the classifiers, project URLs and extras, and the data files
  (published values, errata, run times).

The wheel installed in a clean virtual environment (its dependencies from the package
registry), where the README's library block prints what its comments say and ``mpvi
list/run/diff`` work from a directory outside the repository, is CI's wheel step
(``.ci/python-versions`` running ``.ci/smoke.py``, on Python 3.10 and 3.13), not a test
here: it was done twice.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ("ERRATA.md", "discrepancies.csv", "runtimes.json")
"""The data files of a paper folder (reproductions/<paper>/) beside its published/."""
RID = "axioms2024_tab02"          # a quick run of a few seconds, with published values
SCRIPT = f"reproductions/axioms2024/{RID}.py"
PAPERS = sorted(p.parent.name for p in (ROOT / "reproductions").glob("*/__init__.py"))


def _run(argv, cwd, timeout=600, **kw):
    """``argv`` run to its end in ``cwd``, without the caller's PYTHONPATH; the completed
    process (the test fails with its output on a nonzero exit status)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    out = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                         timeout=timeout, env=env, **kw)
    assert out.returncode == 0, (f"{' '.join(map(str, argv))} exited with {out.returncode}:\n"
                                 f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out


def test_the_scripts_are_the_package_mpvi_papers_and_no_reproductions_is_imported():
    """From the repository's top, where a package ``reproductions`` would be importable,
    listing and loading every reproduction imports ``mpvi_papers`` and never it."""
    out = _run([sys.executable, "-c", textwrap.dedent("""
        import sys
        from mpvi.repro.cli import main
        from mpvi.repro.declare import all_reproductions
        from mpvi.repro.packages import reproduction_packages
        assert main(["list"]) == 0
        reps = all_reproductions()
        print("PACKAGES", [p.module for p in reproduction_packages()])
        print("MODULES", sorted({r.module.split(".")[0] for r in reps.values()}))
        print("LOADED", sorted(m for m in sys.modules if m.split(".")[0] == "reproductions"))
    """)], cwd=ROOT)
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines()
                 if line.split(" ", 1)[0] in ("PACKAGES", "MODULES", "LOADED"))
    assert lines["PACKAGES"] == "['mpvi_papers']"
    assert lines["MODULES"] == "['mpvi_papers']"
    assert lines["LOADED"] == "[]"


def test_a_script_runs_on_its_own(tmp_path):
    out = _run([sys.executable, ROOT / SCRIPT, "--help"], cwd=tmp_path)
    assert f"python {SCRIPT}" in out.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The sdist and the wheel of the repository (``python -m build``: the wheel is built
    from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", out, ROOT], cwd=ROOT)
    (sdist,) = out.glob("mpvi-*.tar.gz")
    (wheel,) = out.glob("mpvi-*.whl")
    return sdist, wheel


def test_the_sdist_holds_the_tests_and_the_scripts_data(dist):
    sdist, _ = dist
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "tests/test_wheel.py", "tests/conftest.py",
            "reproductions/__init__.py", "reproductions/ERRATA.md", SCRIPT} <= names
    assert {f"reproductions/axioms2024/{name}" for name in DATA} <= names
    assert any(re.fullmatch(r"reproductions/axioms2024/published/.+\.csv", n) for n in names)
    assert {"LICENSE", "constraints/dev.txt", "tox.ini"} <= names


def test_the_wheel_carries_the_license_classifiers_and_project_urls(dist):
    """The metadata a package index shows: the license file and expression (PEP 639), the
    classifiers, the project URLs and the extras, each as pyproject.toml declares it."""
    _, wheel = dist
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        info = metadata.rsplit("/", 1)[0]
        assert z.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        head = z.read(metadata).decode().split("\n\n", 1)[0]
    fields = {}
    for line in head.splitlines():
        key, _, value = line.partition(": ")
        fields.setdefault(key, []).append(value)
    assert fields["License-Expression"] == ["MIT"] and fields["License-File"] == ["LICENSE"]
    assert fields["Requires-Python"] == [">=3.10"]
    assert {f"Programming Language :: Python :: 3.{m}" for m in (10, 11, 12, 13)} <= \
        set(fields["Classifier"])
    assert "Intended Audience :: Science/Research" in fields["Classifier"]
    urls = dict(u.split(", ", 1) for u in fields["Project-URL"])
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues"}
    assert all(u.startswith("https://github.com/mpvi-project/mpvi") for u in urls.values())
    assert sorted(fields["Provides-Extra"]) == ["bench", "dask", "docs", "test"]


def test_the_wheel_installs_mpvi_and_mpvi_papers_with_their_data(dist):
    _, wheel = dist
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        assert z.read(top_level).decode().split() == ["mpvi", "mpvi_papers"]
        assert "mpvi-papers = mpvi_papers" in z.read(entry_points).decode()
    assert not any(n.startswith("reproductions/") for n in names)
    assert "mpvi_papers/ERRATA.md" in names                     # the index
    assert set(PAPERS) >= {"axioms2024", "bea", "hermite", "mutze", "top2025"}
    for paper in PAPERS:                          # every paper folder with its data
        assert f"mpvi_papers/{paper}/__init__.py" in names, paper
        here = ROOT / "reproductions" / paper
        files = [p.relative_to(here).as_posix() for p in here.rglob("*")
                 if p.is_file() and (p.name in DATA or p.parent.name == "published")]
        assert files and {f"mpvi_papers/{paper}/{f}" for f in files} <= names, paper
    assert "mpvi/py.typed" in names and "mpvi/repro/templates/index.html" in names
    assert {f"mpvi/compiled/csrc/{p.name}" for p in (ROOT / "mpvi" / "compiled" / "csrc").glob("*.h")} <= names
