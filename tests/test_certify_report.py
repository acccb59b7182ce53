"""Proven digits in the reports (issue 39, acceptance 3): ``mpvi diff --certify`` counts,
per paper, the published values whose recorded enclosures prove them matched or
misprinted and says why the others are not certifiable; ``mpvi report`` shows the proven
digits, the certified block's statement and its growth plot; ``mpvi run --certify``
under ``--jobs`` records the certified block of a serial run.

The diff reads the committed figures/ (axioms2024 Table 2 has a certified block) or
records made from it in memory; the runs are of Table 2 on a small parameter set (a few
seconds each)."""
import copy
import dataclasses
import json
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from mpvi.repro.cli import main
from mpvi.repro.published import (PROOFS, certified_line, diff, format_certified,
                                  load_all_published)
from mpvi.repro.declare import all_reproductions
from mpvi.repro.records import read_records, stamp_record

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "figures"
REPS = all_reproductions()
TAB02 = "axioms2024_tab02"
SMALL = {"T_tbar": [1, 10], "meshes_per_tbar": [10, 20, 40]}
"""Table 2 for T = 1 and 10 t_bar (test_certify_repro.py's set): every method and order."""


@pytest.fixture(scope="module")
def committed():
    """The rows of ``mpvi diff --all`` of the committed figures/, and their records."""
    records = read_records(REPS.values(), FIGURES)
    return diff(list(REPS), FIGURES, records=records), records


def _diff_text(monkeypatch, capsys, columns, *argv):
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    status = main(["diff", *argv])
    return status, capsys.readouterr().out


# ----- mpvi diff --all --certify ---------------------------------------------------------

@pytest.mark.parametrize("columns", [80, 100])
def test_diff_certify_counts_per_paper_and_ends_with_all_papers(monkeypatch, capsys,
                                                                committed, columns):
    rows, _ = committed
    plain, _ = _diff_text(monkeypatch, capsys, columns, "--all")
    status, out = _diff_text(monkeypatch, capsys, columns, "--all", "--certify")
    assert status == plain == 0
    lines = out.splitlines()
    assert not [line for line in lines if len(line) > columns]
    # Table 2's committed certified block: every match proven, every known discrepancy
    # (the misprints of ERRATA.md) a proven misprint
    tab02 = [r for r in rows if r.value.id == TAB02]
    assert {r.proof for r in tab02 if r.status == "match"} == {"proven match"}
    assert {r.proof for r in tab02 if r.status == "known"} == {"proven misprint"}
    # and no proof anywhere contradicts the plain comparison
    assert not [r for r in rows if r.proof == "proven misprint" and r.status == "match"]
    assert not [r for r in rows if r.proof == "proven match" and r.status == "MISMATCH"]
    matched = sum(r.proof == "proven match" for r in rows)
    known = sum(r.proof == "proven misprint" for r in rows)
    assert matched > sum(r.status == "match" for r in tab02)      # Fig. 11, Tables 4-5 too
    flat = " ".join(" ".join(lines[-2:]).split())
    assert flat.endswith(f"all papers: {len(rows)} values, {matched} proven match, {known} "
                         f"proven misprint, {len(rows) - matched - known} not certifiable")
    papers = {}
    for r in rows:
        papers.setdefault(REPS[r.value.id].paper, []).append(r)
    for paper, group in [*papers.items(), ("all papers", rows)]:
        n_match = sum(r.proof == "proven match" for r in group)
        n_known = sum(r.proof == "proven misprint" for r in group)
        row = next(line for line in lines if line.startswith(paper + " "))
        assert row.split()[-4:] == [str(len(group)), str(n_match), str(n_known),
                                    str(len(group) - n_match - n_known)], row
    # why not: every reproduction declares a certify hook (issue 45): no value is left
    # for the want of one, and each remaining one has its reason under its paper's heading
    assert not any("no certify hook" in line for line in lines)
    for paper, group in papers.items():
        left = sum(r.proof is None for r in group)
        if left:
            assert f"{paper}: {left} not certifiable" in lines
    assert "proven" not in lines[0] and "--certify" not in lines[0]  # the usual first line


def test_diff_without_certify_is_unchanged(monkeypatch, capsys):
    _, out = _diff_text(monkeypatch, capsys, 100, TAB02)
    assert "proven match" not in out and "not certifiable" not in out
    assert "digits: estimated (--check-digits) / proven (--certify)" in out


def _record(records, **changes):
    record = copy.deepcopy(records[TAB02])
    record.update(changes)
    return record


