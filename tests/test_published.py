"""Published values as data, the discrepancy list and the diff."""
import csv
import json
import shutil

import pytest

import mpvi.ground.io
from conftest import replace_in_framework
from mpvi import MPContext
from mpvi.ground.io import provenance
from mpvi.repro.cli import main
from mpvi.repro.published import (PublishedDataError, PublishedValue, diff,
                                  errata_index, load_all_published, load_known, load_published)
from mpvi.repro.packages import ReproductionPackage, all_folders, reproduction_packages
from mpvi.repro.records import stamp_record

HEADER = "id,key,quantity,printed,compare,tolerance,source\n"


def value(printed, compare="digit", tolerance=""):
    return PublishedValue("x", "k", "q", printed, compare, tolerance, "s", "here")


def test_table2_is_complete_and_as_printed():
    rows = [v for v in load_all_published() if v.id == "axioms2024_tab02"]
    errors = [v for v in rows if not v.key.endswith("order")]
    orders = [v for v in rows if v.key.endswith("order")]
    assert len(errors) == 72 and len(orders) == 24
    printed = {v.key: v.printed for v in rows}
    # spot checks against the paper's Table 2, including its misprints
    assert printed["T=10 newmark p N=400"] == "0.782"
    assert printed["T=1 rk4 p N=20"] == "0.000800"
    assert printed["T=100 rk4 q N=2000"] == "0.2650"
    assert printed["T=1000 simpson q order"] == "3.06"


def test_digit_comparison_is_one_unit_in_the_last_printed_digit():
    assert value("0.0251").check("0.02515")[0]
    assert value("0.0251").check("0.0252")[0]
    assert not value("0.0251").check("0.02521")[0]
    assert value("0.00").check("-0.004")[0]
    assert not value("0.01").check("-0.011")[0]


def test_other_comparisons():
    assert value("1e-3", "magnitude").check("0.0038")[0]
    assert not value("1e-3", "magnitude").check("0.011")[0]
    assert value("2", "abs", "0.1").check("1.95")[0]
    assert not value("2", "abs", "0.1").check("1.85")[0]
    assert value("0", "abs", "1e-50").check("2.3e-63")[0]
    assert value("1", "max", "0.1").check("1.05")[0]
    assert not value("1", "min", "0").check("0.99")[0]
    assert value("1e4", "log10", "0.5").check("1.2e4")[0]


@pytest.mark.parametrize("body, message", [
    ("id,key,printed\n", "header must be"),
    (HEADER + "a,b,c,1.0,digit,,s,extra\n", "expected 7 fields"),
    (HEADER + "a,b,c,one,digit,,s\n", "'one' is not a number"),
    (HEADER + "a,b,c,1.0,approx,,s\n", "compare must be one of"),
    (HEADER + "a,b,c,1.0,abs,,s\n", "is not a number"),
    (HEADER + "a,b,c,1.0,abs,-1,s\n", "negative tolerance"),
    (HEADER + "a,b,c,0,magnitude,,s\n", "needs a positive printed value"),
    (HEADER + "a,b,c,1.0,digit,,s\na,b,c,2.0,digit,,s\n", "duplicate key"),
    ("", "empty file"),
])
def test_malformed_published_csv_is_rejected_with_the_line(tmp_path, body, message):
    path = tmp_path / "bad.csv"
    path.write_text(body)
    with pytest.raises(PublishedDataError, match=message):
        load_published(path)


def test_every_known_discrepancy_is_explained_in_errata_and_names_a_published_value():
    known = load_known()
    published = {(v.id, v.key) for v in load_all_published()}
    assert known, "discrepancies.csv should not be empty"
    assert set(known) <= published
    for folder in all_folders(reproduction_packages()):
        own = load_known(folder.discrepancies, folder.errata) if folder.discrepancies.exists() else {}
        errata = folder.errata.read_text(encoding="utf-8") if own else ""
        for k in own.values():                      # explained in its own paper's folder
            assert f"### {k['errata']}" in errata, (folder.name, k)


