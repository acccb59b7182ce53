"""Building blocks of numerical studies, shared by the reproduction scripts:
trajectories as tables, convergence tables with fitted orders."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .analysis import error_norms, fit_order
from .integrate import Progress, integrate
from .schemes import get_scheme


def numstr(ctx, x):
    """A number as a full-precision string (all ``ctx.dps`` digits)."""
    return ctx.to_str(x)


def trajectory_frame(traj, method=None, ctx=None):
    """Long-format table: t, method, q1..qn, p1..pn (full-precision strings)."""
    ctx = ctx or traj.ctx
    n = traj.q.shape[1]
    data = {"t": [numstr(ctx, t) for t in traj.t], "method": method or traj.scheme}
    for i in range(n):
        data[f"q{i + 1}"] = [numstr(ctx, x) for x in traj.q[:, i]]
    for i in range(n):
        data[f"p{i + 1}"] = [numstr(ctx, x) for x in traj.p[:, i]]
    return pd.DataFrame(data)


def exact_frame(exact, times, ctx, method="exact"):
    """The exact solution sampled at ``times`` in the layout of :func:`trajectory_frame`."""
    Q = exact.q(times)
    P = exact.p(times)
    n = Q.shape[1]
    data = {"t": [numstr(ctx, t) for t in times], "method": method}
    for i in range(n):
        data[f"q{i + 1}"] = [numstr(ctx, x) for x in Q[:, i]]
    for i in range(n):
        data[f"p{i + 1}"] = [numstr(ctx, x) for x in P[:, i]]
    return pd.DataFrame(data)


def uniform_times(ctx, T, k):
    """k + 1 equally spaced times on [0, T]."""
    return np.array([ctx.num(T) * j / k for j in range(k + 1)], dtype=ctx.dtype)


def convergence_study(system, exact, q0, p0, schemes, T, Ns, ctx, progress=None, label=""):
    """Errors max_j |x_j - x_ex(t_j)|_2 (x = q, p) of every scheme for N = Ns steps on
    [0, T], and the least-squares order over the Ns.

    Returns a list of dict rows ``{T, method, variable, N, h, error, order}`` (numbers in
    the context) and the exact solution is evaluated once per N and shared by the schemes.
    """
    rows = []
    for method in schemes:
        get_scheme(method)          # fail on an unknown name before any work is done
    errs = {(m, v): [] for m in schemes for v in "pq"}
    hs = []
    for N in Ns:
        h = ctx.num(T) / N
        hs.append(h)
        t = np.array([j * h for j in range(N + 1)], dtype=ctx.dtype)
        qex, pex = exact.q(t), exact.p(t)
        for m in schemes:
            if progress:
                progress(f"{label}{m}: N = {N}, h = {ctx.to_str(h, 6)}")
            bar = Progress(f"{m} N={N}", N) if N >= 20000 else None
            traj = integrate(system, m, q0, p0, h, N, ctx, progress=bar)
            e = error_norms(traj, _Sampled(t, qex, pex))
            errs[(m, "p")].append(e["p"])
            errs[(m, "q")].append(e["q"])
    for m in schemes:
        for v in "pq":
            order = fit_order(ctx, hs, errs[(m, v)])
            for N, h, e in zip(Ns, hs, errs[(m, v)]):
                rows.append({"T": T, "method": m, "variable": v, "N": N, "h": h,
                             "error": e, "order": order})
    return rows


class _Sampled:
    """An 'exact solution' already evaluated on the trajectory's grid."""

    def __init__(self, t, q, p):
        self._t, self._q, self._p = t, q, p

    def q(self, t):
        return self._q

    def p(self, t):
        return self._p
