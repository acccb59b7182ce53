"""Shared set-up of the axioms2024 reproductions: the Table 1 problem, time in units of
t_bar, the plot styles, and the cached convergence studies of Fig. 8 and Table 2
(:data:`linear_pendulum_convergence`, :data:`linear_pendulum_errors`).  See
mpvi/systems/double_pendulum.py for the conventions (m1 = 1 kg, g = 9.81 m/s^2, t_bar =
2 pi/omega0 = 1 s) and reproductions/ERRATA.md for the evidence behind them."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd

from mpvi import solve, sup_errors
from mpvi.repro.studies import (convergence_rows, convergence_sweep, exact_frame, steps, study,
                                trajectory_frame, uniform_times)
from mpvi.systems.double_pendulum import linearized_double_pendulum

PAPER = "axioms2024"
STEP_SECONDS = {"exact": 0.15e-3, "newmark": 0.11e-3, "rk4": 0.27e-3, "simpson": 0.11e-3}
"""Seconds per step at 64 digits on one core of the development machine (the exact
solution: per node): the cost hints of the parallel tasks, which only order them."""
STYLE = {
    "exact": dict(color="black", lw=1.4, label="exact"),
    "newmark": dict(color="tab:blue", marker="s", ms=3.5, lw=0.9, label="Newmark"),
    "rk4": dict(color="tab:green", marker="^", ms=3.5, lw=0.9, label="RK4"),
    "simpson": dict(color="tab:red", marker="o", ms=3.5, lw=0.9, label="Simpson"),
}


def problem(ctx):
    """The linearized double pendulum with Table 1 data (a :class:`mpvi.Problem` with its
    exact modal solution)."""
    return linearized_double_pendulum(ctx)


def step(ctx, prob, h_tbar):
    """h = h_tbar * t_bar with h_tbar a string or Fraction in units of t_bar."""
    return ctx.num(Fraction(h_tbar)) * prob.tbar


def run_methods(run, prob, methods, T_tbar, h_tbar, fine=400):
    """Solve ``prob`` with each method over [0, T] at step h; returns (frame, {method:
    Solution}).

    The frame holds the nodes of every method plus the exact solution on ``fine``
    uniform intervals, times in seconds (t_bar = 1 s)."""
    ctx = run.ctx
    h = step(ctx, prob, h_tbar)
    n = steps(T_tbar, h_tbar)
    T = ctx.num(Fraction(T_tbar)) * prob.tbar
    frames, sols = [exact_frame(prob.exact, uniform_times(ctx, T, fine), ctx)], {}
    for m in methods:
        run.progress(f"{m}: {n} steps of h = {h_tbar} t_bar")
        sols[m] = solve(prob, m, h=h, n=n)
        frames.append(trajectory_frame(sols[m], m))
    return pd.concat(frames, ignore_index=True), sols


def curves(df, column):
    """{method: (t, values)} as floats, for plotting."""
    out = {}
    for m, g in df.groupby("method", sort=False):
        out[m] = (g["t"].astype(float).to_numpy(), g[column].astype(float).to_numpy())
    return out


def plot_time_series(df, columns, ylabels, title, T_tbar):
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(columns), 1, figsize=(7.5, 2.6 * len(columns)), sharex=True)
    for ax, col, yl in zip(axes, columns, ylabels):
        for m, (t, y) in curves(df, col).items():
            ax.plot(t, y, **STYLE[m])
        ax.set_ylabel(yl)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel(r"$t$ [$\bar t$]")
    axes[-1].set_xlim(0, float(Fraction(T_tbar)))
    axes[0].legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8, ncol=4, frameon=False)
    fig.suptitle(title, fontsize=10, y=1.02)
    return fig


def time_series_reproduction(rid, item, title, params, columns, ylabels):
    """A Reproduction that plots ``columns`` of exact and numerical trajectories against
    time (Figs. 2-4): ``params`` holds T_tbar, h_tbar and methods."""
    from mpvi.repro.declare import Output, Reproduction

    def compute(run):
        p = run.params
        df, _ = run_methods(run, problem(run.ctx), p["methods"], p["T_tbar"], p["h_tbar"])
        return Output(tables={"": df})

    def plot(out, p):
        return plot_time_series(out.tables[""], columns, ylabels,
                                f"axioms2024 {item}: {title} (h = {p['h_tbar']}" + r" $\bar t$)",
                                p["T_tbar"])

    return Reproduction(id=rid, paper=PAPER, item=item, title=title,
                        params=params, compute=compute, plot=plot,
                        published=False)      # time series: the paper prints no numbers


# ----- the convergence studies of Fig. 8 and Table 2 ------------------------------------------

def linear_pendulum_grid(ctx, prob, T_tbar, N):
    """The step (h, n) of ``n = N`` steps over T = ``T_tbar`` t_bar on axioms2024's
    linearized double pendulum ``prob``."""
    T = ctx.num(T_tbar) * prob.tbar
    return ctx.num(T) / N, N


def _linear_pendulum_sweep(rec, params, grid_Ns):
    """:func:`mpvi.repro.studies.convergence_sweep` of axioms2024's linearized double
    pendulum against its exact solution: ``{(method, variable): [error per N]}`` for
    variables p and q."""
    ctx = rec.ctx
    prob = problem(ctx)
    exact = prob.exact
    grid = [linear_pendulum_grid(ctx, prob, params["T_tbar"], N) for N in grid_Ns]

    def reference(h, n):
        """The exact solution on the nodes t_j = j h, once for all methods."""
        t = np.array([j * h for j in range(n + 1)], dtype=ctx.dtype)
        return exact.q(t), exact.p(t)

    def measure(sol, ref):
        e = sup_errors(sol, *ref)
        return {"p": e["p"], "q": e["q"]}

    errs = convergence_sweep(rec, prob, params["methods"], grid, measure, reference,
                             label=f"T = {params['T_tbar']} t_bar, ")
    return grid, errs


@study("linear_pendulum_convergence")
def linear_pendulum_convergence(rec, params):
    """axioms2024's linearized double pendulum (Table 1) against its exact solution:
    ||e||_inf = max_j |x_j - x_ex(t_j)|_2 for x = p, q, every method in
    ``params["methods"]`` and N in ``params["N"]`` steps over T = ``params["T_tbar"]``
    t_bar; :func:`mpvi.repro.studies.convergence_rows` (h in seconds)."""
    grid, errs = _linear_pendulum_sweep(rec, params, params["N"])
    return convergence_rows(rec.ctx, params["methods"], ["p", "q"], grid, errs)


@study("linear_pendulum_errors")
def linear_pendulum_errors(rec, params):
    """One step size of :data:`linear_pendulum_convergence`: ``{method: {"p": e, "q":
    e}}`` for N = ``params["N"]`` steps over T = ``params["T_tbar"]`` t_bar (the exact
    solution on the nodes is computed once for all methods).
    :func:`mpvi.repro.studies.convergence_rows` of several of them is
    :data:`linear_pendulum_convergence`'s value."""
    _, errs = _linear_pendulum_sweep(rec, params, [params["N"]])
    return {m: {v: errs[(m, v)][0] for v in ("p", "q")} for m in params["methods"]}


