"""mutze Sec. 6, eq. (86): the direct midpoint rule for a quantum particle on a 1-D grid,
and the claim that norm and energy "come back to the original values with nearly the
accuracy of the computer's number representation in all phases of calmer motion".

Model (:mod:`mpvi_papers.mutze._mutze_quantum`): hbar = m = 1, H = -D2/2 + V on N interior grid
points (Dirichlet ends), a rectangular barrier in the middle, time-independent; eq. (86)
with psi'_0 = H psi_0 / (i hbar), run at 64 digits and in float64 from the same
parameters.  The half step tau must satisfy tau omega_max < 1 (derived symbolically for
x'' = -omega^2 x; omega_max by Gershgorin), else the run is refused.

Scenarios: ``gauss`` -- a Gaussian packet (k0 = 0.5 per grid spacing) that hits the
barrier (part reflected, part transmitted) and the walls several times; ``nyquist`` -- the
same packet at k0 = 2.8, close to the grid's Nyquist wave number pi/dx (violent for the
grid and for the time step: tau lambda ~ 0.8); ``sharp`` -- a sharp-edged (box) packet.
"Violent" output times: more than ``calm_mass`` of |psi|^2 within ``zone`` of a wall or of
the barrier; the others are "calm".

Recorded at each output time (main table, long form: scenario, context, step, t, ...):
relative deviations of the norm ||psi||^2 and of the energy <H> = <psi|H|psi>/||psi||^2
from their initial values; the relative Schroedinger residual ||psi' - H psi/(i hbar)|| /
||H psi||; the relative deviations of the two conserved quadratic forms Q and Nbar; the
exact closed-form prediction of norm and energy (eigen-decomposition of H, 64 digits);
the error against the exact evolution exp(-i H t) psi_0 of the discretised Schroedinger
equation (Chebyshev, 64 digits) every ``exact_every`` outputs; for float64 also the
distance to the 64-digit scheme.  Further tables: ``_long`` (a long float64 run in
blocks: no trend?), ``_tauscan`` (float64: the calm-phase norm offset against tau), and
``_density`` (|psi|^2 of the 64-digit ``gauss`` run, for the space-time plot).  Beyond
the bound: float64 runs at tau = 0.99, 1.01, 1.05 / rho(H) (true spectral radius), the
step at which the norm passes 2 (the paper states no step-size condition: ERRATA [E79]).

Finding (ERRATA [E78]): the norm and energy do NOT come back to their initial values.  The
map conserves Q and Nbar exactly (to 1e-64 / 1e-16), so it is bounded with no trend, but the
Schroedinger initial velocity excites, in every eigenmode of H, a backward wave of relative
amplitude ~ (tau lambda)^2 / 4; the norm then oscillates about Nbar = N0 - tau^2 ||H psi_0||^2
/ 2 (-1.3e-3 for ``gauss``), its deviation governed by the autocorrelation of psi_0 at the
doubled time 2t -- in calm and violent phases alike; the 64-digit and float64 runs give the
same deviations to ~1e-15 (the effect is in the exact-arithmetic map, not round-off).

Run: ``mpvi run mutze_quantum`` or ``python reproductions/mutze/mutze_quantum.py``.
"""
import math
from fractions import Fraction

import numpy as np
import pandas as pd

from mpvi.numbers.context import fp
from mpvi.repro.declare import needs_mp, Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr
from mpvi_papers.mutze._mutze import PAPER
from mpvi_papers.mutze._mutze_quantum import (
    ChebyshevPropagator,
    Particle,
    closed_form,
    invariant_form,
    spectral_data,
    stability_bound,
    to_fp,
)

