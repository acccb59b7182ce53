"""Numerical studies shared by the reproductions, as pure functions of their parameters.

Building blocks:

* tables of states (:func:`state_frame`, :func:`trajectory_frame`, :func:`exact_frame`);
* exact step counts (:func:`steps`: T/h as a ``Fraction``, refusing a fractional count);
* :class:`Recorder`: what a study computes with -- the context, progress lines, and
  :meth:`Recorder.integrate`, which keeps every implicit run's Newton statistics;
* :func:`convergence_sweep` and :func:`convergence_rows`: errors of several methods over
  a list of steps, least-squares and successive orders.

Studies (:class:`Study`): functions of (parameters, context) only, called as
``study(params, ctx, cache=..., progress=...)``.  Their results go through the
lossless cache encoding of :mod:`mpvi.cache` whether or not a cache is used, so a result
read from the cache is bit for bit the one computed.  They return a
:class:`StudyResult` (value, Newton statistics, wall time of the computation, whether it
came from the cache).  A study pickles by reference (its module and name), so that
``mpvi run --jobs N`` / ``--scheduler`` (:mod:`mpvi.parallel`) can compute it in another
process: a reproduction declares the studies it will ask for as :class:`Task` objects.
A sweep (several spans, steps, methods) is one study per independent run, so that the
runs can be computed side by side; cheap code combines them afterwards.

* :data:`linear_pendulum_convergence` -- axioms2024 Table 1 problem against its exact
  solution (Fig. 8), and :data:`linear_pendulum_errors`, one step size of it (Table 2);
* :data:`pendulum_energy_error` -- ||e_H||_inf of the nonlinear double pendulum of
  top2025, one method, span and step (Fig. 4, Table 2);
* :data:`pendulum_reference` -- the GBS and RK4 references of top2025 Figs. 2-3;
* :data:`top_long_run` -- the Table 3 top over up to 1000 nutation periods, one method and
  step (top2025 Tables 4-5).
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

from . import cache as _cache
from . import io
from .analysis import energy, fit_order, node_errors, relative_energy_error, sup_errors
from .context import MPContext, fp
from .integrate import Progress, integrate
from .schemes import get_scheme
from .systems.double_pendulum import linearized_double_pendulum, nonlinear_double_pendulum
from .systems.lagrange_top import table3_top

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


def trajectory_frame(traj, method=None):
    """The nodes of a trajectory as a :func:`state_frame`."""
    return state_frame(traj.ctx, traj.t, traj.q, traj.p, method or traj.scheme)


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


def energy_error(system, traj):
    """Signed relative energy error e_H = (H_n - H_0)/H_0 at every node."""
    H = energy(system, traj)
    return np.array([(x - H[0]) / H[0] for x in H], dtype=traj.ctx.dtype)


def energy_error_norm(system, traj):
    """||e_H||_inf = sup_n |H_n - H_0| / |H_0|."""
    return max(relative_energy_error(system, traj))


# ----- the recorder and studies ------------------------------------------------------------

class Recorder:
    """What a study computes with: the context ``ctx``, :meth:`progress` lines and
    :meth:`integrate`, which records the Newton statistics of every implicit run in
    ``newton`` (a list of ``(scheme, traj.stats["newton"])``)."""

    def __init__(self, ctx, progress=None, stream=None):
        self.ctx = ctx
        self.stream = stream if stream is not None else sys.stderr
        self._progress = progress
        self.newton = []

    def progress(self, message):
        if self._progress is not None:
            self._progress(message)

    def integrate(self, system, scheme, q0, p0, h, n, **options):
        """:func:`mpvi.integrate` in this context, with a progress bar for long runs."""
        name = getattr(scheme, "name", scheme)
        bar = Progress(f"{name} n={n}", n, self.stream) if n >= PROGRESS_STEPS else None
        traj = integrate(system, scheme, q0, p0, h, n, self.ctx, progress=bar, **options)
        self.record_newton(traj.scheme, traj.stats.get("newton"))
        return traj

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
    JSON data (strings, ints, lists, dicts); ``cache`` is a :class:`mpvi.cache.DiskCache`
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
        """The cache identity of ``study(params, ctx)`` (:func:`mpvi.cache.identity`)."""
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
        the form of the cache identity (:func:`mpvi.cache.plain`)."""
        rec = Recorder(ctx, progress, stream)
        created = _utc_now()
        t0 = time.perf_counter()
        value = self.compute(rec, params)
        wall = time.perf_counter() - t0
        return {"computed_utc": created, "wall_time_s": wall, "newton": rec.newton,
                "value": _cache.encode(ctx, value, self.name)}

    def result(self, ctx, entry, from_cache, cache_file):
        """The :class:`StudyResult` of a cache entry (decoded in ``ctx``); raises
        ``KeyError``, ``TypeError`` or ``ValueError`` on a malformed entry."""
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
        except (KeyError, TypeError, ValueError):
            return None          # a damaged entry is a miss: recomputed and replaced


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

