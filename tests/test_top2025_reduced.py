"""The reduced-top reproductions of top2025 (Sec. 4.3, Table 6, Figs. 12-14).

* the reduced right-hand side (eqs. 18ad-18af, 18aq) is the complete system's Hamiltonian
  field restricted to p_phi, p_psi of Table 6, to ~1e-60 at 64 digits;
* each script's quick compute writes its outputs and its values satisfy the published
  claims of reproductions/top2025/published/top2025_reduced.csv (orders, cusps, momenta).
"""
import importlib
import json

import numpy as np
import pandas as pd
import pytest

from mpvi import MPContext
from mpvi.repro.published import load_all_published
from mpvi.repro.run import execute

from mpvi_papers.top2025._top2025_reduced import cusp_top

IDS = ["top2025_fig12", "top2025_fig13", "top2025_fig14"]
# imported one by one (not all_reproductions()): these tests do not depend on other scripts
REPS = {rid: importlib.import_module(f"mpvi_papers.top2025.{rid}").REPRODUCTION for rid in IDS}


@pytest.fixture(scope="module")
def ctx():
    return MPContext(64)


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    """Quick runs of the three scripts at 64 digits into a temporary directory."""
    out = tmp_path_factory.mktemp("figures")
    paths = {rid: execute(REPS[rid], "mp", 64, True, out, stream=open("/dev/null", "w"))
             for rid in IDS}
    return {rid: (p, json.loads(p["json"].read_text())) for rid, p in paths.items()}


def _states(ctx):
    """A few (phi, theta, xi) states off the trajectory, with theta away from 0 and pi."""
    return [(ctx.num(a), ctx.num(b), ctx.num(c)) for a, b, c in
            (("0", "0.5235987755982988730771072305465838140328615665625176368291574320", "0"),
             ("0.3", "0.8", "-1.7"), ("2.5", "1.05", "2.25"), ("-1", "0.6", "0.01"))]


def test_reduced_rhs_is_the_complete_hamiltonian_field(ctx):
    top = cusp_top(ctx)
    red = top.reduced()
    sysc = top.system
    I = top.params["I"]
    p_phi, p_psi = top.p0[0], top.p0[2]
    tol = ctx.num("1e-60")
    for phi, theta, xi in _states(ctx):
        q = ctx.asarray([phi, theta, ctx.num("0.7")])          # psi is cyclic: any value
        p = ctx.asarray([p_phi, I * xi, p_psi])                 # p_theta = I theta'
        dq, dp = sysc.hamiltonian_rhs(q, p)
        f = red.rhs(ctx.zero, ctx.asarray([phi, theta, xi]))
        assert abs(dq[0] - f[0]) < tol                         # phi' (18af)
        assert abs(dq[1] - f[1]) < tol                         # theta' = xi
        assert abs(dp[1] / I - f[2]) < tol                     # theta'' = xi' (18ad)
        assert abs(dp[0]) < tol and abs(dp[2]) < tol           # p_phi, p_psi conserved
    # eq. (18aq) as printed, with the Table 6 numbers
    pi, s3 = ctx.pi, ctx.sqrt(3)
    for phi, theta, xi in _states(ctx):
        s, c = ctx.sin(theta), ctx.cos(theta)
        phidot = 2 * pi * (s3 - 2 * c) / s ** 2
        f = red.rhs(ctx.zero, ctx.asarray([phi, theta, xi]))
        assert abs(f[0] - phidot) < tol
        assert abs(f[2] - (4 * pi ** 2 + phidot ** 2 * c - 4 * pi * phidot) * s) < tol


def test_table6_momenta_and_constants(ctx):
    top = cusp_top(ctx)
    tol = ctx.num("1e-60")
    assert abs(top.p0[0] - 2 * ctx.pi * ctx.sqrt(3)) < tol     # (18ab)
    assert abs(top.p0[2] - 4 * ctx.pi) < tol
    P = top.params
    assert abs(P["m_top"] * P["g"] * P["ell"] / P["I"] - 4 * ctx.pi ** 2) < tol   # (18ae)


def test_quick_runs_write_outputs(quick_runs):
    for rid, (paths, rec) in quick_runs.items():
        assert paths["png"].stat().st_size > 10_000, rid
        assert len(pd.read_csv(paths["csv"], dtype=str)) > 3, rid
        assert rec["reproduction"] == rid and rec["digits"] == 64 and rec["quick"]


def test_quick_values_satisfy_the_published_claims(quick_runs):
    claims = [v for v in load_all_published() if v.id in IDS]
    assert len(claims) >= 10
    for v in claims:
        values = quick_runs[v.id][1]["values"]
        ok, _ = v.check(values[v.key])
        assert ok, (v.id, v.key, v.printed, values[v.key])


def _values(quick_runs, rid):
    return {k: float(x) for k, x in quick_runs[rid][1]["values"].items()}


def test_fig12_cusps(quick_runs):
    v = _values(quick_runs, "top2025_fig12")
    assert v["cusps found"] == 2                       # T = 2 s, nutation period 0.7776 s
    assert v["cusp max |phidot|"] < 1e-50
    assert v["cusp max |theta-theta0|"] < 1e-50
    assert v["cusp max |t_k - k period|"] < 1e-50      # turning times = k x exact period
    assert v["bottom max |theta-theta_max exact|"] < 1e-50
    assert abs(v["nutation period (exact)"] - 0.77762654991994) < 1e-12   # not 1 s


def test_fig13_references_and_methods(quick_runs):
    v = _values(quick_runs, "top2025_fig13")
    assert v["rk4 ref vs gbs theta"] < 1e-13           # RK4 at h_ref = 1e-4 (quick)
    assert v["gbs halving theta"] < 1e-30
    assert v["gbs reduced vs complete theta"] < 1e-55
    assert v["rk4 complete vs reduced h=0.1"] < 1e-60  # RK4 commutes with the reduction
    assert 1.5 < v["rk4 reduced / simpson"] < 3
    assert v["midpoint / simpson"] > 10


def test_fig14_orders(quick_runs):
    v = _values(quick_runs, "top2025_fig14")
    assert abs(v["difference order"] - 4) < 0.3
    assert abs(v["difference last alpha"] - 4) < 0.1
    assert abs(v["simpson order"] - 4) < 0.2
    assert abs(v["simpson last alpha"] - 4) < 0.01
    assert abs(v["rk4 order"] - 4) < 0.3
    assert abs(v["rk4 last alpha"] - 4) < 0.05
    assert 1.5 < v["rk4/simpson error ratio min"] <= v["rk4/simpson error ratio max"] < 2.5
    df = pd.read_csv(quick_runs["top2025_fig14"][0]["csv"], dtype=str)
    assert list(df["N"].astype(int)) == [10, 20, 40, 80, 160]
    assert np.all(np.diff(df["eps_theta_sim_minus_rk4"].astype(float)) < 0)