PARAMS = {
    "n": 300, "dx": "1", "hbar": "1", "mass": "1",
    "barrier": {"center": "151", "halfwidth": "3", "height": "0.12"},
    "tau": "0.4",
    "scenarios": [
        {"name": "gauss", "kind": "gauss", "x0": "75", "sigma": "10", "k0": "0.5",
         "steps": 1200, "out_every": 10},
        {"name": "nyquist", "kind": "gauss", "x0": "75", "sigma": "10", "k0": "2.8",
         "steps": 400, "out_every": 10, "exact_every": 20},
        {"name": "sharp", "kind": "box", "x0": "75", "width": "30", "k0": "0.5",
         "steps": 400, "out_every": 10, "exact_every": 20},
    ],
    "exact_every": 30,
    "zone": "15", "calm_mass": "0.01",
    "density_every": 2,
    "long_steps": 100000, "long_block": 500,
    "tau_scan": ["0.4", "0.2", "0.1", "0.05", "0.025"], "scan_time": "480",
    "beyond_bound": ["0.99", "1.01", "1.05"], "beyond_steps": 5000,
}
QUICK = {
    "n": 80, "barrier": {"center": "41", "halfwidth": "1", "height": "0.12"},
    "scenarios": [
        {"name": "gauss", "kind": "gauss", "x0": "20", "sigma": "4", "k0": "0.5",
         "steps": 250, "out_every": 5},
        {"name": "nyquist", "kind": "gauss", "x0": "20", "sigma": "4", "k0": "2.8",
         "steps": 100, "out_every": 5},
        {"name": "sharp", "kind": "box", "x0": "20", "width": "10", "k0": "0.5",
         "steps": 100, "out_every": 5},
    ],
    "exact_every": 25, "zone": "6", "long_steps": 10000, "long_block": 100,
    "tau_scan": ["0.4", "0.2", "0.1"], "scan_time": "100", "beyond_steps": 2000,
}

COLUMNS = ["scenario", "context", "step", "t", "norm_dev", "energy_dev", "residual", "Q_dev",
           "Nbar_dev", "predicted_norm_dev", "predicted_energy_dev", "violent_mass", "calm",
           "error_vs_exact", "diff_vs_mp"]


def make_particle(ctx, p):
    b = p["barrier"]
    c, hw, h = ctx.num(b["center"]), ctx.num(b["halfwidth"]), ctx.num(b["height"])
    return Particle(ctx, p["n"], p["dx"], p["hbar"], p["mass"],
                    potential=lambda x: h if abs(x - c) <= hw else ctx.zero)


def initial_state(particle, sc):
    if sc["kind"] == "gauss":
        return particle.gaussian(sc["x0"], sc["sigma"], sc["k0"])
    if sc["kind"] == "box":
        return particle.box(sc["x0"], sc["width"], sc["k0"])
    raise ValueError(f"unknown initial state kind {sc['kind']!r} (gauss or box)")


def violent_mask(particle, p):
    """Grid points within ``zone`` of a wall or of the barrier."""
    ctx = particle.ctx
    zone = ctx.num(p["zone"])
    c, hw = ctx.num(p["barrier"]["center"]), ctx.num(p["barrier"]["halfwidth"])
    return np.array([x < zone or x > particle.length - zone or abs(x - c) <= hw + zone
                     for x in particle.x])


def relative(a, b):
    """(a - b) / b."""
    return (a - b) / b


def simulate(particle, X0, tau, steps, out_every, mask, calm_mass, on_output=None):
    """Eq. (86) from psi'_0 = H psi_0/(i hbar); ``on_output(n, X, V)`` at every output step.
    Returns the list of output records (numbers of the particle's context)."""
    X, V = X0, particle.schroedinger_velocity(X0)
    o0 = particle.observe(X, V, tau)
    records = []
    for n in range(steps + 1):
        if n % out_every == 0:
            o = particle.observe(X, V, tau)
            vm = particle.mass_in(X, mask)
            rec = {"step": n, "t": 2 * tau * n,
                   "norm_dev": relative(o["norm"], o0["norm"]),
                   "energy_dev": relative(o["energy"], o0["energy"]),
                   "residual": o["residual"],
                   "Q_dev": relative(o["Q"], o0["Q"]),
                   "Nbar_dev": relative(o["Nbar"], o0["Nbar"]),
                   "violent_mass": vm, "calm": bool(vm < calm_mass)}
            if on_output is not None:
                rec.update(on_output(n, X, V))
            records.append(rec)
        if n < steps:
            X, V = particle.step(X, V, tau)
    return records, o0


