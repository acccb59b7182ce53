"""A paper per folder: every reproduction lives in its paper's folder with that folder's
data, the checks are generated from the declarations (no hand-kept list of ids), and a new
figure added to one folder is picked up by ``mpvi list``, ``run`` and ``diff`` with nothing
else edited (the example of docs/guide/extending.md, taken from that page)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mpvi.repro.declare import all_reproductions
from mpvi.repro.packages import folder_of, reproduction_packages
from mpvi.repro.published import load_all_published, load_known
from mpvi.repro.runtimes import Runtimes

ROOT = Path(__file__).resolve().parent.parent
REPS = all_reproductions()
PACKAGES = reproduction_packages()
PAPERS = sorted({rep.paper for rep in REPS.values()})
GUIDE = ROOT / "docs" / "guide" / "extending.md"


def by_paper(paper):
    return sorted(rid for rid, rep in REPS.items() if rep.paper == paper)


def test_every_paper_has_its_folder():
    assert set(PAPERS) >= {"axioms2024", "bea", "hermite", "mutze", "top2025"}
    for paper in PAPERS:
        assert (ROOT / "reproductions" / paper / "__init__.py").is_file(), paper


@pytest.mark.parametrize("paper", PAPERS)
def test_a_papers_scripts_and_data_are_in_its_folder(paper):
    """Each reproduction of ``paper`` (as discovered) is the script ``<id>.py`` of the
    folder ``reproductions/<paper>/``, its published values are in that folder's
    ``published/`` and nowhere else, its known discrepancies in that folder's
    ``discrepancies.csv``, and its measured run time in that folder's ``runtimes.json``."""
    folder = ROOT / "reproductions" / paper
    ids = by_paper(paper)
    assert ids and sorted(p.stem for p in folder.glob("[!_]*.py")) == ids
    published = load_all_published()
    runtimes = Runtimes(PACKAGES)
    for rid in ids:
        rep = REPS[rid]
        assert rid.startswith(f"{paper}_") and rep.module == f"mpvi_papers.{paper}.{rid}"
        own = folder_of(rep, PACKAGES)
        assert own.root == folder
        where = {Path(v.where.split(",")[0]).name for v in published if v.id == rid}
        mine = {p.name for p in own.published.glob("*.csv")}
        assert where <= mine, (rid, where)
        assert bool(where) is rep.published, rid
        assert runtimes.entry(rep, False) is not None and runtimes.entry(rep, True) is not None
    known = load_known(folder / "discrepancies.csv", folder / "ERRATA.md") \
        if (folder / "discrepancies.csv").exists() else {}
    assert {rid for rid, _ in known} <= set(ids)


def test_mpvi_list_lists_every_discovered_reproduction_with_its_paper():
    out = subprocess.run([sys.executable, "-m", "mpvi.repro.cli", "list"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    for rid, rep in REPS.items():
        assert re.search(rf"^{rid}\s+{rep.paper}\s", out, re.M), rid


# ----- the example of docs/guide/extending.md -------------------------------------------------

def guide_blocks():
    """The script and the published CSV of the example in docs/guide/extending.md."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index("### The example: one small figure"):]
    (script,) = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)[:1]
    (table,) = re.findall(r"^```text\n(.*?)^```", section, re.S | re.M)[:1]
    return script, table


def test_a_figure_added_to_one_folder_is_listed_run_and_diffed(tmp_path):
    """A copy of the reproductions (the package ``mpvi_papers``, found first on the path)
    gets the guide's script and published values in its folder ``axioms2024/``, and
    nothing else: ``mpvi list`` lists it, ``mpvi run`` writes its outputs and ``mpvi diff``
    matches its printed value, all in a fresh process."""
    script, table = guide_blocks()
    rid = re.search(r'id="(\w+)"', script).group(1)
    site = tmp_path / "site"
    copy = site / "mpvi_papers"
    shutil.copytree(ROOT / "reproductions", copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    folder = copy / "axioms2024"
    before = sorted(p.relative_to(copy) for p in copy.rglob("*"))
    (folder / f"{rid}.py").write_text(script, encoding="utf-8")
    (folder / "published" / f"{rid}.csv").write_text(table, encoding="utf-8")
    added = sorted(set(p.relative_to(copy) for p in copy.rglob("*")) - set(before))
    assert added == [Path("axioms2024") / f"{rid}.py",
                     Path("axioms2024") / "published" / f"{rid}.csv"]
    env = {**os.environ, "PYTHONPATH": str(site)}

    def mpvi(*argv):
        done = subprocess.run([sys.executable, "-m", "mpvi.repro.cli", *argv], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    assert re.search(rf"^{rid}\s+axioms2024\s", mpvi("list"), re.M)
    out = tmp_path / "out"
    mpvi("run", rid, "--quick", "--no-cache", "--results", str(out))
    assert {p.name for p in (out / "axioms2024").iterdir()} >= {f"{rid}.csv", f"{rid}.png",
                                                                f"{rid}.json"}
    diffed = mpvi("diff", rid, "--quick", "--results", str(out))
    assert re.search(r"^simpson order\s+4\s.*\bmatch$", diffed, re.M), diffed
    assert "1 value compared: 1 match" in diffed
