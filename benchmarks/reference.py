"""mpvi's Taylor reference against heyoka.py at equal achieved accuracy, on five systems.

    python benchmarks/reference.py                      # every system, 64 and 128 digits
    python benchmarks/reference.py --systems kepler_e0.5 --dps 64 --rounds 5
    python benchmarks/reference.py --json out.json      # the rows as JSON too

For each system and precision (``--dps``: 64 and 128 by default) the posed problem is a
Lagrangian with its parameters and its initial state (q0, v0) as numbers of the
``dps``-digit gmp context; both codes start from exactly those numbers.  The target is
10^-(dps - 9) (1e-55 at 64 digits, 1e-119 at 128), asked at every node t_j = j T / N.

* **The truth** is mpvi's Taylor run of the same numbers (converted exactly) at twice the
  digits and tolerance 10^-(2 dps - 9) / 100; the error of a run is, over the nodes, the
  largest of |q - q_ref|_inf / |q_ref|_inf and |v - v_ref|_inf / |v_ref|_inf (relative, so
  that the outer planets' velocities of 1e-3 AU/day count as much as their positions).
* **Equal accuracy.**  Each code runs at the *loosest* tolerance, of 10 target, target,
  target / 10, ..., that reaches the target at every node: mpvi's ``taylor`` (Jorba &
  Zou's order and adaptive step, nodes where the state is saved) and heyoka.py's
  ``taylor_adaptive`` (``fp_type=heyoka.real`` at the context's bits, ``propagate_grid``
  at the nodes).  A row whose code cannot reach the target within ``--max-tighten``
  tightenings says so and has no ratio.
* **Time.**  CPU time (``time.process_time``) of the integration alone, best of
  ``--rounds`` alternating rounds (mpvi, heyoka, mpvi, ...); mpvi's compiled step and
  heyoka's JIT compilation are built before (their one-off cost is printed apart).

heyoka's equations of motion are its own ``heyoka.lagrangian`` of mpvi's sympy Lagrangian
(``benchmarks/pendulum_reference.py``: ``heyoka_equations``), every parameter a runtime
parameter holding the context's value bit for bit, checked against mpvi's
``system.acceleration`` at random states before anything is timed.

Printed, one line per system and precision::

    ratio mpvi/heyoka <system> <digits>: <ratio>  (mpvi <s> s at tol <tol>, error <e>; heyoka <s> s at tol <tol>, error <e>)

The exit status is 1 if a row could not compare equal accuracies, 0 otherwise; without
heyoka.py (``pip install heyoka``, the ``bench`` extra) it prints how to install it and
exits 2.  Systems (``--systems``):

* ``double_pendulum``: top2025's nonlinear double pendulum (Table 1 data), T = 10 s.
* ``kepler_e0.5``, ``kepler_e0.9``: L = |v|^2 / 2 + 1 / |q|, q0 = (1 - e, 0),
  v0 = (0, sqrt((1 + e) / (1 - e))) (period 2 pi), T = 100.
* ``henon_heiles``: L = |v|^2 / 2 - (x^2 + y^2) / 2 - x^2 y + c y^3, c = 1/3,
  q0 = (0, 0.1), v0 = (0.49, 0) (energy 0.1247, below the escape energy 1/6), T = 100.
* ``outer_solar_system``: the Sun and the five outer planets of Hairer, Lubich & Wanner,
  *Geometric Numerical Integration* (2006), Sec. I.2.4, Table 2.2 (18 degrees of freedom;
  masses relative to the Sun, which carries the inner planets; AU, days;
  G = 2.95912208286e-4), L = sum m_i |v_i|^2 / 2 + G sum_(i<j) m_i m_j / |q_i - q_j|,
  T = 20000 days (about 4.6 orbits of Jupiter).
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import sympy as sp

import mpvi
from mpvi.ground.io import write_json
from mpvi.systems.double_pendulum import nonlinear_double_pendulum

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pendulum_reference as pr              # noqa: E402  (the heyoka helpers, written once)

heyoka = pr.heyoka

NODES = 10
"""The posed accuracy is asked at t_j = j T / NODES, j = 1..NODES."""
TRUTH_MARGIN = 100
"""The truth's tolerance is 10^-(2 dps - 9) / TRUTH_MARGIN."""
LOOSEST = 10
"""The loosest tolerance tried is LOOSEST * target."""


def say(message):
    print(message, file=sys.stderr, flush=True)


# ----- the posed problems ------------------------------------------------------------------

