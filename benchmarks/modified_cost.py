"""What a backward error analysis derivation costs: seconds of
:func:`mpvi.modified_equation` (and of :func:`mpvi.modified_hamiltonian`) against the order
and against the number of degrees of freedom, on FLINT's ring and on sympy's, measured in
one run.

    python benchmarks/modified_cost.py                         # the defaults below
    python benchmarks/modified_cost.py --orders 4 8 12 16 20 --methods midpoint lobatto
    python benchmarks/modified_cost.py --dof 1 2 3 --dof-order 4 --json
    python benchmarks/modified_cost.py --bea                   # bea_double's derivations
    python benchmarks/modified_cost.py --nbody                 # Sun-Jupiter, 3D, h^2
    python benchmarks/modified_cost.py --backends flint        # FLINT only (no ratios)

Each derivation is timed on every ring backend of ``--backends`` (:func:`mpvi.analysis.jets.ring_backend`:
``flint``, python-flint's fmpq_mpoly, the default; ``sympy``, sympy's PolyRing), from
scratch (:func:`mpvi.analysis.modified.forget_derivations` before each), one after the other: the
ratio sympy / FLINT of each derivation is printed beside FLINT's seconds (each derivation
run once before, untimed).

Against the order: the pendulum H = p^2/2 - cos q, each method of ``--methods`` through
each order of ``--orders``; the fitted exponent p of seconds ~ order^p (least squares on
the logs of the orders >= 8, where the fixed costs no longer dominate; FLINT's seconds).
Against the size: N pendulums coupled by torsion springs
(:func:`mpvi.systems.pendulums.pendulum_chain`, constant mass matrix, its parameters
symbols) for each N of ``--dof`` through ``--dof-order``, the double pendulum with its
position-dependent mass matrix M(q) = [[2, cos(q1 - q2)], [cos(q1 - q2), 1]] and one degree
of freedom with M(q) = 1/(1 + q^2), V = q^2/2, through ``--mq-order`` (0: skip).  With
``--bea``, the modified Hamiltonians of ``bea_double`` instead: the midpoint VI's and
Simpson's on the double pendulum through h^4 and the midpoint VI's with M(q) = 1/(1 + q^2)
through h^4 (``--bea-backends``: sympy's ring takes 17 minutes for Simpson's, so by default
FLINT only).  With ``--nbody``, the midpoint VI's modified equation and modified
Hamiltonian through h^2 of N bodies in space (``--bodies``, default 2: Sun and Jupiter,
6 dof, V = -G m1 m2 / r, masses and G symbols), CPU seconds from scratch, each H_k checked
to generate its term of the modified field at two rational points (40 digits) and to be
finite; for N > 2 the equation only (three bodies' H~ falls back to sympy's integrate).
Each figure is the best of ``--repeats`` runs.  The machine is noisy: compare the ratios
of one run.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time

import sympy as sp

import mpvi
from mpvi.analysis.jets import BACKENDS, ring_backend
from mpvi.analysis.modified import forget_derivations
from mpvi.systems.pendulums import pendulum_chain

PARAMS = {"lobatto": {"points": 4}}


def best_of(repeats, fn):
    best = math.inf
    for _ in range(repeats):
        forget_derivations()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    forget_derivations()
    return best


def timed(backends, repeats, fn):
    """{backend: best seconds of fn() from scratch on it}, after a first call on the first
    backend (imports and the caches of the quadrature rules and of sympy are then warm for
    every backend alike)."""
    with ring_backend(backends[0]):
        best_of(1, fn)
    out = {}
    for b in backends:
        with ring_backend(b):
            out[b] = best_of(repeats, fn)
    return out


def record(row, key, seconds):
    """row[key] = FLINT's seconds (the first backend's), the others' as key_<backend> and
    their ratio to FLINT's as ratio_<backend>."""
    first, *others = seconds
    row[key] = seconds[first]
    for b in others:
        row[f"{key}_{b}"] = seconds[b]
        row[f"ratio_{b}"] = seconds[b] / seconds[first]
    return row


