"""Backward error analysis (beyond the four papers): the modified Hamiltonians of mpvi's
methods, derived by :func:`mpvi.modified_hamiltonian` from each method's own declaration,
confirmed numerically at 64 and 128 digits on the pendulum.

The cached studies:

* :data:`modified_hamiltonian_terms`: a method's modified Hamiltonian H~ through h^order
  (symbolic and exact; independent of the number context);
* :data:`sampled_run`: one run of a method at one step, its states sampled along the run;
* :data:`modified_flow_gap`: the gap between a method's solution and the exact flow of its
  truncated modified equation (a Gragg-Bulirsch-Stoer reference) at a fixed time.

H~_k (k = 0, 2, 4, ...) is H~ through the power p + k - 2 of h for a method of order p
(H~_0 = H): backward error analysis predicts that H~_k is conserved along the numerical
solution to O(h^(p + k)) over long times (HLW Thm. IX.8.1), the error falling by another
h^2 with every term until the method's round-off (or the exponentially small remainder of
the divergent series) is reached.

Reference: E. Hairer, C. Lubich, G. Wanner, *Geometric Numerical Integration*, 2nd ed.,
Springer 2006, Ch. IX (Thm. IX.3.1: a symplectic method's modified equation is
Hamiltonian; Thm. IX.8.1: the modified energy is conserved up to exponentially small
terms over exponentially long times).
"""
import math
import re
import time
from fractions import Fraction

import mpmath
import pandas as pd
import sympy as sp

from mpvi.ground.expressions import parse_expression
from mpvi.model.mechanics import LagrangianSystem
from mpvi.analysis.modified import (H as STEP, NotHamiltonianError, modified_equation,
                                   modified_hamiltonian, ring_polynomials)
from mpvi.model.problem import Problem
from mpvi.analysis.horner import horner_program, run_program
from mpvi.repro.declare import Output
from mpvi.repro.studies import Task, fraction, numstr, steps, study

PAPER = "bea"

#: method -> (label, order p, parameters)
METHODS = {
    "midpoint": ("midpoint VI", 2, {}),
    "simpson": ("Simpson VI", 4, {}),
    "lobatto": ("Lobatto-4 VI", 6, {"points": 4}),
    "mutze": ("Mutze direct midpoint (g = 0)", 2, {"g": 0}),
}

_Q = sp.Symbol("q")
_Q1, _Q2 = sp.symbols("q1 q2")

FIT_POINTS = 3
"""The orders are least-squares slopes over the (up to) three finest steps whose error
lies above the round-off threshold (:func:`roundoff_threshold`)."""


def pendulum(ctx):
    """The pendulum L = v^2/2 + cos q (H = p^2/2 - cos q) in context ``ctx``."""
    return LagrangianSystem("pendulum", [_Q], sp.Matrix([[1]]), -sp.cos(_Q), {}, ctx)


def double_pendulum(ctx):
    """The double pendulum with unit masses, rods and gravity, in the rods' angles from
    the downward vertical: M(q) = [[2, cos(q1 - q2)], [cos(q1 - q2), 1]],
    V = -2 cos q1 - cos q2 (:func:`mpvi.systems.nonlinear_double_pendulum` with
    m1 = m2 = l1 = l2 = g = 1, written with numbers instead of parameter symbols, which
    would be carried through the derivation)."""
    c = sp.cos(_Q1 - _Q2)
    return LagrangianSystem("double pendulum", [_Q1, _Q2], sp.Matrix([[2, c], [c, 1]]),
                            -2 * sp.cos(_Q1) - sp.cos(_Q2), {}, ctx)


SYSTEMS = {"pendulum": pendulum, "double_pendulum": double_pendulum}
"""The systems of the studies, by the name their parameter ``system`` gives (default
"pendulum")."""


def system_of(params, ctx):
    return SYSTEMS[params.get("system", "pendulum")](ctx)


def _coordinates(x):
    """A coordinate or momentum parameter as a list (the pendulum's are single strings)."""
    return list(x) if isinstance(x, (list, tuple)) else [x]


def roundoff_threshold(digits):
    """10^(4 - digits): an error below it is within four digits of the unit round-off of an
    energy of size 1, the floor of the measurement."""
    return Fraction(1, 10 ** (digits - 4))


def truncation_power(p, k):
    """The last power of h in H~_k (module doc): p + k - 2, and 0 for k = 0."""
    return 0 if k == 0 else p + k - 2


