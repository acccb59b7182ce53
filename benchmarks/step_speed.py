"""Time per step of every implicit method at 64 digits: the mpmath reference context
against the fast context (gmpy2 numbers + generated kernels), measured in one run.

    python benchmarks/step_speed.py                  # a table for every implicit method
    python benchmarks/step_speed.py --json           # Simpson on the top (and on Kepler)
    python benchmarks/step_speed.py --json --floor   # ... against its MPFR floor

For each method: ms per step in the reference context (``mp``: mpmath numbers, residual
and Jacobian assembled with numpy object arrays) and in the fast context (``gmp``: gmpy2
``mpfr`` numbers, one generated common-subexpression-eliminated kernel per (system,
method), Newton on plain lists), the speedup, the ms per step with the same kernels
compiled to C against MPFR (``compiled_ms``, :mod:`mpvi.compiled.cbackend`), its speedup over the
Python kernels (``speedup_compiled``) and whether the two gmp runs end in the same bits
(``bit_identical``), the mean Newton iterations per step of
both, and ``max_rel_diff``: the largest relative difference between the two states after
``--steps`` steps.  Each time is the best of ``--repeats`` runs; one kernel generation per
method is timed separately and reported as ``kernel_build_s`` (it is paid once per
process, not per step).  The machine is noisy:
the ratio of two timings taken in the same run is what means something.

``--floor`` also measures how far the compiled step is from the cost of its arithmetic:
the MPFR operations of one step are counted (the same run in a child process whose
compiled modules count every MPFR call, ``MPVI_COUNT_OPERATIONS=1``,
:func:`mpvi.compiled.cbackend.operation_counts`: the Newton iteration and the checks after the
step), each kind of operation is timed in a tight C loop at the same precision on
full-precision operands (``floor_ns``: a C program linked against the MPFR gmpy2 uses), and
``floor_ms`` = sum over the kinds of (operations per step) x (ns per operation), copies
(``mpfr_set``) left out.  ``compiled_over_floor`` is the compiled step's time over that floor,
the two measured alternately in the same run, the best of each kept.
"""
import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from unittest import mock

import sympy as sp

from mpvi import IntegrationError, LagrangianSystem, NewtonError, Problem, get_context, solve
from mpvi.compiled import cbackend
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
    ("simpson (Kepler)", "kepler", "simpson", {}),
]
KEPLER = CASES[-1]


def problem(ctx, name):
    """(problem, h) of a benchmark problem in context ``ctx``."""
    if name == "top":
        return table3_top(ctx), ctx.num(Fraction(T_BAR) / 20)     # exact, then rounded once
    if name == "kepler":                      # V = -1/r: an eccentric orbit (e = 0.44)
        x, y = sp.symbols("x y")
        kepler = LagrangianSystem("Kepler", [x, y], sp.eye(2), -1 / sp.sqrt(x ** 2 + y ** 2),
                                  {}, ctx)
        return Problem(kepler, ["1", "0"], p0=["0", "6/5"]), ctx.num("1/32")
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
    MPFR from their first call (:mod:`mpvi.compiled.cbackend`); the kernel caches are keyed by it."""
    with mock.patch.dict(os.environ, MPVI_COMPILED="1" if compiled else "0",
                         MPVI_COMPILE_AFTER="1"):
        yield


def same_bits(a, b):
    return all(x == y and x.precision == y.precision
               for u, v in zip(a, b) for x, y in zip(u.ravel(), v.ravel()))


def rel_diff(ref, a, b):
    """max_i |a_i - b_i| / |a_i| at the reference context's precision."""
    return max(abs(ref.num(x) - ref.num(y)) / abs(ref.num(x)) for x, y in zip(a, b) if x != 0)


# ----- the floor: the MPFR operations of a step, timed in C ------------------------------------

def counted(label, steps, dps):
    """{"per_step": {MPFR function: calls per step}, "newton_iterations": mean} of the
    compiled step of the case ``label``, in this process: to be run with
    MPVI_COUNT_OPERATIONS=1 (:func:`count_operations`)."""
    label, system_name, scheme, params = next(c for c in CASES if c[0] == label)
    gmp = get_context("gmp", dps)
    prob, h = problem(gmp, system_name)
    solve(prob, scheme, h=h, n=1, **params)          # builds and loads the modules
    cbackend.operation_counts(reset=True)
    sol = solve(prob, scheme, h=h, n=steps, **params)
    counts = cbackend.operation_counts()
    if not counts:
        raise RuntimeError(f"{label}: no compiled module counted its operations")
    return {"per_step": {k: v / steps for k, v in sorted(counts.items()) if v},
            "newton_iterations": sol.stats.get("newton", {}).get("mean_iterations")}


