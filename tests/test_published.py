"""Published values as data, the discrepancy list and the diff."""
import csv
import json

import pytest

from mpvi.repro.published import (PublishedDataError, PublishedValue, diff,
                                  load_all_published, load_known, load_published)
from mpvi.repro.run import reproduction_packages

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
    errata = "".join(pkg.errata.read_text() for pkg in reproduction_packages())
    for k in known.values():
        assert f"### {k['errata']}" in errata


def test_known_tag_missing_from_errata_is_rejected(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("id,key,errata,reason\naxioms2024_tab02,T=1 rk4 p N=20,[E999],x\n")
    errata = tmp_path / "E.md"
    errata.write_text("### [E1] something\n")
    with pytest.raises(PublishedDataError, match=r"\[E999\]"):
        load_known(path, errata)


def _write_values(out, rid, values, quick=False):
    d = out / "axioms2024"
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{rid}.json").write_text(json.dumps({"quick": quick, "values": values}))


def test_diff_statuses(tmp_path):
    pub = [PublishedValue("axioms2024_fig08", "a", "q", "2", "abs", "0.1", "s", "w"),
           PublishedValue("axioms2024_fig08", "b", "q", "4", "abs", "0.1", "s", "w"),
           PublishedValue("axioms2024_fig08", "c", "q", "4", "abs", "0.1", "s", "w"),
           PublishedValue("axioms2024_fig08", "d", "q", "4", "abs", "0.1", "s", "w")]
    known = {("axioms2024_fig08", "c"): {"errata": "[E0]", "reason": "because"}}
    _write_values(tmp_path, "axioms2024_fig08", {"a": "1.97", "b": "3.5", "c": "3.0"})
    rows = diff(["axioms2024_fig08"], tmp_path, pub, known)
    assert [r.status for r in rows] == ["match", "MISMATCH", "known", "MISSING"]
    _write_values(tmp_path, "axioms2024_fig08", {"a": "1.97"}, quick=True)
    rows = diff(["axioms2024_fig08"], tmp_path, pub, known)
    assert [r.status for r in rows] == ["match", "skipped", "skipped", "skipped"]


def test_published_files_parse_as_plain_csv():
    paths = [p for pkg in reproduction_packages() for p in pkg.published.glob("*.csv")]
    assert paths
    for path in paths:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        assert all(len(r) == 7 for r in rows)
