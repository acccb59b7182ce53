"""What the input checks of docs/guide/trust.md (singular factors at every node, chord midpoint, quadrature
node and stage; the values of user callables) cost: this tree against a base commit,
measured alternately in one run.

    python benchmarks/trust_cost.py                      # against a2875d9 (before the checks)
    python benchmarks/trust_cost.py --base HEAD~3 --rounds 7

Each round times, in a fresh process per tree, ``--steps`` compiled steps (MPFR kernels,
64 digits, compiled from the first call into a private kernel cache) of each case, best of
``--repeats``; the rounds alternate base and this tree, and the best time of each side over
all rounds is kept.  Printed: ms per step of each side and their ratio (this tree / base).
The Lagrange top of top2025 Table 3 has one singular factor, sin(theta) (det M), so its
Simpson step now evaluates it at the three quadrature nodes, the node and the chord
midpoint, and its RK4 step at every stage; the double pendulum has none (2 - cos^2 is
sign-definite), so it measures the bare cost of the new code paths.  The base tree is a
temporary ``git worktree`` of ``--base``, removed afterwards.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = [("simpson", "top"), ("rk4", "top"), ("simpson", "double pendulum")]

TIMER = r"""
import json, sys, time
from fractions import Fraction
import mpvi
from mpvi.systems.lagrange_top import table3_top
from mpvi.systems.double_pendulum import nonlinear_double_pendulum
steps, repeats = int(sys.argv[1]), int(sys.argv[2])
cases = json.loads(sys.argv[3])
ctx = mpvi.GMPContext(64)
T_BAR = Fraction("1.8472389815089258840562322083988766")
out = {}
for method, system in cases:
    problem = table3_top(ctx) if system == "top" else nonlinear_double_pendulum(ctx)
    h = ctx.num(T_BAR / 20) if system == "top" else ctx.num("1/100")
    mpvi.solve(problem, method, h=h, n=2)                   # builds and loads the kernels
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        sol = mpvi.solve(problem, method, h=h, n=steps)
        dt = (time.perf_counter() - t0) / steps
        best = dt if best is None else min(best, dt)
    out[f"{method} / {system}"] = best * 1e3
print(json.dumps(out))
"""


def time_tree(tree, steps, repeats, cache):
    env = dict(os.environ, PYTHONPATH=str(tree), MPVI_COMPILED="1", MPVI_COMPILE_AFTER="0",
               MPVI_KERNEL_CACHE=cache)
    r = subprocess.run([sys.executable, "-c", TIMER, str(steps), str(repeats), json.dumps(CASES)],
                       env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if r.returncode != 0:
        raise SystemExit(f"timing {tree} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="Example: python benchmarks/trust_cost.py --rounds 5")
    ap.add_argument("--base", default="a2875d9",
                    help="the commit to compare with (default a2875d9, before the checks)")
    ap.add_argument("--steps", type=int, default=300, help="steps per timing (default 300)")
    ap.add_argument("--repeats", type=int, default=3, help="timings per process (default 3)")
    ap.add_argument("--rounds", type=int, default=4,
                    help="alternating rounds of base and this tree (default 4)")
    args = ap.parse_args(argv)
    if min(args.steps, args.repeats, args.rounds) < 1:
        ap.error("--steps, --repeats and --rounds must be positive")
    with tempfile.TemporaryDirectory(prefix="mpvi-trust-cost-") as tmp:
        base = Path(tmp) / "base"
        r = subprocess.run(["git", "worktree", "add", "--detach", str(base), args.base],
                           cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            ap.error(f"cannot check out {args.base!r}: {r.stderr.strip()}")
        try:
            best = {"base": {}, "this": {}}
            for k in range(args.rounds):
                for side, tree in (("base", base), ("this", ROOT)):
                    print(f"  round {k + 1}/{args.rounds}: {side}", file=sys.stderr, flush=True)
                    for case, ms in time_tree(tree, args.steps, args.repeats,
                                              str(Path(tmp) / f"cache-{side}")).items():
                        best[side][case] = min(ms, best[side].get(case, ms))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT,
                           capture_output=True)
    print(f"{args.steps} compiled steps per timing at 64 digits, best of {args.repeats} x "
          f"{args.rounds} alternating rounds; base = {args.base}")
    print(f"{'case':<28} {'base ms':>9} {'this ms':>9} {'ratio':>7}")
    for case in best["this"]:
        b, t = best["base"][case], best["this"][case]
        print(f"{case:<28} {b:>9.4f} {t:>9.4f} {t / b:>7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
