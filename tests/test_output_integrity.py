"""Crash-consistent outputs and checked provenance (mpvi.repro.records.write_outputs and
read_provenance): an id's files are committed by its JSON, which lists their SHA-256; a
run killed between two renames is reported by ``mpvi diff``, ``list`` and ``report`` in
one line instead of its old values, and the next run removes the temporaries it left; a
provenance JSON of the wrong shape is one line naming the file, never a traceback."""
import contextlib
import json
import os
import subprocess
import sys
import time

import pytest

import mpvi.ground.io
from mpvi import MPContext
from mpvi.ground.io import TEMPORARY, provenance, remove_stale_temporaries
from mpvi.repro.cli import main
from mpvi.repro.declare import Reproduction
from mpvi.repro.records import read_provenance, stamp_record, write_outputs, OutputError, Rendered

RID = "axioms2024_fig08"                   # quick: about a second, three published values


def _one_line_errors(err):
    """The error lines of a command's stderr, checked: no traceback, each one line."""
    assert "Traceback" not in err
    return [line for line in err.splitlines() if line.startswith("mpvi: ")]


# ----- a run killed between two renames ---------------------------------------------------

KILLED_RUN = r'''
import contextlib, sys, time
import mpvi.ground.io
from mpvi.repro.cli import main

real, written = mpvi.ground.io.atomic_path, []

@contextlib.contextmanager
def slow(path):
    """atomic_path that stops before renaming the second file it writes."""
    with real(path) as tmp:
        yield tmp
        written.append(path)
        if len(written) == 2:
            print("written", path, flush=True)
            time.sleep(120)

mpvi.ground.io.atomic_path = slow
sys.exit(main(sys.argv[1:]))
'''