def test_the_errata_index_is_current_and_keeps_no_text_twice():
    """reproductions/ERRATA.md is generated from the papers' errata
    (:func:`mpvi.repro.published.errata_index`): after editing a paper's ERRATA.md, write it
    again with ``python -c "from mpvi.repro.published import write_errata_index;
    write_errata_index()"``.  It holds links and tagged headings, no entry's text."""
    pkg = reproduction_packages()[0]
    index = pkg.errata.read_text(encoding="utf-8")
    assert index == errata_index([pkg], pkg.root), "reproductions/ERRATA.md is not current"
    folders = [f for f in pkg.folders()[1:] if f.errata.exists()]
    assert {f.name.rpartition("/")[2] for f in folders} >= {"axioms2024", "hermite", "mutze",
                                                             "top2025", "bea"}
    for folder in folders:
        assert f"]({folder.errata.relative_to(pkg.root).as_posix()})" in index
        body = folder.errata.read_text(encoding="utf-8").split("\n## ", 1)[1]
        paragraph = max(body.split("\n\n")[:4], key=len)     # a paragraph of its opening
        assert len(paragraph) > 80 and paragraph not in index


def test_known_tag_missing_from_errata_is_rejected(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("id,key,errata,reason\naxioms2024_tab02,T=1 rk4 p N=20,[E999],x\n")
    errata = tmp_path / "E.md"
    errata.write_text("### [E1] something\n")
    with pytest.raises(PublishedDataError, match=r"\[E999\]"):
        load_known(path, errata)


def _write_values(out, rid, values, quick=False):
    """A provenance record of ``rid`` with ``values`` (as write_outputs writes it, without
    the digests of its files, with the digest of its content) in ``out``."""
    record = provenance(MPContext(30), {}, 0.5, {"reproduction": rid, "paper": "axioms2024",
                                                 "item": "Fig. 8", "quick": quick,
                                                 "from_cache": False})
    record["values"] = values
    d = out / "axioms2024"
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{rid}.json").write_text(json.dumps(stamp_record(record)))


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A stand-in source checkout: figures/ (full runs) and quick-figures/ below tmp_path."""
    monkeypatch.setattr(mpvi.ground.io, "project_root", lambda: tmp_path)
    return tmp_path


def _pub(*keys):
    return [PublishedValue("axioms2024_fig08", k, "q", p, "abs", "0.1", "s", f"pub.csv, line {n}")
            for n, (k, p) in enumerate(keys, start=2)]


def test_diff_statuses(project):
    pub = _pub(("a", "2"), ("b", "4"), ("c", "4"), ("d", "4"))
    known = {("axioms2024_fig08", "c"): {"errata": "[E0]", "reason": "because"}}
    rows = diff(["axioms2024_fig08"], project / "figures", pub, known)
    assert [r.status for r in rows] == ["MISSING"] * 4                      # not run
    _write_values(project / "figures", "axioms2024_fig08",
                  {"a": "1.97", "b": "3.5", "c": "3.0", "d": "4.01"})
    rows = diff(["axioms2024_fig08"], project / "figures", pub, known)
    assert [r.status for r in rows] == ["match", "MISMATCH", "known", "match"]
    _write_values(project / "quick-figures", "axioms2024_fig08", {"a": "1.97"}, quick=True)
    rows = diff(["axioms2024_fig08"], project / "quick-figures", pub, known)
    assert [r.status for r in rows] == ["match", "skipped", "skipped", "skipped"]
    assert rows[1].reason == "computed by the full run only: `mpvi run axioms2024_fig08`"


def test_a_misspelt_key_is_an_error_not_a_skip(project):
    """A key that the full run does not have is named with its file and line, whether the
    outputs compared are of a full or a --quick run; without a full run a --quick run's
    missing value is skipped, saying that the key is unconfirmed."""
    pub = _pub(("a", "2"), ("b", "4"))
    _write_values(project / "quick-figures", "axioms2024_fig08", {"a": "1.97"}, quick=True)
    rows = diff(["axioms2024_fig08"], project / "quick-figures", pub)
    assert [r.status for r in rows] == ["match", "skipped"]
    assert "no full run in" in rows[1].reason and "to confirm the key" in rows[1].reason
    _write_values(project / "figures", "axioms2024_fig08", {"a": "1.97", "bb": "4"})
    for out in ("figures", "quick-figures"):
        with pytest.raises(PublishedDataError, match=r"^pub\.csv, line 3: axioms2024_fig08 "
                                                     r"computes no value 'b' \(.*misspelt"):
            diff(["axioms2024_fig08"], project / out, pub)


def test_published_files_parse_as_plain_csv():
    paths = [p for f in all_folders(reproduction_packages()) for p in f.published.glob("*.csv")]
    assert len(paths) >= 16
    for path in paths:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        assert all(len(r) == 7 for r in rows)


# ----- published data that does not fit the reproductions (mpvi diff exit 2) -----------------

@pytest.fixture
def data(tmp_path, monkeypatch):
    """A copy of the reproduction package's data files (each paper folder's published/,
    ERRATA.md, discrepancies.csv) that mpvi reads instead of the package's own."""
    pkg = reproduction_packages()[0]
    root = tmp_path / "pkg"
    for folder in pkg.folders():
        where = root / folder.root.relative_to(pkg.root)
        where.mkdir(parents=True, exist_ok=True)
        if folder.published.is_dir():
            shutil.copytree(folder.published, where / "published")
        for path in (folder.errata, folder.discrepancies):
            if path.exists():
                shutil.copy(path, where / path.name)
    copy = ReproductionPackage(pkg.name, pkg.module, root)
    replace_in_framework(monkeypatch, "reproduction_packages", lambda: [copy])
    return root


