"""Parallel runs leave no process behind (mpvi.repro.parallel, mpvi.repro.cli): the pool's
workers die with ``mpvi run --jobs 2`` when it is killed (SIGKILL), terminated (SIGTERM,
exit status 143) or interrupted (Ctrl-C: SIGINT to the process group, exit status 130,
no traceback from a worker); a ``--scheduler local`` run closes its Dask cluster on
SIGTERM and Ctrl-C without "leaked semaphore" warnings; a Dask scheduler address where
nothing listens fails at once with "connection refused".

Each test runs ``mpvi run`` in a subprocess (:func:`drive`) on fake reproductions whose
studies sleep, so that the workers are busy (or idle, waiting for work) when the signal
comes, and then looks for the processes it started in ``/proc``."""
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import mpvi.repro.cli
from conftest import replace_in_framework
from mpvi.repro.cli import main
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.studies import Task, study

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="finds processes in /proc (Linux only)")

TESTS = Path(__file__).resolve().parent


# ----- the fake reproductions (found by module and name in worker processes) -----------------

@study("test_process_tree_sleeps")
def sleeps(rec, params):
    time.sleep(60)
    return {"n": params["n"]}


def _compute(run):
    return Output(tables={"": pd.DataFrame({"n": [run.study(sleeps, {"n": 1})["n"]]})})


def _plot(out, params):
    import matplotlib.pyplot as plt
    return plt.subplots()[0]


def _sleepy(rid, n):
    return Reproduction(id=rid, paper="fake", item="Fig. 0", title="t", params={},
                        compute=_compute, plot=_plot, module=__name__,
                        tasks=lambda p: [Task(sleeps, {"n": k}) for k in range(1, n + 1)])


SLEEPY = {r.id: r for r in (_sleepy("sleeps_twice", 2), _sleepy("sleeps_once", 1))}


def drive(argv):
    """``mpvi run argv`` on the reproductions of :data:`SLEEPY` (run in the subprocess)."""
    mpvi.repro.cli.all_reproductions = lambda: SLEEPY      # what `mpvi run` lists
    return main(["run", "--no-cache"] + argv)


# ----- processes --------------------------------------------------------------------------

def _interactive_signals():
    """In the child before exec: SIGINT as at a terminal.  A shell without job control
    starts background commands with SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler: `bash .ci/run &` would make Ctrl-C a no-op here."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def children(pid):
    """The pids of the children of ``pid`` (none once it is gone)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except OSError:
            pass
    return found


def descendants(pid):
    """The pids of the children of ``pid``, of their children, and so on."""
    found, todo = [], children(pid)
    while todo:
        c = todo.pop()
        found.append(c)
        todo += children(c)
    return found


def alive(pid):
    """Whether ``pid`` is a process that has not exited (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def survivors(pids, within):
    """The processes of ``pids`` still alive after ``within`` seconds (polled)."""
    deadline = time.monotonic() + within
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


class Run:
    """``mpvi run argv`` on the fake reproductions in a subprocess of its own process group
    (stderr in a file); on exit, kills whatever of it is still alive."""

    def __init__(self, tmp_path, argv):
        self.err_path = tmp_path / "stderr.txt"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(TESTS)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        with open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", "import sys, test_process_tree as t; "
                 "sys.exit(t.drive(sys.argv[1:]))", *argv, "--out", str(tmp_path / "out")],
                stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True,
                preexec_fn=_interactive_signals)
        self.seen = []

    def err(self):
        return self.err_path.read_text()

    def wait_until_busy(self, workers, timeout=30):
        """Wait until the run has submitted its units and ``workers`` processes run them;
        remember every process under it."""
        deadline = time.monotonic() + timeout
        while "running 1 reproduction(s) on" not in self.err():
            assert self.proc.poll() is None, f"mpvi run exited early: {self.err()}"
            assert time.monotonic() < deadline, f"mpvi run did not start: {self.err()}"
            time.sleep(0.1)
        time.sleep(1.5)                            # the units reach the workers
        self.seen = descendants(self.proc.pid)
        assert len(self.seen) >= workers, (self.seen, self.err())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for pid in [self.proc.pid] + self.seen + descendants(self.proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait()


POOL = ["sleeps_twice", "--jobs", "2"]
IDLE_WORKER = ["sleeps_once", "--jobs", "2"]           # one worker waits for work
DASK = ["sleeps_once", "--scheduler", "local", "--jobs", "2"]


def test_pool_workers_die_with_a_killed_parent(tmp_path):
    with Run(tmp_path, POOL) as run:
        run.wait_until_busy(workers=2)
        os.kill(run.proc.pid, signal.SIGKILL)
        assert run.proc.wait(5) == -signal.SIGKILL
        assert survivors(run.seen, within=5) == []


def test_sigterm_ends_the_run_and_its_pool_workers(tmp_path):
    with Run(tmp_path, POOL) as run:
        run.wait_until_busy(workers=2)
        os.kill(run.proc.pid, signal.SIGTERM)
        assert run.proc.wait(10) == 128 + signal.SIGTERM, run.err()
        assert survivors(run.seen, within=5) == []
        assert run.err().splitlines()[-1] == "mpvi: terminated (SIGTERM)"


def test_ctrl_c_ends_the_run_and_its_pool_workers_without_a_traceback(tmp_path):
    with Run(tmp_path, IDLE_WORKER) as run:
        run.wait_until_busy(workers=2)
        t0 = time.monotonic()
        os.killpg(run.proc.pid, signal.SIGINT)     # Ctrl-C: the whole foreground group
        assert run.proc.wait(10) == 130, run.err()
        assert time.monotonic() - t0 < 5
        assert survivors(run.seen, within=5) == []
        err = run.err()
        assert "Traceback" not in err and err.splitlines()[-1] == "mpvi: interrupted", err


@pytest.mark.parametrize("kill, signum, status, last", [
    (os.kill, signal.SIGTERM, 143, "mpvi: terminated (SIGTERM)"),        # kill PID
    (os.killpg, signal.SIGINT, 130, "mpvi: interrupted"),                # Ctrl-C
])
def test_a_local_dask_cluster_is_closed_on_sigterm_and_ctrl_c(tmp_path, kill, signum, status,
                                                              last):
    pytest.importorskip("distributed", reason="Dask is not installed (pip install -e '.[dask]')")
    with Run(tmp_path, DASK) as run:
        run.wait_until_busy(workers=2)
        kill(run.proc.pid, signum)
        assert run.proc.wait(15) == status, run.err()
        assert survivors(run.seen, within=5) == []
        err = run.err()
        assert "leaked" not in err and "resource_tracker" not in err, err
        assert "Traceback" not in err and err.splitlines()[-1] == last, err


def test_a_refused_dask_port_fails_at_once_naming_the_cause(monkeypatch, tmp_path, capsys):
    pytest.importorskip("distributed", reason="Dask is not installed (pip install -e '.[dask]')")
    replace_in_framework(monkeypatch, "all_reproductions", lambda: SLEEPY)
    with socket.socket() as s:                   # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    t0 = time.monotonic()
    assert main(["run", "sleeps_once", "--scheduler", address, "--results", str(tmp_path)]) == 2
    assert time.monotonic() - t0 < 10
    err = capsys.readouterr().err
    assert err == f"mpvi: cannot connect to the Dask scheduler {address}: connection refused\n"
