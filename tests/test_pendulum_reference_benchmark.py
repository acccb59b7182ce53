"""benchmarks/pendulum_reference.py on short, cheap settings (a few seconds): the heyoka
equations of motion agree with mpvi's, numbers pass between the codes bit for bit, the
report's fields, the exit status on a missed target, and the path without heyoka.py."""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from mpvi import get_context
from mpvi.systems.double_pendulum import nonlinear_double_pendulum

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "pendulum_reference.py"
CHEAP = ["--method", "gbs", "--dps", "30", "--T", "0.2", "--gbs-H", "0.1", "--gbs-levels", "8",
         "--target", "1e-12", "--json"]
TAYLOR = ["--dps", "30", "--T", "0.2", "--taylor-H", "0.1", "--target", "1e-12", "--json"]
FIXED = ["--dps", "30", "--T", "0.2", "--taylor-tol", "fixed", "--taylor-H", "0.05",
         "--taylor-order", "20", "--target", "1e-12", "--json"]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("pendulum_reference", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def heyoka():
    return pytest.importorskip("heyoka")


def test_numbers_pass_bit_for_bit(bench, heyoka):
    ctx = get_context("mp", 40)
    for x in (ctx.pi / 7, ctx.num("9.81"), -ctx.eps, ctx.num(1) / 3):
        r = bench.to_real(ctx, x)
        assert r.prec == ctx.prec
        assert bench.from_real(ctx, r) == x


def test_heyoka_equations_match_mpvi(bench, heyoka):
    ctx = get_context("mp", 40)
    system = nonlinear_double_pendulum(ctx).system
    equations, qs, vs = bench.heyoka_equations(system)
    assert [str(lhs) for lhs, _ in equations] == [str(x) for x in qs + vs]
    pars = [bench.to_real(ctx, x) for x in system.param_values]
    fn = bench.acceleration_cfunc(system, equations, qs, vs)
    states = bench.random_states(ctx, system.dof, 4)
    worst = bench.check_equations(system, fn, np.array(pars, dtype=heyoka.real), states)
    assert worst <= bench.CHECK_ULPS * ctx.eps
    # a wrong parameter (g doubled) must be caught
    pars[[str(s) for s in system.param_symbols].index("g")] *= 2
    with pytest.raises(ArithmeticError, match="do not integrate the same system"):
        bench.check_equations(system, fn, np.array(pars, dtype=heyoka.real), states)


def test_report_and_agreement(bench, heyoka, capsys):
    assert bench.main(CHEAP) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["prec_bits"] == get_context("mp", 30).prec
    assert rep["heyoka"]["prec_bits"] == rep["prec_bits"]
    assert rep["target_met"] is True
    assert max(rep["mpvi"]["error_estimate"].values()) <= rep["target"]
    assert max(rep["agreement"].values()) <= rep["target"]
    assert rep["ratio"] == pytest.approx(rep["mpvi"]["time_s"] / rep["heyoka"]["time_s"])
    assert rep["mpvi"]["steps"] == 2 and rep["mpvi"]["rhs_evaluations"] == 2 * (1 + 8 ** 2)


def test_the_taylor_reference_is_the_default(bench, heyoka, capsys):
    """The default method: the adaptive Taylor method at tol = target / 100 (Jorba & Zou's
    order ceil(-ln(1e-14) / 2 + 1) = 18), its error estimate against a run at tol / 10^6
    and the agreement with heyoka within the target, the steps of both printed."""
    assert bench.main(TAYLOR) == 0
    out = capsys.readouterr().out
    rep = json.loads(out)
    m = rep["mpvi"]
    assert m["scheme"] == "taylor" and m["adaptive"] is True and m["order"] == 18
    assert m["tol"] == pytest.approx(1e-14) and m["check_tol"] == pytest.approx(1e-20)
    assert m["steps"] == 2 and m["substeps"] >= 2 and rep["heyoka"]["steps"] >= 1
    assert m["ms_per_step"] == pytest.approx(m["time_s"] / m["substeps"] * 1000)
    assert m["rhs_evaluations"] is None and "us_per_rhs_evaluation" not in m
    assert max(m["error_estimate"].values()) <= rep["target"]
    assert max(rep["agreement"].values()) <= rep["target"] and rep["target_met"] is True
    assert m["check_dps"] == 30
    # at tol = eps the check runs 10 digits wider (at 30 digits it would show only rounding)
    assert bench.main(TAYLOR + ["--taylor-tol", "eps"]) == 0
    m = json.loads(capsys.readouterr().out)["mpvi"]
    assert m["order"] == 37 and m["check_dps"] == 40           # eps = 1.97e-31
    assert 0 < max(m["error_estimate"].values()) < 1e-25
    # a tolerance far above the target: the check run and the agreement show it
    assert bench.main(TAYLOR + ["--taylor-tol", "1e-4"]) == 1
    assert "NOT met" in capsys.readouterr().err


def test_the_fixed_step_taylor_reference(bench, heyoka, capsys):
    """--taylor-tol fixed: order 20, four steps of 0.05 s, its error estimated at H/2; the
    default order ceil(-ln(target) / 2); order 2 misses the target."""
    assert [bench.default_order(t) for t in (1e-12, 1e-55, 1e-119)] == [14, 64, 138]
    assert bench.main(FIXED) == 0
    rep = json.loads(capsys.readouterr().out)
    m = rep["mpvi"]
    assert m["adaptive"] is False and m["order"] == 20 and m["steps"] == 4
    assert m["substeps"] == 4 and m["check_H"] == "0.025"
    assert max(m["error_estimate"].values()) <= rep["target"] and rep["target_met"] is True
    assert bench.main(FIXED + ["--taylor-order", "2"]) == 1
    assert "NOT met" in capsys.readouterr().err


def test_missed_target_exits_1(bench, heyoka, capsys):
    args = CHEAP[:CHEAP.index("--gbs-levels")] + ["--gbs-levels", "2", "--json"]
    assert bench.main(args) == 1
    assert "NOT met" in capsys.readouterr().err


def test_without_heyoka(bench, monkeypatch, capsys):
    monkeypatch.setattr(bench, "heyoka", None)
    assert bench.main(CHEAP + ["--no-check"]) == 0
    out = capsys.readouterr()
    rep = json.loads(out.out)
    assert rep["heyoka"] is None and rep["ratio"] is None
    assert "pip install heyoka" in rep["heyoka_missing"] and "pip install heyoka" in out.err
    assert rep["mpvi"]["time_s"] > 0
    assert bench.main(TAYLOR + ["--no-check"]) == 0
    assert json.loads(capsys.readouterr().out)["mpvi"]["scheme"] == "taylor"


def test_bad_orders_and_levels_are_refused(bench, capsys):
    for bad in (["--taylor-order", "0"], ["--gbs-levels", "-1"]):
        with pytest.raises(SystemExit) as exc:
            bench.main(TAYLOR + bad)
        assert exc.value.code == 2 and "must be positive" in capsys.readouterr().err