def cell(row, key="equation_s"):
    ratio = row.get("ratio_sympy")
    return f"{row[key]:.2f}" + (f" ({ratio:.1f}x)" if ratio is not None else "")


def fit(xs, ys):
    """Exponent p of ys ~ xs^p (least squares on the logs)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / den if den else float("nan")


def double_pendulum(ctx):
    q1, q2 = sp.symbols("q1 q2")
    c = sp.cos(q1 - q2)
    return mpvi.LagrangianSystem("double pendulum", [q1, q2], sp.Matrix([[2, c], [c, 1]]),
                                 -2 * sp.cos(q1) - sp.cos(q2), {}, ctx)


def position_mass(ctx):
    q = sp.Symbol("q")
    return mpvi.LagrangianSystem("M(q) = 1/(1 + q^2)", [q], sp.Matrix([[1 / (1 + q ** 2)]]),
                                 q ** 2 / 2, {}, ctx)


def bea(args, ctx):
    """bea_double's derivations (module doc): rows of seconds and H_5's size."""
    rows = []
    for label, system, method in [("double pendulum", double_pendulum(ctx), "midpoint"),
                                  ("double pendulum", double_pendulum(ctx), "simpson"),
                                  ("M(q) = 1/(1 + q^2)", position_mass(ctx), "midpoint")]:
        sizes = []

        def run():
            mh = mpvi.modified_hamiltonian(method, system, 4, **PARAMS.get(method, {}))
            # a term is stored as (a sum) / (a common denominator): count the sum's terms
            sizes[:] = [len(sp.Add.make_args(mh.terms[-1].as_numer_denom()[0]))]
        row = record({"system": label, "method": method, "order": 4},
                     "hamiltonian_s", timed(args.bea_backends, args.repeats, run))
        row["last_term_terms"] = sizes[0]
        print(f"{label} {method} H~ through h^4: {cell(row, 'hamiltonian_s')} s", file=sys.stderr)
        rows.append(row)
    return rows


def bodies(n, ctx):
    """(system, parameter values): n bodies in space, V = -sum G m_i m_j / r_ij (Sun and
    Jupiter first: m = 1, 1/1047)."""
    import itertools
    qs = [sp.symbols(f"x{i} y{i} z{i}") for i in range(n)]
    ms = sp.symbols(f"m0:{n}", positive=True)
    G = sp.Symbol("G", positive=True)
    V = -sum(G * ms[i] * ms[j] / sp.sqrt(sum((a - b) ** 2 for a, b in zip(qs[i], qs[j])))
             for i, j in itertools.combinations(range(n), 2))
    masses = ["1", "1/1047", "1/3498", "1/22903"] + ["1/19412"] * n
    values = {**{m: sp.Rational(x) for m, x in zip(ms, masses)}, G: sp.Integer(1)}
    return mpvi.LagrangianSystem(f"{n} bodies", [c for q in qs for c in q],
                                 sp.diag(*[m for m in ms for _ in range(3)]), V, values,
                                 ctx), values


def generates(mh, values):
    """The largest |(dH_k/dp, -dH_k/dq) - f_(k+1)| over the terms and two rational points
    (sympy's derivatives, 40 digits: independent of the ring)."""
    from mpvi.analysis.modified import _qp_ring_terms
    me, y = mh.equation, list(mh.q) + list(mh.p)
    fields = [[me.algebra.to_expr(e) for e in row] for row in _qp_ring_terms(me)]
    worst = sp.Integer(0)
    for k, (Hk, f) in enumerate(zip(mh.terms, fields)):
        if Hk.has(sp.zoo, sp.oo, sp.nan):
            raise SystemExit(f"H_{k} is not finite")
        grad = [sp.diff(Hk, s) for s in mh.p] + [-sp.diff(Hk, s) for s in mh.q]
        for shift in (0, 1):
            point = {s: sp.Rational(3 * i + 1 + shift, 7 + 2 * i) * (-1) ** i
                     for i, s in enumerate(y)}
            worst = max([worst] + [abs(sp.N((a - b).xreplace({**values, **point}), 40))
                                   for a, b in zip(grad, f)])
    return worst


def nbody(args, ctx):
    """--nbody (module doc): rows of CPU seconds."""
    rows = []
    for n in args.bodies:
        system, values = bodies(n, ctx)
        best = {"equation_s": math.inf, "hamiltonian_s": math.inf}
        for _ in range(args.repeats):
            forget_derivations()
            t0 = time.process_time()
            mpvi.modified_equation("midpoint", system, 2)
            t1 = time.process_time()
            best["equation_s"] = min(best["equation_s"], t1 - t0)
            if n == 2:
                forget_derivations()
                t1 = time.process_time()
                mh = mpvi.modified_hamiltonian("midpoint", system, 2)
                best["hamiltonian_s"] = min(best["hamiltonian_s"], time.process_time() - t1)
        row = {"bodies": n, "dof": 3 * n, "equation_s": best["equation_s"]}
        if n == 2:
            row["hamiltonian_s"] = best["hamiltonian_s"]
            row["defect"] = float(generates(mh, values))
        rows.append(row)
    return rows


def dumped(args, key, rows):
    """With --json, ``{key: rows}`` on stdout (True); else nothing (False)."""
    if args.json:
        json.dump({key: rows}, sys.stdout, indent=1)
        print()
    return args.json


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", nargs="+", default=["midpoint", "simpson", "lobatto", "mutze", "rk4"])
    ap.add_argument("--orders", nargs="+", type=int, default=[8, 12, 16, 20])
    ap.add_argument("--dof", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--dof-order", type=int, default=4)
    ap.add_argument("--mq-order", type=int, default=2,
                    help="order on the double pendulum and on M(q) = 1/(1 + q^2) (0: skip)")
    ap.add_argument("--hamiltonian", action="store_true",
                    help="also time modified_hamiltonian (the potentials) against the order")
    ap.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS,
                    help="ring backends, FLINT first (default: both)")
    ap.add_argument("--bea", action="store_true",
                    help="bea_double's modified Hamiltonians through h^4 instead")
    ap.add_argument("--bea-backends", nargs="+", default=["flint"], choices=BACKENDS,
                    help="ring backends of --bea (sympy's takes about 20 minutes)")
    ap.add_argument("--nbody", action="store_true",
                    help="N bodies in space (--bodies): the midpoint VI through h^2")
    ap.add_argument("--bodies", nargs="+", type=int, default=[2])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args(argv)
    if any(o < 1 for o in args.orders + [args.dof_order]) or any(n < 1 for n in args.dof):
        ap.error("orders and sizes must be positive")
    unknown = [m for m in args.methods if m not in mpvi.METHODS]
    if unknown:
        ap.error(f"unknown methods {unknown}; registered: {', '.join(sorted(mpvi.METHODS))}")
    for option in ("backends", "bea_backends"):        # FLINT first: the ratios' reference
        setattr(args, option, sorted(set(getattr(args, option)), key=BACKENDS.index))
    ctx = mpvi.GMPContext(30)
    if args.nbody:
        if any(n < 2 for n in args.bodies):
            ap.error("--bodies: at least 2")
        rows = nbody(args, ctx)
        if dumped(args, "nbody", rows):
            return 0
        print("CPU seconds through h^2, the midpoint VI (N bodies in space)")
        for r in rows:
            extra = (f", modified_hamiltonian {r['hamiltonian_s']:.2f} s (it generates the "
                     f"field to {r['defect']:.1e})" if "hamiltonian_s" in r else "")
            print(f"{r['bodies']} bodies ({r['dof']} dof): modified_equation "
                  f"{r['equation_s']:.2f} s{extra}")
        return 0
    if args.bea:
        rows = bea(args, ctx)
        if dumped(args, "bea", rows):
            return 0
        print("seconds of modified_hamiltonian through h^4 (sympy / FLINT in brackets)")
        for r in rows:
            print(f"{r['system']:22} {r['method']:10} {cell(r, 'hamiltonian_s'):>16}   "
                  f"H_5: {r['last_term_terms']} terms")
        return 0
    q = sp.Symbol("q")
    pendulum = mpvi.LagrangianSystem("pendulum", [q], sp.Matrix([[1]]), -sp.cos(q), {}, ctx)
    report = {"order": [], "dof": [], "fits": {}, "backends": args.backends}
    for m in args.methods:
        for order in args.orders:
            row = record({"method": m, "order": order}, "equation_s", timed(
                args.backends, args.repeats,
                lambda: mpvi.modified_equation(m, pendulum, order, **PARAMS.get(m, {}))))
            if args.hamiltonian and mpvi.METHODS[m].symplectic is not False and m != "rk4":
                row["hamiltonian_s"] = timed(args.backends[:1], args.repeats, lambda: (
                    mpvi.modified_hamiltonian(m, pendulum, order, **PARAMS.get(m, {}))))[args.backends[0]]
            print(f"pendulum {m} through h^{order}: {cell(row)} s", file=sys.stderr)
            report["order"].append(row)
        sel = [r for r in report["order"] if r["method"] == m and r["order"] >= 8]
        if len(sel) >= 2:
            report["fits"][m] = fit([r["order"] for r in sel], [r["equation_s"] for r in sel])
    systems = [(f"chain N={n}", n, pendulum_chain(ctx, n).system, args.dof_order) for n in args.dof]
    if args.mq_order:
        systems.append(("double pendulum M(q)", 2, double_pendulum(ctx), args.mq_order))
        systems.append(("M(q) = 1/(1 + q^2)", 1, position_mass(ctx), args.mq_order))
    for label, n, system, order in systems:
        for m in args.methods:
            row = record({"system": label, "dof": n, "method": m, "order": order}, "equation_s",
                         timed(args.backends, args.repeats, lambda: mpvi.modified_equation(
                             m, system, order, **PARAMS.get(m, {}))))
            print(f"{label} {m} through h^{order}: {cell(row)} s", file=sys.stderr)
            report["dof"].append(row)
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
        return 0
    both = len(args.backends) > 1
    print("seconds of modified_equation on the pendulum on FLINT's ring (rows: order"
          + ("; sympy's / FLINT's in brackets)" if both else ")"))
    print(f"{'order':>6}" + "".join(f"{m:>15}" for m in args.methods))
    for order in args.orders:
        cells = {r["method"]: cell(r) for r in report["order"] if r["order"] == order}
        print(f"{order:>6}" + "".join(f"{cells[m]:>15}" for m in args.methods))
    if report["fits"]:
        print("fitted growth, seconds ~ order^p (orders >= 8): " + ", ".join(
            f"{m} p = {p:.2f}" for m, p in report["fits"].items()))
    if args.hamiltonian:
        print("modified_hamiltonian, seconds: " + ", ".join(
            f"{r['method']} h^{r['order']} {r['hamiltonian_s']:.2f}" for r in report["order"]
            if "hamiltonian_s" in r))
    print("\nseconds of modified_equation against the size")
    print(f"{'system':22} {'order':>5}" + "".join(f"{m:>15}" for m in args.methods))
    for label, n, _, order in systems:
        cells = {r["method"]: cell(r) for r in report["dof"] if r["system"] == label}
        print(f"{label:22} {order:>5}" + "".join(f"{cells[m]:>15}" for m in args.methods))
    return 0


if __name__ == "__main__":
    sys.exit(main())
