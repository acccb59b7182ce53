"""mutze Secs. 4-6: the small step equations of motion as integrators -- eq. (90) derived
from eqs. (44) and (54), g = 1 against the implicit midpoint rule, and the measured
orders of every variant on a nonlinear forced system.

* eqs. (44) and (54) on the damped oscillator (eq. 87), integrated exactly over the
  parabolic path and solved for a with sympy (:func:`mpvi.methods.mutze.
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

Run: ``mpvi run mutze_orders`` or ``python reproductions/mutze/mutze_orders.py``.
"""
from fractions import Fraction

import pandas as pd
import sympy as sp

from mpvi.analysis.measures import fit_order
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main
from mpvi.methods.mutze import TAU, parabolic_acceleration
from mpvi.repro.studies import numstr, study

from mpvi_papers.mutze._mutze import PAPER

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


CERTIFIED_STATEMENT = (
    "Orders: every case's run at every step is certified (mpvi.certify: its exact discrete "
    "trajectory enclosed on Arb balls, Krawczyk for the implicit steps, from the exact "
    "problem; eq. (79), the explicit solve of eq. (72) with g = 0, through Newton's solve of "
    "the same affine equation: one exact trajectory), and the exact solution x(T), v(T) of the damped driven pendulum is "
    "enclosed by a validated Taylor method (mpvi_papers.mutze._mutze_certify.enclose_pendulum: "
    "degree-30 Taylor steps of 1/16 with the Lagrange remainder over a proven a-priori "
    "box) -- not the GBS estimate; each error max(|x - x(T)|, |v - v(T)|) is a ball and "
    "the order the least-squares slope on balls (mpvi.repro.certified."
    "least_squares_order).  g = 1 against the implicit midpoint rule: both runs are "
    "certified and their exact trajectories' enclosures overlap at every node (within the "
    "radius stated below); the value is the largest difference of the two computed runs, "
    "evaluated exactly from their binary numbers (round-off of two runs of one map).  "
    "Eqs. (89), (90): the a derived exactly by sympy (the action integrated over the "
    "parabolic path, solved for a) against the printed formula, their difference "
    "cancelled over Q (exactly 0: proven match).")


def certify(run, out):
    """The proven digits of the orders, the errors and the g = 1 difference
    (``mpvi run --certify``; :data:`CERTIFIED_STATEMENT`)."""
    from flint import arb

    from mpvi import Problem, certify as certify_run, solve
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision, exact_rational
    from mpvi.repro.certified import least_squares_order
    from mpvi.repro.digits import proven_digits
    from mpvi.systems.damped import damped_pendulum
    from mpvi_papers.mutze._mutze_certify import (enclose_pendulum, exact, formula_difference,
                                            published_formulas)

    ctx, p, v = run.ctx, run.params, out.values
    values, not_certified = {}, {}
    hs = [Fraction(h) for h in p["steps"]]
    T = Fraction(p["T"])
    problem = Problem(damped_pendulum(ctx), [1], v0=[0])
    df = out.tables[""]
    digits = {"error": [], "order": []}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        run.progress("certify: the exact solution at T (validated Taylor method)")
        H = min(Fraction(1, 16), T)
        X, V = enclose_pendulum(T, 1, 0, H, order=30)
        for case, (scheme, opts) in CASES.items():
            run.progress(f"certify: {case}, steps {', '.join(p['steps'])}")
            errs = []
            walk = dict(opts)
            if walk.get("solver") == "explicit":
                # eq. (72) with g = 0 is affine in a here (A linear in v): the explicit
                # solve and Newton's solve the same equation, whose root is unique, so
                # they have one exact trajectory; the walk of the explicit solver is
                # refused by mpvi.certify (its affinity test on dual numbers), Newton's
                # is certified
                walk["solver"] = "newton"
            for h in hs:
                with ctx.active():
                    sol = solve(problem, scheme, h=ctx.num(h), n=int(T / h), **walk)
                cert = certify_run(sol)
                if not cert.complete:
                    raise ArithmeticError(f"{case}, h = {h}: the run is not certified "
                                          f"(step {cert.failed_step}: {cert.why})")
                errs.append(abs(cert.q[-1][0] - X).max(abs(cert.y[-1][0] - V)))
            order = least_squares_order(hs, errs)
            values[f"order {case}"] = proven_digits(v[f"order {case}"], order)
            for h, e in zip(p["steps"], errs):
                row = df[(df["case"] == case) & (df["h"] == h)].iloc[0]
                digits["error"].append(proven_digits(row["error"], e)[0])
                digits["order"].append(proven_digits(row["order"], order)[0])
        run.progress("certify: g = 1 against the implicit midpoint rule")
        runs = _g1_runs(ctx, p["g1_steps"])
        certs = [certify_run(r) for r in runs]
        widest = arb(0)
        for cq, cy, dq, dy in zip(certs[0].q, certs[0].y, certs[1].q, certs[1].y):
            for a, b in zip(list(cq) + list(cy), list(dq) + list(dy)):
                if not a.overlaps(b):
                    raise ArithmeticError("g = 1 and the implicit midpoint rule: exact "
                                          "trajectories proven different")
                widest = widest.max(arb(a.rad()) + arb(b.rad()))
        a, b = runs
        diff = arb(0)
        for u, w in zip(list(a.q.ravel()) + list(a.v.ravel()),
                        list(b.q.ravel()) + list(b.v.ravel())):
            diff = diff.max(abs(exact(exact_rational(u, "a state")) - exact(
                exact_rational(w, "a state"))))
        key = "g=1 - implicit midpoint max difference"
        values[key] = proven_digits(v[key], diff)
        statement = CERTIFIED_STATEMENT + (
            f"  The exact trajectories of g = 1 and of the implicit midpoint rule differ by "
            f"at most {(2 * widest).str(3, radius=False)} at every node (overlapping "
            f"enclosures).")
    not_certified["reference check (GBS halved)"] = (
        "the difference of two GBS estimates of the reference; the certified orders use the "
        "validated enclosure of the exact solution instead")
    for key, printed in published_formulas("mutze_orders").items():
        values[key] = (ctx.dps, formula_difference(printed, v[key], key))
    for key in v:
        if key.startswith("eq. (") and key not in values:
            not_certified[key] = "a derived formula that the paper does not print"
    not_certified["case"] = not_certified["h"] = "an input of the study, not a computed number"
    return {"statement": statement, "columns": {"": digits}, "values": values,
            "not_certified": not_certified}


def _g1_runs(ctx, steps):
    """The two runs of :func:`g1_against_midpoint` (solved again, for the certificate)."""
    from mpvi import LagrangianSystem, Problem, solve

    x, y, u, w = sp.symbols("x y u w")
    t = sp.Symbol("t")
    L = (2 + sp.cos(y)) * u ** 2 / 2 + u * w * sp.sin(y) / 3 + w ** 2 / 2 - x ** 2 / 2 - y ** 4 / 4 + t * x * w / 7
    with ctx.active():
        system = LagrangianSystem.from_lagrangian(
            "two-dof test system", [x, y], [u, w], L, {}, ctx,
            force=lambda tt, q, v: sp.Matrix([-v[0] ** 3 / 5, sp.sin(tt) / 3 - v[1] / 4]))
        problem = Problem(system, [1, "1/2"], v0=["1/3", -1])
        h = ctx.num(Fraction(1, 10))
        return (solve(problem, "mutze", h=h, n=steps, g=1),
                solve(problem, "implicit_midpoint", h=h, n=steps))


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
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
