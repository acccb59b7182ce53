"""The command line reads like a tool (issue 38, item 5): ``mpvi diff`` fits the terminal
and ends with one line of counts, the digits summary says what a 0 means, mistyped ids
and options get a suggestion, ``--results`` names the results folder everywhere, a run
of one id keeps (or marks stale) the committed ``digits_check``, run logs are short off
a terminal, and the tutorials stop on a failing command.

Everything reads the committed figures/ or copies of a few of its files; the runs are of
reproductions that take about a second."""
import json
import re
import shutil
from pathlib import Path

import pytest

import mpvi.ground.io
from mpvi.repro.cli import build_parser, main
from mpvi.repro.published import diff, rule
from mpvi.repro.declare import all_reproductions, default_out_dir
from mpvi.repro.records import read_records

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "figures"
REPS = all_reproductions()
COUNTS = re.compile(r"(all )?(\d+) values? compared: (\d+) match, (\d+) known, (\d+) mismatch"
                    r"(, \d+ missing)?(, \d+ skipped)?")


def _diff_text(monkeypatch, capsys, columns, *argv):
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    status = main(["diff", *argv])
    return status, capsys.readouterr().out


@pytest.fixture(scope="module")
def all_rows():
    return diff(list(REPS), default_out_dir(False))


# ----- 1. mpvi diff fits the terminal ------------------------------------------------------

@pytest.mark.parametrize("columns", [100, 80])
def test_diff_all_fits_the_terminal_and_ends_with_the_counts(monkeypatch, capsys, all_rows,
                                                             columns):
    status, out = _diff_text(monkeypatch, capsys, columns, "--all")
    assert status == 0
    lines = out.splitlines()
    too_wide = [line for line in lines if len(line) > columns]
    assert not too_wide, too_wide[:3]
    counts = {s: sum(r.status == s for r in all_rows) for s in ("match", "known", "MISMATCH")}
    assert lines[-1] == (f"all {len(all_rows)} values compared: {counts['match']} match, "
                         f"{counts['known']} known, {counts['MISMATCH']} mismatch")
    for rid in {r.value.id for r in all_rows}:             # a heading per reproduction
        assert any(line.startswith(f"{rid}: {REPS[rid].item} of {REPS[rid].paper}")
                   for line in lines), rid
    if columns == 80:                       # long explanations are cut, pointing to ERRATA
        assert any(line.endswith("(see ERRATA.md)") for line in lines)


def test_each_row_shows_its_rule(monkeypatch, capsys, all_rows):
    _, out = _diff_text(monkeypatch, capsys, 200, "top2025_tab05")
    [row] = [line for line in out.splitlines()
             if line.startswith("rk4 H growth T=1000/T=1 h=1/80 ")]
    assert row.split() == ["rk4", "H", "growth", "T=1000/T=1", "h=1/80", "10", ">=", "10",
                           "806.120", "57/52", "match"]
    shown = {r.value.compare: rule(r.value) for r in all_rows}
    assert shown["magnitude"] == "same decade" and shown["symbolic"] == "same formula"
    values = [r.value for r in all_rows]
    assert rule(next(v for v in values if v.compare == "digit" and v.printed == "0.0751")) \
        == "±0.0001"
    assert rule(next(v for v in values if v.compare == "abs" and v.tolerance == "1e-50")) \
        == "±1e-50"


def test_a_subset_counts_its_values(monkeypatch, capsys):
    status, out = _diff_text(monkeypatch, capsys, 80, "axioms2024_fig06", "axioms2024_fig07")
    rows = diff(["axioms2024_fig06", "axioms2024_fig07"], default_out_dir(False))
    last = COUNTS.fullmatch(out.splitlines()[-1])
    assert status == 0 and last and last.group(1) is None
    assert [int(last.group(k)) for k in (2, 3, 4, 5)] == [
        len(rows), sum(r.status == "match" for r in rows),
        sum(r.status == "known" for r in rows), sum(r.status == "MISMATCH" for r in rows)]


# ----- 2. the digits summary -------------------------------------------------------------