def _why(rows, key=None):
    return {r.not_proven for r in rows if key is None or r.value.key == key}


def test_each_reason_a_value_is_not_certifiable(committed):
    _, records = committed
    record = records[TAB02]
    cert = record["certified"]
    keys = list(cert["values"])
    assert all(r.not_proven is None for r in diff([TAB02], FIGURES, records=records))

    bare = _record(records)
    del bare["certified"]
    rows = diff([TAB02], FIGURES, records={TAB02: bare})
    assert _why(rows) == {f"no certified run recorded: run `mpvi run {TAB02} --certify`"}
    assert not any(r.proof for r in rows)

    missing = diff([TAB02], FIGURES, records={TAB02: None})
    assert _why(missing) == {f"not run: `mpvi run {TAB02}`"}

    values = dict(cert["values"])
    values.pop(keys[0])
    values.pop(keys[1])
    undeclared = _record(records, certified={
        **cert, "values": values,
        "not_certified": {**cert["not_certified"], keys[1]: "its reference is measured"}})
    rows = diff([TAB02], FIGURES, records={TAB02: undeclared})
    assert _why(rows, keys[0]) == {"value not declared certifiable by the reproduction"}
    assert _why(rows, keys[1]) == {"value not declared certifiable: its reference is measured"}
    assert all(r.not_proven is None for r in rows if r.value.key not in keys[:2])

    changed = _record(records, values={**record["values"], keys[2]: "1e-3"})
    rows = diff([TAB02], FIGURES, records={TAB02: changed})
    assert _why(rows, keys[2]) == {"recorded value outside its enclosure (or the enclosure "
                                   "wider than it): no digit proven"}

    # an enclosure as wide as the printed digits' last unit, centred on one of the
    # bounds of what they allow: some digits proven, the comparison undecided
    published = [v for v in load_all_published() if v.id == TAB02]
    v = next(v for v in published if v.key == keys[3] and v.compare == "digit")
    unit = Decimal(1).scaleb(Decimal(v.printed).as_tuple().exponent)
    bound = Decimal(v.printed) + unit
    wide = _record(records, values={**record["values"], keys[3]: str(bound)}, certified={
        **cert, "values": {**cert["values"], keys[3]: {"digits": 1,
                                                        "enclosure": f"[{bound} +/- {unit}]"}}})
    rows = diff([TAB02], FIGURES, records={TAB02: wide})
    [row] = [r for r in rows if r.value.key == keys[3]]
    assert row.proven is not None and row.proof is None
    assert row.not_proven == "its enclosure straddles a bound of what the printed digits allow"

    # one-sided and logarithmic comparisons are decided by the enclosure's bounds
    r4 = Decimal(record["values"][keys[4]])
    for compare, printed, tolerance, proof in (
            ("max", 2 * r4, "0", "proven match"), ("max", r4 / 2, "0", "proven misprint"),
            ("min", r4 / 2, "0", "proven match"), ("min", 2 * r4, "0", "proven misprint"),
            ("log10", r4 * Decimal("1.1"), "0.1", "proven match"),
            ("log10", 2 * r4, "0.1", "proven misprint")):
        changed = [dataclasses.replace(p, compare=compare, tolerance=tolerance,
                                       printed=str(printed)) if p.key == keys[4] else p
                   for p in published]
        rows = diff([TAB02], FIGURES, published=changed, records=records)
        [row] = [r for r in rows if r.value.key == keys[4]]
        assert row.proof == proof and row.not_proven is None, (compare, printed, row)

    quick = _record(records, quick=True, values={k: x for k, x in record["values"].items()
                                                 if k != keys[5]})
    rows = diff([TAB02], FIGURES, records={TAB02: quick})
    assert _why(rows, keys[5]) == {"not computed by the --quick run"}
    assert {r.status for r in rows if r.value.key == keys[5]} == {"skipped"}


def _without_hook(monkeypatch, records, rid):
    """``records`` with ``rid``'s record as a run without --certify (its certified block
    dropped, restamped) and ``rid``'s reproduction without a certify hook (every
    reproduction of the committed figures may have one now)."""
    record = {k: v for k, v in records[rid].items() if k not in ("certified", "digest")}
    monkeypatch.setattr(REPS[rid], "certify", None)
    return {**records, rid: stamp_record(record)}


