"""hermite Fig. 5: maximum errors in q, v and energy against dt on the double well, for the
one-step variational method, the one-step Galerkin method and the variational integrator
on a quadratic trajectory with one interior point, with fitted orders.

**The comparison integrator.** Sec. 5.1: "a quadratic trajectory over one time step in the
discrete mechanics framework by introducing an interior point [9]", two coupled nonlinear
equations per step.  In mpvi's terms that is the Galerkin variational integrator with P2
trial functions through q_j, q_j+1/2, q_j+1 (Marsden & West 2001, Sec. 2.6) -- with
Simpson's rule for the action it is mpvi's ``simpson`` (top2025 App. A = Lobatto IIIA-IIIB,
order 4, symplectic); its unknowns are exactly the two of the text (q_j+1/2, q_j+1).  The
paper does not name its quadrature; a 2-point Gauss rule gives another order-4 symplectic
scheme with the same structure, so the claims below do not depend on that choice.

**What is measured.** The paper prints neither q(0), T nor the dt values of Fig. 5 (ERRATA
[E62]).  Used: the Fig. 3 initial state q(0) = 0.74, q'(0) = 0, T = 10, dt = 0.2 ... 0.0125;
errors against the exact elliptic solution (the problem of
:func:`mpvi.systems.double_well.double_well_problem`, one for every method and dt):
max_j |q_j - q(t_j)|, max_j |v_j - v(t_j)|, max_j |E_j - E_0|.  For the variational
integrator, whose state is (q, p), v is the discrete Legendre map p/m; as a second candidate
for what the paper plotted, ``simpson_trajectory_v`` takes v as the slope of the step's
quadratic at its right end, v_j+1 = (q_j - 4 q_j+1/2 + 3 q_j+1)/dt (with q_j+1/2 the
solved interior point); as a third, ``simpson_midstep_energy`` keeps v = p/m but takes the
energy at the interior points, E_j+1/2 = 1/2 m ((q_j+1 - q_j)/dt)^2 + V(q_j+1/2) (the
slope of the quadratic at its midpoint).  The claims (text of Sec. 5.1): orders 2/4/4 in q and v and 2/4/2
in energy (variational / Galerkin / VI), compared in reproductions/hermite/published/hermite_fig05.csv
with a tolerance of 0.3 on the least-squares slope.

Run: ``mpvi run hermite_fig05`` or ``python reproductions/hermite/hermite_fig05.py``.
"""
from fractions import Fraction

import pandas as pd

from mpvi import fit_order
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr, steps, successive_orders
from mpvi.systems.double_well import double_well_problem

from mpvi_papers.hermite._hermite import PAPER, STYLE
from mpvi_papers.hermite._hermite_double_well import energies

PARAMS = {"q0": "0.74", "v0": "0", "T": 10, "dt": ["0.2", "0.1", "0.05", "0.025", "0.0125"],
          "methods": ["hermite_variational", "hermite_galerkin", "simpson"]}
QUICK = {"T": 2, "dt": ["0.2", "0.1", "0.05"]}

VARIABLES = ("q", "v", "energy")
CANDIDATE = "simpson_trajectory_v"
MID_ENERGY = "simpson_midstep_energy"


def trajectory_slope_v(sol):
    """v_j+1 = (q_j - 4 q_j+1/2 + 3 q_j+1)/h: the slope of the step's quadratic at its right
    end (q_j+1/2: Simpson's internal point, ``sol.internal``)."""
    v = [sol.v[0]]
    for j in range(sol.steps):
        v.append((sol.q[j] - 4 * sol.internal[j][0] + 3 * sol.q[j + 1]) / sol.h)
    return v


def midstep_energy(system, sol):
    """E at the interior points: 1/2 m g^2 + V(q_j+1/2) with g = (q_j+1 - q_j)/h, the
    slope of the step's quadratic at its midpoint."""
    out = []
    for j in range(sol.steps):
        qm, g = sol.internal[j][0], (sol.q[j + 1] - sol.q[j]) / sol.h
        out.append(system.energy(qm, system.momentum(qm, g)))
    return out


