"""Building blocks of numerical studies, shared by the reproduction scripts:
trajectories as tables, convergence tables with fitted orders."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .analysis import fit_order, sup_errors
from .integrate import Progress, integrate
from .schemes import get_scheme


def numstr(ctx, x):
    """A number as a full-precision string (all ``ctx.dps`` digits)."""
    return ctx.to_str(x)


def state_frame(ctx, times, Q, P, method):
    """Long-format table: t, method, q1..qn, p1..pn (full-precision strings)."""
    data = {"t": [numstr(ctx, t) for t in times], "method": method}
    for name, X in (("q", Q), ("p", P)):
        for i in range(X.shape[1]):
            data[f"{name}{i + 1}"] = [numstr(ctx, x) for x in X[:, i]]
    return pd.DataFrame(data)


def trajectory_frame(traj, method=None):
    """The nodes of a trajectory as a :func:`state_frame`."""
    return state_frame(traj.ctx, traj.t, traj.q, traj.p, method or traj.scheme)


def exact_frame(exact, times, ctx, method="exact"):
    """The exact solution sampled at ``times`` as a :func:`state_frame`."""
    return state_frame(ctx, times, exact.q(times), exact.p(times), method)


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
            e = sup_errors(traj, qex, pex)
            errs[(m, "p")].append(e["p"])
            errs[(m, "q")].append(e["q"])
    for m in schemes:
        for v in "pq":
            order = fit_order(ctx, hs, errs[(m, v)])
            for N, h, e in zip(Ns, hs, errs[(m, v)]):
                rows.append({"T": T, "method": m, "variable": v, "N": N, "h": h,
                             "error": e, "order": order})
    return rows