def test_a_reproduction_without_hook_gives_its_own_reason(committed, monkeypatch):
    _, records = committed
    rid = "axioms2024_fig06"
    rep = REPS[rid]
    records = _without_hook(monkeypatch, records, rid)
    rows = diff([rid], FIGURES, records=records)
    assert _why(rows) == {"reproduction declares no certify hook"}
    monkeypatch.setattr(rep, "not_certifiable", "its energy is a round-off value")
    rows = diff([rid], FIGURES, records=records)
    assert _why(rows) == {"reproduction declares no certify hook: its energy is a round-off "
                          "value"}
    # a run with --certify of such a reproduction records the reason as "*": read back
    recorded = copy.deepcopy(records[rid])
    recorded["certified"] = {"dps": 64, "wall_time_s": 0.0, "statement": "", "columns": {},
                             "values": {}, "not_certified": {"*": "what the run said"}}
    rows = diff([rid], FIGURES, records={**records, rid: recorded})
    assert _why(rows) == {"reproduction declares no certify hook: what the run said"}


def test_the_reasons_are_grouped_with_the_items_they_concern(committed):
    rows, records = committed
    bare = {}
    for rid, record in records.items():             # no certified run recorded anywhere
        bare[rid] = {k: v for k, v in record.items() if k != "certified"}
    rows = diff(list(REPS), FIGURES, records=bare)
    text = format_certified(rows, REPS, 80)
    flat = " ".join(text.split())
    paper = REPS[TAB02].paper                       # its reproductions with a hook
    hooked = sorted({r.value.id for r in rows if REPS[r.value.id].paper == paper
                     and REPS[r.value.id].certify is not None})
    assert TAB02 in hooked
    n = sum(r.value.id in hooked for r in rows)
    items = ", ".join(rid.split("_", 1)[1] for rid in hooked)
    assert f"{n} no certified run recorded: run `mpvi run <id> --certify` ({items})" in flat
    assert all(len(line) <= 80 for line in text.splitlines())
    assert certified_line(rows, True) == (f"all papers: {len(rows)} values, 0 proven match, "
                                          f"0 proven misprint, {len(rows)} not certifiable")
    assert PROOFS == ("proven match", "proven misprint")


def test_diff_certify_exits_as_diff_and_the_records_say_why(monkeypatch, capsys, tmp_path,
                                                            committed):
    """A mismatch (a changed, restamped value) fails both forms alike; the JSON records
    carry not_proven."""
    _, records = committed
    rep = REPS[TAB02]
    src, dst = FIGURES / rep.paper, tmp_path / rep.paper
    dst.mkdir()
    for name in records[TAB02]["files"]:
        shutil.copy(src / name, dst / name)
    key = next(iter(records[TAB02]["certified"]["values"]))
    changed = _record(records, values={**records[TAB02]["values"], key: "12.5"})
    changed.pop("digest")
    (dst / f"{TAB02}.json").write_text(json.dumps(stamp_record(changed)))
    plain, _ = _diff_text(monkeypatch, capsys, 80, TAB02, "--results", str(tmp_path))
    status, out = _diff_text(monkeypatch, capsys, 80, TAB02, "--results", str(tmp_path),
                             "--certify")
    assert plain == status == 1
    assert "1 mismatch" in out
    assert "`mpvi diff` without --certify lists the values that are MISMATCH" in " ".join(
        out.split())
    assert re.search(r"\b1 +recorded value outside its enclosure", out)
    capsys.readouterr()
    assert main(["diff", TAB02, "--results", str(tmp_path), "--format", "json"]) == 1
    recs = {r["key"]: r for r in json.loads(capsys.readouterr().out)}
    assert recs[key]["not_proven"].startswith("recorded value outside its enclosure")
    assert sum(r["not_proven"] is None for r in recs.values()) == len(recs) - 1


# ----- mpvi run --certify --jobs 2 ---------------------------------------------------------

def test_certify_under_jobs_records_the_block_of_a_serial_run(monkeypatch, capsys, tmp_path):
    """The certify hook runs in the worker that computed the reproduction: the block is
    that of a serial run but for its wall time."""
    rep = REPS[TAB02]
    monkeypatch.setattr(rep, "quick", SMALL)
    blocks = {}
    for name, extra in (("serial", []), ("jobs", ["--jobs", "2"])):
        out = tmp_path / name
        argv = ["run", TAB02, "--quick", "--certify", "--no-cache", "-q", "--results",
                str(out), *extra]
        assert main(argv) == 0, capsys.readouterr().err
        record = read_records([rep], out)[TAB02]
        assert record["parameters"]["T_tbar"] == SMALL["T_tbar"]
        blocks[name] = record["certified"]
        assert ("executor" in record) == (name == "jobs")
        assert set(blocks[name]["values"]) == set(record["values"])
    for block in blocks.values():
        assert block.pop("wall_time_s") > 0
    assert blocks["serial"] == blocks["jobs"]


