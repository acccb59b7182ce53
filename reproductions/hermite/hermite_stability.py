"""hermite Sec. 4.1: the complete linear stability sets of the one-step methods, derived
exactly from the methods' own equations.

For L = 1/2 q'^2 - 1/2 omega^2 q^2 (eq. 32) each method maps (v_j, omega q_j) to
(v_j+1, omega q_j+1) by an amplification matrix A(z), z = omega dt (eq. 35).  mpvi derives
A(z) with sympy from the trial basis, the equations (variational: dS_d/dv0 = dS_d/dv1 = 0,
eqs. 24-25) or test functions (Galerkin: 1 and 2 tau - 1, eq. 26) and the quadrature of
each method (:mod:`mpvi.analysis.symbolic`), checks det A = 1, and finds *every* interval of z > 0
on which |tr A| < 2 (eigenvalues distinct on the unit circle), with exact endpoints: the
roots of tr A = +-2.  The paper states only the first limits (sqrt(28/3), sqrt(10)) and
the gaps above them; the sets end at sqrt(42) and sqrt(60) (= 2 sqrt 15).  Beyond the
paper: the n = 3 methods (eqs. 27-31), the midpoint VI of item 3 and Simpson's VI (the
comparison integrator of Fig. 5).

Outputs: ``hermite_stability.csv`` (method, z_from, z_to, exact: one row per stable
interval, open at both ends, z_to = inf for an unbounded one), ``hermite_stability_formulas.csv``
(A(z), eigenvalues, det A, endpoints), and a chart of the intervals.  Compared
(reproductions/hermite/published/hermite_analysis.csv): the printed A(z) entries, eigenvalues
and stability limits, symbolically.  Disagreements: ERRATA [E36]-[E38].

Run: ``mpvi run hermite_stability`` or ``python reproductions/hermite/hermite_stability.py``.
"""
from decimal import Decimal

import pandas as pd
import sympy as sp

from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.run import script_main

from mpvi_papers.hermite._hermite import PAPER
from mpvi_papers.hermite._hermite_analysis import ANALYSED, derived, formula, trace_det

PARAMS = {"methods": list(ANALYSED)}
QUICK = {"methods": ["hermite_variational", "hermite_galerkin", "midpoint"]}


def endpoint(ctx, x):
    return "inf" if x == sp.oo else ctx.to_str(ctx.num(str(sp.N(x, ctx.dps + 20))), ctx.dps)


def compute(run):
    ctx = run.ctx
    rows, formulas, values = [], [], {}
    for name in run.params["methods"]:
        run.progress(f"{name}: deriving A(z) from the method's equations")
        A, lams, intervals = derived(name)
        tr, det = trace_det(name)
        entries = {"A11": A[0, 0], "A12": A[0, 1], "A21": A[1, 0], "A22": A[1, 1],
                   "lambda+": lams[0], "lambda-": lams[1], "det A": det, "trace A": tr}
        for key, expr in entries.items():
            formulas.append({"method": name, "quantity": key, "formula": formula(expr)})
            values[f"{name} {key}"] = formula(expr)
        for k, iv in enumerate(intervals, start=1):
            rows.append({"method": name, "z_from": endpoint(ctx, iv.lo), "z_to": endpoint(ctx, iv.hi),
                         "exact": f"({sp.sstr(iv.lo)}, {sp.sstr(iv.hi)})"})
            values[f"{name} stable interval {k} from"] = sp.sstr(iv.lo)
            values[f"{name} stable interval {k} to"] = sp.sstr(iv.hi)
        values[f"{name} stable intervals"] = str(len(intervals))
    return Output(tables={"": pd.DataFrame(rows), "formulas": pd.DataFrame(formulas)}, values=values)


STABLE_SET_STATEMENT = (
    "  The stable set {z > 0: |tr A(z)| < 2} is found again exactly: the positive roots of the "
    "numerators of tr A -+ 2 isolated by FLINT, |tr A| < 2 decided at a rational point between "
    "consecutive roots; it agrees with the derived intervals; det A = 1 and each derived "
    "eigenvalue is a root of lambda^2 - tr A lambda + det A, exactly.  z_from, z_to: proven "
    "against the isolated roots.")


