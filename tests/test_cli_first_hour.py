"""A researcher's first hour with the command (issue 48, items 4 and 5): every line fits
the terminal, a mistyped command gets a suggestion, ``python -m mpvi`` works, a paper's
name selects its reproductions, ``mpvi diff --summary`` and ``--failures``, and the
progress bar knows its total and an ETA from the recorded run times.

Everything reads the committed figures/; the runs are of stand-in reproductions."""
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mpvi.repro import terminal
from mpvi.repro.cli import main, papers_of
from mpvi.repro.declare import all_reproductions, default_out_dir
from mpvi.repro.published import diff

ROOT = Path(__file__).resolve().parent.parent
REPS = all_reproductions()


def _output(monkeypatch, capsys, columns, argv):
    """(exit status, every line of stdout and stderr) of ``mpvi argv`` at ``columns``."""
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as exc:               # --help, a bad argument
        status = exc.code
    captured = capsys.readouterr()
    return status, (captured.out + captured.err).splitlines()


# ----- 1 and 5. every line fits the terminal ---------------------------------------------

COMMANDS = [["list"], ["--help"], ["diff", "--all"], ["diff", "--all", "--summary"],
            ["diff", "--all", "--failures"], ["verify", "axioms2024_fig02"],
            *[[c, "--help"] for c in ("list", "run", "diff", "verify", "report")]]


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_every_line_fits_the_terminal(monkeypatch, capsys, argv, columns):
    status, lines = _output(monkeypatch, capsys, columns, argv)
    assert status == 0, lines[-3:]
    assert len(lines) > 2
    wide = [line for line in lines if len(line) > columns]
    assert not wide, wide[:3]
    if argv[-1] == "--help":                 # help text within 80 columns at any width
        assert max(map(len, lines)) <= 80


@pytest.mark.parametrize("columns", [80, 100])
def test_the_report_fits_the_terminal(monkeypatch, capsys, tmp_path, columns):
    status, lines = _output(monkeypatch, capsys, columns,
                            ["report", "--out", str(tmp_path / "r")])
    assert status == 0 and (tmp_path / "r" / "index.html").is_file()
    assert not [line for line in lines if len(line) > columns]


def test_list_keeps_every_id_whole_and_cuts_titles_with_an_ellipsis(monkeypatch, capsys):
    _, lines = _output(monkeypatch, capsys, 80, ["list"])
    starts = {line.split()[0] for line in lines if line and not line[0].isspace()}
    assert set(REPS) <= starts
    assert any(line.endswith(terminal.ELLIPSIS) for line in lines)
    _, wide = _output(monkeypatch, capsys, 1000, ["list"])
    assert all(any(r.title in line for line in wide) for r in REPS.values())


def test_fit_table_wraps_cuts_and_leaves_a_table_that_fits_alone():
    rows = [("id", "words", "title"), ("a" * 12, "one two three four five six", "t" * 40),
            ("b", "x", "short")]
    natural = terminal.fit_table(rows, 1000)
    assert natural.splitlines()[1] == f"{'a' * 12} one two three four five six {'t' * 40}"
    for width in (40, 50, 61):
        text = terminal.fit_table(rows, width, truncate={2}, keep={0})
        lines = text.splitlines()
        assert all(len(line) <= width for line in lines), (width, lines)
        assert lines[1].startswith("a" * 12 + " ")             # kept whole
        words = " ".join(line[13:].split(" ", 1)[0] for line in lines[1:-1])
        assert "one" in words and "six" in text                # wrapped, not lost
        assert terminal.ELLIPSIS in lines[1]                    # the title cut
    assert all(len(line) <= 10 for line in terminal.fit_table(rows, 10).splitlines())


def test_help_paragraphs_are_filled_and_indented_blocks_kept():
    fmt = terminal.HelpFormatter("mpvi", width=40)
    text = fmt._fill_text("a " * 30 + "\n\nlead:\n  <id>: x\n      y " + "z " * 30, 40, "")
    lines = text.splitlines()
    assert all(len(line) <= 40 for line in lines)
    assert "  <id>: x" in lines and lines[lines.index("  <id>: x") + 1].startswith("      y")


# ----- 2. did you mean, python -m mpvi ---------------------------------------------------