@pytest.mark.slow
def test_certify_under_jobs_on_the_quick_table2(capsys, tmp_path):
    """The same on Table 2's own --quick parameters (T up to 100 t_bar: about 25 s for
    the two runs)."""
    blocks = {}
    for name, extra in (("serial", []), ("jobs", ["--jobs", "2"])):
        out = tmp_path / name
        assert main(["run", TAB02, "--quick", "--certify", "--no-cache", "-q", "--results",
                     str(out), *extra]) == 0, capsys.readouterr().err
        blocks[name] = read_records([REPS[TAB02]], out)[TAB02]["certified"]
        assert blocks[name].pop("wall_time_s") > 0
    assert blocks["serial"] == blocks["jobs"]
    assert len(blocks["jobs"]["values"]) == 72


def test_a_parallel_float64_run_refuses_certify_before_computing(tmp_path):
    from mpvi.repro.parallel import make_executor, run_parallel
    executor = make_executor(1)
    try:
        ran, refused, failed = run_parallel(REPS, [TAB02], executor, context="fp",
                                            out_dir=tmp_path, certify=True, verbosity=0,
                                            stream=open("/dev/null", "w"))
    finally:
        executor.close()
    assert (ran, refused, failed) == ([], [TAB02], [])
    assert not list(tmp_path.rglob("*.json"))


# ----- mpvi report -----------------------------------------------------------------------

GROWTH = {"T = 1000 t_bar, newmark": {"t": [0.0, 250.0, 500.0, 1000.0],
                                      "digits": [64.0, 60.5, 58.25, 54.0], "dps": 64,
                                      "note": "Lohner's method, the whole span certified"}}


def _results_with(tmp_path, records, **certified):
    """A results directory holding the committed Table 2 outputs, its certified block
    updated with ``certified`` and the record restamped."""
    rep = REPS[TAB02]
    results = tmp_path / "results"
    (results / rep.paper).mkdir(parents=True)
    for name in records[TAB02]["files"]:
        shutil.copy(FIGURES / rep.paper / name, results / rep.paper / name)
    record = _record(records)
    record["certified"] = {**record["certified"], **certified}
    record.pop("digest")
    (results / rep.paper / f"{TAB02}.json").write_text(json.dumps(stamp_record(record)))
    return results


def _section(html, rid):
    start = html.index(f'id="{rid}"')
    return html[start:html.index("</section>", start)]


def test_the_report_shows_proven_digits_statement_and_growth(tmp_path, committed, monkeypatch):
    from markupsafe import escape

    from mpvi.repro.report import write_report
    _, records = committed
    results = _results_with(tmp_path, records, growth=GROWTH)
    reps = {TAB02: REPS[TAB02], "axioms2024_fig06": REPS["axioms2024_fig06"]}
    shutil.copytree(FIGURES / "axioms2024", results / "axioms2024", dirs_exist_ok=True,
                    ignore=lambda d, names: [n for n in names if not n.startswith(
                        "axioms2024_fig06")])
    bare = _without_hook(monkeypatch, records, "axioms2024_fig06")["axioms2024_fig06"]
    (results / "axioms2024" / "axioms2024_fig06.json").write_text(json.dumps(bare))
    out = tmp_path / "report"
    write_report(results, out, reps)
    page = (out / "axioms2024.html").read_text(encoding="utf-8")
    section = _section(page, TAB02)
    cert = records[TAB02]["certified"]
    assert 'correct digits <span class="meta">estimated / proven</span>' in section
    checked = records[TAB02]["digits_check"]["values"]
    rows = diff([TAB02], FIGURES, records=records)
    for r in rows:                                   # every compared value, both numbers
        entry = cert["values"][r.value.key]
        assert 40 <= r.proven <= entry["digits"]     # the recorded value against its ball
        row = section[section.index(f'data-key="{r.value.key}"'):]
        row = row[:row.index("</tr>")]
        cell = re.search(r'<td class="num">(\d+|-) / <span class="proven"[^>]*>(\d+|-)</span>',
                         row)
        assert cell and cell.groups() == (str(checked[r.value.key]["digits"]),
                                          str(r.proven)), (r.value.key, row)
    assert section.count('<div class="proof">proven match</div>') == sum(
        r.status == "match" for r in rows)
    assert section.count('<div class="proof">proven misprint</div>') == sum(
        r.status == "known" for r in rows)
    assert escape(cert["statement"]) in section
    proven = re.search(r'<tr class="proven-digits">(.*?)</tr>', section).group(1)
    cells = re.findall(r">([^<]*)</th>", proven)
    columns = cert["columns"][""]
    assert cells == ["-", "-", "-", "-", str(columns["error"]["min"]),
                     str(columns["order"]["min"])]
    assert f"median {columns['error']['median']}" in proven
    assert "not proven: an input of the study" in proven
    # the growth plot: an image of the report, its label and note under it
    png = out / "files" / "axioms2024" / f"{TAB02}_growth1.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f'<img src="files/axioms2024/{TAB02}_growth1.png"' in section
    label = next(iter(GROWTH))
    assert f"<strong>{escape(label)}</strong>: proven digits against time at 64 " \
           f"digits; {escape(GROWTH[label]['note'])}" in section
    from matplotlib.image import imread
    height, width = imread(png).shape[:2]
    assert width > 300 and height > 150
    # the overview: the paper's proven matches and misprints, and the total
    index = (out / "index.html").read_text(encoding="utf-8")
    proven = (f'<td class="num wrap">{sum(r.status == "match" for r in rows)} match, '
              f'{sum(r.status == "known" for r in rows)} misprint</td>')
    assert index.count(proven) == 2                     # axioms2024, all papers
    # a reproduction without a certified computation: the values as before, and why
    other = _section(page, "axioms2024_fig06")
    assert "estimated / proven" not in other and "proven-digits" not in other
    assert "no certified computation: it declares no certified computation" in other