def compute(run):
    ctx, p = run.ctx, run.params
    problem = double_well_problem(ctx, p["q0"], p["v0"])
    system, exact = problem.system, problem.exact
    rows, errs = [], {}
    for dt in p["dt"]:
        h, n = ctx.num(Fraction(dt)), steps(p["T"], dt)
        ts = [h * j for j in range(n + 1)]
        q_ex, v_ex = exact.q(ts), exact.v(ts)
        for method in p["methods"]:
            run.progress(f"{method}: dt = {dt}, {n} steps")
            sol = run.kept[(method, dt)] = run.solve(problem, method, h=h, n=n)
            candidates = [(method, list(sol.v))]
            if method == "simpson":
                candidates += [(CANDIDATE, trajectory_slope_v(sol)), (MID_ENERGY, list(sol.v))]
            for name, vs in candidates:
                E = energies(system, sol.q, vs)
                if name == MID_ENERGY:
                    E = E[:1] + midstep_energy(system, sol)
                e = {"q": max(abs(x[0] - y[0]) for x, y in zip(sol.q, q_ex)),
                     "v": max(abs(x[0] - y[0]) for x, y in zip(vs, v_ex)),
                     "energy": max(abs(x - E[0]) for x in E)}
                for var in VARIABLES:
                    errs.setdefault((name, var), []).append(e[var])
                rows.append({"method": name, "dt": dt, **{f"max_error_{v}": numstr(ctx, e[v]) for v in VARIABLES}})
    values = {}
    hs = [ctx.num(Fraction(dt)) for dt in p["dt"]]
    for (name, var), e in errs.items():
        values[f"{name} order {var}"] = ctx.to_str(fit_order(ctx, hs, e), 4)
        values[f"{name} successive orders {var}"] = " ".join(ctx.to_str(a, 3) for a in successive_orders(ctx, e))
        values[f"{name} max error {var} at dt={p['dt'][-1]}"] = numstr(ctx, e[-1])
    return Output(tables={"": pd.DataFrame(rows)}, values=values,
                  extra={"T": p["T"], "initial_state": [p["q0"], p["v0"]]})


CERTIFIED_STATEMENT = (
    "Each run certified (mpvi.certify, Lohner's method on Arb balls): its states enclose the "
    "method's exact discrete trajectory from the run's data (q(0) = 0.74 and dt as the binary "
    "numbers the run used, its rounding excluded; v = p/m for Simpson's (q, p) states, m = 1).  "
    "The exact solution q(t) = A dn(A t, k), q'(t) = -A^2 k^2 sn cn (A t, k), k^2 = 2 - 1/A^2, "
    "A = the run's q(0), is enclosed at the exact nodes t_j = j h by Arb's Jacobi theta "
    "functions (dn = theta4(0) theta3(z) / (theta3(0) theta4(z)), sn, cn likewise, z = A t / "
    "(2K), tau = i K'/K).  Errors max_j |.| and energy errors max_j |E_j - E_0| (E = 1/2 m v^2 "
    "+ 1/2 (q^4 - q^2)) are balls, and each order is the least-squares slope of their logs "
    "against log h (mpvi.repro.certified.least_squares_order).")


def jacobi_dn_sn_cn(m):
    """A function u -> (dn, sn, cn)(u | m) on Arb balls for the parameter m = k^2 in
    (0, 1) (a ball), by Jacobi's theta functions (DLMF 22.2.4-22.2.6, Arb's
    ``acb.modular_theta`` with z = u / (2K), tau = i K(1 - m) / K(m))."""
    from flint import acb
    K = acb(m).elliptic_k()
    tau = acb(0, 1) * acb(1 - m).elliptic_k() / K
    _, o2, o3, o4 = acb.modular_theta(acb(0), tau)

    def dn_sn_cn(u):
        t1, t2, t3, t4 = acb.modular_theta(acb(u) / (2 * K), tau)
        return tuple(X.real for X in (o4 / o3 * t3 / t4, o3 / o2 * t1 / t4, o4 / o2 * t2 / t4))
    return dn_sn_cn