@pytest.mark.parametrize("word, said", [
    ("rn", "mpvi: unknown command 'rn'; did you mean 'run'?"),
    ("dif", "mpvi: unknown command 'dif'; did you mean 'diff'?"),
    ("zzzz", "mpvi: unknown command 'zzzz'; the commands are list, run, diff, verify, "
             "report (`mpvi --help`)"),
])
def test_a_mistyped_command_gets_the_closest(monkeypatch, capsys, word, said):
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exc:
        main([word, "axioms2024_fig02"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == said + "\n"


def test_python_m_mpvi_is_the_command_and_import_mpvi_does_not_load_it():
    proc = subprocess.run([sys.executable, "-m", "mpvi", "rn"], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 2 and "did you mean 'run'?" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "mpvi", "--help"], capture_output=True,
                          text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: mpvi ")
    probe = ("import sys, mpvi; print(sorted(m for m in sys.modules "
             "if m == 'mpvi.__main__' or m.startswith('mpvi.repro')))")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT).stdout.strip() == "[]"


# ----- 3. a paper selects its reproductions ----------------------------------------------

def test_the_papers_are_those_of_the_declared_reproductions():
    papers = papers_of(REPS)
    assert set(papers) == {r.paper for r in REPS.values()}
    assert sorted(rid for ids in papers.values() for rid in ids) == sorted(REPS)


def test_diff_of_a_paper_compares_every_reproduction_of_it(monkeypatch, capsys):
    paper = "axioms2024"
    ids = papers_of(REPS)[paper]
    status, lines = _output(monkeypatch, capsys, 1000, ["diff", paper])
    rows = diff(ids, default_out_dir(False))
    assert status == 0 and lines[-1].startswith(f"{len(rows)} values compared: ")
    _, again = _output(monkeypatch, capsys, 1000, ["diff", paper, ids[-1]])   # no repeats
    assert again[-1] == lines[-1]


def test_run_of_a_paper_runs_each_of_its_reproductions(monkeypatch, capsys, tmp_path):
    ran = []
    monkeypatch.setattr("mpvi.repro.cli.execute", lambda rep, *a, **k: ran.append(rep.id) or
                        {"dir": tmp_path, "digits_check": None, "certified": None})
    assert main(["run", "axioms2024", "--quick", "--results", str(tmp_path), "--no-cache"]) == 0
    assert ran == papers_of(REPS)["axioms2024"]


@pytest.mark.parametrize("command", ["run", "diff"])
def test_a_mistyped_paper_gets_the_closest_paper(capsys, command):
    with pytest.raises(SystemExit) as exc:
        main([command, "axiom2024"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == (f"mpvi {command}: unknown reproduction 'axiom2024'; "
                                       f"did you mean 'axioms2024'?\n")


# ----- 4. diff --summary and --failures ---------------------------------------------------

def test_summary_is_a_line_per_paper_then_only_the_unexplained(monkeypatch, capsys):
    status, lines = _output(monkeypatch, capsys, 80, ["diff", "--all", "--summary"])
    assert status == 0 and len(lines) <= 30
    rows = diff(list(REPS), default_out_dir(False))
    papers = papers_of(REPS)
    for paper, ids in papers.items():
        group = [r for r in rows if r.value.id in ids]
        if not group:
            continue
        [line] = [line for line in lines if line.split()[:1] == [paper]]
        counts = [len(group)] + [sum(r.status == s for r in group)
                                 for s in ("match", "known", "MISMATCH", "MISSING", "skipped")]
        counts.append(sum(r.proof is not None for r in group))
        assert line.split()[1:] == [str(c) for c in counts]
    assert not any(line.startswith(f"{rid}: ") for line in lines for rid in REPS)


def _fake_rows(monkeypatch, statuses):
    """``mpvi diff`` sees the rows of axioms2024_tab02 with ``statuses`` in turn."""
    real = diff(["axioms2024_tab02"], default_out_dir(False))
    assert len(real) >= len(statuses)
    fake = [dataclasses.replace(r, status=s, reason="a reason") for r, s in zip(real, statuses)]
    monkeypatch.setattr("mpvi.repro.cli.diff", lambda *a, **k: fake)
    return {r.status: r.value.key for r in fake}, sum(r.proof is not None for r in fake)


def _keys_shown(lines, keys):
    """The statuses of ``keys`` whose key starts a row of a table in ``lines``."""
    return {s for s, k in keys.items() if any(line.startswith(k + " ") for line in lines)}


def test_summary_and_failures_show_the_failing_rows_with_the_status_of_diff(monkeypatch,
                                                                            capsys):
    keys, proven = _fake_rows(monkeypatch, ["MISMATCH", "match", "known", "skipped", "MISSING"])
    status, lines = _output(monkeypatch, capsys, 200, ["diff", "axioms2024_tab02", "--summary"])
    assert status == 1
    assert _keys_shown(lines, keys) == {"MISMATCH", "MISSING"}
    [row] = [line for line in lines if line.startswith("axioms2024 ")]
    assert row.split()[1:] == ["5", "1", "1", "1", "1", "1", str(proven)]
    status, lines = _output(monkeypatch, capsys, 200, ["diff", "axioms2024_tab02", "--failures"])
    assert status == 1
    assert _keys_shown(lines, keys) == {"MISMATCH", "MISSING", "skipped"}
    capsys.readouterr()
    assert main(["diff", "axioms2024_tab02", "--failures", "--format", "json"]) == 1
    records = json.loads(capsys.readouterr().out)
    assert sorted(r["status"] for r in records) == ["MISMATCH", "MISSING", "skipped"]


def test_failures_of_a_clean_diff_says_so_and_exits_0(monkeypatch, capsys):
    status, lines = _output(monkeypatch, capsys, 80, ["diff", "--all", "--failures"])
    assert status == 0
    assert "no value that is not a match or a known discrepancy" in lines
    assert not any(line.startswith(f"{rid}: ") for line in lines for rid in REPS)


def test_summary_is_refused_with_certify_or_json(capsys):
    for argv in (["--certify"], ["--format", "json"]):
        with pytest.raises(SystemExit) as exc:
            main(["diff", "--all", "--summary", *argv])
        assert exc.value.code == 2
        assert "--summary is a view of the text table" in capsys.readouterr().err