@study("bea_modified_hamiltonian")
def modified_hamiltonian_terms(rec, params):
    """H~ of ``params["method"]`` (its :data:`METHODS` parameters) on ``params["system"]``
    (:data:`SYSTEMS`, default the pendulum) through h^``params["order"]``, as the derivation's
    ring holds it (:meth:`mpvi.ModifiedHamiltonian.polynomials`): the generators as text of
    the closed grammar of :mod:`mpvi.ground.expressions` (:func:`term_text`; coordinates q,
    momenta p: lists of their names) and the coefficients of h^0 .. h^order as lists of
    monomials ``[exponents, "numerator/denominator"]``; and the derivation's wall time in
    seconds (a string).  No term goes through sympy or its printer: the double pendulum's
    terms run to tens of thousands of monomials.  A method whose modified field is not
    Hamiltonian there has only H itself as terms and the reason
    (:class:`mpvi.NotHamiltonianError`'s message) as ``not_hamiltonian``."""
    name = params["method"]
    system = system_of(params, rec.ctx)
    rec.progress(f"{name}: deriving the modified Hamiltonian on the {system.name} through "
                 f"h^{params['order']}")
    start = time.perf_counter()
    try:
        mh = modified_hamiltonian(name, system, int(params["order"]), **METHODS[name][2])
    except NotHamiltonianError as e:
        me = modified_equation(name, system, 0, **METHODS[name][2])
        C = me.algebra.canonical()
        q, p, reason = me.model.q, me.model.p, str(e)
        generators, terms = ring_polynomials(C, [C.coerce(me.model.H)])
    else:
        q, p, reason = mh.q, mh.p, None
        generators, terms = mh.polynomials()
    return {"q": [_symbol_name(x) for x in q], "p": [_symbol_name(x) for x in p],
            "generators": [term_text(g, q, p) for g in generators],
            "terms": [[[list(m), f"{c.numerator}/{c.denominator}"] for m, c in term]
                      for term in terms],
            "not_hamiltonian": reason, "seconds": f"{time.perf_counter() - start:.2f}"}


def _symbol_name(x):
    """The name of a plain symbol (one without assumptions: the name alone gives it back)."""
    if not isinstance(x, sp.Symbol) or x != sp.Symbol(x.name):
        raise ValueError(f"bea: {x!r} is not a plain symbol; its name would not read back")
    return x.name


def term_text(term, q, p):
    """An expression in the symbols ``q``, ``p`` (a generator of H~'s ring) as text that
    :func:`parsed_terms` reads back (by :func:`mpvi.ground.expressions.parse_expression`,
    never as code) to the identical expression -- checked here, so that one that would not
    is an error, not a silently different H~."""
    text = sp.StrPrinter({"order": "none"}).doprint(term)
    if _parse_term(text, {_symbol_name(x): x for x in [*q, *p]}) != term:
        raise ValueError(f"bea: the text of a generator of H~ does not read back to it "
                         f"({text[:80]}...)")
    return text


def _parse_term(text, names):
    return parse_expression(text, names, what="bea: a generator of H~ in the study cache")


_RATIONAL = re.compile(r"-?[0-9]+/[0-9]+")


def parsed_terms(value):
    """(q, p, generators, terms) of a :data:`modified_hamiltonian_terms` value: the
    symbols and generators as sympy objects, read by the closed grammar of
    :mod:`mpvi.ground.expressions` in the names of q and p only, and each term a list of
    (exponents, Fraction), every exponent a non-negative int, one per generator, every
    coefficient ``numerator/denominator`` (anything else is a ValueError naming it)."""
    q = [_cached_symbol(x) for x in value["q"]]
    p = [_cached_symbol(x) for x in value["p"]]
    names = {x.name: x for x in [*q, *p]}
    generators = [_parse_term(t, names) for t in value["generators"]]
    terms = []
    for k, term in enumerate(value["terms"]):
        if not isinstance(term, list):
            raise ValueError(f"bea: term {k} of H~ in the study cache is not a list of monomials")
        monomials = []
        for m in term:
            ok = (isinstance(m, list) and len(m) == 2 and isinstance(m[0], list)
                  and len(m[0]) == len(generators)
                  and all(type(e) is int and e >= 0 for e in m[0])
                  and isinstance(m[1], str) and _RATIONAL.fullmatch(m[1]))
            if ok:
                num, den = map(int, m[1].split("/"))
                ok = den > 0 and math.gcd(num, den) == 1
            if not ok:
                raise ValueError(f"bea: a monomial of term {k} of H~ in the study cache is not "
                                 f"[{len(generators)} exponents, \"n/d\" in lowest terms]: "
                                 f"{str(m)[:80]}")
            monomials.append((tuple(m[0]), Fraction(num, den)))
        terms.append(monomials)
    return q, p, generators, terms


