"""The benchmark commands still run (on a few steps): a change of the library's contract
must not leave them broken until someone next measures.  (Their numbers are never
asserted: the machine is noisy.)  benchmarks/pendulum_reference.py has its own test."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def run(*args):
    done = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_step_speed_runs_and_both_contexts_agree():
    report = json.loads(run(BENCH / "step_speed.py", "--json", "--steps", "3", "--repeats", "1"))
    assert report["fast_ms"] > 0 and report["reference_ms"] > 0
    assert report["max_rel_diff"] < 1e-55          # the two contexts, 64 digits each
    assert report["compiled_ms"] > 0               # compiled kernels: the same bits
    assert report["bit_identical"] is True
    its = report["newton_iterations"]
    assert its["fast"] == its["compiled"]


def test_top2025_step_runs():
    out = run(BENCH / "top2025_step.py", "--steps", "3", "--repeats", "1", "--schemes", "rk4")
    assert "rk4" in out


def test_compare_outputs_finds_no_difference_in_a_copy_and_the_one_it_is_given(tmp_path):
    """Two committed reproductions (their CSV and JSON) against a copy: no difference;
    then one digit of the copy's CSV changed at the 1e-30 level: that reproduction
    differs, the other does not, and the exit status is 1."""
    figures = BENCH.parent / "figures"
    left, right = tmp_path / "left", tmp_path / "right"
    for d in (left, right):
        (d / "bea").mkdir(parents=True)
        for rid in ("bea_flow", "bea_oscillator"):
            for ext in ("csv", "json"):
                shutil.copy(figures / "bea" / f"{rid}.{ext}", d / "bea" / f"{rid}.{ext}")
    out = run(BENCH / "compare_outputs.py", left, right)
    assert "2 reproductions, 0 with differences" in out
    csv = right / "bea" / "bea_flow.csv"
    head, row, rest = csv.read_text().split("\n", 2)
    cells = row.split(",")
    gap = cells[3]                                   # 2.64...e-7, 64 digits
    cells[3] = gap[:30] + str((int(gap[30]) + 1) % 10) + gap[31:]
    csv.write_text("\n".join([head, ",".join(cells), rest]))
    done = subprocess.run([sys.executable, BENCH / "compare_outputs.py", left, right],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 reproductions, 1 with differences" in done.stdout
    assert re.search(r"^bea_flow .* 1 DIFFER$", done.stdout, re.M), done.stdout
    assert "bea_flow.csv row 0 column gap" in done.stdout, done.stdout


def test_scaling_runs_and_counts_the_special_functions():
    report = json.loads(run(BENCH / "scaling.py", "--json", "--n", "2", "3", "--steps", "2",
                            "--repeats", "1", "--family", "nlink", "nlink-pairs",
                            "--methods", "simpson"))
    rows = {(r["family"], r["n"]): r for r in report["rows"]}
    # N-link by angle addition: N sin_cos per node, 3 nodes of Simpson (those of the known
    # node hoisted out of the loop); written with cos(q_j - q_k): up to N + N(N - 1)/2
    # arguments per node
    for n in (2, 3):
        assert rows["nlink", n]["calls_compiled"] == 3 * n
        assert rows["nlink", n]["calls_loop"] == 2 * n
        assert 3 * n < rows["nlink-pairs", n]["calls_compiled"] <= 3 * (n + n * (n - 1) // 2)
        assert rows["nlink", n]["calls_python"] == 2 * rows["nlink", n]["calls_compiled"]
    assert {f["family"] for f in report["fits"]} == {"nlink", "nlink-pairs"}


def test_modified_cost_runs_and_fits_the_growth():
    report = json.loads(run(BENCH / "modified_cost.py", "--json", "--orders", "4", "8", "10",
                            "--methods", "midpoint", "rk4", "--dof", "1", "2", "--mq-order", "0"))
    assert {r["method"] for r in report["order"]} == {"midpoint", "rk4"}
    assert all(r["equation_s"] > 0 for r in report["order"] + report["dof"])
    assert set(report["fits"]) == {"midpoint", "rk4"}


def test_modified_cost_nbody_derives_sun_and_jupiter():
    """--nbody: the two bodies' modified equation and H~ through h^2, each H_k finite and
    generating its term of the field exactly at the check's points (no time asserted)."""
    report = json.loads(run(BENCH / "modified_cost.py", "--nbody", "--json"))
    (row,) = report["nbody"]
    assert row["bodies"] == 2 and row["dof"] == 6 and row["defect"] == 0
    assert row["equation_s"] > 0 and row["hamiltonian_s"] > 0


def test_certify_cost_runs_and_proves_the_digits():
    report = json.loads(run(BENCH / "certify_cost.py", "--json", "--steps", "4", "--repeats",
                            "1", "--methods", "simpson", "rk4", "--systems", "pendulum"))
    assert [r["method"] for r in report["rows"]] == ["simpson", "rk4"]
    assert all(r["plain_s"] > 0 and r["certify_s"] > 0 for r in report["rows"])
    assert all(r["min_digits"] > 60 for r in report["rows"])      # 64-digit runs


@pytest.mark.slow
def test_trust_cost_runs_against_a_base_commit():
    """benchmarks/trust_cost.py checks out a worktree of --base and times both trees
    (HEAD against itself here: the ratio is not asserted)."""
    out = run(BENCH / "trust_cost.py", "--base", "HEAD", "--steps", "2", "--repeats", "1",
              "--rounds", "1")
    assert "simpson / top" in out and "ratio" in out