class Posed:
    """A Lagrangian, its parameters and initial state as context numbers, the span."""

    def __init__(self, name, L, q, v, params, q0, v0, T, ctx):
        self.name, self.L, self.q, self.v, self.T, self.ctx = name, L, q, v, T, ctx
        self.params = dict(params)               # symbol -> context number
        self.q0, self.v0 = list(q0), list(v0)
        self.system = mpvi.Lagrangian(L, q, v, params=self.params, ctx=ctx, name=name)
        self.problem = mpvi.Problem(self.system, self.q0, v0=self.v0)

    def widened(self, wide):
        """The same numbers, exactly, in the context ``wide``."""
        def exact(x):
            return wide.num(Fraction(*x.as_integer_ratio()))
        return Posed(self.name, self.L, self.q, self.v,
                     {s: exact(x) for s, x in self.params.items()},
                     [exact(x) for x in self.q0], [exact(x) for x in self.v0], self.T, wide)


def _xy():
    return sp.symbols("x y"), sp.symbols("vx vy")


def double_pendulum(ctx):
    prob = nonlinear_double_pendulum(ctx)
    s = prob.system
    return Posed("double_pendulum", s.lagrangian_expr, list(s.coords), list(s.velocity_symbols),
                 dict(zip(s.param_symbols, s.param_values)), prob.q0,
                 s.velocity(prob.q0, prob.p0), 10, ctx)


def kepler(e):
    def build(ctx):
        (x, y), (vx, vy) = _xy()
        L = (vx ** 2 + vy ** 2) / 2 + 1 / sp.sqrt(x ** 2 + y ** 2)
        E = ctx.num(Fraction(e))
        return Posed(f"kepler_e{e}", L, [x, y], [vx, vy], {}, [1 - E, ctx.zero],
                     [ctx.zero, ctx.sqrt((1 + E) / (1 - E))], 100, ctx)
    return build


def henon_heiles(ctx):
    (x, y), (vx, vy) = _xy()
    c = sp.Symbol("c")
    L = (vx ** 2 + vy ** 2) / 2 - (x ** 2 + y ** 2) / 2 - x ** 2 * y + c * y ** 3
    return Posed("henon_heiles", L, [x, y], [vx, vy], {c: ctx.num(Fraction(1, 3))},
                 [ctx.zero, ctx.num("0.1")], [ctx.num("0.49"), ctx.zero], 100, ctx)


OUTER_SOLAR_SYSTEM = [
    # mass (relative to the Sun), position (AU), velocity (AU/day): HLW Table I.2.2
    ("1.00000597682", ("0", "0", "0"), ("0", "0", "0")),
    ("0.000954786104043", ("-3.5023653", "-3.8169847", "-1.5507963"),
     ("0.00565429", "-0.00412490", "-0.00190589")),
    ("0.000285583733151", ("9.0755314", "-3.0458353", "-1.6483708"),
     ("0.00168318", "0.00483525", "0.00192462")),
    ("0.0000437273164546", ("8.3101420", "-16.2901086", "-7.2521278"),
     ("0.00354178", "0.00137102", "0.00055029")),
    ("0.0000517759138449", ("11.4707666", "-25.7294829", "-10.8169456"),
     ("0.00288930", "0.00114527", "0.00039677")),
    (Fraction(1, 130000000), ("-15.5387357", "-25.2225594", "-3.1902382"),
     ("0.00276725", "-0.00170702", "-0.00136504")),
]
GRAVITY = "2.95912208286e-4"


def outer_solar_system(ctx):
    n = len(OUTER_SOLAR_SYSTEM)
    q = [sp.Symbol(f"{a}{i}") for i in range(n) for a in "xyz"]
    v = [sp.Symbol(f"v{a}{i}") for i in range(n) for a in "xyz"]
    m = [sp.Symbol(f"m{i}") for i in range(n)]
    G = sp.Symbol("G")
    kinetic = sum(m[i] * sum(v[3 * i + k] ** 2 for k in range(3)) for i in range(n)) / 2
    potential = sum(m[i] * m[j] / sp.sqrt(sum((q[3 * i + k] - q[3 * j + k]) ** 2
                                                 for k in range(3)))
                    for i in range(n) for j in range(i + 1, n))
    params = {G: ctx.num(GRAVITY), **{m[i]: ctx.num(body[0])
                                      for i, body in enumerate(OUTER_SOLAR_SYSTEM)}}
    q0 = [ctx.num(x) for body in OUTER_SOLAR_SYSTEM for x in body[1]]
    v0 = [ctx.num(x) for body in OUTER_SOLAR_SYSTEM for x in body[2]]
    return Posed("outer_solar_system", kinetic + G * potential, q, v, params, q0, v0, 20000,
                 ctx)


