"""Parallel runs of reproductions: ``mpvi run --jobs N`` (a process pool on this machine)
and ``mpvi run --scheduler ADDRESS`` (a Dask distributed cluster; ``local`` starts a
``LocalCluster`` here).

The units of work are pure functions of picklable arguments:

* a **study task**: one :class:`mpvi.repro.studies.Task` that a reproduction declares
  (``Reproduction.tasks``), computed by :func:`study_task` -- ``study(params, ctx)``
  without any cache, returning its lossless cache entry (JSON data);
* a **reproduction task**: :func:`reproduction_task` -- the reproduction's ``compute``
  and ``plot`` (:func:`mpvi.repro.render`), returning its files as bytes and its
  provenance as JSON data.  The studies it asks for come from the entries of its study
  tasks (passed to it, :class:`mpvi.repro.cache.TaskCache`), else from the cache directory if
  the worker can read it, else it computes them.

:func:`run_parallel` plans every selected reproduction (refusals first, as a serial
run), deduplicates the study tasks by cache key (Tables 4 and 5 of top2025 share their
runs), reads those it can from the cache, and then keeps every worker busy: whenever a
worker is free it starts the ready unit that heads the longest remaining chain (a study
task's ``cost`` hint plus the costliest waiting reproduction that needs it; a
reproduction's cost is the wall time its last JSON recorded, else its measured time,
:mod:`mpvi.repro.runtimes`), so that a long task whose reproduction is long too starts
before a longer task that nothing long waits for.  A reproduction becomes
ready when all its study tasks are done.  The parent process alone writes files: the
results of study tasks go into the cache (unless it cannot be written:
:meth:`mpvi.repro.cache.DiskCache.store` then reports it once and stores nothing more,
and the run goes on), the outputs of reproduction tasks are written by
:func:`mpvi.repro.write_outputs` -- so a remote Dask worker needs no shared disk, and
the files are the bytes a serial run writes.  Contexts are never sent between
processes: a worker rebuilds its context from ``(context name, digits)``.

Progress (``verbosity`` 2, ``mpvi run --verbose``; by default a start line and a line
per finished reproduction): one line per finished unit on stderr (``[3/57] top_long_run
T=100 t_bar simpson h=t_bar/40: 41.2 s``).  A failing study task is reported with its
label and study, and the reproductions that need it fail with that message; the others go on, as in a
serial run.  A worker process that dies (a crash, an out-of-memory kill) breaks a
process pool, failing every unit running on it: the pool is restarted and those units are
run again one at a time, so that the one that kills its worker when it runs alone fails
and the others complete.

No process is left behind.  The pool's workers die with the process that started them,
even when it is killed (SIGKILL): ``PR_SET_PDEATHSIG`` on Linux, elsewhere a thread in
each worker that watches its parent.  They ignore Ctrl-C, as the workers of a
``LocalCluster`` do (its SIGINT reaches the whole process group): the parent handles it.
``mpvi run`` (:mod:`mpvi.repro.cli`) turns SIGTERM into an exception as Ctrl-C is, and on
either closes its executor with ``cancel=True``, which cancels the pending units and
terminates the pool's workers, or closes the Dask client and ``LocalCluster`` (no
"leaked semaphore" warnings); exit status 130 (Ctrl-C) or 143 (SIGTERM).  A scheduler
address is probed with a TCP connection first (:func:`probe_scheduler`): a refused port
fails at once, "connection refused".  A scheduler that goes away during the run, or a
cluster left without workers for :data:`WORKERLESS_S` seconds, raises
:class:`ExecutorLost` in the executor: :func:`run_parallel` stops with one line naming it
and fails the reproductions not finished; what finished is written (outputs, cache).

Dask is optional (``pip install -e '.[dask]'``) and imported only by
:class:`DaskExecutor`.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import importlib
import io as _io
import json
import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from mpvi.ground import io
from mpvi.numbers.context import get_context
from mpvi.repro.cache import DiskCache, TaskCache, key, plain
from mpvi.repro.declare import (DEFAULT_CONTEXT, Refused, Reproduction, default_out_dir,
                                output_paths)
from mpvi.repro.options import one_line
from mpvi.repro.records import carried_note, write_outputs
from mpvi.repro.run import CERTIFY_NEEDS_MP, check_context, render
from mpvi.repro.runtimes import Runtimes

DASK_MISSING = "install the dask extra: pip install -e '.[dask]'"

class ExecutorError(RuntimeError):
    """An executor cannot be started (Dask missing, scheduler unreachable)."""


class ExecutorLost(ExecutorError):
    """An executor went away during a run: its Dask scheduler is gone, or its cluster has had
    no worker for :data:`WORKERLESS_S` seconds.  :func:`run_parallel` ends the run with one
    line naming it; what finished before is kept."""


# ----- executors -----------------------------------------------------------------------------

class Executor:
    """Where the units run: ``submit(fn, *args)`` -> a future, ``wait(futures)`` -> the done
    ones (at least one), ``capacity()`` -> how many units can run at once, and
    ``close(cancel)``.  A process pool breaks when one of its worker processes dies:
    ``worker_died(exc)`` recognises the error and ``recover(future)`` starts a new pool."""

    description = ""

    def capacity(self):
        raise NotImplementedError

    def submit(self, fn, *args):
        raise NotImplementedError

    def wait(self, futures):
        raise NotImplementedError

    def worker_died(self, exc):
        return False

    def recover(self, future):
        """Nothing to do unless :meth:`worker_died` can be true."""

    def close(self, cancel=False):
        raise NotImplementedError


PARENT_POLL_S = 1.0
"""How often a pool worker checks that its parent lives, where Linux's PR_SET_PDEATHSIG
is not available."""

PR_SET_PDEATHSIG = 1
"""``prctl`` option (linux/prctl.h): the signal a process gets when its parent exits."""


def _killed_with_parent():
    """Ask Linux to SIGKILL this process when its parent exits
    (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, through libc); False if that is not available.
    The signal comes when the *thread* that started the process exits: the pool's
    workers are started by the thread that first submits to it (``mpvi run``'s main
    thread)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):             # no libc, or no prctl in it
        return False


