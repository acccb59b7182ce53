"""Parallel runs (mpvi.repro.parallel): a reproduction run serially, on a process pool and on a
local Dask cluster writes the same bytes; its study tasks go through the cache; a failing
task is reported with its name and the others go on; a dying worker does not hang the
pool; Dask is imported only when asked for."""
import dataclasses
import io
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from conftest import replace_in_framework
from mpvi.repro.cache import DiskCache
from mpvi.repro.cli import main
from mpvi.repro.parallel import ProcessExecutor, run_parallel
from mpvi.repro.declare import all_reproductions, Output, Reproduction
from mpvi.repro.run import execute
from mpvi.repro.studies import Task, study

REPS = all_reproductions()
RID = "axioms2024_tab02"


def small_table2():
    """axioms2024 Table 2 over T = 1 and 10 t_bar: six study tasks (span x meshes)."""
    rep = REPS[RID]
    return dataclasses.replace(rep, params=dict(rep.params, T_tbar=[1, 10]), quick={})


def outputs(directory):
    """{file name: bytes} of the CSVs and the PNG written for Table 2."""
    d = directory / "axioms2024"
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.suffix in (".csv", ".png")}


def parallel(executor, reps, ids, out, cache=None):
    """run_parallel on ``executor`` (closed afterwards): (ran, refused, failed, stderr)."""
    err = io.StringIO()
    try:
        ran, refused, failed = run_parallel(reps, ids, executor, "mp", 64, False, out, cache,
                                            stream=err)
    finally:
        executor.close()
    return ran, refused, failed, err.getvalue()


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    out = tmp_path_factory.mktemp("serial")
    execute(small_table2(), "mp", 64, False, out, stream=io.StringIO())
    return out


def test_a_process_pool_writes_the_serial_bytes_and_fills_the_cache(serial, tmp_path):
    rep = small_table2()
    cache = DiskCache(tmp_path / "cache")
    ran, refused, failed, err = parallel(ProcessExecutor(2), {RID: rep}, [RID],
                                         tmp_path / "a", cache)
    assert (ran, refused, failed) == ([RID], [], [])
    assert outputs(tmp_path / "a") == outputs(serial) and len(outputs(serial)) == 2
    lines = [x for x in err.splitlines() if x.startswith("[")]
    assert len(lines) == 7 and lines[-1].startswith(f"[7/7] {RID}: ")   # 6 runs, then the table
    assert sum("linear_pendulum_errors T=10 t_bar N=400: " in x for x in lines) == 1
    rec = json.loads((tmp_path / "a" / "axioms2024" / f"{RID}.json").read_text())
    assert rec["executor"] == "a process pool of 2 worker(s)"
    assert [s["from_cache"] for s in rec["studies"]] == [False] * 6
    assert all(s["cache_file"] and os.path.exists(s["cache_file"]) for s in rec["studies"])
    # again: every run comes from the cache, the same bytes
    ran, _, _, err = parallel(ProcessExecutor(2), {RID: rep}, [RID], tmp_path / "b", cache)
    assert ran == [RID] and "0 study task(s) first (6 more from the cache)" in err
    assert outputs(tmp_path / "b") == outputs(serial)
    rec = json.loads((tmp_path / "b" / "axioms2024" / f"{RID}.json").read_text())
    assert [s["from_cache"] for s in rec["studies"]] == [True] * 6


def test_a_local_dask_cluster_writes_the_serial_bytes(serial, tmp_path):
    pytest.importorskip("distributed", reason="Dask is not installed (pip install -e '.[dask]')")
    from mpvi.repro.parallel import DaskExecutor
    ran, refused, failed, err = parallel(DaskExecutor("local", 2), {RID: small_table2()}, [RID],
                                         tmp_path)
    assert (ran, refused, failed) == ([RID], [], []), err
    assert outputs(tmp_path) == outputs(serial)
    assert "Dask LocalCluster of 2 worker process(es)" in err


# ----- failures ----------------------------------------------------------------------------
# Defined at the top level of this module: worker processes find studies and
# reproductions by module and name.

@study("test_parallel_third")
def third(rec, params):
    return {"x": rec.ctx.num(params["x"]) / 3}


@study("test_parallel_fails")
def fails(rec, params):
    raise ZeroDivisionError(f"no {params['x']}\nsecond line")


@study("test_parallel_dies")
def dies(rec, params):
    os._exit(3)              # the worker process vanishes (as when it is killed)


def _table(run):
    x = run.study(third, {"x": "1"})["x"]
    return Output(tables={"": pd.DataFrame({"x": [run.ctx.to_str(x)]})})


def _boom(run):
    raise ValueError("compute failed")


def _plot(out, params):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    return fig


