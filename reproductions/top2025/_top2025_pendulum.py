"""top2025 Sec. 3, the nonlinear double pendulum (Table 1, l = g/omega0^2, ERRATA [E13]):
Figs. 2-5 and Table 2.  The cached studies -- the references of Figs. 2-3
(:data:`pendulum_reference`) and one energy-error run of Fig. 4 and Table 2
(:data:`pendulum_energy_error`) -- and what turns them into the figures' tables and plots."""
import pandas as pd

from mpvi import solve
from mpvi.analysis.measures import node_errors, sup_errors
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.studies import (Task, convergence_rows, convergence_sweep, energy_error_norm,
                                fraction, numstr, state_frame, steps, study, trajectory_frame)
from mpvi.systems.double_pendulum import nonlinear_double_pendulum

from mpvi_papers.top2025._top2025 import METHODS, PAPER, STEP_SECONDS, STYLE

#: Figs. 2-3 (the same parameters, so that the expensive references are one cached
#: study).  The paper's step h = 0.1 s over 10 s; references: GBS of order 64 (levels =
#: 32) at H = 0.05 s, whose error (< 1e-50) is shown by a second run at H/2, and the
#: paper's own reference, RK4 at h = 1e-5 s, sampled every ``plot_dt`` for the gray curve.
STATES_PARAMS = {"T": "10", "h": "0.1", "methods": list(METHODS),
                 "gbs_H": "0.05", "gbs_levels": 32, "rk4_ref_h": "1e-5", "plot_dt": "0.01",
                 "deviation_threshold": "1e-2"}
#: quick: GBS of order 20 at H = 0.1 s (error ~1e-11), RK4 reference at h = 5e-3 s
#: (error ~1e-6) instead of 1e-5 s -- both far below the 1e-2 deviation threshold.
STATES_QUICK = {"gbs_H": "0.1", "gbs_levels": 10, "rk4_ref_h": "5e-3"}
#: the parameters of :data:`pendulum_reference`
REFERENCE_KEYS = ("T", "h", "gbs_H", "gbs_levels", "rk4_ref_h", "plot_dt")


def reference_tasks(p):
    """The task of Figs. 2-3: the references (:data:`pendulum_reference`),
    whose cost is the RK4 run at ``rk4_ref_h`` (the GBS runs are a fraction of it)."""
    n = steps(p["T"], p["rk4_ref_h"])
    return [Task(pendulum_reference, {k: p[k] for k in REFERENCE_KEYS},
                 label=f"pendulum_reference T={p['T']} s, RK4 {n} steps of {p['rk4_ref_h']} s",
                 cost=n * STEP_SECONDS["pendulum"]["rk4"])]


def double_pendulum(ctx):
    """Table 1 double pendulum (l = g / omega0^2, see ERRATA [E13]): a :class:`mpvi.Problem`."""
    return nonlinear_double_pendulum(ctx)


def run_methods(run, prob, methods, T, h, label=""):
    """{method: Solution} of each method over [0, T] at step h (decimal strings)."""
    ctx, n = run.ctx, steps(T, h)
    out = {}
    for m in methods:
        run.progress(f"{label}{m}: {n} steps of h = {h} s")
        out[m] = run.solve(prob, m, h=ctx.num(h), n=n)
    return out


# ----- the studies --------------------------------------------------------------------------

def pendulum_energy_grid(ctx, T, N):
    """The step (h, n) = (T/N exactly, N) of top2025's double pendulum runs (T a decimal
    string)."""
    return ctx.num(fraction(T) / N), N