def convergence_sweep(rec, system, q0, p0, methods, grid, measure, reference=None, label="",
                      unit=""):
    """Errors of every method at every step of ``grid`` (a list of (h, n): n steps of
    size h from (q0, p0)).

    ``measure(traj, ref)`` returns ``{variable: error}``; ``reference(h, n)``, if given,
    is evaluated once per step and handed to ``measure`` for every method (e.g. an exact
    solution on the nodes).  Returns ``{(method, variable): [error per grid step]}``."""
    for m in methods:
        get_scheme(m)          # fail on an unknown name before any work is done
    errs = {}
    for h, n in grid:
        ref = reference(h, n) if reference is not None else None
        for m in methods:
            rec.progress(f"{label}{m}: N = {n}, h = {rec.ctx.to_str(h, 6)}{unit}")
            traj = rec.integrate(system, m, q0, p0, h, n)
            for v, e in measure(traj, ref).items():
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


def linear_pendulum_grid(ctx, prob, T_tbar, N):
    """The step (h, n) of ``n = N`` steps over T = ``T_tbar`` t_bar on axioms2024's
    linearized double pendulum ``prob``."""
    T = ctx.num(T_tbar) * prob.tbar
    return ctx.num(T) / N, N


def _linear_pendulum_sweep(rec, params, grid_Ns):
    """:func:`convergence_sweep` of axioms2024's linearized double pendulum against its
    exact solution: ``{(method, variable): [error per N]}`` for variables p and q."""
    ctx = rec.ctx
    prob = linearized_double_pendulum(ctx)
    exact = prob.exact()
    grid = [linear_pendulum_grid(ctx, prob, params["T_tbar"], N) for N in grid_Ns]

    def reference(h, n):
        t = np.array([j * h for j in range(n + 1)], dtype=ctx.dtype)
        return exact.q(t), exact.p(t)

    def measure(traj, ref):
        e = sup_errors(traj, *ref)
        return {"p": e["p"], "q": e["q"]}

    errs = convergence_sweep(rec, prob.system, prob.q0, prob.p0, params["methods"], grid,
                             measure, reference, label=f"T = {params['T_tbar']} t_bar, ")
    return grid, errs


@study("linear_pendulum_convergence")
def linear_pendulum_convergence(rec, params):
    """axioms2024's linearized double pendulum (Table 1) against its exact solution:
    ||e||_inf = max_j |x_j - x_ex(t_j)|_2 for x = p, q, every method in
    ``params["methods"]`` and N in ``params["N"]`` steps over T = ``params["T_tbar"]``
    t_bar; :func:`convergence_rows` (h in seconds)."""
    grid, errs = _linear_pendulum_sweep(rec, params, params["N"])
    return convergence_rows(rec.ctx, params["methods"], ["p", "q"], grid, errs)


@study("linear_pendulum_errors")
def linear_pendulum_errors(rec, params):
    """One step size of :data:`linear_pendulum_convergence`: ``{method: {"p": e, "q":
    e}}`` for N = ``params["N"]`` steps over T = ``params["T_tbar"]`` t_bar (the exact
    solution on the nodes is computed once for all methods).  :func:`convergence_rows`
    of several of them is :data:`linear_pendulum_convergence`'s value."""
    _, errs = _linear_pendulum_sweep(rec, params, [params["N"]])
    return {m: {v: errs[(m, v)][0] for v in ("p", "q")} for m in params["methods"]}


def pendulum_energy_grid(ctx, T, N):
    """The step (h, n) = (T/N exactly, N) of top2025's double pendulum runs (T a decimal
    string)."""
    return ctx.num(fraction(T) / N), N


