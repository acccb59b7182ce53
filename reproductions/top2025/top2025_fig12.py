"""top2025 Fig. 12: the cusp motion of the Table 6 top (reduced Lagrange top, Sec. 4.3).

What the paper shows.  Fig. 12 ("Motion of the reduced Lagrange top model.  This
particular example showcases cusps during motion.") draws the path of the top's symmetry
axis for the special initial data of Table 6: I = 1, I3 = 2, A = m_top g l / I = 4 pi^2,
theta0 = pi/6, phi'0 = theta'0 = 0, psi'0 = 2 pi, hence (eq. 18ab) p_phi = 2 pi sqrt 3
and p_psi = 4 pi.  Since p_phi - p_psi cos theta0 = 0, eq. (18af) gives phi' = 0 at
theta = theta0, and theta0 is a turning point of the nutation (theta'0 = 0): the axis
stops completely there -- a cusp -- once per nutation period.

What we compute.  The reduced system (18aq), y = (phi, theta, xi = theta'), integrated
by Gragg-Bulirsch-Stoer extrapolation of order 32 (mpvi.engines.ode, ``gbs``) at H = 1/200 s over
T = 4 s (five nutation periods; the quick set: H = 1/100 s, T = 2 s, two periods).  GBS
is the accurate integrator here (its error at H = 1/100 s is ~1e-55 at 64 digits, shown
by halving H in top2025_fig13); the paper does not say which solution it drew.
Convention: ZXZ Euler angles (Fig. 6), theta measured from the upward vertical Z, so the
tip of the unit symmetry axis is (x, y, z) = (sin th sin phi, -sin th cos phi, cos th)
(the body z axis in the fixed frame).  The plot shows the tip path in 3-D and seen from
above, theta(t) and phi(t).

The cusps are located, not eyeballed: every sign change of xi from - to + (a smallest
theta = highest point of the axis, a "top turning point") is refined by Newton's method
on the time, each iterate one GBS step from the preceding node.  At each such point we
record t_k, theta - theta0, xi and phi'.  The published claims compared (file
reproductions/top2025/published/top2025_reduced.csv):

* cusps: max_k |phi'(t_k)| = 0 (within 1e-40; a looping or wavy motion has |phi'| of
  order 1 there), and phi' >= 0 along the whole run (phi' never changes sign, which
  distinguishes cusps from loops);
* Table 6 / eq. (18ab): p_phi = 2 pi sqrt 3 and p_psi = 4 pi, computed from the initial
  data as p = M(q0) q'0 of the complete system; A = 4 pi^2 and the time constant
  2 pi / sqrt(A) = 1 s of eq. (18ae).

Beyond the paper: the turning times are compared with k times the exact nutation period
2 omega_1 = 0.7776265... s of the Weierstrass solution (mpvi.systems.lagrange_top_exact),
and theta_max with arccos of the smallest root of the cubic.  The reduced top's nutation
period is therefore not 1 s: the "t_bar = 1" of eq. (18ae) is the time constant
2 pi / sqrt(A) of the gravity term, not the nutation period (Sec. 4.2 uses t_bar for the
nutation period); see the errata draft [E17].

Run: ``mpvi run top2025_fig12`` or ``python reproductions/top2025/top2025_fig12.py``.
"""
import pandas as pd

from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import fraction, numstr, steps

from mpvi_papers.top2025._top2025 import PAPER
from mpvi_papers.top2025._top2025_reduced import (GBS_LEVELS, cusp_exact, cusp_top, reduced_problem,
                                            solve_reduced, tip_path, turning_points)

PARAMS = {"T": "4", "H": "1/200", "gbs_levels": GBS_LEVELS}
QUICK = {"T": "2", "H": "1/100"}