def _cached_symbol(name):
    """A coordinate or momentum name of the study cache as its symbol."""
    x = parse_expression(name, what="bea: a symbol name in the study cache", free_symbols=True,
                         functions={}, constants={})
    if not isinstance(x, sp.Symbol):
        raise ValueError(f"bea: {name!r} in the study cache is not a symbol name")
    return x


def term_values(parsed, ctx, states, programs):
    """The terms of :func:`parsed_terms` at each of ``states`` ([(q, p)] of lists of
    numbers of ``ctx``): one list of values per term.  The generators are one generated
    function of (q, p) (:func:`mpvi.compiled.codegen.compile_exprs`, a few small
    expressions); each term is summed by its program of ``programs`` (Horner's rule on the
    trie of its exponents: :func:`term_programs`), all states by one run
    (:func:`mpvi.analysis.horner.run_program`: compiled in the gmp context)."""
    from mpvi.compiled.codegen import compile_exprs
    q, p, generators, _ = parsed
    g = compile_exprs([q, p], generators, ctx, f"bea_generators_{len(generators)}")
    columns = list(zip(*(g(a, b) for a, b in states))) or [()] * len(generators)
    return [run_program(program, columns, ctx, len(states)) for program in programs]


def term_programs(parsed):
    """The :func:`mpvi.analysis.horner.horner_program` of each term of :func:`parsed_terms`
    (made once per H~, run at the sampled states of every run)."""
    _, _, generators, terms = parsed
    return [horner_program(t, len(generators)) for t in terms]


def context_for(base, digits):
    """``base`` itself, or a context of its kind with ``digits`` digits."""
    return base if digits in (None, base.dps) else type(base)(int(digits))


