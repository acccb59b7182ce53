"""What proving a run's digits costs (the target: a certified run costs at most 5x the plain
run): :func:`mpvi.certify` against the plain run it certifies, timed in one process.

    python benchmarks/certify_cost.py                     # 300 steps, best of 3
    python benchmarks/certify_cost.py --steps 100 --json
    python benchmarks/certify_cost.py --systems "linear pendulum" top
    python benchmarks/certify_cost.py --profile rk4/pendulum   # cProfile of one certify
    python benchmarks/certify_cost.py --python-balls      # also certify on Python ball kernels
    python benchmarks/certify_cost.py --reproductions --repeats 1   # Table 2, Fig. 11 whole

The cases: midpoint, Simpson and RK4 on the pendulum ``q'' = -sin q`` (q0 = 1/2, h = 1/10)
and on the paper's double pendulum (h = 1/100); Newmark, Simpson and RK4 on axioms2024's
linearized double pendulum (the Table 2 system, h = t_bar/40, its finest step: an affine
step map); RK4, midpoint and Simpson on top2025's Table 3 top (Fig. 11's system, h =
t_bar/80, t_bar its nutation period).  64 digits; the plain run with the compiled MPFR
kernels, compiled from the first call.  Per case: the plain ``mpvi.solve`` time, the
``certify`` time of that run (Lohner's method, the default), their ratio, the least proven
digits over the saved points and how the steps got their Jacobian (``hull``: one enclosed
over a hull of the run, reused; ``own``: each step its own).  Each time is the CPU time of
this process (the machine is shared: wall time measures the neighbours), the best of
``--repeats``; the kernels of both are built by a first untimed run.  No number here is
asserted by a test.  ``--python-balls`` also times each certify with the
kernels on balls and duals in Python (``MPVI_COMPILED_BALLS=0``: mpvi.compiled.carb off; the
plain run still compiled), alternating with the compiled ones in the same process.

Measured (CPU time, 300 steps, best of 3, 2 shared cores; before and after the compiled ball kernels),
ratio certify / plain before -> after (same proven digits in every case):

    midpoint / pendulum          10.7 -> 8.7     newmark / linear pendulum  14.6 -> 5.5
    simpson / pendulum           12.7 -> 10.1    simpson / linear pendulum  15.7 -> 5.5
    rk4 / pendulum                8.9 -> 7.9     rk4 / linear pendulum      32.6 -> 5.7
    midpoint / double pendulum   12.3 -> 7.8     rk4 / top                  29.4 -> 25.5
    simpson / double pendulum    14.3 -> 8.1     midpoint / top             23.4 -> 14.6
    rk4 / double pendulum        13.9 -> 12.3    simpson / top              21.1 -> 12.4

Three bodies in the plane (``--systems "three bodies" --steps 20``; V = -sum 1/r_ij: duals
to the power -3/2, six degrees of freedom): 61-64x before the compiled dual power
and the generated field's inverse of a mass matrix of numbers, 8.4x (rk4), 10.0x (midpoint)
and 11.6x (simpson) after, measured on a shared machine (the certify of rk4 0.22 s -> 0.04 s).

The linear pendulum (an affine step: one Jacobian over a hull of the run, reused) at 4000
steps: 17-35x before, 5x after (the hull's one-off cost spread; its Table 2 runs, 10 to
40000 steps, are certified in 2.8-3.3x the plain reproduction's wall time).  The nonlinear
cases differentiate every step (their Krawczyk test on balls, F_y from one residual on
duals): what remains is the generated kernels evaluated on balls and duals in Python.
"""
import argparse
import cProfile
import json
import os
import pstats
import sys
import time

os.environ.setdefault("MPVI_COMPILE_AFTER", "0")

import mpvi  # noqa: E402
from mpvi.proof.certify import certify  # noqa: E402
from mpvi.systems.double_pendulum import (linearized_double_pendulum,  # noqa: E402
                                          nonlinear_double_pendulum)
from mpvi.systems.lagrange_top import table3_top  # noqa: E402

