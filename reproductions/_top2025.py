"""Shared pieces of the top2025 reproductions ("Simpson variational integrator for
nonlinear systems: a tutorial on the Lagrange top", Rojas-Quintero, Dubois, Jourdan 2025).

The three methods compared throughout the paper, their plot styles, and the two
problems: the nonlinear double pendulum (Sec. 3, Table 1) and the Lagrange top (Sec. 4,
Tables 3 and 6).
"""
from mpvi.systems.double_pendulum import nonlinear_double_pendulum
from mpvi.systems.lagrange_top import table3_top, table6_top

PAPER = "top2025"
METHODS = ["midpoint", "rk4", "simpson"]

STYLE = {
    "midpoint": {"color": "tab:blue", "ls": "--", "label": "Implicit midpoint"},
    "rk4": {"color": "tab:orange", "ls": "-.", "label": "RK4"},
    "simpson": {"color": "tab:green", "ls": "-", "label": "Simpson"},
    "reference": {"color": "0.6", "ls": "-", "lw": 3, "alpha": 0.6, "label": "reference"},
    "exact": {"color": "0.6", "ls": "-", "lw": 3, "alpha": 0.6, "label": "exact"},
}


def double_pendulum(ctx):
    """Table 1 double pendulum (l = g / omega0^2, see ERRATA [E13])."""
    return nonlinear_double_pendulum(ctx)


def loop_top(ctx):
    """Table 3 top (looping motion)."""
    return table3_top(ctx)


def cusp_top(ctx):
    """Table 6 top (cusps) -- complete system; ``.reduced()`` gives eqs. (18aq)."""
    return table6_top(ctx)


# ===== Lagrange top, looping motion (Sec. 4.2: Figs. 7-11, Tables 4-5) ====================
# Time unit: t_bar = the exact nutation period 2 omega_1 of the Weierstrass solution
# (1.847239 s for Table 3 with g = 9.81; the paper prints 1.84671 s, see ERRATA [E12]).
# Steps are h = t_bar / N, so T = k t_bar is reached exactly after k N steps.

import numpy as np  # noqa: E402  (kept with the block that uses it)


class LoopTop:
    """Table 3 top with its exact nutation; errors as defined in Sec. 4.2.2."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.top = loop_top(ctx)
        self.system = self.top.system
        self.nutation = self.top.nutation()
        self.tbar = self.nutation.period
        self.H0 = self.system.hamiltonian(self.top.q0, self.top.p0)

    def run(self, run, method, N_per_period, periods):
        """``run.integrate`` over ``periods`` nutation periods with h = t_bar / N."""
        h = self.tbar / N_per_period
        return run.integrate(self.system, method, self.top.q0, self.top.p0, h,
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


def sup(values):
    return max(abs(v) for v in values)


_LONG_RUNS = {}


def long_run_study(run, Ts, Ns, methods):
    """Sup norms of e_theta, e_H, p_phi, p_psi for T in ``Ts`` periods and h = t_bar/N,
    N in ``Ns``, every method: the runs behind Tables 4 and 5.  The result (numbers as
    strings, with the Newton statistics) is kept for the process, so that running tab04
    and tab05 together integrates once; a cached result's Newton statistics are pooled
    into this run's provenance as if computed here."""
    ctx = run.ctx
    key = (ctx.name, tuple(Ts), tuple(Ns), tuple(methods))
    if key in _LONG_RUNS:
        rows, tbar, newton = _LONG_RUNS[key]
        for m, summary in newton:
            run.add_newton(m, summary)
        return rows, tbar
    lt = LoopTop(ctx)
    rows, newton = [], []
    for T in Ts:
        for m in methods:
            for N in Ns:
                run.progress(f"{m}: T = {T} t_bar, h = t_bar/{N} ({N * T} steps)")
                traj = lt.run(run, m, N, T)
                newton.append((m, traj.stats.get("newton")))
                e = lt.errors(traj)
                rows.append({"T": T, "method": m, "N": N,
                             **{k: ctx.to_str(sup(v)) for k, v in e.items()}})
    _LONG_RUNS[key] = (rows, ctx.to_str(lt.tbar), newton)
    return rows, ctx.to_str(lt.tbar)


