"""The experiment of mutze Sec. 7 (Figs. 2-3): the anti-damped harmonic oscillator in the
interaction picture, shared by mutze_fig02 (relative amplitude error) and mutze_fig03
(phase error).

Problem (eqs. 87-91): m x'' + b x' + k x = 0 with m = 1; the exact motion is
e^(-rho t) cos(omega t + phi), rho = b/(2m).  "Oscillation period 1": by default the
period 2 pi/omega of this (anti-damped) motion, omega = 2 pi, k = m (omega^2 + rho^2)
(``period="damped"``); ``period="undamped"`` takes k = m (2 pi)^2 instead (the paper does
not say; both are reported).  The amplitude doubles every two periods: e^(-2 rho T_p) = 2,
rho = -ln(2)/(2 T_p) < 0 (b = 2 m rho, anti-damping), so it grows by 2^10 = 1024 over 20
periods.  32 steps per period (h = T_p/32), 20 periods; the initial state is not printed
-- (x, v) = (1, 0) by default (``x0``, ``v0``).

Errors (eq. 92): s_int(t) = Phi_exact(-t) Phi_approx(t) s(0), with the complex amplitude
s_c = x - i (v + rho x)/omega; relative amplitude error (|s_int| - |s(0)|)/|s(0)| and
phase error arg s_int - arg s(0) in degrees (unwrapped), at every step.

Methods (keys of :data:`METHODS`): the direct midpoint method g = 0 solved exactly (eq.
79/89), with one simple iteration (eq. 80, a_{n+1} = a_*), and with zero iterations
(a = a_0); the g-family at g = 0.68 read as eq. (72) and at g = 0.34 (= 0.68 in the
convention x + v tau + g a tau^2/2 -- see reproductions/ERRATA.md); the midpoint
variation method (54); the Euler-Lagrange equation for parabolic paths (44); RK2 (the
explicit midpoint rule; Heun's method gives the same map on this linear autonomous
problem, checked in the run).
"""
from __future__ import annotations

from mpvi.repro.studies import numstr, study

from mpvi_papers._mutze import PAPER

PARAMS = {"steps_per_period": 32, "periods": 20, "x0": "1", "v0": "0", "period": "damped",
          "g_scan": {"start": "0", "stop": "1", "count": 51}}
QUICK = {"g_scan": {"start": "0", "stop": "1", "count": 6}}
"""Quick runs keep the paper's 20 periods (a few seconds): every compared claim is about them."""

METHODS = {
    "direct_midpoint": ("mutze", {"g": 0, "solver": "explicit"}),
    "direct_midpoint_simple1": ("mutze", {"g": 0, "solver": "iterate", "iterations": 1, "variant": "simple"}),
    "direct_midpoint_a0": ("mutze", {"g": 0, "solver": "iterate", "iterations": 0}),
    "g=0.68 (eq. 72)": ("mutze", {"g": "0.68", "solver": "explicit"}),
    "g=0.34 (0.68 halved)": ("mutze", {"g": "0.34", "solver": "explicit"}),
    "midpoint_variation": ("mutze_variation", {}),
    "parabolic_el": ("mutze_parabolic_el", {}),
    "rk2": ("rk2", {}),
}

STYLE = {
    "direct_midpoint": {"color": "tab:red", "ls": "-", "lw": 2.0, "label": "direct midpoint g = 0 (exact, eq. 79)"},
    "direct_midpoint_simple1": {"color": "tab:orange", "ls": "--", "label": "direct midpoint, one simple iteration (80)"},
    "direct_midpoint_a0": {"color": "tab:brown", "ls": ":", "label": "direct midpoint, zero iterations (a = a0)"},
    "g=0.68 (eq. 72)": {"color": "tab:blue", "ls": "-.", "label": "g = 0.68 in eq. (72)"},
    "g=0.34 (0.68 halved)": {"color": "tab:cyan", "ls": "-", "label": "g = 0.34 in eq. (72) (= 0.68 with g a tau^2/2)"},
    "midpoint_variation": {"color": "tab:green", "ls": "-", "lw": 2.5, "alpha": 0.6, "label": "midpoint variation method (54)"},
    "parabolic_el": {"color": "k", "ls": ":", "label": "Euler-Lagrange eq. for parabolic paths (44)"},
    "rk2": {"color": "tab:purple", "ls": "--", "label": "RK2 (explicit midpoint)"},
}


