"""Numerical studies shared by the reproductions, as pure functions of their parameters.

Building blocks:

* tables of states (:func:`state_frame`, :func:`trajectory_frame`, :func:`exact_frame`);
* exact step counts (:func:`steps`: T/h as a ``Fraction``, refusing a fractional count);
* :class:`Recorder`: what a study computes with -- the context, progress lines, and
  :meth:`Recorder.solve`, which keeps every implicit run's Newton statistics;
* :func:`convergence_sweep` and :func:`convergence_rows`: errors of several methods over
  a list of steps, least-squares and successive orders.

Studies (:class:`Study`): functions of (parameters, context) only, called as
``study(params, ctx, cache=..., progress=...)``.  Their results go through the
lossless cache encoding of :mod:`mpvi.repro.cache` whether or not a cache is used, so a result
read from the cache is bit for bit the one computed.  They return a
:class:`StudyResult` (value, Newton statistics, wall time of the computation, whether it
came from the cache).  A study pickles by reference (its module and name), so that
``mpvi run --jobs N`` / ``--scheduler`` (:mod:`mpvi.repro.parallel`) can compute it in another
process: a reproduction declares the studies it will ask for as :class:`Task` objects.
A sweep (several spans, steps, methods) is one study per independent run, so that the
runs can be computed side by side; cheap code combines them afterwards.

The studies themselves belong to the reproduction packages (e.g.
``reproductions/_axioms2024.py``, ``reproductions/_top2025_pendulum.py``,
``reproductions/_top2025_top.py``): this module is the framework they are built with.
"""
from __future__ import annotations

import datetime
import functools
import importlib
import inspect
import sys
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pandas as pd

from mpvi.repro import cache as _cache
from mpvi.ground import io
from mpvi.analysis.measures import energy, fit_order, relative_energy_error
from mpvi.drive.solve import Progress, solve
from mpvi.methods import get_method

PROGRESS_STEPS = 5000
"""Runs of at least this many steps print a progress line now and then."""


# ----- tables ----------------------------------------------------------------------------

def numstr(ctx, x):
    """A number as a full-precision string (all ``ctx.dps`` digits)."""
    return ctx.to_str(x)


def state_frame(ctx, times, Q, P, method):
    """Long-format table: t, method, q1..qn, p1..pn (full-precision strings)."""
    data = {"t": [numstr(ctx, t) for t in times], "method": method}
    for name, X in (("q", Q), ("p", P)):
        for i in range(X.shape[1]):
            data[f"{name}{i + 1}"] = [numstr(ctx, x) for x in X[:, i]]
    return pd.DataFrame(data)


def trajectory_frame(sol, method=None):
    """The saved points of a :class:`mpvi.Solution` as a :func:`state_frame`."""
    return state_frame(sol.ctx, sol.t, sol.q, sol.p, method or sol.method)


def exact_frame(exact, times, ctx, method="exact"):
    """The exact solution sampled at ``times`` as a :func:`state_frame`."""
    return state_frame(ctx, times, exact.q(times), exact.p(times), method)


def uniform_times(ctx, T, k):
    """k + 1 equally spaced times on [0, T]."""
    return np.array([ctx.num(T) * j / k for j in range(k + 1)], dtype=ctx.dtype)


# ----- exact step counts, norms, orders ----------------------------------------------------

