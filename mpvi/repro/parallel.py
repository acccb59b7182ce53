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
worker is free it starts the most expensive ready unit (the tasks' ``cost`` hints; a
reproduction's cost is the wall time its last JSON recorded, else its ``runtime`` text).  A reproduction becomes
ready when all its study tasks are done.  The parent process alone writes files: the
results of study tasks go into the cache, the outputs of reproduction tasks are written
by :func:`mpvi.repro.write_outputs` -- so a remote Dask worker needs no shared disk, and
the files are the bytes a serial run writes.  Contexts are never sent between
processes: a worker rebuilds its context from ``(context name, digits)``.

Progress: one line per finished unit on stderr (``[3/57] top_long_run T=100 t_bar simpson
h=t_bar/40: 41.2 s``).  A failing study task is reported with its label and study, and
the reproductions that need it fail with that message; the others go on, as in a
serial run.  A worker process that dies (a crash, an out-of-memory kill) breaks a
process pool, failing every unit running on it: the pool is restarted and those units are
run again one at a time, so that the one that kills its worker when it runs alone fails
and the others complete.

Dask is optional (``pip install -e '.[dask]'``) and imported only by
:class:`DaskExecutor`.
"""
from __future__ import annotations

import concurrent.futures
import importlib
import io as _io
import json
import os
import re
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from .. import io
from .cache import DiskCache, TaskCache, key, plain
from ..context import get_context
from .run import (DEFAULT_CONTEXT, Refused, Reproduction, default_out_dir, one_line,
                    output_paths, render,
                    write_outputs)

DASK_MISSING = "install the dask extra: pip install -e '.[dask]'"

class ExecutorError(RuntimeError):
    """An executor cannot be started (Dask missing, scheduler unreachable)."""


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


class ProcessExecutor(Executor):
    """``jobs`` worker processes on this machine (``concurrent.futures``)."""

    def __init__(self, jobs):
        self.jobs = jobs
        self.description = f"a process pool of {jobs} worker(s)"
        self._pool = concurrent.futures.ProcessPoolExecutor(jobs)
        self._generation = 0

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
            self._pool = concurrent.futures.ProcessPoolExecutor(self.jobs)
            self._generation += 1

    def close(self, cancel=False):
        self._pool.shutdown(wait=not cancel, cancel_futures=cancel)


class DaskExecutor(Executor):
    """A Dask distributed cluster: ``address`` of a running scheduler
    (``tcp://host:8786``), or ``"local"`` for a ``LocalCluster`` of ``jobs`` (default: the
    number of CPUs) single-threaded worker processes on this machine.  Workers need mpvi
    and the reproduction packages installed (the same versions: a study is keyed on the
    source of the code that computes it)."""

    def __init__(self, address, jobs=None):
        # Dask reschedules the work of a lost worker itself (worker_died stays False)
        try:
            import distributed
        except ImportError as exc:
            raise ExecutorError(f"--scheduler needs Dask: {DASK_MISSING} ({exc})") from None
        self._distributed = distributed
        self._cluster = None
        try:
            if address == "local":
                n = jobs or os.cpu_count() or 1
                import logging
                self._cluster = distributed.LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                    silence_logs=logging.ERROR)
                self._client = distributed.Client(self._cluster)
                self.description = f"a Dask LocalCluster of {n} worker process(es)"
            else:
                self._client = distributed.Client(address, timeout="30s")
                self.description = (f"the Dask scheduler {address} ({self.capacity()} worker "
                                    f"thread(s))")
        except (OSError, TimeoutError) as exc:
            self.close()
            raise ExecutorError(f"cannot connect to the Dask scheduler {address}: "
                                f"{type(exc).__name__}: {one_line(exc)}") from None

    def capacity(self):
        """The worker threads of the cluster now (workers may join or leave)."""
        return max(1, sum(self._client.nthreads().values()))

    def submit(self, fn, *args):
        return self._client.submit(fn, *args, pure=False)

    def wait(self, futures):
        return set(self._distributed.wait(list(futures), return_when="FIRST_COMPLETED").done)

    def close(self, cancel=False):
        for obj in (getattr(self, "_client", None), self._cluster):
            if obj is not None:
                obj.close()


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


def reproduction_task(module, rid, params, context, dps, quick, prefetched, cache_dir):
    """Compute and plot reproduction ``rid`` (:func:`mpvi.repro.render`) with ``params``
    in the context ``(context, dps)``.  ``prefetched``: the entries of its studies (see
    :class:`mpvi.repro.cache.TaskCache`); ``cache_dir``: a cache directory to read other
    studies from (None: none).  Returns ``(rendered, new)``: the
    :class:`mpvi.repro.Rendered` and the ``(identity, entry)`` pairs of the studies
    computed here, for the parent to store."""
    rep = find_reproduction(module, rid)
    cache = TaskCache(prefetched, DiskCache(cache_dir) if cache_dir is not None else None)
    rendered = render(rep, get_context(context, dps), params, quick, stream=_io.StringIO(),
                      cache=cache)
    return rendered, list(cache.new.values())


# ----- the driver ------------------------------------------------------------------------------

@dataclass
class _Job:
    """A study task: its Task, cache identity and key, the reproductions that need it, its
    state ('waiting', 'running', 'done', 'failed') and, once done, its cache entry."""

    task: object
    ident: dict
    key: str
    needed_by: list = field(default_factory=list)
    state: str = "waiting"
    entry: dict | None = None
    from_cache: bool = False
    cache_file: str | None = None
    alone: bool = False

    @property
    def cost(self):
        return self.task.cost

    def label(self):
        return self.task.describe()


@dataclass
class _Rep:
    """A reproduction to compute: the keys of its study tasks and its cost hint."""

    rep: Reproduction
    keys: list
    cost: float
    state: str = "waiting"
    alone: bool = False

    def label(self):
        return self.rep.id


_RUNTIME = re.compile(r"~\s*([0-9.]+)\s*(s|min)\b")
_QUICK_RUNTIME = re.compile(r"quick:?\s*~\s*([0-9.]+)\s*(s|min)\b")


def runtime_hint(text, quick):
    """Seconds from a reproduction's ``runtime`` text ('~2.5 min (quick ~15 s)'): the quick
    figure for a quick run if there is one, else the first figure; 0 if none."""
    m = (quick and _QUICK_RUNTIME.search(text)) or _RUNTIME.search(text)
    if not m:
        return 0.0
    return float(m.group(1)) * (60 if m.group(2) == "min" else 1)


def reproduction_cost(rep, out_dir, quick, study_names):
    """The expected wall time of ``rep``'s compute: the one recorded in its last JSON (in
    ``out_dir``, else in the default directory of full or quick runs) without the studies
    it computed that are now separate tasks (``study_names``), else
    :func:`runtime_hint`.  Only the order matters (the longest starts first)."""
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
    return runtime_hint(rep.runtime, quick)


def run_parallel(reps, ids, executor, context=DEFAULT_CONTEXT, dps=64, quick=False, out_dir=None,
                 cache=None, stream=None, on_progress=None):
    """Run the reproductions ``ids`` (of ``reps``: id -> Reproduction) on ``executor``
    (module docstring).  ``on_progress(finished, total, label)`` is called as units
    finish (a progress bar).  Returns ``(ran, refused, failed)``, lists of ids."""
    stream = stream if stream is not None else sys.stderr
    out_dir = out_dir or default_out_dir(quick)
    ctx = get_context(context, dps)
    ran, refused, failed = [], [], []
    jobs, todo = {}, {}

    def say(line):
        print(line, file=stream, flush=True)

    def fail(rid, message):
        if rid in todo and todo[rid].state in ("failed", "done"):
            return
        say(f"{rid}: error: {message}")
        failed.append(rid)
        if rid in todo:
            todo[rid].state = "failed"

    # plan: refusals, output directories, study tasks (deduplicated, from the cache)
    for rid in dict.fromkeys(ids):
        rep = reps[rid]
        reason = rep.refusal(ctx)
        if reason:
            say(str(Refused(rid, ctx.name, reason)))
            refused.append(rid)
            continue
        try:
            if rep.module is None:
                raise LookupError("it has no module to import it from in a worker process "
                                  "(reproductions are found through their entry points)")
            io.check_writable(output_paths(rep, out_dir)["dir"], "output directory")
            keys = []
            tasks = rep.declared_tasks(rep.parameters(quick))
            for task in tasks:
                ident = task.study.identity(task.params, ctx)
                k = key(ident)
                if k not in jobs:
                    jobs[k] = _Job(task, ident, k)
                    entry = cache.load(ident) if cache is not None else None
                    if entry is not None:
                        jobs[k].entry, jobs[k].state = entry, "done"
                        jobs[k].from_cache, jobs[k].cache_file = True, str(cache.path(ident))
                jobs[k].needed_by.append(rid)
                keys.append(k)
        except Exception as exc:             # a broken declaration fails this id only
            fail(rid, f"{type(exc).__name__}: {one_line(exc)}")
            continue
        names = {t.study.name for t in tasks}
        todo[rid] = _Rep(rep, keys, reproduction_cost(rep, out_dir, quick, names))

    waiting = [j for j in jobs.values() if j.state == "waiting"]
    total = len(waiting) + len(todo)
    say(f"running {len(todo)} reproduction(s) on {executor.description}: {len(waiting)} study "
        f"task(s) first ({len(jobs) - len(waiting)} more from the cache)")
    commit = io.git_commit()
    cache_dir = str(cache.directory) if cache is not None else None
    running = {}                  # future -> _Job or _Rep
    suspects = []                 # units that were running when a worker process died
    finished = 0
    t_start = time.perf_counter()

    def ready():
        units = [j for j in jobs.values() if j.state == "waiting" and
                 any(todo[r].state == "waiting" for r in j.needed_by if r in todo)]
        units += [r for r in todo.values() if r.state == "waiting" and
                  all(jobs[k].state == "done" for k in r.keys)]
        return sorted(units, key=lambda u: -u.cost)

    def start(unit):
        unit.state = "running"
        unit.alone = bool(suspects)
        if isinstance(unit, _Job):
            future = executor.submit(study_task, unit.task.study, plain(unit.task.params),
                                     context, dps)
        else:
            prefetched = {k: (jobs[k].entry, jobs[k].from_cache, jobs[k].cache_file)
                          for k in unit.keys}
            future = executor.submit(reproduction_task, unit.rep.module, unit.rep.id,
                                     unit.rep.parameters(quick), context, dps, quick,
                                     prefetched, cache_dir)
        running[future] = unit

    def progress(unit, text):
        say(f"[{finished}/{total}] {unit.label()}: {text}")
        if on_progress is not None:
            on_progress(finished, total, unit.label())

    def study_done(job, entry):
        entry["git_commit"] = commit
        job.entry, job.state = entry, "done"
        if cache is not None:
            job.cache_file = str(cache.store(job.ident, entry))
        progress(job, f"{entry['wall_time_s']:.1f} s")

    def study_failed(job, exc):
        job.state = "failed"
        what = f"{type(exc).__name__}: {one_line(exc)}"
        progress(job, f"failed: {what}")
        for rid in job.needed_by:
            if rid in todo:
                fail(rid, f"its task {job.label()} (study {job.task.study.name}) failed: {what}")

    def reproduction_done(unit, result):
        rendered, new = result
        rep = unit.rep
        try:
            paths = write_outputs(rep, rendered, ctx, rep.parameters(quick), quick, out_dir,
                                  {"executor": executor.description})
            if cache is not None:
                for ident, entry in new:
                    cache.store(ident, entry)
        except Exception as exc:             # one line for this id, then the others
            progress(unit, "failed")
            fail(rep.id, f"{type(exc).__name__}: {one_line(exc)}")
            return
        unit.state = "done"
        ran.append(rep.id)
        progress(unit, f"{rendered.wall_time_s:.1f} s -> {paths['dir']}")

    while True:
        if suspects:                             # one at a time until they are cleared
            if not running:
                start(suspects[0])
        else:
            for unit in ready()[:max(0, executor.capacity() - len(running))]:
                start(unit)
        if not running:
            break
        for future in executor.wait(set(running)):
            unit = running.pop(future)
            try:
                exc = future.exception()
            except Exception as lost:            # e.g. cancelled by a lost Dask scheduler
                exc = lost
            if exc is not None and executor.worker_died(exc):
                executor.recover(future)
                if not unit.alone:
                    say(f"{unit.label()}: its worker process died ({type(exc).__name__}); "
                        f"it is run again alone")
                    unit.state = "waiting"
                    suspects.append(unit)
                    continue
                exc = RuntimeError(f"its worker process died while it ran alone "
                                   f"({type(exc).__name__}: {one_line(exc)})")
            if unit in suspects:
                suspects.remove(unit)
            finished += 1
            if isinstance(unit, _Job):
                if exc is None:
                    study_done(unit, future.result())
                else:
                    study_failed(unit, exc)
            elif exc is None:
                reproduction_done(unit, future.result())
            else:
                progress(unit, "failed")
                fail(unit.rep.id, f"{type(exc).__name__}: {one_line(exc)}")
    say(f"parallel run: {finished} unit(s) in {time.perf_counter() - t_start:.1f} s")
    return ran, refused, failed
