"""Measured run times (mpvi.repro.runtimes): every reproduction has one, the file is
verified before use, and mpvi list, a script's --help and the scheduler read it."""
import json
import os
import shutil
from pathlib import Path

import pytest

import mpvi.ground.io
import mpvi.repro.records
from mpvi.repro import runtimes as rt
from mpvi.repro.cli import main
from mpvi.repro.packages import ReproductionPackage, all_folders, folder_of, reproduction_packages
from mpvi.repro.declare import all_reproductions


def test_every_reproduction_has_a_measured_full_and_quick_time():
    packages = reproduction_packages()
    times = rt.Runtimes(packages)
    assert times.problems == []
    missing = [(rid, kind) for rid, rep in all_reproductions().items()
               for kind in ("full", "quick") if times.entry(rep, kind == "quick") is None]
    assert not missing, (f"{len(missing)} reproduction run times not measured (first: "
                         f"{missing[:3]}): measure them with python benchmarks/runtimes.py")
    folders = [f for f in all_folders(packages) if f.runtimes.exists()]
    assert {f.name.rpartition("/")[2] for f in folders} >= {"axioms2024", "bea", "hermite",
                                                             "mutze", "top2025"}
    for folder in folders:                      # each paper folder's own runtimes.json
        data = rt.read_runtimes(folder.runtimes)
        for kind in rt.KINDS:
            how = data["measured"][kind]
            assert how["command"].startswith("mpvi run --all") and how["wall_s"] > 0
            for rid, entry in data[kind].items():
                # alone it costs at least its own computation
                assert entry["seconds"] >= entry["compute_s"] >= 0, rid


def _benchmark():
    import importlib.util
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "runtimes.py"
    spec = importlib.util.spec_from_file_location("runtimes_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def package(tmp_path):
    return ReproductionPackage("fake", "fake_reproductions", tmp_path)


def _record(package, kind="full", times=None):
    times = times or {"a_fig01": {"seconds": 12.5, "compute_s": 2.0}}
    return rt.record_runtimes(package, kind, times, "mpvi run --all --jobs 2 --no-cache", 33.3, 2)


def test_record_then_read_round_trip_keeps_the_other_half(package):
    _record(package, "full")
    _record(package, "quick", {"a_fig01": {"seconds": 1.25, "compute_s": 0.5}})
    data = rt.read_runtimes(package.runtimes)
    assert data["full"]["a_fig01"]["seconds"] == 12.5
    assert data["quick"]["a_fig01"]["seconds"] == 1.25
    assert data["measured"]["full"]["wall_s"] == 33.3
    assert not list(package.root.glob(".*.tmp"))          # written atomically


def test_the_commit_measured_is_the_one_given(package, monkeypatch):
    # benchmarks/runtimes.py reads the commit once, before it rewrites the first of the
    # five files: read after, the tree would show that file changed
    monkeypatch.setattr(rt.io, "git_commit", lambda: "dirty (with uncommitted changes)")
    assert _record(package)["measured"]["full"]["commit"] == "dirty (with uncommitted changes)"
    data = rt.record_runtimes(package, "quick", {"a_fig01": {"seconds": 1.0, "compute_s": 1.0}},
                              "mpvi run --all --quick", 3.0, 2, commit="0123abc")
    assert data["measured"]["quick"]["commit"] == "0123abc"
    assert rt.read_runtimes(package.runtimes)["measured"]["quick"]["commit"] == "0123abc"


def test_missing_file_is_not_measured(package):
    assert rt.read_runtimes(package.runtimes) is None


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["full"]["a_fig01"].update(seconds=1.0), "does not match its digest"),
    (lambda d: d["full"]["a_fig01"].update(seconds=-1.0), "with s >= 0"),
    (lambda d: d["full"]["a_fig01"].update(seconds="1 s"), "with s >= 0"),
    (lambda d: d["full"].update(b={"seconds": 1.0}), "with s >= 0"),
    (lambda d: d.update(format=2), "of format 2"),
    (lambda d: d.update(code="__import__('os')"), "unknown fields"),
    (lambda d: d.pop("digest"), "no field 'digest'"),
    (lambda d: d["measured"].update(other={}), "unknown entries"),
])
def test_an_edited_or_malformed_file_is_refused_by_name(package, edit, message):
    data = _record(package)
    edit(data)
    package.runtimes.write_text(json.dumps(data))
    with pytest.raises(rt.RuntimesError) as exc:
        rt.read_runtimes(package.runtimes)
    assert message in str(exc.value) and str(package.runtimes) in str(exc.value)
    assert "benchmarks/runtimes.py" in str(exc.value)


