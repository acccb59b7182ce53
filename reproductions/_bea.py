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
from fractions import Fraction

import mpmath
import sympy as sp

from mpvi.mechanics import LagrangianSystem
from mpvi.modified import H as STEP, modified_equation, modified_hamiltonian
from mpvi.problem import Problem
from mpvi.repro.studies import Task, fraction, steps, study

PAPER = "bea"

#: method -> (label, order p, parameters)
METHODS = {
    "midpoint": ("midpoint VI", 2, {}),
    "simpson": ("Simpson VI", 4, {}),
    "lobatto": ("Lobatto-4 VI", 6, {"points": 4}),
    "mutze": ("Mutze direct midpoint (g = 0)", 2, {"g": 0}),
}

_Q = sp.Symbol("q")

FIT_POINTS = 3
"""The orders are least-squares slopes over the (up to) three finest steps whose error
lies above the round-off threshold (:func:`roundoff_threshold`)."""


def pendulum(ctx):
    """The pendulum L = v^2/2 + cos q (H = p^2/2 - cos q) in context ``ctx``."""
    return LagrangianSystem("pendulum", [_Q], sp.Matrix([[1]]), -sp.cos(_Q), {}, ctx)


def roundoff_threshold(digits):
    """10^(4 - digits): an error below it is within four digits of the unit round-off of an
    energy of size 1, the floor of the measurement."""
    return Fraction(1, 10 ** (digits - 4))


def truncation_power(p, k):
    """The last power of h in H~_k (module doc): p + k - 2, and 0 for k = 0."""
    return 0 if k == 0 else p + k - 2


@study("bea_modified_hamiltonian")
def modified_hamiltonian_terms(rec, params):
    """H~ of ``params["method"]`` (its :data:`METHODS` parameters) on the pendulum through
    h^``params["order"]``: the coefficients of h^0 .. h^order as ``sympy.srepr`` strings
    (symbols q, p0), and the derivation's wall time in seconds (a string)."""
    name = params["method"]
    rec.progress(f"{name}: deriving the modified Hamiltonian through h^{params['order']}")
    mh = modified_hamiltonian(name, pendulum(rec.ctx), int(params["order"]), **METHODS[name][2])
    return {"q": sp.srepr(mh.q[0]), "p": sp.srepr(mh.p[0]),
            "terms": [sp.srepr(t) for t in mh.terms],
            "seconds": f"{mh.equation.seconds:.2f}"}


def term_values(value, ctx):
    """The terms H_1 .. of a :data:`modified_hamiltonian_terms` value as one generated
    function of (q, p) in context ``ctx`` (:func:`mpvi.codegen.compile_exprs`): it returns
    the list of the terms' values."""
    from mpvi.codegen import compile_exprs
    q, p = sp.sympify(value["q"]), sp.sympify(value["p"])
    exprs = [sp.sympify(t) for t in value["terms"]]
    return compile_exprs([q, p], exprs, ctx, f"bea_modified_hamiltonian_{len(exprs)}")


def context_for(base, digits):
    """``base`` itself, or a context of its kind with ``digits`` digits."""
    return base if digits in (None, base.dps) else type(base)(int(digits))


@study("bea_sampled_run")
def sampled_run(rec, params):
    """One run of ``params["method"]`` on the pendulum from (q0, p0) over [0, T] at step h
    (exact strings) with ``params["digits"]`` digits (None: the study's context); the
    states at equally spaced nodes, at least ``params["samples"]`` + 1 of them (every node
    if there are fewer), as full-precision strings, and the digits used."""
    ctx = context_for(rec.ctx, params["digits"])
    n = steps(params["T"], params["h"])
    # the largest stride dividing n that keeps at least ``samples`` states
    every = max(d for d in range(1, max(1, n // int(params["samples"])) + 1) if n % d == 0)
    name = params["method"]
    with ctx.active():
        prob = Problem(pendulum(ctx), [params["q0"]], p0=[params["p0"]])
        rec.progress(f"{name}: {n} steps of h = {params['h']} at {ctx.dps} digits")
        sol = rec.solve(prob, name, h=ctx.num(fraction(params["h"])), n=n, saveat=every,
                        **METHODS[name][2])
        return {"q": [ctx.to_str(x) for x in sol.q[:, 0]],
                "p": [ctx.to_str(x) for x in sol.p[:, 0]], "digits": ctx.dps}


def energy_errors(run_value, value, h, powers, base):
    """max_j |H~(y_j) - H~(y_0)| over the sampled states of a :data:`sampled_run` value
    for H~ summed through each power of ``powers`` (the terms of a
    :data:`modified_hamiltonian_terms` value), evaluated in a context of the kind of
    ``base`` with the run's digits + 10; mpmath numbers."""
    ctx = type(base)(run_value["digits"] + 10)
    f = term_values(value, ctx)
    with ctx.active():
        hv = ctx.num(fraction(h))
        hk = [ctx.num(1)]
        for _ in range(max(powers)):
            hk.append(hk[-1] * hv)
        values = [f(ctx.num(a), ctx.num(b)) for a, b in zip(run_value["q"], run_value["p"])]
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
    return {"method": group["method"], "h": h, "digits": group.get("digits"), "T": common["T"],
            "q0": common["q0"], "p0": common["p0"], "samples": common["samples"]}


def derivation_orders(groups):
    """method -> the highest order any group asks for (one derivation per method)."""
    orders = {}
    for g in groups:
        orders[g["method"]] = max(orders.get(g["method"], 0), int(g["order"]))
    return orders


def energy_tasks(params):
    """The :class:`Task` list of :mod:`reproductions.bea_energy`: one derivation per method
    and one run per (group, step)."""
    tasks = [Task(modified_hamiltonian_terms, {"method": m, "order": o},
                  label=f"bea H~ of {m} through h^{o}", cost=0.002 * o ** 3 * (3 if m == "lobatto" else 1))
             for m, o in derivation_orders(params["groups"]).items()]
    for g in params["groups"]:
        for h in g["steps"]:
            n = steps(params["T"], h)
            tasks.append(Task(sampled_run, run_params(g, h, params),
                              label=f"bea {g['method']} h={h} {g.get('digits') or ''} digits",
                              cost=n * 5e-5 * (1 + (g.get("digits") or 64) / 64)))
    return tasks


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
    from mpvi.codegen import compile_exprs
    from mpvi.ode import FirstOrderSystem
    ctx = rec.ctx
    name = params["method"]
    options = METHODS[name][2] if name in METHODS else {}
    order = max(params["truncations"]) + 2
    me = modified_equation(name, pendulum(ctx), order, **options)
    nonzero = [k for k, t in enumerate(me.terms) if any(sp.simplify(e) != 0 for e in t)]
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
        f = compile_exprs([y], field, ctx, f"bea_modified_{name}_{r}")
        system = FirstOrderSystem(f"{name} modified equation through h^{r}",
                                  lambda t, z, f=f: f(list(z)), len(y), ctx)
        ends = []
        for H in (fraction(params["gbs_h"]), fraction(params["gbs_h"]) / 2):
            rec.progress(f"{name}: GBS on the modified equation through h^{r}, H = {H}")
            z = rec.solve(Problem(system, start), "gbs", h=ctx.num(H),
                          n=steps(params["T"], H), levels=int(params["levels"]))
            ends.append(list(z.q[-1]))
        gaps[str(r)] = max(abs(a - b) for a, b in zip(end, ends[1]))
        checks[str(r)] = max(abs(a - b) for a, b in zip(ends[0], ends[1]))
    return {"gaps": gaps, "checks": checks, "first_omitted": first_omitted}