METHODS = ("midpoint", "simpson", "rk4", "newmark")
SYSTEMS = {"pendulum": ("midpoint", "simpson", "rk4"),
           "double pendulum": ("midpoint", "simpson", "rk4"),
           "linear pendulum": ("newmark", "simpson", "rk4"),
           "top": ("rk4", "midpoint", "simpson"),
           "three bodies": ("rk4", "midpoint", "simpson")}


def problem_of(system, ctx):
    """(problem, h) of a case."""
    if system == "pendulum":
        import sympy as sp
        q = sp.Symbol("q")
        pend = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
        return mpvi.Problem(pend, ["1/2"], v0=[0]), "1/10"
    if system == "linear pendulum":
        with ctx.active():
            prob = linearized_double_pendulum(ctx)
            return prob, prob.tbar / 40
    if system == "top":
        with ctx.active():
            top = table3_top(ctx)
            return top, top.nutation().period / 80
    if system == "three bodies":
        import sympy as sp
        q = sp.symbols("x1 y1 x2 y2 x3 y3")
        V = -sum(1 / sp.sqrt((q[2 * i] - q[2 * j]) ** 2 + (q[2 * i + 1] - q[2 * j + 1]) ** 2)
                 for i in range(3) for j in range(i + 1, 3))
        bodies = mpvi.LagrangianSystem("three bodies", list(q), sp.eye(6), V, {}, ctx)
        return mpvi.Problem(bodies, [1, 0, "-1/2", "7/8", "-1/2", "-7/8"],
                            p0=[0, "1/2", "-2/5", "-1/4", "2/5", "-1/4"]), "1/20"
    return nonlinear_double_pendulum(ctx), "1/100"


def best(fn, repeats):
    out, t = None, None
    for _ in range(repeats):
        t0 = time.process_time()
        out = fn()
        dt = time.process_time() - t0
        t = dt if t is None else min(t, dt)
    return out, t


def balls_in_python(on):
    """Switch the compiled ball and dual kernels of mpvi.compiled.carb off (on=True) or on."""
    if on:
        os.environ["MPVI_COMPILED_BALLS"] = "0"
    else:
        os.environ.pop("MPVI_COMPILED_BALLS", None)


def options(method, system):
    """Simpson's stability check on a linear system needs eigenvalues the ball context
    does not compute (certify prepares the step with the run's options): off, as in
    Table 2's certified runs (it does not change the step)."""
    return {"check_stability": False} if (method, system) == ("simpson", "linear pendulum") \
        else {}


def measure(method, system, steps, repeats, dps, python_balls=False):
    ctx = mpvi.GMPContext(dps)
    problem, h = problem_of(system, ctx)
    opts = options(method, system)
    for slow in ((False, True) if python_balls else (False,)):
        balls_in_python(slow)
        certify(mpvi.solve(problem, method, h=h, n=2, **opts))  # builds both kinds of kernels
    balls_in_python(False)
    sol, plain = best(lambda: mpvi.solve(problem, method, h=h, n=steps, **opts), repeats)
    cert, proven = best(lambda: certify(sol), repeats)
    if not cert.complete:
        raise SystemExit(f"{method} / {system}: not certified: {cert}")
    row = {"method": method, "system": system, "steps": steps, "plain_s": plain,
           "certify_s": proven, "ratio": proven / plain,
           "min_digits": min(cert.min_digits), "final_width": cert.widths[-1],
           "jacobians": "hull" if cert.jacobians[1] > cert.jacobians[2] else "own"}
    if python_balls:
        balls_in_python(True)
        _, slow = best(lambda: certify(sol), repeats)
        balls_in_python(False)
        _, again = best(lambda: certify(sol), repeats)
        row["certify_s"] = min(proven, again)
        row["ratio"] = row["certify_s"] / plain
        row["python_balls_s"] = slow
        row["python_balls_ratio"] = slow / plain
    return row


ACCEPTANCE = ("axioms2024_tab02", "top2025_fig11")


