"""top2025 Sec. 4.2, the Lagrange top with looping motion (Table 3): Figs. 7-11 and
Tables 4-5.

Time unit: t_bar = the exact nutation period 2 omega_1 of the Weierstrass solution
(1.847239 s for Table 3 with g = 9.81; the paper prints 1.84671 s, see ERRATA [E12]).
Steps are h = t_bar / N, so T = k t_bar is reached exactly after k N steps.  The top, its
exact nutation and errors are :class:`LoopingTop`; each long run of Tables 4-5 (one
method, span and step) is the cached study :data:`top_long_run`.
"""
from fractions import Fraction

import numpy as np
import pandas as pd

from mpvi.analysis.measures import fit_order
from mpvi.numbers.context import MPContext, fp
from mpvi.repro.declare import Output, Reproduction
from mpvi.repro.studies import Task, study, successive_orders, sup_norm
from mpvi.systems.lagrange_top import table3_top

from mpvi_papers.top2025._top2025 import METHODS, PAPER, STEP_SECONDS, STYLE


# ----- the Table 3 top and its exact nutation ------------------------------------------------

def reference_context(ctx):
    """The context exact references are computed in: ``ctx`` itself for mp, and for
    float64 (whose fixed precision the Weierstrass setup cannot raise) an mp context with
    twice float64's round-trip digits, so that each value converted to float64 is
    correctly rounded."""
    return ctx if ctx.is_mp else MPContext(2 * fp.repr_digits)


class RoundedNutation:
    """An exact nutation computed in an mp context, read in another context (float64):
    ``period``, ``roots``, ``theta(t)`` and ``phi_dot(t)`` take and return numbers of
    ``ctx`` (times are converted exactly)."""

    def __init__(self, nutation, ctx):
        self.exact, self.ctx = nutation, ctx
        self.period = ctx.num(nutation.period)
        self.roots = tuple(ctx.num(r) for r in nutation.roots)

    def _time(self, t):
        return self.exact.ctx.num(Fraction(float(t)))

    def theta(self, t):
        return self.ctx.num(self.exact.theta(self._time(t)))

    def phi_dot(self, t):
        return self.ctx.num(self.exact.phi_dot(self._time(t)))


def exact_nutation(top, factory):
    """The exact nutation of ``top`` (built by ``factory(ctx)``) in the top's context: the
    top's own for mp, a :class:`RoundedNutation` from :func:`reference_context` otherwise."""
    ctx = top.ctx
    if ctx.is_mp:
        return top.nutation()
    return RoundedNutation(factory(reference_context(ctx)).nutation(), ctx)


