"""The step times of this checkout against another revision's, measured alternately in one run.

    git worktree add --detach /tmp/base <rev>           # the revision to compare against
    python benchmarks/against_revision.py /tmp/base     # step_speed.py and scaling.py, 3 rounds

Runs ``benchmarks/step_speed.py --json`` (the Simpson step of the Lagrange top and of the
Kepler problem: mpmath, the gmp Python kernels and the compiled ones) and ``benchmarks/scaling.py
--json`` (Simpson, Gauss-Legendre with 2 points and RK4 on pendulum chains of 2 to 16
pendulums, Python and compiled) of this checkout and
those of the other revision, each with its own ``mpvi`` (``PYTHONPATH`` set to its
checkout), alternately for ``--rounds`` rounds, keeps the best time of each, and prints for every timing this/base: a ratio above 1 is a
slowdown.  Both sides must give bit-identical steps (step_speed's ``bit_identical``).
The machine is noisy: only the ratio of two timings taken in the same run means
something; run it on an idle machine.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BENCHMARKS = {
    "step_speed": ["step_speed.py", "--json", "--steps", "200", "--repeats", "3"],
    "scaling": ["scaling.py", "--json", "--family", "chain", "--n", "2", "4", "8", "16",
                "--methods", "simpson", "gauss", "rk4", "--steps", "50", "--repeats", "3"],
}


def timings(name, data):
    """{label: ms} of one benchmark's JSON output."""
    out = {}
    if name == "step_speed":
        for case, d in (("top", data), ("kepler", data.get("kepler") or {})):
            for key, label in (("reference_ms", "mp"), ("fast_ms", "gmp"),
                               ("compiled_ms", "compiled")):
                if d.get(key):
                    out[f"simpson {case} {label}"] = d[key]
    else:
        for r in data["rows"]:
            for key in ("python_ms", "compiled_ms"):
                out[f"{r['method']} {r['family']} N={r['n']} {key[:-3]}"] = r[key]
    return out


def run(name, checkout):
    env = dict(os.environ, PYTHONPATH=str(checkout))
    done = subprocess.run([sys.executable, str(Path(checkout) / "benchmarks" / BENCHMARKS[name][0]),
                           *BENCHMARKS[name][1:]], capture_output=True, text=True, env=env,
                          timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"against_revision: {name} failed with {checkout}:\n"
                         f"{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("base", type=Path, help="a checkout of the revision to compare against")
    ap.add_argument("--rounds", type=int, default=3, help="alternations (default 3)")
    ap.add_argument("--benchmarks", nargs="+", choices=sorted(BENCHMARKS),
                    default=sorted(BENCHMARKS))
    args = ap.parse_args(argv)
    if not (args.base / "mpvi" / "__init__.py").is_file():
        ap.error(f"{args.base} is not a checkout of mpvi (no mpvi/__init__.py)")
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    for name in args.benchmarks:
        best = {"this": {}, "base": {}}
        for r in range(args.rounds):
            for side, checkout in (("base", args.base), ("this", ROOT)):
                data = run(name, checkout)
                if name == "step_speed" and not data.get("bit_identical", True):
                    raise SystemExit(f"against_revision: {side}'s compiled step is not "
                                     f"bit-identical to its Python step")
                for label, ms in timings(name, data).items():
                    best[side][label] = min(ms, best[side].get(label, ms))
                print(f"{name}: round {r + 1} of {args.rounds}, {side} done", file=sys.stderr,
                      flush=True)
        print(f"{name} (best of {args.rounds}, ms per step)")
        print(f"  {'timing':<34} {'base':>9} {'this':>9} {'this/base':>9}")
        for label in best["base"]:
            if label in best["this"]:
                b, t = best["base"][label], best["this"][label]
                print(f"  {label:<34} {b:>9.4f} {t:>9.4f} {t / b:>9.3f}")


if __name__ == "__main__":
    main()