SYSTEMS = {"double_pendulum": double_pendulum, "kepler_e0.5": kepler("0.5"),
           "kepler_e0.9": kepler("0.9"), "henon_heiles": henon_heiles,
           "outer_solar_system": outer_solar_system}


# ----- the runs ------------------------------------------------------------------------------

def nodes_of(posed):
    """(H, N): the node spacing as a context number and the number of nodes."""
    return posed.ctx.num(Fraction(posed.T, NODES)), NODES


def mpvi_run(posed, tol):
    """mpvi's Taylor run at ``tol``: (the states (q, v) at the nodes, CPU seconds, substeps)."""
    H, N = nodes_of(posed)
    start = time.process_time()
    sol = mpvi.solve(posed.problem, "taylor", h=H, n=N, tol=tol, check_stability=False)
    cpu = time.process_time() - start
    return (list(sol.q[1:]), list(sol.v[1:])), cpu, sol.stats.get("substeps")


class Heyoka:
    """heyoka.py's integrator of a posed problem (built once: its JIT compilation timed)."""

    def __init__(self, posed, tol):
        system, ctx = posed.system, posed.ctx
        equations, qs, vs = pr.heyoka_equations(system)
        self.pars = np.array([pr.to_real(ctx, x) for x in system.param_values],
                             dtype=heyoka.real)
        fn = pr.acceleration_cfunc(system, equations, qs, vs)
        self.check = pr.check_equations(system, fn, self.pars,
                                        pr.random_states(ctx, system.dof, pr.CHECK_STATES))
        self.order = [str(lhs) for lhs, _ in equations]
        start = dict(zip(map(str, qs), posed.q0))
        start.update(zip(map(str, vs), posed.v0))
        self.x0 = [pr.to_real(ctx, start[name]) for name in self.order]
        self.qs, self.vs, self.posed = [str(x) for x in qs], [str(x) for x in vs], posed
        t0 = time.process_time()
        self.ta = heyoka.taylor_adaptive(equations, self.x0, fp_type=heyoka.real,
                                         prec=ctx.prec, tol=pr.to_real(ctx, tol),
                                         pars=list(self.pars))
        self.jit = time.process_time() - t0
        H, N = nodes_of(posed)
        self.grid = np.array([pr.to_real(ctx, H * j) for j in range(N + 1)],
                             dtype=heyoka.real)                # t0 first, as heyoka asks

    def run(self):
        """(the states (q, v) at the nodes, CPU seconds, steps) from the initial state."""
        ctx = self.posed.ctx
        self.ta.time = pr.to_real(ctx, ctx.zero)
        self.ta.state[:] = np.array(self.x0, dtype=heyoka.real)
        start = time.process_time()
        outcome, _, _, steps, _, states = self.ta.propagate_grid(self.grid)
        cpu = time.process_time() - start
        if outcome != heyoka.taylor_outcome.time_limit:
            raise ArithmeticError(f"heyoka stopped with {outcome} on {self.posed.name}")
        index = {name: k for k, name in enumerate(self.order)}
        rows = states[1:]                                       # the nodes after t0
        qs = [ctx.asarray([pr.from_real(ctx, row[index[n]]) for n in self.qs]) for row in rows]
        vs = [ctx.asarray([pr.from_real(ctx, row[index[n]]) for n in self.vs]) for row in rows]
        return (qs, vs), cpu, steps


def error(ctx, got, truth):
    """max over the nodes of |q - q_ref|_inf / |q_ref|_inf and |v - v_ref|_inf / |v_ref|_inf
    (the truth converted to ``ctx``'s precision is exact enough: 2 dps digits)."""
    worst = ctx.zero
    for X, R in zip(got, truth):
        for x, r in zip(X, R):
            r = [ctx.num(Fraction(*z.as_integer_ratio())) for z in r]
            scale = max(abs(z) for z in r) or ctx.one
            worst = max(worst, max(abs(a - b) for a, b in zip(x, r)) / scale)
    return worst


def loosest(label, run, ctx, target, truth, tighten):
    """The loosest tolerance of LOOSEST target, target, target / 10, ... at which ``run(tol)``
    reaches ``target``: (tol, error, the first run's result) or (None, the last error, None)."""
    tol, err = target * LOOSEST, None
    for _ in range(tighten + 2):
        result = run(tol)
        err = error(ctx, result[0], truth)
        say(f"  {label}: tol {ctx.to_str(tol, 2)} -> error {ctx.to_str(err, 3)}")
        if err <= target:
            return tol, err, result
        tol /= 10
    return None, err, None