def test_the_digits_summary_tells_round_off_from_correct_digits(monkeypatch, capsys, all_rows):
    _, out = _diff_text(monkeypatch, capsys, 1000, "--all")
    summary = out.splitlines()[-2]
    assert "at least 0" not in summary
    records = read_records([REPS[rid] for rid in REPS], FIGURES)

    def identical(r):                       # equal in both runs: an exact number
        return records[r.value.id]["digits_check"]["values"][r.value.key]["identical"]
    exact = [r for r in all_rows if r.digits is not None and identical(r)]
    worst = min((r for r in all_rows if r.digits and not identical(r)), key=lambda r: r.digits)
    assert worst.digits > 1 and exact
    assert f"compared values: at least {worst.digits} ({worst.value.id} {worst.value.key}), " \
           f"{len(exact)} more exact (equal in both runs)" in summary
    none = [r for r in all_rows if r.digits == 0 and not identical(r)]
    assert none, "the committed figures compare round-off values (Fig. 6's Newmark energy)"
    assert f"{len(none)} compared value(s) are round-off, with no correct digit (e.g. " \
           f"{none[0].value.id} {none[0].value.key} = " in summary
    _, out = _diff_text(monkeypatch, capsys, 1000, "axioms2024_fig08")   # none round-off
    assert "round-off, with no correct digit" not in out.splitlines()[-2]


# ----- 3. did you mean -------------------------------------------------------------------

@pytest.mark.parametrize("typo, closest", [("axioms2024_fg02", "axioms2024_fig02"),
                                            ("axiom2024", "axioms2024")])   # an id, a paper
@pytest.mark.parametrize("command", ["run", "diff"])
def test_a_mistyped_id_gets_one_line_with_the_closest(capsys, command, typo, closest):
    with pytest.raises(SystemExit) as exc:
        main([command, typo])
    assert exc.value.code == 2
    assert capsys.readouterr().err == (f"mpvi {command}: unknown reproduction "
                                       f"'{typo}'; did you mean '{closest}'?\n")


@pytest.mark.parametrize("argv, said", [
    (["run", "--quik"], "unknown option --quik for `mpvi run`; did you mean --quick?"),
    (["diff", "--all", "--formt", "json"], "unknown option --formt for `mpvi diff`; did you "
                                           "mean --format?"),
    (["list", "--reslts=x"], "unknown option --reslts for `mpvi list`; did you mean "
                             "--results?"),
])
def test_a_mistyped_option_names_the_subcommand_and_the_closest(capsys, argv, said):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: mpvi {argv[0]} ")          # the subcommand's usage
    assert err.splitlines()[-1] == f"mpvi {argv[0]}: error: {said}"


# ----- 4. one name for the results folder ------------------------------------------------

def test_every_subcommand_takes_results_and_run_and_diff_still_take_out(capsys):
    parser = build_parser()
    subparsers = parser._subparsers._group_actions[0].choices
    for name, sub in subparsers.items():
        assert "--results" in sub._option_string_actions, name
        assert "--out" not in sub.format_help() or name == "report", name
    capsys.readouterr()
    assert main(["diff", "axioms2024_fig06", "--out", str(FIGURES)]) == 0
    captured = capsys.readouterr()
    assert captured.err == "mpvi diff: --out is deprecated, use --results (the same option)\n"
    assert f"mpvi diff: {FIGURES} (--results)" in captured.out


# ----- 5. a run of one id keeps the committed digits_check ---------------------------------

@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A source checkout whose figures/ holds a copy of Fig. 6's committed outputs."""
    root = tmp_path / "checkout"
    (root / "figures" / "axioms2024").mkdir(parents=True)
    for path in (FIGURES / "axioms2024").glob("axioms2024_fig06*"):
        shutil.copy(path, root / "figures" / "axioms2024")
    monkeypatch.setattr(mpvi.ground.io, "project_root", lambda: root)
    return root / "figures"


def _check(figures):
    return json.loads((figures / "axioms2024" / "axioms2024_fig06.json").read_text())