def scenario(run, pm, pf, sc, p, tau, density):
    ctx = run.ctx
    name = sc["name"]
    mask = violent_mask(pm, p)
    X0 = initial_state(pm, sc)
    run.progress(f"{name}: spectral data of H (implicit QL, {ctx.dps} digits)")
    lam, w = spectral_data(pm, X0)
    N0 = pm.norm2(X0)
    E0 = pm.dot(X0, pm.H(X0)) / N0
    every = sc.get("exact_every", p["exact_every"])
    prop = ChebyshevPropagator(pm, 2 * tau * sc["out_every"] * every)
    run.progress(f"{name}: {ctx.dps}-digit run, {sc['steps']} steps of eq. (86); exact reference by "
                 f"Chebyshev ({prop.terms()} terms per {every} outputs)")
    ref = {"X": X0, "n": 0}
    saved = {}

    def mp_output(n, X, V):
        out = {}
        cn, ce = closed_form(pm, lam, w, tau, n)
        out["predicted_norm_dev"] = (cn - N0) / N0
        out["predicted_energy_dev"] = (ce / cn - E0) / E0
        out["closed_form_gap"] = abs(pm.norm2(X) - cn) / N0
        if (n // sc["out_every"]) % every == 0:
            while ref["n"] < n:
                ref["X"] = prop(ref["X"])
                ref["n"] += sc["out_every"] * every
            out["error_vs_exact"] = ctx.sqrt(pm.norm2(X - ref["X"]) / N0)
            saved[n] = (X.astype(float), ref["X"].astype(float))
        else:
            saved[n] = (X.astype(float), None)
        if density is not None and (n // sc["out_every"]) % p["density_every"] == 0:
            density.append([n] + [float(a * a + b * b) for a, b in zip(X[0], X[1])])
        if n and n % (sc["out_every"] * 50) == 0:
            run.progress(f"{name}: step {n}/{sc['steps']}")
        return out

    calm_mass = ctx.num(p["calm_mass"])
    mp_rec, _ = simulate(pm, X0, tau, sc["steps"], sc["out_every"], mask, calm_mass, mp_output)
    run.progress(f"{name}: float64 run")
    X0f = X0.astype(float)

    def fp_output(n, X, V):
        Xm, Xr = saved[n]
        out = {"diff_vs_mp": math.sqrt(pf.norm2(X - Xm))}
        if Xr is not None:
            out["error_vs_exact"] = math.sqrt(pf.norm2(X - Xr) / float(N0))
        return out

    fp_rec, _ = simulate(pf, X0f, float(tau), sc["steps"], sc["out_every"], mask,
                         float(calm_mass), fp_output)
    for r, rm in zip(fp_rec, mp_rec):
        r["predicted_norm_dev"] = rm["predicted_norm_dev"]
        r["predicted_energy_dev"] = rm["predicted_energy_dev"]
    offset = -tau ** 2 * pm.norm2(pm.H(X0)) / (2 * pm.hbar ** 2 * N0)
    return mp_rec, fp_rec, {"offset": offset, "N0": N0, "E0": E0, "lam": lam, "w": w}


def rows_of(recs, name, cname, c):
    rows = []
    for r in recs:
        row = {"scenario": name, "context": cname}
        for col in COLUMNS[2:]:
            v = r.get(col)
            if v is None:
                row[col] = ""
            elif col in ("step",):
                row[col] = str(v)
            elif col == "calm":
                row[col] = "1" if v else "0"
            else:
                row[col] = numstr(c, c.num(v)) if c.is_mp else fp.to_str(v)
        rows.append(row)
    return rows


def summarize(ctx, name, cname, recs, eps, values, offset):
    """Key numbers of one run into ``values``."""
    def s(x):
        return ctx.to_str(x, 6) if ctx.is_mp else fp.to_str(x, 6)

    def amax(key, sel=None):
        vals = [abs(r[key]) for r in (sel if sel is not None else recs) if r.get(key) is not None]
        return max(vals) if vals else None

    # calm outputs after the first violent one ("come back ... in phases of calmer motion")
    first_violent = next((i for i, r in enumerate(recs) if not r["calm"]), len(recs))
    calm = [r for r in recs[first_violent:] if r["calm"]]
    violent = [r for r in recs if not r["calm"]]
    pre = f"{name} {cname}"
    values[f"{pre} max |norm dev|"] = s(amax("norm_dev"))
    values[f"{pre} max |energy dev|"] = s(amax("energy_dev"))
    values[f"{pre} final norm dev"] = s(recs[-1]["norm_dev"])
    values[f"{pre} final energy dev"] = s(recs[-1]["energy_dev"])
    values[f"{pre} max residual"] = s(amax("residual"))
    values[f"{pre} max |Q dev|"] = s(amax("Q_dev"))
    values[f"{pre} max |Nbar dev|"] = s(amax("Nbar_dev"))
    errs = amax("error_vs_exact")
    if errs is not None:
        values[f"{pre} max error vs exact"] = s(errs)
    values[f"{pre} calm outputs"] = str(len(calm))
    values[f"{pre} violent outputs"] = str(len(violent))
    if calm:
        cn, ce = amax("norm_dev", calm), amax("energy_dev", calm)
        values[f"{pre} calm max |norm dev|"] = s(cn)
        values[f"{pre} calm min |norm dev|"] = s(min(abs(r["norm_dev"]) for r in calm))
        values[f"{pre} calm max |energy dev|"] = s(ce)
        values[f"{pre} calm max |norm dev| / eps"] = s(cn / eps)
        values[f"{pre} calm max |energy dev| / eps"] = s(ce / eps)
        mean = sum(r["norm_dev"] for r in calm) / len(calm)
        values[f"{pre} calm mean norm dev"] = s(mean)
        values[f"{pre} calm mean norm dev / predicted offset"] = s(mean / (offset if ctx.is_mp
                                                                          else float(offset)))
        if violent:
            values[f"{pre} violent/calm max |norm dev|"] = s(amax("norm_dev", violent) / cn)


def long_run(run, pf, X0f, tau, p):
    """float64, ``long_steps`` steps in blocks: min/mean/max of the norm and energy
    deviations and max |Q dev|, |Nbar dev| per block."""
    steps, block = p["long_steps"], p["long_block"]
    run.progress(f"long float64 run: {steps} steps")
    X, V = X0f, pf.schroedinger_velocity(X0f)
    o0 = pf.observe(X, V, tau)
    rows, acc = [], []
    for n in range(1, steps + 1):
        X, V = pf.step(X, V, tau)
        if n % (block // 10) == 0:
            o = pf.observe(X, V, tau)
            acc.append((o["norm"] / o0["norm"] - 1, o["energy"] / o0["energy"] - 1,
                        o["Q"] / o0["Q"] - 1, o["Nbar"] / o0["Nbar"] - 1))
        if n % block == 0:
            a = np.array(acc)
            rows.append({"block_end_step": n, "t": 2 * tau * n,
                         "norm_dev_min": a[:, 0].min(), "norm_dev_mean": a[:, 0].mean(),
                         "norm_dev_max": a[:, 0].max(), "energy_dev_min": a[:, 1].min(),
                         "energy_dev_mean": a[:, 1].mean(), "energy_dev_max": a[:, 1].max(),
                         "Q_dev_maxabs": np.abs(a[:, 2]).max(),
                         "Nbar_dev_maxabs": np.abs(a[:, 3]).max()})
            acc = []
    return pd.DataFrame(rows)


def trend(df, col, lo, hi):
    """|least-squares slope of the block means x run length| / (overall max - min)."""
    t = df["t"].to_numpy(float)
    y = df[col].to_numpy(float)
    slope = np.polyfit(t, y, 1)[0]
    return abs(slope * (t[-1] - t[0])) / (df[hi].max() - df[lo].min())


def tau_scan(run, pf, X0f, mask, p):
    """float64: mean and max |norm dev| over the calm outputs after the first violent one,
    for each tau, against the predicted offset -tau^2 ||H psi_0||^2 / (2 hbar^2 N0)."""
    rows = []
    T = float(p["scan_time"])
    H0 = pf.norm2(pf.H(X0f))
    N0 = pf.norm2(X0f)
    for ts in p["tau_scan"]:
        tau = pf.check_tau(ts)
        steps = round(T / (2 * tau))
        run.progress(f"tau scan: tau = {ts}, {steps} float64 steps")
        recs, _ = simulate(pf, X0f, tau, steps, max(1, steps // 400), mask, float(p["calm_mass"]))
        first = next((i for i, r in enumerate(recs) if not r["calm"]), len(recs))
        calm = [r["norm_dev"] for r in recs[first:] if r["calm"]]
        pred = -tau ** 2 * H0 / (2 * pf.hbar ** 2 * N0)
        rows.append({"tau": ts, "steps": steps, "calm_outputs": len(calm),
                     "calm_mean_norm_dev": float(np.mean(calm)) if calm else float("nan"),
                     "calm_max_abs_norm_dev": float(np.max(np.abs(calm))) if calm else float("nan"),
                     "predicted_offset": pred})
    df = pd.DataFrame(rows)
    df["mean_over_predicted"] = df["calm_mean_norm_dev"] / df["predicted_offset"]
    return df


def compute(run):
    ctx, p = run.ctx, run.params
    pm = make_particle(ctx, p)
    tau = pm.check_tau(p["tau"])
    pf = to_fp(pm)
    sup, interval = stability_bound()
    values = {"stability bound sup omega tau": str(sup),
              "stability region omega tau": str(interval),
              "invariant form (x, v)": str(invariant_form()),
              "tau omega_max (Gershgorin)": ctx.to_str(tau * pm.omega_max(), 6)}
    rows, density, summaries = [], [], {}
    for sc in p["scenarios"]:
        dens = density if sc["name"] == "gauss" else None
        mp_rec, fp_rec, info = scenario(run, pm, pf, sc, p, tau, dens)
        summaries[sc["name"]] = (mp_rec, fp_rec, info)
        rows += rows_of(mp_rec, sc["name"], ctx.precision_name, ctx) + rows_of(fp_rec, sc["name"], "fp", fp)
        name = sc["name"]
        values[f"{name} predicted mean norm dev"] = ctx.to_str(info["offset"], 12)
        values[f"{name} tau lambda at <H>"] = ctx.to_str(tau * info["E0"] / pm.hbar, 6)
        summarize(ctx, name, ctx.precision_name, mp_rec, ctx.eps, values, info["offset"])
        summarize(fp, name, "fp", fp_rec, fp.eps, values, info["offset"])
        gap = max(r["closed_form_gap"] for r in mp_rec)
        values[f"{name} {ctx.precision_name} max |norm - closed form| / N0"] = ctx.to_str(gap, 3)
        values[f"{name} max |norm dev fp - norm dev {ctx.precision_name}|"] = fp.to_str(
            max(abs(a["norm_dev"] - float(b["norm_dev"])) for a, b in zip(fp_rec, mp_rec)), 3)
    # beyond the bound: float64 from the gauss state at tau = factor / rho(H) (true spectral
    # radius from the 64-digit eigenvalues; the Gershgorin check is bypassed on purpose)
    rho = max(abs(v) for v in summaries["gauss"][2]["lam"]) / pm.hbar
    values["tau bound 1/rho(H), true"] = ctx.to_str(1 / rho, 6)
    values["tau bound 1/rho_Gershgorin"] = ctx.to_str(1 / pm.omega_max(), 6)
    X0g = initial_state(pm, p["scenarios"][0]).astype(float)
    for factor in p["beyond_bound"]:
        tb = float(ctx.num(factor) / rho)
        X, V = X0g, pf.schroedinger_velocity(X0g)
        n_blow = None
        for n in range(1, p["beyond_steps"] + 1):
            X, V = pf.step(X, V, tb)
            if n % 10 == 0 and not pf.norm2(X) < 2:
                n_blow = n
                break
        values[f"fp tau rho(H) = {factor}: steps until norm > 2"] = (
            str(n_blow) if n_blow else f"none in {p['beyond_steps']}")
    run.progress("beyond the stability bound: " + ", ".join(
        f"{f}: {values[f'fp tau rho(H) = {f}: steps until norm > 2']}" for f in p["beyond_bound"]))
    # long run and tau scan (float64), gauss scenario
    gsc = next(sc for sc in p["scenarios"] if sc["name"] == "gauss")
    X0f = initial_state(pm, gsc).astype(float)
    long_df = long_run(run, pf, X0f, float(tau), p)
    values["long fp steps"] = str(p["long_steps"])
    values["long fp max |Q dev|"] = fp.to_str(long_df["Q_dev_maxabs"].max(), 3)
    values["long fp max |Nbar dev|"] = fp.to_str(long_df["Nbar_dev_maxabs"].max(), 3)
    values["long fp norm dev range"] = fp.to_str(long_df["norm_dev_max"].max()
                                                 - long_df["norm_dev_min"].min(), 4)
    values["long fp norm trend / range"] = fp.to_str(trend(long_df, "norm_dev_mean", "norm_dev_min",
                                                           "norm_dev_max"), 3)
    values["long fp energy trend / range"] = fp.to_str(trend(long_df, "energy_dev_mean",
                                                             "energy_dev_min", "energy_dev_max"), 3)
    half = len(long_df) // 2
    values["long fp norm dev mean first half"] = fp.to_str(long_df["norm_dev_mean"][:half].mean(), 5)
    values["long fp norm dev mean second half"] = fp.to_str(long_df["norm_dev_mean"][half:].mean(), 5)
    scan_df = tau_scan(run, pf, X0f, violent_mask(pm, p), p)
    good = scan_df.dropna()
    if len(good) >= 2:
        slope = np.polyfit(np.log(good["tau"].astype(float)),
                           np.log(np.abs(good["calm_mean_norm_dev"].astype(float))), 1)[0]
        values["tau scan exponent of calm mean norm dev"] = f"{slope:.4f}"
        values["tau scan min calm max |norm dev|"] = fp.to_str(good["calm_max_abs_norm_dev"].min(), 3)
    x_cols = [f"x{j}" for j in range(1, p["n"] + 1)]
    dens_df = pd.DataFrame([[str(d[0]), f"{2 * float(tau) * d[0]:.6g}"] + [f"{v:.3e}" for v in d[1:]]
                            for d in density], columns=["step", "t"] + x_cols)
    lf = long_df.copy()
    for col in lf.columns[1:]:
        lf[col] = [fp.to_str(v) for v in lf[col]]
    sf = scan_df.copy()
    for col in ("calm_mean_norm_dev", "calm_max_abs_norm_dev", "predicted_offset",
                "mean_over_predicted"):
        sf[col] = [fp.to_str(v) for v in sf[col]]
    extra = {"eps_mp": ctx.to_str(ctx.eps, 6), "eps_fp": fp.to_str(fp.eps, 6), "units": "hbar = m = 1, H = -D2/2 + V (3-point Laplacian, Dirichlet ends)",
             "calm": f"violent mass (|psi|^2 within {p['zone']} of a wall or the barrier) < "
                     f"{p['calm_mass']}; calm statistics over outputs after the first violent one"}
    return Output(tables={"": pd.DataFrame(rows, columns=COLUMNS), "long": lf, "tauscan": sf,
                          "density": dens_df},
                  values=values, extra=extra)


def certify(run, out):
    """The proven digits of the gauss scenario's calm-phase and whole-run norm and energy
    deviations, 64-digit and float64 rows (``mpvi run --certify``): its exact discrete
    trajectory enclosed (:func:`mpvi_papers.mutze._mutze_quantum.certified_outputs`,
    :data:`mpvi_papers.mutze._mutze_quantum.CERTIFIED_STATEMENT`)."""
    from flint import arb

    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision, exact_rational
    from mpvi.repro.certified import ball_max, rows_not_enclosed
    from mpvi.repro.digits import proven_digits
    from mpvi_papers.mutze._mutze_certify import exact
    from mpvi_papers.mutze._mutze_quantum import (CERTIFIED_STATEMENT, certified_long_trend,
                                            certified_outputs)
    ctx, p, v = run.ctx, run.params, out.values
    values, not_certified = {}, {}
    sc = next(s for s in p["scenarios"] if s["name"] == "gauss")
    with arb_precision(ctx.dps + GUARD_DIGITS):
        run.progress(f"certify: the gauss scenario's exact trajectory, {sc['steps']} steps")
        recs = certified_outputs(p, sc, p["tau"])
        calm_mass = exact(Fraction(p["calm_mass"]))
        calm_flags = []
        for r in recs:
            if r["violent_mass"] < calm_mass:
                calm_flags.append(True)
            elif r["violent_mass"] > calm_mass:
                calm_flags.append(False)
            else:
                calm_flags.append(None)
        first = next((i for i, c in enumerate(calm_flags) if c is not True), len(recs))
        decided = None not in calm_flags
        calm = [r for r, c in zip(recs[first:], calm_flags[first:]) if c]
        eps = {ctx.precision_name: exact(exact_rational(ctx.eps, "the context's eps")),
               "fp": exact(Fraction(1, 2 ** 52))}
        for cname, e in eps.items():
            pre = f"gauss {cname}"
            whole = {f"{pre} max |norm dev|": ball_max(r["norm_dev"] for r in recs),
                     f"{pre} max |energy dev|": ball_max(r["energy_dev"] for r in recs),
                     f"{pre} final norm dev": recs[-1]["norm_dev"],
                     f"{pre} final energy dev": recs[-1]["energy_dev"]}
            if decided and calm:
                cn = ball_max(r["norm_dev"] for r in calm)
                ce = ball_max(r["energy_dev"] for r in calm)
                whole.update({f"{pre} calm max |norm dev|": cn,
                              f"{pre} calm max |energy dev|": ce,
                              f"{pre} calm max |norm dev| / eps": cn / e,
                              f"{pre} calm max |energy dev| / eps": ce / e,
                              f"{pre} calm outputs": arb(len(calm)),
                              f"{pre} violent outputs": arb(sum(1 for c in calm_flags
                                                                if c is False))})
            for key, ball in whole.items():
                if key in v:
                    found = proven_digits(v[key], ball)
                    if found[0] > 0:
                        values[key] = found
                    else:
                        not_certified[key] = (
                            f"the run's value is not within its exact trajectory's enclosure "
                            f"{found[1]} to one digit")
            if not decided:
                not_certified[f"{pre} calm max |norm dev| / eps"] = (
                    "an output's calm/violent classification is not decided by its ball")
        run.progress(f"certify: the long run's trend ({p['long_steps']} steps, the "
                     f"{p['long_block'] // 10}-step map as an Arb matrix)")
        trends = certified_long_trend(p, sc, p["tau"], p["long_steps"], p["long_block"])
        for key, ball in zip(("long fp norm trend / range", "long fp energy trend / range"),
                             trends):
            found = proven_digits(v[key], ball)
            if found[0] > 0:
                values[key] = found
            else:
                not_certified[key] = (f"the float64 run's value is not within the exact "
                                      f"trajectory's enclosure {found[1]} to one digit")
    for key in v:
        if key not in values and key not in not_certified:
            not_certified[key] = (
                "not enclosed: the other scenarios, the invariants' round-off, the closed "
                "form's and Chebyshev reference's checks, the float64 beyond-bound and "
                "tau-scan runs are supporting numbers, not printed claims")
    not_certified.update(rows_not_enclosed(out, (
        "a per-row number of the runs' tables, not enclosed row by row (the printed "
        "claims are certified as values)")))
    return {"statement": CERTIFIED_STATEMENT, "columns": {}, "values": values,
            "not_certified": not_certified}


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    # the left column's legends below their panels (inside, they covered the energy
    # deviations, a point of the errors against the exact solution and the float64 long
    # run's band): the figure is taller to make the room
    fig, axes = plt.subplots(3, 2, figsize=(12, 13.5))
    below = dict(loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)

    def sel(name, cname):
        d = df[(df["scenario"] == name) & (df["context"] == cname)]
        return d, d["t"].astype(float).to_numpy()

    def col(d, c):
        return np.abs(pd.to_numeric(d[c], errors="coerce").to_numpy(float))

    def shade(ax, d, t):
        viol = d["calm"].astype(str).to_numpy() == "0"   # "0" as computed, 0 as read back
        for i in range(len(t)):
            if viol[i]:
                ax.axvspan(t[max(i - 1, 0)] if i else t[0], t[i], color="0.88", lw=0)

    def floor(y):
        return np.where(y > 0, y, np.nan)

    mpname = next(c for c in df["context"].unique() if c != "fp")
    dm, tm = sel("gauss", mpname)
    df_, tf = sel("gauss", "fp")
    ax = axes[0, 0]
    shade(ax, dm, tm)
    ax.semilogy(tm, floor(col(dm, "norm_dev")), "-", lw=1.4, color="C0", label=f"|norm dev|, {mpname}")
    ax.semilogy(tf, floor(col(df_, "norm_dev")), ":", lw=1.6, color="C1", label="|norm dev|, float64")
    ax.semilogy(tm, floor(col(dm, "predicted_norm_dev")), "--", lw=0.8, color="k",
                label="closed form (eigenmodes)")
    ax.semilogy(tm, floor(col(dm, "energy_dev")), "-", lw=1.2, color="C2", label=f"|<H> dev|, {mpname}")
    ax.semilogy(tf, floor(col(df_, "energy_dev")), ":", lw=1.6, color="C3", label="|<H> dev|, float64")
    ax.semilogy(tm, floor(col(dm, "predicted_energy_dev")), "--", lw=0.6, color="0.3")
    ax.axhline(abs(float(out.values["gauss predicted mean norm dev"])), color="C4", lw=0.8,
               label=r"$\tau^2\|H\psi_0\|^2/(2N_0)$ (mean norm offset)")
    ax.set_xlabel("t")
    ax.set_title("gauss: relative deviations from the initial values (grey: violent phases)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=3, **below)
    ax = axes[0, 1]
    shade(ax, dm, tm)
    for d, t, c, ls, lab in ((dm, tm, "C0", "-", mpname), (df_, tf, "C1", "-", "float64")):
        ax.semilogy(t, floor(col(d, "Q_dev")), ls, lw=1.0, color=c, label=f"|Q dev|, {lab}")
        ax.semilogy(t, floor(col(d, "Nbar_dev")), "--", lw=0.8, color=c, label=f"|Nbar dev|, {lab}")
    nd = np.abs(pd.to_numeric(df_["norm_dev"]).to_numpy(float) - pd.to_numeric(dm["norm_dev"]).to_numpy(float))
    ax.semilogy(tf, floor(nd), ":", lw=1.0, color="C2", label=f"|norm dev float64 - norm dev {mpname}|")
    for key, c in (("eps_mp", "C0"), ("eps_fp", "C1")):
        if key in out.extra:
            ax.axhline(float(out.extra[key]), color=c, lw=0.6, alpha=0.6)
    ax.set_xlabel("t")
    ax.set_title("gauss: conserved quadratic forms Q, Nbar at round-off (lines: eps)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center right")
    ax = axes[1, 0]
    for name, c in (("gauss", "C0"), ("nyquist", "C1"), ("sharp", "C2")):
        d, t = sel(name, mpname)
        if len(d):
            ax.semilogy(t, floor(col(d, "norm_dev")), "-", lw=1.0, color=c, label=f"{name}: |norm dev|")
            ax.semilogy(t, floor(col(d, "residual")), ":", lw=1.0, color=c, label=f"{name}: Schroedinger residual")
            e = col(d, "error_vs_exact")
            ax.semilogy(t, floor(e), "o", ms=3, color=c, label=f"{name}: error vs exact")
    ax.set_xlabel("t")
    ax.set_title(f"{mpname}, all scenarios", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=3, **below)
    ax = axes[1, 1]
    dens = out.tables["density"]
    if len(dens):
        img = dens.iloc[:, 2:].to_numpy(float)
        t = dens["t"].astype(float).to_numpy()
        ax.imshow(img, aspect="auto", origin="lower", cmap="magma",
                  extent=[0.5, img.shape[1] + 0.5, t[0], t[-1]],
                  vmax=np.percentile(img, 99.5))
        b = p["barrier"]
        for x in (float(b["center"]) - float(b["halfwidth"]), float(b["center"]) + float(b["halfwidth"])):
            ax.axvline(x, color="c", lw=0.6)
        ax.set_xlabel("x (grid units)")
        ax.set_ylabel("t")
        ax.set_title(f"gauss: |psi|^2 ({mpname}); cyan: barrier", fontsize=10)
    ax = axes[2, 0]
    lf = out.tables["long"]
    t = lf["t"].astype(float)
    ax.fill_between(t, lf["norm_dev_min"].astype(float), lf["norm_dev_max"].astype(float),
                    color="C0", alpha=0.3, label="norm dev: block min..max")
    ax.plot(t, lf["norm_dev_mean"].astype(float), color="C0", lw=1, label="norm dev: block mean")
    ax.fill_between(t, lf["energy_dev_min"].astype(float), lf["energy_dev_max"].astype(float),
                    color="C1", alpha=0.3, label="energy dev: block min..max")
    ax.set_xlabel("t")
    ax.set_title(f"float64 long run ({out.values.get('long fp steps')} steps): bounded, no trend; "
                 f"max |Q dev| = {out.values.get('long fp max |Q dev|')}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=3, **below)
    ax = axes[2, 1]
    sf = out.tables["tauscan"]
    tau = sf["tau"].astype(float)
    ax.loglog(tau, np.abs(sf["calm_mean_norm_dev"].astype(float)), "o-", label="calm mean |norm dev| (float64)")
    ax.loglog(tau, sf["calm_max_abs_norm_dev"].astype(float), "s:", label="calm max |norm dev|")
    ax.loglog(tau, np.abs(sf["predicted_offset"].astype(float)), "k--", label=r"$\tau^2\|H\psi_0\|^2/2$")
    ax.axhline(fp.eps, color="r", lw=0.8, label="float64 eps")
    ax.set_xticks(tau)
    ax.set_xticklabels([str(v) for v in sf["tau"]])
    ax.minorticks_off()
    ax.set_xlabel(r"$\tau$")
    ax.set_title("gauss: calm-phase norm offset vs tau (~tau^2, not round-off)", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.suptitle("mutze eq. (86): direct midpoint rule for a particle on a grid; "
                 "norm and energy do not return to their initial values", fontsize=11)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="mutze_quantum", paper=PAPER, item="Sec. 6, eq. (86)",
    title="direct midpoint rule for a 1-D quantum particle: norm and energy after violent phases",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot,
    refuse=needs_mp("the study compares a 64-digit run, its closed form and the exact "
                    "64-digit evolution with float64; the float64 run is part of it"),
    certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