def compare(name, dps, rounds, tighten):
    """One row: the loosest tolerances, then ``rounds`` alternating timed rounds."""
    ctx = mpvi.GMPContext(dps)
    target = ctx.num(10) ** -(dps - 9)
    posed = SYSTEMS[name](ctx)
    say(f"{name}, {dps} digits: the truth at {2 * dps} digits")
    wide = mpvi.GMPContext(2 * dps)
    truth = mpvi_run(posed.widened(wide), wide.num(10) ** -(2 * dps - 9) / TRUTH_MARGIN)[0]
    ctx.activate()
    row = {"system": name, "digits": dps, "target": ctx.to_float(target)}
    t0 = time.process_time()
    mpvi_run(posed, target)                      # the derivation and the compiled step, once
    row["mpvi_setup_s"] = time.process_time() - t0
    m_tol, m_err, _ = loosest("mpvi", lambda tol: mpvi_run(posed, tol), ctx, target, truth,
                              tighten)
    machines = {}

    def heyoka_at(tol):
        machines[tol] = Heyoka(posed, tol)
        return machines[tol].run()
    h_tol, h_err, _ = loosest("heyoka", heyoka_at, ctx, target, truth, tighten)
    row.update(mpvi_tol=m_tol and ctx.to_float(m_tol), mpvi_error=ctx.to_float(m_err),
               heyoka_tol=h_tol and ctx.to_float(h_tol), heyoka_error=ctx.to_float(h_err))
    if m_tol is None or h_tol is None:
        row["ratio"] = None
        return row
    hy = machines[h_tol]
    row.update(heyoka_jit_s=hy.jit, equation_check=ctx.to_float(hy.check))
    best_m = best_h = math.inf
    for k in range(rounds):
        _, cpu_m, substeps = mpvi_run(posed, m_tol)
        _, cpu_h, steps = hy.run()
        best_m, best_h = min(best_m, cpu_m), min(best_h, cpu_h)
        say(f"  round {k + 1}: mpvi {cpu_m:.3f} s ({substeps} steps), heyoka {cpu_h:.3f} s "
            f"({steps} steps)")
    row.update(mpvi_s=best_m, heyoka_s=best_h, mpvi_steps=substeps, heyoka_steps=steps,
               ratio=best_m / best_h)
    return row


def line(row):
    if row["ratio"] is None:
        return (f"ratio mpvi/heyoka {row['system']} {row['digits']}: none  (the target "
                f"{row['target']:.0e} not reached: mpvi error {row['mpvi_error']:.2e} at its "
                f"tightest tolerance, heyoka {row['heyoka_error']:.2e})")
    return (f"ratio mpvi/heyoka {row['system']} {row['digits']}: {row['ratio']:.2f}  "
            f"(mpvi {row['mpvi_s']:.3f} s at tol {row['mpvi_tol']:.0e}, error "
            f"{row['mpvi_error']:.1e}, {row['mpvi_steps']} steps; heyoka {row['heyoka_s']:.3f} s "
            f"at tol {row['heyoka_tol']:.0e}, error {row['heyoka_error']:.1e}, "
            f"{row['heyoka_steps']} steps)")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="mpvi's Taylor reference against heyoka.py at equal achieved accuracy "
                    "(CPU time, best of alternating rounds; see the module docstring).")
    parser.add_argument("--systems", nargs="+", choices=sorted(SYSTEMS), default=list(SYSTEMS),
                        metavar="SYSTEM", help=f"systems (default all: {', '.join(SYSTEMS)})")
    parser.add_argument("--dps", nargs="+", type=int, default=[64, 128],
                        help="digits (default 64 128)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (default 3)")
    parser.add_argument("--max-tighten", type=int, default=4,
                        help="tolerances tried below the target, by tenths (default 4)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    if heyoka is None:
        print(f"heyoka.py is not installed: {pr.INSTALL_HINT} (or pip install -e '.[bench]')",
              file=sys.stderr)
        return 2
    if args.rounds < 1 or any(d < 20 for d in args.dps):
        parser.error("--rounds must be at least 1 and every --dps at least 20")
    rows = []
    for dps in args.dps:
        for name in args.systems:
            row = compare(name, dps, args.rounds, args.max_tighten)
            rows.append(row)
            print(line(row), flush=True)
    if args.json:
        write_json(rows, args.json)              # atomic: a temporary file, then a rename
    return 0 if all(r["ratio"] is not None for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