def loop_methods_run(run, periods, N_per_period, methods=METHODS):
    """The three methods on the Table 3 top over ``periods`` periods at h = t_bar/N:
    (LoopTop, {method: (trajectory, node errors)})."""
    lt = LoopTop(run.ctx)
    res = {}
    for m in methods:
        run.progress(f"{m}: {periods} periods at h = t_bar/{N_per_period}")
        traj = lt.run(run, m, N_per_period, periods)
        res[m] = (traj, lt.errors(traj))
    return lt, res


def series_frame(ctx, res, keys):
    """Long table t, method, <key>... of node errors (full-precision strings)."""
    import pandas as pd
    frames = []
    for m, (traj, err) in res.items():
        d = {"t": [ctx.to_str(t) for t in traj.t], "method": m}
        for k in keys:
            d[k] = [ctx.to_str(x) for x in (traj.q[:, 1] if k == "theta" else err[k])]
        frames.append(pd.DataFrame(d))
    return pd.concat(frames, ignore_index=True)


def growth(values):
    """max |.| over the second half of a run / max |.| over the first half."""
    n = len(values) // 2
    first = sup(values[1:n + 1])
    return sup(values[n:]) / first if first != 0 else None


def long_run_table(run, variable):
    """Table 4 (variable 'theta') or 5 ('H') in long format with successive and
    least-squares orders, from :func:`long_run_study`; returns (DataFrame, values, extra)."""
    import pandas as pd
    from mpvi.analysis import fit_order
    ctx, p = run.ctx, run.params
    rows, tbar = long_run_study(run, p["T_tbar"], p["N_per_period"], p["methods"])
    tbar_num = ctx.num(tbar)
    out, values = [], {}
    for T in p["T_tbar"]:
        for m in p["methods"]:
            mine = [r for r in rows if r["T"] == T and r["method"] == m]
            errs = [ctx.num(r[variable]) for r in mine]
            hs = [tbar_num / r["N"] for r in mine]
            ls = fit_order(ctx, hs, errs)
            for r, e, o in zip(mine, errs, [None] + successive_orders(ctx, errs)):
                out.append({"T": T, "method": m, "N": r["N"] * T, "h_tbar": f"1/{r['N']}",
                            "error": ctx.to_str(e), "order": "" if o is None else ctx.to_str(o),
                            "ls_order": ctx.to_str(ls),
                            **({"p_phi_rel_error": r["p_phi"], "p_psi_rel_error": r["p_psi"]}
                               if variable == "H" else {})})
                values[f"T={T} {m} {variable} h=1/{r['N']}"] = ctx.to_str(e)
            values[f"T={T} {m} {variable} order"] = ctx.to_str(ls)
            if variable == "H":
                for k in ("p_phi", "p_psi"):
                    values[f"T={T} {m} max rel {k} error"] = ctx.to_str(max(ctx.num(r[k]) for r in mine))
    # growth of the error with the simulation length (same h): bounded or drifting
    first, last = p["T_tbar"][0], p["T_tbar"][-1]
    for m in p["methods"]:
        for N in p["N_per_period"]:
            e0, e1 = (ctx.num(next(r[variable] for r in rows
                                   if r["T"] == T and r["method"] == m and r["N"] == N))
                      for T in (first, last))
            values[f"{m} {variable} growth T={last}/T={first} h=1/{N}"] = ctx.to_str(e1 / e0)
    return pd.DataFrame(out), values, {"tbar_s": tbar}


LONG_RUN_PARAMS = {"T_tbar": [1, 10, 100, 1000], "N_per_period": [20, 40, 80], "methods": METHODS}
LONG_RUN_QUICK = {"T_tbar": [1, 10]}


def long_run_reproduction(number, variable, what):
    """The Reproduction of Table 4 (variable 'theta') or Table 5 ('H'): both are views of
    :func:`long_run_study`, so ``mpvi run top2025_tab04 top2025_tab05`` integrates once."""
    from mpvi.repro import Output, Reproduction

    def compute(run):
        df, values, extra = long_run_table(run, variable)
        return Output(tables={"": df}, values=values, extra=extra)

    other = 9 - number
    return Reproduction(
        id=f"top2025_tab0{number}", paper=PAPER, item=f"Table {number}",
        title=f"{what} for T = 1..1000 nutation periods",
        runtime=f"~28 min (shared with Table {other} when run together)",
        params=LONG_RUN_PARAMS, quick=LONG_RUN_QUICK, compute=compute,
        plot=lambda out, p: plot_long_run_table(
            out, p, variable, f"top2025 Table {number}: {what} against simulation length"))


