"""top2025 Fig. 10: relative errors of the conserved momenta p_phi and p_psi (eq. 18s)
over 10 nutation periods, h = 0.05 t_bar.

Paper: the symplectic integrators (implicit midpoint, Simpson) preserve these momenta
exactly; at 64 digits "exactly" means round-off, ~1e-63.  phi and psi are cyclic, so
p_phi' = p_psi' = 0 in the Hamiltonian equations: RK4 applied to (q, p), as here,
keeps them exactly too (every stage increment of p_phi and p_psi is zero) -- see
ERRATA [E32] for what the paper's figure suggests about its RK4.

Run: ``mpvi run top2025_fig10`` or ``python reproductions/top2025/top2025_fig10.py``.
"""
from mpvi.repro.run import script_main
from mpvi.repro.studies import numstr, sup_norm

from mpvi_papers.top2025._top2025_top import (MOMENTUM_NOTE, RK4_MOMENTA, ZERO_FLOOR,
                                      series_reproduction)

PARAMS = {"periods": 10, "N_per_period": 20}
QUICK = {"periods": 4}


def summarize(ctx, res):
    return {f"{m} max rel {k} error": numstr(ctx, sup_norm(e[k]))
            for m, (_, e) in res.items() for k in ("p_phi", "p_psi")}


def certify_values(ctx, nodes, out):
    """The values of :func:`summarize` enclosed as the computed runs' momentum drifts
    (:data:`mpvi_papers.top2025._top2025_top.MOMENTUM_NOTE`); RK4's are exactly 0."""
    from mpvi.repro.certified import ball_max
    from mpvi.repro.digits import proven_digits
    values, not_certified, bounds = {}, {}, []
    for m, nd in nodes.items():
        for k in ("p_phi", "p_psi"):
            key = f"{m} max rel {k} error"
            bounds.append(f"{m} {k} {ball_max(nd[k]).str(3, radius=True)}")
            if m == "rk4":
                not_certified[key] = RK4_MOMENTA
                continue
            values[key] = proven_digits(out.values[key], ball_max(abs(x) for x in nd[f"{k}_run"]))
    return values, MOMENTUM_NOTE.format(bounds="; ".join(bounds)), not_certified


REPRODUCTION = series_reproduction(
    "top2025_fig10", "Fig. 10", "relative errors of p_phi and p_psi", ["p_phi", "p_psi"],
    summarize, panels=[("p_phi", True, None, r"$|p_\varphi - p_\varphi(0)| / |p_\varphi(0)|$"),
                       ("p_psi", True, None, r"$|p_\psi - p_\psi(0)| / |p_\psi(0)|$")],
    heading=f"conserved momenta (exact zeros drawn at {ZERO_FLOOR:g})",
    params=PARAMS, quick=QUICK, certify_values=certify_values)

if __name__ == "__main__":
    raise SystemExit(script_main(REPRODUCTION))
