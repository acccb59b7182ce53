"""The mpvi command line: list, run and diff, their output directories and their errors."""
import json
import re
import time

import pandas as pd
import pytest

import mpvi.ground.io
import mpvi.repro.run
from conftest import replace_in_framework
from mpvi.repro.cli import main
from mpvi.repro.declare import all_reproductions, needs_mp, Output, Reproduction

AXIOMS = ["axioms2024_fig02", "axioms2024_fig03", "axioms2024_fig04", "axioms2024_fig05",
          "axioms2024_fig06", "axioms2024_fig07", "axioms2024_fig08", "axioms2024_tab02",
          "axioms2024_stability"]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A stand-in source checkout: default output and cache directories go below it."""
    root = tmp_path / "checkout"
    root.mkdir()
    monkeypatch.setattr(mpvi.ground.io, "project_root", lambda: root)
    return root


def test_every_axioms2024_item_has_a_script():
    assert set(AXIOMS) <= set(all_reproductions())


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for rid in AXIOMS:
        assert rid in out


@pytest.mark.parametrize("argv, message", [
    (["run", "axioms2024_fig99"], "unknown reproduction "),
    (["run"], "give at least one reproduction id"),
    (["run", "--all", "axioms2024_fig02"], "not both"),
    (["run", "axioms2024_fig02", "--dps", "0"], "expected at least 10 digits, got 0"),
    (["run", "axioms2024_fig02", "--dps", "1"], "expected at least 10 digits, got 1 (for "
                                                "float64 use --context fp)"),
    (["run", "axioms2024_fig02", "--dps", "ten"], "expected a number of digits, got 'ten'"),
    (["run", "axioms2024_fig02", "--context", "quad"], "invalid choice"),
    (["run", "axioms2024_fig02", "--cache", "x", "--no-cache"], "not allowed with"),
    (["diff", "nope"], "unknown reproduction "),
    (["frobnicate"], "unknown command 'frobnicate'"),
])
def test_bad_arguments_exit_2_with_a_message(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_run_writes_csv_png_json_and_diff_reports(tmp_path, capsys):
    assert main(["run", "axioms2024_fig08", "--quick", "--dps", "30", "--out", str(tmp_path),
                 "--no-cache"]) == 0
    d = tmp_path / "axioms2024"
    for ext in ("csv", "png", "json"):
        assert (d / f"axioms2024_fig08.{ext}").stat().st_size > 0
    rec = json.loads((d / "axioms2024_fig08.json").read_text())
    assert rec["context"] == "gmp30" and rec["quick"] is True and rec["wall_time_s"] > 0
    assert rec["parameters"]["N"] == [10, 25, 63, 160, 400, 1000]
    assert rec["from_cache"] is False and rec["studies"][0]["cache_file"] is None
    capsys.readouterr()
    assert main(["diff", "axioms2024_fig08", "--out", str(tmp_path)]) == 0
    assert "3 match" in capsys.readouterr().out


def test_quick_runs_write_to_quick_figures_and_full_runs_to_figures(project, capsys):
    assert main(["run", "axioms2024_fig02", "--quick", "--dps", "20"]) == 0
    assert (project / "quick-figures" / "axioms2024" / "axioms2024_fig02.csv").exists()
    assert not (project / "figures").exists()
    assert (project / ".mpvi-cache").is_dir()          # the default cache of a checkout
    assert main(["run", "axioms2024_fig02", "--dps", "20", "--no-cache"]) == 0
    rec = json.loads((project / "figures" / "axioms2024" / "axioms2024_fig02.json").read_text())
    assert rec["quick"] is False
    assert "-> " + str(project / "figures") in capsys.readouterr().err


def test_diff_first_line_names_the_directory_and_the_kind_of_outputs(project, tmp_path, capsys,
                                                                    monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")     # (a line longer than the terminal is wrapped)
    assert main(["run", "axioms2024_fig08", "--quick", "--dps", "30", "--no-cache"]) == 0
    capsys.readouterr()
    assert main(["diff", "axioms2024_fig08", "--quick"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert str(project / "quick-figures") in first and "--quick" in first
    assert "1 of quick runs" in first
    (project / "figures").mkdir()            # (a directory that does not exist: exit 2)
    assert main(["diff", "axioms2024_fig08"]) == 1                # no full run: MISSING
    first = capsys.readouterr().out.splitlines()[0]
    assert str(project / "figures") in first and "full results" in first and "1 missing" in first
    (tmp_path / "x").mkdir()
    assert main(["diff", "axioms2024_fig08", "--quick", "--results", str(tmp_path / "x")]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert str(tmp_path / "x") in first and "--results" in first


def test_an_unwritable_out_directory_is_refused_before_any_computation(tmp_path, capsys):
    """(An unusable --cache is not an error: tests/test_cache_integrity.py.)"""
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory\n")
    target = blocker / "sub"
    t0 = time.perf_counter()
    # Table 2 at 64 digits would take about a minute: the check must come first
    assert main(["run", "axioms2024_tab02", "--results", str(target)]) == 2
    assert time.perf_counter() - t0 < 5
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"mpvi: cannot write to the output directory {target}: ")
    assert "Not a directory" in err                 # the OS error


def test_a_script_checks_its_out_directory_too(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    rep = all_reproductions()["axioms2024_tab02"]
    assert mpvi.repro.run.script_main(rep, ["--out", str(blocker / "sub")]) == 2
    assert f"cannot write to the output directory {blocker / 'sub'}" in capsys.readouterr().err


def _table(run):
    return Output(tables={"": pd.DataFrame({"x": [run.ctx.to_str(run.ctx.one)]})})


def _plot(out, params):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    return fig


def _fake(rid, compute, refuse=None):
    return Reproduction(id=rid, paper="fake", item="Fig. 0", title="t",
                        params={}, compute=compute, plot=_plot, refuse=refuse)


@pytest.fixture
def fakes(monkeypatch):
    """Three reproductions: one refuses float64, one fails, one runs."""
    computed = []

    def never(run):
        computed.append("refuser")
        raise AssertionError("a refusing reproduction must not compute")

    def boom(run):
        raise ZeroDivisionError("boom\n  on a second line")

    reps = {"a_refuses": _fake("a_refuses", never, needs_mp("its claim is checked to 1e-55, "
                                                             "below float64 round-off")),
            "b_fails": _fake("b_fails", boom),
            "c_runs": _fake("c_runs", _table)}
    replace_in_framework(monkeypatch, "all_reproductions", lambda: reps)
    return computed


def test_fp_refusal_and_errors_are_one_line_each_and_the_run_goes_on(fakes, tmp_path, capsys):
    status = main(["run", "--all", "--context", "fp", "--out", str(tmp_path), "--no-cache"])
    err = capsys.readouterr().err
    assert status == 1                                   # b_fails failed
    assert "Traceback" not in err
    lines = err.splitlines()
    assert "a_refuses: refused in fp: its claim is checked to 1e-55, below float64 round-off" in lines
    assert "b_fails: error: ZeroDivisionError: boom on a second line" in lines
    assert (tmp_path / "fake" / "c_runs.csv").exists()   # the run went on after both
    assert "refused in fp: a_refuses" in lines and "failed: b_fails" in lines
    assert fakes == []                                   # refused before computing


def test_refusals_alone_exit_3_and_mp_runs_them(fakes, tmp_path, capsys):
    assert main(["run", "a_refuses", "c_runs", "--context", "fp", "--out", str(tmp_path),
                 "--no-cache"]) == 3
    assert main(["run", "c_runs", "--context", "fp", "--out", str(tmp_path), "--no-cache"]) == 0
    assert fakes == []
    assert main(["run", "a_refuses", "--out", str(tmp_path), "--no-cache"]) == 1
    assert fakes == ["refuser"]                          # in mp it does compute


def test_the_loop_top_runs_in_float64(tmp_path, capsys):
    """Figs. 7-11 and Tables 4-5 take the exact nutation from a 34-digit mp context."""
    assert main(["run", "top2025_fig08", "--quick", "--context", "fp", "--out", str(tmp_path),
                 "--no-cache"]) == 0
    rec = json.loads((tmp_path / "top2025" / "top2025_fig08.json").read_text())
    assert rec["context"] == "fp"
    assert float(rec["values"]["simpson theta max abs error"]) < 1e-2
    assert float(rec["values"]["simpson/rk4 theta error ratio"]) < 1


def test_diff_without_a_run_reports_missing_and_exits_1(tmp_path, capsys):
    assert main(["diff", "axioms2024_fig08", "--out", str(tmp_path)]) == 1
    assert "MISSING" in capsys.readouterr().out


def test_diff_on_corrupt_json_names_the_file(tmp_path, capsys):
    d = tmp_path / "axioms2024"
    d.mkdir()
    (d / "axioms2024_fig08.json").write_text("{half")
    assert main(["diff", "axioms2024_fig08", "--out", str(tmp_path)]) == 2
    assert "axioms2024_fig08.json is not valid JSON" in capsys.readouterr().err


def test_no_reproduction_package_is_a_one_line_error(monkeypatch, capsys):
    import importlib.metadata
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: [])
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert "no reproduction package is installed" in err and "mpvi.reproductions" in err


def test_diff_json_and_csv_have_one_record_per_compared_value(capsys):
    import csv
    import io
    from mpvi.repro.published import RECORD_FIELDS, diff
    from mpvi.repro.declare import default_out_dir
    rows = diff(list(all_reproductions()), default_out_dir(False))
    assert main(["diff", "--all", "--format", "json"]) == 0
    captured = capsys.readouterr()
    records = json.loads(captured.out)                   # stdout is only the JSON
    assert "match" in captured.err                       # the summary went to stderr
    assert len(records) == len(rows) > 400
    assert all(list(r) == RECORD_FIELDS for r in records)
    assert [(r["id"], r["key"], r["status"]) for r in records] == \
        [(r.value.id, r.value.key, r.status) for r in rows]
    known = [r for r in records if r["status"] == "known"]
    assert known and all(r["errata"] and r["reason"].startswith(f"[{r['errata'][0]}]")
                         for r in known)
    assert main(["diff", "--all", "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(table) == len(rows) and list(table[0]) == RECORD_FIELDS
    assert [r["printed"] for r in table] == [r["printed"] for r in records]


def test_diff_columns_stay_aligned_whatever_the_name_lengths():
    from decimal import Decimal
    from mpvi.repro.published import DiffRow, PublishedValue, format_diff
    values = [PublishedValue("a", key, "q", "1.5", "digit", "", "Table 1", "x")
              for key in ["k", "k2", "a key far longer than the twenty-eight characters of old"]]
    rows = [DiffRow(values[0], "1.52", Decimal("0.01"), "match"),
            DiffRow(values[1], None, None, "MISSING", "run it"),
            DiffRow(values[2], "1.4000000000000000000000001", Decimal("0.07"), "MISMATCH")]
    lines = format_diff(rows, {}, 200).splitlines()
    table = [line for line in lines if line.startswith(("key", "k", "a key"))]
    starts = {line.index(word) for line, word in zip(table, ["status", "match", "MISSING",
                                                             "MISMATCH"])}
    assert len(starts) == 1


def test_list_shows_item_status_and_last_run_time(tmp_path, capsys, monkeypatch):
    from mpvi.repro.published import diff
    from mpvi.repro.declare import default_out_dir
    monkeypatch.setenv("COLUMNS", "1000")              # a row per line (narrower: wrapped)
    assert main(["list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    statuses = {}
    for r in diff(["axioms2024_tab02"], default_out_dir(False)):
        statuses[r.status] = statuses.get(r.status, 0) + 1
    line = lines["axioms2024_tab02"]
    assert "Table 2" in line and f"{statuses['match']} match, {statuses['known']} known" in line
    assert re.search(r"\d+\.\d s, 20\d\d-\d\d-\d\d", line)
    assert "no printed values" in lines["axioms2024_fig02"]
    assert main(["list", "--results", str(tmp_path)]) == 0
    assert "not run" in capsys.readouterr().out


def test_progress_bar_only_on_a_terminal(tmp_path, capsys):
    import io
    from mpvi.repro.progress import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    for stream, shown in [(Terminal(), True), (io.StringIO(), False)]:
        with ProgressBar(3, "mpvi run", stream=stream) as bar:
            for k in range(1, 4):
                bar.update(k, label=f"item {k}")
        assert ("3/3" in stream.getvalue()) is shown
        assert (stream.getvalue() == "") is not shown
    assert main(["run", "axioms2024_fig02", "--quick", "--out", str(tmp_path), "--no-cache"]) == 0
    assert "\x1b[" not in capsys.readouterr().err        # stderr is not a terminal here


def test_a_script_refuses_too_few_digits_too(tmp_path, capsys):
    rep = all_reproductions()["axioms2024_fig08"]
    with pytest.raises(SystemExit) as exc:
        mpvi.repro.run.script_main(rep, ["--dps", "9", "--out", str(tmp_path)])
    assert exc.value.code == 2
    assert "expected at least 10 digits, got 9" in capsys.readouterr().err
    assert not (tmp_path / "axioms2024").exists()


@pytest.mark.parametrize("argv", [["diff", "--all"], ["list"], ["diff", "--all", "--format", "json"]])
def test_a_closed_stdout_ends_the_command_quietly(argv):
    """``mpvi diff | head -1``: the reader is gone before mpvi writes; mpvi exits with
    141 (128 + SIGPIPE, as a Unix tool killed by SIGPIPE) and no traceback."""
    import subprocess
    import sys
    from mpvi.repro.cli import BROKEN_PIPE
    proc = subprocess.Popen([sys.executable, "-m", "mpvi.repro.cli", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()                                  # before mpvi has imported anything
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait() == BROKEN_PIPE == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err and "Exception" not in err