def plot_long_run_table(out, p, variable, title):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(7, 4.6))
    markers = {1: "o", 10: "s", 100: "^", 1000: "D"}
    for (T, m), g in df.groupby(["T", "method"], sort=False):
        st = STYLE[m]
        per = g["N"] / T
        ax.loglog(1 / per, g["error"].astype(float), color=st["color"], ls=st["ls"],
                  marker=markers.get(T, "o"), ms=4,
                  label=f"{st['label']}, T = {T}" + r" $\bar t$" + f" (order {float(g['ls_order'].iloc[0]):.2f})")
    ax.set_xlabel(r"$h$ [$\bar t$]")
    ax.set_ylabel(r"$\|e_\theta\|_\infty$" if variable == "theta" else r"$\|e_H\|_\infty$")
    ax.grid(alpha=0.3, which="both"); ax.legend(fontsize=6, ncol=2)
    ax.set_title(title, fontsize=10)
    return fig


# =====================================================================================
# Reduced Lagrange top (Sec. 4.3, Table 6, eqs. 18ab-18aq, Figs. 12-14).
# Shared by top2025_fig12, top2025_fig13 and top2025_fig14 only.
#
# The reduced system y = (phi, theta, xi = theta') is a first-order ODE, not a mechanical
# system, so it is integrated with mpvi.ode.integrate_ode (RK4 or GBS); the complete
# system (phi, theta, psi) always goes through run.integrate (Newton statistics).
# Step sizes are kept as exact Fractions in the parameter sets so that the nodes of two
# runs can be matched by an integer stride.
# =====================================================================================
from fractions import Fraction as _Fraction

from mpvi.integrate import Progress as _Progress
from mpvi.ode import gbs_step as _gbs_step, integrate_ode as _integrate_ode

GBS_LEVELS = 16
"""GBS extrapolation depth for the references (order 2 * 16 = 32, mpvi.ode)."""


def cusp_exact(ctx):
    """(nutation period 2 omega_1, theta_max) of the Table 6 top from the exact Weierstrass
    solution, as numbers of ``ctx``.  Computed at the context's precision; for float64
    (whose fixed precision the Weierstrass setup cannot raise) at 30 digits, then rounded."""
    from mpvi import MPContext
    mp = ctx if ctx.is_mp else MPContext(30)
    nut = cusp_top(mp).nutation()
    return ctx.num(+nut.period), ctx.num(mp._m.acos(nut.roots[0]))


def frac(text):
    """A step size or time from the parameter set ('1/10', '1e-5', '1') as a Fraction."""
    return _Fraction(str(text))


def stride(coarse, fine):
    """The integer k with coarse = k * fine (both Fractions); refuses non-nested grids."""
    k = _Fraction(coarse) / _Fraction(fine)
    if k.denominator != 1:
        raise ValueError(f"step {coarse} is not a multiple of {fine}")
    return int(k)


def steps(T, h):
    """Number of steps of size h in [0, T] (h must divide T)."""
    return stride(T, h)


def integrate_reduced(run, top, method, h, n, levels=GBS_LEVELS):
    """``integrate_ode`` of the reduced system (18aq) from (phi0, theta0, xi0), with a
    progress line for long runs.  ``h`` is a Fraction or a context number."""
    ctx = run.ctx
    hh = ctx.num(h) if isinstance(h, _Fraction) else h
    heavy = n >= 5000 if method == "rk4" else n >= 100
    bar = _Progress(f"reduced {method} n={n}", n, run.stream) if heavy else None
    return _integrate_ode(top.reduced(), method, top.reduced_state0(), hh, n, ctx,
                          levels=levels, progress=bar)


def max_abs_diff(a, b):
    """max_j |a_j - b_j| over two equally long sequences."""
    if len(a) != len(b):
        raise ValueError(f"sequences of different length ({len(a)} and {len(b)})")
    return max(abs(x - y) for x, y in zip(a, b))