def test_a_run_killed_between_renames_is_reported_and_the_next_run_cleans_up(tmp_path, capsys):
    out = tmp_path / "out"
    run = ["run", RID, "--quick", "--out", str(out), "--no-cache"]
    assert main(run + ["--dps", "30"]) == 0
    d = out / "axioms2024"
    old = {p.name: p.read_bytes() for p in d.iterdir()}
    # a second run with other digits (other bytes), SIGKILLed after its CSV is renamed,
    # while its PNG is written but not renamed
    proc = subprocess.Popen([sys.executable, "-c", KILLED_RUN, *run, "--dps", "25"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert line.startswith("written") and line.strip().endswith(f"{RID}.png")
    assert (d / f"{RID}.csv").read_bytes() != old[f"{RID}.csv"]          # new
    assert (d / f"{RID}.png").read_bytes() == old[f"{RID}.png"]          # old
    assert (d / f"{RID}.json").read_bytes() == old[f"{RID}.json"]        # old
    stray = [p.name for p in d.iterdir() if TEMPORARY.fullmatch(p.name)]
    assert len(stray) == 1 and stray[0].startswith(f".{RID}.png.mpvi-")
    capsys.readouterr()

    expected = (f"mpvi: {RID}: {d / (RID + '.csv')} does not match its provenance "
                f"{d / (RID + '.json')} (an interrupted run?); rerun `mpvi run {RID}`")
    assert main(["diff", RID, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert _one_line_errors(captured.err) == [expected]
    assert "1 invalid" in captured.out and "match" not in captured.out   # no old values
    assert main(["list", "--results", str(out)]) == 2
    captured = capsys.readouterr()
    assert _one_line_errors(captured.err) == [expected]
    row = next(line for line in captured.out.splitlines() if line.startswith(RID))
    assert "INVALID" in row and "match" not in row
    assert main(["report", "--results", str(out), "--out", str(tmp_path / "report")]) == 2
    assert _one_line_errors(capsys.readouterr().err) == [expected]
    assert not (tmp_path / "report").exists()

    assert main(run + ["--dps", "25"]) == 0          # the rerun: consistent, no stray file
    assert sorted(p.name for p in d.iterdir()) == sorted(old)
    capsys.readouterr()
    assert main(["diff", RID, "--out", str(out)]) == 0
    assert "3 match" in capsys.readouterr().out


# ----- the commit record, in process ----------------------------------------------------------

def _fake(rid="fake_fig01"):
    return Reproduction(id=rid, paper="fake", item="Fig. 1", title="t",
                        params={}, compute=None, plot=None, published=False)


def _rendered(rep, version, tables=("", "extra")):
    files = {(f"{rep.id}.csv" if t == "" else f"{rep.id}_{t}.csv"): f"x\n{version}\n".encode()
             for t in tables}
    files[f"{rep.id}.png"] = f"not really a PNG {version}".encode()
    return Rendered(rep.id, files, {"v": str(version)}, {"from_cache": False}, 0.25)


def _write(rep, rendered, out):
    return write_outputs(rep, rendered, MPContext(20), {}, False, out)


def test_the_json_lists_the_digest_of_every_file_it_commits(tmp_path):
    import hashlib
    rep = _fake()
    rendered = _rendered(rep, 1)
    paths = _write(rep, rendered, tmp_path)
    record = json.loads(paths["json"].read_text())
    assert record["files"] == {name: hashlib.sha256(data).hexdigest()
                               for name, data in rendered.files.items()}
    assert read_provenance(rep, tmp_path)["values"] == {"v": "1"}


@pytest.mark.parametrize("renamed", [1, 2, 3])
def test_an_interruption_after_any_rename_is_detected(tmp_path, monkeypatch, renamed):
    """3 renamed: every file is new but the JSON is still the old one."""
    rep = _fake()
    _write(rep, _rendered(rep, 1), tmp_path)
    real, done = mpvi.ground.io.atomic_path, []

    @contextlib.contextmanager
    def interrupted(path):
        with real(path) as tmp:
            yield tmp
        done.append(path)
        if len(done) == renamed:
            raise KeyboardInterrupt
    monkeypatch.setattr(mpvi.ground.io, "atomic_path", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _write(rep, _rendered(rep, 2), tmp_path)
    with pytest.raises(OutputError, match=rf"^{rep.id}: .*{done[0].name} does not match its "
                                          rf"provenance .*{rep.id}\.json \(an interrupted "
                                          rf"run\?\); rerun `mpvi run {rep.id}`$"):
        read_provenance(rep, tmp_path)


def test_a_listed_file_that_is_gone_is_reported(tmp_path):
    rep = _fake()
    paths = _write(rep, _rendered(rep, 1), tmp_path)
    paths["png"].unlink()
    with pytest.raises(OutputError, match=r"fake_fig01\.png is missing, though its provenance"):
        read_provenance(rep, tmp_path)


def test_files_the_new_run_no_longer_writes_are_removed_after_the_commit(tmp_path):
    rep = _fake()
    _write(rep, _rendered(rep, 1, tables=("", "extra")), tmp_path)
    mine = tmp_path / "fake" / "notes.txt"
    mine.write_text("not mpvi's")
    _write(rep, _rendered(rep, 2, tables=("",)), tmp_path)
    assert sorted(p.name for p in (tmp_path / "fake").iterdir()) == \
        ["fake_fig01.csv", "fake_fig01.json", "fake_fig01.png", "notes.txt"]
    assert set(read_provenance(rep, tmp_path)["files"]) == {"fake_fig01.csv", "fake_fig01.png"}


def test_stale_temporaries_are_removed_and_nothing_else(tmp_path):
    stale = tmp_path / ".a.csv.mpvi-abc_1234.tmp"
    fresh = tmp_path / ".b.png.mpvi-zz99zz99.tmp"
    others = [tmp_path / n for n in (".thesis.backup.tmp", "a.csv.mpvi-abcd1234.tmp",
                                     ".a.csv.abcd1234.tmp", "a.csv")]
    for p in [stale, fresh, *others]:
        p.write_text("x")
    now = time.time()
    for p in [stale, *others]:
        os.utime(p, (now - 3600, now - 3600))
    assert remove_stale_temporaries(tmp_path, now - 60) == [stale]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in [fresh, *others])
    assert remove_stale_temporaries(tmp_path / "nonexistent", now) == []


def test_atomic_path_names_its_temporaries_with_the_pattern(tmp_path):
    with mpvi.ground.io.atomic_path(tmp_path / "a.csv") as tmp:
        assert TEMPORARY.fullmatch(tmp.name) and tmp.name.startswith(".a.csv.mpvi-")
        tmp.write_text("x")


# ----- provenance of the wrong shape ----------------------------------------------------------

def _record(**changes):
    """A valid provenance record of RID (as write_outputs writes it, without ``files``
    and the digest: stamp_record adds it) with ``changes`` (None: remove the field)."""
    rec = provenance(MPContext(30), {"N": [10, 25]}, 0.5,
                     {"reproduction": RID, "paper": "axioms2024", "item": "Fig. 8",
                      "quick": True, "from_cache": False})
    rec["values"] = {"newmark q order": "2.0", "rk4 q order": "4.0", "simpson q order": "4.0"}
    rec.update(changes)
    return {k: v for k, v in rec.items() if v is not None}


STUDY = {"study": "s", "from_cache": False, "wall_time_s": 1.0, "computed_utc": "x",
         "computed_at_commit": None, "cache_file": None}


@pytest.mark.parametrize("text, problem", [
    ("{half", "is not valid JSON"),
    (b'{"quick": "caf\xe9"}', "is not valid JSON"),                        # Latin-1
    (json.dumps([1, 2]), "record should be an object, not [1, 2]"),
    (json.dumps(_record(values=["2.0"])), 'record.values should be an object, not ["2.0"]'),
    (json.dumps(_record(values={"rk4 q order": 4.0})),
     'record.values["rk4 q order"] should be a string, not 4.0'),
    (json.dumps(_record(quick=None)), "record has no field 'quick'"),
    (json.dumps(_record(quick="yes")), 'record.quick should be true or false, not "yes"'),
    (json.dumps(_record(wall_time_s="fast")), 'record.wall_time_s should be a number'),
    (json.dumps(_record(parameters="N=10")), "record.parameters should be an object"),
    (json.dumps(_record(created_utc=20240101)), "record.created_utc should be a string"),
    (json.dumps(_record(studies=[{k: v for k, v in STUDY.items() if k != "computed_utc"}])),
     "record.studies[0] has no field 'computed_utc'"),
    (json.dumps(_record(newton={"simpson": {"steps": "many"}})),
     "record.newton[\"simpson\"] has no field 'mean_iterations_per_step'"),
    (json.dumps(_record(reproduction="axioms2024_fig07")),
     "it is the record of 'axioms2024_fig07'"),
    (json.dumps(_record(files={"../../etc/passwd": "0" * 64})),
     "record.files names '../../etc/passwd', not a file of axioms2024_fig08"),
    (json.dumps(_record(files={f"{RID}.csv": "not a digest"})),
     "record.files[\"axioms2024_fig08.csv\"] should be a string matching"),
])
def test_malformed_provenance_is_one_line_in_diff_list_and_report(tmp_path, capsys, text, problem):
    d = tmp_path / "axioms2024"
    d.mkdir()
    path = d / f"{RID}.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    commands = [["diff", RID, "--out", str(tmp_path)], ["list", "--results", str(tmp_path)]]
    if problem in ("is not valid JSON", "record.studies[0] has no field 'computed_utc'"):
        commands.append(["report", "--results", str(tmp_path), "--out", str(tmp_path / "r")])
    for argv in commands:
        assert main(argv) == 2, argv
        errors = _one_line_errors(capsys.readouterr().err)
        assert len(errors) == 1, argv
        assert errors[0].startswith(f"mpvi: {RID}: {path} ") and problem in errors[0]
        assert errors[0].endswith(f"; rerun `mpvi run {RID}`")


def test_a_well_formed_record_with_extra_fields_is_read(tmp_path, capsys):
    """Extra fields (a reproduction's own entries, later additions) are free."""
    d = tmp_path / "axioms2024"
    d.mkdir()
    (d / f"{RID}.json").write_text(json.dumps(stamp_record(_record(
        check_digits={"anything": [1, 2]}, studies=[STUDY], executor="serial",
        newton={"simpson": {"steps": 10, "mean_iterations_per_step": 2.5, "max_iterations": 3,
                            "max_final_residual": 1e-60, "context_eps": 1e-64}}))))
    assert main(["diff", RID, "--out", str(tmp_path)]) == 0
    assert "3 match" in capsys.readouterr().out


def test_a_reproduced_value_that_is_not_a_number_is_a_mismatch(tmp_path, capsys):
    d = tmp_path / "axioms2024"
    d.mkdir()
    (d / f"{RID}.json").write_text(json.dumps(stamp_record(_record(values={
        "newmark q order": "two", "rk4 q order": "NaN", "simpson q order": "4.0"}))))
    assert main(["diff", RID, "--out", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.out.splitlines()
    for key, reason in [("newmark q order", "'two' is not a number"),
                        ("rk4 q order", "'NaN' is not a finite number")]:
        assert any(line.startswith(key) and "MISMATCH" in line for line in lines)
        assert any(line.startswith(f"  {key}: ") and reason in line for line in lines)
