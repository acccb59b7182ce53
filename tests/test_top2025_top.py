"""The top2025 Lagrange-top reproductions (Figs. 7-11, Tables 4-5) and the committed
top2025 outputs.

Short computations check the scripts (quick runs, a tiny Table 4/5 pair).  The committed
full runs in figures/top2025/ are read directly (quick runs write to quick-figures/, so
they never replace them) and checked for internal consistency: every order recomputed
from the CSV's own error columns, every compared value found in the CSV it summarizes,
64 digits, Newton statistics, and a clean diff against the published claims."""
import json
from pathlib import Path

import pandas as pd
import pytest

from mpvi import MPContext
from mpvi.analysis.measures import fit_order
from mpvi.repro.cache import DiskCache
from mpvi.repro.published import diff
from mpvi.repro.declare import all_reproductions
from mpvi.repro.run import execute, Run
from mpvi.repro.studies import successive_orders

REPS = all_reproductions()
TOP = [r for r in REPS if r.startswith("top2025")]
FIGURES = Path(__file__).resolve().parents[1] / "figures" / "top2025"
# reproductions that run Simpson (Newton) on a mechanical system
USES_SIMPSON = {"top2025_fig02", "top2025_fig03", "top2025_fig04", "top2025_fig05", "top2025_tab02",
                "top2025_fig07", "top2025_fig08", "top2025_fig09", "top2025_fig10", "top2025_fig11",
                "top2025_fig13", "top2025_fig14", "top2025_tab04", "top2025_tab05"}
CTX = MPContext(64)


@pytest.mark.parametrize("rid", ["top2025_fig07", "top2025_fig08", "top2025_fig09", "top2025_fig10"])
def test_quick_run_writes_all_outputs(tmp_path, rid):
    paths = execute(REPS[rid], "mp", 64, True, tmp_path)
    assert paths["png"].stat().st_size > 10_000
    assert len(pd.read_csv(paths["csv"], dtype=str)) > 3
    rec = json.loads(paths["json"].read_text())
    assert rec["reproduction"] == rid and rec["digits"] == 64
    s = rec["newton"]["simpson"]
    assert 1 <= s["mean_iterations_per_step"] <= 10 and s["max_final_residual"] < 1e-58


def test_fig11_quick_orders(tmp_path):
    """Quick Fig. 11 (h = t_bar/20 .. t_bar/320, fit over N >= 80)."""
    paths = execute(REPS["top2025_fig11"], "mp", 64, True, tmp_path)
    values = json.loads(paths["json"].read_text())["values"]
    for var in ("theta", "H"):
        assert abs(float(values[f"simpson {var} order"]) - 4) < 0.2
        assert abs(float(values[f"midpoint {var} order"]) - 2) < 0.1
        assert abs(float(values[f"rk4 {var} order"]) - 4) < 0.5


def test_tables_4_and_5_share_one_computation(tmp_path):
    """tab05 after tab04 with the same parameters reads the runs from the cache and still
    reports the Newton statistics; p_phi and p_psi are conserved to round-off by the
    variational schemes."""
    params = {"T_tbar": [1, 2], "N_per_period": [10, 20], "methods": ["midpoint", "rk4", "simpson"]}
    ctx, cache = MPContext(64), DiskCache(tmp_path)
    null = open("/dev/null", "w")
    r4, r5 = Run(ctx, params, False, null, cache), Run(ctx, params, False, null, cache)
    out4 = REPS["top2025_tab04"].compute(r4)
    out5 = REPS["top2025_tab05"].compute(r5)
    # one study per (span, step, method): tab04 computes them all, tab05 reads them all
    assert len(r4.studies) == len(r5.studies) == 2 * 2 * 3
    assert not any(s["from_cache"] for s in r4.studies)
    assert all(s["from_cache"] for s in r5.studies)
    assert r4.newton_summary() == r5.newton_summary()
    assert r5.newton_summary()["simpson"]["steps"] == (10 + 20) * 3
    df = out5.tables[""]
    for m in ("midpoint", "simpson"):
        rows = df[df["method"] == m]
        assert max(abs(float(x)) for x in rows["p_phi_rel_error"]) < 1e-60
        assert max(abs(float(x)) for x in rows["p_psi_rel_error"]) < 1e-60
    assert set(out4.values) & set(out5.values) == set()
    assert float(out5.values["T=1 simpson H order"]) > 3.5


# ----- the committed full runs, read from figures/top2025/ --------------------------------

def committed(rid, suffix=""):
    """The committed JSON record and main CSV (or the ``_suffix`` table) of ``rid``."""
    record = json.loads((FIGURES / f"{rid}.json").read_text(encoding="utf-8"))
    table = pd.read_csv(FIGURES / f"{rid}{suffix}.csv", dtype=str, keep_default_na=False)
    return record, table