def test_a_certified_block_without_growth_has_no_plot(tmp_path, committed):
    from mpvi.repro.report import write_report
    _, records = committed
    plain = copy.deepcopy(records)
    plain[TAB02]["certified"].pop("growth", None)
    results = _results_with(tmp_path, plain)
    out = tmp_path / "report"
    write_report(results, out, {TAB02: REPS[TAB02]})
    assert not list(out.rglob("*_growth*.png"))
    assert "<h3>Proven digits</h3>" in (out / "axioms2024.html").read_text(encoding="utf-8")


def test_a_growth_that_cannot_be_plotted_fails_the_report_naming_it(tmp_path, committed):
    from mpvi.repro.report import ReportError, write_report
    from mpvi.repro.records import OutputError
    _, records = committed
    label = next(iter(GROWTH))
    short = {label: {**GROWTH[label], "digits": GROWTH[label]["digits"][:-1]}}
    results = _results_with(tmp_path, records, growth=short)
    out = tmp_path / "report"
    with pytest.raises(ReportError, match=re.escape(f"the growth {label!r}") + ".*4 times "
                                          "and 3 digits"):
        write_report(results, out, {TAB02: REPS[TAB02]})
    assert not out.exists()
    texts = {label: {**GROWTH[label], "digits": ["64"] * 4}}
    results = _results_with(tmp_path / "texts", records, growth=texts)
    with pytest.raises(OutputError, match=r"growth.*should be a number"):
        read_records([REPS[TAB02]], results)


def test_a_block_recorded_before_the_hook_was_removed_is_still_read(committed, monkeypatch):
    """The record, not the reproduction's present declaration, says what was proven."""
    rows, records = committed
    monkeypatch.setattr(REPS[TAB02], "certify", None)
    again = diff([TAB02], FIGURES, records=records)
    assert [r.proof for r in again] == [r.proof for r in rows if r.value.id == TAB02]
    assert all(r.not_proven is None for r in again)


@pytest.fixture(scope="module")
def browser():
    from browsercheck import launch
    yield from launch()


def test_in_a_browser_the_growth_plot_displays_and_the_tables_fit(tmp_path, committed,
                                                                   browser):
    """Headless Chromium (browsercheck.py; skipped without it, as test_report_browser.py):
    every image of the certified item displays, every link resolves and the tables with
    their proven-digit cells fit a 1400-pixel window."""
    from browsercheck import crawl, table_widths

    from mpvi.repro.report import write_report
    _, records = committed
    results = _results_with(tmp_path, records, growth=GROWTH)
    out = tmp_path / "report"
    index, _ = write_report(results, out, {TAB02: REPS[TAB02]})
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    found = crawl(page, out, index.name)
    assert found.problems == []
    assert "axioms2024.html" in found.visited
    page.goto((out / "axioms2024.html").resolve().as_uri(), wait_until="load")
    problems, _ = table_widths(page)
    assert problems == []
    width = page.locator("figure.growth img").evaluate("img => img.naturalWidth")
    assert width > 300