def compute(run):
    ctx, p = run.ctx, run.params
    top = cusp_top(ctx)
    reduced = reduced_problem(top)
    red = reduced.system
    T, H = fraction(p["T"]), fraction(p["H"])
    n = steps(T, H)
    run.progress(f"reduced top, GBS (levels {p['gbs_levels']}) H = {p['H']} s, {n} steps")
    sol = solve_reduced(run, reduced, "gbs", H, n, levels=p["gbs_levels"])
    phi, theta, xi = sol.q[:, 0], sol.q[:, 1], sol.q[:, 2]
    phidot = [red.rhs(t, y)[0] for t, y in zip(sol.t, sol.q)]
    x, y, z = tip_path(ctx, phi, theta)

    run.progress("exact nutation period (Weierstrass) and the turning points")
    period, theta_max_exact = cusp_exact(ctx)
    theta0 = top.q0[1]
    tops = turning_points(ctx, red, sol, "min", levels=p["gbs_levels"])
    bottoms = turning_points(ctx, red, sol, "max", levels=p["gbs_levels"])
    cusp_rows = []
    for k, tp in enumerate(tops, start=1):
        cusp_rows.append({"k": k, "t": numstr(ctx, tp["t"]),
                          "t_minus_k_period": numstr(ctx, tp["t"] - k * period),
                          "theta_minus_theta0": numstr(ctx, tp["y"][1] - theta0),
                          "xi": numstr(ctx, tp["y"][2]), "phidot": numstr(ctx, tp["rhs"][0]),
                          "newton_iterations": tp["iterations"]})
    bottom_rows = [{"k": k, "t": numstr(ctx, tp["t"]),
                    "t_minus_(k-1/2)_period": numstr(ctx, tp["t"] - (2 * k - 1) * period / 2),
                    "theta": numstr(ctx, tp["y"][1]),
                    "theta_minus_exact_theta_max": numstr(ctx, tp["y"][1] - theta_max_exact),
                    "phidot": numstr(ctx, tp["rhs"][0])}
                   for k, tp in enumerate(bottoms, start=1)]
    if not tops:
        raise RuntimeError("no top turning point found: increase T")

    df = pd.DataFrame({"t": [numstr(ctx, t) for t in sol.t],
                       "phi": [numstr(ctx, v) for v in phi],
                       "theta": [numstr(ctx, v) for v in theta],
                       "xi": [numstr(ctx, v) for v in xi],
                       "phidot": [numstr(ctx, v) for v in phidot],
                       "x": [numstr(ctx, v) for v in x], "y": [numstr(ctx, v) for v in y],
                       "z": [numstr(ctx, v) for v in z]})
    P = top.params
    A = P["m_top"] * P["g"] * P["ell"] / P["I"]
    values = {
        "p_phi": numstr(ctx, top.p0[0]),
        "p_psi": numstr(ctx, top.p0[2]),
        "A": numstr(ctx, A),
        "time constant 2pi/sqrt(A)": numstr(ctx, 2 * ctx.pi / ctx.sqrt(A)),
        "cusp max |phidot|": numstr(ctx, max(abs(tp["rhs"][0]) for tp in tops)),
        "cusp max |theta-theta0|": numstr(ctx, max(abs(tp["y"][1] - theta0) for tp in tops)),
        "cusp max |t_k - k period|": numstr(ctx, max(abs(tp["t"] - k * period)
                                                     for k, tp in enumerate(tops, 1))),
        "cusps found": str(len(tops)),
        "min phidot": numstr(ctx, min(phidot)),
        "max phidot": numstr(ctx, max(phidot)),
        "nutation period (exact)": numstr(ctx, period),
        "theta max (exact)": numstr(ctx, theta_max_exact),
    }
    if bottoms:
        values["bottom max |theta-theta_max exact|"] = numstr(
            ctx, max(abs(tp["y"][1] - theta_max_exact) for tp in bottoms))
    tables = {"": df, "cusps": pd.DataFrame(cusp_rows)}
    if bottom_rows:
        tables["bottoms"] = pd.DataFrame(bottom_rows)
    return Output(tables=tables, values=values,
                  extra={"integrator": f"GBS order {2 * p['gbs_levels']} on the reduced "
                                       f"system (18aq), H = {p['H']} s",
                         "convention": "ZXZ; tip = (sin th sin phi, -sin th cos phi, cos th)"})