def tip_path(ctx, phi, theta):
    """Tip of the unit symmetry axis in the fixed frame (ZXZ Euler angles, Fig. 6): the
    body z axis is (sin th sin phi, -sin th cos phi, cos th); returns lists x, y, z."""
    x, y, z = [], [], []
    for f, th in zip(phi, theta):
        s = ctx.sin(th)
        x.append(s * ctx.sin(f))
        y.append(-s * ctx.cos(f))
        z.append(ctx.cos(th))
    return x, y, z


def turning_points(ctx, system, traj, which="min", levels=GBS_LEVELS, max_iter=20):
    """Turning points of the nutation on a reduced trajectory (y = (phi, theta, xi)).

    A sign change of xi = theta' between nodes j and j+1 (``which='min'``: - to +, a
    smallest theta, i.e. the highest point of the axis; ``'max'``: + to -) is refined by
    Newton's method on the time offset d: xi(t_j + d) = 0, where y(t_j + d) is one GBS
    step of size d from node j and d xi/dt is the right-hand side.  Returns a list of dicts
    {j, t, y, rhs, iterations}: y and rhs = (phi', theta', xi') at the turning point."""
    f = system.rhs
    out = []
    for j in range(len(traj.t) - 1):
        a, b = traj.y[j][2], traj.y[j + 1][2]
        hit = (a < 0 <= b) if which == "min" else (a > 0 >= b)
        if not hit:
            continue
        t, y0 = traj.t[j], traj.y[j]
        H = traj.t[j + 1] - t
        d = -a / f(t, y0)[2]
        last = None
        for it in range(1, max_iter + 1):
            y = _gbs_step(f, t, y0, d, levels, ctx)
            delta = y[2] / f(t + d, y)[2]
            d -= delta
            # quadratic convergence down to the noise of the GBS step (~1e-57 at 64
            # digits): stop at the round-off level or once the updates stop halving
            if abs(delta) <= 64 * ctx.eps * H or (last is not None and abs(delta) > last / 2):
                break
            last = abs(delta)
        y = _gbs_step(f, t, y0, d, levels, ctx)
        fy = f(t + d, y)
        out.append({"j": j, "t": t + d, "y": y, "rhs": fy, "iterations": it})
    return out


def successive_orders(ctx, errors, factor=2):
    """alpha_k = log_factor(e_k / e_{k+1}) for step sizes divided by ``factor``."""
    lf = ctx.log(ctx.num(factor))
    return [ctx.log(e0 / e1) / lf for e0, e1 in zip(errors[:-1], errors[1:])]

# =====================================================================================
# end of the reduced-top block
# =====================================================================================


# ======================================================================================
# Double pendulum, Sec. 3: Figs. 2-5 and Table 2 (top2025_fig02 .. top2025_fig05,
# top2025_tab02).  Everything between this banner and the matching "end" banner belongs
# to those five scripts.
# ======================================================================================
from fractions import Fraction as _Fraction

import numpy as _np
import pandas as _pd

from mpvi.analysis import (energy as _energy, fit_order as _fit_order, node_errors as _node_errors,
                           relative_energy_error as _relative_energy_error,
                           sup_errors as _sup_errors)
from mpvi.repro import Output as _Output, Reproduction as _Reproduction
from mpvi.studies import numstr as _numstr, state_frame as _state_frame, \
    trajectory_frame as _trajectory_frame

#: Figs. 2-3 (shared so that the expensive references are computed once per process).
#: The paper's step h = 0.1 s over 10 s; references: GBS of order 64 (levels = 32) at
#: H = 0.05 s, whose error (< 1e-50) is shown by a second run at H/2, and the paper's own
#: reference, RK4 at h = 1e-5 s, sampled every ``plot_dt`` for the gray curve.
STATES_PARAMS = {"T": "10", "h": "0.1", "methods": list(METHODS),
                 "gbs_H": "0.05", "gbs_levels": 32, "rk4_ref_h": "1e-5", "plot_dt": "0.01",
                 "deviation_threshold": "1e-2"}
#: quick: GBS of order 20 at H = 0.1 s (error ~1e-11), RK4 reference at h = 5e-3 s
#: (error ~1e-6) instead of 1e-5 s -- both far below the 1e-2 deviation threshold.
STATES_QUICK = {"gbs_H": "0.1", "gbs_levels": 10, "rk4_ref_h": "5e-3"}