def test_a_run_of_one_id_keeps_the_check_of_equal_outputs_and_marks_others_stale(
        checkout, capsys, tmp_path):
    committed = _check(checkout)
    assert committed["digits_check"]
    assert main(["run", "axioms2024_fig06", "--no-cache"]) == 0      # default: figures/
    assert "its digits_check is kept" in capsys.readouterr().err
    record = _check(checkout)
    kept = dict(record["digits_check"])
    check = dict(committed["digits_check"])        # when and where it was checked: kept
    assert kept.pop("checked_utc") == check.pop("checked_utc", committed["created_utc"])
    assert kept.pop("checked_commit") == check.pop("checked_commit", committed["git_commit"])
    assert kept == check and record["values"] == committed["values"]
    assert record["created_utc"] >= committed["created_utc"]

    assert main(["run", "axioms2024_fig06", "--no-cache", "--dps", "30"]) == 0
    assert "its digits_check is stale: this run is in gmp30, the checked one in gmp64" in \
        capsys.readouterr().err
    stale = _check(checkout)["digits_check"]
    assert stale["stale"] is True and "rerun with --check-digits" in stale["reason"]
    assert stale["tables"] == committed["digits_check"]["tables"]    # kept, not dropped
    assert stale["checked_utc"] == committed["digits_check"].get("checked_utc",
                                                                 committed["created_utc"])
    assert all(r.digits is None for r in diff(["axioms2024_fig06"], checkout))
    main(["diff", "axioms2024_fig06"])     # its status is the 30-digit values' business
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith(("simpson ", "rk4 "))]
    assert rows and all("stale" in row for row in rows)
    assert "correct digits: stale, this run is in gmp30" in out
    assert main(["run", "axioms2024_fig06", "--no-cache"]) == 0      # stays stale
    assert _check(checkout)["digits_check"]["stale"] is True

    from mpvi.repro.report import write_report
    import io
    write_report(checkout, tmp_path / "report", {"axioms2024_fig06": REPS["axioms2024_fig06"]},
                 stream=io.StringIO())
    page = (tmp_path / "report" / "axioms2024.html").read_text()
    assert "stale, of an earlier run: this run is in gmp30, the checked one in gmp64" in page


# ----- 6. run logs -----------------------------------------------------------------------

IDS = ["axioms2024_fig02", "axioms2024_fig06"]


def _run(capsys, tmp_path, *options):
    capsys.readouterr()
    assert main(["run", *IDS, "--quick", "--no-cache", "--results", str(tmp_path),
                 *options]) == 0
    return capsys.readouterr().err.splitlines()


def test_off_a_terminal_a_run_prints_a_start_line_and_a_line_per_reproduction(capsys,
                                                                             tmp_path):
    lines = _run(capsys, tmp_path)
    assert len(lines) == 2 + len(IDS), lines
    assert lines[0] == f"mpvi run: {len(IDS)} reproduction(s) in gmp64 (quick) -> {tmp_path}"
    assert [line.split(":")[0] for line in lines[1:-1]] == IDS
    assert all(": done in " in line for line in lines[1:-1])
    assert lines[-1].startswith(f"ran {len(IDS)} of {len(IDS)} reproduction(s) in ")
    lines = _run(capsys, tmp_path, "--jobs", "2")
    assert lines[0].startswith(f"running {len(IDS)} reproduction(s) on a process pool")
    assert sorted(line.split(":")[0] for line in lines[1:-1]) == IDS
    assert len(lines) == 2 + len(IDS) and not any(line.startswith("[") for line in lines)


def test_verbose_prints_every_task_and_quiet_only_the_summary(capsys, tmp_path):
    verbose = _run(capsys, tmp_path, "-v")
    assert f"[1/{len(IDS)}] {IDS[0]}" in verbose
    assert sum(line.startswith("  [") for line in verbose) > 2 * len(IDS)
    quiet = _run(capsys, tmp_path, "--quiet")
    assert len(quiet) == 1 and quiet[0].startswith(f"ran {len(IDS)} of {len(IDS)}")
    capsys.readouterr()
    assert main(["run", "mutze_quantum", "--context", "fp", "-q", "--no-cache", "--results",
                 str(tmp_path)]) == 3                          # a refusal is still said
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("mutze_quantum: refused in fp") and len(err) == 3


def test_no_task_label_is_empty_or_has_an_empty_field():
    for rid, rep in REPS.items():
        for quick in (False, True):
            for task in rep.declared_tasks(rep.parameters(quick)):
                label = task.describe()
                assert label == label.strip() and "  " not in label, (rid, label)
                assert not re.search(r"=(\s|$)", label), (rid, label)


# ----- 7. tutorials check the exit status of the commands they run ------------------------

def test_every_command_a_tutorial_runs_has_its_exit_status_checked():
    checked = 0
    for path in sorted((ROOT / "docs" / "tutorials").glob("*.md")):
        for cell in re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", path.read_text(), re.S):
            for call in re.finditer(r"subprocess\.run\(", cell):
                rest = cell[call.end():]
                args = rest[:rest.find(")\n") + 1]
                assert "check=True" in args or "returncode != expect" in rest, \
                    f"{path.name}: {cell[call.start():call.start() + 80]!r}"
                checked += 1
    assert checked >= 3