@study("pendulum_energy_error")
def pendulum_energy_error(rec, params):
    """top2025's nonlinear double pendulum (Table 1): ||e_H||_inf over [0, T] (T =
    ``params["T"]`` s, a decimal string) of ``params["method"]`` at h = T/N, N =
    ``params["N"]`` (h exact as T/N).  One point of the convergence tables of Fig. 4 and
    Table 2 (:func:`mpvi.repro.studies.convergence_rows` with variable 'H')."""
    ctx = rec.ctx
    prob = double_pendulum(ctx)
    errs = convergence_sweep(
        rec, prob, [params["method"]], [pendulum_energy_grid(ctx, params["T"], params["N"])],
        lambda sol, ref: {"H": energy_error_norm(prob.system, sol)},
        label=f"T = {params['T']} s, ", unit=" s")
    return errs[(params["method"], "H")][0]


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
    prob = double_pendulum(ctx)
    T, H, lv = p["T"], p["gbs_H"], p["gbs_levels"]
    n = steps(T, H)
    rec.progress(f"reference: GBS order {2 * lv}, {n} steps of H = {H} s")
    gbs = rec.solve(prob, "gbs", h=ctx.num(H), n=n, levels=lv)
    rec.progress(f"reference check: GBS order {2 * lv}, {2 * n} steps of H/2")
    half = rec.solve(prob, "gbs", h=ctx.num(H) / 2, n=2 * n, levels=lv)
    check = sup_errors(gbs, half.q[::2], half.p[::2])
    # The paper's reference, RK4 at a small step, kept only every plot_dt (every chunk =
    # plot_dt/rk4_ref_h steps of one run).
    hf, dt = p["rk4_ref_h"], p["plot_dt"]
    chunk, k = steps(dt, hf), steps(T, dt)
    rec.progress(f"reference: RK4, {chunk * k} steps of h = {hf} s (kept every {dt} s)")
    rk4 = rec.solve(prob, "rk4", h=ctx.num(hf), n=chunk * k, saveat=chunk)
    rq, rp = rk4.q, rk4.p
    s_ref, s_gbs = steps(p["h"], dt), steps(p["h"], H)
    rk4_vs = {"q": max(node_errors(ctx, rq[::s_ref], gbs.q[::s_gbs])),
              "p": max(node_errors(ctx, rp[::s_ref], gbs.p[::s_gbs]))}
    return {"gbs_t": gbs.t, "gbs_q": gbs.q, "gbs_p": gbs.p, "gbs_check": check,
            "rk4_t": rk4.t, "rk4_q": rq, "rk4_p": rp, "rk4_vs_gbs": rk4_vs}


# ----- Figs. 2-3 ------------------------------------------------------------------------------