def n_steps(T, h):
    """The number of steps of size h (decimal strings or Fractions) in [0, T]."""
    n = _Fraction(str(T)) / _Fraction(str(h))
    if n.denominator != 1:
        raise ValueError(f"T = {T} is not a whole number of steps h = {h}")
    return int(n)


def run_methods(run, prob, methods, T, h, label=""):
    """{method: Trajectory} of each method over [0, T] at step h (decimal strings)."""
    ctx, n = run.ctx, n_steps(T, h)
    out = {}
    for m in methods:
        run.progress(f"{label}{m}: {n} steps of h = {h} s")
        out[m] = run.integrate(prob.system, m, prob.q0, prob.p0, ctx.num(h), n)
    return out


def energy_error(system, traj):
    """Signed relative energy error e_H = (H_n - H_0)/H_0 at every node (Sec. 3.2.2)."""
    H = _energy(system, traj)
    return _np.array([(x - H[0]) / H[0] for x in H], dtype=traj.ctx.dtype)


def energy_error_norm(system, traj):
    """||e_H||_inf = sup_n |H_n - H_0| / |H_0| (Sec. 3.2.2)."""
    return max(_relative_energy_error(system, traj))


_REFERENCES = {}


def pendulum_reference(run, prob, p):
    """The references of Figs. 2-3, computed once per (context, parameters) in a process.

    Returns a dict: ``gbs`` (Trajectory at step gbs_H), ``gbs_check`` ({'q', 'p'}: max
    over the nodes of |GBS(H) - GBS(H/2)|_2, the error estimate of the reference),
    ``rk4_t``, ``rk4_q``, ``rk4_p`` (RK4 at rk4_ref_h sampled every plot_dt), and
    ``rk4_vs_gbs`` ({'q', 'p'}: max over the nodes t = k h of |RK4 - GBS|_2).
    """
    ctx = run.ctx
    keys = ("T", "h", "gbs_H", "gbs_levels", "rk4_ref_h", "plot_dt")
    key = (ctx.name,) + tuple(str(p[k]) for k in keys)
    if key in _REFERENCES:
        run.progress("references: computed earlier in this process, reused")
        return dict(_REFERENCES[key], from_cache=True)
    T, H, lv = p["T"], p["gbs_H"], p["gbs_levels"]
    n = n_steps(T, H)
    run.progress(f"reference: GBS order {2 * lv}, {n} steps of H = {H} s")
    gbs = run.integrate(prob.system, "gbs", prob.q0, prob.p0, ctx.num(H), n, levels=lv)
    run.progress(f"reference check: GBS order {2 * lv}, {2 * n} steps of H/2")
    half = run.integrate(prob.system, "gbs", prob.q0, prob.p0, ctx.num(H) / 2, 2 * n, levels=lv)
    check = _sup_errors(gbs, half.q[::2], half.p[::2])
    # The paper's reference, RK4 at a small step, kept only every plot_dt (chunks of
    # plot_dt/rk4_ref_h steps; the state carries over exactly, so this is one long run).
    hf, dt = p["rk4_ref_h"], p["plot_dt"]
    chunk, k = n_steps(dt, hf), n_steps(T, dt)
    run.progress(f"reference: RK4, {chunk * k} steps of h = {hf} s (kept every {dt} s)")
    q, pp = ctx.asarray(prob.q0), ctx.asarray(prob.p0)
    Q, P = [q], [pp]
    for j in range(k):
        tr = run.integrate(prob.system, "rk4", q, pp, ctx.num(hf), chunk)
        q, pp = tr.q[-1], tr.p[-1]
        Q.append(q)
        P.append(pp)
        if (j + 1) % max(1, k // 10) == 0:
            run.progress(f"  RK4 reference: t = {ctx.to_str((j + 1) * ctx.num(dt), 4)} s")
    rq, rp = _np.array(Q, dtype=ctx.dtype), _np.array(P, dtype=ctx.dtype)
    s_ref, s_gbs = n_steps(p["h"], dt), n_steps(p["h"], H)
    rk4_vs = {"q": max(_node_errors(ctx, rq[::s_ref], gbs.q[::s_gbs])),
              "p": max(_node_errors(ctx, rp[::s_ref], gbs.p[::s_gbs]))}
    rk4_t = _np.array([j * ctx.num(dt) for j in range(k + 1)], dtype=ctx.dtype)
    ref = {"gbs": gbs, "gbs_check": check, "rk4_t": rk4_t, "rk4_q": rq, "rk4_p": rp,
           "rk4_vs_gbs": rk4_vs}
    _REFERENCES[key] = ref
    return dict(ref, from_cache=False)


def _first_time_above(ctx, t, dev, level):
    for tj, d in zip(t, dev):
        if d > level:
            return tj
    return None


def pendulum_states(run, var):
    """Figs. 2 (var = 'q') and 3 (var = 'p'): the methods at step h against the references.

    Tables: '' (long format t, method, <var>1, <var>2: the methods at their nodes, the GBS
    reference at its nodes and the RK4 reference every plot_dt) and 'deviation' (t,
    method, |x_j - x_GBS(t_j)|_2 at the nodes t_j = j h, including both references).
    Values: per method the max deviation over [0, T], relative to max_j |x_GBS(t_j)|_2,
    the first time the relative deviation exceeds ``deviation_threshold``, its ratio to
    Simpson's, and the reference checks.
    """
    ctx, p = run.ctx, run.params
    prob = double_pendulum(ctx)
    ref = pendulum_reference(run, prob, p)
    trajs = run_methods(run, prob, p["methods"], p["T"], p["h"])
    gbs = ref["gbs"]
    stride = n_steps(p["h"], p["gbs_H"])
    X_ref = getattr(gbs, var)[::stride]
    scale = max(ctx.norm2(x) for x in X_ref)
    level = ctx.num(p["deviation_threshold"])
    cols = ["t", "method", f"{var}1", f"{var}2"]
    frames = [_trajectory_frame(tr, m)[cols] for m, tr in trajs.items()]
    frames.append(_trajectory_frame(gbs, "reference_gbs")[cols])
    frames.append(_state_frame(ctx, ref["rk4_t"], ref["rk4_q"], ref["rk4_p"],
                               "reference_rk4")[cols])
    t_nodes = gbs.t[::stride]
    devs = {m: _node_errors(ctx, getattr(tr, var), X_ref) for m, tr in trajs.items()}
    s_ref = n_steps(p["h"], p["plot_dt"])
    devs[f"reference_rk4 h={p['rk4_ref_h']}"] = _node_errors(ctx, ref[f"rk4_{var}"][::s_ref], X_ref)
    dev_df = _pd.concat([_pd.DataFrame({"t": [_numstr(ctx, t) for t in t_nodes], "method": m,
                                       "deviation": [_numstr(ctx, d) for d in dv]})
                         for m, dv in devs.items()], ignore_index=True)
    values = {}
    for m in trajs:
        mx = max(devs[m])
        values[f"{m} max deviation {var}"] = _numstr(ctx, mx)
        values[f"{m} relative deviation {var}"] = _numstr(ctx, mx / scale)
        t_first = _first_time_above(ctx, t_nodes, devs[m], level * scale)
        if t_first is not None:
            values[f"{m} first deviation time {var}"] = _numstr(ctx, t_first)
    for m in trajs:
        if m != "simpson" and "simpson" in trajs:
            values[f"{m}/simpson deviation ratio {var}"] = _numstr(
                ctx, max(devs[m]) / max(devs["simpson"]))
    values[f"reference gbs halving difference {var}"] = _numstr(ctx, ref["gbs_check"][var])
    values[f"reference rk4 h={p['rk4_ref_h']} vs gbs {var}"] = _numstr(ctx, ref["rk4_vs_gbs"][var])
    extra = {"reference": {
        "used_for_deviations": f"GBS, order {2 * p['gbs_levels']}, H = {p['gbs_H']} s",
        "gbs_max_difference_H_vs_H/2": {v: _numstr(ctx, ref["gbs_check"][v]) for v in "qp"},
        f"rk4_h={p['rk4_ref_h']}_max_difference_vs_gbs_at_nodes_h={p['h']}":
            {v: _numstr(ctx, ref["rk4_vs_gbs"][v]) for v in "qp"},
        "reused_from_earlier_run_in_process": ref["from_cache"]},
        "deviation_scale_max_norm_of_reference": _numstr(ctx, scale),
        "quick": run.quick}
    return _Output(tables={"": _pd.concat(frames, ignore_index=True), "deviation": dev_df},
                   values=values, extra=extra)


def plot_states(out, p, var, item):
    """Paper style: one panel per coordinate, reference in light gray."""
    import matplotlib.pyplot as plt
    df = out.tables[""]
    unit = "rad" if var == "q" else r"kg m$^2$ s$^{-1}$"
    fig, axes = plt.subplots(2, 1, figsize=(7.5, 5.4), sharex=True)
    ref_label = f"reference (RK4, h = {p['rk4_ref_h']} s)"
    for ax, i in zip(axes, (1, 2)):
        g = df[df["method"] == "reference_rk4"]
        ax.plot(g["t"].astype(float), g[f"{var}{i}"].astype(float),
                **dict(STYLE["reference"], label=ref_label))
        for m in p["methods"]:
            g = df[df["method"] == m]
            ax.plot(g["t"].astype(float), g[f"{var}{i}"].astype(float), **dict(STYLE[m], lw=1.1))
        ax.set_ylabel(f"${var}^{i}$ [{unit}]" if var == "q" else f"$p_{i}$ [{unit}]")
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("$t$ [s]")
    axes[-1].set_xlim(0, float(p["T"]))
    axes[0].legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8, ncol=4,
                   frameon=False)
    v = out.values
    note = ", ".join(f"{STYLE[m]['label']} {float(v[f'{m} relative deviation {var}']):.1e}"
                     for m in p["methods"])
    fig.suptitle(f"top2025 {item}: double pendulum, h = {p['h']} s\n"
                 f"max deviation from GBS reference / max|{var}|: {note}", fontsize=9, y=1.04)
    return fig


