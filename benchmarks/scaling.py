"""Cost per step against system size at 64 digits: the Python gmp path against the
compiled MPFR path (:mod:`mpvi.compiled.cbackend`), measured in one run.

    python benchmarks/scaling.py                        # chain and N-link, Simpson and RK4
    python benchmarks/scaling.py --family nlink --n 2 4 8 12 --methods simpson
    python benchmarks/scaling.py --json

Families (:mod:`mpvi.systems.pendulums`): ``chain``, N pendulums coupled by torsion
springs (constant mass matrix); ``nlink``, the N-link pendulum (dense mass matrix
M(q) with cos(q_j - q_k) entries, written by angle addition); ``nlink-pairs``, the same
written with cos(q_j - q_k) as printed (for the count of special functions before the
rewrite).  For every (family, N, method): ms per step in the gmp context with the Python
kernels and with the compiled ones (each the best of ``--repeats`` runs of ``--steps``
steps after a one-step run that builds the kernels, reported apart), their ratio, and for
Simpson the special-function calls of one evaluation of the Newton kernel (residual and
Jacobian): ``calls_python`` (each sin and cos of the Python kernel), ``calls_compiled``
(sin and cos of one argument fused into one ``mpvi_sin_cos``) and ``calls_loop`` (those
left inside the Newton loop after the ones of the step's known values are hoisted).
The last lines fit ms per step ~ N^p over the sizes run (least squares on the logs) for
each (family, method, path) and the calls ~ N^p.  Progress goes to stderr.  The machine
is noisy: compare ratios from one run.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time

import mpvi
from mpvi.compiled import cbackend
from mpvi.engines import kernels as kernel_cache
from mpvi.systems.pendulums import n_link_pendulum, pendulum_chain
from step_speed import kernels   # the switch between Python and compiled kernels

FAMILIES = {
    "chain": lambda ctx, n: pendulum_chain(ctx, n),
    "nlink": lambda ctx, n: n_link_pendulum(ctx, n),
    "nlink-pairs": lambda ctx, n: n_link_pendulum(ctx, n, angle_addition=False),
}
H = "1/100"


def per_step(problem, method, steps, repeats):
    """(best ms per step, seconds of the first one-step run)."""
    t0 = time.perf_counter()
    mpvi.solve(problem, method, h=H, n=1)
    build = time.perf_counter() - t0
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        mpvi.solve(problem, method, h=H, n=steps)
        best = min(best, (time.perf_counter() - t0) / steps)
    return best * 1e3, build


def special_calls(problem):
    """(python, compiled, in the loop) sin/cos calls of one evaluation of the Simpson
    Newton kernel of ``problem`` (built by a run before)."""
    sig = problem.system.signature
    found = [k for key, k in kernel_cache._KERNELS.items()     # the Newton kernels only
             if key[2] == sig and key[1] and getattr(k, "sources", None)]
    if not found:
        return None, None, None
    source = found[-1].sources[0]
    python = len(re.findall(r"\b(?:sin|cos)\(", source))
    c = cbackend.translate_newton("probe", found[-1].sources, found[-1].constant_names,
                                  found[-1].prec, found[-1].n, found[-1].nk, found[-1].np)
    loop = c[c.index("static void nw_both(void)"):c.index("rp[0] =")]      # every iteration
    pre = c[c.index("static void nw_pre(void)"):c.index("static void nw_both(void)")]  # once
    fused_loop = len(re.findall(r"mpvi_sin_cos\(|mpvi_sin\(|mpvi_cos\(", loop))
    fused_pre = len(re.findall(r"mpvi_sin_cos\(b_|mpvi_sin\(b_|mpvi_cos\(b_", pre))
    return python, fused_loop + fused_pre, fused_loop


def fit(ns, values):
    """Exponent p of values ~ N^p (least squares on the logs)."""
    xs = [math.log(n) for n in ns]
    ys = [math.log(v) for v in values]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", nargs="+", choices=sorted(FAMILIES), default=["chain", "nlink"])
    ap.add_argument("--n", nargs="+", type=int, default=[2, 3, 4, 6, 8, 12, 16])
    ap.add_argument("--methods", nargs="+", default=["simpson", "rk4"])
    ap.add_argument("--steps", type=int, default=100, help="steps per timed run (default 100)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs, best kept (default 3)")
    ap.add_argument("--dps", type=int, default=64)
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args(argv)
    if any(n < 2 for n in args.n):
        ap.error("--n: sizes must be at least 2")
    if "error" in cbackend.toolchain():
        ap.error(f"no compiled kernels here: {cbackend.toolchain()['error']}")
    ctx = mpvi.get_context("gmp", dps=args.dps)
    rows = []
    for family in args.family:
        for method in args.methods:
            for n in args.n:
                problem = FAMILIES[family](ctx, n)
                row = {"family": family, "n": n, "method": method}
                for label, on in (("python", False), ("compiled", True)):
                    with kernels(on):
                        ms, build = per_step(problem, method, args.steps, args.repeats)
                    row[f"{label}_ms"], row[f"{label}_build_s"] = ms, build
                    print(f"{family} N={n} {method} {label}: {ms:.3f} ms/step "
                          f"(first run {build:.1f} s)", file=sys.stderr)
                row["speedup"] = row["python_ms"] / row["compiled_ms"]
                if method == "simpson":
                    row["calls_python"], row["calls_compiled"], row["calls_loop"] = \
                        special_calls(problem)
                rows.append(row)
    fits = []
    for family in args.family:
        for method in args.methods:
            sel = [r for r in rows if r["family"] == family and r["method"] == method]
            ns = [r["n"] for r in sel]
            entry = {"family": family, "method": method, "n": f"{min(ns)}..{max(ns)}",
                     "python_exponent": fit(ns, [r["python_ms"] for r in sel]),
                     "compiled_exponent": fit(ns, [r["compiled_ms"] for r in sel])}
            if method == "simpson" and all(r.get("calls_compiled") for r in sel):
                entry["calls_python_exponent"] = fit(ns, [r["calls_python"] for r in sel])
                entry["calls_compiled_exponent"] = fit(ns, [r["calls_compiled"] for r in sel])
            fits.append(entry)
    if args.json:
        json.dump({"dps": args.dps, "steps": args.steps, "rows": rows, "fits": fits},
                  sys.stdout, indent=1)
        print()
        return 0
    print(f"{'family':12} {'N':>3} {'method':8} {'python ms':>10} {'compiled ms':>12} "
          f"{'speedup':>8} {'calls py':>9} {'compiled':>9} {'in loop':>8}")
    for r in rows:
        calls = "".join(f" {r[k]:>9}" if r.get(k) is not None else f" {'':>9}"
                        for k in ("calls_python", "calls_compiled", "calls_loop"))
        print(f"{r['family']:12} {r['n']:>3} {r['method']:8} {r['python_ms']:>10.3f} "
              f"{r['compiled_ms']:>12.3f} {r['speedup']:>8.2f}{calls}")
    print("\nfitted growth, ms per step ~ N^p (and calls per kernel evaluation ~ N^p):")
    for f in fits:
        extra = (f", calls python N^{f['calls_python_exponent']:.2f} compiled "
                 f"N^{f['calls_compiled_exponent']:.2f}" if "calls_compiled_exponent" in f else "")
        print(f"  {f['family']:12} {f['method']:8} N = {f['n']}: python N^"
              f"{f['python_exponent']:.2f}, compiled N^{f['compiled_exponent']:.2f}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