def _first_time_above(t, dev, level):
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
    ref = run.study(pendulum_reference, {k: p[k] for k in REFERENCE_KEYS})
    sols = run_methods(run, prob, p["methods"], p["T"], p["h"])
    stride = steps(p["h"], p["gbs_H"])
    X_ref = ref[f"gbs_{var}"][::stride]
    scale = max(ctx.norm2(x) for x in X_ref)
    level = ctx.num(p["deviation_threshold"])
    cols = ["t", "method", f"{var}1", f"{var}2"]
    frames = [trajectory_frame(sol, m)[cols] for m, sol in sols.items()]
    frames.append(state_frame(ctx, ref["gbs_t"], ref["gbs_q"], ref["gbs_p"], "reference_gbs")[cols])
    frames.append(state_frame(ctx, ref["rk4_t"], ref["rk4_q"], ref["rk4_p"],
                              "reference_rk4")[cols])
    t_nodes = ref["gbs_t"][::stride]
    devs = {m: node_errors(ctx, getattr(sol, var), X_ref) for m, sol in sols.items()}
    s_ref = steps(p["h"], p["plot_dt"])
    devs[f"reference_rk4 h={p['rk4_ref_h']}"] = node_errors(ctx, ref[f"rk4_{var}"][::s_ref], X_ref)
    dev_df = pd.concat([pd.DataFrame({"t": [numstr(ctx, t) for t in t_nodes], "method": m,
                                      "deviation": [numstr(ctx, d) for d in dv]})
                        for m, dv in devs.items()], ignore_index=True)
    values = {}
    for m in sols:
        mx = max(devs[m])
        values[f"{m} max deviation {var}"] = numstr(ctx, mx)
        values[f"{m} relative deviation {var}"] = numstr(ctx, mx / scale)
        t_first = _first_time_above(t_nodes, devs[m], level * scale)
        if t_first is not None:
            values[f"{m} first deviation time {var}"] = numstr(ctx, t_first)
    for m in sols:
        if m != "simpson" and "simpson" in sols:
            values[f"{m}/simpson deviation ratio {var}"] = numstr(
                ctx, max(devs[m]) / max(devs["simpson"]))
    values[f"reference gbs halving difference {var}"] = numstr(ctx, ref["gbs_check"][var])
    values[f"reference rk4 h={p['rk4_ref_h']} vs gbs {var}"] = numstr(ctx, ref["rk4_vs_gbs"][var])
    extra = {"reference": {
        "used_for_deviations": f"GBS, order {2 * p['gbs_levels']}, H = {p['gbs_H']} s",
        "gbs_max_difference_H_vs_H/2": {v: numstr(ctx, ref["gbs_check"][v]) for v in "qp"},
        f"rk4_h={p['rk4_ref_h']}_max_difference_vs_gbs_at_nodes_h={p['h']}":
            {v: numstr(ctx, ref["rk4_vs_gbs"][v]) for v in "qp"}},
        "deviation_scale_max_norm_of_reference": numstr(ctx, scale),
        "quick": run.quick}
    return Output(tables={"": pd.concat(frames, ignore_index=True), "deviation": dev_df},
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


CERTIFIED_REFERENCE_H = "1/1000"
"""The step of the certified reference of Figs. 2-3 (:func:`certify_states`): RK4, the
paper's kind of reference, at a step whose 10^4 steps over 10 s can be walked on balls
(its 10^6 steps at the paper's 1e-5 s cannot at a sane cost, and GBS of order 64 is
refused by mpvi.certify: its extrapolation's rounding exceeds the allowance)."""


def certify_states(run, out, var):
    """``mpvi run --certify`` of Figs. 2-3: the three methods' runs at h over [0, T]
    certified (:func:`mpvi.certify`) under width control
    (:func:`mpvi.repro.certified.certify_controlled`: a run whose proven digits fall below
    :data:`mpvi.repro.certified.PROVEN_SHARE` of its digits is solved and certified again
    at twice the digits, once, else its certified span is said), their proven digits
    against time as the growth series, and a reference certified as a discrete
    trajectory: RK4 at :data:`CERTIFIED_REFERENCE_H` (its exact discrete trajectory
    enclosed).  The deviations |x_j - x_ref(t_j)|_2 of the methods' exact discrete
    trajectories from it, their maxima, ratios, relative deviations and first times above
    the threshold are enclosed; the recorded deviations (from the GBS reference) agree
    with them to the proven digits.  The GBS and RK4 (h = 1e-5 s) references' own
    comparisons are not certified."""
    from fractions import Fraction

    from mpvi.numbers.arb import ArbContext
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.certified import (PROVEN_SHARE, ball_max, ball_norm, certified_run,
                                      certify_controlled, growth_series)
    from mpvi.repro.digits import proven_digits
    ctx, p = run.ctx, run.params
    growth, said, certs = {}, [], {}
    for m in p["methods"]:
        def solve_at(d, m=m):
            c = type(ctx)(d)
            with c.active():
                return solve(double_pendulum(c), m, h=c.num(p["h"]), n=steps(p["T"], p["h"]))
        run.progress(f"certifying {m}: {steps(p['T'], p['h'])} steps of h = {p['h']} s")
        found = certify_controlled(solve_at, ctx.dps, float(PROVEN_SHARE * ctx.dps), attempts=1)
        growth[f"{m} h={p['h']} s"] = growth_series(
            found.certificate, f"top2025 double pendulum (q0 = (pi/4, pi/3)), {m}, h = "
            f"{p['h']} s over {p['T']} s (Lohner): {found.statement}")
        said.append(f"{m}: {found.statement}")
        if found.met and found.dps == ctx.dps:
            certs[m] = found.certificate
    href = Fraction(CERTIFIED_REFERENCE_H)
    n_ref, stride = steps(p["T"], href), steps(p["h"], href)
    values, digits, why_not = {}, [], {}
    run.progress(f"certifying the reference: rk4, {n_ref} steps of h = {href} s")
    with ctx.active(), arb_precision(ctx.dps + GUARD_DIGITS):
        ref = certified_run(solve(double_pendulum(ctx), "rk4", h=ctx.num(href), n=n_ref),
                            f"top2025 double pendulum, RK4 reference, h = {href} s")
        X = (ref.q if var == "q" else ref.y)[::stride]
        scale = ball_max(ball_norm(x) for x in X)
        level = ArbContext(ctx.dps + GUARD_DIGITS).num(p["deviation_threshold"]) * scale
        devs = {}
        for m, cert in certs.items():
            Y = cert.q if var == "q" else cert.y
            devs[m] = [ball_norm([a - b for a, b in zip(y, x)]) for y, x in zip(Y, X)]
        table = out.tables["deviation"]
        for m, dv in devs.items():
            rows = table[table["method"] == m]["deviation"].tolist()
            digits += [proven_digits(x, b)[0] for x, b in zip(rows[1:], dv[1:])]  # row 0: 0
            largest = ball_max(dv)
            for key, ball in ((f"{m} max deviation {var}", largest),
                              (f"{m} relative deviation {var}", largest / scale)):
                values[key] = proven_digits(out.values[key], ball)
            key = f"{m} first deviation time {var}"
            if key in out.values:
                first = next((j for j, d in enumerate(dv) if not d < level), None)
                if first is None or not dv[first] > level:
                    why_not[key] = ("the deviation at a node is not proven on one side of the "
                                    "threshold")
                else:
                    t = ref.context.lift(ctx.num(p["h"])) * first
                    values[key] = proven_digits(out.values[key], t)
        for m in devs:
            if m != "simpson" and "simpson" in devs:
                key = f"{m}/simpson deviation ratio {var}"
                values[key] = proven_digits(out.values[key],
                                            ball_max(devs[m]) / ball_max(devs["simpson"]))
    why = ("a comparison between the numerical references (GBS at H and H/2, RK4 at h = "
           f"{p['rk4_ref_h']} s, 10^6 steps: walking it on balls would cost ~30 times the "
           "plain run); the methods' deviations are proven against the certified RK4 "
           f"reference at h = {href} s instead")
    mixed = ("the table mixes the methods' states with the references' (not enclosed); the "
             "methods' proven digits are the growth series")
    for k in out.values:
        if k not in values:
            why_not.setdefault(k, why)
    return {"statement": ("The three methods' runs certified (mpvi.certify, Lohner's method, "
                          "rounding excluded, from the run's binary data); width control: "
                          + "; ".join(said) + ".  Reference: RK4 at h = "
                          f"{href} s certified as a discrete trajectory (its exact discrete "
                          "trajectory enclosed; its distance to the exact flow, ~1e-11 by "
                          "the GBS run, is not proven); the deviations are the Euclidean "
                          f"norms |x_j - x_ref(t_j)| at the nodes t_j = j h (the reference's "
                          f"node {stride} j: the same time up to the rounding of the two "
                          "steps), the first deviation time the first node proven above "
                          "the threshold times max_j |x_ref(t_j)|, every node before it "
                          "proven below.  The recorded deviations are from the GBS reference "
                          "of order 64: they agree with these enclosures to the proven "
                          "digits."),
            "columns": {"deviation": {"deviation": digits}},
            "not_certified": {**{c: mixed for c in ("t", "method", f"{var}1", f"{var}2")},
                              "deviation.t": "the node time j h: an input",
                              "deviation.method": "an input",
                              **why_not},
            "values": values,
            "growth": growth}


def states_reproduction(rid, item, var, title, params, quick):
    """The Reproduction of Fig. 2 (var 'q') or Fig. 3 (var 'p'); ``params`` and ``quick``
    should be STATES_PARAMS and STATES_QUICK for the references to be shared."""
    return Reproduction(id=rid, paper=PAPER, item=item, title=title, params=params, quick=quick,
                        compute=lambda run: pendulum_states(run, var),
                        plot=lambda out, p: plot_states(out, p, var, item),
                        tasks=reference_tasks,
                        certify=lambda run, out: certify_states(run, out, var))


def energy_error_params(T, Ns, methods):
    """The parameters of :data:`pendulum_energy_error` for span ``T`` (a
    decimal string), every N in ``Ns`` and every method: one independent run each."""
    return [{"T": T, "N": N, "method": m} for N in Ns for m in methods]


def energy_error_tasks(T, Ns, methods):
    """The :class:`mpvi.repro.studies.Task` list of :func:`energy_convergence`."""
    return [Task(pendulum_energy_error, q, label=f"pendulum_energy_error T={T} s {q['method']} "
                                                 f"N={q['N']}",
                 cost=q["N"] * STEP_SECONDS["pendulum"][q["method"]])
            for q in energy_error_params(T, Ns, methods)]


def energy_convergence(run, T, Ns, methods):
    """||e_H||_inf of the double pendulum over [0, T] for every method and h = T/N, N in
    ``Ns`` (one study per run, :data:`pendulum_energy_error`), as
    :func:`mpvi.repro.studies.convergence_rows` with variable 'H'."""
    ctx = run.ctx
    errs = {}
    for q in energy_error_params(T, Ns, methods):
        errs.setdefault((q["method"], "H"), []).append(run.study(pendulum_energy_error, q))
    grid = [pendulum_energy_grid(ctx, T, N) for N in Ns]
    return convergence_rows(ctx, methods, ["H"], grid, errs)


def orders_frame(ctx, rows, first=()):
    """A convergence table (rows of :func:`energy_convergence`) as
    full-precision strings; ``first``: (column, value) pairs put in front (e.g. ("T", 10))."""
    def s(x):
        return "" if x is None else numstr(ctx, x)
    data = {c: v for c, v in first}
    data.update({"method": [r["method"] for r in rows], "N": [r["N"] for r in rows],
                 "h": [s(r["h"]) for r in rows], "error": [s(r["error"]) for r in rows],
                 "order_step": [s(r["order_step"]) for r in rows],
                 "order": [s(r["order"]) for r in rows]})
    return pd.DataFrame(data)


# ----- certified energy errors (mpvi run --certify) -----------------------------------------

ENERGY_STATEMENT = (
    "Each energy error is an Arb enclosure of e_H = (H(q_n, p_n) - H_0) / H_0 with (q_n, p_n) "
    "the method's exact discrete trajectory (mpvi.certify, Lohner's method, rounding "
    "excluded) and H evaluated on the enclosures; H_0 = H of the exact initial data; norms "
    "are maxima of the enclosed |e_H|, orders least-squares slopes (or two-step slopes) of "
    "the enclosed log errors against the exact log h, growth values quotients of enclosed "
    "maxima.  The data are those the run used as binary numbers: m, l = g/omega0^2, g = "
    "9.81, q0 = (pi/4, pi/3) rounded to the run's digits, h = T/N (or the decimal h) "
    "rounded; the enclosures are of the computation so defined.")

_CERTIFIED_ENERGY = {}
"""The results of :func:`certified_energy_errors` in this process (Fig. 4 and Table 2
share the runs at T = 10 s)."""


def certified_energy_errors(ctx, method, h, n, what):
    """``(h, [e_H ball per node])``: the step the run took (exact, a Fraction) and Arb
    enclosures of the signed relative energy error of ``method`` on the Table 1 double
    pendulum over ``n`` steps of ``h`` (a number of ``ctx`` or a decimal string), the run
    solved as :data:`pendulum_energy_error` and :func:`run_methods` solve it, certified
    (:func:`mpvi.repro.certified.certified_run`, :data:`ENERGY_STATEMENT`).  Flint's
    precision is the caller's (set it to the run's digits plus guard digits).
    ArithmeticError naming ``what`` if the proof fails.  Kept for the process."""
    from mpvi.numbers.arbref import exact_rational
    from mpvi.repro.certified import certified_run, relative_energy_balls
    with ctx.active():
        hn = ctx.num(h)
        key = (type(ctx).__name__, ctx.dps, method, exact_rational(hn, "h"), n)
        if key not in _CERTIFIED_ENERGY:
            prob = double_pendulum(ctx)
            sol = solve(prob, method, h=hn, n=n)
            cert = certified_run(sol, what)
            _CERTIFIED_ENERGY[key] = (exact_rational(sol.h, "h"),
                                      relative_energy_balls(prob.system, cert, what))
    return _CERTIFIED_ENERGY[key]


def certify_energy_convergence(run, T, Ns, methods):
    """``{(method, N): (h, e_H norm ball)}``: the enclosed ||e_H||_inf of every run of
    :func:`energy_convergence` (:func:`certified_energy_errors`)."""
    from mpvi.repro.certified import ball_max
    ctx = run.ctx
    found = {}
    for N in Ns:
        for m in methods:
            run.progress(f"certifying {m}: T = {T} s, N = {N}")
            h, e = certified_energy_errors(ctx, m, fraction(T) / N, N,
                                           f"top2025 double pendulum, {m}, T = {T} s, N = {N}")
            found[(m, N)] = (h, ball_max(abs(x) for x in e))
    return found


def certified_orders(found, methods, Ns):
    """Enclosures of the columns of :func:`orders_frame` from the certified norms
    ``found`` (:func:`certify_energy_convergence`): ``({(method, N): {"error", "order_step",
    "order"}}, {method: least-squares order})``; ``order_step`` is None for the first N."""
    from mpvi.repro.certified import ball_slope, least_squares_order
    out, orders = {}, {}
    for m in methods:
        hs = [found[(m, N)][0] for N in Ns]
        es = [found[(m, N)][1] for N in Ns]
        orders[m] = least_squares_order(hs, es) if len(Ns) > 1 else None
        for i, N in enumerate(Ns):
            out[(m, N)] = {"error": es[i], "order": orders[m],
                           "order_step": None if i == 0 else
                           ball_slope(hs[i - 1], hs[i], es[i - 1], es[i])}
    return out, orders


def orders_digits(df, balls, digits, first=None):
    """Append to ``digits`` ({column: [proven digits]}) the proven digits of the rows of
    ``df`` (an :func:`orders_frame`, with its ``first`` column filter (column, value) if
    given) against ``balls`` (:func:`certified_orders`)."""
    from mpvi.repro.digits import proven_digits
    for (m, N), b in balls.items():
        sel = (df["method"] == m) & (df["N"] == N)
        if first is not None:
            sel &= df[first[0]] == first[1]
        row = df[sel].iloc[0]
        for column in ("error", "order_step", "order"):
            if b[column] is not None:
                digits.setdefault(column, []).append(proven_digits(row[column], b[column])[0])