@pytest.mark.parametrize("rid", TOP)
def test_committed_outputs_are_full_64_digit_runs(rid):
    rec = json.loads((FIGURES / f"{rid}.json").read_text(encoding="utf-8"))
    assert rec["reproduction"] == rid and rec["digits"] == 64 and rec["quick"] is False
    assert rec["parameters"] == REPS[rid].parameters(quick=False)
    for suffix in (".csv", ".png"):
        assert (FIGURES / f"{rid}{suffix}").stat().st_size > 1000
    if rid in USES_SIMPSON:
        s = rec["newton"]["simpson"]
        assert s["steps"] > 0 and 1 <= s["mean_iterations_per_step"] <= 10
        assert s["max_final_residual"] < 1e-58     # every step converged at 64 digits


@pytest.mark.parametrize("rid, variable", [("top2025_tab04", "theta"), ("top2025_tab05", "H")])
def test_committed_long_run_orders_follow_from_their_own_errors(rid, variable):
    """Tables 4-5: the successive and least-squares orders, the compared values and the
    growth ratios recomputed from the CSV's error column (to the last digit)."""
    rec, df = committed(rid)
    values, s = rec["values"], CTX.to_str
    tbar = CTX.num(rec["tbar_s"])
    assert rec["parameters"]["T_tbar"] == [1, 10, 100, 1000]
    for (T, m), g in df.groupby(["T", "method"], sort=False):
        N = [int(h.split("/")[1]) for h in g["h_tbar"]]
        assert [int(n) for n in g["N"]] == [n * int(T) for n in N]
        errs = [CTX.num(e) for e in g["error"]]
        ls = fit_order(CTX, [tbar / n for n in N], errs)
        assert set(g["ls_order"]) == {s(ls)}
        assert list(g["order"]) == [""] + [s(o) for o in successive_orders(CTX, errs)]
        assert values[f"T={T} {m} {variable} order"] == s(ls)
        for n, e in zip(N, g["error"]):
            assert values[f"T={T} {m} {variable} h=1/{n}"] == e
        if variable == "H":
            for k in ("p_phi", "p_psi"):
                assert values[f"T={T} {m} max rel {k} error"] == \
                    s(max(CTX.num(x) for x in g[f"{k}_rel_error"]))
    errors = {(r.T, r.method, r.h_tbar): CTX.num(r.error) for r in df.itertuples()}
    for m in ("midpoint", "rk4", "simpson"):
        for n in (20, 40, 80):
            ratio = errors[("1000", m, f"1/{n}")] / errors[("1", m, f"1/{n}")]
            assert values[f"{m} {variable} growth T=1000/T=1 h=1/{n}"] == s(ratio)


def test_committed_fig11_orders_follow_from_its_errors():
    """Fig. 11: the orders (all h, and N >= fit_from_N) refitted from the CSV's errors
    agree with the orders table and the compared values (the CSV keeps 64 digits of
    errors and steps, so to about 60 digits)."""
    rec, df = committed("top2025_fig11")
    _, orders = committed("top2025_fig11", "_orders")
    cut = rec["parameters"]["fit_from_N"]
    tol = CTX.num("1e-58")
    for o in orders.itertuples():
        g = df[(df["method"] == o.method) & (df["variable"] == o.variable)]
        hs = [CTX.num(h) for h in g["h_tbar"]]
        errs = [CTX.num(e) for e in g["error"]]
        tail = [(h, e) for h, e, n in zip(hs, errs, g["N"]) if int(n) >= cut]
        all_h = fit_order(CTX, hs, errs)
        asym = fit_order(CTX, [h for h, _ in tail], [e for _, e in tail])
        assert abs(all_h - CTX.num(o.order_all_h)) < tol
        assert abs(asym - CTX.num(getattr(o, f"order_N_ge_{cut}"))) < tol
        assert rec["values"][f"{o.method} {o.variable} order all h"] == o.order_all_h
        assert rec["values"][f"{o.method} {o.variable} order"] == getattr(o, f"order_N_ge_{cut}")
    assert len(orders) == 6 and len(df) == 3 * 2 * len(rec["parameters"]["N"])


@pytest.mark.parametrize("rid, keys", [("top2025_fig09", ["max |e_H|", "final e_H"]),
                                       ("top2025_fig10", ["max rel p_phi error",
                                                          "max rel p_psi error"])])
def test_committed_series_values_are_those_of_their_csv(rid, keys):
    """Figs. 9-10: the compared maxima and final values are those of the CSV's series."""
    rec, df = committed(rid)
    periods, N = rec["parameters"]["periods"], rec["parameters"]["N_per_period"]
    for m, g in df.groupby("method", sort=False):
        assert len(g) == periods * N + 1
        for key in keys:
            column = "H" if "e_H" in key else key.split()[2]
            series = [CTX.num(x) for x in g[column]]
            expect = series[-1] if key.startswith("final") else max(abs(x) for x in series)
            assert rec["values"][f"{m} {key}"] == CTX.to_str(expect), (m, key)


def test_committed_outputs_diff_clean():
    rows = diff(TOP, FIGURES.parent)
    bad = [(r.value.key, r.status) for r in rows if r.status in ("MISMATCH", "MISSING", "skipped")]
    assert not bad, bad
    assert sum(r.status == "match" for r in rows) > 50