EXACT_STATEMENT = (
    "Table 6 / eqs. (18ab), (18ae) proven for the problem as posed: p = M(q0) q'0 of the "
    "complete system evaluated on Arb balls from the exact data m_top = I = 1, I3 = 2, "
    "g = 981/100, l = 4 pi^2 / g, theta0 = pi/6, (phi'0, theta'0, psi'0) = (0, 0, 2 pi), "
    "A = m_top g l / I and 2 pi / sqrt(A) on the same balls.  The reduced system's GBS run "
    "(the table and the cusps) is not certified: mpvi.certify does not walk first-order "
    "systems yet, and GBS's own error is estimated (by halving, top2025_fig13), not "
    "enclosed.")


def exact_table6(dps):
    """Arb enclosures of p_phi, p_psi (p = M(q0) q'0 of the complete Table 6 top), A =
    m_top g l / I and 2 pi / sqrt(A) from the exact data of the problem as posed
    (:data:`EXACT_STATEMENT`), at ``dps`` digits plus guard digits (flint's precision
    restored after)."""
    from flint import arb

    from mpvi.numbers.arb import ArbContext
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    with arb_precision(dps + GUARD_DIGITS):
        balls = ArbContext(dps + GUARD_DIGITS)
        top = cusp_top(balls)                 # the exact data as balls: 9.81, pi/6, 2 pi
        P = top.params
        A = P["m_top"] * P["g"] * P["ell"] / P["I"]
        p = top.p0
        return {"p_phi": p[0], "p_psi": p[2], "A": A,
                "time constant 2pi/sqrt(A)": 2 * arb.pi() / A.sqrt()}