class LoopingTop:
    """The Table 3 top (looping motion) with its exact nutation; time unit t_bar = the
    nutation period, steps h = t_bar / N; errors as defined in top2025 Sec. 4.2.2.
    ``top`` is the :class:`mpvi.Problem` (:func:`mpvi.systems.lagrange_top.table3_top`),
    ``system`` its system, ``nutation`` the exact nutation, ``H0`` the initial energy."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.top = table3_top(ctx)
        self.system = self.top.system
        self.nutation = exact_nutation(self.top, table3_top)
        self.tbar = self.nutation.period
        self.H0 = self.system.hamiltonian(self.top.q0, self.top.p0)

    def run(self, rec, method, N_per_period, periods):
        """``rec.solve`` of the top over ``periods`` nutation periods with h = t_bar / N."""
        h = self.tbar / N_per_period
        return rec.solve(self.top, method, h=h, n=N_per_period * periods)

    def theta_exact(self, times):
        """The exact nutation theta(t) at ``times``.  On equispaced nodes t_j = j h, h =
        t_bar / N, over more than two periods, theta is evaluated once per phase: theta(t_j)
        = theta(s + d) = theta(s) + theta'(s) d with s = t_(j mod N) and d = t_j - k t_bar -
        s (k = j div N) the drift of the rounded nodes from exact periodicity, |d| <= about
        k eps t_bar, so the dropped theta'' d^2 / 2 is below eps^2; theta' from the same
        Weierstrass function.  The long runs of Tables 4-5 (80,001 nodes) then make 2 N
        evaluations instead of N T + 1."""
        ctx, period = self.ctx, self.tbar
        N = self._nodes_per_period(times) if ctx.is_mp else None    # theta' of mp's nutation
        if N is None or len(times) <= 2 * N:
            return np.array([self.nutation.theta(t) for t in times], dtype=ctx.dtype)
        base = [(times[i], self.nutation.theta(times[i]), self.nutation.theta_dot(times[i]))
                for i in range(N)]
        out = []
        for j, t in enumerate(times):
            s, th, dth = base[j % N]
            out.append(th + dth * (t - (j // N) * period - s))
        return np.array(out, dtype=ctx.dtype)

    def _nodes_per_period(self, times):
        """N where ``times`` are the driver's t_j = j h (0 + j h, rounded once) with h the
        rounded t_bar / N, else None."""
        ctx, period = self.ctx, self.tbar
        if len(times) < 3 or times[0] != 0 or not times[1] > 0:
            return None
        h = times[1]
        N = int(round(float(period / h)))
        if N < 1 or abs(h * N - period) > 2 * N * ctx.eps * period \
                or any(times[j] != j * h for j in range(len(times))):
            return None
        return N

    def errors(self, sol):
        """Node-wise e_theta = (theta - theta_ex)/theta_ex, e_H = (H - H0)/H0 and the
        relative errors of p_phi, p_psi (signed; sup norms are their max |.|) of a
        :class:`mpvi.Solution`."""
        ctx, S = self.ctx, self.system
        th_ex = self.theta_exact(sol.t)
        e_th = (sol.q[:, 1] - th_ex) / th_ex
        e_H = np.array([(H - self.H0) / self.H0 for H in S.energies(sol.q, sol.p)],
                       dtype=ctx.dtype)
        p0 = self.top.p0
        e_pphi = (sol.p[:, 0] - p0[0]) / p0[0]
        e_ppsi = (sol.p[:, 2] - p0[2]) / p0[2]
        return {"theta": e_th, "H": e_H, "p_phi": e_pphi, "p_psi": e_ppsi}


CERTIFIED_STATEMENT = (
    "Each error norm is an Arb enclosure: e_theta = sup_n |theta_n - theta_ex(t_n)| / "
    "|theta_ex(t_n)| with theta_n the method's exact discrete trajectory (mpvi.certify, "
    "rounding excluded) and theta_ex the exact Weierstrass-P nutation "
    "(LagrangeTopNutation.enclose) at the exact nodes t_n = n h; e_H = sup_n |H(q_n, p_n) - "
    "H0| / |H0| with H evaluated on the enclosures and H0 = H of the exact initial data "
    "(p0 = M(q0) q'0 on balls); the momenta's errors likewise against p0; each order is the "
    "least-squares slope of the enclosed log errors against the exact log h.  The data are "
    "those the run used as binary numbers: m_top, I, I3, l, g, 9.2 and theta0 = pi/3 "
    "rounded to the run's digits, h = t_bar / N with t_bar the nutation period computed at "
    "the run's digits, rounded; the exact nutation is that of these data; the enclosures "
    "are of the computation so defined.")


_CERTIFIED_RUNS = {}
"""The results of :func:`certified_top_errors` in this process, by context kind, digits,
step, span and methods: Tables 4 and 5 are views of the same certified runs."""


def certified_top_errors(ctx, N_per_period, periods, methods, growth=None, solutions=None):
    """``(h, {method: {"theta", "H", "p_phi", "p_psi": ball}})``: the step the runs took
    (exact, a Fraction) and Arb enclosures of the sup norms of :meth:`LoopingTop.errors`
    of each method over ``periods`` nutation periods at h = t_bar / ``N_per_period``
    (:data:`CERTIFIED_STATEMENT`): each run certified (:func:`mpvi.certify`), the exact
    nutation enclosed once at the exact nodes.  With a dict ``growth``, each run's proven
    digits against time (:func:`mpvi.repro.certified.growth_series`) go into it under
    ``"T=<periods> t_bar <method> h=t_bar/<N>"``.  Flint's precision is the run's (plus
    guard digits) inside and the caller's after.  ArithmeticError if a run's proof fails
    or the methods took different steps.  ``solutions``: the runs already solved, by
    ``(method, N_per_period)`` (a run over one period, e.g. Fig. 11's ``run.kept``),
    certified as they are instead of solved again.  Kept for the process
    (:data:`_CERTIFIED_RUNS`)."""
    key = (type(ctx).__name__, ctx.dps, N_per_period, periods, tuple(methods))
    if key not in _CERTIFIED_RUNS:
        kept = {m: (solutions or {}).get((m, N_per_period)) for m in methods}
        _CERTIFIED_RUNS[key] = _certified_top_errors(ctx, N_per_period, periods, methods,
                                                     kept if periods == 1 else {})
    h, out, series = _CERTIFIED_RUNS[key]
    if growth is not None:
        growth.update(series)
    return h, out


def _certified_top_errors(ctx, N_per_period, periods, methods, kept):
    """:func:`certified_top_errors` computed: ``(h, norms, growth series)``; ``kept``, a
    method's run already solved (or None)."""
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.certified import ball_max, growth_series
    where = f"top2025 Table 3 top, T = {periods} t_bar, h = t_bar/{N_per_period}"
    out, growth, steps = {}, {}, set()
    with arb_precision(ctx.dps + GUARD_DIGITS):
        for m in methods:
            nodes = certified_top_nodes(ctx, m, N_per_period, periods, kept.get(m))
            steps.add(nodes["h"])
            growth[f"T={periods} t_bar {m} h=t_bar/{N_per_period}"] = growth_series(
                nodes["cert"], f"{where}, {m}, {N_per_period * periods} steps (Lohner)")
            out[m] = {k: ball_max(nodes[k]) for k in ("theta", "H", "p_phi", "p_psi")}
            out[m].update({k: ball_max(abs(x) for x in nodes[k])
                           for k in ("p_phi_run", "p_psi_run")})
        if len(steps) != 1:
            raise ArithmeticError(f"{where}: the methods' runs took different steps h")
        return next(iter(steps)), out, growth


_NUTATION_NODES = {}
"""The exact nutation enclosed at the nodes j h, by context kind, digits, exact h and
step count (shared by the methods and figures of one process)."""


def certified_top_nodes(ctx, method, N_per_period, periods, solution=None):
    """The node-wise enclosures of one certified run of the Table 3 top
    (:data:`CERTIFIED_STATEMENT`): ``method`` over ``periods`` nutation periods at h = t_bar /
    ``N_per_period``, ``solution`` (the run already solved, certified as it is if it has
    the steps and digits) or solved again, certified (:func:`mpvi.certify`).  Returns a
    dict: ``h`` (the step the run took, a Fraction), ``cert`` (the certificate),
    ``theta_exact`` (the exact nutation at the exact nodes j h), ``theta_diff`` (theta_j -
    theta_ex(t_j)), ``theta``, ``H``, ``p_phi``, ``p_psi`` (the relative errors |x_j - x_ex|
    / |x_ex| of :meth:`LoopingTop.errors`, x_ex = the exact nutation, H_0, p_0), ``e_H``
    ((H_j - H_0)/H_0, signed), ``H_values`` (H(q_j, p_j)), ``p_phi_run``, ``p_psi_run``
    (the computed run's recorded momentum drifts,
    :func:`mpvi.repro.certified.rounded_drift`: its round-off, see :data:`MOMENTUM_NOTE`).
    ArithmeticError if the proof fails.  At the run's digits plus guard digits inside; the
    caller's flint precision after."""
    from mpvi import solve
    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision, exact_rational
    from mpvi.repro.certified import certified_run, relative_error, rounded_drift
    with ctx.active():
        lt = LoopingTop(ctx)
        h = lt.tbar / N_per_period
    n = N_per_period * periods
    where = f"top2025 Table 3 top, T = {periods} t_bar, h = t_bar/{N_per_period}, {method}"
    with arb_precision(ctx.dps + GUARD_DIGITS):
        sol = solution
        if sol is None or sol.steps != n or sol.ctx.dps != ctx.dps:
            sol = solve(lt.top, method, h=h, n=n)
        hq = exact_rational(sol.h, "h")          # the step the run took, exactly
        key = (type(ctx).__name__, ctx.dps, hq, n)
        if key not in _NUTATION_NODES:
            _NUTATION_NODES[key] = [lt.nutation.enclose(j * hq, ctx.dps)["theta"]
                                    for j in range(n + 1)]
        ref = _NUTATION_NODES[key]
        cert = certified_run(sol, where)
        system = lt.system.with_context(cert.context)
        p0 = cert.y[0]                       # node 0: the exact initial data on balls
        H = [system.hamiltonian(q, p) for q, p in zip(cert.q, cert.y)]
        return {"h": hq, "cert": cert, "theta_exact": ref,
                "theta_diff": [q[1] - r for q, r in zip(cert.q, ref)],
                "theta": [relative_error(q[1], r, f"{where}: theta_ex(t_{j})")
                          for j, (q, r) in enumerate(zip(cert.q, ref))],
                "H_values": H,
                "H": [relative_error(x, H[0], f"{where}: H0") for x in H],
                "e_H": [(x - H[0]) / H[0] for x in H],
                **{k: [relative_error(p[i], p0[i], f"{where}: {k}(0)") for p in cert.y]
                   for k, i in (("p_phi", 0), ("p_psi", 2))},
                **{f"{k}_run": rounded_drift(sol.p[:, i], sol.p[0, i], sol.ctx, f"{where}: {k}")
                   for k, i in (("p_phi", 0), ("p_psi", 2))}}


@study("top_long_run")
def top_long_run(rec, params):
    """One run behind top2025 Tables 4 and 5: sup norms of e_theta, e_H, and the relative
    errors of p_phi, p_psi (:meth:`LoopingTop.errors`) of ``params["method"]`` over T =
    ``params["T_tbar"]`` nutation periods at h = t_bar/N, N = ``params["N_per_period"]``.

    Returns ``{"theta", "H", "p_phi", "p_psi", "tbar"}``: the norms and t_bar as
    full-precision strings (``ctx.to_str``)."""
    ctx = rec.ctx
    lt = LoopingTop(ctx)
    T, m, N = params["T_tbar"], params["method"], params["N_per_period"]
    rec.progress(f"{m}: T = {T} t_bar, h = t_bar/{N} ({N * T} steps)")
    e = lt.errors(lt.run(rec, m, N, T))
    return {**{k: ctx.to_str(sup_norm(v)) for k, v in e.items()}, "tbar": ctx.to_str(lt.tbar)}


# ----- Figs. 8-10: node errors over a few periods ---------------------------------------------

LONG_RUN_PARAMS = {"T_tbar": [1, 10, 100, 1000], "N_per_period": [20, 40, 80], "methods": METHODS}
LONG_RUN_QUICK = {"T_tbar": [1, 10]}


def loop_methods_run(run, periods, N_per_period, methods=METHODS):
    """The three methods on the Table 3 top over ``periods`` periods at h = t_bar/N:
    (LoopingTop, {method: (Solution, node errors)})."""
    lt = LoopingTop(run.ctx)
    res = {}
    for m in methods:
        run.progress(f"{m}: {periods} periods at h = t_bar/{N_per_period}")
        sol = run.kept[(m, N_per_period, periods)] = lt.run(run, m, N_per_period, periods)
        res[m] = (sol, lt.errors(sol))
    return lt, res


def certified_loop_runs(run, periods, N_per_period, methods=METHODS):
    """``{method: certified_top_nodes(...)}``: the runs of :func:`loop_methods_run` (kept
    in ``run.kept``) certified."""
    out = {}
    for m in methods:
        run.progress(f"certifying {m}: {periods} periods at h = t_bar/{N_per_period}")
        out[m] = certified_top_nodes(run.ctx, m, N_per_period, periods,
                                     run.kept.get((m, N_per_period, periods)))
    return out


def column_digits(strings, balls):
    """The proven digits (:func:`mpvi.repro.digits.proven_digits`) of the number strings
    ``strings`` against their enclosures ``balls``, leaving out the rows that are exactly 0
    (t = 0, a quantity conserved exactly): a zero has no relative digits."""
    from decimal import Decimal

    from mpvi.repro.digits import proven_digits
    return [proven_digits(x, b)[0] for x, b in zip(strings, balls) if Decimal(x) != 0]


MOMENTUM_NOTE = (
    "The momenta's values are the drift of the computed (rounded) run: p_phi, p_psi are "
    "conserved exactly by the exact discrete trajectory (phi, psi are cyclic: discrete "
    "Noether theorem for midpoint and Simpson, a zero increment at every stage of RK4), "
    "so the recorded drift is the run's round-off; it is enclosed from the run's stored "
    "momenta (exact binary numbers) with the two roundings of its computation bounded "
    "(mpvi.repro.certified.rounded_drift).  The exact discrete trajectory's own drift is "
    "enclosed too: {bounds}.")


def series_frame(ctx, res, keys):
    """Long table t, method, <key>... of node errors (full-precision strings)."""
    frames = []
    for m, (sol, err) in res.items():
        d = {"t": [ctx.to_str(t) for t in sol.t], "method": m}
        for k in keys:
            d[k] = [ctx.to_str(x) for x in (sol.q[:, 1] if k == "theta" else err[k])]
        frames.append(pd.DataFrame(d))
    return pd.concat(frames, ignore_index=True)


def growth(values):
    """max |.| over the second half of a run / max |.| over the first half."""
    n = len(values) // 2
    first = sup_norm(values[1:n + 1])
    return sup_norm(values[n:]) / first if first != 0 else None


ZERO_FLOOR = 1e-70
"""Exact zeros (RK4's momenta) are drawn at this level on a log axis."""


def series_reproduction(rid, item, title, keys, summarize, panels, heading,
                        params, quick, certify_values=None):
    """A Reproduction of node errors over several nutation periods (Figs. 9 and 10): the
    three methods at h = t_bar/N over ``params["periods"]`` periods, the CSV columns
    ``keys`` of :meth:`LoopingTop.errors`, ``summarize(ctx, res)`` -> the values, and one
    plot panel per ``panels`` entry ``(key, log, ylabel, title)`` (log: |error| on a log
    axis from the first step on, exact zeros drawn at ZERO_FLOOR; else the signed error).
    ``certify_values(ctx, nodes, out)``: the certified values from the certified runs
    (:func:`certified_loop_runs`), for ``mpvi run --certify``."""

    def compute(run):
        ctx, p = run.ctx, run.params
        _, res = loop_methods_run(run, p["periods"], p["N_per_period"])
        return Output(tables={"": series_frame(ctx, res, keys)}, values=summarize(ctx, res),
                      extra={"h_tbar": f"1/{p['N_per_period']}"})

    def plot(out, p):
        import matplotlib.pyplot as plt
        df = out.tables[""]
        fig, axes = plt.subplots(1, len(panels), figsize=(11, 4.2))
        for ax, (key, log, ylabel, ptitle) in zip(axes, panels):
            for m, g in df.groupby("method", sort=False):
                t, e = g["t"].astype(float), g[key].astype(float)
                if log:
                    ax.semilogy(t[1:], abs(e[1:]).clip(lower=ZERO_FLOOR), **STYLE[m])
                else:
                    ax.plot(t, e, **STYLE[m])
            if ylabel:
                ax.set_ylabel(ylabel)
            if ptitle:
                ax.set_title(ptitle, fontsize=9)
            ax.set_xlabel("t [s]"); ax.grid(alpha=0.3); ax.legend(fontsize=8)
        fig.suptitle(f"top2025 {item}: {heading.format(**p)}, " + rf"h = $\bar t$/{p['N_per_period']}",
                     fontsize=10)
        fig.tight_layout()
        return fig

    def certify(run, out):
        """The runs certified (:func:`certified_loop_runs`), the CSV columns and the
        values enclosed by ``certify_values(run.ctx, nodes, out)`` -> (values {key:
        (digits, text)}, statement, not_certified)."""
        from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
        ctx, p = run.ctx, run.params
        df = out.tables[""]
        digits = {}
        with arb_precision(ctx.dps + GUARD_DIGITS):
            nodes = certified_loop_runs(run, p["periods"], p["N_per_period"])
            for m, nd in nodes.items():
                rows = df[df["method"] == m]
                for k in keys:
                    balls = ([q[1] for q in nd["cert"].q] if k == "theta" else
                             nd["e_H"] if k == "H" else nd[f"{k}_run"])
                    digits.setdefault(k, []).extend(column_digits(rows[k].tolist(), balls))
            values, statement, not_certified = certify_values(ctx, nodes, out)
        return {"statement": CERTIFIED_STATEMENT + "  " + statement,
                "columns": {"": digits}, "values": values,
                "not_certified": {"t": "the node time j h, h = t_bar/N rounded: an input",
                                  "method": "an input of the study", **not_certified}}

    return Reproduction(id=rid, paper=PAPER, item=item, title=title,
                        params=params, quick=quick, compute=compute, plot=plot,
                        certify=certify if certify_values is not None else None)


def long_run_params(p):
    """The parameters of :data:`top_long_run` for every span, method and step
    of Tables 4-5, in the order of the tables' rows."""
    return [{"T_tbar": T, "method": m, "N_per_period": N}
            for T in p["T_tbar"] for m in p["methods"] for N in p["N_per_period"]]


def long_run_tasks(p):
    """One :class:`mpvi.repro.studies.Task` per long run (shared by Tables 4 and 5)."""
    return [Task(top_long_run, q, label=f"top_long_run T={q['T_tbar']} t_bar {q['method']} "
                                        f"h=t_bar/{q['N_per_period']}",
                 cost=q["T_tbar"] * q["N_per_period"] * STEP_SECONDS["top"][q["method"]])
            for q in long_run_params(p)]


def long_run_table(run, variable):
    """Table 4 (variable 'theta') or 5 ('H') in long format with successive and
    least-squares orders, from the runs :data:`top_long_run`; returns
    (DataFrame, values, extra)."""
    ctx, p = run.ctx, run.params
    rows = []
    for q in long_run_params(p):
        r = run.study(top_long_run, q)
        rows.append({"T": q["T_tbar"], "method": q["method"], "N": q["N_per_period"], **r})
    tbar = rows[0]["tbar"]
    tbar_num = ctx.num(tbar)
    out, values = [], {}
    for T in p["T_tbar"]:
        for m in p["methods"]:
            mine = [r for r in rows if r["T"] == T and r["method"] == m]
            errs = [ctx.num(r[variable]) for r in mine]
            hs = [tbar_num / r["N"] for r in mine]
            ls = fit_order(ctx, hs, errs)
            for r, e, o in zip(mine, errs, [None] + successive_orders(ctx, errs)):
                out.append({"T": T, "method": m, "N": r["N"] * T, "h_tbar": f"1/{r['N']}",
                            "error": ctx.to_str(e), "order": "" if o is None else ctx.to_str(o),
                            "ls_order": ctx.to_str(ls),
                            **({"p_phi_rel_error": r["p_phi"], "p_psi_rel_error": r["p_psi"]}
                               if variable == "H" else {})})
                values[f"T={T} {m} {variable} h=1/{r['N']}"] = ctx.to_str(e)
            values[f"T={T} {m} {variable} order"] = ctx.to_str(ls)
            if variable == "H":
                for k in ("p_phi", "p_psi"):
                    values[f"T={T} {m} max rel {k} error"] = ctx.to_str(max(ctx.num(r[k]) for r in mine))
    # growth of the error with the simulation length (same h): bounded or drifting
    first, last = p["T_tbar"][0], p["T_tbar"][-1]
    for m in p["methods"]:
        for N in p["N_per_period"]:
            e0, e1 = (ctx.num(next(r[variable] for r in rows
                                   if r["T"] == T and r["method"] == m and r["N"] == N))
                      for T in (first, last))
            values[f"{m} {variable} growth T={last}/T={first} h=1/{N}"] = ctx.to_str(e1 / e0)
    return pd.DataFrame(out), values, {"tbar_s": tbar}


def certify_long_run_table(run, out, variable):
    """The proven digits of Table 4 (``variable`` 'theta') or 5 ('H') (``mpvi run
    --certify``): every run of the table certified (:func:`certified_top_errors`, one call
    per span and step for the three methods), the errors, the successive orders log2(e_k /
    e_{k+1}), the least-squares orders, the momenta's errors (Table 5) and the growth
    ratios enclosed; the proven digits against time of the longest span's runs (T = 1000
    t_bar in the full set) are the growth series.  The columns T, method, N and h_tbar
    are the inputs."""
    from flint import arb

    from mpvi.numbers.arbref import GUARD_DIGITS, arb_precision
    from mpvi.repro.certified import least_squares_order
    from mpvi.repro.digits import proven_digits
    ctx, p = run.ctx, run.params
    df = out.tables[""]
    longest = max(p["T_tbar"])
    extra = ("p_phi_rel_error", "p_psi_rel_error") if variable == "H" else ()
    digits = {c: [] for c in ("error", "order", "ls_order", *extra)}
    values, growth, balls, steps = {}, {}, {}, {}
    bounds, not_certified = [], {}
    with arb_precision(ctx.dps + GUARD_DIGITS):
        for T in p["T_tbar"]:
            for N in p["N_per_period"]:
                run.progress(f"certifying T = {T} t_bar, h = t_bar/{N}")
                steps[(T, N)], found = certified_top_errors(
                    ctx, N, T, p["methods"], growth=growth if T == longest else None)
                for m, e in found.items():
                    balls[(T, m, N)] = e
        for T in p["T_tbar"]:
            for m in p["methods"]:
                errs = [balls[(T, m, N)][variable] for N in p["N_per_period"]]
                ls = least_squares_order([steps[(T, N)] for N in p["N_per_period"]], errs)
                successive = [None] + [(e0 / e1).log() / arb(2).log()
                                       for e0, e1 in zip(errs[:-1], errs[1:])]
                for N, e, o in zip(p["N_per_period"], errs, successive):
                    row = df[(df["T"] == T) & (df["method"] == m) & (df["N"] == N * T)].iloc[0]
                    d, text = proven_digits(row["error"], e)
                    digits["error"].append(d)
                    values[f"T={T} {m} {variable} h=1/{N}"] = (d, text)
                    if o is not None:
                        digits["order"].append(proven_digits(row["order"], o)[0])
                    digits["ls_order"].append(proven_digits(row["ls_order"], ls)[0])
                    for column in extra:          # exact zeros (RK4's) have no digits
                        k = column[:-len("_rel_error")]
                        digits[column] += column_digits([row[column]],
                                                        [balls[(T, m, N)][f"{k}_run"]])
                key = f"T={T} {m} {variable} order"
                values[key] = proven_digits(out.values[key], ls)
                for column in extra:
                    k = column[:-len("_rel_error")]
                    key = f"T={T} {m} max rel {k} error"
                    largest, exact = arb(0), arb(0)
                    for N in p["N_per_period"]:
                        largest = largest.max(balls[(T, m, N)][f"{k}_run"])
                        exact = exact.max(balls[(T, m, N)][k])
                    bounds.append(f"T = {T} {m} {k} {exact.str(3, radius=True)}")
                    if m == "rk4":
                        not_certified[key] = RK4_MOMENTA
                        continue
                    values[key] = proven_digits(out.values[key], largest)
        first = p["T_tbar"][0]
        for m in p["methods"]:
            for N in p["N_per_period"]:
                key = f"{m} {variable} growth T={longest}/T={first} h=1/{N}"
                values[key] = proven_digits(out.values[key], balls[(longest, m, N)][variable]
                                            / balls[(first, m, N)][variable])
    inputs = "an input of the study (exact), not a computed number"
    statement = CERTIFIED_STATEMENT
    if extra:
        statement += "  " + MOMENTUM_NOTE.format(bounds="; ".join(bounds))
    return {"statement": statement, "columns": {"": digits}, "values": values,
            "not_certified": {**{c: inputs for c in ("T", "method", "N")},
                              "h_tbar": "the step in units of t_bar, 1/N: an input of the study",
                              **not_certified},
            "growth": growth}


RK4_MOMENTA = ("exactly 0, as recorded: phi and psi are cyclic, so every RK4 stage increment "
               "of p_phi and p_psi is the zero vector and the run keeps them bit for bit; an "
               "exact zero has no relative digits to prove")


def long_run_reproduction(number, variable, what):
    """The Reproduction of Table 4 (variable 'theta') or Table 5 ('H'): both are views of
    the same cached runs (:data:`top_long_run`), so the second one to run
    reads the first one's runs from the cache."""

    def compute(run):
        df, values, extra = long_run_table(run, variable)
        return Output(tables={"": df}, values=values, extra=extra)

    other = 9 - number
    return Reproduction(
        id=f"top2025_tab0{number}", paper=PAPER, item=f"Table {number}",
        title=f"{what} for T = 1..1000 nutation periods",
        params=LONG_RUN_PARAMS, quick=LONG_RUN_QUICK, compute=compute, tasks=long_run_tasks,
        certify=lambda run, out: certify_long_run_table(run, out, variable),
        plot=lambda out, p: plot_long_run_table(
            out, p, variable, f"top2025 Table {number}: {what} against simulation length"))


def plot_long_run_table(out, p, variable, title):
    import matplotlib.pyplot as plt
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(7, 4.6))
    markers = {1: "o", 10: "s", 100: "^", 1000: "D"}
    for (T, m), g in df.groupby(["T", "method"], sort=False):
        st = STYLE[m]
        per = g["N"] / T
        ax.loglog(1 / per, g["error"].astype(float), color=st["color"], ls=st["ls"],
                  marker=markers.get(T, "o"), ms=4,
                  label=f"{st['label']}, T = {T}" + r" $\bar t$" + f" (order {float(g['ls_order'].iloc[0]):.2f})")
    ax.set_xlabel(r"$h$ [$\bar t$]")
    ax.set_ylabel(r"$\|e_\theta\|_\infty$" if variable == "theta" else r"$\|e_H\|_\infty$")
    ax.grid(alpha=0.3, which="both")
    # the legend below the axes: its twelve entries cover some data wherever inside they go
    # (tests/test_figures_legend.py measures it)
    ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.14),
              frameon=False)
    ax.set_title(title, fontsize=10)
    return fig
