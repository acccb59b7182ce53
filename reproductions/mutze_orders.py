"""mutze Secs. 4-6: the small step equations of motion as integrators -- eq. (90) derived
from eqs. (44) and (54), g = 1 against the implicit midpoint rule, and the measured
orders of every variant on a nonlinear forced system.

* eqs. (44) and (54) on the damped oscillator (eq. 87), integrated exactly over the
  parabolic path and solved for a with sympy (:func:`mpvi.schemes.mutze.
  parabolic_acceleration`), against the printed eq. (90); eq. (72) with g = 0 solved
  exactly against eq. (89);
* g = 1 (eq. 72) against the implicit midpoint rule in stage form (eqs. 83, 85), step
  for step on a two-degree-of-freedom system with a position-dependent mass matrix and a
  nonlinear velocity-dependent force (max difference over the run);
* orders: the damped driven pendulum x'' = -sin x - x'/5 + cos(2t/3)/2 from (x, v) =
  (1, 0) to T, errors max(|x - x_ref|, |v - v_ref|) at T against a Gragg-Bulirsch-Stoer
  reference (order 2 x levels, checked by halving its step), least-squares slope over the
  steps.  The paper: the g-family is second order, zero iterations (a = a_0) first order
  when A depends on v (Sec. 6).

Run: ``mpvi run mutze_orders`` or ``python reproductions/mutze_orders.py``.
"""
from fractions import Fraction

import pandas as pd
import sympy as sp

from mpvi.analysis import fit_order
from mpvi.repro.run import Output, Reproduction, script_main
from mpvi.schemes.mutze import TAU, parabolic_acceleration
from mpvi.repro.studies import numstr, study

from mpvi_papers._mutze import PAPER

PARAMS = {"T": "4", "steps": ["1/8", "1/16", "1/32", "1/64", "1/128"], "gbs_H": "1/4", "gbs_levels": 14,
          "g1_steps": 40}
QUICK = {"T": "1", "steps": ["1/8", "1/16", "1/32"], "gbs_levels": 10, "g1_steps": 10}

CASES = {
    "g=0 newton": ("mutze", {}),
    "g=0 explicit (79)": ("mutze", {"solver": "explicit"}),
    "g=0 iteration (80) damped x1": ("mutze", {"solver": "iterate", "iterations": 1}),
    "g=0 iteration (80) simple x1": ("mutze", {"solver": "iterate", "iterations": 1, "variant": "simple"}),
    "g=0 zero iterations (a0)": ("mutze", {"solver": "iterate", "iterations": 0}),
    "g=0.68": ("mutze", {"g": "0.68"}),
    "g=3/5": ("mutze", {"g": "3/5"}),
    "g=1": ("mutze", {"g": 1}),
    "midpoint variation (54)": ("mutze_variation", {}),
    "parabolic Euler-Lagrange (44)": ("mutze_parabolic_el", {}),
    "implicit midpoint rule": ("implicit_midpoint", {}),
    "RK2": ("rk2", {}),
}


@study("mutze_pendulum_orders")
def pendulum_orders(rec, params):
    """Errors at T of every case of :data:`CASES` for each step (module doc); the GBS
    reference and its halved-step check.  Returns {"errors": {case: [...]}, "ref_check"}."""
    from mpvi import Problem
    from mpvi.systems.damped import damped_pendulum

    ctx, p = rec.ctx, params
    problem = Problem(damped_pendulum(ctx), [1], v0=[0])
    T = Fraction(p["T"])
    refs = []
    for H in (Fraction(p["gbs_H"]), Fraction(p["gbs_H"]) / 2):
        rec.progress(f"GBS reference, order {2 * p['gbs_levels']}, H = {H}")
        sol = rec.solve(problem, "gbs", h=ctx.num(H), n=int(T / H), levels=p["gbs_levels"])
        refs.append((sol.q[-1][0], sol.v[-1][0]))
    (xr, vr), (x2, v2) = refs
    errors = {}
    for case, (scheme, opts) in CASES.items():
        rec.progress(f"{case}: steps {', '.join(p['steps'])}")
        errs = []
        for h in map(Fraction, p["steps"]):
            sol = rec.solve(problem, scheme, h=ctx.num(h), n=int(T / h), **opts)
            errs.append(max(abs(sol.q[-1][0] - xr), abs(sol.v[-1][0] - vr)))
        errors[case] = ctx.asarray(errs)
    return {"errors": errors, "ref_check": max(abs(xr - x2), abs(vr - v2))}


