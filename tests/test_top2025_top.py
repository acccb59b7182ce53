"""The top2025 Lagrange-top reproductions (Figs. 7-11, Tables 4-5) and the committed
top2025 outputs: files, Newton statistics in the provenance, and a clean diff.

The committed outputs are read from git (``git show HEAD:figures/...``), so that a local
``mpvi run --all --quick``, which overwrites figures/ with quick outputs, does not hide
or break them; outside a git checkout the files on disk are used."""
import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from mpvi import MPContext
from mpvi.published import diff
from mpvi.repro import Run, all_reproductions, execute

REPS = all_reproductions()
TOP = [r for r in REPS if r.startswith("top2025")]
ROOT = Path(__file__).resolve().parents[1]
# reproductions that run Simpson (Newton) on a mechanical system
USES_SIMPSON = {"top2025_fig02", "top2025_fig03", "top2025_fig04", "top2025_fig05", "top2025_tab02",
                "top2025_fig07", "top2025_fig08", "top2025_fig09", "top2025_fig10", "top2025_fig11",
                "top2025_fig13", "top2025_fig14", "top2025_tab04", "top2025_tab05"}


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


def test_tables_4_and_5_share_one_computation():
    """tab05 after tab04 with the same parameters reuses the runs and still reports the
    Newton statistics; p_phi and p_psi are conserved to round-off by the variational schemes."""
    params = {"T_tbar": [1, 2], "N_per_period": [10, 20], "methods": ["midpoint", "rk4", "simpson"]}
    ctx = MPContext(64)
    r4, r5 = Run(ctx, params, False), Run(ctx, params, False)
    out4 = REPS["top2025_tab04"].compute(r4)
    out5 = REPS["top2025_tab05"].compute(r5)
    assert r4.newton_summary() == r5.newton_summary()
    assert r5.newton_summary()["simpson"]["steps"] == (10 + 20) * 3
    df = out5.tables[""]
    for m in ("midpoint", "simpson"):
        rows = df[df["method"] == m]
        assert max(abs(float(x)) for x in rows["p_phi_rel_error"]) < 1e-60
        assert max(abs(float(x)) for x in rows["p_psi_rel_error"]) < 1e-60
    assert set(out4.values) & set(out5.values) == set()
    assert float(out5.values["T=1 simpson H order"]) > 3.5


def committed(relpath):
    """Bytes of ``relpath`` as committed at HEAD (the file on disk outside git)."""
    try:
        return subprocess.run(["git", "show", f"HEAD:{relpath}"], cwd=ROOT, check=True,
                              capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return (ROOT / relpath).read_bytes()


@pytest.mark.parametrize("rid", TOP)
def test_committed_outputs_are_full_64_digit_runs(rid):
    rec = json.loads(committed(f"figures/top2025/{rid}.json"))
    assert rec["digits"] == 64 and rec["quick"] is False
    for suffix in (".csv", ".png"):
        assert len(committed(f"figures/top2025/{rid}{suffix}")) > 1000
    if rid in USES_SIMPSON:
        s = rec["newton"]["simpson"]
        assert s["steps"] > 0 and 1 <= s["mean_iterations_per_step"] <= 10
        assert s["max_final_residual"] < 1e-58     # every step converged at 64 digits


def test_committed_outputs_diff_clean(tmp_path):
    (tmp_path / "top2025").mkdir()
    for rid in TOP:
        (tmp_path / "top2025" / f"{rid}.json").write_bytes(committed(f"figures/top2025/{rid}.json"))
    rows = diff(TOP, tmp_path)
    bad = [(r.value.key, r.status) for r in rows if r.status in ("MISMATCH", "MISSING", "skipped")]
    assert not bad, bad
    assert any(r.status == "match" for r in rows)