def fraction(x):
    """A time or step given exactly ('1/10', '1e-5', '10', 10 or a Fraction) as a Fraction;
    a float is refused (it is not the decimal it prints as)."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, bool) or not isinstance(x, (str, int, np.integer)):
        raise TypeError(f"give a time or step as a string, int or Fraction, not "
                        f"{type(x).__name__} {x!r}")
    try:
        return Fraction(str(x))
    except ValueError:
        raise ValueError(f"cannot read an exact number from {x!r}") from None


def steps(T, h):
    """The number of steps of size ``h`` in [0, T], computed exactly (see :func:`fraction`);
    also the stride between two nested grids (``steps(coarse_h, fine_h)``).  Raises
    ``ValueError`` if h does not divide T or either is not positive."""
    T_, h_ = fraction(T), fraction(h)
    if h_ <= 0 or T_ <= 0:
        raise ValueError(f"T = {T} and h = {h} must be positive")
    n = T_ / h_
    if n.denominator != 1:
        raise ValueError(f"T = {T} is not a whole number of steps h = {h} (T/h = {n})")
    return int(n)


def sup_norm(values):
    """max |x| over a sequence."""
    return max(abs(v) for v in values)


def successive_orders(ctx, errors, factor=2):
    """alpha_k = log_factor(e_k / e_{k+1}) for step sizes divided by ``factor``."""
    lf = ctx.log(ctx.num(factor))
    return [ctx.log(e0 / e1) / lf for e0, e1 in zip(errors[:-1], errors[1:])]


def energy_error(system, sol):
    """Signed relative energy error e_H = (H_n - H_0)/H_0 at every saved point of a
    :class:`mpvi.Solution`."""
    H = energy(system, sol)
    return np.array([(x - H[0]) / H[0] for x in H], dtype=sol.ctx.dtype)


def energy_error_norm(system, sol):
    """||e_H||_inf = sup_n |H_n - H_0| / |H_0|."""
    return max(relative_energy_error(system, sol))


# ----- the recorder and studies ------------------------------------------------------------

class Recorder:
    """What a study computes with: the context ``ctx``, :meth:`progress` lines and
    :meth:`solve`, which records the Newton statistics of every implicit run in
    ``newton`` (a list of ``(method, sol.stats["newton"])``)."""

    def __init__(self, ctx, progress=None, stream=None):
        self.ctx = ctx
        self.stream = stream if stream is not None else sys.stderr
        self._progress = progress
        self.newton = []

    def progress(self, message):
        if self._progress is not None:
            self._progress(message)

    def solve(self, problem, method, **options):
        """:func:`mpvi.solve` with a progress line now and then for long runs, keeping the
        run's Newton statistics."""
        name = getattr(method, "name", method)
        n = options.get("n")
        if n is not None and n >= PROGRESS_STEPS and "progress" not in options:
            options["progress"] = Progress(f"{name} n={n}", self.stream)
        try:
            sol = solve(problem, method, **options)
        except ArithmeticError as exc:          # a failed step: keep the statistics of the
            part = getattr(exc, "solution", None)   # steps before it
            if part is not None:
                self.record_newton(part.method, part.stats.get("newton"))
            raise
        self.record_newton(sol.method, sol.stats.get("newton"))
        return sol

    def record_newton(self, scheme, summary):
        """Keep one run's Newton summary (runs without Newton solves are skipped)."""
        if summary and summary.get("solves"):
            self.newton.append((scheme, dict(summary)))


@dataclass
class StudyResult:
    """A study's ``value`` with how it was obtained: the Newton statistics of its runs,
    the wall time, UTC date and git commit of the computation (of the original one when
    the value came from the cache), ``from_cache`` and the cache file (None without a
    cache)."""

    name: str
    value: object
    newton: list = field(default_factory=list)
    wall_time_s: float = 0
    computed_utc: str = ""
    from_cache: bool = False
    cache_file: str | None = None
    git_commit: str = ""

    def provenance(self):
        return {"study": self.name, "from_cache": self.from_cache,
                "wall_time_s": round(self.wall_time_s, 3), "computed_utc": self.computed_utc,
                "computed_at_commit": self.git_commit, "cache_file": self.cache_file}


class Study:
    """A pure function of (parameters, context), cached on disk.

    ``compute(recorder, params)`` does the work; call the study as
    ``study(params, ctx, cache=None, progress=None, stream=None)``.  ``params`` must be
    JSON data (strings, ints, lists, dicts); ``cache`` is a :class:`mpvi.repro.cache.DiskCache`
    (or any object with its ``load``, ``store`` and ``origin``) or None.  The value is
    always passed through the lossless cache encoding, so a cached and a computed result
    are identical.  A study pickles by reference (module and name of ``compute``), so it
    must be defined at the top level of an importable module to be computed in another
    process."""

    def __init__(self, name, compute):
        self.name = name
        self.compute = compute
        functools.update_wrapper(self, compute)

    def __repr__(self):
        return f"<study {self.name}>"

    def __reduce__(self):
        return (study_by_reference, (self.compute.__module__, self.compute.__qualname__,
                                     self.name))

    def identity(self, params, ctx):
        """The cache identity of ``study(params, ctx)`` (:func:`mpvi.repro.cache.identity`)."""
        return _cache.identity(self.name, params, ctx, inspect.getsourcefile(self.compute))

    def __call__(self, params, ctx, *, cache=None, progress=None, stream=None):
        ident = self.identity(params, ctx)
        say = progress or (lambda message: None)
        if cache is not None:
            hit = self._load(cache, ident, ctx)
            if hit is not None:
                origin = "from the cache" if hit.from_cache else "computed by a parallel task,"
                say(f"{self.name}: {origin} {hit.cache_file or ''} (computed "
                    f"{hit.computed_utc} in {hit.wall_time_s:.1f} s)")
                return hit
        entry = self.compute_entry(ident["parameters"], ctx, progress, stream)
        entry["git_commit"] = io.git_commit()
        path = cache.store(ident, entry) if cache is not None else None
        return self.result(ctx, entry, False, None if path is None else str(path))

    def compute_entry(self, params, ctx, progress=None, stream=None):
        """Compute the study, without any cache: its cache entry without the git commit
        (``computed_utc``, ``wall_time_s``, ``newton``, and ``value`` in the lossless
        encoding), JSON data that can be sent between processes.  ``params`` must be in
        the form of the cache identity (:func:`mpvi.repro.cache.plain`)."""
        rec = Recorder(ctx, progress, stream)
        created = _utc_now()
        t0 = time.perf_counter()
        with ctx.active():            # the study's own arithmetic at the context's precision
            value = self.compute(rec, params)
        wall = time.perf_counter() - t0
        return {"computed_utc": created, "wall_time_s": wall, "newton": rec.newton,
                "value": _cache.encode(ctx, value, self.name)}

    def result(self, ctx, entry, from_cache, cache_file):
        """The :class:`StudyResult` of a cache entry (decoded in ``ctx``); raises
        :class:`mpvi.repro.cache.CacheError` on a value that does not decode, ``KeyError``,
        ``TypeError`` or ``ValueError`` on malformed metadata."""
        value = _cache.decode(ctx, entry["value"])
        newton = [(scheme, dict(summary)) for scheme, summary in entry["newton"]]
        return StudyResult(self.name, value, newton, float(entry["wall_time_s"]),
                           str(entry["computed_utc"]), from_cache, cache_file,
                           str(entry.get("git_commit", "")))

    def _load(self, cache, ident, ctx):
        entry = cache.load(ident)
        if entry is None:
            return None
        from_cache, where = cache.origin(ident)
        try:
            return self.result(ctx, entry, from_cache, where)
        except _cache.CacheError as exc:       # a bad entry: reported, recomputed, replaced
            _cache.bad_entry(where, str(exc))
        except (KeyError, TypeError, ValueError) as exc:
            _cache.bad_entry(where, f"malformed metadata ({type(exc).__name__}: {exc})")
        return None


