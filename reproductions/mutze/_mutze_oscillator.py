"""The experiment of mutze Sec. 7 (Figs. 2-3): the anti-damped harmonic oscillator in the
interaction picture, shared by mutze_fig02 (relative amplitude error) and mutze_fig03
(phase error).

Problem (eqs. 87-91): m x'' + b x' + k x = 0 with m = 1; the exact motion is
e^(-rho t) cos(omega t + phi), rho = b/(2m).  "Oscillation period 1": by default the
period 2 pi/omega of this (anti-damped) motion, omega = 2 pi, k = m (omega^2 + rho^2)
(``period="damped"``); ``period="undamped"`` takes k = m (2 pi)^2 instead (the paper does
not say; both are reported).  The amplitude doubles every two periods: e^(-2 rho T_p) = 2,
rho = -ln(2)/(2 T_p) < 0 (b = 2 m rho, anti-damping), so it grows by 2^10 = 1024 over 20
periods.  32 steps per period (h = T_p/32), 20 periods; the initial state is not printed
-- (x, v) = (1, 0) by default (``x0``, ``v0``).

Errors (eq. 92): s_int(t) = Phi_exact(-t) Phi_approx(t) s(0), with the complex amplitude
s_c = x - i (v + rho x)/omega; relative amplitude error (|s_int| - |s(0)|)/|s(0)| and
phase error arg s_int - arg s(0) in degrees (unwrapped), at every step.

Methods (keys of :data:`METHODS`): the direct midpoint method g = 0 solved exactly (eq.
79/89), with one simple iteration (eq. 80, a_{n+1} = a_*), and with zero iterations
(a = a_0); the g-family at g = 0.68 read as eq. (72) and at g = 0.34 (= 0.68 in the
convention x + v tau + g a tau^2/2 -- see reproductions/ERRATA.md); the midpoint
variation method (54); the Euler-Lagrange equation for parabolic paths (44); RK2 (the
explicit midpoint rule; Heun's method gives the same map on this linear autonomous
problem, checked in the run).
"""
from __future__ import annotations

from fractions import Fraction

from mpvi.repro.studies import numstr, study

from mpvi_papers.mutze._mutze import PAPER

PARAMS = {"steps_per_period": 32, "periods": 20, "x0": "1", "v0": "0", "period": "damped",
          "g_scan": {"start": "0", "stop": "1", "count": 51}}
QUICK = {"g_scan": {"start": "0", "stop": "1", "count": 6}}
"""Quick runs keep the paper's 20 periods (a few seconds): every compared claim is about them."""

METHODS = {
    "direct_midpoint": ("mutze", {"g": 0, "solver": "explicit"}),
    "direct_midpoint_simple1": ("mutze", {"g": 0, "solver": "iterate", "iterations": 1, "variant": "simple"}),
    "direct_midpoint_a0": ("mutze", {"g": 0, "solver": "iterate", "iterations": 0}),
    "g=0.68 (eq. 72)": ("mutze", {"g": "0.68", "solver": "explicit"}),
    "g=0.34 (0.68 halved)": ("mutze", {"g": "0.34", "solver": "explicit"}),
    "midpoint_variation": ("mutze_variation", {}),
    "parabolic_el": ("mutze_parabolic_el", {}),
    "rk2": ("rk2", {}),
}

STYLE = {
    "direct_midpoint": {"color": "tab:red", "ls": "-", "lw": 2.0, "label": "direct midpoint g = 0 (exact, eq. 79)"},
    "direct_midpoint_simple1": {"color": "tab:orange", "ls": "--", "label": "direct midpoint, one simple iteration (80)"},
    "direct_midpoint_a0": {"color": "tab:brown", "ls": ":", "label": "direct midpoint, zero iterations (a = a0)"},
    "g=0.68 (eq. 72)": {"color": "tab:blue", "ls": "-.", "label": "g = 0.68 in eq. (72)"},
    "g=0.34 (0.68 halved)": {"color": "tab:cyan", "ls": "-", "label": "g = 0.34 in eq. (72) (= 0.68 with g a tau^2/2)"},
    "midpoint_variation": {"color": "tab:green", "ls": "-", "lw": 2.5, "alpha": 0.6, "label": "midpoint variation method (54)"},
    "parabolic_el": {"color": "k", "ls": ":", "label": "Euler-Lagrange eq. for parabolic paths (44)"},
    "rk2": {"color": "tab:purple", "ls": "--", "label": "RK2 (explicit midpoint)"},
}