def _watch_parent(parent_pid):
    """Exit this process as soon as its parent is no longer ``parent_pid`` (the parent died
    and the process was re-parented)."""
    while os.getppid() == parent_pid:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def _worker_init(parent_pid):
    """Initializer of the pool's worker processes.  A worker ignores SIGINT (Ctrl-C reaches
    the whole process group: the parent alone handles it, and terminates its workers),
    ends on SIGTERM (not through a handler inherited from the parent by fork), and dies
    with its parent ``parent_pid`` even when the parent is killed: PR_SET_PDEATHSIG on
    Linux, else a daemon thread polling the parent pid."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if not _killed_with_parent():
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    if os.getppid() != parent_pid:                # the parent died before we could ask
        os._exit(1)


class ProcessExecutor(Executor):
    """``jobs`` worker processes on this machine (``concurrent.futures``), children of this
    process that die with it (:func:`_worker_init`): when it is killed, or when it is
    interrupted or terminated and the caller closes the executor with ``cancel=True``
    (which terminates the workers at once), as ``mpvi run`` does."""

    def __init__(self, jobs):
        self.jobs = jobs
        self.description = f"a process pool of {jobs} worker(s)"
        self._pool = self._new_pool()
        self._generation = 0

    def _new_pool(self):
        """A pool of ``jobs`` workers, forked on Linux and spawned elsewhere (not started by a
        fork server, Python 3.14's default on Linux): either way children of this process,
        which :func:`_worker_init` checks."""
        context = multiprocessing.get_context(
            "fork" if sys.platform.startswith("linux") else "spawn")
        return concurrent.futures.ProcessPoolExecutor(
            self.jobs, mp_context=context, initializer=_worker_init, initargs=(os.getpid(),))

    def capacity(self):
        return self.jobs

    def submit(self, fn, *args):
        future = self._pool.submit(fn, *args)
        future.mpvi_generation = self._generation
        return future

    def wait(self, futures):
        done, _ = concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_COMPLETED)
        return done

    def worker_died(self, exc):
        return isinstance(exc, BrokenProcessPool)

    def recover(self, future):
        """After ``future`` failed because a worker process died: a new pool, unless one was
        already started since ``future`` was submitted (a broken pool fails all its
        futures, which may come back one by one)."""
        if future.mpvi_generation == self._generation:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            self._generation += 1

    def close(self, cancel=False):
        """Shut the pool down: wait for the running units, or (``cancel``: an error, Ctrl-C,
        SIGTERM) cancel the pending ones and terminate the workers now."""
        if not cancel:
            self._pool.shutdown(wait=True)
            return
        workers = list((self._pool._processes or {}).values())  # as 3.14's terminate_workers
        manager = self._pool._executor_manager_thread
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in workers:
            process.terminate()
        if manager is not None:
            # let the pool's manager thread finish (it closes its wake-up pipe): left running,
            # Python 3.11's exit handler can write to that pipe as it closes ("Exception
            # ignored ... Bad file descriptor" after Ctrl-C)
            manager.join(MANAGER_JOIN_S)


MANAGER_JOIN_S = 10.0
"""How long closing a cancelled process pool waits for its manager thread (it ends as soon
as the terminated workers are reaped)."""

SCHEDULER_PORT = 8786
"""The port of a Dask scheduler address that gives none."""

PROBE_TIMEOUT_S = 5.0
"""How long :func:`probe_scheduler` waits for a TCP connection."""


def probe_scheduler(address):
    """Connect to the host and port of a Dask scheduler ``address`` (``tcp://host:port``,
    ``host:port``, ``tls://...``) and close at once: raise :class:`ExecutorError` naming the
    cause (connection refused, unknown host, no answer) when that fails, rather than wait
    for Dask's connection timeout.  Addresses of other protocols are left to Dask."""
    # dask.distributed loaded lazily: optional (pip install mpvi[dask])
    from distributed.comm.addressing import parse_address, parse_host_port
    scheme, location = parse_address(address)
    if scheme not in ("tcp", "tls", "ws", "wss"):
        return
    host, port = parse_host_port(location, SCHEDULER_PORT)
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
        return
    except ConnectionRefusedError:
        cause = "connection refused"
    except socket.gaierror as exc:
        cause = f"unknown host {host} ({exc.strerror})"
    except TimeoutError:
        cause = f"no answer from {host}:{port} within {PROBE_TIMEOUT_S:g} s"
    except OSError as exc:
        cause = exc.strerror or one_line(exc)
    raise ExecutorError(f"cannot connect to the Dask scheduler {address}: {cause}")


@contextlib.contextmanager
def _sigint_ignored():
    """Ignore SIGINT in this block (in the main thread; elsewhere signals cannot be set): the
    worker processes Dask starts meanwhile inherit that, so that a Ctrl-C reaches only
    this process, which closes the cluster, and not the workers, which would print
    tracebacks."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


POLL_S = 1.0
"""How often :meth:`DaskExecutor.wait` looks at its cluster while no unit finishes."""

WORKERLESS_S = 20.0
"""How long a Dask run waits when its cluster has no worker left (all died, or all were
stopped) before it ends: Dask itself would wait for one for ever."""


class DaskExecutor(Executor):
    """A Dask distributed cluster: ``address`` of a running scheduler
    (``tcp://host:8786``; :func:`probe_scheduler` first), or ``"local"`` for a
    ``LocalCluster`` of ``jobs`` (default: the number of CPUs) single-threaded worker
    processes on this machine, which ignore Ctrl-C (they start under
    :func:`_sigint_ignored`, so a Ctrl-C during their start of a few seconds is ignored
    too).  Workers need mpvi and the reproduction packages installed
    (the same versions: a study is keyed on the source of the code that computes it).
    :meth:`close` closes the client and the LocalCluster; call it after an error or a
    signal too, or its processes and semaphores are left to Python's resource tracker,
    which warns about them.  The LocalCluster logs only critical messages: a unit that
    fails reaches :func:`run_parallel` as an exception (one line), and Dask's own
    errors are multi-line tracebacks of its shutdown races (a worker's heartbeat cut off
    by its closing, now and then on Ctrl-C); so does the client's logger while the
    executor is open (the client logs a traceback when it loses its scheduler).

    A scheduler that goes away (killed, its machine down) or a cluster left without workers
    for :data:`WORKERLESS_S` seconds makes :meth:`wait`, :meth:`submit` and
    :meth:`capacity` raise :class:`ExecutorLost` naming it, instead of Dask's
    ``FuturesCancelledError`` or a wait for ever."""

    def __init__(self, address, jobs=None):
        # Dask reschedules the work of a lost worker itself (worker_died stays False)
        try:
            # dask.distributed loaded lazily: optional (pip install mpvi[dask])
            import distributed
        except ImportError as exc:
            raise ExecutorError(f"--scheduler needs Dask: {DASK_MISSING} ({exc})") from None
        self._distributed = distributed
        self._cluster = self._client = None
        self._address = address
        self._workerless_since = None
        self._logger = logging.getLogger("distributed.client")
        self._log_level = self._logger.level
        self._logger.setLevel(logging.CRITICAL)
        try:
            if address == "local":
                n = jobs or os.cpu_count() or 1
                with _sigint_ignored():         # CRITICAL: see the class docstring
                    self._cluster = distributed.LocalCluster(
                        n_workers=n, threads_per_worker=1, processes=True,
                        dashboard_address=None, silence_logs=logging.CRITICAL)
                self._client = distributed.Client(self._cluster)
                self.description = f"a Dask LocalCluster of {n} worker process(es)"
            else:
                probe_scheduler(address)
                self._client = distributed.Client(address, timeout="30s")
                self.description = (f"the Dask scheduler {address} ({self.capacity()} worker "
                                    f"thread(s))")
        except BaseException as exc:
            self.close()
            if isinstance(exc, (OSError, TimeoutError)):
                raise ExecutorError(f"cannot connect to the Dask scheduler {address}: "
                                    f"{type(exc).__name__}: {one_line(exc)}") from None
            raise

    def _scheduler(self):
        return "the Dask LocalCluster" if self._address == "local" else \
            f"the Dask scheduler {self._address}"

    def _lost(self, cause):
        return ExecutorLost(f"{self._scheduler()} {cause}")

    def _nthreads(self):
        """The worker threads of the cluster now; :class:`ExecutorLost` if the scheduler
        cannot be asked."""
        if self._client.status != "running":
            raise self._lost(f"is gone (the client is {self._client.status})")
        try:
            return sum(self._client.nthreads().values())
        except (OSError, TimeoutError, self._distributed.comm.CommClosedError) as exc:
            raise self._lost(f"is gone ({type(exc).__name__}: {one_line(exc)})") from None

    def capacity(self):
        """The worker threads of the cluster now (workers may join or leave)."""
        return max(1, self._nthreads())

    def submit(self, fn, *args):
        if self._client.status != "running":
            raise self._lost(f"is gone (the client is {self._client.status})")
        return self._client.submit(fn, *args, pure=False)

    def wait(self, futures):
        """The done ones of ``futures`` (at least one), looking every :data:`POLL_S` seconds
        whether the scheduler is still there and has workers: :class:`ExecutorLost` when
        it is gone, or when it has had none for :data:`WORKERLESS_S` seconds."""
        futures = list(futures)
        while True:
            try:
                done = self._distributed.wait(futures, timeout=POLL_S,
                                              return_when="FIRST_COMPLETED").done
            except TimeoutError:
                done = ()
            except self._distributed.client.FuturesCancelledError:
                raise self._lost("is gone (the client lost its connection)") from None
            if any(f.status == "cancelled" for f in done):
                raise self._lost("is gone (it cancelled the running units)")
            if done:
                return set(done)
            if self._nthreads():
                self._workerless_since = None
            elif self._workerless_since is None:
                self._workerless_since = time.monotonic()
            elif time.monotonic() - self._workerless_since > WORKERLESS_S:
                raise self._lost(f"has had no worker for {WORKERLESS_S:g} s (all died or "
                                 f"were stopped)")

    def close(self, cancel=False):
        """Close the client (its futures are released: the cluster drops their units), then
        the LocalCluster this executor started, even if closing the client failed; a
        client whose scheduler has gone is closed without waiting for it.  A second call
        does nothing."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        try:
            if client is not None:
                client.close(timeout=PROBE_TIMEOUT_S if client.status != "running" else None)
        finally:
            try:
                if cluster is not None:
                    cluster.close()
            finally:
                self._logger.setLevel(self._log_level)


def make_executor(jobs=None, scheduler=None):
    """The executor of ``--jobs`` / ``--scheduler``: a :class:`DaskExecutor` if a scheduler
    is given (``jobs``: the workers of ``local``), else a :class:`ProcessExecutor`."""
    if scheduler is not None:
        return DaskExecutor(scheduler, jobs)
    return ProcessExecutor(jobs)


# ----- the units of work (run in worker processes) --------------------------------------------

def study_task(study, params, context, dps):
    """Compute ``study(params, ctx)`` in the context ``(context, dps)``, without a cache:
    its cache entry (:meth:`mpvi.repro.studies.Study.compute_entry`)."""
    return study.compute_entry(params, get_context(context, dps), stream=_io.StringIO())


def find_reproduction(module, rid):
    """The :class:`Reproduction` ``rid`` defined in ``module`` (imported if needed)."""
    mod = importlib.import_module(module)
    for obj in vars(mod).values():
        if isinstance(obj, Reproduction) and obj.id == rid:
            return obj
    raise LookupError(f"no reproduction {rid!r} in module {module}")


def reproduction_task(module, rid, params, context, dps, quick, prefetched, cache_dir,
                      check_digits=False, certify=False):
    """Compute and plot reproduction ``rid`` (:func:`mpvi.repro.render`) with ``params``
    in the context ``(context, dps)`` (and with ``check_digits``, again with more digits;
    with ``certify``, its certified computation runs here too, in the worker that
    computed it, after ``compute``: :func:`mpvi.repro.run.certified_block`).
    ``prefetched``: the entries of its studies (see :class:`mpvi.repro.cache.TaskCache`);
    ``cache_dir``: a cache directory to read other studies from (None: none).  Returns
    ``(rendered, new)``: the :class:`mpvi.repro.Rendered` and the ``(identity, entry)``
    pairs of the studies computed here, for the parent to store."""
    rep = find_reproduction(module, rid)
    cache = TaskCache(prefetched, DiskCache(cache_dir) if cache_dir is not None else None)
    rendered = render(rep, get_context(context, dps), params, quick, stream=_io.StringIO(),
                      cache=cache, check_digits=check_digits, certify=certify)
    return rendered, list(cache.new.values())


# ----- the driver ------------------------------------------------------------------------------

@dataclass
class _Job:
    """A study task: its Task, cache identity and key, the context it is computed in (and
    a label suffix naming that context if it is the one of --check-digits), the
    reproductions that need it, its state ('waiting', 'running', 'done', 'failed') and, once done, its cache entry."""

    task: object
    ident: dict
    key: str
    ctx: object
    suffix: str = ""
    needed_by: list = field(default_factory=list)
    state: str = "waiting"
    started: float = 0.0
    entry: dict | None = None
    from_cache: bool = False
    cache_file: str | None = None
    alone: bool = False

    @property
    def cost(self):
        return self.task.cost

    def label(self):
        return self.task.describe() + self.suffix


@dataclass
class _Rep:
    """A reproduction to compute: the keys of its study tasks and its cost hint."""

    rep: Reproduction
    keys: list
    cost: float
    state: str = "waiting"
    started: float = 0.0
    alone: bool = False

    def label(self):
        return self.rep.id


def reproduction_cost(rep, out_dir, quick, study_names, runtimes=None):
    """The expected wall time of ``rep``'s compute: the one recorded in its last JSON (in
    ``out_dir``, else in the default directory of full or quick runs) without the studies
    it computed that are now separate tasks (``study_names``), else its own computation
    as measured (:class:`mpvi.repro.runtimes.Runtimes`), else 0.  Only the order matters
    (:meth:`_ParallelRun.chain`)."""
    for d in (out_dir, default_out_dir(quick)):
        path = output_paths(rep, d)["json"]
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
            wall = float(rec["wall_time_s"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if bool(rec.get("quick")) != bool(quick):
            continue
        tasks = sum(float(s.get("wall_time_s", 0)) for s in rec.get("studies", [])
                    if not s.get("from_cache") and s.get("study") in study_names)
        return max(0.0, wall - tasks)
    entry = runtimes.entry(rep, quick) if runtimes is not None else None
    return entry["compute_s"] if entry else 0.0


def run_parallel(reps, ids, executor, context=DEFAULT_CONTEXT, dps=64, quick=False, out_dir=None,
                 cache=None, stream=None, on_progress=None, check_digits=False, verbosity=2,
                 certify=False):
    """Run the reproductions ``ids`` (of ``reps``: id -> Reproduction) on ``executor``
    (module docstring).  ``on_progress(finished, total, label, remaining=s, running=s)``
    is called once the run is planned and as units finish (a progress bar,
    :class:`mpvi.repro.progress.ProgressBar`; the estimate: :meth:`_ParallelRun.estimate`).  ``check_digits``: each reproduction also runs with more
    digits (:func:`mpvi.repro.render`), its studies in that context being further tasks.
    ``certify``: each reproduction's certified computation (``mpvi run --certify``) runs in
    the worker that computed it, right after it, so that its ``certified`` block is the
    one a serial run records; a float64 context refuses every id, as :func:`execute` does.
    ``verbosity`` (:data:`mpvi.repro.cli.VERBOSE`): 2 prints a line per finished unit on
    ``stream`` (stderr), 1 a start line and a line per finished reproduction, 0 only
    failures, refusals and a lost executor.  Returns ``(ran, refused, failed)``, lists of
    ids."""
    run = _ParallelRun(executor, context, dps, quick, out_dir, cache, stream, on_progress,
                       check_digits, verbosity, certify)
    run.plan(reps, ids)
    run.announce()
    run.report_progress("")                  # the total is known from the plan
    try:
        run.loop()
    except ExecutorLost as exc:          # one line; what finished is written
        run.stop(exc)
    if verbosity >= 2:
        run.say(f"parallel run: {run.finished} unit(s) in "
                f"{time.perf_counter() - run.t_start:.1f} s")
    return run.ran, run.refused, run.failed


class _ParallelRun:
    """The state of one :func:`run_parallel`: the study tasks (``jobs``, by cache key) and
    the reproductions (``todo``, by id), the futures ``running``, and the ``suspects``
    (units that were running when a worker process died, rerun one at a time)."""

    def __init__(self, executor, context, dps, quick, out_dir, cache, stream, on_progress,
                 check_digits, verbosity=2, certify=False):
        self.executor, self.context, self.dps, self.quick = executor, context, dps, quick
        self.out_dir = out_dir or default_out_dir(quick)
        self.cache, self.on_progress, self.check_digits = cache, on_progress, check_digits
        self.certify = certify
        self.stream = stream if stream is not None else sys.stderr
        self.ctx = get_context(context, dps)
        self.contexts = [self.ctx, check_context(self.ctx)] if check_digits else [self.ctx]
        self.ran, self.refused, self.failed = [], [], []
        self.jobs, self.todo = {}, {}
        self.running, self.suspects = {}, []      # future -> _Job or _Rep; see the class doc
        self.finished, self.total = 0, 0
        self.runtimes = Runtimes()    # the cost hints of reproductions never run here
        self.verbosity = verbosity

    def say(self, line):
        print(line, file=self.stream, flush=True)

    def fail(self, rid, message):
        if rid in self.todo and self.todo[rid].state in ("failed", "done"):
            return
        self.say(f"{rid}: error: {message}")
        self.failed.append(rid)
        if rid in self.todo:
            self.todo[rid].state = "failed"

    def plan(self, reps, ids):
        """Refusals, output directories, study tasks (deduplicated, from the cache)."""
        for rid in dict.fromkeys(ids):
            rep = reps[rid]
            reason = next(filter(None, (rep.refusal(c) for c in self.contexts)), None)
            if not reason and self.certify and not self.ctx.is_mp:
                reason = CERTIFY_NEEDS_MP
            if reason:
                self.say(str(Refused(rid, self.ctx.name, reason)))
                self.refused.append(rid)
                continue
            try:
                keys, names = self._tasks_of(rep)
            except Exception as exc:             # a broken declaration fails this id only
                self.fail(rid, f"{type(exc).__name__}: {one_line(exc)}")
                continue
            self.todo[rid] = _Rep(rep, keys, reproduction_cost(rep, self.out_dir, self.quick,
                                                               names, self.runtimes))

    def _tasks_of(self, rep):
        """The cache keys of ``rep``'s study tasks (made jobs, read from the cache if there)
        and the names of their studies."""
        if rep.module is None:
            raise LookupError("it has no module to import it from in a worker process "
                              "(reproductions are found through their entry points)")
        io.check_writable(output_paths(rep, self.out_dir)["dir"], "output directory")
        keys = []
        tasks = rep.declared_tasks(rep.parameters(self.quick))
        for task, c in ((t, c) for c in self.contexts for t in tasks):
            ident = task.study.identity(task.params, c)
            k = key(ident)
            if k not in self.jobs:
                job = self.jobs[k] = _Job(task, ident, k, c,
                                          "" if c is self.ctx else f" [{c.name}]")
                entry = self.cache.load(ident) if self.cache is not None else None
                if entry is not None:
                    job.entry, job.state = entry, "done"
                    job.from_cache, job.cache_file = True, str(self.cache.path(ident))
            self.jobs[k].needed_by.append(rep.id)
            keys.append(k)
        return keys, {t.study.name for t in tasks}

    def announce(self):
        waiting = [j for j in self.jobs.values() if j.state == "waiting"]
        self.total = len(waiting) + len(self.todo)
        if self.verbosity >= 1:
            self.say(f"running {len(self.todo)} reproduction(s) on {self.executor.description}: "
                 f"{len(waiting)} study task(s) first ({len(self.jobs) - len(waiting)} more "
                 f"from the cache)")
        self.commit = io.git_commit()
        self.cache_dir = str(self.cache.directory) if self.cache is not None else None
        self.t_start = time.perf_counter()

    def ready(self):
        """The units that can start, the head of the longest remaining chain first
        (:meth:`chain`)."""
        todo = self.todo
        units = [j for j in self.jobs.values() if j.state == "waiting" and
                 any(todo[r].state == "waiting" for r in j.needed_by if r in todo)]
        units += [r for r in todo.values() if r.state == "waiting" and
                  all(self.jobs[k].state == "done" for k in r.keys)]
        return sorted(units, key=lambda u: -self.chain(u))

    def chain(self, unit):
        """The expected seconds from ``unit``'s start to the end of what waits on it: a
        reproduction's cost, a study task's cost plus that of the costliest waiting
        reproduction that needs it (which starts, at the earliest, when it ends)."""
        if isinstance(unit, _Rep):
            return unit.cost
        after = [self.todo[r].cost for r in unit.needed_by
                 if r in self.todo and self.todo[r].state == "waiting"]
        return unit.cost + max(after, default=0.0)

    def start(self, unit):
        unit.state = "running"
        unit.started = time.perf_counter()
        unit.alone = bool(self.suspects)
        if isinstance(unit, _Job):
            future = self.executor.submit(study_task, unit.task.study, plain(unit.task.params),
                                          self.context, unit.ctx.dps)
        else:
            prefetched = {k: (self.jobs[k].entry, self.jobs[k].from_cache,
                              self.jobs[k].cache_file) for k in unit.keys}
            future = self.executor.submit(reproduction_task, unit.rep.module, unit.rep.id,
                                          unit.rep.parameters(self.quick), self.context,
                                          self.dps, self.quick, prefetched, self.cache_dir,
                                          self.check_digits, self.certify)
        self.running[future] = unit

    def progress(self, unit, text):
        """A unit finished: its line (``verbosity`` 2), or that of a finished reproduction
        (1)."""
        if self.verbosity >= 2:
            self.say(f"[{self.finished}/{self.total}] {unit.label()}: {text}")
        elif self.verbosity == 1 and isinstance(unit, _Rep) and unit.state == "done":
            self.say(f"{unit.label()}: {text}")
        self.report_progress(unit.label())

    def report_progress(self, label):
        if self.on_progress is not None:
            self.on_progress(self.finished, self.total, label, **self.estimate())

    def estimate(self):
        """The seconds left, from the cost hints of the units (a reproduction's: its
        recorded run time, :func:`reproduction_cost`; a study task's: its declared cost)
        spread over the workers: ``remaining``, the units not started, and ``running``,
        the most left of a running unit; both None if no unit has a cost."""
        todo = self.todo
        waiting = [j for j in self.jobs.values() if j.state == "waiting" and
                   any(todo[r].state == "waiting" for r in j.needed_by if r in todo)]
        waiting += [r for r in todo.values() if r.state == "waiting"]
        running = list(self.running.values())
        if not any(u.cost for u in waiting + running):
            return {"remaining": None, "running": None}
        now = time.perf_counter()
        workers = max(1, self.executor.capacity())
        return {"remaining": sum(u.cost for u in waiting) / workers,
                "running": max((max(0.0, u.cost - (now - u.started)) for u in running),
                               default=0.0)}

    def study_done(self, job, entry):
        entry["git_commit"] = self.commit
        job.entry, job.state = entry, "done"
        path = self.cache.store(job.ident, entry) if self.cache is not None else None
        job.cache_file = None if path is None else str(path)
        self.progress(job, f"{entry['wall_time_s']:.1f} s")

    def study_failed(self, job, exc):
        job.state = "failed"
        what = f"{type(exc).__name__}: {one_line(exc)}"
        self.progress(job, f"failed: {what}")
        for rid in job.needed_by:
            if rid in self.todo:
                self.fail(rid, f"its task {job.label()} (study {job.task.study.name}) failed: "
                               f"{what}")

    def reproduction_done(self, unit, result):
        rendered, new = result
        rep = unit.rep
        try:
            paths = write_outputs(rep, rendered, self.ctx, rep.parameters(self.quick),
                                  self.quick, self.out_dir,
                                  {"executor": self.executor.description})
        except Exception as exc:             # one line for this id, then the others
            self.progress(unit, "failed")
            self.fail(rep.id, f"{type(exc).__name__}: {one_line(exc)}")
            return
        if self.cache is not None:           # never fails: a cache it cannot write is skipped
            for ident, entry in new:
                self.cache.store(ident, entry)
        unit.state = "done"
        self.ran.append(rep.id)
        self.progress(unit, f"done {self.where_done(unit, rendered.wall_time_s)} -> {paths['dir']}"
                            f"{carried_note(paths['digits_check'])}")

    def where_done(self, unit, wall):
        """How long a finished reproduction took, and where its studies were computed:
        ``in 12.3 s`` (all in its own task), else e.g. ``in 0.4 s, from its 3 study
        task(s) of this run (41.2 s, shared with top2025_tab05)``, ``from 2 study
        result(s) of the cache`` -- never "in 0.0 s" for tables assembled from studies
        computed elsewhere."""
        jobs = [self.jobs[k] for k in dict.fromkeys(unit.keys)]
        if not jobs:
            return f"in {wall:.1f} s"
        here = [j for j in jobs if not j.from_cache]
        parts = []
        if here:
            others = sorted({r for j in here for r in j.needed_by} - {unit.rep.id})
            seconds = sum(float(j.entry.get("wall_time_s", 0)) for j in here if j.entry)
            parts.append(f"from its {len(here)} study task(s) of this run ({seconds:.1f} s"
                         + (f", shared with {', '.join(others)})" if others else ")"))
        if len(here) < len(jobs):
            parts.append(f"from {len(jobs) - len(here)} study result(s) of the cache")
        own = f"in {wall:.1f} s, " if round(wall, 1) else ""
        return own + " and ".join(parts)

    def loop(self):
        """Keep the workers busy until nothing is left to start or running."""
        while True:
            if self.suspects:                        # one at a time until they are cleared
                if not self.running:
                    self.start(self.suspects[0])
            else:
                free = max(0, self.executor.capacity() - len(self.running))
                for unit in self.ready()[:free]:
                    self.start(unit)
            if not self.running:
                return
            for future in self.executor.wait(set(self.running)):
                self.collect(future, self.running.pop(future))

    def collect(self, future, unit):
        """Take the result of a finished ``future`` of ``unit``."""
        try:                                  # a Dask result comes from its worker
            exc = future.exception()
            result = future.result() if exc is None else None
        except Exception as lost:            # e.g. cancelled by a lost Dask scheduler
            exc = lost
        if exc is not None and self.executor.worker_died(exc):
            self.executor.recover(future)
            if not unit.alone:
                self.say(f"{unit.label()}: its worker process died ({type(exc).__name__}); "
                         f"it is run again alone")
                unit.state = "waiting"
                self.suspects.append(unit)
                return
            exc = RuntimeError(f"its worker process died while it ran alone "
                               f"({type(exc).__name__}: {one_line(exc)})")
        if unit in self.suspects:
            self.suspects.remove(unit)
        self.finished += 1
        if isinstance(unit, _Job):
            if exc is None:
                self.study_done(unit, result)
            else:
                self.study_failed(unit, exc)
        elif exc is None:
            self.reproduction_done(unit, result)
        else:
            self.progress(unit, "failed")
            self.fail(unit.rep.id, f"{type(exc).__name__}: {one_line(exc)}")

    def stop(self, exc):
        """The executor is lost: fail what has not finished; what finished is kept."""
        left = [u.rep.id for u in self.todo.values() if u.state not in ("done", "failed")]
        self.say(f"{exc}: the run stops after {self.finished} of {self.total} unit(s), whose "
                 f"results are kept; not finished: {', '.join(left) or 'none'}")
        for rid in left:
            self.todo[rid].state = "failed"
            self.failed.append(rid)