def certify(run, out):
    """The proven digits of the Table 6 values (``mpvi run --certify``,
    :func:`exact_table6`); the cusp values and the GBS
    run's table are not certified (:data:`EXACT_STATEMENT`, reasons per value)."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.digits import proven_digits
    ctx = run.ctx
    found = exact_table6(ctx.dps)
    with arb_precision(ctx.dps + GUARD_DIGITS):
        values = {k: proven_digits(out.values[k], b) for k, b in found.items()}
    gbs = ("the reduced system's GBS run: mpvi.certify does not walk first-order systems "
           "yet, and GBS's error is estimated by halving, not enclosed")
    cusp = ("at a cusp phi' is exactly 0 for the problem as posed (p_phi - p_psi cos theta0 "
            "= 2 pi sqrt 3 - 4 pi cos(pi/6) = 0 and theta = theta0 there, eq. 18af); the "
            "recorded value is |phi'| of the GBS run at its numerically located turning "
            "points, the run's error and round-off (~1e-50), which no enclosure pins")
    not_certified = {c: gbs for c in out.tables[""].columns}
    for table in ("cusps", "bottoms"):
        if table in out.tables:
            not_certified.update({f"{table}.{c}": gbs for c in out.tables[table].columns})
    not_certified.update({
        k: gbs for k in out.values if k not in values})
    exact = ("computed in the context by the Weierstrass solution, not enclosed: "
             "LagrangeTopNutation's Arb setup fails for this top (its (p_phi - p_psi u0)^2 "
             "is 0^2 on a ball containing 0, which Arb's power takes as nan)")
    not_certified.update({k: exact for k in ("nutation period (exact)", "theta max (exact)")})
    not_certified["cusp max |phidot|"] = cusp
    not_certified["min phidot"] = (
        "exactly 0, as recorded: phi'(0) = 0 is the initial datum (node 0), and phi' >= 0 "
        "along the exact motion (p_phi - p_psi cos theta = 4 pi (cos theta0 - cos theta) "
        ">= 0 for theta >= theta0, eq. 18af); an exact zero has no relative digits")
    return {"statement": EXACT_STATEMENT, "values": values, "not_certified": not_certified}


def plot(out, p):
    import matplotlib.pyplot as plt
    import numpy as np
    df = out.tables[""]
    cusps = out.tables["cusps"]
    t = df["t"].astype(float).to_numpy()
    x, y, z = (df[c].astype(float).to_numpy() for c in ("x", "y", "z"))
    th, ph = df["theta"].astype(float).to_numpy(), df["phi"].astype(float).to_numpy()
    tc = cusps["t"].astype(float).to_numpy()
    # cusp positions by interpolation on the drawn path (the exact points are in the CSV)
    xc, yc, zc = (np.interp(tc, t, v) for v in (x, y, z))
    fig = plt.figure(figsize=(11, 8.5))
    ax3 = fig.add_subplot(2, 2, 1, projection="3d")
    u, v = np.mgrid[0:2 * np.pi:40j, 0:np.pi / 2:12j]
    ax3.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v), color="0.85",
                       lw=0.4)
    ax3.plot(x, y, z, color="tab:green", lw=1.2)
    ax3.scatter(xc, yc, zc, color="tab:red", s=18, label="cusps")
    ax3.scatter([x[0]], [y[0]], [z[0]], color="k", s=18, label="start (cusp)")
    ax3.set_xlabel("x"), ax3.set_ylabel("y"), ax3.set_zlabel("z")
    ax3.view_init(elev=35, azim=-60)
    ax3.set_title("tip of the symmetry axis (unit sphere)", fontsize=9)
    ax3.legend(fontsize=7, loc="upper left")
    ax = fig.add_subplot(2, 2, 2)
    a = np.linspace(0, 2 * np.pi, 400)
    for r, lab in ((np.sin(th.min()), r"$\sin\theta_0$"), (np.sin(th.max()), r"$\sin\theta_{max}$")):
        ax.plot(r * np.cos(a), r * np.sin(a), color="0.7", lw=0.8, ls=":")
    ax.plot(x, y, color="tab:green", lw=1.2)
    ax.plot(xc, yc, "o", color="tab:red", ms=4, label="cusps (phi' = theta' = 0)")
    ax.plot([x[0]], [y[0]], "ko", ms=4, label="start")
    ax.set_aspect("equal")
    ax.set_xlabel("x"), ax.set_ylabel("y")
    ax.set_title("seen from above (projection on the XY plane)", fontsize=9)
    # the legend right of the axes: in the lower left corner it covered the path and the
    # circle of sin(theta_max), which fill the square axes
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1), frameon=False)
    ax = fig.add_subplot(2, 2, 3)
    ax.plot(t, th, color="tab:green")
    ax.axhline(th[0], color="0.6", ls=":", lw=0.8)
    ax.plot(tc, np.interp(tc, t, th), "o", color="tab:red", ms=4)
    ax.set_xlabel("t [s]"), ax.set_ylabel(r"$\theta$ [rad]")
    ax.set_title(r"nutation $\theta(t)$; cusps at $\theta = \theta_0 = \pi/6$", fontsize=9)
    ax.grid(alpha=0.3)
    ax = fig.add_subplot(2, 2, 4)
    ax.plot(t, ph, color="tab:green", label=r"$\varphi(t)$")
    ax.plot(tc, np.interp(tc, t, ph), "o", color="tab:red", ms=4, label="cusps")
    ax.set_xlabel("t [s]"), ax.set_ylabel(r"$\varphi$ [rad]")
    ax.set_title(r"precession $\varphi(t)$ (flat steps: $\dot\varphi = 0$ at the cusps)",
                 fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    period = float(out.values["nutation period (exact)"])
    fig.suptitle(f"top2025 Fig. 12: cusp motion of the Table 6 top (reduced system, GBS, "
                 f"H = {p['H']} s); nutation period {period:.6f} s, "
                 f"max |phi'| at cusps {float(out.values['cusp max |phidot|']):.1e}",
                 fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="top2025_fig12", paper=PAPER, item="Fig. 12",
    title="cusp motion of the Table 6 top: axis path, theta(t), phi(t), phi' at the cusps",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
