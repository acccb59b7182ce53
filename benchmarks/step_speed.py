"""Time per step of every implicit method at 64 digits: the mpmath reference context
against the fast context (gmpy2 numbers + generated kernels), measured in one run.

    python benchmarks/step_speed.py            # a table for every implicit method
    python benchmarks/step_speed.py --json     # one JSON object for Simpson on the top

For each method: ms per step in the reference context (``mp``: mpmath numbers, residual
and Jacobian assembled with numpy object arrays) and in the fast context (``gmp``: gmpy2
``mpfr`` numbers, one generated common-subexpression-eliminated kernel per (system,
method), Newton on plain lists), the speedup, the ms per step with the same kernels
compiled to C against MPFR (``compiled_ms``, :mod:`mpvi.cbackend`), its speedup over the
Python kernels (``speedup_compiled``) and whether the two gmp runs end in the same bits
(``bit_identical``), the mean Newton iterations per step of
both, and ``max_rel_diff``: the largest relative difference between the two states after
``--steps`` steps.  Each time is the best of ``--repeats`` runs; one kernel generation per
method is timed separately and reported as ``kernel_build_s`` (it is paid once per
process, not per step).  The machine is noisy:
the ratio of two timings taken in the same run is what means something.
"""
import argparse
import contextlib
import json
import os
import sys
import time
from fractions import Fraction

from mpvi import Problem, get_context, solve
from mpvi.systems.damped import damped_pendulum
from mpvi.systems.lagrange_top import table3_top

T_BAR = "1.8472389815089258840562322083988766"   # nutation period of the Table 3 top (s)

# (label, system, scheme, params): every implicit method of mpvi
CASES = [
    ("simpson", "top", "simpson", {}),
    ("midpoint", "top", "midpoint", {}),
    ("lobatto4", "top", "lobatto", {"points": 4}),
    ("hermite_variational", "top", "hermite_variational", {}),
    ("hermite_galerkin", "top", "hermite_galerkin", {}),
    ("implicit_midpoint", "top", "implicit_midpoint", {}),
    ("mutze (direct midpoint)", "top", "mutze", {}),
    ("mutze_variation", "damped pendulum", "mutze_variation", {}),
    ("mutze_parabolic_el", "damped pendulum", "mutze_parabolic_el", {}),
]


def problem(ctx, name):
    """(problem, h) of a benchmark problem in context ``ctx``."""
    if name == "top":
        return table3_top(ctx), ctx.num(Fraction(T_BAR) / 20)     # exact, then rounded once
    return Problem(damped_pendulum(ctx), ["1/2"], v0=[0]), ctx.num("1/10")


def run(ctx, system_name, scheme, params, steps, repeats):
    """(seconds per step, best of ``repeats`` runs of ``steps`` steps; mean Newton
    iterations; final q; kernel build seconds).  A first one-step run pays the one-off
    kernel generation, which is reported apart."""
    prob, h = problem(ctx, system_name)
    t0 = time.perf_counter()
    solve(prob, scheme, h=h, n=1, **params)
    build = time.perf_counter() - t0
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        sol = solve(prob, scheme, h=h, n=steps, **params)
        dt = (time.perf_counter() - t0) / steps
        best = dt if best is None else min(best, dt)
    newton = sol.stats.get("newton", {})
    return best, newton.get("mean_iterations"), sol, max(build - best, 0.0)


@contextlib.contextmanager
def kernels(compiled):
    """The gmp context's kernels in Python (``compiled=False``) or compiled to C against
    MPFR from their first call (:mod:`mpvi.cbackend`); the kernel caches are keyed by it."""
    saved = {k: os.environ.get(k) for k in ("MPVI_COMPILED", "MPVI_COMPILE_AFTER")}
    os.environ.update(MPVI_COMPILED="1" if compiled else "0", MPVI_COMPILE_AFTER="1")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def same_bits(a, b):
    return all(x == y and x.precision == y.precision
               for u, v in zip(a, b) for x, y in zip(u.ravel(), v.ravel()))


def rel_diff(ref, a, b):
    """max_i |a_i - b_i| / |a_i| at the reference context's precision."""
    return max(abs(ref.num(x) - ref.num(y)) / abs(ref.num(x)) for x, y in zip(a, b) if x != 0)


def measure(label, system_name, scheme, params, steps, dps, repeats):
    mp, gmp = get_context("mp", dps), get_context("gmp", dps)
    t_ref, it_ref, ref, _ = run(mp, system_name, scheme, params, steps, repeats)
    with kernels(compiled=False):
        t_fast, it_fast, fast, build = run(gmp, system_name, scheme, params, steps, repeats)
    with kernels(compiled=True):
        t_comp, it_comp, comp, build_c = run(gmp, system_name, scheme, params, steps, repeats)
    return {"method": label, "system": system_name, "dps": dps, "steps": steps,
            "repeats": repeats,
            "reference_ms": 1e3 * t_ref, "fast_ms": 1e3 * t_fast, "speedup": t_ref / t_fast,
            "compiled_ms": 1e3 * t_comp, "speedup_compiled": t_fast / t_comp,
            "bit_identical": same_bits([fast.q, fast.p, fast.v], [comp.q, comp.p, comp.v]),
            "newton_iterations": {"reference": it_ref, "fast": it_fast, "compiled": it_comp},
            "max_rel_diff": float(rel_diff(mp, ref.q[-1], fast.q[-1])),
            "kernel_build_s": build, "compiled_build_s": build_c}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="Example: python benchmarks/step_speed.py --json")
    ap.add_argument("--json", action="store_true",
                    help="print one JSON object for the Simpson step of the Lagrange top")
    ap.add_argument("--steps", type=int, default=200, help="steps per timing (default 200)")
    ap.add_argument("--dps", type=int, default=64, help="significant digits (default 64)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="timings per case and context; the best is kept (default 3)")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.dps < 1 or args.repeats < 1:
        ap.error("--steps, --dps and --repeats must be positive")
    if args.json:
        print(json.dumps(measure(*CASES[0], args.steps, args.dps, args.repeats), indent=1))
        return 0
    print(f"{args.steps} steps per timing, best of {args.repeats}, {args.dps} digits; "
          "reference = mpmath context, fast = gmpy2 context with generated kernels in Python, "
          "compiled = the same kernels compiled to C against MPFR (bit-identical: the states "
          "after the steps equal bit for bit)")
    print(f"{'method':<25} {'system':<16} {'ref ms':>8} {'fast ms':>8} {'speedup':>8} "
          f"{'compiled':>8} {'x fast':>7} {'bits':>5} "
          f"{'Newton it (ref, fast)':>22} {'max rel diff':>13} {'build s':>8}")
    for case in CASES:
        print(f"  ... {case[0]}", file=sys.stderr, flush=True)
        r = measure(*case, args.steps, args.dps, args.repeats)
        it = r["newton_iterations"]
        its = "-" if it["reference"] is None else f"{it['reference']:.3f}, {it['fast']:.3f}"
        same = "same" if r["bit_identical"] and it["fast"] == it["compiled"] else "DIFF"
        print(f"{r['method']:<25} {r['system']:<16} {r['reference_ms']:>8.3f} {r['fast_ms']:>8.3f} "
              f"{r['speedup']:>8.2f} {r['compiled_ms']:>8.3f} {r['speedup_compiled']:>7.2f} "
              f"{same:>5} {its:>22} {r['max_rel_diff']:>13.2e} {r['kernel_build_s']:>8.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
