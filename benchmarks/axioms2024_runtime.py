"""Wall time of every axioms2024 reproduction at 64 digits next to float64, in one run.

    python benchmarks/axioms2024_runtime.py            # full parameter sets
    python benchmarks/axioms2024_runtime.py --quick    # the --quick sets

Prints one line per reproduction (mp64 seconds, fp seconds, ratio) and the totals.
Outputs go to a temporary directory and are discarded.  The machine is noisy: compare
ratios measured in the same run, not absolute times across runs.
"""
import argparse
import io
import tempfile
import time

import mpmath

from mpvi.repro.declare import all_reproductions
from mpvi.repro.run import execute


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="time the --quick parameter sets")
    ap.add_argument("--dps", type=int, default=64, help="digits of the mp context (default 64)")
    args = ap.parse_args()
    reps = {k: v for k, v in all_reproductions().items() if k.startswith("axioms2024")}
    print(f"mpmath backend: {mpmath.libmp.BACKEND}; {'quick' if args.quick else 'full'} parameter sets")
    print(f"{'reproduction':<24} {'mp' + str(args.dps) + ' [s]':>10} {'fp [s]':>9} {'ratio':>7}")
    tot = {"mp": 0.0, "fp": 0.0}
    with tempfile.TemporaryDirectory() as out:
        for rid, rep in reps.items():
            t = {}
            for c in ("mp", "fp"):
                t0 = time.perf_counter()
                execute(rep, c, args.dps, args.quick, out, stream=io.StringIO())
                t[c] = time.perf_counter() - t0
                tot[c] += t[c]
            print(f"{rid:<24} {t['mp']:>10.2f} {t['fp']:>9.2f} {t['mp'] / t['fp']:>7.1f}", flush=True)
    print(f"{'total (mpvi run --all)':<24} {tot['mp']:>10.2f} {tot['fp']:>9.2f} {tot['mp'] / tot['fp']:>7.1f}")


if __name__ == "__main__":
    main()