@study("mutze_g1_midpoint")
def g1_against_midpoint(rec, params):
    """Max difference of x and v between eq. (72) with g = 1 and the implicit midpoint
    rule over ``g1_steps`` steps of 1/10 on the two-degree-of-freedom test system."""
    from mpvi import LagrangianSystem, Problem

    ctx = rec.ctx
    x, y, u, w = sp.symbols("x y u w")
    t = sp.Symbol("t")
    L = (2 + sp.cos(y)) * u ** 2 / 2 + u * w * sp.sin(y) / 3 + w ** 2 / 2 - x ** 2 / 2 - y ** 4 / 4 + t * x * w / 7
    system = LagrangianSystem.from_lagrangian(
        "two-dof test system", [x, y], [u, w], L, {}, ctx,
        force=lambda tt, q, v: sp.Matrix([-v[0] ** 3 / 5, sp.sin(tt) / 3 - v[1] / 4]))
    problem = Problem(system, [1, "1/2"], v0=["1/3", -1])
    h, n = ctx.num(Fraction(1, 10)), params["g1_steps"]
    a = rec.solve(problem, "mutze", h=h, n=n, g=1)
    b = rec.solve(problem, "implicit_midpoint", h=h, n=n)
    return max(max(abs(e) for e in (a.q - b.q).ravel()), max(abs(e) for e in (a.v - b.v).ravel()))


def symbolic_claims():
    m, k, b, x, v, t = sp.symbols("m k b x v t")
    L, F = m * v ** 2 / 2 - k * x ** 2 / 2, [-b * v]
    out = {f"eq. ({'54' if kind == 'variation' else '44'}) a for the damped oscillator":
           sp.sstr(parabolic_acceleration(L, F, [x], [v], t, kind)) for kind in ("variation", "parabolic_el")}
    a = sp.Symbol("a")
    G = m * a + b * (v + a * TAU) + k * (x + v * TAU)          # eq. (88) at the eq. (72) point, g = 0
    out["eq. (72) g = 0 a for the damped oscillator"] = sp.sstr(sp.factor(sp.solve(G, a)[0]))
    return out


def compute(run):
    ctx, p = run.ctx, run.params
    res = run.study(pendulum_orders, {k: p[k] for k in ("T", "steps", "gbs_H", "gbs_levels")})
    hs = [Fraction(h) for h in p["steps"]]
    rows, values = [], symbolic_claims()
    for case, errs in res["errors"].items():
        order = fit_order(ctx, hs, list(errs))
        values[f"order {case}"] = numstr(ctx, order)
        for h, e in zip(p["steps"], errs):
            rows.append({"case": case, "h": h, "error": numstr(ctx, e), "order": numstr(ctx, order)})
    values["reference check (GBS halved)"] = numstr(ctx, res["ref_check"])
    values["g=1 - implicit midpoint max difference"] = numstr(
        ctx, run.study(g1_against_midpoint, {"g1_steps": p["g1_steps"]}))
    return Output(tables={"": pd.DataFrame(rows)}, values=values)


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    markers = "os^vD<>ph*xP"
    for i, (case, grp) in enumerate(df.groupby("case", sort=False)):
        order = float(grp["order"].iloc[0])
        ax.loglog([float(Fraction(h)) for h in grp["h"]], pd.to_numeric(grp["error"]),
                  marker=markers[i % len(markers)], ms=4, lw=1, label=f"{case} ({order:.2f})")
    ax.set_xlabel("step h = 2 tau")
    ax.set_ylabel(f"max(|x - x_ref|, |v - v_ref|) at T = {p['T']}")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Damped driven pendulum: measured orders (mutze Secs. 4-6)", fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="mutze_orders", paper=PAPER, item="Secs. 4-6",
    title="eq. (90) from eqs. (44) and (54); g = 1 is the implicit midpoint rule; measured orders",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