@study("pendulum_energy_error")
def pendulum_energy_error(rec, params):
    """top2025's nonlinear double pendulum (Table 1): ||e_H||_inf over [0, T] (T =
    ``params["T"]`` s, a decimal string) of ``params["method"]`` at h = T/N, N =
    ``params["N"]`` (h exact as T/N).  One point of the convergence tables of Fig. 4 and
    Table 2 (:func:`convergence_rows` with variable 'H')."""
    ctx = rec.ctx
    prob = nonlinear_double_pendulum(ctx)
    errs = convergence_sweep(
        rec, prob.system, prob.q0, prob.p0, [params["method"]],
        [pendulum_energy_grid(ctx, params["T"], params["N"])],
        lambda traj, ref: {"H": energy_error_norm(prob.system, traj)},
        label=f"T = {params['T']} s, ", unit=" s")
    return errs[(params["method"], "H")][0]


# ----- top2025 Figs. 2-3: the references of the double pendulum ------------------------------

@study("pendulum_reference")
def pendulum_reference(rec, params):
    """The references of top2025 Figs. 2-3 on the nonlinear double pendulum over [0, T].

    Parameters (decimal strings, and an int): ``T``, ``h`` (the methods' step, whose
    nodes the RK4 reference is compared on), ``gbs_H``, ``gbs_levels``, ``rk4_ref_h``,
    ``plot_dt``.  Returns a dict: ``gbs_t``, ``gbs_q``, ``gbs_p`` (GBS of order
    2 gbs_levels at step gbs_H), ``gbs_check`` ({'q', 'p'}: max over the nodes of
    |GBS(H) - GBS(H/2)|_2, the error estimate of the reference), ``rk4_t``, ``rk4_q``,
    ``rk4_p`` (RK4 at rk4_ref_h kept every plot_dt) and ``rk4_vs_gbs`` ({'q', 'p'}: max
    over the nodes t = k h of |RK4 - GBS|_2)."""
    ctx, p = rec.ctx, params
    prob = nonlinear_double_pendulum(ctx)
    T, H, lv = p["T"], p["gbs_H"], p["gbs_levels"]
    n = steps(T, H)
    rec.progress(f"reference: GBS order {2 * lv}, {n} steps of H = {H} s")
    gbs = rec.integrate(prob.system, "gbs", prob.q0, prob.p0, ctx.num(H), n, levels=lv)
    rec.progress(f"reference check: GBS order {2 * lv}, {2 * n} steps of H/2")
    half = rec.integrate(prob.system, "gbs", prob.q0, prob.p0, ctx.num(H) / 2, 2 * n, levels=lv)
    check = sup_errors(gbs, half.q[::2], half.p[::2])
    # The paper's reference, RK4 at a small step, kept only every plot_dt (chunks of
    # plot_dt/rk4_ref_h steps; the state carries over exactly, so this is one long run).
    hf, dt = p["rk4_ref_h"], p["plot_dt"]
    chunk, k = steps(dt, hf), steps(T, dt)
    rec.progress(f"reference: RK4, {chunk * k} steps of h = {hf} s (kept every {dt} s)")
    q, pp = ctx.asarray(prob.q0), ctx.asarray(prob.p0)
    Q, P = [q], [pp]
    for j in range(k):
        tr = rec.integrate(prob.system, "rk4", q, pp, ctx.num(hf), chunk)
        q, pp = tr.q[-1], tr.p[-1]
        Q.append(q)
        P.append(pp)
        if (j + 1) % max(1, k // 10) == 0:
            rec.progress(f"  RK4 reference: t = {ctx.to_str((j + 1) * ctx.num(dt), 4)} s")
    rq, rp = np.array(Q, dtype=ctx.dtype), np.array(P, dtype=ctx.dtype)
    s_ref, s_gbs = steps(p["h"], dt), steps(p["h"], H)
    rk4_vs = {"q": max(node_errors(ctx, rq[::s_ref], gbs.q[::s_gbs])),
              "p": max(node_errors(ctx, rp[::s_ref], gbs.p[::s_gbs]))}
    rk4_t = np.array([j * ctx.num(dt) for j in range(k + 1)], dtype=ctx.dtype)
    return {"gbs_t": gbs.t, "gbs_q": gbs.q, "gbs_p": gbs.p, "gbs_check": check,
            "rk4_t": rk4_t, "rk4_q": rq, "rk4_p": rp, "rk4_vs_gbs": rk4_vs}


# ----- top2025 Sec. 4.2: the Table 3 top and its exact nutation ------------------------------

def reference_context(ctx):
    """The context exact references are computed in: ``ctx`` itself for mp, and for
    float64 (whose fixed precision the Weierstrass setup cannot raise) an mp context with
    twice float64's round-trip digits, so that each value converted to float64 is
    correctly rounded."""
    return ctx if ctx.is_mp else MPContext(2 * fp.repr_digits)


class RoundedNutation:
    """An exact nutation computed in an mp context, read in another context (float64):
    ``period``, ``roots``, ``theta(t)`` and ``phi_dot(t)`` take and return numbers of
    ``ctx`` (times are converted exactly)."""

    def __init__(self, nutation, ctx):
        self.exact, self.ctx = nutation, ctx
        self.period = ctx.num(nutation.period)
        self.roots = tuple(ctx.num(r) for r in nutation.roots)

    def _time(self, t):
        return self.exact.ctx.num(Fraction(float(t)))

    def theta(self, t):
        return self.ctx.num(self.exact.theta(self._time(t)))

    def phi_dot(self, t):
        return self.ctx.num(self.exact.phi_dot(self._time(t)))


def exact_nutation(top, factory):
    """The exact nutation of ``top`` (built by ``factory(ctx)``) in the top's context: the
    top's own for mp, a :class:`RoundedNutation` from :func:`reference_context` otherwise."""
    ctx = top.ctx
    if ctx.is_mp:
        return top.nutation()
    return RoundedNutation(factory(reference_context(ctx)).nutation(), ctx)


class LoopingTop:
    """The Table 3 top (looping motion) with its exact nutation; time unit t_bar = the
    nutation period, steps h = t_bar / N; errors as defined in top2025 Sec. 4.2.2."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.top = table3_top(ctx)
        self.system = self.top.system
        self.nutation = exact_nutation(self.top, table3_top)
        self.tbar = self.nutation.period
        self.H0 = self.system.hamiltonian(self.top.q0, self.top.p0)

    def run(self, rec, method, N_per_period, periods):
        """``rec.integrate`` over ``periods`` nutation periods with h = t_bar / N."""
        h = self.tbar / N_per_period
        return rec.integrate(self.system, method, self.top.q0, self.top.p0, h,
                             N_per_period * periods)

    def theta_exact(self, times):
        return np.array([self.nutation.theta(t) for t in times], dtype=self.ctx.dtype)

    def errors(self, traj):
        """Node-wise e_theta = (theta - theta_ex)/theta_ex, e_H = (H - H0)/H0 and the
        relative errors of p_phi, p_psi (signed; sup norms are their max |.|)."""
        ctx, S = self.ctx, self.system
        th_ex = self.theta_exact(traj.t)
        e_th = (traj.q[:, 1] - th_ex) / th_ex
        e_H = np.array([(S.hamiltonian(q, p) - self.H0) / self.H0 for q, p in zip(traj.q, traj.p)],
                       dtype=ctx.dtype)
        p0 = self.top.p0
        e_pphi = (traj.p[:, 0] - p0[0]) / p0[0]
        e_ppsi = (traj.p[:, 2] - p0[2]) / p0[2]
        return {"theta": e_th, "H": e_H, "p_phi": e_pphi, "p_psi": e_ppsi}


@study("top_long_run")
def top_long_run(rec, params):
    """One run behind top2025 Tables 4 and 5: sup norms of e_theta, e_H, and the relative
    errors of p_phi, p_psi (:meth:`LoopingTop.errors`) of ``params["method"]`` over T =
    ``params["T_tbar"]`` nutation periods at h = t_bar/N, N = ``params["N_per_period"]``.

    Returns ``{"theta", "H", "p_phi", "p_psi", "tbar"}``: the norms and t_bar as
    full-precision strings (``ctx.to_str``)."""
    ctx = rec.ctx
    lt = LoopingTop(ctx)
    T, m, N = params["T_tbar"], params["method"], params["N_per_period"]
    rec.progress(f"{m}: T = {T} t_bar, h = t_bar/{N} ({N * T} steps)")
    e = lt.errors(lt.run(rec, m, N, T))
    return {**{k: ctx.to_str(sup_norm(v)) for k, v in e.items()}, "tbar": ctx.to_str(lt.tbar)}