def oscillator(ctx, period="damped"):
    """(system, exact flow, period T_p) of the Sec. 7 oscillator (module doc)."""
    from mpvi.systems.damped import DampedOscillatorExact, damped_oscillator

    if period not in ("damped", "undamped"):
        raise ValueError(f"period must be 'damped' or 'undamped', got {period!r}")
    rho = -ctx.log(ctx.num(2)) / 2           # e^(-2 rho) = 2 with T_p = 1
    w = 2 * ctx.pi
    k = w * w + rho * rho if period == "damped" else w * w
    b = 2 * rho
    exact = DampedOscillatorExact(ctx, 1, k, b)
    return damped_oscillator(ctx, 1, k, b), exact


def errors(ctx, exact, t, x, v, x0, v0):
    """Relative amplitude error and phase error (degrees, unwrapped) at the states
    (x_j, v_j) reached at times t_j (eq. 92)."""
    r0, phi0 = exact.polar(*exact.amplitude(x0, v0))
    amp, phase = [], []
    turn = 2 * ctx.pi
    last = ctx.zero
    for tj, xj, vj in zip(t, x, v):
        r, phi = exact.polar(*exact.interaction(tj, xj, vj))
        d = phi - phi0
        d = d - turn * round(ctx.to_float((d - last) / turn))   # an integer: any context
        last = d
        amp.append((r - r0) / r0)
        phase.append(d * 180 / ctx.pi)
    return amp, phase


def run_method(rec, problem, name, h, n):
    """(t, x, v) at the nodes of the method ``name`` of :data:`METHODS`."""
    scheme, opts = METHODS[name]
    sol = rec.solve(problem, scheme, h=h, n=n, **opts)
    return sol.t, sol.q[:, 0], sol.v[:, 0]


@study("mutze_sec7_errors")
def sec7_errors(rec, params):
    """Amplitude and phase errors of every method of :data:`METHODS` at every step
    (module doc); also the largest difference between RK2's explicit-midpoint and Heun
    variants.  Returns {"t", "exact_growth", name: {"amplitude", "phase"}}."""
    ctx, p = rec.ctx, params
    problem, exact, h, n, x0, v0 = setup(ctx, p)
    out = {}
    for name in METHODS:
        rec.progress(f"Sec. 7 oscillator ({p['period']} period 1): {name}, {n} steps")
        t, x, v = run_method(rec, problem, name, h, n)
        amp, phase = errors(ctx, exact, t, x, v, x0, v0)
        out[name] = {"amplitude": ctx.asarray(amp), "phase": ctx.asarray(phase)}
        if name == "rk2":
            heun = rec.solve(problem, "rk2", h=h, n=n, variant="heun")
            out["rk2_heun_difference"] = max(max(abs(a - b) for a, b in zip(heun.q[:, 0], x)),
                                             max(abs(a - b) for a, b in zip(heun.v[:, 0], v)))
    out["t"] = t
    out["exact_growth"] = ctx.exp(-exact.rho * t[-1])
    return out


def setup(ctx, params):
    """(problem, exact, h, n, x0, v0) of the experiment described by ``params``: the
    :class:`mpvi.Problem` from (x0, v0), the exact flow, the step and the number of steps."""
    from mpvi import Problem

    system, exact = oscillator(ctx, params["period"])
    Tp = 2 * ctx.pi / exact.omega if params["period"] == "damped" else ctx.one
    x0, v0 = ctx.num(params["x0"]), ctx.num(params["v0"])
    problem = Problem(system, [x0], v0=[v0])
    return (problem, exact, Tp / params["steps_per_period"],
            params["steps_per_period"] * params["periods"], x0, v0)