def oscillator(ctx, period="damped"):
    """(system, exact flow, period T_p) of the Sec. 7 oscillator (module doc)."""
    from mpvi.systems.damped import DampedOscillatorExact, damped_oscillator

    if period not in ("damped", "undamped"):
        raise ValueError(f"period must be 'damped' or 'undamped', got {period!r}")
    rho = -ctx.log(ctx.num(2)) / 2           # e^(-2 rho) = 2 with T_p = 1
    w = 2 * ctx.pi
    k = w * w + rho * rho if period == "damped" else w * w
    b = 2 * rho
    exact = DampedOscillatorExact(ctx, 1, k, b)
    return damped_oscillator(ctx, 1, k, b), exact


def errors(ctx, exact, t, x, v, x0, v0):
    """Relative amplitude error and phase error (degrees, unwrapped) at the states
    (x_j, v_j) reached at times t_j (eq. 92)."""
    r0, phi0 = exact.polar(*exact.amplitude(x0, v0))
    amp, phase = [], []
    turn = 2 * ctx.pi
    last = ctx.zero
    for tj, xj, vj in zip(t, x, v):
        r, phi = exact.polar(*exact.interaction(tj, xj, vj))
        d = phi - phi0
        d = d - turn * round(ctx.to_float((d - last) / turn))   # an integer: any context
        last = d
        amp.append((r - r0) / r0)
        phase.append(d * 180 / ctx.pi)
    return amp, phase


def run_method(rec, problem, name, h, n):
    """(t, x, v) at the nodes of the method ``name`` of :data:`METHODS`."""
    scheme, opts = METHODS[name]
    sol = rec.solve(problem, scheme, h=h, n=n, **opts)
    return sol.t, sol.q[:, 0], sol.v[:, 0]


@study("mutze_sec7_errors")
def sec7_errors(rec, params):
    """Amplitude and phase errors of every method of :data:`METHODS` at every step
    (module doc); also the largest difference between RK2's explicit-midpoint and Heun
    variants.  Returns {"t", "exact_growth", name: {"amplitude", "phase"}}."""
    ctx, p = rec.ctx, params
    problem, exact, h, n, x0, v0 = setup(ctx, p)
    out = {}
    for name in METHODS:
        rec.progress(f"Sec. 7 oscillator ({p['period']} period 1): {name}, {n} steps")
        t, x, v = run_method(rec, problem, name, h, n)
        amp, phase = errors(ctx, exact, t, x, v, x0, v0)
        out[name] = {"amplitude": ctx.asarray(amp), "phase": ctx.asarray(phase)}
        if name == "rk2":
            heun = rec.solve(problem, "rk2", h=h, n=n, variant="heun")
            out["rk2_heun_difference"] = max(max(abs(a - b) for a, b in zip(heun.q[:, 0], x)),
                                             max(abs(a - b) for a, b in zip(heun.v[:, 0], v)))
    out["t"] = t
    out["exact_growth"] = ctx.exp(-exact.rho * t[-1])
    return out


def setup(ctx, params):
    """(problem, exact, h, n, x0, v0) of the experiment described by ``params``: the
    :class:`mpvi.Problem` from (x0, v0), the exact flow, the step and the number of steps."""
    from mpvi import Problem

    system, exact = oscillator(ctx, params["period"])
    Tp = 2 * ctx.pi / exact.omega if params["period"] == "damped" else ctx.one
    x0, v0 = ctx.num(params["x0"]), ctx.num(params["v0"])
    problem = Problem(system, [x0], v0=[v0])
    return (problem, exact, Tp / params["steps_per_period"],
            params["steps_per_period"] * params["periods"], x0, v0)


