"""Time per step of the nonlinear schemes on the Lagrange top (Table 3) at 64 digits
and in float64, measured in one run.

    python benchmarks/top2025_step.py               # 200 steps of h = t_bar/20 per scheme
    python benchmarks/top2025_step.py --steps 1000 --dps 32

Prints, per scheme and context: ms per step, Newton iterations per step, and the
mp/fp ratio.  The machine is noisy: compare ratios from the same run, not absolute
times across runs.
"""
import argparse
import time
from fractions import Fraction

import mpmath

from mpvi import get_context, solve
from mpvi.systems.lagrange_top import table3_top


def time_scheme(ctx, scheme, steps, repeats):
    top = table3_top(ctx)
    h = ctx.num(Fraction("1.8472389815089258840562322083988766") / 20)    # ~ t_bar / 20
    best, sol = None, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        sol = solve(top, scheme, h=h, n=steps)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    newton = sol.stats.get("newton", {})
    return 1e3 * best / steps, newton.get("mean_iterations")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200, help="steps per timing (default 200)")
    ap.add_argument("--dps", type=int, default=64, help="digits of the mp context (default 64)")
    ap.add_argument("--repeats", type=int, default=3, help="timings per case; the best is kept")
    ap.add_argument("--schemes", default="simpson,midpoint,rk4", help="comma-separated schemes")
    args = ap.parse_args()
    mp, fp = get_context("mp", args.dps), get_context("fp")
    print(f"Lagrange top (Table 3), h = t_bar/20, {args.steps} steps, best of {args.repeats}; "
          f"mpmath backend: {mpmath.libmp.BACKEND}")
    print(f"{'scheme':<10} {'mp' + str(args.dps) + ' ms/step':>14} {'fp ms/step':>11} {'ratio':>7} "
          f"{'Newton it/step (mp, fp)':>24}")
    for scheme in args.schemes.split(","):
        t_mp, it_mp = time_scheme(mp, scheme, args.steps, args.repeats)
        t_fp, it_fp = time_scheme(fp, scheme, args.steps, args.repeats)
        its = "-" if it_mp is None else f"{it_mp:.2f}, {it_fp:.2f}"
        print(f"{scheme:<10} {t_mp:>14.3f} {t_fp:>11.3f} {t_mp / t_fp:>7.1f} {its:>24}")


if __name__ == "__main__":
    main()