def final_phase(rec, case, g, **opts):
    """Phase error (degrees) after all steps of the g-family (exact solve by default)."""
    problem, exact, h, n, x0, v0 = case
    opts = opts or {"solver": "explicit"}
    sol = rec.solve(problem, "mutze", h=h, n=n, g=g, **opts)
    return errors(rec.ctx, exact, sol.t, sol.q[:, 0], sol.v[:, 0], x0, v0)[1][-1]


def zero_phase_g(rec, case):
    """The g at which the final phase error vanishes: secant iteration on the exact
    g-family (the phase error is nearly linear in g), to 1e-12 in g."""
    ctx = rec.ctx
    g0, g1 = ctx.num("0.3"), ctx.num("0.4")
    f0, f1 = final_phase(rec, case, g0), final_phase(rec, case, g1)
    tol = ctx.num(10) ** -12
    for _ in range(40):
        g0, g1, f0 = g1, g1 - f1 * (g1 - g0) / (f1 - f0), f1
        f1 = final_phase(rec, case, g1)
        if abs(g1 - g0) < tol:
            return g1
    raise ArithmeticError("the secant iteration for the zero-phase g did not converge")


@study("mutze_sec7_g_scan")
def g_scan(rec, params):
    """Phase error after all periods for g on a grid, and the g at which it vanishes.
    Returns {"g", "phase", "g_zero"}."""
    from fractions import Fraction

    ctx, s = rec.ctx, params["g_scan"]
    case = setup(ctx, params)
    lo, hi, count = Fraction(s["start"]), Fraction(s["stop"]), s["count"]
    gs = [lo + (hi - lo) * i / (count - 1) for i in range(count)]
    rec.progress(f"g scan: {count} values of g in [{s['start']}, {s['stop']}], {case[3]} steps each")
    phases = [final_phase(rec, case, g) for g in gs]
    return {"g": ctx.asarray([ctx.num(g) for g in gs]), "phase": ctx.asarray(phases),
            "g_zero": zero_phase_g(rec, case)}


SENSITIVITY = [("damped", "1", "0"), ("undamped", "1", "0"), ("damped", "0", "1"), ("undamped", "0", "1")]
"""The unstated choices varied: which period is 1, and the initial state."""


@study("mutze_sec7_sensitivity")
def sensitivity(rec, params):
    """For each choice of :data:`SENSITIVITY`: the final phase error of the direct
    midpoint method (exact and one simple iteration) and the zero-phase g."""
    rows = []
    for period, x0, v0 in SENSITIVITY:
        rec.progress(f"sensitivity: period 1 of the {period} motion, (x, v) = ({x0}, {v0})")
        case = setup(rec.ctx, {**params, "period": period, "x0": x0, "v0": v0})
        rows.append({"period": period, "x0": x0, "v0": v0,
                     "direct_midpoint": final_phase(rec, case, 0),
                     "direct_midpoint_simple1": final_phase(rec, case, 0, solver="iterate", iterations=1,
                                                            variant="simple"),
                     "g_zero": zero_phase_g(rec, case)})
    return rows


def long_table(ctx, res):
    import pandas as pd
    rows = []
    for j, t in enumerate(res["t"]):
        for name in METHODS:
            rows.append({"t": numstr(ctx, t), "method": name,
                         "amplitude_error": numstr(ctx, res[name]["amplitude"][j]),
                         "phase_error_deg": numstr(ctx, res[name]["phase"][j])})
    return pd.DataFrame(rows)


def plot_errors(out, params, column, ylabel, title):
    import matplotlib.pyplot as plt
    import pandas as pd
    df = out.tables[""]
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, grp in df.groupby("method", sort=False):
        st = dict(STYLE[name])
        ax.plot(pd.to_numeric(grp["t"]), pd.to_numeric(grp[column]), **st)
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xlabel("t (oscillation periods)")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7.5, loc="best")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


__all__ = ["PAPER", "PARAMS", "QUICK", "METHODS", "sec7_errors", "g_scan", "sensitivity", "long_table", "plot_errors"]


# ----- certified: the exact discrete trajectories on balls (mpvi run --certify) -----------