@study("bea_sampled_run")
def sampled_run(rec, params):
    """One run of ``params["method"]`` on ``params["system"]`` (default the pendulum) from
    (q0, p0) over [0, T] at step h
    (exact strings) with ``params["digits"]`` digits (None: the study's context); the
    states at equally spaced nodes, at least ``params["samples"]`` + 1 of them (every node
    if there are fewer), as full-precision strings, and the digits used."""
    ctx = context_for(rec.ctx, params["digits"])
    n = steps(params["T"], params["h"])
    # the largest stride dividing n that keeps at least ``samples`` states
    every = max(d for d in range(1, max(1, n // int(params["samples"])) + 1) if n % d == 0)
    name = params["method"]
    with ctx.active():
        prob = Problem(system_of(params, ctx), _coordinates(params["q0"]),
                       p0=_coordinates(params["p0"]))
        rec.progress(f"{name}: {n} steps of h = {params['h']} at {ctx.dps} digits")
        sol = rec.solve(prob, name, h=ctx.num(fraction(params["h"])), n=n, saveat=every,
                        **METHODS[name][2])
        return {"q": [[ctx.to_str(x) for x in row] for row in sol.q],
                "p": [[ctx.to_str(x) for x in row] for row in sol.p], "digits": ctx.dps}


def energy_errors(run_value, parsed, h, powers, base, programs):
    """max_j |H~(y_j) - H~(y_0)| over the sampled states of a :data:`sampled_run` value
    for H~ summed through each power of ``powers`` (``parsed``: :func:`parsed_terms` of a
    :data:`modified_hamiltonian_terms` value, ``programs`` its terms' programs:
    :func:`term_programs`), evaluated in a context of the kind of
    ``base`` with the run's digits + 10; mpmath numbers."""
    ctx = type(base)(run_value["digits"] + 10)
    with ctx.active():
        hv = ctx.num(fraction(h))
        hk = [ctx.num(1)]
        for _ in range(max(powers)):
            hk.append(hk[-1] * hv)
        states = [([ctx.num(x) for x in a], [ctx.num(x) for x in b])
                  for a, b in zip(run_value["q"], run_value["p"])]
        columns = term_values(parsed, ctx, states, programs)
        values = list(zip(*columns))
        out = {}
        for top in powers:
            E = [ctx.fsum(v[j] * hk[j] for j in range(top + 1)) for v in values]
            with mpmath.workdps(ctx.dps):
                out[top] = mpmath.mpf(ctx.to_str(max(abs(e - E[0]) for e in E)))
        return out


def asymptotic_order(hs, errors, threshold, points=FIT_POINTS):
    """The least-squares slope of log(error) against log(h) over the ``points`` smallest
    steps whose error is above ``threshold`` (None if fewer than two are), and the steps
    used."""
    with mpmath.workdps(30):
        limit = mpmath.mpf(threshold.numerator) / threshold.denominator
        above = [(Fraction(h), e) for h, e in zip(hs, errors) if e > limit]
    above = sorted(above)[:points]
    if len(above) < 2:
        return None, []
    x = [math.log(float(h)) for h, _ in above]
    y = [float(mpmath.log(e)) for _, e in above]
    xm, ym = sum(x) / len(x), sum(y) / len(y)
    slope = sum((a - xm) * (b - ym) for a, b in zip(x, y)) / sum((a - xm) ** 2 for a in x)
    return slope, [h for h, _ in above]


def run_params(group, h, common):
    out = {"method": group["method"], "h": h, "digits": group.get("digits"), "T": common["T"],
           "q0": common["q0"], "p0": common["p0"], "samples": common["samples"]}
    if common.get("system", "pendulum") != "pendulum":
        out["system"] = common["system"]
    return out


def derivation_orders(groups):
    """method -> the highest order any group asks for (one derivation per method)."""
    orders = {}
    for g in groups:
        orders[g["method"]] = max(orders.get(g["method"], 0), int(g["order"]))
    return orders


def derivation_params(method, order, common):
    """The :data:`modified_hamiltonian_terms` parameters of ``method`` through h^order on
    the system of the reproduction's parameters ``common``."""
    out = {"method": method, "order": order}
    if common.get("system", "pendulum") != "pendulum":
        out["system"] = common["system"]
    return out


def energy_tasks(params):
    """The :class:`Task` list of :mod:`mpvi_papers.bea.bea_energy` (and ``bea_double``): one
    derivation per method and one run per (group, step)."""
    double = params.get("system", "pendulum") != "pendulum"
    size = 40 if double else 1
    # derivations (measured, FLINT's ring): the pendulum's about 5e-5 order^3 s (the
    # midpoint VI through h^32 1.6 s); the double pendulum's through h^4 1100 times that,
    # Simpson's 4 times more (the midpoint VI 2 s, Simpson's 15 s)
    factor = {"lobatto": 1.5, "simpson": 4 if double else 1}
    tasks = [Task(modified_hamiltonian_terms, derivation_params(m, o, params),
                  label=f"bea H~ of {m} through h^{o}",
                  cost=(1100 if double else 1) * 5e-5 * max(o, 2) ** 3 * factor.get(m, 1))
             for m, o in derivation_orders(params["groups"]).items()]
    for g in params["groups"]:
        for h in g["steps"]:
            n = steps(params["T"], h)
            tasks.append(Task(sampled_run, run_params(g, h, params),
                              label=f"bea {g['method']} h={h}"
                                    + (f" at {g['digits']} digits" if g.get("digits") else ""),
                              cost=size * n * 5e-5 * (1 + (g.get("digits") or 64) / 64)))
    return tasks


# ----- the energy errors (bea_energy, bea_double) ------------------------------------------

KS = range(0, 40, 2)


def energy_output(run):
    """The table and values of :mod:`mpvi_papers.bea.bea_energy` (and ``bea_double``): the
    energy error of every H~_k of every group at every step, the fitted orders, the
    smallest error; derivation times in ``extra``."""
    ctx, p = run.ctx, run.params
    terms = {m: run.study(modified_hamiltonian_terms, derivation_params(m, o, p))
             for m, o in derivation_orders(p["groups"]).items()}
    rows, values = [], {}
    for m, v in terms.items():
        if v.get("not_hamiltonian"):
            values[f"{m}: H~ beyond H"] = v["not_hamiltonian"]
    seconds = {f"{m} through h^{len(v['terms']) - 1}": float(v["seconds"]) for m, v in terms.items()}
    parsed = {m: parsed_terms(v) for m, v in terms.items()}
    programs = {m: term_programs(v) for m, v in parsed.items()}
    for g in p["groups"]:
        m = g["method"]
        order = min(int(g["order"]), len(terms[m]["terms"]) - 1)
        label, pm, _ = METHODS[m]
        ks = [k for k in KS if truncation_power(pm, k) <= order]
        powers = [truncation_power(pm, k) for k in ks]
        per_k = {k: [] for k in ks}
        digits = None
        for h in g["steps"]:
            res = run.study(sampled_run, run_params(g, h, p))
            digits = res["digits"]
            q, mom, generators, polys = parsed[m]
            errs = energy_errors(res, (q, mom, generators, polys[:order + 1]), h, powers, ctx,
                                 programs[m][:order + 1])
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


def energy_figure(out, title):
    """One panel per (method, digits), one curve per k."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter
    df = out.tables[""]
    methods = list(dict.fromkeys(df["method"]))
    rows = sorted(set(df["digits"]))
    fig, axes = plt.subplots(len(rows), len(methods), figsize=(4.2 * len(methods), 4.9 * len(rows)),
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
            # the legend below its panel (taller panels make the room): inside, the
            # curves of the largest k run through the lower right corner
            ax.legend(fontsize=5.5, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.16),
                      frameon=False)
    fig.suptitle(f"{title}: energy error of the modified Hamiltonian truncated "
                 "after h^(p+k-2) (fitted order in brackets; dashed: round-off threshold)",
                 fontsize=10)
    fig.tight_layout()
    return fig


# ----- the modified flow --------------------------------------------------------------------

def _exact(x):
    return sp.Rational(str(fraction(x)))


@study("bea_modified_flow_gap")
def modified_flow_gap(rec, params):
    """max over the state components of |y_N - z(T)| at T = N h: y the solution of
    ``params["method"]`` on the pendulum, z the exact flow of its modified equation
    truncated after h^r for each r of ``params["truncations"]`` (h a number), computed by
    GBS (order 2 ``levels``, step ``gbs_h``) at the study's precision; with the GBS check
    (the same at ``gbs_h``/2) for each r, and the first power s > r whose term is not
    zero (derived through h^(max r + 2)).  Returns {"gaps": {r: ..}, "checks": {r: ..},
    "first_omitted": {r: s}}."""
    from mpvi.model.first_order import FirstOrderSystem
    ctx = rec.ctx
    name = params["method"]
    options = METHODS[name][2] if name in METHODS else {}
    order = max(params["truncations"]) + 2
    me = modified_equation(name, pendulum(ctx), order, **options)
    nonzero = [k for k in range(me.order + 1) if not me.vanishes(k)]
    first_omitted = {str(r): next((k for k in nonzero if k > r), None)
                     for r in params["truncations"]}
    y = me.symbols
    h = _exact(params["h"])
    n = steps(params["T"], params["h"])
    prob = Problem(pendulum(ctx), [params["q0"]], p0=[params["p0"]])
    rec.progress(f"{name}: {n} steps of h = {params['h']}")
    sol = rec.solve(prob, name, h=ctx.num(fraction(params["h"])), n=n, **options)
    end = [sol.q[-1, 0], (sol.p if me.form == "qp" else sol.v)[-1, 0]]
    start = [ctx.num(fraction(params["q0"])), ctx.num(fraction(params["p0"]))]
    gaps, checks = {}, {}
    for r in params["truncations"]:
        field = [sp.expand(e.subs(STEP, h)) for e in me.field(r)]
        system = FirstOrderSystem.from_expressions(
            f"{name} modified equation through h^{r}", y, field, ctx)
        ends = []
        for H in (fraction(params["gbs_h"]), fraction(params["gbs_h"]) / 2):
            rec.progress(f"{name}: GBS on the modified equation through h^{r}, H = {H}")
            z = rec.solve(Problem(system, start), "gbs", h=ctx.num(H),
                          n=steps(params["T"], H), levels=int(params["levels"]))
            ends.append(list(z.q[-1]))
        gaps[str(r)] = max(abs(a - b) for a, b in zip(end, ends[1]))
        checks[str(r)] = max(abs(a - b) for a, b in zip(ends[0], ends[1]))
    return {"gaps": gaps, "checks": checks, "first_omitted": first_omitted}