@pytest.mark.parametrize("text, message", [
    ("{", "is not valid JSON"), ("[]", "not a JSON object"), ('{"format": NaN}', "not valid JSON"),
])
def test_text_that_is_not_a_record_is_refused(package, text, message):
    package.runtimes.write_text(text)
    with pytest.raises(rt.RuntimesError, match=message):
        rt.read_runtimes(package.runtimes)


def test_a_fifo_or_symlink_is_never_opened(package, tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(package.runtimes)
    with pytest.raises(rt.RuntimesError, match="FIFO"):
        rt.read_runtimes(package.runtimes)
    package.runtimes.unlink()
    other = tmp_path / "other.json"
    _record(ReproductionPackage("o", "o", tmp_path / "o"))
    shutil.copy(tmp_path / "o" / "runtimes.json", other)
    package.runtimes.symlink_to(other)
    with pytest.raises(rt.RuntimesError, match="symbolic link"):
        rt.read_runtimes(package.runtimes)


def test_an_unusable_file_leaves_the_times_unknown_and_is_reported(monkeypatch, tmp_path):
    pkg = reproduction_packages()[0]
    broken = ReproductionPackage(pkg.name, pkg.module, tmp_path)
    rep = next(iter(all_reproductions().values()))
    where = folder_of(rep, [broken]).runtimes           # the file of the paper folder
    where.parent.mkdir()
    where.write_text('{"format": 1}')
    times = rt.Runtimes([broken])
    assert times.seconds(rep, False) is None and times.describe(rep) == "not measured"
    assert len(times.problems) == 1 and "no field" in times.problems[0]


def test_describe_and_format():
    assert rt.format_seconds(0.04) == "0.04 s"
    assert rt.format_seconds(3.21) == "3.2 s"
    assert rt.format_seconds(12.4) == "12 s"
    assert rt.format_seconds(150) == "2.5 min"


def test_measured_times_read_verified_outputs(tmp_path):
    reps = all_reproductions()
    assert main(["run", "axioms2024_fig02", "--quick", "--dps", "20", "--out", str(tmp_path),
                 "--no-cache"]) == 0
    times = _benchmark().measured_times(reps.values(), tmp_path)
    assert list(times) == ["axioms2024_fig02"]
    assert times["axioms2024_fig02"]["seconds"] >= times["axioms2024_fig02"]["compute_s"] > 0
    json_path = tmp_path / "axioms2024" / "axioms2024_fig02.json"
    record = json.loads(json_path.read_text())
    record["wall_time_s"] = 1e6                    # a forged time is not recorded
    json_path.write_text(json.dumps(record))
    with pytest.raises(mpvi.repro.records.OutputError, match="digest"):
        _benchmark().measured_times(reps.values(), tmp_path)


def test_list_shows_the_measured_time(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")              # a row per line (narrower: wrapped)
    reps = all_reproductions()
    times = rt.Runtimes()
    assert main(["list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line}
    rep = reps["bea_double"]
    assert times.describe(rep) in lines["bea_double"]
    assert "(quick " in lines["bea_double"]


def test_script_help_states_the_measured_time(capsys):
    from mpvi.repro.run import script_main
    rep = all_reproductions()["axioms2024_tab02"]
    with pytest.raises(SystemExit):
        script_main(rep, ["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "Run time measured alone with --no-cache: " + rt.Runtimes().describe(rep) in out


def test_scheduler_falls_back_on_the_measured_own_computation(tmp_path, monkeypatch):
    import mpvi.repro.parallel as parallel
    monkeypatch.setattr(parallel, "default_out_dir", lambda quick=False: tmp_path / "none")
    rep = all_reproductions()["bea_double"]
    times = rt.Runtimes()
    for quick in (False, True):     # no outputs anywhere: the measured own computation
        cost = parallel.reproduction_cost(rep, tmp_path, quick, set(), times)
        assert cost == times.entry(rep, quick)["compute_s"] > 0
    assert parallel.reproduction_cost(rep, tmp_path, True, set(), None) == 0.0