def measure_reproduction(rid, repeats, quick):
    """One reproduction run plain and with --certify in this process (``execute``, the
    function behind ``mpvi run``; no study cache, outputs to a temporary directory): the
    CPU time of each, the best of ``repeats``, and their ratio -- the certified
    run against the plain run.  The certified runs a reproduction keeps for its process
    (``_CERTIFIED_RUNS`` of top2025's Tables 4-5) are forgotten before each run."""
    import tempfile

    from mpvi.repro.declare import get_reproduction
    from mpvi.repro.run import execute
    rep = get_reproduction(rid)
    with open(os.devnull, "w") as quiet, tempfile.TemporaryDirectory() as out:
        def run(certified):
            for module in list(sys.modules.values()):   # certified runs kept for a process
                if module.__name__.startswith("mpvi_papers"):
                    getattr(module, "_CERTIFIED_RUNS", {}).clear()
            return execute(rep, quick=quick, out_dir=out, stream=quiet, certify=certified)
        run(True)                                   # builds every kernel of both, untimed
        _, plain = best(lambda: run(False), repeats)
        _, proven = best(lambda: run(True), repeats)
    return {"reproduction": rid, "quick": quick, "plain_s": plain, "certified_s": proven,
            "ratio": proven / plain}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=300, help="steps of each run (default 300)")
    ap.add_argument("--repeats", type=int, default=3, help="best of this many (default 3)")
    ap.add_argument("--dps", type=int, default=64, help="working digits (default 64)")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--python-balls", action="store_true",
                    help="also time certify with the ball and dual kernels in Python")
    ap.add_argument("--profile", metavar="METHOD/SYSTEM",
                    help="print the cProfile of one certify of this case instead")
    ap.add_argument("--reproductions", nargs="*", metavar="ID",
                    help="instead: time whole reproductions plain and with --certify in this "
                         f"process (default {' and '.join(ACCEPTANCE)}, the two the 5x "
                         "target names), full parameter sets unless --quick")
    ap.add_argument("--quick", action="store_true", help="with --reproductions: the quick sets")
    args = ap.parse_args(argv)
    if args.reproductions is not None:
        rows = [measure_reproduction(rid, args.repeats, args.quick)
                for rid in (args.reproductions or ACCEPTANCE)]
        if args.json:
            print(json.dumps({"rows": rows}, indent=1))
            return
        print(f"{'reproduction':28s} {'plain s':>9s} {'certified s':>12s} {'ratio':>7s}")
        for r in rows:
            print(f"{r['reproduction']:28s} {r['plain_s']:9.2f} {r['certified_s']:12.2f} "
                  f"{r['ratio']:7.1f}")
        return
    if args.profile:
        method, system = args.profile.split("/")
        ctx = mpvi.GMPContext(args.dps)
        problem, h = problem_of(system, ctx)
        opts = options(method, system)
        sol = mpvi.solve(problem, method, h=h, n=args.steps, **opts)
        certify(mpvi.solve(problem, method, h=h, n=2, **opts))
        prof = cProfile.Profile()
        prof.runcall(certify, sol)
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(25)
        return
    rows = [measure(m, s, args.steps, args.repeats, args.dps, args.python_balls)
            for s in args.systems for m in SYSTEMS[s] if m in args.methods]
    if args.json:
        print(json.dumps({"rows": rows}, indent=1))
        return
    extra = f" {'py-balls s':>10s} {'ratio':>7s}" if args.python_balls else ""
    print(f"{'case':28s} {'plain s':>9s} {'certify s':>10s} {'ratio':>7s} {'digits':>7s} "
          f"{'Jacobians':>9s}{extra}")
    for r in rows:
        extra = (f" {r['python_balls_s']:10.4f} {r['python_balls_ratio']:7.1f}"
                 if args.python_balls else "")
        print(f"{r['method'] + ' / ' + r['system']:28s} {r['plain_s']:9.4f} "
              f"{r['certify_s']:10.4f} {r['ratio']:7.1f} {r['min_digits']:7.1f} "
              f"{r['jacobians']:>9s}{extra}")


if __name__ == "__main__":
    main()