CERTIFIED_STATEMENT = (
    "Every method is linear on this linear oscillator: its step is (x, v) -> M (x, v) with "
    "M from its acceleration a = alpha_x x + alpha_v v (v' = v + 2 tau a, x' = x + tau (v + "
    "v')): eq. (72) solved exactly a = -(k (x + v tau) + b v)/(1 + b tau + k tau^2 g); the "
    "midpoint variation (54) and the parabolic Euler-Lagrange equation (44) both eq. (90), "
    "i.e. g = 3/5; iteration (80) from a_0 = -(k (x + v tau) + b v), each round a_* = a_0 "
    "- b tau a (g = 0); RK2 (explicit midpoint) I + hK + (hK)^2/2.  The problem as posed "
    "enters as balls containing its exact values: rho = -ln(2)/2, omega = 2 pi, k = omega^2 "
    "+ rho^2 (or (2 pi)^2), b = 2 rho, h = T_p/32, the initial state; the steps are walked "
    "in Arb and the interaction picture (eq. 92), amplitude and unwrapped phase (a sum of "
    "principal arguments of the step ratios, each proven in (-pi/2, pi/2)) evaluated on "
    "balls: the enclosures contain the exact discrete trajectories' errors.  The zero-phase "
    "g: a proven sign change of the final phase error at two rationals around the run's "
    "value, the phase continuous between them (one walk with g the ball of the interval, "
    "every step ratio proven in the right half-plane): a zero lies in the enclosure.")


class BallOscillator:
    """The Sec. 7 experiment (module doc) on Arb balls at flint's current precision:
    exact inputs (``params`` of the reproduction) as balls, each method's one-step matrix,
    and the amplitude and phase errors of its exact discrete trajectory."""

    def __init__(self, params):
        from flint import arb

        from mpvi_papers.mutze._mutze_certify import exact
        period = params["period"]
        if period not in ("damped", "undamped"):
            raise ValueError(f"period must be 'damped' or 'undamped', got {period!r}")
        self.rho = -arb(2).log() / 2
        w = 2 * arb.pi()
        self.k = w * w + self.rho * self.rho if period == "damped" else w * w
        self.b = 2 * self.rho
        self.omega = (self.k - self.rho * self.rho).sqrt()
        Tp = 2 * arb.pi() / self.omega if period == "damped" else arb(1)
        self.h = Tp / params["steps_per_period"]
        self.n = params["steps_per_period"] * params["periods"]
        self.x0, self.v0 = exact(Fraction(params["x0"])), exact(Fraction(params["v0"]))

    def _from_acceleration(self, ax, av):
        """M of v' = v + h a, x' = x + (h/2)(v + v') with a = ax x + av v."""
        from flint import arb_mat
        h, tau = self.h, self.h / 2
        return arb_mat([[1 + h * tau * ax, h + h * tau * av], [h * ax, 1 + h * av]])

    def matrix(self, name, g=None):
        """The one-step matrix of the method ``name`` of :data:`METHODS` (``g``: a ball
        or rational for the g-family solved exactly, overriding the method's)."""
        from flint import arb, arb_mat

        from mpvi_papers.mutze._mutze_certify import exact
        k, b, h = self.k, self.b, self.h
        tau = h / 2
        scheme, opts = METHODS[name]
        if g is not None or (scheme == "mutze" and opts.get("solver") == "explicit"):
            g = exact(Fraction(opts["g"])) if g is None else g
            g = g if isinstance(g, arb) else exact(Fraction(g))
            den = 1 + b * tau + k * tau * tau * g
            return self._from_acceleration(-k / den, -(k * tau + b) / den)
        if scheme in ("mutze_variation", "mutze_parabolic_el"):       # eq. (90)
            den = 1 + tau * (b + 3 * k * tau / 5)
            return self._from_acceleration(-k / den, -(k * tau + b) / den)
        if scheme == "mutze" and opts.get("solver") == "iterate" and opts.get("g", 0) == 0:
            a0 = (-k, -(k * tau + b))                # a_0 = A(t + tau, x + v tau, v)

            def star(a):                              # a_* = A(t + tau, x + v tau, v + a tau)
                return tuple(c0 - b * tau * c for c0, c in zip(a0, a))
            a = a0
            for _ in range(opts.get("iterations", 1)):
                a1 = star(a)
                a = a1 if opts.get("variant", "damped") == "simple" else tuple(
                    (p + q) / 2 for p, q in zip(a1, star(a1)))
            return self._from_acceleration(*a)
        if scheme == "rk2":
            K = arb_mat([[0, 1], [-k, -b]])
            hK = K * h
            return arb_mat([[1, 0], [0, 1]]) + hK + hK * hK / 2
        raise ValueError(f"no one-step matrix for {name!r}")

    def errors(self, M):
        """(amplitude errors, phase errors in degrees) at every node of the trajectory
        of the one-step matrix ``M``: balls.  ArithmeticError if a step's phase
        increment is not proven in (-pi/2, pi/2) (the unwrapping not proven)."""
        from flint import acb, arb, arb_mat
        rho, w = self.rho, self.omega
        s0 = acb(self.x0, -(self.v0 + rho * self.x0) / w)
        r0 = abs(s0)
        y0 = arb_mat([[self.x0], [self.v0]])
        amp, phase = [arb(0)], [arb(0)]
        last, total = s0, arb(0)
        half = arb.pi() / 2
        for j in range(1, self.n + 1):
            y = (M ** j) * y0       # binary powering: no wrapping of 640 rotations of a box
            t = self.h * j
            x, v = y[0, 0], y[1, 0]
            s = acb(x, -(v + rho * x) / w) * acb(rho * t, -w * t).exp()
            step = (s / last).arg()
            if not (abs(step) < half):
                raise ArithmeticError(f"step {j}: the phase increment {step.str(5)} is not "
                                      "proven in (-pi/2, pi/2): the unwrapped phase is not "
                                      "enclosed")
            total += step
            last = s
            amp.append((abs(s) - r0) / r0)
            phase.append(total * 180 / arb.pi())
        return amp, phase

    def final_phase(self, g):
        """The final phase error (degrees) of the g-family solved exactly, ``g`` a ball."""
        return self.errors(self.matrix("g=0.68 (eq. 72)", g))[1][-1]