def certify(run, out):
    """``mpvi run --certify``: every max error and fitted order of the three methods (the
    runs compute() solved, ``run.kept``) proven (:data:`CERTIFIED_STATEMENT`)."""
    from mpvi import certify as certify_run
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision, exact_rational
    from mpvi.repro.certified import ball_max, least_squares_order
    from mpvi.repro.digits import proven_digits

    from mpvi_papers.hermite._hermite_certified import arb_of
    ctx, p = run.ctx, run.params
    values, errs, hs = {}, {}, {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        jacobi = None
        for dt in p["dt"]:
            for method in p["methods"]:
                sol = run.kept[(method, dt)]
                run.progress(f"certifying {method}: dt = {dt}, {sol.steps} steps")
                cert = certify_run(sol)
                if not cert.complete:
                    raise ArithmeticError(f"{method}, dt = {dt}: step {cert.failed_step} not "
                                          f"proven: {cert.why}")
                if jacobi is None:
                    A = arb_of(sol.q[0][0])
                    if not (A > 0 and 2 * A * A > 1 and sol.v[0][0] == 0):
                        raise ValueError("the dn solution needs q'(0) = 0 and q(0)^2 > 1/2")
                    jacobi = jacobi_dn_sn_cn(2 - 1 / (A * A))
                    k2 = 2 - 1 / (A * A)
                hq = exact_rational(sol.h, "h")
                hs.setdefault(dt, hq)
                h = arb_of(sol.h)
                qs = [q[0] for q in cert.q]
                vs = [y[0] for y in cert.y]          # m = 1: p = v for Simpson's (q, p)
                qe, ve = [], []
                for j in range(len(qs)):
                    dn, sn, cn = jacobi(A * h * j)
                    qe.append(A * dn)
                    ve.append(-A * A * k2 * sn * cn)
                E = [v * v / 2 + (q ** 4 - q * q) / 2 for q, v in zip(qs, vs)]
                e = {"q": ball_max([a - b for a, b in zip(qs, qe)]),
                     "v": ball_max([a - b for a, b in zip(vs, ve)]),
                     "energy": ball_max([x - E[0] for x in E])}
                for var in VARIABLES:
                    errs.setdefault((method, var), []).append(e[var])
        for (name, var), e in errs.items():
            key = f"{name} order {var}"
            values[key] = proven_digits(out.values[key], least_squares_order(
                [hs[dt] for dt in p["dt"]], e))
            key = f"{name} max error {var} at dt={p['dt'][-1]}"
            values[key] = proven_digits(out.values[key], e[-1])
    not_certified = {}
    for key in out.values:
        if key in values:
            continue
        not_certified[key] = (
            "several numbers in one string (the successive orders); each is a ratio of proven "
            "errors, not recorded as a ball" if "successive" in key else
            "a candidate reading built on Simpson's interior point (internal stage), which the "
            "certificate does not enclose; not a published value")
    for column in ("method", "dt"):
        not_certified[column] = "an input of the run"
    for column in ("max_error_q", "max_error_v", "max_error_energy"):
        not_certified[column] = ("the table's errors at every dt; those of the published "
                                 "orders are proven as values (the orders and the finest dt)")
    return {"statement": CERTIFIED_STATEMENT, "values": values, "not_certified": not_certified}


def plot(out, p):
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter
    df = out.tables[""]
    fig, axes = plt.subplots(1, 3, figsize=(13, 5.2))
    style = dict(STYLE)
    style[CANDIDATE] = {"color": "tab:olive", "ls": ":", "label": "VI, v = slope of the quadratic at t_j+1"}
    style[MID_ENERGY] = {"color": "tab:cyan", "ls": "--", "label": "VI, energy at the interior point"}
    for ax, var, title in zip(axes, VARIABLES, ("(a) configuration", "(b) velocity", "(c) energy")):
        for m, g in df.groupby("method", sort=False):
            st = style[m]
            o = out.values[f"{m} order {var}"]
            ax.loglog(g["dt"].astype(float), g[f"max_error_{var}"].astype(float), marker="o", ms=4,
                      color=st["color"], ls=st["ls"], label=st["label"])
            last = g.iloc[0]
            ax.annotate(f"{float(o):.2f}", (float(last["dt"]), float(last[f"max_error_{var}"])),
                        textcoords="offset points", xytext=(4, -3), fontsize=7, color=st["color"])
        ax.set_xlabel(r"$\Delta t$")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{title} (fitted orders at the right)", fontsize=9)
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("maximum error over [0, T]")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8)
    fig.suptitle(f"Double well, q(0) = {p['q0']}, T = {p['T']}: convergence (hermite Fig. 5)", fontsize=10)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


REPRODUCTION = Reproduction(
    id="hermite_fig05", paper=PAPER, item="Fig. 5",
    title="maximum errors in q, v, energy against dt; fitted orders",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
