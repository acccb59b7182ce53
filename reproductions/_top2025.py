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


def cusp_nutation(ctx):
    """Exact nutation (Weierstrass solution) of the Table 6 top: ``.period`` (2 omega_1),
    ``.roots`` = (cos theta_max, cos theta_min, third root).  Built directly from
    :class:`LagrangeTopNutation` with the top's parameters and initial rates (the
    ``LagrangeTop.nutation()`` shortcut passes keyword names the class does not take)."""
    from mpvi.systems.lagrange_top_exact import LagrangeTopNutation
    top = cusp_top(ctx)
    P = top.params
    return LagrangeTopNutation(ctx, m_top=P["m_top"], I=P["I"], I3=P["I3"], ell=P["ell"],
                               g=P["g"], theta0=top.q0[1], phi_dot0=top.qdot0[0],
                               theta_dot0=top.qdot0[1], psi_dot0=top.qdot0[2])


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


def turning_points(ctx, system, traj, which="min", levels=GBS_LEVELS, max_iter=40):
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
        y, fy, it = y0, f(t, y0), 0
        for it in range(1, max_iter + 1):
            y = _gbs_step(f, t, y0, d, levels, ctx)
            fy = f(t + d, y)
            delta = y[2] / fy[2]
            d -= delta
            if abs(delta) <= 64 * ctx.eps * H:
                break
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