def zero_phase_enclosure(osc, g_run, digits):
    """An enclosure of a zero of the final phase error of the exact g-family as a
    function of g, and a proof that it is one: a sign change at two rationals g_run -+
    delta (delta = 10^-digits, widened tenfold up to 10^-8 until the signs are proven),
    the phase continuous between them (:meth:`BallOscillator.errors` on the ball of the
    interval proves every increment in (-pi/2, pi/2)); that it is the only zero of a
    range is :func:`monotone_phase`'s.  ArithmeticError if not proven."""
    from mpvi_papers.mutze._mutze_certify import exact
    centre = Fraction(g_run).limit_denominator(10 ** (2 * digits))
    for d in range(digits, 7, -1):
        delta = Fraction(1, 10 ** d)
        a, b = centre - delta, centre + delta
        fa, fb = osc.final_phase(exact(a)), osc.final_phase(exact(b))
        if (fa < 0 < fb) or (fb < 0 < fa):
            break
    else:
        raise ArithmeticError("no sign change of the final phase error proven around "
                              f"g = {g_run}")
    osc.final_phase(exact(a).union(exact(b)))          # continuity on [a, b] (raises if not)
    return exact(a).union(exact(b))


def monotone_phase(osc, lo, hi, pieces=100, limit=2000):
    """Prove the final phase error of the exact g-family strictly monotone in g on [lo,
    hi] (rationals): on each subinterval I (``pieces`` equal ones, bisected where needed,
    at most ``limit``), the walk with g the ball of I proves every step ratio in the right
    half-plane (:meth:`BallOscillator.errors`), so the phase is the differentiable sum of
    the increments' arguments, and its derivative -- telescoping to Im(a_n'/a_n), a_n =
    x_n - i (v_n + rho x_n)/omega the final amplitude and a_n' its g-derivative, d(M^n)/dg
    (x_0, v_0) from the block matrix [[M, M'], [0, M]]^n -- is proven of one sign over all
    of them.  Returns that sign (+1 or -1); ArithmeticError if not proven."""
    from flint import acb, arb_mat

    from mpvi_papers.mutze._mutze_certify import exact
    k, b, h = osc.k, osc.b, osc.h
    tau = h / 2
    todo = [(Fraction(lo) + (Fraction(hi) - Fraction(lo)) * i / pieces,
             Fraction(lo) + (Fraction(hi) - Fraction(lo)) * (i + 1) / pieces)
            for i in range(pieces)]
    signs, done = set(), 0
    while todo:
        p, q = todo.pop()
        done += 1
        if done > limit:
            raise ArithmeticError(f"the final phase is not proven monotone on [{lo}, {hi}] "
                                  f"with {limit} subintervals")
        g = exact(p).union(exact(q))
        den = 1 + b * tau + k * tau * tau * g
        ax, av = -k / den, -(k * tau + b) / den
        dax, dav = -ax * k * tau * tau / den, -av * k * tau * tau / den
        M = osc._from_acceleration(ax, av)
        dM = arb_mat([[h * tau * dax, h * tau * dav], [h * dax, h * dav]])
        block = arb_mat(4, 4)
        for i in range(2):
            for j in range(2):
                block[i, j] = block[2 + i, 2 + j] = M[i, j]
                block[i, 2 + j] = dM[i, j]
        P = block ** osc.n
        y0 = [osc.x0, osc.v0]
        x = sum((P[0, j] * y0[j] for j in range(2)), 0 * osc.x0)
        v = sum((P[1, j] * y0[j] for j in range(2)), 0 * osc.x0)
        dx = sum((P[0, 2 + j] * y0[j] for j in range(2)), 0 * osc.x0)
        dv = sum((P[1, 2 + j] * y0[j] for j in range(2)), 0 * osc.x0)
        a = acb(x, -(v + osc.rho * x) / osc.omega)
        da = acb(dx, -(dv + osc.rho * dx) / osc.omega)
        slope = (da / a).imag
        try:
            osc.errors(M)                      # every increment in the right half-plane
            decided = slope > 0 or slope < 0
        except ArithmeticError:
            decided = False
        if decided:
            signs.add(1 if slope > 0 else -1)
            if len(signs) > 1:
                raise ArithmeticError("the final phase's derivative changes sign")
            continue
        m = (p + q) / 2
        todo += [(p, m), (m, q)]
    return signs.pop()