def count_operations(label, steps, dps):
    """:func:`counted` in a child process whose compiled modules count their MPFR calls
    (``MPVI_COUNT_OPERATIONS=1``, compiled from the first call)."""
    env = dict(os.environ, MPVI_COUNT_OPERATIONS="1", MPVI_COMPILED="1", MPVI_COMPILE_AFTER="1")
    done = subprocess.run([sys.executable, __file__, "--count", label, "--steps", str(steps),
                           "--dps", str(dps)], env=env, capture_output=True, text=True,
                          timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"counting the operations of {label} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


_CALL = {"binary": "{f}(r[j], a[j], b[k], MPFR_RNDN);",
         "unary": "{f}(r[j], {x}[j], MPFR_RNDN);",
         "si": "{f}(r[j], a[j], {n}, MPFR_RNDN);",
         "si_first": "{f}(r[j], {n}, a[j], MPFR_RNDN);",
         "ui": "{f}(r[j], a[j], {n}, MPFR_RNDN);",
         "sin_cos": "{f}(r[j], c[j], a[j], MPFR_RNDN);",
         "copy": "{f}(r[j], a[j], MPFR_RNDN);",
         "set_si": "{f}(r[j], 3, MPFR_RNDN);"}
"""How the floor program calls each shape of :data:`mpvi.compiled.cbackend.COUNTED_OPERATIONS`:
operands a[j] in (0.1, 0.9) and b[k] in (1.1, 1.9) of full precision, j and k read from
a table of 2^16 indices into 64 operands, the small integers the kernels use (3, 2^1, -3
for pow_si)."""

_FLOOR_C = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <gmp.h>
#include <mpfr.h>
#include "mpvi_trig.h"
static mpfr_t a[64], b[64], r[64], c[64];
static unsigned char ia[65536], ib[65536];     /* the operands of call i: a[ia[i]], b[ib[i]] */
static double now(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec;
}
%(loops)s
static const struct { const char *name; void (*run)(long); } ops[] = {
%(table)s
};
/* ns per call of the operation `name`: the best of 5 loops of at least 2 ms each */
static double timed(const char *name) {
    void (*run)(long) = NULL;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (!strcmp(ops[k].name, name)) run = ops[k].run;
    if (run == NULL) return -1;
    double best = -1;
    for (int round = 0; round < 5; round++) {
        for (long count = 256;; count *= 2) {
            double t0 = now();
            run(count);
            double dt = now() - t0;
            if (dt > 2e-3) { dt /= count; if (best < 0 || dt < best) best = dt; break; }
        }
    }
    return best * 1e9;
}
int main(int argc, char **argv) {
    gmp_randstate_t st; gmp_randinit_default(st); gmp_randseed_ui(st, 36);
    mpvi_trig_init();
    for (int j = 0; j < 64; j++) {
        mpfr_inits2(%(prec)d, a[j], b[j], r[j], c[j], (mpfr_ptr)0);
        mpfr_urandomb(a[j], st); mpfr_mul_d(a[j], a[j], 0.8, MPFR_RNDN); mpfr_add_d(a[j], a[j], 0.1, MPFR_RNDN);
        mpfr_urandomb(b[j], st); mpfr_mul_d(b[j], b[j], 0.8, MPFR_RNDN); mpfr_add_d(b[j], b[j], 1.1, MPFR_RNDN);
    }
    /* random: an order the branch predictor cannot learn (as a kernel's operands, which
       differ at every call); periodic: j = i mod 64, learnt by the predictor (optimistic) */
    int periodic = argc > 1 && !strcmp(argv[1], "periodic");
    unsigned long long s = 36;
    for (long i = 0; i < 65536; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        ia[i] = periodic ? (unsigned char)(i & 63) : (unsigned char)((s >> 33) & 63);
        ib[i] = periodic ? (unsigned char)((i * 7 + 3) & 63) : (unsigned char)((s >> 45) & 63);
    }
    printf("{");
    for (int k = 2; k < argc; k++) printf("%%s\"%%s\": %%.3f", k > 2 ? ", " : "", argv[k], timed(argv[k]));
    printf("}\n");
    return 0;
}
"""


def floor_program(prec, directory):
    """Build the floor program (every operation of :data:`mpvi.compiled.cbackend.COUNTED_OPERATIONS`
    at ``prec`` bits, against the MPFR gmpy2 uses) in ``directory``; its path."""
    tc = cbackend.toolchain()
    if "error" in tc:
        raise RuntimeError(f"no C toolchain for the floor: {tc['error']}")
    loops, table = [], []
    for f, shape in cbackend.COUNTED_OPERATIONS.items():
        n = -3 if f == "mpfr_pow_si" else (1 if f.endswith("_2ui") else 3)
        x = "b" if f == "mpfr_acosh" else "a"
        loops.append(f"static void run_{f}(long count) {{\n"
                     f"    for (long i = 0; i < count; i++) {{ int j = ia[i & 65535], k = ib[i & 65535]; "
                     + _CALL[shape].format(f=f, x=x, n=n) + " }\n}")
        table.append(f'    {{"{f}", run_{f}}},')
    source = Path(directory) / "floor.c"
    source.write_text(_FLOOR_C % {"loops": "\n".join(loops), "table": "\n".join(table),
                                  "prec": prec})
    exe = Path(directory) / "floor"
    runtime = Path(directory) / "csrc"            # mpvi_trig.h: the modules' sin and cos
    runtime.mkdir()
    for name, data in cbackend.runtime_files().items():
        (runtime / name).write_bytes(data)
    cmd = [tc["cc"], "-O2", "-std=c99", f"-DPREC={prec}", *tc.get("defines", ()), str(source),
           "-o", str(exe), f"-I{runtime}"]
    cmd += [f"-I{d}" for d in tc["includes"]] + tc["link"]
    if tc["rpath"]:
        cmd.append(f"-Wl,-rpath,{tc['rpath']}")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"building the floor program failed: {done.stderr[-2000:]}")
    return exe


def time_floor(exe, names, order="random"):
    """{operation: ns per call} of the floor program, the operands taken in a random or a
    periodic ``order``."""
    done = subprocess.run([str(exe), order, *names], capture_output=True, text=True,
                          timeout=600, check=True)
    return json.loads(done.stdout)


def floor_ms(per_step, ns):
    """The floor of a step in ms: its arithmetic operations (copies left out) times their
    ns per call."""
    shapes = cbackend.COUNTED_OPERATIONS
    return sum(k * ns[f] for f, k in per_step.items() if shapes[f] not in ("copy", "set_si")) / 1e6


def measure(label, system_name, scheme, params, steps, dps, repeats, floor=False):
    mp, gmp = get_context("mp", dps), get_context("gmp", dps)
    t_ref, it_ref, ref, _ = run(mp, system_name, scheme, params, steps, repeats)
    with kernels(compiled=False):
        t_fast, it_fast, fast, build = run(gmp, system_name, scheme, params, steps, repeats)
    with kernels(compiled=True):
        t_comp, it_comp, comp, build_c = run(gmp, system_name, scheme, params, steps, repeats)
        if floor:
            ops = count_operations(label, steps, dps)
            if ops["newton_iterations"] != it_comp:
                raise RuntimeError(f"{label}: the counting run took other Newton iterations")
            with tempfile.TemporaryDirectory(prefix="mpvi-floor-") as tmp:
                exe = floor_program(gmp.prec, tmp)
                ns, periodic = {}, {}
                for _ in range(repeats):            # alternately: the floor, the step
                    for order, best in (("random", ns), ("periodic", periodic)):
                        for f, v in time_floor(exe, sorted(ops["per_step"]), order).items():
                            best[f] = min(best.get(f, v), v)
                    t_comp = min(t_comp, run(gmp, system_name, scheme, params, steps, 1)[0])
    out = {"method": label, "system": system_name, "dps": dps, "steps": steps,
           "repeats": repeats,
           "reference_ms": 1e3 * t_ref, "fast_ms": 1e3 * t_fast, "speedup": t_ref / t_fast,
           "compiled_ms": 1e3 * t_comp, "speedup_compiled": t_fast / t_comp,
           "bit_identical": same_bits([fast.q, fast.p, fast.v], [comp.q, comp.p, comp.v]),
           "newton_iterations": {"reference": it_ref, "fast": it_fast, "compiled": it_comp},
           "max_rel_diff": float(rel_diff(mp, ref.q[-1], fast.q[-1])),
           "kernel_build_s": build, "compiled_build_s": build_c}
    if floor:
        out["operations_per_step"] = ops["per_step"]
        out["floor_ns"] = ns
        out["floor_ms"] = floor_ms(ops["per_step"], ns)
        out["compiled_over_floor"] = t_comp * 1e3 / out["floor_ms"]
        out["floor_periodic_ns"] = periodic
        out["floor_periodic_ms"] = floor_ms(ops["per_step"], periodic)
        out["compiled_over_periodic_floor"] = t_comp * 1e3 / out["floor_periodic_ms"]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="Example: python benchmarks/step_speed.py --json")
    ap.add_argument("--json", action="store_true",
                    help="print one JSON object for the Simpson step of the Lagrange top, "
                         "with the same for the Kepler problem under \"kepler\"")
    ap.add_argument("--floor", action="store_true",
                    help="also count the MPFR operations of the compiled step and time them "
                         "in C: compiled_over_floor (module doc)")
    ap.add_argument("--count", metavar="METHOD",
                    help="print the MPFR operations per compiled step of one case as JSON "
                         "(run by --floor in a child with MPVI_COUNT_OPERATIONS=1)")
    ap.add_argument("--steps", type=int, default=200, help="steps per timing (default 200)")
    ap.add_argument("--dps", type=int, default=64, help="significant digits (default 64)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="timings per case and context; the best is kept (default 3)")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.dps < 1 or args.repeats < 1:
        ap.error("--steps, --dps and --repeats must be positive")
    if args.count:
        if args.count not in [c[0] for c in CASES]:
            ap.error(f"--count: no case {args.count!r}")
        print(json.dumps(counted(args.count, args.steps, args.dps)))
        return 0
    if args.json:
        report = measure(*CASES[0], args.steps, args.dps, args.repeats, args.floor)
        report["kepler"] = measure(*KEPLER, args.steps, args.dps, args.repeats, args.floor)
        print(json.dumps(report, indent=1))
        return 0
    print(f"{args.steps} steps per timing, best of {args.repeats}, {args.dps} digits; "
          "reference = mpmath context, fast = gmpy2 context with generated kernels in Python, "
          "compiled = the same kernels compiled to C against MPFR (bit-identical: the states "
          "after the steps equal bit for bit)")
    print(f"{'method':<25} {'system':<16} {'ref ms':>8} {'fast ms':>8} {'speedup':>8} "
          f"{'compiled':>8} {'x fast':>7} {'bits':>5} "
          f"{'Newton it (ref, fast)':>22} {'max rel diff':>13} {'build s':>8}"
          + (f" {'floor ms':>8} {'x floor':>7}" if args.floor else ""))
    for case in CASES:
        print(f"  ... {case[0]}", file=sys.stderr, flush=True)
        try:
            r = measure(*case, args.steps, args.dps, args.repeats, args.floor)
        except (IntegrationError, NewtonError) as exc:   # e.g. mutze on the top at T/20
            print(f"{case[0]:<25} {case[1]:<16} not timed: it cannot take {args.steps} steps "
                  f"of this h ({str(exc)[:120]})", flush=True)
            continue
        it = r["newton_iterations"]
        its = "-" if it["reference"] is None else f"{it['reference']:.3f}, {it['fast']:.3f}"
        same = "same" if r["bit_identical"] and it["fast"] == it["compiled"] else "DIFF"
        print(f"{r['method']:<25} {r['system']:<16} {r['reference_ms']:>8.3f} {r['fast_ms']:>8.3f} "
              f"{r['speedup']:>8.2f} {r['compiled_ms']:>8.3f} {r['speedup_compiled']:>7.2f} "
              f"{same:>5} {its:>22} {r['max_rel_diff']:>13.2e} {r['kernel_build_s']:>8.2f}"
              + (f" {r['floor_ms']:>8.3f} {r['compiled_over_floor']:>7.2f}" if args.floor else ""),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