def study_by_reference(module, qualname, name):
    """The study ``name`` defined as ``qualname`` in ``module`` (how a pickled
    :class:`Study` is found again in another process)."""
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, Study) or obj.name != name:
        raise LookupError(f"study {name!r}: {module}.{qualname} is not that study (a study "
                          f"computed in another process must be defined at the top level "
                          f"of an importable module)")
    return obj


def study(name):
    """Decorator: ``@study("name")`` turns ``compute(recorder, params)`` into a
    :class:`Study`."""
    return lambda compute: Study(name, compute)


@dataclass(frozen=True)
class Task:
    """One study a reproduction will ask for, ``study(params, ctx)``, declared before
    ``compute`` runs (``Reproduction.tasks``) so that ``mpvi run --jobs N`` can compute
    the independent studies side by side.  ``label`` names the task in progress lines and
    errors (default: the study's name and parameters); ``cost`` estimates its run time
    in seconds at 64 digits on one core (only the order matters: the longest tasks are
    started first)."""

    study: Study
    params: dict
    label: str = ""
    cost: float = 0

    def describe(self):
        if self.label:
            return self.label
        shown = " ".join(f"{k}={v}" for k, v in self.params.items()
                         if isinstance(v, (str, int)) and len(str(v)) <= 12)
        return f"{self.study.name} {shown}".strip()


def _utc_now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


# ----- convergence sweeps --------------------------------------------------------------------

def convergence_sweep(rec, problem, methods, grid, measure, reference=None, label="", unit=""):
    """Errors of every method at every step of ``grid`` (a list of (h, n): n steps of
    size h) on ``problem`` (a :class:`mpvi.Problem`).

    ``measure(sol, ref)`` returns ``{variable: error}``; ``reference(h, n)``, if given,
    is evaluated once per step and handed to ``measure`` for every method (e.g. an exact
    solution on the nodes).  Returns ``{(method, variable): [error per grid step]}``."""
    for m in methods:
        get_method(m)          # fail on an unknown name before any work is done
    errs = {}
    for h, n in grid:
        ref = reference(h, n) if reference is not None else None
        for m in methods:
            rec.progress(f"{label}{m}: N = {n}, h = {rec.ctx.to_str(h, 6)}{unit}")
            sol = rec.solve(problem, m, h=h, n=n)
            for v, e in measure(sol, ref).items():
                errs.setdefault((m, v), []).append(e)
    return errs


def convergence_rows(ctx, methods, variables, grid, errs):
    """Rows ``{method, variable, N, h, error, order_step, order}`` of a
    :func:`convergence_sweep`, per method and variable in grid order: ``order`` is the
    least-squares slope of log e against log h over the grid (None for a single step),
    ``order_step`` the slope log(e_{i-1}/e_i) / log(h_{i-1}/h_i) against the previous
    step (None for the first)."""
    rows = []
    hs = [h for h, _ in grid]
    for m in methods:
        for v in variables:
            e = errs[(m, v)]
            order = fit_order(ctx, hs, e) if len(grid) > 1 else None
            for i, ((h, n), err) in enumerate(zip(grid, e)):
                step = None if i == 0 else ctx.log(e[i - 1] / err) / ctx.log(hs[i - 1] / h)
                rows.append({"method": m, "variable": v, "N": n, "h": h, "error": err,
                             "order_step": step, "order": order})
    return rows