def certified_walks(params):
    """(BallOscillator, {method: (amplitude errors, phase errors)}) of every method of
    :data:`METHODS` on balls (at flint's current precision)."""
    osc = BallOscillator({k: v for k, v in params.items() if k != "g_scan"})
    return osc, {name: osc.errors(osc.matrix(name)) for name in METHODS}


def certified_long_table(df, osc, walks):
    """Proven digits per row of the long table's t, amplitude_error and phase_error_deg
    columns (rows: every node j, every method in :data:`METHODS` order); the exact
    initial row (0 by definition) has no relative digits and is left out."""
    from flint import arb

    from mpvi.repro.digits import proven_digits
    names = list(METHODS)
    digits = {"t": [], "amplitude_error": [], "phase_error_deg": []}
    for i, row in enumerate(df.itertuples(index=False)):
        j, name = divmod(i, len(names))
        if names[name] != row.method:
            raise ValueError(f"row {i}: method {row.method!r}, expected {names[name]!r}")
        if j == 0:
            continue
        amp, phase = walks[row.method]
        digits["t"].append(proven_digits(row.t, osc.h * arb(j))[0])
        digits["amplitude_error"].append(proven_digits(row.amplitude_error, amp[j])[0])
        digits["phase_error_deg"].append(proven_digits(row.phase_error_deg, phase[j])[0])
    return digits


def proven_rank(scores, name):
    """The rank of ``name`` (1 = largest) among the balls ``scores``, or None where a
    comparison with it is not decided by the balls."""
    rank = 1
    for other, s in scores.items():
        if other == name:
            continue
        if s > scores[name]:
            rank += 1
        elif not s < scores[name]:
            return None
    return rank