def _diff_error(capsys, *ids):
    """``mpvi diff ids`` of the committed full results: exit 2 and its one error line."""
    assert main(["diff", *ids]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("mpvi: ")]
    assert len(lines) == 1, err
    return lines[0]


def _edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_copied_data_diffs_clean(data, capsys):
    assert main(["diff", "mutze_fig02", "axioms2024_fig08"]) == 0


def test_a_misspelt_id_in_a_published_file_is_an_error(data, capsys):
    _edit(data / "mutze" / "published" / "mutze_fig02.csv", "\nmutze_fig02,", "\nmutze_fig2,")
    line = _diff_error(capsys, "axioms2024_fig08")              # whichever ids are compared
    assert line == ("mpvi: malformed data: mutze_fig02.csv, line 2: 'mutze_fig2' is not a "
                    "reproduction id (did you mean 'mutze_fig02'?)")


def test_a_misspelt_key_in_a_published_file_is_an_error(data, capsys):
    _edit(data / "axioms2024" / "published" / "axioms2024_claims.csv", "axioms2024_fig08,simpson q order,",
          "axioms2024_fig08,simpson q ordr,")
    line = _diff_error(capsys, "axioms2024_fig08")
    assert line.startswith("mpvi: malformed data: axioms2024_claims.csv, line ")
    assert ": axioms2024_fig08 computes no value 'simpson q ordr' (its full run in " in line


@pytest.mark.parametrize("deleted", ["file", "directory"])
def test_a_deleted_published_file_or_directory_is_an_error(data, capsys, deleted):
    if deleted == "file":
        (data / "mutze" / "published" / "mutze_fig02.csv").unlink()
    else:
        shutil.rmtree(data / "mutze" / "published")
    line = _diff_error(capsys, "mutze_fig02")
    assert line.startswith(f"mpvi: malformed data: mutze_fig02: no published values in "
                           f"{data / 'mutze' / 'published'}/*.csv")
    assert ("(no such directory)" in line) is (deleted == "directory")
    assert "a deleted file?" in line and "published=False" in line


def test_published_values_of_an_id_that_declares_none_are_an_error(data, capsys):
    with open(data / "axioms2024" / "published" / "extra.csv", "w", encoding="utf-8") as f:
        f.write(HEADER + "axioms2024_fig02,k,q,1.0,digit,,s\n")
    line = _diff_error(capsys, "axioms2024_fig02")
    assert line == ("mpvi: malformed data: extra.csv, line 2: a published value of "
                    "axioms2024_fig02, which declares none (published=False in its "
                    "Reproduction)")


@pytest.mark.parametrize("name", ["mutze/published/mutze_fig02.csv", "mutze/discrepancies.csv",
                                  "mutze/ERRATA.md"])
def test_a_byte_that_is_not_utf8_is_named_with_its_file_and_line(data, capsys, name):
    path = data / name
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2] + " caf\u00e9".encode("latin-1")
    path.write_bytes(b"\n".join(lines))
    assert _diff_error(capsys, "mutze_fig02") == (f"mpvi: malformed data: {path}, line 3: "
                                                  f"byte 0xe9 is not UTF-8 (save the file as "
                                                  f"UTF-8)")
