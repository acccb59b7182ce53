"""A researcher's first hour with the command (issue 48, items 4 and 5): every line fits
the terminal, a mistyped command gets a suggestion, ``python -m mpvi`` works, a paper's
name selects its reproductions, ``mpvi diff --summary`` and ``--failures``, and the
progress bar knows its total and an ETA from the recorded run times.

Everything reads the committed figures/; the runs are quick runs of two axioms2024 ids
(a few seconds) or of a stand-in ``execute``."""
import dataclasses
import io
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from mpvi.repro import cli, parallel, progress, terminal
from mpvi.repro.cli import main, papers_of
from mpvi.repro.runtimes import Runtimes
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
    index = tmp_path / "r" / "index.html"
    assert status == 0 and index.is_file()
    # the index path is printed whole on its own line (a script reads it back), whatever
    # its length; every other line fits
    assert str(index) in lines
    assert not [line for line in lines if len(line) > columns and line != str(index)]


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
                        {"dir": tmp_path, "digits_check": None, "certified": None,
                         "studies": []})
    assert main(["run", "axioms2024", "--quick", "--results", str(tmp_path), "--no-cache"]) == 0
    assert ran == papers_of(REPS)["axioms2024"]


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


# ----- 6. progress: a total from the plan, an ETA from the recorded run times ------------

class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_eta_counts_down_the_running_part_and_holds_at_the_rest():
    assert progress.eta(None, 5, 1) is None
    assert progress.eta(60, 30, 10) == 80
    assert progress.eta(60, 30, 100) == 60                 # slower than measured: the rest
    assert [progress.format_eta(s) for s in (None, 0, 42.4, 3723)] == [
        "ETA ?", "ETA 0:00", "ETA 0:42", "ETA 1:02:03"]


def test_the_bar_shows_the_total_the_eta_and_the_step_on_a_terminal_only():
    for stream, shown in [(Terminal(), True), (io.StringIO(), False)]:
        with progress.ProgressBar(3, "mpvi run", stream=stream) as bar:
            bar.update(0, label="a", remaining=60, running=30)
            bar.step("a: simpson n=100000: step 5000/100000 (5%)")
            assert 89 < bar.seconds_left() <= 90
            if shown:
                bar._progress.refresh()
            text = stream.getvalue()
            bar.update(3, label="c", remaining=None)
        assert ("ETA 1:30" in text and "0/3" in text and "a: simpson n=1000" in text) is shown
        assert (stream.getvalue() == "") is not shown
    forced = io.StringIO()                  # the terminal flag forced: shown on any stream
    with progress.ProgressBar(2, "mpvi run", stream=forced, enabled=True) as bar:
        bar.update(1, label="b")
    assert "ETA ?" in forced.getvalue() and "1/2" in forced.getvalue()


def test_the_step_stream_hands_each_line_to_the_bar():
    steps = []
    bar = type("Bar", (), {"step": lambda self, text: steps.append(text)})()
    out = progress.StepStream(bar, "top2025_tab04: ")
    out.write("  [    1.2 s] top2025_tab04: Table 4 of top2025\n  [   3.0 s] simpson n=10")
    out.write("0\n  simpson n=100: step 5/100 (5%)\n\n")
    assert steps == ["top2025_tab04: Table 4 of top2025", "top2025_tab04: simpson n=100",
                     "top2025_tab04: simpson n=100: step 5/100 (5%)"]


class Recorder:
    """A stand-in ProgressBar keeping every update."""

    updates = []

    def __init__(self, total, description, stream=None, enabled=None):
        self.total = total

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, completed, total=None, label="", remaining=None, running=None):
        Recorder.updates.append((completed, total or self.total, label, remaining, running))

    def step(self, label):
        pass


@pytest.mark.parametrize("jobs", [[], ["--jobs", "2"]])
def test_a_run_knows_its_total_from_the_start_and_estimates_from_the_runtimes(
        monkeypatch, capsys, tmp_path, jobs):
    monkeypatch.setattr("mpvi.repro.cli.ProgressBar", Recorder)
    Recorder.updates = []
    ids = ["axioms2024_fig08", "axioms2024_tab02"]
    assert main(["run", *ids, "--quick", "--no-cache", "--results", str(tmp_path), *jobs]) == 0
    first, last = Recorder.updates[0], Recorder.updates[-1]
    assert first[0] == 0 and first[1] is not None and first[1] >= len(ids)
    assert first[3] is not None and first[3] + first[4] > 0          # an ETA at once
    assert last[0] == last[1]
    if not jobs:                            # serial: the recorded seconds of the ids left
        runtimes = Runtimes()
        seconds = [runtimes.seconds(REPS[rid], True) for rid in ids]
        assert first[3:] == (seconds[1], seconds[0]) and last[3:] == (0, 0.0)


def test_a_reproduction_from_shared_studies_says_where_they_were_computed():
    computed_by = {}
    own = [{"study": "s", "from_cache": False, "cache_file": "/c/1.json"}]
    assert cli.shared_note(own, computed_by, "top2025_tab04") is None
    reused = [{"study": "s", "from_cache": True, "cache_file": "/c/1.json"},
              {"study": "t", "from_cache": True, "cache_file": "/c/2.json"}]
    assert cli.shared_note(reused, computed_by, "top2025_tab05") == (
        "from the shared studies (2 of 2) computed with top2025_tab04 and 1 read from the "
        "cache")
    assert cli.shared_note(reused[1:], {}, "x") == \
        "from the shared study (1 of 1) read from the cache"


def test_a_parallel_reproduction_says_where_its_studies_ran():
    run = object.__new__(parallel._ParallelRun)
    job = types.SimpleNamespace(from_cache=False, entry={"wall_time_s": 41.25},
                                needed_by=["top2025_tab04", "top2025_tab05"])
    cached = types.SimpleNamespace(from_cache=True, entry={}, needed_by=["top2025_tab05"])
    run.jobs = {"k1": job, "k2": cached}
    unit = types.SimpleNamespace(keys=["k1", "k2"], rep=types.SimpleNamespace(id="top2025_tab05"))
    assert run.where_done(unit, 0.01) == (
        "from its 1 study task(s) of this run (41.2 s, shared with top2025_tab04) and from 1 "
        "study result(s) of the cache")
    assert run.where_done(unit, 1.26).startswith("in 1.3 s, from its 1 study task(s)")
    assert run.where_done(types.SimpleNamespace(keys=[], rep=unit.rep), 0.04) == "in 0.0 s"


def test_list_of_an_empty_results_directory_says_not_run_on_one_line(monkeypatch, capsys,
                                                                      tmp_path):
    _, lines = _output(monkeypatch, capsys, 80, ["list", "--results", str(tmp_path)])
    rows = [line for line in lines if line.split()[:1] and line.split()[0] in REPS]
    assert len(rows) == len(REPS) and all(" not run " in line for line in rows)