def certify(run, out):
    """``mpvi run --certify``: every printed A(z) entry, eigenvalue, det A and stability
    limit decided against the derived one in exact arithmetic
    (:mod:`mpvi_papers.hermite._hermite_exact`).  The stable set is found again, independently of
    :func:`mpvi.analysis.symbolic.stable_intervals`: the positive roots of the numerators of
    tr A -+ 2 isolated by FLINT, |tr A| < 2 decided at a rational point between
    consecutive roots; it must agree with the derived intervals.  The derived eigenvalues
    are checked to be roots of lambda^2 - tr A lambda + det A, det A = 1 exactly.  The
    interval table's z_from, z_to are proven against the isolated roots."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.digits import proven_digits

    from mpvi_papers.hermite import _hermite_exact as X
    ctx = run.ctx
    digits = ctx.dps + GUARD_DIGITS
    found, limits = {}, {}
    with arb_precision(digits):
        for name in run.params["methods"]:
            A, lams, intervals = derived(name)
            z = next(iter(A.free_symbols)).name
            Af = [[X.ratfunc(A[i, j], z) for j in (0, 1)] for i in (0, 1)]
            tr = X._add(Af[0][0], Af[1][1])
            det = X._add(X._mul(Af[0][0], Af[1][1]), X._mul(X._const(-1), X._mul(Af[0][1], Af[1][0])))
            if X.rational_difference(det, X._const(1)) != 0:
                raise ArithmeticError(f"{name}: det A(z) is not 1")
            stable = X.stable_set(tr)
            if len(stable) != len(intervals):
                raise ArithmeticError(f"{name}: {len(stable)} stable intervals found exactly, "
                                      f"{len(intervals)} derived")
            for k, ((lo, hi), iv) in enumerate(zip(stable, intervals), start=1):
                for which, end, exact in (("from", lo, iv.lo), ("to", hi, iv.hi)):
                    if exact != 0 and X.decide_endpoint(exact, end, digits) != 0:
                        raise ArithmeticError(f"{name}: derived limit {exact} is not the "
                                              "isolated root")
                    limits[(name, k, which)] = end
            found[name] = {"A": Af, "tr": tr, "det": det, "lams": lams,
                           "entries": {"A11": A[0, 0], "A12": A[0, 1], "A21": A[1, 0], "A22": A[1, 1]}}

        def decide(key, printed):
            name, _, what = key.partition(" ")
            f = found[name]
            if what in f["entries"]:
                return X.decide_rational(printed, f["entries"][what])
            if what == "det A":
                return X.rational_difference(X.ratfunc(printed), f["det"])
            if what in ("lambda+", "lambda-"):
                lam = f["lams"][0 if what == "lambda+" else 1]
                form = X.radical_form(lam, next(iter(lam.free_symbols)).name)
                if not X.is_eigenvalue(form, f["tr"], f["det"]):
                    raise ArithmeticError(f"{key}: the derived formula is not an eigenvalue")
                return X.decide_radical(printed, lam, digits)
            words = what.split()           # stable interval k from|to
            return X.decide_endpoint(printed, limits[(name, int(words[2]), words[3])], digits)

        block = X.formula_block(run, X.printed_formulas("hermite_stability"), decide,
                                X.FORMULA_STATEMENT + STABLE_SET_STATEMENT)
        cells = {"z_from": [], "z_to": []}
        counter = {}
        for _, row in out.tables[""].iterrows():
            k = counter[row["method"]] = counter.get(row["method"], 0) + 1
            for column, which in (("z_from", "from"), ("z_to", "to")):
                end = limits[(row["method"], k, which)]
                if end is None:             # 0 or infinity, exactly
                    if (row[column] == "inf") != (which == "to") or (
                            which == "from" and Decimal(row[column]) != 0):
                        raise ArithmeticError(f"{row['method']}: {column} {row[column]} is not "
                                              "the exact end")
                    cells[column].append(ctx.dps)
                else:
                    cells[column].append(proven_digits(row[column], end[0])[0])
    block["columns"] = {"": cells}
    for key in out.values:
        if key not in block["values"] and key not in block["not_certified"]:
            block["not_certified"][key] = X.NOT_PUBLISHED
    block["not_certified"].update({
        "method": "the method's name (an input)",
        "exact": "the exact limits as text (sympy); their numbers are proven in z_from, z_to",
        "formulas.method": "the method's name (an input)", "formulas.quantity": "a name",
        "formulas.formula": "formulas (sympy text); the published ones are proven as values"})
    return block


def plot(out, p):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    methods = list(dict.fromkeys(df["method"]))
    fig, ax = plt.subplots(figsize=(8.5, 0.6 * len(methods) + 1.4))
    zmax = 21
    for y, m in enumerate(reversed(methods)):
        ax.hlines(y, 0, zmax, color="tab:red", lw=6, alpha=0.25)
        for k, (_, r) in enumerate(df[df["method"] == m].iterrows()):
            hi = zmax if r["z_to"] == "inf" else float(r["z_to"])
            ax.hlines(y, float(r["z_from"]), hi, color="tab:green", lw=6)
            if r["z_to"] != "inf":
                ax.text(hi, y + (0.2 if k % 2 == 0 else -0.32), r["exact"][1:-1].split(", ")[1],
                        fontsize=6, ha="center")
    ax.set_yticks(range(len(methods)))
    ax.set_yticklabels([ANALYSED[m][3] for m in reversed(methods)], fontsize=8)
    ax.set_xlim(0, zmax)
    ax.set_xlabel(r"$z = \omega\,\Delta t$")
    ax.set_title("Stable (green) and unstable (red) z of each method, derived exactly "
                 "(hermite Sec. 4.1)", fontsize=9)
    fig.tight_layout()
    return fig


REPRODUCTION = Reproduction(
    id="hermite_stability", paper=PAPER, item="Sec. 4.1 (stability intervals)",
    title="complete stable sets of z = omega dt, exact endpoints",
    params=PARAMS, quick=QUICK, compute=compute, plot=plot, certify=certify)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