def _fake(rid, compute, tasks):
    return Reproduction(id=rid, paper="fake", item="Fig. 0", title="t", params={},
                        compute=compute, plot=_plot, tasks=lambda p: tasks, module=__name__)


A_RUNS = _fake("a_runs", _table, [Task(third, {"x": "1"})])
B_TASK_FAILS = _fake("b_task_fails", _table, [Task(fails, {"x": "2"}, label="the bad run")])
C_COMPUTE_FAILS = _fake("c_compute_fails", _boom, [])
D_WORKER_DIES = _fake("d_worker_dies", _table, [Task(dies, {"x": "3"}, label="the fatal run")])
FAKES = {r.id: r for r in (A_RUNS, B_TASK_FAILS, C_COMPUTE_FAILS, D_WORKER_DIES)}


def test_a_failing_task_is_named_and_the_others_go_on(tmp_path):
    ids = ["a_runs", "b_task_fails", "c_compute_fails"]
    ran, refused, failed, err = parallel(ProcessExecutor(2), FAKES, ids, tmp_path)
    assert ran == ["a_runs"] and refused == [] and sorted(failed) == ids[1:]
    lines = err.splitlines()
    assert any(x.startswith("[") and x.endswith("the bad run: failed: ZeroDivisionError: no 2 "
                                                 "second line") for x in lines)
    assert ("b_task_fails: error: its task the bad run (study test_parallel_fails) failed: "
            "ZeroDivisionError: no 2 second line") in lines
    assert "c_compute_fails: error: ValueError: compute failed" in lines
    assert pd.read_csv(tmp_path / "fake" / "a_runs.csv", dtype=str)["x"][0].startswith("3.3333")
    assert not (tmp_path / "fake" / "b_task_fails.csv").exists()


def test_a_dying_worker_does_not_hang_the_pool_nor_fail_the_other_units(tmp_path):
    ran, _, failed, err = parallel(ProcessExecutor(2), FAKES, ["d_worker_dies", "a_runs"],
                                   tmp_path)
    assert ran == ["a_runs"] and failed == ["d_worker_dies"]
    assert "the fatal run: its worker process died (BrokenProcessPool); it is run again alone" \
        in err.splitlines()
    assert ("d_worker_dies: error: its task the fatal run (study test_parallel_dies) failed: "
            "RuntimeError: its worker process died while it ran alone") in err


def test_the_command_line_runs_in_parallel_and_reports_failures(monkeypatch, tmp_path, capsys):
    replace_in_framework(monkeypatch, "all_reproductions", lambda: dict(list(FAKES.items())[:3]))
    assert main(["run", "--all", "--jobs", "2", "--out", str(tmp_path), "--no-cache"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert "c_compute_fails: error: ValueError: compute failed" in lines
    assert "failed: b_task_fails, c_compute_fails" in lines or \
           "failed: c_compute_fails, b_task_fails" in lines
    assert (tmp_path / "fake" / "a_runs.csv").exists()


@pytest.mark.parametrize("argv, message", [
    (["--jobs", "2", "--scheduler", "tcp://127.0.0.1:8786"], "a Dask scheduler at an address"),
    (["--jobs", "0"], "positive integer"),
])
def test_bad_parallel_options_exit_2(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(["run", RID] + argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_without_dask_scheduler_says_how_to_install_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)          # import fails
    assert main(["run", RID, "--scheduler", "local", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "install the dask extra: pip install -e '.[dask]'" in err
    assert not (tmp_path / "axioms2024").exists()


def test_dask_is_imported_only_when_asked_for():
    code = ("import sys, mpvi.repro.cli, mpvi.repro.parallel; mpvi.repro.cli.build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_head_of_the_longest_chain_starts_first():
    """A short run whose reproduction is long starts before a longer run that only a short
    reproduction waits for, and before a ready reproduction shorter than that chain; a
    run whose reproductions are all done counts its own cost only."""
    from types import SimpleNamespace
    from mpvi.repro.parallel import _Job, _ParallelRun, _Rep

    run = _ParallelRun.__new__(_ParallelRun)
    job = lambda name, cost, *needed: _Job(SimpleNamespace(cost=cost), {}, name, None,  # noqa: E731
                                           needed_by=list(needed))
    run.jobs = {"short": job("short", 10, "long_rep"), "long": job("long", 50, "short_rep"),
                "orphan": job("orphan", 55, "done_rep", "short_rep")}
    run.todo = {"long_rep": _Rep(None, ["short"], 100), "short_rep": _Rep(None, ["long"], 1),
                "ready_rep": _Rep(None, [], 60), "done_rep": _Rep(None, [], 500, state="done")}
    order = [u.key if isinstance(u, _Job) else u.cost for u in run.ready()]
    assert order == ["short", 60, "orphan", "long"]
    assert run.chain(run.jobs["orphan"]) == 56          # done_rep does not wait for it
