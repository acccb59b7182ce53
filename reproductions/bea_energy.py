"""Backward error analysis, modified energies (beyond the four papers): the energy error of
the truncated modified Hamiltonian H~_k along the numerical solution of the pendulum falls
as h^(p + k), k = 0, 2, 4, ..., down to round-off at 64 digits, and below 1e-100 at 128.

For the midpoint variational integrator (order p = 2), Simpson's (4), the 4-point Lobatto
variational integrator (6) and Mutze's direct midpoint method (g = 0, order 2; position
Verlet for this Lagrangian) on H = p^2/2 - cos q from (q, p) = (1, 0):

* H~ is derived exactly through h^order by :func:`mpvi.modified_hamiltonian` from each
  method's own declaration (its trial basis and quadrature, or Mutze's parabolic path);
* each method runs over [0, T] at each step h, its states sampled (``samples`` + 1
  nodes); the error of H~_k (H~ through h^(p + k - 2); H~_0 = H) is
  max_j |H~_k(y_j) - H~_k(y_0)|, evaluated with 10 guard digits;
* the fitted order of each curve is the least-squares slope over the three finest steps
  whose error lies above the round-off threshold 10^(4 - digits) (an error below it is
  round-off: the floor of the plot).

Backward error analysis (Hairer, Lubich & Wanner, *Geometric Numerical Integration*,
Thm. IX.8.1) predicts the orders p, p + 2, p + 4, ...: each term of H~ lowers the error by
another h^2 until the method's round-off, or, at large h, the exponentially small
remainder of the divergent series, is reached.  The 128-digit groups run the midpoint
rule and Mutze's method to smaller steps with H~ through h^32.

Run: ``mpvi run bea_energy`` or ``python reproductions/bea_energy.py``.
"""
from fractions import Fraction

import pandas as pd

from mpvi.repro.run import Output, Reproduction, script_main
from mpvi.repro.studies import numstr

from reproductions._bea import (METHODS, PAPER, asymptotic_order, derivation_orders,
                                energy_errors, energy_tasks, modified_hamiltonian_terms,
                                roundoff_threshold, run_params, sampled_run,
                                truncation_power)

STEPS64 = ["1/5", "1/10", "1/20", "1/40", "1/80", "1/160", "1/320"]
STEPS128 = ["1/10", "1/20", "1/40", "1/80", "1/160", "1/320", "1/640", "1/1280"]
PARAMS = {
    "q0": "1", "p0": "0", "T": "20", "samples": 400,
    "groups": [{"method": m, "digits": None, "order": 24, "steps": STEPS64} for m in METHODS]
    + [{"method": "midpoint", "digits": 128, "order": 32, "steps": STEPS128},
       {"method": "mutze", "digits": 128, "order": 32, "steps": STEPS128},
       {"method": "simpson", "digits": 128, "order": 24, "steps": STEPS128[:6]},
       {"method": "lobatto", "digits": 128, "order": 24, "steps": STEPS128[:6]}],
}
QUICK = {
    "T": "10", "samples": 100,
    "groups": [{"method": m, "digits": None, "order": METHODS[m][1] + 4, "steps": STEPS64[:4]}
               for m in METHODS]
    + [{"method": "midpoint", "digits": 128, "order": 12, "steps": STEPS128[2:6]}],
}
KS = range(0, 40, 2)


def compute(run):
    ctx, p = run.ctx, run.params
    terms = {m: run.study(modified_hamiltonian_terms, {"method": m, "order": o})
             for m, o in derivation_orders(p["groups"]).items()}
    rows, values = [], {}
    seconds = {f"{m} through h^{len(v['terms']) - 1}": float(v["seconds"]) for m, v in terms.items()}
    for g in p["groups"]:
        m, order = g["method"], int(g["order"])
        label, pm, _ = METHODS[m]
        ks = [k for k in KS if truncation_power(pm, k) <= order]
        powers = [truncation_power(pm, k) for k in ks]
        per_k = {k: [] for k in ks}
        digits = None
        for h in g["steps"]:
            res = run.study(sampled_run, run_params(g, h, p))
            digits = res["digits"]
            value = dict(terms[m], terms=terms[m]["terms"][:order + 1])
            errs = energy_errors(res, value, h, powers, ctx)
            for k, top in zip(ks, powers):
                per_k[k].append(errs[top])
        threshold = roundoff_threshold(digits)
        floor = min(e for errs in per_k.values() for e in errs)
        for k in ks:
            slope, used = asymptotic_order(g["steps"], per_k[k], threshold)
            for h, e in zip(g["steps"], per_k[k]):
                rows.append({"method": m, "digits": digits, "k": k,
                             "through_power": truncation_power(pm, k), "h": h,
                             "error": numstr(ctx, ctx.num(str(e))) if e else "0",
                             "order": "" if slope is None else f"{slope:.3f}",
                             "expected": pm + k, "fitted": Fraction(h) in used})
            if slope is not None:
                values[f"{m} {digits} digits order of H~_{k} (expected {pm + k})"] = f"{slope:.3f}"
        values[f"{m} {digits} digits smallest error"] = numstr(ctx, ctx.num(str(floor)))
    df = pd.DataFrame(rows)
    return Output(tables={"": df}, values=values, extra={"derivation_seconds": seconds},
                  unchecked={"digits": "the digits of the row's own run"})


def plot(out, p):
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter
    df = out.tables[""]
    methods = list(dict.fromkeys(df["method"]))
    rows = sorted(set(df["digits"]))
    fig, axes = plt.subplots(len(rows), len(methods), figsize=(4.2 * len(methods), 3.8 * len(rows)),
                             squeeze=False)
    cmap = plt.get_cmap("viridis")
    for r, digits in enumerate(rows):
        for c, m in enumerate(methods):
            ax = axes[r][c]
            sub = df[(df["method"] == m) & (df["digits"] == digits)]
            if sub.empty:
                ax.set_visible(False)
                continue
            ks = sorted(set(sub["k"]))
            for i, k in enumerate(ks):
                grp = sub[sub["k"] == k]
                hs = [float(Fraction(h)) for h in grp["h"]]
                err = [max(float(e), 1e-300) for e in grp["error"]]
                order = grp["order"].iloc[0]
                lab = f"k={k}" + (f" ({float(order):.2f})" if order else "")
                ax.loglog(hs, err, marker="o", ms=3, lw=1, color=cmap(i / max(1, len(ks) - 1)),
                          label=lab)
            ax.axhline(float(roundoff_threshold(digits)), color="0.5", ls="--", lw=0.8)
            ax.set_title(f"{METHODS[m][0]}, {digits} digits (p = {METHODS[m][1]})", fontsize=9)
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel("h")
            ax.set_ylabel(r"max$_j\,|\tilde H_k(y_j) - \tilde H_k(y_0)|$")
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=5.5, ncol=2, loc="lower right")
    fig.suptitle(f"Pendulum, T = {p['T']}: energy error of the modified Hamiltonian truncated "
                 "after h^(p+k-2) (fitted order in brackets; dashed: round-off threshold)",
                 fontsize=10)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="bea_energy", paper=PAPER, item="modified energies",
    title="energy errors of the truncated modified Hamiltonians H~_k fall as h^(p+k) to "
          "round-off (64 and 128 digits)",
    runtime="~3 min", params=PARAMS, quick=QUICK, compute=compute, plot=plot,
    tasks=energy_tasks, published=False)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
