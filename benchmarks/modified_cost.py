"""What a backward error analysis derivation costs: seconds of
:func:`mpvi.modified_equation` (and of :func:`mpvi.modified_hamiltonian` on top of it)
against the order and against the number of degrees of freedom, measured in one run.

    python benchmarks/modified_cost.py                         # the defaults below
    python benchmarks/modified_cost.py --orders 4 8 12 16 20 --methods midpoint lobatto
    python benchmarks/modified_cost.py --dof 1 2 3 --dof-order 4 --json

Against the order: the pendulum H = p^2/2 - cos q, each method of ``--methods`` through
each order of ``--orders``; the fitted exponent p of seconds ~ order^p (least squares on
the logs of the orders >= 8, where the fixed costs no longer dominate).  Against the
size: N pendulums coupled by torsion springs (:func:`mpvi.systems.pendulums.pendulum_chain`,
constant mass matrix, its parameters symbols) for each N of ``--dof`` through
``--dof-order``, and the double pendulum with its position-dependent mass matrix
M(q) = [[2, cos(q1 - q2)], [cos(q1 - q2), 1]] through ``--mq-order`` (one more atom,
1/det M(q), and the relations between the sines and cosines of q1, q2 and q1 - q2 that
the ring does not apply: much larger terms).  Each figure is the best of ``--repeats``
runs (the derivation caches nothing between runs).  The machine is noisy: compare the
ratios of one run.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time

import sympy as sp

import mpvi
from mpvi.systems.pendulums import pendulum_chain

PARAMS = {"lobatto": {"points": 4}}


def best_of(repeats, fn):
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def fit(xs, ys):
    """Exponent p of ys ~ xs^p (least squares on the logs)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / den if den else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", nargs="+", default=["midpoint", "simpson", "lobatto", "mutze", "rk4"])
    ap.add_argument("--orders", nargs="+", type=int, default=[4, 8, 12, 16])
    ap.add_argument("--dof", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--dof-order", type=int, default=4)
    ap.add_argument("--mq-order", type=int, default=2, help="order on the double pendulum (0: skip)")
    ap.add_argument("--hamiltonian", action="store_true",
                    help="also time modified_hamiltonian (the potentials) against the order")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args(argv)
    if any(o < 1 for o in args.orders + [args.dof_order]) or any(n < 1 for n in args.dof):
        ap.error("orders and sizes must be positive")
    unknown = [m for m in args.methods if m not in mpvi.METHODS]
    if unknown:
        ap.error(f"unknown methods {unknown}; registered: {', '.join(sorted(mpvi.METHODS))}")
    ctx = mpvi.GMPContext(30)
    q = sp.Symbol("q")
    pendulum = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
    report = {"order": [], "dof": [], "fits": {}}
    for m in args.methods:
        for order in args.orders:
            row = {"method": m, "order": order, "equation_s": best_of(
                args.repeats, lambda: mpvi.modified_equation(m, pendulum, order, **PARAMS.get(m, {})))}
            if args.hamiltonian and mpvi.METHODS[m].symplectic is not False and m != "rk4":
                row["hamiltonian_s"] = best_of(args.repeats, lambda: mpvi.modified_hamiltonian(
                    m, pendulum, order, **PARAMS.get(m, {})))
            print(f"pendulum {m} through h^{order}: {row['equation_s']:.2f} s", file=sys.stderr)
            report["order"].append(row)
        sel = [r for r in report["order"] if r["method"] == m and r["order"] >= 8]
        if len(sel) >= 2:
            report["fits"][m] = fit([r["order"] for r in sel], [r["equation_s"] for r in sel])
    systems = [(f"chain N={n}", n, pendulum_chain(ctx, n).system, args.dof_order) for n in args.dof]
    if args.mq_order:
        q1, q2 = sp.symbols("q1 q2")
        c = sp.cos(q1 - q2)
        systems.append(("double pendulum M(q)", 2, mpvi.LagrangianSystem(
            "double pendulum", [q1, q2], sp.Matrix([[2, c], [c, 1]]),
            -2 * sp.cos(q1) - sp.cos(q2), {}, ctx), args.mq_order))
    for label, n, system, order in systems:
        for m in args.methods:
            seconds = best_of(args.repeats,
                              lambda: mpvi.modified_equation(m, system, order, **PARAMS.get(m, {})))
            print(f"{label} {m} through h^{order}: {seconds:.2f} s", file=sys.stderr)
            report["dof"].append({"system": label, "dof": n, "method": m, "order": order,
                                  "equation_s": seconds})
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
        return 0
    print("seconds of modified_equation on the pendulum (rows: order)")
    print(f"{'order':>6}" + "".join(f"{m:>11}" for m in args.methods))
    for order in args.orders:
        cells = {r["method"]: r["equation_s"] for r in report["order"] if r["order"] == order}
        print(f"{order:>6}" + "".join(f"{cells[m]:>11.2f}" for m in args.methods))
    if report["fits"]:
        print("fitted growth, seconds ~ order^p (orders >= 8): " + ", ".join(
            f"{m} p = {p:.2f}" for m, p in report["fits"].items()))
    if args.hamiltonian:
        print("modified_hamiltonian, seconds: " + ", ".join(
            f"{r['method']} h^{r['order']} {r['hamiltonian_s']:.2f}" for r in report["order"]
            if "hamiltonian_s" in r))
    print("\nseconds of modified_equation against the size")
    print(f"{'system':22} {'order':>5}" + "".join(f"{m:>11}" for m in args.methods))
    for label, n, _, order in systems:
        cells = {r["method"]: r["equation_s"] for r in report["dof"] if r["system"] == label}
        print(f"{label:22} {order:>5}" + "".join(f"{cells[m]:>11.2f}" for m in args.methods))
    return 0


if __name__ == "__main__":
    sys.exit(main())