def final_phase(rec, case, g, **opts):
    """Phase error (degrees) after all steps of the g-family (exact solve by default)."""
    problem, exact, h, n, x0, v0 = case
    opts = opts or {"solver": "explicit"}
    sol = rec.solve(problem, "mutze", h=h, n=n, g=g, **opts)
    return errors(rec.ctx, exact, sol.t, sol.q[:, 0], sol.v[:, 0], x0, v0)[1][-1]


def zero_phase_g(rec, case):
    """The g at which the final phase error vanishes: secant iteration on the exact
    g-family (the phase error is nearly linear in g), to 1e-12 in g."""
    ctx = rec.ctx
    g0, g1 = ctx.num("0.3"), ctx.num("0.4")
    f0, f1 = final_phase(rec, case, g0), final_phase(rec, case, g1)
    tol = ctx.num(10) ** -12
    for _ in range(40):
        g0, g1, f0 = g1, g1 - f1 * (g1 - g0) / (f1 - f0), f1
        f1 = final_phase(rec, case, g1)
        if abs(g1 - g0) < tol:
            return g1
    raise ArithmeticError("the secant iteration for the zero-phase g did not converge")


@study("mutze_sec7_g_scan")
def g_scan(rec, params):
    """Phase error after all periods for g on a grid, and the g at which it vanishes.
    Returns {"g", "phase", "g_zero"}."""
    from fractions import Fraction

    ctx, s = rec.ctx, params["g_scan"]
    case = setup(ctx, params)
    lo, hi, count = Fraction(s["start"]), Fraction(s["stop"]), s["count"]
    gs = [lo + (hi - lo) * i / (count - 1) for i in range(count)]
    rec.progress(f"g scan: {count} values of g in [{s['start']}, {s['stop']}], {case[3]} steps each")
    phases = [final_phase(rec, case, g) for g in gs]
    return {"g": ctx.asarray([ctx.num(g) for g in gs]), "phase": ctx.asarray(phases),
            "g_zero": zero_phase_g(rec, case)}


SENSITIVITY = [("damped", "1", "0"), ("undamped", "1", "0"), ("damped", "0", "1"), ("undamped", "0", "1")]
"""The unstated choices varied: which period is 1, and the initial state."""


@study("mutze_sec7_sensitivity")
def sensitivity(rec, params):
    """For each choice of :data:`SENSITIVITY`: the final phase error of the direct
    midpoint method (exact and one simple iteration) and the zero-phase g."""
    rows = []
    for period, x0, v0 in SENSITIVITY:
        rec.progress(f"sensitivity: period 1 of the {period} motion, (x, v) = ({x0}, {v0})")
        case = setup(rec.ctx, {**params, "period": period, "x0": x0, "v0": v0})
        rows.append({"period": period, "x0": x0, "v0": v0,
                     "direct_midpoint": final_phase(rec, case, 0),
                     "direct_midpoint_simple1": final_phase(rec, case, 0, solver="iterate", iterations=1,
                                                            variant="simple"),
                     "g_zero": zero_phase_g(rec, case)})
    return rows


def long_table(ctx, res):
    import pandas as pd
    rows = []
    for j, t in enumerate(res["t"]):
        for name in METHODS:
            rows.append({"t": numstr(ctx, t), "method": name,
                         "amplitude_error": numstr(ctx, res[name]["amplitude"][j]),
                         "phase_error_deg": numstr(ctx, res[name]["phase"][j])})
    return pd.DataFrame(rows)


def plot_errors(out, params, column, ylabel, title):
    import matplotlib.pyplot as plt
    import pandas as pd
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, grp in df.groupby("method", sort=False):
        st = dict(STYLE[name])
        ax.plot(pd.to_numeric(grp["t"]), pd.to_numeric(grp[column]), **st)
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xlabel("t (oscillation periods)")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7.5, loc="best")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


__all__ = ["PAPER", "PARAMS", "QUICK", "METHODS", "sec7_errors", "g_scan", "sensitivity", "long_table", "plot_errors"]