def states_reproduction(rid, item, var, title, runtime, params, quick):
    """The Reproduction of Fig. 2 (var 'q') or Fig. 3 (var 'p'); ``params`` and ``quick``
    should be STATES_PARAMS and STATES_QUICK for the references to be shared."""
    return _Reproduction(id=rid, paper=PAPER, item=item, title=title, runtime=runtime,
                         params=params, quick=quick,
                         compute=lambda run: pendulum_states(run, var),
                         plot=lambda out, p: plot_states(out, p, var, item))


def energy_convergence(run, prob, methods, T, Ns, label=""):
    """||e_H||_inf over [0, T] (T a decimal string) for every method and h = T/N, N in Ns.

    Returns rows ``{method, N, h, error, order_step, order}`` (context numbers; h exact
    as T/N): ``order_step`` is the slope log(e_{i-1}/e_i) / log(h_{i-1}/h_i) against the
    previous (larger) step (None for the first), ``order`` the least-squares slope over
    all Ns (:func:`mpvi.analysis.fit_order`), repeated on the method's rows."""
    ctx = run.ctx
    Tf = _Fraction(str(T))
    rows = []
    for m in methods:
        hs, errs = [], []
        for N in Ns:
            h = ctx.num(Tf / N)
            run.progress(f"{label}{m}: N = {N}, h = {ctx.to_str(h, 6)} s")
            traj = run.integrate(prob.system, m, prob.q0, prob.p0, h, N)
            hs.append(h)
            errs.append(energy_error_norm(prob.system, traj))
        order = _fit_order(ctx, hs, errs) if len(Ns) > 1 else None
        for i, (N, h, e) in enumerate(zip(Ns, hs, errs)):
            step = None if i == 0 else ctx.log(errs[i - 1] / e) / ctx.log(hs[i - 1] / h)
            rows.append({"method": m, "N": N, "h": h, "error": e, "order_step": step,
                         "order": order})
    return rows


def orders_frame(ctx, rows, first=()):
    """A convergence table (rows of :func:`energy_convergence`) as full-precision strings;
    ``first``: (column, value) pairs put in front (e.g. ("T", 10))."""
    def s(x):
        return "" if x is None else _numstr(ctx, x)
    data = {c: v for c, v in first}
    data.update({"method": [r["method"] for r in rows], "N": [r["N"] for r in rows],
                 "h": [s(r["h"]) for r in rows], "error": [s(r["error"]) for r in rows],
                 "order_step": [s(r["order_step"]) for r in rows],
                 "order": [s(r["order"]) for r in rows]})
    return _pd.DataFrame(data)


# ======================================================================================
# end of the double-pendulum block
# ======================================================================================