# ----- Table 2 certified (mpvi run --certify) ------------------------------------------------

CERTIFIED_STATEMENT = (
    "Each error norm is an Arb enclosure of max_j |x_j - x_ex(t_j)|_2 with x_j the method's "
    "exact discrete trajectory (mpvi.certify, rounding excluded) and x_ex the exact modal "
    "solution (ModalSolution.enclose) at the exact nodes t_j = j h; each order is the "
    "least-squares slope of the enclosed log errors.  The data are those the run used as "
    "binary numbers: M, K, l and q0 = pi/6 hold pi rounded to the run's digits, and h = T "
    "t_bar / N rounded; the enclosures are of the computation so defined.")


def certified_linear_run(prob, method, h, n, what):
    """``(solution, certificate)``: ``method`` on ``prob`` (the linearized pendulum) over
    ``n`` steps of ``h``, solved and certified complete
    (:func:`mpvi.repro.certified.certified_run`; ArithmeticError naming ``what``
    otherwise).  Simpson's run is solved without its stability check: the check needs
    eigenvalues of the number context, which the certificate's replay on balls has not
    (``ArbContext._eigh``); it does not change the step, and the plain run made it.  At
    flint's current precision."""
    from mpvi.repro.certified import certified_run
    opts = {"check_stability": False} if method == "simpson" else {}
    sol = solve(prob, method, h=h, n=n, **opts)
    return sol, certified_run(sol, what)


def certified_errors(ctx, T_tbar, N, methods, growth=None):
    """``(h, {method: {"p": ball, "q": ball}})``: the step the runs took (exact, a
    Fraction) and Arb enclosures of the error norms of
    :func:`linear_pendulum_errors` (``T_tbar``, ``N``): each run certified
    (:func:`mpvi.certify`), the exact reference enclosed at the exact nodes, the norms on
    balls (:data:`CERTIFIED_STATEMENT`).  With a dict ``growth``, each run's proven
    digits against time (:func:`mpvi.repro.certified.growth_series`) go into it under
    ``"T=<T_tbar> <method> N=<N>"``.  Flint's precision is the run's (plus guard digits)
    inside and the caller's after.  ArithmeticError if a run's proof fails."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision, exact_rational
    from mpvi.repro.certified import ball_max, ball_norm, growth_series
    with ctx.active():
        prob = problem(ctx)
        h, n = linear_pendulum_grid(ctx, prob, T_tbar, N)
    refs = {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        out = {}
        for m in methods:
            sol, cert = certified_linear_run(prob, m, h, n,
                                             f"axioms2024 T = {T_tbar} t_bar, N = {N}, {m}")
            hq = exact_rational(sol.h, "h")          # the step the run took, exactly
            if hq not in refs:
                refs[hq] = prob.exact.enclose_many([j * hq for j in range(n + 1)], ctx.dps)
            ref = refs[hq]
            if growth is not None:
                growth[f"T={T_tbar} {m} N={N}"] = growth_series(
                    cert, f"axioms2024 Table 2, {m}, {N} steps over {T_tbar} t_bar (Lohner)")
            out[m] = {v: ball_max(ball_norm([a - b for a, b in zip(x, r[k])])
                                  for x, r in zip(balls, ref))
                      for v, balls, k in (("q", cert.q, 0), ("p", cert.y, 1))}
        if len(refs) != 1:
            raise ArithmeticError(f"axioms2024 T = {T_tbar} t_bar, N = {N}: the methods' runs "
                                  "took different steps h")
        return next(iter(refs)), out
